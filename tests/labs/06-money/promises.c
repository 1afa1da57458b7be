/*
 * promises.c: Lab 06's checks of what money.h promises where the other
 * check files stop short: a batch's fee sums past 2^31 (each fee fits an
 * int, their sum does not) and past INT64_MAX, a batch's transfers at the
 * edges of money_transfer's domain, and every call, whatever it answers,
 * leaving its connection as it found it: no transaction open, no session
 * setting changed ("the connection is ready for the next call").
 */
#include "tests/labs/06-money/promises.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "labs/06-money/money.h"
#include "tests/harness/sql.h"
#include "tests/labs/06-money/books.h"
#include "tests/harness/bounds.h"
#include "tests/harness/gate.h"
#include "tests/harness/labtest.h"
#include "tests/harness/session.h"
#include "tests/harness/steps.h"
#include "util/clock.h"

/* Three fees of 1,000,000,001 in one batch: each fits an int, their sum,
 * 3,000,000,003, does not. A sum kept in an int wraps to a negative
 * number and the fee sub-account is debited instead of credited. */
void batch__fee_sums_past_2_31(void **state)
{
	struct labtest *t = *state;
	enum { N = 3 };
	const int64_t amount = 1500000000, fee = 1000000001;
	same_fees_batch(t, N, amount, fee);
	int64_t got = balance(t, FEE_ACCOUNT);
	lt_expect(got == N * fee, "balance", "fee account after a batch of 3 fees of 1,000,000,001: "
	          "expected %lld (past 2^31 = %lld), got %lld%s", (long long)(N * fee),
	          (long long)LT_PAST_INT32, (long long)got, got != N * fee && got < LT_PAST_INT32 ?
	          ": the batch's fee sum was kept in an int (or a 32-bit type) and wrapped; keep "
	          "sums of money in int64_t" : "");
	lt_expect_int_hint(balance(t, 2), N * (amount - fee), "seller's balance after the batch",
	                   "balance");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "balance", "the books after a batch of fees past 2^31: %s", bad);

	/* Past 2^53: fees of 2^53 and 1 in one batch. A sum kept in a double
	 * ("53 bits is plenty") rounds 2^53 + 1 to 2^53. */
	struct kit_db *db = labtest_db(t);
	open_account(db, 3, 1, LT_PAST_DOUBLE);
	struct money_fees one = { FEE_ACCOUNT, 1 };
	struct money_transfer big[] = { { 101, 3, 2, LT_PAST_DOUBLE - 1, LT_PAST_DOUBLE - 1 },
	                                { 102, 3, 2, 1, 1 } };
	int results[2] = { 42, 42 };
	int rc = money_batch(db, &one, big, 2, results);
	lt_expect(rc == 0 && results[0] == 0 && results[1] == 0, "savepoint",
	          "money_batch of fees 2^53 and 1: returned %d, results %d, %d (%s)", rc, results[0],
	          results[1], labtest_why(db));
	got = balance(t, FEE_ACCOUNT);
	lt_expect(got == N * fee + LT_PAST_DOUBLE, "balance", "fee account after a batch of fees "
	          "2^53 and 1 (it held %lld before): expected %lld, got %lld%s", (long long)(N * fee),
	          (long long)(N * fee + LT_PAST_DOUBLE), (long long)got,
	          got == N * fee + LT_PAST_DOUBLE - 1 ? ": the batch's fee sum, 2^53 + 1, was kept in "
	          "a double and rounded; keep sums of money in int64_t" : "");
	bad = books_fault(t);
	lt_expect(bad == NULL, "balance", "the books after a batch of fees past 2^53: %s", bad);
}

/* Past INT64_MAX: sales with fees of 2^62, 2^62 and 1 in one batch, to a
 * fee account of one row. Each fee fits an int64_t, and so would each
 * balance; the first two fees' sum, 2^63, does not. money.h: that sale
 * fails alone with KIT_DB_ERR and the batch goes on, so the third is
 * applied and the fee account holds 2^62 + 1. A sum added with no test
 * wraps to INT64_MIN, and the fee account is "credited" -2^63 at COMMIT:
 * below zero, money destroyed. Two buyers opened with 2^62 each take
 * MONEY_OUTSIDE to exactly INT64_MIN: all the money the books can hold. */
void batch__fee_sums_past_int64_max(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	const int64_t big = INT64_C(1) << 62;
	open_account(db, 1, 1, big);
	open_account(db, 3, 1, big);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);
	struct money_fees one = { FEE_ACCOUNT, 1 };
	struct money_transfer list[] = {
		{ 101, 1, 2, big, big },
		{ 102, 3, 2, big, big },        /* the fee sum would be 2^63 */
		{ 103, 3, 2, 10, 1 },
	};
	int results[3] = { 42, 42, 42 };
	int rc = money_batch(db, &one, list, 3, results);
	int64_t got = balance(t, FEE_ACCOUNT);
	lt_expect(rc == 0 && results[0] == 0 && results[1] == KIT_DB_ERR && results[2] == 0 &&
	          got == big + 1, "fee-subs", "a batch of fees 2^62, 2^62 and 1 to a fee account "
	          "of one row returned %d with results %d, %d, %d (%s), and the fee account holds "
	          "%lld; expected 0 with results 0, KIT_DB_ERR (%d), 0 and 2^62 + 1 = %lld: the "
	          "second fee would take the sub-account's sum to 2^63, past INT64_MAX, so that "
	          "sale fails alone and the batch goes on (money.h)%s", rc, results[0], results[1],
	          results[2], rc ? labtest_why(db) : "committed", (long long)got, KIT_DB_ERR,
	          (long long)(big + 1),
	          got < 0 ? ". The fee account is below zero: the batch's fee sum wrapped past "
	          "INT64_MAX to a negative number and was credited as it was; test before you "
	          "add (fee > INT64_MAX - sum)" : "");
	lt_expect_int_hint(rows_of(t, 102), 0, "rows of sale 102, whose fee did not fit the sum",
	                   "savepoint");
	lt_expect_int_hint(balance(t, 3), big - 10, "buyer 3 after its sale of 2^62 failed and its "
	                   "sale of 10 was applied", "savepoint");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "fee-subs", "the books after a batch of fees past INT64_MAX: %s", bad);
}

/* The same edge on a fee account of two sub-accounts, every sale's fee
 * on sub-account 1 (odd ids): each sub-account's sum is tested, not the
 * first one's. Fees of 2^62, 2^61 and 2^61: the third would take
 * sub-account 1's sum to 2^63, and fails alone. */
void batch__fee_sums_past_int64_max_on_every_sub(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	const int64_t p62 = INT64_C(1) << 62, p61 = INT64_C(1) << 61;
	open_account(db, 1, 1, p62);
	open_account(db, 3, 1, p61);
	open_account(db, 5, 1, p61);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	struct money_fees two = { FEE_ACCOUNT, 2 };
	struct money_transfer list[] = {
		{ 101, 1, 2, p62, p62 },
		{ 103, 3, 2, p61, p61 },
		{ 105, 5, 2, p61, p61 },        /* sub-account 1's sum would be 2^63 */
	};
	int results[3] = { 42, 42, 42 };
	int rc = money_batch(db, &two, list, 3, results);
	int64_t got = sql_int(t, "SELECT balance FROM accounts WHERE id = %d AND sub = 1",
	                      FEE_ACCOUNT);
	lt_expect(rc == 0 && results[0] == 0 && results[1] == 0 && results[2] == KIT_DB_ERR &&
	          got == p62 + p61, "fee-subs", "a batch of fees 2^62, 2^61 and 2^61, all to "
	          "sub-account 1 of a fee account of two, returned %d with results %d, %d, %d (%s), "
	          "and sub-account 1 holds %lld; expected 0 with results 0, 0, KIT_DB_ERR (%d) and "
	          "2^62 + 2^61 = %lld: the third fee would take that sub-account's sum past "
	          "INT64_MAX. Is the test made against another sub-account's sum (the first's)?",
	          rc, results[0], results[1], results[2], rc ? labtest_why(db) : "committed",
	          (long long)got, KIT_DB_ERR, (long long)(p62 + p61));
	lt_expect_int_hint(rows_of(t, 105), 0, "rows of sale 105, whose fee did not fit the sum",
	                   "savepoint");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "fee-subs", "the books after a batch of fees past INT64_MAX on "
	          "sub-account 1: %s", bad);
}

/* Each sub-account's sum is tested on its own: fees on two sub-accounts
 * that each fit, though together they pass INT64_MAX, are all applied.
 * Buyers opened with 2^62 each (MONEY_OUTSIDE then at exactly INT64_MIN)
 * pay it all as a fee, sale 100 to sub-account 0, sale 101 to
 * sub-account 1: both 0, each sub-account at 2^62. A test of each fee
 * against the batch's total of fees (2^63, past INT64_MAX) refuses the
 * second. The sub-accounts are read one by one: the fee account's sum,
 * 2^63, is past what a balance holds. */
void batch__fee_sums_of_two_subs_past_int64_max_together(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	const int64_t big = INT64_C(1) << 62;
	open_account(db, 1, 1, big);
	open_account(db, 3, 1, big);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	struct money_fees two = { FEE_ACCOUNT, 2 };
	struct money_transfer list[] = { { 100, 1, 2, big, big }, { 101, 3, 2, big, big } };
	int results[2] = { 42, 42 };
	int rc = money_batch(db, &two, list, 2, results);
	int64_t sub0 = sql_int(t, "SELECT balance FROM accounts WHERE id = %d AND sub = 0",
	                       FEE_ACCOUNT);
	int64_t sub1 = sql_int(t, "SELECT balance FROM accounts WHERE id = %d AND sub = 1",
	                       FEE_ACCOUNT);
	lt_expect(rc == 0 && results[0] == 0 && results[1] == 0 && sub0 == big && sub1 == big,
	          "fee-subs", "a batch of two fees of 2^62, sale 100's to sub-account 0 and sale "
	          "101's to sub-account 1 of a fee account of two, returned %d with results %d, %d "
	          "(%s), and the sub-accounts hold %lld and %lld; expected 0 with results 0, 0 and "
	          "2^62 = %lld in each: each sum fits its own sub-account. Is each fee tested "
	          "against the batch's total of fees (2^63, past INT64_MAX) instead of its own "
	          "sub-account's sum?", rc, results[0], results[1], rc ? labtest_why(db) :
	          "committed", (long long)sub0, (long long)sub1, (long long)big);
	lt_expect(balance(t, 1) == 0 && balance(t, 3) == 0 && rows_of(t, 100) > 0 &&
	          rows_of(t, 101) > 0, "fee-subs", "after that batch: buyers at %lld and %lld, "
	          "sales 100 and 101 with %lld and %lld row(s) (expected 0, 0 and rows of both)",
	          (long long)balance(t, 1), (long long)balance(t, 3), (long long)rows_of(t, 100),
	          (long long)rows_of(t, 101));
}

/* The other side of that edge: fees that sum to exactly INT64_MAX fit,
 * and are applied. Buyers opened with 2^62 and 2^62 - 1 (all the books
 * can hold besides) each pay it all as a fee, in one batch, to a fee
 * account of one row: both sales 0, the fee account at INT64_MAX. A test
 * of the sum off by one (fee >= INT64_MAX - sum) refuses the second. */
void batch__fee_sums_up_to_int64_max_exactly(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	const int64_t big = INT64_C(1) << 62;
	open_account(db, 1, 1, big);
	open_account(db, 3, 1, big - 1);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);
	struct money_fees one = { FEE_ACCOUNT, 1 };
	struct money_transfer list[] = { { 101, 1, 2, big, big }, { 102, 3, 2, big - 1, big - 1 } };
	int results[2] = { 42, 42 };
	int rc = money_batch(db, &one, list, 2, results);
	int64_t got = balance(t, FEE_ACCOUNT);
	lt_expect(rc == 0 && results[0] == 0 && results[1] == 0 && got == INT64_MAX, "fee-subs",
	          "a batch of fees 2^62 and 2^62 - 1 to a fee account of one row returned %d with "
	          "results %d, %d (%s), and the fee account holds %lld; expected 0 with results 0, 0 "
	          "and INT64_MAX: a sum of exactly INT64_MAX fits (is the test before the add off by "
	          "one: fee >= INT64_MAX - sum where fee > INT64_MAX - sum is due?)", rc, results[0],
	          results[1], rc ? labtest_why(db) : "committed", (long long)got);
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "fee-subs", "the books after a batch of fees summing to INT64_MAX: %s",
	          bad);
}

/* A refused sale adds no fee to its sub-account's sum: only what the
 * batch credits counts. Batches to a fee account of one row, each with a
 * sale applied before (MONEY_ALREADY), one whose buyer is short
 * (MONEY_INSUFFICIENT) and one whose fee is above its amount
 * (MONEY_INVALID), each with a fee of 2^62 + 31, and a good sale of fee
 * 2^62 - 30: any two of those four fees sum past INT64_MAX. First the
 * refused sales come ahead of the good one, then after it, when the sum
 * is 2^62 - 30 already; a good sale of fee 1 ends each batch. A good sale
 * refused with KIT_DB_ERR, or a refused one answered KIT_DB_ERR, shows a
 * fee the batch never credits in the sum: the overflow test made in a
 * pass of its own over every sale, or before the sale is validated,
 * debited and found new. (Two rounds of 2^62 each fit the books: all the
 * money opened stays below 2^63.) */
static void refused_fees_round(struct labtest *t, struct kit_db *db, bool good_first)
{
	const int64_t r = (INT64_C(1) << 62) + 31, g = (INT64_C(1) << 62) - 30;
	const int64_t base = good_first ? 200 : 100;   /* ids of sales and accounts */
	open_account(db, base + 1, 1, 0);
	open_account(db, base + 3, 1, g);
	open_account(db, base + 5, 1, 10);
	open_account(db, base + 7, 1, 10);
	open_account(db, base + 2, 1, 0);
	struct money_fees one = { FEE_ACCOUNT, 1 };
	const struct money_transfer before = { base, base + 7, base + 2, 10, 1 };
	lt_expect_int(money_transfer(db, &one, &before), 0, "a sale before the batch");
	const struct money_transfer refused[] = {
		{ base, base + 3, base + 2, r, r },           /* applied before */
		{ base + 11, base + 1, base + 2, r, r },      /* its buyer has nothing */
		{ base + 13, base + 3, base + 2, 10, r },     /* a fee above its amount */
	}, good = { base + 15, base + 3, base + 2, g, g },
	   small = { base + 17, base + 5, base + 2, 10, 1 };
	static const int refused_as[] = { MONEY_ALREADY, MONEY_INSUFFICIENT, MONEY_INVALID };
	static const char *const what[] = { "applied before", "its buyer short",
	                                    "its fee above its amount" };
	struct money_transfer list[5];
	int want[5], results[5];
	const char *said[5];
	for (int i = 0; i < 5; i++) {
		int k = good_first ? i - 1 : i;             /* which refused sale, if any */
		bool is_refused = k >= 0 && k < 3;
		list[i] = is_refused ? refused[k] : i == 4 ? small : good;
		want[i] = is_refused ? refused_as[k] : 0;
		said[i] = is_refused ? what[k] : i == 4 ? "good, fee 1" : "good, fee 2^62 - 30";
		results[i] = 42;
	}
	int64_t fees_before = balance(t, FEE_ACCOUNT);
	int rc = money_batch(db, &one, list, 5, results);
	lt_expect(rc == 0, "fee-subs", "money_batch returned %d: %s", rc, labtest_why(db));
	for (int i = 0; i < 5; i++)
		lt_expect(results[i] == want[i], "fee-subs", "in a batch to a fee account of one row, "
		          "three sales refused (applied before, buyer short, fee above the amount) with "
		          "fees of 2^62 + 31 %s a good sale of fee 2^62 - 30 (any two of those fees sum "
		          "past INT64_MAX) and then one of fee 1, sale %lld (%s) got %d, expected %d%s",
		          good_first ? "after" : "ahead of", (long long)list[i].id, said[i], results[i],
		          want[i], results[i] == KIT_DB_ERR ? ": its fee was taken to carry the sum "
		          "past INT64_MAX, so the sum held a fee the batch never credits, or the test "
		          "came before the sale was found refused. Is the overflow test made in a pass "
		          "of its own over every sale, or before the sale is validated, debited and "
		          "found new? Only a fee the batch credits counts, and a sale refused for what "
		          "it is says so (MONEY_INVALID, MONEY_INSUFFICIENT, MONEY_ALREADY): a retry "
		          "changes none of those" : "");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT) - fees_before, g + 1, "what the fee account "
	                   "gained from the batch (the good sales' fees, 2^62 - 30 and 1)", "fee-subs");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "fee-subs", "the books after a batch with refused sales of large "
	          "fees: %s", bad);
}

void batch__refused_sales_add_no_fee_to_the_sum(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, FEE_ACCOUNT, 1, 0);
	refused_fees_round(t, db, false);
	refused_fees_round(t, db, true);
}

/* 1 when the session `id` (of db) has a transaction open, as the server
 * shows it to another connection (obs): pg_stat_activity's "idle in
 * transaction"; on SQLite a write lock another connection cannot take
 * (kit_db_begin is BEGIN IMMEDIATE). Not on MariaDB, where the session's
 * own @@in_transaction (lt_in_transaction, beside it) decides alone:
 * InnoDB serves INNODB_TRX from a copy it renews only when nobody has
 * read it for 0.1 s, so while other clients of the server keep reading
 * it (make test's other lanes, Lab 07's detectors and the harness's lock
 * waits) the copy can name a transaction that committed seconds ago. */
static int open_transaction(struct labtest *t, struct kit_db *obs, int64_t id)
{
	char sql[200];
	if (t->engine == KIT_DB_MYSQL)
		return 0;
	if (t->engine == KIT_DB_SQLITE) {
		kit_db_exec(obs, "PRAGMA busy_timeout = 0", 0, NULL);
		int rc = kit_db_exec(obs, "BEGIN IMMEDIATE", 0, NULL);
		if (rc == 0)
			kit_db_exec(obs, "ROLLBACK", 0, NULL);
		return rc != 0;
	}
	snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE pid = %lld"
	         " AND state LIKE 'idle in transaction%%'", (long long)id);
	int64_t n = 0;
	kit_db_query_int(obs, sql, 0, NULL, &n);
	return n > 0;
}

/* Every function, on each of its answers (applied, MONEY_ALREADY,
 * MONEY_INSUFFICIENT, MONEY_NO_ACCOUNT for a buyer, a seller and a
 * payout's payee, MONEY_INVALID, a payout's and a batch's, money_open's
 * KIT_DB_CONSTRAINT; an audit and a balance read, of an account and of
 * one never opened (MONEY_NO_ACCOUNT), which only read: a
 * snapshot kept open "since nothing was written" holds its locks and
 * joins the next call's work), leaves its connection with no transaction open
 * and no session setting changed (lt_session: SQLite's pragmas,
 * PostgreSQL's settings, MariaDB's session variables): money.h promises
 * the connection is ready for the next call. A path that returns before
 * its COMMIT or ROLLBACK leaves the transaction open (on PostgreSQL the
 * next BEGIN only warns, and the next call's work joins it); a SET
 * without LOCAL (a lock_timeout, a synchronous_commit), a PRAGMA
 * synchronous or a MariaDB SET innodb_lock_wait_timeout outlives the
 * call and changes every later transaction of that connection. A payout
 * to an account that does not exist is MONEY_NO_ACCOUNT with nothing
 * written, like a sale to a missing seller: a credit that changed no row
 * has paid nobody. And no call sets a timeout of its own (money.h), not
 * even for its transaction, nor on SQLite, where only the kit's busy wait
 * shows it: a sale, a batch, a payout, an audit and a balance read run
 * once more after the caller set the connection's lock timeout to 4 s,
 * and again at 150 ms (a call that caps a wait "without end" shows in the
 * first pass, one that puts "the default" back with
 * kit_db_set_lock_timeout(db, 0) in the second, one that raises a short
 * wait to a floor of its own in the third). */
void every_call__leaves_the_connection_as_it_found_it(void **state)
{
	struct labtest *t = *state;
	books(t);
	struct kit_db *db = labtest_connect(t), *obs = labtest_db(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	int64_t id = lt_session_id(db);
	char before[LT_SESSION_LEN], after[LT_SESSION_LEN];
	lt_session_own_values(t, db);
	lt_session(t, db, before, sizeof before);

	struct money_fees f = { FEE_ACCOUNT, 2 };
	struct money_transfer ok = { 1, 1, 2, 100, 10 }, batch2[2] = { { 2, 1, 2, 10, 1 },
	                                                                 { 3, 1, 2, 10, 1 } };
	int results[2];
	char fault[2 * LT_SESSION_LEN + 1000] = "";
	static const char *const what[] = {
		"a transfer applied (0)", "the same transfer again (MONEY_ALREADY)",
		"a transfer the balance does not cover (MONEY_INSUFFICIENT)",
		"a transfer from a buyer that does not exist (MONEY_NO_ACCOUNT)",
		"a transfer to a seller that does not exist (MONEY_NO_ACCOUNT)",
		"a transfer with a fee above the amount (MONEY_INVALID)", "a batch of 2 (0)",
		"a payout (0)", "the same payout again (MONEY_ALREADY)",
		"a payout the fee account does not cover (MONEY_INSUFFICIENT)",
		"money_open of an account that exists (KIT_DB_CONSTRAINT)",
		"a payout to an account that does not exist (MONEY_NO_ACCOUNT)",
		"an audit (money_reconcile, 0)", "a balance read (money_balance, 0)",
		"money_setup on a connection whose tables are there (0)",
		"a balance read of an account never opened (money_balance, MONEY_NO_ACCOUNT)",
	};
	static const int want[] = { 0, MONEY_ALREADY, MONEY_INSUFFICIENT, MONEY_NO_ACCOUNT,
	                            MONEY_NO_ACCOUNT, MONEY_INVALID, 0, 0, MONEY_ALREADY,
	                            MONEY_INSUFFICIENT, KIT_DB_CONSTRAINT, MONEY_NO_ACCOUNT, 0, 0, 0,
	                            MONEY_NO_ACCOUNT };
	static const int again[] = { 0, 6, 7, 12, 13 };
	for (int pass = 0; pass < 3; pass++) {
		int nsteps = pass ? (int)(sizeof again / sizeof again[0]) : (int)(sizeof what / sizeof what[0]);
		int64_t shift = 100 * pass;
		if (pass > 0) {
			int ms = pass == 1 ? 4000 : 150;
			lt_expect(kit_db_set_lock_timeout(db, ms) == 0, NULL,
			          "kit_db_set_lock_timeout(%d): %s", ms, labtest_why(db));
			lt_session(t, db, before, sizeof before);
			batch2[0].id += shift;
			batch2[1].id += shift;
		}
		for (int i = 0; i < nsteps; i++) {
			int step = pass ? again[i] : i;
			int rc = 0;
			struct money_transfer x = ok;
			struct lt_call_watch w;
			lt_call_watch_init(&w, db);
			kit_db_set_hook(db, lt_call_watch, &w);
			switch (step) {
			case 0: x.id += shift; rc = money_transfer(db, &f, &x); break;
			case 1: rc = money_transfer(db, &f, &ok); break;
			case 2: x.id = 10; x.amount = 100000; rc = money_transfer(db, &f, &x); break;
			case 3: x.id = 11; x.from = 77; rc = money_transfer(db, &f, &x); break;
			case 4: x.id = 12; x.to = 78; rc = money_transfer(db, &f, &x); break;
			case 5: x.id = 13; x.fee = 101; rc = money_transfer(db, &f, &x); break;
			case 6: rc = money_batch(db, &f, batch2, 2, results); break;
			case 7: case 8: rc = money_payout(db, &f, 20 + shift, 2, 5); break;
			case 9: rc = money_payout(db, &f, 21, 2, 100000); break;
			case 10: rc = money_open(db, 2, 1, 0); break;
			case 11: rc = money_payout(db, &f, 22, 79, 5); break;
			case 12: { struct money_audit a; rc = money_reconcile(db, &a); break; }
			case 13: { int64_t b = 0; rc = money_balance(db, 1, &b); break; }
			case 14: rc = money_setup(db); break;
			case 15: { int64_t b = 0; rc = money_balance(db, 76, &b); break; }
			}
			kit_db_set_hook(db, NULL, NULL);
			if (w.durability[0] && !fault[0])
				snprintf(fault, sizeof fault, "%s sent \"%s\": a payment confirmed by a COMMIT "
				         "that did not wait for the disk is lost when the server or the machine "
				         "stops (money.h: never lose a payment that was confirmed). Not even for "
				         "one transaction (SET LOCAL), and not put back afterwards: nothing a "
				         "setting read after the call shows", what[step], w.durability);
			if (w.timeout.sql[0] && !fault[0])
				snprintf(fault, sizeof fault, "%s set a timeout of its own: it sent \"%s\". "
				         "money.h: a call waits as long as its connection's lock timeout allows and "
				         "sets no timeout of its own, shorter or longer, not even for its own "
				         "transaction (a cap on a wait \"without end\" fails the sales that queue "
				         "longer for the fee row under load; a floor of its own keeps a caller that "
				         "chose to wait briefly waiting longer)", what[step], w.timeout.sql);
			if (w.timeout.seen_ms >= 0 && !fault[0])
				snprintf(fault, sizeof fault, "%s ran a statement under a busy wait of %d ms, where "
				         "its connection's is %d ms (kit_db_lock_timeout): money.h: a call sets no "
				         "timeout of its own, not even for its own transaction, and "
				         "kit_db_set_lock_timeout(db, 0) afterwards puts back the kit's default, not "
				         "what the caller had set", what[step], w.timeout.seen_ms, w.timeout.expect_ms);
			/* and as the session itself says */
			int open = open_transaction(t, obs, id) || lt_in_transaction(t, db) != 0;
			lt_session(t, db, after, sizeof after);
			if (step == 11 && rc == 0 && !fault[0])
				snprintf(fault, sizeof fault, "%s returned 0: its credit to account 79 changed no "
				         "row (kit_db_changes says 0) and was taken for a payment, so the fee account "
				         "paid nobody", what[step]);
			if (rc != want[step] && !fault[0])
				snprintf(fault, sizeof fault, "%s returned %d, expected %d (%s)", what[step], rc,
				         want[step], rc < 0 ? labtest_why(db) : "no database error");
			if (open && !fault[0])
				snprintf(fault, sizeof fault, "after %s (it returned %d), its connection still "
				         "has a transaction open: that path returns before its COMMIT or ROLLBACK "
				         "(on PostgreSQL the next BEGIN only warns, and the next call's writes "
				         "join the open transaction)", what[step], rc);
			if (strcmp(before, after) != 0 && !fault[0])
				snprintf(fault, sizeof fault, "after %s (it returned %d), its session's settings "
				         "changed from [%s] to [%s]: a PRAGMA or a SET without LOCAL outlives the "
				         "call; on PostgreSQL use SET LOCAL inside the transaction (never of "
				         "synchronous_commit), on SQLite and MariaDB set nothing", what[step], rc, before, after);
		}
	}
	/* closed before the verdict: a transaction left open would hold its
	 * locks through the teardown */
	kit_db_close(db);
	lt_expect(!fault[0], "rollback", "%s", fault);
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "balance", "the books after every kind of answer: %s", bad);
	labtest_expect_fresh(t, "every_call__leaves_the_connection_as_it_found_it", "rollback",
	                     LT_KEPT_SETTING);
}

/* money_batch's transfers walk the same domain as money_transfer's, each
 * edge outside it in the middle of a batch: a fee below zero, a fee above
 * the amount, an amount of 0 and below, an id of 0 and below, a sale to
 * oneself. Each gets MONEY_INVALID and leaves no row; the valid ones
 * around them are applied. A batch that checks its transfers with a test
 * of its own instead of money_transfer's (forgetting one edge) lets a
 * negative fee through: the fee account pays the seller. Then the
 * invalid ones in a batch of their own, and one alone: still 0, each
 * answered MONEY_INVALID in results[] (a batch refused whole because no
 * sale was valid leaves the caller without its sales' answers). */
void batch__domain_edges(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 50);

	static const struct money_transfer list[] = {
		{ 1, 1, 2, 100, 10 },
		{ 2, 1, 2, 100, -1 },           /* the fee account would pay the sale */
		{ 3, 1, 2, 100, 101 },          /* the seller would get -1 */
		{ 4, 1, 2, 0, 0 },
		{ 5, 1, 2, -100, 0 },           /* the seller would pay the buyer */
		{ 0, 1, 2, 100, 5 },
		{ -6, 1, 2, 100, 5 },           /* money_open's ids are negative */
		{ 7, 1, 1, 100, 5 },            /* a sale to oneself */
		{ 8, 1, 2, 100, 100 },          /* a fee of exactly the amount: valid */
	};
	enum { N = sizeof list / sizeof list[0] };
	static const char *const what[N] = { "a valid sale", "a fee of -1", "a fee of 101 on 100",
		"an amount of 0", "an amount of -100", "transfer id 0", "transfer id -6",
		"a sale from account 1 to itself", "a fee of exactly the amount" };
	int results[N];
	struct money_fees f = { FEE_ACCOUNT, 1 };
	int rc = money_batch(db, &f, list, N, results);
	lt_expect(rc == 0, "savepoint", "money_batch of %d with seven invalid transfers in the "
	          "middle returned %d, expected 0 (%s)", N, rc, labtest_why(db));
	for (int i = 0; i < N; i++) {
		int want = i == 0 || i == N - 1 ? 0 : MONEY_INVALID;
		lt_expect(results[i] == want, "invalid", "money_batch's result for transfer %d (%s): "
		          "expected %d, got %d%s", i + 1, what[i], want, results[i],
		          want == MONEY_INVALID ? ": a batch checks each transfer as money_transfer "
		          "does (id > 0, amount > 0, fee in 0..amount, from != to)" : "");
		if (want == MONEY_INVALID)
			lt_expect(rows_of(t, list[i].id) == 0, "invalid", "rows left by the invalid transfer in the batch (%s): %lld",
			          what[i], (long long)rows_of(t, list[i].id));
	}
	lt_expect_int_hint(balance(t, 1), 800, "buyer's balance after the batch (two sales of 100)",
	                   "invalid");
	lt_expect_int_hint(balance(t, 2), 90, "seller's balance after the batch (90 and 0)",
	                   "invalid");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 160, "fee account after the batch (50 to open "
	                   "it, fees of 10 and 100)", "invalid");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "balance", "the books after a batch with invalid transfers: %s", bad);

	/* The same invalid transfers with no valid one beside them, and one
	 * alone: the batch still runs and commits (0), each answered
	 * MONEY_INVALID in its own results[i], as it was beside valid ones.
	 * money.h: a batch returns 0 when it committed, results saying what
	 * each did, and a negative code only when nothing of it was applied
	 * and results[] means nothing: a caller told MONEY_INVALID for the
	 * whole batch has lost what each sale got. */
	for (int alone = 0; alone < 2; alone++) {
		int m = alone ? 1 : N - 2, got[N];
		for (int i = 0; i < N; i++)
			got[i] = 42;
		rc = money_batch(db, &f, list + 1, m, got);
		char said[200] = "";
		for (int i = 0, used = 0; i < m && used < (int)sizeof said; i++)
			used += snprintf(said + used, sizeof said - used, "%s%d", i ? ", " : "", got[i]);
		lt_expect(rc == 0, "invalid", "money_batch of %s returned %d with results [%s] (42 is "
		          "what the check put there), expected 0 and MONEY_INVALID (%d) in each sale's "
		          "result: money.h: a batch returns 0 when it committed (results say what each "
		          "did) and a negative code only when nothing of it was applied and results[] "
		          "means nothing. Is a batch with no valid sale (\"nothing to do\") refused "
		          "whole before its transaction?", alone ? "one invalid transfer (a fee of -1)"
		          : "only the seven invalid transfers above", rc, said, MONEY_INVALID);
		for (int i = 0; i < m && rc == 0; i++)
			lt_expect(got[i] == MONEY_INVALID, "invalid", "money_batch of %s: the result of "
			          "transfer %d (%s) is %d, expected MONEY_INVALID (%d), as beside valid "
			          "sales", alone ? "one invalid transfer" : "only invalid transfers", i + 1,
			          what[i + 1], got[i], MONEY_INVALID);
	}
	lt_expect_int_hint(balance(t, 1), 800, "buyer's balance after the batches of invalid "
	                   "transfers only (unchanged)", "invalid");
	bad = books_fault(t);
	lt_expect(bad == NULL, "balance", "the books after batches of invalid transfers only: %s", bad);
}

/* ---- two payouts that no one sub-account covers ---- */

static const struct money_fees two_subs = { FEE_ACCOUNT, 2 };

/* Books again from nothing: buyer 1 with 500, seller 2, payee 3, and the
 * fee account's two sub-accounts holding fee2 and fee3 (the fees of
 * sales 2 and 3, each all fee, on sub-accounts 2 % 2 and 3 % 2). */
static void two_subs_holding(struct labtest *t, int64_t fee2, int64_t fee3)
{
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, "DELETE FROM entries; DELETE FROM transfers; DELETE FROM accounts");
	int rc = money_setup(db);
	for (int a = 1; a <= 3 && rc == 0; a++)
		rc = money_open(db, a, 1, a == 1 ? 500 : 0);
	if (rc == 0)
		rc = money_open(db, FEE_ACCOUNT, 2, 0);
	for (int id = 2; id <= 3 && rc == 0; id++) {
		int64_t fee = id == 2 ? fee2 : fee3;
		struct money_transfer sale = { id, 1, 2, fee, fee };
		rc = money_transfer(db, &two_subs, &sale);
	}
	lt_expect(rc == 0, NULL, "setting up the books failed (%d): %s", rc, labtest_why(db));
}

static int pay_60_of_two(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	return money_payout(db, &two_subs, 1001 + who, 3, 60);
}

/* Two payouts of 60 at once from a fee account of two sub-accounts of 50:
 * no sub-account holds 60, and the two together hold less than 120.
 * Whether a payout may gather its amount from several sub-accounts or
 * must find one that holds it, money.h's promise holds for every
 * interleaving (each held before its k-th statement, for every k): no
 * sub-account below zero, each answer 0 or MONEY_INSUFFICIENT (or
 * KIT_DB_BUSY: on MariaDB two payouts that try the sub-accounts in
 * opposite orders deadlock, since InnoDB locks the rows a conditional
 * UPDATE examines even when the condition fails), the fee account down
 * by 60 per payout made, the books whole. A payout that reads each
 * sub-account's balance and then takes what it read without a condition
 * lets both take the same 50, and both are paid. */
void payout__two_at_once_from_two_subs(void **state)
{
	struct labtest *t = *state;
	books(t);
	struct lt_gate *g = lt_gate_open(t, 2);
	int k;
	for (k = 1; k <= 40; k++) {
		two_subs_holding(t, 50, 50);
		lt_gate_run(g, NULL, (int[]){ k, k }, pay_60_of_two, NULL);
		if (!lt_gate_reached(g))
			break;
		int a = lt_gate_rc(g, 0), b = lt_gate_rc(g, 1);
		int paid = (a == 0) + (b == 0);
		int64_t below = sql_int(t, "SELECT count(*) FROM accounts WHERE id = %d AND balance < 0",
		                        FEE_ACCOUNT);
		int64_t fees = balance(t, FEE_ACCOUNT);
		const char *bad = books_fault(t);
		bool ok_a = a == 0 || a == MONEY_INSUFFICIENT || a == KIT_DB_BUSY;
		bool ok_b = b == 0 || b == MONEY_INSUFFICIENT || b == KIT_DB_BUSY;
		lt_expect(ok_a && ok_b, "reservation", "two payouts of 60 from two sub-accounts of "
		          "50, both held before their statement %d: expected 0, MONEY_INSUFFICIENT (%d) "
		          "or KIT_DB_BUSY (%d) from each, got %d and %d", k, MONEY_INSUFFICIENT,
		          KIT_DB_BUSY, a, b);
		lt_expect(below == 0 && paid <= 1 && fees == 100 - 60 * paid, "reservation", "two "
		          "payouts of 60 from two sub-accounts of 50, both held before their statement "
		          "%d, answered %d and %d: %lld sub-account(s) below zero and the fee account at "
		          "%lld (expected none below zero, at most one paid, and the fee account at 100 "
		          "less 60 per payout)%s", k, a, b, (long long)below, (long long)fees, below > 0 ? ": a sub-account's balance "
		          "was read and then taken without a condition, so both payouts took the "
		          "same money; take with UPDATE ... WHERE balance >= the amount taken" : "");
		lt_expect(bad == NULL, "reservation", "after two payouts at once (held before "
		          "statement %d): %s", k, bad);
	}
	lt_expect(k > 1, "reservation", "two payouts from a fee account of two sub-accounts ran no "
	          "statement: got %d and %d", lt_gate_rc(g, 0), lt_gate_rc(g, 1));
	lt_gate_close(g);
}

/* "A zero fee writes no fee entry" (money.h): a sale with fee 0, alone and
 * in a batch, has two entries (the buyer's and the seller's) and none on
 * the fee account, whose balance stays where it was. An entry of 0 adds
 * nothing to a sum, so the audit cannot see it: it is a row for every
 * fee-less sale in the ledger, and a write to the hot fee row that moves
 * nothing. */
void transfer__zero_fee_writes_no_fee_entry(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	lt_expect_int_hint(transfer(db, 5, 1, 2, 100, 0, 2), 0, "a sale of 100 with fee 0", "entries");
	struct money_fees f = { FEE_ACCOUNT, 2 };
	struct money_transfer list[2] = { { 6, 1, 2, 50, 0 }, { 7, 1, 2, 50, 5 } };
	int results[2];
	int rc = money_batch(db, &f, list, 2, results);
	lt_expect(rc == 0 && results[0] == 0 && results[1] == 0, "savepoint", "a batch of a sale "
	          "with fee 0 and one with fee 5: returned %d, results %d and %d (%s)", rc,
	          results[0], results[1], labtest_why(db));
	for (int id = 5; id <= 7; id++) {
		int64_t entries = sql_int(t, "SELECT count(*) FROM entries WHERE transfer_id = %d", id);
		int64_t fee_entries = sql_int(t, "SELECT count(*) FROM entries WHERE transfer_id = %d"
		                              " AND account_id = %d", id, FEE_ACCOUNT);
		int want = id == 7 ? 3 : 2;
		lt_expect(entries == want && fee_entries == (id == 7), "entries", "sale %d (fee %d%s): "
		          "%lld entries, %lld of them on the fee account; expected %d and %d (a zero fee "
		          "writes no fee entry)", id, id == 7 ? 5 : 0, id == 5 ? ", alone" : ", in a batch",
		          (long long)entries, (long long)fee_entries, want, id == 7);
	}
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 5, "fee account after fees of 0, 0 and 5",
	                   "balance");
}

/* One id twice in one batch (a client that queued its retry behind the
 * first try): the batch applies sales in order, each as money_transfer()
 * would, so the second sees the first's transfers row and answers
 * MONEY_ALREADY. A result of 0 for both tells the client two sales went
 * through where one did; a second payment is worse. */
void batch__same_id_twice_in_one_batch(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	struct money_fees f = { FEE_ACCOUNT, 2 };
	struct money_transfer list[] = { { 1, 1, 2, 40, 4 }, { 2, 1, 2, 30, 3 },
	                                 { 1, 1, 2, 40, 4 } };
	int results[3] = { 42, 42, 42 };
	int rc = money_batch(db, &f, list, 3, results);
	lt_expect(rc == 0, "idempotency", "money_batch of ids 1, 2, 1 returned %d (%s)", rc,
	          rc < 0 ? labtest_why(db) : "no database error");
	lt_expect(results[0] == 0 && results[1] == 0 && results[2] == MONEY_ALREADY, "idempotency",
	          "money_batch of ids 1, 2 and 1 again: results %d, %d, %d, expected 0, 0, "
	          "MONEY_ALREADY (%d): the second sale with id 1 meets the first's transfers row "
	          "in the batch's own transaction", results[0], results[1], results[2],
	          MONEY_ALREADY);
	lt_expect_int_hint(balance(t, 1), 430, "buyer's balance after sales of 40 and 30 (id 1 "
	                   "twice in the batch)", "idempotency");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "idempotency", "the books after a batch with one id twice: %s", bad);

	/* In order, each as money_transfer() would: account 3 holds nothing
	 * until the batch's first sale pays it 50, and its second spends 40
	 * of that. A batch that reorders its sales (by buyer, "to lock them
	 * in one order") refuses a sale the order it was given pays. */
	open_account(db, 3, 1, 0);
	open_account(db, 5, 1, 100);
	struct money_transfer chain[] = { { 10, 5, 3, 50, 0 }, { 11, 3, 2, 40, 4 } };
	int r2[2] = { 42, 42 };
	rc = money_batch(db, &f, chain, 2, r2);
	lt_expect(rc == 0 && r2[0] == 0 && r2[1] == 0, "savepoint",
	          "a batch whose first sale pays account 3 50 and whose second has account 3 pay "
	          "40: returned %d, results %d, %d (expected 0, 0, 0): the sales of a batch are "
	          "applied in the order given, each seeing the ones before it; are they reordered "
	          "(sorted by buyer)?", rc, r2[0], r2[1]);
	lt_expect_int_hint(balance(t, 3), 10, "account 3 after receiving 50 and paying 40 in one "
	                   "batch", "savepoint");
	bad = books_fault(t);
	lt_expect(bad == NULL, "savepoint", "the books after a batch of two sales in a chain: %s",
	          bad);

	/* An id whose first sale in the batch was refused is free again: its
	 * second sale, after account 7 was paid, is applied (0), not
	 * MONEY_ALREADY; and the refused first one stays refused, at its
	 * turn (not tried again at the end of the batch). The same for an id
	 * whose first sale was invalid. */
	open_account(db, 7, 1, 0);
	open_account(db, 8, 1, 100);
	struct money_transfer again[] = { { 30, 7, 2, 40, 4 }, { 31, 8, 7, 50, 0 },
	                                  { 30, 7, 2, 40, 4 }, { 32, 8, 2, 10, 11 },
	                                  { 32, 8, 2, 10, 1 } };
	int r3[5] = { 42, 42, 42, 42, 42 };
	rc = money_batch(db, &f, again, 5, r3);
	lt_expect(rc == 0 && r3[0] == MONEY_INSUFFICIENT && r3[1] == 0 && r3[2] == 0 &&
	          r3[3] == MONEY_INVALID && r3[4] == 0, "idempotency",
	          "a batch of id 30 (account 7, holding 0, pays 40), id 31 (account 7 is paid 50), "
	          "id 30 again, id 32 with a fee above its amount and id 32 again, valid: returned "
	          "%d, results %d, %d, %d, %d, %d (expected 0, then MONEY_INSUFFICIENT, 0, 0, "
	          "MONEY_INVALID, 0): a sale that was refused left no row, so its id is free for "
	          "the next sale that carries it%s", rc, r3[0], r3[1], r3[2], r3[3], r3[4],
	          r3[2] == MONEY_ALREADY || r3[4] == MONEY_ALREADY ? " (MONEY_ALREADY for an id "
	          "whose earlier sale in the batch was refused: is an id seen earlier in the batch "
	          "answered without asking the database?)" : r3[0] != MONEY_INSUFFICIENT ? " (the "
	          "first sale was not refused at its turn: are refused sales tried again later in "
	          "the batch, out of order?)" : "");
	lt_expect_int_hint(balance(t, 7), 10, "account 7 after being paid 50 and paying 40 once "
	                   "(id 30, refused at first)", "idempotency");
	bad = books_fault(t);
	lt_expect(bad == NULL, "idempotency", "the books after a batch that sends refused ids "
	          "again: %s", bad);
}

static int pay_60_of_180(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	return money_payout(db, &two_subs, 1002 + 2 * who, 3, 60);
}

/* Two payouts of 60 at once (ids 1002 and 1004) from sub-accounts of 100
 * and 80: each is covered by a sub-account whatever the other did first
 * (100 - 60 = 40 is short, but 80 is there), so both are paid, for every
 * interleaving (each held before its k-th statement, for every k). A
 * payout that picks its sub-account by a read (the richest, say) and gives
 * up when the conditional debit then finds it short refuses a payout the
 * fee account covers whenever another payout took that row first. */
void payout__two_at_once_both_covered(void **state)
{
	struct labtest *t = *state;
	books(t);
	struct lt_gate *g = lt_gate_open(t, 2);
	int k;
	for (k = 1; k <= 40; k++) {
		two_subs_holding(t, 100, 80);
		lt_gate_run(g, NULL, (int[]){ k, k }, pay_60_of_180, NULL);
		if (!lt_gate_reached(g))
			break;
		int a = lt_gate_rc(g, 0), b = lt_gate_rc(g, 1);
		int64_t below = sql_int(t, "SELECT count(*) FROM accounts WHERE id = %d AND balance < 0",
		                        FEE_ACCOUNT);
		int64_t fees = balance(t, FEE_ACCOUNT);
		const char *bad = books_fault(t);
		lt_expect(a == 0 && b == 0, "reservation", "two payouts of 60 from sub-accounts of 100 "
		          "and 80, both held before their statement %d: expected 0 from each, got %d and "
		          "%d%s", k, a, b, a == MONEY_INSUFFICIENT || b == MONEY_INSUFFICIENT
		          ? ": a payout was refused while a sub-account held 60 (was one sub-account "
		            "chosen by a read, and the payout given up when the other payout had taken "
		            "it first? Try the next sub-account when the conditional debit changes no row)"
		          : "");
		lt_expect(below == 0 && fees == 180 - 60 * ((a == 0) + (b == 0)), "reservation",
		          "two payouts of 60 from sub-accounts of 100 and 80, held before their statement "
		          "%d, answered %d and %d: %lld sub-account(s) below zero and the fee account at "
		          "%lld (expected none below zero and 180 less 60 per payout made)", k, a, b,
		          (long long)below, (long long)fees);
		lt_expect(bad == NULL, "reservation", "after two payouts at once (held before "
		          "statement %d): %s", k, bad);
	}
	lt_expect(k > 1, "reservation", "two payouts from a fee account of two sub-accounts ran no "
	          "statement: got %d and %d", lt_gate_rc(g, 0), lt_gate_rc(g, 1));
	lt_gate_close(g);
}

/* The fee sub-account a sale credits is a row like any other: with the
 * fee account opened with 2 sub-accounts and a sale sent with 4, sale 3's
 * fee goes to sub-account 3, which is not there. The sale cannot be
 * applied as money.h says (the fee to sub-account id % subs): an error,
 * nothing written. A credit whose row count is not asked commits the
 * sale, and its fee goes nowhere: the entries say the fee account got it,
 * the balances sum to less than zero. The same in a batch, where money.h
 * allows two answers: the batch fails whole with MONEY_NO_ACCOUNT (the
 * final credit of the fee sums finds the row missing), or that sale fails
 * alone and the other is applied (the batch asked for the row as it went). */
void transfer__fee_sub_account_missing(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);

	int rc = transfer(db, 3, 1, 2, 100, 5, 4);
	lt_expect(rc < 0, "no-account", "a sale whose fee goes to sub-account 3 of a fee account "
	          "opened with 2 (sent with 4): it returned %d; expected an error, since the row "
	          "the fee is credited to is not there (is the fee credit's row count asked?)", rc);
	lt_expect_int_hint(rows_of(t, 3), 0, "rows of the sale whose fee sub-account is missing",
	                   "rollback");
	lt_expect_int_hint(balance(t, 1), 500, "buyer after a sale whose fee sub-account is missing",
	                   "rollback");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "no-account", "after a sale whose fee sub-account is missing: %s", bad);

	struct money_fees f = { FEE_ACCOUNT, 4 };
	struct money_transfer list[2] = { { 6, 1, 2, 50, 5 }, { 5, 1, 2, 40, 4 } };
	int results[2] = { 42, 42 };
	rc = money_batch(db, &f, list, 2, results);
	int64_t rows6 = rows_of(t, 6), rows5 = rows_of(t, 5);
	lt_expect(rc < 0 ? rc == MONEY_NO_ACCOUNT && rows6 == 0 && rows5 == 0
	          : results[0] < 0 && rows6 == 0 && results[1] == 0 && rows5 == 4, "no-account",
	          "a batch of sale 6 (its fee to sub-account 2, which is not there) and sale 5 (to "
	          "sub-account 1): returned %d, results %d and %d, %lld and %lld rows; expected "
	          "the batch to fail with MONEY_NO_ACCOUNT (%d) and nothing applied, or sale 6 to "
	          "fail alone and sale 5 to be applied, as money.h allows (is the fee credit's row "
	          "count asked?)", rc, results[0], results[1], (long long)rows6, (long long)rows5,
	          MONEY_NO_ACCOUNT);
	bad = books_fault(t);
	lt_expect(bad == NULL, "no-account", "after a batch with a sale whose fee sub-account is "
	          "missing: %s", bad);
	lt_expect_int_hint(transfer(db, 3, 1, 2, 100, 5, 2), 0, "sale 3 sent again with the fee "
	                   "account's 2 sub-accounts", "fee-subs");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 5 + (rc < 0 ? 0 : 4), "fee account after sale 3 "
	                   "(and sale 5, if the batch applied it)", "fee-subs");
}

/* Every statement refused, for as long as the call sends them (the check
 * stops refusing at 200), with an error and then as busy (KIT_DB_BUSY, a
 * lock wait that timed out): a sale, a batch and a payout each give up and
 * return the error, writing nothing. A loop that retries BUSY until it
 * goes away never ends while the database is away or a row stays held. */
void money__refused_for_good_ends(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	static const char *const calls[] = { "money_transfer", "money_batch", "money_payout" };
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	lt_expect_int(transfer(db, 1, 1, 2, 100, 50, 2), 0, "a sale that gives the fee account 50");
	struct money_fees f = { FEE_ACCOUNT, 2 };
	struct money_transfer sale = { 7, 1, 2, 40, 4 }, list[1] = { { 8, 1, 2, 30, 3 } };
	for (int i = 0; i < LT_REFUSAL_KINDS; i++) {
		for (int c = 0; c < 3 * 3; c++) {
			struct lt_refusals r;
			int results[1] = { 42 };
			lt_refusals_arm(db, &r, i);
			int call = c / 3;                /* each call three times in a row */
			int rc = call == 0 ? money_transfer(db, &f, &sale)
			       : call == 1 ? money_batch(db, &f, list, 1, results)
			       : money_payout(db, &f, 9, 2, 20);
			lt_refusals_disarm(db);
			lt_expect(r.stmts < 200, "rollback", "with every statement refused%s, %s ran %d of "
			          "them (the check stopped refusing after 200) and returned %d: a retry "
			          "without a bound never ends while the database is away or a row stays "
			          "held; give up after a few tries and return the error", i ? " as busy "
			          "(KIT_DB_BUSY)" : "", calls[call], r.stmts, rc);
			lt_expect(rc < 0 && rc != MONEY_INSUFFICIENT && rc != MONEY_NO_ACCOUNT, "rollback",
			          "with every statement refused%s, %s returned %d, not the database's "
			          "error", i ? " as busy" : "", calls[call], rc);
			lt_expect(i == 0 || rc == KIT_DB_BUSY, "rollback", "with every statement refused "
			          "as busy (KIT_DB_BUSY, a lock wait that timed out), %s returned %d, not "
			          "KIT_DB_BUSY: money.h says a batch that meets a deadlock answers "
			          "KIT_DB_BUSY and may be retried; a caller cannot tell that from a failure "
			          "once every error is KIT_DB_ERR", calls[call], rc);
		}
	}
	lt_expect(rows_of(t, 7) + rows_of(t, 8) + rows_of(t, 9) == 0, "rollback", "rows of a sale, "
	          "a batch and a payout whose every statement was refused: %lld",
	          (long long)(rows_of(t, 7) + rows_of(t, 8) + rows_of(t, 9)));
	lt_expect_int_hint(money_transfer(db, &f, &sale), 0, "the sale once the database answers",
	                   "rollback");
	int results[1] = { 42 };
	lt_expect(money_batch(db, &f, list, 1, results) == 0 && results[0] == 0, "rollback",
	          "the batch once the database answers: %d (%s)", results[0], labtest_why(db));
	lt_expect_int_hint(money_payout(db, &f, 9, 2, 20), 0, "the payout once the database answers",
	                   "rollback");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "rollback", "after the calls refused for good, then applied: %s", bad);
}

/* A batch applies its sales in order, each as money_transfer() would;
 * only the fee sub-accounts' credits wait for the end. So a batch gives
 * the same answers and leaves the same balances as its sales sent one by
 * one, also when the fee account itself sells and then buys: its share
 * of the first sale is on its sub-account 0 when the second sale debits
 * it. The same sales run twice, on two sets of accounts: one by one with
 * fee account 98, then as one batch with fee account 99. */
void batch__same_as_its_sales_one_by_one(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	int64_t fee_ac[2] = { 98, FEE_ACCOUNT }, buyer[2] = { 1, 11 }, seller[2] = { 2, 12 };
	int res[2][3], rc = 0;
	for (int run = 0; run < 2; run++) {
		open_account(db, buyer[run], 1, 200);
		open_account(db, seller[run], 1, 0);
		open_account(db, fee_ac[run], 1, 0);
		struct money_fees fees = { fee_ac[run], 1 };
		struct money_transfer list[] = {
			{ 100 * run + 1, buyer[run], fee_ac[run], 100, 10 },   /* the fee account sells */
			{ 100 * run + 2, fee_ac[run], seller[run], 60, 6 },    /* and buys with it */
			{ 100 * run + 3, buyer[run], seller[run], 50, 5 },
		};
		if (run == 0) {
			for (int i = 0; i < 3; i++)
				res[0][i] = money_transfer(db, &fees, &list[i]);
		} else {
			res[1][0] = res[1][1] = res[1][2] = 42;
			rc = money_batch(db, &fees, list, 3, res[1]);
		}
	}
	lt_expect(rc == 0, "savepoint", "a batch of 3 sales, the fee account selling for 100 and "
	          "then buying for 60, returned %d, expected 0 (%s)", rc, labtest_why(db));
	lt_expect(res[0][0] == 0 && res[0][1] == 0 && res[0][2] == 0, "entries", "three sales "
	          "one by one, the fee account selling for 100 and then buying for 60: got %d, %d, "
	          "%d, expected 0, 0, 0", res[0][0], res[0][1], res[0][2]);
	lt_expect(rc != 0 || (res[1][0] == res[0][0] && res[1][1] == res[0][1] &&
	                      res[1][2] == res[0][2]), "savepoint", "the fee account sells for 100 "
	          "(its share, 90, to its sub-account 0), then buys for 60 out of sub-account 0: "
	          "one by one the sales got %d, %d, %d, as one batch %d, %d, %d. money.h: a batch "
	          "applies its sales in order, each as money_transfer() would; only the fee "
	          "credits wait for the end. Is the seller's share held back to the end too when "
	          "the seller is the fee account?", res[0][0], res[0][1], res[0][2], res[1][0],
	          res[1][1], res[1][2]);
	int64_t one[3] = { balance(t, 98), balance(t, 1), balance(t, 2) },
	        all[3] = { balance(t, FEE_ACCOUNT), balance(t, 11), balance(t, 12) };
	lt_expect(one[0] == all[0] && one[1] == all[1] && one[2] == all[2], "savepoint",
	          "balances of fee account, buyer and seller after the sales one by one: %lld, "
	          "%lld, %lld; after the same sales as one batch: %lld, %lld, %lld",
	          (long long)one[0], (long long)one[1], (long long)one[2], (long long)all[0],
	          (long long)all[1], (long long)all[2]);
	lt_expect_int_hint(all[0], 100 - 60 + 6 + 5, "fee account after selling for 100, buying "
	                   "for 60 and the fees of 6 and 5", "savepoint");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "entries", "after the fee account sold and bought: %s", bad);
}
