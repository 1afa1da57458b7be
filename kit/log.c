/*
 * log.c: the partitioned log of log.h, on plain files and flock(2).
 *
 * Layout of a log directory:
 *   meta                 "partitions N": the count the log was made with
 *   part-P.log           partition P: records back to back
 *   group-G/lock         held while members join, leave or are counted
 *   group-G/member-NAME  held (flock) by the live consumer NAME
 *   group-G/part-P       held by the consumer that owns partition P
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
#include "kit/failpoint.h"

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

#define HDR 8                     /* len + sum */
#define CHUNK (256 * 1024)        /* bytes read at a time while scanning */
#define NAME_MAX_LEN 63

struct part {
	int fd;
	int64_t *pos;     /* pos[i]: byte position of record i */
	int64_t n;        /* records indexed */
	int64_t cap;      /* entries allocated in pos */
	int64_t end;      /* byte position just past record n - 1 */
};

struct kit_log {
	char dir[PATH_MAX - 512];     /* room left for the names inside */
	int nparts;
	struct part parts[KIT_LOG_MAX_PARTITIONS];
	unsigned char *buf;           /* scratch for scans and kit_log_read */
	size_t bufcap;
	char err[PATH_MAX + 256];
};

struct kit_log_consumer {
	struct kit_log *log;
	char group[NAME_MAX_LEN + 1];
	char member[NAME_MAX_LEN + 1];
	struct kit_log_callbacks cb;
	int member_fd;                           /* flock held while we live */
	int part_fd[KIT_LOG_MAX_PARTITIONS];     /* -1 when the partition is not ours */
	int64_t pos[KIT_LOG_MAX_PARTITIONS];     /* next offset to read, when ours */
	int64_t hint[KIT_LOG_MAX_PARTITIONS];    /* the hint as we last read or wrote it */
	int rr;                                  /* round robin: partition to try first */
	unsigned char *buf;                      /* the current batch's bytes */
	size_t bufcap;
	struct kit_log_record *recs;             /* the current batch */
	int reccap;
};

/* ---- errors and small helpers ---- */

__attribute__((format(printf, 3, 4)))
static int log_fail(struct kit_log *log, int code, const char *fmt, ...)
{
	int n = snprintf(log->err, sizeof log->err, "log %s: ", log->dir);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof log->err)
		vsnprintf(log->err + n, sizeof log->err - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

static int log_syserr(struct kit_log *log, const char *what, const char *path)
{
	return log_fail(log, KIT_LOG_ERR, "%s %s: %s", what, path, strerror(errno));
}

static uint32_t fnv1a(uint32_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

static uint32_t record_sum(uint32_t len, const void *data)
{
	unsigned char l[4] = { len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff, len >> 24 };
	return fnv1a(fnv1a(2166136261u, l, 4), data, len);
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v & 0xff; p[1] = (v >> 8) & 0xff; p[2] = (v >> 16) & 0xff; p[3] = v >> 24;
}

static uint32_t get32(const unsigned char *p)
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

static int valid_name(const char *s)
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

static int pwrite_full(int fd, const void *buf, size_t len, int64_t off)
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

static int lock_fd(int fd, int how)
{
	int rc;
	do
		rc = flock(fd, how);
	while (rc != 0 && errno == EINTR);
	return rc;
}

/* A name for a temporary file no other process or thread uses now. */
static void tmp_name(char *buf, size_t size, const char *base)
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
static int part_scan(struct kit_log *log, int p)
{
	struct part *pt = &log->parts[p];
	struct stat st;
	if (fstat(pt->fd, &st) != 0)
		return log_syserr(log, "stat partition", "");
	int64_t size = st.st_size;
	size_t want = CHUNK;

	while (pt->end + HDR <= size) {
		size_t len = (size_t)(size - pt->end < (int64_t)want ? size - pt->end : (int64_t)want);
		if (grow(&log->buf, &log->bufcap, len) != 0)
			return log_fail(log, KIT_LOG_ERR, "out of memory scanning partition %d", p);
		if (pread_full(pt->fd, log->buf, len, pt->end) != 0)
			return log_fail(log, KIT_LOG_ERR, "read partition %d: %s", p, strerror(errno));
		size_t off = 0;
		for (;;) {
			if (off + HDR > len)
				break;
			uint32_t rlen = get32(log->buf + off);
			uint32_t sum = get32(log->buf + off + 4);
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
				return log_fail(log, KIT_LOG_ERR, "out of memory indexing partition %d", p);
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
static int part_read_span(struct kit_log *log, int p, int64_t from, int64_t count,
                          unsigned char **buf, size_t *cap, size_t *len)
{
	struct part *pt = &log->parts[p];
	int64_t a = pt->pos[from];
	int64_t b = from + count < pt->n ? pt->pos[from + count] : pt->end;
	*len = (size_t)(b - a);
	if (grow(buf, cap, *len ? *len : 1) != 0)
		return log_fail(log, KIT_LOG_ERR, "out of memory reading partition %d", p);
	if (pread_full(pt->fd, *buf, *len, a) != 0)
		return log_fail(log, KIT_LOG_ERR, "read partition %d: %s", p, strerror(errno));
	return 0;
}

static int check_part(struct kit_log *log, int part)
{
	if (part < 0 || part >= log->nparts)
		return log_fail(log, KIT_LOG_INVAL, "partition %d: the log has partitions 0..%d",
		                part, log->nparts - 1);
	return 0;
}

/* ---- open, close, append, read ---- */

/* Agree with the meta file on the partition count, creating it if absent. */
static int meta_check(struct kit_log *log, int nparts)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 64], text[64];
	snprintf(path, sizeof path, "%s/meta", log->dir);
	tmp_name(tmp, sizeof tmp, path);
	int len = snprintf(text, sizeof text, "partitions %d\n", nparts);

	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return log_syserr(log, "create", tmp);
	int wrote = pwrite_full(fd, text, (size_t)len, 0) == 0;
	close(fd);
	/* link() refuses to replace: the first process to make the log wins. */
	int made = wrote && link(tmp, path) == 0;
	int saved = errno;
	unlink(tmp);
	if (!wrote || (!made && saved != EEXIST)) {
		errno = saved;
		return log_syserr(log, "create", path);
	}
	if (made)
		return 0;

	FILE *f = fopen(path, "r");
	int have = -1;
	if (!f)
		return log_syserr(log, "open", path);
	if (fscanf(f, "partitions %d", &have) != 1)
		have = -1;
	fclose(f);
	if (have != nparts)
		return log_fail(log, KIT_LOG_INVAL, "made with %d partitions, opened with %d",
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
		return log_fail(log, KIT_LOG_INVAL, "a log needs a directory name");
	if (npartitions < 1 || npartitions > KIT_LOG_MAX_PARTITIONS)
		return log_fail(log, KIT_LOG_INVAL, "%d partitions: a log has 1..%d",
		                npartitions, KIT_LOG_MAX_PARTITIONS);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return log_syserr(log, "mkdir", dir);
	int rc = meta_check(log, npartitions);
	if (rc != 0)
		return rc;
	log->nparts = npartitions;
	for (int p = 0; p < npartitions; p++) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof path, "%s/part-%d.log", dir, p);
		log->parts[p].fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (log->parts[p].fd < 0)
			return log_syserr(log, "open", path);
		if ((rc = part_scan(log, p)) != 0)
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
	int rc = check_part(log, part);
	if (rc != 0)
		return rc;
	if (n < 1)
		return log_fail(log, KIT_LOG_INVAL, "append of %d records", n);
	size_t total = 0;
	for (int i = 0; i < n; i++) {
		if (recs[i].len > KIT_LOG_MAX_RECORD || (recs[i].len && !recs[i].data))
			return log_fail(log, KIT_LOG_INVAL, "record of %u bytes (at most %u)",
			                recs[i].len, KIT_LOG_MAX_RECORD);
		total += HDR + recs[i].len;
	}
	unsigned char *out = malloc(total);
	if (!out)
		return log_fail(log, KIT_LOG_ERR, "out of memory appending %zu bytes", total);
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		put32(out + at, recs[i].len);
		put32(out + at + 4, record_sum(recs[i].len, recs[i].data));
		if (recs[i].len)
			memcpy(out + at + HDR, recs[i].data, recs[i].len);
		at += HDR + recs[i].len;
	}

	struct part *pt = &log->parts[part];
	if (lock_fd(pt->fd, LOCK_EX) != 0) {
		free(out);
		return log_fail(log, KIT_LOG_ERR, "lock partition %d: %s", part, strerror(errno));
	}
	/* Holding the lock, we are the only writer: whatever lies past the last
	 * whole record is a crashed writer's torn tail, and goes. */
	struct stat st;
	int64_t base = -1;
	if ((rc = part_scan(log, part)) == 0) {
		base = pt->end;
		if (fstat(pt->fd, &st) != 0 || (st.st_size > base && ftruncate(pt->fd, base) != 0))
			rc = log_fail(log, KIT_LOG_ERR, "cut torn tail of partition %d: %s",
			              part, strerror(errno));
	}
	if (rc == 0 && pwrite_full(pt->fd, out, total, base) != 0) {
		rc = log_fail(log, KIT_LOG_ERR, "write partition %d: %s", part, strerror(errno));
		if (ftruncate(pt->fd, base) != 0) {
			/* left as a torn tail: readers skip it, the next append cuts it */
		}
	}
	if (rc == 0) {
		int64_t firstoff = pt->n;
		at = 0;
		for (int i = 0; i < n && rc == 0; i++) {
			if (index_push(pt, base + (int64_t)at) != 0)
				rc = log_fail(log, KIT_LOG_ERR, "out of memory indexing partition %d", part);
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
	lock_fd(pt->fd, LOCK_UN);
	free(out);
	return rc;
}

int kit_log_sync(struct kit_log *log, int part)
{
	if (part != -1) {
		int rc = check_part(log, part);
		if (rc != 0)
			return rc;
	}
	for (int p = 0; p < log->nparts; p++)
		if ((part == -1 || p == part) && fdatasync(log->parts[p].fd) != 0)
			return log_fail(log, KIT_LOG_ERR, "sync partition %d: %s", p, strerror(errno));
	return 0;
}

int kit_log_end(struct kit_log *log, int part, int64_t *end)
{
	int rc = check_part(log, part);
	if (rc == 0)
		rc = part_scan(log, part);
	if (rc == 0)
		*end = log->parts[part].n;
	return rc;
}

int kit_log_read(struct kit_log *log, int part, int64_t from, int max,
                 kit_log_record_fn *fn, void *arg)
{
	int rc = check_part(log, part);
	if (rc == 0)
		rc = part_scan(log, part);
	if (rc != 0)
		return rc;
	struct part *pt = &log->parts[part];
	if (from < 0 || from > pt->n)
		return log_fail(log, KIT_LOG_RANGE, "offset %lld of partition %d: it ends at %lld",
		                (long long)from, part, (long long)pt->n);
	int64_t count = pt->n - from < max ? pt->n - from : max;
	if (count <= 0)
		return 0;
	size_t len;
	if ((rc = part_read_span(log, part, from, count, &log->buf, &log->bufcap, &len)) != 0)
		return rc;
	size_t at = 0;
	for (int64_t i = 0; i < count; i++) {
		struct kit_log_record r = { from + i, get32(log->buf + at), log->buf + at + HDR };
		if ((rc = fn(arg, &r)) != 0)
			return rc;
		at += HDR + r.len;
	}
	return (int)count;
}

/* ---- committed offsets ---- */

static int group_dir(struct kit_log *log, const char *group, char *path, size_t size)
{
	if (!valid_name(group))
		return log_fail(log, KIT_LOG_INVAL, "group name \"%s\": use 1..%d of [A-Za-z0-9._-]",
		                group ? group : "", NAME_MAX_LEN);
	snprintf(path, size, "%s/group-%s", log->dir, group);
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return log_syserr(log, "mkdir", path);
	return 0;
}

int kit_log_committed(struct kit_log *log, const char *group, int part, int64_t *next)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	int rc = check_part(log, part);
	if (rc == 0)
		rc = group_dir(log, group, dir, sizeof dir);
	if (rc != 0)
		return rc;
	snprintf(path, sizeof path, "%s/offset-%d", dir, part);
	*next = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? 0 : log_syserr(log, "open", path);
	long long v;
	if (fscanf(f, "%lld", &v) == 1 && v >= 0)
		*next = v;
	fclose(f);
	return 0;
}

int kit_log_commit(struct kit_log *log, const char *group, int part, int64_t next)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], tmp[PATH_MAX + 64], text[32];
	int rc = check_part(log, part);
	if (rc == 0)
		rc = group_dir(log, group, dir, sizeof dir);
	if (rc != 0)
		return rc;
	if (next < 0)
		return log_fail(log, KIT_LOG_INVAL, "commit of offset %lld", (long long)next);
	snprintf(path, sizeof path, "%s/offset-%d", dir, part);
	tmp_name(tmp, sizeof tmp, path);
	int len = snprintf(text, sizeof text, "%lld\n", (long long)next);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return log_syserr(log, "create", tmp);
	int ok = pwrite_full(fd, text, (size_t)len, 0) == 0;
	close(fd);
	if (!ok || rename(tmp, path) != 0) {
		rc = log_syserr(log, "write", path);
		unlink(tmp);
	}
	return rc;
}

/* ---- consumer groups ---- */

struct kit_log *kit_log_of(const struct kit_log_consumer *c) { return c->log; }
const char *kit_log_group(const struct kit_log_consumer *c) { return c->group; }

/* Open (creating) a file of c's group directory. */
static int group_open(struct kit_log_consumer *c, const char *name)
{
	char path[PATH_MAX + 160];
	snprintf(path, sizeof path, "%s/group-%s/%s", c->log->dir, c->group, name);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		log_syserr(c->log, "open", path);
	return fd;
}

/* Take the group's lock: one member at a time joins, leaves or counts. */
static int group_lock(struct kit_log_consumer *c)
{
	int fd = group_open(c, "lock");
	if (fd >= 0 && lock_fd(fd, LOCK_EX) != 0) {
		log_syserr(c->log, "lock group", c->group);
		close(fd);
		fd = -1;
	}
	return fd;
}

static void group_unlock(int fd)
{
	lock_fd(fd, LOCK_UN);
	close(fd);
}

int kit_log_join(struct kit_log_consumer **out, struct kit_log *log, const char *group,
                 const char *member, const struct kit_log_callbacks *cb)
{
	char dir[PATH_MAX];
	*out = NULL;
	int rc = group_dir(log, group, dir, sizeof dir);
	if (rc != 0)
		return rc;
	if (!valid_name(member))
		return log_fail(log, KIT_LOG_INVAL, "member name \"%s\": use 1..%d of [A-Za-z0-9._-]",
		                member ? member : "", NAME_MAX_LEN);
	struct kit_log_consumer *c = calloc(1, sizeof *c);
	if (!c)
		return log_fail(log, KIT_LOG_ERR, "out of memory joining group %s", group);
	c->log = log;
	snprintf(c->group, sizeof c->group, "%s", group);
	snprintf(c->member, sizeof c->member, "%s", member);
	if (cb)
		c->cb = *cb;
	for (int p = 0; p < KIT_LOG_MAX_PARTITIONS; p++)
		c->part_fd[p] = -1;

	int gl = group_lock(c);
	if (gl < 0) {
		free(c);
		return KIT_LOG_ERR;
	}
	char name[NAME_MAX_LEN + 16];
	snprintf(name, sizeof name, "member-%s", member);
	c->member_fd = group_open(c, name);
	rc = c->member_fd < 0 ? KIT_LOG_ERR : 0;
	if (rc == 0 && flock(c->member_fd, LOCK_EX | LOCK_NB) != 0) {
		rc = errno == EWOULDBLOCK
		   ? log_fail(log, KIT_LOG_BUSY, "group %s already has a live member %s", group, member)
		   : log_syserr(log, "lock member", member);
		close(c->member_fd);
	}
	group_unlock(gl);
	if (rc != 0) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Count the live members and find c's rank among them, sorted by name.
 * Members whose process died (their flock is free) are removed. */
static int group_members(struct kit_log_consumer *c, int *rank, int *count)
{
	char path[PATH_MAX + 160];
	snprintf(path, sizeof path, "%s/group-%s", c->log->dir, c->group);
	int gl = group_lock(c);
	if (gl < 0)
		return KIT_LOG_ERR;
	DIR *d = opendir(path);
	if (!d) {
		group_unlock(gl);
		return log_syserr(c->log, "list", path);
	}
	char *names[256];
	int n = 0, rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && rc == 0) {
		if (strncmp(e->d_name, "member-", 7) != 0)
			continue;
		const char *who = e->d_name + 7;
		if (strcmp(who, c->member) != 0) {
			int fd = openat(dirfd(d), e->d_name, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				continue;
			int dead = flock(fd, LOCK_EX | LOCK_NB) == 0;
			if (dead)
				unlinkat(dirfd(d), e->d_name, 0);
			close(fd);
			if (dead)
				continue;
		}
		if (n == (int)(sizeof names / sizeof names[0]) || !(names[n] = strdup(who)))
			rc = log_fail(c->log, KIT_LOG_ERR, "group %s: too many members", c->group);
		else
			n++;
	}
	closedir(d);
	group_unlock(gl);

	*rank = -1;
	if (rc == 0) {
		qsort(names, (size_t)n, sizeof names[0], cmp_names);
		for (int i = 0; i < n; i++)
			if (strcmp(names[i], c->member) == 0)
				*rank = i;
		*count = n;
		if (*rank < 0)
			rc = log_fail(c->log, KIT_LOG_ERR, "group %s: member %s lost its file",
			              c->group, c->member);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	return rc;
}

static int release(struct kit_log_consumer *c, int p)
{
	int rc = c->cb.revoked ? c->cb.revoked(c->cb.arg, c, p) : 0;
	close(c->part_fd[p]);
	c->part_fd[p] = -1;
	return rc;
}

int kit_log_rebalance(struct kit_log_consumer *c)
{
	int rank, count;
	int rc = group_members(c, &rank, &count);
	if (rc != 0)
		return rc;
	int nparts = c->log->nparts;
	for (int p = 0; p < nparts; p++) {
		int mine = p % count == rank;
		if (!mine && c->part_fd[p] >= 0) {
			int r = release(c, p);
			if (r < 0 && rc == 0)
				rc = r;
		}
	}
	for (int p = 0; p < nparts && rc == 0; p++) {
		if (p % count != rank || c->part_fd[p] >= 0)
			continue;
		char name[32];
		snprintf(name, sizeof name, "part-%d", p);
		int fd = group_open(c, name);
		if (fd < 0)
			return KIT_LOG_ERR;
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			close(fd);        /* the previous owner has not let go yet */
			continue;
		}
		c->part_fd[p] = fd;
		rc = kit_log_committed(c->log, c->group, p, &c->pos[p]);
		c->hint[p] = c->pos[p];
		if (rc == 0 && c->cb.assigned)
			rc = c->cb.assigned(c->cb.arg, c, p);
		if (rc != 0) {
			/* never read from a position the callback did not approve:
			 * let go, and take the partition afresh on the next call */
			close(fd);
			c->part_fd[p] = -1;
		}
	}
	return rc;
}

void kit_log_leave(struct kit_log_consumer *c)
{
	if (!c)
		return;
	for (int p = 0; p < KIT_LOG_MAX_PARTITIONS; p++)
		if (c->part_fd[p] >= 0)
			release(c, p);
	int gl = group_lock(c);
	char path[PATH_MAX + 160];
	snprintf(path, sizeof path, "%s/group-%s/member-%s", c->log->dir, c->group, c->member);
	unlink(path);
	close(c->member_fd);
	if (gl >= 0)
		group_unlock(gl);
	free(c->buf);
	free(c->recs);
	free(c);
}

int kit_log_seek(struct kit_log_consumer *c, int part, int64_t next)
{
	if (part < 0 || part >= c->log->nparts || c->part_fd[part] < 0)
		return log_fail(c->log, KIT_LOG_INVAL, "seek: member %s does not own partition %d",
		                c->member, part);
	if (next < 0)
		return log_fail(c->log, KIT_LOG_INVAL, "seek to offset %lld", (long long)next);
	c->pos[part] = next;
	return 0;
}

int kit_log_position(const struct kit_log_consumer *c, int part, int64_t *next)
{
	if (!kit_log_owns(c, part))
		return KIT_LOG_INVAL;
	*next = c->pos[part];
	return 0;
}

int kit_log_owns(const struct kit_log_consumer *c, int part)
{
	return part >= 0 && part < c->log->nparts && c->part_fd[part] >= 0;
}

/* The failpoint's error action is a refused call: report it as one. */
static int poll_fp(struct kit_log *log, const char *name)
{
	return kit_fp_hit(name) ? log_fail(log, KIT_LOG_ERR, "failpoint %s fired", name) : 0;
}

int kit_log_poll(struct kit_log_consumer *c, int max, kit_log_batch_fn *fn, void *arg)
{
	struct kit_log *log = c->log;
	if (max < 1)
		return log_fail(log, KIT_LOG_INVAL, "poll of %d records", max);
	int rc = kit_log_rebalance(c);
	if (rc != 0)
		return rc;

	int part = -1;
	for (int i = 0; i < log->nparts && part < 0; i++) {
		int p = (c->rr + i) % log->nparts;
		if (c->part_fd[p] < 0)
			continue;
		/* A seek moved us: the hint follows, even with nothing to read,
		 * or it would stay behind a position nobody reads from again. */
		if (c->pos[p] != c->hint[p]) {
			if ((rc = kit_log_commit(log, c->group, p, c->pos[p])) != 0)
				return rc;
			c->hint[p] = c->pos[p];
		}
		if ((rc = part_scan(log, p)) != 0)
			return rc;
		if (c->pos[p] < log->parts[p].n)
			part = p;
	}
	if (part < 0)
		return 0;
	c->rr = (part + 1) % log->nparts;

	int64_t from = c->pos[part];
	int count = (int)(log->parts[part].n - from < max ? log->parts[part].n - from : max);
	size_t len;
	if ((rc = part_read_span(log, part, from, count, &c->buf, &c->bufcap, &len)) != 0)
		return rc;
	if (count > c->reccap) {
		struct kit_log_record *r = realloc(c->recs, (size_t)count * sizeof *r);
		if (!r)
			return log_fail(log, KIT_LOG_ERR, "out of memory for a batch of %d", count);
		c->recs = r;
		c->reccap = count;
	}
	size_t at = 0;
	for (int i = 0; i < count; i++) {
		if (i == count / 2 && (rc = poll_fp(log, "log-mid-batch")) != 0)
			return rc;
		c->recs[i] = (struct kit_log_record){ from + i, get32(c->buf + at), c->buf + at + HDR };
		at += HDR + c->recs[i].len;
	}
	if ((rc = poll_fp(log, "log-before-handler")) != 0)
		return rc;
	if ((rc = fn(arg, part, c->recs, count)) != 0)
		return rc;
	if ((rc = poll_fp(log, "log-before-commit")) != 0)
		return rc;
	c->pos[part] = from + count;
	if ((rc = kit_log_commit(log, c->group, part, c->pos[part])) != 0)
		return rc;
	c->hint[part] = c->pos[part];
	return count;
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
