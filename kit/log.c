/*
 * log.c: the partitioned log of log.h, on plain files and flock(2): the
 * partition files (open, append, scan, read, remove). Consumer groups,
 * their offsets and poll are in log_group.c.
 *
 * Layout of a log directory:
 *   meta                 "partitions N": the count the log was made with
 *   part-P.log           partition P: records back to back
 *   group-G/lock         held while members join, leave or rebalance
 *   group-G/member-NAME  held (flock) by the live consumer NAME; its mtime
 *                        is NAME's last poll (the heartbeat)
 *   group-G/lease-P      "NAME GENERATION": who owns partition P ("-" once let go)
 *   group-G/offset-P     the committed hint, decimal text
 *
 * A record is len (4 bytes), sum (4 bytes, FNV-1a over len and payload)
 * and the payload. Readers trust a record only when it is whole and its
 * sum matches, which is how a torn tail stays invisible. Each handle keeps
 * an index of the byte position of every record it has seen and extends
 * it from the file when asked for more, so records appended by other
 * processes show up on the next call.
 *
 * flock(2) locks belong to an open file description: a second open() of
 * the same file, even in the same process, does not share the lock. That
 * is what lets two consumers in one test process behave like two
 * processes, and why a handle must not cross fork().
 */
#include "kit/log.h"
#include "kit/log_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/hash.h"

/* ---- errors and small helpers ---- */

int kit_log__fail(struct kit_log *log, int code, const char *fmt, ...)
{
	int n = snprintf(log->err, sizeof log->err, "log %s: ", log->dir);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof log->err)
		vsnprintf(log->err + n, sizeof log->err - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

int kit_log__syserr(struct kit_log *log, const char *what, const char *path)
{
	return kit_log__fail(log, KIT_LOG_ERR, "%s %s: %s", what, path, strerror(errno));
}

static uint32_t record_sum(uint32_t len, const void *data)
{
	unsigned char l[4] = { len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff, len >> 24 };
	return util_fnv1a(util_fnv1a(UTIL_FNV1A_INIT, l, 4), data, len);
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v & 0xff; p[1] = (v >> 8) & 0xff; p[2] = (v >> 16) & 0xff; p[3] = v >> 24;
}

uint32_t kit_log__get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Grow *buf to at least need bytes. 0, or -1 when out of memory. */
static int grow(unsigned char **buf, size_t *cap, size_t need)
{
	if (*cap >= need)
		return 0;
	size_t n = *cap ? *cap : 4096;
	while (n < need)
		n *= 2;
	unsigned char *p = realloc(*buf, n);
	if (!p)
		return -1;
	*buf = p;
	*cap = n;
	return 0;
}

int kit_log__valid_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > NAME_MAX_LEN)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		         (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
		if (!ok || (i == 0 && ch == '.'))
			return 0;
	}
	return 1;
}

/* Read exactly len bytes at off; 0, or -1 with errno (EIO on a short file). */
static int pread_full(int fd, void *buf, size_t len, int64_t off)
{
	unsigned char *p = buf;
	while (len > 0) {
		ssize_t got = pread(fd, p, len, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = EIO;
			return -1;
		}
		p += got;
		off += got;
		len -= (size_t)got;
	}
	return 0;
}

int kit_log__pwrite(int fd, const void *buf, size_t len, int64_t off)
{
	const unsigned char *p = buf;
	while (len > 0) {
		ssize_t put = pwrite(fd, p, len, (off_t)off);
		if (put < 0 && errno == EINTR)
			continue;
		if (put < 0)
			return -1;
		p += put;
		off += put;
		len -= (size_t)put;
	}
	return 0;
}

int kit_log__lock(int fd, int how)
{
	int rc;
	do
		rc = flock(fd, how);
	while (rc != 0 && errno == EINTR);
	return rc;
}

/* A name for a temporary file no other process or thread uses now. */
void kit_log__tmp_name(char *buf, size_t size, const char *base)
{
	static atomic_long seq;
	snprintf(buf, size, "%s.%ld.%ld.tmp", base, (long)getpid(), atomic_fetch_add(&seq, 1));
}

/* ---- partitions: index and scan ---- */

static int index_push(struct part *pt, int64_t at)
{
	if (pt->n == pt->cap) {
		int64_t cap = pt->cap ? pt->cap * 2 : 1024;
		int64_t *p = realloc(pt->pos, (size_t)cap * sizeof *p);
		if (!p)
			return -1;
		pt->pos = p;
		pt->cap = cap;
	}
	pt->pos[pt->n++] = at;
	return 0;
}

/* Extend part p's index over every whole, checksummed record now in the
 * file. Stops quietly at a torn or still-being-written tail. */
int kit_log__scan(struct kit_log *log, int p)
{
	struct part *pt = &log->parts[p];
	struct stat st;
	if (fstat(pt->fd, &st) != 0)
		return kit_log__syserr(log, "stat partition", "");
	int64_t size = st.st_size;
	size_t want = CHUNK;

	while (pt->end + HDR <= size) {
		size_t len = (size_t)(size - pt->end < (int64_t)want ? size - pt->end : (int64_t)want);
		if (grow(&log->buf, &log->bufcap, len) != 0)
			return kit_log__fail(log, KIT_LOG_ERR, "out of memory scanning partition %d", p);
		if (pread_full(pt->fd, log->buf, len, pt->end) != 0)
			return kit_log__fail(log, KIT_LOG_ERR, "read partition %d: %s", p, strerror(errno));
		size_t off = 0;
		for (;;) {
			if (off + HDR > len)
				break;
			uint32_t rlen = kit_log__get32(log->buf + off);
			uint32_t sum = kit_log__get32(log->buf + off + 4);
			if (rlen > KIT_LOG_MAX_RECORD)
				goto tail;                         /* garbage: a torn tail */
			if (off + HDR + rlen > len) {
				if (pt->end + (int64_t)(off + HDR + rlen) > size)
					goto tail;                     /* incomplete: torn or in flight */
				if (off == 0)
					want = HDR + rlen;             /* one record larger than a chunk */
				break;
			}
			if (record_sum(rlen, log->buf + off + HDR) != sum)
				goto tail;
			if (index_push(pt, pt->end + (int64_t)off) != 0)
				return kit_log__fail(log, KIT_LOG_ERR, "out of memory indexing partition %d", p);
			off += HDR + rlen;
		}
		pt->end += (int64_t)off;
		continue;
tail:
		pt->end += (int64_t)off;
		return 0;
	}
	return 0;
}

/* Read records [from, from + count) of p (indexed already) into *buf. */
int kit_log__read_span(struct kit_log *log, int p, int64_t from, int64_t count,
                          unsigned char **buf, size_t *cap, size_t *len)
{
	struct part *pt = &log->parts[p];
	int64_t a = pt->pos[from];
	int64_t b = from + count < pt->n ? pt->pos[from + count] : pt->end;
	*len = (size_t)(b - a);
	if (grow(buf, cap, *len ? *len : 1) != 0)
		return kit_log__fail(log, KIT_LOG_ERR, "out of memory reading partition %d", p);
	if (pread_full(pt->fd, *buf, *len, a) != 0)
		return kit_log__fail(log, KIT_LOG_ERR, "read partition %d: %s", p, strerror(errno));
	return 0;
}

int kit_log__check_part(struct kit_log *log, int part)
{
	if (part < 0 || part >= log->nparts)
		return kit_log__fail(log, KIT_LOG_INVAL, "partition %d: the log has partitions 0..%d",
		                part, log->nparts - 1);
	return 0;
}

/* ---- open, close, append, read ---- */

/* Agree with the meta file on the partition count, creating it if absent. */
static int meta_check(struct kit_log *log, int nparts)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 64], text[64];
	snprintf(path, sizeof path, "%s/meta", log->dir);
	kit_log__tmp_name(tmp, sizeof tmp, path);
	int len = snprintf(text, sizeof text, "partitions %d\n", nparts);

	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return kit_log__syserr(log, "create", tmp);
	int wrote = kit_log__pwrite(fd, text, (size_t)len, 0) == 0;
	close(fd);
	/* link() refuses to replace: the first process to make the log wins. */
	int made = wrote && link(tmp, path) == 0;
	int saved = errno;
	unlink(tmp);
	if (!wrote || (!made && saved != EEXIST)) {
		errno = saved;
		return kit_log__syserr(log, "create", path);
	}
	if (made)
		return 0;

	FILE *f = fopen(path, "r");
	int have = -1;
	if (!f)
		return kit_log__syserr(log, "open", path);
	if (fscanf(f, "partitions %d", &have) != 1)
		have = -1;
	fclose(f);
	if (have != nparts)
		return kit_log__fail(log, KIT_LOG_INVAL, "made with %d partitions, opened with %d",
		                have, nparts);
	return 0;
}

int kit_log_open(struct kit_log **out, const char *dir, int npartitions)
{
	struct kit_log *log = calloc(1, sizeof *log);
	*out = log;
	if (!log)
		return KIT_LOG_ERR;
	for (int p = 0; p < KIT_LOG_MAX_PARTITIONS; p++)
		log->parts[p].fd = -1;
	snprintf(log->dir, sizeof log->dir, "%s", dir ? dir : "");
	if (!dir || !*dir || strlen(dir) >= sizeof log->dir)
		return kit_log__fail(log, KIT_LOG_INVAL, "a log needs a directory name");
	if (npartitions < 1 || npartitions > KIT_LOG_MAX_PARTITIONS)
		return kit_log__fail(log, KIT_LOG_INVAL, "%d partitions: a log has 1..%d",
		                npartitions, KIT_LOG_MAX_PARTITIONS);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return kit_log__syserr(log, "mkdir", dir);
	int rc = meta_check(log, npartitions);
	if (rc != 0)
		return rc;
	log->nparts = npartitions;
	for (int p = 0; p < npartitions; p++) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof path, "%s/part-%d.log", dir, p);
		log->parts[p].fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (log->parts[p].fd < 0)
			return kit_log__syserr(log, "open", path);
		if ((rc = kit_log__scan(log, p)) != 0)
			return rc;
	}
	return 0;
}

void kit_log_close(struct kit_log *log)
{
	if (!log)
		return;
	for (int p = 0; p < KIT_LOG_MAX_PARTITIONS; p++) {
		if (log->parts[p].fd >= 0)
			close(log->parts[p].fd);
		free(log->parts[p].pos);
	}
	free(log->buf);
	free(log);
}

const char *kit_log_errmsg(const struct kit_log *log)
{
	if (!log)
		return "log: out of memory";
	return log->err[0] ? log->err : "no error";
}

int kit_log_partitions(const struct kit_log *log)
{
	return log->nparts;
}

int kit_log_append(struct kit_log *log, int part, const struct kit_log_iov *recs,
                   int n, int64_t *first)
{
	int rc = kit_log__check_part(log, part);
	if (rc != 0)
		return rc;
	if (n < 1)
		return kit_log__fail(log, KIT_LOG_INVAL, "append of %d records", n);
	size_t total = 0;
	for (int i = 0; i < n; i++) {
		if (recs[i].len > KIT_LOG_MAX_RECORD || (recs[i].len && !recs[i].data))
			return kit_log__fail(log, KIT_LOG_INVAL, "record of %u bytes (at most %u)",
			                recs[i].len, KIT_LOG_MAX_RECORD);
		total += HDR + recs[i].len;
	}
	unsigned char *out = malloc(total);
	if (!out)
		return kit_log__fail(log, KIT_LOG_ERR, "out of memory appending %zu bytes", total);
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		put32(out + at, recs[i].len);
		put32(out + at + 4, record_sum(recs[i].len, recs[i].data));
		if (recs[i].len)
			memcpy(out + at + HDR, recs[i].data, recs[i].len);
		at += HDR + recs[i].len;
	}

	struct part *pt = &log->parts[part];
	if (kit_log__lock(pt->fd, LOCK_EX) != 0) {
		free(out);
		return kit_log__fail(log, KIT_LOG_ERR, "lock partition %d: %s", part, strerror(errno));
	}
	/* Holding the lock, we are the only writer: whatever lies past the last
	 * whole record is a crashed writer's torn tail, and goes. */
	struct stat st;
	int64_t base = -1;
	if ((rc = kit_log__scan(log, part)) == 0) {
		base = pt->end;
		if (fstat(pt->fd, &st) != 0 || (st.st_size > base && ftruncate(pt->fd, base) != 0))
			rc = kit_log__fail(log, KIT_LOG_ERR, "cut torn tail of partition %d: %s",
			              part, strerror(errno));
	}
	if (rc == 0 && kit_log__pwrite(pt->fd, out, total, base) != 0) {
		rc = kit_log__fail(log, KIT_LOG_ERR, "write partition %d: %s", part, strerror(errno));
		if (ftruncate(pt->fd, base) != 0) {
			/* left as a torn tail: readers skip it, the next append cuts it */
		}
	}
	if (rc == 0) {
		int64_t firstoff = pt->n;
		at = 0;
		for (int i = 0; i < n && rc == 0; i++) {
			if (index_push(pt, base + (int64_t)at) != 0)
				rc = kit_log__fail(log, KIT_LOG_ERR, "out of memory indexing partition %d", part);
			at += HDR + recs[i].len;
		}
		if (rc == 0) {
			pt->end = base + (int64_t)total;
			if (first)
				*first = firstoff;
		} else {
			/* the index is behind the file: rebuild it from the start */
			pt->n = 0;
			pt->end = 0;
		}
	}
	kit_log__lock(pt->fd, LOCK_UN);
	free(out);
	return rc;
}

int kit_log_sync(struct kit_log *log, int part)
{
	if (part != -1) {
		int rc = kit_log__check_part(log, part);
		if (rc != 0)
			return rc;
	}
	for (int p = 0; p < log->nparts; p++)
		if ((part == -1 || p == part) && fdatasync(log->parts[p].fd) != 0)
			return kit_log__fail(log, KIT_LOG_ERR, "sync partition %d: %s", p, strerror(errno));
	return 0;
}

int kit_log_end(struct kit_log *log, int part, int64_t *end)
{
	int rc = kit_log__check_part(log, part);
	if (rc == 0)
		rc = kit_log__scan(log, part);
	if (rc == 0)
		*end = log->parts[part].n;
	return rc;
}

int kit_log_read(struct kit_log *log, int part, int64_t from, int max,
                 kit_log_record_fn *fn, void *arg)
{
	int rc = kit_log__check_part(log, part);
	if (rc == 0)
		rc = kit_log__scan(log, part);
	if (rc != 0)
		return rc;
	struct part *pt = &log->parts[part];
	if (from < 0 || from > pt->n)
		return kit_log__fail(log, KIT_LOG_RANGE, "offset %lld of partition %d: it ends at %lld",
		                (long long)from, part, (long long)pt->n);
	int64_t count = pt->n - from < max ? pt->n - from : max;
	if (count <= 0)
		return 0;
	size_t len;
	if ((rc = kit_log__read_span(log, part, from, count, &log->buf, &log->bufcap, &len)) != 0)
		return rc;
	size_t at = 0;
	for (int64_t i = 0; i < count; i++) {
		struct kit_log_record r = { from + i, kit_log__get32(log->buf + at), log->buf + at + HDR };
		if ((rc = fn(arg, &r)) != 0)
			return rc;
		at += HDR + r.len;
	}
	return (int)count;
}

/* ---- removal ---- */

static int remove_tree(int parent, const char *name, int depth)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, e->d_name, 0) == 0)
			continue;
		if ((errno == EISDIR || errno == EPERM) && depth > 0)
			rc |= remove_tree(fd, e->d_name, depth - 1);
		else
			rc = -1;
	}
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) != 0)
		rc = -1;
	return rc;
}

int kit_log_remove(const char *dir)
{
	if (!dir || !*dir)
		return KIT_LOG_INVAL;
	return remove_tree(AT_FDCWD, dir, 1) == 0 ? 0 : KIT_LOG_ERR;
}
