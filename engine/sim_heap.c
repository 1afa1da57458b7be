/* sim_heap.c: a 4-ary min-heap of events keyed by (t, seq). */
#include <assert.h>
#include <stdlib.h>

#include "engine/sim_heap.h"
#include "engine/sim_fifo.h"
#include "engine/xmalloc.h"

static int before(const struct sim_event *a, const struct sim_event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void sim_heap_init(struct sim_heap *h)
{
	h->ev = NULL;
	h->n = h->cap = 0;
	h->seq = 0;
}

void sim_heap_free(struct sim_heap *h)
{
	free(h->ev);
	sim_heap_init(h);
}

void sim_heap_push(struct sim_heap *h, int64_t t, uint32_t type, uint32_t arg)
{
	struct sim_event e = { t, h->seq++, type, arg };
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->ev = xrealloc(h->ev, h->cap * sizeof *h->ev);
	}
	/* Sift up: move parents down until e fits. */
	i = h->n++;
	while (i > 0) {
		size_t p = (i - 1) / 4;
		if (!before(&e, &h->ev[p]))
			break;
		h->ev[i] = h->ev[p];
		i = p;
	}
	h->ev[i] = e;
}

struct sim_event sim_heap_pop(struct sim_heap *h)
{
	struct sim_event top, last;
	size_t i = 0, n;

	assert(h->n > 0);
	top = h->ev[0];
	last = h->ev[--h->n];
	n = h->n;
	/* Sift down: move the smallest child up until last fits. */
	for (;;) {
		size_t c = 4 * i + 1, best, end;
		if (c >= n)
			break;
		best = c;
		end = c + 4 < n ? c + 4 : n;
		for (size_t k = c + 1; k < end; k++)
			if (before(&h->ev[k], &h->ev[best]))
				best = k;
		if (!before(&h->ev[best], &last))
			break;
		h->ev[i] = h->ev[best];
		i = best;
	}
	if (n > 0)
		h->ev[i] = last;
	return top;
}

void sim_fifo_grow(struct sim_fifo *l)
{
	uint32_t cap = l->cap ? 2 * l->cap : 64;
	struct sim_event *ev = xmalloc(cap * sizeof *ev);

	for (uint32_t k = 0, i = l->head; k < l->n; k++) {
		ev[k] = l->ev[i];
		if (++i == l->cap)
			i = 0;
	}
	free(l->ev);
	l->ev = ev;
	l->head = 0;
	l->cap = cap;
}
