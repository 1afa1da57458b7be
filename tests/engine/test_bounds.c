/*
 * test_bounds.c: what the engine accepts, it runs in bounded memory.
 * Rates whose interval overflows the microsecond clock and timeouts that
 * would round to "never" are refused by sim_config_check; the time series
 * of a long run merges ticks instead of growing; an endless overload with
 * no limit on queues turns arrivals away at SIM_MAX_INFLIGHT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "engine/sim.h"
#include "engine/sim_series.h"
#include "engine/sim_impl.h"
#include "tests/engine/simtest.h"

static int check(const struct sim_config *c, const char *field)
{
	char err[200] = "";
	int rc = sim_config_check(c, err, sizeof err);

	if (rc < 0 && field && !strstr(err, field))
		fail_msg("error names the wrong field: %s", err);
	return rc;
}

static void sim_config_check__rates_must_fit_the_clock(void **state)
{
	struct sim_config c;

	(void)state;
	simtest_config(&c);
	c.rps = 1e-13;           /* one every 3 million years: 1e6 / rate overflows */
	assert_int_equal(check(&c, "--rps"), -1);
	c.rps = SIM_MIN_RATE;
	assert_int_equal(check(&c, NULL), 0);
	c.rps = 0;               /* off */
	assert_int_equal(check(&c, NULL), 0);
	c.unrelated_rps = 1e-13;
	assert_int_equal(check(&c, "--unrelated-rps"), -1);
	c.unrelated_rps = 0;
	c.nphases = 1;
	c.phases[0].at_us = 1000000;
	c.phases[0].rps = 1e-13;
	assert_int_equal(check(&c, "--schedule"), -1);
	c.phases[0].rps = 5;
	assert_int_equal(check(&c, NULL), 0);
}

static void sim_config_check__timeouts_under_a_microsecond(void **state)
{
	struct sim_config c;

	(void)state;
	simtest_config(&c);
	c.client_timeout_ms = 1e-300;     /* would round to 0: "never" */
	assert_int_equal(check(&c, "--client-timeout-ms"), -1);
	c.client_timeout_ms = 0.0001;
	assert_int_equal(check(&c, "--client-timeout-ms"), -1);
	c.client_timeout_ms = 0.001;
	assert_int_equal(check(&c, NULL), 0);
	c.pool_timeout_ms = 0.0004;
	assert_int_equal(check(&c, "--pool-timeout-ms"), -1);
	c.pool_timeout_ms = 0;
	assert_int_equal(check(&c, NULL), 0);
}

/* 100,000 ticks of 1 ms: the CSV stays within SIM_SERIES_MAX lines, its
 * lines still add up to the likes offered, and the screen's recent ticks
 * stay exact. */
static void sim_csv__long_run_merges_ticks(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	struct sim_snapshot *snap = malloc(sizeof *snap);
	char *buf = NULL, line[512];
	size_t len = 0, lines = 0;
	double prev = 0, offered = 0, last_t = 0;
	FILE *f;
	struct sim *s;

	(void)state;
	simtest_config(&c);
	c.rps = 100;
	c.arrivals = SIM_ARRIVE_POISSON;
	c.tick_ms = 1;
	c.seconds = 100;
	s = sim_new(&c);
	sim_run(s);
	sim_summary(s, &o);
	f = open_memstream(&buf, &len);
	sim_csv(f, s);
	fclose(f);
	f = fmemopen(buf, len, "r");
	assert_non_null(fgets(line, sizeof line, f));      /* the header */
	while (fgets(line, sizeof line, f)) {
		double t, rate;
		assert_int_equal(sscanf(line, "%lf,%lf", &t, &rate), 2);
		assert_true(t > prev);
		offered += rate * (t - prev);
		prev = last_t = t;
		lines++;
	}
	fclose(f);
	assert_true(lines <= SIM_SERIES_MAX);
	assert_true(lines >= SIM_SERIES_MAX / 2);
	assert_true(fabs(offered - (double)o.offered) < 1e-6 * (double)o.offered + 1e-6);
	assert_true(last_t >= 100.0);

	sim_snapshot(s, snap);
	assert_int_equal(snap->nseries, SIM_SNAP_SERIES);
	for (int i = 1; i < snap->nseries; i++)
		assert_true(fabs(snap->series[i].t_s - snap->series[i - 1].t_s - 0.001) < 1e-9 ||
		            i == snap->nseries - 1);
	free(buf);
	free(snap);
	sim_free(s);
}

/* An endless overload with an unbounded pool and no timeouts: the line
 * for the lock grows by 1,500 a second. Past SIM_MAX_INFLIGHT arrivals
 * are refused, so the memory stops growing, and the books still balance. */
static void sim_advance__requests_in_flight_are_capped(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	struct sim *s;

	(void)state;
	simtest_config(&c);
	c.seconds = 0;
	c.rps = 2000;
	c.hold_ms = 2;
	c.unrelated_rps = 10;
	s = sim_new(&c);
	sim_advance(s, (int64_t)1600 * 1000000);    /* 2.4 M would be waiting */
	sim_summary(s, &o);
	assert_true(o.refused > 0);
	assert_true(o.in_flight <= SIM_MAX_INFLIGHT);
	assert_true(o.failed >= o.refused);
	assert_int_equal(o.offered, o.completed + o.failed + o.abandoned + o.in_flight);
	assert_true(o.unrelated.failed > 0);
	sim_free(s);
}

/* The same overload, but each client gives up after 10 ms: it leaves
 * at once, its statement stays queued in the server as an orphan. The
 * orphans hold memory like any waiting request, so they count against the
 * cap: without them 2.4 M orphans would pile up behind 20 live requests. */
static void sim_advance__orphans_count_against_the_cap(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	struct sim *s;

	(void)state;
	simtest_config(&c);
	c.seconds = 0;
	c.rps = 2000;
	c.hold_ms = 2;
	c.client_timeout_ms = 10;
	s = sim_new(&c);
	assert_non_null(s);
	sim_advance(s, (int64_t)1600 * 1000000);
	sim_summary(s, &o);
	assert_true(s->orphans_live > 0);
	assert_true(o.refused > 0);
	assert_true((uint64_t)s->inflight + (uint64_t)s->unrel_inflight +
	            (uint64_t)s->orphans_live <= SIM_MAX_INFLIGHT);
	assert_int_equal(o.offered, o.completed + o.failed + o.abandoned + o.in_flight);
	sim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_config_check__rates_must_fit_the_clock),
		cmocka_unit_test(sim_config_check__timeouts_under_a_microsecond),
		cmocka_unit_test(sim_csv__long_run_merges_ticks),
		cmocka_unit_test(sim_advance__requests_in_flight_are_capped),
		cmocka_unit_test(sim_advance__orphans_count_against_the_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
