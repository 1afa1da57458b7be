/*
 * test_theory.c: the simulation agrees with queueing theory.
 *
 * One row with Poisson arrivals is an M/M/1 queue when holds are
 * exponential and M/D/1 when they are constant. The run lengths are chosen
 * so that the sampling error of the mean is about 1 % at rho = 0.9 (the
 * mean's variance grows like 1 / (1 - rho)^4), half the 2 % tolerance.
 * The theory block's formulas are checked against hand arithmetic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "engine/sim.h"
#include "tests/engine/simtest.h"

static void assert_near(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fabs(want))
		fail_msg("expected %.6g within %.2f%%, got %.6g", want, rel * 100, got);
}

/* One row, 1 ms holds, Poisson arrivals at rho * 1000/s, `n` requests. */
static void queue_config(struct sim_config *c, double rho, enum sim_dist d, double n)
{
	simtest_config(c);
	c->arrivals = SIM_ARRIVE_POISSON;
	c->hold_dist = d;
	c->hold_ms = 1;
	c->rps = rho * 1000;
	c->seconds = n / c->rps;
	c->seed = 1;
}

static double runs_for(double rho)
{
	return rho < 0.6 ? 5e5 : rho < 0.85 ? 2e6 : 4e6;
}

static void check_mean(double rho, enum sim_dist d)
{
	struct sim_config c;
	struct sim_summary o;
	double want;

	queue_config(&c, rho, d, runs_for(rho));
	simtest_run(&c, &o);
	/* Mean time in system, by hand: S / (1 - rho) for M/M/1, and
	 * S + rho S / (2 (1 - rho)) for M/D/1, with S = 1 ms. */
	want = d == SIM_DIST_EXP ? 1 / (1 - rho) : 1 + rho / (2 * (1 - rho));
	assert_near(d == SIM_DIST_EXP ? o.theory.mm1_mean_ms : o.theory.md1_mean_ms, want, 1e-12);
	assert_near(o.latency_ms.mean, want, 0.02);
}

static void sim_run__mm1_mean_within_2pct(void **state)
{
	(void)state;
	check_mean(0.5, SIM_DIST_EXP);
	check_mean(0.8, SIM_DIST_EXP);
	check_mean(0.9, SIM_DIST_EXP);
}

static void sim_run__md1_mean_within_2pct(void **state)
{
	(void)state;
	check_mean(0.5, SIM_DIST_CONST);
	check_mean(0.8, SIM_DIST_CONST);
	check_mean(0.9, SIM_DIST_CONST);
}

static void sim_summary__little_within_1pct(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	struct sim *s;

	(void)state;
	queue_config(&c, 0.8, SIM_DIST_EXP, 4e5);
	c.seconds = 0;                    /* endless: stop mid-flight */
	s = sim_new(&c);
	sim_advance(s, 500 * 1000000LL);
	sim_summary(s, &o);
	sim_free(s);
	/* Time-average number in system against arrival rate x mean time. */
	assert_true(o.theory.little_L > 3);
	assert_near(o.theory.little_L, o.theory.little_lambda * o.theory.little_W_ms / 1000, 0.01);
}

static void sim_summary__theory_formulas(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	simtest_config(&c);
	c.rps = 2000;
	c.hold_ms = 2;
	c.pool = 100;
	c.pool_timeout_ms = 10;
	c.seconds = 0.1;
	simtest_run(&c, &o);
	assert_near(o.theory.ceiling_per_s, 500, 1e-12);
	assert_near(o.theory.rho, 4, 1e-12);
	assert_near(o.theory.growth_per_s, 1500, 1e-12);
	assert_near(o.theory.pool_full_s, 100.0 / 1500, 1e-12);
	assert_true(o.theory.mm1_mean_ms < 0 && o.theory.md1_mean_ms < 0);

	c.strategy = SIM_SHARDED;
	c.rows = 16;
	c.work_ms = 2;                    /* app work inside the transaction */
	simtest_run(&c, &o);
	assert_near(o.theory.ceiling_per_s, 16 * 1000 / 4.0, 1e-12);
	assert_near(o.theory.rho, 0.5, 1e-12);
	assert_near(o.theory.md1_mean_ms, 4 + 0.5 * 4 / (2 * 0.5), 1e-12);
	assert_true(o.theory.pool_full_s < 0);
	assert_true(o.theory.growth_per_s == 0);
}

/* Constant arrivals and constant holds below the ceiling never queue:
 * the label is D/D/1 and the prediction is the hold, not M/M/1's
 * S / (1 - rho) (6 ms at 400/s with 2 ms holds). */
static void sim_summary__dd1_label_and_mean(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	simtest_config(&c);
	c.rps = 400;
	c.hold_ms = 2;
	c.seconds = 5;
	simtest_run(&c, &o);
	assert_int_equal(o.theory.model, SIM_MODEL_DD1);
	assert_near(o.theory.model_mean_ms, 2, 1e-12);
	assert_near(o.latency_ms.mean, 2, 1e-9);
	assert_near(o.theory.mm1_mean_ms, 10, 1e-12);   /* still there, not the label */
	c.arrivals = SIM_ARRIVE_POISSON;
	simtest_run(&c, &o);
	assert_int_equal(o.theory.model, SIM_MODEL_MD1);
	c.hold_dist = SIM_DIST_EXP;
	simtest_run(&c, &o);
	assert_int_equal(o.theory.model, SIM_MODEL_MM1);
	c.arrivals = SIM_ARRIVE_CONSTANT;
	simtest_run(&c, &o);
	assert_int_equal(o.theory.model, SIM_MODEL_GG1);
	assert_near(o.theory.model_mean_ms, 2 + 2 * 0.8 / 0.2 * 0.5, 1e-12);
}

/* A schedule read as a fluid line: 200/s, 2000/s from 10 s, 200/s from
 * 15 s, until 20 s, against 500/s; every number by hand. */
static void sim_schedule_view__fluid_line(void **state)
{
	struct sim_config c;
	struct sim_schedule v;

	(void)state;
	simtest_config(&c);
	c.rps = 200;
	c.seconds = 20;
	c.pool = 30;
	c.nphases = 3;
	c.phases[0] = (struct sim_phase){ .at_us = 10000000, .rps = 2000 };
	c.phases[1] = (struct sim_phase){ .at_us = 15000000, .rps = 200 };
	c.phases[2] = (struct sim_phase){ .at_us = 25000000, .rps = 9999 };   /* after the end */
	assert_int_equal(sim_schedule_view(&c, 500, &v), 1);
	assert_int_equal(v.nsteps, 3);
	assert_int_equal(v.peak, 1);
	assert_near(v.peak_until_s, 15, 1e-12);
	assert_near(v.over_from_s, 10, 1e-12);
	assert_near(v.line_max, 1500 * 5, 1e-12);
	assert_near(v.line_max_at_s, 15, 1e-12);
	assert_near(v.pool_full_at_s, 10 + 30.0 / 1500, 1e-12);
	assert_near(v.pool_growth_per_s, 1500, 1e-12);
	/* 7500 left at 15 s, 300/s drains 1500 by 20 s, then 500/s: 12 s more. */
	assert_near(v.drained_at_s, 20 + 6000.0 / 500, 1e-12);
	assert_near(v.arrivals, 200 * 10 + 2000 * 5 + 200 * 5, 1e-12);
	assert_near(v.end_s, 32, 1e-12);
	assert_near(v.throughput_per_s, 13000.0 / 32, 1e-12);
	/* The mean time in system: the line's integral is 1500 x 5^2 / 2 =
	 * 18750 over the peak and 7500 x 5 - 300 x 5^2 / 2 = 33750 after it;
	 * arrivals at lam wait line / 500 each, so they wait 2000 x 18750 /
	 * 500 + 200 x 33750 / 500 = 88500 s in all; over 13000 likes, plus
	 * the 2 ms hold. Evenly spaced likes, constant holds: no random queue
	 * where there is no line. */
	assert_near(v.mean_ms, 2 + 1000 * 88500.0 / 13000, 1e-12);
	/* Poisson arrivals: the first 10 s have no line, and each of its 2000
	 * likes waits Kingman's 2 x 0.4 / 0.6 x (1 + 0) / 2 ms besides. */
	c.arrivals = SIM_ARRIVE_POISSON;
	assert_int_equal(sim_schedule_view(&c, 500, &v), 1);
	assert_near(v.mean_ms, 2 + (1000 * 88500.0 + 2000 * 2 * 0.4 / 0.6 / 2) / 13000, 1e-12);
	c.arrivals = SIM_ARRIVE_CONSTANT;

	c.nphases = 0;                           /* one rate: not a schedule */
	assert_int_equal(sim_schedule_view(&c, 500, &v), 0);
	assert_near(v.step[0].rps, 200, 1e-12);
	assert_true(v.over_from_s < 0 && v.pool_full_at_s < 0 && v.line_max == 0);
}

/* A run with a schedule: theory follows the fluid view, and the engine's
 * mean latency agrees with it. 200/s, then 2000/s from 2 s to 4 s, on a
 * 500/s row: a line of 1500 x 2 = 3000 at 4 s, gone 6 s later; its 4000
 * likes at 2000/s wait 2000 x (1500 x 2^2 / 2) / 500 = 12000 s in all, so
 * over 4400 likes 2 + 12000000 / 4400 ms. */
static void sim_summary__schedule_follows_fluid(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	simtest_config(&c);
	c.rps = 200;
	c.seconds = 4;
	c.pool = 1000;
	c.pool_timeout_ms = 0;
	c.nphases = 1;
	c.phases[0] = (struct sim_phase){ .at_us = 2000000, .rps = 2000 };
	simtest_run(&c, &o);
	assert_int_equal(o.theory.model, SIM_MODEL_FLUID);
	assert_string_equal(sim_model_name(o.theory.model), "fluid schedule");
	assert_near(o.theory.rho, 4, 1e-12);
	assert_near(o.theory.growth_per_s, 1500, 1e-12);
	assert_near(o.theory.pool_full_s, 2 + 1000.0 / 1500, 1e-12);
	assert_true(o.theory.mm1_mean_ms < 0 && o.theory.md1_mean_ms < 0);
	assert_int_equal(o.schedule.nsteps, 2);
	assert_near(o.schedule.end_s, 10, 1e-12);
	assert_near(o.schedule.throughput_per_s, 440, 1e-12);
	assert_near(o.theory.model_mean_ms, 2 + 12000000.0 / 4400, 1e-12);
	/* evenly spaced, constant holds: the engine's line is the fluid one */
	assert_near(o.latency_ms.mean, o.theory.model_mean_ms, 0.01);
	assert_near(o.throughput_per_s, o.schedule.throughput_per_s, 0.01);

	c.seconds = 1;                      /* the step comes after the end */
	simtest_run(&c, &o);
	assert_int_equal(o.theory.model, SIM_MODEL_DD1);
	assert_int_equal(o.schedule.nsteps, 0);
}

/* Clumps of K at the same rho: the arrivals' squared coefficient of
 * variation is 2K - 1, Kingman's formula W = S + S rho / (1 - rho)
 * (ca2 + cs2) / 2 predicts the mean, and burstier is worse. */
static void sim_run__bursty_arrivals_match_kingman(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	double prev = 0;

	(void)state;
	for (int k = 1; k <= 8; k *= 2) {
		queue_config(&c, 0.5, SIM_DIST_CONST, 5e5);
		c.arrivals = SIM_ARRIVE_BURSTY;
		c.burst = k;
		simtest_run(&c, &o);
		assert_int_equal(o.theory.model, SIM_MODEL_GG1);
		assert_near(o.theory.ca2, 2.0 * k - 1, 1e-12);
		assert_near(o.theory.model_mean_ms, 1 + 1 * 0.5 / 0.5 * (2.0 * k - 1) / 2, 1e-12);
		assert_near(o.latency_ms.mean, o.theory.model_mean_ms, 0.05);
		assert_true(o.latency_ms.mean > prev);
		prev = o.latency_ms.mean;
	}
}

/* 100 connections on 128 random slots sit on ~69.6 distinct rows: the
 * pool, not 128 / hold, binds, and the engine serves near that. */
static void sim_run__pool_binds_on_distinct_rows(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	assert_int_equal(sim_scenario("viral-video-sharded", &c), 0);
	c.arrivals = SIM_ARRIVE_POISSON;
	c.seconds = 1;
	simtest_run(&c, &o);
	assert_near(o.theory.distinct_rows, 128 * (1 - pow(127.0 / 128, 100)), 1e-9);
	assert_int_equal(o.theory.binding, SIM_CEIL_POOL);
	assert_near(o.theory.binding_per_s, o.theory.distinct_rows * 1000, 1e-9);
	assert_near(o.throughput_per_s, o.theory.binding_per_s, 0.10);
	assert_false(o.theory.steady);             /* arrivals over the binding ceiling */
	c.slot = SIM_SLOT_ROUND_ROBIN;             /* in turn: 100 distinct rows */
	simtest_run(&c, &o);
	assert_near(o.theory.binding_per_s, 100000, 1e-9);
	assert_near(o.throughput_per_s, 100000, 0.03);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_run__mm1_mean_within_2pct),
		cmocka_unit_test(sim_run__md1_mean_within_2pct),
		cmocka_unit_test(sim_summary__little_within_1pct),
		cmocka_unit_test(sim_summary__theory_formulas),
		cmocka_unit_test(sim_summary__dd1_label_and_mean),
		cmocka_unit_test(sim_run__bursty_arrivals_match_kingman),
		cmocka_unit_test(sim_run__pool_binds_on_distinct_rows),
		cmocka_unit_test(sim_schedule_view__fluid_line),
		cmocka_unit_test(sim_summary__schedule_follows_fluid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
