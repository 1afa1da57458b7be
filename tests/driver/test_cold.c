/*
 * test_cold.c: drv_cold_fit(), the cold-core probe's points turned into
 * the engine's three numbers (labs/driver/server.h). test_predict.c takes
 * them into a prediction and its sim_args.
 *
 * The fit is checked on points made from a known line, at each edge: no
 * cold point, one, a threshold below the back-to-back request, noise
 * under the floor, a falling line, and a line whose intercept is below 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "labs/driver/server.h"

static const double g[] = { 100, 200, 300, 500, 1000, 2000 };
#define N (int)(sizeof g / sizeof g[0])

/* extra = us + per_ms (g - after) / 1000 from index `from` on, and a
 * warm point's `warm` below it */
static void line(double *extra, int from, double after, double us, double per_ms, double warm)
{
	for (int i = 0; i < N; i++)
		extra[i] = i < from ? warm : us + per_ms * (g[i] - after) / 1000;
}

static void drv_cold_fit__a_line_through_the_cold_points(void **state)
{
	double extra[N];
	struct drv_cold k;

	(void)state;
	/* cold from 300 us of idle on; the warm point before it is 200 */
	line(extra, 2, 250, 20, 40, 1);
	drv_cold_fit(g, extra, N, 100, &k);
	assert_float_equal(k.after_us, 250, 1e-9);
	assert_float_equal(k.us, 20, 1e-6);
	assert_float_equal(k.per_ms, 40, 1e-6);
	/* the first point cold: halfway between no pause (0) and it, but
	 * never below the back-to-back request's 100 */
	line(extra, 0, 100, 30, 10, 0);
	drv_cold_fit(g, extra, N, 100, &k);
	assert_float_equal(k.after_us, 100, 1e-9);
	assert_float_equal(k.us, 30, 1e-6);
	assert_float_equal(k.per_ms, 10, 1e-6);
	line(extra, 3, 400, 30, 10, 0);           /* r0 250: after 400 stays */
	drv_cold_fit(g, extra, N, 250, &k);
	assert_float_equal(k.after_us, 400, 1e-9);
	line(extra, 3, 400, 30, 10, 0);           /* r0 600: after 600 */
	drv_cold_fit(g, extra, N, 600, &k);
	assert_float_equal(k.after_us, 600, 1e-9);
}

static void drv_cold_fit__nothing_cold_is_all_zero(void **state)
{
	double extra[N] = { 0, 4.9, -3, 2, 4, 1 };
	struct drv_cold k;

	(void)state;
	memset(&k, 0x55, sizeof k);
	drv_cold_fit(g, extra, N, 100, &k);       /* all under the 5 us floor */
	assert_true(k.after_us == 0 && k.us == 0 && k.per_ms == 0);
	for (int i = 0; i < N; i++)
		extra[i] = 8;                     /* under 3 % of a 300 us request */
	drv_cold_fit(g, extra, N, 300, &k);
	assert_true(k.after_us == 0 && k.us == 0 && k.per_ms == 0);
	drv_cold_fit(g, extra, 0, 300, &k);       /* no points */
	assert_true(k.after_us == 0 && k.us == 0 && k.per_ms == 0);
}

static void drv_cold_fit__one_cold_point_is_flat(void **state)
{
	double extra[N] = { 0, 0, 0, 0, 0, 50 };
	struct drv_cold k;

	(void)state;
	drv_cold_fit(g, extra, N, 100, &k);
	assert_float_equal(k.after_us, 1500, 1e-9);
	assert_float_equal(k.us, 50, 1e-9);
	assert_float_equal(k.per_ms, 0, 1e-9);
}

/* Never below zero: a line that falls is flat at the points' mean; one
 * whose intercept is below zero goes through zero at after_us. */
static void drv_cold_fit__never_below_zero(void **state)
{
	double extra[N] = { 0, 90, 70, 50, 30, 10 };
	struct drv_cold k;

	(void)state;
	drv_cold_fit(g, extra, N, 100, &k);
	assert_float_equal(k.per_ms, 0, 1e-9);
	assert_float_equal(k.us, 50, 1e-9);
	double steep[N] = { 0, 0, 0, 6, 46, 126 };    /* 80 us a ms from 400, less 2 */
	drv_cold_fit(g, steep, N, 100, &k);
	assert_float_equal(k.after_us, 400, 1e-9);
	assert_float_equal(k.us, 0, 1e-9);
	assert_true(k.per_ms > 75 && k.per_ms < 80);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drv_cold_fit__a_line_through_the_cold_points),
		cmocka_unit_test(drv_cold_fit__nothing_cold_is_all_zero),
		cmocka_unit_test(drv_cold_fit__one_cold_point_is_flat),
		cmocka_unit_test(drv_cold_fit__never_below_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
