/*
 * store_redis.c: kit/store's commands on a real redis-server, over hiredis.
 *
 * hiredis contexts are not thread-safe, so each call borrows one from a
 * pool and gives it back; a context that broke is freed instead, and the
 * next call connects afresh. Scripts are loaded with SCRIPT LOAD the first
 * time a handle runs them and then run by their SHA1 with EVALSHA; a
 * server that forgot them (restarted, SCRIPT FLUSH) answers NOSCRIPT, and
 * the script is loaded again once.
 */
#include "kit/store_redis.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#define NS_MAX 64
#define SCRIPTS_MAX 16

struct conn {
	redisContext *c;
	struct conn *next;
};

struct loaded {
	const struct kit_store_script *sc;
	char sha[41];
};

struct kit_store_redis {
	char where[300];           /* for messages: the URL without ns */
	char path[256];            /* unix: socket, or "" */
	char host[256];
	int port, db;
	char ns[NS_MAX + 2];       /* "NAME:" or "" */

	pthread_mutex_t mu;        /* guards what follows */
	struct conn *idle;
	struct loaded scripts[SCRIPTS_MAX];
	int nscripts;
};

__attribute__((format(printf, 5, 6)))
static int fail(struct kit_store_redis *r, int code, char *err, size_t errlen, const char *fmt, ...)
{
	int n = snprintf(err, errlen, "redis %s: ", r ? r->where : "");
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

/* ---- the URL ---- */

static int parse_url(struct kit_store_redis *r, const char *url, char *err, size_t errlen)
{
	const char *q = strchr(url, '?');
	size_t len = q ? (size_t)(q - url) : strlen(url);
	snprintf(r->where, sizeof r->where, "%.*s", (int)(len < 299 ? len : 299), url);
	if (q) {
		if (strncmp(q, "?ns=", 4) != 0 || !q[4] || strlen(q + 4) > NS_MAX)
			return fail(r, KIT_STORE_ERR, err, errlen,
			            "\"%s\": the only option is ?ns=NAME (1..%d bytes)", q, NS_MAX);
		snprintf(r->ns, sizeof r->ns, "%s:", q + 4);
	}
	r->port = 6379;
	if (strncmp(r->where, "unix:", 5) == 0) {
		snprintf(r->path, sizeof r->path, "%s", r->where + 5);
		return r->path[0] ? 0 : fail(r, KIT_STORE_ERR, err, errlen, "a unix: URL needs a path");
	}
	if (strncmp(r->where, "redis://", 8) != 0)
		return fail(r, KIT_STORE_ERR, err, errlen,
		            "a store URL is mem:, redis://HOST[:PORT][/DB] or unix:PATH");
	const char *h = r->where + 8;
	size_t hl = strcspn(h, ":/");
	snprintf(r->host, sizeof r->host, "%.*s", (int)(hl < 255 ? hl : 255), h[0] ? h : "localhost");
	if (!r->host[0])
		snprintf(r->host, sizeof r->host, "localhost");
	const char *p = h + hl;
	char *end;
	if (*p == ':') {
		long v = strtol(p + 1, &end, 10);
		if (end == p + 1 || v < 1 || v > 65535)
			return fail(r, KIT_STORE_ERR, err, errlen, "bad port in the URL");
		r->port = (int)v;
		p = end;
	}
	if (*p == '/' && p[1]) {
		long v = strtol(p + 1, &end, 10);
		if (*end || v < 0 || v > 1000)
			return fail(r, KIT_STORE_ERR, err, errlen, "bad database number in the URL");
		r->db = (int)v;
	}
	return 0;
}

/* ---- connections ---- */

static redisContext *dial(struct kit_store_redis *r, char *err, size_t errlen)
{
	struct timeval tv = { 2, 0 };
	redisContext *c = r->path[0] ? redisConnectUnixWithTimeout(r->path, tv)
	                             : redisConnectWithTimeout(r->host, r->port, tv);
	if (!c || c->err) {
		fail(r, KIT_STORE_DOWN, err, errlen, "cannot connect: %s",
		     c ? c->errstr : "out of memory");
		redisFree(c);
		return NULL;
	}
	redisSetTimeout(c, (struct timeval){ 10, 0 });
	if (r->db > 0) {
		redisReply *y = redisCommand(c, "SELECT %d", r->db);
		int ok = y && y->type == REDIS_REPLY_STATUS;
		if (!ok)
			fail(r, KIT_STORE_DOWN, err, errlen, "SELECT %d: %s", r->db,
			     y && y->type == REDIS_REPLY_ERROR ? y->str : c->errstr);
		freeReplyObject(y);
		if (!ok) {
			redisFree(c);
			return NULL;
		}
	}
	return c;
}

static struct conn *borrow(struct kit_store_redis *r, char *err, size_t errlen)
{
	pthread_mutex_lock(&r->mu);
	struct conn *k = r->idle;
	if (k)
		r->idle = k->next;
	pthread_mutex_unlock(&r->mu);
	if (k)
		return k;
	k = calloc(1, sizeof *k);
	if (!k) {
		fail(r, KIT_STORE_NOMEM, err, errlen, "out of memory");
		return NULL;
	}
	if (!(k->c = dial(r, err, errlen))) {
		free(k);
		return NULL;
	}
	return k;
}

static void give_back(struct kit_store_redis *r, struct conn *k)
{
	if (k->c->err) {            /* broken: the next call dials afresh */
		redisFree(k->c);
		free(k);
		return;
	}
	pthread_mutex_lock(&r->mu);
	k->next = r->idle;
	r->idle = k;
	pthread_mutex_unlock(&r->mu);
}

/* A server that dies makes the next write on its socket fail with EPIPE,
 * which by default also kills the whole process with SIGPIPE, before any
 * caller can say the store is gone. hiredis leaves SIGPIPE to its users:
 * the kit ignores it, unless the program set a handler of its own. */
static void ignore_sigpipe(void)
{
	struct sigaction old;
	if (sigaction(SIGPIPE, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
	    old.sa_handler == SIG_DFL) {
		struct sigaction ign = { .sa_handler = SIG_IGN };
		sigemptyset(&ign.sa_mask);
		sigaction(SIGPIPE, &ign, NULL);
	}
}

int kit_store_redis_open(struct kit_store_redis **out, const char *url, char *err, size_t errlen)
{
	*out = NULL;
	ignore_sigpipe();
	struct kit_store_redis *r = calloc(1, sizeof *r);
	if (!r)
		return fail(NULL, KIT_STORE_NOMEM, err, errlen, "out of memory");
	pthread_mutex_init(&r->mu, NULL);
	int rc = parse_url(r, url, err, errlen);
	struct conn *k = rc == 0 ? borrow(r, err, errlen) : NULL;
	if (rc == 0 && !k)
		rc = KIT_STORE_DOWN;
	if (k) {
		redisReply *y = redisCommand(k->c, "PING");
		if (!y || y->type == REDIS_REPLY_ERROR)
			rc = fail(r, KIT_STORE_DOWN, err, errlen, "PING: %s",
			          y ? y->str : k->c->errstr);
		freeReplyObject(y);
		give_back(r, k);
	}
	if (rc != 0) {
		kit_store_redis_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void kit_store_redis_free(struct kit_store_redis *r)
{
	if (!r)
		return;
	while (r->idle) {
		struct conn *k = r->idle;
		r->idle = k->next;
		redisFree(k->c);
		free(k);
	}
	pthread_mutex_destroy(&r->mu);
	free(r);
}

/* ---- one command ---- */

/* Map an error reply to a code. */
static int reply_error(struct kit_store_redis *r, const redisReply *y, const char *cmd,
                       char *err, size_t errlen)
{
	int code = KIT_STORE_ERR;
	if (strncmp(y->str, "WRONGTYPE", 9) == 0 || strstr(y->str, "not an integer"))
		code = KIT_STORE_WRONGTYPE;
	else if (strstr(y->str, "overflow"))
		code = KIT_STORE_RANGE;
	else if (strstr(y->str, "OOM"))
		code = KIT_STORE_NOMEM;
	return fail(r, code, err, errlen, "%s: %s", cmd, y->str);
}

/* Run argv on a borrowed connection. Returns the reply (the caller frees
 * it) or NULL with *rc set: KIT_STORE_DOWN when no connection could be
 * made (nothing was sent), KIT_STORE_UNKNOWN when the connection broke
 * after the command went out (it may have run), or the code of an error
 * reply. */
static redisReply *run(struct kit_store_redis *r, int argc, const char **argv, int *rc,
                       char *err, size_t errlen)
{
	size_t few[16], *lens = argc <= 16 ? few : malloc((size_t)argc * sizeof *lens);
	if (!lens) {
		*rc = fail(r, KIT_STORE_NOMEM, err, errlen, "out of memory");
		return NULL;
	}
	for (int i = 0; i < argc; i++)
		lens[i] = strlen(argv[i]);
	struct conn *k = borrow(r, err, errlen);
	if (!k) {
		if (lens != few)
			free(lens);
		*rc = KIT_STORE_DOWN;
		return NULL;
	}
	redisReply *y = redisCommandArgv(k->c, argc, argv, lens);
	if (lens != few)
		free(lens);
	*rc = 0;
	if (!y)
		*rc = fail(r, KIT_STORE_UNKNOWN, err, errlen, "%s: connection lost (%s); "
		           "the command may have run", argv[0], k->c->errstr);
	else if (y->type == REDIS_REPLY_ERROR)
		*rc = reply_error(r, y, argv[0], err, errlen);
	give_back(r, k);
	if (*rc != 0) {
		freeReplyObject(y);
		return NULL;
	}
	return y;
}

static void nskey(const struct kit_store_redis *r, const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", r->ns, key);
}

#define KEYBUF (KIT_STORE_KEY_MAX + NS_MAX + 8)

/* An integer from a bulk string (GET, GETDEL), nil reading as 0. */
static int bulk_int(struct kit_store_redis *r, const redisReply *y, const char *cmd,
                    int64_t *out, char *err, size_t errlen)
{
	if (y->type == REDIS_REPLY_NIL) {
		*out = 0;
		return 0;
	}
	if (y->type == REDIS_REPLY_INTEGER) {
		*out = y->integer;
		return 0;
	}
	char *end;
	errno = 0;
	long long v = y->type == REDIS_REPLY_STRING ? strtoll(y->str, &end, 10) : 0;
	if (y->type != REDIS_REPLY_STRING || errno || end == y->str || *end)
		return fail(r, KIT_STORE_WRONGTYPE, err, errlen, "%s: the value is not an integer", cmd);
	*out = v;
	return 0;
}

/* ---- integer commands ---- */

int kit_store_redis_incrby(struct kit_store_redis *r, const char *key, int64_t by, int64_t *out,
                           char *err, size_t errlen)
{
	char k[KEYBUF], n[24];
	int rc;
	nskey(r, key, k, sizeof k);
	snprintf(n, sizeof n, "%lld", (long long)by);
	redisReply *y = run(r, 3, (const char *[]){ "INCRBY", k, n }, &rc, err, errlen);
	if (y && out)
		*out = y->integer;
	freeReplyObject(y);
	return rc;
}

static int read_int(struct kit_store_redis *r, const char *cmd, const char *key, int64_t *out,
                    char *err, size_t errlen)
{
	char k[KEYBUF];
	int rc;
	nskey(r, key, k, sizeof k);
	redisReply *y = run(r, 2, (const char *[]){ cmd, k }, &rc, err, errlen);
	if (y)
		rc = bulk_int(r, y, cmd, out, err, errlen);
	freeReplyObject(y);
	return rc;
}

int kit_store_redis_get(struct kit_store_redis *r, const char *key, int64_t *out,
                        char *err, size_t errlen)
{
	return read_int(r, "GET", key, out, err, errlen);
}

int kit_store_redis_getdel(struct kit_store_redis *r, const char *key, int64_t *out,
                           char *err, size_t errlen)
{
	return read_int(r, "GETDEL", key, out, err, errlen);
}

int kit_store_redis_set(struct kit_store_redis *r, const char *key, int64_t v,
                        char *err, size_t errlen)
{
	char k[KEYBUF], n[24];
	int rc;
	nskey(r, key, k, sizeof k);
	snprintf(n, sizeof n, "%lld", (long long)v);
	freeReplyObject(run(r, 3, (const char *[]){ "SET", k, n }, &rc, err, errlen));
	return rc;
}

int kit_store_redis_del(struct kit_store_redis *r, const char *key, int *removed,
                        char *err, size_t errlen)
{
	char k[KEYBUF];
	int rc;
	nskey(r, key, k, sizeof k);
	redisReply *y = run(r, 2, (const char *[]){ "DEL", k }, &rc, err, errlen);
	if (y && removed)
		*removed = y->integer > 0;
	freeReplyObject(y);
	return rc;
}

/* ---- set commands ---- */

int kit_store_redis_sadd(struct kit_store_redis *r, const char *key, const char *member,
                         int *added, char *err, size_t errlen)
{
	char k[KEYBUF];
	int rc;
	nskey(r, key, k, sizeof k);
	redisReply *y = run(r, 3, (const char *[]){ "SADD", k, member }, &rc, err, errlen);
	if (y && added)
		*added = y->integer > 0;
	freeReplyObject(y);
	return rc;
}

int kit_store_redis_srem(struct kit_store_redis *r, const char *key, const char *member,
                         int *removed, char *err, size_t errlen)
{
	char k[KEYBUF];
	int rc;
	nskey(r, key, k, sizeof k);
	redisReply *y = run(r, 3, (const char *[]){ "SREM", k, member }, &rc, err, errlen);
	if (y && removed)
		*removed = y->integer > 0;
	freeReplyObject(y);
	return rc;
}

int kit_store_redis_members(struct kit_store_redis *r, const char *key, int count, char **out,
                            int *n, int pop, char *err, size_t errlen)
{
	char k[KEYBUF], c[16];
	int rc;
	*n = 0;
	if (count < 0 || (count > 0 && !out))
		return fail(r, KIT_STORE_ERR, err, errlen, "bad count or output array");
	if (count == 0)
		return 0;
	nskey(r, key, k, sizeof k);
	snprintf(c, sizeof c, "%d", count);
	redisReply *y = pop ? run(r, 3, (const char *[]){ "SPOP", k, c }, &rc, err, errlen)
	                    : run(r, 2, (const char *[]){ "SMEMBERS", k }, &rc, err, errlen);
	if (y && y->type == REDIS_REPLY_ARRAY) {
		int got = 0;
		for (size_t i = 0; i < y->elements && got < count; i++) {
			if (!(out[got] = strdup(y->element[i]->str ? y->element[i]->str : ""))) {
				/* SPOP already took them: all we can do is say so */
				while (got > 0)
					free(out[--got]);
				rc = fail(r, KIT_STORE_NOMEM, err, errlen, "out of memory for the members");
				break;
			}
			got++;
		}
		if (rc == 0)
			*n = got;
	}
	freeReplyObject(y);
	return rc;
}

int kit_store_redis_sismember(struct kit_store_redis *r, const char *key, const char *member,
                              int *out, char *err, size_t errlen)
{
	char k[KEYBUF];
	int rc;
	nskey(r, key, k, sizeof k);
	redisReply *y = run(r, 3, (const char *[]){ "SISMEMBER", k, member }, &rc, err, errlen);
	if (y)
		*out = y->integer > 0;
	freeReplyObject(y);
	return rc;
}

int kit_store_redis_scard(struct kit_store_redis *r, const char *key, int64_t *out,
                          char *err, size_t errlen)
{
	char k[KEYBUF];
	int rc;
	nskey(r, key, k, sizeof k);
	redisReply *y = run(r, 2, (const char *[]){ "SCARD", k }, &rc, err, errlen);
	if (y)
		*out = y->integer;
	freeReplyObject(y);
	return rc;
}

/* ---- the namespace as a whole ---- */

/* Walk the namespace's keys with SCAN; with del, UNLINK each batch. */
static int scan_ns(struct kit_store_redis *r, int del, int64_t *count, char *err, size_t errlen)
{
	char cursor[32] = "0", match[NS_MAX + 4];
	snprintf(match, sizeof match, "%s*", r->ns);
	int rc = 0;
	*count = 0;
	do {
		redisReply *y = run(r, 6, (const char *[]){ "SCAN", cursor, "MATCH", match, "COUNT", "1000" },
		                    &rc, err, errlen);
		if (!y)
			return rc;
		if (y->type != REDIS_REPLY_ARRAY || y->elements != 2) {
			freeReplyObject(y);
			return fail(r, KIT_STORE_ERR, err, errlen, "SCAN: unexpected reply");
		}
		snprintf(cursor, sizeof cursor, "%s", y->element[0]->str);
		redisReply *keys = y->element[1];
		*count += (int64_t)keys->elements;
		for (size_t i = 0; del && i < keys->elements && rc == 0; i++)
			freeReplyObject(run(r, 2, (const char *[]){ "UNLINK", keys->element[i]->str },
			                    &rc, err, errlen));
		freeReplyObject(y);
	} while (rc == 0 && strcmp(cursor, "0") != 0);
	return rc;
}

int kit_store_redis_dbsize(struct kit_store_redis *r, int64_t *out, char *err, size_t errlen)
{
	if (r->ns[0])
		return scan_ns(r, 0, out, err, errlen);
	int rc;
	redisReply *y = run(r, 1, (const char *[]){ "DBSIZE" }, &rc, err, errlen);
	if (y)
		*out = y->integer;
	freeReplyObject(y);
	return rc;
}

int kit_store_redis_flush(struct kit_store_redis *r, char *err, size_t errlen)
{
	int64_t n;
	if (r->ns[0])
		return scan_ns(r, 1, &n, err, errlen);
	int rc;
	freeReplyObject(run(r, 1, (const char *[]){ "FLUSHDB" }, &rc, err, errlen));
	return rc;
}

/* ---- scripts ---- */

/* sc's SHA1 on this server, loading it when this handle has not yet. */
static int script_sha(struct kit_store_redis *r, const struct kit_store_script *sc, int reload,
                      char sha[41], char *err, size_t errlen)
{
	pthread_mutex_lock(&r->mu);
	int i = 0;
	while (i < r->nscripts && r->scripts[i].sc != sc)
		i++;
	int known = i < r->nscripts;
	if (known)
		memcpy(sha, r->scripts[i].sha, 41);
	pthread_mutex_unlock(&r->mu);
	if (known && !reload)
		return 0;

	int rc;
	redisReply *y = run(r, 3, (const char *[]){ "SCRIPT", "LOAD", sc->lua }, &rc, err, errlen);
	if (!y)   /* a script that does not compile is an error reply: the message says where */
		return rc == KIT_STORE_ERR ? KIT_STORE_SCRIPT : rc;
	snprintf(sha, 41, "%s", y->str ? y->str : "");
	freeReplyObject(y);
	pthread_mutex_lock(&r->mu);
	if (!known && r->nscripts < SCRIPTS_MAX)
		i = r->nscripts++;
	if (i < SCRIPTS_MAX) {
		r->scripts[i].sc = sc;
		memcpy(r->scripts[i].sha, sha, 41);
	}
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* The reply's integers into c->out. */
static int take_reply(struct kit_store_redis *r, const struct kit_store_script *sc,
                      const redisReply *y, struct kit_store_call *c, char *err, size_t errlen)
{
	c->nout = 0;
	if (y->type == REDIS_REPLY_NIL || c->outcap == 0)   /* nothing, or nothing wanted */
		return 0;
	size_t n = y->type == REDIS_REPLY_ARRAY ? y->elements : 1;
	if (n > (size_t)c->outcap)
		return fail(r, KIT_STORE_ERR, err, errlen, "script %s answered %zu values, room for %d",
		            sc->name, n, c->outcap);
	for (size_t i = 0; i < n; i++) {
		const redisReply *e = y->type == REDIS_REPLY_ARRAY ? y->element[i] : y;
		if (e->type != REDIS_REPLY_INTEGER)
			return fail(r, KIT_STORE_SCRIPT, err, errlen,
			            "script %s answered something other than integers", sc->name);
		c->out[i] = e->integer;
	}
	c->nout = (int)n;
	return 0;
}

int kit_store_redis_eval(struct kit_store_redis *r, const struct kit_store_script *sc,
                         struct kit_store_call *c, char *err, size_t errlen)
{
	int argc = 3 + c->nkeys + c->nargs;
	if (c->nkeys < 0 || c->nargs < 0 || c->nkeys > 16)
		return fail(r, KIT_STORE_ERR, err, errlen, "script %s: %d keys and %d arguments",
		            sc->name, c->nkeys, c->nargs);
	char sha[41], nkeys[16];
	char (*keys)[KEYBUF] = malloc((size_t)(c->nkeys ? c->nkeys : 1) * sizeof *keys);
	const char **argv = malloc((size_t)argc * sizeof *argv);
	if (!keys || !argv) {
		free(keys);
		free(argv);
		return fail(r, KIT_STORE_NOMEM, err, errlen, "out of memory");
	}
	snprintf(nkeys, sizeof nkeys, "%d", c->nkeys);
	argv[0] = "EVALSHA";
	argv[1] = sha;
	argv[2] = nkeys;
	for (int i = 0; i < c->nkeys; i++) {
		nskey(r, c->keys[i], keys[i], sizeof keys[i]);
		argv[3 + i] = keys[i];
	}
	for (int i = 0; i < c->nargs; i++)
		argv[3 + c->nkeys + i] = c->args[i];

	int rc = script_sha(r, sc, 0, sha, err, errlen);
	redisReply *y = NULL;
	for (int attempt = 0; rc == 0 && attempt < 2; attempt++) {
		y = run(r, argc, argv, &rc, err, errlen);
		if (rc == 0 || !strstr(err, "NOSCRIPT"))
			break;
		rc = script_sha(r, sc, 1, sha, err, errlen);   /* the server forgot it */
	}
	if (rc == KIT_STORE_ERR || rc == KIT_STORE_WRONGTYPE)
		rc = KIT_STORE_SCRIPT;
	if (y)
		rc = take_reply(r, sc, y, c, err, errlen);
	freeReplyObject(y);
	free(argv);
	free(keys);
	return rc;
}

int kit_store_redis_cmdstat(struct kit_store_redis *r, const char *cmd, int64_t *calls,
                            double *usec, char *err, size_t errlen)
{
	int rc;
	redisReply *y = run(r, 2, (const char *[]){ "INFO", "commandstats" }, &rc, err, errlen);
	*calls = 0;
	*usec = 0;
	if (y && y->type == REDIS_REPLY_STRING) {
		char key[80];
		snprintf(key, sizeof key, "cmdstat_%s:", cmd);
		const char *at = strstr(y->str, key);
		long long n = 0;
		double u = 0;
		if (at && sscanf(at + strlen(key), "calls=%lld,usec=%lf", &n, &u) == 2) {
			*calls = n;
			*usec = u;
		}
	}
	freeReplyObject(y);
	return rc;
}
