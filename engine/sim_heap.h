/*
 * sim_heap.h: the event queue, a 4-ary min-heap ordered by (time, sequence).
 *
 * Every push gets the next sequence number, so two events at the same
 * microsecond come out in the order they were pushed: ties are stable and
 * a run never depends on how the heap happens to shuffle equal keys.
 * A 4-ary heap is shallower than a binary one and touches fewer cache
 * lines per pop, which matters when one run handles millions of events.
 *
 * Interface:
 *   struct sim_heap h; sim_heap_init(&h);
 *   sim_heap_push(&h, t_us, type, arg);       grows as needed (xmalloc)
 *   if (h.n) { struct sim_event e = sim_heap_pop(&h); ... }
 *   sim_heap_top(&h) peeks (h.n must be > 0);  sim_heap_free(&h) when done.
 */
#ifndef HOTROW_SIM_HEAP_H
#define HOTROW_SIM_HEAP_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

struct sim_event {
	int64_t t;        /* when, in simulated microseconds */
	uint64_t seq;     /* push order, breaks ties */
	uint32_t type;    /* what happens (the model's enum) */
	uint32_t arg;     /* which row, epoch, ... (the model's meaning) */
};

struct sim_heap {
	struct sim_event *ev;
	size_t n, cap;
	uint64_t seq;     /* next sequence number */
};

void sim_heap_init(struct sim_heap *h);
void sim_heap_free(struct sim_heap *h);
void sim_heap_push(struct sim_heap *h, int64_t t, uint32_t type, uint32_t arg);
/* Remove and return the earliest event; h->n must be > 0. */
struct sim_event sim_heap_pop(struct sim_heap *h);
static inline const struct sim_event *sim_heap_top(const struct sim_heap *h)
{
	assert(h->n > 0);
	return &h->ev[0];
}

#endif
