/*
 * test_hist.c: bucket boundaries, percentiles within the bucket error,
 * exact mean and max, and a reset that empties only what was used.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <cmocka.h>

#include "engine/sim_hist.h"

static void sim_hist_bucket__monotone_and_contains(void **state)
{
	(void)state;
	int prev = -1;
	for (int64_t v = 0; v < 5000000; v = v < 300 ? v + 1 : v + v / 97) {
		int b = sim_hist_bucket(v);
		assert_true(b >= prev);
		assert_true(b < SIM_HIST_BUCKETS);
		assert_true(sim_hist_bucket_low(b) <= v);
		assert_true(sim_hist_bucket_low(b + 1) > v);
		prev = b;
	}
	assert_true(sim_hist_bucket(INT64_MAX) < SIM_HIST_BUCKETS);
}

static void sim_hist_quantile__uniform_within_one_percent(void **state)
{
	struct sim_hist *h = malloc(sizeof *h);

	(void)state;
	sim_hist_init(h);
	for (int64_t v = 1; v <= 100000; v++)
		sim_hist_add(h, v);
	assert_int_equal(h->count, 100000);
	assert_int_equal(h->max, 100000);
	assert_true(fabs(sim_hist_mean(h) - 50000.5) < 1e-6);
	assert_true(fabs(sim_hist_quantile(h, 0.50) / 50000 - 1) < 0.01);
	assert_true(fabs(sim_hist_quantile(h, 0.99) / 99000 - 1) < 0.01);
	assert_true(sim_hist_quantile(h, 1.0) <= 100000);
	free(h);
}

static void sim_hist_quantile__small_values_exact(void **state)
{
	struct sim_hist *h = malloc(sizeof *h);

	(void)state;
	sim_hist_init(h);
	assert_true(sim_hist_quantile(h, 0.5) == 0);
	sim_hist_add(h, 3);
	sim_hist_add(h, 5);
	sim_hist_add(h, 100);
	sim_hist_add(h, -4);           /* counts as 0 */
	assert_true(sim_hist_quantile(h, 0.25) == 0);
	assert_true(sim_hist_quantile(h, 0.5) == 3);
	assert_true(sim_hist_quantile(h, 0.75) == 5);
	assert_true(sim_hist_quantile(h, 1.0) == 100);
	free(h);
}

static void sim_hist_reset__empties(void **state)
{
	struct sim_hist *h = malloc(sizeof *h);

	(void)state;
	sim_hist_init(h);
	sim_hist_add(h, 1000);
	sim_hist_add(h, 123456);
	sim_hist_reset(h);
	assert_int_equal(h->count, 0);
	for (int b = 0; b < SIM_HIST_BUCKETS; b++)
		assert_int_equal(h->b[b], 0);
	sim_hist_add(h, 7);
	assert_true(sim_hist_quantile(h, 0.99) == 7);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_hist_bucket__monotone_and_contains),
		cmocka_unit_test(sim_hist_quantile__uniform_within_one_percent),
		cmocka_unit_test(sim_hist_quantile__small_values_exact),
		cmocka_unit_test(sim_hist_reset__empties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
