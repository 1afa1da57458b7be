/*
 * runner_reset.h: putting a lab's skeleton back, without losing the student's
 * work.
 *
 * The pristine skeleton of exercises/NN-name/ comes from, in order:
 *   1. .hotrow/pristine/NN-name/ when the student kit shipped it (the
 *      marker .hotrow/pristine/SHIPPED exists): right even when the student
 *      commits their work to a git repository of their own;
 *   2. git, HEAD:exercises/NN-name/, in a checkout of the kit;
 *   3. .hotrow/pristine/NN-name/ saved by runner_reset_snapshot the first time
 *      the runner met the lab (a copy of the kit made without git).
 * Before anything is overwritten, the student's files are copied to
 * .hotrow/backup/NN-name-YYYYMMDD-HHMMSS/.
 *
 * Interface:
 *   runner_reset_snapshot(&tree);              // every run of `hotrow lab`
 *   int rc = runner_reset(&tree, lab, yes);    // `hotrow lab reset NN [--yes]`
 */
#ifndef HOTROW_RUNNER_RESET_H
#define HOTROW_RUNNER_RESET_H

#include "cli/runner_tree.h"

/* Save a pristine copy of each lab's exercise that git does not track and
 * that has none yet. Best effort: failures are silent (reset then says
 * what it lacks). */
void runner_reset_snapshot(const struct runner_tree *t);

/* Restore the skeleton of l, asking on the terminal first unless yes.
 * Returns the exit code: 0 restored (or already pristine), 1 declined or
 * failed (the exercise is then untouched, or restored file by file after a
 * complete backup). */
int runner_reset(const struct runner_tree *t, const struct runner_lab *l, int yes);

#endif
