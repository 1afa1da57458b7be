/*
 * sim_ring.h: a growable FIFO of waiting requests (a ring buffer).
 *
 * Lock queues and the pool's waiters are FIFO and can grow to millions
 * (an overloaded row at 2,000/s for 20 minutes queues ~1.8 M requests), so
 * a waiter is a small plain struct stored by value in a power-of-two ring:
 * no allocation per request, and memory doubles only when the ring is full.
 *
 * The element, struct sim_req, is one of the engine's internals: include
 * engine/sim_impl.h, which defines it and then this header.
 *
 * Interface:
 *   struct sim_ring q; sim_ring_init(&q);
 *   sim_ring_push(&q, &req);              copies req; grows with xrealloc
 *   if (q.n) { struct sim_req r = sim_ring_pop(&q); }
 *   sim_ring_at(&q, i)   the i-th oldest (0 = head), i < q.n
 *   sim_ring_remove(&q, i)  takes the i-th oldest out
 *   sim_ring_free(&q).
 *
 * A queue (struct sim_queue) is the FIFO the pool's waiters and a row's
 * lock queue are kept in: a list of rings, one per run of requests that
 * share a generation (struct sim_req's gen, the timeouts they started
 * under). Within a run the deadlines grow along the ring, so the earliest
 * of the queue is the earliest of its runs' heads, and a run's head can
 * leave (its deadline came) without moving anyone. Most queues hold one
 * run, and then cost what the ring does.
 *   struct sim_queue q; sim_queue_init(&q);
 *   sim_queue_push(&q, &req);             into the run of req.gen (the last
 *                                         run, or a new one after it)
 *   sim_queue_pop(&q)                     the oldest (q.n > 0)
 *   sim_queue_at(&q, i), sim_queue_remove(&q, i)   as for the ring
 *   q.nrun, q.run[k].r                    the runs, oldest first
 *   sim_queue_pop_run(&q, k)              run k's head
 *   sim_queue_free(&q).
 */
#ifndef HOTROW_SIM_RING_H
#define HOTROW_SIM_RING_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#ifndef SIM_REQ_DEFINED
#error "include engine/sim_impl.h, which defines struct sim_req, not sim_ring.h alone"
#endif

struct sim_ring {
	struct sim_req *r;
	size_t head, n, cap;   /* cap is 0 or a power of two */
};

void sim_ring_init(struct sim_ring *q);
void sim_ring_free(struct sim_ring *q);
/* Make room for one more (xrealloc); used by sim_ring_push. */
void sim_ring_grow(struct sim_ring *q);

/* These three run once or twice per request: inline, in the header. */
static inline void sim_ring_push(struct sim_ring *q, const struct sim_req *req)
{
	struct sim_req *d;

	if (q->n == q->cap)
		sim_ring_grow(q);
	d = &q->r[(q->head + q->n++) & (q->cap - 1)];
	/* Field by field: the caller has usually just written *req field by
	 * field, and wide loads across those fresh stores stall. */
	d->first_us = req->first_us;
	d->attempt_us = req->attempt_us;
	d->enq_us = req->enq_us;
	d->slept_us = req->slept_us;
	d->like = req->like;
	d->tries = req->tries;
	d->kind = req->kind;
	d->orphan = req->orphan;
	d->path = req->path;
	d->gen = req->gen;
}

static inline struct sim_req sim_ring_pop(struct sim_ring *q)   /* q->n > 0 */
{
	struct sim_req req;

	assert(q->n > 0);
	req = q->r[q->head];
	q->head = (q->head + 1) & (q->cap - 1);
	q->n--;
	return req;
}

static inline const struct sim_req *sim_ring_at(const struct sim_ring *q, size_t i)
{
	assert(i < q->n);
	return &q->r[(q->head + i) & (q->cap - 1)];
}

/* Take the i-th oldest out of the queue (i < q->n), keeping the order of
 * the rest; costs the shorter side's length. */
struct sim_req sim_ring_remove(struct sim_ring *q, size_t i);

/* The same, writable: valid until the next push. */
static inline struct sim_req *sim_ring_at_mut(struct sim_ring *q, size_t i)
{
	assert(i < q->n);
	return &q->r[(q->head + i) & (q->cap - 1)];
}

struct sim_run {
	struct sim_ring r;
	uint16_t gen;          /* its requests' gen */
};

struct sim_queue {
	size_t n;              /* requests in all runs */
	struct sim_run *run;   /* oldest first; none empty but a sole one */
	size_t nrun, cap;
};

void sim_queue_init(struct sim_queue *q);
void sim_queue_free(struct sim_queue *q);
/* Start a run for gen after the last (or relabel an empty sole run). */
void sim_queue_open(struct sim_queue *q, uint16_t gen);
/* Drop run k, which is empty, unless it is the only one. */
void sim_queue_close(struct sim_queue *q, size_t k);
/* The i-th oldest (i < q->n) when the runs are more than one. */
struct sim_req *sim_queue_find(const struct sim_queue *q, size_t i);
/* Take the i-th oldest out (i < q->n), keeping the order of the rest. */
struct sim_req sim_queue_remove(struct sim_queue *q, size_t i);

static inline void sim_queue_push(struct sim_queue *q, const struct sim_req *req)
{
	if (q->nrun == 0 || q->run[q->nrun - 1].gen != req->gen)
		sim_queue_open(q, req->gen);
	sim_ring_push(&q->run[q->nrun - 1].r, req);
	q->n++;
}

/* The head of run k (k < q->nrun, the run not empty). */
static inline struct sim_req sim_queue_pop_run(struct sim_queue *q, size_t k)
{
	struct sim_req req = sim_ring_pop(&q->run[k].r);

	q->n--;
	if (q->run[k].r.n == 0 && q->nrun > 1)
		sim_queue_close(q, k);
	return req;
}

static inline struct sim_req sim_queue_pop(struct sim_queue *q)   /* q->n > 0 */
{
	return sim_queue_pop_run(q, 0);
}

static inline const struct sim_req *sim_queue_at(const struct sim_queue *q, size_t i)
{
	assert(i < q->n);
	return q->nrun == 1 ? sim_ring_at(&q->run[0].r, i) : sim_queue_find(q, i);
}

/* The same, writable: valid until the next push or pop. */
static inline struct sim_req *sim_queue_at_mut(struct sim_queue *q, size_t i)
{
	assert(i < q->n);
	return q->nrun == 1 ? sim_ring_at_mut(&q->run[0].r, i) : sim_queue_find(q, i);
}

#endif
