/*
 * watch.h: `hotrow lab watch`, a check on every save.
 *
 * Runs the check once, then waits on inotify for a source file
 * (*.c, *.h) in exercises/NN-name/ (or solutions/) to be written, created,
 * renamed into place or removed, lets a burst of events settle, and checks
 * again. q (on a terminal) or a save during a check stops that check at
 * once (its process group is killed); Ctrl-C ends the watch and every
 * process it started. The terminal is put
 * back as it was before returning, whatever the way out, a crash of the
 * runner (SEGV, QUIT, ABRT) included.
 *
 * Interface:
 *   int rc = runner_watch(&tree, lab, &opts);   // returns when the user quits
 */
#ifndef HOTROW_RUNNER_WATCH_H
#define HOTROW_RUNNER_WATCH_H

#include "runner/check.h"

/* Returns the exit code of the last check (0 all passed, 1 otherwise),
 * 130 after Ctrl-C, or 1 when inotify is not available. */
int runner_watch(const struct runner_tree *t, const struct runner_lab *l, const struct runner_opts *o);

#endif
