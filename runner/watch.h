/*
 * runner_watch.h: `hotrow lab watch`, a check on every save.
 *
 * Runs the check once, then waits on inotify for a source file
 * (*.c, *.h) in exercises/NN-name/ (or solutions/) to be written, created,
 * renamed into place or removed, lets a burst of events settle, and checks
 * again. On a terminal, q quits; Ctrl-C quits too. The terminal is put
 * back as it was before returning, whatever the way out.
 *
 * Interface:
 *   int rc = runner_watch(&tree, lab, &opts);   // returns when the user quits
 */
#ifndef HOTROW_RUNNER_WATCH_H
#define HOTROW_RUNNER_WATCH_H

#include "cli/runner_check.h"

/* Returns the exit code of the last check (0 all passed, 1 otherwise), or
 * 1 when inotify is not available. */
int runner_watch(const struct runner_tree *t, const struct runner_lab *l, const struct runner_opts *o);

#endif
