/*
 * test_hist.c: util/hist.h, the one histogram of the engine, the load
 * driver and the lab drivers: bucket boundaries, percentiles within the
 * bucket error, exact mean and max, a reset that empties only what was
 * used, and per-thread histograms merged into the one they would have
 * been.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "util/hist.h"

static void util_hist_bucket__monotone_and_contains(void **state)
{
	(void)state;
	int prev = -1;
	for (int64_t v = 0; v < 5000000; v = v < 300 ? v + 1 : v + v / 97) {
		int b = util_hist_bucket(v);
		assert_true(b >= prev);
		assert_true(b < UTIL_HIST_BUCKETS);
		assert_true(util_hist_bucket_low(b) <= v);
		assert_true(util_hist_bucket_low(b + 1) > v);
		prev = b;
	}
	assert_true(util_hist_bucket(INT64_MAX) < UTIL_HIST_BUCKETS);
}

static void util_hist_quantile__uniform_within_one_percent(void **state)
{
	struct util_hist *h = malloc(sizeof *h);

	(void)state;
	util_hist_init(h);
	for (int64_t v = 1; v <= 100000; v++)
		util_hist_add(h, v);
	assert_int_equal(h->count, 100000);
	assert_int_equal(h->max, 100000);
	assert_true(fabs(util_hist_mean(h) - 50000.5) < 1e-6);
	assert_true(fabs(util_hist_quantile(h, 0.50) / 50000 - 1) < 0.01);
	assert_true(fabs(util_hist_quantile(h, 0.99) / 99000 - 1) < 0.01);
	assert_true(util_hist_quantile(h, 1.0) <= 100000);
	free(h);
}

static void util_hist_quantile__small_values_exact(void **state)
{
	struct util_hist *h = malloc(sizeof *h);

	(void)state;
	util_hist_init(h);
	assert_true(util_hist_quantile(h, 0.5) == 0);
	util_hist_add(h, 3);
	util_hist_add(h, 5);
	util_hist_add(h, 100);
	util_hist_add(h, -4);           /* counts as 0 */
	assert_true(util_hist_quantile(h, 0.25) == 0);
	assert_true(util_hist_quantile(h, 0.5) == 3);
	assert_true(util_hist_quantile(h, 0.75) == 5);
	assert_true(util_hist_quantile(h, 1.0) == 100);
	free(h);
}

static void util_hist_reset__empties(void **state)
{
	struct util_hist *h = malloc(sizeof *h);

	(void)state;
	util_hist_init(h);
	util_hist_add(h, 1000);
	util_hist_add(h, 123456);
	util_hist_reset(h);
	assert_int_equal(h->count, 0);
	for (int b = 0; b < UTIL_HIST_BUCKETS; b++)
		assert_int_equal(h->b[b], 0);
	util_hist_add(h, 7);
	assert_true(util_hist_quantile(h, 0.99) == 7);
	free(h);
}

/* The rank-th value's bucket, by brute force: its middle, clamped. */
static double brute_quantile(int64_t *v, int n, double q)
{
	int64_t lo, w;
	double mid;
	int rank, b, g;

	for (int i = 1; i < n; i++)                 /* sort */
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int64_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	rank = (int)(q * n + 0.999999);
	if (rank < 1)
		rank = 1;
	b = util_hist_bucket(v[rank - 1]);
	lo = util_hist_bucket_low(b);
	g = b >> UTIL_HIST_SUB_BITS;
	w = g == 0 ? 1 : (int64_t)1 << (g - 1);
	mid = w == 1 ? (double)lo : (double)lo + (double)(w - 1) / 2.0;
	if (mid < (double)v[0])
		mid = (double)v[0];
	return mid > (double)v[n - 1] ? (double)v[n - 1] : mid;
}

/* A few values over many octaves (one tick's worth) take the short path:
 * the same answers as the sweep, and a reset that leaves nothing behind. */
static void util_hist_quantile__few_values_same_as_sweep(void **state)
{
	static const double qs[] = { 0, 0.1, 0.5, 0.9, 0.99, 1 };
	struct util_hist h;
	int64_t v[40], copy[40];
	uint64_t x = 12345;

	(void)state;
	util_hist_init(&h);
	for (int round = 0; round < 3; round++) {
		int n = round == 2 ? 40 : 10 + 7 * round;
		for (int i = 0; i < n; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			v[i] = (int64_t)((x >> 33) % 100000000) >> (x >> 60);   /* spread wide */
			util_hist_add(&h, v[i]);
		}
		for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
			memcpy(copy, v, sizeof v);
			assert_true(util_hist_quantile(&h, qs[k]) == brute_quantile(copy, n, qs[k]));
		}
		util_hist_reset(&h);
		for (int b = 0; b < UTIL_HIST_BUCKETS; b++)
			assert_int_equal(h.b[b], 0);
	}
}

/* The same values added to one histogram, or spread over several and
 * merged, give the same histogram: what kit/load does with its threads'. */
static void util_hist_merge__same_as_one(void **state)
{
	static const double qs[] = { 0, 0.5, 0.9, 0.99, 1 };
	static const int spread[] = { 0, 3, 30, 5000 };  /* values per part */
	enum { PARTS = sizeof spread / sizeof spread[0] };
	struct util_hist *one = malloc(sizeof *one), *all = malloc(sizeof *all);
	struct util_hist *part = malloc(PARTS * sizeof *part);
	uint64_t x = 99;

	(void)state;
	for (int round = 0; round < 2; round++) {   /* all parts, then the small ones */
		int parts = round == 0 ? PARTS : 3;
		util_hist_init(one);
		util_hist_init(all);
		for (int p = 0; p < parts; p++) {
			util_hist_init(&part[p]);
			for (int i = 0; i < spread[p]; i++) {
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				int64_t v = (int64_t)((x >> 33) % 50000000) >> (x >> 60);
				util_hist_add(one, v);
				util_hist_add(&part[p], v);
			}
			util_hist_merge(all, &part[p]);
		}
		assert_int_equal(all->count, one->count);
		assert_int_equal(all->min, one->min);
		assert_int_equal(all->max, one->max);
		assert_true(fabs(util_hist_mean(all) - util_hist_mean(one)) <= 1e-9 * util_hist_mean(one));
		for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++)
			assert_true(util_hist_quantile(all, qs[k]) == util_hist_quantile(one, qs[k]));
		util_hist_reset(all);                   /* few[] or the range: all gone */
		for (int b = 0; b < UTIL_HIST_BUCKETS; b++)
			assert_int_equal(all->b[b], 0);
	}
	free(part);
	free(all);
	free(one);
}

/* Nanoseconds of a long call (hours) keep their 1 %: no clamp at the top. */
static void util_hist_quantile__hours_in_ns_within_one_percent(void **state)
{
	struct util_hist *h = malloc(sizeof *h);
	const int64_t hour_ns = 3600LL * 1000000000LL;

	(void)state;
	util_hist_init(h);
	util_hist_add(h, 1000);
	for (int i = 0; i < 9; i++)
		util_hist_add(h, 20 * hour_ns);
	assert_true(fabs(util_hist_quantile(h, 0.5) / (20.0 * hour_ns) - 1) < 0.01);
	assert_true(fabs(util_hist_quantile(h, 0.1) / 1000 - 1) < 0.01);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(util_hist_bucket__monotone_and_contains),
		cmocka_unit_test(util_hist_quantile__uniform_within_one_percent),
		cmocka_unit_test(util_hist_quantile__small_values_exact),
		cmocka_unit_test(util_hist_reset__empties),
		cmocka_unit_test(util_hist_quantile__few_values_same_as_sweep),
		cmocka_unit_test(util_hist_merge__same_as_one),
		cmocka_unit_test(util_hist_quantile__hours_in_ns_within_one_percent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
