/*
 * test_db.c: kit/db on SQLite, PostgreSQL and MariaDB, through the lab
 * harness (so each check runs in its own file, schema or database, and the
 * server checks skip with a notice when HOTROW_PG_URL / HOTROW_MYSQL_URL is
 * unset). The MariaDB backend's own rules (kit/db_mysql.h) are checked at
 * the end, on a real server: placeholders, rows found, a row lock's wait
 * and timeout, a deadlock.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit/db.h"
#include "kit/failpoint.h"
#include "util/clock.h"
#include "tests/harness/labtest.h"

static const char *engine_prefix(const struct labtest *t)
{
	return t->engine == KIT_DB_SQLITE ? "sqlite: "
	     : t->engine == KIT_DB_MYSQL ? "mariadb: " : "postgres: ";
}

static void make_posts(struct labtest *t)
{
	labtest_exec(t, "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT, likes INTEGER NOT NULL DEFAULT 0);"
	                "INSERT INTO posts (id, title) VALUES (1, 'one'), (2, 'two'), (3, NULL)");
}

static void exec__params_by_number(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_posts(t);

	/* $2 comes before $1 in the text: binding is by number, not position. */
	const char *p[] = { "1", "5" };
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET likes = likes + $2 WHERE id = $1", 2, p), 0);
	lt_expect_int(kit_db_changes(db), 1, "rows changed by the UPDATE");
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 5, "likes after +5");

	const char *q[] = { "it's; a 'title'" };
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET title = $1 WHERE id = 2", 1, q), 0);
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM posts WHERE title = 'it''s; a ''title'''"),
	              1, "text parameter stored verbatim");
}

static void exec__null_param_and_changes(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_posts(t);

	const char *p[] = { NULL };
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET title = $1", 1, p), 0);
	lt_expect_int(kit_db_changes(db), 3, "rows changed by an UPDATE of every row");
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM posts WHERE title IS NULL"), 3, "NULL titles");
}

/* An unused parameter is a bug in the statement (a $2 typed as $1): libpq
 * refuses it, so SQLite must too, with the same words. */
static void exec__refuses_unused_params(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_posts(t);

	const char *p[] = { "1", "5" };
	const char *sql = "UPDATE posts SET likes = likes + $1 WHERE id = $1";
	lt_expect_int(kit_db_exec(db, sql, 2, p), KIT_DB_ERR, "exec with $2 given and unused");
	char want[200];
	snprintf(want, sizeof want, "%s%s: 2 parameters given, but the statement uses 1",
	         engine_prefix(t), sql);
	assert_string_equal(kit_db_errmsg(db), want);

	int64_t v = 0;
	lt_expect_int(kit_db_query_int(db, "SELECT likes FROM posts WHERE id = $1", 2, p, &v),
	              KIT_DB_ERR, "query with $2 given and unused");
	lt_expect(strstr(kit_db_errmsg(db), "2 parameters given, but the statement uses 1") != NULL,
	          NULL, "message: %s", kit_db_errmsg(db));
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 0,
	              "likes after the refused UPDATE");
}

static void query_int__norow_and_null(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	int64_t v = 99;
	make_posts(t);

	const char *p[] = { "42" };
	assert_int_equal(kit_db_query_int(db, "SELECT likes FROM posts WHERE id = $1", 1, p, &v), KIT_DB_NOROW);
	lt_expect_int(v, 99, "out untouched when there is no row");
	assert_int_equal(kit_db_query_int(db, "SELECT NULL", 0, NULL, &v), 0);
	lt_expect_int(v, 0, "NULL reads as 0");
	const char *lim[] = { "2" };
	assert_int_equal(kit_db_query_int(db, "SELECT count(*) FROM (SELECT id FROM posts ORDER BY id LIMIT $1) s",
	                                  1, lim, &v), 0);
	lt_expect_int(v, 2, "LIMIT takes a parameter");
}

struct rows { int n; int nulls; int ended; char first[32]; };

static int collect(void *arg, int ncols, const char *const *values)
{
	struct rows *r = arg;
	assert_int_equal(ncols, 2);
	r->ended += values[ncols] == NULL;      /* as argv: a column past the last reads NULL */
	if (r->n == 0)
		snprintf(r->first, sizeof r->first, "%s", values[1] ? values[1] : "(null)");
	r->nulls += values[1] == NULL;
	r->n++;
	return 0;
}

static int stop_at_two(void *arg, int ncols, const char *const *values)
{
	(void)ncols;
	(void)values;
	return ++*(int *)arg == 2 ? 7 : 0;
}

static void query__walks_rows(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct rows r = { 0, 0, 0, "" }, p = { 0, 0, 0, "" };
	const char *from[] = { "0" };
	int seen = 0;
	make_posts(t);

	assert_int_equal(kit_db_query(db, "SELECT id, title FROM posts ORDER BY id", 0, NULL, collect, &r), 0);
	lt_expect_int(r.n, 3, "rows walked");
	lt_expect_int(r.nulls, 1, "NULL values seen as NULL");
	lt_expect_int(r.ended, 3, "rows whose values end with a NULL");
	assert_string_equal(r.first, "one");
	assert_int_equal(kit_db_query(db, "SELECT id, title FROM posts WHERE id > $1 ORDER BY id",
	                              1, from, collect, &p), 0);
	lt_expect_int(p.n, 3, "rows walked, with a parameter");
	lt_expect_int(p.ended, 3, "rows whose values end with a NULL, with a parameter");
	lt_expect_int(kit_db_query(db, "SELECT id, title FROM posts", 0, NULL, stop_at_two, &seen), 7,
	              "the row callback's stop value is returned");
	lt_expect_int(seen, 2, "rows walked before the stop");
}

static void exec__unique_violation_is_constraint(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_posts(t);

	const char *p[] = { "1", "again" };
	int rc = kit_db_exec(db, "INSERT INTO posts (id, title) VALUES ($1, $2)", 2, p);
	lt_expect_int(rc, KIT_DB_CONSTRAINT, "duplicate primary key");
	const char *msg = kit_db_errmsg(db);
	lt_expect(strncmp(msg, engine_prefix(t), strlen(engine_prefix(t))) == 0, NULL,
	          "message names the engine: %s", msg);
	lt_expect(strstr(msg, "INSERT INTO posts (id, title) VALUES ($1, $2)") != NULL, NULL,
	          "message names the statement: %s", msg);
	lt_expect(strstr(msg, "UNIQUE") || strstr(msg, "unique") || strstr(msg, "Duplicate entry"), NULL,
	          "message gives the cause: %s", msg);
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM posts"), 3, "rows after the refused insert");
}

static void exec__syntax_error_names_statement(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);

	int rc = kit_db_exec(db, "SELEKT  1\n  FROM nowhere", 0, NULL);
	lt_expect_int(rc, KIT_DB_ERR, "syntax error code");
	const char *msg = kit_db_errmsg(db);
	lt_expect(strstr(msg, "SELEKT 1 FROM nowhere") != NULL, NULL,
	          "statement on one line in the message: %s", msg);
}

static void tx__rollback_discards_commit_keeps(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_posts(t);

	assert_int_equal(kit_db_begin(db), 0);
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET likes = 10", 0, NULL), 0);
	assert_int_equal(kit_db_rollback(db), 0);
	lt_expect_int(labtest_int(t, "SELECT sum(likes) FROM posts"), 0, "after ROLLBACK");

	assert_int_equal(kit_db_begin(db), 0);
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET likes = 10", 0, NULL), 0);
	assert_int_equal(kit_db_commit(db), 0);
	lt_expect_int(labtest_int(t, "SELECT sum(likes) FROM posts"), 30, "after COMMIT");
}

static void tx__second_writer_gets_busy(void **state)
{
	struct labtest *t = *state;
	struct kit_db *a = labtest_db(t), *b = labtest_connect(t);
	make_posts(t);

	bool lite = kit_db_engine(b) == KIT_DB_SQLITE;
	lt_expect_int(kit_db_lock_timeout(b), lite ? 5000 : -1, "the lock timeout the kit applies at first");
	assert_int_equal(kit_db_set_lock_timeout(b, 50), 0);
	lt_expect_int(kit_db_lock_timeout(b), lite ? 50 : -1, "the lock timeout the kit applies once set to 50 ms");
	assert_int_equal(kit_db_begin(a), 0);
	assert_int_equal(kit_db_exec(a, "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0, NULL), 0);
	/* SQLite: BEGIN IMMEDIATE wants the write lock now; PostgreSQL: the row. */
	int rc = kit_db_begin(b);
	if (rc == 0)
		rc = kit_db_exec(b, "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0, NULL);
	lt_expect_int(rc, KIT_DB_BUSY, "a second writer while the first holds the lock");
	kit_db_rollback(b);
	assert_int_equal(kit_db_commit(a), 0);
	kit_db_close(b);
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 1, "only the first writer's update");
}

static void commit__after_failed_statement_fails(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_posts(t);

	/* PostgreSQL would answer this COMMIT with a quiet ROLLBACK; SQLite
	 * would commit the UPDATE. Either way the caller must not be told 0
	 * when the duplicate INSERT was ignored: it must see the failure or,
	 * on SQLite, the UPDATE that was kept. */
	assert_int_equal(kit_db_begin(db), 0);
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET likes = 1 WHERE id = 1", 0, NULL), 0);
	lt_expect_int(kit_db_exec(db, "INSERT INTO posts (id) VALUES (1)", 0, NULL), KIT_DB_CONSTRAINT,
	              "duplicate insert inside a transaction");
	int rc = kit_db_commit(db);
	if (t->engine == KIT_DB_POSTGRES) {
		lt_expect_int(rc, KIT_DB_ERR, "COMMIT of a failed PostgreSQL transaction");
		lt_expect(strstr(kit_db_errmsg(db), "rolled it back") != NULL, NULL,
		          "message: %s", kit_db_errmsg(db));
		lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 0, "UPDATE rolled back");
	} else {
		lt_expect_int(rc, 0, "SQLite and MariaDB commit the statements that succeeded");
		lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 1, "UPDATE kept");
	}
	/* Either way no transaction is left open. */
	assert_int_equal(kit_db_begin(db), 0);
	assert_int_equal(kit_db_rollback(db), 0);
}

struct trace { int n; enum kit_db_event ev[16]; int64_t t[16]; char sql[16][48]; };

static void record(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct trace *tr = arg;
	if (tr->n < 16) {
		tr->ev[tr->n] = ev;
		tr->t[tr->n] = t_ns;
		snprintf(tr->sql[tr->n], sizeof tr->sql[0], "%s", sql ? sql : "");
		tr->n++;
	}
}

static void hook__sees_statements_and_transactions(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct trace tr;
	memset(&tr, 0, sizeof tr);
	make_posts(t);

	kit_db_set_hook(db, record, &tr);
	assert_int_equal(kit_db_begin(db), 0);
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0, NULL), 0);
	assert_int_equal(kit_db_commit(db), 0);
	kit_db_set_hook(db, NULL, NULL);
	assert_int_equal(kit_db_exec(db, "SELECT 1", 0, NULL), 0);     /* not recorded */

	enum kit_db_event want[] = { KIT_DB_TX_STMT_START, KIT_DB_TX_STMT_END, KIT_DB_TX_BEGIN,
	                             KIT_DB_STMT_START, KIT_DB_STMT_END,
	                             KIT_DB_TX_STMT_START, KIT_DB_TX_STMT_END, KIT_DB_TX_COMMIT };
	lt_expect_int(tr.n, 8, "hook events");
	for (int i = 0; i < 8 && i < tr.n; i++) {
		lt_expect_int(tr.ev[i], want[i], "event kind in order");
		if (i > 0)
			lt_expect(tr.t[i] >= tr.t[i - 1], NULL, "event %d before event %d in time", i - 1, i);
	}
	assert_string_equal(tr.sql[3], "UPDATE posts SET likes = likes + 1 WHERE id = 1");
}

static void hook__exec_commit_counts_as_commit(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct trace tr;
	memset(&tr, 0, sizeof tr);
	make_posts(t);

	kit_db_set_hook(db, record, &tr);
	assert_int_equal(kit_db_exec(db, "BEGIN", 0, NULL), 0);
	assert_int_equal(kit_db_exec(db, "COMMIT", 0, NULL), 0);
	lt_expect_int(tr.n, 6, "two statements, each with a TX event");
	lt_expect_int(tr.ev[2], KIT_DB_TX_BEGIN, "BEGIN through exec");
	lt_expect_int(tr.ev[5], KIT_DB_TX_COMMIT, "COMMIT through exec");

	/* END is COMMIT's other name, as a whole word only (MariaDB has no
	 * such name). */
	if (t->engine == KIT_DB_MYSQL) {
		kit_db_set_hook(db, NULL, NULL);
		return;
	}
	memset(&tr, 0, sizeof tr);
	assert_int_equal(kit_db_exec(db, "BEGIN", 0, NULL), 0);
	assert_int_equal(kit_db_exec(db, "end", 0, NULL), 0);
	lt_expect_int(tr.n, 6, "BEGIN and end, each with a TX event");
	lt_expect_int(tr.ev[5], KIT_DB_TX_COMMIT, "end through exec");
	kit_db_set_hook(db, NULL, NULL);
}

/* db-commit-reply-lost takes the answer of a COMMIT sent as SQL too: the
 * transaction did commit, the caller hears KIT_DB_ERR. */
static void commit__exec_commit_reply_lost(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_posts(t);

	kit_fp_clear();
	assert_int_equal(kit_fp_set("db-commit-reply-lost", KIT_FP_ERROR, 1), 0);
	assert_int_equal(kit_db_exec(db, "BEGIN", 0, NULL), 0);
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET likes = 7 WHERE id = 1", 0, NULL), 0);
	int rc = kit_db_exec(db, "COMMIT", 0, NULL);
	kit_fp_clear();
	lt_expect_int(rc, KIT_DB_ERR, "COMMIT sent with kit_db_exec, its answer lost");
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 7,
	              "the update: it did commit");
}

/* db-commit-conn-lost: the COMMIT commits, the caller hears KIT_DB_ERR,
 * and on the servers the connection is gone for real: kit_db_connected()
 * says 0, the next statement fails, and the server no longer lists the
 * session. SQLite has no connection to lose: it lives on. */
/* The connection broken just before COMMIT is sent: the update is not
 * in, the caller hears KIT_DB_ERR; the servers' connection is gone, and
 * SQLite's handle, which has none to lose, has no transaction open. */
static void commit__conn_gone_before_commit(void **state)
{
	struct labtest *t = *state;
	make_posts(t);
	int64_t before = labtest_int(t, "SELECT likes FROM posts WHERE id = 1");
	for (int via_exec = 0; via_exec <= 1; via_exec++) {
		struct kit_db *db = labtest_connect(t);
		kit_fp_clear();
		assert_int_equal(kit_fp_set("db-commit-conn-gone", KIT_FP_ONCE, 1), 0);
		assert_int_equal(kit_db_begin(db), 0);
		assert_int_equal(kit_db_exec(db, "UPDATE posts SET likes = 77 WHERE id = 1", 0, NULL), 0);
		int rc = via_exec ? kit_db_exec(db, "COMMIT", 0, NULL) : kit_db_commit(db);
		int hits = kit_fp_count("db-commit-conn-gone");
		kit_fp_clear();
		lt_expect_int(hits, 1, "failpoint hits");
		lt_expect_int(rc, KIT_DB_ERR, "COMMIT with its connection gone");
		lt_expect(strstr(kit_db_errmsg(db), "db-commit-conn-gone") != NULL, NULL, "message: %s",
		          kit_db_errmsg(db));
		lt_expect_int(kit_db_connected(db), t->engine == KIT_DB_SQLITE, "kit_db_connected after it");
		if (t->engine == KIT_DB_SQLITE)
			lt_expect_int(kit_db_begin(db), 0, "BEGIN on the same handle: no transaction open");
		kit_db_close(db);
		lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), before,
		              "the update, seen from another connection: it never committed");
	}
}

static void commit__conn_lost_after_commit(void **state)
{
	struct labtest *t = *state;
	make_posts(t);
	struct kit_db *db = labtest_connect(t);
	int64_t pid = 0;
	if (t->engine != KIT_DB_SQLITE)
		assert_int_equal(kit_db_query_int(db, t->engine == KIT_DB_MYSQL ? "SELECT CONNECTION_ID()"
		                                  : "SELECT pg_backend_pid()", 0, NULL, &pid), 0);
	for (int via_exec = 0; via_exec <= 1; via_exec++) {
		kit_fp_clear();
		assert_int_equal(kit_fp_set("db-commit-conn-lost", KIT_FP_ONCE, 1), 0);
		assert_int_equal(kit_db_begin(db), 0);
		assert_int_equal(kit_db_exec(db, via_exec ? "UPDATE posts SET likes = 9 WHERE id = 1"
		                             : "UPDATE posts SET likes = 8 WHERE id = 1", 0, NULL), 0);
		int rc = via_exec ? kit_db_exec(db, "COMMIT", 0, NULL) : kit_db_commit(db);
		kit_fp_clear();
		lt_expect_int(rc, KIT_DB_ERR, "COMMIT with its connection lost");
		lt_expect(strstr(kit_db_errmsg(db), "db-commit-conn-lost") != NULL, NULL, "message: %s",
		          kit_db_errmsg(db));
		lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), via_exec ? 9 : 8,
		              "the update, seen from another connection: it did commit");
		if (t->engine == KIT_DB_SQLITE) {
			lt_expect_int(kit_db_connected(db), 1, "SQLite's handle after the failpoint");
			continue;
		}
		lt_expect_int(kit_db_connected(db), 0, "kit_db_connected after the connection broke");
		lt_expect_int(kit_db_exec(db, "SELECT 1", 0, NULL), KIT_DB_ERR, "a statement after it");
		int64_t listed = 1;
		for (int i = 0; i < 100 && listed; i++) {
			char sql[160];
			snprintf(sql, sizeof sql, t->engine == KIT_DB_MYSQL
			         ? "SELECT count(*) FROM information_schema.processlist WHERE id = %lld"
			         : "SELECT count(*) FROM pg_stat_activity WHERE pid = %lld", (long long)pid);
			listed = labtest_int(t, sql);
			if (listed)
				util_sleep_ns(50000000);
		}
		lt_expect_int(listed, 0, "the server's sessions still listing the broken one after 5 s");
		break;
	}
	kit_db_close(db);
}

static void open__bad_urls_say_why(void **state)
{
	(void)state;
	struct kit_db *db;

	assert_int_equal(kit_db_open(&db, "sqlite:/nonexistent-dir/x/y.db"), KIT_DB_ERR);
	lt_expect(strstr(kit_db_errmsg(db), "sqlite: cannot open /nonexistent-dir/x/y.db") != NULL, NULL,
	          "message: %s", kit_db_errmsg(db));
	kit_db_close(db);

	assert_int_equal(kit_db_open(&db, "postgresql:///nodb?host=/nonexistent-socket-dir"), KIT_DB_ERR);
	lt_expect(strncmp(kit_db_errmsg(db), "postgres: cannot connect", 24) == 0, NULL,
	          "message: %s", kit_db_errmsg(db));
	lt_expect_int(kit_db_exec(db, "SELECT 1", 0, NULL), KIT_DB_ERR, "exec on a failed handle");
	kit_db_close(db);

	assert_int_equal(kit_db_open(&db, "sqlite::memory:"), 0);
	lt_expect_int(kit_db_engine(db), KIT_DB_SQLITE, "engine of sqlite::memory:");
	kit_db_close(db);
	kit_db_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LABTEST_ALL(exec__params_by_number),
		LABTEST_ALL(exec__null_param_and_changes),
		LABTEST_ALL(exec__refuses_unused_params),
		LABTEST_ALL(query_int__norow_and_null),
		LABTEST_ALL(query__walks_rows),
		LABTEST_ALL(exec__unique_violation_is_constraint),
		LABTEST_ALL(exec__syntax_error_names_statement),
		LABTEST_ALL(tx__rollback_discards_commit_keeps),
		LABTEST_ALL(tx__second_writer_gets_busy),
		LABTEST_ALL(commit__after_failed_statement_fails),
		LABTEST_ALL(hook__sees_statements_and_transactions),
		LABTEST_ALL(hook__exec_commit_counts_as_commit),
		LABTEST_ALL(commit__exec_commit_reply_lost),
		LABTEST_ALL(commit__conn_lost_after_commit),
		LABTEST_ALL(commit__conn_gone_before_commit),
		cmocka_unit_test(open__bad_urls_say_why),
	};
	return labtest_main("kit/db", tests);
}
