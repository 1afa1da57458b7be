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

#endif
