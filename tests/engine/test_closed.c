/*
 * test_closed.c: closed-loop callers, the time outside the lock, the CPUs.
 *
 * N callers that wait for their answer and think are a closed queueing
 * network; with exponential holds on one row (and exponential think
 * times) it is exactly what Mean Value Analysis solves, so the engine
 * must agree with sim_mva() to sampling error (2 %). The MVA itself is
 * checked against hand arithmetic where the answer is known in closed
 * form, and the CPU station against what it must do at its limits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "engine/sim.h"
#include "tests/engine/simtest.h"

static void assert_near(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fabs(want))
		fail_msg("expected %.6g within %.2f%%, got %.6g", want, rel * 100, got);
}

/* One row, exponential 1 ms holds, n callers thinking z ms (exponential),
 * no pool limit, `secs` simulated seconds. */
static void closed_config(struct sim_config *c, int n, double z, double secs)
{
	simtest_config(c);
	c->clients = n;
	c->think_ms = z;
	c->think_dist = SIM_DIST_EXP;
	c->hold_ms = 1;
	c->hold_dist = SIM_DIST_EXP;
	c->seconds = secs;
}

static void check_mva(int n, double z)
{
	struct sim_config c;
	struct sim_summary o;
	double x, r;

	closed_config(&c, n, z, 300);
	assert_int_equal(sim_mva(&c, &x, &r), 0);
	simtest_run(&c, &o);
	assert_near(o.theory.closed_throughput_per_s, x, 1e-12);
	assert_near(o.theory.closed_mean_ms, r, 1e-12);
	assert_near(o.throughput_per_s, x, 0.02);
	assert_near(o.latency_ms.mean, r, 0.02);
	assert_int_equal(o.offered, o.completed);
}

static void sim_run__closed_loop_matches_mva_no_think(void **state)
{
	(void)state;
	check_mva(1, 0);
	check_mva(4, 0);
	check_mva(16, 0);
	check_mva(64, 0);
}

static void sim_run__closed_loop_matches_mva_with_think(void **state)
{
	(void)state;
	check_mva(1, 4);
	check_mva(4, 4);
	check_mva(16, 4);
	check_mva(64, 4);
}

static void sim_mva__hand_arithmetic(void **state)
{
	struct sim_config c;
	double x, r;

	(void)state;
	/* One caller: no queue, X = 1 / (S + outside + Z). */
	closed_config(&c, 1, 3, 1);
	c.outside_ms = 1;
	assert_int_equal(sim_mva(&c, &x, &r), 0);
	assert_near(x, 1000.0 / 5, 1e-12);
	assert_near(r, 2, 1e-12);
	/* Two callers, no think, one row, S = 1 ms, outside 1 ms: by hand,
	 * n = 1: R = 2, X = 1/2, Q_row = 1/2; n = 2: R_row = 1.5, R = 2.5,
	 * X = 2 / 2.5 = 0.8 per ms. */
	closed_config(&c, 2, 0, 1);
	c.outside_ms = 1;
	assert_int_equal(sim_mva(&c, &x, &r), 0);
	assert_near(x, 800, 1e-12);
	assert_near(r, 2.5, 1e-12);
	/* Many callers, no think: the row's ceiling, R = N S. */
	closed_config(&c, 64, 0, 1);
	assert_int_equal(sim_mva(&c, &x, &r), 0);
	assert_near(x, 1000, 1e-9);
	assert_near(r, 64, 1e-9);
	/* It does not apply to an open loop or a buffered path. */
	c.clients = 0;
	assert_int_equal(sim_mva(&c, &x, &r), -1);
	assert_true(x < 0 && r < 0);
	c.clients = 4;
	c.strategy = SIM_COALESCE;
	assert_int_equal(sim_mva(&c, &x, &r), -1);
}

/* A pool smaller than the callers: P connections cap what reaches the
 * row, and the engine agrees with the flow-equivalent MVA. */
static void sim_run__closed_loop_pool_limits_like_mva(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	double x, r, x_open, r_open;

	(void)state;
	closed_config(&c, 64, 20, 300);
	c.outside_ms = 2;
	c.pool = 0;
	assert_int_equal(sim_mva(&c, &x_open, &r_open), 0);
	c.pool = 8;
	c.pool_timeout_ms = 0;
	assert_int_equal(sim_mva(&c, &x, &r), 0);
	assert_true(r > r_open);                  /* callers wait for a connection */
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, x, 0.02);
	assert_near(o.latency_ms.mean, r, 0.03);
	assert_true(o.pool.max_in_use <= 8);
}

/* Outside time overlaps across callers: with enough of them the row
 * still runs at its ceiling; with one, each request takes hold + outside. */
static void sim_run__outside_time_overlaps(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	simtest_config(&c);
	c.clients = 1;
	c.hold_ms = 1;
	c.outside_ms = 3;
	c.seconds = 2;
	simtest_run(&c, &o);
	assert_near(o.latency_ms.mean, 4, 0.001);
	assert_near(o.throughput_per_s, 250, 0.01);
	c.clients = 8;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000, 0.01);
}

/* More runnable work than cores stretches the hold: one core shared by
 * the holder and seven callers' outside work caps throughput below the
 * row's ceiling; with cores to spare (or none modelled) it does not. */
static void sim_run__cores_stretch_holds(void **state)
{
	struct sim_config c;
	struct sim_summary spare, one, none;

	(void)state;
	simtest_config(&c);
	c.clients = 8;
	c.hold_ms = 1;
	c.outside_ms = 1;
	c.cpu_db_ms = 0.5;
	c.cpu_client_ms = 1;
	c.seconds = 5;
	simtest_run(&c, &none);                   /* cores = 0: no CPU limit */
	c.cores = 16;
	simtest_run(&c, &spare);
	c.cores = 1;
	simtest_run(&c, &one);
	assert_near(spare.throughput_per_s, none.throughput_per_s, 0.001);
	/* One core does 1.5 ms of CPU per request: at most ~667 a second. */
	assert_true(one.throughput_per_s < 0.7 * none.throughput_per_s);
	assert_true(one.throughput_per_s <= 1000.0 / 1.5 * 1.01);
	assert_true(one.latency_ms.mean > spare.latency_ms.mean);
}

/* A run queue per core (--run-queues per-core): a job goes to a core
 * drawn at random and stays there. Two callers whose every request is
 * 1 ms of CPU (all of it in the hold, each on a row of its own) on two
 * cores: shared, both always run at once, 1,000 a second each; per core,
 * the second job lands on the first one's core half the time and both
 * run at half speed there while the other core idles. In closed form:
 * a request's job finds the other caller's job on its core with
 * probability 1/2, so the pair's throughput is 2,000 a second times the
 * fraction of time the two run on different cores. With one core, or
 * one caller, the draw changes nothing. The engine agrees with its own
 * approximate MVA (sim_mva), which takes a job to find 1 / C of the
 * others on its core. */
static void sim_run__a_run_queue_per_core(void **state)
{
	struct sim_config c;
	struct sim_summary shared, per_core;

	(void)state;
	simtest_config(&c);
	c.clients = 2;
	c.rows = 1000;
	c.slot = SIM_SLOT_ROUND_ROBIN;
	c.strategy = SIM_SHARDED;
	c.hold_ms = 1;
	c.cpu_db_ms = 1;
	c.cores = 2;
	c.seconds = 20;
	simtest_run(&c, &shared);
	c.run_queues = SIM_RUNQ_PER_CORE;
	simtest_run(&c, &per_core);
	assert_near(shared.throughput_per_s, 2000, 1);
	/* Each shared spell ends with both jobs at once on the same core
	 * half the time: a spell of one core lasts until both finish. The
	 * pair alternates between 1 ms apart (2 done) and 2 ms together
	 * (2 done): 2 requests per 1.5 ms on average, 1,333 a second. */
	assert_true(per_core.throughput_per_s > 1250 && per_core.throughput_per_s < 1420);
	assert_true(per_core.latency_ms.mean > 1.3 * shared.latency_ms.mean);

	/* One core: nothing to draw, the same run. */
	struct sim_summary one_shared, one_per_core;
	c.cores = 1;
	c.run_queues = SIM_RUNQ_SHARED;
	simtest_run(&c, &one_shared);
	c.run_queues = SIM_RUNQ_PER_CORE;
	simtest_run(&c, &one_per_core);
	assert_int_equal(one_per_core.completed, one_shared.completed);
	assert_near(one_per_core.latency_ms.mean, one_shared.latency_ms.mean, 1e-12);
	assert_near(one_per_core.latency_ms.p99, one_shared.latency_ms.p99, 1e-12);

	/* Eight callers with think time on 2 cores: the engine and its MVA. */
	simtest_config(&c);
	c.clients = 8;
	c.rows = 128;
	c.strategy = SIM_SHARDED;
	c.hold_ms = 0.2;
	c.cpu_db_ms = 0.1;
	c.outside_ms = 0.1;
	c.cpu_client_ms = 0.05;
	c.think_ms = 0.3;
	c.cores = 2;
	c.seconds = 10;
	c.run_queues = SIM_RUNQ_PER_CORE;
	simtest_run(&c, &per_core);
	double x, r;
	assert_int_equal(sim_mva(&c, &x, &r), 0);
	assert_true(per_core.throughput_per_s > 0.95 * x && per_core.throughput_per_s < 1.05 * x);
	c.run_queues = SIM_RUNQ_SHARED;
	simtest_run(&c, &shared);
	assert_true(per_core.throughput_per_s < 0.95 * shared.throughput_per_s);
}

/* sim_new refuses a bad config instead of asserting. */
/* A cold core (--cold-after-us): one caller thinking a constant 1 ms,
 * its request 0.05 ms of its own CPU, 0.05 on the wire, then a 0.1 ms
 * hold all CPU: 0.2 ms a request. The job after the pause starts on a
 * core idle 1 ms, so each request pays cold_us + cold_per_ms (1 - T);
 * with T at the wire's 0.05 the hold's job pays too; with T above the
 * pause nothing does. In closed form, every request but the first (the
 * run starts with its cores just gone idle). */
static void cold_config(struct sim_config *c, double after_us, double us, double per_ms)
{
	simtest_config(c);
	c->clients = 1;
	c->think_ms = 1;
	c->think_dist = SIM_DIST_CONST;
	c->hold_ms = 0.1;
	c->cpu_db_ms = 0.1;
	c->outside_ms = 0.1;
	c->cpu_client_ms = 0.05;
	c->cores = 2;
	c->seconds = 5;
	c->cold_after_us = after_us;
	c->cold_us = us;
	c->cold_per_ms = per_ms;
}

static void sim_run__a_cold_core_costs_the_job_after_a_pause(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	cold_config(&c, 0, 0, 0);
	simtest_run(&c, &o);
	assert_near(o.latency_ms.mean, 0.2, 1e-6);
	cold_config(&c, 500, 20, 10);             /* 20 + 10 x 0.5 ms = 25 us */
	simtest_run(&c, &o);
	assert_near(o.latency_ms.mean, 0.225, 1e-4);   /* the first: cores idle 0 */
	assert_near(o.throughput_per_s, 1000.0 / 1.225, 0.002);
	cold_config(&c, 50, 20, 0);               /* the hold's job too */
	simtest_run(&c, &o);
	assert_near(o.latency_ms.mean, 0.24, 1e-4);
	cold_config(&c, 1001, 20, 10);            /* never idle that long */
	simtest_run(&c, &o);
	assert_near(o.latency_ms.mean, 0.2, 1e-6);
}

/* Cores that never go idle pay nothing: eight callers with no think time
 * whose work is all CPU keep one core busy from the first job on, so a
 * cold core changes not one request. */
static void sim_run__busy_cores_never_go_cold(void **state)
{
	struct sim_config c;
	struct sim_summary warm, cold;

	(void)state;
	simtest_config(&c);
	c.clients = 8;
	c.hold_ms = 1;
	c.cpu_db_ms = 1;
	c.outside_ms = 1;
	c.cpu_client_ms = 1;
	c.cores = 1;
	c.seconds = 5;
	simtest_run(&c, &warm);
	c.cold_after_us = 1;
	c.cold_us = 500;
	simtest_run(&c, &cold);
	assert_int_equal(cold.completed, warm.completed);
	assert_near(cold.latency_ms.mean, warm.latency_ms.mean, 1e-12);
	assert_near(cold.latency_ms.p99, warm.latency_ms.p99, 1e-12);
}

static void sim_new__refuses_bad_config(void **state)
{
	struct sim_config c;
	char err[160];

	(void)state;
	simtest_config(&c);
	c.clients = -1;
	assert_null(sim_new(&c));
	assert_int_equal(sim_config_check(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "--clients"));
	simtest_config(&c);
	c.cpu_db_ms = 5;                          /* more than the 2 ms hold */
	assert_null(sim_new(&c));
	simtest_config(&c);
	c.clients = 4;
	c.strategy = SIM_COALESCE;                /* a caller that never waits */
	assert_null(sim_new(&c));
}

/* Same config, same bytes, with callers, think times and cores. */
static void sim_json__closed_loop_deterministic(void **state)
{
	struct sim_config c;
	char *a, *b;

	(void)state;
	closed_config(&c, 16, 2, 2);
	c.cores = 2;
	c.outside_ms = 0.5;
	c.cpu_db_ms = 0.3;
	c.cpu_client_ms = 0.2;
	a = simtest_json(&c);
	b = simtest_json(&c);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "\"clients\":16"));
	assert_non_null(strstr(a, "\"closed_throughput_per_s\":"));
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_run__closed_loop_matches_mva_no_think),
		cmocka_unit_test(sim_run__closed_loop_matches_mva_with_think),
		cmocka_unit_test(sim_mva__hand_arithmetic),
		cmocka_unit_test(sim_run__closed_loop_pool_limits_like_mva),
		cmocka_unit_test(sim_run__outside_time_overlaps),
		cmocka_unit_test(sim_run__cores_stretch_holds),
		cmocka_unit_test(sim_run__a_cold_core_costs_the_job_after_a_pause),
		cmocka_unit_test(sim_run__busy_cores_never_go_cold),
		cmocka_unit_test(sim_run__a_run_queue_per_core),
		cmocka_unit_test(sim_new__refuses_bad_config),
		cmocka_unit_test(sim_json__closed_loop_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
