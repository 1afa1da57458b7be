/*
 * show.h: `hotrow lab check` on the screen.
 *
 * Prints each check as it ends (ok, or FAIL with what failed, where, and
 * what it printed, without cmocka's own lines), then the total, the hint
 * for the first failure (its most specific tag; never the last hint, the
 * shape of the answer), what to do next, and, after a run without
 * PostgreSQL, the mistakes only PostgreSQL catches. Records what each
 * engine showed in the lab's progress.
 *
 * Interface:
 *   int rc = runner_check_cmd(&tree, lab, &opts);   // the exit code
 */
#ifndef HOTROW_RUNNER_SHOW_H
#define HOTROW_RUNNER_SHOW_H

#include "runner/check.h"

/* One check's line(s): "ok NAME", or "FAIL NAME" and its details; nothing
 * for a skipped one. */
void runner_show_check(const struct runner_check *c);

/* Print text, each line after indent, without cmocka's own lines, at
 * most max lines; runner_show_has_output says whether anything is left. */
void runner_show_output(const char *text, const char *indent, int max);
int runner_show_has_output(const char *text);

/* Record r in the lab's progress (see tree.h): what each engine whose
 * checks ran showed; a build that failed counts as nothing passing. */
void runner_check_record(const struct runner_tree *t, const struct runner_lab *l,
                         const struct runner_result *r);

/* `hotrow lab check`: run, print every check, the hint for the first
 * failure and what to do next, and record progress (not with --solutions).
 * Returns the exit code: 0 when every check that ran passed, 1 otherwise,
 * 130 when stopped by Ctrl-C, 3 when o->watched() stopped it (nothing is
 * recorded in either case). */
int runner_check_cmd(const struct runner_tree *t, const struct runner_lab *l,
                     const struct runner_opts *o);

#endif
