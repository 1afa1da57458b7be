/*
 * crashes.c: kill Lab 06's transfers for real and retry them.
 *
 * The parent opens the accounts and closes its connection (none may cross
 * fork()); the child connects, arms one failpoint and sends the sales,
 * singly or in batches, until SIGKILL ends it. The parent then plays the
 * client after a timeout: it sends every sale again with the same id, in
 * the same order, and compares what it is told and what the database
 * holds with a model that applies each sale once, in order. Buyers only
 * ever pay, so a sale refused once is refused again: the model's answer
 * does not depend on where the child died.
 */
#include "tests/labs/06-money/crashes.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kit/failpoint.h"
#include "labs/06-money/money.h"
#include "tests/harness/labtest.h"
#include "tests/harness/sql.h"

#define SALES    60
#define BUYERS   4              /* accounts 1..4, OPENING each */
#define SELLERS  4              /* accounts 11..14 */
#define OPENING  500
#define PRICE    40             /* every sale; 15 per buyer ask 600 of 500 */
#define FEE      4
#define BATCH    8
#define FEE_ACCOUNT 99
#define FEE_SUBS 4

static const struct money_fees fees = { FEE_ACCOUNT, FEE_SUBS };

static struct money_transfer sale(int i)
{
	return (struct money_transfer){ .id = i + 1, .from = 1 + i % BUYERS,
	                                .to = 11 + i % SELLERS, .amount = PRICE, .fee = FEE };
}

/* What the books hold after every sale once, in order. */
struct model {
	int applied[SALES];          /* 1 applied, 0 refused */
	int napplied;
	int64_t buyer[BUYERS], seller[SELLERS], fee_sub[FEE_SUBS];
};

static void model_run(struct model *m)
{
	memset(m, 0, sizeof *m);
	for (int b = 0; b < BUYERS; b++)
		m->buyer[b] = OPENING;
	for (int i = 0; i < SALES; i++) {
		struct money_transfer t = sale(i);
		if (m->buyer[t.from - 1] < t.amount)
			continue;
		m->applied[i] = 1;
		m->napplied++;
		m->buyer[t.from - 1] -= t.amount;
		m->seller[t.to - 11] += t.amount - t.fee;
		m->fee_sub[t.id % FEE_SUBS] += t.fee;
	}
}

/* ---- the child ---- */

enum kind { BEFORE_COMMIT, AFTER_COMMIT, MID_BATCH };

struct schedule {
	enum kind kind;
	const char *failpoint;
	int nth;                     /* the hit that kills */
	int batched;
	const char *said;            /* for messages */
};

/* Write statements end inside a transaction: before-commit and mid-batch
 * hits. A COMMIT has returned to kit/db but not yet to the caller:
 * after-commit hits. Only the armed one of them fires. */
static void failpoints(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)arg;
	(void)t_ns;
	if (ev == KIT_DB_STMT_END && (lt_sql_is(sql, "INSERT") || lt_sql_is(sql, "UPDATE") ||
	                              lt_sql_is(sql, "DELETE"))) {
		kit_fp_hit("money-before-commit");
		kit_fp_hit("money-mid-batch");
	}
	if (ev == KIT_DB_TX_COMMIT)
		kit_fp_hit("money-after-commit");
}

/* Exit codes of a child that was not killed. */
enum { CHILD_DONE = 0, CHILD_BROKEN = 3 };

__attribute__((noreturn))
static void child(struct labtest *t, const struct schedule *s)
{
	alarm(60);
	struct kit_db *db;
	if (kit_db_open(&db, t->url) != 0) {
		fprintf(stderr, "child: %s\n", kit_db_errmsg(db));
		_exit(CHILD_BROKEN);
	}
	kit_fp_clear();
	kit_fp_set(s->failpoint, KIT_FP_KILL, s->nth);
	kit_db_set_hook(db, failpoints, NULL);
	for (int i = 0; i < SALES; i += s->batched ? BATCH : 1) {
		if (s->batched) {
			struct money_transfer list[BATCH];
			int results[BATCH];
			for (int j = 0; j < BATCH && i + j < SALES; j++)
				list[j] = sale(i + j);
			int n = SALES - i < BATCH ? SALES - i : BATCH;
			if (money_batch(db, &fees, list, n, results) != 0)
				break;
		} else {
			struct money_transfer one = sale(i);
			int rc = money_transfer(db, &fees, &one);
			if (rc != 0 && rc != MONEY_INSUFFICIENT)
				break;
		}
	}
	_exit(CHILD_DONE);
}

/* ---- the parent ---- */

static void open_books(struct labtest *t)
{
	struct kit_db *db = labtest_db(t);
	int rc = money_setup(db);
	lt_expect(rc == 0, NULL, "money_setup failed (%d): %s", rc, labtest_why(db));
	for (int b = 1; b <= BUYERS && rc == 0; b++)
		rc = money_open(db, b, 1, OPENING);
	for (int s = 11; s < 11 + SELLERS && rc == 0; s++)
		rc = money_open(db, s, 1, 0);
	if (rc == 0)
		rc = money_open(db, FEE_ACCOUNT, FEE_SUBS, 0);
	lt_expect(rc == 0, NULL, "money_open failed (%d): %s", rc, labtest_why(db));
}

static const char *said(int rc)
{
	switch (rc) {
	case 0: return "0";
	case MONEY_ALREADY: return "MONEY_ALREADY";
	case MONEY_INSUFFICIENT: return "MONEY_INSUFFICIENT";
	case MONEY_NO_ACCOUNT: return "MONEY_NO_ACCOUNT";
	case MONEY_INVALID: return "MONEY_INVALID";
	default: return "a database error";
	}
}

/* What the retry of sale i may be told. */
static void expect_answer(const struct model *m, int i, int rc, const char *how)
{
	if (m->applied[i])
		lt_expect(rc == 0 || rc == MONEY_ALREADY, "idempotency",
		          "expected 0 or MONEY_ALREADY, got %s (%d): %s of sale %d, which the model "
		          "applies", said(rc), rc, how, i + 1);
	else
		lt_expect(rc == MONEY_INSUFFICIENT, "conditional-debit",
		          "expected MONEY_INSUFFICIENT, got %s (%d): %s of sale %d, which the model "
		          "refuses", said(rc), rc, how, i + 1);
}

static void retry_all(struct labtest *t, const struct model *m, int batched)
{
	struct kit_db *db = labtest_db(t);
	if (batched) {
		for (int i = 0; i < SALES; i += BATCH) {
			struct money_transfer list[BATCH];
			int results[BATCH];
			int n = SALES - i < BATCH ? SALES - i : BATCH;
			for (int j = 0; j < n; j++)
				list[j] = sale(i + j);
			int rc = money_batch(db, &fees, list, n, results);
			lt_expect(rc == 0, "savepoint", "retried batch from sale %d failed (%d): %s", i + 1,
			          rc, labtest_why(db));
			for (int j = 0; j < n; j++)
				expect_answer(m, i + j, results[j], "the retried batch's result");
		}
		return;
	}
	for (int i = 0; i < SALES; i++) {
		struct money_transfer one = sale(i);
		expect_answer(m, i, money_transfer(db, &fees, &one), "the retry");
	}
}

static int64_t one(struct labtest *t, const char *fmt, int64_t a, int64_t b)
{
	char sql[256];
	snprintf(sql, sizeof sql, fmt, (long long)a, (long long)b);
	return labtest_int(t, sql);
}

/* The database against the model, balance by balance, then the ledger. */
static void verify(struct labtest *t, const struct model *m)
{
	/* The code's own audit first: whatever it keeps in this process is
	 * written then, so only what died with the child is missing. */
	struct money_audit a = { -1, -1, -1, -1 };
	struct kit_db *db = labtest_db(t);
	int rc = money_reconcile(db, &a);
	lt_expect(rc == 0, "reconcile", "money_reconcile failed (%d): %s", rc, labtest_why(db));

	char what[240];
	for (int b = 0; b < BUYERS; b++) {
		snprintf(what, sizeof what, "balance of buyer %d after the crash and the retries", b + 1);
		lt_expect_int_hint(one(t, "SELECT balance FROM accounts WHERE id = %lld AND sub = %lld",
		                       b + 1, 0), m->buyer[b], what, "idempotency");
	}
	for (int s = 0; s < SELLERS; s++) {
		snprintf(what, sizeof what, "balance of seller %d after the crash and the retries", s + 11);
		lt_expect_int_hint(one(t, "SELECT balance FROM accounts WHERE id = %lld AND sub = %lld",
		                       s + 11, 0), m->seller[s], what, "idempotency");
	}
	for (int k = 0; k < FEE_SUBS; k++) {
		int64_t got = one(t, "SELECT balance FROM accounts WHERE id = %lld AND sub = %lld",
		                  FEE_ACCOUNT, k);
		/* Short and over have different likeliest causes: name the one seen. */
		snprintf(what, sizeof what, "balance of fee sub-account %d after the crash and the "
		         "retries (%s)", k, got < m->fee_sub[k]
		         ? "short: a fee credit that waited in memory died with the process"
		         : "over: a fee credited twice, by a retry applied again or by a credit kept "
		           "in memory and written after its transfer was rolled back");
		lt_expect_int_hint(got, m->fee_sub[k], what,
		                   got < m->fee_sub[k] ? "in-memory" : "idempotency");
	}
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM transfers WHERE id > 0"),
	                   m->napplied, "transfer rows after the crash and the retries", "idempotency");
	lt_expect_int_hint(labtest_int(t,
		"SELECT count(*) FROM accounts a WHERE a.balance <> (SELECT COALESCE(SUM(e.amount), 0)"
		" FROM entries e WHERE e.account_id = a.id AND e.sub = a.sub)"), 0,
		"balance rows that differ from the sum of their entries", "in-memory");
	lt_expect_int_hint(labtest_int(t,
		"SELECT count(*) FROM (SELECT transfer_id FROM entries GROUP BY transfer_id"
		" HAVING SUM(amount) <> 0) AS x"), 0, "transfers whose entries do not sum to zero",
		"entries");

	lt_expect(a.unbalanced == 0 && a.drifted == 0 && a.negative == 0 && a.total == 0,
	          "reconcile", "expected an audit of all zeros, got unbalanced %lld, drifted %lld, "
	          "negative %lld, total %lld", (long long)a.unbalanced, (long long)a.drifted,
	          (long long)a.negative, (long long)a.total);
}

static void crash_run(struct labtest *t, const struct schedule *s)
{
	struct model m;
	model_run(&m);
	open_books(t);

	kit_db_close(t->db);
	t->db = NULL;
	fflush(NULL);
	pid_t pid = fork();
	lt_expect(pid >= 0, NULL, "fork failed");
	if (pid == 0)
		child(t, s);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0)
		;
	lt_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "transaction",
	          "expected the child to be killed %s (failpoint %s, hit %d), but it %s %d: its "
	          "transfers did not get that far", s->said, s->failpoint, s->nth,
	          WIFSIGNALED(st) ? "died of signal" : "exited with code",
	          WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));

	retry_all(t, &m, s->batched);
	verify(t, &m);
}

void crash__before_commit(void **state)
{
	/* The 38th write: the third statement of the eighth sale for five
	 * writes a sale; somewhere inside a transaction for any count. */
	const struct schedule s = { BEFORE_COMMIT, "money-before-commit", 38, 0,
	                            "inside a transfer, before its COMMIT" };
	crash_run(*state, &s);
}

void crash__after_commit(void **state)
{
	const struct schedule s = { AFTER_COMMIT, "money-after-commit", 10, 0,
	                            "after the tenth COMMIT, before money_transfer returned" };
	crash_run(*state, &s);
}

void crash__mid_batch(void **state)
{
	/* A batch of eight is 36 writes in the reference: hit 50 is inside
	 * the second batch. */
	const struct schedule s = { MID_BATCH, "money-mid-batch", 50, 1,
	                            "in the middle of the second batch" };
	crash_run(*state, &s);
}
