/*
 * db.h: one small API over SQLite, PostgreSQL and MariaDB, for the labs and
 * benches.
 *
 * A database is named by URL: "sqlite:PATH", "sqlite::memory:",
 * "postgres://..." or "postgresql://...", or a libpq conninfo string
 * ("host=... dbname=..."); PG* environment variables are honoured; or
 * "mysql://USER@HOST/DB?socket=PATH" ("mariadb://" too) for MariaDB, whose
 * rules (affected rows are rows found, busy errors end the transaction,
 * the lock timeout in whole seconds) kit/db_mysql.h states. SQL uses
 * $1, $2, ... placeholders on every engine; parameters are passed as text
 * (NULL for SQL NULL) and converted by the database. A statement must use
 * every parameter it is given, and no other: both engines refuse it
 * otherwise, with the same message ("2 parameters given, but the
 * statement uses 1").
 *
 * Interface:
 *   struct kit_db *db;
 *   if (kit_db_open(&db, url) != 0) { puts(kit_db_errmsg(db)); kit_db_close(db); }
 *   kit_db_exec(db, "UPDATE posts SET likes = likes + 1 WHERE id = $1", 1, (const char *[]){"42"});
 *   kit_db_close(db);
 * Every call returns 0 on success and a negative KIT_DB_* code on failure;
 * kit_db_errmsg() then names the engine, the statement and the cause. A
 * handle is used by one thread at a time: give each thread its own.
 */
#ifndef HOTROW_KIT_DB_H
#define HOTROW_KIT_DB_H

#include <stdint.h>

enum {
	KIT_DB_OK = 0,
	KIT_DB_ERR = -1,        /* any other failure (syntax, connection, ...) */
	KIT_DB_CONSTRAINT = -2, /* a unique / primary key / check constraint refused it */
	KIT_DB_BUSY = -3,       /* lock timeout, SQLITE_BUSY, serialization failure, deadlock */
	KIT_DB_NOROW = -4,      /* a scalar query returned no row */
};

enum kit_db_engine { KIT_DB_SQLITE, KIT_DB_POSTGRES, KIT_DB_MYSQL };

struct kit_db;

/* Open the database named by url into *out. *out is always set (to a handle
 * that carries the error message on failure) and must be given to
 * kit_db_close(). SQLite gets WAL and a busy timeout; PostgreSQL a connect
 * timeout. */
int kit_db_open(struct kit_db **out, const char *url);
void kit_db_close(struct kit_db *db);            /* NULL is fine */
enum kit_db_engine kit_db_engine(const struct kit_db *db);
const char *kit_db_errmsg(const struct kit_db *db);
/* 1 while the handle has a live connection (always for SQLite); 0 once
 * the server is gone (shut down, restarted, the connection killed). */
int kit_db_connected(const struct kit_db *db);

/* Run one statement (or, with nparams == 0, several separated by ';'). */
int kit_db_exec(struct kit_db *db, const char *sql, int nparams, const char *const *params);

/* Run a query that returns one row with one integer column into *out.
 * KIT_DB_NOROW when it returned no row; NULL reads as 0; KIT_DB_ERR when
 * the value does not fit in an int64_t (a SUM past INT64_MAX). */
int kit_db_query_int(struct kit_db *db, const char *sql, int nparams,
                     const char *const *params, int64_t *out);

/* Run a query and call row(arg, ncols, values) for each row; values are
 * text (NULL for SQL NULL) valid only during the call, and values[ncols]
 * is NULL, as argv ends. A nonzero return from row stops the walk and is
 * returned. */
typedef int kit_db_row_fn(void *arg, int ncols, const char *const *values);
int kit_db_query(struct kit_db *db, const char *sql, int nparams,
                 const char *const *params, kit_db_row_fn *row, void *arg);

/* Rows changed by the last kit_db_exec (UPDATE/INSERT/DELETE). */
int64_t kit_db_changes(const struct kit_db *db);

/* Transactions. begin is BEGIN IMMEDIATE on SQLite (take the write lock
 * now, not at the first write) and BEGIN on PostgreSQL. */
int kit_db_begin(struct kit_db *db);
/* commit fails (KIT_DB_ERR) when the transaction had already failed and
 * PostgreSQL rolled it back instead; after a failed commit no transaction
 * is open, on either engine. The failpoint "db-commit-reply-lost"
 * (kit/failpoint.h), armed with error, makes a COMMIT that succeeded
 * answer KIT_DB_ERR, as when the connection breaks before the answer; a
 * COMMIT (or END) sent with kit_db_exec meets it too. "db-commit-conn-lost"
 * does the same and breaks the connection for real on the servers (the
 * server sees it close; kit_db_connected() is 0 from then on).
 * "db-commit-conn-gone" breaks it just before the COMMIT is sent: the
 * transaction is rolled back, the caller hears KIT_DB_ERR (on SQLite,
 * which has no connection, only the rollback happens). */
int kit_db_commit(struct kit_db *db);
/* rollback with no transaction open succeeds and does nothing (PostgreSQL
 * warns, SQLite would refuse: the kit makes them agree), so an error path
 * may always roll back. */
int kit_db_rollback(struct kit_db *db);

/* How long a statement waits for a row or table lock before failing with
 * KIT_DB_BUSY: SQLite's busy wait (5000 ms by default) or PostgreSQL's
 * lock_timeout (0, wait forever, by default), or MariaDB's
 * innodb_lock_wait_timeout (whole seconds, rounded up; 50 s by default).
 * ms == 0 means the default. */
int kit_db_set_lock_timeout(struct kit_db *db, int ms);
/* SQLite's busy wait as the kit applies it, in ms (5000 until
 * kit_db_set_lock_timeout changes it): no PRAGMA shows it, since the kit
 * waits in its own busy handler. -1 on the servers, whose lock timeout is
 * a session setting (read it there). */
int kit_db_lock_timeout(const struct kit_db *db);

/* Instrumentation: when set, hook(arg, ev, sql, t_ns) is called at the
 * start and end of each statement and transaction, t_ns from
 * CLOCK_MONOTONIC, so tests can measure how long a row lock was held.
 * STMT_START/STMT_END bracket kit_db_exec and the queries; TX_BEGIN,
 * TX_COMMIT and TX_ROLLBACK fire once the statement has finished (so
 * TX_BEGIN on SQLite comes after the write lock is taken), whether it came
 * from kit_db_begin/commit/rollback or from kit_db_exec("COMMIT").
 * TX_STMT_START/TX_STMT_END bracket the statements the kit runs itself:
 * those of kit_db_begin/commit/rollback and kit_db_set_lock_timeout (so
 * STMT_START alone still counts the caller's own SQL). LOCK_WAIT (SQLite
 * only; sql is the waiting statement, never NULL) fires when a statement
 * starts waiting for another connection's lock. The hook runs in the caller's thread and may block
 * (tests/harness/gate.h holds connections at a chosen statement so).
 *
 * Step failpoints (kit/failpoint.h), counted over every statement of the
 * process, for tests that fail the k-th statement of a call:
 *   "db-stmt-fails"  the statement is refused before it runs (KIT_DB_ERR);
 *                    a refused COMMIT or ROLLBACK ends the transaction,
 *                    and on PostgreSQL a refused statement inside a
 *                    transaction leaves it failed, as a server error does.
 *   "db-stmt-busy"   the same, answered KIT_DB_BUSY, as a lock wait that
 *                    timed out is (a loop that retries BUSY for ever shows).
 *   "db-reply-lost"  the statement runs, then its answer is lost: the
 *                    caller hears KIT_DB_ERR, what was committed stays
 *                    committed, an open transaction is rolled back.
 * Arm them with the action "once" (KIT_FP_ONCE) and @k to fail exactly
 * the k-th statement from now. */
enum kit_db_event {
	KIT_DB_STMT_START, KIT_DB_STMT_END,
	KIT_DB_TX_BEGIN, KIT_DB_TX_COMMIT, KIT_DB_TX_ROLLBACK,
	KIT_DB_TX_STMT_START, KIT_DB_TX_STMT_END, KIT_DB_LOCK_WAIT
};
typedef void kit_db_hook_fn(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns);
void kit_db_set_hook(struct kit_db *db, kit_db_hook_fn *hook, void *arg);

#endif
