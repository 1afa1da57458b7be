/*
 * log_group.c: consumer groups over kit/log's partitions (see log.h):
 * committed offsets, membership, rebalancing and poll. The files a group
 * keeps are listed at the top of log.c.
 */
#include "kit/log.h"
#include "kit/log_int.h"
#include "kit/failpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ---- committed offsets ---- */

static int group_dir(struct kit_log *log, const char *group, char *path, size_t size)
{
	if (!kit_log__valid_name(group))
		return kit_log__fail(log, KIT_LOG_INVAL, "group name \"%s\": use 1..%d of [A-Za-z0-9._-]",
		                group ? group : "", NAME_MAX_LEN);
	snprintf(path, size, "%s/group-%s", log->dir, group);
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return kit_log__syserr(log, "mkdir", path);
	return 0;
}

int kit_log_committed(struct kit_log *log, const char *group, int part, int64_t *next)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	int rc = kit_log__check_part(log, part);
	if (rc == 0)
		rc = group_dir(log, group, dir, sizeof dir);
	if (rc != 0)
		return rc;
	snprintf(path, sizeof path, "%s/offset-%d", dir, part);
	*next = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? 0 : kit_log__syserr(log, "open", path);
	long long v;
	if (fscanf(f, "%lld", &v) == 1 && v >= 0)
		*next = v;
	fclose(f);
	return 0;
}

int kit_log_commit(struct kit_log *log, const char *group, int part, int64_t next)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], tmp[PATH_MAX + 64], text[32];
	int rc = kit_log__check_part(log, part);
	if (rc == 0)
		rc = group_dir(log, group, dir, sizeof dir);
	if (rc != 0)
		return rc;
	if (next < 0)
		return kit_log__fail(log, KIT_LOG_INVAL, "commit of offset %lld", (long long)next);
	snprintf(path, sizeof path, "%s/offset-%d", dir, part);
	kit_log__tmp_name(tmp, sizeof tmp, path);
	int len = snprintf(text, sizeof text, "%lld\n", (long long)next);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return kit_log__syserr(log, "create", tmp);
	int ok = kit_log__pwrite(fd, text, (size_t)len, 0) == 0;
	close(fd);
	if (!ok || rename(tmp, path) != 0) {
		rc = kit_log__syserr(log, "write", path);
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
		kit_log__syserr(c->log, "open", path);
	return fd;
}

/* Take the group's lock: one member at a time joins, leaves or counts. */
static int group_lock(struct kit_log_consumer *c)
{
	int fd = group_open(c, "lock");
	if (fd >= 0 && kit_log__lock(fd, LOCK_EX) != 0) {
		kit_log__syserr(c->log, "lock group", c->group);
		close(fd);
		fd = -1;
	}
	return fd;
}

static void group_unlock(int fd)
{
	kit_log__lock(fd, LOCK_UN);
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
	if (!kit_log__valid_name(member))
		return kit_log__fail(log, KIT_LOG_INVAL, "member name \"%s\": use 1..%d of [A-Za-z0-9._-]",
		                member ? member : "", NAME_MAX_LEN);
	struct kit_log_consumer *c = calloc(1, sizeof *c);
	if (!c)
		return kit_log__fail(log, KIT_LOG_ERR, "out of memory joining group %s", group);
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
		   ? kit_log__fail(log, KIT_LOG_BUSY, "group %s already has a live member %s", group, member)
		   : kit_log__syserr(log, "lock member", member);
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
		return kit_log__syserr(c->log, "list", path);
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
			rc = kit_log__fail(c->log, KIT_LOG_ERR, "group %s: too many members", c->group);
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
			rc = kit_log__fail(c->log, KIT_LOG_ERR, "group %s: member %s lost its file",
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
		return kit_log__fail(c->log, KIT_LOG_INVAL, "seek: member %s does not own partition %d",
		                c->member, part);
	if (next < 0)
		return kit_log__fail(c->log, KIT_LOG_INVAL, "seek to offset %lld", (long long)next);
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
	return kit_fp_hit(name) ? kit_log__fail(log, KIT_LOG_ERR, "failpoint %s fired", name) : 0;
}

int kit_log_poll(struct kit_log_consumer *c, int max, kit_log_batch_fn *fn, void *arg)
{
	struct kit_log *log = c->log;
	if (max < 1)
		return kit_log__fail(log, KIT_LOG_INVAL, "poll of %d records", max);
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
		if ((rc = kit_log__scan(log, p)) != 0)
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
	if ((rc = kit_log__read_span(log, part, from, count, &c->buf, &c->bufcap, &len)) != 0)
		return rc;
	if (count > c->reccap) {
		struct kit_log_record *r = realloc(c->recs, (size_t)count * sizeof *r);
		if (!r)
			return kit_log__fail(log, KIT_LOG_ERR, "out of memory for a batch of %d", count);
		c->recs = r;
		c->reccap = count;
	}
	size_t at = 0;
	for (int i = 0; i < count; i++) {
		if (i == count / 2 && (rc = poll_fp(log, "log-mid-batch")) != 0)
			return rc;
		c->recs[i] = (struct kit_log_record){ from + i, kit_log__get32(c->buf + at), c->buf + at + HDR };
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
