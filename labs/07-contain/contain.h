/*
 * contain.h: Lab 07, find the hot row and keep it from taking the app down.
 *
 * Three parts, each on its own:
 *   - hot_rows_now(): from PostgreSQL's pg_locks and pg_stat_activity, the
 *     rows that have waiters right now (PostgreSQL only);
 *   - hot_keys_*(): the Space-Saving algorithm, an app-side detector of the
 *     keys that come up most often in a stream (pure C, no database);
 *   - contain_*(): a like endpoint and a login endpoint over connection
 *     pools (kit/pool.h), with the like contained by a lock_timeout and a
 *     pool of its own (PostgreSQL for the checks that matter).
 *
 * Interface:
 *   struct hot_row_now rows[8]; int n;
 *   if (hot_rows_now(db, rows, 8, &n) == 0) ...rows[0] is the worst...
 *
 *   struct hot_key counters[100]; struct hot_keys hk;
 *   hot_keys_init(&hk, counters, 100);
 *   for (...) hot_keys_add(&hk, key);
 *   struct hot_key top[10]; int m = hot_keys_topk(&hk, top, 10);
 *
 *   struct contain_app app;
 *   struct contain_config cfg = { .url = url, .contain = true, ... };
 *   if (contain_open(&app, &cfg, err, sizeof err) == 0) {
 *       contain_like(&app, 1); contain_login(&app, 7);   from any threads
 *       contain_close(&app);
 *   }
 */
#ifndef HOTROW_LAB07_CONTAIN_H
#define HOTROW_LAB07_CONTAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/db.h"
#include "kit/pool.h"

/* ---- §2: the rows with a line behind them, now ---- */

struct hot_row_now {
	char relation[64];       /* the table, as ::regclass::text prints it;
	                            "" when no lock in the line names the row */
	int64_t page, tuple;     /* the row's place (its ctid); -1 when unnamed */
	int holder_pid;          /* the backend whose transaction holds the row,
	                            even when it waits itself for another row
	                            (that wait is a line of its own, not the
	                            end of this one); 0 if none was seen (on
	                            PostgreSQL a prepared transaction, PREPARE
	                            TRANSACTION, holds rows with no session) */
	int waiting;             /* backends waiting for the row, all of them */
	double oldest_wait_ms;   /* the longest of their waits so far */
};

/* Fill out[0 .. *n-1] with the rows of the current database that have at
 * least one waiter, one entry per line (per transaction at its front), the
 * most waiters first (then the oldest wait), at most max of them. Returns 0, or a KIT_DB_* code (*n is then 0). PostgreSQL
 * and MariaDB (there relation is the table's name, page and tuple the
 * record's page and heap number, holder_pid the holder's CONNECTION_ID());
 * on SQLite it returns KIT_DB_ERR. */
int hot_rows_now(struct kit_db *db, struct hot_row_now *out, int max, int *n);

/* ---- §4: the keys that come up most, from the app's side ---- */

struct hot_key {
	uint64_t key;
	uint64_t count;          /* never below the key's true count */
	uint64_t error;          /* count - error is never above it */
};

struct hot_keys {
	struct hot_key *c;       /* the caller's k counters: all the memory used */
	int k;                   /* how many */
	int used;                /* how many hold a key */
	uint64_t n;              /* keys seen */
};

/* Start counting with the caller's k counters (k >= 1); no allocation,
 * ever: the caller owns counters and frees them after the last call.
 * The counters c[0 .. used-1] are the whole state, and their counts may
 * be set between calls (the checks set counts past 2^32 that way, as
 * weeks of a stream would leave them): hot_keys_add() and
 * hot_keys_topk() take the counters as they find them, in any order, and
 * count on no order of their own (counters kept sorted by count would not
 * stay sorted). */
void hot_keys_init(struct hot_keys *hk, struct hot_key *counters, int k);
/* Count one occurrence of key. */
void hot_keys_add(struct hot_keys *hk, uint64_t key);
/* Copy the counted keys, highest count first, into out (at most max);
 * returns how many were copied. Scratch memory it allocates comes from
 * the heap (k may be a million counters, more than a thread's stack
 * holds) and is freed before it returns; when that allocation fails it
 * copies nothing and returns 0. */
int hot_keys_topk(const struct hot_keys *hk, struct hot_key *out, int max);

/* ---- §5 and §6: two endpoints, one hot row ---- */

/* posts(id, likes) as in Lab 01; users(id, name) for the login page. */
#define CONTAIN_SCHEMA \
	"CREATE TABLE posts (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0);" \
	"CREATE TABLE users (id BIGINT PRIMARY KEY, name TEXT NOT NULL)"

/* What every checkout runs first: the pool's reset (kit/pool.h). */
#define CONTAIN_RESET "DISCARD ALL"

struct contain_config {
	const char *url;
	int pool_size;           /* the app's pool: shared by both endpoints, or,
	                            contained, the login page's own */
	int counter_pool_size;   /* contained: the like endpoint's own pool */
	int acquire_timeout_ms;  /* how long a request waits for a connection */
	int lock_timeout_ms;     /* contained: how long the like may wait for
	                            the post's row (its UPDATE, or a SELECT ...
	                            FOR UPDATE before it) before giving up, set
	                            inside the like's transaction (SET LOCAL),
	                            never on the pooled session; it bounds that
	                            wait only, not the app's own pace between
	                            statements */
	bool contain;            /* false: the naive app, one shared pool and no
	                            lock_timeout of the app's (it may send none,
	                            or lock_timeout = 0, "wait for ever", for its
	                            likes: both are naive) */
};

struct contain_app {
	struct kit_pool *likes;  /* the pool the like endpoint takes from */
	struct kit_pool *login;  /* the pool the login page takes from; the same
	                            pool as likes when nothing is contained */
	struct contain_config cfg;
};

/* Open the pools cfg asks for, each resetting with CONTAIN_RESET. Returns
 * 0, or KIT_DB_ERR with the reason in err (nothing left open, and no
 * pointer left in app to a pool it closed: a contain_close(app) on the
 * caller's cleanup path, app zeroed before the call, closes nothing). */
int contain_open(struct contain_app *app, const struct contain_config *cfg,
                 char *err, size_t errlen);
void contain_close(struct contain_app *app);

/* The like endpoint: add 1 to posts.likes of post_id in a transaction of
 * its own. Returns 0; KIT_POOL_TIMEOUT when no connection came free in
 * time; KIT_DB_BUSY when, contained, the row stayed locked past the lock
 * timeout (the like is then not counted, and not tried again: the caller
 * decides); another KIT_DB_* code on error.
 * The connection always goes back to the pool with no transaction open.
 * A like that returned 0 is on disk: it sends nothing that turns its
 * COMMIT's wait for the disk down (synchronous_commit). */
int contain_like(struct contain_app *app, int64_t post_id);

/* The login page: read the user's row. 0, KIT_POOL_TIMEOUT, KIT_DB_NOROW
 * for an unknown user, or another KIT_DB_* code. */
int contain_login(struct contain_app *app, int64_t user_id);

#endif
