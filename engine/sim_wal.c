/*
 * sim_wal.c: the write-ahead log every row's commit goes through.
 *
 * A database has one log, whatever the number of rows. Its flush is a
 * single server: one flush at a time, and a flush takes every commit that
 * is waiting when it starts (group commit). A commit that comes while a
 * flush is running waits for it to end, then for the next one, which it
 * shares with whoever else came meanwhile. So a row's hold is its CPU
 * part, then the wait for the flush in progress, then the flush itself
 * (c.wal_flush_ms), and only then (PostgreSQL's order, flush-release)
 * the release.
 *
 * Under flush-release one hot row never has two commits waiting at once:
 * every commit gets a flush of its own (1.00 flushes per commit). Many
 * rows under many clients share them, and the log, not the row locks,
 * becomes what each commit waits for: that is why 16 rows give less than
 * 16 times one.
 *
 * InnoDB with the binary log off (c.wal_order release-flush) lets go of
 * the row when the commit's CPU part is done, and only then does its
 * client wait for the flush. The next holder's hold overlaps that flush,
 * so one row's commits pile up behind a flush and share the next one:
 * fewer flushes than commits, and one row can pass 1 / (hold + flush),
 * up to 1 / hold with enough clients.
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
 * carried row is released one wake after its flush. The next leader
 * must also reach a core first (c.wake_lat_us): PostgreSQL 15 here
 * started its next fdatasync 46 to 52 us after the last one ended at 2
 * to 8 clients (pg_stat_wal: a second over the syncs in it, less the
 * time in them), where one wake's CPU is 10 us and two processes
 * waking each other across this machine's two cores take 27 us a wake.
 * A commit that finds the log idle flushes at once and wakes nobody.
 *
 * A follower does not ride for free. Sleeping on the log's lock and
 * waking from it costs a backend about what writing and syncing cost the
 * leader: on PostgreSQL 15 here one client's backend spent 89 us of CPU
 * a commit at 0.96 flushes a commit and 16 clients' 81 us at 0.16, where
 * with synchronous_commit = off they spent 49 and 39 (the backends'
 * /proc/PID/schedstat over the commits counted, bench/README.md). So
 * with a herd every commit pays the flush's CPU part: the leader in its
 * flush, a follower at its wake when the flush that carried it ends
 * (c.wal_cpu_ms, at least c.wake_us). A group commit saves flushes of
 * the device, not the CPU of the commits it carries.
 *
 * The leader, too, sleeps in its fdatasync and must get a core back
 * before it can let go of the lock: its flush ends with a wake of its
 * own (c.wake_us of the flush's time, on the cores). With idle cores the
 * flush takes c.wal_flush_ms as before; on busy ones the leader waits its
 * turn, the flush lasts longer and the next one carries more commits.
 * PostgreSQL's pg_stat_wal shows it (wal_sync_time over wal_sync, with
 * track_wal_io_timing): 0.15 to 0.22 ms a sync with one client on this
 * kit's 2-core machine, 0.39 to 0.47 ms with 16 clients on 128 rows.
 * The wake waits its turn behind the herd's losers still queued for a
 * core (sim.c, sim_wake_behind): on one row 0.126 ms a sync at one
 * client, 0.146 at 16 and 0.267 at 64.
 *
 * The herd's wakes are PostgreSQL's log lock: under release-flush the
 * log wakes nobody.
 *
 * Interface (engine only): with c.wal_flush_ms > 0, sim.c calls
 * sim_wal_commit() where a holder's hold before the flush ends, with the
 * commit by value. When the flush carrying it is done, the log calls
 * s->host->release() for the row of a SIM_WAL_HELD one (it still holds
 * the lock) and s->host->durable() for the others (they let go of it
 * before). sim_wal_event() is EV_WAL and the CPU_WAL jobs. Only row-lock
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
	WAL_SYNCED,         /* the device is done: the leader wakes from its sync */
	WAL_LEADER_RUNS,    /* the next flush's leader reached a core */
	WAL_LEADER_AWAKE,   /* the next flush's leader is awake */
	WAL_ROW             /* + row: a carried follower is awake, it releases */
};

void sim_wal_init(struct sim *s)
{
	/* The lists grow at the first commit. */
	s->wal.cur = s->wal.next = NULL;
	s->wal.cap = 0;
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

/* PostgreSQL's wakes on the log: its order, a herd and a cost to wake. */
static bool wakes(const struct sim *s)
{
	return s->c.handoff == SIM_HANDOFF_HERD && s->wake_us > 0 &&
	       s->c.wal_order == SIM_WAL_FLUSH_RELEASE;
}

/* A follower's wake when the flush that carried it ends: the flush's
 * CPU part, as its leader paid (at least one wake). */
static int64_t follow_us(const struct sim *s)
{
	return s->wal_cpu_us > s->wake_us ? s->wal_cpu_us : s->wake_us;
}

/* The device's part of a flush: what its CPU part and, with wakes, the
 * leader's own wake leave of it. */
static int64_t device_us(const struct sim *s)
{
	int64_t d = s->wal_flush_us - s->wal_cpu_us;

	if (wakes(s))
		d -= d < s->wake_us ? d : s->wake_us;
	return d;
}

/* Start a flush with every commit waiting for one. */
static void start(struct sim *s)
{
	struct sim_wal_entry *t = s->wal.cur;

	s->wal.cur = s->wal.next;
	s->wal.ncur = s->wal.nnext;
	s->wal.next = t;
	s->wal.nnext = 0;
	s->wal.busy = true;
	s->wal.flushes++;
	if (s->wal_cpu_us > 0)
		spend(s, s->wal_cpu_us, WAL_DEVICE);
	else
		sim_wal_event(s, WAL_DEVICE);
}

void sim_wal_commit(struct sim *s, const struct sim_wal_entry *e)
{
	if (s->wal.nnext == s->wal.cap) {
		/* Both lists trade places at each flush: they grow together. */
		s->wal.cap = s->wal.cap ? 2 * s->wal.cap : 16;
		s->wal.cur = xrealloc(s->wal.cur, (size_t)s->wal.cap * sizeof *s->wal.cur);
		s->wal.next = xrealloc(s->wal.next, (size_t)s->wal.cap * sizeof *s->wal.next);
	}
	s->wal.commits++;
	s->wal.next[s->wal.nnext++] = *e;
	if (!s->wal.busy)
		start(s);
}

static void flushed(struct sim *s)
{
	/* The releases and answers may start new holds, but none of them
	 * commits before a later event: the next flush starts after all of
	 * these are out. The leader (the first carried) returns from its own
	 * fdatasync. An entry is read by value: nothing is added to cur. */
	for (int k = 0; k < s->wal.ncur; k++) {
		struct sim_wal_entry e = s->wal.cur[k];
		if (e.kind != SIM_WAL_HELD) {
			s->host->durable(s, &e);
		} else if (k > 0 && wakes(s)) {
			s->wal.wakes++;
			spend(s, follow_us(s), WAL_ROW + (uint32_t)e.row);
		} else {
			s->host->release(s, e.row);
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
	if (s->wake_lat_us > 0)
		sim_push(s, s->now + s->wake_lat_us, EV_WAL, WAL_LEADER_RUNS);
	else
		spend(s, s->wake_us, WAL_LEADER_AWAKE);
	if (s->c.cores > 0)
		for (int k = 1; k < s->wal.nnext; k++)
			sim_cpu_add(s, s->wake_us, CPU_ONLY, 0);
}

void sim_wal_event(struct sim *s, uint32_t what)
{
	switch (what) {
	case WAL_FLUSHED:
		flushed(s);
		break;
	case WAL_DEVICE:
		sim_push(s, s->now + device_us(s), EV_WAL, wakes(s) ? WAL_SYNCED : WAL_FLUSHED);
		break;
	case WAL_SYNCED: {
		int64_t w = s->wal_flush_us - s->wal_cpu_us - device_us(s);
		if (!sim_wake_behind(s, w, WAL_FLUSHED))
			spend(s, w, WAL_FLUSHED);
		break;
	}
	case WAL_LEADER_RUNS:
		spend(s, s->wake_us, WAL_LEADER_AWAKE);
		break;
	case WAL_LEADER_AWAKE:
		start(s);
		break;
	default:
		s->host->release(s, (int)(what - WAL_ROW));
	}
}
