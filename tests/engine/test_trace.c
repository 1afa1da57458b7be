/*
 * test_trace.c: following one like (engine/sim_trace.c).
 *
 *   trace-1.x  the timeline: entries in order, the places' times adding
 *              up to the latency, the waits the entries tell equal to
 *              the places' times, a constant hold seen as configured.
 *   trace-2.x  the position in a queue only falls, one a grant, to 1;
 *              a herd wakes it once per commit while it waits.
 *   trace-3.x  every way an attempt ends: the pool's timeout,
 *              lock_timeout, statement_timeout, the client's, retries;
 *              the log's flush.
 *   trace-4.x  the slowest: the search finds the like whose trace then
 *              shows that latency; the oldest in flight; following
 *              changes nothing in the run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/sim.h"
#include "tests/engine/simtest.h"

static struct sim_trace *trace_run(const struct sim_config *c, uint64_t n)
{
	struct sim *s = sim_new(c);
	struct sim_trace *t = malloc(sizeof *t);

	assert_non_null(s);
	assert_int_equal(sim_follow_nth(s, n), 0);
	sim_run(s);
	sim_trace_get(s, t);
	sim_free(s);
	return t;
}

/* The index of the first entry of kind, -1 if none. */
static int find(const struct sim_trace *t, enum sim_trace_kind kind)
{
	for (int i = 0; i < t->nevents; i++)
		if (t->ev[i].kind == kind)
			return i;
	return -1;
}

/* Times never go back, the first entry is the arrival and the places
 * add up to the latency. */
static void assert_whole(const struct sim_trace *t)
{
	int64_t sum = 0;

	assert_true(t->nevents > 0);
	assert_int_equal(t->ev[0].kind, SIM_TR_ARRIVED);
	assert_int_equal(t->ev[0].t_us, t->first_us);
	for (int i = 1; i < t->nevents; i++)
		assert_true(t->ev[i].t_us >= t->ev[i - 1].t_us);
	assert_true(t->end_us >= t->first_us);
	assert_int_equal(t->ev[t->nevents - 1].t_us, t->end_us);
	for (int w = 0; w < SIM_AT_N; w++) {
		assert_true(t->spent_us[w] >= 0);
		sum += t->spent_us[w];
	}
	assert_int_equal(sum, t->end_us - t->first_us);
}

/* One row past its ceiling: 600/s of constant 2 ms holds (500/s). */
static void overload_config(struct sim_config *c)
{
	simtest_config(c);
	c->rps = 600;
	c->hold_ms = 2;
	c->seconds = 1;
}

/* trace-1.1 */
static void nth__timeline_in_order_adds_up(void **state)
{
	struct sim_config c;
	struct sim_trace *t;
	int conn, queue, locked, done;

	(void)state;
	overload_config(&c);
	c.pool = 8;
	t = trace_run(&c, 300);
	assert_int_equal(t->state, SIM_TRACE_COMPLETED);
	assert_int_equal(t->n, 300);
	assert_whole(t);
	conn = find(t, SIM_TR_CONNECTED);
	queue = find(t, SIM_TR_LOCK_QUEUE);
	locked = find(t, SIM_TR_LOCKED);
	done = find(t, SIM_TR_COMMITTED);
	assert_true(find(t, SIM_TR_POOL_QUEUE) > 0);
	assert_true(conn > 0 && queue > conn && locked > queue && done == t->nevents - 1);
	/* the waits the entries tell are the places' times */
	assert_int_equal(t->ev[conn].arg, t->spent_us[SIM_AT_POOL]);
	assert_int_equal(t->ev[locked].arg, t->spent_us[SIM_AT_LOCK_WAIT]);
	assert_int_equal(t->ev[locked].arg, t->ev[locked].t_us - t->ev[queue].t_us);
	assert_int_equal(t->spent_us[SIM_AT_HOLD], 2000);
	assert_int_equal(t->ev[done].t_us - t->ev[locked].t_us, 2000);
	free(t);
}

/* trace-2.1: FIFO: the position falls by one at each grant, to 1. */
static void position__counts_down_to_one(void **state)
{
	struct sim_config c;
	struct sim *s;
	struct sim_trace t;
	int64_t last = 0, joined = 0;
	int seen = 0;

	(void)state;
	overload_config(&c);
	c.tick_ms = 10;                       /* a position entry is due at ticks */
	s = sim_new(&c);
	sim_follow_nth(s, 400);
	while (sim_step(s)) {
		sim_trace_get(s, &t);
		if (t.state != SIM_TRACE_LIVE || t.where != SIM_AT_LOCK_WAIT)
			continue;
		if (!seen++) {
			joined = t.position;
			assert_int_equal(t.ev[find(&t, SIM_TR_LOCK_QUEUE)].arg, joined);
		} else {
			assert_true(t.position == last || t.position == last - 1);
		}
		last = t.position;
	}
	sim_trace_get(s, &t);
	assert_true(joined > 30);              /* it did wait behind many */
	assert_int_equal(last, 1);
	assert_int_equal(t.state, SIM_TRACE_COMPLETED);
	/* the entries on the way halve the position */
	for (int i = 0, prev = -1; i < t.nevents; i++)
		if (t.ev[i].kind == SIM_TR_POSITION) {
			assert_true(prev < 0 || t.ev[i].arg <= t.ev[prev].arg / 2);
			prev = i;
		}
	assert_true(find(&t, SIM_TR_POSITION) > 0);
	sim_free(s);
}

/* trace-2.2: a herd wakes every waiter at each commit: the like is woken
 * once per commit of its row while it waits, the last time drawn. */
static void herd__woken_once_per_commit(void **state)
{
	struct sim_config c;
	struct sim *s;
	struct sim_trace t;
	struct sim_snapshot *snap = malloc(sizeof *snap);
	uint64_t at_join = 0, at_lock = 0;
	bool waiting = false;

	(void)state;
	overload_config(&c);
	c.handoff = SIM_HANDOFF_HERD;
	c.wake_us = 20;
	s = sim_new(&c);
	sim_follow_nth(s, 300);
	while (sim_step(s)) {
		sim_trace_get(s, &t);
		if (!waiting && t.state == SIM_TRACE_LIVE && t.where == SIM_AT_LOCK_WAIT) {
			sim_snapshot(s, snap);
			at_join = snap->lanes[0].completed;
			waiting = true;
		} else if (waiting && t.where == SIM_AT_HOLD) {
			sim_snapshot(s, snap);
			at_lock = snap->lanes[0].completed;
			break;
		}
	}
	assert_true(waiting);
	sim_run(s);
	sim_trace_get(s, &t);
	assert_int_equal(t.state, SIM_TRACE_COMPLETED);
	assert_true(t.wakes >= 2);
	assert_int_equal(t.wakes, at_lock - at_join);
	assert_true(find(&t, SIM_TR_WOKEN) > 0);
	assert_true(find(&t, SIM_TR_WON) > find(&t, SIM_TR_WOKEN));
	assert_int_equal(t.ev[find(&t, SIM_TR_WON)].arg, t.wakes);
	assert_whole(&t);
	free(snap);
	sim_free(s);
}

/* trace-3.1: no connection within the pool's timeout. */
static void ends__pool_timeout(void **state)
{
	struct sim_config c;
	struct sim_trace *t;

	(void)state;
	overload_config(&c);
	c.pool = 4;
	c.pool_timeout_ms = 5;
	t = trace_run(&c, 400);
	assert_int_equal(t->state, SIM_TRACE_FAILED);
	assert_true(find(t, SIM_TR_POOL_TIMEOUT) > find(t, SIM_TR_POOL_QUEUE));
	assert_int_equal(t->ev[t->nevents - 1].kind, SIM_TR_GAVE_UP);
	assert_int_equal(t->spent_us[SIM_AT_POOL], 5000);
	assert_whole(t);
	free(t);
}

/* trace-3.2: the server cancels it in the lock queue. */
static void ends__lock_and_statement_timeout(void **state)
{
	struct sim_config c;
	struct sim_trace *t;

	(void)state;
	overload_config(&c);
	c.lock_timeout_ms = 7.5;      /* not at a grant's time: holds end on whole ms */
	t = trace_run(&c, 402);       /* (400 gets the lock at 7 ms, just in time) */
	assert_int_equal(t->state, SIM_TRACE_FAILED);
	assert_true(find(t, SIM_TR_LOCK_TIMEOUT) > find(t, SIM_TR_LOCK_QUEUE));
	assert_int_equal(find(t, SIM_TR_STMT_TIMEOUT), -1);
	assert_int_equal(t->spent_us[SIM_AT_LOCK_WAIT], 7500);
	assert_whole(t);
	free(t);

	overload_config(&c);
	c.statement_timeout_ms = 9.5;
	t = trace_run(&c, 402);
	assert_int_equal(t->state, SIM_TRACE_FAILED);
	assert_true(find(t, SIM_TR_STMT_TIMEOUT) > find(t, SIM_TR_LOCK_QUEUE));
	assert_int_equal(find(t, SIM_TR_LOCK_TIMEOUT), -1);
	assert_int_equal(t->spent_us[SIM_AT_LOCK_WAIT], 9500);
	assert_whole(t);
	free(t);
}

/* trace-3.3: the client gives up and retries after a pause; the last try
 * gives up for good (abandoned). */
static void ends__client_timeout_retries(void **state)
{
	struct sim_config c;
	struct sim_trace *t;
	int first, retry;

	(void)state;
	overload_config(&c);
	c.client_timeout_ms = 10;
	c.retries = 2;
	c.backoff = SIM_BACKOFF_EXP;
	c.backoff_ms = 3;
	t = trace_run(&c, 450);
	assert_int_equal(t->state, SIM_TRACE_ABANDONED);
	assert_int_equal(t->tries, 3);
	first = find(t, SIM_TR_CLIENT_TIMEOUT);
	retry = find(t, SIM_TR_RETRY);
	assert_true(first > 0 && retry == first + 1);
	assert_int_equal(t->ev[retry].arg, 2);
	assert_int_equal(t->ev[first].arg, 1);        /* its statement stays queued */
	assert_int_equal(t->spent_us[SIM_AT_BACKOFF], 3000 + 6000);
	assert_int_equal(t->ev[t->nevents - 1].kind, SIM_TR_GAVE_UP);
	assert_int_equal(t->ev[t->nevents - 1].arg, 3);
	assert_whole(t);
	free(t);
}

/* trace-3.4: with a shared log the commit waits for a flush, lock held. */
static void flush__wait_for_the_log(void **state)
{
	struct sim_config c;
	struct sim_trace *t;

	(void)state;
	simtest_config(&c);
	c.rps = 100;
	c.hold_ms = 1;
	c.wal_flush_ms = 1.5;
	t = trace_run(&c, 50);
	assert_int_equal(t->state, SIM_TRACE_COMPLETED);
	assert_true(find(t, SIM_TR_FLUSH_WAIT) > find(t, SIM_TR_LOCKED));
	assert_int_equal(t->spent_us[SIM_AT_HOLD], 1000);
	assert_int_equal(t->spent_us[SIM_AT_FLUSH], 1500);
	assert_int_equal(t->end_us - t->first_us, 2500);
	assert_whole(t);
	free(t);
}

/* trace-4.1: the search's slowest, followed, took that long; and none
 * that completed took longer. */
static void slowest__search_then_follow(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	struct sim *s;
	struct sim_trace *t;
	int64_t lat;
	uint64_t n;

	(void)state;
	overload_config(&c);
	c.arrivals = SIM_ARRIVE_POISSON;
	c.hold_dist = SIM_DIST_EXP;
	c.rps = 450;
	c.handoff = SIM_HANDOFF_HERD;
	s = sim_new(&c);
	sim_follow_search(s);
	sim_run(s);
	n = sim_follow_found(s, &lat);
	sim_summary(s, &o);
	sim_free(s);
	assert_true(n > 0);
	assert_int_equal(lat, (int64_t)(o.latency_ms.max * 1000 + 0.5));
	t = trace_run(&c, n);
	assert_int_equal(t->state, SIM_TRACE_COMPLETED);
	assert_int_equal(t->end_us - t->first_us, lat);
	assert_whole(t);
	free(t);
}

/* trace-4.2: picked while in flight: the oldest one, its past read back
 * from its record (its pool wait, its lock wait) as a run that followed
 * it from its arrival saw it. */
static void slowest__oldest_in_flight(void **state)
{
	struct sim_config c;
	struct sim *s;
	struct sim_snapshot *snap = malloc(sizeof *snap);
	struct sim_trace t, *whole;
	uint64_t n;

	(void)state;
	overload_config(&c);
	c.pool = 50;
	s = sim_new(&c);
	sim_advance(s, 900000);               /* the pool full since ~0.5 s */
	assert_int_equal(sim_follow_slowest(s), 0);
	sim_snapshot(s, snap);
	assert_int_equal(snap->trace.state, SIM_TRACE_LIVE);
	/* nobody waiting in the lock queue has waited longer than it lived */
	for (int k = 0; k < snap->lanes[0].nwaiters; k++)
		assert_true(snap->lanes[0].waiter_age_us[k] <= snap->now_us - snap->trace.first_us);
	assert_int_equal(snap->trace.ev[snap->trace.nevents - 1].kind, SIM_TR_PICKED);
	assert_int_equal(snap->trace.ev[snap->trace.nevents - 1].t_us, 900000);
	sim_run(s);
	sim_trace_get(s, &t);
	assert_int_equal(t.state, SIM_TRACE_COMPLETED);
	assert_whole(&t);
	assert_int_equal(t.spent_us[SIM_AT_BEFORE], 0);
	assert_true(t.spent_us[SIM_AT_POOL] > 0 && t.spent_us[SIM_AT_LOCK_WAIT] > 0);
	sim_free(s);
	free(snap);

	/* the same like, followed from its arrival (constant arrivals: the
	 * k-th comes at k / 600 s) */
	n = (uint64_t)((double)t.first_us * 600 / 1e6 + 0.5) + 1;
	whole = trace_run(&c, n);
	assert_int_equal(whole->first_us, t.first_us);
	assert_int_equal(whole->end_us, t.end_us);
	assert_memory_equal(whole->spent_us, t.spent_us, sizeof t.spent_us);
	free(whole);
}

/* trace-4.3: following a like changes nothing in the run, and one
 * already offered cannot be followed any more. */
static void follow__changes_nothing(void **state)
{
	struct sim_config c;
	struct sim_summary a, b;
	struct sim *s;

	(void)state;
	overload_config(&c);
	c.client_timeout_ms = 10;
	c.retries = 1;
	simtest_run(&c, &a);
	s = sim_new(&c);
	sim_follow_nth(s, 420);
	sim_run(s);
	sim_summary(s, &b);
	assert_int_equal(sim_follow_nth(s, 5), -1);
	sim_free(s);
	assert_memory_equal(&a, &b, sizeof a);

	s = sim_new(&c);
	sim_follow_search(s);
	sim_run(s);
	sim_summary(s, &b);
	sim_free(s);
	assert_memory_equal(&a, &b, sizeof a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nth__timeline_in_order_adds_up),
		cmocka_unit_test(position__counts_down_to_one),
		cmocka_unit_test(herd__woken_once_per_commit),
		cmocka_unit_test(ends__pool_timeout),
		cmocka_unit_test(ends__lock_and_statement_timeout),
		cmocka_unit_test(ends__client_timeout_retries),
		cmocka_unit_test(flush__wait_for_the_log),
		cmocka_unit_test(slowest__search_then_follow),
		cmocka_unit_test(slowest__oldest_in_flight),
		cmocka_unit_test(follow__changes_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
