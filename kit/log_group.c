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
#include <time.h>
#include <unistd.h>

struct kit_log_consumer {
	struct kit_log *log;
	char group[NAME_MAX_LEN + 1];
	char member[NAME_MAX_LEN + 1];
	struct kit_log_callbacks cb;
	int member_fd;                           /* flock held while we live; mtime = heartbeat */
	int session_ms;                          /* 0: alive while the process lives */
	int owned[KIT_LOG_MAX_PARTITIONS];       /* 1 while our lease on the partition holds */
	int64_t epoch[KIT_LOG_MAX_PARTITIONS];   /* the lease's generation, when ours */
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

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Is member `who` of the group alive? Its process holds the flock on its
 * file (a free lock means it died: the file goes), and with a session
 * timeout its heartbeat (the file's mtime) is recent. The group lock is
 * held. */
static int member_alive(struct kit_log_consumer *c, int dir, const char *file)
{
	if (strcmp(file + 7, c->member) == 0)
		return 1;
	int fd = openat(dir, file, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int dead = flock(fd, LOCK_EX | LOCK_NB) == 0;
	if (dead)
		unlinkat(dir, file, 0);
	struct stat st;
	if (!dead && c->session_ms > 0 && fstat(fd, &st) == 0) {
		int64_t beat = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
		dead = now_ms() - beat > c->session_ms;   /* alive, but silent too long: out */
	}
	close(fd);
	return !dead;
}

/* The live members, sorted by name, into names[0 .. *n-1] (caller frees
 * each). The group lock is held. */
static int list_members(struct kit_log_consumer *c, char **names, int cap, int *n)
{
	char path[PATH_MAX + 160];
	snprintf(path, sizeof path, "%s/group-%s", c->log->dir, c->group);
	DIR *d = opendir(path);
	*n = 0;
	if (!d)
		return kit_log__syserr(c->log, "list", path);
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && rc == 0) {
		if (strncmp(e->d_name, "member-", 7) != 0 || !member_alive(c, dirfd(d), e->d_name))
			continue;
		if (*n == cap || !(names[*n] = strdup(e->d_name + 7)))
			rc = kit_log__fail(c->log, KIT_LOG_ERR, "group %s: too many members", c->group);
		else
			(*n)++;
	}
	closedir(d);
	if (rc == 0)
		qsort(names, (size_t)*n, sizeof names[0], cmp_names);
	return rc;
}

/* A partition's lease: "lease-P" holds "NAME EPOCH" (or "- EPOCH" once let
 * go); *who = "" when nobody ever held it. Replaced by rename, so a reader
 * without the group lock sees the old or the new lease, whole. */
static void lease_read(struct kit_log_consumer *c, int p, char *who, size_t len, int64_t *epoch)
{
	char path[PATH_MAX + 160];
	snprintf(path, sizeof path, "%s/group-%s/lease-%d", c->log->dir, c->group, p);
	who[0] = '\0';
	*epoch = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char name[NAME_MAX_LEN + 1];
	long long e;
	if (fscanf(f, "%63s %lld", name, &e) == 2) {
		snprintf(who, len, "%s", strcmp(name, "-") == 0 ? "" : name);
		*epoch = e;
	}
	fclose(f);
}

static int lease_write(struct kit_log_consumer *c, int p, const char *who, int64_t epoch)
{
	char path[PATH_MAX + 160], tmp[PATH_MAX + 200], text[NAME_MAX_LEN + 32];
	snprintf(path, sizeof path, "%s/group-%s/lease-%d", c->log->dir, c->group, p);
	kit_log__tmp_name(tmp, sizeof tmp, path);
	int len = snprintf(text, sizeof text, "%s %lld\n", who[0] ? who : "-", (long long)epoch);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return kit_log__syserr(c->log, "create", tmp);
	int ok = kit_log__pwrite(fd, text, (size_t)len, 0) == 0;
	close(fd);
	if (!ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return kit_log__syserr(c->log, "write", path);
	}
	return 0;
}

/* Our lease on p still stands: nobody took it since we did. */
static int lease_held(struct kit_log_consumer *c, int p)
{
	char who[NAME_MAX_LEN + 1];
	int64_t epoch;
	lease_read(c, p, who, sizeof who, &epoch);
	return strcmp(who, c->member) == 0 && epoch == c->epoch[p];
}

/* Stop owning p: revoked() first; with give_up, write the lease as free. */
static int let_go(struct kit_log_consumer *c, int p, int give_up)
{
	int rc = c->cb.revoked ? c->cb.revoked(c->cb.arg, c, p) : 0;
	if (give_up && lease_held(c, p)) {
		int r = lease_write(c, p, "", c->epoch[p]);
		if (rc == 0)
			rc = r;
	}
	c->owned[p] = 0;
	return rc;
}

int kit_log_set_session_timeout(struct kit_log_consumer *c, int ms)
{
	if (ms < 0)
		return kit_log__fail(c->log, KIT_LOG_INVAL, "session timeout of %d ms", ms);
	c->session_ms = ms;
	return 0;
}

int kit_log_generation(const struct kit_log_consumer *c, int part, int64_t *epoch)
{
	if (!kit_log_owns(c, part))
		return KIT_LOG_INVAL;
	*epoch = c->epoch[part];
	return 0;
}

int kit_log_rebalance(struct kit_log_consumer *c)
{
	int nparts = c->log->nparts;
	futimens(c->member_fd, NULL);   /* the heartbeat */
	int gl = group_lock(c);
	if (gl < 0)
		return KIT_LOG_ERR;
	char *names[256];
	int n = 0, rank = -1;
	int rc = list_members(c, names, 256, &n);
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], c->member) == 0)
			rank = i;
	if (rc == 0 && rank < 0)
		rc = kit_log__fail(c->log, KIT_LOG_ERR, "group %s: member %s lost its file", c->group,
		                   c->member);

	/* Leases we lost while we were away (too long silent: a zombie), and
	 * partitions we should hand to another member. */
	for (int p = 0; p < nparts && rc == 0; p++) {
		if (!c->owned[p])
			continue;
		int r = 0;
		if (!lease_held(c, p))
			r = let_go(c, p, 0);
		else if (p % n != rank)
			r = let_go(c, p, 1);
		if (r < 0 && rc == 0)
			rc = r;
	}
	/* Partitions that are ours to take, once their holder let go or is
	 * no longer a live member. */
	for (int p = 0; p < nparts && rc == 0; p++) {
		if (p % n != rank || c->owned[p])
			continue;
		char who[NAME_MAX_LEN + 1];
		int64_t epoch;
		lease_read(c, p, who, sizeof who, &epoch);
		int held = 0;
		for (int i = 0; i < n && who[0]; i++)
			held |= strcmp(names[i], who) == 0 && strcmp(who, c->member) != 0;
		if (held)
			continue;          /* the previous owner has not let go yet */
		if ((rc = lease_write(c, p, c->member, epoch + 1)) != 0)
			break;
		c->owned[p] = 1;
		c->epoch[p] = epoch + 1;
		rc = kit_log_committed(c->log, c->group, p, &c->pos[p]);
		c->hint[p] = c->pos[p];
		if (rc == 0 && c->cb.assigned)
			rc = c->cb.assigned(c->cb.arg, c, p);
		if (rc != 0) {
			/* never read from a position the callback did not approve:
			 * let go, and take the partition afresh on the next call */
			lease_write(c, p, "", c->epoch[p]);
			c->owned[p] = 0;
		}
	}
	group_unlock(gl);
	for (int i = 0; i < n; i++)
		free(names[i]);
	return rc;
}

void kit_log_leave(struct kit_log_consumer *c)
{
	if (!c)
		return;
	int gl = group_lock(c);
	for (int p = 0; p < KIT_LOG_MAX_PARTITIONS; p++)
		if (c->owned[p])
			let_go(c, p, 1);
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
	if (!kit_log_owns(c, part))
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
	return part >= 0 && part < c->log->nparts && c->owned[part];
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
		if (!c->owned[p])
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
	if (!lease_held(c, part))
		return count;   /* a zombie's batch: the new owner's hint is not ours to move */
	c->pos[part] = from + count;
	if ((rc = kit_log_commit(log, c->group, part, c->pos[part])) != 0)
		return rc;
	c->hint[part] = c->pos[part];
	return count;
}
