/*
 * store.c: the in-memory counter server behind kit/store.h, and the
 * front that sends a real Redis handle's commands to store_redis.c.
 *
 * One mutex stands for Redis's single thread: a command takes it, does its
 * work and lets it go, so commands never interleave but sequences of them
 * do. kit_store_atomic() keeps it for the whole of a function, and a
 * thread-local note ("this thread holds that store") lets the commands
 * inside skip the lock. Keys and set members live in the same small
 * chained hash table. Every command, on either backend, goes through
 * start() and finish(), so the levers (refusal, lost replies, the hook,
 * the command count) behave the same on both.
 */
#include "kit/store.h"
#include "kit/store_redis.h"

#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_INT, K_SET, K_MEMBER };

struct entry {
	struct entry *next;      /* bucket chain */
	char *key;               /* owned */
	enum kind kind;
	int64_t n;               /* K_INT: the value */
	struct table *set;       /* K_SET: the members (K_MEMBER entries) */
};

struct table {
	struct entry **b;        /* nb buckets */
	size_t nb;
	size_t count;
	size_t cursor;           /* where spop resumes, so no member starves */
};

struct kit_store {
	struct kit_store_redis *redis;   /* a real Redis, or NULL for the in-process store */
	pthread_mutex_t mu;

	/* guarded by mu */
	struct table keys;
	int refuse;              /* commands still to refuse; < 0 forever */
	int lose;                /* replies still to lose */
	int64_t commands;
	kit_store_hook_fn *hook;
	void *hook_arg;
	char err[600];           /* the last failure's message */
};

/* The store this thread holds inside kit_store_atomic, and whether it is
 * running the hook (whose commands must not call the hook again). */
static _Thread_local struct kit_store *held;
static _Thread_local bool in_hook;

/* ---- the hash table ---- */

static size_t hash(const char *k)
{
	size_t h = 1469598103934665603u;   /* FNV-1a */
	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 1099511628211u;
	return h;
}

static int table_init(struct table *t)
{
	t->nb = 16;
	t->count = 0;
	t->cursor = 0;
	t->b = calloc(t->nb, sizeof *t->b);
	return t->b ? 0 : KIT_STORE_NOMEM;
}

static void entry_free(struct entry *e);
static void set_free(struct table *t);

static void table_clear(struct table *t)
{
	for (size_t i = 0; i < t->nb; i++) {
		struct entry *e = t->b[i], *next;
		for (; e; e = next) {
			next = e->next;
			entry_free(e);
		}
		t->b[i] = NULL;
	}
	t->count = 0;
}

static void set_free(struct table *t)
{
	table_clear(t);
	free(t->b);
	free(t);
}

static void entry_free(struct entry *e)
{
	if (e->set)
		set_free(e->set);
	free(e->key);
	free(e);
}

static struct entry *table_find(const struct table *t, const char *key)
{
	struct entry *e = t->b[hash(key) % t->nb];
	while (e && strcmp(e->key, key) != 0)
		e = e->next;
	return e;
}

/* Double the buckets when the table is full; if memory is short, keep
 * the old buckets (chains just get longer). */
static void table_grow(struct table *t)
{
	size_t nb = t->nb * 2;
	struct entry **b = calloc(nb, sizeof *b);
	if (!b)
		return;
	for (size_t i = 0; i < t->nb; i++) {
		struct entry *e = t->b[i], *next;
		for (; e; e = next) {
			next = e->next;
			size_t j = hash(e->key) % nb;
			e->next = b[j];
			b[j] = e;
		}
	}
	free(t->b);
	t->b = b;
	t->nb = nb;
	t->cursor = 0;
}

/* Add a new entry for key (which must be absent); NULL when out of memory,
 * with the table unchanged. */
static struct entry *table_add(struct table *t, const char *key, enum kind kind)
{
	struct entry *e = calloc(1, sizeof *e);
	if (!e || !(e->key = strdup(key))) {
		free(e);
		return NULL;
	}
	e->kind = kind;
	if (kind == K_SET) {
		e->set = malloc(sizeof *e->set);
		if (!e->set || table_init(e->set) != 0) {
			free(e->set);
			free(e->key);
			free(e);
			return NULL;
		}
	}
	if (t->count >= t->nb)
		table_grow(t);
	size_t i = hash(key) % t->nb;
	e->next = t->b[i];
	t->b[i] = e;
	t->count++;
	return e;
}

/* Unlink key's entry and return it (the caller frees it); NULL if absent. */
static struct entry *table_unlink(struct table *t, const char *key)
{
	struct entry **p = &t->b[hash(key) % t->nb];
	for (; *p; p = &(*p)->next) {
		if (strcmp((*p)->key, key) == 0) {
			struct entry *e = *p;
			*p = e->next;
			e->next = NULL;
			t->count--;
			return e;
		}
	}
	return NULL;
}

/* ---- running one command ---- */

/* A command in progress: did it take the lock, which hook to call, is
 * its reply to be lost, and room for a Redis error message. */
struct call {
	struct kit_store *s;
	bool locked;
	bool lose;
	kit_store_hook_fn *hook;
	void *hook_arg;
	char err[600];
};

/* Start a command: take the lock unless this thread already holds the
 * store, and apply the refusal switch. Returns 0 or KIT_STORE_DOWN; either
 * way finish() must follow. */
static int start(struct kit_store *s, struct call *c)
{
	int rc = 0;
	c->s = s;
	c->locked = held != s;
	c->lose = false;
	c->err[0] = '\0';
	if (c->locked) {
		pthread_mutex_lock(&s->mu);
		c->hook = in_hook ? NULL : s->hook;
		c->hook_arg = s->hook_arg;
		if (s->refuse != 0) {
			if (s->refuse > 0)
				s->refuse--;
			rc = KIT_STORE_DOWN;
		} else if (s->lose > 0) {
			s->lose--;
			c->lose = true;
		}
	} else {
		c->hook = NULL;   /* inside an atomic step: the hook comes after it */
	}
	if (rc == 0)
		s->commands++;
	if (s->redis && c->locked) {   /* Redis has its own thread: no lock held while it works */
		pthread_mutex_unlock(&s->mu);
		c->locked = false;
	}
	return rc;
}

/* End a command: let the lock go, then call the hook outside it. */
static int finish(struct call *c, const char *cmd, const char *key, int rc)
{
	if (rc == 0 && c->lose)
		rc = KIT_STORE_UNKNOWN;   /* it ran; its answer never came */
	if (rc != 0) {
		bool take = !c->locked && held != c->s;
		if (take)
			pthread_mutex_lock(&c->s->mu);
		if (c->err[0])
			snprintf(c->s->err, sizeof c->s->err, "%s", c->err);
		else
			snprintf(c->s->err, sizeof c->s->err, "store %s%s%s: %s", cmd, key ? " " : "",
			         key ? key : "", kit_store_strerror(rc));
		if (take)
			pthread_mutex_unlock(&c->s->mu);
	}
	if (c->locked)
		pthread_mutex_unlock(&c->s->mu);
	if (c->hook) {
		in_hook = true;
		c->hook(c->hook_arg, c->s, cmd, key, rc);
		in_hook = false;
	}
	return rc;
}

/* Where a Redis call writes its message: the command's own buffer. */
#define R(c) (c).err, sizeof (c).err

static bool bad_key(const char *key)
{
	return !key || !*key || strlen(key) > KIT_STORE_KEY_MAX;
}

/* Find key expecting kind; *e = NULL when missing. */
static int lookup(struct kit_store *s, const char *key, enum kind kind, struct entry **e)
{
	*e = table_find(&s->keys, key);
	if (*e && (*e)->kind != kind)
		return KIT_STORE_WRONGTYPE;
	return 0;
}

/* ---- lifetime ---- */

struct kit_store *kit_store_new(void)
{
	struct kit_store *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	if (table_init(&s->keys) != 0) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	return s;
}

int kit_store_open(struct kit_store **out, const char *url)
{
	struct kit_store *s = *out = kit_store_new();
	if (!s)
		return KIT_STORE_NOMEM;
	if (!url || !*url || strncmp(url, "mem:", 4) == 0)
		return 0;
	int rc = kit_store_redis_open(&s->redis, url, s->err, sizeof s->err);
	return rc;
}

const char *kit_store_errmsg(const struct kit_store *s)
{
	if (!s)
		return "store: out of memory";
	return s->err[0] ? s->err : "no error";
}

int kit_store_is_redis(const struct kit_store *s)
{
	return s->redis != NULL;
}

void kit_store_free(struct kit_store *s)
{
	if (!s)
		return;
	kit_store_redis_free(s->redis);
	table_clear(&s->keys);
	free(s->keys.b);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

const char *kit_store_strerror(int rc)
{
	switch (rc) {
	case KIT_STORE_OK: return "ok";
	case KIT_STORE_ERR: return "bad argument (NULL, empty or too long key)";
	case KIT_STORE_DOWN: return "store refused the command (down)";
	case KIT_STORE_WRONGTYPE: return "wrong type: an integer command on a set or the reverse";
	case KIT_STORE_NOMEM: return "store out of memory";
	case KIT_STORE_RANGE: return "increment would overflow";
	case KIT_STORE_UNKNOWN: return "reply lost: the command may or may not have run";
	case KIT_STORE_SCRIPT: return "the script failed";
	default: return "unknown store error";
	}
}

/* ---- integer commands ---- */

int kit_store_incrby(struct kit_store *s, const char *key, int64_t by, int64_t *out)
{
	struct call c;
	struct entry *e = NULL;
	int rc = start(s, &c);
	if (rc == 0 && bad_key(key))
		rc = KIT_STORE_ERR;
	if (rc == 0 && s->redis)
		return finish(&c, "INCRBY", key, kit_store_redis_incrby(s->redis, key, by, out, R(c)));
	if (rc == 0)
		rc = lookup(s, key, K_INT, &e);
	if (rc == 0 && e && ((by > 0 && e->n > INT64_MAX - by) || (by < 0 && e->n < INT64_MIN - by)))
		rc = KIT_STORE_RANGE;
	if (rc == 0 && !e && !(e = table_add(&s->keys, key, K_INT)))
		rc = KIT_STORE_NOMEM;
	if (rc == 0) {
		e->n += by;
		if (out)
			*out = e->n;
	}
	return finish(&c, "INCRBY", key, rc);
}

int kit_store_get(struct kit_store *s, const char *key, int64_t *out)
{
	struct call c;
	struct entry *e = NULL;
	int rc = start(s, &c);
	if (rc == 0 && bad_key(key))
		rc = KIT_STORE_ERR;
	if (rc == 0 && s->redis)
		return finish(&c, "GET", key, kit_store_redis_get(s->redis, key, out, R(c)));
	if (rc == 0)
		rc = lookup(s, key, K_INT, &e);
	if (rc == 0)
		*out = e ? e->n : 0;
	return finish(&c, "GET", key, rc);
}

int kit_store_set(struct kit_store *s, const char *key, int64_t v)
{
	struct call c;
	struct entry *e = NULL;
	int rc = start(s, &c);
	if (rc == 0 && bad_key(key))
		rc = KIT_STORE_ERR;
	if (rc == 0 && s->redis)
		return finish(&c, "SET", key, kit_store_redis_set(s->redis, key, v, R(c)));
	if (rc == 0) {
		e = table_find(&s->keys, key);
		if (e && e->kind == K_SET) {   /* the set goes; the entry stays */
			set_free(e->set);
			e->set = NULL;
			e->kind = K_INT;
		}
	}
	if (rc == 0 && !e && !(e = table_add(&s->keys, key, K_INT)))
		rc = KIT_STORE_NOMEM;
	if (rc == 0)
		e->n = v;
	return finish(&c, "SET", key, rc);
}

int kit_store_del(struct kit_store *s, const char *key, int *removed)
{
	struct call c;
	int rc = start(s, &c);
	if (rc == 0 && bad_key(key))
		rc = KIT_STORE_ERR;
	if (rc == 0 && s->redis)
		return finish(&c, "DEL", key, kit_store_redis_del(s->redis, key, removed, R(c)));
	if (rc == 0) {
		struct entry *e = table_unlink(&s->keys, key);
		if (removed)
			*removed = e != NULL;
		if (e)
			entry_free(e);
	}
	return finish(&c, "DEL", key, rc);
}

int kit_store_getdel(struct kit_store *s, const char *key, int64_t *out)
{
	struct call c;
	struct entry *e = NULL;
	int rc = start(s, &c);
	if (rc == 0 && bad_key(key))
		rc = KIT_STORE_ERR;
	if (rc == 0 && s->redis)
		return finish(&c, "GETDEL", key, kit_store_redis_getdel(s->redis, key, out, R(c)));
	if (rc == 0)
		rc = lookup(s, key, K_INT, &e);
	if (rc == 0) {
		*out = e ? e->n : 0;
		if (e)
			entry_free(table_unlink(&s->keys, key));
	}
	return finish(&c, "GETDEL", key, rc);
}

/* ---- set commands ---- */

int kit_store_sadd(struct kit_store *s, const char *key, const char *member, int *added)
{
	struct call c;
	struct entry *e = NULL;
	bool made = false;
	int rc = start(s, &c);
	if (rc == 0 && (bad_key(key) || bad_key(member)))
		rc = KIT_STORE_ERR;
	if (rc == 0 && s->redis)
		return finish(&c, "SADD", key, kit_store_redis_sadd(s->redis, key, member, added, R(c)));
	if (rc == 0)
		rc = lookup(s, key, K_SET, &e);
	if (rc == 0 && !e) {
		if ((e = table_add(&s->keys, key, K_SET)))
			made = true;
		else
			rc = KIT_STORE_NOMEM;
	}
	if (rc == 0) {
		bool fresh = !table_find(e->set, member);
		if (fresh && !table_add(e->set, member, K_MEMBER)) {
			rc = KIT_STORE_NOMEM;
			if (made)   /* leave no empty set behind */
				entry_free(table_unlink(&s->keys, key));
		}
		if (rc == 0 && added)
			*added = fresh;
	}
	return finish(&c, "SADD", key, rc);
}

int kit_store_srem(struct kit_store *s, const char *key, const char *member, int *removed)
{
	struct call c;
	struct entry *e = NULL;
	int rc = start(s, &c);
	if (rc == 0 && (bad_key(key) || bad_key(member)))
		rc = KIT_STORE_ERR;
	if (rc == 0 && s->redis)
		return finish(&c, "SREM", key, kit_store_redis_srem(s->redis, key, member, removed, R(c)));
	if (rc == 0)
		rc = lookup(s, key, K_SET, &e);
	if (rc == 0) {
		struct entry *m = e ? table_unlink(e->set, member) : NULL;
		if (removed)
			*removed = m != NULL;
		if (m)
			entry_free(m);
		if (e && e->set->count == 0)   /* an empty set is no key, as in Redis */
			entry_free(table_unlink(&s->keys, key));
	}
	return finish(&c, "SREM", key, rc);
}

/* Copy (and with pop, remove) up to count members of the set at key into
 * out; all or nothing on out-of-memory. */
static int take_members(struct kit_store *s, const char *key, int count, char **out,
                        int *n, bool pop)
{
	struct entry *e = NULL;
	*n = 0;
	if (bad_key(key) || count < 0 || (count > 0 && !out))
		return KIT_STORE_ERR;
	int rc = lookup(s, key, K_SET, &e);
	if (rc != 0 || !e)
		return rc;

	struct table *t = e->set;
	int got = 0;
	size_t i = t->cursor % t->nb;
	for (size_t seen = 0; seen < t->nb && got < count; seen++, i = (i + 1) % t->nb) {
		for (struct entry *m = t->b[i]; m && got < count; m = m->next) {
			if (!(out[got] = strdup(m->key))) {
				while (got > 0)
					free(out[--got]);
				return KIT_STORE_NOMEM;
			}
			got++;
		}
	}
	if (pop) {
		for (int k = 0; k < got; k++)
			entry_free(table_unlink(t, out[k]));
		t->cursor = i;
		if (t->count == 0)   /* an empty set is no key, as in Redis */
			entry_free(table_unlink(&s->keys, key));
	}
	*n = got;
	return 0;
}

/* finish() for a command that hands over copies of members: when its
 * answer is lost (or it failed), the caller gets none of them, as a client
 * whose connection dropped gets none, and nothing is left allocated. */
static int finish_members(struct call *c, const char *cmd, const char *key, int rc,
                          char **out, int *n)
{
	rc = finish(c, cmd, key, rc);
	if (rc != 0)
		while (*n > 0)
			free(out[--*n]);
	return rc;
}

int kit_store_spop(struct kit_store *s, const char *key, int count, char **out, int *n)
{
	struct call c;
	int rc = start(s, &c);
	*n = 0;
	if (rc == 0 && s->redis)
		rc = bad_key(key) ? KIT_STORE_ERR
		   : kit_store_redis_members(s->redis, key, count, out, n, 1, R(c));
	else if (rc == 0)
		rc = take_members(s, key, count, out, n, true);
	return finish_members(&c, "SPOP", key, rc, out, n);
}

int kit_store_smembers(struct kit_store *s, const char *key, int count, char **out, int *n)
{
	struct call c;
	int rc = start(s, &c);
	*n = 0;
	if (rc == 0 && s->redis)
		rc = bad_key(key) ? KIT_STORE_ERR
		   : kit_store_redis_members(s->redis, key, count, out, n, 0, R(c));
	else if (rc == 0)
		rc = take_members(s, key, count, out, n, false);
	return finish_members(&c, "SMEMBERS", key, rc, out, n);
}

int kit_store_sismember(struct kit_store *s, const char *key, const char *member, int *out)
{
	struct call c;
	struct entry *e = NULL;
	int rc = start(s, &c);
	if (rc == 0 && (bad_key(key) || bad_key(member)))
		rc = KIT_STORE_ERR;
	if (rc == 0 && s->redis)
		return finish(&c, "SISMEMBER", key,
		              kit_store_redis_sismember(s->redis, key, member, out, R(c)));
	if (rc == 0)
		rc = lookup(s, key, K_SET, &e);
	if (rc == 0)
		*out = e && table_find(e->set, member) != NULL;
	return finish(&c, "SISMEMBER", key, rc);
}

int kit_store_scard(struct kit_store *s, const char *key, int64_t *out)
{
	struct call c;
	struct entry *e = NULL;
	int rc = start(s, &c);
	if (rc == 0 && bad_key(key))
		rc = KIT_STORE_ERR;
	if (rc == 0 && s->redis)
		return finish(&c, "SCARD", key, kit_store_redis_scard(s->redis, key, out, R(c)));
	if (rc == 0)
		rc = lookup(s, key, K_SET, &e);
	if (rc == 0)
		*out = e ? (int64_t)e->set->count : 0;
	return finish(&c, "SCARD", key, rc);
}

int kit_store_cmdstat(struct kit_store *s, const char *cmd, int64_t *calls, double *usec)
{
	struct call c;
	int rc = start(s, &c);
	if (rc == 0 && !s->redis)
		rc = KIT_STORE_ERR;
	else if (rc == 0)
		rc = kit_store_redis_cmdstat(s->redis, cmd, calls, usec, R(c));
	return finish(&c, "INFO", NULL, rc);
}

int kit_store_dbsize(struct kit_store *s, int64_t *out)
{
	struct call c;
	int rc = start(s, &c);
	if (rc == 0 && s->redis)
		rc = kit_store_redis_dbsize(s->redis, out, R(c));
	else if (rc == 0)
		*out = (int64_t)s->keys.count;
	return finish(&c, "DBSIZE", NULL, rc);
}

/* ---- atomic steps ---- */

int kit_store_atomic(struct kit_store *s, kit_store_fn *fn, void *arg)
{
	if (held == s)
		return fn(s, arg);
	if (s->redis) {
		snprintf(s->err, sizeof s->err, "store: a real Redis cannot run a C step; "
		         "write it as a script (kit_store_eval)");
		return KIT_STORE_ERR;
	}
	struct call c;
	int rc = start(s, &c);
	if (rc == 0) {
		struct kit_store *outer = held;   /* a step on another store may be running */
		held = s;
		rc = fn(s, arg);
		held = outer;
	}
	return finish(&c, "ATOMIC", NULL, rc);
}

/* A script on the in-process store: its C step, inside one atomic step. */
struct eval {
	const struct kit_store_script *sc;
	struct kit_store_call *c;
};

static int eval_step(struct kit_store *s, void *arg)
{
	struct eval *e = arg;
	return e->sc->step(s, e->c);
}

int kit_store_eval(struct kit_store *s, const struct kit_store_script *sc,
                   struct kit_store_call *c)
{
	c->nout = 0;
	if (!s->redis)
		return kit_store_atomic(s, eval_step, &(struct eval){ sc, c });
	struct call k;
	int rc = start(s, &k);
	if (rc == 0)
		rc = kit_store_redis_eval(s->redis, sc, c, R(k));
	return finish(&k, "EVALSHA", NULL, rc);
}

/* ---- levers ---- */

void kit_store_restart(struct kit_store *s)
{
	assert(held != s);
	if (s->redis) {
		char err[600];
		if (kit_store_redis_flush(s->redis, err, sizeof err) != 0) {
			pthread_mutex_lock(&s->mu);
			snprintf(s->err, sizeof s->err, "%s", err);
			pthread_mutex_unlock(&s->mu);
		}
		return;
	}
	pthread_mutex_lock(&s->mu);
	table_clear(&s->keys);
	pthread_mutex_unlock(&s->mu);
}

void kit_store_lose_replies(struct kit_store *s, int n)
{
	if (held == s) {
		s->lose = n > 0 ? n : 0;
		return;
	}
	pthread_mutex_lock(&s->mu);
	s->lose = n > 0 ? n : 0;
	pthread_mutex_unlock(&s->mu);
}

void kit_store_refuse(struct kit_store *s, int n)
{
	if (held == s) {
		s->refuse = n;
		return;
	}
	pthread_mutex_lock(&s->mu);
	s->refuse = n;
	pthread_mutex_unlock(&s->mu);
}

void kit_store_set_hook(struct kit_store *s, kit_store_hook_fn *hook, void *arg)
{
	assert(held != s);
	pthread_mutex_lock(&s->mu);
	s->hook = hook;
	s->hook_arg = arg;
	pthread_mutex_unlock(&s->mu);
}

int64_t kit_store_commands(struct kit_store *s)
{
	if (held == s)
		return s->commands;
	pthread_mutex_lock(&s->mu);
	int64_t n = s->commands;
	pthread_mutex_unlock(&s->mu);
	return n;
}
