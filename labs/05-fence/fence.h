/*
 * fence.h: Lab 05, the offset fence — the API you implement.
 *
 * Views no longer touch the database on the request path: each one is
 * appended to a partitioned log (kit/log.h) as a struct fence_event. A
 * group of consumers shares the partitions and brings the views into the
 * database in batches: one batch of one partition becomes one transaction
 * that advances the partition's stored offset (the fence) and adds the
 * batch's per-video totals in one multi-row upsert. Consumers crash, get
 * restarted, and see partitions move between them; the log then delivers
 * some events again. The fence is what makes a batch count once.
 *
 * Database (created by the caller: tests, `hotrow lab run 05`):
 *   FENCE_SCHEMA, and one log_progress row per partition with
 *   last_offset = -1 (nothing applied yet).
 *
 * Interface, the consumer loop that uses your four functions:
 *   struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = db };
 *   kit_log_join(&c, log, FENCE_GROUP, "worker-1", &cb);
 *   for (;;)
 *       kit_log_poll(c, 1000, fence_handle, db);   // commits the log's hint after each batch
 *
 * Every function returns 0 (or the count it documents) on success and a
 * negative KIT_DB_* / KIT_LOG_* code on failure: the one the database or
 * the log answered (KIT_DB_BUSY, a lock wait that gave up, stays
 * KIT_DB_BUSY; KIT_DB_NOROW only for a read that found no row). An allocation that fails
 * (malloc or calloc returning NULL, here or in the kit) is a failure like
 * a refused statement: fence_apply() rolls back and returns KIT_DB_ERR,
 * and fence_handle() returns it, so the log delivers the batch again. No
 * call leaves a block allocated, on any of its ways out.
 * A statement that finds a row held by another waits for it as long as
 * the connection's own limit allows (the caller's: kit_db_set_lock_timeout)
 * and sets no limit of its own, not for the session, not for its own
 * transaction or one statement, not put back afterwards.
 * A connection is used by one thread at a time; consumers in different
 * threads, each with its own connection, may call any of these at the
 * same time (`hotrow lab run 05` runs its consumers as threads).
 */
#ifndef HOTROW_LAB05_FENCE_H
#define HOTROW_LAB05_FENCE_H

#include <stdint.h>

#include "kit/db.h"
#include "kit/log.h"

#define FENCE_SCHEMA \
	"CREATE TABLE video_views (video_id BIGINT PRIMARY KEY, views BIGINT NOT NULL);" \
	"CREATE TABLE log_progress (part INTEGER PRIMARY KEY, last_offset BIGINT NOT NULL)"
#define FENCE_GROUP "video-views"     /* the consumer group's name in the log */
#define FENCE_MAX_VIDEOS 256          /* distinct videos one batch may hold */

/* One record of the log: one view of one video. */
struct fence_event {
	int64_t video_id;
};

/* The views of one video inside a batch. */
struct fence_total {
	int64_t video_id;
	int64_t views;
};

/* One batch of one partition: events first .. last (offsets, inclusive),
 * added up per video into totals[0 .. n-1], n from 1 to FENCE_MAX_VIDEOS.
 * A video_id is any int64_t, negative ones and 0 included; views is at
 * least 1 and any int64_t above that (a caller other than fence_handle
 * may sum more events than an int counts). */
struct fence_batch {
	int part;
	int64_t first, last;
	int n;
	struct fence_total totals[FENCE_MAX_VIDEOS];
};

/* Apply batch b in one transaction: the fence first (move the partition's
 * last_offset to b->last, only if the stored last_offset is b->first - 1:
 * the batch starts right where the applied events end), then one
 * multi-row upsert that adds every total to video_views, then commit
 * (§3, §4). The caller puts b->totals in ascending video_id (fence_handle
 * does: the order every writer of the counters agrees on, so two
 * consumers never wait on each other in a cycle); fence_apply need not
 * sort them again. b is the caller's and stays as it was: fence_apply
 * changes nothing in it, not even the order of its totals (two threads
 * may apply one batch). Returns 1 when the batch was applied, 0 when the
 * fence refused it (applied before, or overlapping or skipping what is
 * stored; the transaction was rolled back, nothing changed), or a
 * negative code when the database failed — the transaction is then
 * rolled back and the database is exactly as before. A COMMIT that fails
 * leaves the outcome unknown: 1 only when the call reads back that its
 * batch is in; when it cannot (a connection that broke at the COMMIT
 * fails the read as well), the COMMIT's own negative code (KIT_DB_BUSY
 * stays KIT_DB_BUSY), never 1 or 0. It does not try again: a statement
 * refused, with an error or as KIT_DB_BUSY, ends the call with its code
 * at once, and the log delivers the batch again.
 * On SQLite a batch sends no PRAGMA synchronous: how hard a COMMIT syncs
 * is the caller's setting for the whole connection (SQLite has none for
 * one transaction), and OFF lets a power cut corrupt the file. */
int fence_apply(struct kit_db *db, const struct fence_batch *b);

/* Where partition part must be read from: the stored last_offset + 1,
 * read from the database (§5). KIT_DB_NOROW when the partition has no
 * log_progress row. */
int fence_position(struct kit_db *db, int part, int64_t *next);

/* The consumer's assigned() callback (kit/log.h), arg = the consumer's
 * struct kit_db *: seek c's position in part to fence_position() (§5).
 * A failed read is returned as it came, with no read again of its own:
 * each read already waited as long as the connection allows, and the log
 * assigns the partition again. */
int fence_on_assign(void *arg, struct kit_log_consumer *c, int part);

/* The consumer's batch handler for kit_log_poll(), arg = the consumer's
 * struct kit_db *: add recs[0 .. n-1] (all from partition part, in offset
 * order, each a struct fence_event) up per video, in a batch of its own
 * with the totals in ascending video_id, and apply them with
 * fence_apply(); recs and their data are the log's, read and left as they
 * are. Returns 0 when the batch is in the database (applied now
 * or before), negative when it is not, so the log delivers it again (§4).
 * A record whose len is not sizeof(struct fence_event), shorter or
 * longer, is not an event: return a negative code and apply nothing of
 * the batch. So is a batch of more than FENCE_MAX_VIDEOS distinct videos
 * (never split it into several fenced runs: the fence moves once a
 * batch). */
int fence_handle(void *arg, int part, const struct kit_log_record *recs, int n);

#endif
