/*
 * beside.h: one call held at its COMMIT while another runs beside it;
 * calls let go together (lt_at_once, at the end).
 *
 * Some calls must never wait for each other: two consumers of different
 * partitions, a sale and a payout out of another fee sub-account, a like
 * and a resize that only grows. A call holds every lock it takes until
 * its COMMIT; so the check stops the first call there (its connection's
 * hook, before the COMMIT or END is sent), runs the second on another
 * connection, and watches it: it ends, the server shows it waiting for a
 * lock (tests/harness/session.h), or neither within the time given.
 * Then the first call goes on and both return.
 *
 * Interface:
 *   static int grow(void *arg, struct kit_db *db) { ...; return shard_resize(db, 42, 64); }
 *   static int like(void *arg, struct kit_db *db) { ...; return shard_increment(db, 42, ...); }
 *
 *   struct lt_beside r;
 *   lt_beside_commit(t, grow, like, arg, 5000, &r);
 *   lt_expect(r.held, ...);                         // the first reached its COMMIT
 *   lt_expect(r.ended && r.side_rc == 0, ...);      // the second never waited
 *   ...r.waited says the server saw it wait for a lock, r.what says it in words...
 *
 * Both calls run on connections of their own (labtest_connect), closed
 * before it returns. PostgreSQL and MariaDB: SQLite's one writer makes
 * every write wait for the file.
 */
#ifndef HOTROW_TESTS_BESIDE_H
#define HOTROW_TESTS_BESIDE_H

#include <stdbool.h>
#include <stddef.h>

#include "tests/harness/labtest.h"

typedef int lt_beside_call(void *arg, struct kit_db *db);

struct lt_beside {
	bool held;        /* the first call stopped at its COMMIT */
	bool ended;       /* the second returned while the first was held */
	bool waited;      /* the server showed the second waiting for a lock */
	bool lost;        /* lt_beside_commit_lost: the first's session was ended */
	int held_rc;      /* what each returned */
	int side_rc;
	char what[48];    /* the side call in a phrase for a message: "returned an
	                     error", "waited for a lock", "had not ended after 5 s" */
};

/* Run held until its COMMIT (or END) and hold it there; then run side
 * beside it for up to wait_ms; then let held go. Fills *r. */
void lt_beside_commit(struct labtest *t, lt_beside_call *held, lt_beside_call *side, void *arg,
                      int wait_ms, struct lt_beside *r);

/* The same, but the first call never commits: once the second has
 * ended, waited for a lock or run wait_ms, the first's session is ended
 * on the server (lt_end_session: the server rolls its transaction back,
 * and its COMMIT fails); then the first goes on and returns its error,
 * and the second, whose lock wait is 15 s here, is waited for. r->ended
 * says the second returned while the first was still held, before its
 * outcome was known; r->side_rc is what it returned in the end. */
void lt_beside_commit_lost(struct labtest *t, lt_beside_call *held, lt_beside_call *side,
                           void *arg, int wait_ms, struct lt_beside *r);

/*
 * Calls that meet: n threads of the check's own, each started and then
 * held until all n have started, let go together. A check that wants a
 * lab's first calls, or two calls of one statement, to run at the same
 * moment (a cache filled on first use behind a plain flag, a buffer every
 * thread shares) runs them through this:
 *
 *   struct grow_call g[4] = ...;                     // one argument each
 *   lt_at_once(4, grow_at_once, g, sizeof g[0]);     // fn(&g[i]) on thread i
 *
 * Returns when all n have returned. n is 1 to LT_AT_ONCE_MAX; a thread
 * that cannot be started fails the check, after the ones started have
 * been let go and joined.
 */
#define LT_AT_ONCE_MAX 64
void lt_at_once(int n, void *(*fn)(void *), void *args, size_t size);

#endif
