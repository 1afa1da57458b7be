/*
 * test_ledger.c: the ledger write path (Lab 06's hot fee account).
 *
 * A request is one transaction of B transfers that locks one of N fee
 * sub-accounts for one hold; a refused transfer (insufficient funds) is
 * turned away at the buyer's balance, before the fee row. So the books
 * must balance (every answered transfer is applied or refused, and the
 * fee rows hold exactly the applied ones), and a saturated fee account
 * must carry N x B / (hold x (1 - f^B)) transfers a second, the ceiling
 * the theory names, to sampling error.
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

/* A closed loop of n callers on the ledger path, no think time and no
 * time outside the lock: the fee rows are always busy. */
static void ledger_config(struct sim_config *c, int n, int rows, int batch, double refuse)
{
	simtest_config(c);
	c->strategy = SIM_LEDGER;
	c->clients = n;
	c->rows = rows;
	c->batch = batch;
	c->refuse_frac = refuse;
	c->hold_ms = 2;
	c->seconds = 20;
}

/* Every answered transfer was applied or refused; the rows hold the applied. */
static void assert_books(const struct sim_config *c, const struct sim_summary *o)
{
	assert_int_equal(o->offered, o->completed + o->failed + o->abandoned + o->in_flight);
	assert_int_equal(o->ledger.transfers, o->completed * (uint64_t)sim_config_batch(c));
	assert_int_equal(o->ledger.transfers - o->ledger.refused, (uint64_t)o->count.true_count);
	assert_int_equal(o->count.visible + o->count.buffered + o->count.lost - o->count.doubled -
	                 o->count.unacked, o->count.true_count);
}

static void sim_run__ledger_books_balance(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	ledger_config(&c, 64, 4, 10, 0.2);
	c.hold_dist = SIM_DIST_EXP;
	c.outside_ms = 1;
	simtest_run(&c, &o);
	assert_books(&c, &o);
	assert_int_equal(o.in_flight, 0);
	assert_int_equal(o.count.visible, o.count.true_count);
	assert_true(o.ledger.refused > 0);
}

static void sim_run__ledger_ceiling_one_row(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	ledger_config(&c, 32, 1, 1, 0);
	simtest_run(&c, &o);
	assert_books(&c, &o);
	assert_near(o.ledger.ceiling_transfers_per_s, 500, 1e-9);
	assert_near(o.ledger.transfers_per_s, 500, 0.01);
}

static void sim_run__ledger_ceiling_batches(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	ledger_config(&c, 32, 1, 100, 0);
	simtest_run(&c, &o);
	assert_books(&c, &o);
	assert_near(o.ledger.ceiling_transfers_per_s, 1 * 100 * 1000.0 / 2, 1e-9);
	assert_near(o.ledger.transfers_per_s, 50000, 0.01);
	assert_near(o.throughput_per_s, 500, 0.01);   /* one hold per batch */
}

static void sim_run__ledger_ceiling_sub_accounts(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	ledger_config(&c, 400, 8, 1, 0);    /* enough callers to keep 8 rows busy */
	simtest_run(&c, &o);
	assert_books(&c, &o);
	assert_near(o.ledger.ceiling_transfers_per_s, 8 * 500, 1e-9);
	assert_near(o.ledger.transfers_per_s, 4000, 0.02);
}

/* Refused transfers never reach the fee row: with half refused, one
 * transfer a transaction, the row serves only the other half. */
static void sim_run__ledger_refused_skip_the_fee_row(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	ledger_config(&c, 32, 1, 1, 0.5);
	simtest_run(&c, &o);
	assert_books(&c, &o);
	assert_near(o.ledger.ceiling_transfers_per_s, 1000, 1e-9);
	assert_near(o.ledger.transfers_per_s, 1000, 0.02);
	assert_near((double)o.ledger.refused / (double)o.ledger.transfers, 0.5, 0.02);
	/* with a pool, the connections too are held only by half the requests */
	char why[200];
	c.pool = 4;
	c.pool_timeout_ms = 0;
	simtest_run(&c, &o);
	assert_int_equal(o.theory.binding, SIM_CEIL_ROWS);
	sim_binding_text(&c, &o, why, sizeof why);
	assert_non_null(strstr(why, "1 row / (2 ms x 0.50 of requests that lock) = 1000/s"));
}

/* In batches the refusals keep their rate (the draw at the commit is
 * conditioned on the draw before the lock, not a second coin). */
static void sim_run__ledger_refused_in_batches(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	ledger_config(&c, 32, 2, 3, 0.5);
	simtest_run(&c, &o);
	assert_books(&c, &o);
	assert_near((double)o.ledger.refused / (double)o.ledger.transfers, 0.5, 0.02);
	assert_near(sim_lock_visits(&c), 1 - 0.125, 1e-12);
	assert_near(o.ledger.transfers_per_s, 2 * 3 * 500 / 0.875, 0.02);
}

/* Exponential holds and think times: the loop is what MVA solves, with
 * the lock visited by the transactions not wholly refused. */
static void sim_run__ledger_matches_mva(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	double x, r;

	(void)state;
	ledger_config(&c, 6, 2, 5, 0.4);
	c.hold_ms = 1;
	c.hold_dist = SIM_DIST_EXP;
	c.think_ms = 1;
	c.think_dist = SIM_DIST_EXP;
	c.seconds = 200;
	assert_int_equal(sim_mva(&c, &x, &r), 0);
	simtest_run(&c, &o);
	assert_books(&c, &o);
	assert_near(o.throughput_per_s, x, 0.02);
}

/* Client timeouts and retries on a batch: the books still balance. */
static void sim_run__ledger_retries_keep_the_books(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	ledger_config(&c, 0, 1, 4, 0.25);
	c.rps = 700;
	c.arrivals = SIM_ARRIVE_POISSON;
	c.client_timeout_ms = 20;
	c.retries = 2;
	c.seconds = 5;
	simtest_run(&c, &o);
	assert_true(o.orphaned > 0);
	assert_int_equal(o.count.visible + o.count.buffered + o.count.lost - o.count.doubled -
	                 o.count.unacked, o.count.true_count);
	assert_true(o.count.doubled > 0);
}

static void sim_config_check__ledger_batch_and_refusals(void **state)
{
	struct sim_config c;
	char err[160];

	(void)state;
	ledger_config(&c, 1, 1, 10001, 0);
	assert_int_equal(sim_config_check(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "--batch"));
	ledger_config(&c, 1, 1, 1, 1);
	assert_int_equal(sim_config_check(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "--refuse-frac"));
	ledger_config(&c, 1, 1, 1, -0.1);
	assert_int_equal(sim_config_check(&c, err, sizeof err), -1);
	/* batch and refusals mean nothing on other paths, and cost nothing */
	ledger_config(&c, 8, 1, 50, 0.5);
	c.strategy = SIM_NAIVE;
	assert_int_equal(sim_config_batch(&c), 1);
	assert_near(sim_lock_visits(&c), 1, 0);
}

static void sim_json__ledger_same_seed_same_bytes(void **state)
{
	struct sim_config c;
	char *a, *b;

	(void)state;
	ledger_config(&c, 16, 4, 7, 0.3);
	c.seconds = 1;
	a = simtest_json(&c);
	b = simtest_json(&c);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "\"strategy\":\"ledger\""));
	assert_non_null(strstr(a, "\"batch\":7"));
	assert_non_null(strstr(a, "\"ledger\":{\"transfers\":"));
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_run__ledger_books_balance),
		cmocka_unit_test(sim_run__ledger_ceiling_one_row),
		cmocka_unit_test(sim_run__ledger_ceiling_batches),
		cmocka_unit_test(sim_run__ledger_ceiling_sub_accounts),
		cmocka_unit_test(sim_run__ledger_refused_skip_the_fee_row),
		cmocka_unit_test(sim_run__ledger_refused_in_batches),
		cmocka_unit_test(sim_run__ledger_matches_mva),
		cmocka_unit_test(sim_run__ledger_retries_keep_the_books),
		cmocka_unit_test(sim_config_check__ledger_batch_and_refusals),
		cmocka_unit_test(sim_json__ledger_same_seed_same_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
