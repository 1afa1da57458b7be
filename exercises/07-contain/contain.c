/*
 * contain.c: Lab 07, your detector and your containment.
 *
 * Three independent parts (README §2, §4, §5-6). As it stands nothing is
 * found, nothing is counted, and the like endpoint shares the app's one
 * pool and waits for the row as long as it takes: exactly the app that
 * falls over when a post goes viral.
 *
 * Check your work: build/hotrow lab check 07
 * (the §4 checks run anywhere; the others need PostgreSQL:
 *  export HOTROW_PG_URL=$(scripts/pg up))
 */
#include "labs/07-contain/contain.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- §2 ---- */

int hot_rows_now(struct kit_db *db, struct hot_row_now *out, int max, int *n)
{
	/* TODO(§2): query pg_locks (keeping this database's waits by
	 * pg_locks.database, §2) for the lock waits on rows, group them into lines, one
	 * per transaction at the front, and fill out[] with kit_db_query().
	 * Remember every kind of wait a line is made of, and that once the
	 * row changes hands no lock may name it. kit_db_engine(db) decides
	 * where to look: on KIT_DB_MYSQL (MariaDB) the same lines are in
	 * information_schema.INNODB_TRX and INNODB_LOCKS (§2). */
	(void)db;
	(void)out;
	(void)max;
	*n = 0;
	return 0;
}

/* ---- §4 ---- */

void hot_keys_init(struct hot_keys *hk, struct hot_key *counters, int k)
{
	hk->c = counters;
	hk->k = k;
	hk->used = 0;
	hk->n = 0;
}

void hot_keys_add(struct hot_keys *hk, uint64_t key)
{
	/* TODO(§4): count key. A key that has a counter adds one to it; a new
	 * key takes a free counter while there is one; when none is free,
	 * Space-Saving says which counter the new key takes over, and what
	 * its count and error become. Never use more than hk->k counters. */
	(void)key;
	hk->n++;
}

int hot_keys_topk(const struct hot_keys *hk, struct hot_key *out, int max)
{
	/* TODO(§4): copy the counters in use into out, highest count first,
	 * at most max of them, and return how many. */
	(void)hk;
	(void)out;
	(void)max;
	return 0;
}

/* ---- §5 and §6 ---- */

int contain_open(struct contain_app *app, const struct contain_config *cfg,
                 char *err, size_t errlen)
{
	memset(app, 0, sizeof *app);
	app->cfg = *cfg;
	if (kit_pool_open(&app->login, cfg->url, cfg->pool_size, cfg->acquire_timeout_ms,
	                  CONTAIN_RESET, err, errlen) != 0)
		return KIT_DB_ERR;
	/* TODO(§6): when cfg->contain is set, the like endpoint gets a pool of
	 * its own (cfg->counter_pool_size connections), so that likes can use
	 * up only their own connections. */
	app->likes = app->login;
	return 0;
}

void contain_close(struct contain_app *app)
{
	if (app->likes != app->login)
		kit_pool_close(app->likes);
	kit_pool_close(app->login);
	app->likes = app->login = NULL;
}

int contain_like(struct contain_app *app, int64_t post_id)
{
	char id[24];
	snprintf(id, sizeof id, "%" PRId64, post_id);
	const char *params[] = { id };
	struct kit_db *db;
	int rc = kit_pool_get(app->likes, &db);
	if (rc != 0)
		return rc;
	rc = kit_db_begin(db);
	/* TODO(§5): when cfg.contain is set, the UPDATE must wait for the row
	 * at most cfg.lock_timeout_ms. Set it where the pool's reset
	 * (CONTAIN_RESET on every checkout) cannot undo it. */
	if (rc == 0)
		rc = kit_db_exec(db, "UPDATE posts SET likes = likes + 1 WHERE id = $1", 1, params);
	if (rc == 0 && kit_db_changes(db) != 1)
		rc = KIT_DB_NOROW;
	if (rc == 0)
		rc = kit_db_commit(db);
	else
		kit_db_rollback(db);
	kit_pool_put(app->likes, db);
	return rc;
}

int contain_login(struct contain_app *app, int64_t user_id)
{
	char id[24];
	snprintf(id, sizeof id, "%" PRId64, user_id);
	const char *params[] = { id };
	struct kit_db *db;
	int64_t found;
	int rc = kit_pool_get(app->login, &db);
	if (rc != 0)
		return rc;
	rc = kit_db_query_int(db, "SELECT id FROM users WHERE id = $1", 1, params, &found);
	kit_pool_put(app->login, db);
	return rc;
}
