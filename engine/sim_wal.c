/*
 * sim_wal.c: the write-ahead log every row's commit goes through.
 *
 * A database has one log, whatever the number of rows. Its flush is a
 * single server: one flush at a time, and a flush takes every commit that
 * is waiting when it starts (group commit). A commit that comes while a
 * flush is running waits for it to end, then for the next one, which it
 * shares with whoever else came meanwhile. So a row's hold is its CPU
 * part, then the wait for the flush in progress, then the flush itself
 * (c.wal_flush_ms), and only then (PostgreSQL's order) the release.
 *
 * One hot row never has two commits waiting at once: every commit gets a
 * flush of its own (1.00 flushes per commit). Many rows under many
 * clients share them, and the log, not the row locks, becomes what each
 * commit waits for: that is why 16 rows give less than 16 times one.
 *
 * The flush is not all the device's. Its first c.wal_cpu_ms is CPU (the
 * leader writing the log pages and entering fdatasync), a job on the CPU
 * station when c.cores is set, so it slows down when the cores are
 * shared; the rest is the device's wait.
 *
 * With a herd hand-off (PostgreSQL) the log's waiters are woken the way
 * PostgreSQL's WALWriteLock wakes them: a commit that finds a flush
 * running sleeps until the lock is free. When the flush ends, every
 * sleeper wakes (c.wake_us each): the ones it carried go on to release
 * their rows, the ones that came during it race for the lock, one leads
 * the next flush and the rest sleep again until that one ends. So a
 * follower costs two wakes, the next flush starts one wake late, and a
 * carried row is released one wake after its flush. A commit that finds
 * the log idle flushes at once and wakes nobody.
 *
 * Interface (engine only): with c.wal_flush_ms > 0, sim.c calls
 * sim_wal_commit() where a holder's hold before the flush ends; when the
 * flush carrying it is done, the log calls s->host->release() for that
 * row. sim_wal_event() is EV_WAL and the CPU_WAL jobs. Only row-lock
 * commits go through here; the inserts of the append path commit inside
 * their own time.
 */
#include <stdlib.h>

#include "engine/sim_impl.h"
#include "engine/xmalloc.h"

/* What an EV_WAL event or a CPU_WAL job means (its arg). */
enum {
	WAL_FLUSHED,        /* the device has the flush on disk */
	WAL_DEVICE,         /* the flush's CPU part is done: the device's begins */
	WAL_LEADER_AWAKE,   /* the next flush's leader is awake */
	WAL_ROW             /* + row: a carried follower is awake, it releases */
};

void sim_wal_init(struct sim *s)
{
	/* A row is in at most one of the two lists: it holds its lock until
	 * its flush is done, so it cannot commit again before. */
	s->wal.cur = xcalloc((size_t)s->nrows, sizeof *s->wal.cur);
	s->wal.next = xcalloc((size_t)s->nrows, sizeof *s->wal.next);
}

void sim_wal_free(struct sim *s)
{
	free(s->wal.cur);
	free(s->wal.next);
}

/* Run a CPU part of w us on the cores, or wait it out without them. */
static void spend(struct sim *s, int64_t w, uint32_t what)
{
	if (s->c.cores > 0)
		sim_cpu_add(s, w, CPU_WAL, what);
	else
		sim_push(s, s->now + w, EV_WAL, what);
}

/* Start a flush with every commit waiting for one. */
static void start(struct sim *s)
{
	int *t = s->wal.cur;

	s->wal.cur = s->wal.next;
	s->wal.ncur = s->wal.nnext;
	s->wal.next = t;
	s->wal.nnext = 0;
	s->wal.busy = true;
	s->wal.flushes++;
	if (s->wal_cpu_us > 0)
		spend(s, s->wal_cpu_us, WAL_DEVICE);
	else
		sim_push(s, s->now + s->wal_flush_us, EV_WAL, WAL_FLUSHED);
}

void sim_wal_commit(struct sim *s, int row)
{
	s->wal.commits++;
	s->wal.next[s->wal.nnext++] = row;
	if (!s->wal.busy)
		start(s);
}

/* PostgreSQL's wakes on the log: with a herd and a cost to wake. */
static bool wakes(const struct sim *s)
{
	return s->c.handoff == SIM_HANDOFF_HERD && s->wake_us > 0;
}

static void flushed(struct sim *s)
{
	/* The releases may start new holds, but none of them commits before
	 * a later event: the next flush starts after all of these are out.
	 * The leader (the first carried) returns from its own fdatasync. */
	for (int k = 0; k < s->wal.ncur; k++) {
		if (k > 0 && wakes(s)) {
			s->wal.wakes++;
			spend(s, s->wake_us, WAL_ROW + (uint32_t)s->wal.cur[k]);
		} else {
			s->host->release(s, s->wal.cur[k]);
		}
	}
	s->wal.ncur = 0;
	s->wal.busy = false;
	if (!s->wal.nnext)
		return;
	if (!wakes(s)) {
		start(s);
		return;
	}
	/* All who wait for the lock wake; one leads, the rest sleep again
	 * (their CPU only). Commits that come meanwhile join the next. */
	s->wal.busy = true;
	s->wal.wakes += (uint64_t)s->wal.nnext;
	spend(s, s->wake_us, WAL_LEADER_AWAKE);
	if (s->c.cores > 0)
		for (int k = 1; k < s->wal.nnext; k++)
			sim_cpu_add(s, s->wake_us, CPU_WAKE_LOST, 0);
}

void sim_wal_event(struct sim *s, uint32_t what)
{
	switch (what) {
	case WAL_FLUSHED:
		flushed(s);
		break;
	case WAL_DEVICE:
		sim_push(s, s->now + s->wal_flush_us - s->wal_cpu_us, EV_WAL, WAL_FLUSHED);
		break;
	case WAL_LEADER_AWAKE:
		start(s);
		break;
	default:
		s->host->release(s, (int)(what - WAL_ROW));
	}
}
