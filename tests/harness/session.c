/*
 * session.c: what a call left behind on its connection (session.h).
 */
#include "tests/harness/session.h"
#include "tests/harness/sql.h"
#include "util/clock.h"

#include <stdio.h>
#include <string.h>

struct line {
	char *s;
	size_t len;
};

static int add_row(void *arg, int ncols, const char *const *values)
{
	struct line *x = arg;
	size_t used = strlen(x->s);
	snprintf(x->s + used, x->len - used, "%s;", ncols > 0 && values[0] ? values[0] : "NULL");
	return 0;
}

void lt_session(struct labtest *t, struct kit_db *db, char *out, size_t len)
{
	static const char *const sql[] = {
		[KIT_DB_SQLITE] =
			"SELECT 'synchronous=' || synchronous FROM pragma_synchronous"
			" UNION ALL SELECT 'journal_mode=' || journal_mode FROM pragma_journal_mode"
			" UNION ALL SELECT 'foreign_keys=' || foreign_keys FROM pragma_foreign_keys"
			" UNION ALL SELECT 'busy_timeout=' || timeout FROM pragma_busy_timeout"
			" UNION ALL SELECT 'temp_store=' || temp_store FROM pragma_temp_store"
			" UNION ALL SELECT 'locking_mode=' || locking_mode FROM pragma_locking_mode"
			" UNION ALL SELECT 'read_uncommitted=' || read_uncommitted FROM pragma_read_uncommitted"
			" UNION ALL SELECT 'query_only=' || query_only FROM pragma_query_only"
			" UNION ALL SELECT 'cache_size=' || cache_size FROM pragma_cache_size"
			/* every other per-connection setting a PRAGMA can leave
			 * changed and read back (case_sensitive_like cannot be
			 * read; mmap_size has no pragma_ table: read below), and
			 * the process's heap limits, which a PRAGMA on any
			 * connection sets */
			" UNION ALL SELECT 'cache_spill=' || cache_spill FROM pragma_cache_spill"
			" UNION ALL SELECT 'journal_size_limit=' || journal_size_limit"
			"  FROM pragma_journal_size_limit"
			" UNION ALL SELECT 'automatic_index=' || automatic_index FROM pragma_automatic_index"
			" UNION ALL SELECT 'cell_size_check=' || cell_size_check FROM pragma_cell_size_check"
			" UNION ALL SELECT 'defer_foreign_keys=' || defer_foreign_keys"
			"  FROM pragma_defer_foreign_keys"
			" UNION ALL SELECT 'recursive_triggers=' || recursive_triggers"
			"  FROM pragma_recursive_triggers"
			" UNION ALL SELECT 'reverse_unordered_selects=' || reverse_unordered_selects"
			"  FROM pragma_reverse_unordered_selects"
			" UNION ALL SELECT 'secure_delete=' || secure_delete FROM pragma_secure_delete"
			" UNION ALL SELECT 'trusted_schema=' || trusted_schema FROM pragma_trusted_schema"
			" UNION ALL SELECT 'threads=' || threads FROM pragma_threads"
			" UNION ALL SELECT 'analysis_limit=' || analysis_limit FROM pragma_analysis_limit"
			" UNION ALL SELECT 'ignore_check_constraints=' || ignore_check_constraints"
			"  FROM pragma_ignore_check_constraints"
			" UNION ALL SELECT 'legacy_alter_table=' || legacy_alter_table"
			"  FROM pragma_legacy_alter_table"
			" UNION ALL SELECT 'fullfsync=' || fullfsync FROM pragma_fullfsync"
			" UNION ALL SELECT 'checkpoint_fullfsync=' || checkpoint_fullfsync"
			"  FROM pragma_checkpoint_fullfsync"
			" UNION ALL SELECT 'writable_schema=' || writable_schema FROM pragma_writable_schema"
			" UNION ALL SELECT 'count_changes=' || count_changes FROM pragma_count_changes"
			" UNION ALL SELECT 'full_column_names=' || full_column_names"
			"  FROM pragma_full_column_names"
			" UNION ALL SELECT 'short_column_names=' || short_column_names"
			"  FROM pragma_short_column_names"
			" UNION ALL SELECT 'empty_result_callbacks=' || empty_result_callbacks"
			"  FROM pragma_empty_result_callbacks"
			" UNION ALL SELECT 'soft_heap_limit=' || soft_heap_limit FROM pragma_soft_heap_limit"
			" UNION ALL SELECT 'hard_heap_limit=' || hard_heap_limit FROM pragma_hard_heap_limit",
		[KIT_DB_POSTGRES] =
			"SELECT name || '=' || setting || ' (' || source || ')' FROM pg_settings"
			" WHERE source IN ('session', 'client') ORDER BY name",
		[KIT_DB_MYSQL] =
			"SELECT CONCAT_WS(',', @@session.autocommit, @@session.tx_isolation,"
			" @@session.innodb_lock_wait_timeout, @@session.lock_wait_timeout, @@session.sql_mode,"
			" @@session.foreign_key_checks, @@session.unique_checks, @@session.max_statement_time,"
			" @@session.tx_read_only)",
	};
	/* MariaDB: the other session variables a call is tempted to SET "for
	 * one statement" and not put back: safety nets, the connection's
	 * own timeouts, the server's strictness, limits on what a SELECT
	 * returns or may cost, sizes of its buffers, the zone its times are
	 * read in. Read by name from SESSION_VARIABLES, one row each, so a
	 * server that lacks one (innodb_snapshot_isolation before 10.6.18)
	 * leaves it out rather than refusing the read. */
	static const char mysql_more[] =
		"SELECT CONCAT(LOWER(VARIABLE_NAME), '=', VARIABLE_VALUE)"
		" FROM information_schema.SESSION_VARIABLES WHERE VARIABLE_NAME IN ("
		"'SQL_SAFE_UPDATES', 'SQL_SELECT_LIMIT', 'MAX_JOIN_SIZE', 'SQL_BIG_SELECTS',"
		" 'SQL_AUTO_IS_NULL', 'SQL_LOG_BIN', 'CHECK_CONSTRAINT_CHECKS', 'INNODB_STRICT_MODE',"
		" 'INNODB_SNAPSHOT_ISOLATION', 'TRANSACTION_ISOLATION', 'TRANSACTION_READ_ONLY',"
		" 'COMPLETION_TYPE', 'WAIT_TIMEOUT', 'INTERACTIVE_TIMEOUT', 'NET_READ_TIMEOUT',"
		" 'NET_WRITE_TIMEOUT', 'IDLE_TRANSACTION_TIMEOUT', 'IDLE_WRITE_TRANSACTION_TIMEOUT',"
		" 'IDLE_READONLY_TRANSACTION_TIMEOUT', 'GROUP_CONCAT_MAX_LEN', 'BIG_TABLES',"
		" 'TMP_TABLE_SIZE', 'MAX_HEAP_TABLE_SIZE', 'SORT_BUFFER_SIZE', 'TIME_ZONE',"
		" 'DIV_PRECISION_INCREMENT') ORDER BY VARIABLE_NAME";
	struct line x = { out, len };
	out[0] = '\0';
	int rc = kit_db_query(db, sql[t->engine], 0, NULL, add_row, &x);
	if (rc == 0 && t->engine == KIT_DB_MYSQL)
		rc = kit_db_query(db, mysql_more, 0, NULL, add_row, &x);
	/* SQLite's wal_autocheckpoint and mmap_size have no pragma_ table to
	 * join above: read on their own (0 turns automatic checkpoints off;
	 * a mmap_size above 0 reads the file through a mapping, where an I/O
	 * error is a SIGBUS rather than an error code) */
	int64_t autockpt = 0, mmap = 0;
	if (rc == 0 && t->engine == KIT_DB_SQLITE &&
	    (rc = kit_db_query_int(db, "PRAGMA wal_autocheckpoint", 0, NULL, &autockpt)) == 0 &&
	    (rc = kit_db_query_int(db, "PRAGMA mmap_size", 0, NULL, &mmap)) == 0) {
		size_t used = strlen(out);
		/* and the kit's busy wait, which no PRAGMA shows (the kit waits
		 * in a busy handler of its own): kit_db_set_lock_timeout */
		snprintf(out + used, len - used, "wal_autocheckpoint=%lld;mmap_size=%lld;"
		         "kit_busy_timeout_ms=%d;", (long long)autockpt, (long long)mmap,
		         kit_db_lock_timeout(db));
	}
	/* PostgreSQL: what else the session keeps past a statement, beside
	 * its settings: the locks it holds past its transactions
	 * (pg_advisory_lock, not the _xact_ kind, which COMMIT and ROLLBACK
	 * let go), statements PREPAREd by name, open cursors, channels it
	 * LISTENs on and temporary tables; and the settings an ALTER DATABASE
 * or ALTER ROLE ... SET gave this database or this user, which every
 * later session starts with. Each is named only when there are
	 * some, so the line stays as it was for every session that has none.
	 * A PREPARE "so the next call only executes" left on the caller's
	 * connection is in the way of the caller's own PREPARE of that name. */
	if (rc == 0 && t->engine == KIT_DB_POSTGRES)
		rc = kit_db_query(db, "SELECT s FROM (SELECT concat_ws(';',"
		                  " (SELECT 'advisory_locks_held=' || count(*) FROM pg_locks"
		                  "  WHERE pid = pg_backend_pid() AND locktype = 'advisory' HAVING count(*) > 0),"
		                  " (SELECT 'prepared=' || string_agg(name, ',' ORDER BY name)"
		                  "  FROM pg_prepared_statements WHERE from_sql),"
		                  " (SELECT 'cursors=' || string_agg(name, ',' ORDER BY name) FROM pg_cursors),"
		                  " (SELECT 'listening=' || string_agg(c, ',' ORDER BY c)"
		                  "  FROM pg_listening_channels() c),"
		                  " (SELECT 'temp_tables=' || count(*) FROM pg_class"
		                  "  WHERE relnamespace = pg_my_temp_schema() HAVING count(*) > 0),"
		                  " (SELECT 'database_or_role_settings=' || string_agg(array_to_string("
		                  "  setconfig, ','), ';' ORDER BY setdatabase, setrole)"
		                  "  FROM pg_db_role_setting WHERE setdatabase IN (0, (SELECT oid FROM"
		                  "  pg_database WHERE datname = current_database())) AND setrole IN (0,"
		                  "  (SELECT oid FROM pg_roles WHERE rolname = current_user)))) AS s) x"
		                  " WHERE s <> ''", 0, NULL, add_row, &x);
	lt_expect(rc == 0, NULL, "reading the session's settings: %s", labtest_why(db));
}

int64_t lt_session_user_locks(struct labtest *t, struct kit_db *db)
{
	int64_t n = 0;
	if (t->engine == KIT_DB_SQLITE)
		return 0;
	if (kit_db_query_int(db, t->engine == KIT_DB_MYSQL ? "SELECT RELEASE_ALL_LOCKS()"
	                     : "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
	                       "pid = pg_backend_pid()", 0, NULL, &n) != 0)
		return -1;
	return n;
}

int64_t lt_in_transaction(struct labtest *t, struct kit_db *db)
{
	int64_t open = -1;
	if (t->engine == KIT_DB_SQLITE) {
		int rc = kit_db_exec(db, "BEGIN", 0, NULL);
		if (rc == 0)
			kit_db_exec(db, "ROLLBACK", 0, NULL);
		return rc != 0;
	}
	/* PostgreSQL: in a transaction begun earlier, now() is its start,
	 * not this statement's */
	if (kit_db_query_int(db, t->engine == KIT_DB_MYSQL ? "SELECT @@in_transaction"
	                     : "SELECT CASE WHEN now() = statement_timestamp() THEN 0 ELSE 1 END",
	                     0, NULL, &open) != 0)
		return -1;
	return open;
}

/* The items (each ended by ';') of line a that line b does not hold,
 * into out, each followed by ';' ("" when there are none). */
static void items_not_in(const char *a, const char *b, char *out, size_t len)
{
	out[0] = '\0';
	for (const char *p = a; *p;) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) + 1 : strlen(p);
		bool found = false;
		for (const char *q = b; *q && !found;) {
			const char *qend = strchr(q, ';');
			size_t m = qend ? (size_t)(qend - q) + 1 : strlen(q);
			found = m == n && memcmp(p, q, n) == 0;
			q += m;
		}
		size_t used = strlen(out);
		if (!found && used + 1 < len)
			snprintf(out + used, len - used, "%.*s", (int)n, p);
		p += n;
	}
}

void lt_session_unchanged(struct labtest *t, struct kit_db *db, const char *before,
                          const char *what, const char *hint)
{
	char after[LT_SESSION_LEN];
	lt_expect(lt_in_transaction(t, db) == 0, hint, "after %s the connection still has a "
	          "transaction open: every path out of a call, the error paths too, ends with "
	          "COMMIT or ROLLBACK", what);
	lt_session(t, db, after, sizeof after);
	if (strcmp(before, after) == 0)
		return;
	/* only what differs: the whole line is longer than a message */
	char was[400], now[400];
	items_not_in(before, after, was, sizeof was);
	items_not_in(after, before, now, sizeof now);
	lt_expect(false, hint, "after %s the session's settings changed: [%s] became [%s]: a "
	          "PRAGMA, SET or kit_db_set_lock_timeout that outlives the call (for one "
	          "transaction use SET LOCAL), a session-level lock still held "
	          "(advisory_locks_held: a pg_advisory_lock that a path out of the call never "
	          "unlocked; pg_advisory_xact_lock ends with the transaction), or something "
	          "else made on the caller's connection and left there (prepared=: a statement "
	          "PREPAREd by name and never DEALLOCATEd; a cursor WITH HOLD, a LISTEN, a "
	          "temporary table)", what, was, now);
}

void lt_session_own_values(struct labtest *t, struct kit_db *db)
{
	static const char *const sql[] = {
		[KIT_DB_SQLITE] = "PRAGMA wal_autocheckpoint = 999; PRAGMA cache_size = -3000",
		[KIT_DB_POSTGRES] = "SET enable_seqscan = on; SET enable_bitmapscan = on;"
		                    " SET statement_timeout = '1h'; SET work_mem = '7MB';"
		                    " SET lock_timeout = '1h';"
		                    " SET default_transaction_isolation = 'read committed'",
		[KIT_DB_MYSQL] = "SET SESSION max_statement_time = 3600;"
		                 " SET SESSION lock_wait_timeout = 3000;"
		                 " SET SESSION innodb_lock_wait_timeout = 3000",
	};
	int rc = kit_db_exec(db, sql[t->engine], 0, NULL);
	lt_expect(rc == 0, NULL, "giving the session values of its own: %s", kit_db_errmsg(db));
}

int64_t lt_pg_seq_scans(struct labtest *t, const char *table)
{
	char sql[300];
	labtest_int(t, "SELECT 0 FROM pg_stat_force_next_flush()");
	snprintf(sql, sizeof sql, "SELECT COALESCE(SUM(seq_scan), -1) FROM pg_stat_user_tables "
	         "WHERE schemaname = current_schema() AND relname = '%s'", table);
	return labtest_int(t, sql);
}

int64_t lt_session_id(struct kit_db *db)
{
	int64_t id = -1;
	if (kit_db_engine(db) == KIT_DB_SQLITE)
		return 0;
	if (kit_db_query_int(db, kit_db_engine(db) == KIT_DB_MYSQL ? "SELECT CONNECTION_ID()"
	                     : "SELECT pg_backend_pid()", 0, NULL, &id) != 0)
		return -1;
	return id;
}

bool lt_end_session(struct labtest *t, struct kit_db *db, bool noticed)
{
	bool mysql = kit_db_engine(db) == KIT_DB_MYSQL;
	int64_t id = lt_session_id(db);
	char sql[128];
	if (kit_db_engine(db) == KIT_DB_SQLITE || id <= 0)
		return false;
	snprintf(sql, sizeof sql, mysql ? "KILL %lld" : "SELECT pg_terminate_backend(%lld)",
	         (long long)id);
	labtest_exec(t, sql);
	snprintf(sql, sizeof sql, mysql ? "SELECT count(*) FROM information_schema.PROCESSLIST"
	         " WHERE ID = %lld" : "SELECT count(*) FROM pg_stat_activity WHERE pid = %lld",
	         (long long)id);
	int64_t listed = 1;
	for (int i = 0; i < 500 && (listed = labtest_int(t, sql)) > 0; i++)
		util_sleep_ns(10 * 1000000LL);
	if (listed != 0)
		return false;
	for (int i = 0; noticed && i < 100 && kit_db_connected(db); i++) {
		kit_db_exec(db, "SELECT 1", 0, NULL);
		if (kit_db_connected(db))
			util_sleep_ns(20 * 1000000LL);
	}
	return !noticed || !kit_db_connected(db);
}

int lt_lock_waiting(struct kit_db *monitor, int64_t id)
{
	char arg[24];
	const char *params[] = { arg };
	int64_t n = 0;
	if (kit_db_engine(monitor) == KIT_DB_SQLITE)
		return -1;
	snprintf(arg, sizeof arg, "%lld", (long long)id);
	if (kit_db_query_int(monitor, kit_db_engine(monitor) == KIT_DB_MYSQL
	                     ? "SELECT count(*) FROM information_schema.INNODB_TRX x"
	                       " JOIN information_schema.PROCESSLIST p ON p.ID = x.trx_mysql_thread_id"
	                       " WHERE x.trx_mysql_thread_id = $1 AND x.trx_state = 'LOCK WAIT'"
	                       " AND p.COMMAND <> 'Sleep'"
	                     : "SELECT count(*) FROM pg_stat_activity"
	                       " WHERE pid = $1 AND wait_event_type = 'Lock'",
	                     1, params, &n) != 0)
		return -1;
	return n > 0;
}

int64_t lt_lock_poll_ns(const struct kit_db *monitor)
{
	return kit_db_engine(monitor) == KIT_DB_MYSQL ? 120 * 1000000LL : 2 * 1000000LL;
}

bool lt_sql_sets_timeout(const char *sql)
{
	/* every setting named "...timeout" (lock, statement, busy, but also
	 * idle_in_transaction_session_timeout, deadlock_timeout,
	 * transaction_timeout, wait_timeout: each a limit of the call's own)
	 * and MariaDB's max_statement_time */
	static const char *const names[] = { "timeout", "max_statement_time" };
	if (sql == NULL || !(strcasestr(sql, "SET ") || strcasestr(sql, "set_config") ||
	                     strcasestr(sql, "PRAGMA")))
		return false;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcasestr(sql, names[i]))
			return true;
	return false;
}

bool lt_sql_sets_durability(const char *sql)
{
	if (sql == NULL)
		return false;
	sql = lt_sql_verb(sql);
	const char *name = strcasestr(sql, "synchronous");
	if (lt_sql_is(sql, "PRAGMA"))
		return name && strpbrk(name, "=(");
	return lt_sql_is(sql, "SET") && (name || strcasestr(sql, "innodb_flush_log") ||
	                                 strcasestr(sql, "sync_binlog"));
}

void lt_timeout_watch_init(struct lt_timeout_watch *w, struct kit_db *db)
{
	w->db = db;
	w->expect_ms = kit_db_lock_timeout(db);
	w->seen_ms = -1;
	w->sql[0] = '\0';
}

void lt_timeout_watch(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct lt_timeout_watch *w = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	if (kit_db_engine(w->db) == KIT_DB_SQLITE && w->seen_ms < 0 &&
	    kit_db_lock_timeout(w->db) != w->expect_ms)
		w->seen_ms = kit_db_lock_timeout(w->db);
	if (!w->sql[0] && lt_sql_sets_timeout(sql))
		snprintf(w->sql, sizeof w->sql, "%s", sql);
}

void lt_call_watch_init(struct lt_call_watch *w, struct kit_db *db)
{
	lt_timeout_watch_init(&w->timeout, db);
	w->durability[0] = '\0';
}

void lt_call_watch(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct lt_call_watch *w = arg;
	lt_timeout_watch(&w->timeout, ev, sql, t_ns);
	if ((ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START) && !w->durability[0] &&
	    lt_sql_sets_durability(sql))
		snprintf(w->durability, sizeof w->durability, "%.200s", sql);
}
