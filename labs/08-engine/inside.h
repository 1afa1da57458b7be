/*
 * inside.h: Lab 08, inside the engine: what PostgreSQL (and SQLite) do
 * underneath a hot row, one small function per effect.
 *
 * The tables (INSIDE_SCHEMA; the checks and the driver create them):
 *
 *   counters(id, n)               primary key id: the hot counter row
 *   posts(id, likes)              primary key id
 *   likes(post_id, user_id)       primary key (post_id, user_id), in that
 *                                 order (likes are looked up by post),
 *                                 post_id references posts
 *
 * Interface:
 *   kit_db_exec(db, INSIDE_SCHEMA, 0, NULL);
 *   struct inside_versions v;
 *   inside_versions(db, 1, &v);                      §2: what the row costs
 *   inside_keys_setup(db);                           §3: posts and likes, your way
 *   struct inside_retry policy = { 20, 1, 50 };
 *   inside_count_retrying(db, 1, "SERIALIZABLE", &policy, &attempts);   §4
 *   inside_count_async(db, 1);                       §5
 *   inside_like_one_statement(db, 1, user);          §6
 *   key = inside_spread_key(seq);                    §7
 * Every database function returns 0 or a negative KIT_DB_* / INSIDE_*
 * code, and leaves no transaction open behind it, nor a block allocated
 * (on its error paths too). A negative code means the call changed
 * nothing (a reply lost on COMMIT excepted): every statement of a call
 * comes before its COMMIT, so a setting it needs is SET LOCAL, not a SET
 * put back afterwards. A connection is used by one thread at a time.
 */
#ifndef HOTROW_LAB08_INSIDE_H
#define HOTROW_LAB08_INSIDE_H

#include <stdint.h>

#include "kit/db.h"

/* Both engines accept this text as it is. */
#define INSIDE_SCHEMA \
	"CREATE TABLE counters (id BIGINT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0);" \
	"CREATE TABLE posts (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0);" \
	"CREATE TABLE likes (post_id BIGINT NOT NULL REFERENCES posts," \
	" user_id BIGINT NOT NULL, PRIMARY KEY (post_id, user_id))"

enum {
	INSIDE_NO_ROW = KIT_DB_NOROW,   /* the counter or post does not exist */
	INSIDE_GAVE_UP = -11,           /* §4: every attempt failed to serialize */
};

/* ---- §2 Versions ---- */

/* What one hot row costs the engine right now. */
struct inside_versions {
	/* PostgreSQL (0 on SQLite) */
	int64_t updates;        /* n_tup_upd of counters */
	int64_t hot_updates;    /* n_tup_hot_upd: updates that wrote no index entry */
	int64_t dead;           /* n_dead_tup: versions no snapshot needs, not yet removed */
	int64_t heap_pages;     /* the table's size in pages (of the server's
	                           block_size: not every build's page is 8 KB) */
	int64_t buffers;        /* shared buffers (hit + read) that reading the row
	                           by its key touched, from EXPLAIN (ANALYZE, BUFFERS) */
	/* SQLite (0 on PostgreSQL) */
	int64_t wal_frames;     /* frames in the WAL after a passive checkpoint */
	int64_t wal_pinned;     /* ... of which the checkpoint could not copy back */
};

/* Fill *out for the counter row `id` of counters. On PostgreSQL the
 * counts come from the statistics system, which is updated
 * asynchronously: they include the work of other connections only once
 * those have flushed theirs (pg_stat_force_next_flush(), or about a
 * second of being idle). On SQLite it runs a passive checkpoint (which
 * never waits for anyone) and changes no setting of the connection; if
 * another connection is checkpointing at that moment, the passive one
 * cannot run (SQLite answers busy, with no counts): return KIT_DB_BUSY
 * at once. On failure *out is all zero. */
int inside_versions(struct kit_db *db, int64_t id, struct inside_versions *out);

/* ---- §3 Keys ---- */

/* Create posts and likes (the columns of INSIDE_SCHEMA) so that a like
 * can never name a post that does not exist, nor outlive its post (the
 * DELETE of a liked post is refused, not carried out on its likes too),
 * and so that likes of one post running at once add no MultiXacts on
 * PostgreSQL. No index of posts holds likes (as a column, in an
 * expression or in a partial index's predicate): the counter's UPDATE
 * then stays a HOT update (§2). The guarantee holds against transactions in flight too (a
 * like sent while its post's DELETE has not committed yet waits for it
 * and is refused), which a check that reads without locking does not
 * give. 0 means the tables are so: where posts or likes are there already
 * and are not (INSIDE_SCHEMA's key is checked at each INSERT), return an
 * error rather than 0, and never drop them (their rows stay). It makes
 * both tables or neither: a failure half-way leaves no table of the two
 * (posts made without likes is "there already" to every later call). */
int inside_keys_setup(struct kit_db *db);

/* The like of Lab 01, given: BEGIN, INSERT the like, UPDATE the post's
 * counter, COMMIT; a failure rolls back and returns its code
 * (KIT_DB_CONSTRAINT for a duplicate or a missing post, INSIDE_NO_ROW if
 * the UPDATE matched nothing). */
int inside_like(struct kit_db *db, int64_t post_id, int64_t user_id);

/* ---- §4 Isolation ---- */

/* How to retry a transaction that failed to serialize. */
struct inside_retry {
	int max_attempts;       /* attempts in all, >= 1 */
	int base_ms;            /* the wait after the first failure */
	int cap_ms;             /* no wait is longer than this (>= 0; 0: none) */
};

/* Add 1 to counters.n of row id in a transaction at isolation `level`
 * ("REPEATABLE READ" or "SERIALIZABLE", not copied). When it fails to
 * serialize (KIT_DB_BUSY: a serialization failure, or a deadlock or a
 * lock wait, which the kit answers the same way; every one of them,
 * whatever its message), roll back, wait, and try again (no wait before
 * the first attempt): after the k-th failure wait a random time between
 * d/2 and d, where d = min(cap_ms, base_ms * 2^(k-1)): a duration, which
 * a wall clock set back or forward meanwhile does not change. Sleep it
 * with nanosleep, usleep, sleep or clock_nanosleep on CLOCK_MONOTONIC
 * (not to a CLOCK_REALTIME deadline): the checks ask for waits of weeks
 * and cut each one short, which they can do to these calls only, not to
 * a condition variable's timed wait, select() or poll(). usleep takes a
 * useconds_t, 32 bits: it cannot hold a wait over 2^32 microseconds
 * (about 71.6 minutes, which a cap_ms up to INT_MAX allows), and a
 * signal ends it with no remainder to sleep again.
 * Returns 0 once an attempt commits, INSIDE_GAVE_UP after max_attempts
 * failures to serialize, any other error at once (the last attempt's
 * too). A BEGIN that fails, KIT_DB_BUSY or not, is such an error: no
 * transaction began, so none failed to serialize (the attempt counts in
 * *attempts); it is retrying a transaction that ran that the backoff
 * is for. *attempts (if not NULL) is set to the attempts made. Each
 * attempt's COMMIT waits for the disk as the connection's other
 * transactions do: no synchronous_commit of its own (only
 * inside_count_async gives that up, for the counter). PostgreSQL only. */
int inside_count_retrying(struct kit_db *db, int64_t id, const char *level,
                          const struct inside_retry *policy, int *attempts);

/* ---- §5 Commits ---- */

/* Add 1 to counters.n of row id in a transaction whose COMMIT does not
 * wait for the WAL to reach the disk, without changing that for anything
 * else the connection does later. On SQLite a plain UPDATE (in WAL mode
 * with synchronous = NORMAL its commit already does not wait). Nothing
 * runs between the counter's UPDATE and COMMIT: send the setting before
 * the UPDATE (the row stays locked through every statement after it). */
int inside_count_async(struct kit_db *db, int64_t id);

/* ---- §6 One round trip ---- */

/* The like of inside_like() as one statement sent once: the like and the
 * counter together or neither, the row lock held only inside the server,
 * on a likes table with or without the foreign key (the checks run it on
 * one without: there a like of a missing post writes nothing and is
 * INSIDE_NO_ROW, so the statement may not count on the key to refuse it).
 * KIT_DB_CONSTRAINT for a duplicate, refused before the counter's row is
 * touched (no lock on the post's row, not even FOR KEY SHARE, is taken
 * before the likes' key has said yes): insert the like first and update the counter from the rows the
 * insert returned (a duplicate that updates the counter first locks the
 * hot row and writes a version of it for nothing). On SQLite (no round
 * trips: it runs in your process) it may simply call inside_like(). */
int inside_like_one_statement(struct kit_db *db, int64_t post_id, int64_t user_id);

/* ---- §7 Appends ---- */

/* A key for the seq-th appended row that spreads consecutive rows over
 * the whole index: different for every seq (a bijection on 64 bits) and
 * with no order left between neighbours. Pure arithmetic. */
int64_t inside_spread_key(int64_t seq);

#endif
