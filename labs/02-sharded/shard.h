/*
 * shard.h: Lab 02, a like counter spread over N slot rows.
 *
 * Instead of one row per post, a post's likes live in up to N rows of
 * like_slots, one per slot 0..N-1. Each like adds 1 to one slot picked at
 * random; the count is the sum over the post's rows. N is kept per post in
 * like_slot_config, in the database, so every writer (every thread, every
 * app server) sees the same N and a resize takes effect for all of them at
 * once. A post without a config row has SHARD_DEFAULT_SLOTS slots.
 *
 *   like_slots(post_id, slot, n)     primary key (post_id, slot)
 *   like_slot_config(post_id, nslots)
 *
 * Interface:
 *   shard_setup(db);                              once per database
 *   shard_increment(db, post, my_rand, &state);   one like
 *   shard_read(db, post, &total);                 exact count
 *   shard_resize(db, post, 4);                    fewer slots, same total
 *   int n = shard_choose_n(2000, 2.0, 1.5);       how many slots to have
 * Every function returns 0 on success or a negative KIT_DB_* code, with
 * kit_db_errmsg(db) saying why; on failure the database is unchanged. An
 * allocation that fails (malloc or calloc returning NULL) is such a
 * failure: KIT_DB_ERR, the transaction rolled back. No call leaves a block
 * allocated.
 * A connection is used by one thread at a time; different threads use
 * different connections and may call any of these at the same time. No
 * call waits for another that touches none of its rows: it takes no lock
 * of the process (a mutex around a resize, or around a static buffer it
 * uses) and none on a row every like reads (a like reads N with a plain
 * SELECT: no FOR UPDATE, FOR SHARE or FOR KEY SHARE).
 * How long a COMMIT waits for the disk (synchronous_commit, PRAGMA
 * synchronous) is the caller's setting: a call changes it in neither
 * direction, not even for its own transaction.
 * A call that meets a row lock waits as long as its connection's lock
 * timeout allows (kit_db_set_lock_timeout; by default, without end): it
 * sets no timeout of its own, shorter or longer (0, "for ever", included),
 * not even for its own transaction.
 * A statement refused as KIT_DB_BUSY (that wait timed out) ends the call:
 * it rolls back and returns KIT_DB_BUSY at once, without retrying; the
 * caller decides whether to try again.
 */
#ifndef HOTROW_LAB02_SHARD_H
#define HOTROW_LAB02_SHARD_H

#include <stdint.h>

#include "kit/db.h"

#define SHARD_DEFAULT_SLOTS 16   /* N for a post never resized */
#define SHARD_MAX_SLOTS     1024 /* largest N shard_resize accepts */

/* A source of random numbers: returns a uniform 32-bit value. The caller
 * owns arg; tests pass a predictable source to see where likes land. */
typedef uint32_t shard_rand_fn(void *arg);

/* Create like_slots and like_slot_config if they do not exist, as
 * ordinary tables: a like that returned 0 survives a crash or a restart
 * of the server (not UNLOGGED, not a MEMORY or TEMP table).
 * like_slot_config.nslots carries a CHECK (nslots > 0): a row of 0 or
 * fewer slots, even one written with plain SQL, is refused
 * (KIT_DB_CONSTRAINT), so no like ever takes a value % 0. */
int shard_setup(struct kit_db *db);

/* Record one like of post_id: call rnd(rnd_arg) exactly once, take slot =
 * value % N with the post's current N, and add 1 to that slot in a single
 * statement that creates the row if it is missing. Post ids are any
 * int64_t; the random value is any uint32_t, all 32 bits of it. */
int shard_increment(struct kit_db *db, int64_t post_id, shard_rand_fn *rnd, void *rnd_arg);

/* Store post_id's exact count in *total: 0 for a post never liked. *total
 * is untouched on failure. */
int shard_read(struct kit_db *db, int64_t post_id, int64_t *total);

/* Store post_id's current N in *nslots (SHARD_DEFAULT_SLOTS if never
 * resized). */
int shard_slots(struct kit_db *db, int64_t post_id, int *nslots);

/* Give post_id nslots slots (1 .. SHARD_MAX_SLOTS, both included; anything
 * else returns KIT_DB_ERR before touching the database). Growing only records the new
 * N. Shrinking also moves the count of every row at slot >= nslots into
 * slot (its slot % nslots) and removes the row, all in one transaction
 * begun with kit_db_begin and ended with kit_db_commit (a single statement
 * with no transaction around it is one too, but the checks watch for
 * those two, and hold a resize at its COMMIT), so
 * shard_read() gives the same total before, during and after (a resize to
 * the N the post has already is no shrink: it need not fold a row that a
 * like which read an older N left past N; shard_read counts that row, and
 * the next shrink folds it; likewise a resize that took itself for a grow
 * from an N it read before it wrote its own, while another resize of the
 * post moved N in between, may leave such rows). Increments
 * running in other threads at the same time are neither lost nor counted
 * twice. Two resizes of one post at the same time both succeed, one after
 * the other: write the new N first, with one upsert of the post's config
 * row, so that the row's lock puts them in line (an UPDATE, then an
 * INSERT when it matched nothing, lets both insert: one fails on the
 * key, or, with ON CONFLICT DO NOTHING or INSERT IGNORE, writes nothing
 * and its N is lost). */
int shard_resize(struct kit_db *db, int64_t post_id, int nslots);

/* How many slots a post needs: one row absorbs at most 1000 / hold_ms
 * updates per second, so
 *
 *     N = ceil(peak_per_s * hold_ms / 1000 * headroom),  at least 1
 *
 * taken on the exact product: 2000/s with 2 ms holds needs 4 rows, 8
 * with headroom 2, and 50000/s with 1 ms and headroom 1.1 needs 55 (the
 * floating-point product is a hair above 55; that crumb is not a row).
 * A crumb grows with the product but stays a few parts in 10^16 of it
 * (9e9/s, 1.5 ms and headroom 2.2 need 29,700,000 rows, not 29,700,001);
 * a fraction of a row that is 10^-10 of the product or more is a row.
 * Returns N,
 * or -1 if peak_per_s < 0, hold_ms <= 0 or headroom < 1, or any of them
 * is not a number (NaN). An N above
 * SHARD_MAX_SLOTS is returned as computed (the caller decides); one
 * larger than an int holds (an infinite rate, hold or headroom too) comes
 * back as INT_MAX. A rate of 0 needs 1 row, even with an infinite hold
 * or headroom (0 x infinity is no number).
 * The product is worked in double: a float holds no integer past 2^24. */
int shard_choose_n(double peak_per_s, double hold_ms, double headroom);

#endif
