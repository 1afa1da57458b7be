/*
 * file.h: the files a user names on the command line, checked before any
 * work starts, and written whole or not at all.
 *
 * A file argument can name anything: a directory, a FIFO that blocks the
 * reader until someone writes to it, /dev/zero that never ends, a file of
 * gigabytes, a path whose directory does not exist. Each command checks
 * its file arguments as it parses them (util/opt's OPT_FILE_IN,
 * OPT_FILE_OUT and OPT_DIR_OUT rows call these), so a bad one is refused
 * at once with one line, before a long run; and it writes its output
 * through util_file_begin and util_file_commit, so an existing file is
 * replaced only by a complete new one: a run that fails leaves it as it
 * was. util/ depends on libc alone.
 *
 * Interface:
 *   char why[200];
 *   if (util_file_check_in(path, 1 << 20, why, sizeof why) != 0)
 *       fprintf(stderr, "cmd: --roster %s: %s\n", path, why);
 *   FILE *f = util_file_open_in(path, 1 << 20, why, sizeof why);  // fclose when done
 *
 *   struct util_file_out o;
 *   if (util_file_begin(&o, path, 0644, why, sizeof why) == 0) {
 *       fprintf(o.f, ...);
 *       if (util_file_commit(&o, why, sizeof why) != 0) ...;    // or util_file_abandon(&o)
 *   }
 * Every function returns 0 on success, or -1 with one readable clause in
 * why ("is a directory", "its directory /x does not exist") and errno set.
 */
#ifndef HOTROW_UTIL_FILE_H
#define HOTROW_UTIL_FILE_H

#include <limits.h>
#include <stdio.h>
#include <sys/types.h>

/* path is a regular file (or a link to one) that can be read, of at most
 * max bytes (0: any size). Opens nothing, so a FIFO cannot block it. */
int util_file_check_in(const char *path, long long max, char *why, size_t len);

/* path opened to read, checked as util_file_check_in says on the file
 * opened (not merely the name): NULL with why otherwise. A FIFO is refused
 * without waiting for a writer. The caller fcloses. */
FILE *util_file_open_in(const char *path, long long max, char *why, size_t len);

/* A file can be written at path: it is a regular file that can be written,
 * or it does not exist and its directory does and lets us create it.
 * Creates nothing. */
int util_file_check_out(const char *path, char *why, size_t len);

/* path is a directory we can create files in, or it does not exist and
 * can be made with its parents: the nearest of them that exists is a
 * directory that lets us create in it. Creates nothing. */
int util_file_check_dir(const char *path, char *why, size_t len);

/* A file being written: o->f is a new file beside path, which becomes path
 * (replacing what was there, atomically) only on util_file_commit. */
struct util_file_out {
	FILE *f;
	char path[PATH_MAX];
	char tmp[PATH_MAX + 16];
};

/* Start writing path (checked by util_file_check_out) with permissions
 * mode (less the umask). The caller writes to o->f, then commits or
 * abandons; path is not touched until util_file_commit. */
int util_file_begin(struct util_file_out *o, const char *path, mode_t mode, char *why, size_t len);

/* Flush and close o->f and put it in place of path. On failure (a write
 * error: a full disk, say) path is left as it was and the new file removed. */
int util_file_commit(struct util_file_out *o, char *why, size_t len);

/* Close o->f and remove it; path is left as it was. */
void util_file_abandon(struct util_file_out *o);

#endif
