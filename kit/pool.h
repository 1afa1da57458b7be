/*
 * pool.h: an application's connection pool, small and blocking.
 *
 * What an app server keeps in front of its database: N connections opened
 * up front from one URL, handed out one request at a time. A request that
 * finds them all in use waits, first come first served, up to the acquire
 * timeout, and then fails without touching the database. On every checkout
 * the pool runs its reset statement (DISCARD ALL, as PgBouncer's
 * server_reset_query does, or RESET ALL), so a connection comes back
 * without the session settings the last user left on it: what a request
 * wants for itself it must set inside its own transaction (SET LOCAL).
 *
 * Interface:
 *   struct kit_pool *p;
 *   if (kit_pool_open(&p, url, 8, 100, "DISCARD ALL", err, sizeof err) != 0) ...
 *   struct kit_db *db;
 *   int rc = kit_pool_get(p, &db);           KIT_POOL_TIMEOUT: nothing free in time
 *   if (rc == 0) { ...use db...; kit_pool_put(p, db); }
 *   kit_pool_close(p);                       every connection given back first
 * Any number of threads may get and put at once.
 */
#ifndef HOTROW_KIT_POOL_H
#define HOTROW_KIT_POOL_H

#include <stddef.h>

#include "kit/db.h"

enum { KIT_POOL_TIMEOUT = -20 };     /* no connection came free in time */

struct kit_pool;

/* Open size connections (1..256) to url. acquire_timeout_ms: how long
 * kit_pool_get waits (0: not at all). reset_sql runs on each checkout (NULL
 * or "": nothing; SQLite has no session state to reset). Returns 0, or
 * KIT_DB_ERR with the reason in err (and *out NULL). */
int kit_pool_open(struct kit_pool **out, const char *url, int size, int acquire_timeout_ms,
                  const char *reset_sql, char *err, size_t errlen);
/* Close every connection; all must have been put back. NULL is fine. */
void kit_pool_close(struct kit_pool *p);

/* Take a connection into *db: 0; KIT_POOL_TIMEOUT when none came free
 * within the acquire timeout; a KIT_DB_* code when the reset failed (the
 * connection is then back in the pool and *db is NULL). */
int kit_pool_get(struct kit_pool *p, struct kit_db **db);
/* Give db back; the longest waiter gets it. */
void kit_pool_put(struct kit_pool *p, struct kit_db *db);

int kit_pool_size(const struct kit_pool *p);
/* How many kit_pool_get calls on p have answered KIT_POOL_TIMEOUT since it
 * opened (for tests: a caller that asks again after a timeout shows). */
long kit_pool_timeouts(struct kit_pool *p);

#endif
