/*
 * shard.c: Lab 02 reference solution, a sharded like counter.
 *
 * Two rules keep the count exact whatever runs at the same time:
 *   - shard_read() sums every row of the post, never only slots < N, so a
 *     like that landed on a slot a concurrent shrink just removed is still
 *     counted (the next shrink folds it in);
 *   - a shrink folds exactly what it deletes (DELETE ... RETURNING), so an
 *     increment that committed a moment before the delete is carried over,
 *     not thrown away.
 * N lives in like_slot_config and each increment reads it in the same
 * statement that adds the like.
 */
#include "labs/02-sharded/shard.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* SHARD_DEFAULT_SLOTS as SQL text. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define DEFAULT_N STR(SHARD_DEFAULT_SLOTS)

int shard_setup(struct kit_db *db)
{
	return kit_db_exec(db,
		"CREATE TABLE IF NOT EXISTS like_slots ("
		"  post_id bigint NOT NULL,"
		"  slot integer NOT NULL,"
		"  n bigint NOT NULL DEFAULT 0,"
		"  PRIMARY KEY (post_id, slot));"
		"CREATE TABLE IF NOT EXISTS like_slot_config ("
		"  post_id bigint PRIMARY KEY,"
		"  nslots integer NOT NULL CHECK (nslots > 0))", 0, NULL);
}

int shard_increment(struct kit_db *db, int64_t post_id, shard_rand_fn *rnd, void *rnd_arg)
{
	char post[24], r[16];
	snprintf(post, sizeof post, "%lld", (long long)post_id);
	snprintf(r, sizeof r, "%lu", (unsigned long)rnd(rnd_arg));
	const char *params[] = { post, r };

	/* "WHERE true" keeps SQLite from reading ON CONFLICT as a join's ON.
	 * MariaDB says the upsert its own way, and casts to SIGNED, not bigint
	 * (README §3). */
	if (kit_db_engine(db) == KIT_DB_MYSQL)
		return kit_db_exec(db,
			"INSERT INTO like_slots (post_id, slot, n) "
			"SELECT CAST($1 AS SIGNED), CAST($2 AS SIGNED) % coalesce("
			"    (SELECT nslots FROM like_slot_config WHERE post_id = $1), " DEFAULT_N "), 1 "
			"ON DUPLICATE KEY UPDATE n = n + VALUES(n)",
			2, params);
	return kit_db_exec(db,
		"INSERT INTO like_slots (post_id, slot, n) "
		"SELECT CAST($1 AS bigint), CAST($2 AS bigint) % coalesce("
		"    (SELECT nslots FROM like_slot_config WHERE post_id = $1), " DEFAULT_N "), 1 "
		"WHERE true "
		"ON CONFLICT (post_id, slot) DO UPDATE SET n = like_slots.n + excluded.n",
		2, params);
}

int shard_read(struct kit_db *db, int64_t post_id, int64_t *total)
{
	char post[24];
	snprintf(post, sizeof post, "%lld", (long long)post_id);
	const char *params[] = { post };
	return kit_db_query_int(db,
		"SELECT coalesce(sum(n), 0) FROM like_slots WHERE post_id = $1",
		1, params, total);
}

int shard_slots(struct kit_db *db, int64_t post_id, int *nslots)
{
	char post[24];
	snprintf(post, sizeof post, "%lld", (long long)post_id);
	const char *params[] = { post };
	int64_t n;
	int rc = kit_db_query_int(db,
		"SELECT coalesce((SELECT nslots FROM like_slot_config WHERE post_id = $1), " DEFAULT_N ")",
		1, params, &n);
	if (rc == 0)
		*nslots = (int)n;
	return rc;
}

/* What a shrink carries over: fold[s] is the count moving into slot s. */
struct fold {
	int nslots;
	int64_t *add;
};

static int fold_row(void *arg, int ncols, const char *const *values)
{
	struct fold *f = arg;
	if (ncols < 2 || values[0] == NULL || values[1] == NULL)
		return KIT_DB_ERR;
	long long slot = strtoll(values[0], NULL, 10);
	f->add[slot % f->nslots] += strtoll(values[1], NULL, 10);
	return 0;
}

/* The body of shard_resize, inside its transaction. */
static int resize_in_tx(struct kit_db *db, const char *post, int nslots)
{
	char n[16];
	snprintf(n, sizeof n, "%d", nslots);
	const char *params[] = { post, n };

	/* First the new N, so increments that start after we commit use it;
	 * on PostgreSQL this also makes a second resize of the post wait. */
	bool my = kit_db_engine(db) == KIT_DB_MYSQL;
	int rc = kit_db_exec(db, my
		? "INSERT INTO like_slot_config (post_id, nslots) VALUES ($1, $2) "
		  "ON DUPLICATE KEY UPDATE nslots = VALUES(nslots)"
		: "INSERT INTO like_slot_config (post_id, nslots) VALUES ($1, $2) "
		  "ON CONFLICT (post_id) DO UPDATE SET nslots = excluded.nslots",
		2, params);
	if (rc != 0)
		return rc;

	struct fold f = { nslots, calloc((size_t)nslots, sizeof(int64_t)) };
	if (f.add == NULL)
		return KIT_DB_ERR;
	rc = kit_db_query(db,
		"DELETE FROM like_slots WHERE post_id = $1 AND slot >= $2 RETURNING slot, n",
		2, params, fold_row, &f);
	for (int s = 0; rc == 0 && s < nslots; s++) {
		if (f.add[s] == 0)
			continue;
		char slot[16], add[24];
		snprintf(slot, sizeof slot, "%d", s);
		snprintf(add, sizeof add, "%lld", (long long)f.add[s]);
		const char *p[] = { post, slot, add };
		rc = kit_db_exec(db, my
			? "INSERT INTO like_slots (post_id, slot, n) VALUES ($1, $2, $3) "
			  "ON DUPLICATE KEY UPDATE n = n + VALUES(n)"
			: "INSERT INTO like_slots (post_id, slot, n) VALUES ($1, $2, $3) "
			  "ON CONFLICT (post_id, slot) DO UPDATE SET n = like_slots.n + excluded.n",
			3, p);
	}
	free(f.add);
	return rc;
}

int shard_resize(struct kit_db *db, int64_t post_id, int nslots)
{
	if (nslots < 1 || nslots > SHARD_MAX_SLOTS)
		return KIT_DB_ERR;
	char post[24];
	snprintf(post, sizeof post, "%lld", (long long)post_id);

	int rc = kit_db_begin(db);
	if (rc != 0)
		return rc;
	rc = resize_in_tx(db, post, nslots);
	if (rc != 0) {
		kit_db_rollback(db);
		return rc;
	}
	return kit_db_commit(db);
}

int shard_choose_n(double peak_per_s, double hold_ms, double headroom)
{
	if (!(peak_per_s >= 0) || !(hold_ms > 0) || !(headroom >= 1))
		return -1;
	double rows = peak_per_s * hold_ms / 1000.0 * headroom;
	/* A rounding crumb is a few parts in 10^16 of the product, whatever
	 * its size: 50000 * 1 / 1000 * 1.1 must give 55, and 9e9 * 1.5 / 1000
	 * * 2.2 29,700,000, not one row more. The allowance is a part in 10^12
	 * of the product (an infinite product stays infinite). */
	double n = ceil(rows * (1 - 1e-12));
	/* A rate of 0 with an infinite hold or headroom is 0 x infinity, not
	 * a number (NaN fails every comparison): no like comes, one row. */
	return !(n >= 1) ? 1 : n > INT32_MAX ? INT32_MAX : (int)n;
}
