/*
 * sim_fix.c: the fixes' write paths, their flushers, and the faults.
 *
 * In every fix the like's request finishes at the cheap step:
 *   coalesce  +1 in the app's memory buffer (no connection)
 *   queue     append one event to a durable log (no connection)
 *   redis     INCR on a single-threaded in-memory server (no connection;
 *             the server serves one command every SIM_REDIS_OP_US)
 *   append    INSERT of the like's own row (a pooled connection for one
 *             hold; no shared lock, so no lock queue)
 * and a periodic flusher (every flush_ms; one at a time) takes what has
 * accumulated, takes a pooled connection and the counter row's lock once,
 * holds it for one hold time (whatever the batch size) and commits +k.
 * So the visible count lags the true count by up to one flush interval
 * plus the flush's own wait and hold.
 *
 * Books: acked == visible + buffered + lost - doubled, always, where
 * buffered is what was acknowledged and is still on its way.
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
 */
#include <assert.h>

#include "engine/sim_impl.h"

static void note_ack(struct sim *s)
{
	s->acked++;
	if (s->buf_oldest < 0)
		s->buf_oldest = s->now;
}

void sim_fix_like(struct sim *s, struct sim_req *r)
{
	switch (s->c.strategy) {
	case SIM_COALESCE:
		s->buffer++;
		note_ack(s);
		sim_complete(s, r);
		break;
	case SIM_QUEUE:
		s->log_end++;
		note_ack(s);
		sim_complete(s, r);
		break;
	case SIM_REDIS: {
		int64_t start = s->redis_free > s->now ? s->redis_free : s->now;
		s->redis_free = start + SIM_REDIS_OP_US;
		sim_ring_push(&s->redis_q, r);
		sim_push(s, s->redis_free, EV_REDIS_DONE, s->redis_epoch);
		break;
	}
	default:
		assert(!"sim_fix_like: not a buffered write path");
	}
}

void sim_fix_redis_done(struct sim *s, uint32_t epoch)
{
	struct sim_req r;

	if (epoch != s->redis_epoch || !s->redis_q.n)
		return;                   /* its INCR died with the restart */
	r = sim_ring_pop(&s->redis_q);
	s->redis_val++;
	note_ack(s);
	sim_complete(s, &r);
}

void sim_fix_insert_done(struct sim *s, struct sim_req *r)
{
	s->buffer++;                      /* a likes row the rollup has not seen */
	note_ack(s);
	sim_complete(s, r);
}

/* The flusher has its batch: now it needs a connection, then the lock. */
static void flusher_go(struct sim *s)
{
	if (sim_pool_take(s)) {
		sim_flusher_got_conn(s);
		return;
	}
	sim_pool_wait_flusher(s);
}

static void take(struct sim *s, int64_t k)
{
	s->flush_busy = true;
	s->flush_aborted = false;
	s->flush_k = k;
	s->flush_oldest = s->buf_oldest;
	s->buf_oldest = -1;
}

void sim_fix_flush(struct sim *s)
{
	int64_t k = 0;

	if (s->flush_us > 0)
		sim_push(s, s->now + s->flush_us, EV_FLUSH, 0);
	if (s->flush_busy)
		return;                   /* flushes never overlap */
	switch (s->c.strategy) {
	case SIM_COALESCE:
	case SIM_APPEND:
		k = s->buffer;
		s->buffer = 0;
		break;
	case SIM_QUEUE: {
		int64_t from = s->kafka_off, to = s->log_end;
		int64_t lo = s->c.bug_no_fence || s->db_fence < from ? from : s->db_fence;
		if (to == from)
			return;
		s->batch_to = to;
		k = to - lo;
		if (k <= 0) {             /* all of it applied before: skip it */
			s->kafka_off = to;
			return;
		}
		break;
	}
	case SIM_REDIS:
		k = s->redis_val;
		if (!k)
			return;
		s->redis_val = 0;
		if (s->c.bug_get_then_del) {
			/* GET now; DEL arrives one round trip later. */
			s->redis_shadow = k;
			take(s, k);
			sim_push(s, s->now + SIM_REDIS_RTT_US, EV_REDIS_DEL, 0);
			return;
		}
		break;                    /* GETDEL: read and reset in one step */
	default:
		return;
	}
	if (!k)
		return;
	take(s, k);
	flusher_go(s);
}

void sim_fix_redis_del(struct sim *s)
{
	s->lost += s->redis_val;          /* INCRs that landed after the GET */
	s->redis_val = 0;
	s->redis_shadow = 0;
	s->buf_oldest = -1;
	flusher_go(s);
}

void sim_fix_commit(struct sim *s)
{
	int64_t k = s->flush_aborted ? 0 : s->flush_k;

	assert(s->flush_busy);
	if (s->c.strategy == SIM_QUEUE) {
		int64_t from = s->kafka_off, to = s->batch_to;
		int64_t overlap = (s->applied_hi < to ? s->applied_hi : to) - from;
		if (s->c.bug_no_fence && overlap > 0)
			s->doubled += overlap;    /* redelivered and applied again */
		if (to > s->applied_hi)
			s->applied_hi = to;
		if (!s->c.bug_no_fence)
			s->db_fence = to;
		if (s->consumer_crash)
			s->consumer_crash = false;    /* dies before committing the offset */
		else
			s->kafka_off = to;
	}
	s->visible += k;
	s->rows[0].value += k;
	if (k > 0 && s->flush_oldest >= 0 && s->now - s->flush_oldest > s->max_lag)
		s->max_lag = s->now - s->flush_oldest;
	s->flush_busy = false;
	s->flush_aborted = false;
	s->flush_k = 0;
}

void sim_fix_fault(struct sim *s, enum sim_fault f)
{
	s->faults[f]++;
	switch (f) {
	case SIM_FAULT_APP:
		if (s->c.strategy != SIM_COALESCE)
			break;
		s->lost += s->buffer;
		s->buffer = 0;
		s->buf_oldest = -1;
		if (s->flush_busy && !s->flush_aborted) {
			s->lost += s->flush_k;    /* its transaction rolls back */
			s->flush_aborted = true;
		}
		break;
	case SIM_FAULT_CONSUMER:
		if (s->c.strategy == SIM_QUEUE)
			s->consumer_crash = true;
		break;
	case SIM_FAULT_REDIS:
		if (s->c.strategy != SIM_REDIS)
			break;
		s->lost += s->redis_val;
		s->redis_val = 0;
		s->redis_shadow = 0;
		s->buf_oldest = -1;
		s->redis_epoch++;
		s->redis_free = s->now;
		{
			/* Fail them from a copy: a retry queues a new INCR. */
			struct sim_ring dead = s->redis_q;
			sim_ring_init(&s->redis_q);
			while (dead.n) {
				struct sim_req r = sim_ring_pop(&dead);
				sim_fail(s, &r, false);   /* connection reset: an error */
			}
			sim_ring_free(&dead);
		}
		break;
	case SIM_NFAULTS:
		break;
	}
}

int64_t sim_fix_buffered(const struct sim *s)
{
	int64_t in_flush = s->flush_busy && !s->flush_aborted ? s->flush_k : 0;

	switch (s->c.strategy) {
	case SIM_COALESCE:
	case SIM_APPEND:
	case SIM_REDIS:
		return s->buffer + s->redis_val + in_flush;
	case SIM_QUEUE:
		return s->log_end - s->applied_hi;
	default:
		return 0;
	}
}
