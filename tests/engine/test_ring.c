/*
 * test_ring.c: the FIFO keeps order across wrap-around and growth, and
 * taking one out of the middle (a herd's winner) keeps the others' order.
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
	struct sim_req r = { t, t, t, t, 0, 1, SIM_REQ_COUNTER, 0, SIM_NAIVE };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_ring_pop__fifo_across_wrap_and_growth),
		cmocka_unit_test(sim_ring_remove__takes_the_ith_and_keeps_the_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
