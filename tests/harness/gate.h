/*
 * gate.h: hold two or more connections at a chosen statement, then let
 * them all go at once, so a race between two calls is forced, not hoped for.
 *
 * Whether two likes by one user, or two flushes, go wrong depends on where
 * each call is when the other runs. The gate makes that place a parameter
 * of the test. Each of its connections counts the statements it starts
 * (every kit_db call that runs one: exec, query, begin, commit, rollback;
 * kit/db.h's hook) and stops before its k-th, or before its k-th that
 * starts with a given word ("UPDATE", "COMMIT"), until every other
 * connection of the gate is at its own stop, has finished its call, or is
 * waiting for a lock (PostgreSQL: pg_stat_activity says so; MariaDB:
 * INNODB_TRX says LOCK WAIT, looked at no more than every 0.12 s, as
 * InnoDB renews it; SQLite: its busy wait began). Then the gate opens, once, for all. Sweeping k over
 * every statement of the call forces each interleaving in turn; giving two
 * connections different stops forces "A has run two statements, B none";
 * a stop past the end of a call means "after the whole call", and
 * lt_gate_run_first() lets one connection run its whole call while the
 * others stay at their stops.
 *
 * A correct call that locks is never stuck behind the gate: the other
 * connection, waiting for its lock, counts as arrived. Something the gate
 * cannot see (a C mutex of the code under test that the held connection
 * owns) holds the gate shut for LT_GATE_PATIENCE_MS at most; it then opens
 * anyway and lt_gate_stalls() counts it: the verdict is still right, only
 * that interleaving was not forced.
 *
 * SQLite has one writer at a time: a call that opens with BEGIN IMMEDIATE
 * (kit_db_begin) holds the write lock, and the other connection waits at
 * its BEGIN, so inside such calls only whole-call orders exist. A call
 * that reads outside a transaction, or in a deferred one, can be stopped
 * between its read and its write on SQLite as well as on PostgreSQL.
 *
 * Interface:
 *   static int like(void *arg, int who, struct kit_db *db)   // in a thread
 *   { (void)arg; (void)who; return like_post(db, 1, 7, NULL); }
 *
 *   struct lt_gate *g = lt_gate_open(t, 2);   // two connections of its own
 *   for (int k = 1; ; k++) {
 *       ...put the tables in their starting state...
 *       lt_gate_run(g, NULL, (int[]){ k, k }, like, NULL);
 *       if (!lt_gate_reached(g))
 *           break;                           // both calls are shorter than k
 *       ...check the tables and lt_gate_rc(g, 0), lt_gate_rc(g, 1)...
 *   }
 *   lt_gate_close(g);
 * The call runs in a thread of its own: it must not fail the test itself
 * (no lt_expect there); it returns a code, and the test checks afterwards.
 */
#ifndef HOTROW_TESTS_GATE_H
#define HOTROW_TESTS_GATE_H

#include <stdbool.h>

#include "tests/harness/labtest.h"

#define LT_GATE_MAX 8               /* connections in one gate */
#define LT_GATE_PATIENCE_MS 1500    /* longest hold when nothing can be seen to move */

struct lt_gate;

/* One caller's part in a race: runs in its own thread on connection db
 * (one of the gate's), who = 0 .. n-1. Returns its result code. */
typedef int lt_gate_call(void *arg, int who, struct kit_db *db);

/* A gate with n (2 .. LT_GATE_MAX) connections of its own to the test's
 * database. Fails the test if they cannot be opened. */
struct lt_gate *lt_gate_open(struct labtest *t, int n);
void lt_gate_close(struct lt_gate *g);       /* closes its connections; NULL is fine */

/* The gate's connection number who, to prepare a session before a run. */
struct kit_db *lt_gate_db(struct lt_gate *g, int who);

/* Run call on every connection at once, connection i stopping before its
 * stops[i]-th statement (counting only the statements that start with
 * match, case-insensitively, when match is not NULL, "BEGIN" counting START
 * TRANSACTION too; stops[i] >= 1) until
 * the gate opens. Returns when every call has returned. */
void lt_gate_run(struct lt_gate *g, const char *match, const int *stops,
                 lt_gate_call *call, void *arg);

/* lt_gate_run, except that when the gate opens, connection first goes
 * on alone; the others stay held until its call has returned or it waits
 * for a lock (one of theirs). With stops { k, 1 } and first = 1, call 1
 * runs whole between statements k - 1 and k of call 0: "a like lands
 * while the shrink is before its k-th statement", forced. */
void lt_gate_run_first(struct lt_gate *g, const char *match, const int *stops, int first,
                       lt_gate_call *call, void *arg);

/* After a run: the result of connection who's call; whether any connection
 * reached its stop (false: every call was shorter, so a sweep is over);
 * whether connection who reached its own; and how many runs opened only
 * because the patience ran out. */
int lt_gate_rc(const struct lt_gate *g, int who);
bool lt_gate_reached(const struct lt_gate *g);
bool lt_gate_held(const struct lt_gate *g, int who);
int lt_gate_stalls(const struct lt_gate *g);

/* How many statements (matching match, when not NULL) connection who's
 * call started in the last run. */
int lt_gate_seen(const struct lt_gate *g, int who);

#endif
