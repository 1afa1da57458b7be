/*
 * books.c: the fixture Lab 06's check files share (books.h).
 */
#include "tests/labs/06-money/books.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labs/06-money/money.h"
#include "tests/harness/session.h"
#include "tests/harness/sql.h"

struct kit_db *books(struct labtest *t)
{
	struct kit_db *db = labtest_db(t);
	int rc = money_setup(db);
	lt_expect(rc == 0, NULL, "money_setup failed (%d): %s", rc, labtest_why(db));
	return db;
}

void open_account(struct kit_db *db, int64_t id, int subs, int64_t opening)
{
	int rc = money_open(db, id, subs, opening);
	lt_expect(rc == 0, NULL, "money_open(%lld, %d, %lld) failed (%d): %s", (long long)id, subs,
	          (long long)opening, rc, labtest_why(db));
}

int transfer(struct kit_db *db, int64_t id, int64_t from, int64_t to, int64_t amount,
             int64_t fee, int subs)
{
	struct money_fees f = { FEE_ACCOUNT, subs };
	struct money_transfer t = { id, from, to, amount, fee };
	return money_transfer(db, &f, &t);
}

int same_fees_batch(struct labtest *t, int n, int64_t amount, int64_t fee)
{
	struct kit_db *db = books(t);
	open_account(db, 1, 1, n * amount);
	open_account(db, 2, 1, 0);
	open_account(db, FEE_ACCOUNT, 1, 0);
	struct money_fees f = { FEE_ACCOUNT, 1 };
	struct money_transfer *list = calloc((size_t)n, sizeof *list);
	int *results = calloc((size_t)n, sizeof *results);
	int rc = KIT_DB_ERR;
	if (list && results) {
		for (int i = 0; i < n; i++)
			list[i] = (struct money_transfer){ 1 + i, 1, 2, amount, fee };
		rc = money_batch(db, &f, list, n, results);
	}
	free(list);
	free(results);
	lt_expect(rc == 0, "savepoint", "money_batch of %d sales returned %d (%s)", n, rc,
	          labtest_why(db));
	return rc;
}

int64_t sql_int(struct labtest *t, const char *fmt, ...)
{
	char sql[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof sql, fmt, ap);
	va_end(ap);
	return labtest_int(t, sql);
}

/* The balance as the test reads it: the sum of the account's rows. */
int64_t balance(struct labtest *t, int64_t account)
{
	return sql_int(t, "SELECT COALESCE(SUM(balance), 0) FROM accounts WHERE id = %lld",
	               (long long)account);
}

int64_t rows_of(struct labtest *t, int64_t transfer_id)
{
	return sql_int(t, "SELECT (SELECT count(*) FROM transfers WHERE id = %lld) +"
	               " (SELECT count(*) FROM entries WHERE transfer_id = %lld)",
	               (long long)transfer_id, (long long)transfer_id);
}

/* The books as the test audits them: every transfer's entries sum to
 * zero, every balance row is the sum of its entries, none below zero but
 * the outside's, every entry on a row that exists, and the balances sum to
 * zero. Returns a description of the first fault, or NULL. */
/* A statement money_reconcile() sends that writes or makes something: an
 * INSERT, UPDATE, DELETE, REPLACE or MERGE (or a WITH that names one), a
 * CREATE, DROP, ALTER or TRUNCATE, or a SELECT ... INTO a new table; or
 * maintenance that writes: ANALYZE of a table (the statistics it writes:
 * SQLite's sqlite_stat1, PostgreSQL's pg_statistic; a replica refuses it;
 * MariaDB's ANALYZE SELECT, which only runs the query, is a read),
 * VACUUM, REINDEX, CLUSTER, OPTIMIZE, REFRESH; or
 * that locks: LOCK TABLE(S), a SELECT ... FOR UPDATE / FOR SHARE, or on
 * SQLite a BEGIN IMMEDIATE or EXCLUSIVE (kit_db_begin's, or its own),
 * which takes the file's write lock; or that asks for SERIALIZABLE, which
 * a PostgreSQL hot standby refuses. The first such statement is kept,
 * cut short. */
struct audit_writes {
	int n;
	char first[64];
};

static void audit_writes_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)t_ns;
	struct audit_writes *w = arg;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || sql == NULL)
		return;
	/* "One snapshot for the whole audit": on SQLite kit_db_begin is BEGIN
	 * IMMEDIATE, the write lock, so every sale waits for the audit, and a
	 * read-only copy of the file refuses it. A plain BEGIN (a read
	 * transaction there) or one on a server locks nothing. */
	/* SERIALIZABLE, asked for in a BEGIN, a START TRANSACTION or a SET: a
	 * PostgreSQL hot standby refuses it ("cannot use serializable mode in
	 * a hot standby"; REPEATABLE READ gives one snapshot there), and on
	 * MariaDB it makes every plain read a locking one, so the audit stops
	 * the sales it counts. */
	if (lt_sql_names(sql, "SERIALIZABLE") ||
	    (lt_sql_is(sql, "BEGIN") && (lt_sql_names(sql, "IMMEDIATE") || lt_sql_names(sql, "EXCLUSIVE")))) {
		if (w->n++ == 0)
			snprintf(w->first, sizeof w->first, "%s", sql);
		return;
	}
	if (ev != KIT_DB_STMT_START)
		return;
	static const char *const verbs[] = { "INSERT", "UPDATE", "DELETE", "REPLACE", "MERGE",
	                                     "CREATE", "DROP", "ALTER", "TRUNCATE", "LOCK" };
	bool writes = false;
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0] && !writes; i++)
		writes = lt_sql_is(sql, verbs[i]) ||
		         (lt_sql_is(sql, "WITH") && i < 5 && lt_sql_names(sql, verbs[i]));
	static const char *const upkeep[] = { "VACUUM", "REINDEX", "CLUSTER", "OPTIMIZE", "REFRESH" };
	for (size_t i = 0; i < sizeof upkeep / sizeof upkeep[0] && !writes; i++)
		writes = lt_sql_is(sql, upkeep[i]);
	if (!writes && lt_sql_is(sql, "ANALYZE") && !lt_sql_names(sql, "SELECT"))
		writes = true;
	if (!writes && lt_sql_is(sql, "SELECT") && lt_sql_names(sql, "INTO") &&
	    (lt_sql_names(sql, "TEMP") || lt_sql_names(sql, "TEMPORARY") ||
	     lt_sql_names(sql, "UNLOGGED") || lt_sql_names(sql, "TABLE")))
		writes = true;
	/* A read that locks what it reads (SELECT ... FOR UPDATE / FOR SHARE,
	 * MariaDB's LOCK IN SHARE MODE) or a LOCK TABLE(S): "no sale may change
	 * a balance while I count" stops every sale for the audit's length,
	 * and a read-only replica refuses it. */
	static const char *const row_locks[] = { "FOR UPDATE", "FOR SHARE", "FOR NO KEY UPDATE",
	                                         "FOR KEY SHARE", "LOCK IN SHARE MODE" };
	for (size_t i = 0; i < sizeof row_locks / sizeof row_locks[0] && !writes; i++)
		writes = strcasestr(sql, row_locks[i]) != NULL;
	if (writes && w->n++ == 0)
		snprintf(w->first, sizeof w->first, "%s", sql);
}

int audit_reads_only(struct kit_db *db, struct money_audit *out)
{
	struct audit_writes w = { 0, "" };
	kit_db_set_hook(db, audit_writes_hook, &w);
	int rc = money_reconcile(db, out);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(w.n == 0, "reconcile", "money_reconcile sent %d statement(s) that write, make "
	          "or lock something, the first \"%s\": money.h says the audit reads only (a "
	          "temporary table is a write: it fails on a read-only replica, and so does an "
	          "ANALYZE, which writes the tables' statistics; a repair of the "
	          "balances it found drifted hides from the next audit what this one found; a LOCK "
	          "TABLE or a read FOR UPDATE / FOR SHARE stops every sale while it counts, and a "
	          "replica refuses it; so does SERIALIZABLE on a PostgreSQL hot standby, where "
	          "REPEATABLE READ gives the one snapshot, and on MariaDB it makes every read a "
	          "locking one; on SQLite kit_db_begin is BEGIN IMMEDIATE, the write lock: read "
	          "in a plain BEGIN, or in no transaction)", w.n, w.first);
	return rc;
}

const char *books_fault(struct labtest *t)
{
	if (labtest_int(t, "SELECT count(*) FROM (SELECT t.id FROM transfers t LEFT JOIN entries e"
	                   " ON e.transfer_id = t.id GROUP BY t.id"
	                   " HAVING count(e.transfer_id) = 0 OR SUM(e.amount) <> 0) AS x") != 0)
		return "a transfer whose entries do not sum to zero (or that has none)";
	if (labtest_int(t, "SELECT count(*) FROM accounts a WHERE a.balance <>"
	                   " (SELECT COALESCE(SUM(e.amount), 0) FROM entries e"
	                   " WHERE e.account_id = a.id AND e.sub = a.sub)") != 0)
		return "a balance row that differs from the sum of its entries";
	if (labtest_int(t, "SELECT count(*) FROM accounts WHERE balance < 0 AND id <> 0") != 0)
		return "a balance row below zero";
	if (labtest_int(t, "SELECT count(*) FROM entries e WHERE NOT EXISTS (SELECT 1 FROM accounts a"
	                   " WHERE a.id = e.account_id AND a.sub = e.sub)") != 0)
		return "an entry on a sub-account that has no balance row (money moved to a row that "
		       "is not there: was a credit's row count not asked?)";
	if (labtest_int(t, "SELECT COALESCE(SUM(balance), 0) FROM accounts") != 0)
		return "balances that do not sum to zero (money made or lost)";
	return NULL;
}

void closed_after_refusal(struct labtest *t, struct kit_db *db, const char *call, int k, int rc)
{
	int64_t open = lt_in_transaction(t, db);
	lt_expect(open == 0, "rollback", "statement %d of %s refused: it returned %d and left its "
	          "connection %s: the way out after that failure skips the ROLLBACK (on "
	          "PostgreSQL and MariaDB the next BEGIN does not fail, and the next call's "
	          "writes join the open transaction)", k, call, rc,
	          open > 0 ? "inside a transaction" : "in a transaction it cannot leave");
}

bool session_kept_after_failure(struct labtest *t, struct kit_db *db, const char *before,
                                const char *what, int rc)
{
	char after[LT_SESSION_LEN];
	lt_session(t, db, after, sizeof after);
	if (strcmp(before, after) == 0)
		return true;
	lt_expect(false, "rollback", "after %s (it returned %d), the session's settings changed "
	          "from [%s] to [%s]: the call changed a setting for its run (a PRAGMA, a SET "
	          "without LOCAL) and puts the caller's value back on its success path only, so "
	          "every call that fails leaves it changed for all the connection does next. "
	          "money.h: on any failure the connection is ready for the next call. Put it back "
	          "on every way out, or better, set nothing", what, rc, before, after);
	return false;
}
