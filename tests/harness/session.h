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
 * Interface:
 *   char before[LT_SESSION_LEN];
 *   lt_session(t, db, before, sizeof before);
 *   ...a call...
 *   lt_session_unchanged(t, db, before, "a refused flush", "flush");
 */
#ifndef HOTROW_TESTS_SESSION_H
#define HOTROW_TESTS_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "tests/harness/labtest.h"

#define LT_SESSION_LEN 2048

/* The session's settings as one line: SQLite's pragmas (synchronous,
 * journal_mode, foreign_keys, busy_timeout, ...) and the kit's own busy
 * wait (kit_db_lock_timeout); PostgreSQL's settings
 * that the client or the session set, each with its source (the harness's
 * URL sets synchronous_commit = off already, so a SET of it to off
 * changes only the source) and, when it holds any, the advisory locks it
 * holds past its transactions (advisory_locks_held=N); a list of
 * MariaDB's session variables. Fails
 * the check if they cannot be read. */
void lt_session(struct labtest *t, struct kit_db *db, char *out, size_t len);

/* 1 when db has a transaction open, 0 when not, -1 when it cannot tell.
 * On SQLite it tries a BEGIN (refused inside a transaction) and rolls it
 * back. */
int64_t lt_in_transaction(struct labtest *t, struct kit_db *db);

/* Fail the check (with hint) when, after what (the call just made, for
 * the message), db has a transaction open or its settings differ from
 * before (a line lt_session() read earlier). */
void lt_session_unchanged(struct labtest *t, struct kit_db *db, const char *before,
                          const char *what, const char *hint);

#endif
