/*
 * sim_chain.c: what a hot row costs beyond its lock: round trips made
 * while the lock is held, and the chain of versions an old snapshot keeps.
 *
 * Round trips inside the lock. An interactive transaction holds the row
 * lock from its UPDATE to the end of its COMMIT; every round trip between
 * them (the UPDATE's reply and the COMMIT's request, more if the app
 * sends other statements in between) keeps the lock held while the
 * database does nothing. The lock is held sim_lock_ms(): the server's work
 * (hold_ms), the app's work (work_ms) and trips_in_lock round trips of
 * rtt_ms. One statement (a CTE, a function) takes the lock and releases it
 * inside the server: trips_in_lock 0. sim.c adds s->trips_us to each hold.
 *
 * Versions. PostgreSQL never overwrites a row: an UPDATE adds a version.
 * With no old snapshot, pruning keeps a hot row's chain short, and a read
 * of the count touches 2 buffers (one index page, one heap page). An old
 * snapshot (a REPEATABLE READ transaction left open) keeps every version
 * committed after it began: nothing can be pruned, each update lengthens
 * the chain, and a read walks all of it. Lab 08 (labs/08-engine/README.md,
 * section 2) measured this on PostgreSQL 15: a version of its counter row
 * is 40 bytes plus a 4-byte line pointer, so an 8 KB page holds 185; with
 * a snapshot open through 10,000 updates the heap grew to 55 pages and a
 * read touched 56 buffers, against 2 without the snapshot. So here a row
 * with v versions takes ceil(v / 185) heap pages, and a read of the count
 * touches one index page plus each row's pages: 2 buffers for a short
 * chain, 56 after 10,000 updates under a snapshot.
 *
 * The lab measured buffers, not time: the model takes a read's time as
 * proportional to the buffers it touches (read_ms for 2 buffers), an
 * assumption, not a measurement. A sharded counter's read sums its slots,
 * so it walks every slot's chain.
 *
 * When the snapshot ends, the versions become dead to everyone, but the
 * entries pointing at them are still there: the next read walks the chain
 * once more, finds the versions dead and marks them so (PostgreSQL's index
 * scans mark the entries of dead versions), and later reads touch 2
 * buffers again. The heap does not shrink: Lab 08 saw the table keep its
 * 55 pages after VACUUM; heap_pages in the summary keeps the high mark.
 *
 * Reads are Poisson at read_rps, with a random stream of their own (the
 * likes' arrivals do not change when reads are added). Each takes a
 * connection from the main pool (sim.c counts it with the other calls)
 * and no row lock; a read that cannot get a connection in time fails.
 */
#include <math.h>
#include <stdlib.h>

#include "engine/sim_impl.h"
#include "engine/xmalloc.h"

/* Versions of Lab 08's counter row per 8 KB heap page:
 * (8192 - 24) / (24 + 2 * 8 + 4) = 185. */
#define VERSIONS_PER_PAGE 185

double sim_lock_ms(const struct sim_config *c)
{
	double flush = c->wal_order == SIM_WAL_FLUSH_RELEASE ? c->wal_flush_ms : 0;

	return c->hold_ms + c->work_ms + c->trips_in_lock * c->rtt_ms + flush;
}

static int64_t pages(int64_t versions)
{
	return (versions + VERSIONS_PER_PAGE - 1) / VERSIONS_PER_PAGE;
}

static bool snapshot_open(const struct sim *s, int64_t t)
{
	int64_t at, end;

	if (!(s->c.snapshot_for_s > 0))
		return false;             /* asked at every commit: no rounding */
	at = llround(s->c.snapshot_at_s * 1e6);
	end = at + llround(s->c.snapshot_for_s * 1e6);
	return t >= at && t < end;
}

/* Buffers one read of the count touches now: the index page, then each
 * row's chain. */
static int64_t buffers(const struct sim *s)
{
	int64_t b = 1;

	for (int i = 0; i < s->nrows; i++)
		b += pages(s->versions[i]);
	return b;
}

static void schedule(struct sim *s)
{
	int64_t t;

	if (s->c.read_rps <= 0)
		return;
	t = s->now + llround(sim_rng_exp(&s->read_rng, 1e6 / s->c.read_rps));
	if (s->end_us > 0 && t >= s->end_us)
		return;
	sim_push(s, t, EV_READ, s->read_gen);
}

void sim_chain_init(struct sim *s)
{
	s->versions = xcalloc((size_t)s->nrows, sizeof *s->versions);
	s->pages_hi = xcalloc((size_t)s->nrows, sizeof *s->pages_hi);
	for (int i = 0; i < s->nrows; i++)
		s->versions[i] = s->pages_hi[i] = 1;
	s->versions_max = 1;
	s->buffers_max = buffers(s);
	sim_rng_seed(&s->read_rng, s->c.seed ^ 0x9e3779b97f4a7c15ULL);
	util_hist_init(&s->read_lat);
	schedule(s);
}

void sim_chain_free(struct sim *s)
{
	free(s->versions);
	free(s->pages_hi);
}

void sim_chain_rate(struct sim *s)
{
	s->read_gen++;             /* the pending read, if any, is stale */
	schedule(s);
}

/* An update of row i committed: under an old snapshot its old version
 * must stay, so the chain a read walks grows by one. */
void sim_chain_grow(struct sim *s, int i)
{
	if (!snapshot_open(s, s->now))
		return;
	s->versions[i]++;
	if (s->versions[i] > s->versions_max)
		s->versions_max = s->versions[i];
	if (pages(s->versions[i]) > s->pages_hi[i])
		s->pages_hi[i] = pages(s->versions[i]);
}

/* An update of row i must find the row's newest version, and walks the
 * chain to it as a read does: c.walk_us a heap page past the first. The
 * figure is PostgreSQL's, measured: one client updating Lab 08's row
 * 10,000 times under an open snapshot took 0.58 ms an update against
 * 0.16 ms without, while the chain grew to 55 pages (27 past the first
 * on average): 0.42 ms / 26.5, about 16 us a page. */
int64_t sim_chain_walk(const struct sim *s, int i)
{
	int64_t past = pages(s->versions[i]) - 1;

	/* walk_us is finite (0 to 1e6): nothing past the first page walks
	 * in no time. */
	if (past == 0)
		return 0;
	return llround(s->c.walk_us * (double)past);
}

bool sim_read_next(struct sim *s, uint32_t gen)
{
	if (gen != s->read_gen)
		return false;
	schedule(s);
	return true;
}

/* A read has its connection: its time on it, in microseconds. After the
 * snapshot has ended, this read walks the chain one last time and leaves
 * it short for the next. */
int64_t sim_read_start(struct sim *s)
{
	int64_t b = buffers(s);

	if (b > s->buffers_max)
		s->buffers_max = b;
	if (!snapshot_open(s, s->now))
		for (int i = 0; i < s->nrows; i++)
			s->versions[i] = 1;
	s->read_last_us = llround(s->c.read_ms * 1000.0 * (double)b / 2.0);
	return s->read_last_us;
}

void sim_read_end(struct sim *s, const struct sim_req *r, bool ok)
{
	if (!ok) {
		s->reads_failed++;
		return;
	}
	s->reads_completed++;
	util_hist_add(&s->read_lat, s->now - r->first_us);
}

void sim_chain_summary(const struct sim *s, struct sim_summary *o)
{
	int64_t longest = 1, heap = 0;

	for (int i = 0; i < s->nrows; i++) {
		if (s->versions[i] > longest)
			longest = s->versions[i];
		heap += s->pages_hi[i];
	}
	o->reads.offered = s->reads_offered;
	o->reads.completed = s->reads_completed;
	o->reads.failed = s->reads_failed;
	o->reads.latency_ms.mean = util_hist_mean(&s->read_lat) / 1000.0;
	o->reads.latency_ms.p50 = util_hist_quantile(&s->read_lat, 0.50) / 1000.0;
	o->reads.latency_ms.p95 = util_hist_quantile(&s->read_lat, 0.95) / 1000.0;
	o->reads.latency_ms.p99 = util_hist_quantile(&s->read_lat, 0.99) / 1000.0;
	o->reads.latency_ms.max = (double)s->read_lat.max / 1000.0;
	o->reads.last_ms = (double)s->read_last_us / 1000.0;
	o->reads.versions = longest;
	o->reads.versions_max = s->versions_max;
	o->reads.buffers = buffers(s);
	o->reads.buffers_max = s->buffers_max;
	o->reads.heap_pages = heap;
	o->reads.snapshot_open = snapshot_open(s, s->now);
}
