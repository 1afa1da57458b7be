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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_run__mm1_mean_within_2pct),
		cmocka_unit_test(sim_run__md1_mean_within_2pct),
		cmocka_unit_test(sim_summary__little_within_1pct),
		cmocka_unit_test(sim_summary__theory_formulas),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
