/*
 * test_db_mysql.c: kit/db's MariaDB backend (kit/db_mysql.h) on a real
 * server: the rules the other engines do not share. Every check runs in a
 * database of its own on HOTROW_MYSQL_URL, and is skipped with a notice
 * without it (failed with HOTROW_REQUIRE_MYSQL=1).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit/db.h"
#include "kit/failpoint.h"
#include "kit/url.h"
#include "tests/harness/labtest.h"
#include "util/clock.h"

static void make_posts(struct labtest *t)
{
	labtest_exec(t, "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT, likes INTEGER NOT NULL DEFAULT 0)"
	                " ENGINE=InnoDB;"
	                "INSERT INTO posts (id, title) VALUES (1, 'one'), (2, 'two')");
}

static int first_text(void *arg, int ncols, const char *const *values)
{
	snprintf(arg, 128, "%s", ncols > 0 && values[0] ? values[0] : "(null)");
	return 0;
}

/* $1 twice is bound twice; $ inside a literal or a comment is text; a
 * plain integer binds as an integer (LIMIT), anything else as text. */
static void placeholders__reused_and_quoted(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	char got[128] = "";

	const char *p[] = { "x", "y" };
	assert_int_equal(kit_db_query(db, "SELECT CONCAT('$1 it''s \\'$2\\' ', $1, /* $2 */ $2, $1)",
	                              2, p, first_text, got), 0);
	assert_string_equal(got, "$1 it's '$2' xyx");

	const char *n[] = { "007" };
	assert_int_equal(kit_db_query(db, "SELECT $1", 1, n, first_text, got), 0);
	assert_string_equal(got, "007");   /* not a plain integer: text, kept as given */

	const char *q[] = { "1" };
	lt_expect_int(kit_db_query(db, "SELECT ? + $1", 1, q, first_text, got), KIT_DB_ERR,
	              "a ? placeholder is refused");
	lt_expect(strstr(kit_db_errmsg(db), "write $1") != NULL, NULL, "message: %s", kit_db_errmsg(db));
	lt_expect_int(kit_db_query(db, "SELECT $2", 2, p, first_text, got), KIT_DB_ERR,
	              "$1 given and not used");
	lt_expect(strstr(kit_db_errmsg(db), "parameter $1 is given but the statement does not use it"),
	          NULL, "message: %s", kit_db_errmsg(db));
}

/* Rows found, not rows changed (CLIENT_FOUND_ROWS), in kit_db_changes and
 * in ROW_COUNT() alike; ON DUPLICATE KEY UPDATE counts 1, 2 or 1. */
static void changes__are_rows_found(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_posts(t);

	const char *same[] = { "0", "1" };
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET likes = $1 WHERE id = $2", 2, same), 0);
	lt_expect_int(kit_db_changes(db), 1, "an UPDATE writing the value already there counts its row");
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET likes = 0 WHERE id = 1", 0, NULL), 0);
	lt_expect_int(labtest_int(t, "SELECT ROW_COUNT()"), 1, "ROW_COUNT() after it");

	const char *sql = "INSERT INTO posts (id, likes) VALUES ($1, $2) "
	                  "ON DUPLICATE KEY UPDATE likes = VALUES(likes)";
	const char *fresh[] = { "3", "5" }, *update[] = { "3", "6" };
	assert_int_equal(kit_db_exec(db, sql, 2, fresh), 0);
	lt_expect_int(kit_db_changes(db), 1, "ON DUPLICATE KEY UPDATE, a new row");
	assert_int_equal(kit_db_exec(db, sql, 2, update), 0);
	lt_expect_int(kit_db_changes(db), 2, "ON DUPLICATE KEY UPDATE, a row updated");
	assert_int_equal(kit_db_exec(db, sql, 2, update), 0);
	lt_expect_int(kit_db_changes(db), 1, "ON DUPLICATE KEY UPDATE, a row matched and left");
}

/* Two connections on one row: the second waits for the first's row lock
 * for its lock timeout (1 s), then fails busy (1205), and its transaction
 * is over: refused until ROLLBACK, and a COMMIT says it failed. */
static void lock__wait_then_busy(void **state)
{
	struct labtest *t = *state;
	struct kit_db *a = labtest_db(t), *b = labtest_connect(t);
	make_posts(t);

	assert_int_equal(kit_db_set_lock_timeout(b, 1000), 0);
	assert_int_equal(kit_db_begin(a), 0);
	assert_int_equal(kit_db_exec(a, "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0, NULL), 0);

	assert_int_equal(kit_db_begin(b), 0);
	assert_int_equal(kit_db_exec(b, "UPDATE posts SET likes = likes + 10 WHERE id = 2", 0, NULL), 0);
	int64_t t0 = util_now_ns();
	int rc = kit_db_exec(b, "UPDATE posts SET likes = likes + 10 WHERE id = 1", 0, NULL);
	int64_t waited_ms = (util_now_ns() - t0) / 1000000;
	lt_expect_int(rc, KIT_DB_BUSY, "the second writer on a locked row");
	lt_expect(waited_ms >= 900, NULL, "it waited for the lock first (%lld ms, timeout 1 s)",
	          (long long)waited_ms);
	lt_expect(strstr(kit_db_errmsg(b), "mariadb: UPDATE posts") && strstr(kit_db_errmsg(b), "1205"),
	          NULL, "message names engine, statement, cause: %s", kit_db_errmsg(b));

	lt_expect_int(kit_db_exec(b, "SELECT 1", 0, NULL), KIT_DB_ERR, "a statement after the failure");
	lt_expect_int(kit_db_commit(b), KIT_DB_ERR, "COMMIT of the failed transaction");
	lt_expect(strstr(kit_db_errmsg(b), "already failed") != NULL, NULL, "message: %s", kit_db_errmsg(b));
	assert_int_equal(kit_db_commit(a), 0);

	/* b's first UPDATE (row 2) went with its transaction. */
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 1, "row 1: a's update only");
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 2"), 0, "row 2: b's update undone");
	/* b works again, outside a transaction too. */
	assert_int_equal(kit_db_exec(b, "UPDATE posts SET likes = likes + 10 WHERE id = 2", 0, NULL), 0);
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 2"), 10, "b after the failure");
	kit_db_close(b);
}

struct second_lock { struct kit_db *db; int rc; };

static void *take_row_2(void *arg)
{
	struct second_lock *s = arg;
	s->rc = kit_db_exec(s->db, "UPDATE posts SET likes = likes + 1 WHERE id = 2", 0, NULL);
	return NULL;
}

/* a holds row 1 and waits for row 2; b holds row 2 and asks for row 1:
 * InnoDB picks one as the deadlock's victim (1213, busy) and rolls it
 * back; the other goes on and commits. */
static void lock__deadlock_is_busy(void **state)
{
	struct labtest *t = *state;
	/* a and b are connections of their own: the test's own one watches */
	struct kit_db *a = labtest_connect(t), *b = labtest_connect(t);
	make_posts(t);
	assert_int_equal(kit_db_set_lock_timeout(a, 10000), 0);
	assert_int_equal(kit_db_set_lock_timeout(b, 10000), 0);

	assert_int_equal(kit_db_begin(a), 0);
	assert_int_equal(kit_db_begin(b), 0);
	assert_int_equal(kit_db_exec(a, "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0, NULL), 0);
	assert_int_equal(kit_db_exec(b, "UPDATE posts SET likes = likes + 1 WHERE id = 2", 0, NULL), 0);
	struct second_lock s = { a, 0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, take_row_2, &s), 0);
	/* Let a's wait begin (InnoDB's LOCK WAIT count for this test's
	 * database, read as labtest_innodb_waiters() reads it: the tables
	 * behind it are renewed only when no client on the server read them
	 * in the last 0.1 s, and other suites may poll them): then b's
	 * request closes the cycle. */
	int64_t waiting = labtest_innodb_waiters(t, 1);
	int rb = kit_db_exec(b, "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0, NULL);
	pthread_join(th, NULL);   /* before any check: a failed one leaves the test */
	lt_expect(waiting >= 0, NULL, "reading INNODB_TRX: %s", labtest_why(labtest_db(t)));
	lt_expect(waiting == 1, NULL, "a waits for row 2: INNODB_TRX showed %lld sessions in LOCK "
	          "WAIT%s", (long long)waiting, labtest_innodb_note());

	lt_expect_int((s.rc == KIT_DB_BUSY) + (rb == KIT_DB_BUSY), 1, "one victim");
	lt_expect_int((s.rc == 0) + (rb == 0), 1, "one survivor");
	struct kit_db *victim = s.rc == KIT_DB_BUSY ? a : b, *winner = victim == a ? b : a;
	lt_expect(strstr(kit_db_errmsg(victim), "1213") != NULL, NULL,
	          "the victim hears of a deadlock: %s", kit_db_errmsg(victim));
	lt_expect_int(kit_db_commit(victim), KIT_DB_ERR, "the victim's COMMIT");
	assert_int_equal(kit_db_commit(winner), 0);
	lt_expect_int(labtest_int(t, "SELECT sum(likes) FROM posts"), 2, "the survivor's two updates only");
	kit_db_close(a);
	kit_db_close(b);
}

/* The commit failpoint stages a COMMIT whose answer was lost: the caller
 * hears an error, the rows are committed, no transaction is left open. */
static void commit__reply_lost_failpoint(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_posts(t);

	kit_fp_clear();
	assert_int_equal(kit_fp_set("db-commit-reply-lost", KIT_FP_ERROR, 1), 0);
	assert_int_equal(kit_db_begin(db), 0);
	assert_int_equal(kit_db_exec(db, "UPDATE posts SET likes = 7 WHERE id = 1", 0, NULL), 0);
	int rc = kit_db_commit(db);
	kit_fp_clear();
	lt_expect_int(rc, KIT_DB_ERR, "COMMIT with its answer lost");
	lt_expect(strstr(kit_db_errmsg(db), "mariadb: COMMIT") != NULL, NULL, "message: %s", kit_db_errmsg(db));
	struct kit_db *other = labtest_connect(t);
	int64_t likes = 0;
	assert_int_equal(kit_db_query_int(other, "SELECT likes FROM posts WHERE id = 1", 0, NULL, &likes), 0);
	kit_db_close(other);
	lt_expect_int(likes, 7, "the update, seen from another connection: it did commit");
	lt_expect_int(labtest_int(t, "SELECT @@in_transaction"), 0, "a transaction left open");
}

/* A password in the URL never reaches a message. */
static void open__password_hidden(void **state)
{
	(void)state;
	struct kit_db *db;
	const char *url = "mysql://root:sekret-pw@localhost/nodb?socket=/nonexistent-dir/mysqld.sock";

	assert_int_equal(kit_db_open(&db, url), KIT_DB_ERR);
	lt_expect_int(kit_db_engine(db), KIT_DB_MYSQL, "engine of a mysql:// URL");
	lt_expect(strncmp(kit_db_errmsg(db), "mariadb: cannot connect", 23) == 0, NULL,
	          "message: %s", kit_db_errmsg(db));
	lt_expect(strstr(kit_db_errmsg(db), "sekret") == NULL, NULL, "message: %s", kit_db_errmsg(db));
	lt_expect_int(kit_db_exec(db, "SELECT 1", 0, NULL), KIT_DB_ERR, "exec on a failed handle");
	kit_db_close(db);

	char shown[200];
	kit_url_redact(url, shown, sizeof shown);
	lt_expect(strstr(shown, "sekret") == NULL && strstr(shown, "root:***@") != NULL, NULL,
	          "redacted: %s", shown);

	assert_int_equal(kit_db_open(&db, "mariadb://root@localhost/db?port=1"), KIT_DB_ERR);
	lt_expect(strstr(kit_db_errmsg(db), "unknown setting \"port\"") != NULL, NULL,
	          "message: %s", kit_db_errmsg(db));
	kit_db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LABTEST_MYSQL(placeholders__reused_and_quoted),
		LABTEST_MYSQL(changes__are_rows_found),
		LABTEST_MYSQL(lock__wait_then_busy),
		LABTEST_MYSQL(lock__deadlock_is_busy),
		LABTEST_MYSQL(commit__reply_lost_failpoint),
		cmocka_unit_test(open__password_hidden),
	};
	return labtest_main("kit/db-mysql", tests);
}
