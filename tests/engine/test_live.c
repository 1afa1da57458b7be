/*
 * test_live.c: a fix applied to a running simulation (engine/sim_live.c).
 *
 * The base: 1,000 likes/s on one row that takes 500/s (2 ms holds) behind
 * a pool of 20 that waits forever, so that by 5 s some 2,500 likes wait:
 * 19 in the row's lock queue, the rest for a connection. Then the fix.
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

static struct sim_snapshot snap;

static void base(struct sim_config *c)
{
	simtest_config(c);
	c->rps = 1000;
	c->pool = 20;
	c->pool_timeout_ms = 0;
	c->seconds = 30;
}

static uint64_t others_done(const struct sim_snapshot *sn)
{
	uint64_t n = 0;

	for (int i = 1; i < sn->nlanes; i++)
		n += sn->lanes[i].completed;
	return n;
}

/* Naive to 16 slots at 5 s: the backlog stays where it is and drains by
 * the naive path (row 0); new arrivals spread over the slots once the
 * pool's line has passed them on. */
static void sim_set__a_new_strategy_keeps_the_backlog(void **state)
{
	struct sim_config c, fix;
	struct sim_summary before, now;
	struct sim *s, *plain;
	int waiting, queued;
	uint64_t row0;

	(void)state;
	base(&c);
	s = sim_new(&c);
	sim_advance(s, 5000000);
	sim_snapshot(s, &snap);
	sim_summary(s, &before);
	waiting = snap.pool_waiters;
	queued = snap.lanes[0].queue_len;
	row0 = snap.lanes[0].completed;
	assert_true(waiting > 2000 && queued == 19);

	fix = c;
	fix.strategy = SIM_SHARDED;
	fix.rows = 16;
	assert_false(sim_config_restarts(&c, &fix));
	sim_set(s, &fix);
	sim_snapshot(s, &snap);
	sim_summary(s, &now);
	assert_true(sim_now(s) == 5000000);          /* no restart */
	assert_true(now.offered == before.offered);
	assert_int_equal(snap.config.strategy, SIM_SHARDED);
	assert_int_equal(snap.nrows, 16);
	assert_int_equal(snap.pool_waiters, waiting);  /* nothing moved */
	assert_int_equal(snap.lanes[0].queue_len, queued);

	/* A second later the line ahead of the pool is still the backlog's,
	 * and every one of it went to row 0 as it started. */
	sim_advance(s, 6000000);
	sim_snapshot(s, &snap);
	assert_true(others_done(&snap) == 0);
	assert_true(snap.lanes[0].completed >= row0 + 490);
	assert_true(snap.pool_waiters > 0);

	/* Then it drains: by 20 s the line is gone and the slots share the
	 * likes, while the same run without the fix only grows. */
	sim_advance(s, 20000000);
	sim_snapshot(s, &snap);
	for (int i = 1; i < 16; i++)
		assert_true(snap.lanes[i].completed > 0);
	assert_true(snap.pool_waiters == 0);
	assert_true(snap.summary.in_flight < 40);
	plain = sim_new(&c);
	sim_advance(plain, 20000000);
	sim_summary(plain, &now);
	assert_true(now.in_flight > 9000);
	sim_free(plain);
	sim_free(s);
}

/* Books at every step, and what a buffered fix leaves behind: naive to
 * coalesce at 5 s (new likes are buffered, the backlog goes on to the
 * row; the flusher waits its turn on the row), back to naive at 8 s (the
 * buffer is still flushed). */
static void sim_set__to_a_buffered_path_and_back(void **state)
{
	struct sim_config c, fix;
	struct sim *s;
	int64_t t;

	(void)state;
	base(&c);
	c.seconds = 10;
	c.flush_ms = 200;
	s = sim_new(&c);
	for (t = 100000; sim_now(s) < 10000000; t += 100000) {
		if (t == 5000000) {
			fix = c;
			fix.strategy = SIM_COALESCE;
			sim_set(s, &fix);
		} else if (t == 8000000) {
			sim_set(s, &c);
		}
		sim_advance(s, t);
		sim_snapshot(s, &snap);
		const struct sim_summary *o = &snap.summary;
		assert_true(o->count.visible + o->count.buffered + o->count.lost -
		            o->count.doubled - o->count.unacked == o->count.true_count);
		if (t == 6000000) {
			/* the new likes were buffered at once; the backlog still
			 * drains through row 0 */
			assert_true(o->count.buffered > 0);
			assert_true(snap.pool_waiters > 0);
		}
	}
	sim_run(s);
	sim_snapshot(s, &snap);
	assert_true(snap.summary.count.buffered == 0);
	assert_true(snap.summary.count.lost == 0);
	assert_true(snap.summary.count.visible == snap.summary.count.true_count);
	assert_true(snap.summary.completed == snap.summary.offered);
	sim_free(s);
}

static void set_at(struct sim *s, int64_t t, const struct sim_config *c)
{
	sim_advance(s, t);
	sim_set(s, c);
}

static char *output(struct sim *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	sim_run(s);
	sim_json(f, s);
	sim_csv(f, s);
	fclose(f);
	return buf;
}

/* The list of changes says what changed when; replaying its calls at
 * their times on a new simulation gives the same run, byte for byte, and
 * a call a little later gives another. */
static void sim_changes__replayed_give_the_same_run(void **state)
{
	struct sim_config c, a, b;
	struct sim *s, *r, *late;
	const struct sim_change *ch;
	size_t n;
	int64_t at;
	char *one, *two, *three;

	(void)state;
	base(&c);
	c.seconds = 12;
	c.arrivals = SIM_ARRIVE_POISSON;
	a = c;
	a.strategy = SIM_SHARDED;
	a.rows = 16;
	b = a;
	b.pool = 50;
	b.pool_timeout_ms = 2000;

	s = sim_new(&c);
	set_at(s, 5000000, &a);
	set_at(s, 7000000, &a);               /* a call that changes nothing */
	set_at(s, 8000000, &b);
	ch = sim_changes(s, &n);
	assert_int_equal(n, 4);
	assert_int_equal(sim_change_sets(s), 3);
	assert_true(ch[0].at_us == 5000000 && ch[0].set == 0);
	assert_string_equal(ch[0].option, "strategy");
	assert_string_equal(ch[0].from, "naive");
	assert_string_equal(ch[0].to, "sharded");
	assert_string_equal(ch[1].field, "rows");
	assert_string_equal(ch[1].from, "1");
	assert_string_equal(ch[1].to, "16");
	assert_true(ch[2].at_us == 8000000 && ch[2].set == 2);
	assert_string_equal(ch[2].option, "pool");
	assert_string_equal(ch[3].option, "pool-timeout-ms");
	assert_string_equal(ch[3].from, "0");
	assert_string_equal(ch[3].to, "2000");
	one = output(s);

	r = sim_new(&c);
	for (int i = 0; sim_change_config(s, i, &at); i++)
		set_at(r, at, sim_change_config(s, i, NULL));
	two = output(r);
	assert_string_equal(one, two);

	late = sim_new(&c);
	set_at(late, 5000000, &a);
	set_at(late, 7900000, &b);
	three = output(late);
	assert_true(strcmp(one, three) != 0);
	free(one);
	free(two);
	free(three);
	sim_free(s);
	sim_free(r);
	sim_free(late);
}

/* Fewer rows: a slot no longer picked keeps its queue until it drains,
 * and the snapshot lists it until then. */
static void sim_set__fewer_rows_drain_their_queues(void **state)
{
	struct sim_config c, fewer;
	struct sim *s;

	(void)state;
	base(&c);
	c.strategy = SIM_SHARDED;
	c.rows = 4;
	c.rps = 4000;                   /* over the 4 slots' 2,000/s */
	s = sim_new(&c);
	sim_advance(s, 2000000);
	fewer = c;
	fewer.rows = 2;
	sim_set(s, &fewer);
	sim_snapshot(s, &snap);
	assert_int_equal(snap.nrows, 4);
	assert_true(snap.lanes[3].queue_len > 0);
	sim_advance(s, 4000000);
	sim_snapshot(s, &snap);
	assert_int_equal(snap.nrows, 2);
	sim_free(s);
}

/* Every write path to every other, at random times, with faults among
 * them: the books hold at every step, and once arrivals stop everything
 * drains: nothing in flight, and a second later (the flusher goes on
 * after the run) nothing buffered in any store. */
static void sim_set__any_path_to_any_path(void **state)
{
	struct sim_config c, n;
	uint64_t x = 12345;

	(void)state;
	for (int run = 0; run < 12; run++) {
		base(&c);
		c.seconds = 6;
		c.rps = 800;
		c.flush_ms = 50;
		c.arrivals = SIM_ARRIVE_POISSON;
		c.seed = (uint64_t)run + 1;
		c.retries = run % 3;
		c.client_timeout_ms = run % 2 ? 400 : 0;
		c.handoff = run % 4 == 3 ? SIM_HANDOFF_HERD : SIM_HANDOFF_FIFO;
		struct sim *s = sim_new(&c);
		n = c;
		for (int64_t t = 200000; t < 6000000; t += 200000) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			if ((x >> 33) % 3 == 0) {
				n.strategy = (enum sim_strategy)((x >> 40) % SIM_NSTRATEGIES);
				n.rows = sim_strategy_info(n.strategy)->uses_rows ? 1 + (int)((x >> 50) % 8) : 1;
				sim_set(s, &n);
			}
			if ((x >> 36) % 7 == 0)
				sim_inject(s, (enum sim_fault)((x >> 45) % SIM_NFAULTS));
			sim_advance(s, t);
			sim_snapshot(s, &snap);
			const struct sim_summary *o = &snap.summary;
			assert_true(o->count.visible + o->count.buffered + o->count.lost -
			            o->count.doubled - o->count.unacked == o->count.true_count);
		}
		sim_run(s);
		sim_advance(s, sim_now(s) + 1000000);   /* the flushes after the end */
		sim_snapshot(s, &snap);
		const struct sim_summary *o = &snap.summary;
		assert_true(o->in_flight == 0);
		assert_true(o->count.buffered == 0);
		assert_true(o->offered == o->completed + o->failed + o->abandoned);
		assert_true(o->count.visible + o->count.lost - o->count.doubled -
		            o->count.unacked == o->count.true_count);
		sim_free(s);
	}
}

/* ---- timeouts changed with a backlog: each attempt keeps its own ---- */

/* The likes failed so far. */
static uint64_t failed_at(struct sim *s, int64_t t)
{
	struct sim_summary sum;

	sim_advance(s, t);
	sim_summary(s, &sum);
	return sum.failed;
}

/* Whether t's timeline has an entry of kind k. */
static bool has_entry(const struct sim_trace *t, enum sim_trace_kind k)
{
	for (int i = 0; i < t->nevents; i++)
		if (t->ev[i].kind == k)
			return true;
	return false;
}

/* The like with ordinal n on c, timeouts changed to fix at 5 s: how it
 * ended, and when. */
static struct sim_trace *traced(const struct sim_config *c, const struct sim_config *fix,
                                uint64_t n)
{
	static struct sim_trace t;
	struct sim *s = sim_new(c);

	assert_int_equal(sim_follow_nth(s, n), 0);
	set_at(s, 5000000, fix);
	sim_advance(s, 20000000);
	sim_trace_get(s, &t);
	sim_free(s);
	return &t;
}

/* A pool timeout cut from 5 s to 0.5 s at 5 s. The 2,500 waiting then
 * (arrived from 2.5 s on; the pool's line moves at 500/s, so each waits
 * half its arrival time) keep their 5 s and none of them fails; those
 * arriving after the change, behind them, fail 0.5 s after they came,
 * from 5.5 s on, however far back in the line. */
static void sim_set__a_shorter_pool_timeout_spares_the_backlog(void **state)
{
	struct sim_config c, fix;
	struct sim *s;
	struct sim_trace *t;

	(void)state;
	base(&c);
	c.pool_timeout_ms = 5000;
	fix = c;
	fix.pool_timeout_ms = 500;
	s = sim_new(&c);
	set_at(s, 5000000, &fix);
	assert_int_equal(failed_at(s, 5000000), 0);          /* nobody at the change */
	assert_int_equal(failed_at(s, 5490000), 0);
	uint64_t f6 = failed_at(s, 6000000);
	assert_true(f6 >= 490 && f6 <= 510);                 /* those of 5.0 to 5.5 s */
	uint64_t f9 = failed_at(s, 9000000);
	assert_true(f9 >= 3490 && f9 <= 3510);               /* all since 5 s, to 8.5 */
	sim_free(s);

	t = traced(&c, &fix, 4500);                          /* old: waits 4.5 s */
	assert_int_equal(t->state, SIM_TRACE_COMPLETED);
	assert_true(t->end_us > 8900000 && t->end_us < 9100000);
	t = traced(&c, &fix, 5600);                          /* new: 0.5 s, far back */
	assert_int_equal(t->state, SIM_TRACE_FAILED);
	assert_true(has_entry(t, SIM_TR_POOL_TIMEOUT));
	assert_true(t->end_us == t->first_us + 500000);
}

/* A pool timeout raised from 1 s to 10 s at 5 s: the second's worth of
 * likes waiting then still fail at 1 s (half of them: the line takes the
 * other half in time), and nobody who came after the change fails before
 * the new 10 s (the first of them could from 15 s on). */
static void sim_set__a_longer_pool_timeout_keeps_the_old_one_for_the_backlog(void **state)
{
	struct sim_config c, fix;
	struct sim *s;

	(void)state;
	base(&c);
	c.pool_timeout_ms = 1000;
	fix = c;
	fix.pool_timeout_ms = 10000;
	s = sim_new(&c);
	uint64_t f5 = failed_at(s, 5000000);
	sim_set(s, &fix);
	uint64_t f6 = failed_at(s, 6000000);
	assert_true(f6 - f5 >= 400 && f6 - f5 <= 600);
	assert_int_equal(failed_at(s, 14900000), f6);
	sim_free(s);
}

/* lock_timeout set to 200 ms (none before) at 5 s, with 2,500 likes in
 * the row's queue (an unbounded pool): they wait on and commit, however
 * long; each arriving after the change is cancelled 200 ms after it
 * joined, though the queue's head is an old one. The change says so. */
static void sim_set__a_lock_timeout_spares_the_lock_queue(void **state)
{
	struct sim_config c, fix;
	struct sim_summary sum;
	struct sim *s;
	struct sim_trace *t;
	char text[512];

	(void)state;
	base(&c);
	c.pool = 0;
	fix = c;
	fix.lock_timeout_ms = 200;
	s = sim_new(&c);
	set_at(s, 5000000, &fix);
	sim_change_text(s, text, sizeof text);
	assert_non_null(strstr(text, "at 5.0 s: lock-timeout-ms 0 -> 200"));
	assert_non_null(strstr(text, "Those waiting then keep the timeouts they started with"));
	sim_advance(s, 9000000);
	sim_summary(s, &sum);
	assert_true(sum.lock_timeouts >= 3790 && sum.lock_timeouts <= 3810);  /* 5.0-8.8 s */
	assert_true(sum.completed >= 4490 && sum.completed <= 4510);          /* the old ones */
	sim_free(s);

	t = traced(&c, &fix, 4500);
	assert_int_equal(t->state, SIM_TRACE_COMPLETED);
	t = traced(&c, &fix, 5600);
	assert_int_equal(t->state, SIM_TRACE_FAILED);
	assert_true(has_entry(t, SIM_TR_LOCK_TIMEOUT));
	assert_true(t->end_us == t->first_us + 200000);
}

/* The pool cut from 20 to 5 at 5 s: the 20 connections in use stay in
 * use (nothing in flight is failed), and only as they come back does the
 * pool shrink; raised to 40 later, the waiters get the 35 more at once. */
static void sim_set__a_pool_resize_follows_the_connections(void **state)
{
	struct sim_config c, fix;
	struct sim_summary sum;
	struct sim *s;
	int waiting;

	(void)state;
	base(&c);
	fix = c;
	fix.pool = 5;
	s = sim_new(&c);
	sim_advance(s, 5000000);
	sim_snapshot(s, &snap);
	waiting = snap.pool_waiters;
	sim_set(s, &fix);
	sim_snapshot(s, &snap);
	sim_summary(s, &sum);
	assert_int_equal(snap.pool_size, 5);
	assert_int_equal(snap.pool_in_use, 20);
	assert_int_equal(snap.pool_waiters, waiting);
	assert_int_equal(sum.failed, 0);
	sim_advance(s, 5010000);                 /* 5 holds of 2 ms: 5 came back */
	sim_snapshot(s, &snap);
	assert_int_equal(snap.pool_in_use, 15);
	sim_advance(s, 6000000);
	sim_snapshot(s, &snap);
	assert_int_equal(snap.pool_in_use, 5);

	fix.pool = 40;
	sim_set(s, &fix);
	sim_snapshot(s, &snap);
	assert_int_equal(snap.pool_in_use, 40);
	sim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_set__a_new_strategy_keeps_the_backlog),
		cmocka_unit_test(sim_set__to_a_buffered_path_and_back),
		cmocka_unit_test(sim_changes__replayed_give_the_same_run),
		cmocka_unit_test(sim_set__fewer_rows_drain_their_queues),
		cmocka_unit_test(sim_set__any_path_to_any_path),
		cmocka_unit_test(sim_set__a_shorter_pool_timeout_spares_the_backlog),
		cmocka_unit_test(sim_set__a_longer_pool_timeout_keeps_the_old_one_for_the_backlog),
		cmocka_unit_test(sim_set__a_lock_timeout_spares_the_lock_queue),
		cmocka_unit_test(sim_set__a_pool_resize_follows_the_connections),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
