/*
 * alloc.c: Lab 06's allocation checks (alloc.h).
 *
 * The test binary counts every block allocated by the code linked into it
 * and can refuse the k-th one the student's code makes
 * (tests/harness/alloc.h). The reference solution allocates nothing; a
 * solution that does (the fee sub-accounts' sums on the heap, a sorted
 * copy of a batch, SQL built in a buffer) must treat a NULL as it treats
 * a refused statement: roll back, write nothing, return a negative code,
 * and free what it took on every path. money_transfer and money_batch run
 * once per allocation they make, refusing that one; then the same call
 * must work. After every call of every function, no block may be left.
 */
#include <stdbool.h>
#include <stdio.h>

#include "labs/06-money/money.h"
#include "tests/harness/alloc.h"
#include "tests/harness/labtest.h"
#include "tests/harness/steps.h"
#include "tests/labs/06-money/alloc.h"
#include "tests/labs/06-money/books.h"

enum { BATCH = 20, SUBS = 4 };

struct sale {
	struct labtest *t;
	struct kit_db *db;
	bool batch;
	int64_t next_id, buyer_before;
	struct money_transfer list[BATCH];
	int results[BATCH];
};

static void next_sales(void *arg)
{
	struct sale *s = arg;
	for (int i = 0; i < BATCH; i++) {
		s->list[i] = (struct money_transfer){ s->next_id++, 1, 2, 10, 1 + i % 3 };
		s->results[i] = -99;
	}
	s->buyer_before = balance(s->t, 1);
}

static int sale_call(void *arg)
{
	struct sale *s = arg;
	const struct money_fees fees = { FEE_ACCOUNT, SUBS };
	return s->batch ? money_batch(s->db, &fees, s->list, BATCH, s->results)
	                : money_transfer(s->db, &fees, &s->list[0]);
}

static void sale_check(void *arg, int k, bool failed, int rc)
{
	struct sale *s = arg;
	const char *what = s->batch ? "money_batch of 20" : "money_transfer";
	int sales = s->batch ? BATCH : 1;
	if (failed) {
		lt_expect(rc < 0, "alloc", "%s with allocation %d refused returned %d: a call that wrote "
		          "nothing must say so", what, k, rc);
		lt_expect(rc >= 0 || rc == KIT_DB_ERR, "alloc", "%s with allocation %d refused returned "
		          "%d: money.h names the code for a failed allocation, KIT_DB_ERR (a code of your "
		          "own, -ENOMEM or -1, is none a caller can test for)", what, k, rc);
		lt_expect_int_hint(balance(s->t, 1), s->buyer_before,
		                   "the buyer's balance after a call whose allocation was refused", "alloc");
		lt_expect_int_hint(rows_of(s->t, s->list[0].id), 0,
		                   "rows of the first sale after a call whose allocation was refused", "alloc");
		rc = sale_call(s);
		lt_expect(rc == 0, "alloc", "%s again, nothing refused, returned %d: %s", what, rc,
		          labtest_why(s->db));
	} else {
		lt_expect(rc == 0, NULL, "%s returned %d: %s", what, rc, labtest_why(s->db));
	}
	for (int i = 0; s->batch && i < BATCH; i++)
		lt_expect_int_hint(s->results[i], 0, "a sale's result in a batch that committed", "alloc");
	lt_expect_int_hint(balance(s->t, 1), s->buyer_before - 10 * sales,
	                   "the buyer's balance once the call worked", "alloc");
	const char *bad = books_fault(s->t);
	lt_expect(bad == NULL, "alloc", "the books after %s: %s", what, bad ? bad : "");
}

static void every_allocation(struct labtest *t, bool batch)
{
	struct sale s = { .t = t, .db = books(t), .batch = batch, .next_id = 1 };
	open_account(s.db, 1, 1, 100000);
	open_account(s.db, 2, 1, 0);
	open_account(s.db, FEE_ACCOUNT, SUBS, 0);
	struct lt_alloc_case c = { .arg = &s, .setup = next_sales, .call = sale_call, .check = sale_check,
	                           .what = batch ? "money_batch" : "money_transfer" };
	lt_alloc_each(&c);
}

void transfer__every_allocation_can_fail(void **state)
{
	every_allocation(*state, false);
}

void batch__every_allocation_can_fail(void **state)
{
	every_allocation(*state, true);
}

/* money_open, money_payout, money_balance and money_reconcile, each run
 * once per allocation it makes (none in the reference solution), that one
 * refused: KIT_DB_ERR, money.h's code for it, nothing written, *out left
 * as it was; then the same call works. A balance that takes a failed copy
 * of its figure for "no row" answers MONEY_NO_ACCOUNT for an account that
 * is there; a payout or an open that answers -ENOMEM gives a code no
 * caller tests for. */
enum other_call { OPEN, PAYOUT, BALANCE, RECONCILE };

struct other {
	struct labtest *t;
	struct kit_db *db;
	enum other_call call;
	int64_t next_id, seller_before;
	int64_t figure;              /* money_balance's *out */
	struct money_audit audit;    /* money_reconcile's *out */
};

static const char *const other_name[] = { "money_open", "money_payout", "money_balance",
                                          "money_reconcile" };

static void other_setup(void *arg)
{
	struct other *o = arg;
	o->next_id++;
	o->figure = -7;
	o->audit = (struct money_audit){ -7, -7, -7, -7 };
	o->seller_before = balance(o->t, 2);
}

static int other_run(void *arg)
{
	struct other *o = arg;
	const struct money_fees fees = { FEE_ACCOUNT, SUBS };
	switch (o->call) {
	case OPEN:
		return money_open(o->db, 1000 + o->next_id, 2, 5);
	case PAYOUT:
		return money_payout(o->db, &fees, 5000 + o->next_id, 2, 1);
	case BALANCE:
		return money_balance(o->db, 1, &o->figure);
	case RECONCILE:
		return money_reconcile(o->db, &o->audit);
	}
	return KIT_DB_ERR;
}

static void other_check(void *arg, int k, bool failed, int rc)
{
	struct other *o = arg;
	const char *what = other_name[o->call];
	if (failed) {
		lt_expect(rc == KIT_DB_ERR, "alloc", "%s with allocation %d refused returned %d: "
		          "money.h names the code for a failed allocation, KIT_DB_ERR (%d)%s", what, k,
		          rc, KIT_DB_ERR, rc == MONEY_NO_ACCOUNT ? ": an account that is there read as "
		          "never opened (is a failed copy of the figure taken for \"no row\"?)" : rc == 0
		          ? ": a call that could not finish said it did" : "");
		if (o->call == OPEN)
			lt_expect_int_hint(sql_int(o->t, "SELECT count(*) FROM accounts WHERE id = %lld",
			                           (long long)(1000 + o->next_id)), 0,
			                   "rows of an account whose open was refused an allocation", "alloc");
		if (o->call == PAYOUT)
			lt_expect_int_hint(balance(o->t, 2), o->seller_before, "the payee's balance after "
			                   "a payout whose allocation was refused", "alloc");
		if (o->call == BALANCE)
			lt_expect(o->figure == -7, "alloc", "money_balance with allocation %d refused set "
			          "*out to %lld: a read that failed gives no figure", k,
			          (long long)o->figure);
		if (o->call == RECONCILE)
			lt_expect(o->audit.unbalanced == -7 && o->audit.total == -7, "alloc",
			          "money_reconcile with allocation %d refused changed *out: on failure "
			          "it is left as it was (money.h)", k);
		rc = other_run(o);
	}
	lt_expect(rc == 0, "alloc", "%s%s returned %d: %s", what, failed ? " again, nothing refused,"
	          : "", rc, labtest_why(o->db));
	if (o->call == BALANCE)
		lt_expect_int_hint(o->figure, balance(o->t, 1), "money_balance of the buyer", "alloc");
	const char *bad = books_fault(o->t);
	lt_expect(bad == NULL, "alloc", "the books after %s: %s", what, bad ? bad : "");
}

void money__every_allocation_can_fail_in_the_other_calls(void **state)
{
	struct labtest *t = *state;
	struct other o = { .t = t, .db = books(t) };
	open_account(o.db, 1, 1, 100000);
	open_account(o.db, 2, 1, 0);
	open_account(o.db, FEE_ACCOUNT, SUBS, 0);
	const struct money_fees fees = { FEE_ACCOUNT, SUBS };
	for (int i = 0; i < 4; i++) {
		struct money_transfer sale = { 1 + i, 1, 2, 100, 50 };
		lt_expect_int(money_transfer(o.db, &fees, &sale), 0, "a sale that fills the fee account");
	}
	for (enum other_call c = OPEN; c <= RECONCILE; c++) {
		o.call = c;
		struct lt_alloc_case ac = { .arg = &o, .setup = other_setup, .call = other_run,
		                            .check = other_check, .what = other_name[c] };
		lt_alloc_each(&ac);
	}
}

/* Every function on each of its ways out. */
void money__nothing_left_allocated(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	size_t base = lt_alloc_live();
	lt_expect_int(money_open(db, 1, 1, 500), 0, "money_open of the buyer");
	lt_expect_int(money_open(db, 2, 1, 0), 0, "money_open of the seller");
	lt_expect_int(money_open(db, FEE_ACCOUNT, SUBS, 0), 0, "money_open of the fee account");
	lt_expect(money_open(db, 2, 1, 0) < 0, NULL, "money_open of an account that exists succeeded");
	lt_alloc_expect_none_left(base, "money_open (new accounts and one that exists)");

	const struct money_fees fees = { FEE_ACCOUNT, SUBS };
	struct money_transfer sale = { 7, 1, 2, 100, 5 };
	lt_expect_int(money_transfer(db, &fees, &sale), 0, "money_transfer");
	lt_expect_int(money_transfer(db, &fees, &sale), MONEY_ALREADY, "the same transfer again");
	struct money_transfer broke = { 8, 1, 2, 100000, 5 }, bad = { 9, 1, 1, 10, 1 };
	lt_expect_int(money_transfer(db, &fees, &broke), MONEY_INSUFFICIENT, "a transfer the buyer cannot pay");
	lt_expect_int(money_transfer(db, &fees, &bad), MONEY_INVALID, "a transfer to oneself");
	lt_alloc_expect_none_left(base, "money_transfer (applied, already, insufficient, invalid)");

	struct money_transfer list[3] = { { 10, 1, 2, 10, 1 }, { 11, 1, 2, 100000, 1 }, { 12, 1, 2, 10, 0 } };
	int results[3];
	lt_expect_int(money_batch(db, &fees, list, 3, results), 0, "money_batch of 3, one refused");
	lt_alloc_expect_none_left(base, "money_batch");
	/* A fee account of MONEY_MAX_SUBS sub-accounts: fee sums too many
	 * "for the stack" are still freed on every way out (below: a batch
	 * with each statement refused uses it). */
	lt_expect_int(money_open(db, FEE_ACCOUNT - 1, MONEY_MAX_SUBS, 0), 0,
	              "money_open of a fee account of MONEY_MAX_SUBS sub-accounts");
	const struct money_fees wide = { FEE_ACCOUNT - 1, MONEY_MAX_SUBS };
	struct money_transfer list64[2] = { { 20, 1, 2, 10, 1 }, { 21, 1, 2, 100000, 1 } };
	lt_expect_int(money_batch(db, &wide, list64, 2, results), 0,
	              "money_batch of 2, one refused, to a fee account of MONEY_MAX_SUBS sub-accounts");
	lt_alloc_expect_none_left(base, "money_batch to a fee account of MONEY_MAX_SUBS sub-accounts");
	lt_expect_int(money_payout(db, &fees, 13, 2, 3), 0, "money_payout of 3");
	lt_expect_int(money_payout(db, &fees, 14, 2, 1000), MONEY_INSUFFICIENT, "a payout above the fees");
	lt_alloc_expect_none_left(base, "money_payout (paid, refused)");
	int64_t bal = 0;
	lt_expect_int(money_balance(db, 1, &bal), 0, "money_balance");
	struct money_audit a;
	lt_expect_int(money_reconcile(db, &a), 0, "money_reconcile");
	lt_alloc_expect_none_left(base, "money_balance and money_reconcile");

	/* The ways out through a database error: each statement of a sale, a
	 * batch, a payout and an audit refused in turn (a copy of the error
	 * message kept "for later", freed only by the next failure, is a
	 * block the call leaves allocated). */
	for (int what = 0; what < 4; what++) {
		static const char *const name[] = { "money_transfer", "money_batch", "money_payout",
		                                    "money_reconcile" };
		for (int k = 1; k <= 64; k++) {
			struct money_transfer one = { 100 + 10 * what + k, 1, 2, 1, 1 };
			struct money_transfer pair[2] = { { 1000 + 10 * k, 1, 2, 1, 1 },
			                                  { 1001 + 10 * k, 1, 2, 1, 0 } };
			int res[2];
			lt_step_arm(LT_STEP_FAILS, k);
			int rc = what == 0 ? money_transfer(db, &fees, &one)
			       : what == 1 ? money_batch(db, k % 2 ? &fees : &wide, pair, 2, res)
			       : what == 2 ? money_payout(db, &fees, 2000 + k, 2, 1)
			                   : money_reconcile(db, &a);
			bool hit = lt_step_disarm();
			char when[160];
			snprintf(when, sizeof when, "%s with its statement %d refused (it returned %d)",
			         name[what], k, rc);
			lt_alloc_expect_none_left(base, when);
			if (!hit)
				break;
		}
	}
	labtest_expect_fresh(t, "money__nothing_left_allocated", "alloc", LT_KEPT_BLOCK);
}
