/*
 * test_sim.c: the model. The seed's table exactly; capacity of one row and
 * of N rows; the pool filling at P / (lambda - mu); every request ending
 * exactly one way; the count books balancing for every strategy; each
 * fault and bug costing what it should and nothing without it; the same
 * seed giving the same JSON byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "engine/sim.h"
#include "engine/sim_impl.h"          /* pool_eager, for one test */
#include "tests/engine/simtest.h"

static void assert_near(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fabs(want))
		fail_msg("expected %.6g within %.2f%%, got %.6g", want, rel * 100, got);
}

/* Every offered like ended one way; the books balance. */
static void assert_books(const struct sim_summary *o)
{
	assert_int_equal(o->offered, o->completed + o->failed + o->abandoned);
	assert_int_equal(o->count.visible + o->count.buffered + o->count.lost - o->count.doubled -
	                 o->count.unacked, o->count.true_count);
	/* A like is acknowledged exactly when its request completes. */
	assert_int_equal(o->count.true_count, o->completed);
}

/* ---- the seed's table ---- */

static double seed_worst(int rows)
{
	struct sim_config c;
	struct sim_summary o;

	simtest_config(&c);
	c.strategy = rows > 1 ? SIM_SHARDED : SIM_NAIVE;
	c.rows = rows;
	c.slot = SIM_SLOT_ROUND_ROBIN;
	c.rps = 2000;
	c.seconds = 1;
	c.hold_ms = 2;
	simtest_run(&c, &o);
	assert_int_equal(o.offered, 2000);
	assert_int_equal(o.completed, 2000);
	return o.worst_wait_ms;
}

static void sim_run__seed_table_exactly(void **state)
{
	(void)state;
	/* Arrival i at 0.5 i ms starts at 2 i ms on one row: the last waits
	 * 1999 * 1.5 ms = 2998.5 ms; 4 and 16 slots never queue. */
	assert_true(seed_worst(1) == 2998.5);
	assert_true(seed_worst(4) == 0.0);
	assert_true(seed_worst(16) == 0.0);
}

/* ---- capacity ---- */

static uint64_t completed_by(struct sim_config *c, double t_s)
{
	struct sim *s = sim_new(c);
	struct sim_summary o;

	sim_advance(s, (int64_t)(t_s * 1e6));
	sim_summary(s, &o);
	sim_free(s);
	return o.completed;
}

static void sim_advance__saturated_row_serves_one_per_hold(void **state)
{
	struct sim_config c;

	(void)state;
	simtest_config(&c);
	c.rps = 1000;
	c.hold_ms = 2;
	c.seconds = 0;                    /* endless */
	assert_near((double)completed_by(&c, 10), 500 * 10, 0.01);
	c.arrivals = SIM_ARRIVE_POISSON;
	c.hold_dist = SIM_DIST_EXP;
	assert_near((double)completed_by(&c, 200), 500 * 200, 0.01);
}

static void sim_advance__sharded_serves_n_per_hold(void **state)
{
	struct sim_config c;

	(void)state;
	simtest_config(&c);
	c.strategy = SIM_SHARDED;
	c.rows = 8;
	c.slot = SIM_SLOT_RANDOM;
	c.rps = 10000;
	c.hold_ms = 2;
	c.seconds = 0;
	assert_near((double)completed_by(&c, 10), 8 * 500 * 10, 0.01);
}

static void sim_summary__pool_full_at_p_over_growth(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	simtest_config(&c);
	c.pool = 200;
	c.rps = 2000;
	c.hold_ms = 2;
	simtest_run(&c, &o);
	assert_near(o.theory.pool_full_s, 200.0 / 1500.0, 1e-9);
	assert_near(o.pool.exhausted_at_s, o.theory.pool_full_s, 0.02);
	assert_int_equal(o.pool.max_in_use, 200);
	assert_books(&o);
}

/* ---- every request ends one way; the books balance ---- */

static void busy_config(struct sim_config *c, enum sim_strategy st)
{
	simtest_config(c);
	c->strategy = st;
	c->rows = st == SIM_SHARDED ? 4 : 1;
	c->rps = 3000;
	c->arrivals = SIM_ARRIVE_POISSON;
	c->hold_ms = 1;
	c->hold_dist = SIM_DIST_EXP;
	c->work_ms = 0.5;
	c->pool = 10;
	c->pool_timeout_ms = 50;
	c->client_timeout_ms = 100;
	c->retries = 1;
	c->unrelated_rps = 300;
	c->flush_ms = 100;
	c->seconds = 3;
	c->seed = 11;
}

static void sim_run__conservation_every_strategy(void **state)
{
	(void)state;
	for (int st = 0; st < SIM_NSTRATEGIES; st++) {
		struct sim_config c;
		struct sim_summary o;
		busy_config(&c, (enum sim_strategy)st);
		simtest_run(&c, &o);
		assert_true(o.offered > 8000);
		assert_books(&o);
		assert_int_equal(o.count.lost, 0);
		assert_int_equal(o.count.doubled, 0);
		if (st == SIM_NAIVE) {
			assert_true(o.failed + o.abandoned > 0);   /* overloaded: 3000 vs 667/s */
			assert_true(o.retried > 0);
			assert_true(o.unrelated.failed > 0);
		}
		if (st != SIM_NAIVE && st != SIM_SHARDED)
			/* lag: up to one flush plus the flush's own wait and hold */
			assert_true(o.count.max_lag_s <= 0.100 + 0.050);
	}
}

static void sim_advance__books_balance_at_every_instant(void **state)
{
	(void)state;
	for (int st = 0; st < SIM_NSTRATEGIES; st++) {
		struct sim_config c;
		struct sim_summary o;
		struct sim *s;
		busy_config(&c, (enum sim_strategy)st);
		c.seconds = 0;
		c.crashes[0] = (struct sim_crash){ SIM_FAULT_APP, 450000 };
		c.crashes[1] = (struct sim_crash){ SIM_FAULT_CONSUMER, 700000 };
		c.crashes[2] = (struct sim_crash){ SIM_FAULT_REDIS, 1250000 };
		c.ncrashes = 3;
		c.bug_no_fence = c.bug_get_then_del = true;
		s = sim_new(&c);
		for (int64_t t = 0; t <= 2000000; t += 7919) {
			sim_advance(s, t);
			sim_summary(s, &o);
			assert_int_equal(o.offered, o.completed + o.failed + o.abandoned + o.in_flight);
			assert_int_equal(o.count.visible + o.count.buffered + o.count.lost -
			                 o.count.doubled, o.count.true_count);
		}
		if (st >= SIM_COALESCE && st <= SIM_REDIS)   /* the fixes that keep state in memory */
			assert_true(o.count.lost + o.count.doubled > 0);
		sim_free(s);
	}
}

static void sim_run__client_timeouts_abandon_and_retry(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	simtest_config(&c);
	c.client_timeout_ms = 100;
	c.retries = 2;
	simtest_run(&c, &o);
	assert_true(o.abandoned > 0);
	assert_true(o.retried >= 2 * o.abandoned);
	assert_int_equal(o.failed, 0);
	/* The client gave up; the server did not: its statements waited on
	 * for the lock, committed, and the retries counted those likes again. */
	assert_true(o.worst_wait_ms > 100);
	assert_true(o.orphaned > 0 && o.orphans_run > 0);
	assert_true(o.count.doubled > 0);
	assert_true(o.count.visible > o.count.true_count);
	assert_books(&o);

	/* Idempotent writes: the same work, no double counts. */
	c.idempotent = true;
	simtest_run(&c, &o);
	assert_true(o.orphans_run > 0);
	assert_int_equal(o.count.doubled, 0);
	assert_books(&o);

	/* lock_timeout: the server stops waiting too, so nothing is left
	 * behind to commit unseen, and a retry after its clear error cannot
	 * double. */
	c.idempotent = false;
	c.lock_timeout_ms = 100;
	simtest_run(&c, &o);
	assert_true(o.worst_wait_ms <= 100);
	assert_true(o.lock_timeouts > 0);
	assert_int_equal(o.count.doubled, 0);
	assert_int_equal(o.count.unacked, 0);
	assert_books(&o);
}

static void sim_run__unrelated_fail_only_when_pool_exhausted(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	simtest_config(&c);
	c.pool = 20;
	c.pool_timeout_ms = 200;
	c.unrelated_rps = 100;
	c.seconds = 3;
	simtest_run(&c, &o);
	assert_true(o.unrelated.failed > 0);
	c.strategy = SIM_SHARDED;
	c.rows = 16;
	simtest_run(&c, &o);
	assert_true(o.unrelated.offered > 250);
	assert_int_equal(o.unrelated.failed, 0);
	assert_int_equal(o.failed, 0);
}

/* ---- faults and bugs: their cost, and none without them ---- */

static void fault_config(struct sim_config *c, enum sim_strategy st)
{
	simtest_config(c);
	c->strategy = st;
	c->rps = 2000;
	c->flush_ms = 1000;
	c->seconds = 10;
}

static void crash(struct sim_config *c, enum sim_fault f, double at_s)
{
	c->crashes[c->ncrashes].kind = f;
	c->crashes[c->ncrashes].at_us = (int64_t)(at_s * 1e6);
	c->ncrashes++;
}

static void sim_run__app_crash_loses_coalesce_buffer(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	fault_config(&c, SIM_COALESCE);
	crash(&c, SIM_FAULT_APP, 1.5);
	simtest_run(&c, &o);
	/* The flush at 1 s took everything before; 1.0 to 1.5 s is lost. */
	assert_int_equal(o.count.lost, 1000);
	assert_int_equal(o.count.doubled, 0);
	assert_books(&o);
	/* The same crash costs nothing where the app keeps no count. */
	for (int st = 0; st < SIM_NSTRATEGIES; st++) {
		if (st == SIM_COALESCE)
			continue;
		fault_config(&c, (enum sim_strategy)st);
		crash(&c, SIM_FAULT_APP, 1.5);
		simtest_run(&c, &o);
		assert_int_equal(o.count.lost, 0);
		assert_books(&o);
	}
}

static void sim_run__consumer_crash_fenced_no_double(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	fault_config(&c, SIM_QUEUE);
	crash(&c, SIM_FAULT_CONSUMER, 0.5);
	simtest_run(&c, &o);
	assert_int_equal(o.faults[SIM_FAULT_CONSUMER], 1);
	assert_int_equal(o.count.doubled, 0);
	assert_int_equal(o.count.lost, 0);
	assert_books(&o);
}

static void sim_run__consumer_crash_without_fence_doubles_batch(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	fault_config(&c, SIM_QUEUE);
	c.bug_no_fence = true;
	crash(&c, SIM_FAULT_CONSUMER, 0.5);
	simtest_run(&c, &o);
	/* The batch of the first second (2,000 likes) is applied twice. */
	assert_int_equal(o.count.doubled, 2000);
	assert_books(&o);
	/* No crash, no double, fence or not. */
	c.ncrashes = 0;
	simtest_run(&c, &o);
	assert_int_equal(o.count.doubled, 0);
}

static void sim_run__redis_restart_loses_undrained(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	fault_config(&c, SIM_REDIS);
	crash(&c, SIM_FAULT_REDIS, 1.5);
	simtest_run(&c, &o);
	assert_int_equal(o.count.lost, 1000);
	assert_books(&o);
	fault_config(&c, SIM_NAIVE);
	crash(&c, SIM_FAULT_REDIS, 1.5);
	simtest_run(&c, &o);
	assert_int_equal(o.count.lost, 0);
}

static void sim_run__get_then_del_loses_between(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	fault_config(&c, SIM_REDIS);
	c.bug_get_then_del = true;
	simtest_run(&c, &o);
	/* Nine drains at 1..9 s; in each 1 ms gap two INCRs land (at +0 and
	 * +0.5 ms) and the DEL erases them. */
	assert_int_equal(o.count.lost, 18);
	assert_books(&o);
	c.bug_get_then_del = false;
	simtest_run(&c, &o);
	assert_int_equal(o.count.lost, 0);
	assert_books(&o);
}

static void sim_inject__live_fault_costs_what_is_buffered(void **state)
{
	struct sim_config c;
	struct sim_summary before, after;
	struct sim *s;

	(void)state;
	fault_config(&c, SIM_REDIS);
	c.seconds = 0;
	s = sim_new(&c);
	sim_advance(s, 2300000);          /* 300 ms after the drain at 2 s */
	sim_summary(s, &before);
	sim_inject(s, SIM_FAULT_REDIS);
	sim_summary(s, &after);
	assert_int_equal(before.count.buffered, 600);
	assert_int_equal(after.count.lost, 600);
	assert_int_equal(after.count.buffered, 0);
	assert_int_equal(after.faults[SIM_FAULT_REDIS], 1);
	sim_free(s);
}

/* Settling pool timeouts without events must not change a single figure. */
static char *json_of(const struct sim_config *c, bool eager)
{
	struct sim *s = sim_new(c);
	char *buf = NULL, *ev;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	s->pool_eager = eager;
	sim_run(s);
	sim_json(f, s);
	sim_csv(f, s);
	fclose(f);
	sim_free(s);
	ev = strstr(buf, "\"events\":");
	assert_non_null(ev);
	/* Only the event count may differ: cut it out. */
	memmove(ev, ev + strcspn(ev, "}"), strlen(ev + strcspn(ev, "}")) + 1);
	return buf;
}

static void sim_run__lazy_pool_timeouts_match_eager(void **state)
{
	(void)state;
	for (int st = 0; st < SIM_NSTRATEGIES; st++) {
		for (int k = 0; k < 2; k++) {
			struct sim_config c;
			char *lazy, *eager;
			busy_config(&c, (enum sim_strategy)st);
			c.retries = 0;
			c.arrivals = k ? SIM_ARRIVE_CONSTANT : SIM_ARRIVE_POISSON;
			c.hold_dist = k ? SIM_DIST_CONST : SIM_DIST_EXP;
			c.pool = 3;
			c.tick_ms = 7;
			c.seconds = 2.0503;
			lazy = json_of(&c, false);
			eager = json_of(&c, true);
			assert_string_equal(lazy, eager);
			free(lazy);
			free(eager);
		}
	}
}

/* ---- determinism ---- */

static void sim_json__same_seed_same_bytes(void **state)
{
	struct sim_config c;
	char *a, *b, *d;

	(void)state;
	busy_config(&c, SIM_NAIVE);
	a = simtest_json(&c);
	b = simtest_json(&c);
	assert_string_equal(a, b);
	c.seed = 12;
	d = simtest_json(&c);
	assert_true(strcmp(a, d) != 0);
	assert_non_null(strstr(a, "\"worst_wait_ms\":"));
	assert_non_null(strstr(a, "\"exhausted_at_s\":"));
	free(a);
	free(b);
	free(d);
}

/* Arrivals draw from streams of their own: two setups on one seed and one
 * rate see the same likes arrive at the same instants, whatever their fix
 * does with them (compare mode, `hotrow sim --compare`). */
static void sim_run__same_seed_same_arrivals_whatever_the_fix(void **state)
{
	static const enum sim_strategy fixes[] = { SIM_NAIVE, SIM_SHARDED, SIM_COALESCE,
	                                           SIM_QUEUE, SIM_REDIS, SIM_APPEND };
	uint64_t seen[2][20], ref[2][20];

	(void)state;
	for (size_t f = 0; f < sizeof fixes / sizeof fixes[0]; f++) {
		struct sim_config c;
		struct sim_summary o;
		struct sim *s;

		busy_config(&c, fixes[f]);
		c.retries = 0;
		c.client_timeout_ms = 0;
		c.pool_timeout_ms = 0;
		s = sim_new(&c);
		assert_non_null(s);
		for (int k = 0; k < 20; k++) {
			sim_advance(s, (int64_t)(k + 1) * 100000);
			sim_summary(s, &o);
			seen[0][k] = o.offered;
			seen[1][k] = o.unrelated.offered;
			if (f == 0)
				continue;
			assert_true(seen[0][k] == ref[0][k] && seen[1][k] == ref[1][k]);
		}
		if (f == 0)
			memcpy(ref, seen, sizeof ref);
		assert_true(seen[0][19] > 5000 && seen[1][19] > 400);   /* Poisson at 3,000/s and 300/s */
		sim_free(s);
	}
}

/* ---- schedules, live changes, the snapshot ---- */

static void sim_run__schedule_changes_rate(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	simtest_config(&c);
	c.strategy = SIM_SHARDED;
	c.rows = 16;
	c.seconds = 10;
	c.nphases = 2;
	c.phases[0] = (struct sim_phase){ 0, 200 };
	c.phases[1] = (struct sim_phase){ 5000000, 2000 };
	simtest_run(&c, &o);
	assert_true(o.offered >= 10999 && o.offered <= 11001);
}

static void sim_set__bigger_pool_admits_waiters(void **state)
{
	struct sim_config c;
	struct sim_snapshot *snap = malloc(sizeof *snap);
	struct sim *s;

	(void)state;
	simtest_config(&c);
	c.pool = 5;
	c.seconds = 0;
	s = sim_new(&c);
	sim_advance(s, 100000);
	sim_snapshot(s, snap);
	assert_int_equal(snap->pool_in_use, 5);
	assert_true(snap->pool_waiters > 100);
	assert_int_equal(snap->nlanes, 1);
	assert_true(snap->lanes[0].held);
	assert_int_equal(snap->lanes[0].queue_len, 4);
	assert_int_equal(snap->npool, 5);
	assert_int_equal(snap->pool_cells[0], SIM_CONN_LOCK_HOLD);
	assert_int_equal(snap->pool_cells[1], SIM_CONN_LOCK_WAIT);
	c.pool = 1000;
	sim_set(s, &c);
	sim_snapshot(s, snap);
	assert_int_equal(snap->pool_waiters, 0);
	assert_true(snap->lanes[0].queue_len > 100);
	assert_int_equal(snap->nseries, 1);
	assert_true(snap->series[0].offered_per_s == 2000);
	sim_free(s);
	free(snap);
}

static void sim_snapshot__lanes_waiters_and_series(void **state)
{
	struct sim_config c;
	struct sim_snapshot *snap = malloc(sizeof *snap);
	struct sim *s;

	(void)state;
	simtest_config(&c);
	c.strategy = SIM_SHARDED;
	c.rows = 100;
	c.slot = SIM_SLOT_ROUND_ROBIN;
	c.rps = 100000;               /* 1,000/s per row against 500/s */
	c.seconds = 0;
	s = sim_new(&c);
	sim_advance(s, 2 * 1000000);
	sim_snapshot(s, snap);
	assert_int_equal(snap->now_us, 2000000);
	assert_int_equal(snap->nrows, 100);
	assert_int_equal(snap->nlanes, SIM_SNAP_ROWS);
	assert_int_equal(snap->pool_size, 0);
	for (int i = 0; i < snap->nlanes; i++) {
		const struct sim_lane *l = &snap->lanes[i];
		assert_true(l->held);
		assert_true(l->queue_len > 900 && l->queue_len < 1100);
		assert_int_equal(l->nwaiters, SIM_SNAP_WAITERS);
		for (int k = 1; k < l->nwaiters; k++)   /* oldest first */
			assert_true(l->waiter_age_us[k - 1] >= l->waiter_age_us[k]);
	}
	/* 20 ticks of 100 ms; the count climbs by 50,000 a second. */
	assert_int_equal(snap->nseries, 20);
	assert_true(snap->series[19].t_s == 2.0);
	assert_true(snap->series[19].completed_per_s == 50000);
	assert_true(snap->series[19].queue_len == snap->pool_in_use - 100);
	/* The tick closed at 2 s; updates at the same instant may follow it. */
	assert_true(snap->series[19].true_count <= snap->summary.count.true_count);
	assert_true(snap->series[19].true_count + 100 > snap->summary.count.true_count);
	sim_free(s);
	free(snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_run__seed_table_exactly),
		cmocka_unit_test(sim_advance__saturated_row_serves_one_per_hold),
		cmocka_unit_test(sim_advance__sharded_serves_n_per_hold),
		cmocka_unit_test(sim_summary__pool_full_at_p_over_growth),
		cmocka_unit_test(sim_run__conservation_every_strategy),
		cmocka_unit_test(sim_advance__books_balance_at_every_instant),
		cmocka_unit_test(sim_run__client_timeouts_abandon_and_retry),
		cmocka_unit_test(sim_run__unrelated_fail_only_when_pool_exhausted),
		cmocka_unit_test(sim_run__app_crash_loses_coalesce_buffer),
		cmocka_unit_test(sim_run__consumer_crash_fenced_no_double),
		cmocka_unit_test(sim_run__consumer_crash_without_fence_doubles_batch),
		cmocka_unit_test(sim_run__redis_restart_loses_undrained),
		cmocka_unit_test(sim_run__get_then_del_loses_between),
		cmocka_unit_test(sim_inject__live_fault_costs_what_is_buffered),
		cmocka_unit_test(sim_run__lazy_pool_timeouts_match_eager),
		cmocka_unit_test(sim_json__same_seed_same_bytes),
		cmocka_unit_test(sim_run__same_seed_same_arrivals_whatever_the_fix),
		cmocka_unit_test(sim_run__schedule_changes_rate),
		cmocka_unit_test(sim_set__bigger_pool_admits_waiters),
		cmocka_unit_test(sim_snapshot__lanes_waiters_and_series),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
