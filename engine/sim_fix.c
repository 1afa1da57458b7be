/*
 * sim_fix.c: the write paths, one table row each; the fixes' flushers;
 * and the faults.
 *
 * In every fix the like's request finishes at the cheap step:
 *   coalesce  +1 in the app's memory buffer (no connection)
 *   queue     append one event to a durable log (no connection)
 *   redis     INCR on a single-threaded in-memory server (no connection;
 *             the server serves one command every redis_op_us, 4 by
 *             default or the time a driver measured)
 *   append    INSERT of the like's own row (a pooled connection for one
 *             hold; no shared lock, so no lock queue)
 * and a periodic flusher (every flush_ms; one at a time) takes what has
 * accumulated, takes a pooled connection and the counter row's lock once,
 * holds it for one hold time (whatever the batch size) and commits +k.
 * So the visible count lags the true count by up to one flush interval
 * plus the flush's own wait and hold.
 *
 * Books: acked == visible + buffered + lost - doubled - unacked, always,
 * where buffered is what was acknowledged and is still on its way.
 *
 * Faults, as they behave in production:
 *   app crash       coalesce loses its buffer and the flush in flight
 *                   (its transaction rolls back); other paths keep no
 *                   state in the app and lose nothing.
 *   consumer crash  queue: the consumer dies after its batch commits in the
 *                   database, before it commits its log offset, so the
 *                   batch is delivered again. The fence (the last applied
 *                   offset, committed in the same transaction as the +k)
 *                   skips what was applied; without it (bug_no_fence) the
 *                   batch is counted twice.
 *   redis restart   the server comes back empty: the undrained count is
 *                   lost and INCRs in flight fail.
 * bug_get_then_del drains with GET, then DEL one round trip later: INCRs
 * that land in between are erased (lost).
 *
 * The ledger is not a fix but money's direct path (Lab 06): each request
 * is one transaction of B = c.batch transfers (a money_batch(), or one
 * money_transfer() when B is 1) that locks one fee sub-account, a slot of
 * c.rows, for one hold however many transfers it carries, and credits it
 * with the transfers it applied. A transfer is refused, with probability
 * c.refuse_frac each, where Lab 06's solution refuses it: at the
 * conditional debit of the buyer's balance, which comes before the fee
 * credit, so a refused transfer writes nothing and never reaches the fee
 * row. A transaction whose B transfers are all refused therefore takes no
 * fee lock (the buyer's own row, private to its client, is part of the
 * time outside the lock); one with any transfer applied takes it once.
 * The draw for the transaction is made before the lock (all refused or
 * not); how many of a locking one were refused is drawn at its commit,
 * conditioned on "not all" — the same distribution as one draw of B.
 *
 * This file calls the rest of the engine only through s->host (complete,
 * fail, take or wait for a connection, lock the counter row) and
 * sim_push(): sim.c calls in, nothing here calls back by name.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "engine/sim_impl.h"

static void note_ack(struct sim *s)
{
	s->acked++;
	if (s->buf_oldest < 0)
		s->buf_oldest = s->now;
}

/* ---- the cheap steps ---- */

static void coalesce_like(struct sim *s, struct sim_req *r)
{
	s->buffer++;
	note_ack(s);
	s->host->complete(s, r);
}

static void queue_like(struct sim *s, struct sim_req *r)
{
	s->log_end++;
	note_ack(s);
	s->host->complete(s, r);
}

static void redis_like(struct sim *s, struct sim_req *r)
{
	double start = s->redis_free_us > (double)s->now ? s->redis_free_us : (double)s->now;

	s->redis_free_us = start + (s->c.redis_op_us > 0 ? s->c.redis_op_us : SIM_REDIS_OP_US);
	s->redis_free = (int64_t)ceil(s->redis_free_us);
	sim_ring_push(&s->redis_q, r);
	sim_push(s, s->redis_free, EV_REDIS_DONE, s->redis_epoch);
}

void sim_fix_redis_done(struct sim *s, uint32_t epoch)
{
	struct sim_req r;

	if (epoch != s->redis_epoch || !s->redis_q.n)
		return;                   /* its INCR died with the restart */
	r = sim_ring_pop(&s->redis_q);
	s->redis_val++;
	note_ack(s);
	s->host->complete(s, &r);
}

void sim_fix_insert_done(struct sim *s, struct sim_req *r)
{
	s->appended++;                    /* a likes row the rollup has not seen */
	note_ack(s);
	s->host->complete(s, r);
}

/* ---- what a flush takes: the batch size, 0 for nothing to do ---- */

static int64_t buffer_drain(struct sim *s)
{
	int64_t k = s->buffer;

	s->buffer = 0;
	return k;
}

static int64_t append_drain(struct sim *s)
{
	int64_t k = s->appended;

	s->appended = 0;
	return k;
}

static int64_t queue_drain(struct sim *s)
{
	int64_t from = s->kafka_off, to = s->log_end;
	int64_t lo = s->c.bug_no_fence || s->db_fence < from ? from : s->db_fence;

	if (to == from)
		return 0;
	s->batch_to = to;
	if (to - lo <= 0) {
		s->kafka_off = to;            /* all of it applied before: skip it */
		return 0;
	}
	return to - lo;
}

static int64_t redis_drain(struct sim *s)
{
	int64_t k = s->redis_val;

	s->redis_val = 0;                 /* GETDEL: read and reset in one step */
	return k;
}

/* ---- after a flush commits ---- */

static void queue_applied(struct sim *s)
{
	int64_t from = s->kafka_off, to = s->batch_to;
	int64_t overlap = (s->applied_hi < to ? s->applied_hi : to) - from;

	if (s->c.bug_no_fence && overlap > 0)
		s->doubled += overlap;        /* redelivered and applied again */
	if (to > s->applied_hi)
		s->applied_hi = to;
	if (!s->c.bug_no_fence)
		s->db_fence = to;
	if (s->consumer_crash)
		s->consumer_crash = false;    /* dies before committing the offset */
	else
		s->kafka_off = to;
}

/* ---- what is acknowledged and not yet visible ----
 *
 * Every store at once: a path never used keeps its store at 0, and after
 * a live change of strategy the old path's store drains beside the new
 * one's. The queue's part of a flush in flight is still in the log
 * (log_end - applied_hi); the rest of the flush is counted apart. */

int64_t sim_fix_buffered(const struct sim *s)
{
	int64_t flying = s->flush_busy && !s->flush_aborted ? s->flush_k - s->flush_kq : 0;

	return s->buffer + s->appended + s->redis_val + (s->log_end - s->applied_hi) + flying;
}

/* ---- the ledger ---- */

/* How many of n transfers are refused, each with probability f. */
static int ledger_batch(const struct sim *s)
{
	return s->c.batch > 1 ? s->c.batch : 1;
}

static int64_t refused_of(struct sim *s, int64_t n, double f)
{
	int64_t k = 0;

	if (f <= 0)
		return 0;
	for (int64_t i = 0; i < n; i++)
		k += sim_rng_unit(&s->rng) < f;
	return k;
}

/* Before the fee row: are all of this request's transfers refused? */
static bool ledger_refused(struct sim *s)
{
	int64_t b = ledger_batch(s);

	if (refused_of(s, b, s->c.refuse_frac) < b)
		return false;
	s->transfers += (uint64_t)b;
	s->ledger_refused += (uint64_t)b;
	return true;
}

/* At the commit: the transfers applied, given that not all were refused. */
static int64_t ledger_credits(struct sim *s)
{
	int64_t b = ledger_batch(s), k = 0;

	if (b > 1)
		while ((k = refused_of(s, b, s->c.refuse_frac)) == b)
			;
	s->transfers += (uint64_t)b;
	s->ledger_refused += (uint64_t)k;
	return b - k;
}

/* ---- the table ---- */

#define FAULT(f) (1u << (f))

const struct sim_path sim_paths[SIM_NSTRATEGIES] = {
	[SIM_NAIVE]    = { false, true,  true,  false, NULL, NULL, 0 },
	[SIM_SHARDED]  = { true,  true,  true,  false, NULL, NULL, 0 },
	[SIM_COALESCE] = { false, false, false, true, coalesce_like, buffer_drain,
	                   FAULT(SIM_FAULT_APP) },
	[SIM_QUEUE]    = { false, false, false, true, queue_like, queue_drain,
	                   FAULT(SIM_FAULT_CONSUMER) },
	[SIM_REDIS]    = { false, false, false, true, redis_like, redis_drain,
	                   FAULT(SIM_FAULT_REDIS) },
	[SIM_APPEND]   = { false, false, true,  true, NULL, append_drain, 0 },
	[SIM_LEDGER]   = { true,  true,  true,  false, NULL, NULL, 0,
	                   ledger_refused, ledger_credits },
};

bool sim_strategy_direct(enum sim_strategy st)
{
	return (unsigned)st < SIM_NSTRATEGIES && sim_paths[st].row_lock;
}

int sim_config_rows(const struct sim_config *c)
{
	return (unsigned)c->strategy < SIM_NSTRATEGIES && sim_paths[c->strategy].sharded ? c->rows : 1;
}

int sim_config_batch(const struct sim_config *c)
{
	return sim_strategy_info(c->strategy)->batches && c->batch > 1 ? c->batch : 1;
}

double sim_lock_visits(const struct sim_config *c)
{
	if (!sim_strategy_info(c->strategy)->batches || c->refuse_frac <= 0)
		return 1;
	return 1 - pow(c->refuse_frac, sim_config_batch(c));
}

/* ---- the flusher ---- */

/* The flusher has its batch: now it needs a connection, then the lock. */
static void flusher_go(struct sim *s)
{
	if (s->host->take_conn(s))
		s->host->lock_row(s);
	else
		s->host->wait_conn(s);
}

static void take(struct sim *s, int64_t k)
{
	s->flush_busy = true;
	s->flush_aborted = false;
	s->flush_k = k;
	s->flush_oldest = s->buf_oldest;
	s->buf_oldest = -1;
}

/* The paths in use whose stores a flush drains (1 << strategy). */
static unsigned drained(const struct sim *s)
{
	unsigned m = 0;

	for (int i = 0; i < SIM_NSTRATEGIES; i++)
		if ((s->paths_used & (1u << i)) && sim_paths[i].drain)
			m |= 1u << i;
	return m;
}

/* Take every store in use: one flush carries them all, as +k on the
 * counter row. Only the queue has something to do after the commit. */
static int64_t drain_all(struct sim *s)
{
	unsigned m = drained(s);
	int64_t k = 0;

	s->flush_kq = 0;
	for (int i = 0; i < SIM_NSTRATEGIES; i++) {
		if (!(m & (1u << i)))
			continue;
		int64_t d = sim_paths[i].drain(s);
		if (i == SIM_QUEUE)
			s->flush_kq = d;
		k += d;
	}
	return k;
}

void sim_fix_flush(struct sim *s)
{
	int64_t k;

	if (s->flush_us > 0)
		sim_push(s, s->now + s->flush_us, EV_FLUSH, 0);
	if (s->flush_busy || !drained(s))
		return;                   /* flushes never overlap */
	if (drained(s) == 1u << SIM_REDIS && s->c.bug_get_then_del) {
		/* GET now; DEL arrives one round trip later. */
		k = s->redis_val;
		if (!k)
			return;
		s->redis_val = 0;
		take(s, k);
		sim_push(s, s->now + SIM_REDIS_RTT_US, EV_REDIS_DEL, 0);
		return;
	}
	k = drain_all(s);
	if (!k)
		return;
	take(s, k);
	flusher_go(s);
}

void sim_fix_redis_del(struct sim *s)
{
	s->lost += s->redis_val;          /* INCRs that landed after the GET */
	s->redis_val = 0;
	s->buf_oldest = -1;
	flusher_go(s);
}

void sim_fix_commit(struct sim *s)
{
	int64_t k = s->flush_aborted ? 0 : s->flush_k;

	assert(s->flush_busy);
	if (s->flush_kq > 0)
		queue_applied(s);
	s->visible += k;
	s->rows[0].value += k;
	if (k > 0 && s->flush_oldest >= 0 && s->now - s->flush_oldest > s->max_lag)
		s->max_lag = s->now - s->flush_oldest;
	s->flush_busy = false;
	s->flush_aborted = false;
	s->flush_k = 0;
	s->flush_kq = 0;
}

void sim_fix_like(struct sim *s, struct sim_req *r)
{
	const struct sim_path *path = sim_req_path(r);

	assert(path->like);
	path->like(s, r);
}

/* ---- faults ---- */

void sim_fix_fault(struct sim *s, enum sim_fault f)
{
	unsigned hit = 0;

	for (int i = 0; i < SIM_NSTRATEGIES; i++)
		if (s->paths_used & (1u << i))
			hit |= sim_paths[i].faults;
	s->faults[f]++;
	if (!(hit & FAULT(f)))
		return;                   /* nothing of it lives where this fault hits */
	switch (f) {
	case SIM_FAULT_APP:
		s->lost += s->buffer;
		s->buffer = 0;
		s->buf_oldest = -1;
		if (s->flush_busy && !s->flush_aborted) {
			/* its transaction rolls back: the queue's part is
			 * delivered again, the rest is gone */
			s->lost += s->flush_k - s->flush_kq;
			s->flush_kq = 0;
			s->flush_aborted = true;
		}
		break;
	case SIM_FAULT_CONSUMER:
		s->consumer_crash = true;
		break;
	case SIM_FAULT_REDIS: {
		/* Fail them from a copy: a retry queues a new INCR. */
		struct sim_ring dead = s->redis_q;
		s->lost += s->redis_val;
		s->redis_val = 0;
		s->buf_oldest = -1;
		s->redis_epoch++;
		s->redis_free = s->now;
		s->redis_free_us = (double)s->now;
		sim_ring_init(&s->redis_q);
		while (dead.n) {
			struct sim_req r = sim_ring_pop(&dead);
			s->host->fail(s, &r, false);   /* connection reset: an error */
		}
		sim_ring_free(&dead);
		break;
	}
	case SIM_NFAULTS:
		break;
	}
}

/* ---- what the snapshot shows of a fix ---- */

static enum sim_flusher flusher_state(const struct sim *s)
{
	if (!s->flush_busy)
		return SIM_FLUSHER_IDLE;
	if (s->counter_pool->flusher_waiting)
		return SIM_FLUSHER_CONN_WAIT;
	if (s->rows[0].holder == HOLD_FLUSH)
		return SIM_FLUSHER_APPLYING;
	/* Busy, neither waiting for a connection nor holding the row (which
	 * it keeps through a shared log's flush): the one round trip between
	 * a GET and its DEL, before it asks for a connection. */
	return SIM_FLUSHER_DRAINING;
}

void sim_fix_view(const struct sim *s, struct sim_fix_view *out)
{
	memset(out, 0, sizeof *out);
	if (!s->path->flushes)
		return;
	out->pending = sim_fix_buffered(s);
	out->log_end = s->log_end;
	out->consumer_offset = s->kafka_off;
	out->fence = s->db_fence;
	out->crash_armed = s->consumer_crash;
	out->store_count = s->redis_val;
	out->store_queue = (int)s->redis_q.n;
	out->buffer = s->buffer;
	out->flusher = flusher_state(s);
	out->flush_k = s->flush_busy ? s->flush_k : 0;
	out->flush_aborted = s->flush_busy && s->flush_aborted;
	out->row_value = s->rows[0].value;
}
