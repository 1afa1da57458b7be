/*
 * test_ring.c: the FIFO keeps order across wrap-around and growth.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/sim_impl.h"       /* struct sim_req, then the ring */

static struct sim_req req(int64_t t)
{
	struct sim_req r = { t, t, t, 0, 1, SIM_REQ_COUNTER, 0 };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_ring_pop__fifo_across_wrap_and_growth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
