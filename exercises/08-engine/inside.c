/*
 * inside.c: Lab 08, your functions, one per effect of the engine.
 *
 * inside_like() is done for you (it is Lab 01's like). Everything else
 * runs, but measures nothing, retries nothing, or does the slow thing:
 * follow the TODOs, section by section of labs/08-engine/README.md.
 *
 * Check your work: build/hotrow lab check 08
 * (export HOTROW_PG_URL=$(scripts/pg up) first: most of this lab is
 * about PostgreSQL.)
 */
#include "labs/08-engine/inside.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- §2 Versions ---- */

int inside_versions(struct kit_db *db, int64_t id, struct inside_versions *out)
{
	memset(out, 0, sizeof *out);
	(void)db;
	(void)id;
	/* TODO(§2): on PostgreSQL, fill updates, hot_updates and dead from
	 * pg_stat_user_tables, heap_pages from the table's size, and buffers
	 * from the first "Buffers:" line of EXPLAIN (ANALYZE, BUFFERS) of the
	 * read of row id. On SQLite, fill wal_frames and wal_pinned from
	 * PRAGMA wal_checkpoint(PASSIVE). */
	return KIT_DB_ERR;
}

/* ---- §3 Keys ---- */

int inside_keys_setup(struct kit_db *db)
{
	/* TODO(§3): this key is checked at the INSERT, so every like locks the
	 * post row that the counter UPDATE writes. Keep the guarantee, but have
	 * it checked where it adds no one to that row's lock. */
	return kit_db_exec(db,
		"CREATE TABLE posts (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0);"
		"CREATE TABLE likes (post_id BIGINT NOT NULL REFERENCES posts,"
		" user_id BIGINT NOT NULL, PRIMARY KEY (post_id, user_id))", 0, NULL);
}

int inside_like(struct kit_db *db, int64_t post_id, int64_t user_id)
{
	char post[24], user[24];
	snprintf(post, sizeof post, "%" PRId64, post_id);
	snprintf(user, sizeof user, "%" PRId64, user_id);
	const char *params[] = { post, user };

	int rc = kit_db_begin(db);
	if (rc != 0)
		return rc;
	rc = kit_db_exec(db, "INSERT INTO likes (post_id, user_id) VALUES ($1, $2)", 2, params);
	if (rc == 0)
		rc = kit_db_exec(db, "UPDATE posts SET likes = likes + 1 WHERE id = $1", 1, params);
	if (rc == 0 && kit_db_changes(db) != 1)
		rc = INSIDE_NO_ROW;
	if (rc == 0)
		return kit_db_commit(db);
	kit_db_rollback(db);
	return rc;
}

/* ---- §4 Isolation ---- */

int inside_count_retrying(struct kit_db *db, int64_t id, const char *level,
                          const struct inside_retry *policy, int *attempts)
{
	char begin[64], row[24];
	snprintf(begin, sizeof begin, "BEGIN ISOLATION LEVEL %s", level);
	snprintf(row, sizeof row, "%" PRId64, id);
	const char *params[] = { row };
	(void)policy;

	/* TODO(§4): a serialization failure (KIT_DB_BUSY) is not the end:
	 * roll back, wait as the contract in inside.h says, and try again, at
	 * most policy->max_attempts times in all; then INSIDE_GAVE_UP. */
	if (attempts)
		*attempts = 1;
	int rc = kit_db_exec(db, begin, 0, NULL);
	if (rc != 0)
		return rc;
	rc = kit_db_exec(db, "UPDATE counters SET n = n + 1 WHERE id = $1", 1, params);
	if (rc == 0 && kit_db_changes(db) != 1)
		rc = INSIDE_NO_ROW;
	if (rc == 0)
		return kit_db_commit(db);
	kit_db_rollback(db);
	return rc;
}

/* ---- §5 Commits ---- */

int inside_count_async(struct kit_db *db, int64_t id)
{
	char row[24];
	snprintf(row, sizeof row, "%" PRId64, id);
	const char *params[] = { row };

	/* TODO(§5): on PostgreSQL, make this one transaction's COMMIT return
	 * without waiting for the WAL flush, and nothing else the connection
	 * does afterwards. */
	int rc = kit_db_exec(db, "UPDATE counters SET n = n + 1 WHERE id = $1", 1, params);
	return rc == 0 && kit_db_changes(db) != 1 ? INSIDE_NO_ROW : rc;
}

/* ---- §6 One round trip ---- */

int inside_like_one_statement(struct kit_db *db, int64_t post_id, int64_t user_id)
{
	/* TODO(§6): on PostgreSQL, send the like and the counter as one
	 * statement, so that the row lock is never held across a round trip. */
	return inside_like(db, post_id, user_id);
}

/* ---- §7 Appends ---- */

int64_t inside_spread_key(int64_t seq)
{
	/* TODO(§7): a different key for every seq, with no order left between
	 * neighbours. */
	return seq;
}
