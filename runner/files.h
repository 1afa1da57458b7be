/*
 * files.h: the regular files of one directory (not its subdirectories,
 * not hidden files), listed, compared, copied and removed; and a build
 * that follows what those files hold, not their dates.
 *
 * make rebuilds what is older than its sources, so a file put back with
 * an older date (tar x, unzip, cp -p, rsync -a) would leave the previous
 * build in place, and a deleted file's object would stay linked.
 * runner_files_fresh keeps a copy of the files a build was made from and
 * removes that build whenever the files differ from it, byte for byte, or
 * when objects were built since the runner's last build (by a make of
 * the student's own, from files that may have changed since).
 *
 * Interface:
 *   size_t n; char **names = runner_files_of(dir, &n); ... runner_files_free(names, n);
 *   if (runner_files_differ(a, b)) ...      // other names, or other bytes
 *   runner_files_fresh(&tree, lab, "exercises");   // before make
 *   runner_files_built(&tree, lab, "exercises");   // after it built them
 */
#ifndef HOTROW_RUNNER_FILES_H
#define HOTROW_RUNNER_FILES_H

#include <stddef.h>

#include "runner/tree.h"

/* The names in dir, sorted; *n of them. The caller frees them with
 * runner_files_free. NULL with *n == 0 when dir is missing. */
char **runner_files_of(const char *dir, size_t *n);
void runner_files_free(char **names, size_t n);

/* Copy every file of src into dst (created). Returns the count, or -1. */
int runner_files_copy(const char *src, const char *dst);

/* Remove dir's files (its subdirectories and hidden files stay). */
void runner_files_clear(const char *dir);

/* Remove dir's files, then dir (which is left when it holds more). */
void runner_files_remove(const char *dir);

/* 1 when a and b hold other names or other bytes, else 0. */
int runner_files_differ(const char *a, const char *b);

/* After the runner built SIDE/NN-name/'s objects: stamp them as its own. */
void runner_files_built(const struct runner_tree *t, const struct runner_lab *l, const char *side);

/* Before building SIDE/NN-name/ ("exercises" or "solutions"): when its
 * files are not those of the last build (kept in
 * build/labs/NN-name/built-SIDE/), remove that build's objects and
 * programs and keep a copy of the files as they are now. Returns 0, or
 * -1 when the build directory cannot be written. */
int runner_files_fresh(const struct runner_tree *t, const struct runner_lab *l, const char *side);

#endif
