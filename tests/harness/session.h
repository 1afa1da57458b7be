/*
 * session.h: what a call left behind on its connection.
 *
 * A lab's function may change its session and forget to change it back:
 * a PRAGMA synchronous = OFF or a SET synchronous_commit = off "for
 * speed", a lock timeout set for one statement, a transaction that an
 * error path never ended. Every later statement on that connection then
 * runs in a state nobody chose. A check reads the session before the
 * calls and after each one, and compares.
 *
 * It also names a session and says whether it waits for a lock, as the
 * server shows it to another connection: a check that holds a row waits
 * until the call under test queues behind it before it lets go.
 *
 * Interface:
 *   char before[LT_SESSION_LEN];
 *   lt_session(t, db, before, sizeof before);
 *   ...a call...
 *   lt_session_unchanged(t, db, before, "a refused flush", "flush");
 *
 *   int64_t id = lt_session_id(caller);
 *   ...the call starts in a thread...
 *   while (lt_lock_waiting(monitor, id) == 0 && ...)
 *           util_sleep_ns(lt_lock_poll_ns(monitor));
 */
#ifndef HOTROW_TESTS_SESSION_H
#define HOTROW_TESTS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/harness/labtest.h"

#define LT_SESSION_LEN 4096

/* The session's settings as one line: SQLite's pragmas (synchronous,
 * journal_mode, foreign_keys, busy_timeout, cache_size, mmap_size,
 * cache_spill, journal_size_limit, automatic_index, secure_delete,
 * threads, ... every one a PRAGMA can change on the connection and read
 * back, and the process's soft and hard heap limits) and the kit's own busy
 * wait (kit_db_lock_timeout); PostgreSQL's settings
 * that the client or the session set, each with its source (the harness's
 * URL sets synchronous_commit = off already, so a SET of it to off
 * changes only the source) and, when it has any, the advisory locks it
 * holds past its transactions (advisory_locks_held=N), its statements
 * PREPAREd by name, its open cursors, the channels it LISTENs on and its
 * temporary tables; a list of
 * MariaDB's session variables (isolation, lock waits, sql_mode, ... and
 * those read by name: sql_safe_updates, wait_timeout, net_read_timeout,
 * innodb_strict_mode, sql_select_limit, time_zone, ...). Fails
 * the check if they cannot be read. */
void lt_session(struct labtest *t, struct kit_db *db, char *out, size_t len);

/* Give db's session values of its own, other than where a fresh session
 * stands, of settings a call is tempted to change "for one read" and then
 * put back with RESET, SET ... = DEFAULT or a value written into the
 * code: PostgreSQL's enable_seqscan, enable_bitmapscan and
 * default_transaction_isolation (set to on and to 'read committed': the
 * values a RESET gives, but now the session's), statement_timeout,
 * lock_timeout (1 h) and work_mem; MariaDB's max_statement_time,
 * lock_wait_timeout and innodb_lock_wait_timeout; SQLite's
 * wal_autocheckpoint (999, not 1000) and cache_size. A call that puts
 * back a default rather than what it found then shows in lt_session
 * taken before and after. Fails the check if one cannot be set. */
void lt_session_own_values(struct labtest *t, struct kit_db *db);

/* PostgreSQL: sequential scans of table (in the check's schema) as the
 * statistics count them, the test connection's own pending counts
 * flushed first (pg_stat_force_next_flush, PostgreSQL 15: they go out
 * the next time the session is idle, which comes before the read). A
 * statement the primary key cannot serve moves it. -1 if the table has
 * no statistics row. */
int64_t lt_pg_seq_scans(struct labtest *t, const char *table);

/* Session-level locks db's session holds, which no ROLLBACK lets go:
 * PostgreSQL's advisory locks (pg_advisory_lock), MariaDB's named locks
 * (GET_LOCK: RELEASE_ALL_LOCKS() both counts and releases them, so a
 * check that finds one leaves none behind); 0 on SQLite, which has none;
 * -1 when it cannot tell. */
int64_t lt_session_user_locks(struct labtest *t, struct kit_db *db);

/* 1 when db has a transaction open, 0 when not, -1 when it cannot tell.
 * On SQLite it tries a BEGIN (refused inside a transaction) and rolls it
 * back. */
int64_t lt_in_transaction(struct labtest *t, struct kit_db *db);

/* Fail the check (with hint) when, after what (the call just made, for
 * the message), db has a transaction open or its settings differ from
 * before (a line lt_session() read earlier). */
void lt_session_unchanged(struct labtest *t, struct kit_db *db, const char *before,
                          const char *what, const char *hint);

/* The server's id of db's session: pg_backend_pid() on PostgreSQL,
 * CONNECTION_ID() on MariaDB; 0 on SQLite, which has none; -1 when the
 * query failed (kit_db_errmsg(db) says why). */
int64_t lt_session_id(struct kit_db *db);

/* End db's server session from the test's own connection, as a restart,
 * a failover or an idle timeout does (pg_terminate_backend on PostgreSQL,
 * KILL on MariaDB), and wait up to 5 s until the server no longer lists
 * it. With noticed, then send db a statement (every 20 ms, up to 2 s)
 * until the kit has seen the close too (kit_db_connected(db) 0); without,
 * db's next statement is the first to meet it. Whether all of that
 * happened; false on SQLite, which has no session to end. */
bool lt_end_session(struct labtest *t, struct kit_db *db, bool noticed);

/* Whether session id (lt_session_id) waits for a lock, as the server shows
 * it to another connection, monitor: pg_stat_activity's wait_event_type
 * 'Lock' on PostgreSQL, INNODB_TRX's trx_state 'LOCK WAIT' on MariaDB.
 * 1 waiting, 0 not, -1 the query failed or monitor is a SQLite connection
 * (a file lock has no session to show). On MariaDB INNODB_TRX comes from a
 * cache that is renewed only when nobody on the server read it in the
 * last 0.1 s: while other clients poll it (the checks of a class, or of
 * make test's other lanes) it can show a wait that has ended, so the
 * session must also be running a statement (PROCESSLIST's COMMAND not
 * Sleep; a closed session is not there at all), which is read live. */
int lt_lock_waiting(struct kit_db *monitor, int64_t id);

/* How long to sleep between two lt_lock_waiting() looks on monitor's
 * engine: InnoDB renews INNODB_TRX only when it was last read more than
 * 0.1 s ago, so looks closer together than that read the same picture
 * again and never see a new wait (0.12 s); PostgreSQL shows a wait at
 * once (2 ms). */
int64_t lt_lock_poll_ns(const struct kit_db *monitor);

/* Whether sql sets a timeout: a SET (LOCAL, SESSION, STATEMENT ...
 * FOR), a set_config or a PRAGMA that names a setting ending in timeout
 * (lock_timeout, statement_timeout, innodb_lock_wait_timeout,
 * busy_timeout, idle_in_transaction_session_timeout, deadlock_timeout...)
 * or max_statement_time. The SET that kit_db_set_lock_timeout sends on a
 * server is one. */
bool lt_sql_sets_timeout(const char *sql);

/* Whether sql turns COMMIT's wait for the disk down: a SET (LOCAL,
 * SESSION, GLOBAL or STATEMENT ... FOR) of synchronous_commit, InnoDB's
 * innodb_flush_log_at_trx_commit or sync_binlog, or a PRAGMA synchronous
 * that assigns. A call that sends one acknowledges work a crash can
 * still lose. */
bool lt_sql_sets_durability(const char *sql);

/* What a call did to its connection's lock timeout while it ran, for the
 * contracts that say a call "sets no timeout of its own, shorter or
 * longer, not even for its own transaction": the first statement it sent
 * that sets one, or on SQLite, where the kit waits itself and no
 * statement shows it, a busy wait (kit_db_lock_timeout) other than the
 * connection's that some statement ran under:
 *   struct lt_timeout_watch w;
 *   lt_timeout_watch_init(&w, db);
 *   kit_db_set_hook(db, lt_timeout_watch, &w);
 *   ...the call...
 *   kit_db_set_hook(db, NULL, NULL);
 *   w.sql[0] ("" when none), w.seen_ms (-1 when none), w.expect_ms
 * A hook of a check's own may call lt_timeout_watch() from its own. */
struct lt_timeout_watch {
	struct kit_db *db;
	int expect_ms;                 /* SQLite: the connection's busy wait */
	int seen_ms;                   /* SQLite: another one seen, or -1 */
	char sql[256];                 /* the first statement that set a timeout */
};

void lt_timeout_watch_init(struct lt_timeout_watch *w, struct kit_db *db);
void lt_timeout_watch(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns);

/* What a call sent that the contracts of money.h and shard.h forbid: a
 * timeout of its own (the lt_timeout_watch above) and the first statement
 * that turns its COMMIT's wait for the disk down (lt_sql_sets_durability),
 * in durability ("" when none). Used as lt_timeout_watch is. */
struct lt_call_watch {
	struct lt_timeout_watch timeout;
	char durability[256];
};

void lt_call_watch_init(struct lt_call_watch *w, struct kit_db *db);
void lt_call_watch(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns);

#endif
