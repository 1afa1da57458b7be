/*
 * store.h: a counter server with Redis semantics: in-process, or a real Redis.
 *
 * A store is named by URL, like a database: "mem:" (the default) is the
 * in-process store described below; "redis://HOST[:PORT][/DB]" or
 * "unix:PATH" is a real redis-server reached over hiredis, with the same
 * commands and the same codes. A "?ns=NAME" suffix puts every key of the
 * handle under "NAME:" (tests use it to share one server); on mem: it is
 * ignored. What only the in-process store can do (the hook) is said where
 * it is declared.
 *
 * Keys are short strings; a key holds either an integer (INCRBY, GET, SET,
 * DEL, GETDEL) or a set of short strings (SADD, SPOP, SISMEMBER, SCARD,
 * SMEMBERS). Every command is atomic on its own, as on a single-threaded
 * Redis server; a sequence of commands is not: another thread's command
 * can land between two of yours. kit_store_atomic() runs a function of
 * yours with the store held, the way a server-side script runs, so the
 * commands inside it form one indivisible step.
 *
 * The store keeps nothing on disk: kit_store_restart() empties it, as a
 * Redis without persistence loses everything when it restarts.
 *
 * For tests there are two levers. A hook (kit_store_set_hook) runs after
 * each command, outside the store's lock, in the thread that ran the
 * command; it may run commands itself (they do not call the hook again), so
 * a test can make "another client's" command land at an exact point between
 * two of yours. A refusal switch (kit_store_refuse) makes the next N
 * commands fail with KIT_STORE_DOWN and change nothing.
 *
 * Interface:
 *   struct kit_store *st = kit_store_new();      NULL only when out of memory
 *   (or: if (kit_store_open(&st, url) != 0) puts(kit_store_errmsg(st));)
 *   kit_store_incrby(st, "views:delta:42", 1, NULL);
 *   int64_t v; kit_store_getdel(st, "views:delta:42", &v);
 *   kit_store_atomic(st, my_fn, my_arg);         my_fn calls commands on st
 *   kit_store_free(st);
 * Every command returns 0 on success or a negative KIT_STORE_* code, and
 * leaves the store unchanged when it fails; kit_store_strerror() names the
 * code. Any thread may use the same store at once.
 */
#ifndef HOTROW_KIT_STORE_H
#define HOTROW_KIT_STORE_H

#include <stdint.h>

#define KIT_STORE_KEY_MAX 128   /* longest key or set member, bytes, NUL excluded */

enum {
	KIT_STORE_OK = 0,
	KIT_STORE_ERR = -1,        /* a bad argument: NULL, empty or too-long key */
	KIT_STORE_DOWN = -2,       /* the store refused the command (kit_store_refuse) */
	KIT_STORE_WRONGTYPE = -3,  /* an integer command on a set, or the reverse */
	KIT_STORE_NOMEM = -4,      /* out of memory; nothing changed */
	KIT_STORE_RANGE = -5,      /* the increment would overflow int64 */
	KIT_STORE_UNKNOWN = -6,    /* the reply was lost: the command may or may not have run */
	KIT_STORE_SCRIPT = -7,     /* a script failed (Redis's message in kit_store_errmsg) */
};

struct kit_store;

/* Make an empty store. Returns NULL only when out of memory. */
struct kit_store *kit_store_new(void);
/* Open the store url names (see above; NULL or "" is "mem:"). *out is
 * always set, to a handle carrying the message on failure, and must be
 * given to kit_store_free(). A real Redis is connected to (and pinged)
 * here, so an unreachable server fails now with KIT_STORE_DOWN. */
int kit_store_open(struct kit_store **out, const char *url);
/* Free the store and everything in it (on Redis: close the connections,
 * the server keeps its keys). NULL is fine. No thread may be using it. */
void kit_store_free(struct kit_store *s);

/* A short readable name for a KIT_STORE_* code ("store refused the command"). */
const char *kit_store_strerror(int rc);
/* The last failure's message, naming the server and the cause (or the
 * code's name); "no error" when nothing failed. */
const char *kit_store_errmsg(const struct kit_store *s);
/* 1 for a real Redis, 0 for the in-process store. */
int kit_store_is_redis(const struct kit_store *s);

/* ---- integer commands ---- */

/* Add by to key's integer (a missing key starts at 0) and, if out is not
 * NULL, store the new value there. */
int kit_store_incrby(struct kit_store *s, const char *key, int64_t by, int64_t *out);
/* Read key's integer into *out; a missing key reads as 0. */
int kit_store_get(struct kit_store *s, const char *key, int64_t *out);
/* Set key to the integer v, whatever it held before (a set is replaced). */
int kit_store_set(struct kit_store *s, const char *key, int64_t v);
/* Remove key, of any type. Removing a missing key is not an error. If
 * removed is not NULL, it gets 1 when the key existed and 0 when not. */
int kit_store_del(struct kit_store *s, const char *key, int *removed);
/* Read key's integer into *out and remove the key, in one step (Redis
 * GETDEL): no other command can land between the read and the removal.
 * A missing key reads as 0. */
int kit_store_getdel(struct kit_store *s, const char *key, int64_t *out);

/* ---- set commands ---- */

/* Add member to the set at key (made if missing). If added is not NULL it
 * gets 1 when member was new, 0 when it was already there. The member is
 * copied. */
int kit_store_sadd(struct kit_store *s, const char *key, const char *member, int *added);
/* Remove member from the set at key (a set left empty goes, as in Redis).
 * If removed is not NULL it gets 1 when member was there, 0 when not. */
int kit_store_srem(struct kit_store *s, const char *key, const char *member, int *removed);
/* Remove up to count members from the set at key and hand them over:
 * out[0 .. *n-1] get strings the caller owns and frees with free(). A
 * missing key is an empty set (*n = 0). On failure nothing is removed and
 * nothing allocated. Members come out in no promised order. */
int kit_store_spop(struct kit_store *s, const char *key, int count, char **out, int *n);
/* *out = 1 when member is in the set at key, 0 when not (or no such key). */
int kit_store_sismember(struct kit_store *s, const char *key, const char *member, int *out);
/* *out = the number of members of the set at key (0 when missing). */
int kit_store_scard(struct kit_store *s, const char *key, int64_t *out);
/* Like spop, but copies up to count members and removes nothing. */
int kit_store_smembers(struct kit_store *s, const char *key, int count, char **out, int *n);

/* ---- the whole store ---- */

/* *out = the number of keys. */
int kit_store_dbsize(struct kit_store *s, int64_t *out);

/* Run fn(s, arg) as one indivisible step, the way Redis runs a script:
 * no other thread's command runs until fn returns, and inside fn the
 * commands on s run without locking again (or calling the hook). Returns
 * what fn returns, or KIT_STORE_DOWN (fn not called) when the store is
 * refusing. As with a script, commands fn already ran are not undone if
 * fn then fails. fn must not block on other threads that use the store.
 * A nested kit_store_atomic inside fn just calls its function. */
typedef int kit_store_fn(struct kit_store *s, void *arg);
/* (In-process store only: a real Redis cannot run C. There the call
 * returns KIT_STORE_ERR without calling fn: write the step as a script.) */
int kit_store_atomic(struct kit_store *s, kit_store_fn *fn, void *arg);

/* ---- scripts: one atomic step on either kind of store ---- */

/* A script is the same step written twice: in Lua for a real Redis (which
 * runs it with EVALSHA; the kit loads it once per handle with SCRIPT
 * LOAD) and in C for the in-process store (run inside kit_store_atomic).
 * Both get the keys (already under the handle's namespace) and the
 * arguments as strings, and answer with integers: a Lua script returns a
 * number or a table of numbers, the C step puts them in
 * out[0 .. *nout-1] (at most outcap of them). Every key a script touches
 * must come from KEYS, or start with one (KEYS[i] .. id): that is how the
 * namespace reaches it, and Redis Cluster requires it too. */
struct kit_store_call {
	int nkeys;
	const char *const *keys;
	int nargs;
	const char *const *args;
	int64_t *out;     /* the reply's integers; may be NULL when outcap is 0 */
	int outcap;
	int nout;         /* set by the step: how many out[] got */
};
typedef int kit_store_step_fn(struct kit_store *s, struct kit_store_call *c);
struct kit_store_script {
	const char *name;          /* for messages */
	const char *lua;           /* what Redis runs */
	kit_store_step_fn *step;   /* what the in-process store runs */
};
/* Run sc with c's keys and arguments as one indivisible step. Returns 0,
 * the step's own negative code (mem:), KIT_STORE_SCRIPT when Redis
 * reports an error from the Lua (the message is in kit_store_errmsg), or
 * a connection code. A reply longer than c->outcap is an error, unless
 * outcap is 0: then the reply is not wanted. */
int kit_store_eval(struct kit_store *s, const struct kit_store_script *sc,
                   struct kit_store_call *c);

/* The server's own bookkeeping for cmd (lower case, e.g. "evalsha"): the
 * calls it served and the microseconds it spent on them, since it started
 * (Redis's INFO commandstats). Differences of two readings give one
 * command's service time, without the round trip. KIT_STORE_ERR on the
 * in-process store, which keeps no such numbers. */
int kit_store_cmdstat(struct kit_store *s, const char *cmd, int64_t *calls, double *usec);

/* ---- levers for tests and demos; not commands, they never call the hook ---- */

/* Lose everything, as a restart of a server without persistence does
 * (on Redis: every key under the handle's namespace is deleted, or the
 * whole database when the handle has none). */
void kit_store_restart(struct kit_store *s);

/* Run the next n commands (an atomic step or script counts as one) and
 * then lose their replies: each did its work but returns
 * KIT_STORE_UNKNOWN, as when a connection drops after the server ran the
 * command and before its answer arrived. n = 0 turns it off. */
void kit_store_lose_replies(struct kit_store *s, int n);

/* Refuse the next n commands (each kit_store_atomic call counts as one)
 * with KIT_STORE_DOWN; n < 0 refuses until kit_store_refuse(s, 0). */
void kit_store_refuse(struct kit_store *s, int n);

/* After each command completes (or is refused), call
 * hook(arg, s, cmd, key, rc) in the calling thread, outside the lock: cmd
 * is the command's name ("INCRBY", "GETDEL", "ATOMIC", ...), key its key
 * (NULL for ATOMIC and DBSIZE), rc its result. Commands the hook runs do
 * not call the hook again. NULL removes the hook; a command already
 * running when the hook changes may still call the old one. */
typedef void kit_store_hook_fn(void *arg, struct kit_store *s, const char *cmd,
                               const char *key, int rc);
/* (On Redis the hook runs too, after each command's reply, but another
 * client's command can land anywhere, not only where the hook runs.) */
void kit_store_set_hook(struct kit_store *s, kit_store_hook_fn *hook, void *arg);

/* Commands run since kit_store_new (refused ones excluded; an atomic call
 * counts as one plus the commands inside it). */
int64_t kit_store_commands(struct kit_store *s);

#endif
