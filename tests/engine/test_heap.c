/*
 * test_heap.c: the event queue pops in (time, push order), grows, and
 * survives a random workload checked against a sorted reference; a FIFO
 * beside it takes only events in order, and the two together pop as the
 * heap alone would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/sim_fifo.h"
#include "engine/sim_heap.h"
#include "engine/sim_rng.h"

static void sim_heap_pop__orders_by_time(void **state)
{
	struct sim_heap h;
	int64_t times[] = { 50, 10, 40, 20, 30, 0, 60 };

	(void)state;
	sim_heap_init(&h);
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
		sim_heap_push(&h, times[i], 0, (uint32_t)i);
	for (int64_t want = 0; want <= 60; want += 10)
		assert_int_equal(sim_heap_pop(&h).t, want);
	assert_int_equal(h.n, 0);
	sim_heap_free(&h);
}

static void sim_heap_pop__ties_in_push_order(void **state)
{
	struct sim_heap h;

	(void)state;
	sim_heap_init(&h);
	for (uint32_t i = 0; i < 100; i++)
		sim_heap_push(&h, 7, 0, i);
	sim_heap_push(&h, 3, 0, 1000);
	assert_int_equal(sim_heap_pop(&h).arg, 1000);
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(sim_heap_pop(&h).arg, i);
	sim_heap_free(&h);
}

static int cmp(const void *a, const void *b)
{
	const struct sim_event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void sim_heap_push__grows_and_matches_sort(void **state)
{
	enum { N = 100000 };
	struct sim_heap h;
	struct sim_rng r;
	struct sim_event *ref = malloc(N * sizeof *ref);

	(void)state;
	sim_heap_init(&h);
	sim_rng_seed(&r, 7);
	for (uint32_t i = 0; i < N; i++) {
		int64_t t = (int64_t)sim_rng_below(&r, 1000);   /* many ties */
		ref[i] = (struct sim_event){ t, i, 0, i };
		sim_heap_push(&h, t, 0, i);
	}
	assert_true(h.cap >= N);
	qsort(ref, N, sizeof *ref, cmp);
	for (uint32_t i = 0; i < N; i++) {
		struct sim_event e = sim_heap_pop(&h);
		assert_int_equal(e.t, ref[i].t);
		assert_int_equal(e.arg, ref[i].arg);
	}
	free(ref);
	sim_heap_free(&h);
}

static void sim_heap_pop__interleaved_with_push(void **state)
{
	struct sim_heap h;
	struct sim_rng r;
	int64_t now = 0;

	(void)state;
	sim_heap_init(&h);
	sim_rng_seed(&r, 3);
	sim_heap_push(&h, 0, 0, 0);
	/* A simulation's pattern: pop the earliest, push a few later ones. */
	for (int i = 0; i < 50000; i++) {
		struct sim_event e = sim_heap_pop(&h);
		assert_true(e.t >= now);
		now = e.t;
		for (int k = (int)sim_rng_below(&r, 3); k >= 0; k--)
			if (h.n < 1000)
				sim_heap_push(&h, now + (int64_t)sim_rng_below(&r, 100), 0, 0);
		if (!h.n)
			sim_heap_push(&h, now, 0, 0);
	}
	sim_heap_free(&h);
}

static void sim_fifo_push__refuses_an_earlier_event(void **state)
{
	struct sim_fifo f = { 0 };

	(void)state;
	assert_true(sim_fifo_push(&f, 10, 0, 0, 1));
	assert_true(sim_fifo_push(&f, 10, 1, 0, 2));     /* a tie is in order */
	assert_false(sim_fifo_push(&f, 9, 2, 0, 3));
	assert_int_equal(f.n, 2);
	assert_true(sim_fifo_push(&f, 20, 3, 0, 4));
	assert_int_equal(sim_fifo_pop(&f).arg, 1);
	assert_int_equal(sim_fifo_pop(&f).arg, 2);
	assert_int_equal(sim_fifo_pop(&f).arg, 4);
	assert_int_equal(f.n, 0);
	free(f.ev);
}

/* The engine's pattern: most delays one constant, some shorter; what the
 * FIFO refuses goes to the heap. Popping the earlier of the two heads
 * must give every event in (time, push order), across the ring's wrap
 * and growth. */
static void sim_fifo_pop__with_heap_matches_heap_alone(void **state)
{
	struct sim_heap h, ref;
	struct sim_fifo f = { 0 };
	struct sim_rng r;
	int64_t now = 0;
	uint32_t id = 0;
	int from_fifo = 0;

	(void)state;
	sim_heap_init(&h);
	sim_heap_init(&ref);
	sim_rng_seed(&r, 11);
	for (int i = 0; i < 200000; i++) {
		struct sim_event e, want;
		if ((f.n + h.n < 5000 && sim_rng_below(&r, 2)) || f.n + h.n == 0) {
			int64_t t = now + (sim_rng_below(&r, 8) ? 100 : (int64_t)sim_rng_below(&r, 100));
			if (sim_fifo_push(&f, t, h.seq, 0, id))
				h.seq++;
			else
				sim_heap_push(&h, t, 0, id);
			sim_heap_push(&ref, t, 0, id++);
			continue;
		}
		if (f.n && (!h.n || sim_fifo_head(&f)->t < h.ev[0].t ||
		            (sim_fifo_head(&f)->t == h.ev[0].t &&
		             sim_fifo_head(&f)->seq < h.ev[0].seq))) {
			e = sim_fifo_pop(&f);
			from_fifo++;
		} else {
			e = sim_heap_pop(&h);
		}
		want = sim_heap_pop(&ref);
		assert_int_equal(e.t, want.t);
		assert_int_equal(e.arg, want.arg);
		now = e.t;
	}
	assert_true(from_fifo > 10000);     /* the FIFO did carry most */
	free(f.ev);
	sim_heap_free(&h);
	sim_heap_free(&ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_heap_pop__orders_by_time),
		cmocka_unit_test(sim_heap_pop__ties_in_push_order),
		cmocka_unit_test(sim_heap_push__grows_and_matches_sort),
		cmocka_unit_test(sim_heap_pop__interleaved_with_push),
		cmocka_unit_test(sim_fifo_push__refuses_an_earlier_event),
		cmocka_unit_test(sim_fifo_pop__with_heap_matches_heap_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
