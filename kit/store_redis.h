/*
 * store_redis.h: kit/store's second backend, a real Redis over hiredis.
 *
 * Internal to kit/store: store.c calls these for a handle opened on a
 * "redis://" or "unix:" URL, after its own checks (a valid key, the
 * refusal switch), and maps nothing else: each function speaks Redis and
 * returns a KIT_STORE_* code. Keys are given without the namespace; this
 * module puts it in front.
 *
 * Interface:
 *   struct kit_store_redis *r;
 *   if (kit_store_redis_open(&r, "unix:/run/redis.sock", err, sizeof err) != 0) ...
 *   kit_store_redis_incrby(r, "views:delta:7", 1, NULL, err, sizeof err);
 *   kit_store_redis_free(r);
 * Any thread may call at once: each call borrows a connection of its own
 * from a small pool (made on demand, dropped when it breaks). On failure
 * err gets a message naming the server and the cause.
 */
#ifndef HOTROW_KIT_STORE_REDIS_H
#define HOTROW_KIT_STORE_REDIS_H

#include <stddef.h>
#include <stdint.h>

#include "kit/store.h"

struct kit_store_redis;

/* Connect to url (and PING it). *out is NULL on failure. */
int kit_store_redis_open(struct kit_store_redis **out, const char *url, char *err, size_t errlen);
void kit_store_redis_free(struct kit_store_redis *r);   /* NULL is fine */

int kit_store_redis_incrby(struct kit_store_redis *r, const char *key, int64_t by, int64_t *out,
                           char *err, size_t errlen);
int kit_store_redis_get(struct kit_store_redis *r, const char *key, int64_t *out,
                        char *err, size_t errlen);
int kit_store_redis_set(struct kit_store_redis *r, const char *key, int64_t v,
                        char *err, size_t errlen);
int kit_store_redis_del(struct kit_store_redis *r, const char *key, int *removed,
                        char *err, size_t errlen);
int kit_store_redis_getdel(struct kit_store_redis *r, const char *key, int64_t *out,
                           char *err, size_t errlen);
int kit_store_redis_sadd(struct kit_store_redis *r, const char *key, const char *member,
                         int *added, char *err, size_t errlen);
int kit_store_redis_srem(struct kit_store_redis *r, const char *key, const char *member,
                         int *removed, char *err, size_t errlen);
/* SPOP (pop = 1) or SRANDMEMBER-free copy via SMEMBERS (pop = 0). */
int kit_store_redis_members(struct kit_store_redis *r, const char *key, int count, char **out,
                            int *n, int pop, char *err, size_t errlen);
int kit_store_redis_sismember(struct kit_store_redis *r, const char *key, const char *member,
                              int *out, char *err, size_t errlen);
int kit_store_redis_scard(struct kit_store_redis *r, const char *key, int64_t *out,
                          char *err, size_t errlen);
/* Keys under the namespace (the whole database without one). */
int kit_store_redis_dbsize(struct kit_store_redis *r, int64_t *out, char *err, size_t errlen);
/* Delete every key under the namespace (FLUSHDB without one). */
int kit_store_redis_flush(struct kit_store_redis *r, char *err, size_t errlen);
/* The server's own count of calls and microseconds spent on cmd (lower
 * case, e.g. "evalsha"), from INFO commandstats; 0 and 0 before any call. */
int kit_store_redis_cmdstat(struct kit_store_redis *r, const char *cmd, int64_t *calls,
                            double *usec, char *err, size_t errlen);
int kit_store_redis_eval(struct kit_store_redis *r, const struct kit_store_script *sc,
                         struct kit_store_call *c, char *err, size_t errlen);

#endif
