/*
 * contain.c: Lab 07 reference solution.
 *
 * hot_rows_now() reads every kind of wait in a row's line: the first
 * waiter waits on the holder's transactionid (and holds the row's tuple
 * lock, which names the row), the others on that tuple lock, and once the
 * row has changed hands, all of them on the new holder's transactionid. Space-Saving
 * keeps k counters and, when a new key finds them all taken, gives it the
 * smallest one, count and all. The like endpoint is contained twice: a
 * lock_timeout set inside its own transaction (SET LOCAL, so no pool reset
 * can lose it) and a pool of its own, so the login page never waits
 * behind a like.
 */
#include "labs/07-contain/contain.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- §2 ---- */

/* Every wait for a row in this database, grouped by the transaction at
 * the front of its line. A transactionid wait names that transaction
 * itself (and the row, through the tuple lock its backend holds, when it
 * holds one); a tuple wait is behind the transaction that the tuple lock's
 * holder waits for. Once the row has changed hands, the waiters wait on
 * the new holder's transactionid with no tuple lock at all: then nothing
 * in pg_locks names the row, and the line is reported without a name.
 * A wait is this database's when its backend holds a lock here (the
 * table's, at least): pg_locks is read anew by every statement, where
 * pg_stat_activity is read once per transaction, so a datname from it
 * would miss, in a caller's transaction, backends that came after. */
static const char HOT_ROWS_SQL[] =
	"WITH w AS ("
	"  SELECT w.pid, w.locktype, w.transactionid::text AS xid, w.waitstart,"
	"   coalesce(w.relation, t.relation) AS rel, coalesce(w.page, t.page) AS page,"
	"   coalesce(w.tuple, t.tuple) AS tup"
	"  FROM pg_locks w"
	"  LEFT JOIN pg_locks t ON t.pid = w.pid AND t.locktype = 'tuple' AND t.granted"
	"  WHERE NOT w.granted AND w.locktype IN ('tuple', 'transactionid')"
	"  AND EXISTS (SELECT 1 FROM pg_locks d WHERE d.pid = w.pid AND d.database ="
	"   (SELECT oid FROM pg_database WHERE datname = current_database()))"
	"), behind AS ("
	"  SELECT w.*, coalesce(w.xid, (SELECT h.xid FROM w h WHERE h.locktype = 'transactionid'"
	"   AND (h.rel, h.page, h.tup) = (w.rel, w.page, w.tup) LIMIT 1)) AS front"
	"  FROM w"
	")"
	" SELECT coalesce(min(rel::regclass::text), ''), coalesce(min(page), -1),"
	" coalesce(min(tup), -1), count(*),"
	" coalesce(max(extract(epoch FROM clock_timestamp() - waitstart) * 1000), 0),"
	" coalesce((SELECT l.pid FROM pg_locks l WHERE l.locktype = 'transactionid' AND l.granted"
	"  AND l.transactionid::text = front), 0)"
	" FROM behind GROUP BY front ORDER BY 4 DESC, 5 DESC";

/* The same on MariaDB, from what a MySQL DBA reads: every waiting
 * transaction in INNODB_TRX requests one lock of INNODB_LOCKS, which names
 * the record (table, page, heap number); the line is every waiter on one
 * record, its front the transaction whose lock on that record is not the
 * one it requests (granted), and the wait is the statement's age in
 * PROCESSLIST (INNODB_TRX's trx_wait_started has whole seconds only).
 * The schema's name is this connection's DATABASE(), whole: a database's
 * name may have a dot in it (`shop.eu`.`posts`), so the lock's table is
 * this database's when it begins with that name quoted and a dot, and
 * the table's name is what follows. A transaction that
 * has written nothing (a reader, LOCK IN SHARE MODE) shows trx_id 0, and
 * so does every such transaction on the server: its lock's lock_trx_id 0
 * joins all of them, so a holder with id 0 is taken only from a session
 * of this database (its PROCESSLIST.DB), and one with an id of its own
 * first. Only record locks
 * are rows: a wait for a table lock (an INSERT ... SELECT queued for the
 * table's AUTO_INC lock) has no page nor record, and no holder the
 * subquery could match. */
static const char HOT_ROWS_SQL_MYSQL[] =
	"SELECT TRIM(BOTH '`' FROM SUBSTRING(l.lock_table, CHAR_LENGTH(DATABASE()) + 4)), l.lock_page, l.lock_rec,"
	" count(*), coalesce(max(p.TIME_MS), 0),"
	" coalesce((SELECT h.trx_mysql_thread_id FROM information_schema.INNODB_LOCKS hl"
	"  JOIN information_schema.INNODB_TRX h ON h.trx_id = hl.lock_trx_id"
	"  JOIN information_schema.PROCESSLIST hp ON hp.ID = h.trx_mysql_thread_id"
	"  WHERE hl.lock_space = l.lock_space AND hl.lock_page = l.lock_page"
	"  AND hl.lock_rec = l.lock_rec AND hl.lock_id <> coalesce(h.trx_requested_lock_id, '')"
	"  AND (hl.lock_trx_id <> 0 OR BINARY hp.DB = BINARY DATABASE())"
	"  ORDER BY hl.lock_trx_id = 0 LIMIT 1), 0)"
	" FROM information_schema.INNODB_TRX r"
	" JOIN information_schema.INNODB_LOCKS l ON l.lock_id = r.trx_requested_lock_id"
	" LEFT JOIN information_schema.PROCESSLIST p ON p.ID = r.trx_mysql_thread_id"
	" WHERE BINARY LEFT(l.lock_table, CHAR_LENGTH(DATABASE()) + 3) = BINARY CONCAT('`', DATABASE(), '`.')"
	" AND l.lock_type = 'RECORD'"
	" GROUP BY l.lock_table, l.lock_space, l.lock_page, l.lock_rec"
	" ORDER BY 4 DESC, 5 DESC";

struct rows { struct hot_row_now *out; int max, n; };

static int take_row(void *arg, int ncols, const char *const *v)
{
	struct rows *r = arg;
	if (ncols < 6 || r->n >= r->max)
		return 0;
	struct hot_row_now *h = &r->out[r->n++];
	snprintf(h->relation, sizeof h->relation, "%s", v[0] ? v[0] : "");
	h->page = v[1] ? strtoll(v[1], NULL, 10) : -1;
	h->tuple = v[2] ? strtoll(v[2], NULL, 10) : -1;
	h->waiting = v[3] ? atoi(v[3]) : 0;
	h->oldest_wait_ms = v[4] ? strtod(v[4], NULL) : 0;
	h->holder_pid = v[5] ? atoi(v[5]) : 0;
	return 0;
}

int hot_rows_now(struct kit_db *db, struct hot_row_now *out, int max, int *n)
{
	struct rows r = { out, max, 0 };
	*n = 0;
	enum kit_db_engine engine = kit_db_engine(db);
	if (engine == KIT_DB_SQLITE)
		return KIT_DB_ERR;
	int rc = kit_db_query(db, engine == KIT_DB_MYSQL ? HOT_ROWS_SQL_MYSQL : HOT_ROWS_SQL, 0,
	                      NULL, take_row, &r);
	if (rc == 0)
		*n = r.n;
	return rc;
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
	hk->n++;
	for (int i = 0; i < hk->used; i++)
		if (hk->c[i].key == key) {
			hk->c[i].count++;
			return;
		}
	if (hk->used < hk->k) {
		hk->c[hk->used++] = (struct hot_key){ key, 1, 0 };
		return;
	}
	/* Full: the newcomer takes over the smallest counter and its count.
	 * It may have come up that many times unseen, hence the error. */
	int m = 0;
	for (int i = 1; i < hk->k; i++)
		if (hk->c[i].count < hk->c[m].count)
			m = i;
	hk->c[m].key = key;
	hk->c[m].error = hk->c[m].count;
	hk->c[m].count++;
}

static int by_count(const void *a, const void *b)
{
	const struct hot_key *x = a, *y = b;
	return (x->count < y->count) - (x->count > y->count);
}

int hot_keys_topk(const struct hot_keys *hk, struct hot_key *out, int max)
{
	int n = hk->used < max ? hk->used : max;
	struct hot_key *all = malloc((size_t)(hk->used > 0 ? hk->used : 1) * sizeof *all);
	if (all == NULL)
		return 0;
	memcpy(all, hk->c, (size_t)hk->used * sizeof *all);
	qsort(all, (size_t)hk->used, sizeof *all, by_count);
	memcpy(out, all, (size_t)n * sizeof *out);
	free(all);
	return n;
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
	if (!cfg->contain) {
		app->likes = app->login;
		return 0;
	}
	/* The bulkhead: likes get a few connections of their own and can
	 * exhaust only those. */
	if (kit_pool_open(&app->likes, cfg->url, cfg->counter_pool_size, cfg->acquire_timeout_ms,
	                  CONTAIN_RESET, err, errlen) != 0) {
		kit_pool_close(app->login);
		app->login = NULL;
		return KIT_DB_ERR;
	}
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
	char id[24], set[64];
	snprintf(id, sizeof id, "%" PRId64, post_id);
	const char *params[] = { id };
	struct kit_db *db;
	int rc = kit_pool_get(app->likes, &db);
	if (rc != 0)
		return rc;
	rc = kit_db_begin(db);
	/* Inside the transaction: it ends with it, and the pool's reset on
	 * the next checkout cannot have wiped it before it mattered. */
	if (rc == 0 && app->cfg.contain) {
		snprintf(set, sizeof set, "SET LOCAL lock_timeout = %d", app->cfg.lock_timeout_ms);
		rc = kit_db_exec(db, set, 0, NULL);
	}
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
