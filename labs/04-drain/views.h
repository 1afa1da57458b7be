/*
 * views.h: Lab 04, buffer and drain — the API you implement.
 *
 * A view no longer touches the database. record_view() counts it in the
 * store (kit/store.h: the in-process one, or a real Redis): the video's
 * delta key goes up by one and the video is marked dirty. Whatever must
 * happen as one step is a script (kit_store_eval), written twice: in C
 * for the in-process store, in Lua for Redis. Every so often a flusher drains the dirty
 * videos with an atomic read-and-reset and adds their deltas to the
 * database in one multi-row upsert; if the database refuses, the deltas go
 * back into the store for the next flush.
 *
 * Store layout (the tests read it, so keep to it):
 *   "views:delta:<id>"  integer: views of video <id> not yet in the database
 *   "views:dirty"       set of "<id>" strings: videos whose delta may be > 0
 *   "views:token"       integer: the last flush token handed out (§5b)
 *   "views:parked"      set of "<token>" strings: batches drained, not yet
 *                       known to be in the database
 *   "views:park:<token>" set of "<id>=<n>" strings: that batch's deltas
 * Every <id>, <n> and <token> is written in decimal digits, all of them
 * (in Lua, 10^14 joined with `..` is "1e+14": string.format('%d', x)).
 * Each step below is all or nothing. A command that fails inside a
 * script (a key of the wrong type: another program's key, a typo in a
 * prefix) does not undo the commands before it (README §2), so a step
 * reads every key it will write before its first write, and a step that
 * has popped ids puts them back when a read then fails. A delta key or
 * "views:token" holding a string which is no integer (another program's
 * SET) is such a key too: GET hands it back as it is, so a step tests
 * that what it read is an integer before it writes, and fails when it is
 * not (README §4); tonumber() is not that test ("1e3" reads as 1000).
 * Database: the tables in VIEWS_SCHEMA (one row per video) and
 * VIEWS_TOKENS_SCHEMA (one row per flush applied), created by the caller
 * (tests, `hotrow lab run 04`).
 *
 * Interface:
 *   kit_store_open(&st, url);                  "mem:" or a Redis URL
 *   record_view(st, 42);                       on the request path
 *   flush_views(st, db, 500);                  from one flusher only
 *   struct flusher *f;
 *   start_flusher(&f, st, db, 100, 500);       ... one flush every 100 ms
 *   stop_flusher(f);                           last flush, then stop
 * Every function returns 0 (or a count) on success and a negative
 * KIT_STORE_* or KIT_DB_* code on failure. An allocation that fails
 * (malloc or calloc returning NULL) is a failure like a refused statement:
 * KIT_STORE_NOMEM or KIT_DB_ERR, every view still in the store or the
 * database exactly once, a retry that works. The strings the store hands
 * over (kit_store_spop's ids, kit_store_smembers' members) are yours to
 * free; no call leaves a block allocated.
 */
#ifndef HOTROW_LAB04_VIEWS_H
#define HOTROW_LAB04_VIEWS_H

#include <stdint.h>

#include "kit/db.h"
#include "kit/store.h"

#define VIEWS_DIRTY "views:dirty"
#define VIEWS_DELTA_PREFIX "views:delta:"
#define VIEWS_SCHEMA \
	"CREATE TABLE video_counts (video_id BIGINT PRIMARY KEY, views BIGINT NOT NULL)"
#define VIEWS_TOKENS_SCHEMA \
	"CREATE TABLE applied_flushes (token BIGINT PRIMARY KEY)"
#define VIEWS_TOKEN "views:token"
#define VIEWS_PARKED "views:parked"
#define VIEWS_PARK_PREFIX "views:park:"
#define VIEWS_MAX_BATCH 1000   /* the most videos one flush may take */

/* One drained video: its id and the views taken from the store. Ids,
 * counts and tokens are int64_t, in the store's strings too: past 2^31
 * and 2^32 they stay exact (Redis's Lua holds integers exactly up to
 * 2^53, so the kit's ids and counts stay below that). */
struct view_delta {
	int64_t video_id;
	int64_t n;
};

/* Count one view of video_id in the store: its delta goes up by one and
 * it is marked dirty — both or neither, so that whatever happens in
 * between, no drain can see one without the other (§3). */
int record_view(struct kit_store *st, int64_t video_id);

/* Take up to max (1 .. VIEWS_MAX_BATCH) dirty videos and their deltas out
 * of the store into out[0 .. *n-1], leaving their deltas at zero. The read
 * and the reset are one atomic step, so a view recorded at any moment ends
 * up either in out or still in the store, never in neither (§4). Videos
 * with a zero delta are left out; a delta below zero (views taken back
 * with DECRBY, a bot's views removed) is taken like any other. On failure
 * *n is 0, a lost reply included, and nothing was taken (unless only the
 * reply was lost: the step ran, and what it took is known to no one). */
int drain_views(struct kit_store *st, int max, struct view_delta *out, int *n);

/* Drain as drain_views does and, in the same atomic step, park what was
 * taken in the store under a new token (§5b): INCR "views:token", add the
 * token to "views:parked" and each "<id>=<n>" to "views:park:<token>".
 * *token is that token, or 0 when nothing was dirty (then nothing is
 * parked and no token is used). When something is dirty but
 * "views:token" is missing (a new store, or one that restarted: a missing
 * key reads as 0, and the counter never holds 0 once set, as it starts
 * at the largest applied token + 1 >= 1) it takes
 * nothing (*n and *token are 0) and returns VIEWS_NO_TOKEN: the flusher
 * then sets "views:token" to the largest token in applied_flushes + 1,
 * in one step that sets it only while it is still missing (another
 * flusher may have set it and used tokens since this one read the
 * database), so that no token is ever used twice. On failure *n and *token are 0, a
 * lost reply included, and nothing was taken: no token used, nothing
 * parked. (A reply that was lost is the one exception to "nothing was
 * taken": the step ran, and what it parked stays listed in
 * "views:parked", for recover_flushes.) */
#define VIEWS_NO_TOKEN 1
int park_views(struct kit_store *st, int max, int64_t *token, struct view_delta *out, int *n);

/* Resolve every parked batch (§5b): a token the database has in
 * applied_flushes was applied, so its park is only deleted; any other is
 * applied now, under the same token, exactly as a flush would, and then
 * deleted. Returns the number of views applied (each delta counted by
 * its size, as flush_views counts), or the first error (what is not
 * resolved stays parked). One flusher at a time. Like a flush, it waits
 * for a row as long as the caller's connection allows and sets no lock
 * wait of its own, shorter or longer, not even for its transaction. */
int64_t recover_flushes(struct kit_store *st, struct kit_db *db);

/* Resolve what is parked (recover_flushes), then park up to max videos
 * and, in ONE transaction (waiting for a row as long as the caller's
 * connection allows: no lock wait of its own, shorter or longer), first record the token in applied_flushes,
 * then add the deltas to video_counts in one multi-row upsert (a video
 * without a row gets one; each delta is added as it is, below zero too,
 * even when that takes a row below zero: the database and the store
 * always add up to what was recorded), and nothing between the upsert and COMMIT:
 * its rows stay locked through every statement there. After COMMIT,
 * delete the park. Returns the number of views
 * written, the batches its recovery applied first included, each delta
 * counted by its size (a delta of -4, views taken
 * back, is 4 views written: a batch below zero is no error code), 0 when
 * nothing was dirty. When the database refuses a
 * statement, the parked deltas go back into the store, as record_view
 * would have left them: what the batch's park still holds, read in the
 * same step that deletes the park, never the rows the flush holds in
 * memory (another connection's recovery may have applied the batch and
 * deleted its park meanwhile: then nothing goes back). A token's INSERT
 * refused on applied_flushes' key (KIT_DB_CONSTRAINT) is the one refusal
 * that puts nothing back: that batch was applied under its token already,
 * by a recovery that took this flusher for dead (even one that died
 * before it deleted the park), so the park is only deleted, here or by
 * the next recovery. The database's
 * code is returned (§5), also
 * when the store then fails the put-back (what it could not put back
 * stays parked, for the next flush's recovery, and what it gave back is
 * no longer parked: a view is in one place, never two). When
 * the COMMIT itself fails, the batch stays parked: the next flush asks the
 * database whether it was applied (§5b).
 *
 * Failpoints (kit/failpoint.h) a crash test arms: "flush-after-drain"
 * (parked, nothing sent to the database), "flush-before-commit" (the
 * transaction written, not committed), "flush-after-commit" (committed,
 * the park not deleted), "flush-mid-putback" (refused, the deltas not yet
 * put back). Armed with "error", each makes flush_views return
 * KIT_DB_ERR there at once, leaving everything as a crash would. */
int64_t flush_views(struct kit_store *st, struct kit_db *db, int max);

/* The flush loop (§6): a thread that calls flush_views(st, db, max) once
 * every interval_ms (the first after one interval), never two at once. A
 * failed flush is counted and retried at the next tick. A flush that
 * takes longer than an interval skips the ticks it overran: the next
 * comes an interval after it ends (or at the next tick still ahead),
 * never the missed ones back to back. (A flusher may also wait a whole
 * interval after every flush ends, however short the flush: its flushes
 * then drift later by their own length, which is allowed. A wait that
 * ends before the next tick is not.) The flusher uses db from its own
 * thread until stop_flusher returns: don't touch db meanwhile. Between flushes the thread waits on a condition variable
 * with pthread_cond_timedwait, its deadlines on CLOCK_MONOTONIC
 * (pthread_condattr_setclock), so a step of the wall clock moves no
 * flush, and stop_flusher wakes it with pthread_cond_signal: the checks
 * watch those waits (§6). interval_ms is 1 or more and max
 * 1..VIEWS_MAX_BATCH; outside that it starts nothing. Returns 0, or a
 * negative code with *out = NULL. */
struct flusher;
int start_flusher(struct flusher **out, struct kit_store *st, struct kit_db *db,
                  int interval_ms, int max);

/* What a flusher has done so far. It answers at once, in the middle of a
 * flush too: it never waits for the database. */
struct flusher_stats {
	int64_t flushes;   /* flush_views calls */
	int64_t failed;    /* ... that returned an error */
	int64_t views;     /* views written to the database */
};
void flusher_stats(struct flusher *f, struct flusher_stats *out);

/* Stop the loop promptly (without waiting out the interval), flush what
 * is left until nothing is dirty or a flush fails, join the thread and free
 * f. Returns 0, or the last flush's error (the deltas are then still in
 * the store). NULL is fine. */
int stop_flusher(struct flusher *f);

#endif
