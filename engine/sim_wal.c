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
 * Interface (engine only): with c.wal_flush_ms > 0, sim.c calls
 * sim_wal_commit() where a holder's hold before the flush ends; when the
 * flush carrying it is done, the log calls s->host->release() for that
 * row. sim_wal_done() is EV_WAL_DONE. Only row-lock commits go through
 * here; the inserts of the append path commit inside their own time.
 */
#include <stdlib.h>

#include "engine/sim_impl.h"
#include "engine/xmalloc.h"

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
	sim_push(s, s->now + s->wal_flush_us, EV_WAL_DONE, 0);
}

void sim_wal_commit(struct sim *s, int row)
{
	s->wal.commits++;
	s->wal.next[s->wal.nnext++] = row;
	if (!s->wal.busy)
		start(s);
}

void sim_wal_done(struct sim *s)
{
	/* The releases may start new holds, but none of them commits before
	 * a later event: the next flush starts after all of these are out. */
	for (int k = 0; k < s->wal.ncur; k++)
		s->host->release(s, s->wal.cur[k]);
	s->wal.ncur = 0;
	s->wal.busy = false;
	if (s->wal.nnext)
		start(s);
}
