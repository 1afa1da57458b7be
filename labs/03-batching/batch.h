/*
 * batch.h: Lab 03, two ways to stop writing the hot row once per like.
 *
 * Append + rollup: a like is a new row, never an update of a shared one;
 * a rollup now and then moves the new likes into the per-post counters in
 * one transaction, so it can be repeated, or die half-way, without
 * counting a like twice or never. Coalescing: the app adds likes up in
 * memory and writes the sums with one statement per flush.
 *
 *   likes(id, post_id, user_id)   unique (post_id, user_id): one like per user
 *   post_likes(post_id, n)        the counters; a missing row means 0
 *   ...plus whatever table your rollup needs to know what is new.
 *
 * Interface:
 *   batch_setup(db);
 *   batch_like(db, post, user);                 from any thread, own connection
 *   int64_t moved; batch_rollup(db, &moved);    in a loop until moved == 0
 *   batch_count(db, post, &n);
 *
 *   struct batch_acc *acc = batch_acc_new();    shared by every thread
 *   batch_acc_add(acc, post, 1);                fast, no database
 *   batch_acc_flush(acc, db);                   every interval, e.g. 100 ms
 *   batch_acc_free(acc);
 * Functions that take a db return 0 or the negative KIT_DB_* code the
 * database answered, with kit_db_errmsg(db) saying why: KIT_DB_BUSY (a
 * lock wait that gave up) stays KIT_DB_BUSY, so the caller knows a retry
 * may work, and a failure is never reported as success (a count of 0, a
 * flush done). A call that meets a lock waits as long as its
 * connection's lock timeout allows (kit_db_set_lock_timeout): it sets no
 * timeout of its own, shorter or longer, not even for its own transaction
 * or statement. Nor does it try again: the first statement refused ends
 * the call with its code, at once (whether and when to retry is the
 * caller's choice: it knows its deadline, and a retry inside holds it
 * for a lock wait more each time).
 * A connection is used by one thread at a
 * time. An allocation that fails (malloc, calloc or realloc returning
 * NULL, here or in the kit) is a failure like a refused statement: the
 * call returns KIT_DB_ERR or the kit's code, changes nothing, and works
 * when tried again; no call leaves a block allocated that the next
 * batch_acc_free() does not free.
 */
#ifndef HOTROW_LAB03_BATCH_H
#define HOTROW_LAB03_BATCH_H

#include <stdint.h>

#include "kit/db.h"

#define BATCH_ROLLUP_MAX  10000  /* most likes one batch_rollup() moves */
#define BATCH_FLUSH_ROWS  500    /* most posts in one flush statement */

/* Create the tables if they do not exist. */
int batch_setup(struct kit_db *db);

/* ---- append + rollup ---- */

/* Post and user ids are any int64_t. */

/* The statements that record one like of post_id by user_id, run in the
 * caller's transaction (no BEGIN or COMMIT here): nothing is counted until
 * the caller commits, and a rollback undoes all of it. A second like by
 * the same user returns KIT_DB_CONSTRAINT and leaves nothing of its own
 * in the caller's transaction: on SQLite and MariaDB, which undo the
 * refused statement alone, the caller may roll back or commit the rest
 * (PostgreSQL lets it roll back only). */
int batch_record_like(struct kit_db *db, int64_t post_id, int64_t user_id);

/* One like in its own transaction: batch_record_like and commit, or roll
 * back and return the failure (KIT_DB_CONSTRAINT for a repeat like). */
int batch_like(struct kit_db *db, int64_t post_id, int64_t user_id);

/* Move BATCH_ROLLUP_MAX committed likes that no rollup has moved yet (all
 * of them when fewer wait: a rollup takes no smaller bites) into
 * post_likes, each post's likes as one sum (a statement or two per post,
 * tally_write's upsert; not one update per like, which is the hot row
 * again), the oldest first (the smallest ids: with more waiting
 * than one rollup moves, none waits behind newer likes for ever; so ids
 * follow the order likes are recorded in, over every connection: no
 * sequence that hands each session a block of ids, CACHE > 1), in one
 * transaction begun with kit_db_begin and ended with kit_db_commit (one
 * statement with no transaction around it is one too, but the checks
 * watch for those two, and hold a rollup at its COMMIT); *moved (may be
 * NULL) gets how many,
 * and is left alone when the rollup fails (then nothing moved,
 * whichever statement or allocation failed).
 * Safe to run again at any time, from several connections at once, and
 * safe to die half-way: every committed like is added exactly once over
 * all the rollups that finish, including one whose transaction committed
 * after a like with a larger id. *moved == 0 says that no committed like
 * is left to move, so the caller's loop may stop: a rollup that meets
 * likes another rollup holds waits for that one to end (one that skips
 * them, SKIP LOCKED or a lock tried without waiting, answers 0 while
 * likes are still uncounted). A rollup never makes a like fail: it takes
 * no lock in the likes table, whose keys every like's duplicate check
 * reads (on MariaDB a locking read or an UPDATE of likes takes next-key
 * locks that deadlock with the likes being inserted). Keep what is left
 * to move apart from likes, as the handout's inbox does. */
int batch_rollup(struct kit_db *db, int64_t *moved);

/* The rolled-up count of post_id (0 if it has no row) into *n. */
int batch_count(struct kit_db *db, int64_t post_id, int64_t *n);

/* ---- coalescing in the app ---- */

struct batch_acc;   /* likes counted in memory, per post, not yet written */

/* A new, empty accumulator, or NULL when out of memory. */
struct batch_acc *batch_acc_new(void);

/* Free acc and anything still pending in it (those likes are lost: flush
 * first). NULL is fine. No other thread may be using acc. */
void batch_acc_free(struct batch_acc *acc);

/* Count k more likes of post_id (k >= 0: this lab takes no like back).
 * Thread-safe; never touches a database; adds to different accs do not
 * wait for each other.
 * Sums are int64_t: past 2^31 (an int) and 2^24 (a float) they stay exact.
 * Returns 0, or KIT_DB_ERR when out of memory (nothing counted): only
 * then, however many distinct posts one interval brings. */
int batch_acc_add(struct batch_acc *acc, int64_t post_id, int64_t k);

/* Likes counted by batch_acc_add and not yet written, over all posts:
 * every add that returned before the call is in it (an answer kept from
 * an earlier call is not). Thread-safe. */
int64_t batch_acc_pending(struct batch_acc *acc);

/* Add what is pending into post_likes: one multi-row upsert for up to
 * BATCH_FLUSH_ROWS posts (more posts: one per BATCH_FLUSH_ROWS), in one
 * transaction begun with kit_db_begin and ended with kit_db_commit, however
 * few the posts (the checks hold a flush at its COMMIT, and break its
 * connection just before it). Only what the database accepted leaves the
 * accumulator:
 * on failure (a statement refused, or an allocation: KIT_DB_ERR)
 * everything stays pending for the next flush, and likes added
 * while the flush runs are kept for the next one. Thread-safe; flushes of
 * one acc run one at a time (those of different accs do not wait for
 * each other). Returns 0 (also when nothing was added since
 * the last flush: then it runs no statement at all; a post added with k =
 * 0 may be written as + 0 or left out). */
int batch_acc_flush(struct batch_acc *acc, struct kit_db *db);

#endif
