/*
 * alloc.c: Lab 04's allocation checks (alloc.h).
 *
 * The test binary counts every block allocated by the code linked into it
 * and can refuse the k-th one the student's code makes
 * (tests/harness/alloc.h; the kit's own allocations are counted, never
 * refused here). record_view, flush_views, recover_flushes and
 * start_flusher run once per k: a refused allocation must come back as a
 * negative code with every view still in the store or the database, once;
 * a retry then works. The blocks the kit hands over (the ids of a SPOP,
 * the members of an SMEMBERS) are the caller's to free: after each call,
 * and once the store is freed, no block may be left.
 *
 * A thread that cannot start is the same kind of failure: start_flusher
 * runs with its pthread_create refused (tests/harness/threads.h), and
 * must return an error with nothing allocated and nothing changed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit/store.h"
#include "labs/04-drain/views.h"
#include "tests/harness/alloc.h"
#include "tests/harness/labtest.h"
#include "tests/harness/threads.h"
#include "tests/labs/04-drain/alloc.h"

enum { VIDEOS = 30 };
/* The flushers here never reach their first tick (stop_flusher does not
 * wait it out): no allocation of theirs lands between arm and disarm. */
enum { FOREVER_MS = 60000 };

static struct kit_store *held;    /* freed at teardown when a check failed */

int drain_alloc_teardown(void **state)
{
	kit_store_free(held);
	held = NULL;
	return labtest_teardown(state);
}

static int64_t delta(struct kit_store *st, int64_t video)
{
	char key[64];
	int64_t v = 0;
	snprintf(key, sizeof key, VIEWS_DELTA_PREFIX "%" PRId64, video);
	lt_expect(kit_store_get(st, key, &v) == 0, NULL, "GET %s failed", key);
	return v;
}

static int dirty(struct kit_store *st, int64_t video)
{
	char id[24];
	int is = 0;
	snprintf(id, sizeof id, "%" PRId64, video);
	lt_expect(kit_store_sismember(st, VIEWS_DIRTY, id, &is) == 0, NULL, "SISMEMBER failed");
	return is;
}

/* Views of videos 1 .. VIDEOS in the store: their deltas plus what is
 * parked under any token. */
static int64_t in_store(struct kit_store *st)
{
	int64_t sum = 0;
	for (int v = 1; v <= VIDEOS; v++)
		sum += delta(st, v);
	char *tokens[64];
	int ntok = 0;
	lt_expect(kit_store_smembers(st, VIEWS_PARKED, 64, tokens, &ntok) == 0, NULL, "SMEMBERS failed");
	for (int i = 0; i < ntok; i++) {
		char park[64], *members[VIEWS_MAX_BATCH];
		int n = 0;
		snprintf(park, sizeof park, VIEWS_PARK_PREFIX "%s", tokens[i]);
		lt_expect(kit_store_smembers(st, park, VIEWS_MAX_BATCH, members, &n) == 0, NULL,
		          "SMEMBERS failed");
		for (int j = 0; j < n; j++) {
			const char *eq = strchr(members[j], '=');
			sum += eq ? strtoll(eq + 1, NULL, 10) : 0;
			free(members[j]);
		}
		free(tokens[i]);
	}
	return sum;
}

static int64_t in_db(struct labtest *t)
{
	return labtest_int(t, "SELECT COALESCE(SUM(views), 0) FROM video_counts");
}

/* 1 + 2 + ... views of videos 1 .. VIDEOS: 465 in all. */
static int64_t record_all(struct kit_store *st)
{
	int64_t all = 0;
	for (int v = 1; v <= VIDEOS; v++)
		for (int i = 0; i < v; i++, all++)
			lt_expect_int_hint(record_view(st, v), 0, "record_view with nothing refused", "record");
	return all;
}

/* ---- record_view ---- */

struct record_case {
	struct labtest *t;
	int64_t before;
};

/* A store of its own for each round (on Redis the same keys again). */
static void record_setup(void *arg)
{
	struct record_case *c = arg;
	held = labtest_store(c->t);
	c->before = delta(held, 7);
}

static int record_call(void *arg)
{
	(void)arg;
	return record_view(held, 7);
}

static void record_check(void *arg, int k, bool failed, int rc)
{
	struct record_case *c = arg;
	if (failed) {
		lt_expect(rc < 0, "alloc", "record_view with allocation %d refused returned %d: "
		          "a view it did not count must be an error", k, rc);
		lt_expect(rc == KIT_STORE_NOMEM, "alloc", "record_view with allocation %d refused "
		          "returned %d (%s); views.h: an allocation that fails is KIT_STORE_NOMEM (%d), "
		          "which tells the caller nothing reached the store", k, rc,
		          kit_store_strerror(rc), KIT_STORE_NOMEM);
		lt_expect_int_hint(delta(held, 7), c->before, "the delta after a refused record_view", "alloc");
		rc = record_view(held, 7);
		lt_expect_int_hint(rc, 0, "record_view again, nothing refused", "alloc");
	} else {
		lt_expect_int_hint(rc, 0, "record_view", "record");
	}
	lt_expect_int_hint(delta(held, 7), c->before + 1, "the delta after the view was counted", "alloc");
	lt_expect_int_hint(dirty(held, 7), 1, "video 7 dirty after the view was counted", "alloc");
}

static void store_teardown(void *arg)
{
	(void)arg;
	kit_store_free(held);
	held = NULL;
}

void record_view__every_allocation_can_fail(void **state)
{
	struct record_case c = { .t = *state };
	struct lt_alloc_case ac = { .arg = &c, .setup = record_setup, .call = record_call,
	                            .check = record_check, .teardown = store_teardown,
	                            .what = "record_view" };
	lt_alloc_each(&ac);
}

/* ---- flush_views and recover_flushes ---- */

struct flush_case {
	struct labtest *t;
	struct kit_db *db;
	bool recover;               /* recover_flushes of a parked batch, else flush_views */
	int64_t views, db_before;
};

static void flush_setup(void *arg)
{
	struct flush_case *c = arg;
	held = labtest_store(c->t);
	c->views = record_all(held);
	c->db_before = in_db(c->t);
	if (!c->recover)
		return;
	/* Park the batch as a flush that died before its transaction would. */
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 0;
	int64_t token = 0;
	int64_t last = labtest_int(c->t, "SELECT COALESCE(MAX(token), 0) FROM applied_flushes");
	lt_expect(kit_store_set(held, VIEWS_TOKEN, last + 1) == 0, NULL, "SET views:token failed");
	int rc = park_views(held, VIEWS_MAX_BATCH, &token, out, &n);
	lt_expect(rc == 0 && n == VIDEOS, "park", "park_views returned %d with %d videos", rc, n);
}

static int flush_call(void *arg)
{
	struct flush_case *c = arg;
	int64_t r = c->recover ? recover_flushes(held, c->db) : flush_views(held, c->db, VIEWS_MAX_BATCH);
	return r < 0 ? (int)r : r == c->views ? 0 : 1;
}

static void flush_check(void *arg, int k, bool failed, int rc)
{
	struct flush_case *c = arg;
	const char *what = c->recover ? "recover_flushes" : "flush_views";
	if (failed) {
		lt_expect(rc < 0, "alloc", "%s with allocation %d refused returned %s: views it did not "
		          "write must be an error", what, k, rc == 0 ? "every view as written" : "a count");
		lt_expect(rc >= 0 || rc == KIT_STORE_NOMEM || rc == KIT_DB_ERR, "alloc", "%s with "
		          "allocation %d refused returned %lld: views.h names the codes for a failed "
		          "allocation, KIT_STORE_NOMEM or KIT_DB_ERR (a code of your own, -ENOMEM or -1, "
		          "is none a caller can test for)", what, k, (long long)rc);
		lt_expect_int_hint(in_db(c->t), c->db_before,
		                   "views in the database after a call whose allocation was refused "
		                   "(its transaction must roll back)", "alloc");
		lt_expect_int_hint(in_store(held), c->views,
		                   "views in the store (deltas and parks) after a refused call", "alloc");
		rc = flush_call(c);
		lt_expect(rc == 0, "alloc", "%s again, nothing refused, returned %d", what, rc);
	} else {
		lt_expect(rc == 0, "flush", "%s returned %d", what, rc);
	}
	lt_expect_int_hint(in_db(c->t), c->db_before + c->views, "views in the database once it worked",
	                   "alloc");
	lt_expect_int_hint(in_store(held), 0, "views left in the store once it worked", "alloc");
}

static void flush_every_allocation(struct labtest *t, bool recover)
{
	labtest_exec(t, VIEWS_SCHEMA);
	labtest_exec(t, VIEWS_TOKENS_SCHEMA);
	struct flush_case c = { .t = t, .db = labtest_db(t), .recover = recover };
	struct lt_alloc_case ac = { .arg = &c, .setup = flush_setup, .call = flush_call,
	                            .check = flush_check, .teardown = store_teardown,
	                            .what = recover ? "recover_flushes" : "flush_views" };
	lt_alloc_each(&ac);
}

void flush__every_allocation_can_fail(void **state)
{
	flush_every_allocation(*state, false);
}

void recovery__every_allocation_can_fail(void **state)
{
	flush_every_allocation(*state, true);
}

/* ---- the flusher ---- */

struct flusher_case {
	struct kit_store *st;
	struct kit_db *db;
	struct flusher *f;
};

static int flusher_call(void *arg)
{
	struct flusher_case *c = arg;
	c->f = (struct flusher *)&c->f;     /* start_flusher must set it */
	return start_flusher(&c->f, c->st, c->db, FOREVER_MS, 100);
}

static void flusher_check(void *arg, int k, bool failed, int rc)
{
	struct flusher_case *c = arg;
	if (failed) {
		lt_expect(rc < 0, "alloc", "start_flusher with allocation %d refused returned %d", k, rc);
		lt_expect(rc >= 0 || rc == KIT_STORE_NOMEM || rc == KIT_DB_ERR, "alloc", "start_flusher "
		          "with allocation %d refused returned %d: views.h names the codes for a failed "
		          "allocation, KIT_STORE_NOMEM or KIT_DB_ERR", k, rc);
		lt_expect(c->f == NULL, "alloc", "start_flusher failed and left *out set (views.h: *out = NULL)");
		c->f = NULL;
		rc = start_flusher(&c->f, c->st, c->db, FOREVER_MS, 100);
		lt_expect_int_hint(rc, 0, "start_flusher again, nothing refused", "alloc");
	}
	lt_expect(rc == 0 && c->f != NULL, "flush-loop", "start_flusher returned %d", rc);
	lt_expect_int_hint(stop_flusher(c->f), 0, "stop_flusher with nothing dirty", "stop");
	c->f = NULL;
}

void flusher__every_allocation_can_fail(void **state)
{
	struct labtest *t = *state;
	labtest_exec(t, VIEWS_SCHEMA);
	labtest_exec(t, VIEWS_TOKENS_SCHEMA);
	held = labtest_store(t);
	struct flusher_case c = { .st = held, .db = labtest_db(t) };
	struct lt_alloc_case ac = { .arg = &c, .call = flusher_call, .check = flusher_check,
	                            .what = "start_flusher and stop_flusher" };
	lt_alloc_each(&ac);
	kit_store_free(held);
	held = NULL;
}

/* start_flusher with the k-th pthread_create it makes refused (EAGAIN,
 * as when the system is out of threads), for k = 1, 2, ... until it makes
 * fewer: views.h's failure, a negative code with *out = NULL, and nothing
 * left allocated (the flusher freed on that path too). A start that tried
 * again and got its thread is fine; 0 with no thread running is not: no
 * flush would ever come, and stop_flusher would join a thread that does
 * not exist. Then the store still holds every view, and a flusher started
 * later writes them all. */
void flusher__thread_that_cannot_start(void **state)
{
	struct labtest *t = *state;
	labtest_exec(t, VIEWS_SCHEMA);
	labtest_exec(t, VIEWS_TOKENS_SCHEMA);
	struct kit_db *db = labtest_db(t);
	held = labtest_store(t);
	int64_t all = record_all(held);
	int k = 1;
	for (;; k++) {
		size_t base = lt_alloc_live();
		long before = lt_thread_starts();
		struct flusher *f = (struct flusher *)&f;     /* start_flusher must set it */
		lt_thread_arm(k);
		int rc = start_flusher(&f, held, db, FOREVER_MS, 100);
		bool refused = lt_thread_disarm();
		long starts = lt_thread_starts() - before;
		if (!refused) {
			lt_expect(starts > 0, "thread", "start_flusher returned %d and never called "
			          "pthread_create: the flusher is a thread of its own (views.h)", rc);
			lt_expect(rc == 0 && f != NULL, "flush-loop", "start_flusher returned %d", rc);
			lt_expect_int_hint(stop_flusher(f), 0, "stop_flusher", "stop");
			break;
		}
		lt_expect(rc < 0 || starts > k, "thread", "start_flusher returned %d when its "
		          "pthread_create number %d was refused (EAGAIN) and it tried no other: no "
		          "thread runs, so no flush would ever come and stop_flusher would join "
		          "nothing; views.h: a negative code with *out = NULL", rc, k);
		if (rc == 0) {                 /* it tried again, and that thread started */
			lt_expect_int_hint(stop_flusher(f), 0, "stop_flusher", "stop");
			continue;
		}
		lt_expect(f == NULL, "thread", "start_flusher failed (%d) with pthread_create refused "
		          "and left *out set (views.h: *out = NULL)", rc);
		lt_expect(rc >= KIT_STORE_SCRIPT, "thread", "start_flusher returned %d when its "
		          "pthread_create was refused: not a code of the kit's (views.h: a negative "
		          "KIT_STORE_* or KIT_DB_* code, %d to -1; kit_store_strerror calls %d \"%s\"). "
		          "Is pthread_create's own error number (EAGAIN) passed on, negated? It is an "
		          "errno, not a kit code: return KIT_DB_ERR", rc, KIT_STORE_SCRIPT, rc,
		          kit_store_strerror(rc));
		size_t live = lt_alloc_live();
		lt_expect(live == base, "thread", "%zd block(s) left allocated after start_flusher "
		          "failed because pthread_create did: free the flusher on that path too "
		          "(after destroying its mutex and condition variable)", (ssize_t)(live - base));
	}
	lt_expect_int_hint(in_store(held) + in_db(t), all, "views in the store and the database "
	                   "after the starts that failed", "thread");

	/* Nothing refused now: a flusher starts and, stopped, writes them all. */
	lt_expect_int_hint(record_view(held, 1), 0, "record_view after the starts that failed", "thread");
	struct flusher *f = NULL;
	int rc = start_flusher(&f, held, db, FOREVER_MS, 100);
	lt_expect(rc == 0 && f != NULL, "thread", "start_flusher after %d refused start(s), nothing "
	          "refused now, returned %d", k - 1, rc);
	lt_expect_int_hint(stop_flusher(f), 0, "stop_flusher", "stop");
	lt_expect_int_hint(in_db(t), all + 1, "views in the database once a later flusher stopped",
	                   "thread");
	kit_store_free(held);
	held = NULL;
}

/* ---- nothing left ---- */

/* Each call that takes blocks from the kit: the drain, the park, a flush
 * that recovers a parked batch, one that is refused and puts the views
 * back, and a flusher started and stopped with views dirty. */
void drain__nothing_left_allocated(void **state)
{
	struct labtest *t = *state;
	size_t base = lt_alloc_live();
	held = labtest_store(t);
	record_all(held);
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 0;
	lt_expect_int_hint(drain_views(held, 10, out, &n), 0, "drain_views of 10", "drain");
	lt_expect_int_hint(n, 10, "videos drained", "drain");
	lt_expect_int_hint(kit_store_set(held, VIEWS_TOKEN, 1), 0, "SET views:token", "park");
	int64_t token = 0;
	lt_expect_int_hint(park_views(held, VIEWS_MAX_BATCH, &token, out, &n), 0, "park_views", "park");
	lt_expect_int_hint(n, VIDEOS - 10, "videos parked", "park");
	kit_store_free(held);
	held = NULL;
	lt_alloc_expect_none_left(base, "record_view, drain_views, park_views and freeing the store");
	labtest_expect_fresh(t, "drain__nothing_left_allocated", "alloc", LT_KEPT_BLOCK);
}

void flush__nothing_left_allocated(void **state)
{
	struct labtest *t = *state;
	labtest_exec(t, VIEWS_SCHEMA);
	labtest_exec(t, VIEWS_TOKENS_SCHEMA);
	struct kit_db *db = labtest_db(t);
	size_t base = lt_alloc_live();
	held = labtest_store(t);
	int64_t all = record_all(held);

	/* A batch parked, then found and applied by the next flush. */
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 0;
	int64_t token = 0;
	lt_expect_int_hint(kit_store_set(held, VIEWS_TOKEN, 1), 0, "SET views:token", "park");
	lt_expect_int_hint(park_views(held, 5, &token, out, &n), 0, "park_views", "park");
	int64_t r = flush_views(held, db, VIEWS_MAX_BATCH);
	lt_expect(r == all, "recover", "flush_views returned %" PRId64 ", expected %" PRId64, r, all);

	/* A flush the database refuses: the views go back. */
	record_all(held);
	labtest_exec(t, "ALTER TABLE video_counts RENAME TO video_counts_away");
	r = flush_views(held, db, VIEWS_MAX_BATCH);
	labtest_exec(t, "ALTER TABLE video_counts_away RENAME TO video_counts");
	lt_expect(r < 0, "report-failure", "flush_views returned %" PRId64 " with its table gone", r);

	/* A flusher whose last flush meets the table gone: stop_flusher
	 * returns that error, and frees the flusher all the same (a return
	 * straight from the failed flush leaves it allocated). */
	struct flusher *f = NULL;
	lt_expect_int_hint(start_flusher(&f, held, db, FOREVER_MS, 100), 0, "start_flusher", "flush-loop");
	labtest_exec(t, "ALTER TABLE video_counts RENAME TO video_counts_away");
	int stopped = stop_flusher(f);
	labtest_exec(t, "ALTER TABLE video_counts_away RENAME TO video_counts");
	lt_expect(stopped < 0, "stop", "stop_flusher returned %d with its table gone", stopped);

	/* The flusher takes them. */
	f = NULL;
	lt_expect_int_hint(start_flusher(&f, held, db, FOREVER_MS, 100), 0, "start_flusher", "flush-loop");
	lt_expect_int_hint(stop_flusher(f), 0, "stop_flusher", "stop");
	lt_expect_int_hint(in_db(t), 2 * all, "views in the database at the end", "flush");
	kit_store_free(held);
	held = NULL;
	lt_alloc_expect_none_left(base, "a recovery, a refused flush, a flusher whose last flush was "
	                 "refused (stop_flusher returns that error and still frees the flusher: "
	                 "a return straight from the failed flush leaves it), a flusher started and "
	                 "stopped, and freeing the store");
	labtest_expect_fresh(t, "flush__nothing_left_allocated", "alloc", LT_KEPT_BLOCK);
}

/* The same when a step fails half-way: a drain and a park whose GETDEL
 * meets a delta key holding a set, among 20 dirty videos (the failing one
 * wherever SPOP puts it, five times over), and a recovery of three listed
 * tokens whose parks all hold an integer. Each call returns an error; the
 * ids SPOP handed over and the tokens SMEMBERS handed over before and
 * after the failing one are the caller's to free all the same. */
void drain__nothing_left_after_a_failing_step(void **state)
{
	struct labtest *t = *state;
	labtest_exec(t, VIEWS_SCHEMA);
	labtest_exec(t, VIEWS_TOKENS_SCHEMA);
	size_t base = lt_alloc_live();
	held = labtest_store(t);
	struct view_delta out[VIEWS_MAX_BATCH];
	lt_expect_int_hint(kit_store_set(held, VIEWS_TOKEN, 1), 0, "SET views:token", "park");
	int planted = kit_store_sadd(held, VIEWS_DELTA_PREFIX "40", "x", NULL);
	lt_expect_int(planted, 0, "SADD " VIEWS_DELTA_PREFIX "40 (a delta key that holds a set)");
	int failed = 0;
	for (int round = 0; round < 10; round++) {
		for (int64_t v = 1; v <= 20; v++)
			lt_expect_int_hint(record_view(held, v), 0, "record_view", "record");
		lt_expect(kit_store_sadd(held, VIEWS_DIRTY, "40", NULL) == 0, NULL, "SADD views:dirty 40");
		int n = 0;
		int64_t token = 0;
		int rc = round % 2 ? park_views(held, VIEWS_MAX_BATCH, &token, out, &n)
		                   : drain_views(held, VIEWS_MAX_BATCH, out, &n);
		failed += rc < 0;
	}
	lt_expect(failed == 10, "drain", "%d of 10 drains and parks with video 40's delta key holding a "
	          "set returned an error; expected all 10 (its GETDEL fails)", failed);

	struct kit_db *db = labtest_db(t);
	static const char *const tokens[] = { "5", "6", "7" };
	for (int i = 0; i < 3; i++) {
		char park[64];
		snprintf(park, sizeof park, VIEWS_PARK_PREFIX "%s", tokens[i]);
		lt_expect(kit_store_sadd(held, VIEWS_PARKED, tokens[i], NULL) == 0 &&
		          kit_store_set(held, park, 9) == 0, NULL, "staging token %s", tokens[i]);
	}
	int64_t r = recover_flushes(held, db);
	lt_expect(r < 0, "recover", "recover_flushes of three tokens whose parks hold an integer "
	          "returned %" PRId64 "; expected an error", r);
	kit_store_free(held);
	held = NULL;
	lt_alloc_expect_none_left(base, "drains and parks that met a failing GETDEL, a recovery that "
	                          "met unreadable parks, and freeing the store (are the ids or tokens "
	                          "after the failing one freed when the loop stops early?)");
}
