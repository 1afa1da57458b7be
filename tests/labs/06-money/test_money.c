/*
 * test_money.c: Lab 06's checks (labs/06-money/money.h), on SQLite and
 * PostgreSQL.
 *
 * Every amount is checked exactly, and always twice over: through the
 * student's functions and through SQL of the test's own, so a wrong
 * money_reconcile() cannot hide a wrong transfer. The race between two
 * transfers is forced, not hoped for: a db hook holds each connection at
 * a gate right after its first statement on accounts until the other one
 * gets there too (or two and a half seconds have passed, which is what happens
 * when the other one is waiting for a lock, as it should). The crash
 * checks are in crashes.c.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "kit/load.h"
#include "labs/06-money/money.h"
#include "tests/harness/deadline.h"
#include "tests/harness/session.h"
#include "tests/harness/sql.h"
#include "tests/labs/06-money/alloc.h"
#include "tests/labs/06-money/books.h"
#include "tests/labs/06-money/contracts.h"
#include "tests/labs/06-money/crashes.h"
#include "tests/labs/06-money/edges.h"
#include "tests/labs/06-money/promises.h"
#include "tests/labs/06-money/races.h"
#include "tests/harness/labtest.h"
#include "util/clock.h"

/* ---- fixture ---- */

/* Connections a check opens beyond the harness's own; closed at teardown
 * even when the check fails half-way. */
static struct kit_db *held[2];

static int teardown(void **state)
{
	for (int i = 0; i < 2; i++) {
		kit_db_close(held[i]);
		held[i] = NULL;
	}
	return labtest_teardown(state);
}

/* Every engine, MariaDB included (the name is older than the third). */
#define BOTH(f) \
	{ #f "/sqlite", f, labtest_setup_sqlite, teardown, NULL }, \
	{ #f "/postgres", f, labtest_setup_pg, teardown, NULL }, \
	{ #f "/mysql", f, labtest_setup_mysql, teardown, NULL }
/* What is the same code on every engine and slow through a socket. */
#define SQLITE_ONLY(f) { #f "/sqlite", f, labtest_setup_sqlite, teardown, NULL }
/* A row lock is PostgreSQL's and InnoDB's; SQLite locks the whole file
 * (§4). The name is older than MariaDB, which runs these checks too. */
#define PG_ONLY(f) \
	{ #f "/postgres", f, labtest_setup_pg, teardown, NULL }, \
	{ #f "/mysql", f, labtest_setup_mysql, teardown, NULL }

/* ---- helpers ---- */

/* The books, audited by the test's own SQL: every transfer's entries sum
 * to zero, every balance row is the sum of its entries, none is below
 * zero but the outside's, and all of them add up to nothing. */
static void books_balance(struct labtest *t, const char *when)
{
	int64_t unbalanced = labtest_int(t,
		"SELECT count(*) FROM (SELECT t.id FROM transfers t LEFT JOIN entries e"
		" ON e.transfer_id = t.id GROUP BY t.id"
		" HAVING count(e.transfer_id) = 0 OR SUM(e.amount) <> 0) AS x");
	int64_t drifted = labtest_int(t,
		"SELECT count(*) FROM accounts a WHERE a.balance <> (SELECT COALESCE(SUM(e.amount), 0)"
		" FROM entries e WHERE e.account_id = a.id AND e.sub = a.sub)");
	int64_t negative = labtest_int(t, "SELECT count(*) FROM accounts WHERE balance < 0 AND id <> 0");
	int64_t total = labtest_int(t, "SELECT COALESCE(SUM(balance), 0) FROM accounts");
	char what[200];
	snprintf(what, sizeof what, "transfers whose entries do not sum to zero, %s", when);
	lt_expect_int_hint(unbalanced, 0, what, "entries");
	snprintf(what, sizeof what, "balance rows that differ from the sum of their entries, %s", when);
	lt_expect_int_hint(drifted, 0, what, "entries");
	snprintf(what, sizeof what, "balance rows below zero, %s", when);
	lt_expect_int_hint(negative, 0, what, "conditional-debit");
	snprintf(what, sizeof what, "sum of every balance, %s", when);
	lt_expect_int_hint(total, 0, what, "entries");
}

/* ---- one transfer ---- */

static void transfer__moves_money_as_entries(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);

	int rc = transfer(db, 7, 1, 2, 100, 5, 1);
	lt_expect(rc == 0, "entries", "money_transfer of 100 from 1 to 2 failed (%d): %s", rc,
	          labtest_why(db));
	lt_expect_int_hint(balance(t, 1), 400, "buyer's balance after paying 100 of 500", "balance");
	lt_expect_int_hint(balance(t, 2), 95, "seller's balance after a sale of 100, fee 5", "balance");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 5, "fee account after one fee of 5", "balance");
	lt_expect_int_hint(sql_int(t, "SELECT count(*) FROM transfers WHERE id = 7"), 1,
	                   "transfer rows with id 7", "entries");
	lt_expect_int_hint(sql_int(t, "SELECT count(*) FROM entries WHERE transfer_id = 7"), 3,
	                   "entries of transfer 7 (buyer, seller, fee)", "entries");
	lt_expect_int_hint(sql_int(t, "SELECT amount FROM entries WHERE transfer_id = 7 AND "
	                           "account_id = 1"), -100, "the buyer's entry", "entries");
	int64_t got = -1;
	rc = money_balance(db, 1, &got);
	lt_expect(rc == 0, "balance", "money_balance(1) failed (%d): %s", rc, labtest_why(db));
	lt_expect_int_hint(got, 400, "money_balance of the buyer", "balance");
	books_balance(t, "after one transfer");
}

static void transfer__refused_leaves_nothing(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 50);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);

	lt_expect_int_hint(transfer(db, 1, 1, 2, 80, 4, 1), MONEY_INSUFFICIENT,
	                   "money_transfer of 80 from a balance of 50 (MONEY_INSUFFICIENT)",
	                   "conditional-debit");
	lt_expect_int_hint(rows_of(t, 1), 0, "transfer and entry rows of the refused transfer 1",
	                   "rollback");
	/* The buyer pays the whole amount, the fee too: 50 covers the
	 * seller's share of a sale of 52 with a fee of 4, not the sale. */
	lt_expect_int_hint(transfer(db, 4, 1, 2, 52, 4, 1), MONEY_INSUFFICIENT,
	                   "money_transfer of 52 with a fee of 4 from a balance of 50 "
	                   "(MONEY_INSUFFICIENT: the buyer pays all 52; is the debit's test against "
	                   "amount - fee, the seller's share?)", "conditional-debit");
	struct money_fees fee1 = { FEE_ACCOUNT, 1 };
	struct money_transfer short_by_fee = { 4, 1, 2, 52, 4 };
	int in_batch = 42;
	lt_expect(money_batch(db, &fee1, &short_by_fee, 1, &in_batch) == 0 &&
	          in_batch == MONEY_INSUFFICIENT, "conditional-debit", "a batch of one sale of 52 "
	          "with a fee of 4 from a balance of 50: result %d, expected MONEY_INSUFFICIENT (%d): "
	          "the buyer pays the whole amount, the fee too", in_batch, MONEY_INSUFFICIENT);
	lt_expect_int_hint(rows_of(t, 4), 0, "rows of transfer 4, 52 from a balance of 50", "rollback");
	lt_expect_int_hint(transfer(db, 2, 1, 3, 30, 1, 1), MONEY_NO_ACCOUNT,
	                   "money_transfer to account 3, which does not exist (MONEY_NO_ACCOUNT)",
	                   "no-account");
	lt_expect_int_hint(rows_of(t, 2), 0, "rows of transfer 2, to a missing account", "rollback");
	lt_expect_int_hint(balance(t, 1), 50, "buyer's balance after two refused transfers",
	                   "rollback");
	lt_expect_int_hint(transfer(db, 3, 1, 2, 0, 0, 1), MONEY_INVALID,
	                   "money_transfer of 0 (MONEY_INVALID)", "invalid");
	lt_expect_int_hint(transfer(db, 1, 1, 2, 30, 1, 1), 0,
	                   "transfer 1 sent again for 30, on the same connection, after it was refused",
	                   "rollback");
	lt_expect_int_hint(balance(t, 1), 20, "buyer's balance after paying 30 of 50", "balance");
	books_balance(t, "after refused transfers");
}

static void transfer__retry_applies_once(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);

	lt_expect_int(transfer(db, 5, 1, 2, 100, 10, 1), 0, "money_transfer, id 5");
	lt_expect_int_hint(transfer(db, 5, 1, 2, 100, 10, 1), MONEY_ALREADY,
	                   "the same transfer, id 5, sent again (MONEY_ALREADY)", "idempotency");
	struct kit_db *other = held[0] = labtest_connect(t);
	lt_expect_int_hint(transfer(other, 5, 1, 2, 100, 10, 1), MONEY_ALREADY,
	                   "id 5 sent a third time, from another connection", "idempotency");
	/* The id alone decides (money.h): id 5 sent with other figures is
	 * still the sale that was applied, not a new one and not an invalid
	 * one ("same id, another sale": a code that compares the stored row
	 * answers MONEY_INVALID, and a client retrying with a rounded amount
	 * believes its applied sale was refused). */
	int again = transfer(db, 5, 1, 2, 50, 5, 1);
	lt_expect(again == MONEY_ALREADY, "idempotency", "id 5, applied for 100, sent again for 50 "
	          "returned %d, expected MONEY_ALREADY (%d): money.h answers MONEY_ALREADY when a "
	          "transfer with this id was applied before, whatever the other fields say now%s",
	          again, MONEY_ALREADY, again == MONEY_INVALID ? " (is the stored transfer compared "
	          "with this one?)" : "");
	lt_expect_int_hint(balance(t, 1), 400, "buyer's balance after one sale of 100 sent four "
	                   "times (once for 50)", "idempotency");
	lt_expect_int_hint(balance(t, 2), 90, "seller's balance after one sale sent three times",
	                   "idempotency");
	lt_expect_int_hint(rows_of(t, 5), 4, "transfer and entry rows of id 5", "idempotency");

	/* A retry after the money is gone: the client never heard the answer
	 * to a sale that emptied the buyer (or a payout that emptied the fee
	 * account), and sends it again. The id answers first: MONEY_ALREADY.
	 * A code that takes the money before it asks the id answers
	 * MONEY_INSUFFICIENT, and the client believes an applied sale failed. */
	lt_expect_int(transfer(db, 6, 1, 2, 400, 0, 1), 0, "money_transfer of the buyer's last 400");
	int rc = transfer(db, 6, 1, 2, 400, 0, 1);
	lt_expect(rc == MONEY_ALREADY, "idempotency", "the sale of the buyer's last 400, id 6, sent "
	          "again returned %d, expected MONEY_ALREADY (%d)%s", rc, MONEY_ALREADY,
	          rc == MONEY_INSUFFICIENT ? ": the retry was refused for lack of money, so its id "
	          "was asked after the debit; the client now believes the applied sale failed. Make "
	          "the transfers row the first write" : "");
	struct money_fees f = { FEE_ACCOUNT, 1 };
	lt_expect_int(money_payout(db, &f, 7, 2, 10), 0, "money_payout of the fee account's 10");
	rc = money_payout(db, &f, 7, 2, 10);
	lt_expect(rc == MONEY_ALREADY, "idempotency", "the payout of the fee account's last 10, id 7, "
	          "sent again returned %d, expected MONEY_ALREADY (%d)%s", rc, MONEY_ALREADY,
	          rc == MONEY_INSUFFICIENT ? ": its id was asked after the debit" : "");
	lt_expect_int_hint(balance(t, 2), 500, "seller's balance after 90, 400 and a payout of 10, "
	                   "each sent twice", "idempotency");
	books_balance(t, "after a transfer sent three times");
}

static void transfer__fee_spread_over_subs(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 4, 0);

	for (int id = 1; id <= 8; id++)
		lt_expect_int(transfer(db, id, 1, 2, 20, 3, 4), 0, "money_transfer with a fee of 3");
	for (int k = 0; k < 4; k++) {
		char what[100];
		snprintf(what, sizeof what, "fee sub-account %d after ids 1..8 (two each: id %% 4)", k);
		lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = 99 AND sub = %d", k),
		                   6, what, "fee-subs");
	}
	int64_t got = -1;
	int rc = money_balance(db, FEE_ACCOUNT, &got);
	lt_expect(rc == 0, "balance", "money_balance(99) failed (%d): %s", rc, labtest_why(db));
	lt_expect_int_hint(got, 24, "money_balance of the fee account: the sum of its 4 sub-accounts",
	                   "balance");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM entries WHERE account_id = 99"
	                               " AND sub <> transfer_id % 4"), 0,
	                   "fee entries not on sub-account id % 4", "fee-subs");
	/* The fee account as the seller: the seller's share on its
	 * sub-account 0, the fee on sub-account id % 4 (50 % 4 = 2), each
	 * row beside its own entry ("the fee stays in the account", credited
	 * with the whole amount on sub-account 0, leaves sub-account 2 short
	 * of its fee entry). */
	lt_expect_int(transfer(db, 50, 1, FEE_ACCOUNT, 20, 3, 4), 0,
	              "money_transfer of 20 with a fee of 3 whose seller is the fee account");
	lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = 99 AND sub = 0"), 6 + 17,
	                   "fee sub-account 0 after sale 50, whose seller is the fee account: its 6 "
	                   "and the seller's share of 17 (the fee of 3 goes to sub-account 50 % 4 = 2)",
	                   "fee-subs");
	lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = 99 AND sub = 2"), 6 + 3,
	                   "fee sub-account 2 after sale 50, whose seller is the fee account: its 6 "
	                   "and the fee of 3 (id 50 % 4 = 2), as its fee entry says", "fee-subs");

	/* A count of sub-accounts that is not a power of two: id % 3, not a
	 * mask of the id's low bits. */
	open_account(db, 98, 3, 0);
	struct money_fees three = { 98, 3 };
	for (int id = 9; id <= 14; id++) {
		struct money_transfer s = { id, 1, 2, 20, 3 };
		lt_expect_int(money_transfer(db, &three, &s), 0, "money_transfer to fee account 98 "
		              "with 3 sub-accounts");
	}
	for (int k = 0; k < 3; k++) {
		char what[160];
		snprintf(what, sizeof what, "fee sub-account %d of 3 after ids 9..14 (two each: id %% 3; "
		         "a mask, id & (subs - 1), is id %% subs only for a power of two)", k);
		lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = 98 AND sub = %d", k),
		                   6, what, "fee-subs");
	}
	/* Ids past 64 (MONEY_MAX_SUBS) and past 2^32: id % 3 of the whole id,
	 * not of its low bits first (id & 63, or the id cut to 32 bits, then
	 * % 3 is another sub-account), nor of anything else derived from it. */
	static const int64_t far[] = { 100, 101, 102, ((int64_t)1 << 32) + 100,
	                               ((int64_t)1 << 32) + 101, ((int64_t)1 << 32) + 102 };
	int64_t want[3] = { 6, 6, 6 };
	for (size_t i = 0; i < sizeof far / sizeof far[0]; i++) {
		struct money_transfer s = { far[i], 1, 2, 20, 3 };
		lt_expect_int(money_transfer(db, &three, &s), 0, "money_transfer with an id past 64 to "
		              "fee account 98 with 3 sub-accounts");
		want[far[i] % 3] += 3;
	}
	for (int k = 0; k < 3; k++) {
		char what[200];
		snprintf(what, sizeof what, "fee sub-account %d of 3 after ids 100..102 and 2^32 + "
		         "100..102 too (id %% 3 of the whole id; id & 63, or the id cut to 32 bits, "
		         "then %% 3 is another sub-account)", k);
		lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = 98 AND sub = %d", k),
		                   want[k], what, "fee-subs");
	}
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM entries WHERE account_id = 98"
	                               " AND sub <> transfer_id % 3"), 0,
	                   "fee entries not on sub-account id % 3 (ids past 64 and past 2^32 too)",
	                   "fee-subs");
	books_balance(t, "after fees spread over 4 and over 3 sub-accounts");
}

/* After each statement of a transfer, a second connection asks whether
 * the fee account's rows are locked (FOR UPDATE NOWAIT fails at once if
 * one of them is). */
struct probe {
	struct kit_db *other;
	int locked_after;            /* statements that ended with a fee row locked */
	int statements;
	int64_t account;             /* the fee account probed; 0: FEE_ACCOUNT */
	int first_locked;            /* the first statement that ended with it locked */
	struct kit_db *rival;        /* when set: while the fee row is free, a whole sale of
	                                other accounts to the same fee account goes through */
	int64_t rival_id;
	int rival_failed;            /* the statement after which the rival failed */
	int rival_rc;
};

static void probe_fee_row(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct probe *p = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_END)
		return;
	/* a BEGIN or COMMIT sent as SQL is the kit's own in another form */
	if (lt_sql_is(sql, "BEGIN") || lt_sql_is(sql, "START TRANSACTION") || lt_sql_is(sql, "COMMIT") ||
	    lt_sql_is(sql, "END"))
		return;
	p->statements++;
	int64_t n = 0;
	char q[160];
	snprintf(q, sizeof q, "SELECT count(*) FROM (SELECT 1 FROM accounts WHERE id = %lld"
	         " FOR UPDATE NOWAIT) AS x", (long long)(p->account ? p->account : FEE_ACCOUNT));
	if (kit_db_query_int(p->other, q, 0, NULL, &n) != 0) {
		if (p->locked_after++ == 0)
			p->first_locked = p->statements;
		return;
	}
	/* The fee row is free: nothing this sale holds may stop another sale
	 * of other buyers and sellers to the same fee account (an advisory
	 * lock on the fee account taken first, "one writer at a time", queues
	 * every sale behind every other from its first statement on, as a fee
	 * row locked first does). The rival waits 1 s at most. */
	if (p->rival && !p->rival_failed) {
		struct money_fees f = { p->account ? p->account : FEE_ACCOUNT, 1 };
		struct money_transfer r = { p->rival_id++, 3, 4, 10, 1 };
		int rc = money_transfer(p->rival, &f, &r);
		if (rc != 0) {
			p->rival_failed = p->statements;
			p->rival_rc = rc;
		}
	}
}

static void transfer__fee_row_locked_last(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);
	open_account(db, 3, 1, 500);
	open_account(db, 4, 1, 0);

	struct probe p = { .other = labtest_connect(t), .rival = labtest_connect(t),
	                   .rival_id = 1001 };
	held[0] = p.other;
	held[1] = p.rival;
	assert_int_equal(kit_db_set_lock_timeout(p.rival, 1000), 0);
	kit_db_set_hook(db, probe_fee_row, &p);
	int rc = transfer(db, 1, 1, 2, 100, 5, 1);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0, "entries", "money_transfer failed (%d): %s", rc, labtest_why(db));
	lt_expect(p.locked_after == 1, "fee-last",
	          "expected the fee row locked by the last statement before COMMIT only, got it "
	          "locked at the end of %d of the transfer's %d statements", p.locked_after,
	          p.statements);
	lt_expect(p.rival_failed == 0, "fee-last",
	          "a sale of accounts 3 to 4 to the same fee account, sent from another connection "
	          "while the first sale stood after its statement %d (the fee row still free), "
	          "returned %d after a 1 s lock wait (%s): something the first sale holds from "
	          "before its fee credit makes every other sale queue behind it (an advisory lock "
	          "on the fee account, \"one writer at a time\"?), as a fee row locked first does",
	          p.rival_failed, p.rival_rc, labtest_why(p.rival));
	p.rival = NULL;

	/* Split in 4, the fee account is still the hot spot: each sub-account
	 * is one row every fourth sale credits. Last, all the same. */
	open_account(db, 98, 4, 0);
	struct money_fees four = { 98, 4 };
	struct probe q = { .other = p.other, .account = 98 };
	struct money_transfer sale = { 7, 1, 2, 100, 5 };
	kit_db_set_hook(db, probe_fee_row, &q);
	rc = money_transfer(db, &four, &sale);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0, "entries", "money_transfer to fee account 98 (4 sub-accounts) failed "
	          "(%d): %s", rc, labtest_why(db));
	lt_expect(q.locked_after == 1, "fee-last",
	          "with the fee account split in 4, expected its sub-account 3 locked by the last "
	          "statement before COMMIT only, got it locked at the end of %d of the transfer's "
	          "%d statements, from statement %d on: a sub-account is one row shared by every "
	          "fourth sale, as hot as the one row was, so it is credited last too",
	          q.locked_after, q.statements, q.first_locked);

	/* A batch: the fee sub-accounts are credited once each at its end
	 * (§7), so they are locked by those statements only, not from the
	 * first sale on. */
	struct money_transfer list[] = { { 8, 1, 2, 40, 4 }, { 9, 1, 2, 30, 3 },
	                                 { 10, 1, 2, 20, 2 } };
	int results[3] = { 42, 42, 42 };
	struct probe b = { .other = p.other, .account = 98 };
	kit_db_set_hook(db, probe_fee_row, &b);
	rc = money_batch(db, &four, list, 3, results);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0 && results[0] == 0 && results[1] == 0 && results[2] == 0, "entries",
	          "money_batch of ids 8, 9, 10: returned %d, results %d, %d, %d (%s)", rc,
	          results[0], results[1], results[2], labtest_why(db));
	lt_expect(b.locked_after <= 3 && b.first_locked > b.statements - 3, "fee-last",
	          "a batch of three sales, fees due to three sub-accounts: expected the fee rows "
	          "locked by the three credits at the batch's end only, got them locked at the end "
	          "of %d of its %d statements, from statement %d on: are the fees credited before "
	          "the sales (up front, or per sale)? Sum them per sub-account and credit each "
	          "once, last, before COMMIT", b.locked_after, b.statements, b.first_locked);

	/* The same batch with the fee account as one row: its sum is
	 * credited once, at the end, too (money.h: a batch's fees are the
	 * exception to "as money_transfer() would" whatever the number of
	 * sub-accounts; one row is the hottest case). */
	struct money_fees one = { FEE_ACCOUNT, 1 };
	struct money_transfer again[] = { { 11, 1, 2, 20, 2 }, { 12, 1, 2, 20, 2 },
	                                  { 13, 1, 2, 20, 2 } };
	int res1[3] = { 42, 42, 42 };
	struct probe o = { .other = p.other };
	kit_db_set_hook(db, probe_fee_row, &o);
	rc = money_batch(db, &one, again, 3, res1);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0 && res1[0] == 0 && res1[1] == 0 && res1[2] == 0, "entries",
	          "money_batch of ids 11, 12, 13 to a fee account of one row: returned %d, results "
	          "%d, %d, %d (%s)", rc, res1[0], res1[1], res1[2], labtest_why(db));
	lt_expect(o.locked_after == 1 && o.first_locked == o.statements, "fee-last",
	          "a batch of three sales to a fee account of one row: expected the row locked by "
	          "the one credit at the batch's end only, got it locked at the end of %d of its %d "
	          "statements, from statement %d on: with one sub-account too, the batch sums the "
	          "fees and credits the row once, last, before COMMIT (money.h)", o.locked_after,
	          o.statements, o.first_locked);

	/* And a batch of 250 sales: the sums wait for the last one however
	 * many come before it (credited every 100 sales, "to keep the sums
	 * small", the row is held from the 100th sale to COMMIT). */
	enum { LONG_BATCH = 250 };
	open_account(db, 5, 1, 10 * LONG_BATCH);
	struct money_transfer many[LONG_BATCH];
	int resn[LONG_BATCH];
	for (int i = 0; i < LONG_BATCH; i++)
		many[i] = (struct money_transfer){ 100 + i, 5, 2, 10, 1 };
	struct probe l = { .other = p.other };
	kit_db_set_hook(db, probe_fee_row, &l);
	rc = money_batch(db, &one, many, LONG_BATCH, resn);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0 && balance(t, 5) == 0, "entries", "money_batch of 250 sales of 10 by an "
	          "account holding 2,500: returned %d (%s), the buyer left with %lld", rc,
	          labtest_why(db), (long long)balance(t, 5));
	lt_expect(l.locked_after == 1 && l.first_locked == l.statements, "fee-last",
	          "a batch of 250 sales to a fee account of one row: expected the row locked by the "
	          "one credit at the batch's end only, got it locked at the end of %d of its %d "
	          "statements, from statement %d on: are the sums credited before the last sale "
	          "(every so many sales)? However long the batch, the fee rows are credited once, "
	          "last, before COMMIT (money.h)", l.locked_after, l.statements, l.first_locked);
}

/* ---- two at once ---- */

/* Two connections meet here: each waits for the other, up to a limit. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int arrived;
};

struct racer {
	struct gate *gate;
	struct kit_db *db;
	int64_t id;
	int passed;                  /* this connection went through the gate */
	int rc;
};

static void gate_wait(struct gate *g, int limit_ms)
{
	struct timespec until = lt_deadline_ms(limit_ms);
	pthread_mutex_lock(&g->mu);
	g->arrived++;
	pthread_cond_broadcast(&g->cv);
	while (g->arrived < 2)
		if (pthread_cond_timedwait(&g->cv, &g->mu, &until) != 0)
			break;
	pthread_mutex_unlock(&g->mu);
}


/* A sale, a batch and a payout wait for a row lock as long as their
 * connection's lock timeout allows (money.h; the kit's default: without
 * end). One that sets a short timeout of its own for its transaction
 * (SET LOCAL lock_timeout, MariaDB's SET STATEMENT
 * innodb_lock_wait_timeout ... FOR) leaves the session as it was, yet
 * fails every sale that queues a little longer for the fee row, which is
 * the queue this lab is about (§1). Another connection holds the buyer's
 * row (the fee sub-account's, for the payout); once the server says the
 * call waits behind it (lt_lock_waiting: pg_stat_activity, INNODB_TRX), the holder keeps it
 * 0.5 s more (1.2 s on MariaDB, whose shortest timeout is 1 s), then lets
 * go: each call must apply. The hold only makes the wait longer: a slower
 * machine cannot turn a right call into a wrong one. A timeout longer than
 * the hold is seen in the statements the call sends (watch_timeouts). */
struct waiter {
	struct kit_db *db;
	int what;                      /* 0 a sale, 1 a batch of one, 2 a payout */
	int rc;
	char error[256];
	char timeout_sql[256];         /* the first statement that set a timeout */
	atomic_bool done;
};

/* Any statement of the call, its own or the kit's (kit_db_set_lock_timeout
 * sends one), that sets a lock or statement timeout: the hold above only
 * catches a timeout shorter than itself, this catches one of any length
 * (a call that "never waits for ever" gives up where money.h says it
 * waits as long as its connection allows). */
static void watch_timeouts(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct waiter *w = arg;
	(void)t_ns;
	if ((ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START) && !w->timeout_sql[0] &&
	    lt_sql_sets_timeout(sql))
		snprintf(w->timeout_sql, sizeof w->timeout_sql, "%s", sql);
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct money_fees fees = { FEE_ACCOUNT, 1 };
	struct money_transfer s = { 4001 + w->what, 1, 2, 50, 5 };
	int result = 99;
	kit_db_set_hook(w->db, watch_timeouts, w);
	w->rc = w->what == 0 ? money_transfer(w->db, &fees, &s)
	      : w->what == 1 ? money_batch(w->db, &fees, &s, 1, &result)
	                     : money_payout(w->db, &fees, 4003, 3, 60);
	kit_db_set_hook(w->db, NULL, NULL);
	if (w->what == 1 && w->rc == 0)
		w->rc = result;
	if (w->rc != 0)
		snprintf(w->error, sizeof w->error, "%s", labtest_why(w->db));
	atomic_store(&w->done, true);
	return NULL;
}

static void money__waits_as_long_as_the_session_allows(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	bool my = kit_db_engine(db) == KIT_DB_MYSQL;
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, 3, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);
	lt_expect_int(transfer(db, 4000, 1, 2, 100, 100, 1), 0, "money_transfer that pays the fee "
	              "account 100");
	struct kit_db *a = held[0] = labtest_connect(t);
	struct kit_db *b = held[1] = labtest_connect(t);
	int64_t pid = lt_session_id(b);
	lt_expect(pid >= 0, NULL, "the session's id: %s", labtest_why(b));
	int polls = my ? 500 : 20000, hold_ms = my ? 1200 : 500;
	static const char *const what[] = { "a sale", "a batch of one sale", "a payout" };

	for (int k = 0; k < 3; k++) {
		struct waiter w = { .db = b, .what = k };
		int64_t blocked = 0;
		pthread_t tid;
		lt_expect(kit_db_begin(a) == 0, NULL, "BEGIN on a: %s", labtest_why(a));
		lt_expect(kit_db_exec(a, k == 2 ? "UPDATE accounts SET balance = balance WHERE id = 99 AND sub = 0"
		                                : "UPDATE accounts SET balance = balance WHERE id = 1 AND sub = 0",
		                      0, NULL) == 0, NULL, "UPDATE on a: %s", labtest_why(a));
		if (pthread_create(&tid, NULL, waiter_main, &w) != 0) {
			kit_db_rollback(a);
			fail_msg("pthread_create failed");
		}
		for (int i = 0; i < polls && blocked == 0 && !atomic_load(&w.done); i++) {
			int waits = lt_lock_waiting(db, pid);
			if (waits < 0)
				break;
			if ((blocked = waits) == 0)
				util_sleep_ns(lt_lock_poll_ns(db));
		}
		if (blocked)
			util_sleep_ns(hold_ms * 1000000LL);
		int committed = kit_db_commit(a);
		pthread_join(tid, NULL);
		lt_expect(committed == 0, NULL, "COMMIT on a: %s", labtest_why(a));
		lt_expect(blocked != 0, NULL, "%s never waited for the %s row, which another "
		          "transaction held (it returned %d: %s)", what[k], k == 2 ? "fee sub-account's"
		          : "buyer's", w.rc, w.rc ? w.error : "no error");
		lt_expect(w.rc == 0, "rollback", "%s waited for the %s row, which another transaction "
		          "held %d ms longer and then let go, and returned %d (%s): does it set a lock "
		          "timeout of its own (SET LOCAL lock_timeout, SET STATEMENT "
		          "innodb_lock_wait_timeout ... FOR)? money.h: a call waits as long as its "
		          "connection's lock timeout allows, and the fee row's queue is longer under load",
		          what[k], k == 2 ? "fee sub-account's" : "buyer's", hold_ms, w.rc, w.error);
		lt_expect(w.timeout_sql[0] == '\0', "rollback", "%s set a timeout of its own: it sent "
		          "\"%s\". money.h: a call waits as long as its connection's lock timeout "
		          "allows and sets no timeout of its own, not even for its own transaction "
		          "(SET LOCAL, SET STATEMENT ... FOR) and not even a long one: a cap of 5 or "
		          "10 s fails the sales that queue longer for the fee row under load",
		          what[k], w.timeout_sql);
	}
	lt_expect_int_hint(balance(t, 1), 300, "buyer's balance after 100, a sale and a batch of 50",
	                   "rollback");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 50, "fee account after 100, two fees of 5 and a "
	                   "payout of 60", "rollback");
	books_balance(t, "after a sale, a batch and a payout that waited for a lock");
}

/* After the first statement on accounts ends, wait for the other racer. */
static void at_gate(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct racer *r = arg;
	(void)t_ns;
	if (ev == KIT_DB_STMT_END && !r->passed && strcasestr(sql, "accounts")) {
		r->passed = 1;
		gate_wait(r->gate, 2500);
	}
}

static void *race(void *arg)
{
	struct racer *r = arg;
	kit_db_set_hook(r->db, at_gate, r);
	r->rc = transfer(r->db, r->id, 1, 2, 80, 0, 1);
	kit_db_set_hook(r->db, NULL, NULL);
	return NULL;
}

static void transfer__two_at_once_cannot_overdraw(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 100);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);

	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };
	struct racer r[2];
	pthread_t th[2];
	for (int i = 0; i < 2; i++) {
		held[i] = labtest_connect(t);
		kit_db_set_lock_timeout(held[i], 60000);
		r[i] = (struct racer){ &g, held[i], 1 + i, 0, -99 };
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, race, &r[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);

	int ok = (r[0].rc == 0) + (r[1].rc == 0);
	int refused = (r[0].rc == MONEY_INSUFFICIENT) + (r[1].rc == MONEY_INSUFFICIENT);
	lt_expect(ok + refused == 2, NULL, "expected 0 or MONEY_INSUFFICIENT from both, got %d and %d",
	          r[0].rc, r[1].rc);
	lt_expect_int_hint(ok, 1, "transfers of 80 that succeeded from a balance of 100, "
	                   "two at once", "conditional-debit");
	lt_expect_int_hint(balance(t, 1), 20, "buyer's balance after two transfers of 80 from 100",
	                   "conditional-debit");
	books_balance(t, "after two transfers at once");
}

/* ---- many at once ---- */

/* 4,000 sales on four buyers' rows: every one of them contends with the
 * three other threads on its row, so a debit that is not conditional
 * (read_check_write, check_before_begin) overdraws here too; but those
 * are certain through the gate of transfer__two_at_once_cannot_overdraw,
 * and the exact-balance mistake (debit_strictly_above) is certain at any
 * size: each buyer's last sale is of exactly the balance left. 10,000
 * sales took 2.5 times as long and told no more. */
#define THREADS 16
#define PER_THREAD 250          /* 16 x 250 = 4,000 transfers */
#define SALES (THREADS * PER_THREAD)
#define RACE_BUYERS 4           /* 1,000 sales of 10 each, from 8,000: 800 pass */
#define RACE_SELLERS 8
#define RACE_SUBS 8

struct crowd {
	atomic_int ok, refused;
	atomic_char status[SALES + 1];    /* by transfer id: 1 applied, 2 refused */
};

static int patient(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return kit_db_engine(th->db) == KIT_DB_SQLITE ? kit_db_set_lock_timeout(th->db, 60000) : 0;
}

static int sell(void *arg, struct kit_load_thread *th)
{
	struct crowd *c = arg;
	int64_t k = (int64_t)th->index * PER_THREAD + th->iter;
	int rc = transfer(th->db, k + 1, 1 + k % RACE_BUYERS, 11 + k % RACE_SELLERS, 10, 1, RACE_SUBS);
	if (rc == 0) {
		atomic_store(&c->status[k + 1], 1);
		atomic_fetch_add(&c->ok, 1);
	} else if (rc == MONEY_INSUFFICIENT) {
		atomic_store(&c->status[k + 1], 2);
		atomic_fetch_add(&c->refused, 1);
		rc = 0;
	}
	return rc;
}

/* Every refusal a transfer makes, from every thread at once: each round
 * a sale of 0 (MONEY_INVALID), one from account 77, never opened
 * (MONEY_NO_ACCOUNT), one of 10 from account 2, which holds nothing
 * (MONEY_INSUFFICIENT), and sale 1 sent again (MONEY_ALREADY). Anything
 * the refusal paths keep where every thread shares it (a count of
 * refusals in a plain static, the last refused id "to log it once") is
 * written by two threads at once here: the race pass of `hotrow lab
 * check` sees it, whatever the answers. */
static int refused_every_way(void *arg, struct kit_load_thread *th)
{
	atomic_int *wrong = arg;
	int64_t id = 1000 + (int64_t)th->index * 10000 + 4 * th->iter;
	int invalid = transfer(th->db, id, 1, 3, 0, 0, 2);
	int none = transfer(th->db, id + 1, 77, 3, 10, 1, 2);
	int poor = transfer(th->db, id + 2, 2, 3, 10, 1, 2);
	int again = transfer(th->db, 1, 1, 3, 10, 1, 2);
	if (invalid != MONEY_INVALID || none != MONEY_NO_ACCOUNT || poor != MONEY_INSUFFICIENT ||
	    again != MONEY_ALREADY)
		atomic_fetch_add(wrong, 1);
	return 0;
}

static void transfer__refused_from_every_thread(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 100);
	open_account(db, 2, 1, 0);
	open_account(db, 3, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	lt_expect_int(transfer(db, 1, 1, 3, 10, 1, 2), 0, "sale 1 of 10 from account 1");
	int64_t rows = sql_int(t, "SELECT count(*) FROM transfers");
	atomic_int wrong;
	atomic_init(&wrong, 0);
	struct kit_load_config lc;
	struct kit_load_result r;
	labtest_load_config(t, &lc, 8, 100);
	lc.thread_init = patient;
	lt_expect(kit_load_run(&lc, refused_every_way, &wrong, &r) == 0, NULL, "load run: %s", r.error);
	lt_expect(atomic_load(&wrong) == 0, "idempotency", "8 threads at once, 100 rounds each of a "
	          "sale of 0, one from an account never opened, one from an empty account and sale 1 "
	          "sent again: %d round(s) answered other than MONEY_INVALID, MONEY_NO_ACCOUNT, "
	          "MONEY_INSUFFICIENT and MONEY_ALREADY", atomic_load(&wrong));
	lt_expect_int_hint(sql_int(t, "SELECT count(*) FROM transfers"), rows, "transfers rows after "
	                   "3,200 refused sales", "rollback");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "rollback", "after 3,200 refused sales: %s", bad);
}

static int not_applied(void *arg, int ncols, const char *const *values)
{
	struct crowd *c = arg;
	(void)ncols;
	long id = strtol(values[0], NULL, 10);
	return id < 1 || id > SALES || atomic_load(&c->status[id]) != 1;
}

static void transfer__no_overdraft_under_threads(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	for (int b = 1; b <= RACE_BUYERS; b++)
		open_account(db, b, 1, 8000);
	for (int s = 11; s < 11 + RACE_SELLERS; s++)
		open_account(db, s, 1, 0);
	open_account(db, FEE_ACCOUNT, RACE_SUBS, 0);

	static struct crowd c;
	memset(&c, 0, sizeof c);
	struct kit_load_config lc;
	struct kit_load_result r;
	labtest_load_config(t, &lc, THREADS, PER_THREAD);
	lc.thread_init = patient;
	lt_expect(kit_load_run(&lc, sell, &c, &r) == 0, NULL, "load run: %s", r.error);

	char what[700];
	snprintf(what, sizeof what, "transfers that failed with neither 0 nor MONEY_INSUFFICIENT "
	         "(first error: %s)", r.error[0] ? r.error : "none");
	lt_expect_int(r.failed, 0, what);
	int ok = atomic_load(&c.ok);
	/* Too many and too few have different likeliest causes: name the one seen. */
	lt_expect_int_hint(ok, 3200, ok > 3200
	                   ? "transfers of 10 applied from 4 x 8,000 (16 threads, 4,000 sales): "
	                     "more than the money allows, so two debits passed on one balance"
	                   : "transfers of 10 applied from 4 x 8,000 (16 threads, 4,000 sales): "
	                     "fewer than the money allows, so a debit of exactly the balance left was "
	                     "refused (balance > amount where balance >= amount is meant) or sales "
	                     "failed with another code", ok > 3200 ? "conditional-debit" : "exact-balance");
	lt_expect_int_hint(atomic_load(&c.refused), 800, "transfers refused (MONEY_INSUFFICIENT)",
	                   "conditional-debit");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM accounts WHERE id BETWEEN 1 AND 4 "
	                               "AND balance <> 0"), 0, "buyers whose balance is not 0 at the end",
	                   "conditional-debit");

	/* The student's audit first (a buffer it keeps may be written then),
	 * then the test's own. */
	struct money_audit a = { -1, -1, -1, -1 };
	int rc = money_reconcile(db, &a);
	lt_expect(rc == 0, "reconcile", "money_reconcile failed (%d): %s", rc, labtest_why(db));
	lt_expect(a.unbalanced == 0 && a.drifted == 0 && a.negative == 0 && a.total == 0,
	          "reconcile", "expected money_reconcile to find nothing wrong, got unbalanced %lld, "
	          "drifted %lld, negative %lld, total %lld", (long long)a.unbalanced,
	          (long long)a.drifted, (long long)a.negative, (long long)a.total);
	books_balance(t, "after 16 threads x 250 sales");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 3200, "fee account after 3,200 fees of 1",
	                   "balance");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM transfers WHERE id > 0"), 3200,
	                   "transfer rows after 3,200 applied sales", "rollback");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM entries WHERE transfer_id > 0"),
	                   9600, "entry rows after 3,200 applied sales", "rollback");
	rc = kit_db_query(db, "SELECT id FROM transfers WHERE id > 0", 0, NULL, not_applied, &c);
	lt_expect(rc == 0, "rollback", "expected every transfer row to be a sale that returned 0, "
	          "found one that did not (a refused sale left its row behind)");
}

/* ---- batches ---- */

static void batch__bad_transfer_does_not_sink_batch(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 100);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);

	struct money_fees f = { FEE_ACCOUNT, 2 };
	struct money_transfer list[10];
	int results[10], want[10];
	for (int i = 0; i < 10; i++) {
		list[i] = (struct money_transfer){ 101 + i, 1, 2, 10, 1 };
		want[i] = 0;
	}
	list[3].amount = 1000;       /* more than the buyer has */
	want[3] = MONEY_INSUFFICIENT;
	list[6].to = 3;              /* no such seller */
	want[6] = MONEY_NO_ACCOUNT;
	for (int pass = 0; pass < 2; pass++) {
		memset(results, 0x55, sizeof results);
		int rc = money_batch(db, &f, list, 10, results);
		lt_expect(rc == 0, "savepoint", "money_batch of 10 with two bad transfers returned %d, "
		          "expected 0 (%s)", rc, labtest_why(db));
		for (int i = 0; i < 10; i++) {
			char what[160];
			int w = pass == 1 && want[i] == 0 ? MONEY_ALREADY : want[i];
			snprintf(what, sizeof what, "results[%d] of %s batch (transfer %lld)", i,
			         pass ? "the same, retried," : "a", (long long)list[i].id);
			lt_expect_int_hint(results[i], w, what, pass ? "idempotency" : "savepoint");
		}
	}
	lt_expect_int_hint(balance(t, 1), 20, "buyer's balance after 8 of 10 transfers of 10 from 100",
	                   "savepoint");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 8, "fee account after 8 fees of 1", "savepoint");
	lt_expect_int_hint(rows_of(t, 104) + rows_of(t, 107), 0,
	                   "rows left by the two refused transfers of the batch", "savepoint");
	books_balance(t, "after a batch with two bad transfers");
}

struct tx_count {
	int begins, commits;
};

static void count_tx(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct tx_count *c = arg;
	(void)sql;
	(void)t_ns;
	c->begins += ev == KIT_DB_TX_BEGIN;
	c->commits += ev == KIT_DB_TX_COMMIT;
}

static void batch__one_transaction(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 4, 0);

	struct money_fees f = { FEE_ACCOUNT, 4 };
	struct money_transfer list[20];
	int results[20];
	for (int i = 0; i < 20; i++)
		list[i] = (struct money_transfer){ 1 + i, 1, 2, 10, 2 };
	struct tx_count c = { 0, 0 };
	kit_db_set_hook(db, count_tx, &c);
	int rc = money_batch(db, &f, list, 20, results);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0, "one-transaction", "money_batch of 20 failed (%d): %s", rc, labtest_why(db));
	lt_expect_int_hint(c.begins, 1, "BEGINs for one batch of 20", "one-transaction");
	lt_expect_int_hint(c.commits, 1, "COMMITs for one batch of 20", "one-transaction");
	lt_expect_int_hint(balance(t, 1), 800, "buyer's balance after a batch of 20 x 10 from 1000",
	                   "savepoint");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 40, "fee account after a batch of 20 fees of 2",
	                   "savepoint");
	books_balance(t, "after one batch of 20");
}

/* ---- paying out of a split account ---- */

static void payout__never_below_zero_per_sub(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000);
	open_account(db, 2, 1, 0);
	open_account(db, 3, 1, 0);
	open_account(db, FEE_ACCOUNT, 4, 0);
	for (int id = 1; id <= 4; id++)       /* each sub-account holds 30 */
		lt_expect_int(transfer(db, id, 1, 2, 100, 30, 4), 0, "money_transfer with a fee of 30");

	struct money_fees f = { FEE_ACCOUNT, 4 };
	int rc = money_payout(db, &f, 1000, 3, 50);
	lt_expect(rc == 0 || rc == MONEY_INSUFFICIENT, "reservation",
	          "expected 0 or MONEY_INSUFFICIENT from a payout of 50 out of 4 x 30, got %d (%s)",
	          rc, labtest_why(db));
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM accounts WHERE id = 99 AND balance < 0"),
	                   0, "fee sub-accounts below zero after a payout of 50 out of 4 x 30",
	                   "reservation");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), rc == 0 ? 70 : 120,
	                   rc == 0 ? "fee account after a payout of 50 that returned 0"
	                           : "fee account after a refused payout", "reservation");
	int64_t before = balance(t, FEE_ACCOUNT);
	lt_expect_int_hint(money_payout(db, &f, 1001, 3, 25), 0,
	                   "a payout of 25, which one sub-account covers", "reservation");
	lt_expect_int_hint(money_payout(db, &f, 1001, 3, 25), MONEY_ALREADY,
	                   "the payout of 25 sent again (MONEY_ALREADY)", "idempotency");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), before - 25, "fee account after a payout of 25",
	                   "reservation");
	lt_expect_int_hint(money_payout(db, &f, 1002, 3, 1000), MONEY_INSUFFICIENT,
	                   "a payout of 1,000 out of less than 120", "reservation");
	lt_expect_int_hint(rows_of(t, 1002), 0, "rows of the refused payout", "rollback");
	books_balance(t, "after payouts");
}

/* ---- the audit ---- */

static void expect_audit(struct kit_db *db, int64_t unbalanced, int64_t drifted,
                         int64_t negative, int64_t total, const char *after)
{
	struct money_audit a = { -1, -1, -1, -1 };
	int rc = audit_reads_only(db, &a);
	lt_expect(rc == 0, "reconcile", "money_reconcile failed (%d): %s", rc, labtest_why(db));
	lt_expect(a.unbalanced == unbalanced && a.drifted == drifted && a.negative == negative &&
	          a.total == total, "reconcile",
	          "expected unbalanced %lld, drifted %lld, negative %lld, total %lld, got %lld, %lld, "
	          "%lld, %lld: money_reconcile %s", (long long)unbalanced, (long long)drifted,
	          (long long)negative, (long long)total, (long long)a.unbalanced,
	          (long long)a.drifted, (long long)a.negative, (long long)a.total, after);
}

static void reconcile__finds_what_is_wrong(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	for (int id = 1; id <= 4; id++)
		lt_expect_int(transfer(db, id, 1, 2, 50, 5, 2), 0, "money_transfer");

	expect_audit(db, 0, 0, 0, 0, "of correct books");
	/* Each balance row answers for itself: 3 moved from one fee
	 * sub-account to another with no entry leaves the account's sum right
	 * and two rows wrong (an audit per account, not per row, sees none). */
	labtest_exec(t, "UPDATE accounts SET balance = balance - 3 WHERE id = 99 AND sub = 0;"
	                "UPDATE accounts SET balance = balance + 3 WHERE id = 99 AND sub = 1");
	expect_audit(db, 0, 2, 0, 0, "after 3 moved from fee sub-account 0 to 1 with no entry "
	             "(each row differs from its own entries; compare per (account, sub))");
	labtest_exec(t, "UPDATE accounts SET balance = balance + 3 WHERE id = 99 AND sub = 0;"
	                "UPDATE accounts SET balance = balance - 3 WHERE id = 99 AND sub = 1");
	labtest_exec(t, "UPDATE accounts SET balance = balance + 7 WHERE id = 2");
	expect_audit(db, 0, 1, 0, 7, "after 7 was added to a balance with no entry");
	labtest_exec(t, "UPDATE accounts SET balance = balance - 7 WHERE id = 2;"
	                "DELETE FROM entries WHERE transfer_id = 3 AND account_id = 1");
	expect_audit(db, 1, 1, 0, 0, "after the buyer's entry of transfer 3 was deleted");
	labtest_exec(t, "INSERT INTO entries (transfer_id, account_id, sub, amount) VALUES (3, 1, 0, -50);"
	                "UPDATE accounts SET balance = -5 WHERE id = 99 AND sub = 1;"
	                "INSERT INTO entries (transfer_id, account_id, sub, amount) VALUES (77, 99, 1, -15)");
	expect_audit(db, 1, 0, 1, -15, "after a fee sub-account went to -5 through an entry of "
	             "a transfer that does not exist");
}

/* The audit's figures count rows, all of them: the outside world's row
 * drifts like any other (money_open writes its entries), two sub-accounts
 * of one account below zero are two negative rows, two entries of one
 * missing transfer are two entries of no transfer, an opening is a
 * transfer like a sale, and a total past 2^31 is exact. Each error is
 * planted alone on correct books and taken back. */
/* A read made while sales commit: at the start of the reader's k-th
 * statement (k = 1, 2, ...: each a call of its own) another connection
 * commits four sales, each of 10 from buyer 1 to seller 2 with a fee of
 * 4 on fee sub-account 0, 1, 2 and 3. */
struct midread {
	struct kit_db *other;
	int at, seen;
	int64_t next_id;
	bool fired;
	char error[200];
};

static void sales_midread(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct midread *m = arg;
	char batch[4096];
	size_t len = 0;
	(void)sql, (void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || m->fired || ++m->seen != m->at)
		return;
	for (int s = 0; s < 4; s++) {
		long long id = (long long)m->next_id + s;
		len += (size_t)snprintf(batch + len, sizeof batch - len, "%s"
			"INSERT INTO transfers (id, debit, credit, amount, fee) VALUES (%lld, 1, 2, 10, 4);"
			"INSERT INTO entries (transfer_id, account_id, sub, amount) VALUES (%lld, 1, 0, -10), "
			"(%lld, 2, 0, 6), (%lld, %d, %d, 4);"
			"UPDATE accounts SET balance = balance - 10 WHERE id = 1 AND sub = 0;"
			"UPDATE accounts SET balance = balance + 6 WHERE id = 2 AND sub = 0;"
			"UPDATE accounts SET balance = balance + 4 WHERE id = %d AND sub = %d",
			s ? ";" : "", id, id, id, id, FEE_ACCOUNT, s, FEE_ACCOUNT, s);
	}
	/* and money brought in, as money_open brings an opening: MONEY_OUTSIDE
	 * down, account 1 up. A total worked out as two sums (the balances
	 * above zero, then those below) read at two moments sees one side */
	long long in = (long long)m->next_id + 4;
	len += (size_t)snprintf(batch + len, sizeof batch - len, ";"
		"INSERT INTO transfers (id, debit, credit, amount, fee) VALUES (%lld, %d, 1, 1000, 0);"
		"INSERT INTO entries (transfer_id, account_id, sub, amount) VALUES (%lld, %d, 0, -1000), "
		"(%lld, 1, 0, 1000);"
		"UPDATE accounts SET balance = balance - 1000 WHERE id = %d AND sub = 0;"
		"UPDATE accounts SET balance = balance + 1000 WHERE id = 1 AND sub = 0",
		in, MONEY_OUTSIDE, in, MONEY_OUTSIDE, in, MONEY_OUTSIDE);
	assert_true(len < sizeof batch);
	int rc = kit_db_begin(m->other);
	if (rc == 0)
		rc = kit_db_exec(m->other, batch, 0, NULL);
	if (rc == 0)
		rc = kit_db_commit(m->other);
	if (rc != 0) {
		/* a reader that holds a lock the sales need: they wait 200 ms,
		 * give up, and the read is of the books before them */
		if (rc != KIT_DB_BUSY && !m->error[0])
			snprintf(m->error, sizeof m->error, "%s", kit_db_errmsg(m->other));
		kit_db_rollback(m->other);
		return;
	}
	m->fired = true;
	m->next_id += 5;
}

/* At the start of the audit's k-th statement another connection writes
 * the transfers row of two entries that had none. */
struct rowmidread {
	struct kit_db *other;
	int at, seen;
	bool fired;
	char error[200];
};

static void transfer_row_midread(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct rowmidread *m = arg;
	(void)sql, (void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || m->fired || ++m->seen != m->at)
		return;
	int rc = kit_db_exec(m->other, "INSERT INTO transfers (id, debit, credit, amount, fee)"
	                     " VALUES (500, 1, 2, 6, 0)", 0, NULL);
	if (rc == 0)
		m->fired = true;
	else if (rc != KIT_DB_BUSY && !m->error[0])
		snprintf(m->error, sizeof m->error, "%s", kit_db_errmsg(m->other));
}

/* README §8: each field of the audit is one query, so unbalanced too,
 * though it counts two things (transfers that do not sum to zero, entries
 * of no transfer). Two entries of transfer 500, which has no transfers
 * row, are unbalanced 2; once the row is written, transfer 500 sums to -6
 * and unbalanced is 1. Written at the start of the audit's statement 1,
 * 2, ... in turn, the audit says 2 or 1, never 0: the two counts added up
 * in C from two queries see the entries as a transfer's in the first
 * (not yet) and as no transfer's in the second (no longer). */
static void reconcile__unbalanced_at_one_moment(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000);
	open_account(db, 2, 1, 0);
	labtest_exec(t, "INSERT INTO entries (transfer_id, account_id, sub, amount)"
	                " VALUES (500, 1, 0, -2), (500, 2, 0, -4)");
	struct rowmidread m = { .other = labtest_connect(t) };
	assert_int_equal(kit_db_set_lock_timeout(m.other, 200), 0);
	int judged = 0;
	for (int k = 1; k <= 40; k++) {
		struct money_audit a = { -1, -1, -1, -1 };
		m.at = k;
		m.seen = 0;
		m.fired = false;
		kit_db_set_hook(db, transfer_row_midread, &m);
		int rc = money_reconcile(db, &a);
		kit_db_set_hook(db, NULL, NULL);
		lt_expect(!m.error[0], NULL, "the check's own INSERT of transfer 500 failed: %s", m.error);
		if (m.seen < k)
			break;          /* the audit sent fewer than k statements */
		judged++;
		lt_expect(rc == 0 && (a.unbalanced == 2 || (m.fired && a.unbalanced == 1)), "reconcile",
		          "money_reconcile with two entries of transfer 500 and no transfers row for it "
		          "(unbalanced 2), that row written by another connection at the start of the "
		          "audit's statement %d (unbalanced 1 from then on), returned %d with unbalanced "
		          "%lld: a figure the books never held. Its two counts (transfers whose entries "
		          "do not sum to zero, entries of no transfer) were read by two queries and added "
		          "up in C: the first saw the entries as no transfer's, the second as transfer "
		          "500's, or the other way round. Count both in one statement "
		          "(SELECT (SELECT count(*) ...) + (SELECT count(*) ...)), which sees one moment "
		          "(README §8: each field one query)", k, rc, (long long)a.unbalanced);
		labtest_exec(t, "DELETE FROM transfers WHERE id = 500");
	}
	lt_expect(judged > 0, NULL, "money_reconcile sent no statement");
	kit_db_close(m.other);
	labtest_exec(t, "DELETE FROM entries WHERE transfer_id = 500");
}

/* README §3 and §8: a reader never sees half of a transaction. The fee
 * account's balance and the audit, each read while four sales commit
 * (their fees on four sub-accounts), and 1,000 is brought in from
 * MONEY_OUTSIDE as an opening brings it, at every statement of the read in
 * turn: the balance is the one before the sales or the one after, never
 * a mix, and sound books audit sound (each field one query, at one
 * moment). A balance added up from one query per sub-account, or a
 * drift worked out in C from two queries, reads the books half before
 * and half after. */
static void reads__one_moment_while_sales_commit(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000000);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 4, 0);
	for (int id = 1; id <= 4; id++)
		lt_expect_int(transfer(db, id, 1, 2, 100, 10, 4), 0, "money_transfer");
	struct midread m = { .other = labtest_connect(t), .next_id = 1000 };
	assert_int_equal(kit_db_set_lock_timeout(m.other, 200), 0);
	for (int fn = 0; fn < 2; fn++) {
		for (int k = 1; k <= 80; k++) {
			int64_t before = balance(t, FEE_ACCOUNT), got = -1;
			struct money_audit a = { -1, -1, -1, -1 };
			m.at = k;
			m.seen = 0;
			m.fired = false;
			kit_db_set_hook(db, sales_midread, &m);
			int rc = fn == 0 ? money_balance(db, FEE_ACCOUNT, &got) : money_reconcile(db, &a);
			kit_db_set_hook(db, NULL, NULL);
			lt_expect(!m.error[0], NULL, "the check's own sales failed: %s", m.error);
			if (m.seen < k)
				break;          /* the read sent fewer than k statements */
			if (fn == 0) {
				lt_expect(rc == 0 && (got == before || (m.fired && got == before + 16)),
				          "balance", "money_balance of the fee account (4 sub-accounts, %lld "
				          "in all) while 4 sales committed at the start of its statement %d "
				          "(a fee of 4 on each sub-account, %lld after) returned %d with "
				          "%lld: a balance the books never held. Its sub-accounts were read "
				          "at different moments, some before the sales and some after: "
				          "read them in one statement (SUM(balance) ... WHERE id = $1), "
				          "which sees one moment (README §3)", (long long)before, k,
				          (long long)(before + 16), rc, (long long)got);
			} else {
				lt_expect(rc == 0 && a.unbalanced == 0 && a.drifted == 0 && a.negative == 0 &&
				          a.total == 0, "reconcile", "money_reconcile of sound books while 4 "
				          "sales and 1,000 brought in committed at the start of its statement %d returned %d with "
				          "unbalanced %lld, drifted %lld, negative %lld, total %lld (expected "
				          "all 0): a field worked out from two queries, or in C from rows "
				          "read at two moments, sees a sale half in. Each field is one query "
				          "(README §8)", k, rc, (long long)a.unbalanced, (long long)a.drifted,
				          (long long)a.negative, (long long)a.total);
			}
		}
	}
	kit_db_close(m.other);
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, NULL, "after the reads, the books do not balance: %s", bad);
}

static void reconcile__counts_each_row(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	open_account(db, 50, 2, 0);
	for (int id = 1; id <= 2; id++)
		lt_expect_int(transfer(db, id, 1, 2, 50, 5, 2), 0, "money_transfer");
	expect_audit(db, 0, 0, 0, 0, "of correct books");

	labtest_exec(t, "UPDATE accounts SET balance = balance + 4 WHERE id = 0");
	expect_audit(db, 0, 1, 0, 4, "after 4 was added to MONEY_OUTSIDE's row with no entry (its "
	             "row is the sum of its entries too: only negative leaves it out)");
	labtest_exec(t, "UPDATE accounts SET balance = balance - 4 WHERE id = 0");

	labtest_exec(t, "INSERT INTO entries (transfer_id, account_id, sub, amount)"
	                " VALUES (77, 50, 0, -15), (77, 50, 1, -20);"
	                "UPDATE accounts SET balance = -15 WHERE id = 50 AND sub = 0;"
	                "UPDATE accounts SET balance = -20 WHERE id = 50 AND sub = 1");
	expect_audit(db, 2, 0, 2, -35, "after both sub-accounts of account 50 went below zero "
	             "through two entries of transfer 77, which does not exist (negative counts "
	             "balance rows, not accounts; unbalanced counts entries of no transfer, not "
	             "their transfer ids)");
	labtest_exec(t, "DELETE FROM entries WHERE transfer_id = 77;"
	                "UPDATE accounts SET balance = 0 WHERE id = 50");

	labtest_exec(t, "DELETE FROM entries WHERE transfer_id = -1 AND account_id = 0");
	expect_audit(db, 1, 1, 0, 0, "after the outside's entry of account 1's opening (transfer "
	             "-1) was deleted (an opening is a transfer like a sale)");
	labtest_exec(t, "INSERT INTO entries (transfer_id, account_id, sub, amount)"
	                " VALUES (-1, 0, 0, -500)");

	/* A row set to 0 behind the ledger's back is drifted like any other:
	 * an audit that skips the rows at 0 ("an empty row has nothing to
	 * explain") misses an account emptied with no entry. Seller 2 holds
	 * 90 from its two sales. */
	labtest_exec(t, "UPDATE accounts SET balance = 0 WHERE id = 2");
	expect_audit(db, 0, 1, 0, -90, "after seller 2's row (90, from two sales) was set to 0 with "
	             "no entry (a row at 0 must be audited too: its entries say 90)");
	labtest_exec(t, "UPDATE accounts SET balance = 90 WHERE id = 2");

	/* The entries of an opening whose transfers row is gone belong to no
	 * transfer, like a sale's: an audit that trusts openings (transfer id
	 * below 0, "written by money_open") misses them. */
	labtest_exec(t, "DELETE FROM transfers WHERE id = -1");
	expect_audit(db, 2, 0, 0, 0, "after the transfers row of account 1's opening (transfer -1) "
	             "was deleted, its two entries left (entries of no transfer count whatever their "
	             "transfer id: an opening is a transfer like a sale)");
	labtest_exec(t, "INSERT INTO transfers (id, debit, credit, amount, fee) VALUES (-1, 0, 1, 500, 0)");

	labtest_exec(t, "UPDATE accounts SET balance = balance + 3000000000 WHERE id = 2");
	expect_audit(db, 0, 1, 0, 3000000000LL, "after 3,000,000,000 was added to a balance with "
	             "no entry (is a figure read through an int?)");
	labtest_exec(t, "UPDATE accounts SET balance = balance - 3000000000 WHERE id = 2");
	expect_audit(db, 0, 0, 0, 0, "of the books put right again");
}

/* ---- the smallest values of each domain ---- */

/* An opening of 1, the smallest there is, is moved like any other: the
 * account holds 1 and the books balance. */
static void open__opening_of_one(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1);
	lt_expect_int_hint(balance(t, 1), 1, "balance of an account opened with 1", "entries");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "entries", "after an opening of 1: %s", bad);
}

/* A fee account of no sub-accounts, or of more than MONEY_MAX_SUBS, is
 * outside struct money_fees' domain: a sale is MONEY_INVALID and writes
 * nothing (a fee sub-account id % 0 would divide by zero). */
static void transfer__no_sub_accounts_refused(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);
	const int subs[] = { 0, MONEY_MAX_SUBS + 1 };
	/* with a fee and without one: fees->subs is part of every call's
	 * domain, not only of the calls that credit a sub-account */
	for (int i = 0; i < 4; i++) {
		struct money_fees fees = { FEE_ACCOUNT, subs[i % 2] };
		struct money_transfer s = { 7 + i, 1, 2, 100, i < 2 ? 5 : 0 };
		int rc = money_transfer(db, &fees, &s);
		lt_expect(rc == MONEY_INVALID, "entries", "a sale with a fee of %d and a fee account of "
		          "%d sub-accounts (1..%d allowed): expected MONEY_INVALID (%d), got %d",
		          i < 2 ? 5 : 0, subs[i % 2], MONEY_MAX_SUBS, MONEY_INVALID, rc);
		lt_expect_int_hint(rows_of(t, 7 + i), 0, "rows a refused sale wrote", "entries");
	}
	lt_expect_int_hint(balance(t, 1), 500, "buyer's balance after four refused sales", "entries");

	/* The same struct, right for one sale and then made wrong: each call
	 * checks the fees it is given (a check kept for the struct's address,
	 * "the fee account does not change between sales", lets it through). */
	struct money_fees fees = { FEE_ACCOUNT, 1 };
	struct money_transfer ok = { 20, 1, 2, 100, 5 }, bad = { 21, 1, 2, 100, 5 };
	lt_expect_int(money_transfer(db, &fees, &ok), 0, "a sale with a fee account of 1 sub-account");
	for (int i = 1; i >= 0; i--) {     /* 65 first: 0 would divide by zero */
		fees.subs = subs[i];
		int rc = money_transfer(db, &fees, &bad);
		lt_expect(rc == MONEY_INVALID, "entries", "the struct money_fees of an applied sale, its "
		          "subs then set to %d: expected MONEY_INVALID (%d), got %d (is the check kept "
		          "for the struct's address? every call checks what it is given)", subs[i],
		          MONEY_INVALID, rc);
		lt_expect_int_hint(rows_of(t, 21), 0, "rows a refused sale wrote", "entries");
	}
	lt_expect_int_hint(balance(t, 1), 400, "buyer's balance after one sale of 100", "entries");
}

/* Buyer 1 opened with 500, seller 2 and account 3 with nothing, the fee
 * account with one sub-account, and sale 7 (100, fee 5) applied. */
static struct kit_db *books_after_a_sale(struct labtest *t)
{
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, 3, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);
	lt_expect(transfer(db, 7, 1, 2, 100, 5, 1) == 0, "entries", "a sale of 100 with a fee of "
	          "5 failed: %s", labtest_why(db));
	return db;
}

/* A payout with id 1 and amount 1, the smallest valid ones, is paid. */
static void payout__smallest_id_and_amount(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books_after_a_sale(t);
	struct money_fees fees = { FEE_ACCOUNT, 1 };
	int rc = money_payout(db, &fees, 1, 3, 1);
	lt_expect(rc == 0, "reservation", "a payout of 1 with id 1 from a fee account holding 5: "
	          "expected 0, got %d (both are the smallest valid values: id > 0, amount > 0)", rc);
	lt_expect_int_hint(balance(t, 3), 1, "paid out by a payout of 1", "reservation");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "reservation", "after a payout of 1: %s", bad);
}

/* A payout out of a fee account that was never opened (a wrong
 * fees->account), and one to an account that was never opened: both
 * MONEY_NO_ACCOUNT, nothing written. MONEY_INSUFFICIENT says "not enough
 * yet", and a caller waits for fees to come in; none ever will to an
 * account that is not there. So MONEY_NO_ACCOUNT wins when no sub-account
 * holds the amount either (money.h): a payout of 50 to an account never
 * opened, out of a fee account holding 5. */
static void payout__accounts_never_opened(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books_after_a_sale(t);
	struct money_fees none = { 77, 4 }, fees = { FEE_ACCOUNT, 1 };
	int64_t before = sql_int(t, "SELECT count(*) FROM transfers");
	int rc = money_payout(db, &none, 9, 3, 2);
	lt_expect(rc == MONEY_NO_ACCOUNT, "reservation", "a payout of 2 out of fee account 77, "
	          "which was never opened, returned %d; expected MONEY_NO_ACCOUNT (%d)%s", rc,
	          MONEY_NO_ACCOUNT, rc == MONEY_INSUFFICIENT ? ": MONEY_INSUFFICIENT says \"not "
	          "enough yet\", and a caller waits for fees that can never come. When no "
	          "sub-account holds the amount, ask whether the account is there at all" : "");
	rc = money_payout(db, &fees, 10, 66, 2);
	lt_expect(rc == MONEY_NO_ACCOUNT, "reservation", "a payout of 2 to account 66, which was "
	          "never opened, returned %d; expected MONEY_NO_ACCOUNT (%d)", rc, MONEY_NO_ACCOUNT);
	rc = money_payout(db, &fees, 11, 66, 50);
	lt_expect(rc == MONEY_NO_ACCOUNT, "reservation", "a payout of 50 to account 66, which was "
	          "never opened, out of a fee account holding 5, returned %d; expected "
	          "MONEY_NO_ACCOUNT (%d)%s", rc, MONEY_NO_ACCOUNT, rc == MONEY_INSUFFICIENT ? ": "
	          "money.h says MONEY_NO_ACCOUNT wins, since no money will ever come of waiting. "
	          "When no sub-account holds the amount, ask whether the payee is there too, not "
	          "only the fee account" : "");
	lt_expect_int_hint(sql_int(t, "SELECT count(*) FROM transfers"), before, "transfers rows "
	                   "after three payouts refused with MONEY_NO_ACCOUNT", "reservation");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "reservation", "after three refused payouts: %s", bad);
}

/* A fee account opened with one sub-account, paid out of as if it had
 * four (fees->subs 4): sub-accounts 1 to 3 have no row, and money.h says
 * such a sub-account holds nothing. Payout 23 starts at sub-account
 * 23 % 4 = 3, which has no row, and must come out of sub-account 0,
 * which holds 5; payout 21 of 50, more than any holds, is
 * MONEY_INSUFFICIENT: both accounts are there, and fees can still come. */
static void payout__more_subs_than_opened(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books_after_a_sale(t);
	struct money_fees four = { FEE_ACCOUNT, 4 };
	int rc = money_payout(db, &four, 23, 3, 2);
	bool answer = rc == 0 || rc == MONEY_NO_ACCOUNT || rc == MONEY_INSUFFICIENT ||
	              rc == MONEY_ALREADY || rc == MONEY_INVALID;
	lt_expect(rc == 0, "reservation", "a payout of 2 with fees->subs 4 out of a fee account "
	          "opened with one sub-account holding 5 returned %d%s%s%s; expected 0: money.h says "
	          "a sub-account with no row holds nothing, so the payout comes out of one that "
	          "holds the amount (sub-account 0)%s", rc, answer ? "" : " (", answer ? "" :
	          labtest_why(db), answer ? "" : ")", rc == MONEY_NO_ACCOUNT ? ". MONEY_NO_ACCOUNT is for an account never opened, "
	          "not for a sub-account the loop meets first" : "");
	lt_expect_int_hint(balance(t, 3), rc == 0 ? 2 : 0, "account 3 after the payout of 2",
	                   "reservation");
	rc = money_payout(db, &four, 21, 3, 50);
	lt_expect(rc == MONEY_INSUFFICIENT, "reservation", "a payout of 50 with fees->subs 4 out "
	          "of a fee account opened with one sub-account (holding 3 now) returned %d; "
	          "expected MONEY_INSUFFICIENT (%d): both accounts were opened, and fees may still "
	          "come", rc, MONEY_INSUFFICIENT);
	lt_expect_int_hint(rows_of(t, 21), 0, "rows of the refused payout", "rollback");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "reservation", "after payouts with fees->subs past the opened: %s", bad);
}

/* Each transfers row says who paid whom, how much, and what fee: the
 * opening of account 1 (id -1, from MONEY_OUTSIDE, fee 0), a sale (7,
 * buyer 1 to seller 2, fee 5) and a payout (8, from the fee account to
 * 3, fee 0 as money.h says). Rows are read with the test's own SQL;
 * a transfers row with a wrong payer or fee balances the books all the
 * same, so only its contents show it. */
static void transfer__rows_say_who_paid_whom(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books_after_a_sale(t);
	struct money_fees fees = { FEE_ACCOUNT, 1 };
	lt_expect(money_payout(db, &fees, 8, 3, 4) == 0, "reservation", "a payout of 4 from a fee "
	          "account holding 5 failed: %s", labtest_why(db));
	static const struct { int64_t id, debit, credit, amount, fee; const char *what; } want[] = {
		{ -1, MONEY_OUTSIDE, 1, 500, 0, "the opening of account 1 with 500" },
		{ 7, 1, 2, 100, 5, "sale 7: 100 from buyer 1 to seller 2, fee 5" },
		{ 8, FEE_ACCOUNT, 3, 4, 0, "payout 8: 4 from the fee account to account 3" },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		int64_t match = sql_int(t, "SELECT count(*) FROM transfers WHERE id = %lld AND debit = "
		                        "%lld AND credit = %lld AND amount = %lld AND fee = %lld",
		                        (long long)want[i].id, (long long)want[i].debit,
		                        (long long)want[i].credit, (long long)want[i].amount,
		                        (long long)want[i].fee);
		int64_t got[4];
		static const char *const col[4] = { "debit", "credit", "amount", "fee" };
		for (int c = 0; c < 4; c++)
			got[c] = sql_int(t, "SELECT COALESCE(MIN(%s), -99) FROM transfers WHERE id = %lld",
			                 col[c], (long long)want[i].id);
		lt_expect(match == 1, "entries", "expected the transfers row (id %lld, debit %lld, "
		          "credit %lld, amount %lld, fee %lld) for %s; its row reads debit %lld, "
		          "credit %lld, amount %lld, fee %lld (-99: no row)", (long long)want[i].id,
		          (long long)want[i].debit, (long long)want[i].credit,
		          (long long)want[i].amount, (long long)want[i].fee, want[i].what,
		          (long long)got[0], (long long)got[1], (long long)got[2], (long long)got[3]);
	}
}

/* Accounts nobody paid yet: sub-accounts with no entry and a balance of
 * 0 are in order (0 is the sum of no entries, and 0 is not below zero),
 * so books of such accounts and one sale reconcile to all zeros. */
static void reconcile__untouched_accounts_are_in_order(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 3, 0);
	open_account(db, FEE_ACCOUNT, 4, 0);
	lt_expect_int(transfer(db, 1, 1, 2, 50, 4, 4), 0, "money_transfer");
	struct money_audit a = { -1, -1, -1, -1 };
	int rc = money_reconcile(db, &a);
	lt_expect(rc == 0, "reconcile", "money_reconcile failed (%d): %s", rc, labtest_why(db));
	lt_expect(a.unbalanced == 0 && a.drifted == 0 && a.negative == 0 && a.total == 0,
	          "reconcile", "expected all zeros, got unbalanced %lld, drifted %lld, negative "
	          "%lld, total %lld: books with five sub-accounts at 0 that no entry touched (a "
	          "balance of 0 with no entries is in order; only one below 0 is negative)",
	          (long long)a.unbalanced, (long long)a.drifted, (long long)a.negative,
	          (long long)a.total);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* In the order of the handout. */
		BOTH(open__domain_edges),
		BOTH(open__every_step_can_fail),
		BOTH(transfer__moves_money_as_entries),
		BOTH(transfer__refused_leaves_nothing),
		BOTH(transfer__domain_edges),
		BOTH(transfer__buyer_pays_from_sub_0),
		BOTH(transfer__values_past_2_31),
		BOTH(transfer__values_past_2_53),
		BOTH(transfer__credit_past_int64_max_is_an_error),
		BOTH(transfer__retry_applies_once),
		BOTH(transfer__two_at_once_cannot_overdraw),
		PG_ONLY(money__waits_as_long_as_the_session_allows),
		BOTH(transfer__same_id_in_flight),
		BOTH(transfer__refused_while_the_buyer_is_paid),
		BOTH(batch__debit_checked_where_it_is_taken),
		BOTH(payout__waits_for_a_sale_crediting_its_sub),
		PG_ONLY(payout__sales_to_other_subs_do_not_wait),
		BOTH(transfer__every_step_can_fail),
		BOTH(transfer__short_every_step_can_fail),
		BOTH(transfer__two_sales_fail_at_once),
		BOTH(transfer__retry_beside_a_failed_commit),
		BOTH(batch__retry_beside_a_failed_commit),
		BOTH(payout__no_sub_holds_it_all),
		BOTH(payout__short_every_step_can_fail),
		BOTH(transfer__fee_spread_over_subs),
		BOTH(transfer__zero_fee_writes_no_fee_entry),
		BOTH(transfer__fee_sub_account_missing),
		PG_ONLY(transfer__fee_row_locked_last),
		BOTH(payout__never_below_zero_per_sub),
		BOTH(payout__two_at_once_from_one_sub),
		BOTH(payout__two_at_once_from_two_subs),
		BOTH(payout__two_at_once_both_covered),
		BOTH(payout__every_step_can_fail),
		BOTH(payout__same_id_in_flight),
		BOTH(payout__domain_edges),
		BOTH(payout__out_of_one_sub_only),
		BOTH(batch__bad_transfer_does_not_sink_batch),
		BOTH(batch__one_transaction),
		BOTH(batch__size_edges),
		BOTH(batch__same_batch_twice_at_once),
		PG_ONLY(batch__two_batches_cross_the_fee_subs),
		PG_ONLY(batch__fee_rows_locked_in_sub_order),
		PG_ONLY(batch__two_batches_keep_their_own_statements),
		PG_ONLY(transfer__zero_fee_touches_no_fee_row),
		BOTH(batch__invalid_one_in_the_middle),
		BOTH(batch__domain_edges),
		BOTH(batch__same_id_twice_in_one_batch),
		BOTH(batch__same_as_its_sales_one_by_one),
		BOTH(batch__every_step_can_fail),
		SQLITE_ONLY(batch__exactly_max),
		BOTH(batch__ids_near_int64_max_with_refused_sales),
		BOTH(batch__fee_sums_past_2_24),
		BOTH(batch__fee_sums_past_2_31),
		BOTH(batch__fee_sums_past_int64_max),
		BOTH(batch__fee_sums_past_int64_max_on_every_sub),
		BOTH(batch__fee_sums_up_to_int64_max_exactly),
		BOTH(batch__fee_sums_of_two_subs_past_int64_max_together),
		BOTH(batch__refused_sales_add_no_fee_to_the_sum),
		BOTH(reconcile__finds_what_is_wrong),
		BOTH(reconcile__counts_each_row),
		BOTH(reads__one_moment_while_sales_commit),
		BOTH(reconcile__unbalanced_at_one_moment),
		BOTH(reconcile__rows_with_no_entries),
		BOTH(reconcile__counts_past_ten_thousand),
		BOTH(reconcile__every_step_can_fail),
		BOTH(balance__every_step_can_fail),
		BOTH(balance__reads_only),
		BOTH(balance__past_int64_max_is_an_error),
		BOTH(balance__values_a_sentinel_could_take),
		BOTH(reconcile__a_row_below_zero_under_any_id),
		BOTH(every_call__leaves_the_connection_as_it_found_it),
		BOTH(money__refused_for_good_ends),
		BOTH(transfer__no_overdraft_under_threads),
		BOTH(transfer__refused_from_every_thread),
		PG_ONLY(transfer__nothing_shared_between_threads),
		PG_ONLY(money__first_calls_at_once),
		BOTH(balance__reads_an_account_opened_meanwhile),
		BOTH(crash__before_commit),
		BOTH(crash__after_commit),
		BOTH(crash__mid_batch),
		BOTH(transfer__every_allocation_can_fail),
		BOTH(batch__every_allocation_can_fail),
		BOTH(money__every_allocation_can_fail_in_the_other_calls),
		BOTH(money__nothing_left_allocated),
		BOTH(open__opening_of_one),
		BOTH(transfer__no_sub_accounts_refused),
		BOTH(payout__smallest_id_and_amount),
		BOTH(payout__accounts_never_opened),
		BOTH(payout__more_subs_than_opened),
		BOTH(transfer__rows_say_who_paid_whom),
		BOTH(reconcile__untouched_accounts_are_in_order),
	};
	return labtest_main("06-money", tests);
}
