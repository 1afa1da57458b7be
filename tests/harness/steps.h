/*
 * steps.h: fail the k-th statement of a call, for every k.
 *
 * A call that writes in several statements must leave a state that is
 * right and retryable whichever one of them fails. kit/db passes two
 * failpoints at every statement a process runs (kit/db.h): one refuses
 * the statement before it runs, one loses its answer after it ran (the
 * write happened, the caller hears an error). A check arms one for the
 * k-th statement from now, makes the call, and disarms; it repeats for
 * k = 1, 2, ... until the call ran fewer than k statements.
 *
 * Interface:
 *   for (int k = 1; ; k++) {
 *       ...put the tables in their starting state...
 *       lt_step_arm(LT_STEP_FAILS, k);          // or LT_STEP_REPLY_LOST
 *       int rc = flush(db, ...);
 *       if (!lt_step_disarm())
 *           break;                            // flush ran fewer than k statements
 *       ...the error returned, nothing lost, nothing doubled, a retry works...
 *   }
 * A loop over every kind: for (how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++);
 * lt_step_refused(how) is true for the two that refuse the statement.
 * Statements are counted over the whole process: arm just before the call,
 * disarm just after, and run nothing else in between (no other thread),
 * except with lt_step_arm_from, which is made for two calls at once.
 */
#ifndef HOTROW_TESTS_STEPS_H
#define HOTROW_TESTS_STEPS_H

#include <stdbool.h>
#include <stdint.h>

#include "kit/db.h"

enum lt_step {
	LT_STEP_FAILS,        /* the statement is refused before it runs */
	LT_STEP_REPLY_LOST,   /* the statement runs; its answer is lost */
	LT_STEP_BUSY,         /* refused before it runs, as KIT_DB_BUSY (a lock
	                         wait that timed out): code that takes BUSY for
	                         "nothing to do" or retries it shows */
};

/* Arm how for the k-th statement (k >= 1) from now, once. */
void lt_step_arm(enum lt_step how, int k);

/* Arm how for the k-th statement (k >= 1) from now and every one after
 * it, in every thread: two calls let go together (lt_at_once, beside.h)
 * then both meet the failure, each at about its (k/2)-th statement, and
 * run their failure paths at the same moment. Disarm with
 * lt_step_disarm(). */
void lt_step_arm_from(enum lt_step how, int k);

/* Disarm; true when the armed statement was reached (the failure
 * happened), false when the call ran fewer than k statements. */
bool lt_step_disarm(void);

/* "refused", "ran but its answer was lost" or "refused as busy
 * (KIT_DB_BUSY)", for check messages. */
const char *lt_step_what(enum lt_step how);

/* The statement did not run (LT_STEP_FAILS, LT_STEP_BUSY). */
bool lt_step_refused(enum lt_step how);

/* Refusals that end: every statement db sends refused, with an error
 * (kind 0, "db-stmt-fails") or as KIT_DB_BUSY (kind 1, "db-stmt-busy"),
 * until the 200th, where the refusals stop: a call that retries for ever
 * then ends, and r.stmts shows how far it went.
 *   struct lt_refusals r;
 *   for (int kind = 0; kind < LT_REFUSAL_KINDS; kind++) {
 *       lt_refusals_arm(db, &r, kind);
 *       int rc = call(db, ...);
 *       lt_refusals_disarm(db);
 *       ...r.stmts < 200, rc the database's error...
 *   } */
#define LT_REFUSAL_KINDS 2

struct lt_refusals {
	int stmts;
	int progress_reads;            /* of them, statements naming log_progress */
};

void lt_refusals_arm(struct kit_db *db, struct lt_refusals *r, int kind);
void lt_refusals_disarm(struct kit_db *db);

/* Writes sent with no transaction open. After a failed step a call may
 * send a statement again; if the failure ended the transaction (a lost
 * answer rolls it back, as a dropped connection does; a refused COMMIT
 * has ended it) that statement runs on its own and commits at once. Set
 * as the connection's hook around the call:
 *   struct lt_tx_watch w = { 0 };
 *   kit_db_set_hook(db, lt_tx_watch_hook, &w);
 *   ...arm, call, disarm...
 *   kit_db_set_hook(db, NULL, NULL);
 *   ...w.outside == 0, else w.first is the first such write...
 * A transaction opens at the kit's TX_BEGIN (kit_db_begin, or BEGIN or
 * START TRANSACTION through kit_db_exec) and ends at TX_COMMIT or
 * TX_ROLLBACK (the ROLLBACK the connection makes itself when an answer
 * is lost too). A write is a statement read as the server reads it
 * (sql.h) that is an INSERT, UPDATE, DELETE, REPLACE or MERGE, or a WITH
 * that names one of them. */
struct lt_tx_watch {
	bool open;
	int outside;                  /* writes sent with none open */
	char first[48];               /* the first of them, cut short */
};

void lt_tx_watch_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns);

/* What a transaction runs while it holds a table's rows locked: every
 * statement after the first that locks rows of the table (a write that
 * names it, as lt_tx_watch_hook reads a write, or a SELECT of it with FOR
 * UPDATE, FOR NO KEY UPDATE, FOR SHARE or FOR KEY SHARE) and before the
 * transaction ends. Each is a round trip more that every other writer of
 * those rows waits out. A COMMIT, END or ROLLBACK sent as SQL ends the
 * count and is not counted. One thread only:
 *   struct lt_lock_watch w = { .table = "counters" };
 *   kit_db_set_hook(db, lt_lock_watch_hook, &w);
 *   ...the call...
 *   kit_db_set_hook(db, NULL, NULL);
 *   ...w.after == 0, else w.what is the first statement inside the lock;
 *   w.writes: the writes that named the table... */
struct lt_lock_watch {
	const char *table;            /* the caller's: the table whose rows count */
	bool open, locked;
	int writes;                   /* writes that named the table, in or out of a transaction */
	int after;                    /* statements inside a transaction after its lock */
	char what[80];                /* the first of them, cut short */
};

void lt_lock_watch_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns);

/* True when sql is a SELECT that locks the rows it reads (FOR UPDATE,
 * FOR NO KEY UPDATE, FOR SHARE or FOR KEY SHARE), as lt_lock_watch_hook
 * reads one. */
bool lt_sql_locking_read(const char *sql);

#endif
