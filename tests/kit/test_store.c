/*
 * test_store.c: kit/store, the in-memory Redis-style counter server.
 *
 * Single commands against their Redis meaning, the levers (refusal,
 * restart, hook, lost replies), the atomic step, scripts, and exact counts
 * under threads. The races are reproduced through the hook, so they happen
 * every run. The checks named "/redis" run the same body on a real Redis
 * (HOTROW_REDIS_URL, a namespace per check): skipped with a notice without
 * one, failed when it is named but does not answer or when
 * HOTROW_REQUIRE_REDIS=1.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "kit/store.h"

static int setup(void **state)
{
	*state = kit_store_new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	kit_store_free(*state);
	return 0;
}

static const char *redis_url;   /* HOTROW_REDIS_URL, when set */

static int setup_redis(void **state)
{
	static int seq;
	char url[1200];
	if (!redis_url) {
		print_error("Redis is required (HOTROW_REQUIRE_REDIS=1) but HOTROW_REDIS_URL is unset; "
		            "start one with `make redis-up`\n");
		return -1;
	}
	snprintf(url, sizeof url, "%s?ns=kit-store-%ld-%d", redis_url, (long)getpid(), ++seq);
	struct kit_store *s;
	if (kit_store_open(&s, url) != 0) {
		print_error("%s\n", kit_store_errmsg(s));
		kit_store_free(s);
		return -1;
	}
	kit_store_restart(s);
	*state = s;
	return 0;
}

static int teardown_redis(void **state)
{
	kit_store_restart(*state);
	kit_store_free(*state);
	return 0;
}

static int64_t get(struct kit_store *s, const char *key)
{
	int64_t v = -1;
	assert_int_equal(kit_store_get(s, key, &v), 0);
	return v;
}

static void free_all(char **m, int n)
{
	for (int i = 0; i < n; i++)
		free(m[i]);
}

/* ---- integer commands ---- */

static void incrby__starts_at_zero_and_adds(void **state)
{
	struct kit_store *s = *state;
	int64_t v = 0;

	assert_int_equal(kit_store_incrby(s, "k", 5, &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(kit_store_incrby(s, "k", -2, NULL), 0);

	assert_int_equal(get(s, "k"), 3);
}

static void incrby__overflow_refused_unchanged(void **state)
{
	struct kit_store *s = *state;
	assert_int_equal(kit_store_set(s, "k", INT64_MAX - 1), 0);

	assert_int_equal(kit_store_incrby(s, "k", 2, NULL), KIT_STORE_RANGE);

	assert_true(get(s, "k") == INT64_MAX - 1);
}

static void get__missing_reads_zero(void **state)
{
	struct kit_store *s = *state;
	int64_t n = -1;

	assert_int_equal(get(s, "nothing"), 0);

	assert_int_equal(kit_store_dbsize(s, &n), 0);
	assert_int_equal(n, 0);   /* reading made no key */
}

static void set__replaces_a_set(void **state)
{
	struct kit_store *s = *state;
	assert_int_equal(kit_store_sadd(s, "k", "a", NULL), 0);

	assert_int_equal(kit_store_set(s, "k", 7), 0);

	assert_int_equal(get(s, "k"), 7);
}

static void del__reports_removed(void **state)
{
	struct kit_store *s = *state;
	int removed = -1;
	assert_int_equal(kit_store_set(s, "k", 1), 0);

	assert_int_equal(kit_store_del(s, "k", &removed), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(kit_store_del(s, "k", &removed), 0);
	assert_int_equal(removed, 0);
}

static void getdel__reads_and_removes(void **state)
{
	struct kit_store *s = *state;
	int64_t v = -1, n = -1;
	assert_int_equal(kit_store_incrby(s, "k", 9, NULL), 0);

	assert_int_equal(kit_store_getdel(s, "k", &v), 0);
	assert_int_equal(v, 9);
	assert_int_equal(kit_store_getdel(s, "k", &v), 0);
	assert_int_equal(v, 0);

	assert_int_equal(kit_store_dbsize(s, &n), 0);
	assert_int_equal(n, 0);
}

static void wrongtype__integer_command_on_set(void **state)
{
	struct kit_store *s = *state;
	int64_t v = 0;
	assert_int_equal(kit_store_sadd(s, "set", "a", NULL), 0);
	assert_int_equal(kit_store_set(s, "int", 1), 0);

	assert_int_equal(kit_store_incrby(s, "set", 1, NULL), KIT_STORE_WRONGTYPE);
	assert_int_equal(kit_store_getdel(s, "set", &v), KIT_STORE_WRONGTYPE);
	assert_int_equal(kit_store_sadd(s, "int", "a", NULL), KIT_STORE_WRONGTYPE);

	assert_int_equal(kit_store_scard(s, "set", &v), 0);
	assert_int_equal(v, 1);   /* the set survived */
}

static void key__bad_keys_refused(void **state)
{
	struct kit_store *s = *state;
	char longkey[KIT_STORE_KEY_MAX + 2];
	memset(longkey, 'x', sizeof longkey - 1);
	longkey[sizeof longkey - 1] = '\0';

	assert_int_equal(kit_store_incrby(s, longkey, 1, NULL), KIT_STORE_ERR);
	assert_int_equal(kit_store_incrby(s, "", 1, NULL), KIT_STORE_ERR);
	assert_int_equal(kit_store_sadd(s, "set", longkey, NULL), KIT_STORE_ERR);
	longkey[KIT_STORE_KEY_MAX] = '\0';   /* exactly the limit is fine */
	assert_int_equal(kit_store_incrby(s, longkey, 1, NULL), 0);
	assert_string_equal(kit_store_strerror(KIT_STORE_DOWN), "store refused the command (down)");
}

/* ---- set commands ---- */

static void srem__removes_and_empties(void **state)
{
	struct kit_store *s = *state;
	int removed = -1;
	int64_t n = -1, keys = -1;

	assert_int_equal(kit_store_sadd(s, "set", "a", NULL), 0);
	assert_int_equal(kit_store_sadd(s, "set", "b", NULL), 0);
	assert_int_equal(kit_store_srem(s, "set", "a", &removed), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(kit_store_srem(s, "set", "a", &removed), 0);
	assert_int_equal(removed, 0);
	assert_int_equal(kit_store_srem(s, "missing", "a", &removed), 0);
	assert_int_equal(removed, 0);
	assert_int_equal(kit_store_scard(s, "set", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(kit_store_srem(s, "set", "b", NULL), 0);
	assert_int_equal(kit_store_dbsize(s, &keys), 0);
	assert_int_equal(keys, 0);   /* an empty set is no key */
	assert_int_equal(kit_store_set(s, "int", 1), 0);
	assert_int_equal(kit_store_srem(s, "int", "a", NULL), KIT_STORE_WRONGTYPE);
}

/* On Redis the server's own count of calls and time per command grows
 * with each call; the in-process store has none. */
static void cmdstat__counts_the_servers_calls(void **state)
{
	struct kit_store *s = *state;
	int64_t c0 = -1, c1 = -1, v;
	double u0 = -1, u1 = -1;
	if (!kit_store_is_redis(s)) {
		assert_int_equal(kit_store_cmdstat(s, "get", &c0, &u0), KIT_STORE_ERR);
		return;
	}
	assert_int_equal(kit_store_cmdstat(s, "get", &c0, &u0), 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(kit_store_get(s, "k", &v), 0);
	assert_int_equal(kit_store_cmdstat(s, "get", &c1, &u1), 0);
	assert_true(c1 - c0 >= 10);
	assert_true(u1 >= u0);
}

static void sadd__reports_new_members(void **state)
{
	struct kit_store *s = *state;
	int added = -1, is = -1;
	int64_t n = 0;

	assert_int_equal(kit_store_sadd(s, "set", "a", &added), 0);
	assert_int_equal(added, 1);
	assert_int_equal(kit_store_sadd(s, "set", "a", &added), 0);
	assert_int_equal(added, 0);
	assert_int_equal(kit_store_sadd(s, "set", "b", NULL), 0);

	assert_int_equal(kit_store_scard(s, "set", &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(kit_store_sismember(s, "set", "b", &is), 0);
	assert_int_equal(is, 1);
	assert_int_equal(kit_store_sismember(s, "set", "c", &is), 0);
	assert_int_equal(is, 0);
}

static void spop__takes_at_most_count_and_removes(void **state)
{
	struct kit_store *s = *state;
	char *m[8];
	int n = -1;
	int64_t left = -1, keys = -1;
	const char *names[] = { "a", "b", "c", "d", "e" };
	for (int i = 0; i < 5; i++)
		assert_int_equal(kit_store_sadd(s, "set", names[i], NULL), 0);

	assert_int_equal(kit_store_spop(s, "set", 3, m, &n), 0);
	assert_int_equal(n, 3);
	free_all(m, n);
	assert_int_equal(kit_store_scard(s, "set", &left), 0);
	assert_int_equal(left, 2);

	assert_int_equal(kit_store_spop(s, "set", 8, m, &n), 0);
	assert_int_equal(n, 2);
	free_all(m, n);
	assert_int_equal(kit_store_dbsize(s, &keys), 0);
	assert_int_equal(keys, 0);   /* an emptied set is no key */
	assert_int_equal(kit_store_spop(s, "set", 8, m, &n), 0);
	assert_int_equal(n, 0);
}

static void spop__every_member_comes_out_once(void **state)
{
	struct kit_store *s = *state;
	char key[16], *m[7];
	int n, seen[500] = { 0 }, total = 0;
	for (int i = 0; i < 500; i++) {
		snprintf(key, sizeof key, "%d", i);
		assert_int_equal(kit_store_sadd(s, "set", key, NULL), 0);
	}

	do {
		assert_int_equal(kit_store_spop(s, "set", 7, m, &n), 0);
		for (int i = 0; i < n; i++) {
			seen[atoi(m[i])]++;
			free(m[i]);
		}
		total += n;
	} while (n > 0);

	assert_int_equal(total, 500);
	for (int i = 0; i < 500; i++)
		assert_int_equal(seen[i], 1);
}

static void smembers__copies_without_removing(void **state)
{
	struct kit_store *s = *state;
	char *m[4];
	int n = -1;
	int64_t left = -1;
	assert_int_equal(kit_store_sadd(s, "set", "a", NULL), 0);
	assert_int_equal(kit_store_sadd(s, "set", "b", NULL), 0);

	assert_int_equal(kit_store_smembers(s, "set", 4, m, &n), 0);
	assert_int_equal(n, 2);
	free_all(m, n);

	assert_int_equal(kit_store_scard(s, "set", &left), 0);
	assert_int_equal(left, 2);
}

/* ---- levers ---- */

static void refuse__next_n_commands_change_nothing(void **state)
{
	struct kit_store *s = *state;
	kit_store_refuse(s, 2);

	assert_int_equal(kit_store_incrby(s, "k", 1, NULL), KIT_STORE_DOWN);
	assert_int_equal(kit_store_sadd(s, "set", "a", NULL), KIT_STORE_DOWN);
	assert_int_equal(kit_store_incrby(s, "k", 1, NULL), 0);

	assert_int_equal(get(s, "k"), 1);
	int64_t n = -1;
	assert_int_equal(kit_store_scard(s, "set", &n), 0);
	assert_int_equal(n, 0);
}

static void refuse__forever_until_cleared(void **state)
{
	struct kit_store *s = *state;
	kit_store_refuse(s, -1);

	for (int i = 0; i < 10; i++)
		assert_int_equal(kit_store_incrby(s, "k", 1, NULL), KIT_STORE_DOWN);
	kit_store_refuse(s, 0);

	assert_int_equal(get(s, "k"), 0);
}

static void restart__loses_everything(void **state)
{
	struct kit_store *s = *state;
	int64_t n = -1;
	assert_int_equal(kit_store_incrby(s, "k", 3, NULL), 0);
	assert_int_equal(kit_store_sadd(s, "set", "a", NULL), 0);

	kit_store_restart(s);

	assert_int_equal(kit_store_dbsize(s, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(get(s, "k"), 0);
}

/* ---- the hook ---- */

struct trace {
	char log[256];
	int calls;
	const char *when_cmd;   /* inject after this command ... */
	const char *incr_key;   /* ... an INCRBY of this key (another client) */
};

static void trace_hook(void *arg, struct kit_store *s, const char *cmd, const char *key, int rc)
{
	struct trace *t = arg;
	(void)rc;
	t->calls++;
	size_t len = strlen(t->log);
	snprintf(t->log + len, sizeof t->log - len, "%s%s", len ? " " : "", cmd);
	if (t->when_cmd && strcmp(cmd, t->when_cmd) == 0 && key && t->incr_key)
		assert_int_equal(kit_store_incrby(s, t->incr_key, 1, NULL), 0);
}

static void hook__sees_each_command_and_may_run_commands(void **state)
{
	struct kit_store *s = *state;
	struct trace t = { .when_cmd = "SET", .incr_key = "other" };
	kit_store_set_hook(s, trace_hook, &t);

	assert_int_equal(kit_store_set(s, "k", 1), 0);
	assert_int_equal(kit_store_get(s, "k", &(int64_t){ 0 }), 0);
	kit_store_set_hook(s, NULL, NULL);

	assert_string_equal(t.log, "SET GET");   /* the hook's own INCRBY is not traced */
	assert_int_equal(get(s, "other"), 1);
}

/* The classic drain bug, made to happen every time: an increment lands
 * between GET and DEL and is erased. */
static void hook__increment_between_get_and_del_is_lost(void **state)
{
	struct kit_store *s = *state;
	struct trace t = { .when_cmd = "GET", .incr_key = "views" };
	int64_t taken = 0;
	assert_int_equal(kit_store_incrby(s, "views", 10, NULL), 0);
	kit_store_set_hook(s, trace_hook, &t);

	assert_int_equal(kit_store_get(s, "views", &taken), 0);
	assert_int_equal(kit_store_del(s, "views", NULL), 0);
	kit_store_set_hook(s, NULL, NULL);

	assert_int_equal(taken, 10);
	assert_int_equal(get(s, "views"), 0);   /* 11 recorded, 10 taken: one lost */
}

static void hook__getdel_leaves_no_gap(void **state)
{
	struct kit_store *s = *state;
	struct trace t = { .when_cmd = "GETDEL", .incr_key = "views" };
	int64_t taken = 0;
	assert_int_equal(kit_store_incrby(s, "views", 10, NULL), 0);
	kit_store_set_hook(s, trace_hook, &t);

	assert_int_equal(kit_store_getdel(s, "views", &taken), 0);
	kit_store_set_hook(s, NULL, NULL);

	assert_int_equal(taken, 10);
	assert_int_equal(get(s, "views"), 1);   /* 11 recorded = 10 taken + 1 left */
}

/* ---- atomic steps ---- */

static int get_then_del(struct kit_store *s, void *arg)
{
	int64_t *taken = arg;
	int rc = kit_store_get(s, "views", taken);
	return rc ? rc : kit_store_del(s, "views", NULL);
}

static void atomic__hook_runs_once_after_the_step(void **state)
{
	struct kit_store *s = *state;
	struct trace t = { 0 };
	int64_t taken = 0;
	assert_int_equal(kit_store_incrby(s, "views", 10, NULL), 0);
	kit_store_set_hook(s, trace_hook, &t);

	assert_int_equal(kit_store_atomic(s, get_then_del, &taken), 0);
	kit_store_set_hook(s, NULL, NULL);

	assert_string_equal(t.log, "ATOMIC");
	assert_int_equal(taken, 10);
}

static int fail_after_incr(struct kit_store *s, void *arg)
{
	(void)arg;
	assert_int_equal(kit_store_incrby(s, "k", 1, NULL), 0);
	return -42;
}

static void atomic__returns_fn_result_without_undo(void **state)
{
	struct kit_store *s = *state;

	assert_int_equal(kit_store_atomic(s, fail_after_incr, NULL), -42);

	assert_int_equal(get(s, "k"), 1);   /* like a script: no rollback */
}

static void atomic__refused_does_not_run_fn(void **state)
{
	struct kit_store *s = *state;
	kit_store_refuse(s, 1);

	assert_int_equal(kit_store_atomic(s, fail_after_incr, NULL), KIT_STORE_DOWN);

	assert_int_equal(get(s, "k"), 0);
}

/* A step on a second store inside a step on the first: when it ends,
 * this thread still holds the first, so its commands run (without taking
 * the lock it already has, which would deadlock). */
struct two {
	struct kit_store *other;
};

static int incr_other(struct kit_store *s, void *arg)
{
	(void)arg;
	return kit_store_incrby(s, "inner", 1, NULL);
}

static int step_over_two(struct kit_store *s, void *arg)
{
	struct two *t = arg;
	int rc = kit_store_atomic(t->other, incr_other, NULL);
	return rc ? rc : kit_store_incrby(s, "outer", 1, NULL);
}

static void atomic__nested_on_another_store_keeps_the_first(void **state)
{
	struct kit_store *s = *state;
	struct two t = { kit_store_new() };
	assert_non_null(t.other);

	assert_int_equal(kit_store_atomic(s, step_over_two, &t), 0);

	assert_int_equal(get(s, "outer"), 1);
	assert_int_equal(get(t.other, "inner"), 1);
	kit_store_free(t.other);
}

static void commands__counted(void **state)
{
	struct kit_store *s = *state;
	int64_t taken;
	kit_store_refuse(s, 1);
	assert_int_equal(kit_store_incrby(s, "views", 1, NULL), KIT_STORE_DOWN);

	assert_int_equal(kit_store_incrby(s, "views", 1, NULL), 0);
	assert_int_equal(kit_store_atomic(s, get_then_del, &taken), 0);

	assert_int_equal(kit_store_commands(s), 4);   /* INCRBY, ATOMIC, GET, DEL */
}

/* ---- scripts ---- */

/* KEYS[1] += ARGV[1], then answer its new value and the key's length. */
static int add_and_tell(struct kit_store *s, struct kit_store_call *c)
{
	int64_t v;
	if (c->outcap < 2)
		return KIT_STORE_ERR;   /* a C step checks its room itself, as Redis does for Lua */
	int rc = kit_store_incrby(s, c->keys[0], strtoll(c->args[0], NULL, 10), &v);
	if (rc == 0) {
		c->out[c->nout++] = v;
		c->out[c->nout++] = (int64_t)strlen(c->keys[0]);
	}
	return rc;
}

static const struct kit_store_script add_and_tell_script = {
	"add-and-tell",
	"local v = redis.call('INCRBY', KEYS[1], ARGV[1])\n"
	"return { v, string.len(KEYS[1]) }\n",
	add_and_tell,
};

static void eval__runs_the_script_and_answers(void **state)
{
	struct kit_store *s = *state;
	int64_t out[4];
	struct kit_store_call c = { 1, (const char *[]){ "k" }, 1, (const char *[]){ "5" }, out, 4, 0 };

	assert_int_equal(kit_store_eval(s, &add_and_tell_script, &c), 0);
	assert_int_equal(kit_store_eval(s, &add_and_tell_script, &c), 0);

	assert_int_equal(c.nout, 2);
	assert_int_equal(out[0], 10);
	assert_true(out[1] >= 1);   /* the key as the script saw it: with the namespace on Redis */
	assert_int_equal(get(s, "k"), 10);
}

static void eval__reply_longer_than_room_is_an_error(void **state)
{
	struct kit_store *s = *state;
	int64_t out[1];
	struct kit_store_call c = { 1, (const char *[]){ "k" }, 1, (const char *[]){ "1" }, out, 1, 0 };

	int rc = kit_store_eval(s, &add_and_tell_script, &c);

	assert_int_equal(rc, KIT_STORE_ERR);
}

static void lose_replies__the_command_ran(void **state)
{
	struct kit_store *s = *state;
	kit_store_lose_replies(s, 1);

	assert_int_equal(kit_store_incrby(s, "k", 1, NULL), KIT_STORE_UNKNOWN);
	assert_int_equal(kit_store_incrby(s, "k", 1, NULL), 0);   /* a blind retry */

	assert_int_equal(get(s, "k"), 2);   /* one view, counted twice */
}

/* A lost answer to SPOP or SMEMBERS hands over no member (the command
 * ran: SPOP's members are gone from the set) and leaves nothing allocated. */
static void lose_replies__members_not_handed_over(void **state)
{
	struct kit_store *s = *state;
	char *out[4] = { NULL };
	int n = -1;
	assert_int_equal(kit_store_sadd(s, "set", "a", NULL), 0);
	assert_int_equal(kit_store_sadd(s, "set", "b", NULL), 0);

	kit_store_lose_replies(s, 1);
	assert_int_equal(kit_store_smembers(s, "set", 4, out, &n), KIT_STORE_UNKNOWN);
	assert_int_equal(n, 0);
	kit_store_lose_replies(s, 1);
	assert_int_equal(kit_store_spop(s, "set", 4, out, &n), KIT_STORE_UNKNOWN);
	assert_int_equal(n, 0);

	int64_t left = -1;
	assert_int_equal(kit_store_scard(s, "set", &left), 0);
	assert_int_equal(left, 0);   /* the SPOP ran */
}

/* ---- a real Redis only ---- */

static void redis__script_reloaded_after_the_server_forgot_it(void **state)
{
	struct kit_store *s = *state;
	int64_t out[2];
	struct kit_store_call c = { 1, (const char *[]){ "k" }, 1, (const char *[]){ "1" }, out, 2, 0 };
	assert_int_equal(kit_store_eval(s, &add_and_tell_script, &c), 0);
	/* another client makes the server forget every script */
	if (strncmp(redis_url, "unix:", 5) != 0)
		skip();
	redisContext *admin = redisConnectUnix(redis_url + 5);
	assert_true(admin && !admin->err);
	redisReply *y = redisCommand(admin, "SCRIPT FLUSH");
	assert_true(y && y->type == REDIS_REPLY_STATUS);
	freeReplyObject(y);
	redisFree(admin);

	assert_int_equal(kit_store_eval(s, &add_and_tell_script, &c), 0);

	assert_int_equal(get(s, "k"), 2);
}

static void redis__atomic_c_step_is_refused(void **state)
{
	struct kit_store *s = *state;
	int64_t taken = 0;
	assert_int_equal(kit_store_incrby(s, "views", 3, NULL), 0);

	assert_int_equal(kit_store_atomic(s, get_then_del, &taken), KIT_STORE_ERR);

	assert_int_equal(taken, 0);
	assert_non_null(strstr(kit_store_errmsg(s), "script"));
}

static void redis__unreachable_server_is_down(void **state)
{
	(void)state;
	struct kit_store *s;

	int rc = kit_store_open(&s, "unix:/nonexistent/hotrow-redis.sock");

	assert_int_equal(rc, KIT_STORE_DOWN);
	assert_non_null(strstr(kit_store_errmsg(s), "/nonexistent/hotrow-redis.sock"));
	kit_store_free(s);
}

/* ---- threads ---- */

#define THREADS 4
#define PER_THREAD 50000

static void *incr_many(void *arg)
{
	for (int i = 0; i < PER_THREAD; i++)
		if (kit_store_incrby(arg, "k", 1, NULL) != 0)
			return "incrby failed";
	return NULL;
}

static int read_add_write(struct kit_store *s, void *arg)
{
	(void)arg;
	int64_t v;
	int rc = kit_store_get(s, "k", &v);
	return rc ? rc : kit_store_set(s, "k", v + 1);
}

static void *rmw_many(void *arg)
{
	for (int i = 0; i < PER_THREAD / 5; i++)
		if (kit_store_atomic(arg, read_add_write, NULL) != 0)
			return "atomic failed";
	return NULL;
}

static void run_threads(struct kit_store *s, void *(*fn)(void *))
{
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, fn, s), 0);
	for (int i = 0; i < THREADS; i++) {
		void *err;
		pthread_join(th[i], &err);
		assert_null(err);
	}
}

static void incrby__exact_under_threads(void **state)
{
	struct kit_store *s = *state;

	run_threads(s, incr_many);

	assert_int_equal(get(s, "k"), THREADS * PER_THREAD);
}

static void atomic__read_modify_write_exact_under_threads(void **state)
{
	struct kit_store *s = *state;

	run_threads(s, rmw_many);

	assert_int_equal(get(s, "k"), THREADS * (PER_THREAD / 5));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define R(f) { #f "/redis", f, setup_redis, teardown_redis, NULL }

static void skipped(void **state)
{
	(void)state;
	skip();
}

int main(void)
{
	struct CMUnitTest tests[] = {
		T(incrby__starts_at_zero_and_adds),
		T(incrby__overflow_refused_unchanged),
		T(get__missing_reads_zero),
		T(set__replaces_a_set),
		T(del__reports_removed),
		T(getdel__reads_and_removes),
		T(wrongtype__integer_command_on_set),
		T(key__bad_keys_refused),
		T(sadd__reports_new_members),
		T(srem__removes_and_empties),
		T(cmdstat__counts_the_servers_calls),
		T(spop__takes_at_most_count_and_removes),
		T(spop__every_member_comes_out_once),
		T(smembers__copies_without_removing),
		T(refuse__next_n_commands_change_nothing),
		T(refuse__forever_until_cleared),
		T(restart__loses_everything),
		T(hook__sees_each_command_and_may_run_commands),
		T(hook__increment_between_get_and_del_is_lost),
		T(hook__getdel_leaves_no_gap),
		T(atomic__hook_runs_once_after_the_step),
		T(atomic__returns_fn_result_without_undo),
		T(atomic__refused_does_not_run_fn),
		T(atomic__nested_on_another_store_keeps_the_first),
		T(commands__counted),
		T(incrby__exact_under_threads),
		T(atomic__read_modify_write_exact_under_threads),
		T(eval__runs_the_script_and_answers),
		T(eval__reply_longer_than_room_is_an_error),
		T(lose_replies__the_command_ran),
		T(lose_replies__members_not_handed_over),
		R(incrby__starts_at_zero_and_adds),
		R(incrby__overflow_refused_unchanged),
		R(get__missing_reads_zero),
		R(set__replaces_a_set),
		R(del__reports_removed),
		R(getdel__reads_and_removes),
		R(wrongtype__integer_command_on_set),
		R(key__bad_keys_refused),
		R(sadd__reports_new_members),
		R(srem__removes_and_empties),
		R(cmdstat__counts_the_servers_calls),
		R(spop__takes_at_most_count_and_removes),
		R(spop__every_member_comes_out_once),
		R(smembers__copies_without_removing),
		R(lose_replies__members_not_handed_over),
		R(refuse__next_n_commands_change_nothing),
		R(refuse__forever_until_cleared),
		R(restart__loses_everything),
		R(hook__sees_each_command_and_may_run_commands),
		R(hook__increment_between_get_and_del_is_lost),
		R(hook__getdel_leaves_no_gap),
		R(eval__runs_the_script_and_answers),
		R(eval__reply_longer_than_room_is_an_error),
		R(lose_replies__the_command_ran),
		R(redis__script_reloaded_after_the_server_forgot_it),
		R(redis__atomic_c_step_is_refused),
		R(redis__unreachable_server_is_down),
	};
	const char *url = getenv("HOTROW_REDIS_URL");
	const char *req = getenv("HOTROW_REQUIRE_REDIS");
	if (url && *url)
		redis_url = url;
	else if (!(req && strcmp(req, "1") == 0)) {
		printf("NOTICE: Redis checks skipped: set HOTROW_REDIS_URL "
		       "(export HOTROW_REDIS_URL=$(scripts/redis up)) to run them\n");
		for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
			if (tests[i].setup_func == setup_redis) {
				tests[i].test_func = skipped;
				tests[i].setup_func = NULL;
				tests[i].teardown_func = NULL;
			}
	}
	return _cmocka_run_group_tests("kit/store", tests, sizeof tests / sizeof tests[0], NULL, NULL);
}
