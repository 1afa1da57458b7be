/*
 * reset.h: putting a lab's skeleton back, without losing the student's
 * work.
 *
 * The pristine skeleton of exercises/NN-name/ comes from, in order:
 *   1. .hotrow/pristine/NN-name/ when the student kit shipped it (the
 *      marker .hotrow/pristine/SHIPPED exists): right even when the student
 *      commits their work to a git repository of their own;
 *   2. git's objects, by content: labs/NN-name/skeleton.sum (written by
 *      scripts/skeleton-sums, checked by make test) lists each file's git
 *      object id, so whatever the student committed, and whenever the
 *      runner first saw the lab, the skeleton is what the kit shipped;
 *   3. git, COMMIT:exercises/NN-name/, in a checkout of the kit, where
 *      COMMIT (.hotrow/pristine/NN-name.commit) is the HEAD at which the
 *      runner first saw the exercise untouched: never the student's own
 *      later HEAD, which may hold their work;
 *   4. .hotrow/pristine/NN-name/ saved by runner_reset_snapshot the first time
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

#include "runner/tree.h"

/* Record, for each lab not yet recorded, the commit holding its exercise
 * untouched, or, when git does not track it, save a copy. Best effort: failures are silent (reset then says
 * what it lacks). */
void runner_reset_snapshot(const struct runner_tree *t);

/* Restore the skeleton of l, asking on the terminal first unless yes.
 * Without a terminal and without yes, nothing is asked and 2 is returned
 * (a usage error: add --yes).
 * Returns the exit code: 0 restored (or already pristine), 1 declined or
 * failed (the exercise is then untouched, or restored file by file after a
 * complete backup). */
int runner_reset(const struct runner_tree *t, const struct runner_lab *l, int yes);

#endif
