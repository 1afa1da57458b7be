/*
 * file.c: file arguments checked early, and files written whole. See file.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"

/* What a file that is not a regular one is, in words; NULL for a regular one. */
static const char *kind(mode_t m)
{
	if (S_ISREG(m))
		return NULL;
	if (S_ISDIR(m))
		return "is a directory, not a file";
	if (S_ISFIFO(m))
		return "is a FIFO (a named pipe)";
	if (S_ISCHR(m))
		return "is a device (like /dev/zero), not a file";
	if (S_ISBLK(m))
		return "is a block device, not a file";
	if (S_ISSOCK(m))
		return "is a socket, not a file";
	return "is not a regular file";
}

/* st is a regular file of at most max bytes (0: any). */
static int regular(const struct stat *st, long long max, char *why, size_t len)
{
	const char *k = kind(st->st_mode);
	if (k) {
		snprintf(why, len, "%s", k);
		errno = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	if (max > 0 && (long long)st->st_size > max) {
		snprintf(why, len, "is %lld bytes, more than the %lld this takes", (long long)st->st_size,
		         max);
		errno = EFBIG;
		return -1;
	}
	return 0;
}

static int failed(char *why, size_t len, const char *what)
{
	int e = errno;
	snprintf(why, len, "%s: %s", what, strerror(e));
	errno = e;
	return -1;
}

int util_file_check_in(const char *path, long long max, char *why, size_t len)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return failed(why, len, "cannot read it");
	if (regular(&st, max, why, len) != 0)
		return -1;
	if (access(path, R_OK) != 0)
		return failed(why, len, "cannot read it");
	return 0;
}

FILE *util_file_open_in(const char *path, long long max, char *why, size_t len)
{
	/* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer,
	 * and fstat then refuses it. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		failed(why, len, "cannot read it");
		return NULL;
	}
	struct stat st;
	int flags = fcntl(fd, F_GETFL);
	FILE *f = NULL;
	if (fstat(fd, &st) != 0)
		failed(why, len, "cannot read it");
	else if (regular(&st, max, why, len) == 0 &&
	         (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 || !(f = fdopen(fd, "r"))))
		failed(why, len, "cannot read it");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

/* The directory part of path into dir: "." when it has none. */
static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* A file or directory can be created at path, which does not exist. */
static int creatable(const char *path, char *why, size_t len)
{
	char dir[PATH_MAX];
	struct stat st;
	dir_of(path, dir, sizeof dir);
	if (stat(dir, &st) != 0) {
		int e = errno;
		snprintf(why, len, e == ENOENT ? "its directory %s does not exist"
		         : "its directory %s cannot be reached", dir);
		errno = e;
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "%s is not a directory", dir);
		errno = ENOTDIR;
		return -1;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		int e = errno;
		snprintf(why, len, "cannot create it in %s: %s", dir, strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}

int util_file_check_out(const char *path, char *why, size_t len)
{
	struct stat st;
	size_t n = strlen(path);
	if (n && path[n - 1] == '/') {
		snprintf(why, len, "names a directory; a file is needed");
		errno = EISDIR;
		return -1;
	}
	if (stat(path, &st) != 0) {
		if (errno != ENOENT)
			return failed(why, len, "cannot write it");
		return creatable(path, why, len);
	}
	if (regular(&st, 0, why, len) != 0)
		return -1;
	if (access(path, W_OK) != 0)
		return failed(why, len, "cannot write it");
	/* it is replaced by a new file beside it (util_file_begin) */
	return creatable(path, why, len);
}

int util_file_check_dir(const char *path, char *why, size_t len)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return failed(why, len, "cannot reach it");
		/* Made with its parents (mkdir -p): the nearest one that exists
		 * must be a directory we can create in. */
		char up[PATH_MAX];
		snprintf(up, sizeof up, "%s", path);
		for (;;) {
			size_t n = strlen(up);
			while (n > 1 && up[n - 1] == '/')
				up[--n] = '\0';
			char *slash = strrchr(up, '/');
			if (!slash) {
				snprintf(up, sizeof up, ".");
				break;
			}
			slash[slash == up] = '\0';   /* "/x" keeps "/" */
			if (stat(up, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
				break;
		}
		if (stat(up, &st) != 0)
			return failed(why, len, "cannot reach its parent");
		if (!S_ISDIR(st.st_mode)) {
			snprintf(why, len, "%s is not a directory", up);
			errno = ENOTDIR;
			return -1;
		}
		if (access(up, W_OK | X_OK) != 0) {
			int e = errno;
			snprintf(why, len, "cannot create it in %s: %s", up, strerror(e));
			errno = e;
			return -1;
		}
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "is not a directory");
		errno = ENOTDIR;
		return -1;
	}
	if (access(path, W_OK | X_OK) != 0)
		return failed(why, len, "cannot create files in it");
	return 0;
}

int util_file_begin(struct util_file_out *o, const char *path, mode_t mode, char *why, size_t len)
{
	o->f = NULL;
	if (util_file_check_out(path, why, len) != 0)
		return -1;
	if ((size_t)snprintf(o->path, sizeof o->path, "%s", path) >= sizeof o->path) {
		snprintf(why, len, "the name is too long");
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(o->tmp, sizeof o->tmp, "%s.XXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd < 0)
		return failed(why, len, "cannot create it");
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, mode & ~mask) != 0 || !(o->f = fdopen(fd, "w"))) {
		failed(why, len, "cannot create it");
		close(fd);
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

int util_file_commit(struct util_file_out *o, char *why, size_t len)
{
	int bad = ferror(o->f);
	if (fclose(o->f) != 0 || bad) {
		if (bad)
			errno = EIO;
		failed(why, len, "cannot write it");
		unlink(o->tmp);
		o->f = NULL;
		return -1;
	}
	o->f = NULL;
	if (rename(o->tmp, o->path) != 0) {
		failed(why, len, "cannot put it in place");
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

void util_file_abandon(struct util_file_out *o)
{
	if (!o->f)
		return;
	fclose(o->f);
	o->f = NULL;
	unlink(o->tmp);
}
