/*
 * test_storm.c: timeouts and retries that cost what they cost.
 *
 * The retry-storm scenario: 350 likes/s on a row that takes 500/s, and a
 * 5 s spike to 1,000/s. Clients give up after 1 s and retry at once, up
 * to three times; the server runs every statement it was sent. After the
 * spike the queue is longer than the clients' patience, so every served
 * statement is one whose client has already left, and the retries keep
 * the load over the ceiling: goodput stays near zero with the spike long
 * gone (a metastable state). Each fix that cuts the wasted work ends it;
 * the bulkhead keeps the other endpoints alive while the counter burns.
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

struct window {
	double goodput, offered;       /* likes per second, 30 s to 40 s */
	double unrel_failed;           /* other endpoints' failures per second */
	struct sim_summary end;        /* at 40 s */
};

/* Run the scenario with one change and measure the last ten seconds. */
static void storm(struct sim_config *c, struct window *w)
{
	struct sim *s = sim_new(c);
	struct sim_summary a;

	assert_non_null(s);
	sim_advance(s, 30 * 1000000LL);
	sim_summary(s, &a);
	sim_advance(s, 40 * 1000000LL);
	sim_summary(s, &w->end);
	sim_free(s);
	w->goodput = (double)(w->end.completed - a.completed) / 10;
	w->offered = (double)(w->end.offered - a.offered) / 10;
	w->unrel_failed = (double)(w->end.unrelated.failed - a.unrelated.failed) / 10;
}

static void storm_config(struct sim_config *c)
{
	assert_int_equal(sim_scenario("retry-storm", c), 0);
}

static void sim_run__retry_storm_collapses_after_the_spike(void **state)
{
	struct sim_config c;
	struct window w;

	(void)state;
	storm_config(&c);
	storm(&c, &w);
	/* Twenty seconds after the spike, the load is back to 350/s under a
	 * 500/s ceiling, and still almost nothing gets through. */
	assert_true(w.offered > 300);
	assert_true(w.goodput < 0.05 * w.offered);
	/* The server was busy all along, with statements nobody waited for,
	 * and blind retries applied likes twice. */
	assert_true(w.end.orphans_run > 10000);
	assert_true(w.end.count.doubled > 1000);
	assert_true(w.end.count.visible > w.end.count.true_count);
	/* The other endpoints share the pool: they fail too. */
	assert_true(w.unrel_failed > 20);

	/* Without the retries the same spike is only a bad minute: the queue
	 * drains, so the retries are what keeps the system down. */
	c.retries = 0;
	storm(&c, &w);
	assert_true(w.goodput > 0.9 * w.offered);
}

static void sim_run__retry_storm_lock_timeout_recovers(void **state)
{
	struct sim_config c;
	struct window w;

	(void)state;
	storm_config(&c);
	c.lock_timeout_ms = 300;       /* the server stops waiting too */
	storm(&c, &w);
	assert_true(w.goodput > 0.9 * w.offered);
	assert_true(w.end.lock_timeouts > 0);
	assert_true(w.unrel_failed < 1);
}

/* PostgreSQL wakes every waiter at each commit, and each hand-off starts
 * a waiter's lock_timeout again: on a row that commits every 2 ms a
 * 300 ms lock_timeout never fires, and the storm goes on. The pair with
 * statement_timeout, which times the whole wait, ends it. */
static void sim_run__retry_storm_herd_needs_statement_timeout(void **state)
{
	struct sim_config c;
	struct window lock_only, pair;

	(void)state;
	storm_config(&c);
	c.handoff = SIM_HANDOFF_HERD;
	c.lock_timeout_ms = 300;
	storm(&c, &lock_only);
	c.statement_timeout_ms = 300;
	storm(&c, &pair);
	assert_int_equal(lock_only.end.lock_timeouts, 0);
	assert_true(lock_only.goodput < 0.5 * lock_only.offered);
	assert_true(pair.goodput > 0.9 * pair.offered);
	assert_true(pair.end.statement_timeouts > 0);
	assert_true(pair.unrel_failed < 1);
}

static void sim_run__retry_storm_budget_recovers(void **state)
{
	struct sim_config c;
	struct window w;

	(void)state;
	storm_config(&c);
	c.retry_budget = 0.1;          /* at most 1 retry per 10 requests */
	storm(&c, &w);
	assert_true(w.goodput > 0.9 * w.offered);
	assert_true(w.end.retries_denied > 0);
}

/* Backoff with jitter spreads the retries out but does not cut their
 * number: alone it leaves the storm going; under a budget it recovers. */
static void sim_run__retry_storm_backoff_needs_a_budget(void **state)
{
	struct sim_config c;
	struct window w;

	(void)state;
	storm_config(&c);
	c.backoff = SIM_BACKOFF_EXP_JITTER;
	c.backoff_ms = 1000;
	storm(&c, &w);
	assert_true(w.goodput < 0.05 * w.offered);
	c.retry_budget = 0.1;
	storm(&c, &w);
	assert_true(w.goodput > 0.9 * w.offered);
}

/* A bulkhead: the counter gets its own pool. Its storm stays inside it,
 * and the login page keeps the main pool. */
static void sim_run__retry_storm_bulkhead_keeps_login_alive(void **state)
{
	struct sim_config c;
	struct window w;

	(void)state;
	storm_config(&c);
	c.counter_pool = 400;
	storm(&c, &w);
	assert_true(w.end.unrelated.offered > 3000);
	assert_int_equal(w.end.unrelated.failed, 0);
	assert_true(w.end.counter_pool.max_in_use <= 400);
	assert_true(w.goodput < 0.05 * w.offered);   /* the counter itself still burns */
}

/* Idempotent writes make the same storm count right: no doubles. */
static void sim_run__retry_storm_idempotent_counts_once(void **state)
{
	struct sim_config c;
	struct window w;

	(void)state;
	storm_config(&c);
	c.idempotent = true;
	storm(&c, &w);
	assert_int_equal(w.end.count.doubled, 0);
	assert_true(w.end.count.unacked > 0);   /* applied, though the client saw a timeout */
}

/* The books balance at every instant of a storm, with and without
 * idempotent writes, on one row and on random slots (where a retry can
 * commit before the orphan it replaced). */
static void sim_advance__storm_books_balance_at_every_instant(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	for (int k = 0; k < 4; k++) {
		struct sim *s;
		storm_config(&c);
		c.idempotent = k & 1;
		if (k & 2) {
			c.strategy = SIM_SHARDED;
			c.rows = 4;
			c.rps = c.phases[1].rps = 1400;   /* 70 % of 4 x 500/s */
			c.phases[0].rps = 4000;           /* the spike, from 5 s to 10 s */
		}
		s = sim_new(&c);
		assert_non_null(s);
		for (int64_t t = 250000; t <= 30 * 1000000LL; t += 250000) {
			sim_advance(s, t);
			sim_summary(s, &o);
			assert_int_equal(o.count.visible + o.count.buffered + o.count.lost -
			                 o.count.doubled - o.count.unacked, o.count.true_count);
			assert_int_equal(o.count.true_count, o.completed);
			assert_int_equal(o.offered, o.completed + o.failed + o.abandoned + o.in_flight);
		}
		sim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_run__retry_storm_collapses_after_the_spike),
		cmocka_unit_test(sim_run__retry_storm_lock_timeout_recovers),
		cmocka_unit_test(sim_run__retry_storm_herd_needs_statement_timeout),
		cmocka_unit_test(sim_run__retry_storm_budget_recovers),
		cmocka_unit_test(sim_run__retry_storm_backoff_needs_a_budget),
		cmocka_unit_test(sim_run__retry_storm_bulkhead_keeps_login_alive),
		cmocka_unit_test(sim_run__retry_storm_idempotent_counts_once),
		cmocka_unit_test(sim_advance__storm_books_balance_at_every_instant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
