/*
 * edges.c: Lab 06's checks at the edges of each function's domain
 * (labs/06-money/money.h): a fee of exactly the amount and one above it,
 * below zero, ids and amounts past 2^31, an empty batch, a batch of
 * exactly MONEY_MAX_BATCH and one more, fee sums past 2^24 (where a float
 * stops counting by ones), and an audit of rows that have no entries at
 * all. Each edge is checked by what the books hold afterwards, read with
 * the test's own SQL, not only by the code returned.
 */
#include "tests/labs/06-money/edges.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labs/06-money/money.h"
#include "tests/labs/06-money/books.h"
#include "tests/harness/labtest.h"

/* The domain of money_transfer(): id > 0, amount > 0, fee in 0..amount,
 * from != to. Each edge inside is applied, each one outside is refused
 * with MONEY_INVALID and leaves no row. */
void transfer__domain_edges(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);

	static const struct {
		int64_t id, from, to, amount, fee;
		const char *what;
	} refused[] = {
		{ 11, 1, 2, 100, 101, "a fee of 101 on a sale of 100 (the seller would get -1)" },
		{ 12, 1, 2, 100, -1, "a fee of -1 (the fee account would pay the sale)" },
		{ 13, 1, 2, -100, 0, "an amount of -100 (the seller would pay the buyer)" },
		{ 0, 1, 2, 100, 5, "transfer id 0" },
		{ -14, 1, 2, 100, 5, "transfer id -14 (money_open's ids are negative)" },
		{ 15, 1, 1, 100, 5, "a sale from account 1 to itself" },
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		char what[200];
		snprintf(what, sizeof what, "money_transfer with %s (MONEY_INVALID)", refused[i].what);
		lt_expect_int_hint(transfer(db, refused[i].id, refused[i].from, refused[i].to,
		                            refused[i].amount, refused[i].fee, 1), MONEY_INVALID,
		                   what, "invalid");
		snprintf(what, sizeof what, "rows left by the refused transfer with %s", refused[i].what);
		lt_expect_int_hint(rows_of(t, refused[i].id), 0, what, "invalid");
	}
	lt_expect_int_hint(balance(t, 1), 1000, "buyer's balance after six invalid transfers",
	                   "invalid");

	lt_expect_int_hint(transfer(db, 21, 1, 2, 100, 100, 1), 0,
	                   "money_transfer with a fee of exactly the amount (100 of 100)", "invalid");
	lt_expect_int_hint(transfer(db, 22, 1, 2, 100, 0, 1), 0,
	                   "money_transfer with a fee of 0", "invalid");
	lt_expect_int_hint(balance(t, 2), 100, "seller's balance after a sale of 100 with fee 100 "
	                   "and one of 100 with fee 0", "balance");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 100, "fee account after fees of 100 and 0",
	                   "balance");
	lt_expect_int_hint(sql_int(t, "SELECT count(*) FROM entries WHERE transfer_id = 22"
	                           " AND amount <> 0"), 2,
	                   "entries of a sale with fee 0 (buyer and seller only)", "entries");
	lt_expect_int_hint(sql_int(t, "SELECT count(*) FROM entries WHERE transfer_id = 21"), 3,
	                   "entries of a sale of 100 with a fee of 100: three, the seller's of 0 "
	                   "too (money.h: only a zero fee writes no entry; the seller's entry says "
	                   "the sale was theirs)", "entries");

	/* The whole amount as fee leaves the seller 0, and the seller must
	 * still exist: a seller's credit of 0 skipped as "nothing to add"
	 * asks no row whether it is there. */
	int rc = transfer(db, 23, 1, 77, 100, 100, 1);
	lt_expect(rc == MONEY_NO_ACCOUNT && rows_of(t, 23) == 0, "no-account",
	          "a sale of 100 with a fee of 100 to seller 77, who does not exist, returned %d and "
	          "left %lld row(s) (expected MONEY_NO_ACCOUNT, %d, and none): is the seller's credit "
	          "skipped when it is 0? The credit is also what says the seller is there",
	          rc, (long long)rows_of(t, 23), MONEY_NO_ACCOUNT);

	/* money.h's list of what is invalid is the whole list: the platform
	 * selling to itself, money leaving the books to MONEY_OUTSIDE, and
	 * MONEY_OUTSIDE buying (refused as short: it is below zero) are not
	 * on it. */
	rc = transfer(db, 24, 1, FEE_ACCOUNT, 50, 5, 1);
	lt_expect(rc == 0 && balance(t, FEE_ACCOUNT) == 150, "invalid",
	          "a sale of 50 with a fee of 5 whose seller is the fee account itself returned %d, "
	          "the fee account then at %lld (expected 0 and 150): MONEY_INVALID is for an id or "
	          "an amount <= 0, a fee outside 0..amount, or from == to, nothing else",
	          rc, (long long)balance(t, FEE_ACCOUNT));
	rc = transfer(db, 25, 1, MONEY_OUTSIDE, 10, 1, 1);
	lt_expect(rc == 0 && rows_of(t, 25) > 0, "invalid",
	          "a sale of 10 to MONEY_OUTSIDE (money leaving the books) returned %d (expected 0): "
	          "money.h does not call it invalid", rc);
	/* Nor is an account's sign: a buyer or a seller below zero that was
	 * never opened is MONEY_NO_ACCOUNT like any other (money.h: "the
	 * buyer or the seller does not exist"), an id the type's minimum too;
	 * one whose row is there (put by another tool: the audit counts a row
	 * below zero under any id) is sold to like any other. */
	static const struct {
		int64_t id, from, to;
		int want;
		const char *what;
	} below[] = {
		{ 31, -1, 2, MONEY_NO_ACCOUNT, "bought by account -1, never opened" },
		{ 32, 1, -1, MONEY_NO_ACCOUNT, "sold by account -1, never opened" },
		{ 33, INT64_MIN, 2, MONEY_NO_ACCOUNT, "bought by account INT64_MIN, never opened" },
		{ 34, 1, INT64_MIN, MONEY_NO_ACCOUNT, "sold by account INT64_MIN, never opened" },
		{ 35, 1, -3, 0, "sold by account -3, whose row another tool made" },
	};
	labtest_exec(t, "INSERT INTO accounts (id, sub, balance) VALUES (-3, 0, 0)");
	for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
		rc = transfer(db, below[i].id, below[i].from, below[i].to, 10, 1, 1);
		int64_t rows = rows_of(t, below[i].id);
		lt_expect(rc == below[i].want && (rows == 0) == (below[i].want != 0), "no-account",
		          "a sale of 10 %s returned %d and left %lld row(s): expected %d (%s)%s", below[i].what,
		          rc, (long long)rows, below[i].want, below[i].want ? "MONEY_NO_ACCOUNT, and no "
		          "row" : "applied", rc == MONEY_INVALID ? ": money.h's MONEY_INVALID is for an id "
		          "or an amount <= 0, a fee outside 0..amount, or from == to; an account's sign is "
		          "not on it (is an id below 0 refused as invalid, as money_open refuses it?)" : "");
	}
	lt_expect_int_hint(balance(t, -3), 9, "account -3 after a sale of 10 with a fee of 1 to it",
	                   "no-account");
	rc = transfer(db, 26, MONEY_OUTSIDE, 2, 10, 0, 1);
	lt_expect(rc == MONEY_INSUFFICIENT && rows_of(t, 26) == 0, "conditional-debit",
	          "a sale of 10 bought by MONEY_OUTSIDE, whose balance is below zero, returned %d and "
	          "left %lld row(s) (expected MONEY_INSUFFICIENT, %d, and none): its balance does not "
	          "cover the amount, like any buyer's; money.h does not call it invalid", rc,
	          (long long)rows_of(t, 26), MONEY_INSUFFICIENT);
	/* The largest amount: balance >= amount, compared as it is; balance -
	 * amount >= 0 overflows a BIGINT for a balance below zero, and the
	 * server answers an error where MONEY_INSUFFICIENT is due. */
	rc = transfer(db, 27, MONEY_OUTSIDE, 2, INT64_MAX, 0, 1);
	lt_expect(rc == MONEY_INSUFFICIENT && rows_of(t, 27) == 0, "conditional-debit",
	          "a sale of INT64_MAX bought by MONEY_OUTSIDE (below zero) returned %d and left "
	          "%lld row(s) (expected MONEY_INSUFFICIENT, %d, and none)%s", rc,
	          (long long)rows_of(t, 27), MONEY_INSUFFICIENT, rc < 0 && rc != MONEY_INSUFFICIENT ?
	          ": a database error; does the debit's condition compute balance - amount, which "
	          "overflows a BIGINT for a balance below zero? Compare balance >= amount. Or is the "
	          "seller credited before the buyer's debit refuses the sale (INT64_MAX added to the "
	          "seller's balance overflows first)? Debit the buyer first (README §3)" : "");

	/* The same with the ids the other way round: a seller whose id is
	 * below the buyer's and who holds money. Rows locked in id order (no
	 * deadlock between two opposite sales) are no reason to write them in
	 * that order: a credit of INT64_MAX sent first overflows the seller's
	 * balance before the debit refuses. (SQLite's arithmetic turns to a
	 * REAL where a BIGINT would overflow: there the debit refuses as due.) */
	open_account(db, 3, 1, 5);
	rc = transfer(db, 28, 3, 2, INT64_MAX, 0, 1);
	lt_expect(rc == MONEY_INSUFFICIENT && rows_of(t, 28) == 0, "conditional-debit",
	          "a sale of INT64_MAX by buyer 3, who holds 5, to seller 2, who holds money, returned "
	          "%d and left %lld row(s) (expected MONEY_INSUFFICIENT, %d, and none)%s", rc,
	          (long long)rows_of(t, 28), MONEY_INSUFFICIENT, rc < 0 && rc != MONEY_INSUFFICIENT ?
	          ": a database error: is the seller credited first when its id is the lower one "
	          "(rows written in the order they are locked)? Lock in any order you like, but debit the buyer before "
	          "you credit the seller (README §3)" : "");
}

/* Ids, amounts and fees past 2^31: a 32-bit int anywhere on the way
 * (a parameter printed with %d, the sub-account computed from (int)id)
 * changes the money or the row it lands on. */
void transfer__values_past_2_31(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	const int64_t big_id = 2147483649LL;          /* 2^31 + 1: sub-account 1 of 4 */
	const int64_t amount = 3000000000LL, fee = 2500000001LL;
	open_account(db, 1, 1, 10000000000LL);
	open_account(db, 2, 1, 0);
	open_account(db, 3, 1, 0);
	open_account(db, FEE_ACCOUNT, 4, 0);

	int rc = transfer(db, big_id, 1, 2, amount, fee, 4);
	lt_expect(rc == 0, "balance", "money_transfer with id 2^31 + 1, amount 3,000,000,000 and "
	          "fee 2,500,000,001 returned %d, expected 0 (%s)", rc, labtest_why(db));
	lt_expect_int_hint(balance(t, 1), 10000000000LL - amount, "buyer's balance after paying "
	                   "3,000,000,000 of 10,000,000,000", "balance");
	lt_expect_int_hint(balance(t, 2), amount - fee, "seller's balance after a sale of "
	                   "3,000,000,000 with a fee of 2,500,000,001", "balance");
	lt_expect_int_hint(sql_int(t, "SELECT COALESCE(SUM(balance), 0) FROM accounts WHERE id = %lld"
	                           " AND sub = 1", (long long)FEE_ACCOUNT), fee,
	                   "fee sub-account 1 (id 2^31 + 1 is 1 mod 4; an id cut to 32 bits is -3 "
	                   "mod 4)", "fee-subs");
	lt_expect_int_hint(rows_of(t, big_id), 4, "transfer and entry rows of id 2^31 + 1",
	                   "entries");
	lt_expect_int_hint(transfer(db, big_id, 1, 2, amount, fee, 4), MONEY_ALREADY,
	                   "the sale with id 2^31 + 1 sent again", "idempotency");

	struct money_fees f = { FEE_ACCOUNT, 4 };
	rc = money_payout(db, &f, big_id + 2, 3, 2200000000LL);
	lt_expect(rc == 0, "reservation", "money_payout of 2,200,000,000 out of a sub-account "
	          "holding 2,500,000,001, id 2^31 + 3, returned %d, expected 0 (%s)", rc,
	          labtest_why(db));
	lt_expect_int_hint(balance(t, 3), 2200000000LL, "balance paid out: 2,200,000,000",
	                   "reservation");
	int64_t got = -1;
	rc = money_balance(db, FEE_ACCOUNT, &got);
	lt_expect(rc == 0, "balance", "money_balance(99) failed (%d): %s", rc, labtest_why(db));
	lt_expect_int_hint(got, fee - 2200000000LL, "money_balance of the fee account after the "
	                   "payout", "balance");

	/* A seller's share past 2^31 although amount and fee are apart:
	 * amount - fee worked out in an int wraps (3,000,000,000 - 2,500,000,001
	 * above fits again after the wrap; 3,000,000,000 - 7 does not). */
	rc = transfer(db, big_id + 8, 1, 3, amount, 7, 4);
	lt_expect(rc == 0, "balance", "money_transfer of 3,000,000,000 with a fee of 7 returned %d "
	          "(%s)", rc, labtest_why(db));
	lt_expect_int_hint(balance(t, 3), 2200000000LL + amount - 7, "seller 3's balance after a "
	                   "payout of 2,200,000,000 and a sale of 3,000,000,000 with a fee of 7 (the "
	                   "seller's share, 2,999,999,993, kept in an int wraps)", "balance");

	/* The batch's own path: ids 2^31 + 5 and 2^31 + 6 land on fee
	 * sub-accounts 1 and 2 of 4; cut to an int they are -3 and -2 mod 4,
	 * outside the array of the batch's sums. */
	struct money_transfer list[] = { { big_id + 4, 1, 2, 10, 3 },
	                                 { big_id + 5, 1, 2, 10, 4 } };
	int results[2] = { 42, 42 };
	int64_t sub1 = sql_int(t, "SELECT balance FROM accounts WHERE id = %lld AND sub = 1",
	                       (long long)FEE_ACCOUNT);
	int64_t sub2 = sql_int(t, "SELECT balance FROM accounts WHERE id = %lld AND sub = 2",
	                       (long long)FEE_ACCOUNT);
	rc = money_batch(db, &f, list, 2, results);
	lt_expect(rc == 0 && results[0] == 0 && results[1] == 0, "fee-subs", "money_batch of ids "
	          "2^31 + 5 and 2^31 + 6 returned %d, results %d and %d, expected 0, 0, 0 (%s)", rc,
	          results[0], results[1], labtest_why(db));
	lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = %lld AND sub = 1",
	                           (long long)FEE_ACCOUNT) - sub1, 3,
	                   "fee sub-account 1 after a batch sale with id 2^31 + 5 and a fee of 3 (an "
	                   "id cut to an int is -3 mod 4)", "fee-subs");
	lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = %lld AND sub = 2",
	                           (long long)FEE_ACCOUNT) - sub2, 4,
	                   "fee sub-account 2 after a batch sale with id 2^31 + 6 and a fee of 4",
	                   "fee-subs");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "balance", "the books after sales and a batch past 2^31: %s", bad);
}

/* Amounts past 2^53, where a double stops counting by ones: an amount
 * that passes through a double on its way to SQL (strtod, "%.0f", a
 * double in a struct) loses the last cent. 2^53 + 3 opens the buyer;
 * a sale of 2^53 + 1 with a fee of 1 leaves the buyer 2 and the seller
 * 2^53. BIGINT holds them exactly on every engine. */
void transfer__values_past_2_53(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	const int64_t p53 = 9007199254740992LL;       /* 2^53 */
	open_account(db, 1, 1, p53 + 3);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	lt_expect_int_hint(balance(t, 1), p53 + 3, "buyer's balance opened with 2^53 + 3 "
	                   "(9,007,199,254,740,995): a double cannot hold it and makes it "
	                   "9,007,199,254,740,996", "balance");
	int64_t opened = -1;
	int orc = money_balance(db, 1, &opened);
	lt_expect(orc == 0 && opened == p53 + 3, "balance", "money_balance of the buyer opened with "
	          "2^53 + 3 returned %d with %lld: is the sum read through a double (strtod, atof), "
	          "which makes it 2^53 + 4?", orc, (long long)opened);
	int rc = transfer(db, 5, 1, 2, p53 + 1, 1, 2);
	lt_expect(rc == 0, "balance", "money_transfer of 2^53 + 1 with a fee of 1 returned %d, "
	          "expected 0 (%s)", rc, labtest_why(db));
	lt_expect_int_hint(balance(t, 1), 2, "buyer's balance: 2^53 + 3 minus a sale of 2^53 + 1 "
	                   "(an amount that went through a double is 2^53: 3 left)", "balance");
	lt_expect_int_hint(balance(t, 2), p53, "seller's balance after a sale of 2^53 + 1 with a "
	                   "fee of 1", "balance");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 1, "fee account after a fee of 1", "balance");
	lt_expect_int_hint(sql_int(t, "SELECT amount FROM transfers WHERE id = 5"), p53 + 1,
	                   "the transfers row's amount of a sale of 2^53 + 1", "entries");
	/* and money_balance reads them as they are: no sum kept in an int */
	int64_t got[2] = { -1, -1 };
	int brc[2] = { money_balance(db, 2, &got[0]), money_balance(db, 1, &got[1]) };
	lt_expect(brc[0] == 0 && got[0] == p53 && brc[1] == 0 && got[1] == 2, "balance",
	          "money_balance of the seller holding 2^53 and of the buyer holding 2 returned %d "
	          "with %lld and %d with %lld: is the balance added up or kept in something "
	          "narrower than int64_t (an int, a double) on its way out?", brc[0],
	          (long long)got[0], brc[1], (long long)got[1]);
	/* and the audit adds them up exactly: the books balance */
	struct money_audit au = { -1, -1, -1, -1 };
	int arc = money_reconcile(db, &au);
	lt_expect(arc == 0 && au.unbalanced == 0 && au.drifted == 0 && au.negative == 0 &&
	          au.total == 0, "reconcile", "money_reconcile of books holding 2^53 + 3 (the outside "
	          "at -(2^53 + 3)) returned %d with unbalanced %lld, drifted %lld, negative %lld, total "
	          "%lld (expected all 0): is a sum of money added up in C, or through a double?", arc,
	          (long long)au.unbalanced, (long long)au.drifted, (long long)au.negative,
	          (long long)au.total);
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "balance", "the books after a sale past 2^53: %s", bad);

	/* Any amount > 0 the buyer holds is a sale: 2^62 + 5 too (a cap
	 * "so that nothing can overflow" refuses money.h's own domain). */
	const int64_t p62 = (int64_t)1 << 62;
	open_account(db, 3, 1, p62 + 5);
	rc = transfer(db, 6, 3, 2, p62 + 5, p62 + 1, 2);
	lt_expect(rc == 0 && balance(t, 3) == 0, "invalid", "a sale of 2^62 + 5 (a fee of 2^62 + 1) "
	          "by a buyer holding exactly that returned %d, the buyer then at %lld (expected 0 "
	          "and 0): an amount is valid when it is > 0, however large", rc,
	          (long long)balance(t, 3));
	struct money_fees two = { FEE_ACCOUNT, 2 };
	rc = money_payout(db, &two, 7, 2, p62 + 1);
	lt_expect(rc == 0, "invalid", "a payout of 2^62 + 1 out of a fee sub-account holding it "
	          "returned %d, expected 0: a payout's amount is valid when it is > 0 (%s)", rc,
	          labtest_why(db));
	bad = books_fault(t);
	lt_expect(bad == NULL, "balance", "the books after a sale of 2^62 + 5: %s", bad);
}

/* A credit past INT64_MAX fails and writes nothing (money.h: no balance
 * holds more). The books reach that edge only at their very end: a buyer
 * opened with 1 and a seller with INT64_MAX take the outside to
 * INT64_MIN. One more cent to the seller is then the database's error on
 * every engine: PostgreSQL and MariaDB refuse the sum, and on SQLite,
 * which would store it as a REAL, rounded, the CHECK money_setup() gives
 * the balance column refuses it. A sale, a sale in a batch (which fails
 * alone) and a payout are each tried. */
static int64_t not_integers(struct labtest *t)
{
	return t->engine == KIT_DB_SQLITE
		? sql_int(t, "SELECT count(*) FROM accounts WHERE typeof(balance) <> 'integer'") : 0;
}

void transfer__credit_past_int64_max_is_an_error(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1);
	open_account(db, 2, 1, INT64_MAX);
	open_account(db, 3, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	struct money_fees two = { FEE_ACCOUNT, 2 };

	int rc = transfer(db, 5, 1, 2, 1, 0, 2);
	int64_t reals = not_integers(t);
	lt_expect(reals == 0, "balance", "after a sale of 1 to a seller holding INT64_MAX, %lld "
	          "balance(s) were no longer integers: SQLite stores a sum past INT64_MAX as a REAL "
	          "(rounded: money drifts) unless the table refuses it, and money_setup()'s CHECK "
	          "(typeof(balance) = 'integer') is there to refuse it", (long long)reals);
	if (reals != 0)
		return;
	lt_expect(rc < 0 && rc != MONEY_ALREADY && rc != MONEY_INSUFFICIENT && rc != MONEY_INVALID &&
	          rc != MONEY_NO_ACCOUNT, "balance", "a sale of 1 to a seller holding INT64_MAX "
	          "returned %d: expected the database's error (the seller's balance would pass "
	          "INT64_MAX, which no balance holds)", rc);
	lt_expect(rows_of(t, 5) == 0 && balance(t, 1) == 1 && balance(t, 2) == INT64_MAX, "balance",
	          "after a sale of 1 to a seller holding INT64_MAX failed: %lld row(s) of it, the "
	          "buyer at %lld, the seller at %lld (expected none, 1 and INT64_MAX: a refused sale "
	          "writes nothing)", (long long)rows_of(t, 5), (long long)balance(t, 1),
	          (long long)balance(t, 2));

	/* In a batch it fails alone, and the sale beside it is applied. */
	struct money_transfer list[] = { { 6, 1, 2, 1, 0 }, { 7, 1, 3, 1, 1 } };
	int results[2] = { 42, 42 };
	rc = money_batch(db, &two, list, 2, results);
	lt_expect(rc == 0 && results[0] < 0 && results[0] != MONEY_ALREADY &&
	          results[0] != MONEY_INSUFFICIENT && results[1] == 0, "savepoint", "a batch of a "
	          "sale of 1 to the seller holding INT64_MAX, then a sale of 1 to another seller, "
	          "returned %d with results %d, %d (%s): expected 0, the database's error for the "
	          "first (it fails alone) and 0", rc, results[0], results[1],
	          rc ? labtest_why(db) : "committed");
	lt_expect(not_integers(t) == 0 && rows_of(t, 6) == 0 && balance(t, 2) == INT64_MAX &&
	          balance(t, 1) == 0 && balance(t, FEE_ACCOUNT) == 1, "savepoint", "after that "
	          "batch: %lld row(s) of the failed sale, the seller at %lld, the buyer at %lld, the "
	          "fee account at %lld (expected none, INT64_MAX, 0 and 1)", (long long)rows_of(t, 6),
	          (long long)balance(t, 2), (long long)balance(t, 1),
	          (long long)balance(t, FEE_ACCOUNT));

	/* A payout of the fee account's 1 to the same seller. */
	rc = money_payout(db, &two, 8, 2, 1);
	lt_expect(rc < 0 && rc != MONEY_ALREADY && rc != MONEY_INSUFFICIENT && rc != MONEY_INVALID &&
	          rc != MONEY_NO_ACCOUNT && not_integers(t) == 0 && rows_of(t, 8) == 0 &&
	          balance(t, 2) == INT64_MAX && balance(t, FEE_ACCOUNT) == 1, "reservation",
	          "a payout of 1 to a payee holding INT64_MAX returned %d, and left %lld row(s) of "
	          "it, the payee at %lld, the fee account at %lld: expected the database's error, "
	          "no row, INT64_MAX and 1 (the reservation is undone with the rest)", rc,
	          (long long)rows_of(t, 8), (long long)balance(t, 2),
	          (long long)balance(t, FEE_ACCOUNT));
}

/* money_batch() takes 1..MONEY_MAX_BATCH transfers: 0 and
 * MONEY_MAX_BATCH + 1 are MONEY_INVALID and apply nothing. */
void batch__size_edges(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000000);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);

	struct money_fees f = { FEE_ACCOUNT, 1 };
	int n = MONEY_MAX_BATCH + 1;
	struct money_transfer *list = calloc((size_t)n, sizeof *list);
	int *results = calloc((size_t)n, sizeof *results);
	assert_non_null(list);
	assert_non_null(results);
	for (int i = 0; i < n; i++)
		list[i] = (struct money_transfer){ 1 + i, 1, 2, 1, 0 };

	int empty = money_batch(db, &f, list, 0, results);
	int over = money_batch(db, &f, list, n, results);
	int below[2] = { money_batch(db, &f, list, -1, results),
	                 money_batch(db, &f, list, INT_MIN, results) };
	int64_t after_over = labtest_int(t, "SELECT count(*) FROM transfers WHERE id > 0");
	int one = money_batch(db, &f, list, 1, results);
	int one_result = results[0];
	free(list);
	free(results);

	lt_expect_int_hint(empty, MONEY_INVALID, "money_batch of 0 transfers", "invalid");
	lt_expect_int_hint(over, MONEY_INVALID, "money_batch of MONEY_MAX_BATCH + 1 (10,001) "
	                   "transfers", "invalid");
	lt_expect(below[0] == MONEY_INVALID && below[1] == MONEY_INVALID, "invalid", "money_batch of "
	          "-1 and of INT_MIN transfers returned %d and %d: expected MONEY_INVALID (%d) for both "
	          "(money.h: 1..MONEY_MAX_BATCH; a count that went below zero in the caller's code is "
	          "no batch, and a 0 tells the caller it went through)", below[0], below[1],
	          MONEY_INVALID);
	lt_expect_int_hint(after_over, 0, "transfers applied by the refused batches of 10,001, -1 "
	                   "and INT_MIN", "invalid");
	lt_expect_int_hint(one, 0, "money_batch of 1 transfer", "savepoint");
	lt_expect_int_hint(one_result, 0, "results[0] of a batch of 1", "savepoint");
	lt_expect_int_hint(balance(t, 2), 1, "seller's balance after a batch of one sale of 1",
	                   "savepoint");
}

/* Counts the transactions begun and committed (int[2]). */
static void count_begins_commits(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	int *tx = arg;
	(void)sql, (void)t_ns;
	tx[0] += ev == KIT_DB_TX_BEGIN;
	tx[1] += ev == KIT_DB_TX_COMMIT;
}

/* A batch of exactly MONEY_MAX_BATCH is applied, all of it. SQLite only:
 * 10,000 transfers are 50,000 statements, a quarter of a second in a
 * file and several seconds through a socket; the limit is the same code
 * on both engines. However long, it is one transaction: one BEGIN, one
 * COMMIT. */
void batch__exactly_max(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, MONEY_MAX_BATCH * 3);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);

	struct money_fees f = { FEE_ACCOUNT, 2 };
	struct money_transfer *list = calloc(MONEY_MAX_BATCH, sizeof *list);
	int *results = calloc(MONEY_MAX_BATCH, sizeof *results);
	assert_non_null(list);
	assert_non_null(results);
	for (int i = 0; i < MONEY_MAX_BATCH; i++)
		list[i] = (struct money_transfer){ 1 + i, 1, 2, 3, 1 };
	int tx[2] = { 0, 0 };            /* BEGINs, COMMITs */
	kit_db_set_hook(db, count_begins_commits, tx);
	int rc = money_batch(db, &f, list, MONEY_MAX_BATCH, results);
	kit_db_set_hook(db, NULL, NULL);
	int not_zero = 0;
	for (int i = 0; i < MONEY_MAX_BATCH; i++)
		not_zero += results[i] != 0;
	free(list);
	free(results);

	lt_expect(rc == 0, "savepoint", "money_batch of exactly MONEY_MAX_BATCH (10,000) transfers "
	          "returned %d, expected 0 (%s)", rc, labtest_why(db));
	lt_expect(tx[0] == 1 && tx[1] == 1, "one-transaction", "a batch of exactly MONEY_MAX_BATCH "
	          "(10,000) ran %d BEGIN(s) and %d COMMIT(s), not one of each: however long, a batch "
	          "is one transaction (money.h: an error means nothing of it was applied); one that "
	          "commits every so many sales leaves its first part applied when a later part fails",
	          tx[0], tx[1]);
	lt_expect_int_hint(not_zero, 0, "results of the batch of 10,000 that are not 0", "savepoint");
	lt_expect_int_hint(balance(t, 2), 2 * MONEY_MAX_BATCH, "seller's balance after 10,000 sales "
	                   "of 3, fee 1", "savepoint");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), MONEY_MAX_BATCH, "fee account after 10,000 fees "
	                   "of 1", "savepoint");
}

/* A batch's fees added up past 2^24: a float holds 17,000,016 or
 * 17,000,018 there, never 17,000,017. */
void batch__fee_sums_past_2_24(void **state)
{
	struct labtest *t = *state;
	enum { N = 17 };
	const int64_t amount = 2000000, fee = 1000001;
	same_fees_batch(t, N, amount, fee);
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), N * fee, "fee account after a batch of 17 fees "
	                   "of 1,000,001 (the sum, 17,000,017, is past 2^24: kept in a float it "
	                   "rounds to an even number)", "balance");
	lt_expect_int_hint(balance(t, 2), N * (amount - fee), "seller's balance after the batch",
	                   "balance");
}

/* The audit counts rows that have no entries at all: a transfer row with
 * none (an inner join to entries drops it, and with it the fault) and a
 * balance row with none whose balance is not 0. */
void reconcile__rows_with_no_entries(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	lt_expect_int(transfer(db, 1, 1, 2, 50, 4, 2), 0, "money_transfer");

	labtest_exec(t, "INSERT INTO transfers (id, debit, credit, amount, fee) VALUES (9, 1, 2, 30, 0);"
	                "UPDATE accounts SET balance = 6 WHERE id = 99 AND sub = 0");
	struct money_audit a = { -1, -1, -1, -1 };
	int rc = money_reconcile(db, &a);
	lt_expect(rc == 0, "reconcile", "money_reconcile failed (%d): %s", rc, labtest_why(db));
	lt_expect(a.unbalanced == 1 && a.drifted == 1 && a.negative == 0 && a.total == 6,
	          "reconcile", "expected unbalanced 1, drifted 1, negative 0, total 6, got %lld, "
	          "%lld, %lld, %lld: money_reconcile after a transfer row with no entries was added "
	          "and fee sub-account 0, which has no entry, was set to 6 (a count that joins "
	          "entries with an inner join never sees rows that have none)",
	          (long long)a.unbalanced, (long long)a.drifted, (long long)a.negative,
	          (long long)a.total);
}

/* The audit's figures are counts, however many rows are wrong: 10,001
 * faults of each kind, planted with the check's own SQL (an audit that
 * stops counting at 100 or 1,000 or 10,000, "enough to know the books are
 * wrong", reports a smaller number). Rows 100000.. hold -1 through an
 * entry of a transfer that does not exist (negative, and an entry of no
 * transfer, but not drifted); rows 200000.. hold 1 with no entry
 * (drifted); transfers 300000.. have no entries (unbalanced). */
void reconcile__counts_past_ten_thousand(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	enum { N = 10001 };
	/* 0 .. 9999, then 10000 alone. */
	static const char *const digits = "(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2"
		" UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6"
		" UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)";
	static const char *const rows[] = {
		"INSERT INTO accounts (id, sub, balance) SELECT %d + n, 0, %s FROM (%s) AS ns",
		"INSERT INTO entries (transfer_id, account_id, sub, amount)"
		" SELECT -(%d + n), %d + n, 0, -1 FROM (%s) AS ns",
		"INSERT INTO transfers (id, debit, credit, amount, fee)"
		" SELECT %d + n, 1, 2, 10, 0 FROM (%s) AS ns",
	};
	char numbers[1024], sql[2048];
	snprintf(numbers, sizeof numbers, "SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d AS n"
	         " FROM %s AS a, %s AS b, %s AS c, %s AS e UNION ALL SELECT 10000",
	         digits, digits, digits, digits);
	snprintf(sql, sizeof sql, rows[0], 100000, "-1", numbers);
	labtest_exec(t, sql);
	snprintf(sql, sizeof sql, rows[1], 100000, 100000, numbers);
	labtest_exec(t, sql);
	snprintf(sql, sizeof sql, rows[0], 200000, "1", numbers);
	labtest_exec(t, sql);
	snprintf(sql, sizeof sql, rows[2], 300000, numbers);
	labtest_exec(t, sql);
	lt_expect_int(sql_int(t, "SELECT count(*) FROM accounts WHERE id >= 100000"), 2 * N,
	              "balance rows planted");

	struct money_audit a = { -1, -1, -1, -1 };
	int rc = money_reconcile(db, &a);
	lt_expect(rc == 0, "reconcile", "money_reconcile failed (%d): %s", rc, labtest_why(db));
	lt_expect(a.unbalanced == 2 * N && a.drifted == N && a.negative == N && a.total == 0,
	          "reconcile", "expected unbalanced %d, drifted %d, negative %d, total 0, got "
	          "%lld, %lld, %lld, %lld: money_reconcile of books with %d faults of each kind "
	          "(%d transfers with no entries and %d entries of no transfer, %d balance rows "
	          "with no entries holding 1, %d rows at -1): each figure counts every row, "
	          "however many (is a count cut off with a LIMIT?)", 2 * N, N, N,
	          (long long)a.unbalanced, (long long)a.drifted, (long long)a.negative,
	          (long long)a.total, N, N, N, N, N);
}

/* Transfer ids are the client's, anything above 0: snowflake-style ids
 * run to 19 digits, up to INT64_MAX. A batch of such ids with sales the
 * books refuse (a buyer short, a buyer never opened) between good ones:
 * each refused sale is undone alone and the good ones commit. Code that
 * names its savepoints after the id, or writes them into a buffer sized
 * for shorter statements, cuts "ROLLBACK TO SAVEPOINT ..." short and
 * names a savepoint that does not exist. */
void batch__ids_near_int64_max_with_refused_sales(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 100);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	struct money_fees two = { FEE_ACCOUNT, 2 };
	struct money_transfer list[] = {
		{ INT64_MAX - 4, 1, 2, 30, 3 },
		{ INT64_MAX - 3, 1, 2, 500, 5 },        /* the buyer holds 70: short */
		{ INT64_MAX - 2, 1, 2, 30, 3 },
		{ INT64_MAX - 1, 42, 2, 10, 1 },        /* buyer 42 was never opened */
		{ INT64_MAX, 1, 2, 30, 3 },
	};
	int results[5] = { 42, 42, 42, 42, 42 };
	int rc = money_batch(db, &two, list, 5, results);
	lt_expect(rc == 0, "savepoint", "a batch of 5 sales with ids INT64_MAX - 4 .. INT64_MAX "
	          "(19 digits), the second by a buyer who is short and the fourth by a buyer "
	          "never opened, returned %d, expected 0 (%s): those two are undone alone and the "
	          "others commit. Is a savepoint statement that names the id (\"ROLLBACK TO "
	          "SAVEPOINT t_9223372036854775805\" is 43 characters) written into a buffer too "
	          "small for it, so it names a savepoint that does not exist?", rc, labtest_why(db));
	if (rc == 0)
		lt_expect(results[0] == 0 && results[1] == MONEY_INSUFFICIENT && results[2] == 0 &&
		          results[3] == MONEY_NO_ACCOUNT && results[4] == 0, "savepoint", "results of "
		          "a batch with ids INT64_MAX - 4 .. INT64_MAX: expected 0, MONEY_INSUFFICIENT "
		          "(%d), 0, MONEY_NO_ACCOUNT (%d), 0, got %d, %d, %d, %d, %d", MONEY_INSUFFICIENT,
		          MONEY_NO_ACCOUNT, results[0], results[1], results[2], results[3], results[4]);
	lt_expect_int_hint(balance(t, 1), 10, "buyer 1 after the batch (three sales of 30 out of "
	                   "100)", "savepoint");
	lt_expect_int_hint(balance(t, 2), 81, "seller 2 after the batch (three shares of 27)",
	                   "savepoint");
	lt_expect_int_hint(rows_of(t, INT64_MAX - 3), 0, "rows of the sale whose buyer was short",
	                   "rollback");
	lt_expect_int_hint(rows_of(t, INT64_MAX - 1), 0, "rows of the sale whose buyer was never "
	                   "opened", "rollback");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "rollback", "after a batch with ids INT64_MAX - 4 .. INT64_MAX: %s",
	          bad);
}
