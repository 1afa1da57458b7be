/*
 * test_rng.c: the generator is seeded and repeatable, its draws are in
 * range, and their means are what they claim.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "engine/sim_rng.h"

static void sim_rng_next__same_seed_same_stream(void **state)
{
	struct sim_rng a, b, c;
	int differ = 0;

	(void)state;
	sim_rng_seed(&a, 42);
	sim_rng_seed(&b, 42);
	sim_rng_seed(&c, 43);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = sim_rng_next(&a);
		assert_true(x == sim_rng_next(&b));
		differ += x != sim_rng_next(&c);
	}
	assert_true(differ > 990);
}

static void sim_rng_seed__zero_is_a_good_seed(void **state)
{
	struct sim_rng r;
	uint64_t or = 0;

	(void)state;
	sim_rng_seed(&r, 0);
	for (int i = 0; i < 64; i++)
		or |= sim_rng_next(&r);
	assert_true(or == UINT64_MAX);
}

static void sim_rng_unit__in_range_mean_half(void **state)
{
	struct sim_rng r;
	double sum = 0;
	enum { N = 200000 };

	(void)state;
	sim_rng_seed(&r, 1);
	for (int i = 0; i < N; i++) {
		double u = sim_rng_unit(&r);
		assert_true(u >= 0 && u < 1);
		sum += u;
	}
	assert_true(fabs(sum / N - 0.5) < 0.005);
}

static void sim_rng_below__uniform_over_n(void **state)
{
	struct sim_rng r;
	int hits[7] = { 0 };
	enum { N = 70000 };

	(void)state;
	sim_rng_seed(&r, 9);
	for (int i = 0; i < N; i++) {
		uint64_t k = sim_rng_below(&r, 7);
		assert_true(k < 7);
		hits[k]++;
	}
	for (int k = 0; k < 7; k++)
		assert_true(hits[k] > 9500 && hits[k] < 10500);
	assert_int_equal(sim_rng_below(&r, 1), 0);
}

static void sim_rng_exp__mean_and_variance(void **state)
{
	struct sim_rng r;
	double sum = 0, sq = 0;
	enum { N = 400000 };

	(void)state;
	sim_rng_seed(&r, 5);
	for (int i = 0; i < N; i++) {
		double x = sim_rng_exp(&r, 2.0);
		assert_true(x >= 0 && isfinite(x));
		sum += x;
		sq += x * x;
	}
	/* Exponential with mean 2: variance 4. */
	assert_true(fabs(sum / N - 2.0) < 0.02);
	assert_true(fabs(sq / N - (sum / N) * (sum / N) - 4.0) < 0.1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_rng_next__same_seed_same_stream),
		cmocka_unit_test(sim_rng_seed__zero_is_a_good_seed),
		cmocka_unit_test(sim_rng_unit__in_range_mean_half),
		cmocka_unit_test(sim_rng_below__uniform_over_n),
		cmocka_unit_test(sim_rng_exp__mean_and_variance),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
