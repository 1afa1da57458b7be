/*
 * shard.c: Lab 02, your sharded like counter.
 *
 * Read labs/02-sharded/README.md first; each TODO names the section that
 * explains it. shard_setup() and shard_slots() are done for you: the
 * tables are the ones in labs/02-sharded/shard.h. Check your work with
 *     hotrow lab check 02
 */
#include "labs/02-sharded/shard.h"

#include <math.h>
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
	/* TODO(§3): call rnd(rnd_arg) once, and in ONE statement add 1 to
	 * slot (value % N) of post_id, creating the row if it is missing
	 * (an upsert). Take N from like_slot_config (SHARD_DEFAULT_SLOTS when
	 * the post has no row there), in the database, not from a copy you
	 * keep in C: §5 says why. Parameters are text: format the numbers
	 * with snprintf. The engine decides how the upsert is written: ask
	 * kit_db_engine(db); KIT_DB_MYSQL (MariaDB) says ON DUPLICATE KEY
	 * UPDATE and CAST(... AS SIGNED) instead (§3). */
	(void)db;
	(void)post_id;
	(void)rnd;
	(void)rnd_arg;
	return KIT_DB_ERR;
}

int shard_read(struct kit_db *db, int64_t post_id, int64_t *total)
{
	/* TODO(§3): the post's exact count into *total, 0 for a post with no
	 * rows. Which rows of the post must you add up? (§5 again.) */
	(void)db;
	(void)post_id;
	(void)total;
	return KIT_DB_ERR;
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

int shard_resize(struct kit_db *db, int64_t post_id, int nslots)
{
	/* TODO(§5): refuse nslots outside 1 .. SHARD_MAX_SLOTS. Then, in one
	 * transaction (kit_db_begin ... kit_db_commit, kit_db_rollback on any
	 * failure): record the new N in like_slot_config, remove every row of
	 * the post at slot >= nslots and add what each removed row held to
	 * slot (its slot % nslots). Add exactly what you removed, even if
	 * another thread changed a row a moment ago: kit_db_query() can run
	 * a statement that both removes rows and hands them back to you.
	 * Your upserts here follow kit_db_engine(db) as in shard_increment. */
	(void)db;
	(void)post_id;
	(void)nslots;
	return KIT_DB_ERR;
}

int shard_choose_n(double peak_per_s, double hold_ms, double headroom)
{
	/* TODO(§4): the formula in shard.h. Mind the rounding: 50000/s at
	 * 1 ms with headroom 1.1 is exactly 55 rows, and a double says
	 * 55.00000000000001. */
	(void)peak_per_s;
	(void)hold_ms;
	(void)headroom;
	return -1;
}
