/* sim_ring.c: a power-of-two ring of struct sim_req, doubled when full,
 * and queues of such rings, one per generation (see sim_ring.h). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/sim_impl.h"
#include "engine/xmalloc.h"

void sim_ring_init(struct sim_ring *q)
{
	q->r = NULL;
	q->head = q->n = q->cap = 0;
}

void sim_ring_free(struct sim_ring *q)
{
	free(q->r);
	sim_ring_init(q);
}

/* Rings past this size sit on 2 MB boundaries and ask for huge pages:
 * an overloaded row's queue of millions then costs a few dozen page
 * faults instead of tens of thousands. */
#define HUGE_BYTES ((size_t)2 << 20)

static struct sim_req *ring_alloc(size_t cap)
{
	size_t bytes = cap * sizeof(struct sim_req);
	void *p;

	if (bytes < HUGE_BYTES)
		return xmalloc(bytes);
	/* aligned_alloc wants a multiple of the alignment: a 40-byte
	 * element makes a power-of-two ring one only from 2^18 on. */
	bytes = (bytes + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
	p = aligned_alloc(HUGE_BYTES, bytes);
	if (!p)
		return xmalloc(bytes);
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);          /* a hint: failure is fine */
#endif
	return p;
}

void sim_ring_grow(struct sim_ring *q)
{
	size_t old = q->cap, cap = old ? 2 * old : 16;
	struct sim_req *r = ring_alloc(cap);
	size_t first = old - q->head;              /* elements before the wrap */

	/* Unwrap into the new ring: the oldest goes to index 0. */
	if (q->n) {
		if (first > q->n)
			first = q->n;
		memcpy(r, q->r + q->head, first * sizeof *r);
		memcpy(r + first, q->r, (q->n - first) * sizeof *r);
	}
	free(q->r);
	q->r = r;
	q->cap = cap;
	q->head = 0;
}

struct sim_req sim_ring_remove(struct sim_ring *q, size_t i)
{
	size_t mask = q->cap - 1;
	struct sim_req out = *sim_ring_at(q, i);

	if (i < q->n / 2) {
		/* the older side moves up one, and the head with it */
		for (size_t j = i; j > 0; j--)
			q->r[(q->head + j) & mask] = q->r[(q->head + j - 1) & mask];
		q->head = (q->head + 1) & mask;
	} else {
		for (size_t j = i; j + 1 < q->n; j++)
			q->r[(q->head + j) & mask] = q->r[(q->head + j + 1) & mask];
	}
	q->n--;
	return out;
}

void sim_queue_init(struct sim_queue *q)
{
	q->n = 0;
	q->run = NULL;
	q->nrun = q->cap = 0;
}

void sim_queue_free(struct sim_queue *q)
{
	for (size_t k = 0; k < q->nrun; k++)
		sim_ring_free(&q->run[k].r);
	free(q->run);
	sim_queue_init(q);
}

void sim_queue_open(struct sim_queue *q, uint16_t gen)
{
	if (q->nrun == 1 && q->run[0].r.n == 0) {
		q->run[0].gen = gen;      /* its room is reused */
		return;
	}
	if (q->nrun == q->cap) {
		q->cap = q->cap ? 2 * q->cap : 1;
		q->run = xrealloc(q->run, q->cap * sizeof *q->run);
	}
	sim_ring_init(&q->run[q->nrun].r);
	q->run[q->nrun++].gen = gen;
}

void sim_queue_close(struct sim_queue *q, size_t k)
{
	assert(q->run[k].r.n == 0);
	if (q->nrun == 1)
		return;
	sim_ring_free(&q->run[k].r);
	memmove(&q->run[k], &q->run[k + 1], (q->nrun - k - 1) * sizeof *q->run);
	q->nrun--;
}

struct sim_req *sim_queue_find(const struct sim_queue *q, size_t i)
{
	size_t k = 0;

	assert(i < q->n);
	const struct sim_ring *r;

	assert(i < q->n);
	while (i >= q->run[k].r.n)
		i -= q->run[k++].r.n;
	r = &q->run[k].r;
	return &r->r[(r->head + i) & (r->cap - 1)];
}

struct sim_req sim_queue_remove(struct sim_queue *q, size_t i)
{
	size_t k = 0;
	struct sim_req out;

	assert(i < q->n);
	while (i >= q->run[k].r.n)
		i -= q->run[k++].r.n;
	out = sim_ring_remove(&q->run[k].r, i);
	q->n--;
	if (q->run[k].r.n == 0)
		sim_queue_close(q, k);
	return out;
}
