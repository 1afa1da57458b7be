/*
 * test_session.c: tests/harness/session.h on every engine: the line it
 * reads changes when a setting is changed in the session and comes back
 * when it is reset; lt_in_transaction sees a transaction begun and ended.
 */
#include <stdio.h>
#include <string.h>

#include "tests/harness/labtest.h"
#include "tests/harness/session.h"

static void session__sees_a_setting_changed_and_reset(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	static const char *const change[] = {
		[KIT_DB_SQLITE] = "PRAGMA synchronous = OFF",
		[KIT_DB_POSTGRES] = "SET synchronous_commit = off",
		[KIT_DB_MYSQL] = "SET SESSION innodb_lock_wait_timeout = 7",
	};
	static const char *const reset[] = {
		[KIT_DB_SQLITE] = "PRAGMA synchronous = NORMAL",
		[KIT_DB_POSTGRES] = "RESET synchronous_commit",
		[KIT_DB_MYSQL] = "SET SESSION innodb_lock_wait_timeout = DEFAULT",
	};
	char before[LT_SESSION_LEN], changed[LT_SESSION_LEN], after[LT_SESSION_LEN];
	lt_session(t, db, before, sizeof before);
	labtest_exec(t, change[t->engine]);
	lt_session(t, db, changed, sizeof changed);
	labtest_exec(t, reset[t->engine]);
	lt_session(t, db, after, sizeof after);
	lt_expect(strcmp(before, changed) != 0, NULL, "\"%s\" left the session line as it was: %s",
	          change[t->engine], changed);
	lt_expect(strcmp(before, after) == 0, NULL, "after \"%s\" the line is %s, not %s",
	          reset[t->engine], after, before);
	if (t->engine != KIT_DB_SQLITE)
		return;
	/* a PRAGMA no pragma_ table reads: asked on its own */
	int64_t autockpt = labtest_int(t, "PRAGMA wal_autocheckpoint");
	labtest_exec(t, "PRAGMA wal_autocheckpoint = 0");
	lt_session(t, db, changed, sizeof changed);
	char restore[64];
	snprintf(restore, sizeof restore, "PRAGMA wal_autocheckpoint = %lld", (long long)autockpt);
	labtest_exec(t, restore);
	lt_session(t, db, after, sizeof after);
	lt_expect(strcmp(before, changed) != 0, NULL, "automatic checkpoints turned off left the "
	          "session line as it was: %s", changed);
	lt_expect(strcmp(before, after) == 0, NULL, "after \"%s\" the line is %s, not %s",
	          restore, after, before);
	/* the kit's own busy wait, which no pragma shows */
	lt_expect(kit_db_set_lock_timeout(db, 200) == 0, NULL, "kit_db_set_lock_timeout(200)");
	lt_session(t, db, changed, sizeof changed);
	lt_expect(kit_db_set_lock_timeout(db, 0) == 0, NULL, "kit_db_set_lock_timeout(0)");
	lt_session(t, db, after, sizeof after);
	lt_expect(strcmp(before, changed) != 0, NULL, "a busy wait of 200 ms set with "
	          "kit_db_set_lock_timeout left the session line as it was: %s", changed);
	lt_expect(strcmp(before, after) == 0, NULL, "after the busy wait went back to the "
	          "default the line is %s, not %s", after, before);
}

/* Each setting the line reads by name moves it when changed and comes
 * back when the value read before is put back: SQLite's pragmas past the
 * first ones (mmap_size, read on its own, the first), MariaDB's variables
 * read from SESSION_VARIABLES. */
static void session__sees_each_named_setting(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	static const char *const sqlite[][2] = {
		{ "mmap_size", "268435456" }, { "cache_spill", "0" },
		{ "journal_size_limit", "1000" }, { "automatic_index", "0" },
		{ "cell_size_check", "1" }, { "recursive_triggers", "1" },
		{ "reverse_unordered_selects", "1" }, { "secure_delete", "0" },
		{ "trusted_schema", "0" }, { "threads", "2" }, { "analysis_limit", "100" },
		{ "ignore_check_constraints", "1" }, { "legacy_alter_table", "1" },
		{ "fullfsync", "1" }, { "soft_heap_limit", "100000000" },
		/* not hard_heap_limit: setting it lowers a soft limit of 0 to
		 * it too, which putting the hard one back leaves */
	};
	static const char *const mysql[][2] = {
		{ "sql_safe_updates", "1" }, { "wait_timeout", "77" },
		{ "net_read_timeout", "77" }, { "net_write_timeout", "77" },
		{ "innodb_strict_mode", "0" }, { "sql_big_selects", "0" },
		{ "idle_transaction_timeout", "77" }, { "group_concat_max_len", "7777" },
	};
	const char *const (*list)[2] = t->engine == KIT_DB_SQLITE ? sqlite : mysql;
	size_t n = t->engine == KIT_DB_SQLITE ? sizeof sqlite / sizeof sqlite[0]
	                                      : sizeof mysql / sizeof mysql[0];
	if (t->engine == KIT_DB_POSTGRES)
		return;   /* pg_settings lists every setting a session changed */
	char before[LT_SESSION_LEN], changed[LT_SESSION_LEN], after[LT_SESSION_LEN];
	lt_session(t, db, before, sizeof before);
	for (size_t i = 0; i < n; i++) {
		char sql[160];
		snprintf(sql, sizeof sql, t->engine == KIT_DB_SQLITE ? "PRAGMA %s"
		         : "SELECT @@session.%s", list[i][0]);
		long long was = (long long)labtest_int(t, sql);
		snprintf(sql, sizeof sql, t->engine == KIT_DB_SQLITE ? "PRAGMA %s = %s"
		         : "SET SESSION %s = %s", list[i][0], list[i][1]);
		labtest_exec(t, sql);
		lt_session(t, db, changed, sizeof changed);
		lt_expect(strcmp(before, changed) != 0, NULL, "\"%s\" left the session line as it "
		          "was: %s", sql, changed);
		snprintf(sql, sizeof sql, t->engine == KIT_DB_SQLITE ? "PRAGMA %s = %lld"
		         : "SET SESSION %s = %lld", list[i][0], was);
		labtest_exec(t, sql);
		lt_session(t, db, after, sizeof after);
		lt_expect(strcmp(before, after) == 0, NULL, "after \"%s\" the line is %s, not %s",
		          sql, after, before);
	}
}

/* PostgreSQL: a session-level advisory lock outlives every transaction
 * of the session, until it is unlocked; one taken for a transaction
 * (_xact_) ends with it and is never seen between calls. */
static void session__sees_an_advisory_lock_kept(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	char before[LT_SESSION_LEN], held[LT_SESSION_LEN], after[LT_SESSION_LEN];
	lt_session(t, db, before, sizeof before);
	labtest_exec(t, "BEGIN; SELECT pg_advisory_xact_lock(77); COMMIT");
	lt_session(t, db, after, sizeof after);
	lt_expect(strcmp(before, after) == 0, NULL, "after a transaction-level advisory lock "
	          "ended with its transaction the line is %s, not %s", after, before);
	labtest_exec(t, "SELECT pg_advisory_lock(77)");
	lt_session(t, db, held, sizeof held);
	labtest_exec(t, "SELECT pg_advisory_unlock(77)");
	lt_session(t, db, after, sizeof after);
	lt_expect(strstr(held, "advisory_locks_held=1;") != NULL, NULL, "a session-level "
	          "advisory lock held: the line is %s", held);
	lt_expect(strcmp(before, after) == 0, NULL, "after pg_advisory_unlock the line is %s, "
	          "not %s", after, before);
}

/* lt_session_user_locks: PostgreSQL's session-level advisory locks and
 * MariaDB's named locks are counted (the latter let go as they are), a
 * transaction-level one is not; SQLite has none. */
static void session__counts_user_locks(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	lt_expect_int(lt_session_user_locks(t, db), 0, "user locks before any was taken");
	if (t->engine == KIT_DB_SQLITE)
		return;
	labtest_exec(t, t->engine == KIT_DB_MYSQL ? "SELECT GET_LOCK('lt_77', 1)"
	                                          : "SELECT pg_advisory_lock(77)");
	lt_expect_int(lt_session_user_locks(t, db), 1, "user locks with one taken");
	if (t->engine == KIT_DB_POSTGRES) {
		labtest_exec(t, "SELECT pg_advisory_unlock(77)");
		labtest_exec(t, "BEGIN; SELECT pg_advisory_xact_lock(78)");
		lt_expect_int(lt_session_user_locks(t, db), 1, "user locks inside a transaction "
		              "holding a transaction-level one (pg_locks shows it too)");
		labtest_exec(t, "COMMIT");
	}
	lt_expect_int(lt_session_user_locks(t, db), 0, "user locks once let go");
}

static void session__sees_a_transaction_left_open(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, "CREATE TABLE s (v INTEGER)");
	lt_expect_int(lt_in_transaction(t, db), 0, "a transaction open before BEGIN");
	lt_expect(kit_db_begin(db) == 0, NULL, "BEGIN: %s", labtest_why(db));
	labtest_exec(t, "INSERT INTO s VALUES (1)");
	lt_expect_int(lt_in_transaction(t, db), 1, "a transaction open after BEGIN and an INSERT");
	lt_expect(kit_db_commit(db) == 0, NULL, "COMMIT: %s", labtest_why(db));
	lt_expect_int(lt_in_transaction(t, db), 0, "a transaction open after COMMIT");
}

/* PostgreSQL: a setting an ALTER DATABASE ... SET gave the database
 * (every later session starts with it) is on the line, and gone once
 * reset. The check's own database, put back before it ends (an ALTER
 * ROLE, read the same way, would reach the other lanes' checks). */
static void session__sees_a_database_or_role_setting(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	char before[LT_SESSION_LEN], set[LT_SESSION_LEN], after[LT_SESSION_LEN];
	lt_session(t, db, before, sizeof before);
	labtest_exec(t, "DO $$BEGIN EXECUTE format('ALTER DATABASE %I SET work_mem = %L',"
	                " current_database(), '5MB'); END$$");
	lt_session(t, db, set, sizeof set);
	labtest_exec(t, "DO $$BEGIN EXECUTE format('ALTER DATABASE %I RESET work_mem',"
	                " current_database()); END$$");
	lt_session(t, db, after, sizeof after);
	lt_expect(strstr(set, "database_or_role_settings=work_mem=5MB") != NULL, NULL, "with the "
	          "database's work_mem set, the line is %s", set);
	lt_expect(strcmp(before, after) == 0, NULL, "once it was reset the line is %s, not %s",
	          after, before);
}

/* labtest_connect_as_served: the server's own synchronous_commit (on, its
 * default), where the harness's other connections turn it off. */
static void session__a_connection_as_served(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_connect_as_served(t);
	int64_t on = -1, fast = -1;
	kit_db_query_int(db, "SELECT count(*) FROM pg_settings WHERE name = 'synchronous_commit'"
	                 " AND setting = 'on' AND source = 'default'", 0, NULL, &on);
	kit_db_close(db);
	kit_db_query_int(labtest_db(t), "SELECT count(*) FROM pg_settings WHERE name ="
	                 " 'synchronous_commit' AND setting = 'off'", 0, NULL, &fast);
	lt_expect(on == 1 && fast == 1, NULL, "a connection as served has synchronous_commit on "
	          "by default: %lld (want 1); the harness's own has it off: %lld (want 1)",
	          (long long)on, (long long)fast);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LABTEST_ALL(session__sees_a_setting_changed_and_reset),
		LABTEST_ALL(session__sees_each_named_setting),
		LABTEST_ALL(session__sees_a_transaction_left_open),
		LABTEST_PG(session__sees_an_advisory_lock_kept),
		LABTEST_PG(session__sees_a_database_or_role_setting),
		LABTEST_PG(session__a_connection_as_served),
		LABTEST_ALL(session__counts_user_locks),
	};
	return labtest_main("harness-session", tests);
}
