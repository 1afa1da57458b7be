/*
 * sim_fifo.h: a FIFO of events that are pushed in time order, beside the
 * event heap.
 *
 * Most of the engine's events come after a fixed delay: a constant lock
 * hold, an insert, another endpoint's call. Pushed one after another at
 * a clock that only moves forward, such events are already sorted by
 * (time, sequence), so a FIFO keeps them in order at O(1) a push and a
 * pop, where the heap pays a sift each way. sim_fifo_push() appends only
 * when the event is not earlier than the FIFO's last one and refuses
 * otherwise (an exponential hold, say); the caller then gives it to the
 * heap. The next event is the earliest of the FIFOs' heads, the timers
 * and the heap's top, so the order is exactly the heap's alone.
 *
 * Interface:
 *   struct sim_fifo f = {0};
 *   if (!sim_fifo_push(&f, t, seq, type, arg)) ... push it elsewhere;
 *   if (f.n) { sim_fifo_head(&f)->t ...; struct sim_event e = sim_fifo_pop(&f); }
 *   free(f.ev) when done.
 */
#ifndef HOTROW_SIM_FIFO_H
#define HOTROW_SIM_FIFO_H

#include <assert.h>
#include <stdbool.h>
#include "engine/sim_heap.h"

struct sim_fifo {
	struct sim_event *ev;     /* a ring: the oldest at ev[head] */
	uint32_t head, n, cap;
};

/* The ring's room doubled, its events moved to the front in order. */
void sim_fifo_grow(struct sim_fifo *l);

static inline const struct sim_event *sim_fifo_head(const struct sim_fifo *l)
{
	assert(l->n > 0);
	return &l->ev[l->head];
}

/* Append (t, seq, type, arg) if t is not before the last event's time;
 * false, and nothing changed, if it is. seq must be later than every seq
 * in the FIFO. */
static inline bool sim_fifo_push(struct sim_fifo *l, int64_t t, uint64_t seq,
                                 uint32_t type, uint32_t arg)
{
	uint32_t i;

	if (l->n) {
		uint32_t last = l->head + l->n - 1;
		if (last >= l->cap)
			last -= l->cap;
		if (l->ev[last].t > t)
			return false;
	}
	if (l->n == l->cap)
		sim_fifo_grow(l);
	i = l->head + l->n;
	if (i >= l->cap)
		i -= l->cap;
	l->ev[i] = (struct sim_event){ t, seq, type, arg };
	l->n++;
	return true;
}

static inline struct sim_event sim_fifo_pop(struct sim_fifo *l)
{
	struct sim_event e = *sim_fifo_head(l);

	l->n--;
	if (++l->head == l->cap)
		l->head = 0;
	return e;
}

#endif
