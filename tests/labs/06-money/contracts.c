/*
 * contracts.c: Lab 06's checks of what money.h promises that the other
 * files do not reach: the domain of money_open(), money_payout() and
 * money_batch() at each edge, a buyer debited on sub-account 0 only, a
 * payout of exactly what one sub-account holds and out of one
 * sub-account only, an invalid transfer in the middle of a batch, and
 * money_open(), money_batch(), money_reconcile() and money_balance() with
 * each of their statements refused, or run with the answer lost, in turn.
 */
#include "tests/labs/06-money/contracts.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "labs/06-money/money.h"
#include "tests/harness/bounds.h"
#include "tests/harness/labtest.h"
#include "tests/harness/session.h"
#include "tests/harness/steps.h"
#include "tests/labs/06-money/books.h"
#include "util/clock.h"

#define SWEEP_MAX 60            /* more statements than any call here runs */

/* Every row an account left: its balance rows and its opening transfer. */
static int64_t account_rows(struct labtest *t, int64_t id)
{
	return sql_int(t, "SELECT (SELECT count(*) FROM accounts WHERE id = %lld) +"
	               " (SELECT count(*) FROM transfers WHERE id = -(%lld))",
	               (long long)id, (long long)id);
}

/* money_setup() twice on one database, then money_open()'s domain:
 * account > 0, subs in 1..MONEY_MAX_SUBS, opening >= 0. Each edge outside
 * is MONEY_INVALID and writes nothing; each edge inside is opened. An
 * account id past 2^31 gets its opening on its own row. */
void open__domain_edges(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	int rc = money_setup(db);
	lt_expect(rc == 0, "rollback", "money_setup a second time on the same database returned %d "
	          "(%s): it creates what does not exist yet and leaves the rest", rc,
	          labtest_why(db));
	/* Its failure paths too: each of its statements refused, or run with
	 * the answer lost, is an error the caller hears (a kit that carries
	 * on after a setup that failed works on tables that are not there). */
	for (int how = LT_STEP_FAILS; how <= LT_STEP_REPLY_LOST; how++) {
		for (int k = 1; k <= SWEEP_MAX; k++) {
			lt_step_arm(how, k);
			rc = money_setup(db);
			if (!lt_step_disarm())
				break;
			lt_expect(rc < 0, "rollback", "statement %d of money_setup %s: it returned %d, "
			          "expected a negative code (is an error dropped on the way out?)", k,
			          lt_step_what(how), rc);
		}
	}
	rc = money_setup(db);
	lt_expect(rc == 0, "rollback", "money_setup again after its failures returned %d (%s)", rc,
	          labtest_why(db));

	static const struct {
		int64_t account;
		int subs;
		int64_t opening;
		const char *what;
	} refused[] = {
		{ 0, 1, 10, "account 0 (MONEY_OUTSIDE itself)" },
		{ -5, 1, 10, "account -5" },
		{ 5, 0, 10, "0 sub-accounts" },
		{ 6, MONEY_MAX_SUBS + 1, 10, "MONEY_MAX_SUBS + 1 (65) sub-accounts" },
		{ 7, 1, -1, "an opening balance of -1" },
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		char what[160];
		snprintf(what, sizeof what, "money_open with %s (MONEY_INVALID)", refused[i].what);
		lt_expect_int_hint(money_open(db, refused[i].account, refused[i].subs,
		                              refused[i].opening), MONEY_INVALID, what, "invalid");
		snprintf(what, sizeof what, "rows left by the refused money_open with %s",
		         refused[i].what);
		/* MONEY_OUTSIDE's own row is there from money_setup(). */
		lt_expect_int_hint(account_rows(t, refused[i].account), refused[i].account == 0, what,
		                   "invalid");
	}

	open_account(db, 8, MONEY_MAX_SUBS, 0);
	lt_expect_int_hint(sql_int(t, "SELECT count(*) FROM accounts WHERE id = 8"), MONEY_MAX_SUBS,
	                   "balance rows of an account opened with MONEY_MAX_SUBS sub-accounts",
	                   "invalid");
	lt_expect_int_hint(sql_int(t, "SELECT count(*) FROM transfers WHERE id = -8"), 0,
	                   "transfer rows of an account opened with 0 (none: nothing moved)",
	                   "entries");

	/* money_balance()'s two answers: an account opened with nothing has
	 * balance 0; one never opened is MONEY_NO_ACCOUNT, not a balance of 0
	 * (a payout screen would show an empty account that is not there). */
	int64_t bal = -1;
	lt_expect_int_hint(money_balance(db, 8, &bal), 0,
	                   "money_balance of account 8, opened with 0", "balance");
	lt_expect_int_hint(bal, 0, "the balance of account 8, opened with 0", "balance");
	bal = 12345;
	rc = money_balance(db, 9, &bal);
	lt_expect(rc == MONEY_NO_ACCOUNT, "balance", "money_balance of account 9, never opened, "
	          "returned %d with balance %lld: expected MONEY_NO_ACCOUNT (%d). A sum over no "
	          "rows is no account, not a balance of 0 (is a NULL sum read as 0, or a "
	          "COALESCE hiding the missing row?)", rc, (long long)bal, MONEY_NO_ACCOUNT);

	/* MONEY_OUTSIDE is an account too, opened by money_setup(): its
	 * balance is minus all that was brought into the books. */
	int64_t brought = -sql_int(t, "SELECT balance FROM accounts WHERE id = 0");
	bal = 12345;
	rc = money_balance(db, MONEY_OUTSIDE, &bal);
	lt_expect(rc == 0 && bal == -brought, "balance", "money_balance of MONEY_OUTSIDE (account 0) "
	          "returned %d with balance %lld: expected 0 and %lld, minus the money brought into "
	          "the books. money_setup() opens it: is an id of 0 refused before the database is "
	          "asked?", rc, (long long)bal, (long long)-brought);

	const int64_t big = LT_PAST_INT32 + 5;
	open_account(db, big, 1, 7);
	lt_expect_int_hint(sql_int(t, "SELECT COALESCE(SUM(balance), 0) FROM accounts WHERE id = %lld",
	                           (long long)big), 7,
	                   "balance of account 2^31 + 5 opened with 7 (an id cut to an int is "
	                   "another account)", "balance");

	/* Its row held by a sale in flight (another connection's open
	 * transaction has written it): the balance is still 7, read at once
	 * (a plain read waits for no lock) or after a wait the connection's
	 * 1 s allows gave up (KIT_DB_BUSY). A read that skips the rows others
	 * hold ("never wait for a sale", FOR SHARE SKIP LOCKED) leaves them
	 * out of the sum, or finds no account at all. */
	struct kit_db *holder = labtest_connect(t), *reader = labtest_connect(t);
	assert_int_equal(kit_db_set_lock_timeout(reader, 1000), 0);
	assert_int_equal(kit_db_begin(holder), 0);
	char bigs[24];
	snprintf(bigs, sizeof bigs, "%lld", (long long)big);
	assert_int_equal(kit_db_exec(holder, "UPDATE accounts SET balance = balance WHERE id = $1",
	                             1, (const char *[]){ bigs }), 0);
	bal = -1;
	int64_t t0 = util_now_ns();
	int held = money_balance(reader, big, &bal);
	int64_t waited_ms = (util_now_ns() - t0) / 1000000;
	char why[200];
	snprintf(why, sizeof why, "%s", labtest_why(reader));
	kit_db_rollback(holder);
	kit_db_close(holder);
	kit_db_close(reader);
	/* On SQLite a reader never waits for the writer (the kit runs it in
	 * WAL mode): only a read that takes the write lock itself, a
	 * kit_db_begin (BEGIN IMMEDIATE) around it, waits here, and every sale
	 * would then wait for every balance read. */
	lt_expect(t->engine != KIT_DB_SQLITE || (held == 0 && bal == 7), "balance",
	          "on SQLite, money_balance of account 2^31 + 5 (holding 7) while another "
	          "connection's sale held the write lock returned %d with balance %lld after %lld ms "
	          "(%s); expected 7 at once: a reader does not wait for the writer there, unless it "
	          "takes the write lock itself. Is the read inside kit_db_begin (BEGIN IMMEDIATE, "
	          "the write lock)? money.h: a balance reads only; one SELECT needs no transaction",
	          held, (long long)bal, (long long)waited_ms, why);
	lt_expect((held == 0 && bal == 7) || (held == KIT_DB_BUSY && waited_ms >= 800), "balance",
	          "money_balance of account 2^31 + 5 (holding 7) while another connection's open "
	          "transaction held its row returned %d with balance %lld after %lld ms (%s); expected "
	          "7, or KIT_DB_BUSY once the connection's 1 s lock wait gave up: does the read skip "
	          "the rows others hold (SKIP LOCKED: a held row is still the account's money), or "
	          "refuse to wait (NOWAIT: money.h, a call waits as long as its connection allows)?",
	          held, (long long)bal, (long long)waited_ms, why);
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "entries", "after the refused and the accepted money_open calls: %s",
	          bad);
}

/* money_payout()'s domain: id > 0, amount > 0, to is not the fee account,
 * fees->subs in 1..MONEY_MAX_SUBS; outside it MONEY_INVALID, nothing
 * written. Inside: MONEY_MAX_SUBS sub-accounts, and a payout of exactly
 * what one sub-account holds. */
void payout__domain_edges(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000);
	open_account(db, 2, 1, 0);
	open_account(db, 3, 1, 0);
	open_account(db, FEE_ACCOUNT, MONEY_MAX_SUBS, 0);
	/* Sale 64 puts a fee of 100 on sub-account 0 of 64. */
	lt_expect_int(transfer(db, MONEY_MAX_SUBS, 1, 2, 200, 100, MONEY_MAX_SUBS), 0,
	              "money_transfer with 64 fee sub-accounts");

	struct money_fees max = { FEE_ACCOUNT, MONEY_MAX_SUBS }, none = { FEE_ACCOUNT, 0 },
	                  over = { FEE_ACCOUNT, MONEY_MAX_SUBS + 1 };
	static const char *const whats[] = {
		"id 0", "an amount of 0", "an amount of -5", "the fee account as the payee",
		"0 fee sub-accounts", "MONEY_MAX_SUBS + 1 (65) fee sub-accounts",
	};
	int got[] = {
		money_payout(db, &max, 0, 3, 10),
		money_payout(db, &max, 501, 3, 0),
		money_payout(db, &max, 502, 3, -5),
		money_payout(db, &max, 503, FEE_ACCOUNT, 10),
		money_payout(db, &none, 504, 3, 10),
		money_payout(db, &over, 505, 3, 10),
	};
	for (size_t i = 0; i < sizeof got / sizeof got[0]; i++) {
		char what[160];
		snprintf(what, sizeof what, "money_payout with %s (MONEY_INVALID)", whats[i]);
		lt_expect_int_hint(got[i], MONEY_INVALID, what, "invalid");
	}
	lt_expect_int_hint(sql_int(t, "SELECT count(*) FROM transfers WHERE id = 0 OR id > 500"), 0,
	                   "transfer rows left by the six refused payouts", "invalid");
	lt_expect_int_hint(balance(t, 3), 0, "the payee's balance after six refused payouts",
	                   "invalid");

	/* A payee below zero that was never opened: money.h's MONEY_INVALID
	 * list names no id of an account, and an account never opened is
	 * MONEY_NO_ACCOUNT, whatever its sign (an id the type's minimum too). */
	static const int64_t below[] = { -1, INT64_MIN };
	for (int i = 0; i < 2; i++) {
		int rc = money_payout(db, &max, 511 + i, below[i], 10);
		lt_expect(rc == MONEY_NO_ACCOUNT && rows_of(t, 511 + i) == 0, "no-account",
		          "money_payout of 10 to account %lld, never opened, returned %d and left %lld "
		          "row(s): expected MONEY_NO_ACCOUNT (%d) and none. money.h's MONEY_INVALID is "
		          "for an id or amount <= 0, the fee account as the payee, or fees->subs outside "
		          "1..MONEY_MAX_SUBS: the payee's sign is not on it%s", (long long)below[i], rc,
		          (long long)rows_of(t, 511 + i), MONEY_NO_ACCOUNT, rc == MONEY_INVALID ?
		          " (is a payee below 0 refused as invalid, as money_open refuses it?)" : "");
	}

	/* Payout 128 starts at sub-account 128 % 64 = 0, which holds exactly 100. */
	int rc = money_payout(db, &max, 2 * MONEY_MAX_SUBS, 3, 100);
	lt_expect(rc == 0, "reservation", "money_payout of 100 out of 64 sub-accounts, sub-account 0 "
	          "holding exactly 100, returned %d, expected 0 (a debit that asks balance > amount "
	          "refuses exactly the balance) (%s)", rc, labtest_why(db));
	lt_expect_int_hint(balance(t, 3), 100, "paid out of a sub-account holding exactly 100",
	                   "reservation");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 0, "fee account after paying out all it held",
	                   "reservation");

	/* One sub-account, the lower edge: a fee account of one row pays out. */
	open_account(db, 98, 1, 0);
	struct money_fees one = { 98, 1 };
	struct money_transfer sale = { 300, 1, 2, 50, 30 };
	lt_expect_int(money_transfer(db, &one, &sale), 0, "money_transfer to fee account 98");
	rc = money_payout(db, &one, 301, 3, 30);
	lt_expect(rc == 0, "invalid", "money_payout of 30 out of a fee account of 1 sub-account "
	          "holding 30 returned %d, expected 0 (1 sub-account is inside the domain)", rc);
	lt_expect_int_hint(balance(t, 98), 0, "fee account 98 after paying out its 30", "reservation");

	/* The largest id, the upper edge: payout INT64_MAX out of 3
	 * sub-accounts starts at INT64_MAX % 3 = 1 and has to go round past
	 * sub-account 2 to 0, the one that holds the money, without its
	 * arithmetic leaving int64_t (id + 1 does). */
	open_account(db, 97, 3, 0);
	struct money_fees three = { 97, 3 };
	struct money_transfer to0 = { 303, 1, 2, 50, 30 };      /* 303 % 3 = 0 */
	lt_expect_int(money_transfer(db, &three, &to0), 0, "money_transfer to fee account 97");
	rc = money_payout(db, &three, INT64_MAX, 3, 30);
	lt_expect(rc == 0, "reservation", "money_payout with id INT64_MAX of 30 out of 3 "
	          "sub-accounts, only sub-account 0 holding it, returned %d, expected 0: the "
	          "sub-accounts after the first one tried are id + 1, id + 2, ... modulo 3, and id + 1 "
	          "is past INT64_MAX; take id %% subs first, then add (%s)", rc, labtest_why(db));
	lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = 97 AND sub = 0"), 0,
	                   "sub-account 0 of fee account 97 after payout INT64_MAX took its 30",
	                   "reservation");

	/* An id past 2^31: payout 2^31 + 3 starts at (2^31 + 3) % 3 = 2 and
	 * goes round to sub-account 1, which holds the money (sale 304's
	 * fee). The id cut to an int first, (int)id % 3 = -2, tries
	 * sub-accounts -2, -1 and 0, which do not exist or hold nothing, and
	 * never 1. */
	struct money_transfer to1 = { 304, 1, 2, 50, 30 };      /* 304 % 3 = 1 */
	lt_expect_int(money_transfer(db, &three, &to1), 0, "money_transfer 304 to fee account 97");
	rc = money_payout(db, &three, LT_PAST_INT32 + 3, 3, 30);
	lt_expect(rc == 0, "reservation", "money_payout with id 2^31 + 3 of 30 out of 3 "
	          "sub-accounts, only sub-account 1 holding it, returned %d, expected 0: it starts "
	          "at (2^31 + 3) %% 3 = 2 and goes round; an id cut to an int, (int)id %% 3 = -2, "
	          "starts at a sub-account that does not exist and never reaches 1 (take id %% subs "
	          "on the int64_t) (%s)", rc, labtest_why(db));
	lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = 97 AND sub = 1"), 0,
	                   "sub-account 1 of fee account 97 after payout 2^31 + 3 took its 30",
	                   "reservation");

	/* Every sub-account is tried, the farthest too: payout 65 of 64
	 * sub-accounts starts at sub-account 1, and only sub-account 0, the
	 * last it comes to, holds the money (sale 192's fee). */
	lt_expect_int(transfer(db, 3 * MONEY_MAX_SUBS, 1, 2, 100, 40, MONEY_MAX_SUBS), 0,
	              "money_transfer 192 with 64 fee sub-accounts");
	rc = money_payout(db, &max, MONEY_MAX_SUBS + 1, 3, 40);
	lt_expect(rc == 0, "reservation", "money_payout 65 of 40 out of 64 sub-accounts, only "
	          "sub-account 0 holding it, returned %d, expected 0: it starts at sub-account 1 "
	          "and must try all 64 before it refuses (does it give up after a few?) (%s)", rc,
	          labtest_why(db));

	/* A payout to MONEY_OUTSIDE (the platform cashing out) is inside the
	 * domain: to is any account but the fee account. */
	lt_expect_int(transfer(db, 4 * MONEY_MAX_SUBS, 1, 2, 100, 10, MONEY_MAX_SUBS), 0,
	              "money_transfer 256 with 64 fee sub-accounts");
	rc = money_payout(db, &max, 66, MONEY_OUTSIDE, 10);
	lt_expect(rc == 0, "invalid", "money_payout of 10 to MONEY_OUTSIDE (money leaving the books) "
	          "returned %d, expected 0: only a payout to the fee account itself is invalid (%s)",
	          rc, labtest_why(db));

	/* The largest amount, to a payee that holds money: no sub-account
	 * covers it, so MONEY_INSUFFICIENT is due, however the payee's
	 * balance would fare. A payout that credits the payee before it
	 * reserves overflows that balance first (PostgreSQL and MariaDB
	 * answer an error; SQLite makes it a REAL and the refusal still
	 * comes). */
	rc = money_payout(db, &max, 67, 3, INT64_MAX);
	lt_expect(rc == MONEY_INSUFFICIENT && sql_int(t, "SELECT count(*) FROM transfers WHERE id = 67")
	          == 0, "reservation", "money_payout of INT64_MAX to account 3 (which holds %lld) out "
	          "of 64 sub-accounts returned %d (expected MONEY_INSUFFICIENT, %d, nothing written)%s",
	          (long long)balance(t, 3), rc, MONEY_INSUFFICIENT, rc < 0 && rc != MONEY_INSUFFICIENT
	          ? ": a database error; is the payee credited before the reservation refuses (INT64_MAX "
	          "added to its balance overflows first)? Reserve first, then credit (README §3)" : "");
}

/* A payout comes out of one sub-account, whichever it is: the first one
 * tried (here sub-account 0) included. Two sub-accounts of 100 each, a
 * payout of 60 starting at sub-account 0: 40 and 100 are left, and the
 * payout's entry is on sub-account 0. */
void payout__out_of_one_sub_only(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000);
	open_account(db, 2, 1, 0);
	open_account(db, 3, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	lt_expect_int(transfer(db, 1, 1, 2, 200, 100, 2), 0, "money_transfer (fee to sub 1)");
	lt_expect_int(transfer(db, 2, 1, 2, 200, 100, 2), 0, "money_transfer (fee to sub 0)");

	struct money_fees two = { FEE_ACCOUNT, 2 };
	int rc = money_payout(db, &two, 10, 3, 60);
	lt_expect(rc == 0, "reservation", "money_payout of 60 out of two sub-accounts of 100 "
	          "returned %d (%s)", rc, labtest_why(db));
	int64_t s0 = sql_int(t, "SELECT balance FROM accounts WHERE id = 99 AND sub = 0");
	int64_t s1 = sql_int(t, "SELECT balance FROM accounts WHERE id = 99 AND sub = 1");
	/* money.h does not say which sub-account a payout tries first: 10 %
	 * 2 = 0, the reference's, or another; either one, whole, once. */
	lt_expect((s0 == 40 && s1 == 100) || (s0 == 100 && s1 == 40), "reservation",
	          "a payout of 60 with id 10 out of two sub-accounts of 100 left sub-accounts 0 "
	          "and 1 at %lld and %lld, expected 40 and 100 (or 100 and 40): the whole payout "
	          "out of one sub-account, once", (long long)s0, (long long)s1);
	lt_expect_int_hint(balance(t, 3), 60, "paid out by a payout of 60", "reservation");
	const char *bad = books_fault(t);
	lt_expect(bad == NULL, "entries", "after a payout out of sub-account 0: %s", bad);
}

/* The buyer pays from sub-account 0 only, whatever its other rows hold:
 * here the buyer is the fee account, whose sub-accounts 0 and 1 hold 50
 * each. A missing buyer is MONEY_NO_ACCOUNT (not MONEY_INSUFFICIENT), a
 * sale of 0 is MONEY_INVALID even with no fee, and MONEY_MAX_SUBS fee
 * sub-accounts are accepted. */
void transfer__buyer_pays_from_sub_0(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	lt_expect_int(transfer(db, 1, 1, 2, 100, 50, 2), 0, "money_transfer (fee 50 to sub 1)");
	lt_expect_int(transfer(db, 2, 1, 2, 100, 50, 2), 0, "money_transfer (fee 50 to sub 0)");
	int64_t f0 = sql_int(t, "SELECT balance FROM accounts WHERE id = 99 AND sub = 0");
	int64_t f1 = sql_int(t, "SELECT balance FROM accounts WHERE id = 99 AND sub = 1");
	lt_expect(f0 == 50 && f1 == 50, "fee-subs", "two sales, ids 1 and 2 with a fee of 50 each "
	          "and two fee sub-accounts, left the fee account's sub-accounts 0 and 1 at %lld and "
	          "%lld, expected 50 each: a sale's fee goes to sub-account id %% subs (sale 1 to "
	          "sub-account 1, sale 2 to 0), whoever buys (the rest of this check needs them so)",
	          (long long)f0, (long long)f1);

	int rc = transfer(db, 3, FEE_ACCOUNT, 2, 40, 0, 2);
	lt_expect(rc == 0, "conditional-debit", "a sale of 40 by account 99, whose sub-accounts 0 "
	          "and 1 hold 50 each, returned %d, expected 0%s", rc, rc == MONEY_INSUFFICIENT ?
	          " (MONEY_INSUFFICIENT: did the debit change more rows than sub-account 0's, its "
	          "WHERE not naming the sub-account?)" : "");
	int64_t s0 = sql_int(t, "SELECT balance FROM accounts WHERE id = 99 AND sub = 0");
	int64_t s1 = sql_int(t, "SELECT balance FROM accounts WHERE id = 99 AND sub = 1");
	lt_expect(s0 == 10 && s1 == 50, "conditional-debit", "after account 99 paid 40, its "
	          "sub-accounts 0 and 1 hold %lld and %lld, expected 10 and 50: a buyer pays from "
	          "sub-account 0 only (does the debit's WHERE name the sub-account?)",
	          (long long)s0, (long long)s1);

	lt_expect_int_hint(transfer(db, 4, 77, 2, 10, 1, 2), MONEY_NO_ACCOUNT,
	                   "a sale by account 77, which does not exist (MONEY_NO_ACCOUNT, not "
	                   "MONEY_INSUFFICIENT)", "no-account");
	lt_expect_int_hint(rows_of(t, 4), 0, "rows left by the sale of a missing buyer", "rollback");
	lt_expect_int_hint(transfer(db, 5, 1, 2, 0, 0, 2), MONEY_INVALID,
	                   "a sale of 0 with a fee of 0 (MONEY_INVALID: amount > 0)", "invalid");
	lt_expect_int_hint(rows_of(t, 5), 0, "rows left by the sale of 0", "invalid");

	open_account(db, 98, MONEY_MAX_SUBS, 0);
	struct money_fees max = { 98, MONEY_MAX_SUBS };
	struct money_transfer s = { 6, 1, 2, 10, 3 };
	lt_expect_int_hint(money_transfer(db, &max, &s), 0, "money_transfer with MONEY_MAX_SUBS "
	                   "(64) fee sub-accounts", "invalid");
	lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = 98 AND sub = 6"), 3,
	                   "fee sub-account 6 of 64 after sale 6's fee of 3", "fee-subs");
}

/* An invalid transfer in the middle of a batch gets MONEY_INVALID in its
 * results[] slot, writes nothing, and the others are applied; the fee
 * account's sub-accounts may be MONEY_MAX_SUBS, one more is
 * MONEY_INVALID for the whole batch. */
void batch__invalid_one_in_the_middle(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 1000);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, MONEY_MAX_SUBS, 0);

	struct money_fees max = { FEE_ACCOUNT, MONEY_MAX_SUBS },
	                  over = { FEE_ACCOUNT, MONEY_MAX_SUBS + 1 };
	struct money_transfer list[] = {
		{ 1, 1, 2, 100, 10 },
		{ 2, 1, 2, 100, 150 },          /* a fee above the amount */
		{ 63, 1, 2, 100, 20 },          /* fee to the last sub-account, 63 */
	};
	int results[3] = { 42, 42, 42 };
	lt_expect_int_hint(money_batch(db, &over, list, 3, results), MONEY_INVALID,
	                   "money_batch with MONEY_MAX_SUBS + 1 (65) fee sub-accounts", "invalid");
	lt_expect_int_hint(sql_int(t, "SELECT count(*) FROM transfers WHERE id > 0"), 0,
	                   "transfer rows left by the refused batch", "invalid");

	int rc = money_batch(db, &max, list, 3, results);
	lt_expect(rc == 0, "savepoint", "money_batch of 3 with 64 fee sub-accounts, the second "
	          "with a fee above its amount, returned %d, expected 0 (%s)", rc, labtest_why(db));
	lt_expect(results[0] == 0 && results[1] == MONEY_INVALID && results[2] == 0, "invalid",
	          "results of a batch whose second transfer has a fee of 150 on 100: expected 0, "
	          "MONEY_INVALID (%d), 0, got %d, %d, %d", MONEY_INVALID, results[0], results[1],
	          results[2]);
	lt_expect_int_hint(rows_of(t, 2), 0, "rows of the invalid transfer in the batch", "invalid");
	lt_expect_int_hint(balance(t, 1), 800, "buyer's balance after the batch (two sales of 100)",
	                   "savepoint");
	lt_expect_int_hint(sql_int(t, "SELECT balance FROM accounts WHERE id = 99 AND sub = 63"), 20,
	                   "fee sub-account 63, the last of 64, after sale 63's fee of 20",
	                   "fee-subs");
	lt_expect_int_hint(balance(t, FEE_ACCOUNT), 30, "fee account after fees of 10 and 20",
	                   "savepoint");

	/* A sale that fails with a database error, not a refusal, is one
	 * transfer that fails too: it leaves nothing and the others go on
	 * (money.h). Seller 3's row is set to INT64_MAX - 5 behind the
	 * ledger's back, so crediting it 10 overflows its balance: an error on
	 * PostgreSQL and MariaDB (SQLite turns the sum into a REAL instead, so
	 * it is not asked there). A batch that ends whole on "a database error
	 * means something is broken" refuses the two good sales with it. */
	if (t->engine == KIT_DB_SQLITE)
		return;
	open_account(db, 3, 1, 0);
	labtest_exec(t, "UPDATE accounts SET balance = 9223372036854775802 WHERE id = 3");
	struct money_transfer mixed[] = {
		{ 70, 1, 2, 10, 1 },
		{ 71, 1, 3, 10, 0 },            /* the seller's balance would pass INT64_MAX */
		{ 72, 1, 2, 10, 1 },
	};
	rc = money_batch(db, &max, mixed, 3, results);
	lt_expect(rc == 0, "savepoint", "a batch of 3 whose second sale fails with a database error "
	          "(its seller holds INT64_MAX - 5 and would get 10) returned %d, expected 0 (%s): "
	          "money.h: a transfer that fails leaves nothing behind and does not stop the others, "
	          "whatever its error", rc, labtest_why(db));
	if (rc == 0)
		lt_expect(results[0] == 0 && results[1] < 0 && results[1] != MONEY_INSUFFICIENT &&
		          results[1] != MONEY_INVALID && results[2] == 0, "savepoint", "results of a "
		          "batch whose second sale overflows its seller's balance: expected 0, a "
		          "database error, 0, got %d, %d, %d", results[0], results[1], results[2]);
	lt_expect_int_hint(balance(t, 3), INT64_MAX - 5, "seller 3 after a sale that would overflow "
	                   "its balance", "rollback");
	lt_expect_int_hint(rows_of(t, 71), 0, "rows of the sale that overflowed its seller", "rollback");
	lt_expect_int_hint(balance(t, 1), 780, "buyer's balance after the batch (two more sales of 10)",
	                   "savepoint");

	/* A sale whose buyer another transaction holds past the connection's
	 * lock timeout fails busy. On PostgreSQL that is one more transfer
	 * that fails: ROLLBACK TO SAVEPOINT undoes it and the others go on
	 * (a batch that ends whole on it fails every retry while that one
	 * buyer stays held: one held row stops every sale sent with it). On
	 * MariaDB a busy error ends the whole transaction (kit/db rolls a lock
	 * wait timeout back whole, as InnoDB does a deadlock), so the batch
	 * says KIT_DB_BUSY and applied nothing. Everything is gathered before
	 * the first expectation, so a failure leaves no transaction held. */
	bool my = t->engine == KIT_DB_MYSQL;
	open_account(db, 4, 1, 100);
	struct money_transfer around[] = {
		{ 80, 1, 2, 10, 1 },
		{ 81, 4, 2, 10, 0 },            /* buyer 4 is held by another transaction */
		{ 82, 1, 2, 10, 1 },
	};
	int first[3] = { 42, 42, 42 };
	struct kit_db *a = labtest_connect(t);
	int holding = kit_db_begin(a);
	if (holding == 0)
		holding = kit_db_exec(a, "UPDATE accounts SET balance = balance WHERE id = 4 AND sub = 0",
		                      0, NULL);
	char why_a[200];
	snprintf(why_a, sizeof why_a, "%s", holding ? labtest_why(a) : "");
	/* the caller's own settings, and its lock timeout: what the batch,
	 * failed or not, leaves as it found it */
	char before[LT_SESSION_LEN] = "", after[LT_SESSION_LEN] = "";
	if (!holding)
		lt_session_own_values(t, db);
	int timeout = holding ? -1 : kit_db_set_lock_timeout(db, my ? 1000 : 200);
	if (!timeout)
		lt_session(t, db, before, sizeof before);
	rc = timeout ? -1 : money_batch(db, &max, around, 3, first);
	if (!timeout)
		lt_session(t, db, after, sizeof after);
	int64_t paid = 780 - balance(t, 1), rows = rows_of(t, 81);
	kit_db_rollback(a);
	kit_db_close(a);
	int reset = kit_db_set_lock_timeout(db, 0);       /* the server's default, as it was */
	lt_expect(strcmp(before, after) == 0, "rollback", "a batch whose second sale's buyer "
	          "another transaction held past the lock timeout returned %d, and its session's "
	          "settings changed from [%s] to [%s]: the batch changed a setting for its run (a "
	          "PRAGMA, a SET such as unique_checks or foreign_key_checks) and puts the caller's "
	          "value back on its success path only. money.h: on any failure the connection is "
	          "ready for the next call; put it back on every way out, or better, set nothing",
	          rc, before, after);
	lt_expect(holding == 0, NULL, "holding buyer 4's row from another connection: %s", why_a);
	lt_expect(timeout == 0 && reset == 0, NULL, "setting the connection's lock timeout: %s",
	          labtest_why(db));
	if (my) {
		lt_expect(rc == KIT_DB_BUSY, "savepoint", "on MariaDB, a batch whose second sale's "
		          "buyer another transaction held past the lock wait timeout returned %d, "
		          "expected KIT_DB_BUSY (%d): a busy error ends the whole transaction there, "
		          "savepoints too (%s)", rc, KIT_DB_BUSY, labtest_why(db));
		lt_expect(paid == 0, "rollback", "on MariaDB, a batch that met a busy error returned "
		          "%d and yet its buyer paid %lld (a failed batch applies nothing)", rc,
		          (long long)paid);
	} else {
		lt_expect(rc == 0, "savepoint", "a batch of 3 whose second sale's buyer another "
		          "transaction held past the lock timeout (200 ms) returned %d, expected 0 "
		          "(%s): money.h: a transfer that fails does not stop the others, and a sale "
		          "that fails busy is one; a batch that ends whole on it fails every retry for "
		          "as long as that one buyer stays held", rc, labtest_why(db));
		lt_expect(first[0] == 0 && first[1] == KIT_DB_BUSY && first[2] == 0, "savepoint",
		          "results of a batch whose second sale's buyer was held past the lock timeout: "
		          "expected 0, KIT_DB_BUSY (%d), 0, got %d, %d, %d", KIT_DB_BUSY, first[0],
		          first[1], first[2]);
		lt_expect(paid == 20, "savepoint", "a batch whose second sale's buyer was held: the "
		          "first and third (10 each) paid %lld, expected 20", (long long)paid);
	}
	lt_expect_int_hint(rows, 0, "rows of the sale whose buyer was held", "rollback");
	int again[3] = { 42, 42, 42 };
	rc = money_batch(db, &max, around, 3, again);
	lt_expect(rc == 0, "idempotency", "the same batch again once buyer 4 was let go returned %d "
	          "(%s)", rc, labtest_why(db));
	lt_expect(again[1] == 0 && (my ? again[0] == 0 && again[2] == 0
	                               : again[0] == MONEY_ALREADY && again[2] == MONEY_ALREADY),
	          "idempotency", "results of the same batch again once buyer 4 was let go: "
	          "expected %s, got %d, %d, %d", my ? "0, 0, 0 (the first attempt applied nothing)"
	          : "MONEY_ALREADY, 0, MONEY_ALREADY", again[0], again[1], again[2]);
	lt_expect_int_hint(balance(t, 1), 760, "buyer 1 after both batches (two sales of 10)",
	                   "idempotency");
	lt_expect_int_hint(balance(t, 4), 90, "buyer 4 after both batches (one sale of 10)",
	                   "idempotency");
}

/* money_open() with its k-th statement refused, or run with the answer
 * lost, for every k: an error, nothing of the account left (or, when the
 * COMMIT's answer was lost, all of it), the books whole; opened again it
 * is there once. */
void open__every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	char before[LT_SESSION_LEN], what[120];
	bool kept = true;
	lt_session_own_values(t, db);
	lt_session(t, db, before, sizeof before);
	for (int how = LT_STEP_FAILS; how <= LT_STEP_REPLY_LOST; how++) {
		for (int k = 1; k <= SWEEP_MAX; k++) {
			int64_t id = 100 * (how + 1) + k;
			lt_step_arm(how, k);
			int rc = money_open(db, id, 3, 70);
			if (!lt_step_disarm())
				break;
			if (how == LT_STEP_FAILS)
				closed_after_refusal(t, db, "money_open", k, rc);
			snprintf(what, sizeof what, "statement %d of money_open %s", k, lt_step_what(how));
			if (kept && rc != 0)
				kept = session_kept_after_failure(t, db, before, what, rc);
			int64_t rows = account_rows(t, id);
			lt_expect(how != LT_STEP_FAILS || rc < 0, "rollback", "statement %d of money_open "
			          "refused: it returned %d, expected a negative code", k, rc);
			lt_expect(rows == 0 || rows == 4, "rollback", "statement %d of money_open %s: it "
			          "returned %d and left %lld of the account's 4 rows (3 sub-accounts and "
			          "the opening transfer): is the transaction rolled back?", k,
			          lt_step_what(how), rc, (long long)rows);
			const char *bad = books_fault(t);
			lt_expect(bad == NULL, "rollback", "statement %d of money_open %s: %s", k,
			          lt_step_what(how), bad);
			int again = money_open(db, id, 3, 70);
			int want = rows ? KIT_DB_CONSTRAINT : 0;
			lt_expect(again == want, "rollback", "statement %d of money_open %s, then the same "
			          "account opened again on the same connection: expected %d, got %d (%s)",
			          k, lt_step_what(how), want, again, labtest_why(db));
			lt_expect_int_hint(balance(t, id), 70, "balance of the account opened again",
			                   "rollback");
		}
	}
}

/* A batch of three (the second over the buyer's balance, so its savepoint
 * is rolled back to) with its k-th statement refused, run with the
 * answer lost, or refused as busy, for every k. Either the batch fails (a negative code, and
 * nothing of it applied, unless the COMMIT's answer was lost: all of it)
 * or it commits and results[] says what each sale did: the buyer paid
 * exactly the sales that got 0, a sale whose own statement failed left no
 * row, a sale refused as busy says KIT_DB_BUSY (or was retried and
 * paid), and a sale answered MONEY_INSUFFICIENT was short at its turn. The
 * books are whole; sent again, the buyer ends at 10 either way. */
/* Which statement of a batch the k-th is: a sale's own (after its
 * SAVEPOINT, before its RELEASE or ROLLBACK TO), or the batch's. */
struct sale_stmts {
	int n;
	bool in_sale;
	bool of_sale[SWEEP_MAX + 8];
};

static void watch_sale_stmts(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct sale_stmts *w = arg;
	(void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || !sql)
		return;
	bool opens = !strncasecmp(sql, "SAVEPOINT", 9),
	     closes = !strncasecmp(sql, "RELEASE", 7) || !strncasecmp(sql, "ROLLBACK TO", 11);
	if (w->n < (int)(sizeof w->of_sale / sizeof w->of_sale[0]))
		w->of_sale[w->n] = w->in_sale && !opens && !closes;
	w->n++;
	if (opens)
		w->in_sale = true;
	if (closes || !strncasecmp(sql, "COMMIT", 6) || !strcasecmp(sql, "ROLLBACK"))
		w->in_sale = false;
}

void batch__every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	struct money_fees two = { FEE_ACCOUNT, 2 };
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 2, 0);
	int runs = 0;
	/* the caller's own settings, which a failed batch leaves as they were */
	char before[LT_SESSION_LEN], what[120];
	bool kept = true;
	lt_session_own_values(t, db);
	lt_session(t, db, before, sizeof before);
	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
		for (int k = 1; k <= SWEEP_MAX; k++, runs++) {
			int64_t buyer = 1000 + 100 * how + k, base = 10 * buyer;
			open_account(db, buyer, 1, 150);
			struct money_transfer list[] = {
				{ base + 1, buyer, 2, 100, 7 },
				{ base + 2, buyer, 2, 100, 7 },      /* 50 left: MONEY_INSUFFICIENT */
				{ base + 3, buyer, 2, 40, 4 },
			};
			int results[3] = { 42, 42, 42 };
			struct sale_stmts w = { 0 };
			kit_db_set_hook(db, watch_sale_stmts, &w);
			lt_step_arm(how, k);
			int rc = money_batch(db, &two, list, 3, results);
			bool fired = lt_step_disarm();
			kit_db_set_hook(db, NULL, NULL);
			if (!fired)
				break;
			/* A statement of one sale refused as busy ends that sale alone,
			 * on SQLite as on PostgreSQL: ROLLBACK TO SAVEPOINT undoes it
			 * and the batch goes on. Only MariaDB ends the whole
			 * transaction on a busy error (money.h). */
			bool sale_busy = how == LT_STEP_BUSY && t->engine != KIT_DB_MYSQL &&
			                 k <= (int)(sizeof w.of_sale / sizeof w.of_sale[0]) &&
			                 w.of_sale[k - 1];
			lt_expect(!sale_busy || rc == 0, "savepoint", "statement %d of a batch, one of a "
			          "sale's own (inside its savepoint), refused as busy: money_batch() "
			          "returned %d, expected 0 with KIT_DB_BUSY for that sale alone. money.h: "
			          "a busy statement ends the sale it belongs to, and a transfer that fails "
			          "does not stop the others; only on MariaDB does a busy error end the "
			          "whole transaction. Is a busy sale taken to end the batch on every "
			          "engine but PostgreSQL (SQLite's transaction is still open: ROLLBACK TO "
			          "undoes that sale alone)?", k, rc);
			if (lt_step_refused(how))
				closed_after_refusal(t, db, "a batch", k, rc);
			snprintf(what, sizeof what, "statement %d of a batch %s", k, lt_step_what(how));
			if (kept && rc != 0)
				kept = session_kept_after_failure(t, db, before, what, rc);
			int64_t paid = 150 - balance(t, buyer), told = 0;
			for (int i = 0; i < 3; i++)
				told += results[i] == 0 ? list[i].amount : 0;
			if (rc != 0) {
				lt_expect(rc < 0, "rollback", "statement %d of a batch %s: money_batch() "
				          "returned %d, expected 0 or a negative code", k, lt_step_what(how), rc);
				lt_expect(how != LT_STEP_BUSY || rc == KIT_DB_BUSY, "rollback", "statement %d "
				          "of a batch refused as busy: money_batch() returned %d, expected "
				          "KIT_DB_BUSY (%d): money.h lets a caller retry a batch that met a "
				          "lock wait or a deadlock", k, rc, KIT_DB_BUSY);
				lt_expect(paid == 0 || (paid == 140 && how == LT_STEP_REPLY_LOST), "rollback",
				          "statement %d of a batch %s: it returned %d and yet the buyer paid "
				          "%lld (a failed batch applies nothing)", k, lt_step_what(how), rc,
				          (long long)paid);
			} else {
				bool busy_told = results[0] == KIT_DB_BUSY || results[1] == KIT_DB_BUSY ||
				                 results[2] == KIT_DB_BUSY;
				lt_expect(how != LT_STEP_BUSY || busy_told, "rollback", "statement %d of a "
				          "batch refused as busy: money_batch() returned 0 with results %d, %d, "
				          "%d, none KIT_DB_BUSY: the sale the statement belonged to was tried "
				          "again inside the batch. money.h: a statement refused as KIT_DB_BUSY "
				          "ends its sale with KIT_DB_BUSY at once; whether to retry is the "
				          "caller's choice", k, results[0], results[1], results[2]);
				lt_expect(paid == told, "rollback", "statement %d of a batch %s: it returned "
				          "0 with results %d, %d, %d, which make %lld paid, but the buyer paid "
				          "%lld", k, lt_step_what(how), results[0], results[1], results[2],
				          (long long)told, (long long)paid);
				for (int i = 0; i < 3; i++)
					lt_expect(results[i] == 0 || rows_of(t, list[i].id) == 0, "savepoint",
					          "statement %d of a batch %s: sale %d got %d and yet left %lld "
					          "rows (is the savepoint rolled back to?)", k, lt_step_what(how),
					          i + 1, results[i], (long long)rows_of(t, list[i].id));
				/* In order: what the buyer held at each sale's turn. */
				int64_t held = 150;
				for (int i = 0; i < 3; i++) {
					lt_expect(results[i] != MONEY_INSUFFICIENT || held < list[i].amount,
					          "savepoint", "statement %d of a batch %s: sale %d (%lld) got "
					          "MONEY_INSUFFICIENT while the buyer held %lld at its turn%s", k,
					          lt_step_what(how), i + 1, (long long)list[i].amount,
					          (long long)held, how == LT_STEP_BUSY ? " (a statement refused "
					          "as busy is KIT_DB_BUSY, which the caller may retry, not a buyer "
					          "who is short)" : "");
					lt_expect(how != LT_STEP_BUSY || results[i] == 0 ||
					          results[i] == KIT_DB_BUSY || results[i] == MONEY_INSUFFICIENT,
					          "savepoint", "statement %d of a batch refused as busy: sale %d "
					          "got %d, expected 0, KIT_DB_BUSY (%d) or MONEY_INSUFFICIENT", k,
					          i + 1, results[i], KIT_DB_BUSY);
					held -= results[i] == 0 ? list[i].amount : 0;
				}
			}
			const char *bad = books_fault(t);
			lt_expect(bad == NULL, "rollback", "statement %d of a batch %s: %s", k,
			          lt_step_what(how), bad);
			rc = money_batch(db, &two, list, 3, results);
			lt_expect(rc == 0, "rollback", "statement %d of a batch %s, then the same batch "
			          "sent again on the same connection: returned %d (%s)", k,
			          lt_step_what(how), rc, labtest_why(db));
			lt_expect_int_hint(balance(t, buyer), 10, "buyer's balance after the batch was "
			                   "sent again (150 - 100 - 40)", "idempotency");
			bad = books_fault(t);
			lt_expect(bad == NULL, "idempotency", "statement %d of a batch %s, then the batch "
			          "again: %s", k, lt_step_what(how), bad);
		}
	}
	lt_expect(runs > 0, "savepoint", "money_batch ran no statement: a batch is one "
	          "transaction around each transfer's statements");
}

/* money_reconcile() reads only (money.h): watched through a db hook, it
 * sends no statement that writes or makes anything, not even a
 * temporary table it drops again. Then its k-th statement refused, for
 * every k: an error, never 0 with half-filled counts, *out as it was (no
 * figure of an audit that did not finish), no transaction left open (an
 * audit that reads inside one, for a single snapshot, must end it on its
 * error paths too), and nothing left behind that the next audit on the
 * same connection trips over: that one answers 0 and finds the books in
 * order. */
void reconcile__every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);
	lt_expect_int(transfer(db, 1, 1, 2, 50, 5, 1), 0, "money_transfer");
	struct money_audit a0 = { -1, -1, -1, -1 };
	int rc0 = audit_reads_only(db, &a0);
	lt_expect(rc0 == 0 && a0.unbalanced == 0 && a0.drifted == 0 && a0.negative == 0 &&
	          a0.total == 0, "reconcile", "money_reconcile of correct books returned %d with "
	          "unbalanced %lld, drifted %lld, negative %lld, total %lld, expected 0 and all "
	          "zeros (%s)", rc0, (long long)a0.unbalanced, (long long)a0.drifted,
	          (long long)a0.negative, (long long)a0.total, labtest_why(db));
	int k;
	char before[LT_SESSION_LEN];
	lt_session_own_values(t, db);
	lt_session(t, db, before, sizeof before);
	for (k = 1; k <= SWEEP_MAX; k++) {
		/* The figures of an earlier audit, which a failed one leaves. */
		struct money_audit a = { 7, 7, 7, 7 };
		lt_step_arm(LT_STEP_FAILS, k);
		int rc = money_reconcile(db, &a);
		if (!lt_step_disarm())
			break;
		closed_after_refusal(t, db, "money_reconcile", k, rc);
		/* A setting the audit put on its session and meant to take off at
		 * its end (a read-only mode, PRAGMA query_only) stays when a query
		 * fails first: every later sale on the connection is refused. */
		char what[80];
		snprintf(what, sizeof what, "money_reconcile with its statement %d refused", k);
		lt_session_unchanged(t, db, before, what, "reconcile");
		lt_expect(rc < 0, "reconcile", "statement %d of money_reconcile refused: it returned "
		          "%d, expected a negative code (an audit that failed must not say the books "
		          "balance)", k, rc);
		lt_expect(a.unbalanced == 7 && a.drifted == 7 && a.negative == 7 && a.total == 7,
		          "reconcile", "statement %d of money_reconcile refused: *out held 7, 7, 7, 7 "
		          "from an earlier audit and now holds unbalanced %lld, drifted %lld, negative "
		          "%lld, total %lld: money.h says a failed audit leaves *out as it was (a "
		          "caller that logs *out despite the error, or reads only unbalanced, would "
		          "see figures of an audit that never finished, mixed with old ones). Fill a "
		          "copy and give it to *out once every query has answered", k,
		          (long long)a.unbalanced, (long long)a.drifted, (long long)a.negative,
		          (long long)a.total);
		struct money_audit b = { -1, -1, -1, -1 };
		int again = money_reconcile(db, &b);
		lt_expect(again == 0 && b.unbalanced == 0 && b.drifted == 0 && b.negative == 0 &&
		          b.total == 0, "reconcile", "statement %d of money_reconcile refused, then "
		          "money_reconcile again on the same connection: returned %d (%s) with "
		          "unbalanced %lld, drifted %lld, negative %lld, total %lld, expected 0 and all "
		          "zeros: the failed audit left something behind on the connection (a "
		          "temporary table it meant to drop at its end?)", k, again, labtest_why(db),
		          (long long)b.unbalanced, (long long)b.drifted, (long long)b.negative,
		          (long long)b.total);
	}
	lt_expect(k > 1, "reconcile", "money_reconcile ran no statement at all");
}

/* money_balance() with its k-th statement refused, for every k: the
 * database's error (not MONEY_NO_ACCOUNT: the account is there, and not
 * 0 with a figure never read), no transaction left open and the session
 * as it was (a read inside BEGIN READ ONLY, for one snapshot of the
 * sub-accounts, must end it on its error paths too: on PostgreSQL a
 * failed query leaves the transaction aborted, and the next call's
 * statements are refused in it), and the connection ready for the next
 * call: the balance read again, and a sale on it, are answered as before. */
void balance__every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 500);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 3, 0);
	lt_expect_int(transfer(db, 1, 1, 2, 50, 5, 3), 0, "money_transfer");
	int64_t held = 5;
	char before[LT_SESSION_LEN];
	lt_session_own_values(t, db);
	lt_session(t, db, before, sizeof before);
	int k;
	for (k = 1; k <= SWEEP_MAX; k++) {
		int64_t got = -1;
		lt_step_arm(LT_STEP_FAILS, k);
		int rc = money_balance(db, FEE_ACCOUNT, &got);
		if (!lt_step_disarm())
			break;
		closed_after_refusal(t, db, "money_balance", k, rc);
		char what[80];
		snprintf(what, sizeof what, "money_balance with its statement %d refused", k);
		lt_session_unchanged(t, db, before, what, "rollback");
		lt_expect(rc < 0 && rc != MONEY_NO_ACCOUNT, "rollback", "statement %d of money_balance "
		          "of fee account %d (which holds %lld) refused: it returned %d, expected the "
		          "database's error%s", k, FEE_ACCOUNT, (long long)held, rc,
		          rc == MONEY_NO_ACCOUNT ? " (MONEY_NO_ACCOUNT says the account was never "
		          "opened: is every failed read taken for \"no row\"?)" : rc >= 0 ? " (a "
		          "balance that was never read must not be reported)" : "");
		int64_t again = -1;
		rc = money_balance(db, FEE_ACCOUNT, &again);
		lt_expect(rc == 0 && again == held, "rollback", "statement %d of money_balance refused, "
		          "then money_balance again on the same connection: returned %d (%s) with "
		          "%lld, expected 0 with %lld", k, rc, labtest_why(db), (long long)again,
		          (long long)held);
		rc = transfer(db, 100 + k, 1, 2, 10, 1, 3);
		lt_expect(rc == 0, "rollback", "statement %d of money_balance refused, then a sale of "
		          "10 on the same connection: returned %d (%s), expected 0: did the failed "
		          "read leave something on the connection?", k, rc, labtest_why(db));
		held += 1;
		const char *bad = books_fault(t);
		lt_expect(bad == NULL, "rollback", "statement %d of money_balance refused, then a "
		          "sale: %s", k, bad);
	}
	lt_expect(k > 1, "balance", "money_balance ran no statement at all");
}

/* A balance past INT64_MAX: three sub-accounts of 2^62 each (set straight
 * in the table: no sale in the checks makes that much) add up to 3 * 2^62,
 * which no int64_t holds. money_balance says so with an error; a figure
 * clamped to INT64_MAX (strtoll's answer when a sum overflows it) or
 * wrapped below zero is a balance nobody has. */
void balance__past_int64_max_is_an_error(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 70, 3, 0);
	labtest_exec(t, "UPDATE accounts SET balance = 4611686018427387904 WHERE id = 70");
	int64_t got = -1;
	int rc = money_balance(db, 70, &got);
	lt_expect(rc < 0, "balance", "money_balance of account 70, whose three sub-accounts hold "
	          "2^62 each (3 * 2^62 in all, past INT64_MAX), returned %d with %lld; expected an "
	          "error: no int64_t holds that balance%s", rc, (long long)got,
	          rc == 0 && got == INT64_MAX ? " (INT64_MAX is what strtoll answers for a number "
	          "past it: is the sum read with strtoll, its ERANGE not looked at?)" : rc == 0 &&
	          got < 0 ? " (it wrapped below zero: is the sum added up in C?)" : "");
	/* The edges themselves are balances: INT64_MAX on one sub-account,
	 * INT64_MIN as two of -2^62. strtoll answers those very values for
	 * numbers past them, so a read that takes LLONG_MAX or LLONG_MIN for
	 * an overflow, not errno's ERANGE, refuses two balances that fit. */
	static const struct { int64_t id; int subs; const char *sql; int64_t want; } edge[] = {
		{ 71, 1, "UPDATE accounts SET balance = 9223372036854775807 WHERE id = 71", INT64_MAX },
		{ 72, 2, "UPDATE accounts SET balance = -4611686018427387904 WHERE id = 72", INT64_MIN },
	};
	for (int i = 0; i < 2; i++) {
		open_account(db, edge[i].id, edge[i].subs, 0);
		labtest_exec(t, edge[i].sql);
		got = 12345;
		rc = money_balance(db, edge[i].id, &got);
		lt_expect(rc == 0 && got == edge[i].want, "balance", "money_balance of account %lld, "
		          "whose rows add up to exactly %s, returned %d with %lld: that balance fits an "
		          "int64_t (is the value strtoll gives at its edge taken for an overflow, "
		          "rather than errno == ERANGE?)", (long long)edge[i].id, i ? "INT64_MIN" :
		          "INT64_MAX", rc, (long long)got);
	}
}

/* A balance that a sentinel would take for "no account": MONEY_OUTSIDE
 * at exactly -1 (1 brought into fresh books). A read that answers a sum
 * of -1 with MONEY_NO_ACCOUNT ("a balance is never negative",
 * COALESCE(SUM(...), -1)) refuses an account that exists; only an account
 * with no rows is none. */
/* The audit's negative figure counts every balance row below zero but
 * MONEY_OUTSIDE's (money.h), whatever its id: a row of account -5 (no
 * money_open makes one; a migration or a hand edit does, and the audit is
 * there for rows that did not come from the API) below zero is one. An
 * audit that counts only ids above zero ("accounts start at 1") misses
 * it. Judged against an audit of the same books just before. */
void reconcile__a_row_below_zero_under_any_id(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 1, 1, 100);
	open_account(db, 3, 1, 0);
	struct money_audit before = { -7, -7, -7, -7 }, after = { -7, -7, -7, -7 };
	int rc = money_reconcile(db, &before);
	lt_expect(rc == 0, "reconcile", "money_reconcile of sound books: %d", rc);
	labtest_exec(t, "UPDATE accounts SET id = -5, balance = -3 WHERE id = 3");
	rc = money_reconcile(db, &after);
	lt_expect(rc == 0 && after.negative == before.negative + 1 &&
	          after.total == before.total - 3, "reconcile", "after account 3's row was turned "
	          "into a row of account -5 holding -3, money_reconcile returned %d with negative "
	          "%lld and total %lld, expected %lld and %lld: every balance row below zero but "
	          "MONEY_OUTSIDE's is counted, whatever its id (is the row left out by id > 0?)",
	          rc, (long long)after.negative, (long long)after.total,
	          (long long)(before.negative + 1), (long long)(before.total - 3));
}

void balance__values_a_sentinel_could_take(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	int64_t brought = -sql_int(t, "SELECT COALESCE(SUM(balance), 0) FROM accounts WHERE id = 0");
	lt_expect(brought == 0, NULL, "fresh books hold %lld already", (long long)brought);
	open_account(db, 1, 1, 1);
	int64_t bal = 12345;
	int rc = money_balance(db, MONEY_OUTSIDE, &bal);
	lt_expect(rc == 0 && bal == -1, "balance", "money_balance of MONEY_OUTSIDE after 1 was "
	          "brought into fresh books returned %d with balance %lld: expected 0 and -1. "
	          "MONEY_OUTSIDE's balance is minus all that came in, so any value is a balance, "
	          "-1 too: is -1 (a COALESCE's fallback) taken for \"no account\"? Only an account "
	          "with no rows is none", rc, (long long)bal);
	bal = 12345;
	rc = money_balance(db, 2, &bal);
	lt_expect(rc == MONEY_NO_ACCOUNT, "balance", "money_balance of account 2, never opened, "
	          "returned %d with balance %lld: expected MONEY_NO_ACCOUNT", rc, (long long)bal);
}

/* money_balance reads only (money.h): it works on a session that may not
 * write, as a hot standby or a read replica gives (PostgreSQL's
 * default_transaction_read_only, MariaDB's SET SESSION TRANSACTION READ
 * ONLY, SQLite's PRAGMA query_only), and a sale in flight does not hold
 * it up. Behind a row another transaction has written, with the reader's
 * lock timeout at 1 s, a read that locks (FOR SHARE, LOCK IN SHARE MODE)
 * waits for that transaction, which does not end before the read does, so
 * it can only answer KIT_DB_BUSY; a plain read answers at once. */
void balance__reads_only(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = books(t);
	open_account(db, 5, 2, 7);
	struct kit_db *reader = labtest_connect(t);
	assert_int_equal(kit_db_set_lock_timeout(reader, 1000), 0);
	const char *ro = t->engine == KIT_DB_POSTGRES ? "SET default_transaction_read_only = on"
	               : t->engine == KIT_DB_MYSQL ? "SET SESSION TRANSACTION READ ONLY"
	               : "PRAGMA query_only = ON";
	lt_expect(kit_db_exec(reader, ro, 0, NULL) == 0, NULL, "%s: %s", ro, labtest_why(reader));
	int64_t bal = -1;
	int rc = money_balance(reader, 5, &bal);
	lt_expect(rc == 0 && bal == 7, "balance", "money_balance of account 5 (holding 7) on a "
	          "read-only session (%s, what a hot standby or a read replica gives) returned %d "
	          "with balance %lld (%s), expected 0 and 7: money.h, a balance reads only. Does it "
	          "lock the rows it reads (FOR SHARE, LOCK IN SHARE MODE), or open a write "
	          "transaction?", ro, rc, (long long)bal, labtest_why(reader));
	kit_db_close(reader);

	reader = labtest_connect(t);
	struct kit_db *holder = labtest_connect(t);
	assert_int_equal(kit_db_set_lock_timeout(reader, 1000), 0);
	int holding = kit_db_begin(holder);
	if (holding == 0)
		holding = kit_db_exec(holder, "UPDATE accounts SET balance = balance WHERE id = 5",
		                      0, NULL);
	char why_h[200];
	snprintf(why_h, sizeof why_h, "%s", holding ? labtest_why(holder) : "");
	bal = -1;
	rc = holding ? -99 : money_balance(reader, 5, &bal);
	char why[200];
	snprintf(why, sizeof why, "%s", labtest_why(reader));
	kit_db_rollback(holder);
	kit_db_close(holder);
	kit_db_close(reader);
	lt_expect(holding == 0, NULL, "holding account 5's rows from another connection: %s",
	          why_h);
	lt_expect(rc == 0 && bal == 7, "balance", "money_balance of account 5 (holding 7) while "
	          "another connection's open transaction held its rows returned %d with balance "
	          "%lld (%s), expected 0 and 7 at once: the holder does not let go before the read "
	          "ends, so only a read that waits for its lock answers KIT_DB_BUSY (%d). money.h: "
	          "a balance reads only, and a sale in flight does not hold it up; does it lock the "
	          "rows it reads (FOR SHARE, LOCK IN SHARE MODE)?", rc, (long long)bal, why,
	          KIT_DB_BUSY);
}
