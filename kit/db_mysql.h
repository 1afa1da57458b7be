/*
 * db_mysql.h: kit/db's MariaDB (InnoDB) backend, used by kit/db.c only.
 *
 * Labs and benches call kit/db.h; this header is the seam between db.c's
 * dispatch and the libmariadb code, so the backend lives in a file of its
 * own. A connection is named by
 *   mysql://[USER[:PASSWORD]@][HOST][:PORT]/DATABASE[?socket=PATH]
 * (mariadb://... is the same): with ?socket= (or HOST "localhost" and no
 * port) the client uses the Unix socket, as scripts/mysql's URL does.
 *
 * What the backend gives kit/db.h's contract on InnoDB:
 *   - $1, $2, ... placeholders, rewritten to "?" outside string literals,
 *     quoted names and comments ($1 may appear twice: it is bound twice);
 *     the statement runs as a server-side prepared statement. Parameters
 *     are text (NULL for SQL NULL), except a plain decimal integer, which is
 *     bound as an integer, as on SQLite, so LIMIT $1 works. Results are text.
 *   - Affected rows are rows FOUND, not rows changed: the connection sets
 *     CLIENT_FOUND_ROWS, so an UPDATE that matches a row counts 1 even when
 *     it writes the value already there (as SQLite and PostgreSQL count),
 *     and ROW_COUNT() in SQL counts the same way. INSERT ... ON DUPLICATE KEY
 *     UPDATE counts 1 for a new row, 2 for an updated one, 1 for a match
 *     left as it was.
 *   - Deadlock (1213) and lock wait timeout (1205) are KIT_DB_BUSY;
 *     duplicate key, foreign key, NOT NULL and CHECK failures are
 *     KIT_DB_CONSTRAINT.
 *   - A busy error inside a transaction ends it on InnoDB as on
 *     PostgreSQL: InnoDB rolls the whole transaction back on a deadlock but
 *     only the statement on a lock wait timeout, so the backend rolls back
 *     the rest, and the transaction stays failed (every statement refused)
 *     until ROLLBACK or COMMIT; COMMIT then fails with "already failed".
 *     Other errors undo the one statement and leave the transaction open.
 *   - The lock timeout is innodb_lock_wait_timeout for the session, in
 *     whole seconds (a timeout in ms is rounded up); 0 restores the server's
 *     default (50 s).
 *
 * Every function returns 0 or a negative KIT_DB_* code; on failure it
 * writes the cause (not the engine or the statement: db.c adds those) into
 * err, errlen bytes.
 */
#ifndef HOTROW_KIT_DB_MYSQL_H
#define HOTROW_KIT_DB_MYSQL_H

#include <stddef.h>
#include <stdint.h>

#include "kit/db.h"

struct kit_my;

/* 1 when url names a MariaDB server (mysql:// or mariadb://). */
int kit_my_url(const char *url);

/* Connect to url into *out (NULL when out of memory; else always set and
 * given to kit_my_close, even on failure). */
int kit_my_open(struct kit_my **out, const char *url, char *err, size_t errlen);
void kit_my_close(struct kit_my *my);      /* NULL is fine */
int kit_my_connected(const struct kit_my *my);
/* Break the connection for good, as a network that fails does: the
 * server sees it close, and kit_my_connected() says 0 from then on. */
void kit_my_sever(struct kit_my *my);
/* 1 inside a transaction (a failed one included). */
int kit_my_in_tx(const struct kit_my *my);
/* Fail the open transaction as a refused statement fails one on
 * PostgreSQL: it is rolled back, and every statement but ROLLBACK (or a
 * COMMIT, which then fails) is refused until it ends. */
void kit_my_fail_tx(struct kit_my *my);

/* Run sql; with nparams == 0 it may hold several statements separated by
 * ';'. *changes gets the last statement's affected rows. */
int kit_my_exec(struct kit_my *my, const char *sql, int nparams, const char *const *params,
                int64_t *changes, char *err, size_t errlen);
/* Run a query, calling row for each row (text values, NULL for SQL NULL,
 * valid during the call); a nonzero return from row stops and is returned. */
int kit_my_query(struct kit_my *my, const char *sql, int nparams, const char *const *params,
                 kit_db_row_fn *row, void *arg, char *err, size_t errlen);
/* COMMIT: fails when the transaction had already failed (it was rolled
 * back); no transaction is open afterwards either way. */
int kit_my_commit(struct kit_my *my, char *err, size_t errlen);
int kit_my_set_lock_timeout(struct kit_my *my, int ms, char *err, size_t errlen);

/* From db.c, shared by both: 1 when s is a plain decimal integer that fits
 * in 64 bits (no sign but '-', no leading zero), which is bound as an
 * integer rather than as text. */
int kit_db_plain_integer(const char *s);

#endif
