/*
 * sim.c: the clock, arrivals and callers, the connection pools and the
 * row locks.
 *
 * One like is one struct sim_req that moves, by value, through FIFOs: the
 * pool's waiters, then (naive, sharded) its time outside the lock, one
 * row's lock queue, then the row's holder slot, and ends exactly one way:
 * completed, failed (an error, such as a pool acquire timeout or
 * lock_timeout) or abandoned (the client timed out).
 *
 * A client timeout is the client's alone. Waiting for a connection, the
 * request has sent nothing yet and simply leaves. Once its statement is
 * in the database it stays: the attempt becomes an orphan that waits on
 * for the lock, holds it and commits, keeping its connection, unless
 * lock_timeout cancels it. The client meanwhile retries (if it may) with a
 * copy, so one like can commit twice; a small record per such like (struct
 * sim_like) keeps the count honest.
 *
 * Timeouts cost at most one pending event per queue, not one per request:
 * deadlines in a FIFO grow with its order, so a sweep event waits for the
 * next deadline and re-arms for the one after (and while arrivals go on,
 * the pool's deadlines are settled without events; see pool_lazy). The
 * waiting requests live in ring buffers, so an overloaded row can queue
 * millions of them.
 *
 * The fixes' write paths are in sim_fix.c: this file calls its hooks and
 * gives it a narrow interface (struct sim_host) to call back through.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim_impl.h"
#include "engine/xmalloc.h"

/*
 * The steps of a like, from its arrival to its commit, run once or twice
 * per request at up to 100,000 requests a simulated second, and each is
 * a few instructions: SIM_HOT inlines them into the event loop, where a
 * call's own cost (and a constant argument not seen through it) would be
 * a good part of theirs: the sharded viral video's events take 1.26 times
 * fewer instructions so (bench/README.md, "make bench-tui"). Functions
 * that call each other in a cycle (pool_release, counter_release) stay
 * calls: a cycle cannot be inlined.
 */
#define SIM_HOT static inline __attribute__((always_inline))

static void got_conn(struct sim *s, struct sim_req *r);
static void flusher_lock(struct sim *s);

/* Round a non-negative time to whole microseconds (halves go up). */
static int64_t round_us(double us)
{
	return (int64_t)(us + 0.5);
}

static int64_t ms_us(double ms)
{
	return round_us(ms * 1000.0);
}

/* The earliest so far in next_event(): (*bt, *bseq) at *best. */
struct earliest {
	int best;
	int64_t t;
	uint64_t seq;
};

static inline void consider(struct earliest *b, bool on, int64_t t, uint64_t seq, int where)
{
	if (on && (t < b->t || (t == b->t && seq < b->seq))) {
		b->best = where;
		b->t = t;
		b->seq = seq;
	}
}

static inline void consider_fifo(struct earliest *b, const struct sim *s, int i)
{
	const struct sim_fifo *f = &s->fifos[i];

	if (f->n)
		consider(b, true, f->ev[f->head].t, f->ev[f->head].seq, SIM_NTIMERS + 1 + i);
}

/* The earliest pending event, timers, heap and FIFOs together: its time
 * in *t and where it is (a timer id, SIM_NTIMERS for the heap's top, or
 * SIM_NTIMERS + 1 + a FIFO id); -1 when nothing is pending. Each source
 * is looked at by name, not in a loop: this runs once an event. */
/* The earliest pending event but the likes' arrival (timer 0). */
static inline struct earliest next_other(const struct sim *s)
{
	/* Later than any event: no test for "none yet". */
	struct earliest b = { -1, INT64_MAX, UINT64_MAX };

	_Static_assert(SIM_NTIMERS == 3 && SIM_NFIFOS == 4, "next_event names every source");
	_Static_assert(TM_ARRIVE == 0, "next_other leaves out timer 0, the likes' arrivals");
	if (s->heap.n)
		consider(&b, true, s->heap.ev[0].t, s->heap.ev[0].seq, SIM_NTIMERS);
	consider(&b, s->timers[1].on, s->timers[1].t, s->timers[1].seq, 1);
	consider(&b, s->timers[2].on, s->timers[2].t, s->timers[2].seq, 2);
	consider_fifo(&b, s, 0);
	consider_fifo(&b, s, 1);
	consider_fifo(&b, s, 2);
	consider_fifo(&b, s, 3);
	return b;
}

/* The earliest of o (next_other's) and the likes' arrival. */
static inline int next_of(const struct sim *s, struct earliest o, int64_t *t)
{
	consider(&o, s->timers[0].on, s->timers[0].t, s->timers[0].seq, 0);
	*t = o.best < 0 ? 0 : o.t;
	return o.best;
}

static int next_event(const struct sim *s, int64_t *t)
{
	return next_of(s, next_other(s), t);
}

static int64_t hold_sample(struct sim *s)
{
	if (s->c.hold_dist == SIM_DIST_EXP)
		return round_us(sim_rng_exp(&s->rng, (double)s->hold_us));
	return s->hold_us;
}

static int64_t think_sample(struct sim *s)
{
	if (s->c.think_dist == SIM_DIST_EXP && s->think_us > 0)
		return round_us(sim_rng_exp(&s->rng, (double)s->think_us));
	return s->think_us;
}

/* ---- outcomes ---- */

SIM_HOT void inflight_add(struct sim *s, int d)
{
	s->area += (double)s->inflight * (double)(s->now - s->area_t);
	s->area_t = s->now;
	s->inflight += d;
	assert(s->inflight >= 0);
}

/* ---- likes whose outcome is unclear ---- */

uint32_t sim_like_new(struct sim *s)
{
	uint32_t i;

	if (s->likes_free) {
		i = s->likes_free;
		s->likes_free = s->likes[i].next_free;
	} else {
		if (s->likes_n == 0)
			s->likes_n = 1;           /* 0 means "no record" */
		if (s->likes_n >= s->likes_cap) {
			s->likes_cap = s->likes_cap ? 2 * s->likes_cap : 64;
			s->likes = xrealloc(s->likes, s->likes_cap * sizeof *s->likes);
		}
		i = s->likes_n++;
	}
	memset(&s->likes[i], 0, sizeof s->likes[i]);
	return i;
}

static void like_settle(struct sim *s, uint32_t i)
{
	struct sim_like *l = &s->likes[i];

	if (l->ended && l->orphans == 0) {
		l->next_free = s->likes_free;
		s->likes_free = i;
	}
}

/* A like ended (any way): in a closed loop its caller thinks, then sends
 * the next one. */
SIM_HOT void ended(struct sim *s, const struct sim_req *r)
{
	if (r->like) {
		s->likes[r->like].ended = true;
		like_settle(s, r->like);
	}
	s->sojourn_sum += (double)(s->now - r->first_us);
	s->sojourn_n++;
	inflight_add(s, -1);
	if (s->c.clients > 0)
		sim_push(s, s->now + think_sample(s), EV_SEND, 0);
}

SIM_HOT void complete(struct sim *s, const struct sim_req *r)
{
	int64_t lat = s->now - r->first_us;

	if (sim_followed(s, r))
		sim_trace_end(s, SIM_TRACE_COMPLETED);
	else if (s->follow.search && r->like)
		sim_trace_found(s, r, lat);
	s->completed++;
	s->acc.completed++;
	util_hist_add(&s->acc.lat, lat);     /* into s->lat at the tick */
	ended(s, r);
}

static void start_attempt(struct sim *s, struct sim_req *r);
static uint32_t slab_put(struct sim *s, const struct sim_req *r);

/* The pause before retry number k (1, 2, ...): none; base * 2^(k-1); or
 * "full jitter", uniform in [0, base * 2^(k-1)), which spreads retries
 * that failed together so they do not come back together. */
static int64_t backoff(struct sim *s, unsigned k)
{
	double d;

	if (s->c.backoff == SIM_BACKOFF_NONE || s->backoff_us <= 0)
		return 0;
	d = (double)s->backoff_us * (double)(1u << (k - 1 < 16 ? k - 1 : 16));
	if (s->c.backoff == SIM_BACKOFF_EXP_JITTER)
		d *= sim_rng_unit(&s->rng);
	return round_us(d);
}

/* The attempt ended badly: try again if the client has retries left,
 * otherwise the request ends failed or abandoned. */
static void fail(struct sim *s, struct sim_req *r, bool abandoned)
{
	if (r->kind == SIM_REQ_READ) {
		s->unrel_inflight--;
		sim_read_end(s, r, false);
		return;
	}
	if (r->kind == SIM_REQ_UNRELATED) {
		s->unrel_failed++;
		s->acc.unrel_failed++;
		s->unrel_inflight--;
		return;
	}
	if (sim_followed(s, r))
		sim_trace_fail(s, r, abandoned);
	if ((int)r->tries <= s->c.retries) {
		int64_t pause;
		if (s->c.retry_budget > 0) {
			if (s->retry_tokens < 1) {
				s->retries_denied++;
				goto give_up;
			}
			s->retry_tokens -= 1;
		}
		pause = backoff(s, r->tries);
		r->tries++;
		s->retried++;
		if (sim_followed(s, r))
			sim_trace_note(s, SIM_TR_RETRY, pause > 0 ? SIM_AT_BACKOFF : SIM_AT_OTHER,
			               -1, r->tries);
		if (pause > 0)
			sim_push(s, s->now + pause, EV_RETRY, slab_put(s, r));
		else
			start_attempt(s, r);
		return;
	}
give_up:
	if (sim_followed(s, r))
		sim_trace_end(s, abandoned ? SIM_TRACE_ABANDONED : SIM_TRACE_FAILED);
	if (abandoned)
		s->abandoned++;
	else
		s->failed++;
	s->acc.failed++;
	ended(s, r);
}

/* ---- arrivals ---- */

SIM_HOT void source_arm(struct sim *s, struct sim_source *src, enum sim_ev type)
{
	int64_t t;

	if (src->rate <= 0)
		return;
	/* Other endpoints' traffic is always Poisson: locked in step with a
	 * constant like stream it would dodge (or hit) every timeout. */
	if (s->c.arrivals == SIM_ARRIVE_CONSTANT && src == &s->like) {
		t = src->base + round_us((double)src->k * src->period_us);
	} else if (s->c.arrivals == SIM_ARRIVE_BURSTY && src == &s->like) {
		/* Clumps of K at once, the clumps Poisson at rate / K. */
		int k = s->c.burst > 1 ? s->c.burst : 1;
		if (src->left > 0) {
			src->left--;
			t = s->now;
		} else {
			src->left = k - 1;
			t = s->now + round_us(sim_rng_exp(&s->like_rng, src->period_us * k));
		}
	} else {
		t = s->now + round_us(sim_rng_exp(src == &s->like ? &s->like_rng : &s->unrel_rng,
		                                   src->period_us));
	}
	if (t < s->now)
		t = s->now;
	if (s->end_us > 0 && t >= s->end_us)
		return;
	sim_push(s, t, type, 0);
}

/* Change a stream's rate from now on; pending arrivals become stale. */
static void source_rate(struct sim *s, struct sim_source *src, double rate,
                        enum sim_ev type)
{
	s->timers[type == EV_ARRIVE ? TM_ARRIVE : TM_UNREL_ARRIVE].on = false;
	src->rate = rate;
	src->period_us = rate > 0 ? 1e6 / rate : 0;
	src->left = 0;
	if (src->last >= 0 && rate > 0 &&
	    src->last + round_us(1e6 / rate) >= s->now) {
		src->base = src->last;      /* keep the spacing from the last one */
		src->k = 1;
	} else {
		src->base = s->now;
		src->k = 0;
	}
	source_arm(s, src, type);
}

/* Turn an arrival away: the system already holds SIM_MAX_INFLIGHT
 * requests (orphaned statements included). It fails at once, without retries, and never queues. */
static void refuse(struct sim *s, enum sim_req_kind kind)
{
	if (kind == SIM_REQ_READ) {
		s->reads_offered++;
		s->reads_failed++;
		return;
	}
	if (kind == SIM_REQ_UNRELATED) {
		s->unrel_offered++;
		s->unrel_failed++;
		s->acc.unrel_failed++;
		return;
	}
	s->offered++;
	s->acc.offered++;
	s->failed++;
	s->acc.failed++;
	s->refused++;
	if (s->offered == s->follow.want)
		sim_trace_refused(s);
}

SIM_HOT void arrive(struct sim *s, struct sim_source *src, enum sim_ev type,
                   enum sim_req_kind kind)
{
	struct sim_req r = { s->now, s->now, s->now, s->now, 0, 1, kind, 0,
	                     (uint8_t)s->c.strategy, (uint16_t)(s->ntmo - 1) };

	if (src) {
		src->last = s->now;
		src->k++;
		source_arm(s, src, type);
	}
	/* Orphans count too: their clients are gone, their statements still
	 * wait in a queue. */
	if ((uint64_t)s->inflight + (uint64_t)s->unrel_inflight +
	    (uint64_t)s->orphans_live >= SIM_MAX_INFLIGHT) {
		refuse(s, kind);
		return;
	}
	if (kind != SIM_REQ_COUNTER) {    /* reads count with other calls */
		if (kind == SIM_REQ_READ)
			s->reads_offered++;
		else
			s->unrel_offered++;
		s->unrel_inflight++;
	} else {
		s->offered++;
		s->acc.offered++;
		inflight_add(s, +1);
		if (s->offered == s->follow.want)
			sim_trace_arrive(s, &r);
		if (s->c.retry_budget > 0 && s->retry_tokens < 10)
			s->retry_tokens += s->c.retry_budget;   /* up to 10 saved */
	}
	start_attempt(s, &r);
}

/* ---- the pools ----
 *
 * One pool serves every endpoint, unless a bulkhead (c.counter_pool)
 * gives the counter endpoint (likes and the flusher) a pool of its own;
 * then other endpoints keep the main one. */

/* The pool a request of this kind takes its connection from. */
static struct sim_pool *pool_of(struct sim *s, unsigned kind)
{
	return kind == SIM_REQ_COUNTER ? s->counter_pool : &s->pool[POOL_MAIN];
}

static bool pool_free(const struct sim_pool *p)
{
	return p->size == 0 || p->in_use < p->size;
}

static void pool_settle(struct sim *s, struct sim_pool *p);
static inline void pool_arm_sweep(struct sim *s, struct sim_pool *p);

static void pool_use(struct sim_pool *p)
{
	p->in_use++;
	if (p->in_use > p->max_in_use)
		p->max_in_use = p->in_use;
}

/* Take a connection if one is free and nobody is ahead in line. */
SIM_HOT bool pool_take(struct sim *s, struct sim_pool *p)
{
	pool_settle(s, p);
	if (!pool_free(p) || p->waiters.n || p->flusher_waiting)
		return false;
	pool_use(p);
	return true;
}

static bool flusher_take(struct sim *s)
{
	return pool_take(s, s->counter_pool);
}

/* A waiter's pool timeout is the one its attempt started under. */
static int64_t pool_deadline(const struct sim *s, const struct sim_req *r)
{
	int64_t d = INT64_MAX, pt = s->tmo[r->gen].pool_us;

	if (s->client_timeout_us > 0)
		d = r->attempt_us + s->client_timeout_us;
	if (pt > 0 && r->enq_us + pt < d)
		d = r->enq_us + pt;
	return d;
}

/* The earliest deadline of p's waiters, INT64_MAX if none: the earliest
 * of its runs' heads (sim_ring.h), *run set to that run. */
static int64_t pool_first(const struct sim *s, const struct sim_pool *p, size_t *run)
{
	int64_t d = INT64_MAX;

	*run = 0;
	for (size_t k = 0; k < p->waiters.nrun; k++) {
		int64_t dk;
		if (!p->waiters.run[k].r.n)
			continue;
		dk = pool_deadline(s, sim_ring_at(&p->waiters.run[k].r, 0));
		if (dk < d) {
			d = dk;
			*run = k;
		}
	}
	return d;
}

/*
 * Pool timeouts while arrivals go on are settled lazily, without an event
 * each: a waiter whose deadline has passed is failed, as of its deadline,
 * by the next thing that looks at the pool (a request or flush wanting a
 * connection, one coming free, a tick, the end of sim_advance). Counts,
 * ticks, latencies and Little's integral come out as with an event at
 * each deadline, and an overloaded run saves most of its events. A retry
 * must start at its deadline, so with retries, and after the arrivals
 * stop, each deadline gets its own event.
 */
static bool pool_lazy(const struct sim *s)
{
	/* A closed-loop caller's next send follows its end: it needs the
	 * true time of the end, so each deadline gets its event. */
	return s->c.retries == 0 && s->c.clients == 0 && !s->pool_eager;
}

/* Fail every waiter of p whose deadline is <= t, each as of its deadline,
 * then arm the sweep event for the new head if it needs one. A waiter
 * for a connection has sent nothing yet: its client's timeout simply
 * ends it. */
static void pool_expire(struct sim *s, struct sim_pool *p, int64_t t)
{
	int64_t now = s->now;
	size_t k;

	while (p->waiters.n && (p->first_at = pool_first(s, p, &k)) <= t) {
		int64_t d = p->first_at;
		struct sim_req r;
		bool abandoned;

		r = sim_queue_pop_run(&p->waiters, k);
		abandoned = s->client_timeout_us > 0 &&
		            r.attempt_us + s->client_timeout_us <= d;
		s->now = d;               /* it ended then, not now */
		fail(s, &r, abandoned);
	}
	if (!p->waiters.n)
		p->first_at = INT64_MAX;
	s->now = now;
	pool_arm_sweep(s, p);
}

static void pools_expire(struct sim *s, int64_t t)
{
	pool_expire(s, &s->pool[POOL_MAIN], t);
	if (s->counter_pool != &s->pool[POOL_MAIN])
		pool_expire(s, s->counter_pool, t);
}

/* Before anyone takes a connection, whoever's deadline has come gives up:
 * ties between a deadline and a free connection go to the deadline, in
 * both modes. */
static void pool_settle(struct sim *s, struct sim_pool *p)
{
	/* first_at is never later than the earliest deadline (a push lowers
	 * it, only pool_expire raises it), so nothing is due before it. */
	if (p->first_at <= s->now)
		pool_expire(s, p, s->now);
}

static void pools_settle(struct sim *s)
{
	pool_settle(s, &s->pool[POOL_MAIN]);
	if (s->counter_pool != &s->pool[POOL_MAIN])
		pool_settle(s, s->counter_pool);
}

static void pool_arm_sweep_now(struct sim *s, struct sim_pool *p);

/* Called at every acquire and grant: the common "nothing to arm" is
 * decided inline, the rest out of line. */
static inline void pool_arm_sweep(struct sim *s, struct sim_pool *p)
{
	if (p->sweep_at >= 0 || !p->waiters.n || (s->end_us == 0 && pool_lazy(s)))
		return;                   /* settled by pool_settle */
	pool_arm_sweep_now(s, p);
}

static void pool_arm_sweep_now(struct sim *s, struct sim_pool *p)
{
	int64_t d;

	d = pool_first(s, p, &(size_t){0});
	if (d == INT64_MAX)
		return;
	if (pool_lazy(s) && (s->end_us == 0 || d < s->end_us))
		return;                   /* settled by pool_settle */
	p->sweep_at = d > s->now ? d : s->now;
	sim_push(s, p->sweep_at, p == &s->pool[POOL_MAIN] ? EV_POOL_SWEEP : EV_POOL2_SWEEP, 0);
}

SIM_HOT void pool_grant(struct sim *s, struct sim_pool *p)
{
	pool_settle(s, p);
	while (pool_free(p) && (p->waiters.n || p->flusher_waiting)) {
		pool_use(p);
		if (p->flusher_waiting &&
		    (!p->waiters.n || p->flusher_enq <= sim_queue_at(&p->waiters, 0)->enq_us)) {
			p->flusher_waiting = false;
			flusher_lock(s);
		} else {
			struct sim_req r = sim_queue_pop(&p->waiters);
			got_conn(s, &r);
		}
	}
	pool_arm_sweep(s, p);
}

static void pool_release(struct sim *s, struct sim_pool *p)
{
	assert(p->in_use > 0);
	p->in_use--;
	pool_grant(s, p);
}

/* Give back a connection of the counter endpoint's pool. */
static void counter_release(struct sim *s)
{
	pool_release(s, s->counter_pool);
}

static void pool_note_wait(struct sim *s, struct sim_pool *p)
{
	int nw = (int)p->waiters.n + p->flusher_waiting;

	if (nw > p->max_waiters)
		p->max_waiters = nw;
	if (p->exhausted_at < 0)
		p->exhausted_at = s->now;
}

SIM_HOT void pool_acquire(struct sim *s, struct sim_req *r)
{
	struct sim_pool *p = pool_of(s, r->kind);
	int64_t d;

	if (pool_take(s, p)) {
		got_conn(s, r);
		return;
	}
	r->enq_us = s->now;
	sim_queue_push(&p->waiters, r);
	d = pool_deadline(s, r);
	if (d < p->first_at)
		p->first_at = d;
	if (sim_followed(s, r))
		sim_trace_note(s, SIM_TR_POOL_QUEUE, SIM_AT_POOL, -1, (int64_t)p->waiters.n);
	pool_note_wait(s, p);
	pool_arm_sweep(s, p);
}

/* The flusher waits beside the FIFO, in arrival order with it. */
static void flusher_wait(struct sim *s)
{
	struct sim_pool *p = s->counter_pool;

	p->flusher_waiting = true;
	p->flusher_enq = s->now;
}

static void pool_sweep(struct sim *s, struct sim_pool *p)
{
	p->sweep_at = -1;
	pool_expire(s, p, s->now);
}

int sim_pools_in_use(const struct sim *s)
{
	return s->pool[POOL_MAIN].in_use +
	       (s->counter_pool != &s->pool[POOL_MAIN] ? s->pool[POOL_COUNTER].in_use : 0);
}

int sim_pools_waiting(const struct sim *s)
{
	int n = (int)s->pool[POOL_MAIN].waiters.n + s->pool[POOL_MAIN].flusher_waiting;

	if (s->counter_pool != &s->pool[POOL_MAIN])
		n += (int)s->counter_pool->waiters.n + s->counter_pool->flusher_waiting;
	return n;
}

/* ---- requests that hold a connection for a while (inserts, other calls) ---- */

SIM_HOT uint32_t slab_put(struct sim *s, const struct sim_req *r)
{
	uint32_t i;

	if (!s->slab_nfree) {
		uint32_t old = s->slab_cap, cap = old ? 2 * old : 64;
		s->slab = xrealloc(s->slab, cap * sizeof *s->slab);
		s->slab_free = xrealloc(s->slab_free, cap * sizeof *s->slab_free);
		for (uint32_t k = cap; k > old; k--)
			s->slab_free[s->slab_nfree++] = k - 1;
		s->slab_cap = cap;
	}
	i = s->slab_free[--s->slab_nfree];
	s->slab[i] = *r;
	return i;
}

SIM_HOT void conn_done(struct sim *s, uint32_t i)
{
	struct sim_req r = s->slab[i];

	s->slab_free[s->slab_nfree++] = i;
	if (r.kind == SIM_REQ_READ) {
		s->conn_unrel--;
		s->unrel_inflight--;
		sim_read_end(s, &r, true);
	} else if (r.kind == SIM_REQ_UNRELATED) {
		s->conn_unrel--;
		s->unrel_completed++;
		s->unrel_inflight--;
	} else {
		s->conn_hold--;
		sim_fix_insert_done(s, &r);
	}
	pool_release(s, pool_of(s, r.kind));
}

/* ---- row locks ---- */

SIM_HOT void lock_grant(struct sim *s, int i, const struct sim_req *r)
{
	struct sim_row *row = &s->rows[i];
	int64_t wait = s->now - r->enq_us;

	if (wait > s->worst_wait)
		s->worst_wait = wait;
	s->sum_wait += (double)wait;
	s->nwaits++;
	if (sim_followed(s, r))
		sim_trace_note(s, SIM_TR_LOCKED, SIM_AT_HOLD, i, wait);
	row->holder = HOLD_REQ;
	row->req = *r;
	row->got_us = s->now;
	s->conn_hold++;
	if (s->c.cores > 0 && s->c.cpu_db_ms > 0) {
		/* The CPU part first (parse, plan, execute), then the rest
		 * (the commit's flush): the CPU part waits for a core. */
		int64_t h = hold_sample(s);
		int64_t cpu = round_us((double)h * s->c.cpu_db_ms / s->c.hold_ms);
		row->rest_us = s->work_us + s->trips_us + h - cpu + sim_chain_walk_us(s, i);
		sim_cpu_add(s, cpu, CPU_HOLD, (uint32_t)i);
		return;
	}
	/* The round trips made while holding the lock (trips_us) hold it as
	 * long as the server's own work does. */
	sim_push(s, s->now + s->work_us + s->trips_us + hold_sample(s) + sim_chain_walk_us(s, i),
	         EV_RELEASE, (uint32_t)i);
}

static void hold_cpu_done(struct sim *s, int i)
{
	sim_push(s, s->now + s->rows[i].rest_us, EV_RELEASE, (uint32_t)i);
}

/* When waiter h is cancelled by the server: lock_timeout from its
 * current sleep, statement_timeout from when it first asked, each the one
 * its attempt started under; INT64_MAX if neither is set. Along a run of
 * the queue (sim_ring.h) both only grow (a herd wake sets every sleeper's
 * to the same time), so the run's head has the run's earliest. */
static int64_t cancel_at(const struct sim *s, const struct sim_req *h, bool *by_lock)
{
	const struct sim_timeouts *t = &s->tmo[h->gen];
	int64_t d = INT64_MAX;

	*by_lock = false;
	if (t->stmt_us > 0)
		d = h->enq_us + t->stmt_us;
	if (t->lock_us > 0 && h->slept_us + t->lock_us < d) {
		d = h->slept_us + t->lock_us;
		*by_lock = true;
	}
	return d;
}

/* The first cancellation in a row's queue, INT64_MAX if none: the
 * earliest of its runs' heads; *run, *at (its index in the queue) and
 * *by_lock say whose and why. */
static int64_t cancel_first(const struct sim *s, const struct sim_row *row, size_t *run,
                            size_t *at, bool *by_lock)
{
	int64_t d = INT64_MAX;
	size_t i = 0;

	*run = *at = 0;
	*by_lock = false;
	for (size_t k = 0; k < row->q.nrun; i += row->q.run[k++].r.n) {
		bool bl;
		int64_t dk;
		if (!row->q.run[k].r.n)
			continue;
		dk = cancel_at(s, sim_ring_at(&row->q.run[k].r, 0), &bl);
		if (dk < d) {
			d = dk;
			*run = k;
			*at = i;
			*by_lock = bl;
		}
	}
	return d;
}

/* The next deadline in a row's queue: the first live waiter's client
 * timeout, or the first cancellation; INT64_MAX if neither. */
static int64_t lock_deadline(const struct sim *s, const struct sim_row *row)
{
	int64_t d = INT64_MAX;
	size_t run, at;
	bool by_lock;

	if (s->client_timeout_us > 0 && row->live_from < row->q.n)
		d = sim_queue_at(&row->q, row->live_from)->attempt_us + s->client_timeout_us;
	if (row->q.n) {
		int64_t l = cancel_first(s, row, &run, &at, &by_lock);
		if (l < d)
			d = l;
	}
	return d;
}

static void lock_arm_sweep_now(struct sim *s, int i);

/* Called whenever a request queues for a row: without timeouts, no call. */
static inline void lock_arm_sweep(struct sim *s, int i)
{
	const struct sim_row *row = &s->rows[i];

	if (row->sweep_at >= 0 || !row->q.n ||
	    (s->client_timeout_us == 0 && !s->tmo_lock))
		return;
	lock_arm_sweep_now(s, i);
}

static void lock_arm_sweep_now(struct sim *s, int i)
{
	struct sim_row *row = &s->rows[i];
	int64_t d;

	d = lock_deadline(s, row);
	if (d == INT64_MAX)
		return;
	row->sweep_at = d > s->now ? d : s->now;
	sim_push(s, row->sweep_at, EV_LOCK_SWEEP, (uint32_t)i);
}

SIM_HOT void lock_acquire(struct sim *s, int i, struct sim_req *r)
{
	struct sim_row *row = &s->rows[i];

	r->enq_us = s->now;
	r->slept_us = s->now;
	if (row->holder == HOLD_NONE) {
		lock_grant(s, i, r);
		return;
	}
	sim_queue_push(&row->q, r);
	if (sim_followed(s, r))
		sim_trace_note(s, SIM_TR_LOCK_QUEUE, SIM_AT_LOCK_WAIT, i, (int64_t)row->q.n);
	s->conn_wait++;
	/* Going to sleep on the lock costs the waiter CPU of its own, spent
	 * while the holder holds: on the cores, beside the hold. */
	s->contended++;
	if (s->contend_us > 0 && s->c.cores > 0)
		sim_cpu_add(s, s->contend_us, CPU_ONLY, (uint32_t)i);
	lock_arm_sweep(s, i);
}

/* The head of a row's queue leaves it (to the lock, or cancelled). */
static struct sim_req lock_pop(struct sim_row *row)
{
	if (row->live_from > 0)
		row->live_from--;
	return sim_queue_pop(&row->q);
}

/* An orphaned attempt is over in the server: committed or cancelled. */
static void orphan_done(struct sim *s, const struct sim_req *r)
{
	s->orphans_live--;
	s->likes[r->like].orphans--;
	like_settle(s, r->like);
}

/* The client of waiter w gave up, but its statement is in the server and
 * stays in the queue: the client counts it abandoned (or retries from a
 * copy), the server will still run it. */
static void client_gives_up(struct sim *s, struct sim_req *w)
{
	struct sim_req copy;

	if (!w->like)
		w->like = sim_like_new(s);
	s->likes[w->like].orphans++;
	s->orphaned++;
	s->orphans_live++;
	copy = *w;
	w->orphan = 1;
	fail(s, &copy, true);        /* may push onto this queue: w is stale */
}

static void lock_sweep(struct sim *s, int i)
{
	struct sim_row *row = &s->rows[i];
	int64_t ct = s->client_timeout_us;
	size_t run, at;
	bool by_lock;

	row->sweep_at = -1;
	/* lock_timeout or statement_timeout: the server cancels the
	 * statement; the client (if it is still there) gets a clear error, so
	 * a retry cannot double. The first due may head a later run. */
	while (row->q.n && cancel_first(s, row, &run, &at, &by_lock) <= s->now) {
		struct sim_req r = sim_queue_pop_run(&row->q, run);
		if (at < row->live_from)
			row->live_from--;
		s->conn_wait--;
		if (by_lock)
			s->lock_timeouts++;
		else
			s->statement_timeouts++;
		counter_release(s);        /* the row is held: nobody jumps the line */
		if (r.orphan)
			orphan_done(s, &r);
		else
			fail(s, &r, false);
	}
	/* Client timeouts: the client gives up, the statement waits on. */
	while (ct > 0 && row->live_from < row->q.n &&
	       sim_queue_at(&row->q, row->live_from)->attempt_us + ct <= s->now) {
		struct sim_req *w = sim_queue_at_mut(&row->q, row->live_from);
		row->live_from++;
		client_gives_up(s, w);
	}
	lock_arm_sweep(s, i);
}

/* The flusher, connected, takes the counter row's lock. */
static void flusher_hold(struct sim *s)
{
	struct sim_row *row = &s->rows[0];

	row->holder = HOLD_FLUSH;
	row->got_us = s->now;
	sim_push(s, s->now + hold_sample(s) + sim_chain_walk_us(s, 0), EV_RELEASE, 0);
}

/* In a fix's write path only the flusher locks the counter row; after a
 * live change from a direct path, requests may still hold it and queue
 * for it. The flusher then waits for the holder's release and goes next,
 * ahead of the queue (one flush, one hold, before the backlog). */
static void flusher_lock(struct sim *s)
{
	s->conn_flush++;
	if (s->rows[0].holder != HOLD_NONE) {
		s->flusher_lockwait = true;
		return;
	}
	flusher_hold(s);
}

/*
 * A like's attempt commits. Most likes have one attempt and no record:
 * +1 (the path's credits: a ledger batch adds its applied transfers),
 * acknowledged. A like with an orphaned attempt keeps a record of how
 * many of its commits changed the row: the first counts once (acknowledged
 * if its client is still there, "unacked" if not), every later one is a
 * double count, unless the write is idempotent, when later ones change
 * nothing. When the client finally gets its success after an orphan had
 * already applied the like, that like moves from unacked to acknowledged.
 */
SIM_HOT void commit(struct sim *s, struct sim_row *row, const struct sim_req *r)
{
	struct sim_like *l;
	bool applied;
	const struct sim_path *path = sim_req_path(r);
	int64_t n = path->credits ? path->credits(s) : 1;

	if (!r->like) {
		row->value += n;
		s->acked += n;
		s->visible += n;
		complete(s, r);
		return;
	}
	l = &s->likes[r->like];
	applied = !(s->c.idempotent && l->applied > 0);
	if (applied) {
		row->value += n;
		s->visible += n;
		if (l->applied > 0)
			s->doubled += n;
		else
			l->credited = (int32_t)n;
	}
	if (r->orphan) {
		s->orphans_run++;
		if (applied && l->applied == 0)
			s->unacked += n;
		l->applied += applied;
		orphan_done(s, r);
		return;
	}
	if (l->applied > 0) {
		s->unacked -= l->credited;    /* that earlier commit was this like */
		s->acked += l->credited;
	} else {
		s->acked += n;
	}
	l->applied += applied;
	complete(s, r);
}

/* The log's leader waiting behind the queued losers: its turn? */
static void sync_turn(struct sim *s)
{
	if (s->runq.sync_wait &&
	    (s->runq.started >= s->runq.sync_at || s->runq.queued == 0)) {
		s->runq.sync_wait = false;
		sim_cpu_add(s, s->runq.sync_us, CPU_WAL, s->runq.sync_what);
	}
}

/* The most waiters one hand-off wakes. A server has at most
 * max_connections backends (PostgreSQL's default is 100, and servers
 * rarely allow more than a few thousand); a longer queue models an
 * overload no real server admits, and waking all of it would cost its
 * length at every commit. */
#define HERD_MAX 1024

/*
 * A herd hand-off: the holder's commit wakes every waiter. Each spends
 * c.wake_us of CPU (a job on the CPU station when cores are modelled);
 * the next holder is drawn among them at random, and the lock is its from
 * the end of its wake; the others sleep again on it, their lock_timeout
 * clocks starting afresh when they do. They keep their place in the
 * queue, which no longer means an order: a uniform draw ignores it, and
 * c.herd_bias favours its newest end (sim_herd_pick), as PostgreSQL's
 * draw does: there the backend that queued during the last hold wins
 * two to three times as often as one that has waited a few hand-offs,
 * and those are drawn about uniformly among themselves (bench/README.md,
 * "Who wins the race").
 *
 * On the cores, woken processes wait in the scheduler's run queue and
 * take a core each as one frees, so the race goes to the first to run:
 * the winner's wake starts as soon as it reaches a core (c.wake_lat_us
 * after the commit: the scheduler bringing another core out of idle for
 * it, which the releasing process keeps busy), and the losers take theirs
 * from the row's run queue, at most c.cores at a time, beside the
 * winner's hold.
 * A loser still in that queue when the next commit comes is not woken
 * again: when it runs it reads the newest version and sleeps on the new
 * holder, one wake for every commit it slept through. So a commit wakes
 * every waiter while their wakes fit in a hold, and fewer past that,
 * about 1 + C (hold + wake) / wake, as PostgreSQL's backends do under
 * many clients (voluntary context switches per commit).
 *
 * Every process woken takes the lock manager's partition lock in turn,
 * to let go of the lock it was granted and to queue on the new holder,
 * and the winner waits its turn among them: its wake starts
 * c.lockmgr_us later for each of the w - 1 others (bench/README.md,
 * "Past 32 waiters").
 *
 * With c.herd_lanes N, that lock paces the losers instead: N of them run
 * at once and the rest sleep on it, out of the run queue (so the log's
 * next leader does not wait behind them, sim_wake_behind), and the
 * winner waits for half of those woken with it to pass, a wake each: it
 * races them for the lock, while those still asleep on it from earlier
 * commits are passed (an LWLock is tried before its waiters' queue is
 * joined, lwlock.c). bench/README.md, "Past 32 waiters": a third of the
 * backends in LWLock: LockManager at 64 clients, fewer than two on a
 * core.
 */
static void wake_next(struct sim *s, int i)
{
	struct sim_row *row = &s->rows[i];

	int lanes = s->c.herd_lanes;                /* 0: the run queue holds them */
	if (row->wake_q > row->q.n) {               /* some left the queue meanwhile */
		uint64_t gone = row->wake_q - row->q.n;
		if (!lanes) {
			s->runq.queued -= gone;
			if (s->runq.sync_wait)
				s->runq.sync_at -= gone < s->runq.sync_at - s->runq.started
				                   ? gone : s->runq.sync_at - s->runq.started;
		}
		row->wake_q = (uint32_t)row->q.n;
	}
	while (row->wake_q > 0 && row->waking < (uint32_t)(lanes ? lanes : s->c.cores)) {
		row->wake_q--;
		row->waking++;
		if (!lanes) {
			s->runq.queued--;
			s->runq.started++;
		}
		sim_cpu_add(s, s->wake_us, CPU_WAKE_QUEUED, (uint32_t)i);
	}
	sync_turn(s);
}

/*
 * The log's leader wakes from its fdatasync into the same run queue as
 * the herd's losers, behind those still waiting for a core: a fair
 * scheduler runs the tasks woken earlier first. With few waiters their
 * wakes are done long before the flush ends and the leader runs at once;
 * past about C (hold / wake) waiters on a row they are not, and the flush
 * stretches by their wakes. PostgreSQL 15 on this kit's 2-core machine,
 * one hot row under pgbench (pg_stat_wal with track_wal_io_timing,
 * wal_sync_time over wal_sync): 0.126 ms a sync at 1 client, 0.146 at 16
 * and 0.267 at 64 (bench/README.md, "The flush behind the herd").
 */
bool sim_wake_behind(struct sim *s, int64_t work_us, uint32_t what)
{
	if (s->c.cores <= 0 || work_us <= 0 || s->runq.queued == 0)
		return false;
	s->runq.sync_wait = true;
	s->runq.sync_at = s->runq.started + s->runq.queued;
	s->runq.sync_us = work_us;
	s->runq.sync_what = what;
	return true;
}

static void herd_wake(struct sim *s, int i)
{
	struct sim_row *row = &s->rows[i];
	size_t w = row->q.n < HERD_MAX ? row->q.n : HERD_MAX;
	size_t k = s->c.herd_bias > 0 ? sim_herd_pick(sim_rng_unit(&s->rng), w, s->c.herd_bias)
	                              : (size_t)sim_rng_below(&s->rng, (uint64_t)w);
	size_t awake = (size_t)row->wake_q + row->waking, asleep;
	bool cpu = s->c.cores > 0 && s->wake_us > 0;
	/* the lock manager: the winner waits its turn among the w - 1 others */
	int64_t queue_us = llround(s->c.lockmgr_us * (double)(w - 1));

	row->req = sim_queue_remove(&row->q, k);
	if (k < row->live_from)
		row->live_from--;
	row->holder = HOLD_WAKING;
	/* (Waiters past HERD_MAX are not woken: their clocks run on. They,
	 * and those who join during the wake, may have a lock_timeout due
	 * before the head's; the sweep, which looks at the head, then
	 * cancels them late, never early.) */
	for (size_t j = 0; j < row->q.n && j + 1 < w; j++)
		sim_queue_at_mut(&row->q, j)->slept_us = s->now + s->wake_us;
	if (s->follow.like)
		sim_trace_herd(s, i, w);
	if (!cpu) {
		s->wakes += w;
		sim_push(s, s->now + s->wake_lat_us + queue_us + s->wake_us, EV_WAKE,
		         (uint32_t)i);
		return;
	}
	asleep = w - 1 > awake ? w - 1 - awake : 0;
	if (s->c.herd_lanes > 0)      /* behind half its fellows */
		queue_us += llround(s->wake_us * (double)asleep / 2 / s->c.herd_lanes);
	s->wakes += 1 + asleep;
	if (s->wake_lat_us + queue_us > 0)
		sim_push(s, s->now + s->wake_lat_us + queue_us, EV_WAKE_RUN, (uint32_t)i);
	else
		sim_cpu_add(s, s->wake_us, CPU_WAKE, (uint32_t)i);
	row->wake_q += (uint32_t)asleep;
	if (!s->c.herd_lanes)
		s->runq.queued += asleep;
	wake_next(s, i);
}

/* A loser's wake is done: it sleeps again, and the next takes a core. */
static void wake_lost(struct sim *s, int i)
{
	s->rows[i].waking--;
	wake_next(s, i);
}

/* A herd's winner is awake: its hold begins. */
static void wake_done(struct sim *s, int i)
{
	struct sim_row *row = &s->rows[i];
	struct sim_req r = row->req;

	assert(row->holder == HOLD_WAKING);
	s->conn_wait--;
	lock_grant(s, i, &r);
}

/* Row i's lock goes to whoever is next: the flusher waiting for it, a
 * herd's winner, or the oldest waiter. */
SIM_HOT void hand_on(struct sim *s, int i)
{
	struct sim_row *row = &s->rows[i];

	if (i == 0 && s->flusher_lockwait) {
		s->flusher_lockwait = false;
		flusher_hold(s);
	} else if (row->q.n && s->c.handoff == SIM_HANDOFF_HERD) {
		herd_wake(s, i);
	} else if (row->q.n) {
		struct sim_req r = lock_pop(row);
		s->conn_wait--;
		lock_grant(s, i, &r);
	}
}

/* Row i's holder commits and lets go of the row, its commit durable. */
SIM_HOT void release(struct sim *s, int i)
{
	struct sim_row *row = &s->rows[i];

	row->completed++;
	sim_chain_update(s, i);
	if (row->holder == HOLD_FLUSH) {
		row->holder = HOLD_NONE;
		s->conn_flush--;
		sim_fix_commit(s);
	} else {
		struct sim_req r = row->req;
		assert(row->holder == HOLD_REQ);
		row->holder = HOLD_NONE;
		s->conn_hold--;
		commit(s, row, &r);
	}
	/* Hand the lock on before the connection goes back: a request the
	 * pool admits now must queue behind the ones already waiting. */
	hand_on(s, i);
	counter_release(s);
}

/* Release-flush: row i's holder lets go of the row now and joins the
 * log's next flush; it keeps its connection, and its client waits, until
 * durable() (sim_wal.c calls it when that flush is done). */
static void release_early(struct sim *s, int i)
{
	struct sim_row *row = &s->rows[i];
	struct sim_wal_entry e = { .row = i, .kind = SIM_WAL_FLUSHER };

	row->completed++;
	sim_chain_update(s, i);
	if (row->holder == HOLD_REQ) {
		e.kind = SIM_WAL_REQ;
		e.r = row->req;
	}
	row->holder = HOLD_NONE;
	sim_wal_commit(s, &e);
	hand_on(s, i);
}

static void durable(struct sim *s, const struct sim_wal_entry *e)
{
	if (e->kind == SIM_WAL_FLUSHER) {
		s->conn_flush--;
		sim_fix_commit(s);
	} else {
		s->conn_hold--;
		commit(s, &s->rows[e->row], &e->r);
	}
	counter_release(s);
}

/* A holder's hold before its commit's flush is over: with a shared log
 * the commit joins it (the lock is released when its flush is done, or
 * now under release-flush), without one the flush was part of the hold. */
SIM_HOT void hold_end(struct sim *s, int i)
{
	struct sim_wal_entry e = { .row = i, .kind = SIM_WAL_HELD };

	if (s->wal_flush_us == 0) {
		release(s, i);
		return;
	}
	if (s->rows[i].holder == HOLD_REQ && sim_followed(s, &s->rows[i].req))
		sim_trace_note(s, SIM_TR_FLUSH_WAIT, SIM_AT_FLUSH, i, 0);
	if (s->c.wal_order == SIM_WAL_RELEASE_FLUSH)
		release_early(s, i);
	else
		sim_wal_commit(s, &e);
}

/* ---- the request path ---- */

/* The row a request locks: one of the config's rows on a sharded path
 * (a request left over from one keeps picking among the rows there are
 * now), row 0 otherwise. */
SIM_HOT int pick_row(struct sim *s, const struct sim_req *r)
{
	int n = s->c.rows < s->nrows ? s->c.rows : s->nrows;

	if (!sim_req_path(r)->sharded || n <= 1)
		return 0;
	if (s->c.slot == SIM_SLOT_ROUND_ROBIN)
		return (int)(s->rr_next++ % (uint32_t)n);
	return (int)sim_rng_below(&s->rng, (uint64_t)n);
}

/* The like's database step, once its work outside the lock is done. */
SIM_HOT void db_step(struct sim *s, struct sim_req *r)
{
	const struct sim_path *path = sim_req_path(r);

	if (path->refused && path->refused(s)) {
		/* Refused before the shared row: an answer, and nothing written. */
		complete(s, r);
		counter_release(s);
	} else if (!path->row_lock) {
		/* An insert of its own new row: no shared lock to wait for. */
		s->conn_hold++;
		sim_push(s, s->now + s->work_us + hold_sample(s), EV_CONN_DONE,
		         slab_put(s, r));
	} else {
		lock_acquire(s, pick_row(s, r), r);
	}
}

/* The time outside the lock: round trips, parsing, the app's own work.
 * On a connection for the paths that have one (the CPU part waits for a
 * core when cores are modelled), before the cheap step for the others. */
static void outside(struct sim *s, struct sim_req *r)
{
	uint32_t slot = slab_put(s, r);

	if (sim_req_path(r)->needs_conn)
		s->conn_outside++;
	if (sim_followed(s, r))
		sim_trace_note(s, SIM_TR_OUTSIDE, SIM_AT_OUTSIDE, -1, 0);
	if (s->c.cores > 0 && s->cpu_client_us > 0)
		sim_cpu_add(s, s->cpu_client_us, CPU_OUTSIDE, slot);
	else
		sim_push(s, s->now + s->outside_us, EV_OUTSIDE_DONE, slot);
}

static void outside_cpu_done(struct sim *s, uint32_t slot)
{
	sim_push(s, s->now + s->outside_us - s->cpu_client_us, EV_OUTSIDE_DONE, slot);
}

/* The CPU station (sim_cpu.c) reports a job's CPU part done. */
static void cpu_done(struct sim *s, enum sim_cpu_what what, uint32_t arg)
{
	switch (what) {
	case CPU_HOLD:
		hold_cpu_done(s, (int)arg);
		break;
	case CPU_OUTSIDE:
		outside_cpu_done(s, arg);
		break;
	case CPU_WAKE:
		wake_done(s, (int)arg);
		break;
	case CPU_ONLY:
		break;                    /* it sleeps (again): only its CPU counted */
	case CPU_WAKE_QUEUED:
		wake_lost(s, (int)arg);
		break;
	case CPU_WAL:
		sim_wal_event(s, arg);
		break;
	}
}

static void outside_done(struct sim *s, uint32_t slot)
{
	struct sim_req r = s->slab[slot];

	s->slab_free[s->slab_nfree++] = slot;
	if (!sim_req_path(&r)->needs_conn) {
		sim_fix_like(s, &r);
		return;
	}
	s->conn_outside--;
	db_step(s, &r);
}

static bool has_outside(const struct sim *s)
{
	return s->outside_us > 0;
}

SIM_HOT void got_conn(struct sim *s, struct sim_req *r)
{
	if (r->kind == SIM_REQ_UNRELATED) {
		s->conn_unrel++;
		sim_push_fifo(s, FF_CALL_DONE, s->now + s->unrel_us, EV_CONN_DONE, slab_put(s, r));
	} else if (r->kind == SIM_REQ_READ) {
		s->conn_unrel++;          /* shown with the other calls */
		sim_push_fifo(s, FF_CALL_DONE, s->now + sim_read_start(s), EV_CONN_DONE,
		              slab_put(s, r));
	} else {
		if (sim_followed(s, r))
			sim_trace_note(s, SIM_TR_CONNECTED, SIM_AT_OTHER, -1, 0);
		if (has_outside(s))
			outside(s, r);
		else
			db_step(s, r);
	}
}

SIM_HOT void start_attempt(struct sim *s, struct sim_req *r)
{
	/* Store only on a retry: a fresh request already has it, and a store
	 * just before the request is copied into a queue stalls the copy. */
	if (r->attempt_us != s->now)
		r->attempt_us = s->now;
	if (r->gen != s->ntmo - 1)           /* a retry: today's timeouts */
		r->gen = (uint16_t)(s->ntmo - 1);
	if (r->kind == SIM_REQ_COUNTER && !sim_req_path(r)->needs_conn) {
		if (has_outside(s))
			outside(s, r);
		else
			sim_fix_like(s, r);
	} else {
		pool_acquire(s, r);
	}
}

/* ---- the time series ---- */

/* Every connection in use is doing one thing: checked at each tick (a
 * count gone wrong stays wrong) rather than at each event. */
static bool conns_add_up(const struct sim *s)
{
	/* pool[POOL_COUNTER] stays empty without a bulkhead */
	return s->pool[POOL_MAIN].in_use + s->pool[POOL_COUNTER].in_use ==
	       s->conn_wait + s->conn_hold + s->conn_unrel + s->conn_flush + s->conn_outside;
}

static void tick(struct sim *s)
{
	struct sim_tick tk, *t = &tk;
	double secs = (double)(s->now - s->last_tick) / 1e6;

	assert(conns_add_up(s));
	if (secs <= 0)
		return;
	memset(t, 0, sizeof *t);  /* its padding too: copies compare equal */
	pools_settle(s);          /* a deadline at the tick counts in it */
	if (s->follow.like)
		sim_trace_tick(s);
	t->t_s = (double)s->now / 1e6;
	t->offered_per_s = (double)s->acc.offered / secs;
	t->completed_per_s = (double)s->acc.completed / secs;
	t->failed_per_s = (double)s->acc.failed / secs;
	t->p50_ms = util_hist_quantile(&s->acc.lat, 0.50) / 1000.0;
	t->p99_ms = util_hist_quantile(&s->acc.lat, 0.99) / 1000.0;
	t->queue_len = s->conn_wait;
	t->pool_in_use = sim_pools_in_use(s);
	t->pool_waiters = sim_pools_waiting(s);
	t->unrelated_failed_per_s = (double)s->acc.unrel_failed / secs;
	t->true_count = s->acked;
	t->visible = s->visible;
	sim_series_add(&s->series, t);
	s->acc.offered = s->acc.completed = s->acc.failed = s->acc.unrel_failed = 0;
	util_hist_merge(&s->lat, &s->acc.lat);
	util_hist_reset(&s->acc.lat);
	s->last_tick = s->now;
}

/* ---- life cycle ---- */

static void set_times(struct sim *s)
{
	s->hold_us = ms_us(s->c.hold_ms);
	s->work_us = ms_us(s->c.work_ms);
	s->unrel_us = ms_us(s->c.unrelated_ms);
	s->flush_us = ms_us(s->c.flush_ms);
	s->pool_timeout_us = ms_us(s->c.pool_timeout_ms);
	s->client_timeout_us = ms_us(s->c.client_timeout_ms);
	s->think_us = ms_us(s->c.think_ms);
	s->lock_timeout_us = ms_us(s->c.lock_timeout_ms);
	s->statement_timeout_us = ms_us(s->c.statement_timeout_ms);
	s->wake_us = round_us(s->c.wake_us);
	s->wake_lat_us = round_us(s->c.wake_lat_us);
	s->contend_us = round_us(s->c.contend_us);
	s->wal_flush_us = ms_us(s->c.wal_flush_ms);
	s->wal_cpu_us = ms_us(s->c.wal_cpu_ms);
	if (s->wal_cpu_us > s->wal_flush_us)
		s->wal_cpu_us = s->wal_flush_us;
	s->backoff_us = ms_us(s->c.backoff_ms);
	s->outside_us = ms_us(s->c.outside_ms);
	s->cpu_client_us = ms_us(s->c.cpu_client_ms);
	if (s->cpu_client_us > s->outside_us)
		s->cpu_client_us = s->outside_us;
	s->trips_us = (int64_t)s->c.trips_in_lock * ms_us(s->c.rtt_ms);
}

/* What the fixes may ask of this file (sim_impl.h, struct sim_host). */
static const struct sim_host host = {
	complete, fail, flusher_take, flusher_wait, flusher_lock, release, durable, cpu_done
};

struct sim *sim_new(const struct sim_config *c)
{
	struct sim *s;
	char err[160];
	double rps = c->clients > 0 ? 0 : c->rps;

	if (sim_config_check(c, err, sizeof err) != 0)
		return NULL;
	s = xcalloc(1, sizeof *s);
	s->c = *c;
	s->set_rps = c->rps;
	sim_rng_seed(&s->rng, c->seed);
	sim_rng_seed(&s->like_rng, c->seed ^ 0x6a09e667f3bcc908ULL);
	sim_rng_seed(&s->unrel_rng, c->seed ^ 0xbb67ae8584caa73bULL);
	sim_heap_init(&s->heap);
	set_times(s);
	sim_live_timeouts(s);
	s->tick_us = ms_us(c->tick_ms > 0 ? c->tick_ms : 100);
	s->end_us = c->seconds > 0 ? llround(c->seconds * 1e6) : 0;
	s->path = sim_path_of(c->strategy);
	s->host = &host;
	sim_cpu_init(s);
	s->nrows = sim_config_rows(c);
	s->rows = xcalloc((size_t)s->nrows, sizeof *s->rows);
	for (int i = 0; i < s->nrows; i++) {
		sim_queue_init(&s->rows[i].q);
		s->rows[i].sweep_at = -1;
	}
	for (int i = 0; i < 2; i++) {
		sim_queue_init(&s->pool[i].waiters);
		s->pool[i].sweep_at = -1;
		s->pool[i].exhausted_at = -1;
		s->pool[i].first_at = INT64_MAX;
	}
	s->pool[POOL_MAIN].size = c->pool;
	s->pool[POOL_COUNTER].size = c->counter_pool;
	s->counter_pool = c->counter_pool > 0 ? &s->pool[POOL_COUNTER] : &s->pool[POOL_MAIN];
	sim_ring_init(&s->redis_q);
	s->buf_oldest = s->flush_oldest = -1;
	util_hist_init(&s->lat);
	util_hist_init(&s->acc.lat);
	sim_series_init(&s->series);

	/* Schedule steps at t <= 0 set the starting rate. */
	for (int i = 0; i < c->nphases && c->clients == 0; i++)
		if (c->phases[i].at_us <= 0)
			rps = c->phases[i].rps;
		else
			sim_push(s, c->phases[i].at_us, EV_PHASE, (uint32_t)i);
	s->like.last = s->unrel.last = -1;
	source_rate(s, &s->like, rps, EV_ARRIVE);
	source_rate(s, &s->unrel, c->unrelated_rps, EV_UNREL_ARRIVE);
	for (int i = 0; i < c->ncrashes; i++)
		sim_push(s, c->crashes[i].at_us, EV_CRASH, (uint32_t)c->crashes[i].kind);
	s->paths_used = 1u << c->strategy;
	if (s->path->flushes) {
		sim_push(s, s->flush_us, EV_FLUSH, 0);
		s->flush_armed = true;
	}
	sim_push(s, s->tick_us, EV_TICK, 0);
	for (int i = 0; i < c->clients; i++)
		sim_push(s, 0, EV_SEND, 0);     /* every caller sends at once */
	sim_mva(c, &s->mva_x, &s->mva_r);
	sim_chain_init(s);
	sim_wal_init(s);
	return s;
}

void sim_free(struct sim *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nrows; i++)
		sim_queue_free(&s->rows[i].q);
	free(s->rows);
	sim_queue_free(&s->pool[POOL_MAIN].waiters);
	sim_queue_free(&s->pool[POOL_COUNTER].waiters);
	sim_ring_free(&s->redis_q);
	sim_heap_free(&s->heap);
	for (int i = 0; i < SIM_NFIFOS; i++)
		free(s->fifos[i].ev);
	sim_cpu_free(s);
	free(s->slab);
	free(s->slab_free);
	sim_series_free(&s->series);
	free(s->likes);
	sim_chain_free(s);
	sim_wal_free(s);
	sim_live_free(s);
	free(s);
}

SIM_HOT void dispatch(struct sim *s, const struct sim_event *e)
{
	switch ((enum sim_ev)e->type) {
	case EV_ARRIVE:
		arrive(s, &s->like, EV_ARRIVE, SIM_REQ_COUNTER);
		break;
	case EV_UNREL_ARRIVE:
		arrive(s, &s->unrel, EV_UNREL_ARRIVE, SIM_REQ_UNRELATED);
		break;
	case EV_PHASE:
		s->c.rps = s->c.phases[e->arg].rps;
		source_rate(s, &s->like, s->c.rps, EV_ARRIVE);
		break;
	case EV_RELEASE:
		hold_end(s, (int)e->arg);
		break;
	case EV_WAKE:
		wake_done(s, (int)e->arg);
		break;
	case EV_WAKE_RUN:
		sim_cpu_add(s, s->wake_us, CPU_WAKE, e->arg);
		break;
	case EV_WAL:
		sim_wal_event(s, e->arg);
		break;
	case EV_LOCK_SWEEP:
		lock_sweep(s, (int)e->arg);
		break;
	case EV_POOL_SWEEP:
		pool_sweep(s, &s->pool[POOL_MAIN]);
		break;
	case EV_POOL2_SWEEP:
		pool_sweep(s, &s->pool[POOL_COUNTER]);
		break;
	case EV_CONN_DONE:
		conn_done(s, e->arg);
		break;
	case EV_REDIS_DONE:
		sim_fix_redis_done(s, e->arg);
		break;
	case EV_REDIS_DEL:
		sim_fix_redis_del(s);
		break;
	case EV_FLUSH:
		sim_fix_flush(s);
		break;
	case EV_TICK:
		tick(s);
		sim_push(s, s->now + s->tick_us, EV_TICK, 0);
		break;
	case EV_CRASH:
		sim_fix_fault(s, (enum sim_fault)e->arg);
		break;
	case EV_SEND:
		/* A caller whose run is over stops sending. */
		if (s->end_us == 0 || s->now < s->end_us)
			arrive(s, NULL, EV_SEND, SIM_REQ_COUNTER);
		break;
	case EV_OUTSIDE_DONE:
		outside_done(s, e->arg);
		break;
	case EV_CPU:
		sim_cpu_done(s, e->arg);
		break;
	case EV_READ:
		if (sim_read_next(s, e->arg))
			arrive(s, NULL, EV_READ, SIM_REQ_READ);
		break;
	case EV_RETRY: {
		struct sim_req r = s->slab[e->arg];
		s->slab_free[s->slab_nfree++] = e->arg;
		start_attempt(s, &r);
		break;
	}
	}
}

/* Nothing left to finish: no like, other call or flush in flight. */
static bool idle(const struct sim *s)
{
	return s->inflight == 0 && s->unrel_inflight == 0 && !s->flush_busy;
}

/* Inline in both loops (sim_advance, sim_step): it runs once an event. */
SIM_HOT void step(struct sim *s, int where)
{
	static const enum sim_ev timer_ev[SIM_NTIMERS] = {
		EV_ARRIVE, EV_UNREL_ARRIVE, EV_POOL_SWEEP
	};
	struct sim_event e;

	if (where == SIM_NTIMERS) {
		e = sim_heap_pop(&s->heap);
	} else if (where > SIM_NTIMERS) {
		e = sim_fifo_pop(&s->fifos[where - SIM_NTIMERS - 1]);
	} else {
		e.t = s->timers[where].t;
		e.seq = s->timers[where].seq;
		e.type = (uint32_t)timer_ev[where];
		e.arg = 0;
		s->timers[where].on = false;
	}
	assert(e.t >= s->now);
	s->now = e.t;
	s->events++;
	dispatch(s, &e);
}

bool sim_step(struct sim *s)
{
	int64_t t;
	int where = next_event(s, &t);

	if (where < 0)
		return false;
	if (s->end_us > 0 && t > s->end_us) {
		if (pool_lazy(s))
			pools_expire(s, s->end_us);  /* deadlines before the end */
		if (idle(s))
			return false;
		where = next_event(s, &t);       /* expiry may have armed a sweep */
	}
	step(s, where);
	return true;
}

void sim_run(struct sim *s)
{
	/* Arrivals stop at c.seconds; the run goes on until every request
	 * in flight has ended, so a queue that built up is drained. */
	assert(s->end_us > 0);
	while (sim_step(s))
		;
	if (s->now < s->end_us)
		s->now = s->end_us;
	tick(s);                 /* the last, partial tick */
}

/*
 * Most events are likes arriving, and an arrival that finds the pool full
 * only joins its queue and draws the next arrival: it changes no other
 * event source. So the earliest of the others is kept across arrivals and
 * looked for again only when something else was pushed or popped: every
 * push takes a sequence number, and an arrival takes one, for the next.
 */
void sim_advance(struct sim *s, int64_t t_us)
{
	struct earliest o = next_other(s);
	int64_t t;
	int where;

	while ((where = next_of(s, o, &t)) >= 0 && t <= t_us) {
		uint64_t seq = s->heap.seq;

		step(s, where);
		if (where != TM_ARRIVE ||
		    s->heap.seq - seq != (s->timers[TM_ARRIVE].on && s->timers[TM_ARRIVE].seq == seq))
			o = next_other(s);
	}
	if (t_us > s->now)
		s->now = t_us;
	pools_settle(s);
}

int64_t sim_now(const struct sim *s)
{
	return s->now;
}

const struct sim_config *sim_config(const struct sim *s)
{
	return &s->c;
}

void sim_set(struct sim *s, const struct sim_config *c)
{
	/* A new rate only when the caller asked for one: the schedule moves
	 * s->c.rps on its own, and a caller repeating its settings must not
	 * undo the schedule's step. */
	bool rate = c->rps != s->set_rps && s->c.clients == 0;
	bool unrel = c->unrelated_rps != s->c.unrelated_rps;

	bool reads = c->read_rps != s->c.read_rps;
	struct sim_config n = *c, old = s->c;

	/* Every setting applies but the structure (sim_config_keep) and the
	 * rate, which moves only when asked to. */
	sim_config_keep(&n, &s->c);
	n.rps = rate ? c->rps : s->c.rps;
	s->c = n;
	if (rate)
		s->set_rps = c->rps;
	if (reads)
		sim_chain_rate(s);
	set_times(s);
	sim_mva(&s->c, &s->mva_x, &s->mva_r);
	sim_live_apply(s, &old, c);
	s->pool[POOL_MAIN].size = c->pool;
	if (s->counter_pool != &s->pool[POOL_MAIN] && c->counter_pool > 0)
		s->pool[POOL_COUNTER].size = c->counter_pool;
	/* The client timeout, the same for every waiter, may have moved their
	 * deadlines earlier: each pool looks again. */
	s->pool[POOL_MAIN].first_at = s->pool[POOL_COUNTER].first_at = INT64_MIN;
	pools_expire(s, s->now); /* timeouts may have changed, and the mode */
	if (rate)
		source_rate(s, &s->like, c->rps, EV_ARRIVE);
	if (unrel)
		source_rate(s, &s->unrel, c->unrelated_rps, EV_UNREL_ARRIVE);
	pool_grant(s, &s->pool[POOL_MAIN]);  /* a bigger pool admits waiters now */
	if (s->counter_pool != &s->pool[POOL_MAIN])
		pool_grant(s, s->counter_pool);
}

void sim_inject(struct sim *s, enum sim_fault f)
{
	sim_live_call(s, SIM_CALL_FAULT, f);
	sim_fix_fault(s, f);
}
