/*
 * cmds.h: the runner's small subcommands, `hotrow lab` (list) and
 * `hotrow lab hint`.
 *
 * Interface:
 *   int rc = runner_list(&tree);            // every lab, its status, what next
 *   int rc = runner_hint_cmd(&tree, lab, NULL);   // reveal the next hint
 *   int rc = runner_hint_cmd(&tree, lab, "resize");   // the next of a part's
 *   const struct runner_lab *l = runner_next_lab(&tree);   // first not done
 * Each returns the exit code (0, or 1 when hints.md cannot be read).
 */
#ifndef HOTROW_RUNNER_CMDS_H
#define HOTROW_RUNNER_CMDS_H

#include "runner/tree.h"

/* The first lab not done (see runner_progress_done), or NULL when all are. */
const struct runner_lab *runner_next_lab(const struct runner_tree *t);
int runner_list(const struct runner_tree *t);
/* Reveal the next hint not shown yet: in the lab's order, or, with part,
 * the next of the hints tagged [part:PART] in hints.md (a hint with no
 * part: tag belongs to every part). Shown hints are kept in .hotrow/. */
int runner_hint_cmd(const struct runner_tree *t, const struct runner_lab *l, const char *part);

#endif
