/*
 * inside.c: Lab 08 reference solution.
 *
 * Each function is one effect of the engine under a hot row: what the
 * row's old versions cost (§2), a foreign key checked where it locks
 * nothing new (§3), a bounded retry with backoff (§4), a commit that does
 * not wait for the disk, for one transaction only (§5), the like as one
 * statement (§6), and keys that do not pile onto one index page (§7).
 */
#include "labs/08-engine/inside.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- §2 Versions ---- */

static int three_ints(void *arg, int ncols, const char *const *values)
{
	int64_t *v = arg;
	for (int i = 0; i < ncols && i < 3; i++)
		v[i] = values[i] ? strtoll(values[i], NULL, 10) : 0;
	return 0;
}

/* EXPLAIN's first "Buffers:" line is the top plan node's, which counts
 * its children too; "Planning:" has its own line further down. */
static int first_buffers(void *arg, int ncols, const char *const *values)
{
	int64_t *buffers = arg;
	const char *line = ncols > 0 && values[0] ? values[0] : "";
	if (*buffers >= 0 || strstr(line, "Buffers:") == NULL)
		return 0;
	const char *hit = strstr(line, "hit="), *read = strstr(line, "read=");
	*buffers = (hit ? strtoll(hit + 4, NULL, 10) : 0) + (read ? strtoll(read + 5, NULL, 10) : 0);
	return 0;
}

int inside_versions(struct kit_db *db, int64_t id, struct inside_versions *out)
{
	memset(out, 0, sizeof *out);
	int64_t v[3] = { 0, 0, 0 };
	int rc;

	if (kit_db_engine(db) == KIT_DB_SQLITE) {
		/* busy, frames in the WAL, frames copied back to the database.
		 * Busy: another connection is checkpointing, so this one could
		 * not run (both counts -1); it never waits for that one. */
		rc = kit_db_query(db, "PRAGMA wal_checkpoint(PASSIVE)", 0, NULL, three_ints, v);
		if (rc == 0 && v[0] != 0)
			return KIT_DB_BUSY;
		/* Not busy, yet no counts (0|-1|-1): the database is not in WAL
		 * mode (":memory:"), so there is nothing to count: a failure. */
		if (rc == 0 && (v[1] < 0 || v[2] < 0))
			return KIT_DB_ERR;
		if (rc == 0) {
			out->wal_frames = v[1];
			out->wal_pinned = v[1] - v[2];
		}
		return rc;
	}

	rc = kit_db_query(db, "SELECT n_tup_upd, n_tup_hot_upd, n_dead_tup FROM pg_stat_user_tables"
	                      " WHERE relid = 'counters'::regclass", 0, NULL, three_ints, v);
	if (rc == 0)
		rc = kit_db_query_int(db, "SELECT pg_relation_size('counters')"
		                          " / current_setting('block_size')::bigint", 0, NULL,
		                      &out->heap_pages);
	char sql[160];
	int64_t buffers = -1;
	snprintf(sql, sizeof sql, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)"
	         " SELECT n FROM counters WHERE id = %" PRId64, id);
	if (rc == 0)
		rc = kit_db_query(db, sql, 0, NULL, first_buffers, &buffers);
	if (rc != 0) {
		memset(out, 0, sizeof *out);
		return rc;
	}
	out->updates = v[0];
	out->hot_updates = v[1];
	out->dead = v[2];
	out->buffers = buffers < 0 ? 0 : buffers;
	return 0;
}

/* ---- §3 Keys ---- */

static int keys_create(struct kit_db *db)
{
	/* The key is still checked, at COMMIT, after the counter's UPDATE:
	 * by then this transaction holds the post row's stronger lock, so the
	 * check's KEY SHARE lock adds nobody to the row. */
	return kit_db_exec(db,
		"CREATE TABLE posts (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0);"
		"CREATE TABLE likes (post_id BIGINT NOT NULL"
		" REFERENCES posts DEFERRABLE INITIALLY DEFERRED,"
		" user_id BIGINT NOT NULL, PRIMARY KEY (post_id, user_id))", 0, NULL);
}

/* One transaction, not one statement text: PostgreSQL runs a text as one
 * transaction, but SQLite commits each statement of it by itself. */
int inside_keys_setup(struct kit_db *db)
{
	int rc = kit_db_begin(db);
	if (rc == 0)
		rc = keys_create(db);
	if (rc == 0)
		return kit_db_commit(db);
	kit_db_rollback(db);
	return rc;
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

static void sleep_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(((int64_t)(ms * 1e6)) % 1000000000) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* A uniform number in [0, 1), per thread (xorshift*). Workers start
 * together, forked from one parent or as threads of one process: the
 * seed mixes what differs between them (the process id, the thread's own
 * variable, the clock to the nanosecond), never the clock's second
 * alone, which every worker started together shares. A child forked
 * after its parent drew gets the parent's state too, so a new process
 * id seeds again. */
static double uniform(void)
{
	static _Thread_local uint64_t s;
	static _Thread_local pid_t owner;
	if (s == 0 || owner != getpid()) {
		owner = getpid();
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		uint64_t z = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&s ^
		             ((uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec);
		/* SplitMix64's finaliser, so seeds that differ in a few bits
		 * give streams that differ from their first number. */
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		s = (z ^ (z >> 31)) | 1;
	}
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	return (double)((s * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

int inside_count_retrying(struct kit_db *db, int64_t id, const char *level,
                          const struct inside_retry *policy, int *attempts)
{
	char begin[64], row[24];
	snprintf(begin, sizeof begin, "BEGIN ISOLATION LEVEL %s", level);
	snprintf(row, sizeof row, "%" PRId64, id);
	const char *params[] = { row };
	int rc = INSIDE_GAVE_UP, k = 0;

	while (k < policy->max_attempts) {
		k++;
		rc = kit_db_exec(db, begin, 0, NULL);
		if (rc != 0)
			break;
		rc = kit_db_exec(db, "UPDATE counters SET n = n + 1 WHERE id = $1", 1, params);
		if (rc == 0 && kit_db_changes(db) != 1)
			rc = INSIDE_NO_ROW;
		if (rc == 0)
			rc = kit_db_commit(db);
		else
			kit_db_rollback(db);
		if (rc != KIT_DB_BUSY)
			break;
		rc = INSIDE_GAVE_UP;
		if (k < policy->max_attempts) {
			/* Doubling spreads the losers out; the random half keeps
			 * them from coming back all at the same moment. From
			 * 2^31 on, base_ms (>= 1) x 2^(k-1) is past any int
			 * cap_ms: the shift stops there, and never overflows. */
			double d = (double)policy->base_ms * (double)(1LL << (k - 1 < 31 ? k - 1 : 31));
			if (d > policy->cap_ms)
				d = policy->cap_ms;
			sleep_ms(d / 2 + uniform() * d / 2);
		}
	}
	if (attempts)
		*attempts = k;
	return rc;
}

/* ---- §5 Commits ---- */

int inside_count_async(struct kit_db *db, int64_t id)
{
	char row[24];
	snprintf(row, sizeof row, "%" PRId64, id);
	const char *params[] = { row };
	int rc;

	if (kit_db_engine(db) == KIT_DB_SQLITE) {
		rc = kit_db_exec(db, "UPDATE counters SET n = n + 1 WHERE id = $1", 1, params);
		return rc == 0 && kit_db_changes(db) != 1 ? INSIDE_NO_ROW : rc;
	}
	rc = kit_db_begin(db);
	if (rc != 0)
		return rc;
	/* LOCAL: for this transaction only; the session keeps its setting. */
	rc = kit_db_exec(db, "SET LOCAL synchronous_commit = off", 0, NULL);
	if (rc == 0)
		rc = kit_db_exec(db, "UPDATE counters SET n = n + 1 WHERE id = $1", 1, params);
	if (rc == 0 && kit_db_changes(db) != 1)
		rc = INSIDE_NO_ROW;
	if (rc == 0)
		return kit_db_commit(db);
	kit_db_rollback(db);
	return rc;
}

/* ---- §6 One round trip ---- */

int inside_like_one_statement(struct kit_db *db, int64_t post_id, int64_t user_id)
{
	if (kit_db_engine(db) == KIT_DB_SQLITE)
		return inside_like(db, post_id, user_id);

	char post[24], user[24];
	snprintf(post, sizeof post, "%" PRId64, post_id);
	snprintf(user, sizeof user, "%" PRId64, user_id);
	const char *params[] = { post, user };
	/* One statement is one transaction: the like and the counter commit
	 * together or not at all, and the row lock never waits on the network.
	 * The like is inserted from the post's row, so a like of a post that
	 * is not there inserts nothing (even where no key would refuse it). */
	int rc = kit_db_exec(db,
		"WITH liked AS (INSERT INTO likes (post_id, user_id) SELECT id, $2 FROM posts"
		" WHERE id = $1 RETURNING post_id)"
		" UPDATE posts SET likes = likes + 1 WHERE id IN (SELECT post_id FROM liked)", 2, params);
	if (rc == 0 && kit_db_changes(db) != 1)
		rc = INSIDE_NO_ROW;
	return rc;
}

/* ---- §7 Appends ---- */

int64_t inside_spread_key(int64_t seq)
{
	/* SplitMix64's finaliser: each step (xor with a shift, multiply by an
	 * odd number) can be undone, so no two seqs share a key. */
	uint64_t z = (uint64_t)seq;
	z ^= z >> 30;
	z *= 0xbf58476d1ce4e5b9ULL;
	z ^= z >> 27;
	z *= 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (int64_t)z;
}
