/*
 * test_sql.c: tests/harness/sql.h reads a statement as the server does:
 * past blanks, comments and parentheses, in any case, by whole words;
 * and each statement it calls an UPDATE is one the server runs as one
 * (a parenthesised SELECT on PostgreSQL and MariaDB; SQLite refuses it).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "tests/harness/labtest.h"
#include "tests/harness/session.h"
#include "tests/harness/sql.h"
#include "tests/harness/steps.h"
#include "util/clock.h"

static void sql__the_first_word_past_blanks_comments_and_parentheses(void **state)
{
	(void)state;
	static const struct { const char *sql, *verb; } cases[] = {
		{ "UPDATE posts", "UPDATE posts" },
		{ "  \n\tupdate posts", "update posts" },
		{ "-- a like\nUPDATE posts", "UPDATE posts" },
		{ "/* a like */ UPDATE posts", "UPDATE posts" },
		{ "/* one */ -- two\n /* three */(( SELECT 1))", "SELECT 1))" },
		{ "( /* inside */ SELECT 1)", "SELECT 1)" },
		{ "-- only a comment", "" },
		{ "/* never closed UPDATE posts", "" },
		{ "", "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		lt_expect(strcmp(lt_sql_verb(cases[i].sql), cases[i].verb) == 0, NULL,
		          "lt_sql_verb(\"%s\") is \"%s\", expected \"%s\"", cases[i].sql,
		          lt_sql_verb(cases[i].sql), cases[i].verb);
	lt_expect(strcmp(lt_sql_verb(NULL), "") == 0, NULL, "lt_sql_verb(NULL) is not \"\"");
}

static void sql__whole_words_in_any_case(void **state)
{
	(void)state;
	static const struct { const char *sql, *words; bool is; } cases[] = {
		{ "UPDATE posts SET likes = likes + 1", "UPDATE", true },
		{ "update posts", "UPDATE", true },
		{ "Update\nposts", "UPDATE", true },
		{ "UPDATEX", "UPDATE", false },
		{ "UPDATE_posts", "UPDATE", false },
		{ "SET lock_timeout = 10", "SET", true },
		{ "SETTINGS", "SET", false },
		{ "SET", "SET", true },
		{ "SET;", "SET", true },
		{ "SELECT likes FROM posts FOR UPDATE", "UPDATE", false },
		{ "END", "END", true },
		{ "ENDING", "END", false },
		{ "start  transaction isolation level serializable", "START TRANSACTION", true },
		{ "START /* now */ TRANSACTION", "START TRANSACTION", true },
		{ "STARTTRANSACTION", "START TRANSACTION", false },
		{ "START", "START TRANSACTION", false },
		{ "START WITH", "START TRANSACTION", false },
		{ "BEGIN IMMEDIATE", "BEGIN", true },
		{ "(SELECT 1)", "SELECT", true },
		{ "-- BEGIN\nCOMMIT", "BEGIN", false },
		{ "-- BEGIN\nCOMMIT", "COMMIT", true },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		lt_expect(lt_sql_is(cases[i].sql, cases[i].words) == cases[i].is, NULL,
		          "lt_sql_is(\"%s\", \"%s\") is %s", cases[i].sql, cases[i].words,
		          cases[i].is ? "false" : "true");
	lt_expect(!lt_sql_is(NULL, "UPDATE"), NULL, "lt_sql_is(NULL, \"UPDATE\") is true");
}

static void sql__names_as_whole_words(void **state)
{
	(void)state;
	static const struct { const char *sql, *name; bool has; } cases[] = {
		{ "UPDATE posts SET likes = likes + 1", "posts", true },
		{ "UPDATE Posts SET", "posts", true },
		{ "UPDATE public.posts SET", "posts", true },
		{ "UPDATE \"posts\" SET", "posts", true },
		{ "UPDATE posts", "posts", true },
		{ "UPDATE reposts SET", "posts", false },
		{ "UPDATE posts_archive SET", "posts", false },
		{ "UPDATE reposts SET n = 1 FROM posts", "posts", true },
		{ "UPDATE posts2 SET", "posts", false },
		{ "-- before the posts\nUPDATE log_progress SET", "posts", false },
		{ "/* posts */ UPDATE log SET /* and posts */ n = 1", "posts", false },
		{ "/* a note */UPDATE posts SET", "posts", true },
		{ "UPDATE log SET note = '-- posts'", "posts", true },
		{ "", "posts", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		lt_expect(lt_sql_names(cases[i].sql, cases[i].name) == cases[i].has, NULL,
		          "lt_sql_names(\"%s\", \"%s\") is %s", cases[i].sql, cases[i].name,
		          cases[i].has ? "false" : "true");
	lt_expect(!lt_sql_names(NULL, "posts"), NULL, "lt_sql_names(NULL, ...) is true");
	lt_expect(!lt_sql_names("UPDATE posts", ""), NULL, "an empty name is found");
}

/* What lt_sql_verb skips, the server skips too: each of these runs on
 * the engine as the statement it is read as, and an UPDATE changes a row. */
static void sql__the_server_reads_them_alike(void **state)
{
	struct labtest *t = *state;
	static const char *const updates[] = {
		"update lt_sql_rows set n = n + 1 where id = 1",
		"  \n\tUPDATE lt_sql_rows SET n = n + 1 WHERE id = 1",
		"-- a comment\nUPDATE lt_sql_rows SET n = n + 1 WHERE id = 1",
		"/* a comment */ UPDATE lt_sql_rows SET n = n + 1 WHERE id = 1",
	};
	labtest_exec(t, "CREATE TABLE lt_sql_rows (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)");
	labtest_exec(t, "INSERT INTO lt_sql_rows (id, n) VALUES (1, 0)");
	for (size_t i = 0; i < sizeof updates / sizeof updates[0]; i++) {
		lt_expect(lt_sql_is(updates[i], "UPDATE"), NULL, "\"%s\" is not read as an UPDATE",
		          updates[i]);
		labtest_exec(t, updates[i]);
	}
	int64_t n = labtest_int(t, "SELECT n FROM lt_sql_rows WHERE id = 1");
	lt_expect(n == (int64_t)(sizeof updates / sizeof updates[0]), NULL,
	          "%lld of the %zu UPDATEs changed the row", (long long)n,
	          sizeof updates / sizeof updates[0]);
	if (t->engine == KIT_DB_SQLITE)
		return;     /* SQLite refuses a statement that opens with a parenthesis */
	lt_expect(lt_sql_is("(SELECT n FROM lt_sql_rows)", "SELECT"), NULL,
	          "a parenthesised SELECT is not read as a SELECT");
	lt_expect(labtest_int(t, "(SELECT n FROM lt_sql_rows WHERE id = 1)") == n, NULL,
	          "the parenthesised SELECT did not read the row");
}

/* steps.h's lt_tx_watch_hook, on each engine: a write inside a
 * transaction (the kit's, or BEGIN and START TRANSACTION sent as SQL) is
 * not counted; one with none open is, however it is written; a read is
 * not; and a write sent again after its answer was lost (the connection
 * rolled the transaction back) is. */
static void steps__tx_watch_counts_writes_with_no_transaction(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct lt_tx_watch w = { 0 };
	const char *up = "UPDATE lt_tx_rows SET n = n + 1 WHERE id = 1";

	labtest_exec(t, "CREATE TABLE lt_tx_rows (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)");
	kit_db_set_hook(db, lt_tx_watch_hook, &w);
	lt_expect(kit_db_begin(db) == 0 && kit_db_exec(db, "INSERT INTO lt_tx_rows VALUES (1, 0)",
	          0, NULL) == 0 && kit_db_commit(db) == 0, NULL, "a transaction: %s",
	          kit_db_errmsg(db));
	lt_expect(w.outside == 0, NULL, "a write inside kit_db_begin's transaction was counted");
	const char *begins[] = { "BEGIN", "start transaction" };
	for (int i = 0; i < 2 && t->engine != KIT_DB_SQLITE; i++)
		lt_expect(kit_db_exec(db, begins[i], 0, NULL) == 0 && kit_db_exec(db, up, 0, NULL) == 0 &&
		          kit_db_exec(db, "COMMIT", 0, NULL) == 0 && w.outside == 0, NULL,
		          "a write after %s sent as SQL was counted (%d) or failed: %s", begins[i],
		          w.outside, kit_db_errmsg(db));
	lt_expect(kit_db_exec(db, "/* again */ update lt_tx_rows SET n = n + 1 WHERE id = 1", 0,
	          NULL) == 0 && w.outside == 1 && strcmp(w.first, "update lt_tx_rows SET n = n + 1 "
	          "WHERE id = 1") == 0, NULL, "a write with no transaction, after a comment: counted %d, "
	          "first \"%s\"", w.outside, w.first);
	lt_expect(kit_db_exec(db, "WITH x AS (SELECT n FROM lt_tx_rows) SELECT * FROM x", 0,
	          NULL) == 0 && kit_db_exec(db, "SELECT n FROM lt_tx_rows", 0, NULL) == 0 &&
	          w.outside == 1, NULL, "a read was counted as a write (%d)", w.outside);
	lt_expect(kit_db_begin(db) == 0, NULL, "BEGIN: %s", kit_db_errmsg(db));
	lt_step_arm(LT_STEP_REPLY_LOST, 1);
	int rc = kit_db_exec(db, up, 0, NULL);
	lt_expect(lt_step_disarm() && rc != 0, NULL, "the UPDATE's answer was not lost (%d)", rc);
	lt_expect(kit_db_exec(db, up, 0, NULL) == 0 && w.outside == 2, NULL, "the UPDATE sent "
	          "again after its lost answer ended the transaction: counted %d, not 2", w.outside);
	kit_db_set_hook(db, NULL, NULL);
}

/* steps.h's lt_lock_watch_hook, on each engine: statements before the
 * table's first write, or outside a transaction, are not inside the lock;
 * each one after it, up to COMMIT, is, the first named; a COMMIT sent as
 * SQL is not counted; a SELECT ... FOR UPDATE of the table starts the lock
 * too (not on SQLite, which has none), so the UPDATE after it is inside;
 * a write to another table that does not name it starts nothing. */
static void steps__lock_watch_counts_statements_inside_the_lock(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct lt_lock_watch w = { .table = "lt_lock_rows" };
	const char *up = "UPDATE lt_lock_rows SET n = n + 1 WHERE id = 1";

	labtest_exec(t, "CREATE TABLE lt_lock_rows (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)");
	labtest_exec(t, "CREATE TABLE lt_lock_other (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)");
	labtest_exec(t, "INSERT INTO lt_lock_rows VALUES (1, 0)");
	kit_db_set_hook(db, lt_lock_watch_hook, &w);
	bool ok = kit_db_exec(db, up, 0, NULL) == 0 &&
	          kit_db_exec(db, "SELECT n FROM lt_lock_rows", 0, NULL) == 0 &&
	          kit_db_begin(db) == 0 &&
	          kit_db_exec(db, "SELECT n FROM lt_lock_rows WHERE id = 1", 0, NULL) == 0 &&
	          kit_db_exec(db, "INSERT INTO lt_lock_other VALUES (1, 0)", 0, NULL) == 0 &&
	          kit_db_exec(db, up, 0, NULL) == 0 &&
	          kit_db_exec(db, "SELECT n FROM lt_lock_rows WHERE id = 1", 0, NULL) == 0 &&
	          kit_db_exec(db, "UPDATE lt_lock_other SET n = 1", 0, NULL) == 0 &&
	          kit_db_commit(db) == 0 &&
	          kit_db_exec(db, "SELECT n FROM lt_lock_rows", 0, NULL) == 0;
	lt_expect(ok, NULL, "the statements: %s", kit_db_errmsg(db));
	lt_expect(w.writes == 2 && w.after == 2 && strcmp(w.what, "SELECT n FROM lt_lock_rows "
	          "WHERE id = 1") == 0, NULL, "writes %d (expected 2), inside the lock %d (expected 2), "
	          "first \"%s\"", w.writes, w.after, w.what);
	if (t->engine != KIT_DB_SQLITE) {
		struct lt_lock_watch f = { .table = "lt_lock_rows" };
		kit_db_set_hook(db, lt_lock_watch_hook, &f);
		ok = kit_db_exec(db, "BEGIN", 0, NULL) == 0 &&
		     kit_db_exec(db, "select n from lt_lock_rows where id = 1 for update", 0, NULL) == 0 &&
		     kit_db_exec(db, up, 0, NULL) == 0 && kit_db_exec(db, "COMMIT", 0, NULL) == 0;
		lt_expect(ok && f.writes == 1 && f.after == 1 && strcmp(f.what, up) == 0, NULL,
		          "BEGIN, a SELECT ... FOR UPDATE, the UPDATE, COMMIT as SQL: writes %d, inside "
		          "the lock %d (expected 1 and 1), first \"%s\" (%s)", f.writes, f.after, f.what,
		          ok ? "ran" : kit_db_errmsg(db));
	}
	kit_db_set_hook(db, NULL, NULL);
}

/* session.h's lt_session_id and lt_lock_waiting, on each engine: two
 * connections have two ids; a session that holds a row is not waiting,
 * one whose UPDATE queues behind it is (seen within 15 s, asked every
 * lt_lock_poll_ns()), and is not once the holder has committed. SQLite
 * has no sessions: id 0, and lt_lock_waiting cannot tell (-1). */
static void session__a_lock_wait_is_seen_by_another_connection(void **state)
{
	struct labtest *t = *state;
	struct kit_db *monitor = labtest_db(t), *holder = labtest_connect(t);
	int64_t me = lt_session_id(monitor), held = lt_session_id(holder);

	if (t->engine == KIT_DB_SQLITE) {
		lt_expect(me == 0 && held == 0 && lt_lock_waiting(monitor, 1) == -1, NULL,
		          "SQLite: ids %lld and %lld, lt_lock_waiting %d; expected 0, 0 and -1",
		          (long long)me, (long long)held, lt_lock_waiting(monitor, 1));
		kit_db_close(holder);
		return;
	}
	lt_expect(me > 0 && held > 0 && me != held, NULL, "two connections' session ids: %lld and "
	          "%lld", (long long)me, (long long)held);
	labtest_exec(t, "CREATE TABLE lt_wait_rows (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)");
	labtest_exec(t, "INSERT INTO lt_wait_rows VALUES (1, 0)");
	lt_expect(kit_db_begin(holder) == 0 && kit_db_exec(holder, "UPDATE lt_wait_rows SET n = n + 1"
	          " WHERE id = 1", 0, NULL) == 0, NULL, "the holder: %s", kit_db_errmsg(holder));
	lt_expect(lt_lock_waiting(monitor, held) == 0, NULL, "the session that holds the row "
	          "was seen waiting");

	struct lt_statement w = { .url = t->url, .sql = "UPDATE lt_wait_rows SET n = n + 10 WHERE id = 1" };
	atomic_init(&w.id, 0);
	lt_expect(pthread_create(&w.th, NULL, lt_run_statement, &w) == 0, NULL, "pthread_create");
	int64_t id = 0, deadline = util_now_ns() + 15 * 1000000000LL;
	while ((id = atomic_load(&w.id)) == 0 && util_now_ns() < deadline)
		util_sleep_ns(1000000);
	int seen = 0;
	while (id > 0 && (seen = lt_lock_waiting(monitor, id)) == 0 && util_now_ns() < deadline)
		util_sleep_ns(lt_lock_poll_ns(monitor));
	int committed = kit_db_commit(holder);
	pthread_join(w.th, NULL);
	int after = -2;
	util_sleep_ns(lt_lock_poll_ns(monitor) * 2);
	if (id > 0)
		after = lt_lock_waiting(monitor, id);
	kit_db_close(holder);

	lt_expect(id > 0 && seen == 1, NULL, "the UPDATE queued behind a held row (session %lld) was "
	          "not seen waiting within 15 s (%d)", (long long)id, seen);
	lt_expect(committed == 0 && w.rc == 0, NULL, "the holder's COMMIT %d, the waiter's UPDATE %d",
	          committed, w.rc);
	lt_expect(after == 0, NULL, "the waiter's session, its UPDATE done, read as %d, not 0", after);
	lt_expect_int(labtest_int(t, "SELECT n FROM lt_wait_rows WHERE id = 1"), 11, "the row after both");
}

/* session.h's lt_end_session, on each engine: a session it ends is gone
 * from the server; with noticed the kit has seen it (kit_db_connected 0),
 * without it the connection's next statement fails. The test's own
 * connection goes on. SQLite has no session to end (false). */
static void session__an_ended_session_is_gone(void **state)
{
	struct labtest *t = *state;
	struct kit_db *seen = labtest_connect(t), *unseen = labtest_connect(t);
	if (t->engine == KIT_DB_SQLITE) {
		lt_expect(!lt_end_session(t, seen, true) && kit_db_connected(seen), NULL,
		          "SQLite: a session was ended");
		kit_db_close(seen);
		kit_db_close(unseen);
		return;
	}
	bool ended_seen = lt_end_session(t, seen, true);
	bool ended_unseen = lt_end_session(t, unseen, false);
	bool still = kit_db_connected(unseen);
	int next = kit_db_exec(unseen, "SELECT 1", 0, NULL);
	lt_expect(ended_seen && !kit_db_connected(seen), NULL, "ended with noticed: %d, and the kit "
	          "says connected %d (expected 1 and 0)", ended_seen, kit_db_connected(seen));
	lt_expect(ended_unseen && still && next != 0, NULL, "ended without noticed: %d, connected "
	          "before its next statement %d, that statement %d (expected 1, 1, an error)",
	          ended_unseen, still, next);
	lt_expect_int(labtest_int(t, "SELECT 7"), 7, "the test's own connection afterwards");
	kit_db_close(seen);
	kit_db_close(unseen);
}

/* session.h's lt_session_own_values, on each engine: a session given
 * values of its own reads the same until one is put back to the default
 * (RESET, SET ... = DEFAULT, SQLite's 1000 written into the code), and
 * then reads otherwise, whichever of them is put back. */
static void session__a_default_put_back_is_seen(void **state)
{
	struct labtest *t = *state;
	static const char *const resets[][4] = {
		[KIT_DB_SQLITE] = { "PRAGMA wal_autocheckpoint = 1000", "PRAGMA cache_size = -2000" },
		[KIT_DB_POSTGRES] = { "RESET enable_seqscan", "RESET lock_timeout",
		                      "SET default_transaction_isolation = DEFAULT",
		                      "RESET statement_timeout" },
		[KIT_DB_MYSQL] = { "SET SESSION max_statement_time = DEFAULT",
		                   "SET SESSION innodb_lock_wait_timeout = DEFAULT",
		                   "SET SESSION lock_wait_timeout = DEFAULT" },
	};
	for (int i = 0; i < 4 && resets[t->engine][i]; i++) {
		const char *reset = resets[t->engine][i];
		struct kit_db *db = labtest_connect(t);
		char before[LT_SESSION_LEN], same[LT_SESSION_LEN], after[LT_SESSION_LEN];
		lt_session_own_values(t, db);
		lt_session(t, db, before, sizeof before);
		lt_expect(kit_db_exec(db, "SELECT 1", 0, NULL) == 0, NULL, "SELECT 1: %s",
		          kit_db_errmsg(db));
		lt_session(t, db, same, sizeof same);
		lt_expect(kit_db_exec(db, reset, 0, NULL) == 0, NULL, "%s: %s", reset, kit_db_errmsg(db));
		lt_session(t, db, after, sizeof after);
		kit_db_close(db);
		lt_expect(strcmp(before, same) == 0, NULL, "a SELECT changed the session: %s, then %s",
		          before, same);
		lt_expect(strcmp(before, after) != 0, NULL, "%s was not seen: the session read %s before "
		          "and after", reset, before);
	}
}

/* session.h's lt_pg_seq_scans: an UPDATE by the primary key leaves a
 * table's count of sequential scans as it was, one by id + 0 moves it by
 * one, each read right after the statement on the same connection. */
static void session__seq_scans_counted_at_once(void **state)
{
	struct labtest *t = *state;
	labtest_exec(t, "CREATE TABLE scanned (id BIGINT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0);"
	             "INSERT INTO scanned (id) SELECT g FROM generate_series(1, 5000) g; ANALYZE scanned");
	int64_t a = lt_pg_seq_scans(t, "scanned");
	labtest_exec(t, "UPDATE scanned SET n = n + 1 WHERE id = 77");
	int64_t b = lt_pg_seq_scans(t, "scanned");
	labtest_exec(t, "UPDATE scanned SET n = n + 1 WHERE id + 0 = 77");
	int64_t c = lt_pg_seq_scans(t, "scanned");
	lt_expect(a >= 0 && b == a && c == b + 1, NULL, "seq_scan of a 5,000-row table: %lld, then "
	          "%lld after an UPDATE by the primary key, then %lld after one by id + 0 (expected "
	          "the same twice, then one more)", (long long)a, (long long)b, (long long)c);
}

/* A predicate on a statement answers true for each of sets, false for
 * each of not_sets and for NULL; what says what true means. */
static void classifies(bool (*pred)(const char *), const char *what, const char *const *sets,
                       size_t nsets, const char *const *not_sets, size_t nnot)
{
	for (size_t i = 0; i < nsets; i++)
		lt_expect(pred(sets[i]), NULL, "\"%s\" was not seen to %s", sets[i], what);
	for (size_t i = 0; i < nnot; i++)
		lt_expect(!pred(not_sets[i]), NULL, "\"%s\" was seen to %s", not_sets[i], what);
	lt_expect(!pred(NULL), NULL, "no statement was seen to %s", what);
}

#define CLASSIFIES(pred, what, sets, not_sets) \
	classifies(pred, what, sets, sizeof sets / sizeof sets[0], not_sets, \
	           sizeof not_sets / sizeof not_sets[0])

/* lt_sql_sets_timeout: every way to set a timeout that the labs'
 * contracts forbid a call (a SET of any scope, set_config, SET STATEMENT
 * ... FOR, a PRAGMA busy_timeout), lock and statement timeouts and the
 * others (an idle-in-transaction, deadlock or transaction timeout), and
 * not a read of one or a statement that only writes rows. */
static void session__timeouts_set_by_any_statement(void **state)
{
	static const char *const sets[] = {
		"SET LOCAL lock_timeout = '2s'", "set lock_timeout to 0",
		"SELECT set_config('statement_timeout', '5s', true)",
		"SET SESSION innodb_lock_wait_timeout = 1",
		"SET STATEMENT innodb_lock_wait_timeout = 1 FOR UPDATE t SET n = 1",
		"SET @@session.max_statement_time = 2", "PRAGMA busy_timeout = 100",
		"SET lock_wait_timeout = 5",
		"SET LOCAL idle_in_transaction_session_timeout = '5s'",
		"SET LOCAL deadlock_timeout = '100ms'", "SET transaction_timeout = 1000",
		"SET SESSION wait_timeout = 10", "SET idle_session_timeout = '1min'",
	};
	static const char *const not_sets[] = {
		"SHOW lock_timeout", "SELECT current_setting('lock_timeout')",
		"UPDATE t SET n = n + 1 WHERE id = 1", "PRAGMA synchronous = NORMAL", "",
	};
	(void)state;
	CLASSIFIES(lt_sql_sets_timeout, "set a timeout", sets, not_sets);
}

/* lt_sql_sets_durability: a SET of any scope or a PRAGMA that assigns
 * turns COMMIT's wait for the disk down; a read of the setting, or a
 * statement about something else, does not. */
static void session__durability_turned_down_by_any_statement(void **state)
{
	static const char *const sets[] = {
		"SET LOCAL synchronous_commit = off", "set synchronous_commit to local",
		"/* fast */ SET SESSION innodb_flush_log_at_trx_commit = 2",
		"SET STATEMENT sync_binlog = 0 FOR UPDATE t SET n = 1", "PRAGMA synchronous = OFF",
		"PRAGMA main.synchronous(0)",
	};
	static const char *const not_sets[] = {
		"PRAGMA synchronous", "SHOW synchronous_commit", "SELECT current_setting('synchronous_commit')",
		"SET LOCAL lock_timeout = '1s'", "UPDATE t SET n = n + 1", "",
	};
	(void)state;
	CLASSIFIES(lt_sql_sets_durability, "turn the disk wait down", sets, not_sets);
}

/* lt_timeout_watch sees kit_db_set_lock_timeout on every engine: the SET
 * it sends on a server, the busy wait a later statement runs under on
 * SQLite (where no statement shows it); and nothing on a call that only
 * reads. */
static void session__a_timeout_watch_sees_the_kits_own(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_connect(t);
	struct lt_timeout_watch w;

	lt_timeout_watch_init(&w, db);
	kit_db_set_hook(db, lt_timeout_watch, &w);
	lt_expect(kit_db_exec(db, "SELECT 1", 0, NULL) == 0, NULL, "SELECT 1: %s", kit_db_errmsg(db));
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(w.sql[0] == '\0' && w.seen_ms == -1, NULL, "a SELECT 1 was seen to set a timeout "
	          "(\"%s\", %d ms)", w.sql, w.seen_ms);

	lt_timeout_watch_init(&w, db);
	kit_db_set_hook(db, lt_timeout_watch, &w);
	lt_expect(kit_db_set_lock_timeout(db, 1234) == 0, NULL, "kit_db_set_lock_timeout: %s",
	          kit_db_errmsg(db));
	lt_expect(kit_db_exec(db, "SELECT 1", 0, NULL) == 0, NULL, "SELECT 1: %s", kit_db_errmsg(db));
	kit_db_set_hook(db, NULL, NULL);
	if (t->engine == KIT_DB_SQLITE)
		lt_expect(w.seen_ms == 1234 && w.expect_ms != 1234, NULL, "a statement run under a busy "
		          "wait of 1234 ms was seen under %d ms (the connection's was %d)", w.seen_ms,
		          w.expect_ms);
	else
		lt_expect(w.sql[0] != '\0', NULL, "kit_db_set_lock_timeout(1234) was not seen to send "
		          "a timeout");
	kit_db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sql__the_first_word_past_blanks_comments_and_parentheses),
		cmocka_unit_test(sql__whole_words_in_any_case),
		cmocka_unit_test(sql__names_as_whole_words),
		LABTEST_ALL(sql__the_server_reads_them_alike),
		LABTEST_ALL(steps__tx_watch_counts_writes_with_no_transaction),
		LABTEST_ALL(steps__lock_watch_counts_statements_inside_the_lock),
		LABTEST_ALL(session__a_lock_wait_is_seen_by_another_connection),
		LABTEST_ALL(session__an_ended_session_is_gone),
		LABTEST_ALL(session__a_default_put_back_is_seen),
		LABTEST_PG(session__seq_scans_counted_at_once),
		cmocka_unit_test(session__timeouts_set_by_any_statement),
		cmocka_unit_test(session__durability_turned_down_by_any_statement),
		LABTEST_ALL(session__a_timeout_watch_sees_the_kits_own),
	};
	return labtest_main("harness-sql", tests);
}
