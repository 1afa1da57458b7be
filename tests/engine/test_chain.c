/*
 * test_chain.c: round trips inside the lock, and the version chain an old
 * snapshot keeps (engine/sim_chain.c).
 *
 * The lock is held hold + K round trips: the ceiling is rows / that, and
 * the engine must reach it (1 %) and no more. The chain is held to Lab 08's
 * PostgreSQL measurements (labs/08-engine/README.md, section 2): 10,000
 * updates under an old snapshot make 55 heap pages and 56 buffers per read
 * of the row, against 2 buffers without the snapshot; after the snapshot
 * ends the read is short again and the heap keeps its pages.
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

/* 0.5 ms of server work and K round trips of 0.5 ms inside the lock. */
static void trips_config(struct sim_config *c, int k, double rps)
{
	simtest_config(c);
	c->hold_ms = 0.5;
	c->rtt_ms = 0.5;
	c->trips_in_lock = k;
	c->rps = rps;
	c->seconds = 4;
}

static void sim_lock_ms__server_work_plus_round_trips(void **state)
{
	struct sim_config c;

	(void)state;
	trips_config(&c, 3, 100);
	c.work_ms = 0.25;
	assert_true(fabs(sim_lock_ms(&c) - 2.25) < 1e-12);
	c.trips_in_lock = 0;                  /* one statement */
	assert_true(fabs(sim_lock_ms(&c) - 0.75) < 1e-12);
}

static void sim_run__round_trips_in_the_lock_set_the_ceiling(void **state)
{
	(void)state;
	for (int k = 0; k <= 3; k++) {
		struct sim_config c;
		struct sim_summary o;
		double ceiling = 1000.0 / (0.5 + 0.5 * k);

		/* Half again the ceiling: the row is the limit. */
		trips_config(&c, k, 1.5 * ceiling);
		simtest_run(&c, &o);
		assert_near(o.theory.ceiling_per_s, ceiling, 1e-9);
		assert_near(o.throughput_per_s, ceiling, 0.01);
		assert_int_equal(o.theory.binding, SIM_CEIL_ROWS);

		/* Below it: every like gets through in one hold. */
		trips_config(&c, k, 0.5 * ceiling);
		simtest_run(&c, &o);
		assert_near(o.throughput_per_s, 0.5 * ceiling, 0.01);
		assert_near(o.latency_ms.mean, 0.5 + 0.5 * k, 0.01);
	}
}

/* Sixteen callers in a closed loop: Mean Value Analysis of the same loop
 * knows the round trips too (exponential holds, where it is exact). */
static void sim_mva__counts_the_round_trips(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	trips_config(&c, 2, 0);
	c.clients = 16;
	c.think_ms = 10;
	c.think_dist = SIM_DIST_EXP;
	c.hold_dist = SIM_DIST_EXP;
	c.rtt_ms = 0.25;
	c.hold_ms = 0.5;
	c.seconds = 60;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, o.theory.closed_throughput_per_s, 0.02);
	assert_true(o.theory.closed_throughput_per_s < 1000.0);   /* the 1 ms hold's ceiling */
}

/* Lab 08 section 6, on PostgreSQL with 16 threads: one statement 730
 * likes/s; the interactive like's hold 2.14 ms, and 490 likes/s. With the
 * first two as inputs (1.37 ms of server work, the rest one round trip
 * inside the lock) the model predicts the third within 10 %. */
static void sim_run__lab08_interactive_like_against_one_statement(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	double work = 1000.0 / 730;

	(void)state;
	simtest_config(&c);
	c.clients = 16;
	c.seconds = 3;
	c.hold_ms = floor(work * 100 + 0.5) / 100;            /* 1.37 ms */
	c.rtt_ms = floor((2.14 - work) * 100 + 0.5) / 100;    /* 0.77 ms */
	c.trips_in_lock = 1;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 490, 0.10);
	c.trips_in_lock = 0;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 730, 0.01);
}

/* Lab 08's counter: 10,000 updates in 5 s (2,000 a second), reads of the
 * row ten times a second, an old snapshot open for the first 5 s. */
static void chain_config(struct sim_config *c, double snapshot_for)
{
	simtest_config(c);
	c->rps = 2000;
	c->hold_ms = 0.4;
	c->seconds = 8;
	c->read_rps = 10;
	c->read_ms = 0.1;
	c->snapshot_at_s = 0;
	c->snapshot_for_s = snapshot_for;
}

static void sim_run__an_old_snapshot_lengthens_the_read(void **state)
{
	struct sim_config c;
	struct sim_summary o, mid;
	struct sim *s;

	(void)state;
	chain_config(&c, 5);
	s = sim_new(&c);
	sim_advance(s, 5000000 - 1);
	sim_summary(s, &mid);
	sim_advance(s, 8000000);
	sim_summary(s, &o);
	sim_free(s);

	/* The lab's figures: 10,001 versions fill 55 pages; a read touches
	 * them and an index page. */
	assert_true(mid.reads.snapshot_open);
	assert_int_equal(mid.reads.versions, 10001);
	assert_int_equal(mid.reads.heap_pages, 55);
	assert_int_equal(o.reads.buffers_max, 56);
	/* The read takes read_ms per 2 buffers: 28 times the short read. */
	assert_true(mid.reads.last_ms > 20 * c.read_ms);

	/* After it closes: the chain is short again, the heap keeps its pages. */
	assert_false(o.reads.snapshot_open);
	assert_int_equal(o.reads.versions, 1);
	assert_int_equal(o.reads.buffers, 2);
	assert_int_equal(o.reads.heap_pages, 55);
	assert_near(o.reads.last_ms, c.read_ms, 1e-9);
	assert_true(o.reads.completed > 50 && o.reads.failed == 0);
}

static void sim_run__no_snapshot_no_chain(void **state)
{
	struct sim_config c;
	struct sim_summary with, without;

	(void)state;
	chain_config(&c, 5);
	simtest_run(&c, &with);
	chain_config(&c, 0);
	simtest_run(&c, &without);

	/* Pruning keeps the row at one page: every read touches 2 buffers
	 * and takes read_ms. */
	assert_int_equal(without.reads.versions_max, 1);
	assert_int_equal(without.reads.buffers_max, 2);
	assert_int_equal(without.reads.heap_pages, 1);
	assert_near(without.reads.latency_ms.max, c.read_ms, 1e-9);
	/* The snapshot made the reads slower on average, the worst 28 times. */
	assert_true(with.reads.latency_ms.mean > 5 * without.reads.latency_ms.mean);
	assert_near(with.reads.latency_ms.max, 28 * c.read_ms, 0.01);
	/* Reads draw their own random numbers: the likes did the same. */
	assert_int_equal(with.completed, without.completed);
	assert_true(with.latency_ms.mean == without.latency_ms.mean);
}

/* chain-walk: an update finds the newest version by walking the chain,
 * walk_us a heap page past the first. One caller alone, 0.16 ms holds, a
 * snapshot open throughout: update k walks pages(k) - 1 extra pages, so
 * the mean time is 0.16 ms + walk_us x their mean (the lab's 10,000
 * updates: 0.16 -> 0.58 ms). Without walk_us the snapshot costs updates
 * nothing, as before. */
static void sim_run__updates_walk_the_chain_too(void **state)
{
	struct sim_config c;
	struct sim_summary o, flat;
	double extra = 0;

	(void)state;
	simtest_config(&c);
	c.clients = 1;
	c.hold_ms = 0.16;
	c.seconds = 5;
	c.snapshot_at_s = 0;
	c.snapshot_for_s = 10;
	c.walk_us = 16;
	simtest_run(&c, &o);
	for (uint64_t k = 1; k <= o.completed; k++)
		extra += (double)((k + 184) / 185 - 1);
	extra /= (double)o.completed;
	assert_near(o.theory.little_W_ms, 0.16 + 0.016 * extra, 0.002);
	assert_true(o.completed > 5000);
	c.walk_us = 0;
	simtest_run(&c, &flat);
	assert_near(flat.theory.little_W_ms, 0.16, 1e-6);
}

/* A fix that writes the row once a flush also writes one version a flush:
 * the snapshot keeps 50 of them, not 10,000. A sharded counter's read
 * walks every slot's chain. */
static void sim_run__fewer_updates_shorter_chains(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	chain_config(&c, 5);
	c.strategy = SIM_COALESCE;
	c.flush_ms = 100;
	simtest_run(&c, &o);
	assert_true(o.reads.versions_max >= 49 && o.reads.versions_max <= 51);
	assert_int_equal(o.reads.buffers_max, 2);

	chain_config(&c, 5);
	c.strategy = SIM_SHARDED;
	c.rows = 4;
	c.slot = SIM_SLOT_ROUND_ROBIN;
	simtest_run(&c, &o);
	/* 2,500 versions a slot: 14 pages each, and the index page. */
	assert_int_equal(o.reads.versions_max, 2501);
	assert_int_equal(o.reads.buffers_max, 1 + 4 * 14);
}

static void sim_run__reads_wait_for_the_pool(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	/* The lock's line holds every connection: a read waits behind it
	 * although it takes no lock. */
	trips_config(&c, 3, 800);
	c.pool = 20;
	c.pool_timeout_ms = 5000;
	c.read_rps = 20;
	simtest_run(&c, &o);
	assert_true(o.reads.latency_ms.mean > 100 * c.read_ms);
	c.trips_in_lock = 0;
	simtest_run(&c, &o);
	assert_true(o.reads.latency_ms.mean < 2 * c.read_ms);
}

/* Reads start and stop live (the TUI and tours), and a run with reads
 * and a snapshot is as repeatable as any other. */
static void sim_set__reads_start_and_stop(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	struct sim *s;
	char *a, *b;

	(void)state;
	chain_config(&c, 5);
	c.read_rps = 0;
	c.seconds = 0;
	s = sim_new(&c);
	sim_advance(s, 1000000);
	sim_summary(s, &o);
	assert_int_equal(o.reads.offered, 0);
	c.read_rps = 100;
	sim_set(s, &c);
	sim_advance(s, 3000000);
	sim_summary(s, &o);
	assert_true(o.reads.offered > 150 && o.reads.offered < 250);
	c.read_rps = 0;
	sim_set(s, &c);
	sim_advance(s, 3000001);
	sim_summary(s, &o);
	uint64_t stopped = o.reads.offered;
	sim_advance(s, 5000000);
	sim_summary(s, &o);
	assert_int_equal(o.reads.offered, stopped);
	sim_free(s);

	chain_config(&c, 5);
	a = simtest_json(&c);
	b = simtest_json(&c);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "\"versions_max\":10001,"));
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_lock_ms__server_work_plus_round_trips),
		cmocka_unit_test(sim_run__round_trips_in_the_lock_set_the_ceiling),
		cmocka_unit_test(sim_mva__counts_the_round_trips),
		cmocka_unit_test(sim_run__lab08_interactive_like_against_one_statement),
		cmocka_unit_test(sim_run__an_old_snapshot_lengthens_the_read),
		cmocka_unit_test(sim_run__no_snapshot_no_chain),
		cmocka_unit_test(sim_run__updates_walk_the_chain_too),
		cmocka_unit_test(sim_run__fewer_updates_shorter_chains),
		cmocka_unit_test(sim_run__reads_wait_for_the_pool),
		cmocka_unit_test(sim_set__reads_start_and_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
