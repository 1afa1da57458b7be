/*
 * test_ring.c: the FIFO keeps order across wrap-around and growth, and
 * taking one out of the middle (a herd's winner) keeps the others' order;
 * a queue keeps one run per generation, in order, and a later run's head
 * leaves without moving the rest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/sim_impl.h"       /* struct sim_req, then the ring */

static struct sim_req req(int64_t t)
{
	struct sim_req r = { t, t, t, t, 0, 1, SIM_REQ_COUNTER, 0, SIM_NAIVE, 0 };
	return r;
}

static void sim_ring_pop__fifo_across_wrap_and_growth(void **state)
{
	struct sim_ring q;
	int64_t in = 0, out = 0;

	(void)state;
	sim_ring_init(&q);
	/* Push three, pop two, so the head walks around while the ring grows. */
	for (int round = 0; round < 20000; round++) {
		for (int k = 0; k < 3; k++) {
			struct sim_req r = req(in++);
			sim_ring_push(&q, &r);
		}
		for (int k = 0; k < 2; k++)
			assert_int_equal(sim_ring_pop(&q).enq_us, out++);
		assert_int_equal(sim_ring_at(&q, 0)->enq_us, out);
		assert_int_equal(sim_ring_at(&q, q.n - 1)->enq_us, in - 1);
	}
	while (q.n)
		assert_int_equal(sim_ring_pop(&q).enq_us, out++);
	assert_int_equal(out, in);
	sim_ring_free(&q);
}

/* Remove from the older and the newer half of a ring whose head has
 * wrapped: what comes out is the i-th, and the rest stay in order. */
static void sim_ring_remove__takes_the_ith_and_keeps_the_order(void **state)
{
	struct sim_ring q;
	int64_t want[40];
	size_t n = 0;

	(void)state;
	sim_ring_init(&q);
	for (int k = 0; k < 10; k++) {             /* walk the head past 0 */
		struct sim_req r = req(-1);
		sim_ring_push(&q, &r);
		sim_ring_pop(&q);
	}
	for (int64_t t = 0; t < 12; t++) {
		struct sim_req r = req(t);
		sim_ring_push(&q, &r);
		want[n++] = t;
	}
	const size_t picks[] = { 2, 9, 0, 8, 4 };  /* older half, newer half, ends */
	for (size_t p = 0; p < sizeof picks / sizeof picks[0]; p++) {
		size_t i = picks[p];
		assert_int_equal(sim_ring_remove(&q, i).enq_us, want[i]);
		memmove(&want[i], &want[i + 1], (n - i - 1) * sizeof want[0]);
		n--;
		assert_int_equal(q.n, n);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(sim_ring_at(&q, k)->enq_us, want[k]);
	}
	sim_ring_free(&q);
}

/* Generations 0, 0, 1, 1, 1, 2, then 2 again: three runs. In order by
 * index; run 1's head (the third) leaves first, then the oldest; a run
 * emptied goes, and the rest come out in push order. */
static void sim_queue__runs_by_generation_in_push_order(void **state)
{
	static const int gens[] = { 0, 0, 1, 1, 1, 2, 2 };
	struct sim_queue q;

	(void)state;
	sim_queue_init(&q);
	for (int t = 0; t < 7; t++) {
		struct sim_req r = req(t);
		r.gen = (uint16_t)gens[t];
		sim_queue_push(&q, &r);
	}
	assert_int_equal(q.n, 7);
	assert_int_equal(q.nrun, 3);
	for (size_t i = 0; i < q.n; i++)
		assert_int_equal(sim_queue_at(&q, i)->enq_us, (int64_t)i);
	assert_int_equal(sim_queue_pop_run(&q, 1).enq_us, 2);
	assert_int_equal(sim_queue_pop(&q).enq_us, 0);
	assert_int_equal(sim_queue_remove(&q, 1).enq_us, 3);   /* 1, [3], 4, 5, 6 */
	assert_int_equal(sim_queue_pop(&q).enq_us, 1);         /* run 0 gone */
	assert_int_equal(q.nrun, 2);
	assert_int_equal(sim_queue_at(&q, 1)->enq_us, 5);
	assert_int_equal(sim_queue_pop(&q).enq_us, 4);
	assert_int_equal(q.nrun, 1);
	assert_int_equal(sim_queue_pop(&q).enq_us, 5);
	assert_int_equal(sim_queue_pop(&q).enq_us, 6);
	assert_int_equal(q.n, 0);
	assert_int_equal(q.nrun, 1);   /* the last run keeps its room */
	sim_queue_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_ring_pop__fifo_across_wrap_and_growth),
		cmocka_unit_test(sim_ring_remove__takes_the_ith_and_keeps_the_order),
		cmocka_unit_test(sim_queue__runs_by_generation_in_push_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
