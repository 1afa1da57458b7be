/*
 * test_gate.c: the gate, the step failpoints and the bounds of
 * tests/harness, on SQLite and PostgreSQL.
 *
 * The gate is shown to force what it promises with a call that is racy on
 * purpose (a read, then a write of what was read): held between the two,
 * both callers read the same value and one increment is lost, every time;
 * held apart, none is. A call that locks is shown not to be stuck behind
 * the gate. lt_at_once's calls are shown to meet.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit/failpoint.h"
#include "tests/harness/beside.h"
#include "tests/harness/bounds.h"
#include "tests/harness/gate.h"
#include "tests/harness/labtest.h"
#include "tests/harness/locks.h"
#include "tests/harness/sort.h"
#include "tests/harness/steps.h"
#include "util/clock.h"

static void make_counter(struct labtest *t)
{
	labtest_exec(t, "DROP TABLE IF EXISTS c; CREATE TABLE c (id INTEGER PRIMARY KEY, v BIGINT NOT NULL);"
	                "INSERT INTO c VALUES (1, 0)");
}

/* Read, then write what was read plus one: two statements, no lock. */
static int racy_add(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	(void)who;
	int64_t v;
	int rc = kit_db_query_int(db, "SELECT v FROM c WHERE id = 1", 0, NULL, &v);
	if (rc != 0)
		return rc;
	const char *params[] = { LT_I64(v + 1) };
	return kit_db_exec(db, "UPDATE c SET v = $1 WHERE id = 1", 1, params);
}

/* The same increment done right: one transaction, the row locked. */
static int locked_add(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	(void)who;
	int rc = kit_db_begin(db);
	if (rc == 0)
		rc = kit_db_exec(db, "UPDATE c SET v = v + 1 WHERE id = 1", 0, NULL);
	if (rc == 0)
		return kit_db_commit(db);
	kit_db_rollback(db);
	return rc;
}

/* lt_beside: the same locked increment as the held call and beside it.
 * Held at its COMMIT, the first keeps the row: the second waits for it,
 * and both add once. With the first's session ended instead, its
 * increment is rolled back, and the second, which waited, adds alone. */
static int locked_add_once(void *arg, struct kit_db *db)
{
	return locked_add(arg, 0, db);
}

static void beside__a_held_commit_and_a_lost_one(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct lt_beside r;
	/* whether the server was seen to show the wait depends on how soon
	 * the second got there on a loaded machine: not judged */
	lt_beside_commit(t, locked_add_once, locked_add_once, NULL, 3000, &r);
	lt_expect(r.held && !r.ended && !r.lost, NULL, "held at its COMMIT, the first increment "
	          "should keep the second from ending (held %d, ended %d, lost %d)", r.held,
	          r.ended, r.lost);
	lt_expect(r.held_rc == 0 && r.side_rc == 0, NULL, "both increments, let go: %d and %d",
	          r.held_rc, r.side_rc);
	lt_expect_int(labtest_int(t, "SELECT v FROM c"), 2, "the counter after both");

	lt_beside_commit_lost(t, locked_add_once, locked_add_once, NULL, 3000, &r);
	lt_expect(r.held && !r.ended && r.lost, NULL, "the first increment held, its session then "
	          "ended: held %d, ended %d, lost %d", r.held, r.ended, r.lost);
	lt_expect(r.held_rc != 0, NULL, "a COMMIT on an ended session returned 0");
	lt_expect_int(r.side_rc, 0, "the increment that waited for the lost one");
	lt_expect_int(labtest_int(t, "SELECT v FROM c"), 3, "the counter after the lost increment "
	              "and the one beside it");
}

static void gate__forces_both_reads_before_either_write(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct lt_gate *g = lt_gate_open(t, 2);

	for (int round = 0; round < 5; round++) {
		labtest_exec(t, "UPDATE c SET v = 0");
		lt_gate_run(g, NULL, (int[]){ 2, 2 }, racy_add, NULL);
		lt_expect(lt_gate_held(g, 0) && lt_gate_held(g, 1), NULL,
		          "both callers should have been held before their UPDATE");
		lt_expect_int(lt_gate_rc(g, 0), 0, "first caller's result");
		lt_expect_int(lt_gate_rc(g, 1), 0, "second caller's result");
		lt_expect_int(labtest_int(t, "SELECT v FROM c"), 1,
		              "held after both reads, the two read-then-write calls must lose one increment");
	}
	lt_expect_int(lt_gate_stalls(g), 0, "runs the gate opened only by giving up");
	lt_gate_close(g);
}

static void gate__a_stop_past_the_end_orders_whole_calls(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct lt_gate *g = lt_gate_open(t, 2);

	for (int round = 0; round < 5; round++) {
		labtest_exec(t, "UPDATE c SET v = 0");
		lt_gate_run(g, NULL, (int[]){ 1, 3 }, racy_add, NULL);   /* 0 waits for 1's whole call */
		lt_expect(lt_gate_held(g, 0) && !lt_gate_held(g, 1), NULL,
		          "caller 0 should stop at its first statement, caller 1 never");
		lt_expect_int(lt_gate_seen(g, 1), 2, "statements of caller 1's call");
		lt_expect_int(labtest_int(t, "SELECT v FROM c"), 2, "one call after the other adds two");
	}
	lt_gate_run(g, NULL, (int[]){ 3, 3 }, racy_add, NULL);
	lt_expect(!lt_gate_reached(g), NULL, "no call has a third statement, yet the gate says one stopped there");
	lt_gate_close(g);
}

static void gate__a_caller_waiting_for_a_lock_counts_as_there(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct lt_gate *g = lt_gate_open(t, 2);

	for (int k = 1; ; k++) {
		int64_t t0 = util_now_ns();
		lt_gate_run(g, NULL, (int[]){ k, k }, locked_add, NULL);
		int64_t ms = (util_now_ns() - t0) / 1000000;
		if (!lt_gate_reached(g))
			break;
		lt_expect_int(lt_gate_rc(g, 0), 0, "first caller's result");
		lt_expect_int(lt_gate_rc(g, 1), 0, "second caller's result");
		lt_expect(lt_gate_stalls(g) == 0, NULL,
		          "stop %d: the gate waited %lld ms for a caller that was waiting for the other's lock",
		          k, (long long)ms);
	}
	/* Stops 1 to 3 and the run that found no fourth statement. */
	lt_expect_int(labtest_int(t, "SELECT v FROM c"), 2 * 4, "two locked increments per run, four runs");
	lt_gate_close(g);
}

/* A check may make clock_gettime() run an hour a second in the thread
 * that calls the code under test (lt_clock_fast_this_thread), and the
 * gate's hook runs in that thread. Its patience and its naps go by the
 * kernel's clock all the same: the caller waiting for the held one's
 * lock still counts as there, with no run opened by giving up. Read
 * through the fast clock, the patience ran out in well under a
 * millisecond and the nap's deadline lay hours ahead, so the held
 * caller slept until the other's lock wait gave up. */
static int fast_locked_add(void *arg, int who, struct kit_db *db)
{
	lt_clock_fast_this_thread(3600);
	int rc = locked_add(arg, who, db);
	lt_clock_fast_this_thread(1);
	return rc;
}

static void gate__a_fast_clock_in_the_callers_keeps_the_gate_shut(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct lt_gate *g = lt_gate_open(t, 2);
	for (int who = 0; who < 2; who++)
		assert_int_equal(kit_db_set_lock_timeout(lt_gate_db(g, who), 15000), 0);
	int runs = 0;
	for (int k = 1; ; k++) {
		lt_gate_run(g, NULL, (int[]){ k, k }, fast_locked_add, NULL);
		if (!lt_gate_reached(g))
			break;
		runs++;
		lt_expect(lt_gate_rc(g, 0) == 0 && lt_gate_rc(g, 1) == 0, NULL, "stop %d: the "
		          "callers answered %d and %d, where both increments succeed", k,
		          lt_gate_rc(g, 0), lt_gate_rc(g, 1));
		lt_expect_int(lt_gate_stalls(g), 0, "runs the gate opened only by giving up, "
		              "its callers' clocks running an hour a second");
	}
	lt_expect_int(labtest_int(t, "SELECT v FROM c"), 2 * (runs + 1),
	              "two locked increments per run");
	lt_gate_close(g);
}

static void gate__first_runs_its_whole_call_at_the_others_stop(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct lt_gate *g = lt_gate_open(t, 2);

	for (int round = 0; round < 3; round++) {
		/* 0 has read 0 and waits before its UPDATE; 1 reads 0 and writes 1
		 * alone; then 0 writes its stale 1. */
		labtest_exec(t, "UPDATE c SET v = 0");
		lt_gate_run_first(g, NULL, (int[]){ 2, 1 }, 1, racy_add, NULL);
		lt_expect_int(lt_gate_seen(g, 1), 2, "statements of caller 1, run while caller 0 was held");
		lt_expect_int(labtest_int(t, "SELECT v FROM c"), 1,
		              "caller 1 ran whole between caller 0's read and write: one increment lost");

		/* 0 holds the row (or SQLite's write lock) before its COMMIT; 1,
		 * sent first, waits for it, which lets 0 go on. */
		labtest_exec(t, "UPDATE c SET v = 0");
		lt_gate_run_first(g, NULL, (int[]){ 3, 1 }, 1, locked_add, NULL);
		lt_expect_int(lt_gate_rc(g, 0) | lt_gate_rc(g, 1), 0, "the two locked increments' results");
		lt_expect_int(labtest_int(t, "SELECT v FROM c"), 2, "two locked increments");
	}
	lt_expect_int(lt_gate_stalls(g), 0, "runs the gate opened only by giving up");
	lt_gate_close(g);
}

static void gate__match_counts_only_statements_that_start_with_it(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct lt_gate *g = lt_gate_open(t, 2);

	labtest_exec(t, "UPDATE c SET v = 0");
	lt_gate_run(g, "update", (int[]){ 1, 1 }, racy_add, NULL);
	lt_expect_int(lt_gate_seen(g, 0), 1, "statements starting with UPDATE in one call");
	lt_expect_int(labtest_int(t, "SELECT v FROM c"), 1, "held at the UPDATE, one increment lost");
	lt_gate_close(g);
}

/* Three statements: BEGIN, UPDATE, COMMIT. */
static void steps__every_refused_statement_leaves_nothing(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct kit_db *db = labtest_connect(t);
	int k;

	for (k = 1; ; k++) {
		lt_step_arm(LT_STEP_FAILS, k);
		int rc = locked_add(NULL, 0, db);
		if (!lt_step_disarm())
			break;
		lt_expect(rc != 0, NULL, "statement %d refused, yet the call returned 0", k);
		lt_expect_int(labtest_int(t, "SELECT v FROM c"), 0, "counter after a refused statement");
		lt_expect_int(locked_add(NULL, 0, db), 0, "the same call again, with nothing armed");
		labtest_exec(t, "UPDATE c SET v = 0");
	}
	lt_expect_int(k, 4, "the first statement the call never ran");
	kit_db_close(db);
}

/* kit/db's "db-stmt-busy": each statement refused as KIT_DB_BUSY (a lock
 * wait that timed out), and refused like db-stmt-fails otherwise: nothing
 * written, the connection usable once it is disarmed. */
static void steps__busy_refusal_says_busy(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct kit_db *db = labtest_connect(t);
	kit_fp_clear();
	kit_fp_set("db-stmt-busy", KIT_FP_ERROR, 1);
	int rc = locked_add(NULL, 0, db);
	int again = kit_db_exec(db, "SELECT 1", 0, NULL);
	kit_fp_clear();
	lt_expect_int(rc, KIT_DB_BUSY, "the call with every statement refused as busy");
	lt_expect_int(again, KIT_DB_BUSY, "a statement outside a transaction, refused as busy");
	lt_expect(strstr(kit_db_errmsg(db), "db-stmt-busy") != NULL, NULL, "expected the failpoint "
	          "named in the error, got \"%s\"", kit_db_errmsg(db));
	lt_expect_int(labtest_int(t, "SELECT v FROM c"), 0, "counter after busy refusals");
	lt_expect_int(locked_add(NULL, 0, db), 0, "the same call again, with nothing armed");
	lt_expect_int(labtest_int(t, "SELECT v FROM c"), 1, "counter after the call went through");
	kit_db_close(db);
}

/* lt_step_arm(LT_STEP_BUSY, k): the k-th statement from now, and only it,
 * is refused as KIT_DB_BUSY; lt_step_disarm() says it was reached. */
static void steps__arm_busy_refuses_the_kth_as_busy(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct kit_db *db = labtest_connect(t);
	lt_step_arm(LT_STEP_BUSY, 2);
	int first = kit_db_exec(db, "SELECT 1", 0, NULL);
	int second = kit_db_exec(db, "SELECT 1", 0, NULL);
	int third = kit_db_exec(db, "SELECT 1", 0, NULL);
	bool reached = lt_step_disarm();
	lt_expect_int(first, 0, "statement 1 with statement 2 armed as busy");
	lt_expect_int(second, KIT_DB_BUSY, "statement 2, armed as busy");
	lt_expect_int(third, 0, "statement 3, after the one armed");
	lt_expect(reached && lt_step_refused(LT_STEP_BUSY) && !lt_step_refused(LT_STEP_REPLY_LOST),
	          NULL, "lt_step_disarm() said %s", reached ? "reached" : "not reached");
	kit_db_close(db);
}

/* lt_step_arm_from(how, 2): the second statement from now and every one
 * after it are refused, in every thread, until lt_step_disarm(). */
static void steps__arm_from_refuses_every_one_after(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct kit_db *db = labtest_connect(t);
	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
		if (!lt_step_refused(how))
			continue;
		int want = how == LT_STEP_BUSY ? KIT_DB_BUSY : KIT_DB_ERR;
		lt_step_arm_from(how, 2);
		int rc[4];
		for (int i = 0; i < 4; i++)
			rc[i] = kit_db_exec(db, "SELECT 1", 0, NULL);
		bool reached = lt_step_disarm();
		int after = kit_db_exec(db, "SELECT 1", 0, NULL);
		lt_expect(rc[0] == 0 && rc[1] == want && rc[2] == want && rc[3] == want && after == 0 &&
		          reached, NULL, "%s from statement 2: statements 1 to 4 gave %d %d %d %d, one "
		          "after lt_step_disarm() %d, reached %d (expected 0 %d %d %d, 0, 1)",
		          lt_step_what(how), rc[0], rc[1], rc[2], rc[3], after, reached, want, want,
		          want);
	}
	lt_step_arm_from(LT_STEP_FAILS, 3);
	int rc = kit_db_exec(db, "SELECT 1", 0, NULL);
	lt_expect(!lt_step_disarm() && rc == 0, NULL, "armed from statement 3, one statement ran "
	          "(%d): lt_step_disarm() must say it was not reached", rc);
	kit_db_close(db);
}

static void steps__a_lost_answer_keeps_what_was_committed(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	struct kit_db *db = labtest_connect(t);

	for (int k = 1; k <= 3; k++) {
		labtest_exec(t, "UPDATE c SET v = 0");
		lt_step_arm(LT_STEP_REPLY_LOST, k);
		int rc = locked_add(NULL, 0, db);
		lt_expect(lt_step_disarm(), NULL, "statement %d should have been reached", k);
		lt_expect(rc != 0, NULL, "statement %d's answer lost, yet the call returned 0", k);
		lt_expect(strstr(kit_db_errmsg(db), "answer was lost") != NULL, NULL,
		          "message: %s", kit_db_errmsg(db));
		/* Before COMMIT the transaction is gone with the connection; the
		 * COMMIT itself was done. */
		lt_expect_int(labtest_int(t, "SELECT v FROM c"), k == 3, "counter after a lost answer");
		lt_expect_int(locked_add(NULL, 0, db), 0, "the same call again, with nothing armed");
	}
	kit_db_close(db);
}

static int by_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int greater_only(const void *a, const void *b)   /* never negative */
{
	return *(const int *)a > *(const int *)b;
}

static int by_difference(const void *a, const void *b)   /* overflows far apart */
{
	unsigned x = (unsigned)*(const int *)a, y = (unsigned)*(const int *)b;
	return (int)(x - y);
}

/* sort.h: qsort is wrapped; a sound comparator is never counted, one that
 * answers only 0 and 1, or one that subtracts (tried on the two ends), is. */
static void sort__an_inconsistent_comparator_is_counted(void **state)
{
	(void)state;
	int v[] = { 9, -4, 2147483647, 0, -2147483647, 5 };
	lt_sort_reset();
	qsort(v, 6, sizeof v[0], by_int);
	lt_expect(lt_sort_inconsistent() == 0 && v[0] == -2147483647 && v[5] == 2147483647, NULL,
	          "a sound comparator was counted %d times, or did not sort", lt_sort_inconsistent());
	lt_sort_reset();
	qsort(v, 6, sizeof v[0], greater_only);
	lt_expect(lt_sort_inconsistent() > 0, NULL, "a comparator returning x > y was not counted");
	lt_sort_reset();
	qsort(v, 6, sizeof v[0], by_difference);
	lt_expect(lt_sort_inconsistent() > 0, NULL, "a comparator returning x - y, which overflows "
	          "between -2147483647 and 2147483647, was not counted");
	lt_sort_reset();
}

static void bounds__values_and_chance(void **state)
{
	(void)state;
	assert_string_equal(LT_I64(LT_PAST_INT32), "2147483648");
	assert_string_equal(LT_I64(-LT_PAST_UINT32), "-4294967297");
	lt_expect((float)LT_PAST_FLOAT != (float)(LT_PAST_FLOAT - 1) + 1.0f ||
	          (int64_t)(float)LT_PAST_FLOAT != LT_PAST_FLOAT, NULL, "2^24 + 1 should not fit a float");

	long even[10], skewed[10];
	double chi2;
	for (int i = 0; i < 10; i++)
		even[i] = 5000 + (i % 2 ? 60 : -60);             /* well inside chance */
	for (int i = 0; i < 10; i++)
		skewed[i] = i == 0 ? 6000 : 5000;                 /* 20% more in one bin */
	lt_expect(lt_uniform(even, 10, &chi2), NULL, "even counts judged skewed: chi2 %.1f", chi2);
	lt_expect(!lt_uniform(skewed, 10, &chi2), NULL, "20%% skew judged uniform: chi2 %.1f", chi2);
	long empty[3] = { 0, 0, 0 };
	lt_expect(!lt_uniform(empty, 3, NULL), NULL, "no draws at all cannot be judged uniform");
}

/* lt_at_once: every call runs, once, with its own argument, and all of
 * them at the same time: each waits (up to 10 s) until all n have begun,
 * which calls run one after another would never see. At 1 thread and at
 * the most it takes. */
struct meet {
	atomic_int *begun;
	int n;
	bool all_met;
	int calls;
};

static void *meet_all(void *arg)
{
	struct meet *m = arg;
	m->calls++;
	atomic_fetch_add(m->begun, 1);
	int64_t until = util_now_ns() + 10 * (int64_t)1000000000;
	while (atomic_load(m->begun) < m->n && util_now_ns() < until)
		sched_yield();
	m->all_met = atomic_load(m->begun) >= m->n;
	return NULL;
}

static void at_once__every_call_meets_the_others(void **state)
{
	(void)state;
	static const int ns[] = { 1, 2, 4, LT_AT_ONCE_MAX };
	for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
		int n = ns[k];
		atomic_int begun;
		struct meet m[LT_AT_ONCE_MAX];
		atomic_init(&begun, 0);
		for (int i = 0; i < n; i++)
			m[i] = (struct meet){ &begun, n, false, 0 };
		lt_at_once(n, meet_all, m, sizeof m[0]);
		for (int i = 0; i < n; i++)
			lt_expect(m[i].calls == 1 && m[i].all_met, NULL, "lt_at_once(%d): call %d ran %d "
			          "time(s) and %s the other calls running", n, i, m[i].calls,
			          m[i].all_met ? "met" : "never met");
		lt_expect(atomic_load(&begun) == n, NULL, "lt_at_once(%d) made %d calls", n,
		          atomic_load(&begun));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LABTEST_BOTH(gate__forces_both_reads_before_either_write),
		LABTEST_PG(beside__a_held_commit_and_a_lost_one),
		LABTEST_MYSQL(beside__a_held_commit_and_a_lost_one),
		LABTEST_BOTH(gate__a_stop_past_the_end_orders_whole_calls),
		LABTEST_BOTH(gate__a_caller_waiting_for_a_lock_counts_as_there),
		LABTEST_BOTH(gate__a_fast_clock_in_the_callers_keeps_the_gate_shut),
		LABTEST_BOTH(gate__first_runs_its_whole_call_at_the_others_stop),
		LABTEST_BOTH(gate__match_counts_only_statements_that_start_with_it),
		LABTEST_BOTH(steps__every_refused_statement_leaves_nothing),
		LABTEST_BOTH(steps__a_lost_answer_keeps_what_was_committed),
		LABTEST_BOTH(steps__busy_refusal_says_busy),
		LABTEST_BOTH(steps__arm_busy_refuses_the_kth_as_busy),
		LABTEST_BOTH(steps__arm_from_refuses_every_one_after),
		LABTEST_SQLITE(bounds__values_and_chance),
		LABTEST_SQLITE(sort__an_inconsistent_comparator_is_counted),
		LABTEST_SQLITE(at_once__every_call_meets_the_others),
	};
	return labtest_main("harness", tests);
}
