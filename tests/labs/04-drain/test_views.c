/*
 * test_views.c: Lab 04 checks — buffer views in the store, drain, flush.
 *
 * The store checks (record_*, drain_*) need no database. The flush checks
 * run on SQLite and on PostgreSQL with the in-process store, and on
 * SQLite with a real Redis (HOTROW_REDIS_URL), as do the store checks that
 * need no hook. The races are not hoped for: the in-process store's hook
 * makes another client's command land at the exact point where a bug
 * would lose a view, so those checks stay on it; on Redis a stress check
 * shows the same loss happening between real clients and reports how
 * often. The database "refuses" a flush because the test renames
 * video_counts away for that flush.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kit/failpoint.h"
#include "tests/harness/alloc.h"
#include "tests/harness/beside.h"
#include "tests/harness/bounds.h"
#include "tests/harness/labtest.h"
#include "tests/harness/locks.h"
#include "tests/harness/session.h"
#include "tests/harness/sort.h"
#include "tests/harness/sql.h"
#include "tests/harness/steps.h"
#include "tests/harness/threads.h"
#include "tests/labs/04-drain/alloc.h"
#include "labs/04-drain/views.h"
#include "tests/harness/gate.h"
#include "util/clock.h"

/* ---- flushers a failing check leaves behind ---- */

/* A check that fails returns at once (cmocka), before its own
 * stop_flusher: its flusher's thread would go on flushing, on a
 * connection and a store nobody else uses any more, into the checks
 * after it (and take a wake-up or a clock reading a later check arms for
 * its own flusher). Every flusher a check starts is listed here until it
 * is stopped; the checks' teardown stops what is left, so a failure
 * names its own check only. */
#define LIVE_MAX 8
static struct live_flusher {
	struct flusher *f;
	struct kit_db *db;
	struct kit_store *st;
} live[LIVE_MAX];
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;

static int start_listed(struct flusher **out, struct kit_store *st, struct kit_db *db,
                        int interval_ms, int max)
{
	int rc = start_flusher(out, st, db, interval_ms, max);
	pthread_mutex_lock(&live_mu);
	for (int i = 0; rc == 0 && *out && i < LIVE_MAX; i++)
		if (!live[i].f) {
			live[i] = (struct live_flusher){ *out, db, st };
			break;
		}
	pthread_mutex_unlock(&live_mu);
	return rc;
}

static int stop_listed(struct flusher *f)
{
	pthread_mutex_lock(&live_mu);
	for (int i = 0; f && i < LIVE_MAX; i++)
		if (live[i].f == f)
			live[i].f = NULL;
	pthread_mutex_unlock(&live_mu);
	return stop_flusher(f);
}

struct stopper {
	struct flusher *f;
	atomic_bool done;
};

static void *stop_left(void *arg)
{
	struct stopper *s = arg;
	stop_flusher(s->f);
	atomic_store(&s->done, true);
	return NULL;
}

/* labtest_teardown, after stopping the flushers the check left running
 * (their hooks taken off first: they point into the failed check's
 * frame). A stop that does not return within 10 s is left behind. */
static int views_teardown(void **state)
{
	lt_lock_spurious(0);
	lt_lock_fake_clock(0, 0);
	for (int i = 0; i < LIVE_MAX; i++) {
		pthread_mutex_lock(&live_mu);
		struct live_flusher l = live[i];
		live[i].f = NULL;
		pthread_mutex_unlock(&live_mu);
		if (!l.f)
			continue;
		kit_db_set_hook(l.db, NULL, NULL);
		kit_store_set_hook(l.st, NULL, NULL);
		static struct stopper s[LIVE_MAX];   /* outlives a stop left behind */
		s[i].f = l.f;
		atomic_store(&s[i].done, false);
		pthread_t th;
		if (pthread_create(&th, NULL, stop_left, &s[i]) != 0)
			continue;
		for (int k = 0; k < 5000 && !atomic_load(&s[i].done); k++)
			util_sleep_ns(2000000);
		if (atomic_load(&s[i].done))
			pthread_join(th, NULL);
		else
			pthread_detach(th);
	}
	return labtest_teardown(state);
}

#define start_flusher start_listed
#define stop_flusher stop_listed
#define labtest_teardown views_teardown

/* ---- helpers ---- */

/* The test's store: the in-process one for checks without a setup, the
 * one the setup chose (LABTEST_STORES, STORE_REDIS) otherwise. */
static struct kit_store *new_store(void **state)
{
	if (*state)
		return labtest_store(*state);
	struct kit_store *st = kit_store_new();
	assert_non_null(st);
	return st;
}

/* The same check once more, on SQLite with a real Redis as the store. */
#define STORE_REDIS(f) { #f "/redis", f, labtest_setup_redis, labtest_teardown, NULL }

static int64_t delta(struct kit_store *st, int64_t video)
{
	char key[64];
	int64_t v = 0;
	snprintf(key, sizeof key, VIEWS_DELTA_PREFIX "%" PRId64, video);
	assert_int_equal(kit_store_get(st, key, &v), 0);
	return v;
}

static int dirty(struct kit_store *st, int64_t video)
{
	char id[24];
	int is = 0;
	snprintf(id, sizeof id, "%" PRId64, video);
	assert_int_equal(kit_store_sismember(st, VIEWS_DIRTY, id, &is), 0);
	return is;
}

/* Views still in the store for videos first .. last. */
static int64_t store_total(struct kit_store *st, int64_t first, int64_t last)
{
	int64_t sum = 0;
	for (int64_t v = first; v <= last; v++)
		sum += delta(st, v);
	return sum;
}

static void record(struct kit_store *st, int64_t video, int times)
{
	for (int i = 0; i < times; i++) {
		int rc = record_view(st, video);
		lt_expect(rc == 0, "record", "record_view(video %" PRId64 ") returned %d (%s) on a healthy store",
		          video, rc, rc == KIT_STORE_ERR ? "KIT_STORE_ERR: what the skeleton returns "
		          "until record_view is written (§3)" : kit_store_strerror(rc));
	}
}

/* Drain until nothing comes out; the views taken. */
static int64_t drain_all(struct kit_store *st)
{
	struct view_delta out[VIEWS_MAX_BATCH];
	int64_t sum = 0;
	int n;
	do {
		n = 0;
		lt_expect(drain_views(st, VIEWS_MAX_BATCH, out, &n) == 0, "drain",
		          "drain_views failed on a healthy store");
		for (int i = 0; i < n; i++)
			sum += out[i].n;
	} while (n > 0);
	return sum;
}

/* drain_views, or park_views (§5b) when park is set: the same promise,
 * the taken views parked in the store as well. */
static int take(struct kit_store *st, bool park, struct view_delta *out, int *n)
{
	int64_t token = 0;
	if (!park)
		return drain_views(st, VIEWS_MAX_BATCH, out, n);
	int rc = park_views(st, VIEWS_MAX_BATCH, &token, out, n);
	if (rc == VIEWS_NO_TOKEN) {   /* a new store: start the tokens as a flusher would */
		kit_store_set(st, VIEWS_TOKEN, 1);
		rc = park_views(st, VIEWS_MAX_BATCH, &token, out, n);
	}
	return rc;
}

static int64_t db_views(struct labtest *t, int64_t video)
{
	char sql[128];
	snprintf(sql, sizeof sql,
	         "SELECT COALESCE(SUM(views), 0) FROM video_counts WHERE video_id = %" PRId64, video);
	return labtest_int(t, sql);
}

static int64_t db_total(struct labtest *t)
{
	return labtest_int(t, "SELECT COALESCE(SUM(views), 0) FROM video_counts");
}

/* Flush until the store has nothing dirty; the views written. */
static int64_t flush_all(struct kit_store *st, struct kit_db *db)
{
	int64_t sum = 0, left = 0;
	for (int round = 0; round < 10000; round++) {
		int64_t r = flush_views(st, db, 100);
		lt_expect(r >= 0, "flush", "flush_views failed on a healthy database: %s",
		          labtest_why(db));
		sum += r;
		assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &left), 0);
		if (left == 0)
			break;
	}
	return sum;
}

/* The lab's two tables: the counts and the applied flush tokens. */
static void schema(struct labtest *t)
{
	labtest_exec(t, VIEWS_SCHEMA);
	labtest_exec(t, VIEWS_TOKENS_SCHEMA);
}

/* The database "refuses": the table is not there for a while. */
static void table_away(struct labtest *t)
{
	labtest_exec(t, "ALTER TABLE video_counts RENAME TO video_counts_away");
}

static void table_back(struct labtest *t)
{
	labtest_exec(t, "ALTER TABLE video_counts_away RENAME TO video_counts");
}

/* ---- §3 record_view ---- */

static void record_view__counts_and_marks_dirty(void **state)
{
	struct kit_store *st = new_store(state);

	record(st, 7, 3);
	record(st, 9, 1);

	lt_expect_int_hint(delta(st, 7), 3, "delta of video 7 after 3 views", "record");
	lt_expect_int_hint(delta(st, 9), 1, "delta of video 9 after 1 view", "record");
	lt_expect_int_hint(dirty(st, 7) + dirty(st, 9), 2, "videos 7 and 9 marked dirty", "record");
	kit_store_free(st);
}

/* After the first command of record_view, the store goes away for one
 * command (a dropped connection). A view is counted and marked, or
 * neither: never a delta nobody will drain, or the reverse. */
static void cut_after_first(void *arg, struct kit_store *st, const char *cmd,
                            const char *key, int rc)
{
	int *armed = arg;
	(void)cmd, (void)key, (void)rc;
	if (!*armed) {
		*armed = 1;
		kit_store_refuse(st, 1);
	}
}

static void record_view__both_or_neither(void **state)
{
	size_t blocks = lt_alloc_live();
	struct kit_store *st = new_store(state);
	int armed = 0;
	record(st, 9, 1);   /* a healthy store first: this one must work */
	kit_store_set_hook(st, cut_after_first, &armed);

	int rc = record_view(st, 8);

	kit_store_set_hook(st, NULL, NULL);
	kit_store_refuse(st, 0);
	int64_t d = delta(st, 8);
	int mark = dirty(st, 8);
	int want = rc == 0;
	lt_expect(d == want && mark == want, "both-or-neither",
	          "record_view returned %d but left delta %" PRId64 " and dirty mark %d: "
	          "the count and the mark must change together or not at all",
	          rc, d, mark);

	/* the store refuses record_view's first command: nothing counted, and
	 * the caller hears the store's own code, not one that means something
	 * else (KIT_STORE_UNKNOWN would say "it may have been counted") */
	kit_store_refuse(st, 1);
	rc = record_view(st, 6);
	kit_store_refuse(st, 0);
	d = delta(st, 6);
	mark = dirty(st, 6);
	lt_expect(rc == KIT_STORE_DOWN && d == 0 && mark == 0, "record",
	          "record_view with its first command refused by the store (%d, %s) returned %d (%s) "
	          "and left delta %" PRId64 " and dirty mark %d (expected that code, 0 and 0): return "
	          "the store's code as it came", KIT_STORE_DOWN, kit_store_strerror(KIT_STORE_DOWN),
	          rc, kit_store_strerror(rc), d, mark);
	kit_store_free(st);
	/* a refused view is a failure like any other: no block of the call stays */
	lt_alloc_expect_none_left(blocks, "record_view with its store cut, then refused, and freeing "
	                          "the store (is what record_view allocated freed when the store "
	                          "says no?)");
}

/* A flusher's drain lands right after record_view's first command. */
struct mid_record {
	int fired;
	int64_t drained;
};

static void drain_mid_record(void *arg, struct kit_store *st, const char *cmd,
                             const char *key, int rc)
{
	struct mid_record *m = arg;
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 0;
	(void)cmd, (void)key, (void)rc;
	if (m->fired++)
		return;
	if (drain_views(st, VIEWS_MAX_BATCH, out, &n) == 0)
		for (int i = 0; i < n; i++)
			m->drained += out[i].n;
}

static void drain__no_orphan_when_it_lands_inside_a_record(void **state)
{
	struct kit_store *st = new_store(state);
	struct mid_record m = { 0, 0 };
	record(st, 7, 2);
	kit_store_set_hook(st, drain_mid_record, &m);

	record(st, 7, 1);

	kit_store_set_hook(st, NULL, NULL);
	int64_t later = drain_all(st);
	lt_expect_int_hint(m.drained + later, 3,
	                   "views of video 7 drained in all (3 recorded; a drain ran inside the third record_view)",
	                   "orphan");
	kit_store_free(st);
}

/* Every view marks its video, whatever the store held before: a delta
 * with no mark can be there without any bug of record_view's (a Redis
 * script that failed half-way keeps the commands it ran, README §2; a
 * views:dirty evicted by a maxmemory policy), and the next view is what
 * heals it. A record_view that marks only when the delta is new ("a key
 * above that is already marked") leaves such a video orphaned for ever. */
static void drain__finds_a_video_marked_again(void **state)
{
	struct kit_store *st = new_store(state);
	/* video 5: 4 views counted, no mark; video 6: counted and marked */
	assert_int_equal(kit_store_incrby(st, VIEWS_DELTA_PREFIX "5", 4, NULL), 0);
	record(st, 6, 2);
	assert_int_equal(kit_store_srem(st, VIEWS_DIRTY, "6", NULL), 0);

	record(st, 5, 1);
	record(st, 6, 1);

	int marked = dirty(st, 5) + dirty(st, 6);
	int64_t drained = drain_all(st);
	lt_expect(marked == 2 && drained == 8, "orphan",
	          "videos 5 and 6 had deltas 4 and 2 and no dirty mark (as a Redis script that "
	          "failed half-way, or an evicted views:dirty, leaves them); one more view of each "
	          "left %d of them marked and %" PRId64 " views drainable, expected 2 and 8: "
	          "record_view must mark the video on every view (SADD of a member already there "
	          "changes nothing), not only when its delta is new", marked, drained);
	kit_store_free(st);
}

/* ---- §4 drain_views ---- */

static void drain__takes_at_most_max_and_resets(void **state)
{
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 0;
	int64_t left = -1, sum = 0;
	for (int v = 1; v <= 10; v++)
		record(st, v, v);   /* video v has v views: 55 in all */

	lt_expect(drain_views(st, 4, out, &n) == 0, "drain", "drain_views(max 4) failed");

	lt_expect_int_hint(n, 4, "videos drained with max = 4 (10 dirty)", "drain-limit");
	for (int i = 0; i < n; i++) {
		lt_expect(out[i].n == out[i].video_id, "drain",
		          "video %" PRId64 " drained with %" PRId64 " views, expected %" PRId64,
		          out[i].video_id, out[i].n, out[i].video_id);
		lt_expect_int_hint(delta(st, out[i].video_id), 0, "delta left after draining a video", "drain");
		sum += out[i].n;
	}
	assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &left), 0);
	lt_expect_int_hint(left, 6, "videos still dirty after one drain of 4", "drain-limit");
	lt_expect_int_hint(sum + drain_all(st), 55, "views drained in all", "drain");
	kit_store_free(st);
}

/* After every store command the drain makes, another client records a
 * view of video 3: whatever the drain does, no view may fall between
 * reading a delta and resetting it. */
struct intruder {
	int landed;
};

static void view_lands(void *arg, struct kit_store *st, const char *cmd,
                       const char *key, int rc)
{
	struct intruder *in = arg;
	(void)cmd, (void)key, (void)rc;
	if (record_view(st, 3) == 0)
		in->landed++;
}

static void no_view_lost(void **state, bool park)
{
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	struct intruder in = { 0 };
	int n = 0;
	int64_t sum = 0;
	for (int v = 1; v <= 5; v++)
		record(st, v, 10);
	kit_store_set_hook(st, view_lands, &in);

	int rc = take(st, park, out, &n);

	kit_store_set_hook(st, NULL, NULL);
	lt_expect(rc == 0, "drain", "%s failed on a healthy store", park ? "park_views" : "drain_views");
	for (int i = 0; i < n; i++)
		sum += out[i].n;
	char what[160];
	snprintf(what, sizeof what,
	         "views drained in all (50 recorded + %d landed during the drain)", in.landed);
	lt_expect_int_hint(sum + drain_all(st), 50 + in.landed, what, "get-then-del");
	kit_store_free(st);
}

static void drain__no_view_lost_between_read_and_reset(void **state)
{
	no_view_lost(state, false);
}

static void park__no_view_lost_between_read_and_reset(void **state)
{
	no_view_lost(state, true);
}

/* The store goes away right after the drain's k-th command (a dropped
 * connection), for k = 1, 2, ...: if the drain is one step, the hook runs
 * only after all of it and nothing is lost; if its commands run one by
 * one, the ids are popped and their deltas stay behind, marked nowhere. */
struct cut {
	int k, seen;
};

static void refuse_after_kth(void *arg, struct kit_store *st, const char *cmd,
                             const char *key, int rc)
{
	struct cut *c = arg;
	(void)cmd, (void)key, (void)rc;
	if (++c->seen == c->k)
		kit_store_refuse(st, -1);
}

static void strands_nothing(void **state, bool park)
{
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	for (int k = 1; k <= 6; k++) {
		struct cut cut = { k, 0 };
		int n = 0;
		int64_t sum = 0;
		kit_store_restart(st);
		for (int v = 1; v <= 5; v++)
			record(st, v, 10);
		if (park)
			assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
		kit_store_set_hook(st, refuse_after_kth, &cut);

		int rc = take(st, park, out, &n);

		kit_store_set_hook(st, NULL, NULL);
		kit_store_refuse(st, 0);
		for (int i = 0; rc == 0 && i < n; i++)
			sum += out[i].n;
		char what[240];
		snprintf(what, sizeof what, "views %s in all (50 recorded; the store went away after "
		         "command %d of %d the %s made, and views it did not hand over must still be "
		         "drainable)", park ? "parked and handed over, or drained after," : "drained", k,
		         cut.seen, park ? "park" : "drain");
		lt_expect_int_hint(sum + drain_all(st), 50, what, "one-step");
		if (cut.seen <= k)
			break;   /* it made no more commands than that */
	}
	kit_store_free(st);
}

static void drain__store_failure_strands_nothing(void **state)
{
	strands_nothing(state, false);
}

static void park__store_failure_strands_nothing(void **state)
{
	strands_nothing(state, true);
}

/* A view whose reply was lost was counted all the same: a caller that
 * retries blindly counts it twice (§2). */
static void record_view__lost_reply_still_counted(void **state)
{
	struct kit_store *st = new_store(state);
	kit_store_lose_replies(st, 1);

	int rc = record_view(st, 4);

	kit_store_lose_replies(st, 0);
	lt_expect(rc != 0, "record", "record_view returned 0 although its reply was lost; "
	          "return the store's code (%d, %s), and do not send the view again: the "
	          "store may have counted it already", KIT_STORE_UNKNOWN,
	          kit_store_strerror(KIT_STORE_UNKNOWN));
	lt_expect(rc == KIT_STORE_UNKNOWN, "record", "record_view returned %d (%s) for a view whose "
	          "reply was lost; the store said %d (%s): the view may have been counted, and only "
	          "that code tells the caller so (a code of your own, or KIT_STORE_ERR for every "
	          "failure, says \"not counted\" where it may have been)", rc, kit_store_strerror(rc),
	          KIT_STORE_UNKNOWN, kit_store_strerror(KIT_STORE_UNKNOWN));
	lt_expect_int_hint(delta(st, 4) + dirty(st, 4), 2,
	                   "delta + dirty mark of video 4 after a view whose reply was lost", "record");
	kit_store_free(st);
}

/* A drain or a park whose reply was lost ran its step: the videos left
 * the store, and the caller cannot know which. views.h: on failure *n
 * (and a park's *token) is 0. A drain
 * that copies the reply into out and *n before it looks at the code
 * hands back videos beside KIT_STORE_UNKNOWN, and a caller that writes
 * what *n says counts views it also treats as lost. */
static void drain_and_park__lost_reply_leaves_nothing_out(void **state)
{
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	record(st, 5, 2);
	record(st, 6, 1);
	int n = 77;
	kit_store_lose_replies(st, 1);
	int rc = drain_views(st, VIEWS_MAX_BATCH, out, &n);
	kit_store_lose_replies(st, 0);
	lt_expect(rc == KIT_STORE_UNKNOWN && n == 0, "drain", "drain_views of two dirty videos "
	          "whose reply was lost returned %d (%s) with *n = %d; expected %d (%s: its step may "
	          "have run) and *n = 0, as views.h says of every failure. Is the reply copied out "
	          "before its code is looked at?", rc, kit_store_strerror(rc), n, KIT_STORE_UNKNOWN,
	          kit_store_strerror(KIT_STORE_UNKNOWN));

	/* park_views likewise, on a store with its token counter: *n and
	 * *token are 0 on every failure */
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 5), 0);
	record(st, 7, 3);
	int64_t token = 77;
	n = 77;
	kit_store_lose_replies(st, 1);
	rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	kit_store_lose_replies(st, 0);
	lt_expect(rc == KIT_STORE_UNKNOWN && n == 0 && token == 0, "token", "park_views of a dirty "
	          "video, with the token counter at 5, whose reply was lost returned %d (%s) with "
	          "*n = %d and *token = %" PRId64 "; expected %d (%s), *n = 0 and *token = 0, as "
	          "views.h says of every failure. Is the reply copied out before its code is looked "
	          "at?", rc, kit_store_strerror(rc), n, token, KIT_STORE_UNKNOWN,
	          kit_store_strerror(KIT_STORE_UNKNOWN));
	kit_store_free(st);
}

/* On a real Redis: writers INCRBY one key while a drainer takes it first
 * with GET then DEL (two commands), then with drain_views. The first
 * loses views between real clients (reported, not required: how many
 * depends on the scheduler); the second must lose none. */
#define STRESS_VIEWS 2000

struct stress {
	struct kit_store *st;
	atomic_int running;
	int failed;
};

static void *stress_writer(void *arg)
{
	struct stress *x = arg;
	for (int i = 0; i < STRESS_VIEWS; i++)
		if (record_view(x->st, 1) != 0)
			x->failed++;
	x->running--;
	return NULL;
}

static int64_t stress_round(struct stress *x, bool naive, int64_t *drained)
{
	pthread_t th[2];
	x->running = 2;
	*drained = 0;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, stress_writer, x), 0);
	while (x->running > 0) {
		if (naive) {
			int64_t v = 0;
			if (kit_store_get(x->st, VIEWS_DELTA_PREFIX "1", &v) == 0 &&
			    kit_store_del(x->st, VIEWS_DELTA_PREFIX "1", NULL) == 0)
				*drained += v;
		} else {
			*drained += drain_all(x->st);
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	int64_t left = delta(x->st, 1);
	kit_store_restart(x->st);
	return 2 * STRESS_VIEWS - x->failed - (*drained + left);   /* lost */
}

static void drain__get_then_del_loses_between_real_clients(void **state)
{
	struct stress x = { .st = new_store(state) };
	int64_t naive_drained, drained;

	int64_t naive_lost = stress_round(&x, true, &naive_drained);
	int64_t lost = stress_round(&x, false, &drained);

	printf("NOTICE: on Redis, %d views from 2 writers: GET then DEL lost %lld of them; "
	       "drain_views lost %lld\n", 2 * STRESS_VIEWS, (long long)naive_lost, (long long)lost);
	lt_expect_int_hint(x.failed, 0, "record_view failures on a healthy Redis", "record");
	lt_expect_int_hint(lost, 0, "views lost by drain_views while 2 clients recorded views on Redis",
	                   "get-then-del");
	kit_store_free(x.st);
}

/* ---- §5 flush_views ---- */

struct stmts {
	atomic_int writes;      /* INSERT/UPDATE statements on video_counts started */
	atomic_int in_flight;   /* statements running now */
	atomic_int max_in_flight;
};

static void count_stmts(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct stmts *s = arg;
	(void)t_ns;
	if (ev == KIT_DB_STMT_START) {
		int now = ++s->in_flight;
		if (now > s->max_in_flight)
			s->max_in_flight = now;
		if ((lt_sql_is(sql, "INSERT") || lt_sql_is(sql, "UPDATE")) &&
		    lt_sql_names(sql, "video_counts"))
			s->writes++;
	} else if (ev == KIT_DB_STMT_END) {
		s->in_flight--;
	}
}

/* count_stmts, and the statements that run inside a transaction after
 * the upsert (or a SELECT ... FOR UPDATE of video_counts), before it
 * ends: the batch's rows stay locked through each (lt_lock_watch_hook).
 * One thread only. */
struct after_upsert {
	struct stmts s;
	struct lt_lock_watch w;
};

static void note_after_upsert(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct after_upsert *u = arg;
	count_stmts(&u->s, ev, sql, t_ns);
	lt_lock_watch_hook(&u->w, ev, sql, t_ns);
}

static void flush__one_upsert_adds_the_deltas(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	struct after_upsert u = { .w.table = "video_counts" };
	schema(t);
	labtest_exec(t, "INSERT INTO video_counts (video_id, views) VALUES (2, 100)");
	record(st, 1, 3);
	record(st, 2, 4);
	record(st, 3, 1);
	kit_db_set_hook(db, note_after_upsert, &u);

	int64_t r = flush_views(st, db, 100);
	int64_t again = flush_views(st, db, 100);

	kit_db_set_hook(db, NULL, NULL);
	lt_expect(r >= 0, "flush", "flush_views failed: %s", labtest_why(db));
	lt_expect_int_hint(r, 8, "views flush_views says it wrote", "flush");
	lt_expect_int_hint(db_views(t, 1), 3, "views of video 1 (no row before: the upsert makes it)", "upsert");
	lt_expect_int_hint(db_views(t, 2), 104, "views of video 2 (100 before, 4 flushed)", "upsert");
	lt_expect_int_hint(db_views(t, 3), 1, "views of video 3", "upsert");
	lt_expect_int_hint(u.s.writes, 1, "INSERT/UPDATE statements for two flushes, the second with nothing dirty",
	                   "one-statement");
	lt_expect_int_hint(again, 0, "views written by a flush with nothing dirty", "flush");
	lt_expect_int_hint(store_total(st, 1, 3), 0, "views left in the store after the flush", "drain");
	/* The upsert locks the batch's rows until COMMIT: nothing may run in
	 * between (a read of the new totals "to log them"), each statement
	 * there is a round trip more that every writer of those rows waits
	 * out. */
	lt_expect(u.w.after == 0, "one-statement", "%d statements ran between the flush's upsert (or "
	          "a SELECT ... FOR UPDATE of its rows) and its COMMIT (the first: %s), expected none: "
	          "the batch's rows stay locked through each of them; the upsert takes their locks "
	          "itself, in the order of its sorted rows, and what you read goes after COMMIT",
	          u.w.after, u.w.after ? u.w.what : "-");
	kit_store_free(st);
}

/* What the store holds of videos 1 and 2 when the refused flush's
 * transaction ends: the put-back comes after the ROLLBACK, so nothing
 * yet (a put-back made first keeps the transaction, and SQLite's write
 * lock or the rows the token's INSERT took, through the store's round
 * trips). */
struct at_rollback {
	struct kit_store *st;
	int64_t back;           /* -1: no ROLLBACK seen */
};

static void back_at_rollback(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct at_rollback *a = arg;
	(void)t_ns;
	if (a->back < 0 && (ev == KIT_DB_TX_ROLLBACK || ((ev == KIT_DB_STMT_START ||
	    ev == KIT_DB_TX_STMT_START) && lt_sql_is(sql, "ROLLBACK"))))
		a->back = store_total(a->st, 1, 2);
}

static void flush__refused_views_go_back(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	schema(t);
	record(st, 1, 6);
	record(st, 2, 4);
	table_away(t);

	struct at_rollback ar = { st, -1 };
	kit_db_set_hook(db, back_at_rollback, &ar);
	int64_t r = flush_views(st, db, 100);
	kit_db_set_hook(db, NULL, NULL);

	table_back(t);
	lt_expect(ar.back <= 0, "put-back", "when the refused flush's ROLLBACK went out, %" PRId64
	          " of its 10 views were back in the store already: the put-back came first, and "
	          "the transaction held its locks (SQLite's write lock: every writer of the file "
	          "waited) through the store's round trips. Roll back, then put back", ar.back);
	lt_expect(r < 0, "report-failure",
	          "flush_views returned %" PRId64 " although the database refused the upsert", r);
	lt_expect_int_hint(store_total(st, 1, 2), 10, "views back in the store after a refused flush", "put-back");
	lt_expect_int_hint(dirty(st, 1) + dirty(st, 2), 2, "videos marked dirty again after a refused flush",
	                   "put-back");
	r = flush_views(st, db, 100);
	lt_expect_int_hint(r, 10, "views written by the next flush", "put-back");
	lt_expect_int_hint(db_views(t, 1), 6, "views of video 1 after the retry", "put-back");
	lt_expect_int_hint(db_views(t, 2), 4, "views of video 2 after the retry", "put-back");
	kit_store_free(st);
}

/* 4 threads record 200,000 views of 50 videos while this thread flushes,
 * the database refusing one flush in five. */
#define WRITERS 4
#define VIEWS_PER_WRITER 50000
#define VIDEOS 50

struct writer {
	pthread_t thread;
	struct kit_store *st;
	int index;
	int views;       /* to record */
	int failed;
	atomic_int *running;
};

static void *write_views(void *arg)
{
	struct writer *w = arg;
	for (int i = 0; i < w->views; i++)
		if (record_view(w->st, 1 + (i * 7 + w->index) % VIDEOS) != 0)
			w->failed++;
	(*w->running)--;
	return NULL;
}

static void flush__exact_under_threads_with_refusals(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	struct writer w[WRITERS];
	atomic_int running = WRITERS;
	int flushes = 0, refused = 0, claimed = 0, failed = 0;
	/* a round trip per view on Redis: fewer of them */
	int each = kit_store_is_redis(st) ? VIEWS_PER_WRITER / 50 : VIEWS_PER_WRITER;
	schema(t);
	for (int i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ .st = st, .index = i, .views = each, .running = &running };
		assert_int_equal(pthread_create(&w[i].thread, NULL, write_views, &w[i]), 0);
	}

	while (running > 0 || flushes < 10) {
		bool refuse = ++flushes % 5 == 0;
		if (refuse)
			table_away(t);
		int64_t r = flush_views(st, db, 20);
		if (refuse) {
			table_back(t);
			refused++;
			claimed += r > 0;   /* it said it wrote, with no table */
		} else if (r < 0) {
			failed++;
		}
	}
	for (int i = 0; i < WRITERS; i++) {
		pthread_join(w[i].thread, NULL);
		lt_expect_int_hint(w[i].failed, 0, "record_view failures in a writer thread", "record");
	}

	int64_t total = (int64_t)WRITERS * each;
	lt_expect_int_hint(failed, 0, "flushes that failed without being refused", "flush");
	lt_expect_int_hint(claimed, 0, "refused flushes that reported views written", "report-failure");
	char what[200];
	snprintf(what, sizeof what,
	         "views in the database + in the store after %d flushes, %d refused", flushes, refused);
	lt_expect_int_hint(db_total(t) + store_total(st, 1, VIDEOS), total, what, "put-back");
	flush_all(st, db);
	lt_expect_int_hint(db_total(t), total, "views in the database once everything is flushed", "put-back");
	kit_store_free(st);
}

static void restart__loses_only_the_unflushed(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	schema(t);
	for (int v = 1; v <= 10; v++)
		record(st, v, 100);
	flush_all(st, db);
	for (int v = 1; v <= 3; v++)
		record(st, v, 100);   /* 300 views not yet flushed ... */

	kit_store_restart(st);   /* ... are gone */

	lt_expect_int_hint(flush_views(st, db, 100), 0, "views flushed from a store just restarted", "flush");
	lt_expect_int_hint(db_total(t), 1000, "views in the database after the restart (1000 flushed before it)",
	                   "flush");
	record(st, 4, 5);
	flush_all(st, db);
	lt_expect_int_hint(db_total(t), 1005, "views in the database after 5 more views and a flush", "flush");
	kit_store_free(st);
}

/* ---- §6 the flush loop ---- */

/* What a wait looks at. */
struct watch {
	struct labtest *t;
	struct flusher *f;
	struct kit_store *st;
	struct flusher_stats since;   /* the flusher's stats when the wait began */
};

/* Wait (polling) until cond holds, for at most a generous while. */
static bool eventually(const struct watch *w, bool (*cond)(const struct watch *))
{
	for (int i = 0; i < 5000; i++) {
		if (cond(w))
			return true;
		util_sleep_ns(2000000);
	}
	return false;
}

/* Views the flusher check records: fewer on Redis, a round trip each. */
static int64_t flusher_views(struct kit_store *st)
{
	return kit_store_is_redis(st) ? 1000 : 10000;
}

static bool all_written(const struct watch *w)
{
	struct flusher_stats s;
	flusher_stats(w->f, &s);
	return s.views >= flusher_views(w->st);
}

static bool ten_written(const struct watch *w)
{
	struct flusher_stats s;
	flusher_stats(w->f, &s);
	return s.views >= 10;
}

/* Two flushes refused, or three flushes made (while the table is away,
 * every flush that still has views to write is refused). */
static bool two_refused(const struct watch *w)
{
	struct flusher_stats s;
	flusher_stats(w->f, &s);
	return s.failed >= 2 || s.flushes >= 3;
}

/* The 50 views are in the database, or nowhere left to come from, or the
 * flusher has made three flushes that the database accepted since the
 * table came back (w->since: its stats then). Views put back by the
 * refused flushes are written by the first of those; a flusher that
 * dropped them writes nothing in all three, and the check says so at once
 * rather than when the wait gives up. */
static bool fifty_in_or_store_empty(const struct watch *w)
{
	int64_t left = 0;
	struct flusher_stats s;
	if (db_total(w->t) >= 50)
		return true;
	flusher_stats(w->f, &s);
	if ((s.flushes - w->since.flushes) - (s.failed - w->since.failed) >= 3)
		return true;
	assert_int_equal(kit_store_dbsize(w->st, &left), 0);
	return left == 0;
}

static void flusher__flushes_on_its_own(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);   /* the flusher's connection */
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	struct stmts s = { 0 };
	struct flusher_stats fs = { 0 };
	schema(t);
	kit_db_set_hook(own, count_stmts, &s);
	int rc = start_flusher(&f, st, own, 2, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);

	int64_t want = flusher_views(st);
	record(st, 1, (int)(want * 2 / 5));
	record(st, 2, (int)(want * 3 / 5));
	bool in = eventually(&(struct watch){ .t = t, .f = f, .st = st }, all_written);
	flusher_stats(f, &fs);
	/* Ten views more, flushed by the thread after that snapshot: it
	 * counts them under its mutex, and nothing of this thread's takes that
	 * mutex before the call below (the database is watched instead). */
	record(st, 3, 10);
	for (int i = 0; i < 5000 && db_total(t) < want + 10; i++)
		util_sleep_ns(1000000);
	/* the flusher's thread may hold its mutex at any moment (woken, not yet
	 * unlocked): a trylock then answers EBUSY. The stats never go back,
	 * and a copy made without the mutex then is a data race with the
	 * thread's counting (the race pass of lab check sees it). */
	struct flusher_stats busy = { -1, -1, -1 };
	lt_lock_busy_trylocks(1);
	flusher_stats(f, &busy);
	lt_lock_busy_trylocks(0);
	rc = stop_flusher(f);

	lt_expect(in, "flush-loop", "the flusher's stats never reached %" PRId64 " views written "
	          "(database has %" PRId64 ")", want, db_total(t));
	lt_expect(fs.flushes >= 1, "flush-loop", "flusher_stats counts %" PRId64 " flushes", fs.flushes);
	lt_expect(busy.flushes >= fs.flushes && busy.views >= fs.views && busy.failed >= fs.failed,
	          "flush-loop", "flusher_stats said %" PRId64 " flushes and %" PRId64 " views, then, "
	          "asked while a pthread_mutex_trylock of it would find the mutex busy, %" PRId64
	          " flushes and %" PRId64 " views: what the flusher has done never goes back. "
	          "\"Answers at once\" means it never waits for the database (the flush runs outside "
	          "the mutex), not that it may give up on a mutex held for a moment", fs.flushes,
	          fs.views, busy.flushes, busy.views);
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "flush-loop");
	lt_expect_int_hint(s.max_in_flight, 1, "statements the flusher ran at the same moment (most)",
	                   "one-at-a-time");
	lt_expect_int_hint(db_total(t), want + 10, "views in the database", "flush-loop");
	kit_db_close(own);
	kit_store_free(st);
}

/* Two flushers in one process (two stores, two connections: two tenants,
 * or two services in one binary): each flushes its own store, and
 * stopping one leaves the other flushing. What a flusher keeps (its stop
 * flag, its deadline, its stats) is its own, in its struct: a static one
 * is every flusher's. */
static int both_running;   /* started threads running with both flushers up */

/* The 10 views are written, or the second flusher's thread has ended as
 * well as the first's (then no wait will bring them). */
static bool b_in(const struct watch *w)
{
	struct flusher_stats s;
	flusher_stats(w->f, &s);
	return s.views >= 10 || lt_thread_running() <= both_running - 2;
}

static void flusher__two_flushers_each_its_own(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own[2] = { labtest_connect(t), labtest_connect(t) };
	struct kit_store *st[2] = { kit_store_new(), kit_store_new() };
	struct flusher *f[2] = { NULL, NULL };
	assert_non_null(st[0]);
	assert_non_null(st[1]);
	schema(t);
	assert_int_equal(kit_store_set(st[1], VIEWS_TOKEN, 1000000), 0);
	for (int i = 0; i < 2; i++) {
		int rc = start_flusher(&f[i], st[i], own[i], 5, 100);
		lt_expect(rc == 0 && f[i], "flush-loop", "start_flusher returned %d", rc);
	}
	both_running = lt_thread_running();
	int rc = stop_flusher(f[0]);
	lt_expect_int_hint(rc, 0, "stop_flusher of the first of two flushers", "stop");
	record(st[1], 22, 10);
	bool in = eventually(&(struct watch){ .t = t, .f = f[1], .st = st[1] }, b_in);
	struct flusher_stats s1;
	flusher_stats(f[1], &s1);
	in = in && s1.views >= 10;
	rc = stop_flusher(f[1]);
	int64_t v22 = db_views(t, 22);
	for (int i = 0; i < 2; i++) {
		kit_db_close(own[i]);
		kit_store_free(st[i]);
	}
	lt_expect(in, "flush-loop", "two flushers of two stores, the first stopped: the second's "
	          "thread %s the 10 views recorded after that (its stats say %" PRId64 " flushes, %"
	          PRId64 " views): stopping one flusher stopped the other. Is the stop flag (or what "
	          "the thread waits on) a static, shared by every flusher? Keep it in struct flusher",
	          lt_thread_running() <= both_running - 2 ? "ended as well, without writing" :
	          "did not write within 10 s", s1.flushes, s1.views);
	lt_expect_int_hint(rc, 0, "stop_flusher of the second flusher", "stop");
	lt_expect_int_hint(v22, 10, "views of video 22 (the second store's) in the database", "stop");
}

static void flusher__stop_flushes_the_rest(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	schema(t);
	record(st, 1, 60);
	record(st, 2, 40);
	int rc = start_flusher(&f, st, own, 1000, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);

	rc = stop_flusher(f);   /* long before the first tick */

	lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");
	lt_expect_int_hint(db_total(t), 100, "views in the database after stop_flusher (100 recorded)", "stop");
	kit_db_close(own);
	kit_store_free(st);
}

/* stop_flusher ends the thread start_flusher started: joined (or detached
 * and returned) before it returns, so nothing of the flusher runs on, or
 * lingers as a thread nobody reaps, once stop_flusher has freed it. The
 * harness sees every pthread_create, pthread_join and pthread_detach of
 * the code under test (tests/harness/threads.h), so this holds whatever
 * the timing: a stop right after the start (the thread may not have run
 * yet), and a stop after the thread has flushed. */
static void flusher__stop_joins_the_thread(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	schema(t);
	int base = lt_thread_unreaped();
	for (int round = 0; round < 2; round++) {
		struct flusher *f = NULL;
		record(st, 1, 10);
		int rc = start_flusher(&f, st, own, round == 0 ? 1000 : 2, 100);
		lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
		if (round == 1)
			eventually(&(struct watch){ .t = t, .f = f, .st = st }, ten_written);
		rc = stop_flusher(f);
		lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");
		int left = lt_thread_settle(1000) - base;
		lt_expect(left == 0, "stop",
		          "%s, stop_flusher returned with %d thread(s) the code started neither joined nor "
		          "detached-and-finished: the flusher's thread is still running or was never "
		          "reaped (does stop_flusher pthread_join it?)",
		          round == 0 ? "stopped at once after start_flusher" : "stopped after the thread flushed",
		          left);
		if (left != 0)
			break;
	}
	lt_expect_int_hint(db_total(t), 20, "views in the database after both stops (20 recorded)", "stop");
	kit_db_close(own);
	kit_store_free(st);
}

/* Stop must not wait out the interval: a flusher sleeping for its whole
 * 2 s interval would take that long to notice. */
static void flusher__stop_is_prompt(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	schema(t);
	record(st, 1, 10);
	int rc = start_flusher(&f, st, own, 2000, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	util_sleep_ns(50 * 1000000LL);   /* the thread is waiting now */

	int64_t t0 = util_now_ns();
	rc = stop_flusher(f);
	double ms = (double)(util_now_ns() - t0) / 1e6;
	lt_expect(ms < 1000, "stop", "stop_flusher took %.0f ms with a 2000 ms interval: it must wake "
	          "the thread, not wait for its sleep to end", ms);
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");
	lt_expect_int_hint(db_total(t), 10, "views in the database after stop_flusher (10 recorded)", "stop");
	kit_db_close(own);
	kit_store_free(st);
}

/* 50 views of video 5 and a 2 ms flusher started while video_counts is
 * away; returns once it has been refused twice (or flushed three times)
 * and the table is back. */
static struct flusher *refused_flusher(struct labtest *t, struct kit_store *st, struct kit_db *own,
                                       struct flusher_stats *refused)
{
	struct flusher *f = NULL;
	schema(t);
	record(st, 5, 50);
	table_away(t);
	int rc = start_flusher(&f, st, own, 2, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	eventually(&(struct watch){ .t = t, .f = f, .st = st }, two_refused);
	if (refused)
		flusher_stats(f, refused);
	table_back(t);
	return f;
}

static int64_t ts_diff(struct timespec a, struct timespec b);
static bool wait_on_monotonic(const struct lt_wait *w);

static void flusher__retries_after_a_refusal(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher_stats fs = { 0 };
	long n = lt_lock_waits(), s0 = lt_thread_starts();
	struct flusher *f = refused_flusher(t, st, own, NULL);
	int rc;
	struct watch back = { .t = t, .f = f, .st = st };
	flusher_stats(f, &back.since);
	eventually(&back, fifty_in_or_store_empty);
	flusher_stats(f, &fs);
	rc = stop_flusher(f);

	/* every wait of the 2 ms flusher, through the refusals and after
	 * them, ends at most one interval after it began (the last 256 are
	 * kept: tests/harness/locks.h) */
	int64_t longest = 0;
	for (long i = n; i < lt_lock_waits(); i++) {
		struct lt_wait w;
		if (!lt_lock_wait(i, &w) || w.thread < s0 || w.spurious)
			continue;
		int64_t ahead = ts_diff(w.deadline, wait_on_monotonic(&w) ? w.began_mono : w.began_real);
		if (ahead > longest)
			longest = ahead;
	}
	lt_expect(longest <= 2000000 + 100000, "flush-loop", "a pthread_cond_timedwait of the 2 ms "
	          "flusher, which saw its flushes refused, was given a deadline %.3f ms after it began: "
	          "a refused flush is retried at the next tick (§6), one interval on, not after a longer "
	          "pause (a back-off that doubles the wait leaves the views in the store longer at every "
	          "refusal, and one never brought back keeps the flusher slow once the database is back)",
	          (double)longest / 1e6);

	lt_expect_int_hint(db_total(t), 50, "views in the database once the table came back and the flusher stopped",
	                   "put-back");
	lt_expect(fs.failed >= 2, "flush-loop", "flusher_stats counts %" PRId64 " failed flushes"
	          " while the table was away (expected 2 or more)", fs.failed);
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "flush-loop");
	kit_db_close(own);
	kit_store_free(st);
}

/* A refused flush waits for the next tick too: no retries back to back
 * (views.h: a failed flush is counted and retried at the next tick). A
 * 100 ms flusher with the table away for about 0.6 s makes at most one
 * flush_views call per interval that passed, and one more: the bound
 * counts the intervals that really passed, so a slow machine gives fewer
 * calls, never more. A flusher that tries a refused flush three times at
 * once makes about three times as many. */
static void flusher__a_refused_flush_waits_for_the_next_tick(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	struct flusher_stats fs = { 0 };
	schema(t);
	record(st, 5, 50);
	table_away(t);
	int64_t t0 = util_now_ns();
	int rc = start_flusher(&f, st, own, 100, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	util_sleep_ns(600 * 1000000LL);
	flusher_stats(f, &fs);
	int64_t ticks = (util_now_ns() - t0) / (100 * 1000000LL);
	table_back(t);
	rc = stop_flusher(f);
	lt_expect(fs.flushes >= 2 && fs.flushes <= ticks + 1 && fs.failed == fs.flushes, "flush-loop",
	          "a 100 ms flusher whose every flush the database refused made %" PRId64 " flushes "
	          "(%" PRId64 " failed) in %" PRId64 " intervals: expected at least 2 and at most one "
	          "per interval and one more, all failed. A refused flush is retried at the next tick "
	          "(views.h), not again at once: a database that just refused (a lock timeout, a "
	          "failover) gets flushes back to back, each putting the views back and draining them "
	          "again", fs.flushes, fs.failed, ticks);
	lt_expect_int_hint(rc, 0, "stop_flusher's result once the table was back", "flush-loop");
	lt_expect_int_hint(db_total(t), 50, "views in the database once the table came back and the "
	                   "flusher stopped", "put-back");
	kit_db_close(own);
	kit_store_free(st);
}

/* ---- §5b exactly once: the flush token ---- */

/* The check whose setup wanted PostgreSQL with Redis and found no Redis. */
static const struct labtest *no_redis;

/* Views parked in the store (every "views:park:<token>" listed in
 * "views:parked") whose token the database has not applied (all of them
 * when t is NULL); *batches gets how many parks there are. */
static int64_t parked_total(struct labtest *t, struct kit_store *st, int *batches)
{
	char *tokens[64];
	int ntok = 0;
	int64_t sum = 0;
	assert_int_equal(kit_store_smembers(st, VIEWS_PARKED, 64, tokens, &ntok), 0);
	*batches = ntok;
	for (int i = 0; i < ntok; i++) {
		char park[64];
		char *members[VIEWS_MAX_BATCH];
		int n = 0;
		snprintf(park, sizeof park, VIEWS_PARK_PREFIX "%s", tokens[i]);
		assert_int_equal(kit_store_smembers(st, park, VIEWS_MAX_BATCH, members, &n), 0);
		char sql[128];
		snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM applied_flushes WHERE token = %lld",
		         strtoll(tokens[i], NULL, 10));
		if (t && labtest_int(t, sql) > 0)
			for (int k = 0; k < n; k++)
				members[k][0] = '\0';   /* in the database already */
		for (int k = 0; k < n; k++) {
			const char *eq = strchr(members[k], '=');
			if (eq)
				sum += strtoll(eq + 1, NULL, 10);
			free(members[k]);
		}
		free(tokens[i]);
	}
	return sum;
}

/* Make the flusher die at failpoint fp in one flush_views. On a real Redis
 * the flusher is a child process, killed for real (SIGKILL) with its own
 * connections; on the in-process store, which would die with it, the same
 * failpoint returns at once in this process and the flusher's connection
 * is closed, as the kernel would close it. Returns 1 when it died there. */
static int crash_flusher(struct labtest *t, struct kit_store *st, const char *fp)
{
	kit_fp_clear();
	if (!kit_store_is_redis(st)) {
		struct kit_db *own = labtest_connect(t);
		kit_fp_set(fp, KIT_FP_ERROR, 1);
		flush_views(st, own, 100);
		long hits = kit_fp_count(fp);
		kit_fp_clear();
		kit_db_close(own);   /* an open transaction dies with it */
		return hits > 0;
	}
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct kit_store *cst;
		struct kit_db *cdb;
		if (kit_store_open(&cst, t->store_url) != 0 || kit_db_open(&cdb, t->url) != 0)
			_exit(2);
		kit_fp_set(fp, KIT_FP_KILL, 1);
		flush_views(cst, cdb, 100);
		_exit(3);   /* never reached the failpoint */
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

#define CRASH_VIDEOS 10
#define CRASH_VIEWS 50   /* of each video */

/* Record, crash the flusher at fp, and require: the failpoint was reached;
 * database + deltas + parked = recorded, exactly; after the next flush
 * (which recovers what is parked) and one more round, database =
 * recorded and nothing is parked. refuse: the table is away during the
 * crashing flush (so that it is refused and puts the views back). */
static void crash_and_count(void **state, const char *fp, bool refuse)
{
	struct labtest *t = *state;
	if (t == no_redis) {
		no_redis = NULL;
		lt_skip("PostgreSQL with a real Redis: set HOTROW_REDIS_URL (export HOTROW_REDIS_URL=$(scripts/redis up))");
	}
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	const int64_t total = (int64_t)CRASH_VIDEOS * CRASH_VIEWS + 7;
	int batches = 0;
	schema(t);
	record(st, 1, 7);
	flush_all(st, db);   /* a flush applied before: its token is in the database */
	for (int v = 1; v <= CRASH_VIDEOS; v++)
		record(st, v, CRASH_VIEWS);
	if (refuse)
		table_away(t);

	int died = crash_flusher(t, st, fp);

	if (refuse)
		table_back(t);
	char what[200];
	lt_expect(died, "token", "the flusher never reached the failpoint \"%s\" (kit/failpoint.h): "
	          "call kit_fp_hit(\"%s\") where views.h says", fp, fp);
	int64_t parked = parked_total(t, st, &batches);
	snprintf(what, sizeof what, "views in the database + deltas + parked right after the flusher "
	         "died at %s (%d parked batches)", fp, batches);
	lt_expect_int_hint(db_total(t) + store_total(st, 1, CRASH_VIDEOS) + parked, total, what, "park");

	struct kit_db *next = labtest_connect(t);   /* the next flusher */
	int64_t r = flush_views(st, next, 100);
	lt_expect(r >= 0, "recover", "the first flush after the crash failed: %s", labtest_why(next));
	flush_all(st, next);
	kit_db_close(next);
	snprintf(what, sizeof what, "views in the database once a new flusher ran after the crash "
	         "at %s (%lld recorded)", fp, (long long)total);
	lt_expect_int_hint(db_total(t), total, what, "recover");
	lt_expect_int_hint(parked_total(NULL, st, &batches) + batches, 0,
	                   "parked views + parked batches left after recovery", "recover");
	kit_store_free(st);
}

/* The store goes away from its k-th command of a refused flush on, for
 * every k: a flush of 200 videos, more than a put-back that goes back a
 * few dozen at a time (each chunk a step of its own) takes in one step.
 * Once the store and the table are back, every view is counted once: a
 * put-back whose first chunk went back while the park still lists every
 * video counts that chunk twice. */
struct outage {
	int at;                 /* the store refuses from its at-th command on */
	atomic_int seen;        /* commands seen, by any thread */
};

static void store_gone_from_kth(void *arg, struct kit_store *st, const char *cmd,
                                const char *key, int rc)
{
	struct outage *o = arg;
	(void)cmd, (void)key, (void)rc;
	if (atomic_fetch_add(&o->seen, 1) + 1 == o->at)
		kit_store_refuse(st, -1);
}

static void flush__store_gone_mid_putback_of_200_videos(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	enum { BIG_BATCH = 200 };
	schema(t);
	int64_t total = 0;
	for (int k = 1; k <= 60; k++) {
		for (int v = 1; v <= BIG_BATCH; v++)
			record(st, v, 1);
		total += BIG_BATCH;
		table_away(t);
		struct outage o = { .at = k };
		kit_store_set_hook(st, store_gone_from_kth, &o);
		int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
		kit_store_set_hook(st, NULL, NULL);
		kit_store_refuse(st, 0);
		table_back(t);
		lt_expect(r < 0, "put-back", "a flush with video_counts away (and the store gone "
		          "from its command %d on) returned %" PRId64, k, r);
		int64_t after = flush_all(st, db);
		lt_expect(after >= 0 && db_total(t) == total, "put-back", "a refused flush of %d "
		          "videos with the store gone from its command %d on, then the flushes once "
		          "both were back: %" PRId64 " views in the database, %" PRId64 " recorded "
		          "(each step of the put-back is all or nothing, and the park lists only what "
		          "has not gone back: a put-back in chunks whose first went back while the "
		          "park still listed every video counts that chunk twice)", BIG_BATCH, k,
		          db_total(t), total);
		if (atomic_load(&o.seen) < k)
			break;              /* the flush made fewer than k commands */
	}
	kit_store_free(st);
}

static void token__crash_after_drain(void **state)
{
	crash_and_count(state, "flush-after-drain", false);
}

static void token__crash_before_commit(void **state)
{
	crash_and_count(state, "flush-before-commit", false);
}

static void token__crash_after_commit(void **state)
{
	crash_and_count(state, "flush-after-commit", false);
}

static void token__crash_mid_putback(void **state)
{
	crash_and_count(state, "flush-mid-putback", true);
}

/* The token is written in the flush's own transaction: after one flush,
 * applied_flushes has one row more, and the park is gone. */
static void token__recorded_with_the_upsert(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	int batches = 0;
	schema(t);
	record(st, 3, 5);

	int64_t r = flush_views(st, db, 100);

	lt_expect_int_hint(r, 5, "views flush_views says it wrote", "token");
	lt_expect_int_hint(labtest_int(t, "SELECT COUNT(*) FROM applied_flushes"), 1,
	                   "rows in applied_flushes after one flush", "token");
	/* views.h: a new store's "views:token" is set to the largest applied
	 * token + 1, and with none applied that is 0 + 1; the park's INCR then
	 * hands out 2 */
	lt_expect_int_hint(labtest_int(t, "SELECT COUNT(*) FROM applied_flushes WHERE token = 2"), 1,
	                   "rows for token 2 after the first flush of a new store and database "
	                   "(\"" VIEWS_TOKEN "\" set to 0 + 1, no token applied yet, then INCR)", "token");
	lt_expect_int_hint(parked_total(NULL, st, &batches) + batches, 0,
	                   "parked views + batches after a flush that committed", "park");
	kit_store_free(st);
}

/* The database commits the flush but its answer is lost: the flush must
 * report the failure and leave the batch parked, not put it back (it IS in
 * the database); the next flush asks applied_flushes and deletes the park.
 * A flush that puts the views back counts the batch twice. */
static void token__commit_reply_lost(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	int batches = 0;
	schema(t);
	for (int v = 1; v <= 5; v++)
		record(st, v, 20);

	kit_fp_set("db-commit-reply-lost", KIT_FP_ERROR, 1);
	int64_t r = flush_views(st, db, 100);
	kit_fp_set("db-commit-reply-lost", KIT_FP_OFF, 1);

	lt_expect(r < 0, "token", "flush_views returned %" PRId64 " although COMMIT's answer was "
	          "lost; return the database's error", r);
	lt_expect_int_hint(db_total(t) + store_total(st, 1, 5), 100,
	                   "database + deltas after a COMMIT that went in but answered an error "
	                   "(the batch is in the database: keep it parked, do not put it back)",
	                   "token");
	lt_expect(flush_all(st, db) >= 0, "token", "the next flush failed: %s", labtest_why(db));
	lt_expect_int_hint(db_total(t), 100, "views in the database once the next flush resolved "
	                   "the park", "token");
	lt_expect_int_hint(parked_total(NULL, st, &batches) + batches, 0,
	                   "parked views + batches after the next flush", "park");
	kit_store_free(st);
}

/* The same COMMIT, gone in, with the connection broken before its answer
 * (the failpoint db-commit-conn-lost breaks it for real on the servers:
 * kit_db_connected() says 0, the server closes the session). A dead
 * connection says nothing about whether the COMMIT went in: the batch
 * stays parked, and the next flush, on a new connection, finds its token
 * applied. A flush that puts the batch back when the connection is gone
 * ("the transaction died with it") counts every view twice. */
static void token__commit_connection_lost_keeps_the_park(void **state)
{
	struct labtest *t = *state;
	struct kit_store *st = new_store(state);
	int batches = 0;
	schema(t);
	for (int v = 1; v <= 5; v++)
		record(st, v, 20);
	struct kit_db *conn = labtest_connect(t);
	kit_fp_clear();
	kit_fp_set("db-commit-conn-lost", KIT_FP_ONCE, 1);
	int64_t r = flush_views(st, conn, 100);
	int hits = kit_fp_count("db-commit-conn-lost");
	kit_fp_clear();
	int alive = kit_db_connected(conn);
	kit_db_close(conn);
	lt_expect(hits >= 1, "token", "flush_views of 5 dirty videos sent no COMMIT through "
	          "kit_db_commit or kit_db_exec (returned %" PRId64 ")", r);
	lt_expect(r < 0, "token", "flush_views returned %" PRId64 " although its connection broke "
	          "before COMMIT's answer; return the database's error", r);
	lt_expect(t->engine == KIT_DB_SQLITE || !alive, NULL, "the failpoint left the connection up");
	lt_expect_int_hint(db_total(t) + store_total(st, 1, 5), 100,
	                   "database + deltas after a COMMIT that went in while the connection broke "
	                   "(a dead connection does not say the transaction died: the server may "
	                   "have committed first, so the batch stays parked; kit_db_connected() is "
	                   "no reason to put it back)", "token");
	lt_expect(flush_all(st, labtest_db(t)) >= 0, "token", "the next flush failed: %s",
	          labtest_why(labtest_db(t)));
	lt_expect_int_hint(db_total(t), 100, "views in the database once the next flush, on "
	                   "another connection, resolved the park", "token");
	lt_expect_int_hint(parked_total(NULL, st, &batches) + batches, 0,
	                   "parked views + batches after the next flush", "park");
	kit_store_free(st);
}

/* PostgreSQL with a real Redis as the store (HOTROW_REDIS_URL); without
 * one the check skips (fails with HOTROW_REQUIRE_REDIS=1). */

static int setup_pg_redis(void **state)
{
	static int seq;
	const char *url = getenv("HOTROW_REDIS_URL"), *req = getenv("HOTROW_REQUIRE_REDIS");
	if ((!url || !*url) && req && !strcmp(req, "1")) {
		print_error("Redis is required (HOTROW_REQUIRE_REDIS=1) but HOTROW_REDIS_URL is unset\n");
		return -1;
	}
	int rc = labtest_setup_pg(state);
	if (rc != 0 || *state == NULL)
		return rc;
	struct labtest *t = *state;
	if (url && *url)
		snprintf(t->store_url, sizeof t->store_url, "%s?ns=lt-%ld-pg%d", url, (long)getpid(), ++seq);
	else
		no_redis = t;
	return 0;
}

/* The crash checks: in-process on every database, killed for real with
 * a real Redis on SQLite and PostgreSQL. */
#define CRASH_ALL(f) \
	LABTEST_ALL(f), STORE_REDIS(f), \
	{ #f "/postgres+redis", f, setup_pg_redis, labtest_teardown, NULL }

/* ---- the mistake classes: every step failing, edges, a long stop ---- */

/* views of video `video` put in the store as record_view would leave them,
 * n at once (for counts past what a check can record one by one) */
static void planted_views(struct kit_store *st, int64_t video, int64_t n)
{
	char key[64], id[24];
	snprintf(key, sizeof key, VIEWS_DELTA_PREFIX "%" PRId64, video);
	snprintf(id, sizeof id, "%" PRId64, video);
	assert_int_equal(kit_store_set(st, key, n), 0);
	assert_int_equal(kit_store_sadd(st, VIEWS_DIRTY, id, NULL), 0);
}

/* What a drain returns, entry by entry: with max = 1 one video and its
 * exact count; a dirty video whose delta is 0 is left out; the rest
 * comes out whole in the next drain, each video once. */
static void drain__returns_exactly_the_dirty_deltas(void **state)
{
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 0;
	record(st, 6, 2);
	record(st, 7, 3);
	planted_views(st, 5, 0);   /* dirty, nothing to take */

	lt_expect(drain_views(st, 1, out, &n) == 0, "drain", "drain_views(max 1) failed");
	lt_expect(n <= 1, "drain-limit", "drain_views(max 1) took %d videos", n);
	int64_t seen[8] = { 0 };
	bool returned[8] = { false };
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < n; i++) {
			int64_t v = out[i].video_id;
			lt_expect(v >= 5 && v <= 7 && !returned[v], "drain",
			          "a drain returned video %" PRId64 " (%" PRId64 " views): not one of the dirty "
			          "videos 5, 6, 7, or one already returned", v, out[i].n);
			returned[v] = true;
			seen[v] = out[i].n;
		}
		n = 0;
		lt_expect(drain_views(st, VIEWS_MAX_BATCH, out, &n) == 0, "drain", "drain_views failed");
	}
	lt_expect(!returned[5], "drain", "video 5 was returned with %" PRId64 " views: a dirty video "
	          "whose delta is 0 is left out", seen[5]);
	lt_expect(seen[6] == 2 && seen[7] == 3, "drain", "the drains returned %" PRId64 " and %" PRId64
	          " views for videos 6 and 7, expected 2 and 3", seen[6], seen[7]);
	kit_store_free(st);
}

/* views.h: only a zero delta is left out. A delta below zero (views
 * taken back with DECRBY, a bot's views removed before the flush) is
 * views owed to the database too: a drain or a park that keeps only
 * deltas above zero ("n > 0") GETDELs it and throws it away. Video 8 at
 * -4 and video 9 at 2, and deltas past what an int holds, video 10 at
 * 2^32 + 3 and video 11 at -(2^31 + 7) (a count kept in an int comes out
 * as 3, or wrapped), drained; then the same, parked. */
static void drain__takes_a_delta_below_zero(void **state)
{
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	const int64_t big = LT_PAST_UINT32 + 2, low = -(LT_PAST_INT32 + 7);
	for (int park = 0; park <= 1; park++) {
		int n = 0;
		planted_views(st, 8, -4);
		record(st, 9, 2);
		planted_views(st, 10, big);
		planted_views(st, 11, low);
		lt_expect(take(st, park, out, &n) == 0, "drain", "%s failed",
		          park ? "park_views" : "drain_views");
		int64_t got[4] = { 0, 0, 0, 0 };
		for (int i = 0; i < n; i++)
			if (out[i].video_id >= 8 && out[i].video_id <= 11)
				got[out[i].video_id - 8] = out[i].n;
		lt_expect(n == 4 && got[0] == -4 && got[1] == 2, "drain", "%s of video 8 at -4 and video "
		          "9 at 2 (and two more) returned %d video(s), %" PRId64 " and %" PRId64 " views; "
		          "expected all 4, -4 and 2 (views.h: only a delta of 0 is left out; a delta below "
		          "zero, views taken back with DECRBY, is owed to the database as well: is the "
		          "test n > 0 instead of n != 0, in C or in Lua?)", park ? "park_views" :
		          "drain_views", n, got[0], got[1]);
		lt_expect(got[2] == big && got[3] == low, "drain", "%s of video 10 at 2^32 + 3 and video "
		          "11 at -(2^31 + 7) returned %" PRId64 " and %" PRId64 " views (views.h: counts "
		          "are int64_t, exact past 2^31 and 2^32): is a delta kept in an int on the way, "
		          "or read with atoi?", park ? "park_views" : "drain_views", got[2], got[3]);
		lt_expect_int_hint(delta(st, 8), 0, "video 8's delta after the drain", "drain");
	}
	kit_store_free(st);
}

/* A flush fails at each of its database statements in turn: refused
 * before it runs, or run with its answer lost (the COMMIT's too). It
 * returns an error, and the flushes after it put every view in the
 * database exactly once: nothing lost, nothing doubled, with a count past
 * 2^32 among them. */
static int64_t parked_count(struct kit_store *st);

/* The k-th statement a flush sends (1-based), for flush__every_step_can_fail. */
struct kth_stmt {
	int k, seen;
	char sql[96];
};

static void kth_stmt_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct kth_stmt *s = arg;
	(void)t_ns;
	if ((ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START) && ++s->seen == s->k)
		snprintf(s->sql, sizeof s->sql, "%s", sql ? sql : "");
}

/* flush_views with its k-th statement failed as how says; ks names that
 * statement, and *fired says whether the flush sent that many. */
static int64_t flush_failing(struct kit_store *st, struct kit_db *db, int max, int how, int k,
                             struct kth_stmt *ks, bool *fired)
{
	*ks = (struct kth_stmt){ k, 0, "" };
	kit_db_set_hook(db, kth_stmt_hook, ks);
	lt_step_arm(how, k);
	int64_t r = flush_views(st, db, max);
	*fired = lt_step_disarm();
	kit_db_set_hook(db, NULL, NULL);
	return r;
}

static void flush__every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	schema(t);
	const int64_t big = LT_PAST_UINT32 + 2;

	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
		for (int k = 1; ; k++) {
			labtest_exec(t, "DELETE FROM video_counts; DELETE FROM applied_flushes");
			size_t blocks = lt_alloc_live();
			struct kit_store *st = new_store(state);
			record(st, 1, 3);
			record(st, 2, 5);
			planted_views(st, 9, big);
			struct kth_stmt ks;
			bool fired;
			int64_t r = flush_failing(st, db, 500, how, k, &ks, &fired);
			if (fired)
				lt_expect(r < 0, "put-back",
				          "statement %d of the flush %s, yet flush_views returned %" PRId64
				          " (an error was expected)", k, lt_step_what(how), r);
			/* views.h: a statement the database refuses (a lock wait that
			 * gave up too) puts the parked deltas back; only a failed
			 * COMMIT leaves its batch parked */
			if (fired && lt_step_refused(how) && strncmp(ks.sql, "COMMIT", 6) != 0 &&
			    strncmp(ks.sql, "END", 3) != 0)
				lt_expect(parked_count(st) == 0 && delta(st, 1) == 3 && delta(st, 2) == 5 &&
				          delta(st, 9) == big, "put-back", "statement %d of the flush (\"%.60s\") "
				          "%s: afterwards %" PRId64 " batch(es) are parked and the store holds "
				          "deltas of %" PRId64 ", %" PRId64 " and %" PRId64 " for videos 1, 2 and 9, "
				          "not 3, 5 and 2^32 + 3 put back (views.h: when the database refuses a "
				          "statement, the parked deltas go back into the store, as record_view "
				          "would have left them; only a failed COMMIT leaves the batch parked. Is "
				          "a %s kept parked for the next flush's recovery?)", k, ks.sql,
				          lt_step_what(how), parked_count(st), delta(st, 1), delta(st, 2),
				          delta(st, 9), how == LT_STEP_BUSY ? "lock wait" : "refusal");
			if (fired && how == LT_STEP_BUSY)
				lt_expect(r == KIT_DB_BUSY, "report-failure", "statement %d of the flush was "
				          "refused as a lock wait (KIT_DB_BUSY), yet flush_views returned %" PRId64
				          ": a refused flush returns the database's own code (views.h), so that "
				          "its caller can tell a lock wait, worth retrying soon, from a failure",
				          k, r);
			flush_all(st, db);
			lt_expect(db_views(t, 1) == 3 && db_views(t, 2) == 5 && db_views(t, 9) == big,
			          "put-back",
			          "statement %d of a flush %s, then flushes until nothing was left: the database "
			          "holds %" PRId64 ", %" PRId64 " and %" PRId64 " views of videos 1, 2 and 9, not "
			          "3, 5 and 2^32 + 3 (%s)", k, lt_step_what(how), db_views(t, 1), db_views(t, 2),
			          db_views(t, 9), db_views(t, 9) != big && db_views(t, 9) % ((int64_t)1 << 32) == 3
			          ? "the count of video 9 lost its high bits: an int somewhere" :
			          db_total(t) > 8 + big ? "some views were written twice: a batch whose "
			          "COMMIT answer was lost was applied again" : "some views were lost");
			lt_expect_int_hint(store_total(st, 1, 9), 0, "views left in the store", "put-back");
			kit_store_free(st);
			if (fired) {
				char what[320];
				snprintf(what, sizeof what, "a flush whose statement %d was %s, the flushes "
				         "after it, and freeing the store (is every path out of flush_views "
				         "freeing what it allocated, not only success and KIT_DB_ERR?)", k,
				         lt_step_what(how));
				lt_alloc_expect_none_left(blocks, what);
			}
			if (!fired)
				break;
		}
	}
}

/* Ids and tokens past 2^32: video 2^32 + 5 gets its row, and a flush
 * whose token passes 2^32 records exactly that token. */
static void flush__ids_and_tokens_past_2_31(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	const int64_t video = LT_PAST_UINT32 + 4;
	schema(t);

	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, LT_PAST_UINT32 - 1), 0);   /* 2^32 */
	record(st, video, 2);
	record(st, 1, 1);
	flush_all(st, db);
	lt_expect_int_hint(db_views(t, video), 2, "views of video 2^32 + 5 (is an id kept in an int?)",
	                   "flush");
	lt_expect_int_hint(db_total(t), 3, "views in the database", "flush");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM applied_flushes WHERE token = 4294967297"), 1,
	                   "rows in applied_flushes for token 2^32 + 1, the one after 2^32 (is a token "
	                   "kept in an int?)", "token");
	kit_store_free(st);
}

/* More dirty videos than one flush takes: stop_flusher flushes until
 * nothing is dirty, not once. */
/* Views that arrive while stop_flusher flushes (the app still serving as
 * its flusher stops): at the first upsert of video_counts the hook records
 * one view of each of videos first .. first + 9. */
struct views_during_stop {
	struct kit_store *st;
	int64_t first;
	int fired;
};

static void record_during_upsert(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct views_during_stop *r = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START || r->fired || !lt_sql_is(sql, "INSERT") ||
	    !lt_sql_names(sql, "video_counts"))
		return;
	r->fired = 1;
	for (int64_t v = r->first; v < r->first + 10; v++)
		if (record_view(r->st, v) != 0)
			r->fired = -1;
}

static void flusher__stop_takes_more_than_one_batch(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	schema(t);
	for (int v = 1; v <= 10; v++)
		record(st, v, 2);
	struct stmts s = { 0 };
	kit_db_set_hook(own, count_stmts, &s);
	int rc = start_flusher(&f, st, own, 60000, 3);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);

	rc = stop_flusher(f);   /* 10 videos, 3 per flush: four flushes */
	kit_db_set_hook(own, NULL, NULL);

	lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");
	lt_expect(s.writes == 4, "stop", "stop_flusher of a flusher started with max = 3 wrote 10 dirty "
	          "videos in %d upsert(s); 4 expected (3 + 3 + 3 + 1): does the flusher pass its own max "
	          "to flush_views, or a batch size of its own?", (int)s.writes);
	lt_expect_int_hint(db_total(t), 20, "views in the database after stop_flusher: 10 videos, "
	                   "3 taken per flush (one last flush is not enough)", "stop");
	lt_expect_int_hint(store_total(st, 1, 10), 0, "views left in the store", "stop");

	/* "until nothing is dirty", however many flushes that takes: 150
	 * videos one per flush is 150 flushes (a stop that gives up after a
	 * round number of them, so as never to spin, leaves the rest dirty) */
	for (int v = 101; v <= 250; v++)
		record(st, v, 1);
	rc = start_flusher(&f, st, own, 60000, 1);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	rc = stop_flusher(f);
	int64_t left = -1;
	assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &left), 0);
	lt_expect(rc == 0 && left == 0 && db_total(t) == 170, "stop", "stop_flusher of a flusher "
	          "started with max = 1, 150 videos dirty, returned %d and left %" PRId64 " video(s) "
	          "dirty (the database has %" PRId64 " of the 170 views): it must flush until nothing "
	          "is dirty or a flush fails (§6), not a fixed number of times", rc, left,
	          db_total(t));

	/* "until nothing is dirty", not until what was dirty when the stop
	 * began is gone: 10 videos dirty, max 3, and 10 more views arrive
	 * during the stop's first upsert (a stop that counts the dirty videos
	 * once and runs that many batches leaves them in the store) */
	for (int v = 301; v <= 310; v++)
		record(st, v, 1);
	struct views_during_stop during = { st, 311, 0 };
	rc = start_flusher(&f, st, own, 60000, 3);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	kit_db_set_hook(own, record_during_upsert, &during);
	rc = stop_flusher(f);
	kit_db_set_hook(own, NULL, NULL);
	left = -1;
	assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &left), 0);
	lt_expect(during.fired == 1, NULL, "the views recorded during stop_flusher's first upsert "
	          "(%d: 0 = no upsert seen, -1 = record_view failed)", during.fired);
	lt_expect(rc == 0 && left == 0 && db_total(t) == 190, "stop", "stop_flusher of a flusher "
	          "started with max = 3, 10 videos dirty and 10 more views recorded during its first "
	          "upsert, returned %d and left %" PRId64 " video(s) dirty (the database has %" PRId64
	          " of the 190 views): views.h says it flushes until nothing is dirty, so a view "
	          "recorded while it stops is written too (does it count the dirty videos once, "
	          "before its first flush, and stop after that many batches?)", rc, left,
	          db_total(t));
	kit_db_close(own);
	kit_store_free(st);
}

/* A stop whose rest takes long: 40 dirty videos, a flusher started with
 * max 1 (60 s interval: its thread never flushes), and a db hook that
 * holds each upsert of video_counts 0.2 s (a slow disk, a server under
 * load), so stop_flusher's 40 flushes take about 8 s. views.h: it
 * flushes "until nothing is dirty or a flush fails", however long that
 * takes; "prompt" (§6) is about not waiting out the interval, not about
 * leaving views behind. A stop that gives up after a couple of seconds
 * returns 0 with videos still dirty and no flusher left to write them.
 * Caught: a time cap shorter than this stop (anything up to about 8 s,
 * on a machine however fast, since the sleeps are the stop's length),
 * and a cap on rounds under 40 (flusher__stop_takes_more_than_one_batch
 * catches those under 150). Not caught: a time cap longer than this
 * stop (10 s, a minute), which only a check that runs past it could
 * see, nor one that lapses on a slow machine only; a cap that returns
 * an error instead of 0 is caught (no flush failed here). */
struct slow_upserts {
	int64_t hold_ns;
	int seen;
};

static void slow_upsert(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct slow_upserts *s = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START || !lt_sql_is(sql, "INSERT") || !lt_sql_names(sql, "video_counts"))
		return;
	s->seen++;
	struct timespec d = { s->hold_ns / 1000000000, s->hold_ns % 1000000000 };
	while (nanosleep(&d, &d) != 0 && errno == EINTR)
		;
}

static void flusher__stop_flushes_the_rest_however_long(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	enum { SLOW_VIDEOS = 40 };
	schema(t);
	for (int v = 1; v <= SLOW_VIDEOS; v++)
		record(st, v, 2);
	struct slow_upserts slow = { .hold_ns = 200 * 1000000LL };
	kit_db_set_hook(own, slow_upsert, &slow);
	int rc = start_flusher(&f, st, own, 60000, 1);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = stop_flusher(f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	kit_db_set_hook(own, NULL, NULL);
	int64_t left = -1;
	assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &left), 0);
	int64_t in_db = db_total(t), in_store = store_total(st, 1, SLOW_VIDEOS), parked = parked_count(st);
	lt_expect(rc == 0 && left == 0 && in_db == 2 * SLOW_VIDEOS && in_store == 0 && parked == 0, "stop",
	          "stop_flusher of a flusher started with max = 1, %d videos dirty (2 views each), "
	          "each upsert held 0.2 s by the database (%d upserts seen), returned %d after %.1f s "
	          "and left %" PRId64 " video(s) dirty, %" PRId64 " views in the store and %" PRId64
	          " batch(es) parked; the database has %" PRId64 " of the %d views. views.h: stop "
	          "flushes what is left until nothing is dirty or a flush fails, and returns 0 only "
	          "then, however long that takes. Likeliest cause: a stop that drains for a fixed "
	          "time (\"stop is prompt\": prompt means not waiting out the interval) or a fixed "
	          "number of rounds, then returns 0 with views only in the store and no flusher left "
	          "to write them", SLOW_VIDEOS, slow.seen, rc, (double)ts_diff(t1, t0) / 1e9, left,
	          in_store, parked, in_db, 2 * SLOW_VIDEOS);
	kit_db_close(own);
	kit_store_free(st);
}

/* ---- more of the mistake classes: the store failing, recovery, the loop ---- */

/* The store refuses its k-th command (a dropped connection), or runs it
 * and loses its reply, from the moment the hook is armed. */
struct store_step {
	int k, seen;
	bool lose;
};

static void store_step_hook(void *arg, struct kit_store *st, const char *cmd, const char *key, int rc)
{
	struct store_step *s = arg;
	(void)cmd, (void)key, (void)rc;
	if (++s->seen == s->k - 1) {
		if (s->lose)
			kit_store_lose_replies(st, 1);
		else
			kit_store_refuse(st, 1);
	}
}

static void store_step_arm(struct kit_store *st, struct store_step *s)
{
	s->seen = 0;
	if (s->k == 1) {
		if (s->lose)
			kit_store_lose_replies(st, 1);
		else
			kit_store_refuse(st, 1);
	}
	kit_store_set_hook(st, store_step_hook, s);
}

/* Disarm; true when the k-th command was reached (it failed). */
static bool store_step_disarm(struct kit_store *st, struct store_step *s)
{
	kit_store_set_hook(st, NULL, NULL);
	kit_store_refuse(st, 0);
	kit_store_lose_replies(st, 0);
	return s->seen >= s->k;
}

/* Parks a batch as a flusher that crashed right after its drain leaves
 * it: parked under a token, nothing in the database. */
static void crash_after_drain(struct kit_store *st, struct kit_db *db)
{
	kit_fp_clear();
	kit_fp_set("flush-after-drain", KIT_FP_ERROR, 1);
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	long hits = kit_fp_count("flush-after-drain");
	kit_fp_clear();
	lt_expect(r < 0 && hits == 1, "token", "flush_views with \"flush-after-drain\" armed returned "
	          "%" PRId64 " and hit it %ld times (expected an error, once)", r, hits);
}

static int64_t parked_count(struct kit_store *st)
{
	int64_t n = -1;
	assert_int_equal(kit_store_scard(st, VIEWS_PARKED, &n), 0);
	return n;
}

/* A flush on a store that has just restarted (no views:token: the first
 * park answers VIEWS_NO_TOKEN, the flush sets the counter from the
 * database and parks again), the store failing each of its commands in
 * turn, refused or run with the reply lost. Whatever the way out (the
 * second park's failure too), nothing the flush took is left allocated
 * once the store is freed (views.h: no call leaves a block allocated),
 * and the flushes after it write every view once. */
static void flush__store_failure_after_a_restart(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	schema(t);
	char seen[400] = "";
	int reached = 0;
	for (int lose = 0; lose <= 1 && !seen[0]; lose++) {
		for (int k = 1; k <= 40 && !seen[0]; k++) {
			labtest_exec(t, "DELETE FROM video_counts; DELETE FROM applied_flushes");
			labtest_exec(t, "INSERT INTO applied_flushes (token) VALUES (41)");
			size_t base = lt_alloc_live();
			struct kit_store *st = kit_store_new();
			assert_non_null(st);
			record(st, 1, 3);
			record(st, 2, 5);
			struct store_step s = { k, 0, lose != 0 };
			store_step_arm(st, &s);
			int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
			bool fired = store_step_disarm(st, &s);
			flush_all(st, db);
			int64_t v1 = db_views(t, 1), v2 = db_views(t, 2);
			kit_store_free(st);
			size_t now = lt_alloc_live();
			if (now != base || v1 != 3 || v2 != 5 || (!fired && r != 8))
				snprintf(seen, sizeof seen, "the store %s its command %d of a flush: flush_views "
				         "returned %" PRId64 "; after the flushes that followed and the store "
				         "freed, %zd block(s) are left allocated and videos 1 and 2 have %"
				         PRId64 " and %" PRId64 " views (expected none left, 3 and 5%s)",
				         lose ? "ran, and lost the reply of," : "refused", k, r,
				         (ssize_t)(now - base), v1, v2, fired ? "" : ", and 8 written");
			reached += fired;
			if (!fired)
				break;
		}
	}
	lt_expect(!seen[0], "alloc", "a store that had just restarted (no " VIEWS_TOKEN ": the "
	          "first park answers VIEWS_NO_TOKEN, the flush sets the counter and parks again) "
	          "with 8 views dirty: %s. Is what the flush took freed on every way out, the "
	          "second park's failure included?", seen);
	lt_expect(reached > 2, "flush", "a flush on a store that had just restarted ran %d store "
	          "command(s)", reached);
}

/* A flush whose store fails at each of its commands in turn (refused,
 * or run with the reply lost), with a batch parked by a crashed flush
 * before it. When it says it succeeded, it moved every view that was
 * waiting (the parked 7 and the 8 dirty), no fewer: a store error it
 * swallowed would leave some behind while it says all is well. When it
 * failed, the flushes after it put everything in the database: nothing
 * lost, nothing doubled, nothing left parked or dirty. */
static void flush__store_failure_at_every_step(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	schema(t);

	for (int lose = 0; lose <= 1; lose++) {
		for (int k = 1; k <= 40; k++) {
			struct kit_store *st = kit_store_new();
			assert_non_null(st);
			labtest_exec(t, "DELETE FROM video_counts; DELETE FROM applied_flushes");
			assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
			record(st, 4, 7);
			crash_after_drain(st, db);
			record(st, 1, 3);
			record(st, 2, 5);
			struct store_step s = { k, 0, lose };
			store_step_arm(st, &s);
			int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
			bool fired = store_step_disarm(st, &s);
			int64_t moved = db_total(t);
			lt_expect(r < 0 || (r == 15 && moved == 15), "put-back", "the store %s its command "
			          "%d of a flush (7 views parked, 8 dirty): flush_views returned %" PRId64
			          " with %" PRId64 " views in the database; a flush that succeeds says 15 and "
			          "moved 15, one whose store failed returns the error",
			          lose ? "ran, and lost the reply of," : "refused", k, r, moved);
			lt_expect(moved < 15 || r == 15, "put-back", "the store %s its command %d of a flush "
			          "(7 views parked, 8 dirty): both batches committed (15 views in the database) "
			          "but flush_views returned %" PRId64 ". Once COMMIT has returned, the views are "
			          "written: a park that cannot be deleted then is left for the next flush's "
			          "recovery, and the flush returns the views it wrote (flusher_stats counts what "
			          "it returns), not the store's error", lose ? "ran, and lost the reply of," :
			          "refused", k, r);
			flush_all(st, db);
			lt_expect(db_views(t, 1) == 3 && db_views(t, 2) == 5 && db_views(t, 4) == 7, "put-back",
			          "the store %s its command %d of a flush, then flushes until nothing was "
			          "left: videos 1, 2, 4 have %" PRId64 ", %" PRId64 ", %" PRId64 " views, "
			          "not 3, 5, 7 (%s)", lose ? "lost the reply of" : "refused", k,
			          db_views(t, 1), db_views(t, 2), db_views(t, 4),
			          db_total(t) > 15 ? "some counted twice" : "some lost");
			lt_expect(parked_count(st) == 0 && store_total(st, 1, 4) == 0, "put-back",
			          "after those flushes the store still has %" PRId64 " parked batches and %"
			          PRId64 " views", parked_count(st), store_total(st, 1, 4));
			/* no park left behind unlisted: the token's SREM and the
			 * park's DEL are one step, or the park outlives its listing
			 * and stays in the store for good */
			int64_t last = 0, left = 0, at = 0;
			assert_int_equal(kit_store_get(st, VIEWS_TOKEN, &last), 0);
			for (int64_t tok = 1; tok <= last && tok <= 1000 && left == 0; tok++) {
				char park[64];
				snprintf(park, sizeof park, VIEWS_PARK_PREFIX "%" PRId64, tok);
				assert_int_equal(kit_store_scard(st, park, &left), 0);
				at = tok;
			}
			lt_expect(left == 0, "put-back", "the store %s its command %d of a flush; after the "
			          "flushes that followed, nothing is listed in \"" VIEWS_PARKED "\" yet \""
			          VIEWS_PARK_PREFIX "%" PRId64 "\" still holds %" PRId64 " entries: a park's "
			          "delete (DEL the park, SREM its token) made as two commands, with the store "
			          "failing between them, leaves a park no recovery will ever see (make them one "
			          "script)", lose ? "lost the reply of" : "refused", k, at, left);
			kit_store_free(st);
			if (!fired)
				break;
		}
	}
}

/* A drain or a park that the store refuses takes nothing and says so:
 * an error, *n = 0 (views.h), and every view still there for the next. */
static void drain__refused_takes_nothing(void **state)
{
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	record(st, 3, 4);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	int n = 77;
	int64_t token = 77;

	kit_store_refuse(st, 1);
	int rc = drain_views(st, VIEWS_MAX_BATCH, out, &n);
	kit_store_refuse(st, 0);
	lt_expect(rc < 0 && n == 0, "drain", "drain_views on a store that refused it returned %d with "
	          "*n = %d; expected an error and *n = 0", rc, n);

	n = 77;
	kit_store_refuse(st, 1);
	rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	kit_store_refuse(st, 0);
	lt_expect(rc < 0 && n == 0, "token", "park_views on a store that refused it returned %d with "
	          "*n = %d; expected an error and *n = 0", rc, n);
	lt_expect_int_hint(drain_all(st), 4, "views drained after the refused drain and park", "drain");
	kit_store_free(st);
}

/* Recovery with tokens past 2^32 and a count past 2^32: a batch parked
 * under token 2^32 + 1 by a crashed flush is applied by the next flush,
 * under that very token, and counted in what that flush returns (the
 * recovered views and its own); its park is gone afterwards. A store
 * that restarted goes on after the largest token past 2^32 the database
 * has. */
static void recovery__tokens_and_counts_past_2_31(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	const int64_t big = LT_PAST_UINT32 + 2;   /* 2^32 + 3 */
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, LT_PAST_UINT32 - 1), 0);   /* 2^32 */
	planted_views(st, 19, big);   /* two digits: an id read in another base moves */
	crash_after_drain(st, db);
	record(st, 1, 2);

	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);

	lt_expect(r == big + 2, "token", "flush_views after a crash that left 2^32 + 3 views parked, "
	          "with 2 more dirty, returned %" PRId64 ", expected 2^32 + 5 = %" PRId64 ": the views "
	          "a flush recovers count in what it returns", r, big + 2);
	lt_expect_int_hint(db_views(t, 19), big, "views of video 19 (2^32 + 3 parked)", "token");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM applied_flushes WHERE token = 4294967297"),
	                   1, "rows in applied_flushes for token 2^32 + 1, the parked batch's (is a "
	                   "token read back from the store kept in an int?)", "token");
	int64_t gone = -1;
	assert_int_equal(kit_store_scard(st, VIEWS_PARK_PREFIX "4294967297", &gone), 0);
	lt_expect(gone == 0 && parked_count(st) == 0, "token", "after the recovery the park of token "
	          "2^32 + 1 holds %" PRId64 " entries and %" PRId64 " tokens are listed as parked; a resolved park is deleted",
	          gone, parked_count(st));

	kit_store_restart(st);   /* the store forgets its token counter */
	record(st, 2, 1);
	r = flush_views(st, db, VIEWS_MAX_BATCH);
	lt_expect_int_hint(r, 1, "views written by the first flush after the store restarted", "token");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM applied_flushes WHERE token > 4294967298"),
	                   1, "tokens above 2^32 + 2 (the largest applied) after a restart's flush: "
	                   "the new token goes on after the database's largest (in an int it "
	                   "starts over, below it)", "token");
	/* views.h: "views:token" set to the largest token in applied_flushes
	 * + 1 (2^32 + 3), then the park's INCR hands out 2^32 + 4 */
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM applied_flushes WHERE token = 4294967300"),
	                   1, "rows in applied_flushes for token 2^32 + 4 after a restart's flush: "
	                   "views.h sets \"" VIEWS_TOKEN "\" to the largest applied (2^32 + 2) + 1, "
	                   "and the park's INCR takes the next", "token");

	/* A token of 15 digits (10^14): its park is "views:park:100000000000000",
	 * 26 characters, by that whole name (a key built in 24 bytes is cut,
	 * and every token with the same first digits shares it; on Redis, a
	 * Lua script that writes the token with `..` names it
	 * "views:park:1e+14", Lua's 14 significant digits, while SADD lists
	 * the number in views:parked as "100000000000000"). */
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 99999999999999LL), 0);   /* 10^14 - 1 */
	planted_views(st, 23, 5);
	crash_after_drain(st, db);
	int64_t held = -1;
	assert_int_equal(kit_store_scard(st, VIEWS_PARK_PREFIX "100000000000000", &held), 0);
	lt_expect(held == 1, "token", "a crash after the drain under token 10^14 left %" PRId64
	          " entries in \"" VIEWS_PARK_PREFIX "100000000000000\", not video 23's one: views.h "
	          "names the park " VIEWS_PARK_PREFIX "<token>, the whole token in digits (is the key "
	          "built in a buffer too small for the prefix and 15 digits? In Lua, is the token "
	          "joined with `..`, which writes 10^14 as 1e+14? string.format('%%d', token) writes "
	          "every digit)", held);
	r = flush_views(st, db, VIEWS_MAX_BATCH);
	lt_expect_int_hint(r, 5, "views written by the flush that recovers token 10^14's batch",
	                   "token");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM applied_flushes WHERE token = 100000000000000"),
	                   1, "rows in applied_flushes for token 10^14", "token");
	lt_expect_int_hint(db_views(t, 23), 5, "views of video 23 (5 parked under token 10^14)",
	                   "token");
	lt_expect_int_hint(parked_count(st), 0, "tokens listed as parked after the recovery", "token");
	kit_store_free(st);
}

/* start_flusher's domain (views.h): interval_ms >= 1, max 1 ..
 * VIEWS_MAX_BATCH. Both edges of each are taken; one step past them is
 * refused with an error and *out = NULL. */
static void flusher__takes_every_edge_of_its_domain(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	schema(t);
	const struct { int interval, max; bool ok; } cases[] = {
		{ 1, 1, true }, { 60000, VIEWS_MAX_BATCH, true }, { 0, 100, false }, { -5, 100, false },
		{ 100, 0, false }, { 100, VIEWS_MAX_BATCH + 1, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct flusher *f = (struct flusher *)&cases[i];   /* must be overwritten */
		record(st, 1, 1);
		size_t base = lt_alloc_live();
		int rc = start_flusher(&f, st, own, cases[i].interval, cases[i].max);
		size_t left = lt_alloc_live() - base;
		if (cases[i].ok) {
			lt_expect(rc == 0 && f && f != (struct flusher *)&cases[i], "flush-loop",
			          "start_flusher(interval %d ms, max %d) returned %d; both are in its domain",
			          cases[i].interval, cases[i].max, rc);
			lt_expect_int_hint(stop_flusher(f), 0, "stop_flusher's result", "stop");
		} else {
			lt_expect(rc < 0 && f == NULL, "flush-loop", "start_flusher(interval %d ms, max %d) "
			          "returned %d with *out %s; expected an error and *out = NULL",
			          cases[i].interval, cases[i].max, rc, f ? "not NULL" : "NULL");
			lt_expect(rc >= 0 || left == 0, "flush-loop", "start_flusher(interval %d ms, max %d) "
			          "refused them and left %zu block(s) allocated: is the flusher allocated "
			          "before its arguments are checked, and not freed when they are refused? "
			          "(views.h: no call leaves a block allocated)", cases[i].interval,
			          cases[i].max, left);
			if (rc == 0 && f && f != (struct flusher *)&cases[i])
				stop_flusher(f);
		}
	}
	/* views.h: "NULL is fine": nothing to stop, nothing flushed, no error */
	lt_expect_int_hint(stop_flusher(NULL), 0, "stop_flusher(NULL)'s result", "stop");
	kit_db_close(own);
	kit_store_free(st);
}

/* views.h: "once every interval_ms (the first after one interval)". A
 * flusher with a 1.5 s interval has not flushed 0.2 s after it started
 * (a thread that does not wait, or waits on a deadline it never moved,
 * flushes at once), nor resolved the batch a crash left parked (a thread
 * that recovers as it starts writes it at once, and outside its stats);
 * its stats then count each view it wrote, past 2^32
 * too, and no flush that found nothing as failed. */
static void flusher__first_flush_after_one_interval(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	struct flusher_stats fs = { -1, -1, -1 };
	const int64_t big = LT_PAST_UINT32 + 2;
	schema(t);
	record(st, 8, 7);
	crash_after_drain(st, own);   /* a batch of 7 views parked, as a crash leaves it */
	planted_views(st, 9, big);
	int rc = start_flusher(&f, st, own, 1500, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	util_sleep_ns(200 * 1000000LL);
	flusher_stats(f, &fs);
	int64_t early = db_total(t), still_parked = parked_count(st);
	rc = stop_flusher(f);
	lt_expect(fs.flushes == 0 && early == 0 && still_parked == 1, "flush-loop", "0.2 s after "
	          "start_flusher with a 1500 ms interval and a batch of 7 views parked by a crash: %"
	          PRId64 " flushes, %" PRId64 " views in the database, %" PRId64 " batch(es) still "
	          "parked (expected 0, 0 and 1); the first flush comes after one interval, and so does "
	          "the recovery of what a crash left parked, which is part of a flush (flush_views "
	          "resolves it first, and flusher_stats counts what it writes)", fs.flushes, early,
	          still_parked);
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");

	planted_views(st, 9, big);
	record(st, 1, 1);
	rc = start_flusher(&f, st, own, 2, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	for (int i = 0; i < 5000; i++) {   /* at most 10 s; a few ms when the machine is quiet */
		flusher_stats(f, &fs);
		if (fs.flushes >= 3)
			break;
		util_sleep_ns(2000000);
	}
	rc = stop_flusher(f);
	lt_expect(fs.flushes >= 3 && fs.views == big + 1 && fs.failed == 0, "flush-loop",
	          "flusher_stats after %" PRId64 " flushes of 2^32 + 4 views: views %" PRId64 ", failed %"
	          PRId64 "; expected 2^32 + 4 = %" PRId64 " and 0, after 3 flushes or more (a flush with "
	          "nothing dirty returns 0 and has not failed, and it is a flush_views call all the "
	          "same: .flushes counts it; a count kept in an int loses its high bits)", fs.flushes,
	          fs.views, fs.failed, big + 1);
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");
	lt_expect_int_hint(db_total(t), 2 * big + 1 + 7, "views in the database", "flush-loop");
	kit_db_close(own);
	kit_store_free(st);
}

/* views.h: the thread "calls flush_views(st, db, max) once every
 * interval_ms". A flusher that drains the whole backlog in one tick
 * (flush after flush until nothing is dirty, "so the backlog never grows
 * past one interval") turns max into no bound at all: under a steady
 * stream of views it holds the hot rows' locks back to back. Five dirty
 * videos and max 1, a 200 ms flusher: between two of its COMMITs the
 * thread began a timed wait (the test binary sees each one,
 * tests/harness/locks.h), or, for a thread that sleeps some other way,
 * half an interval went by at least. */
struct tick_commits {
	atomic_bool on;
	atomic_int n;
	long waits[16];
	int64_t at[16];
};

static void commit_after_waits(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct tick_commits *c = arg;
	(void)sql;
	if (ev != KIT_DB_TX_COMMIT || !atomic_load(&c->on))
		return;
	int i = atomic_fetch_add(&c->n, 1);
	if (i < 16) {
		c->waits[i] = lt_lock_waits();
		c->at[i] = t_ns;
	}
}

static void flusher__one_flush_per_tick(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	struct tick_commits c = { .n = 0 };
	schema(t);
	for (int v = 1; v <= 5; v++)
		record(st, v, v);
	atomic_store(&c.on, true);
	kit_db_set_hook(own, commit_after_waits, &c);
	int rc = start_listed(&f, st, own, 200, 1);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	for (int i = 0; i < 5000 && atomic_load(&c.n) < 3; i++)   /* at most 10 s */
		util_sleep_ns(2000000);
	atomic_store(&c.on, false);
	rc = stop_listed(f);
	kit_db_set_hook(own, NULL, NULL);
	int n = atomic_load(&c.n) < 16 ? atomic_load(&c.n) : 16;
	lt_expect(n >= 2, "flush-loop", "a 200 ms flusher with 5 dirty videos committed %d flush(es) "
	          "in its first 10 s", n);
	for (int i = 1; i < n; i++)
		lt_expect(c.waits[i] > c.waits[i - 1] || c.at[i] - c.at[i - 1] >= 100 * 1000000LL,
		          "flush-loop", "the flusher's thread committed flushes %d and %d %.1f ms apart "
		          "with no timed wait between them: it flushes more than once a tick (200 ms). "
		          "views.h: one flush_views every interval_ms, with the max it was given; what is "
		          "left waits for the next tick (only stop_flusher flushes until nothing is "
		          "dirty)", i, i + 1, (double)(c.at[i] - c.at[i - 1]) / 1e6);
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");
	lt_expect_int_hint(db_total(t), 15, "views in the database after stop_flusher", "stop");
	kit_db_close(own);
	kit_store_free(st);
}

/* The store goes away from its k-th command after stop_flusher is
 * called, for every k (the last flush's drain, its put-back, the look at
 * what is left): stop_flusher returns 0 only when nothing is left dirty
 * or parked, and an error otherwise. A stop that takes a failed SCARD
 * ("how much is left?") for "nothing left" says it flushed everything
 * while views wait in the store, with no flusher left to write them. */
static void flusher__stop_says_what_is_left(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	schema(t);
	int64_t total = 0;
	for (int k = 1; k <= 40; k++) {
		for (int v = 1; v <= 5; v++)
			record(st, v, 2);
		total += 10;
		struct flusher *f = NULL;
		int rc = start_flusher(&f, st, own, 60000, 2);
		lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
		struct outage o = { .at = k };
		kit_store_set_hook(st, store_gone_from_kth, &o);
		rc = stop_flusher(f);
		kit_store_set_hook(st, NULL, NULL);
		kit_store_refuse(st, 0);
		int64_t left = store_total(st, 1, 5), parked = parked_count(st);
		lt_expect(rc < 0 || (left == 0 && parked == 0), "stop", "stop_flusher returned 0 with "
		          "the store gone from its command %d on, and %" PRId64 " views still dirty, %"
		          PRId64 " batches parked: a stop that takes a failed look at what is left "
		          "(SCARD) for \"nothing left\" reports success while views wait with no "
		          "flusher to write them; return the store's error", k, left, parked);
		lt_expect(flush_all(st, own) >= 0 && db_total(t) == total, "stop", "after the stop "
		          "with the store gone from its command %d on, and the flushes after it: %"
		          PRId64 " views in the database, %" PRId64 " recorded", k, db_total(t), total);
		if (atomic_load(&o.seen) < k)
			break;
	}
	kit_db_close(own);
	kit_store_free(st);
}

/* Counts the transactions a connection begins (KIT_DB_TX_BEGIN). */
static void count_begins(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)sql;
	(void)t_ns;
	if (ev == KIT_DB_TX_BEGIN)
		atomic_fetch_add((atomic_int *)arg, 1);
}

/* stop_flusher's last flush meets a refusing database: it returns the
 * error, and the views are still in the store (views.h), for a flush
 * once the table is back. */
static void flusher__stop_returns_the_last_flush_error(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	schema(t);
	record(st, 6, 5);
	int rc = start_flusher(&f, st, own, 60000, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	table_away(t);
	atomic_int begins = 0;
	kit_db_set_hook(own, count_begins, &begins);

	rc = stop_flusher(f);

	kit_db_set_hook(own, NULL, NULL);
	table_back(t);
	lt_expect(rc < 0, "stop", "stop_flusher returned %d although its last flush met a database "
	          "without video_counts; return that flush's error", rc);
	lt_expect(atomic_load(&begins) == 1, "stop", "stop_flusher began %d transactions when its "
	          "first flush met a database without video_counts (1 expected): views.h says flush "
	          "until nothing is dirty *or a flush fails*, then return that error; trying the "
	          "failed flush again in the stop (\"shutdown is the last chance\") makes the stop "
	          "slower and sends more to a database that is refusing, and the views are back in "
	          "the store for the next flusher anyway", atomic_load(&begins));
	lt_expect_int_hint(store_total(st, 6, 6), 5, "views of video 6 still in the store", "put-back");
	lt_expect_int_hint(flush_all(st, own), 5, "views written once the table was back", "put-back");

	/* The last flush's error, as it was: a lock wait that timed out
	 * (KIT_DB_BUSY: every statement refused so), then the store gone
	 * (KIT_STORE_DOWN). A caller that hears KIT_DB_ERR for both cannot
	 * tell "retry soon" from "the store is away". */
	struct lt_refusals busy;
	record(st, 6, 2);
	size_t blocks = lt_alloc_live();
	rc = start_flusher(&f, st, own, 60000, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	lt_refusals_arm(own, &busy, 1);
	rc = stop_flusher(f);
	lt_refusals_disarm(own);
	size_t left_busy = lt_alloc_live() - blocks;
	lt_expect(rc == KIT_DB_BUSY, "stop", "stop_flusher returned %d after its last flush met a "
	          "database that answered every statement KIT_DB_BUSY (%d, a lock wait that timed "
	          "out): return that flush's error as it came, not a code of your own", rc,
	          KIT_DB_BUSY);
	record(st, 6, 1);
	blocks = lt_alloc_live();
	rc = start_flusher(&f, st, own, 60000, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	kit_store_refuse(st, -1);
	rc = stop_flusher(f);
	kit_store_refuse(st, 0);
	size_t left_down = lt_alloc_live() - blocks;
	lt_expect(left_busy == 0 && left_down == 0, "stop", "a flusher started and stopped left %zu "
	          "block(s) allocated when its last flush met a database answering KIT_DB_BUSY, and "
	          "%zu when it met a store that refused every command: stop_flusher returns that "
	          "error and frees the flusher on that path too (views.h: no call leaves a block "
	          "allocated)", left_busy, left_down);
	lt_expect(rc == KIT_STORE_DOWN, "stop", "stop_flusher returned %d after its last flush met a "
	          "store that refused every command (KIT_STORE_DOWN, %d): return that flush's error "
	          "as it came", rc, KIT_STORE_DOWN);
	lt_expect_int_hint(flush_all(st, own), 3, "views written once the database and the store "
	                   "answered again", "put-back");
	kit_db_close(own);
	kit_store_free(st);
}

/* The position of video's row in the order the rows were inserted
 * (tests/harness/labtest.h). */
static int64_t insert_rank(struct labtest *t, int64_t video)
{
	return labtest_insert_rank(t, "video_counts", "video_id", video);
}

/* §5: the rows sorted by id before the upsert ("two batches that lock the
 * same rows in the same order cannot deadlock each other"). Eight videos,
 * ids past 2^31 and 2^32 among them, recorded out of order: one flush
 * writes their rows in ascending 64-bit id, whatever order the store
 * hands them over in. (The in-process store only: Redis keeps a small set
 * of integers sorted and hands it over in that order, so an unsorted
 * upsert would pass there by luck.) */
static void flush__rows_in_video_id_order(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	const int64_t ids[] = { 5, LT_PAST_UINT32, 7, LT_PAST_INT32 + 2, 3, LT_PAST_UINT32 + 8,
	                        LT_PAST_INT32 - 1, 4 };
	const int64_t sorted[] = { 3, 4, 5, 7, LT_PAST_INT32 - 1, LT_PAST_INT32 + 2, LT_PAST_UINT32,
	                           LT_PAST_UINT32 + 8 };
	schema(t);
	labtest_insert_order_watch(t, "video_counts", "video_id");   /* MariaDB: InnoDB keeps no insertion order */
	for (int i = 0; i < 8; i++)
		record(st, ids[i], i + 1);

	lt_sort_reset();
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	int inconsistent = lt_sort_inconsistent();

	lt_expect_int_hint(r, 36, "views written by one flush of 8 videos (1 + 2 + ... + 8)", "flush");
	lt_expect(inconsistent == 0, "upsert", "the comparator the flush gave qsort answered %d "
	          "pair(s) of its sorted rows inconsistently (neighbours, the smallest id against "
	          "the largest, the first row against itself): cmp(a, b) and cmp(b, a) must have "
	          "opposite signs (0 both ways only for equal ids), and a row against itself is 0. "
	          "One that returns only 0 or 1 (return x->video_id > y->video_id;) sorts right "
	          "under this libc's merge sort and wrong under a quicksort (musl's, glibc's "
	          "fallback): two batches then lock their rows in different orders. Return "
	          "(x > y) - (x < y)", inconsistent);
	for (int i = 0; i < 8; i++)
		lt_expect(insert_rank(t, sorted[i]) == i, "upsert", "the upsert wrote video %" PRId64
		          "'s row as number %" PRId64 " of 8, expected number %d: sort the rows by "
		          "video_id (a 64-bit comparison), smallest first, before the upsert (§5: "
		          "the one order every writer of the kit's counters agrees on, on every engine: "
		          "InnoDB's deadlock detection does not make the order free)", sorted[i],
		          insert_rank(t, sorted[i]) + 1, i + 1);

	/* The same for a batch a crashed flush left parked: the flush that
	 * recovers it reads it back from the park (in the store's order, not
	 * the drain's) and upserts it in ascending id too. Ids whose text
	 * sorts otherwise ("10" before "9"), so no order of strings passes. */
	const int64_t ids2[] = { 90, LT_PAST_UINT32 + 108, 9, LT_PAST_INT32 + 102, 100,
	                         LT_PAST_UINT32 + 100, LT_PAST_INT32 + 99, 10 };
	const int64_t sorted2[] = { 9, 10, 90, 100, LT_PAST_INT32 + 99, LT_PAST_INT32 + 102,
	                            LT_PAST_UINT32 + 100, LT_PAST_UINT32 + 108 };
	for (int i = 0; i < 8; i++)
		record(st, ids2[i], i + 1);
	crash_after_drain(st, db);
	r = flush_views(st, db, VIEWS_MAX_BATCH);
	lt_expect_int_hint(r, 36, "views written by the flush that recovered a parked batch of 8 "
	                   "videos", "token");
	for (int i = 0; i < 8; i++)
		lt_expect(insert_rank(t, sorted2[i]) == 8 + i, "upsert", "the recovery of a parked "
		          "batch wrote video %" PRId64 "'s row as number %" PRId64 " of its 8, expected "
		          "number %d: a batch read back from its park comes in the store's order; sort "
		          "it by video_id too (is the sort in flush_views, before the park's upsert, "
		          "rather than in the upsert that every path calls?)", sorted2[i],
		          insert_rank(t, sorted2[i]) - 8 + 1, i + 1);

	/* Batches of two that the in-process store hands over larger id
	 * first, whichever was recorded first: in each, the smaller id first.
	 * Two rows locked the other way round deadlock with a writer that
	 * sorts, as eight do. */
	const int64_t pairs[][2] = { { 54, 11 }, { 12, LT_PAST_UINT32 + 200 }, { 41, 13 },
	                             { 14, 42 }, { 43, 15 } };
	for (int i = 0; i < 5; i++) {
		int64_t lo = pairs[i][0] < pairs[i][1] ? pairs[i][0] : pairs[i][1];
		int64_t hi = pairs[i][0] < pairs[i][1] ? pairs[i][1] : pairs[i][0];
		record(st, pairs[i][0], 1);
		record(st, pairs[i][1], 2);
		r = flush_views(st, db, VIEWS_MAX_BATCH);
		lt_expect(r == 3 && insert_rank(t, lo) == 16 + 2 * i && insert_rank(t, hi) == 17 + 2 * i,
		          "upsert", "a flush of two videos, %" PRId64 " then %" PRId64 " recorded, "
		          "returned %" PRId64 " and wrote video %" PRId64 "'s row as number %" PRId64
		          " of its 2 (expected 3 views, the smaller id first): sort every batch, two "
		          "rows too (§5)", pairs[i][0], pairs[i][1], r, lo,
		          insert_rank(t, lo) - 16 - 2 * i + 1);
	}
	kit_store_free(st);
}

/* views.h's failpoints leave what they say: "flush-after-commit" returns
 * the error with the batch committed and its park not yet deleted, and
 * the flush after it only deletes that park (the token is applied), so
 * the batch counts once and that flush returns 0. */
static void token__after_commit_failpoint_leaves_the_park(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	record(st, 8, 6);
	kit_fp_clear();
	kit_fp_set("flush-after-commit", KIT_FP_ERROR, 1);

	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);

	long hits = kit_fp_count("flush-after-commit");
	kit_fp_clear();
	lt_expect(r < 0 && hits == 1, "token", "flush_views with \"flush-after-commit\" armed returned %"
	          PRId64 " and hit it %ld times (expected an error, once)", r, hits);
	lt_expect(db_views(t, 8) == 6 && parked_count(st) == 1, "token", "at \"flush-after-commit\" the "
	          "database has %" PRId64 " of video 8's 6 views and %" PRId64 " batches are parked; "
	          "views.h: committed, the park not deleted (expected 6 and 1)", db_views(t, 8),
	          parked_count(st));
	r = flush_views(st, db, VIEWS_MAX_BATCH);
	lt_expect(r == 0 && db_views(t, 8) == 6 && parked_count(st) == 0, "token", "the flush after it "
	          "returned %" PRId64 " with %" PRId64 " views of video 8 in the database and %" PRId64
	          " batches parked; expected 0, 6 and 0 (an applied token's park is only deleted)", r,
	          db_views(t, 8), parked_count(st));
	kit_store_free(st);
}

/* Keys of the lab's layout that carry an expiry on a real Redis (TTL >= 0):
 * the script's C step answers 0, since the in-process store has none. */
static int no_expiry_step(struct kit_store *st, struct kit_store_call *c)
{
	(void)st;
	c->out[c->nout++] = 0;
	c->out[c->nout++] = -1;
	return 0;
}

static const struct kit_store_script expiring_script = {
	"expiring",
	"local ns = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1])\n"
	"local n, least = 0, -1\n"
	"for _, k in ipairs(redis.call('KEYS', ns .. 'views:*')) do\n"
	"  local ttl = redis.call('TTL', k)\n"
	"  if ttl >= 0 then\n"
	"    n = n + 1\n"
	"    if least < 0 or ttl < least then least = ttl end\n"
	"  end\n"
	"end\n"
	"return {n, least}\n",
	no_expiry_step,
};

/* Nothing the lab keeps in Redis may expire: a delta, the dirty set, a
 * park or the token counter that vanishes after a TTL loses its views (or
 * reuses tokens) whenever the flusher is down for longer, silently. On a
 * real Redis: views recorded, a batch parked by a crashed flush, a flush
 * the database refused (its views put back) and more views recorded;
 * then no key under views: may have a TTL. */
static void restart__no_view_key_expires(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = labtest_store(t);
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	record(st, 1, 4);
	record(st, 2, 3);
	kit_fp_clear();
	kit_fp_set("flush-after-drain", KIT_FP_ERROR, 1);
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	kit_fp_clear();
	lt_expect(r < 0 && parked_count(st) == 1, "token", "a flush that died at \"flush-after-drain\" "
	          "returned %" PRId64 " with %" PRId64 " batches parked (expected an error and 1)", r,
	          parked_count(st));
	record(st, 3, 5);
	table_away(t);
	r = flush_views(st, db, VIEWS_MAX_BATCH);
	table_back(t);
	lt_expect(r < 0, "report-failure", "flush_views returned %" PRId64 " with its table gone", r);
	record(st, 4, 2);

	int64_t got[2] = { 0, -1 };
	struct kit_store_call c = { 1, (const char *[]){ VIEWS_DIRTY }, 1,
	                            (const char *[]){ VIEWS_DIRTY }, got, 2, 0 };
	int rc = kit_store_eval(st, &expiring_script, &c);
	lt_expect(rc == 0 && c.nout == 2, NULL, "the check's own script returned %d: %s", rc,
	          kit_store_errmsg(st));
	lt_expect(got[0] == 0, "park", "%" PRId64 " of the lab's keys (views:...) on Redis have an "
	          "expiry, the nearest in %" PRId64 " s: a delta or a park that expires takes its views "
	          "with it when the flusher is down longer than that, and nothing reports the loss. "
	          "Is an EXPIRE set in a script? Nothing of the layout may expire", got[0], got[1]);
	r = flush_views(st, db, VIEWS_MAX_BATCH);
	lt_expect(r >= 0 && db_total(t) == 14, "flush", "the flush after it returned %" PRId64
	          " with %" PRId64 " views in the database (expected all 14)", r, db_total(t));
	kit_store_free(st);
}

/* Student code is not the only thing that can be wrong: a delta key that
 * holds a set (another program's key, a typo in a prefix) makes the
 * INCRBY fail. record_view returns that error and marks nothing, on both
 * stores: the step stops at its first failing command. */
static void record_view__failing_step_is_an_error(void **state)
{
	struct kit_store *st = new_store(state);
	assert_int_equal(kit_store_sadd(st, VIEWS_DELTA_PREFIX "12", "x", NULL), 0);

	int rc = record_view(st, 12);

	lt_expect(rc < 0, "record", "record_view of video 12, whose delta key holds a set, returned %d; "
	          "the INCRBY failed, so return its error", rc);
	lt_expect_int_hint(dirty(st, 12), 0, "dirty mark of video 12 after its INCRBY failed", "record");
	record(st, 13, 2);
	lt_expect_int_hint(delta(st, 13), 2, "delta of video 13 recorded after the failure", "record");

	/* Now the step's last command fails: "views:dirty" holds an integer,
	 * so the SADD fails after the INCRBY has run. */
	assert_int_equal(kit_store_del(st, VIEWS_DIRTY, NULL), 0);
	assert_int_equal(kit_store_set(st, VIEWS_DIRTY, 5), 0);
	rc = record_view(st, 14);
	int64_t left = delta(st, 14);
	lt_expect(rc < 0 && left == 0, "record", "record_view of video 14 with \"" VIEWS_DIRTY "\" "
	          "holding an integer returned %d and left video 14's delta at %" PRId64 "; expected "
	          "an error and the delta at 0 (views.h: both or neither). A script does not undo the "
	          "commands before the one that fails (README §2): %s", rc, left,
	          rc < 0 ? "the INCRBY ran, then the SADD failed, so the view is counted with no mark "
	          "that a drain could find. Read every key the step writes (SCARD, GET) before the "
	          "first write" : "the mark failed, so return its error");
	kit_store_free(st);
}

/* A command that fails inside the drain's or the park's one step (a key
 * of the wrong type: another program's key, a typo in a prefix) is that
 * call's error, on both stores, with *n = 0 (views.h: "On failure *n is 0
 * and nothing was taken"): not a success that hands over nothing, or less
 * than the step took. Two places a step can fail: a dirty video whose
 * delta key holds a set (the GETDEL), and a dirty set that holds an
 * integer (the SCARD, the SPOP). First of all a park on a store with no
 * token counter: VIEWS_NO_TOKEN with *token and *n 0; a park refused
 * right after it is the refusal, and one whose reply is lost is
 * KIT_STORE_UNKNOWN, not VIEWS_NO_TOKEN again (what a reply read before
 * its error code, or a step's own code passed on, would say). */
static void drain__failing_step_is_an_error(void **state)
{
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 77;
	int64_t token = 77;

	planted_views(st, 41, 2);
	int rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	lt_expect(rc == VIEWS_NO_TOKEN && token == 0 && n == 0, "token", "park_views of a dirty video "
	          "on a store with no \"" VIEWS_TOKEN "\" returned %d, token %" PRId64 ", %d videos; "
	          "expected VIEWS_NO_TOKEN, token 0 and no videos (it takes nothing)", rc, token, n);
	n = 77;
	kit_store_refuse(st, 1);
	rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	kit_store_refuse(st, 0);
	lt_expect(rc < 0 && n == 0, "token", "park_views on a store that refused it, right after a "
	          "VIEWS_NO_TOKEN, returned %d with *n = %d; expected the store's error and *n = 0 "
	          "(is the reply read before its error code?)", rc, n);
	n = 77;
	kit_store_lose_replies(st, 1);
	rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	kit_store_lose_replies(st, 0);
	lt_expect(rc < 0 && n == 0, "token", "park_views whose reply was lost, on a store with no "
	          "token counter, returned %d with *n = %d; expected an error (KIT_STORE_UNKNOWN: it "
	          "cannot know what its step did) and *n = 0", rc, n);

	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	assert_int_equal(kit_store_sadd(st, VIEWS_DELTA_PREFIX "40", "x", NULL), 0);
	assert_int_equal(kit_store_sadd(st, VIEWS_DIRTY, "40", NULL), 0);
	n = 77;
	rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	lt_expect(rc < 0 && n == 0, "token", "park_views with video 40 dirty and its delta key "
	          "holding a set returned %d with *n = %d; the GETDEL failed, so return its error "
	          "with *n = 0", rc, n);

	planted_views(st, 41, 2);
	assert_int_equal(kit_store_sadd(st, VIEWS_DIRTY, "40", NULL), 0);
	n = 77;
	rc = drain_views(st, VIEWS_MAX_BATCH, out, &n);
	lt_expect(rc < 0 && n == 0, "drain", "drain_views with video 40 dirty and its delta key "
	          "holding a set returned %d with *n = %d; the GETDEL failed, so return its error "
	          "with *n = 0", rc, n);

	assert_int_equal(kit_store_del(st, VIEWS_DIRTY, NULL), 0);
	assert_int_equal(kit_store_set(st, VIEWS_DIRTY, 5), 0);
	n = 77;
	token = 77;
	rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	lt_expect(rc < 0 && n == 0 && token == 0, "token", "park_views with \"" VIEWS_DIRTY "\" "
	          "holding an integer returned %d, token %" PRId64 ", %d videos; the SCARD failed, so "
	          "return its error, token 0 and no videos", rc, token, n);
	n = 77;
	rc = drain_views(st, VIEWS_MAX_BATCH, out, &n);
	lt_expect(rc < 0 && n == 0, "drain", "drain_views with \"" VIEWS_DIRTY "\" holding an "
	          "integer returned %d with *n = %d; the SPOP failed, so return its error with *n = 0",
	          rc, n);

	/* A park step that fails where it would take its token: the park's
	 * key (views:park:2) holds an integer, so the SADD of video 41's
	 * member fails (or, in a step that reads its keys first, the SCARD).
	 * An error with *token and *n 0: a caller must not be handed a token
	 * for a park that failed, whatever the step answered before it
	 * failed. */
	kit_store_restart(st);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	assert_int_equal(kit_store_set(st, VIEWS_PARK_PREFIX "2", 5), 0);
	planted_views(st, 41, 2);
	n = 77;
	token = 77;
	rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	lt_expect(rc < 0 && n == 0 && token == 0, "token", "park_views with \"" VIEWS_PARK_PREFIX "2\" "
	          "(the park token 2 names) holding an integer returned %d, token %" PRId64 ", %d videos; expected the error, token 0 and no "
	          "videos (views.h: on failure *token and *n are 0, whatever the step answered before "
	          "it failed)", rc, token, n);
	kit_store_free(st);
}

/* The keys a failed step must have left as they were: videos 1 .. 20
 * each with its delta (the bad one's key holding a set) and all marked
 * dirty, the token counter at 7, nothing parked. Returns a phrase for
 * the message, or NULL when all is so. */
static const char *untouched(struct kit_store *st, int bad, bool parked_is_a_set)
{
	int64_t token = 0;
	assert_int_equal(kit_store_get(st, VIEWS_TOKEN, &token), 0);
	for (int v = 1; v <= 20; v++)
		if (v != bad && delta(st, v) != v)
			return delta(st, v) == 0 ? "a good video's views taken out of the store and lost"
			                         : "a good video's delta changed";
	for (int v = 1; v <= 20; v++)
		if (!dirty(st, v))
			return "a video left without its dirty mark: were the popped ids put back?";
	if (token != 7)
		return "a token used (\"" VIEWS_TOKEN "\" no longer 7)";
	if (parked_is_a_set && parked_count(st) != 0)
		return "a batch listed in \"" VIEWS_PARKED "\"";
	return NULL;
}

/* A command failing part-way through the drain's or the park's one step
 * (views.h: "On failure *n is 0 and nothing was taken"). Twenty dirty
 * videos, and one of them (each in turn) has a delta key that holds a
 * set. A script does not undo the commands before the one that fails
 * (README §2): a step that pops ids and takes each delta as it goes has
 * taken some before it meets the bad key, and their views are gone.
 * After the error every video is still dirty with its delta, no token is
 * used, nothing is parked. Then the two sets the park adds to, each
 * holding an integer: "views:parked", and the park the next token
 * names. */
static void drain__failing_step_takes_nothing(void **state)
{
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	char key[64];
	for (int park = 0; park <= 1; park++) {
		const char *fn = park ? "park_views" : "drain_views";
		for (int bad = 1; bad <= 22; bad++) {
			/* 21: "views:parked" holds an integer; 22: "views:park:8" does */
			if (bad > 20 && !park)
				break;
			kit_store_restart(st);
			assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 7), 0);
			for (int v = 1; v <= 20; v++)
				planted_views(st, v, v);
			const char *what = "";
			if (bad <= 20) {
				snprintf(key, sizeof key, VIEWS_DELTA_PREFIX "%d", bad);
				assert_int_equal(kit_store_del(st, key, NULL), 0);
				assert_int_equal(kit_store_sadd(st, key, "x", NULL), 0);
				what = "one video's delta key holding a set";
			} else if (bad == 21) {
				assert_int_equal(kit_store_set(st, VIEWS_PARKED, 5), 0);
				what = "\"" VIEWS_PARKED "\" holding an integer";
			} else {
				assert_int_equal(kit_store_set(st, VIEWS_PARK_PREFIX "8", 5), 0);
				what = "\"" VIEWS_PARK_PREFIX "8\" (the park token 8 would name) holding an integer";
			}
			int n = 77;
			int64_t token = 77;
			int rc = park ? park_views(st, VIEWS_MAX_BATCH, &token, out, &n)
			              : drain_views(st, VIEWS_MAX_BATCH, out, &n);
			const char *wrong = untouched(st, bad, bad != 21);
			lt_expect(rc < 0 && n == 0 && (!park || token == 0) && !wrong, park ? "token" : "drain",
			          "%s of 20 dirty videos with %s (video %d) returned %d with *n = %d%s: "
			          "expected an error, *n = 0 and nothing taken, but %s. A script does not "
			          "undo the commands before the one that fails (README §2): read every key "
			          "the step will write (GET each delta; SCARD the sets it adds to) before "
			          "the first write, and put popped ids back when a read fails",
			          fn, what, bad > 20 ? 0 : bad, rc, n, park && token != 0 ? ", a token" : "",
			          wrong ? wrong : rc >= 0 ? "it said it succeeded" : "it handed videos over");
		}
	}
	kit_store_free(st);
}

/* A script of the check's own that plants the string "abc" in video's
 * delta key (plant) or says whether it is still there (1, 0). Only a
 * real Redis runs it: the in-process store holds no strings. */
static int plant_refused(struct kit_store *st, struct kit_store_call *c)
{
	(void)st, (void)c;
	return KIT_STORE_ERR;         /* the in-process store holds no strings */
}

static const struct kit_store_script plant_string = {
	"plant-string", "redis.call('SET', KEYS[1], ARGV[1])\n", plant_refused,
};

static const struct kit_store_script is_string = {
	"is-string", "return redis.call('GET', KEYS[1]) == ARGV[1] and 1 or 0\n", plant_refused,
};

static int string_in(struct kit_store *st, const char *key, const char *text, bool plant)
{
	int64_t same = 0;
	struct kit_store_call c = { 1, (const char *[]){ key }, 1, (const char *[]){ text },
	                            &same, 1, 0 };
	int rc = kit_store_eval(st, plant ? &plant_string : &is_string, &c);
	return rc != 0 ? rc : plant ? 0 : (int)same;
}

static int string_at(struct kit_store *st, int video, const char *text, bool plant)
{
	char key[64];
	snprintf(key, sizeof key, VIEWS_DELTA_PREFIX "%d", video);
	return string_in(st, key, text, plant);
}

/* Strings that are no integer, which INCRBY refuses: Lua's tonumber
 * takes "1e3", "0x10" and " 7" (1000, 16 and 7), and the pattern
 * '^%-?%d+$' takes "007", "-0", 20 digits and 2^63, so only a test of
 * the text as INCRBY reads it (README §4's int) turns them all away.
 * Then what a sign or a blank around the digits makes of them: INCRBY
 * takes an optional minus, never a plus ("+7", "+0": a pattern
 * '^[%+%-]?...' or C's strtoll take them), no blank before or after
 * ("7 ", "\t7", "7\n": tonumber, and strtoll before the digits, skip
 * them), not a lone minus or nothing at all ("-", "": '^%-?%d*$' takes
 * both), and nothing below -2^63. Each was asked of Redis 7.0's own
 * INCRBY (SET k TEXT, INCRBY k 1): "ERR value is not an integer or out
 * of range". */
static const char *const not_integers[] = { "abc", "1e3", "0x10", " 7", "007", "-0",
                                            "99999999999999999999",
                                            "9223372036854775808",
                                            "+7", "+0", "7 ", "\t7", "7\n", "-", "",
                                            "-9223372036854775809" };
#define NOT_INTEGERS (sizeof not_integers / sizeof not_integers[0])

/* One of not_integers as a message shows it: in quotes, a tab and a
 * newline written \t and \n. */
static const char *shown(const char *text, char *buf, size_t size)
{
	size_t k = 0;
	buf[k++] = '"';
	for (const char *c = text; *c && k + 4 < size; c++) {
		if (*c == '\t' || *c == '\n') {
			buf[k++] = '\\';
			buf[k++] = *c == '\t' ? 't' : 'n';
		} else {
			buf[k++] = *c;
		}
	}
	buf[k++] = '"';
	buf[k] = '\0';
	return buf;
}

/* A db hook that, at the first statement naming video_counts, gives a
 * key the put-back writes the wrong type: video `bad`'s delta key (1 ..
 * 20) holds a set (or, with string, the string "abc"), or "views:dirty" (21) or "views:parked" (22) an
 * integer. The flush has parked its batch by then, and the put-back
 * after the refusal meets the bad key. "views:parked"'s tokens are kept,
 * to be listed again when the key is mended. */
struct poison {
	struct kit_store *st;
	int bad;
	const char *string;     /* the delta key holds this string instead (a real Redis) */
	bool done;
	char *parked[16];
	int nparked;
};

static void poison_at_upsert(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct poison *p = arg;
	char key[64];
	(void)t_ns;
	if (p->done || ev != KIT_DB_STMT_START || !lt_sql_names(sql, "video_counts"))
		return;
	p->done = true;
	if (p->bad == 21) {
		kit_store_del(p->st, VIEWS_DIRTY, NULL);
		kit_store_set(p->st, VIEWS_DIRTY, 5);
	} else if (p->bad == 22) {
		kit_store_smembers(p->st, VIEWS_PARKED, 16, p->parked, &p->nparked);
		kit_store_del(p->st, VIEWS_PARKED, NULL);
		kit_store_set(p->st, VIEWS_PARKED, 5);
	} else if (p->string) {
		string_at(p->st, p->bad, p->string, true);
	} else {
		snprintf(key, sizeof key, VIEWS_DELTA_PREFIX "%d", p->bad);
		kit_store_del(p->st, key, NULL);
		kit_store_sadd(p->st, key, "x", NULL);
	}
}

/* Undo what poison_at_upsert did. */
static void mend(struct poison *p)
{
	char key[64];
	if (p->bad == 21) {
		assert_int_equal(kit_store_del(p->st, VIEWS_DIRTY, NULL), 0);
	} else if (p->bad == 22) {
		assert_int_equal(kit_store_del(p->st, VIEWS_PARKED, NULL), 0);
		for (int i = 0; i < p->nparked; i++) {
			assert_int_equal(kit_store_sadd(p->st, VIEWS_PARKED, p->parked[i], NULL), 0);
			free(p->parked[i]);
		}
	} else {
		snprintf(key, sizeof key, VIEWS_DELTA_PREFIX "%d", p->bad);
		assert_int_equal(kit_store_del(p->st, key, NULL), 0);
	}
}

static const char *poisoned(int bad, char *buf, size_t size)
{
	if (bad == 21)
		return "\"" VIEWS_DIRTY "\" holding an integer";
	if (bad == 22)
		return "\"" VIEWS_PARKED "\" holding an integer";
	snprintf(buf, size, "video %d's delta key holding a set", bad);
	return buf;
}

/* One flush of videos 1 .. 20 (1 .. 20 views) that the database refuses
 * (the table moved away) and whose put-back meets p's bad key; then the
 * key is mended and the flushes after it run. *twice and *short_by count
 * the videos the database then holds more and fewer views of than were
 * recorded. Returns what the refused flush returned. */
static int64_t refused_flush_meeting(struct labtest *t, struct kit_store *st, struct poison *p,
                                     int *twice, int *short_by)
{
	struct kit_db *db = labtest_db(t);
	kit_store_restart(st);
	labtest_exec(t, "DELETE FROM video_counts; DELETE FROM applied_flushes");
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	for (int v = 1; v <= 20; v++)
		planted_views(st, v, v);
	table_away(t);
	kit_db_set_hook(db, poison_at_upsert, p);
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	kit_db_set_hook(db, NULL, NULL);
	table_back(t);
	mend(p);
	flush_all(st, db);
	*twice = *short_by = 0;
	for (int v = 1; v <= 20; v++) {
		int64_t got = db_views(t, v);
		*twice += got > v;
		*short_by += got < v;
	}
	return r;
}

/* A refused flush whose put-back meets a key of the wrong type part-way:
 * videos 1 .. 20 with 1 .. 20 views, the database refuses, and one
 * video's delta key (each in turn) holds a set when the views go back;
 * then the dirty set, then the list of parks, holding an integer. A
 * script does not undo what it did before the failing command (README
 * §2), so a put-back that gives back as it goes has returned some views
 * to the store while the park still lists them all: once the key is
 * mended, the next flushes count those twice. Whatever the put-back
 * could not give back must stay parked, and nothing given back may stay
 * parked too (views.h): every video ends with its views exactly once. */
static void flush__putback_meeting_a_bad_key_counts_once(void **state)
{
	struct labtest *t = *state;
	struct kit_store *st = new_store(state);
	char what[64];
	schema(t);
	for (int bad = 1; bad <= 22; bad++) {
		struct poison p = { .st = st, .bad = bad };
		int twice, short_by;
		int64_t r = refused_flush_meeting(t, st, &p, &twice, &short_by);
		lt_expect(r < 0 && p.done, "put-back", "flush_views refused by the database returned "
		          "%" PRId64 "%s", r, p.done ? "" : " without sending a statement that names "
		          "video_counts");
		int64_t left = store_total(st, 1, 20);
		lt_expect(twice == 0 && short_by == 0 && left == 0 && parked_count(st) == 0, "put-back",
		          "the database refused a flush of videos 1 .. 20 (1 .. 20 views) and its put-back "
		          "met %s; once the key was mended, the flushes that followed left %d of them "
		          "counted more than once in the database and %d short, %" PRId64 " views still "
		          "in the store, %" PRId64 " batches parked. %s",
		          poisoned(bad, what, sizeof what), twice, short_by, left, parked_count(st),
		          twice || left ? "The views given back before the failing command stayed in the store "
		          "while the park still listed them: a script does not undo the commands before "
		          "the one that fails (README §2). Read every key the put-back writes (each delta, "
		          "the dirty set) before the "
		          "first write, so it gives back all or nothing" : "Views were lost: was the park "
		          "deleted when its put-back failed?");
	}
	kit_store_free(st);
}

/* A delta key that holds a string which is no integer, on a real Redis
 * (the in-process store holds integers and sets only): record_view's
 * INCRBY refuses it, so the view is an error and nothing is marked. A
 * step that marks first, or that tests the text with tonumber() (which
 * reads "1e3", "0x10" and " 7" as numbers) before an INCRBY that then
 * fails, leaves a mark whose delta no drain can take: every drain that
 * pops it fails, and the other videos of its batches wait. */
static void record_view__a_delta_that_is_no_integer_marks_nothing(void **state)
{
	struct kit_store *st = new_store(state);
	for (size_t s = 0; s < NOT_INTEGERS; s++) {
		int video = 30 + (int)s;
		char text[48];
		assert_int_equal(string_at(st, video, not_integers[s], true), 0);
		int rc = record_view(st, video);
		int mark = dirty(st, video), same = string_at(st, video, not_integers[s], false);
		lt_expect(rc < 0 && mark == 0 && same == 1, "record", "record_view of video %d, whose "
		          "delta key holds %s (no integer: INCRBY refuses it), returned %d and left "
		          "the dirty mark %d, the string %s (expected an error, no mark, the string as "
		          "it was). Test the text as INCRBY reads it (the int of README §4; not "
		          "'^%%-?%%d+$', which takes \"007\", nor tonumber(), which reads \"1e3\" as "
		          "1000) before the first write: a mark "
		          "whose delta no drain can take stalls every batch it lands in", video,
		          shown(not_integers[s], text, sizeof text), rc, mark,
		          same == 1 ? "kept" : "changed");
	}
	record(st, 29, 2);
	lt_expect_int_hint(delta(st, 29), 2, "delta of video 29 recorded after those", "record");
	kit_store_free(st);
}

/* A delta key holding a string that is no integer (another program's
 * SET): GET hands it back as it is, and only a write after it fails
 * (README §4). Only a real Redis can hold one (the kit's in-process
 * store keeps integers and sets), so this check runs there, with a
 * script of its own to plant it: "abc", three that Lua's tonumber
 * reads as numbers ("1e3", "0x10", " 7"), and the rest of not_integers
 * ("+7", which a pattern that takes a plus reads as 7). The drain and the park,
 * meeting each at one of videos 1, 10 and 20, take nothing (every video
 * still dirty with its delta, the string still there, no token used);
 * the put-back of a refused flush meeting it gives back all or nothing,
 * and once the key is mended every video is counted once. */
static void drain__a_delta_that_is_no_integer_takes_nothing(void **state)
{
	struct labtest *t = *state;
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	static const int bads[] = { 1, 10, 20 };
	for (int park = 0; park <= 1; park++) {
		for (size_t s = 0; s < NOT_INTEGERS; s++) {
			for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
				int bad = bads[i];
				const char *text = not_integers[s];
				char quoted[48];
				kit_store_restart(st);
				assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 7), 0);
				for (int v = 1; v <= 20; v++)
					planted_views(st, v, v);
				assert_int_equal(string_at(st, bad, text, true), 0);
				int n = 77;
				int64_t token = 77;
				int rc = park ? park_views(st, VIEWS_MAX_BATCH, &token, out, &n)
				              : drain_views(st, VIEWS_MAX_BATCH, out, &n);
				const char *wrong = untouched(st, bad, true);
				if (!wrong && string_at(st, bad, text, false) != 1)
					wrong = "the string was taken out of the video's delta key (another "
					        "program's key deleted)";
				lt_expect(rc < 0 && n == 0 && (!park || token == 0) && !wrong,
				          park ? "token" : "drain",
				          "%s of 20 dirty videos, video %d's delta key holding the string "
				          "%s, returned %d with *n = %d%s: expected an error, *n = 0 and "
				          "nothing taken, but %s. GET hands a string back as it is: a Lua step "
				          "that must stand up to any key tests that what GET returned is an "
				          "integer as INCRBY reads one (the int of README §4) before it writes; "
				          "'^%%-?%%d+$' takes \"007\" and 20 digits, '^[%%+%%-]?%%d' a plus "
				          "INCRBY never takes (\"+7\"), and tonumber reads "
				          "\"1e3\", \"0x10\", \" 7\" and \"7 \" as numbers, which INCRBY refuses "
				          "(README §4)",
				          park ? "park_views" : "drain_views", bad,
				          shown(text, quoted, sizeof quoted), rc, n,
				          park && token != 0 ? ", a token" : "",
				          wrong ? wrong : rc >= 0 ? "it said it succeeded" : "it handed videos over");
			}
		}
	}

	/* the put-back of a refused flush meets it */
	schema(t);
	for (size_t s = 0; s < NOT_INTEGERS; s++) {
		for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
			struct poison p = { .st = st, .bad = bads[i], .string = not_integers[s] };
			char quoted[48];
			int twice, short_by;
			int64_t r = refused_flush_meeting(t, st, &p, &twice, &short_by);
			lt_expect(r < 0 && p.done && twice == 0 && short_by == 0 && parked_count(st) == 0,
			          "put-back", "the database refused a flush of videos 1 .. 20 (1 .. 20 "
			          "views) and its put-back met video %d's delta key holding the string "
			          "%s (flush returned %" PRId64 "); once the key was mended, the flushes "
			          "that followed left %d videos counted more than once and %d short, "
			          "%" PRId64 " batches parked. The put-back reads every key it writes first, "
			          "and a string that is no integer is a key it cannot write: test what GET "
			          "returned as INCRBY reads it (the int of README §4; '^%%-?%%d+$' takes "
			          "\"007\", tonumber reads \"1e3\" as 1000) before the first INCRBY", bads[i],
			          shown(not_integers[s], quoted, sizeof quoted), r, twice, short_by,
			          parked_count(st));
		}
	}
	kit_store_free(st);
}

/* The token counter holding what is no integer: a set (on every store),
 * and on a real Redis the strings of not_integers. The park reads it
 * before its first write, so it takes nothing: an error, *n and *token
 * 0, every video still dirty with its delta, nothing parked, the key as
 * it was. A park that takes the deltas first, or reads "1e3" with
 * tonumber, has deleted them when its INCR fails, and their views are
 * lost. Then a flush on the same store: an error, nothing written; once
 * the counter is mended every video is counted once. */
static void token__a_token_that_is_no_integer_takes_nothing(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	bool redis = kit_store_is_redis(st);
	schema(t);
	for (int k = -1; k < (redis ? (int)NOT_INTEGERS : 0); k++) {
		const char *text = k < 0 ? NULL : not_integers[k];
		char what[48], quoted[40];
		if (text)
			snprintf(what, sizeof what, "the string %s", shown(text, quoted, sizeof quoted));
		else
			snprintf(what, sizeof what, "a set");
		for (int flush = 0; flush <= 1; flush++) {
			kit_store_restart(st);
			labtest_exec(t, "DELETE FROM video_counts; DELETE FROM applied_flushes");
			for (int v = 1; v <= 20; v++)
				planted_views(st, v, v);
			if (text)
				assert_int_equal(string_in(st, VIEWS_TOKEN, text, true), 0);
			else
				assert_int_equal(kit_store_sadd(st, VIEWS_TOKEN, "7", NULL), 0);
			int n = 77;
			int64_t token = 77, r = 0;
			int rc;
			if (flush)
				rc = (int)(r = flush_views(st, db, VIEWS_MAX_BATCH));
			else
				rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
			const char *wrong = NULL;
			for (int v = 1; v <= 20 && !wrong; v++)
				if (delta(st, v) != v || !dirty(st, v))
					wrong = delta(st, v) == 0 ? "views taken out of the store and lost"
					                          : "a video's delta or dirty mark changed";
			if (!wrong && parked_count(st) != 0)
				wrong = "a batch parked";
			int is = 0;
			if (!wrong && (text ? string_in(st, VIEWS_TOKEN, text, false) != 1
			                    : kit_store_sismember(st, VIEWS_TOKEN, "7", &is) != 0 || !is))
				wrong = "the token counter changed";
			if (!wrong && flush && db_total(t) != 0)
				wrong = "views written to the database";
			lt_expect(rc < 0 && (flush || (n == 0 && token == 0)) && !wrong, "token",
			          "%s of 20 dirty videos, \"" VIEWS_TOKEN "\" holding %s, returned %d%s: "
			          "expected an error with nothing taken, but %s. The park reads the counter "
			          "before its first write: a set fails its GET; a string GET hands back as it "
			          "is, so test it (the int of README §4, not '^%%-?%%d+$', which takes "
			          "\"007\", nor one that lets a plus in, which takes \"+7\") before SPOP "
			          "and DEL, or "
			          "INCR fails after the deltas are gone (README §4)",
			          flush ? "flush_views" : "park_views", what, rc,
			          !flush && (n || token) ? " with videos or a token handed over" : "",
			          wrong ? wrong : rc >= 0 ? "it said it succeeded" : "it handed videos over");
			if (!flush)
				continue;
			assert_int_equal(kit_store_del(st, VIEWS_TOKEN, NULL), 0);
			assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 7), 0);
			flush_all(st, db);
			int off = 0;
			for (int v = 1; v <= 20; v++)
				off += db_views(t, v) != v;
			lt_expect(off == 0 && store_total(st, 1, 20) == 0, "token", "after a flush met "
			          "\"" VIEWS_TOKEN "\" holding %s and the counter was mended, the flushes "
			          "that followed left %d of videos 1 .. 20 counted wrong and %" PRId64
			          " views in the store (expected each video's 1 .. 20 views once)", what,
			          off, store_total(st, 1, 20));
		}
	}
	kit_store_free(st);
}

/* Counts the store's commands; past its limit the store refuses every
 * one, so a call that goes round and round ends (with an error). */
struct command_limit {
	int seen, limit;
};

static void command_limit_hook(void *arg, struct kit_store *st, const char *cmd, const char *key,
                               int rc)
{
	struct command_limit *l = arg;
	(void)cmd, (void)key, (void)rc;
	if (++l->seen == l->limit)
		kit_store_refuse(st, -1);
}

/* A parked batch whose park cannot be read (its key holds an integer:
 * another program's key) and whose token the database has: recovery
 * deletes it or fails, in a few commands. A delete step that goes on past
 * its failing SMEMBERS and answers 0 leaves the token listed, and
 * recover_flushes reads the same token again, for ever (here: until the
 * check's store refuses, after 200 commands). */
static void recovery__unreadable_park_ends(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	schema(t);
	labtest_exec(t, "INSERT INTO applied_flushes (token) VALUES (5)");
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 5), 0);
	assert_int_equal(kit_store_sadd(st, VIEWS_PARKED, "5", NULL), 0);
	assert_int_equal(kit_store_set(st, VIEWS_PARK_PREFIX "5", 9), 0);
	record(st, 1, 2);

	struct command_limit l = { 0, 200 };
	kit_store_set_hook(st, command_limit_hook, &l);
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	kit_store_set_hook(st, NULL, NULL);
	kit_store_refuse(st, 0);
	lt_expect(l.seen < l.limit, "recover", "flush_views with token 5 parked (and applied) and its "
	          "park holding an integer made %d store commands and returned %" PRId64 "; expected "
	          "a few: does the step that deletes a park answer 0 when its command failed, so the "
	          "token stays listed and recovery reads it again?", l.seen, r);
	lt_expect(r < 0 || parked_count(st) == 0, "recover", "flush_views with token 5 parked (and "
	          "applied) and its park holding an integer returned %" PRId64 " with %" PRId64
	          " batches still parked; expected an error, or the park resolved", r, parked_count(st));

	/* token 9 listed, not applied, its park empty (gone): nothing to
	 * apply, so recovery only unlists it, and the flush goes on */
	assert_int_equal(kit_store_del(st, VIEWS_PARKED, NULL), 0);
	assert_int_equal(kit_store_sadd(st, VIEWS_PARKED, "9", NULL), 0);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 9), 0);
	l = (struct command_limit){ 0, 200 };
	kit_store_set_hook(st, command_limit_hook, &l);
	r = flush_views(st, db, VIEWS_MAX_BATCH);
	kit_store_set_hook(st, NULL, NULL);
	kit_store_refuse(st, 0);
	lt_expect(l.seen < l.limit && r >= 0 && parked_count(st) == 0, "recover", "flush_views with "
	          "token 9 listed in " VIEWS_PARKED ", not applied, and no park (nothing to apply) made %d "
	          "store commands and returned %" PRId64 " with %" PRId64 " batches still parked; "
	          "expected a few commands, the token unlisted and the flush done (does recovery skip "
	          "an empty park instead of deleting it, so it reads the same token again?)",
	          l.seen, r, parked_count(st));
	kit_store_free(st);
}

/* Each failpoint of views.h, armed with "error", makes flush_views return
 * KIT_DB_ERR there at once (a crash, in-process), and the flushes after
 * it, on a fresh connection as after a restart, count every view once.
 * "flush-mid-putback" is reached only when the database refuses. */
static void token__every_failpoint_returns_an_error(void **state)
{
	struct labtest *t = *state;
	const char *fps[] = { "flush-after-drain", "flush-before-commit", "flush-after-commit",
	                      "flush-mid-putback" };
	schema(t);
	for (int i = 0; i < 4; i++) {
		struct kit_store *st = kit_store_new();
		assert_non_null(st);
		struct kit_db *dying = labtest_connect(t);
		labtest_exec(t, "DELETE FROM video_counts; DELETE FROM applied_flushes");
		assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
		record(st, 1, 4);
		record(st, 2, 3);
		bool refuse = !strcmp(fps[i], "flush-mid-putback");
		if (refuse)
			table_away(t);
		kit_fp_clear();
		kit_fp_set(fps[i], KIT_FP_ERROR, 1);

		int64_t r = flush_views(st, dying, VIEWS_MAX_BATCH);

		long hits = kit_fp_count(fps[i]);
		kit_fp_clear();
		/* At "flush-before-commit" the transaction is written: its own
		 * session, still inside it, sees the batch's 7 views (a failpoint
		 * placed before the upsert stops a window views.h does not name) */
		int64_t seen = -1;
		if (i == 1)
			kit_db_query_int(dying, "SELECT COALESCE(SUM(views), 0) FROM video_counts", 0, NULL,
			                 &seen);
		kit_db_close(dying);   /* the crashed flusher's session ends */
		if (refuse)
			table_back(t);
		lt_expect(r == KIT_DB_ERR && hits == 1, "token", "flush_views with \"%s\" armed returned %"
		          PRId64 " and hit it %ld times; views.h: it returns KIT_DB_ERR there at once",
		          fps[i], r, hits);
		/* views.h's windows: each failpoint finds the batch parked, its
		 * views out of the deltas, and in the database only after the
		 * commit. A failpoint placed elsewhere ("flush-mid-putback" after
		 * the put-back) leaves its crash window untested. */
		int64_t in_db = i == 2 ? 7 : 0;
		lt_expect(parked_count(st) == 1 && store_total(st, 1, 2) == 0 && db_total(t) == in_db,
		          "token", "at \"%s\" the flusher left %" PRId64 " batch(es) parked, %" PRId64
		          " views in the deltas and %" PRId64 " in the database; views.h's window there is "
		          "1 parked, 0 in the deltas and %" PRId64 " in the database (%s): is the "
		          "failpoint where views.h puts it?", fps[i], parked_count(st),
		          store_total(st, 1, 2), db_total(t), in_db, i == 0 ? "parked, nothing sent" :
		          i == 1 ? "written, not committed" : i == 2 ? "committed, the park not deleted" :
		          "refused, the views not yet put back");
		lt_expect(i != 1 || seen == 7, "token", "at \"flush-before-commit\" the flusher's own "
		          "session, still inside its transaction, sees %" PRId64 " views in video_counts, "
		          "not the batch's 7: the transaction is not written there (views.h: the token and "
		          "the upsert written, not committed). Is the failpoint before the upsert?", seen);
		flush_all(st, labtest_db(t));
		lt_expect(db_views(t, 1) == 4 && db_views(t, 2) == 3, "token", "after a flush stopped at "
		          "\"%s\" and the flushes after it, videos 1 and 2 have %" PRId64 " and %" PRId64
		          " views, not 4 and 3", fps[i], db_views(t, 1), db_views(t, 2));
		kit_store_free(st);
	}
}

/* stop_flusher's last flushes move a count past 2^31 (still a success:
 * 0), and pass dirty videos whose delta is 0 (a flush that moves nothing
 * while some are still dirty is no reason to stop, nor to loop). */
static void flusher__stop_past_2_31_and_zero_deltas(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	const int64_t big = LT_PAST_INT32 + 4;
	schema(t);
	planted_views(st, 3, big);
	int rc = start_flusher(&f, st, own, 60000, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	rc = stop_flusher(f);
	lt_expect(rc == 0 && db_views(t, 3) == big, "stop", "stop_flusher with 2^31 + 4 views of video "
	          "3 left returned %d and the database has %" PRId64 " of them; expected 0 and all (a "
	          "count cut to an int turns negative)", rc, db_views(t, 3));

	for (int v = 20; v < 23; v++)
		planted_views(st, v, 0);
	record(st, 24, 4);
	rc = start_flusher(&f, st, own, 60000, 1);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	rc = stop_flusher(f);
	int64_t left = -1;
	assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &left), 0);
	lt_expect(rc == 0 && db_views(t, 24) == 4 && left == 0, "stop", "stop_flusher (one video per "
	          "flush) with video 24's 4 views and three dirty videos at 0 returned %d, wrote %"
	          PRId64 " views of video 24 and left %" PRId64 " videos dirty; expected 0, 4 and 0",
	          rc, db_views(t, 24), left);
	kit_db_close(own);
	kit_store_free(st);
}

/* views.h, park_views: "*token is that token, or 0 when nothing was
 * dirty (then nothing is parked and no token is used)" - also right after
 * a park that used one, and on a store with no token counter yet, where
 * only "something dirty" asks for VIEWS_NO_TOKEN. */
static void park__nothing_dirty_takes_no_token(void **state)
{
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 77;
	int64_t token = 77;

	int rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	lt_expect(rc == 0 && token == 0 && n == 0, "token", "park_views on a new store with nothing "
	          "dirty returned %d, token %" PRId64 ", %d videos; expected 0, 0, 0 (VIEWS_NO_TOKEN "
	          "is only for a store with something dirty)", rc, token, n);

	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 5), 0);
	record(st, 1, 2);
	rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	lt_expect(rc == 0 && token == 6 && n == 1, "token", "park_views of one dirty video after token "
	          "5 returned %d, token %" PRId64 ", %d videos; expected 0, 6, 1", rc, token, n);
	n = 77;
	rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	int64_t counter = -1;
	assert_int_equal(kit_store_get(st, VIEWS_TOKEN, &counter), 0);
	lt_expect(rc == 0 && token == 0 && n == 0 && counter == 6, "token", "park_views with nothing "
	          "dirty, right after a park: %d, token %" PRId64 ", %d videos, counter %" PRId64
	          "; expected 0, 0, 0 and the counter still 6", rc, token, n, counter);

	planted_views(st, 30, 0);   /* dirty, nothing to take: left out, as by drain_views */
	record(st, 31, 2);
	rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	lt_expect(rc == 0 && token == 7 && n == 1 && out[0].video_id == 31 && out[0].n == 2, "token",
	          "park_views of video 31 (2 views) and video 30 (dirty at 0): %d, token %" PRId64
	          ", %d videos, the first %" PRId64 " with %" PRId64 "; expected 0, 7, and only "
	          "video 31 with 2", rc, token, n, n > 0 ? out[0].video_id : 0, n > 0 ? out[0].n : 0);
	kit_store_free(st);
}

/* A crash inside a recovery (the failpoint "flush-before-commit" hit while
 * re-applying a parked batch) is an error of that flush, not a success:
 * views.h, "each makes flush_views return KIT_DB_ERR there at once". */
static void recovery__crash_inside_a_recovery_is_an_error(void **state)
{
	struct labtest *t = *state;
	struct kit_store *st = new_store(state);
	struct kit_db *dying = labtest_connect(t);
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	record(st, 4, 7);
	crash_after_drain(st, dying);
	record(st, 1, 3);
	kit_fp_clear();
	kit_fp_set("flush-before-commit", KIT_FP_ERROR, 1);

	int64_t r = flush_views(st, dying, VIEWS_MAX_BATCH);

	long hits = kit_fp_count("flush-before-commit");
	kit_fp_clear();
	kit_db_close(dying);
	lt_expect(r == KIT_DB_ERR && hits == 1, "token", "a flush that stopped at \"flush-before-commit\" "
	          "while re-applying a parked batch returned %" PRId64 " (hit %ld times); expected "
	          "KIT_DB_ERR", r, hits);
	flush_all(st, labtest_db(t));
	lt_expect(db_views(t, 4) == 7 && db_views(t, 1) == 3 && parked_count(st) == 0, "token",
	          "after that flush and the ones that followed: videos 4 and 1 have %" PRId64 " and %"
	          PRId64 " views (not 7 and 3), %" PRId64 " batches parked", db_views(t, 4),
	          db_views(t, 1), parked_count(st));
	kit_store_free(st);
}

/* A flush with a batch parked by a crash before it fails at each of its
 * database statements in turn (recovery's and its own): refused before
 * it runs, or run with its answer lost. Each time it returns an error
 * (views.h: "the database's code is returned"), and the flushes after it
 * count every view once, with nothing left parked. */
static void recovery__every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	schema(t);
	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
		for (int k = 1; k <= 30; k++) {
			struct kit_store *st = kit_store_new();
			assert_non_null(st);
			labtest_exec(t, "DELETE FROM video_counts; DELETE FROM applied_flushes");
			assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
			record(st, 4, 7);
			crash_after_drain(st, db);
			record(st, 1, 3);
			record(st, 2, 5);
			lt_step_arm(how, k);
			int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
			bool fired = lt_step_disarm();
			lt_expect(!fired || r < 0, "put-back", "statement %d of a flush that first recovers a "
			          "parked batch %s, yet flush_views returned %" PRId64 " (an error was expected)",
			          k, lt_step_what(how), r);
			lt_expect(!fired || how != LT_STEP_BUSY || r == KIT_DB_BUSY, "put-back", "statement "
			          "%d of a flush that first recovers a parked batch refused as KIT_DB_BUSY (%d, "
			          "a lock wait that gave up), and flush_views returned %" PRId64 ": the "
			          "database's code, as it came (views.h), also when recovery met it: a flush "
			          "that takes a busy recovery for \"the parks can wait\" and reports its own "
			          "batch tells the flusher all is well while a batch stays parked", k,
			          KIT_DB_BUSY, r);
			flush_all(st, db);
			lt_expect(db_views(t, 1) == 3 && db_views(t, 2) == 5 && db_views(t, 4) == 7 &&
			          parked_count(st) == 0, "put-back", "statement %d of a recovering flush %s, "
			          "then flushes until nothing was left: videos 1, 2, 4 have %" PRId64 ", %" PRId64
			          ", %" PRId64 " views (not 3, 5, 7), %" PRId64 " batches parked", k,
			          lt_step_what(how), db_views(t, 1), db_views(t, 2), db_views(t, 4),
			          parked_count(st));
			kit_store_free(st);
			if (!fired)
				break;
		}
	}
}

/* A park of exactly VIEWS_MAX_BATCH videos, and of one more: the edge of
 * park_views' domain and of every buffer sized by it (the script's reply
 * of 2 x max + 1 numbers, a park read back or put back whole). For
 * n = max and max + 1 dirty videos, each with a count of its own: one
 * park takes exactly max of them (and leaves the one more dirty), holds
 * each with its exact count, survives a crash and a refused recovery,
 * and the flushes after it put every view in the database once; then
 * the same n again, refused, come back into the store whole. */
/* Flushes of VIEWS_MAX_BATCH until nothing is dirty (at most three). */
static void flush_until_clean(struct kit_store *st, struct kit_db *db)
{
	int64_t left = 1;
	for (int round = 0; round < 3 && left > 0; round++) {
		int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
		lt_expect(r >= 0, "flush", "flush_views failed on a healthy database: %s",
		          labtest_why(db));
		assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &left), 0);
	}
}

static void park__exactly_max_and_one_more(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	schema(t);
	for (int extra = 0; extra <= 1; extra++) {
		int n = VIEWS_MAX_BATCH + extra;
		int64_t first = 100000 * (extra + 1), last = first + n - 1, want = 0;
		for (int64_t v = first; v <= last; v++) {
			planted_views(st, v, v - first + 1);
			want += v - first + 1;
		}
		char sql[200];
		snprintf(sql, sizeof sql, "SELECT COALESCE(SUM(views), 0) FROM video_counts"
		         " WHERE video_id BETWEEN %" PRId64 " AND %" PRId64, first, last);

		/* parked as by a flush that crashed after it: nothing in the database */
		int64_t token = 0;
		int got = -1, wrong = 0;
		int rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &got);
		if (rc == VIEWS_NO_TOKEN) {
			assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
			rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &got);
		}
		for (int i = 0; i < got; i++)
			wrong += out[i].video_id < first || out[i].video_id > last ||
			         out[i].n != out[i].video_id - first + 1;
		lt_expect(rc == 0, "park", "park_views(max %d) with %d videos dirty returned %d (%s)",
		          VIEWS_MAX_BATCH, n, rc, rc == KIT_STORE_ERR ? "KIT_STORE_ERR: what the "
		          "skeleton returns until park_views is written (§5b), or a reply one short at "
		          "exactly max" : kit_store_strerror(rc));
		lt_expect(got == VIEWS_MAX_BATCH && wrong == 0, "drain-limit", "park_views(max %d) with "
		          "%d videos dirty took %d videos, %d of them not a dirty video with its count; "
		          "expected exactly %d", VIEWS_MAX_BATCH, n, got, wrong, VIEWS_MAX_BATCH);
		char *tokens[2] = { NULL, NULL };
		int ntok = 0;
		int64_t in_park = -1, dirty = -1;
		assert_int_equal(kit_store_smembers(st, VIEWS_PARKED, 2, tokens, &ntok), 0);
		if (ntok == 1) {
			char park[64];
			snprintf(park, sizeof park, VIEWS_PARK_PREFIX "%s", tokens[0]);
			assert_int_equal(kit_store_scard(st, park, &in_park), 0);
		}
		for (int i = 0; i < ntok; i++)
			free(tokens[i]);
		assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &dirty), 0);
		lt_expect(ntok == 1 && in_park == VIEWS_MAX_BATCH && dirty == extra, "drain-limit",
		          "%d dirty videos, %d of them parked: expected one park of %d videos and %d "
		          "still dirty, got %d parks, the first of %" PRId64
		          " videos, %" PRId64 " dirty (is the reply, or a buffer, one short at "
		          "exactly max?)", n, VIEWS_MAX_BATCH, VIEWS_MAX_BATCH, extra, ntok, in_park,
		          dirty);

		table_away(t);
		int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
		table_back(t);
		lt_expect(r < 0 && parked_count(st) == 1, "token", "a park of %d videos whose "
		          "recovery the database refused: expected an error and the park kept, got %"
		          PRId64 " and %" PRId64 " parks", VIEWS_MAX_BATCH, r, parked_count(st));
		r = flush_views(st, db, VIEWS_MAX_BATCH);
		lt_expect(r >= 0, "token", "the flush after a refused recovery of %d videos: %" PRId64
		          " (%s)", VIEWS_MAX_BATCH, r, labtest_why(db));
		flush_until_clean(st, db);
		char what[200];
		snprintf(what, sizeof what, "views of the %d videos in the database after a park of "
		         "%d, a crash, a refused recovery and the flushes after it", n, VIEWS_MAX_BATCH);
		lt_expect_int_hint(labtest_int(t, sql), want, what, "token");
		assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &dirty), 0);
		lt_expect_int_hint(parked_count(st) + dirty, 0, "parks and dirty videos left in the "
		                   "store", "token");

		/* the same n again: refused, the park of max goes back whole */
		for (int64_t v = first; v <= last; v++)
			planted_views(st, v, v - first + 1);
		table_away(t);
		r = flush_views(st, db, VIEWS_MAX_BATCH);
		table_back(t);
		assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &dirty), 0);
		snprintf(what, sizeof what, "views back in the store after a refused flush of %d of "
		         "%d videos", VIEWS_MAX_BATCH, n);
		lt_expect(r < 0, "put-back", "a flush of %d videos the database refused returned %"
		          PRId64 ", expected an error", n, r);
		lt_expect_int_hint(store_total(st, first, last), want, what, "put-back");
		lt_expect_int_hint(dirty, n, "videos dirty again after the refused flush", "put-back");
		flush_until_clean(st, db);
		lt_expect_int_hint(labtest_int(t, sql), 2 * want, "views of those videos in the "
		                   "database after both rounds", "put-back");
	}
	kit_store_free(st);
}

/* ---- more edges: max per flush, long intervals, counts past 10^14 ---- */

/* flush_views(st, db, max) takes at most max videos (views.h: "park up
 * to max videos"); the rest stay dirty, in the store, for the next
 * flush. Ten videos, video v with v views, max 3: one flush writes three
 * rows and the views it returns; seven videos stay dirty with their
 * deltas. */
static void flush__takes_at_most_max(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	schema(t);
	for (int v = 1; v <= 10; v++)
		record(st, v, v);

	int64_t r = flush_views(st, db, 3);
	int64_t rows = labtest_int(t, "SELECT count(*) FROM video_counts"), left = -1;
	assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &left), 0);
	lt_expect(rows == 3 && left == 7, "flush", "flush_views(max = 3) with 10 dirty videos wrote "
	          "%" PRId64 " rows and left %" PRId64 " videos dirty; expected 3 and 7 (is max passed "
	          "on to the drain, or a batch size of your own used instead?)", rows, left);
	lt_expect(r == db_total(t), "flush", "flush_views(max = 3) returned %" PRId64 " while the "
	          "database holds %" PRId64 " views", r, db_total(t));
	lt_expect_int_hint(db_total(t) + store_total(st, 1, 10), 55, "views in the database and the "
	                   "store after one flush of 3", "flush");
	flush_all(st, db);
	lt_expect_int_hint(db_total(t), 55, "views in the database after flushing the rest", "flush");
	kit_store_free(st);
}

/* Intervals past 2,147 ms are past 2^31 nanoseconds: a deadline worked
 * out in int wraps negative, pthread_cond_timedwait refuses it at once
 * (EINVAL) and the flusher flushes without ever waiting. 2,148 ms and
 * INT_MAX ms (24 days) are both in start_flusher's domain (views.h:
 * interval_ms >= 1): after 0.15 s neither has flushed, and each stops at
 * once and writes the views. */
static void flusher__long_intervals_wait(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	const int intervals[] = { 2148, INT32_MAX };
	schema(t);
	for (int i = 0; i < 2; i++) {
		struct flusher *f = NULL;
		struct flusher_stats fs = { -1, -1, -1 };
		record(st, 5, 2);
		int rc = start_flusher(&f, st, own, intervals[i], 100);
		lt_expect(rc == 0 && f, "flush-loop", "start_flusher(interval %d ms) returned %d",
		          intervals[i], rc);
		util_sleep_ns(150 * 1000000LL);
		flusher_stats(f, &fs);
		int64_t t0 = util_now_ns();
		rc = stop_flusher(f);
		double took = (double)(util_now_ns() - t0) / 1e9;
		lt_expect(fs.flushes == 0, "flush-loop", "0.15 s after start_flusher with a %d ms interval "
		          "it had flushed %" PRId64 " times: past 2,147 ms the interval is past 2^31 ns (is "
		          "the deadline worked out in int? a negative or oversized tv_nsec makes "
		          "pthread_cond_timedwait return EINVAL at once)", intervals[i], fs.flushes);
		lt_expect(rc == 0 && took < 1.0, "stop", "stop_flusher of the %d ms flusher returned %d "
		          "after %.2f s", intervals[i], rc, took);
		lt_expect_int_hint(db_views(t, 5), 2 * (i + 1), "views of video 5 after the stop", "stop");
	}
	kit_db_close(own);
	kit_store_free(st);
}

/* Counts of 15 and 16 digits (below 2^53, views.h's limit) survive a
 * park: on Redis, Lua turns a number into text with 14 significant
 * digits ("1.2345678901234e+14"), so a park member built from the
 * number, not from the text GETDEL returned, reads back as 1 after a
 * crash. A crashed flush parks them; the next flush must apply them
 * exactly. */
static void recovery__counts_past_10_14(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	const int64_t a = 123456789012345, b = ((int64_t)1 << 53) - 1;
	schema(t);
	planted_views(st, 3, a);
	planted_views(st, 4, b);
	planted_views(st, -b, b);   /* the longest <id>=<n> a Lua number can carry: 34 characters */
	crash_after_drain(st, db);
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	lt_expect(db_views(t, 3) == a && db_views(t, 4) == b, "token", "a parked batch of %" PRId64
	          " and %" PRId64 " views was applied as %" PRId64 " and %" PRId64 " (flush returned "
	          "%" PRId64 "): how is the park's <id>=<n> written? In Lua, build it from the string "
	          "GETDEL returned, not from tonumber() of it (Lua prints a number with 14 digits)",
	          a, b, db_views(t, 3), db_views(t, 4), r);
	lt_expect(db_views(t, -b) == b, "token", "a parked batch with %" PRId64 " views of video %"
	          PRId64 " was applied as %" PRId64 " (flush returned %" PRId64 "): its park member "
	          "\"%" PRId64 "=%" PRId64 "\" is 34 characters long; is the buffer it is written into "
	          "(or read back from) shorter, cutting the count off?", b, -b, db_views(t, -b), r, -b, b);
	kit_store_free(st);
}

/* A batch of exactly VIEWS_MAX_BATCH videos, ids past 2^32 (so the
 * upsert's text is long): 1,001 dirty videos, a flush with max =
 * VIEWS_MAX_BATCH writes 1,000 rows and leaves one dirty; then the same
 * again with the flusher crashing after its drain, so that recovery
 * reads a park of 1,000 members back. Buffers sized for a smaller
 * batch (the SQL text, the ids a drain pops, the members read back)
 * lose videos here or crash. */
static void flush__a_full_batch(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	const int64_t base = LT_PAST_UINT32 + 1000000;
	schema(t);
	for (int round = 0; round < 2; round++) {
		for (int v = 0; v <= VIEWS_MAX_BATCH; v++)
			record(st, base + v, 1);
		if (round == 1)
			crash_after_drain(st, db);
		struct stmts s = { 0 };
		kit_db_set_hook(db, count_stmts, &s);
		int64_t r = flush_views(st, db, VIEWS_MAX_BATCH), left = -1;
		kit_db_set_hook(db, NULL, NULL);
		assert_int_equal(kit_store_scard(st, VIEWS_DIRTY, &left), 0);
		/* One multi-row upsert, whatever the batch's size: split into
		 * chunks (SQLite's old limit of 999 parameters), the later chunks'
		 * round trips run while the rows of the first ones stay locked.
		 * After the crash: the recovered park's upsert, then the new one. */
		lt_expect(s.writes == round + 1, "one-statement", "flush_views(max = VIEWS_MAX_BATCH) "
		          "of 1,001 dirty videos%s sent %d INSERT/UPDATE statements on video_counts, "
		          "expected %d: a batch is one multi-row upsert, whatever its size (is it split "
		          "into chunks of a few hundred rows? Both engines take the 2,000 parameters of "
		          "a full batch in one statement)", round ? " (a parked batch of 1,000 to "
		          "recover first)" : "", s.writes, round + 1);
		/* after the crash: the park's 1,000 recovered, then the last one taken */
		int64_t want = round == 0 ? VIEWS_MAX_BATCH : VIEWS_MAX_BATCH + 1, want_left = 1 - round;
		lt_expect(r == want && left == want_left, "flush", "1,001 dirty videos%s, then "
		          "flush_views(max = VIEWS_MAX_BATCH) returned %" PRId64 " and left %" PRId64
		          " dirty; expected %" PRId64 " and %" PRId64 " (is a buffer sized for fewer than "
		          "VIEWS_MAX_BATCH videos?)", round ? ", 1,000 of them parked by a crashed flush" : "",
		          r, left, want, want_left);
		flush_all(st, db);
		lt_expect_int_hint(db_total(t), (int64_t)(round + 1) * (VIEWS_MAX_BATCH + 1),
		                   "views in the database after the rest was flushed", "flush");
	}
	kit_store_free(st);
}

/* The flusher's stats count what reached the database: a refused flush
 * is a failed one and adds no views (its error code is not a count).
 * The table is away for two refused flushes, then back: views equals
 * what the database holds. Then every statement is refused as a lock
 * wait, and then the store refuses every command: each flush returned
 * an error (KIT_DB_BUSY, KIT_STORE_DOWN) and is counted failed. */
static void stats_count_a_token_taken(struct labtest *t, struct kit_store *st, struct kit_db *own);

static bool stats_at_fifty(const struct watch *w)
{
	struct flusher_stats st;
	flusher_stats(w->f, &st);
	return st.views >= 50 && db_total(w->t) >= 50;
}

static void flusher__stats_count_only_what_was_written(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher_stats fs = { 0 }, refused = { 0 };
	struct flusher *f = refused_flusher(t, st, own, &refused);
	int rc;
	/* at most 2 s: what a flusher that counts right reaches in a few ms */
	for (int i = 0; i < 1000 && !stats_at_fifty(&(struct watch){ .t = t, .f = f, .st = st }); i++)
		util_sleep_ns(2000000);
	flusher_stats(f, &fs);
	int64_t in_db = db_total(t);
	rc = stop_flusher(f);
	lt_expect(refused.flushes >= refused.failed && refused.failed >= 1, "flush-loop", "while the "
	          "table was away flusher_stats said %" PRId64 " flushes and %" PRId64 " failed: every "
	          "flush_views call is a flush, the refused ones too (.flushes counts them all, .failed "
	          "those that returned an error)", refused.flushes, refused.failed);
	lt_expect(fs.views == in_db && fs.failed >= 2, "flush-loop", "after %" PRId64 " refused "
	          "flushes and the ones that wrote the %" PRId64 " views, flusher_stats says views %"
	          PRId64 ": a failed flush adds nothing to views (is its error code added?)",
	          fs.failed, in_db, fs.views);
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "flush-loop");
	lt_expect_int_hint(db_total(t), 50, "views in the database", "put-back");

	/* A flush refused as a lock wait (KIT_DB_BUSY: every statement
	 * refused so, tests/harness/steps.h) returned an error: it is among
	 * the failed ones too, like any other error. */
	struct lt_refusals busy;
	record(st, 5, 3);
	lt_refusals_arm(own, &busy, 1);
	rc = start_flusher(&f, st, own, 2, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	for (int i = 0; i < 5000 && rc == 0; i++) {   /* at most 10 s; a few ms when all is well */
		flusher_stats(f, &fs);
		if (fs.flushes >= 3)
			break;
		util_sleep_ns(2000000);
	}
	rc = stop_flusher(f);
	lt_refusals_disarm(own);
	lt_expect(fs.flushes >= 3 && fs.failed == fs.flushes, "flush-loop", "with every statement "
	          "answered KIT_DB_BUSY (a lock wait that timed out) flusher_stats said %" PRId64
	          " flushes and %" PRId64 " failed: a flush that returned KIT_DB_BUSY returned an "
	          "error, and .failed counts every flush_views call that did (views.h), the lock "
	          "waits too", fs.flushes, fs.failed);
	lt_expect_int_hint(flush_all(st, own), 3, "views written once the database answered again",
	                   "put-back");
	/* A flush whose token was taken: another flusher's recovery applied
	 * its parked batch before its transaction, so its token's INSERT is
	 * refused on the key and it returns KIT_DB_CONSTRAINT (views.h: the
	 * database's code is returned). That flush returned an error, so
	 * .failed counts it, and its views are the recovery's, not its. */
	stats_count_a_token_taken(t, st, own);

	/* and a store that refuses every command (KIT_STORE_DOWN): the
	 * flushes fail there too, and are counted so. */
	kit_store_refuse(st, -1);
	rc = start_flusher(&f, st, own, 2, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d with the store away", rc);
	memset(&fs, 0, sizeof fs);
	for (int i = 0; i < 5000 && rc == 0; i++) {   /* at most 10 s */
		flusher_stats(f, &fs);
		if (fs.flushes >= 3)
			break;
		util_sleep_ns(2000000);
	}
	if (rc == 0)
		stop_flusher(f);
	kit_store_refuse(st, 0);
	lt_expect(rc != 0 || (fs.flushes >= 3 && fs.failed == fs.flushes), "flush-loop", "with the "
	          "store refusing every command flusher_stats said %" PRId64 " flushes and %" PRId64
	          " failed: a flush that returned KIT_STORE_DOWN failed like one the database "
	          "refused (.failed counts every negative return, whichever side said no)",
	          fs.flushes, fs.failed);
	kit_db_close(own);
	kit_store_free(st);
}

/* More parked batches than one read of views:parked brings back: 1,005
 * batches parked (as 1,005 flushes that crashed after their drain leave
 * them, with no flush in between to recover them), each with video 99
 * besides one of its own; the next flush resolves every one of them
 * (views.h: "Resolve every parked batch"), then writes its own. 1,005 is
 * past any page a recovery might read the list in (100, VIEWS_MAX_BATCH):
 * one that reads it once, or a fixed number of times, leaves some
 * parked. One upsert of every batch at once meets video 99 1,005 times,
 * which PostgreSQL refuses ("ON CONFLICT DO UPDATE command cannot affect
 * row a second time"), and then nothing is ever recovered. */
static void recovery__resolves_every_parked_batch(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 0;
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	for (int i = 0; i < 1005; i++) {   /* park_views alone: a flush would recover the last one */
		record(st, 100 + i, i % 10 + 1);
		record(st, 99, 1);
		lt_expect(take(st, true, out, &n) == 0 && n == 2, "park", "park_views of two dirty "
		          "videos: %d videos", n);
	}
	record(st, 7, 1);
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	lt_expect(r == 6521 && parked_count(st) == 0, "recover", "1,005 batches parked by crashed "
	          "flushes (6,520 views, video 99 in each) and 1 view dirty: the next flush "
	          "returned %" PRId64 " and left %" PRId64 " batches parked; expected 6,521 and 0 "
	          "(does recovery stop after the first SMEMBERS of views:parked, even one of "
	          "VIEWS_MAX_BATCH tokens, or after a number of its own? views.h: resolve every "
	          "parked batch, reading the list again until it is empty. Or does it apply them "
	          "all in one upsert, which meets video 99 more than once? Each batch is applied "
	          "as a flush would, under its own token)", r, parked_count(st));
	lt_expect_int_hint(db_total(t), 6521, "views in the database after that flush", "token");
	kit_store_free(st);
}

/* video_counts made anew, empty: capped, with a CHECK an operator added
 * that refuses a count of 1,000 or more (KIT_DB_CONSTRAINT), or as the
 * lab's schema makes it. */
static void counts_table(struct labtest *t, bool capped)
{
	labtest_exec(t, "DROP TABLE video_counts");
	labtest_exec(t, capped ? "CREATE TABLE video_counts (video_id BIGINT PRIMARY KEY, "
	                         "views BIGINT NOT NULL CHECK (views < 1000))" : VIEWS_SCHEMA);
}

/* The upsert refused on a constraint of video_counts (a CHECK an operator
 * added: KIT_DB_CONSTRAINT), with a token applied before: that batch is
 * not in the database, so its views go back. Only the token's own INSERT
 * refused on applied_flushes' key means "applied elsewhere" (views.h); a
 * flush that takes every KIT_DB_CONSTRAINT for it, or asks the database
 * whether any token at all is applied, deletes the park and loses them. */
static void flush__upsert_refused_on_a_constraint_goes_back(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	schema(t);
	record(st, 1, 3);
	int64_t first = flush_views(st, db, 100);
	counts_table(t, true);
	planted_views(st, 2, 1500);
	int64_t r = flush_views(st, db, 100);
	int64_t back = store_total(st, 2, 2), parked = parked_count(st);
	counts_table(t, false);
	int64_t later = flush_views(st, db, 100);
	int64_t v2 = db_views(t, 2);
	kit_store_free(st);
	lt_expect(first == 3, "flush", "a first flush of 3 views returned %" PRId64, first);
	lt_expect(r < 0 && back + (parked > 0 ? 1500 : 0) == 1500 && v2 == 1500, "put-back",
	          "a flush of 1,500 views of video 2 whose upsert a CHECK on video_counts refused "
	          "(KIT_DB_CONSTRAINT; an earlier token applied) returned %" PRId64 ", with %" PRId64
	          " views back in the store and %" PRId64 " batch(es) parked; the next flush wrote "
	          "%" PRId64 " and video 2 has %" PRId64 ", expected 1,500 back (or parked) and then "
	          "in the database. Only the token's own INSERT refused on applied_flushes' key says "
	          "the batch is in (views.h): is every KIT_DB_CONSTRAINT taken for that, or the "
	          "database asked whether any token at all is applied?", r, back, parked, later, v2);
}

/* The same refusal, then each statement after it fails in turn: refused
 * before it runs, its answer lost, or a lock wait given up. The upsert a
 * CHECK refused left the batch out of the database, and a flush that
 * could not learn more (its question about the token failed) must leave
 * the views where the next flush finds them, put back or parked; the
 * flushes after it write all 1,500 once. A flush that deletes the park
 * whenever the question did not say "not applied" loses them. */
static void flush__every_step_after_a_constraint_refusal_can_fail(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	schema(t);

	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
		for (int k = 1; ; k++) {
			labtest_exec(t, "DELETE FROM video_counts; DELETE FROM applied_flushes");
			struct kit_store *st = new_store(state);
			record(st, 1, 3);
			int64_t first = flush_views(st, db, 100);
			counts_table(t, true);
			planted_views(st, 2, 1500);
			struct kth_stmt ks;
			bool fired;
			int64_t r = flush_failing(st, db, 100, how, k, &ks, &fired);
			counts_table(t, false);
			flush_all(st, db);
			int64_t v2 = db_views(t, 2), left = store_total(st, 1, 9);
			kit_store_free(st);
			lt_expect(first == 3, "flush", "a first flush of 3 views returned %" PRId64, first);
			lt_expect(v2 == 1500 && left == 0, "put-back", "a flush of 1,500 views "
			          "of video 2 whose upsert a CHECK on video_counts refused, and whose "
			          "statement %d (\"%.60s\") %s%s (returned %" PRId64 "); once the CHECK "
			          "was gone, the flushes after it left video 2 at %" PRId64 " views and %"
			          PRId64 " in the store, expected 1,500 and 0. "
			          "A constraint refusal whose token could not be asked about is not known "
			          "applied: is the park deleted when the question itself failed?", k, ks.sql,
			          lt_step_what(how), fired ? "" : " (no such statement)", r, v2, left);
			if (!fired || k > 40)
				break;
		}
	}
}

/* Three batches parked by crashed flushes, and only the last of them
 * applied: a recovery applied it and was then refused on the others (a
 * lock timeout, a dropped connection), or died. Tokens grow, but they are
 * not applied in their order: SMEMBERS hands a set over in any order. The
 * next flush must ask about each token and apply the two earlier ones. A
 * recovery that takes every token at or below the largest applied one for
 * applied deletes their parks, and their views are gone for good. */
static void recovery__a_later_token_applied_first(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	int64_t token[3] = { 0, 0, 0 };
	int n = 0;
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	for (int i = 0; i < 3; i++) {
		record(st, 51 + i, 2 + i);
		lt_expect(park_views(st, VIEWS_MAX_BATCH, &token[i], out, &n) == 0 && n == 1,
		          "park", "park_views of one dirty video: %d videos", n);
	}
	char sql[200];
	snprintf(sql, sizeof sql, "INSERT INTO applied_flushes (token) VALUES (%" PRId64 ")",
	         token[2]);
	labtest_exec(t, sql);
	labtest_exec(t, "INSERT INTO video_counts (video_id, views) VALUES (53, 4)");
	record(st, 7, 1);
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	int64_t v51 = db_views(t, 51), v52 = db_views(t, 52), v53 = db_views(t, 53);
	int64_t parked = parked_count(st);
	kit_store_free(st);
	lt_expect(v51 == 2 && v52 == 3 && v53 == 4, "recover", "three batches parked by crashed "
	          "flushes under tokens %" PRId64 ", %" PRId64 " and %" PRId64 " (videos 51, 52 and "
	          "53 with 2, 3 and 4 views), and only the last of them applied (a recovery applied "
	          "it, then was refused on the others): after the next flush the database has %"
	          PRId64 ", %" PRId64 " and %" PRId64 " views of them. Tokens grow, but they are not "
	          "applied in their order (SMEMBERS hands them over in any order): is a token taken "
	          "for applied because a larger one is (MAX(token))? Ask the database about each "
	          "token (views.h)", token[0], token[1], token[2], v51, v52, v53);
	lt_expect(r == 6 && parked == 0, "recover", "that flush returned %" PRId64 " and left %"
	          PRId64 " batches parked; expected 6 (the two batches it applied, 5 views, and "
	          "video 7's 1) and none", r, parked);
}

/* Dirty videos whose deltas are all 0 take no token and park nothing
 * (views.h: *token is 0 when nothing was taken): a flush of them
 * returns 0 and leaves views:parked empty, so the flush after it, with
 * nothing dirty, runs no statement at all (README section 5). An empty
 * park left behind would send that flush to the database to recover it. */
static void count_any(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)sql;
	(void)t_ns;
	if (ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START)
		++*(int *)arg;
}

static void park__zero_deltas_take_no_token(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 77;
	int64_t token = 77, counter = -1;
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 5), 0);
	planted_views(st, 30, 0);
	planted_views(st, 31, 0);
	int rc = park_views(st, VIEWS_MAX_BATCH, &token, out, &n);
	assert_int_equal(kit_store_get(st, VIEWS_TOKEN, &counter), 0);
	lt_expect(rc == 0 && token == 0 && n == 0 && counter == 5 && parked_count(st) == 0, "token",
	          "park_views of two dirty videos at 0: %d, token %" PRId64 ", %d videos, counter %"
	          PRId64 ", %" PRId64 " batches parked; expected 0, 0, 0, the counter still 5 and "
	          "nothing parked (take the token when the first non-zero delta comes out, not "
	          "before the loop)", rc, token, n, counter, parked_count(st));

	planted_views(st, 30, 0);
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	int started = 0;
	kit_db_set_hook(db, count_any, &started);
	int64_t again = flush_views(st, db, VIEWS_MAX_BATCH);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(r == 0 && again == 0 && parked_count(st) == 0 && started == 0, "token",
	          "a flush of a dirty video at 0 returned %" PRId64 ", the next one %" PRId64 " after "
	          "%d statements, with %" PRId64 " batches parked; expected 0, 0, no statement and "
	          "nothing parked", r, again, started, parked_count(st));
	kit_store_free(st);
}

/* A flush leaves its connection as it found it, on success and when the
 * database refuses: no transaction open, no setting changed (a lock
 * timeout or a SET for speed left on the flusher's connection changes
 * every later flush). */
/* The first statement a flush sent that turns a durability setting down
 * or names one (SET LOCAL synchronous_commit, PRAGMA synchronous or
 * journal_mode, innodb_flush_log_at_trx_commit, sync_binlog, fsync): a
 * LOCAL one ends with the transaction, so the session looks untouched
 * afterwards, yet the COMMIT it weakened answered before its batch was
 * safe, and the park was deleted on that answer. */
struct durability {
	char first[200];
};

/* Whether sql names name outside its comments (-- to the end of the line,
 * slash-star to star-slash; a quoted string is searched too, so
 * set_config('synchronous_commit', ...) counts): a comment sets nothing. */
static bool named_in_sql(const char *sql, const char *name)
{
	char quote = 0;
	for (const char *p = sql; *p; p++) {
		if (quote == 0 && p[0] == '-' && p[1] == '-') {
			p += strcspn(p, "\n");
			if (*p == 0)
				break;
		} else if (quote == 0 && p[0] == '/' && p[1] == '*') {
			const char *end = strstr(p + 2, "*/");
			if (end == NULL)
				break;
			p = end + 1;
		} else if (strncasecmp(p, name, strlen(name)) == 0) {
			return true;
		} else if (*p == '\'' || *p == '"' || *p == '`') {
			quote = quote == 0 ? *p : quote == *p ? 0 : quote;
		}
	}
	return false;
}

static void durability_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct durability *d = arg;
	static const char *const knobs[] = { "synchronous", "journal_mode", "flush_log_at_trx_commit",
	                                     "sync_binlog", "fsync" };
	(void)t_ns;
	if (ev != KIT_DB_STMT_START || d->first[0] || sql == NULL)
		return;
	for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
		if (named_in_sql(sql, knobs[i])) {
			snprintf(d->first, sizeof d->first, "%s", sql);
			return;
		}
}

/* views.h: a flush and its recovery wait for a row as long as the
 * caller's connection allows, and set no lock wait of their own, shorter
 * or longer, not even for their own transaction (SET LOCAL lock_timeout,
 * MariaDB's SET STATEMENT ... FOR, SQLite's busy wait changed in C): a
 * flush behind a longer transaction that gives up after a second of its
 * own has its views bounce back at every tick, and one that waits longer
 * than the caller said holds a flusher the caller meant to free. A flush
 * of five videos, then one that recovers a parked batch first. */
static void flush__keeps_the_callers_lock_wait(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	static const char *const step[] = { "a flush of five videos",
	                                    "a flush that recovered a parked batch first" };
	schema(t);
	assert_int_equal(kit_db_set_lock_timeout(db, 3000), 0);
	for (int i = 0; i < 2; i++) {
		for (int v = 1; v <= 5; v++)
			record(st, v, 2);
		if (i == 1) {
			crash_after_drain(st, db);
			for (int v = 6; v <= 8; v++)
				record(st, v, 2);
		}
		struct lt_timeout_watch w;
		lt_timeout_watch_init(&w, db);
		kit_db_set_hook(db, lt_timeout_watch, &w);
		int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
		kit_db_set_hook(db, NULL, NULL);
		lt_expect(r > 0, "flush", "%s returned %" PRId64 ": %s", step[i], r, labtest_why(db));
		lt_expect(w.sql[0] == '\0', "flush", "%s set a lock wait of its own: it sent \"%s\". "
		          "views.h: a flush waits for a row as long as its connection's lock wait "
		          "allows and sets none of its own, shorter or longer, not even for its "
		          "transaction (SET LOCAL, SET STATEMENT ... FOR): one that gives up after a "
		          "second of its own, behind a longer transaction, has its views bounce back "
		          "at every tick", step[i], w.sql);
		lt_expect(w.seen_ms < 0, "flush", "%s ran a statement under a busy wait of %d ms, "
		          "where its connection's is %d ms (kit_db_lock_timeout): views.h: a flush "
		          "sets no lock wait of its own, not even for its own transaction", step[i],
		          w.seen_ms, w.expect_ms);
	}
	assert_int_equal(kit_db_set_lock_timeout(db, 0), 0);
	kit_store_free(st);
}

static void flush__leaves_the_session_as_it_found_it(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	char before[LT_SESSION_LEN];
	static const char *const step[] = { "a flush", "a flush refused (video_counts away)",
	                                    "a flush with nothing dirty",
	                                    "a flush that recovers a batch a crashed flush parked" };
	schema(t);
	/* a lock timeout of the session's own, not the default: a flush that
	 * sets one and then "restores the default" changes it (PostgreSQL's
	 * lock_timeout, MariaDB's innodb_lock_wait_timeout; SQLite's is the
	 * kit's own busy wait, which no pragma shows) */
	assert_int_equal(kit_db_set_lock_timeout(db, 7000), 0);
	lt_session_own_values(t, db);
	lt_session(t, db, before, sizeof before);
	for (int i = 0; i < 4; i++) {
		if (i < 2)
			record(st, 3, 2);
		if (i == 1)
			table_away(t);
		if (i == 3) {
			/* recovery's transaction is a flush's too (views.h) */
			record(st, 5, 3);
			crash_after_drain(st, db);
		}
		struct durability d = { "" };
		kit_db_set_hook(db, durability_hook, &d);
		int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
		kit_db_set_hook(db, NULL, NULL);
		lt_expect(!d.first[0], "flush", "%s sent \"%s\": a flush leaves durability as the "
		          "server has it (a commit that answers before its batch is on disk loses the "
		          "batch in a crash, and the park is deleted on that answer; a SET LOCAL leaves "
		          "no trace in the session afterwards)", step[i], d.first);
		if (i == 1) {
			lt_expect(lt_in_transaction(t, db) == 0, "flush", "after %s the connection still "
			          "has a transaction open: a refused flush ends with ROLLBACK", step[i]);
			table_back(t);
		}
		lt_expect(i == 1 ? r < 0 : r >= 0, "flush", "%s returned %" PRId64, step[i], r);
		lt_session_unchanged(t, db, before, step[i], "flush");
	}
	flush_all(st, db);
	lt_expect_int_hint(db_total(t), 7, "views in the database", "flush");
	kit_store_free(st);
	labtest_expect_fresh(t, "flush__leaves_the_session_as_it_found_it", "flush",
	                     LT_KEPT_SETTING);
}

/* A batch whose deltas add up to below zero (views taken back with
 * DECRBY, a bot's views removed) is written like any other, and its
 * count is no error code: flush_views and recover_flushes count each
 * delta by its size (views.h). A flush that returns the plain sum
 * returns -4 here, which reads as KIT_DB_NOROW: the flusher counts it
 * as failed, and stop_flusher reports it. */
static void flush__a_batch_below_zero_counts_its_size(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	labtest_exec(t, "INSERT INTO video_counts (video_id, views) VALUES (8, 10), (9, 10)");
	planted_views(st, 8, -4);
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	planted_views(st, 9, -3);
	crash_after_drain(st, db);
	int64_t rec = flush_views(st, db, VIEWS_MAX_BATCH);
	int64_t v8 = db_views(t, 8), v9 = db_views(t, 9);
	kit_store_free(st);
	lt_expect(r == 4 && v8 == 6, "flush", "a flush of video 8 alone, its delta -4 (views taken "
	          "back) and its row 10: it returned %" PRId64 " and the row holds %" PRId64 "; "
	          "expected 4 (each delta counted by its size, views.h%s) and 6", r, v8,
	          r == -4 ? ": -4 is KIT_DB_NOROW, so the flusher counts the flush as failed" : "");
	lt_expect(rec == 3 && v9 == 7, "recover", "a batch of video 9 alone, its delta -3, parked "
	          "by a crashed flush: the next flush recovered it and returned %" PRId64 ", the row "
	          "holds %" PRId64 "; expected 3 (recover_flushes counts each delta by its size too) "
	          "and 7", rec, v9);
}

/* Ids at the ends of what views.h allows: 0, negative, and 2^53 - 1
 * (Redis's Lua holds integers exactly up to 2^53). Each is recorded,
 * drained with its exact count, put back by a refused flush and written
 * to its own row: an id text or key cut short, an id read back through
 * an int, a pattern that takes digits only, a check that ids are
 * positive: each makes one of them come out wrong. Counts have an end
 * below zero too (views.h: a delta taken back with DECRBY is taken like
 * any other): video 8, with a row of 10 views, owes -4; the refused
 * flush puts the -4 back and marks it, and the flush after it leaves 6
 * in its row. A put-back that reads the count with digits only, marks
 * a video only when it gives views back, or an upsert whose conflict
 * arm adds only a delta above 0, each leaves video 8 wrong. */
static void flush__ids_at_the_ends_of_the_domain(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	const int64_t top = 9007199254740991LL;   /* 2^53 - 1 */
	const int64_t ids[] = { 0, -5, top, -top, top - 1 };
	struct view_delta out[VIEWS_MAX_BATCH];
	int n = 0;
	schema(t);
	for (int i = 0; i < 5; i++)
		record(st, ids[i], i + 1);
	int rc = drain_views(st, VIEWS_MAX_BATCH, out, &n);
	lt_expect(rc == 0 && n == 5, "drain", "drain_views of 5 dirty videos (ids 0, -5, 2^53 - 1, "
	          "-(2^53 - 1), 2^53 - 2) returned %d with %d videos", rc, n);
	for (int i = 0; i < 5; i++) {
		int64_t got = -1;
		for (int j = 0; j < n; j++)
			if (out[j].video_id == ids[i])
				got = out[j].n;
		lt_expect(got == i + 1, "drain", "drain_views handed video %" PRId64 " over with %" PRId64
		          " views (%d recorded; -1: not at all): is an id printed into a key or read back "
		          "through something narrower than int64_t, or refused for not being positive?",
		          ids[i], got, i + 1);
	}

	for (int i = 0; i < 5; i++)
		record(st, ids[i], i + 1);
	labtest_exec(t, "INSERT INTO video_counts (video_id, views) VALUES (8, 10), (12, 2)");
	planted_views(st, 8, -4);   /* 4 views of video 8 taken back (DECRBY) */
	planted_views(st, 12, -5);  /* more taken back from video 12 than its row holds */
	table_away(t);
	int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
	table_back(t);
	lt_expect(r < 0, "report-failure", "a flush with the table away returned %" PRId64, r);
	for (int i = 0; i < 5; i++)
		lt_expect(delta(st, ids[i]) == i + 1 && dirty(st, ids[i]), "put-back", "after a refused "
		          "flush video %" PRId64 " has a delta of %" PRId64 " (dirty: %d) in the store, not "
		          "its %d views put back and marked", ids[i], delta(st, ids[i]), dirty(st, ids[i]),
		          i + 1);
	lt_expect(delta(st, 8) == -4 && dirty(st, 8), "put-back", "after a refused flush video 8 has a "
	          "delta of %" PRId64 " (dirty: %d) in the store, not its -4 (views taken back with "
	          "DECRBY) put back and marked: does the put-back read a count with digits only (a "
	          "Lua pattern without the minus sign), or mark a video only when it gives views back "
	          "(n > 0)? A delta below zero left unmarked is never flushed", delta(st, 8),
	          dirty(st, 8));
	flush_all(st, db);
	for (int i = 0; i < 5; i++)
		lt_expect(db_views(t, ids[i]) == i + 1, "flush", "video %" PRId64 " has %" PRId64 " views "
		          "in the database after the flushes, not %d", ids[i], db_views(t, ids[i]), i + 1);
	lt_expect(db_views(t, 8) == 6, "flush", "video 8 had a row of 10 views and a delta of -4: after "
	          "the flushes its row holds %" PRId64 ", not 6 (%s)", db_views(t, 8),
	          db_views(t, 8) == 10 ? "the -4 never reached the row: does the upsert's conflict arm "
	          "add only a delta above 0 (a WHERE excluded.views > 0, a GREATEST(..., 0)), or was "
	          "the delta left unmarked in the store?" : "the -4 was applied a wrong number of times");
	lt_expect(db_views(t, 12) == -3, "flush", "video 12 had a row of 2 views and a delta of -5: "
	          "after the flushes its row holds %" PRId64 ", not -3 (views.h: each delta is added as "
	          "it is, below zero too, so that the database and the store always add up to what was "
	          "recorded; %s)", db_views(t, 12), db_views(t, 12) == 0 ? "does the upsert keep a row "
	          "from going below zero, with a MAX(..., 0) or GREATEST(..., 0)? The 3 views it drops "
	          "are lost for good" : "the -5 was applied a wrong number of times");
	lt_expect_int_hint(db_total(t), 18, "views in the database (15 of the five videos, 6 of video "
	                   "8, -3 of video 12)", "flush");
	kit_store_free(st);
}

/* The database refuses a flush (the table is away) and the store fails
 * at each of the flush's commands in turn, its put-back's included
 * (refused, or run with the reply lost): the flush returns an error
 * every time, and once both are back the views are in the database
 * once. A put-back and the park's delete as two steps counts twice what
 * a failure between them leaves in both places. */
static void flush__store_failure_while_refused(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	schema(t);
	for (int lose = 0; lose <= 1; lose++) {
		for (int k = 1; k <= 40; k++) {
			struct kit_store *st = kit_store_new();
			assert_non_null(st);
			labtest_exec(t, "DELETE FROM video_counts; DELETE FROM applied_flushes");
			assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
			record(st, 1, 3);
			record(st, 2, 5);
			table_away(t);
			struct store_step s = { k, 0, lose };
			struct stmts sent = { 0 };
			kit_db_set_hook(db, count_stmts, &sent);
			store_step_arm(st, &s);
			int64_t r = flush_views(st, db, VIEWS_MAX_BATCH);
			bool fired = store_step_disarm(st, &s);
			kit_db_set_hook(db, NULL, NULL);
			table_back(t);
			lt_expect(r < 0, "put-back", "the database refused a flush and the store %s its command "
			          "%d: flush_views returned %" PRId64 "; the database said no, so it is an "
			          "error whatever became of the put-back", lose ? "lost the reply of" : "refused",
			          k, r);
			/* Once the upsert was sent and refused, the answer is the
			 * database's (views.h), whatever the put-back met after it. */
			lt_expect(sent.writes == 0 || r == KIT_DB_ERR, "report-failure", "the database "
			          "refused a flush's upsert (KIT_DB_ERR, %d: the table is away) and the store "
			          "then %s its command %d: flush_views returned %" PRId64 ", expected the "
			          "database's code (views.h: it is returned also when the put-back fails; "
			          "what could not be put back stays parked, for recovery)",
			          KIT_DB_ERR, lose ? "lost the reply of" : "refused", k, r);
			flush_all(st, db);
			lt_expect(db_views(t, 1) == 3 && db_views(t, 2) == 5 && parked_count(st) == 0,
			          "put-back", "the database refused a flush and the store %s its command %d; "
			          "after the flushes that followed videos 1 and 2 have %" PRId64 " and %" PRId64
			          " views, not 3 and 5, with %" PRId64 " batches parked (%s)",
			          lose ? "lost the reply of" : "refused", k, db_views(t, 1), db_views(t, 2),
			          parked_count(st), db_total(t) > 8 ? "counted twice: put back and left parked "
			          "too? the put-back and the park's delete are one step" : "some lost");
			kit_store_free(st);
			if (!fired)
				break;
		}
	}
}

/* A batch left parked (a flush that crashed after its drain) and nothing
 * dirty: stop_flusher's last flush resolves it ("flush what is left"). */
/* Two stores in one process, each with its own flusher (two tenants, two
 * services in one binary): store 0's flush is held before its first
 * statement, its batch parked, while store 1's flush parks and runs whole
 * on its own connection (tests/harness/gate.h). Each must write its own
 * store's views: nothing a flush keeps between its park and its upsert
 * may be shared between calls (a static array of rows, of parameters, a
 * static SQL buffer). Each is held before its first BEGIN, its batch
 * parked by then. Their tokens are set far apart: both write the one
 * applied_flushes table here. */
/* One of two threads, each draining and parking its own in-process store
 * at the same time as the other (both wait for the other to be running
 * before the first round): 100 rounds of 40 videos recorded once,
 * taken by drain_views and park_views in turn; what it took that was not
 * its own 40, with a count of 1 each, is counted in wrong. */
struct own_drain {
	struct kit_store *st;
	int64_t first;        /* its videos: first .. first + 39 */
	int wrong, failed;
	atomic_int *running;  /* threads at the start line */
};

static void *drain_own(void *arg)
{
	struct own_drain *d = arg;
	static _Thread_local struct view_delta out[VIEWS_MAX_BATCH];
	atomic_fetch_add(d->running, 1);
	for (int spin = 0; atomic_load(d->running) < 2 && spin < 100000000; spin++)
		;
	for (int round = 0; round < 100; round++) {
		for (int64_t v = d->first; v < d->first + 40; v++)
			d->failed += record_view(d->st, v) != 0;
		int n = 0;
		int64_t token = 0;
		int rc = round % 2 ? park_views(d->st, VIEWS_MAX_BATCH, &token, out, &n)
		                   : drain_views(d->st, VIEWS_MAX_BATCH, out, &n);
		d->failed += rc != 0;
		d->wrong += n != 40;
		for (int i = 0; i < n; i++)
			d->wrong += out[i].video_id < d->first || out[i].video_id >= d->first + 40 ||
			            out[i].n != 1;
	}
	return NULL;
}

static int flush_own_store(void *arg, int who, struct kit_db *db)
{
	struct kit_store **st = arg;
	return (int)flush_views(st[who], db, 100);
}

static void flush__two_stores_at_once(void **state)
{
	struct labtest *t = *state;
	struct kit_store *st[2] = { new_store(state), kit_store_new() };
	assert_non_null(st[1]);
	schema(t);
	assert_int_equal(kit_store_set(st[0], VIEWS_TOKEN, 1), 0);
	assert_int_equal(kit_store_set(st[1], VIEWS_TOKEN, 1000000), 0);
	record(st[0], 11, 5);
	record(st[0], 12, 2);
	record(st[1], 21, 3);
	struct lt_gate *g = lt_gate_open(t, 2);
	lt_gate_run_first(g, "BEGIN", (int[]){ 1, 1 }, 1, flush_own_store, st);
	bool held = lt_gate_held(g, 0);
	int rc0 = lt_gate_rc(g, 0), rc1 = lt_gate_rc(g, 1);
	lt_gate_close(g);
	int64_t v11 = db_views(t, 11), v12 = db_views(t, 12), v21 = db_views(t, 21);
	kit_store_free(st[1]);
	kit_store_free(st[0]);
	lt_expect(held, "flush", "store 0's flush_views, with 7 views dirty, ran no statement");
	lt_expect(rc0 == 7 && rc1 == 3 && v11 == 5 && v12 == 2 && v21 == 3, "flush",
	          "two flushes of two stores, in two threads (store 1's run whole while store 0's was "
	          "held before its first BEGIN, both batches parked): they returned %d and %d "
	          "(7 and 3 expected) and the database has %" PRId64 ", %" PRId64 " and %" PRId64
	          " views of videos 11, 12 (store 0: 5, 2) and 21 (store 1: 3). One call wrote the "
	          "other's rows: is the array of drained rows, or the statement's text or parameters, "
	          "static? Each call needs its own (on the stack, or allocated)", rc0, rc1, v11, v12, v21);

	/* The same with recovery: each store has a batch parked by a crashed
	 * flush, and store 0's recovery is held before its BEGIN (the park
	 * read back by then) while store 1's flush recovers its own whole. */
	st[0] = new_store(state);
	st[1] = kit_store_new();
	assert_non_null(st[1]);
	labtest_exec(t, "DELETE FROM video_counts");
	labtest_exec(t, "DELETE FROM applied_flushes");
	assert_int_equal(kit_store_set(st[0], VIEWS_TOKEN, 1), 0);
	assert_int_equal(kit_store_set(st[1], VIEWS_TOKEN, 1000000), 0);
	record(st[0], 11, 5);
	record(st[0], 12, 2);
	record(st[1], 21, 3);
	crash_after_drain(st[0], labtest_db(t));
	crash_after_drain(st[1], labtest_db(t));
	g = lt_gate_open(t, 2);
	lt_gate_run_first(g, "BEGIN", (int[]){ 1, 1 }, 1, flush_own_store, st);
	held = lt_gate_held(g, 0);
	rc0 = lt_gate_rc(g, 0), rc1 = lt_gate_rc(g, 1);
	lt_gate_close(g);
	v11 = db_views(t, 11), v12 = db_views(t, 12), v21 = db_views(t, 21);
	int64_t parked0 = parked_count(st[0]), parked1 = parked_count(st[1]);
	kit_store_free(st[1]);
	kit_store_free(st[0]);
	lt_expect(held, "recover", "store 0's flush_views, with 7 views parked, ran no statement");
	lt_expect(rc0 == 7 && rc1 == 3 && v11 == 5 && v12 == 2 && v21 == 3 && parked0 == 0 &&
	          parked1 == 0, "recover",
	          "two flushes of two stores, each recovering a batch a crashed flush had parked (store "
	          "1's run whole while store 0's was held before its first BEGIN): they returned %d and "
	          "%d (7 and 3 expected), the database has %" PRId64 ", %" PRId64 " and %" PRId64
	          " views of videos 11, 12 (store 0: 5, 2) and 21 (store 1: 3), and %" PRId64 " and %"
	          PRId64 " batches are left parked. One recovery applied the other's rows: is the array "
	          "a parked batch is read back into static? Each call needs its own", rc0, rc1, v11,
	          v12, v21, parked0, parked1);

	/* The drain and the park themselves, in two threads at once on two
	 * in-process stores (each store's step runs under that store's lock
	 * only, so the two steps overlap): each takes its own videos, every
	 * round. A step that keeps the ids SPOP handed over (or its answers) in
	 * a static array shares it with the other store's step. */
	atomic_int running = 0;
	struct own_drain d[2] = { { kit_store_new(), 1, 0, 0, &running },
	                          { kit_store_new(), 1001, 0, 0, &running } };
	assert_non_null(d[0].st);
	assert_non_null(d[1].st);
	assert_int_equal(kit_store_set(d[0].st, VIEWS_TOKEN, 1), 0);
	assert_int_equal(kit_store_set(d[1].st, VIEWS_TOKEN, 1), 0);
	pthread_t th[2];
	int started = 0;
	for (int i = 0; i < 2; i++)
		started += pthread_create(&th[i], NULL, drain_own, &d[i]) == 0;
	assert_int_equal(started, 2);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	kit_store_free(d[1].st);
	kit_store_free(d[0].st);
	lt_expect(d[0].wrong + d[1].wrong + d[0].failed + d[1].failed == 0, "drain",
	          "two threads, each draining and parking its own in-process store at the same time "
	          "(100 rounds of 40 videos with one view each): %d and %d times a drain or park took "
	          "other than its own 40 videos with 1 view each, and %d and %d calls failed. The "
	          "two stores' steps ran at once and one took the other's ids: does the drain's or "
	          "the park's C step keep what SPOP handed over (or its answers) in a static array? "
	          "Each step needs its own, on its stack", d[0].wrong, d[1].wrong, d[0].failed,
	          d[1].failed);
}

/* Four threads, each with an in-process store and a connection of its
 * own, let go together, make the process's first calls: three views of a
 * video of their own recorded, a flush, a recovery with nothing parked.
 * Anything built on a first call and kept where every thread shares it
 * (the upsert's dialect or text behind a plain "ready" flag, a script
 * loaded once) is built by all four at once: the race pass of `hotrow lab
 * check` runs each such check in a process of its own, where these are
 * the first calls. Each flush writes its own three views. */
struct first_flush {
	struct kit_store *st;
	struct kit_db *db;
	int64_t video, flushed, recovered;
	int recorded;
};

static void *first_flush(void *arg)
{
	struct first_flush *f = arg;
	for (int i = 0; i < 3; i++)
		f->recorded += record_view(f->st, f->video) == 0;
	f->flushed = flush_views(f->st, f->db, 100);
	f->recovered = recover_flushes(f->st, f->db);
	return NULL;
}

static void flush__first_calls_at_once(void **state)
{
	struct labtest *t = *state;
	schema(t);
	struct first_flush f[4];
	for (int i = 0; i < 4; i++) {
		f[i] = (struct first_flush){ kit_store_new(), labtest_connect(t), 11 + i, 0, 0, 0 };
		assert_non_null(f[i].st);
		assert_int_equal(kit_store_set(f[i].st, VIEWS_TOKEN, 1 + 1000 * i), 0);
	}
	lt_at_once(4, first_flush, f, sizeof f[0]);
	for (int i = 0; i < 4; i++) {
		kit_db_close(f[i].db);
		kit_store_free(f[i].st);
	}
	for (int i = 0; i < 4; i++)
		lt_expect(f[i].recorded == 3 && f[i].flushed == 3 && f[i].recovered == 0 &&
		          db_views(t, f[i].video) == 3, "flush", "four threads made the process's "
		          "first calls at once, each with an in-process store and a connection of its "
		          "own: video %" PRId64 "'s thread recorded %d of 3 views, its flush returned %"
		          PRId64 " and its recovery %" PRId64 ", and the database has %" PRId64 " views "
		          "of it (expected 3, 0 and 3). Is something built on the first call and shared "
		          "by every thread (the upsert's text or dialect behind a \"ready\" flag) built "
		          "by two at once? Ask kit_db_engine(db) in each call", f[i].video, f[i].recorded,
		          f[i].flushed, f[i].recovered, db_views(t, f[i].video));
}

/* Two stores in one process, each flushed from a thread of its own while
 * the database refuses every statement: each flush parks its batch, meets
 * the refusal and puts the batch back, both put-backs at the same time
 * (an in-process store's step runs under that store's lock only, so the
 * two overlap). 30 rounds of one view of each of a thread's own 40
 * videos: then each store holds exactly its own 40 videos, 30 views each,
 * dirty, with nothing parked, and took a token for every park. A put-back
 * that keeps what it read of the park (SMEMBERS's answer) in a static
 * array hands one store's batch to the other, or frees it twice. */
struct own_putback {
	struct kit_store *st;
	struct kit_db *db;
	int64_t first;        /* its videos: first .. first + 39 */
	int written, failed;
};

static void *put_back_own(void *arg)
{
	struct own_putback *p = arg;
	for (int round = 0; round < 30; round++) {
		for (int64_t v = p->first; v < p->first + 40; v++)
			p->failed += record_view(p->st, v) != 0;
		p->written += flush_views(p->st, p->db, VIEWS_MAX_BATCH) >= 0;
	}
	return NULL;
}

static void flush__two_stores_put_back_at_once(void **state)
{
	struct labtest *t = *state;
	schema(t);
	struct own_putback p[2] = { { kit_store_new(), labtest_connect(t), 1, 0, 0 },
	                            { kit_store_new(), labtest_connect(t), 1001, 0, 0 } };
	for (int i = 0; i < 2; i++) {
		assert_non_null(p[i].st);
		assert_int_equal(kit_store_set(p[i].st, VIEWS_TOKEN, 1), 0);
	}
	lt_step_arm_from(LT_STEP_FAILS, 1);
	lt_at_once(2, put_back_own, p, sizeof p[0]);
	lt_step_disarm();
	char seen[600] = "";
	for (int i = 0; i < 2 && !seen[0]; i++) {
		int64_t other = p[1 - i].first, own = store_total(p[i].st, p[i].first, p[i].first + 39);
		int64_t theirs = store_total(p[i].st, other, other + 39), token = 0;
		int missing = 0, wrong = 0;
		for (int64_t v = p[i].first; v < p[i].first + 40; v++) {
			missing += !dirty(p[i].st, v);
			wrong += delta(p[i].st, v) != 30;
		}
		assert_int_equal(kit_store_get(p[i].st, VIEWS_TOKEN, &token), 0);
		int64_t parked = parked_count(p[i].st);
		if (p[i].failed || p[i].written || own != 1200 || theirs || missing || wrong ||
		    parked || token != 31)
			snprintf(seen, sizeof seen, "store %d (videos %" PRId64 " to %" PRId64 ") holds "
			         "%" PRId64 " views of its own (%d videos not dirty, %d not at 30) and %"
			         PRId64 " of the other store's videos, %" PRId64 " batch(es) parked and "
			         "token %" PRId64 "; %d flush(es) said they wrote, %d record_view failed "
			         "(expected 1,200, all dirty at 30, none, none parked, token 31, 0 and 0)",
			         i, p[i].first, p[i].first + 39, own, missing, wrong, theirs, parked, token,
			         p[i].written, p[i].failed);
	}
	for (int i = 0; i < 2; i++) {
		kit_db_close(p[i].db);
		kit_store_free(p[i].st);
	}
	lt_expect(!seen[0], "put-back", "two in-process stores, each flushed 30 times from a thread "
	          "of its own while the database refused every statement, so that both put their "
	          "parked batches back at the same time: %s. Does the put-back's step keep what it "
	          "read of the park (its members) in a static array that both stores' steps share? "
	          "Each step needs its own, on its stack", seen);
}

/* A flusher that stalls between its park and its transaction (the
 * process paused, swapped out, stopped in a debugger) is taken for dead,
 * and another flusher's recovery applies the parked batch under its
 * token. When the stalled one goes on, its transaction must fail on the
 * token (applied_flushes' primary key), not add the batch a second time:
 * "a token can be applied once only" (§5b). The gate holds the stalled
 * flush before its first BEGIN (its batch parked by then); the recovery
 * waits for the park, asks the database, and runs whole. */
static int stalled_or_recovery(void *arg, int who, struct kit_db *db)
{
	struct kit_store *st = arg;
	if (who == 0)
		return (int)flush_views(st, db, 100);
	int64_t parked = 0;
	for (int i = 0; i < 5000 && parked == 0; i++)
		if (kit_store_scard(st, VIEWS_PARKED, &parked) != 0 || parked == 0)
			util_sleep_ns(2000000);
	return (int)recover_flushes(st, db);
}

/* Videos 31 and 32 with 5 and 2 views dirty, token 1 next; a flush of
 * them (who 0) held before its first BEGIN while other (who 1) runs
 * whole. The store, with what both returned and whether both ran. */
static struct kit_store *stall_a_flush(void **state, lt_gate_call *other, int rc[2], bool *held)
{
	struct labtest *t = *state;
	struct kit_store *st = new_store(state);
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	record(st, 31, 5);
	record(st, 32, 2);
	struct lt_gate *g = lt_gate_open(t, 2);
	lt_gate_run_first(g, "BEGIN", (int[]){ 1, 1 }, 1, other, st);
	*held = lt_gate_held(g, 0) && lt_gate_held(g, 1);
	rc[0] = lt_gate_rc(g, 0);
	rc[1] = lt_gate_rc(g, 1);
	lt_gate_close(g);
	return st;
}

static void token__a_stalled_flush_counts_once(void **state)
{
	struct labtest *t = *state;
	int rc[2];
	bool held;
	struct kit_store *st = stall_a_flush(state, stalled_or_recovery, rc, &held);
	int rc0 = rc[0], rc1 = rc[1];
	int64_t total = db_total(t), tokens = labtest_int(t, "SELECT COUNT(*) FROM applied_flushes");
	int64_t left = store_total(st, 31, 32);
	kit_store_free(st);
	lt_expect(held, "token", "the flush (7 views dirty) or the recovery of its parked batch ran no "
	          "statement");
	lt_expect(total == 7 && rc1 == 7, "token", "a flush stalled before its transaction while "
	          "recover_flushes, on another connection, applied its parked batch (returned %d, 7 "
	          "expected); then the stalled flush went on and returned %d: the database has %" PRId64
	          " views (7 recorded) and %" PRId64 " token(s). The token must go in with a plain INSERT, "
	          "so that a second application of the batch fails on applied_flushes' primary key and "
	          "rolls back: an INSERT that ignores the conflict (ON CONFLICT DO NOTHING, INSERT "
	          "IGNORE) lets the batch's upsert add its views again (§5b)", rc1, rc0, total, tokens);
	lt_expect(rc0 < 0, "token", "the stalled flush, whose token the recovery had applied, returned "
	          "%d: its transaction must fail (the token is in applied_flushes) and report it", rc0);
	lt_expect_int_hint(left, 0, "views left in the store's deltas after both", "token");
}

/* The same stall, but the recovery that applied the batch died after its
 * COMMIT, before it deleted the park: the token is in applied_flushes,
 * the 7 views are in video_counts, and the park still lists them. When
 * the stalled flush goes on, its token's INSERT fails on the key: the
 * batch was applied, so nothing goes back into the store (views.h). A
 * flush that puts back whatever the park still holds on every refusal
 * hands the 7 views to the next flush, which adds them a second time.
 * The recovery here is the check's own SQL on the gate's connection, so
 * that it can stop where a dead one would. */
static int stalled_or_dead_recovery(void *arg, int who, struct kit_db *db)
{
	struct kit_store *st = arg;
	if (who == 0)
		return (int)flush_views(st, db, 100);
	char *tokens[1] = { NULL };
	int n = 0;
	for (int i = 0; i < 5000 && n == 0; i++)
		if (kit_store_smembers(st, VIEWS_PARKED, 1, tokens, &n) != 0 || n == 0)
			util_sleep_ns(2000000);
	if (n == 0)
		return KIT_DB_NOROW;
	int rc = kit_db_begin(db);
	if (rc == 0)
		rc = kit_db_exec(db, "INSERT INTO applied_flushes (token) VALUES ($1)", 1,
		                 (const char *[]){ tokens[0] });
	if (rc == 0)
		rc = kit_db_exec(db, "INSERT INTO video_counts (video_id, views) VALUES (31, 5), (32, 2)",
		                 0, NULL);
	rc = rc == 0 ? kit_db_commit(db) : (kit_db_rollback(db), rc);
	free(tokens[0]);
	return rc;
}

static void token__a_stalled_flush_after_a_recovery_that_died(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	int rc[2];
	bool held;
	struct kit_store *st = stall_a_flush(state, stalled_or_dead_recovery, rc, &held);
	int rc0 = rc[0], rc1 = rc[1];
	int64_t back = store_total(st, 31, 32);
	int64_t later = flush_views(st, db, 100);
	int64_t total = db_total(t), parked = -1;
	kit_store_scard(st, VIEWS_PARKED, &parked);
	kit_store_free(st);
	lt_expect(held && rc1 == 0, "token", "the flush (7 views dirty) ran no statement, or the "
	          "check's own recovery of its parked batch failed (%d)", rc1);
	lt_expect(rc0 < 0, "token", "a flush stalled before its transaction, and meanwhile its batch "
	          "was applied under its token by a recovery that died before it deleted the park: "
	          "the stalled flush went on and returned %d; its token's INSERT must fail and the "
	          "error be returned", rc0);
	lt_expect(back == 0 && total == 7, "token", "a flush stalled before its transaction, and "
	          "meanwhile its batch (7 views) was applied under its token by a recovery that died "
	          "after COMMIT, its park not deleted. The stalled flush, refused on the token, put "
	          "%" PRId64 " views back into the store, and the next flush wrote %" PRId64 ": the "
	          "database has %" PRId64 " views, 7 recorded. A token refused on applied_flushes' "
	          "key means the batch is in the database: put nothing back (views.h), and leave "
	          "the park to recovery, which only deletes it", back, later, total);
	lt_expect_int_hint(parked, 0, "batches still parked after the next flush", "token");
}

/* The same stall, the recovery whole (the batch applied, its park
 * deleted), but when the stalled flush goes on the database refuses it as
 * busy, not on the token's key: a third connection has locked the token's
 * row (a DELETE of applied_flushes left open; on SQLite its write lock)
 * and the flush's connection waits 0.3 s at most. Its park is gone, so
 * nothing goes back (views.h: then nothing goes back); the rows it holds
 * in memory are not its to give back, and its refusal is an error, not
 * the batch's count. */
struct busy_after_recovery {
	struct kit_store *st;
	struct kit_db *locker;
	int locked;                  /* the locker's BEGIN and DELETE: 0 when both ran */
	pthread_t releaser;
	bool releasing;              /* the releaser thread was started */
	atomic_bool done;            /* the check is past the gate */
};

/* The locker's lock goes at the latest 3 s after it was taken, so a
 * flush that waits longer than its connection allows (a lock timeout of
 * its own, "for ever") cannot hang the check; at once when the check is
 * past the gate. */
static void *release_later(void *arg)
{
	struct busy_after_recovery *b = arg;
	for (int i = 0; i < 150 && !atomic_load(&b->done); i++)
		util_sleep_ns(20 * 1000000LL);
	kit_db_rollback(b->locker);
	return NULL;
}

static int stalled_busy_or_recovery(void *arg, int who, struct kit_db *db)
{
	struct busy_after_recovery *b = arg;
	if (who == 0) {
		kit_db_set_lock_timeout(db, 300);
		return (int)flush_views(b->st, db, 100);
	}
	int rc = stalled_or_recovery(b->st, who, db);
	b->locked = kit_db_begin(b->locker);
	if (b->locked == 0)
		b->locked = kit_db_exec(b->locker, "DELETE FROM applied_flushes", 0, NULL);
	b->releasing = pthread_create(&b->releaser, NULL, release_later, b) == 0;
	if (!b->releasing)
		kit_db_rollback(b->locker);
	return rc;
}

static void token__a_stalled_flush_refused_as_busy_puts_nothing_back(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct busy_after_recovery b = { .st = new_store(state), .locker = labtest_connect(t) };
	atomic_init(&b.done, false);
	schema(t);
	assert_int_equal(kit_store_set(b.st, VIEWS_TOKEN, 1), 0);
	record(b.st, 31, 5);
	record(b.st, 32, 2);
	struct lt_gate *g = lt_gate_open(t, 2);
	lt_gate_run_first(g, "BEGIN", (int[]){ 1, 1 }, 1, stalled_busy_or_recovery, &b);
	bool held = lt_gate_held(g, 0) && lt_gate_held(g, 1);
	int rc0 = lt_gate_rc(g, 0), rc1 = lt_gate_rc(g, 1);
	lt_gate_close(g);
	atomic_store(&b.done, true);
	if (b.releasing)
		pthread_join(b.releaser, NULL);
	kit_db_close(b.locker);
	int64_t back = store_total(b.st, 31, 32), parked = parked_count(b.st);
	int64_t later = flush_views(b.st, db, 100);
	int64_t total = db_total(t);
	kit_store_free(b.st);
	lt_expect(held && rc1 == 7 && b.locked == 0, "token", "the flush (7 views dirty) ran no "
	          "statement, or the recovery of its parked batch returned %d (7 expected), or the "
	          "check's own lock failed (%d)", rc1, b.locked);
	lt_expect(rc0 < 0, "put-back", "a flush stalled before its transaction, whose batch a "
	          "recovery then applied (and deleted its park), went on, was refused as busy (a "
	          "lock held past its 0.3 s wait), and returned %d: the database refused it, so the "
	          "database's code is returned (views.h), not the batch's count: the views it would "
	          "count were written by the recovery, and a caller or flusher_stats counts them "
	          "twice", rc0);
	lt_expect(back == 0 && parked == 0 && later == 0 && total == 7, "put-back", "a flush stalled "
	          "before its transaction, whose batch (7 views) a recovery then applied and whose "
	          "park it deleted, was refused as busy when it went on: it left %" PRId64 " views in "
	          "the store and %" PRId64 " batches parked, the next flush wrote %" PRId64 ", and "
	          "the database has %" PRId64 " views, 7 recorded. The put-back gives back what the "
	          "park still holds, read in the step that deletes it, never the rows the flush holds "
	          "in memory: a park that is gone was applied by a recovery, and nothing goes back "
	          "(views.h)", back, parked, later, total);
}

/* Two recoveries of one parked batch at once (a flusher restarted while
 * the old one, taken for dead, was only stalled): both ask the database,
 * both find the token not applied, both read the park. The gate holds
 * the first before its k-th statement, for every k in turn, while the
 * second applies the batch whole; when the first goes on, its token's
 * INSERT must fail on applied_flushes' key, as a flush's does: "even a
 * recovery that runs twice cannot count a batch twice" (§5b). A recovery
 * whose INSERT ignores the conflict ("the recovery asked first, so a
 * duplicate can only be a repeat") adds the batch a second time, and so
 * does one that asks inside its transaction and then inserts with ON
 * CONFLICT DO NOTHING or INSERT IGNORE, when the second lands between
 * the look and the insert (PostgreSQL, MariaDB; on SQLite the first's
 * BEGIN IMMEDIATE keeps the second out until it is done). And whatever
 * each one answered, it leaves its connection with no transaction open:
 * an INSERT refused on the key ends the transaction only with a ROLLBACK
 * (on SQLite the open one keeps the file's write lock). */
static int recover_own(void *arg, int who, struct kit_db *db)
{
	(void)who;
	return (int)recover_flushes(arg, db);
}

static void token__two_recoveries_count_once(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	schema(t);
	bool held = true;
	for (int k = 1; held; k++) {
		labtest_exec(t, "DELETE FROM video_counts");
		labtest_exec(t, "DELETE FROM applied_flushes");
		struct kit_store *st = new_store(state);
		record(st, 31, 5);
		record(st, 32, 2);
		crash_after_drain(st, db);
		struct lt_gate *g = lt_gate_open(t, 2);
		lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, recover_own, st);
		held = lt_gate_held(g, 0);
		int rc0 = lt_gate_rc(g, 0), rc1 = lt_gate_rc(g, 1);
		int64_t open0 = lt_in_transaction(t, lt_gate_db(g, 0));
		int64_t open1 = lt_in_transaction(t, lt_gate_db(g, 1));
		lt_gate_close(g);
		lt_expect(k > 1 || held, "token", "the first recovery of a parked batch of 7 views ran "
		          "no statement");
		lt_expect(open0 == 0 && open1 == 0, "token", "two recover_flushes of one parked batch "
		          "of 7 views, the first held before its statement %d while the second ran whole: "
		          "they returned %d (the first) and %d (the second), and the %s left its "
		          "connection %s. Whatever a recovery answers, its transaction is over when it "
		          "returns: a token INSERT refused on applied_flushes' key ends it only with a "
		          "ROLLBACK (on SQLite the open one keeps BEGIN IMMEDIATE's write lock, and every "
		          "other connection's write waits and fails; on PostgreSQL the session stays in "
		          "a failed transaction). Likeliest cause: the path for the refused token (\"the "
		          "INSERT wrote nothing\") returns without kit_db_rollback", k, rc0, rc1,
		          open0 != 0 ? "first" : "second", (open0 != 0 ? open0 : open1) > 0 ?
		          "inside a transaction" : "in a state the check could not read (a failed "
		          "transaction left open?)");
		int64_t total = db_total(t), tokens = labtest_int(t, "SELECT COUNT(*) FROM applied_flushes");
		int64_t parked = 0;
		lt_expect(kit_store_scard(st, VIEWS_PARKED, &parked) == 0, NULL, "SCARD views:parked failed");
		int64_t left = store_total(st, 31, 32);
		kit_store_free(st);
		lt_expect(total == 7 && (rc0 == 7 || rc1 == 7), "token", "two recover_flushes of one "
		          "parked batch of 7 views, the first held before its statement %d while the "
		          "second ran whole: they returned %d (the first) and %d (the second); the "
		          "database has %" PRId64 " views (7 recorded) and %" PRId64 " token(s). Every "
		          "path that applies a batch must insert its token with a plain INSERT, "
		          "recovery's too, so that a second application fails on applied_flushes' "
		          "primary key and rolls back: an INSERT that ignores the conflict (ON CONFLICT "
		          "DO NOTHING, INSERT IGNORE) lets the upsert add the batch again, and a look "
		          "first (SELECT ... WHERE token = $1) proves nothing about the moment of the "
		          "INSERT: the other recovery can apply the batch in between (§5b)", k, rc0, rc1,
		          total, tokens);
		lt_expect(parked == 0 && left == 0, "token", "after both recoveries (the first held "
		          "before its statement %d) %" PRId64 " batch(es) still parked and %" PRId64
		          " views in the deltas; expected none", k, parked, left);
		/* What each call returns: "the number of views applied" (views.h),
		 * and what two calls report adds up to what they added to the
		 * database (an error reports none). A batch whose token INSERT is
		 * refused on the key was applied by the other recovery, which
		 * counts it; counted by the refused one too, flush_views' count
		 * and flusher_stats.views say it twice. */
		int64_t reported = (rc0 > 0 ? rc0 : 0) + (rc1 > 0 ? rc1 : 0);
		lt_expect(reported == total, "recover", "two recover_flushes of one parked batch of 7 "
		          "views returned %d (the first, held before its statement %d) and %d (the "
		          "second, which ran whole meanwhile): together they report %" PRId64 " views "
		          "applied, and the database gained %" PRId64 ". recover_flushes returns the "
		          "views it applied (views.h); a token INSERT refused on applied_flushes' key "
		          "applied nothing here: that batch is another call's, counted there. Likeliest "
		          "cause: the refused INSERT taken for \"the batch is in the database now\" and "
		          "its views added to what the call returns (only unpark, or return the error)",
		          rc0, k, rc1, reported, total);
	}
}

/* A flush parks its batch; before its transaction another flusher's
 * recovery, on its own connection, applies that batch (a store hook runs
 * it right after the park). The flush's transaction then meets its token
 * in applied_flushes: with the token's INSERT first, it fails there,
 * before it has written a single count. With the upsert first, it takes
 * the hot rows' locks and writes every count of a batch that is not
 * wanted, and only then learns it (the rollback still keeps the count
 * right: what this costs is lock time on the busiest rows). */
struct recover_beside {
	struct kit_db *db;
	int64_t applied;
	bool ran;
	struct lt_lock_watch w;   /* the recovery's statements, on db */
};

static void recover_after_park(void *arg, struct kit_store *st, const char *cmd, const char *key,
                               int rc)
{
	struct recover_beside *r = arg;
	int64_t parked = 0;
	(void)cmd, (void)key, (void)rc;
	if (r->ran || kit_store_scard(st, VIEWS_PARKED, &parked) != 0 || parked == 0)
		return;
	r->ran = true;
	r->w = (struct lt_lock_watch){ .table = "video_counts" };
	kit_db_set_hook(r->db, lt_lock_watch_hook, &r->w);
	r->applied = recover_flushes(st, r->db);
	kit_db_set_hook(r->db, NULL, NULL);
}

static void token__a_batch_applied_before_writes_no_count(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_db *other = labtest_connect(t);
	struct kit_store *st = new_store(state);
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	record(st, 41, 5);
	record(st, 42, 2);
	struct recover_beside r = { .db = other };
	struct stmts s = { 0 };
	kit_db_set_hook(db, count_stmts, &s);
	kit_store_set_hook(st, recover_after_park, &r);
	int64_t rc = flush_views(st, db, 100);
	kit_store_set_hook(st, NULL, NULL);
	kit_db_set_hook(db, NULL, NULL);
	int64_t open = lt_in_transaction(t, db);
	int64_t total = db_total(t);
	kit_db_close(other);
	kit_store_free(st);
	lt_expect(r.ran && r.applied == 7, "token", "recover_flushes, run on another connection right "
	          "after the flush parked its 7 views, %s %" PRId64, r.ran ? "returned" : "never ran: "
	          "nothing was parked; views", r.applied);
	lt_expect(open == 0, "token", "a flush whose parked batch another flusher's recovery "
	          "applied before its transaction returned %" PRId64 " and left its connection %s: "
	          "the token's INSERT refused on the key ends the transaction only with a "
	          "ROLLBACK (on SQLite the open transaction keeps the file's write lock, and the "
	          "next call's BEGIN fails)", rc, open > 0 ? "inside a transaction" :
	          "in a transaction it cannot leave");
	lt_expect(rc < 0 && total == 7, "token", "a flush whose parked batch another flusher's "
	          "recovery applied before its transaction returned %" PRId64 " and the database has %"
	          PRId64 " views (7 recorded): its transaction must fail on the token and roll back",
	          rc, total);
	/* The recovery applied the batch: its transaction is a flush's, token
	 * first, the upsert last before COMMIT (views.h: "exactly as a flush
	 * would"), whatever the flush path does. */
	lt_expect(r.w.writes > 0 && r.w.after == 0, "token", "recover_flushes, applying a parked batch "
	          "of 7 views on its own connection, wrote video_counts %d time(s) and then ran %d "
	          "statement(s) in the same transaction before COMMIT (the first: %s); expected one "
	          "upsert and nothing after it: a recovery applies a batch exactly as a flush does "
	          "(§5b: INSERT INTO applied_flushes first, then the upsert, then COMMIT). A token "
	          "written after the upsert, or a read of the new totals before COMMIT, keeps the "
	          "batch's rows locked a round trip more, and a recovery of a batch already applied "
	          "writes every count before it learns so", r.w.writes, r.w.after,
	          r.w.after ? r.w.what : "-");
	lt_expect(s.writes == 0, "token", "that flush, whose token was already in applied_flushes, "
	          "wrote video_counts %d time(s) before it learnt so: record the token first (§5b: "
	          "INSERT INTO applied_flushes, then the upsert, then COMMIT), so that a batch applied "
	          "before fails at once, before it locks and writes the hot rows", (int)s.writes);
}

/* Two flushers on a store that has just restarted (no views:token) both
 * find the counter missing. Flusher A reads the largest applied token (0)
 * and stalls there (swapped out, stopped in a debugger: the lab's own
 * stall model); flusher B, on another connection, sets the counter, parks
 * video 1's 5 views under token 2 and commits them; then 3 views of video
 * 2 are recorded. When A goes on, the counter is no longer missing: its
 * value must stay, so that A parks under token 3. A flusher that sets
 * the counter whatever it holds puts it back to 1 and parks video 2 under
 * token 2 again: its INSERT is refused on the key, the batch taken for
 * "applied elsewhere", and the 3 views are lost. A database hook runs B
 * right after A's first read of applied_flushes ends. */
struct flush_beside {
	struct kit_store *st;
	struct kit_db *db;       /* B's connection */
	bool ran;
	int64_t rc;              /* what B's flush returned */
};

static void flush_after_token_read(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct flush_beside *b = arg;
	(void)t_ns;
	if (b->ran || (ev != KIT_DB_STMT_END && ev != KIT_DB_TX_STMT_END) ||
	    !strstr(sql, "applied_flushes") || strncasecmp(sql, "INSERT", 6) == 0)
		return;
	b->ran = true;
	b->rc = flush_views(b->st, b->db, 100);
	for (int i = 0; i < 3; i++)
		if (record_view(b->st, 2) != 0)
			b->rc = KIT_STORE_ERR;
}

static void token__set_after_another_flusher_set_it(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_store *st = new_store(state);
	struct flush_beside b = { .st = st, .db = labtest_connect(t) };
	schema(t);
	record(st, 1, 5);
	kit_db_set_hook(db, flush_after_token_read, &b);
	int64_t rc = flush_views(st, db, 100);
	kit_db_set_hook(db, NULL, NULL);
	int64_t one = db_views(t, 1), two = db_views(t, 2), left = store_total(st, 1, 2);
	int64_t parked = parked_count(st);
	kit_db_close(b.db);
	kit_store_free(st);
	lt_expect(b.ran && b.rc == 5, "token", "a flush on a store without views:token, run on "
	          "another connection after the first flush's read of applied_flushes, %s %" PRId64
	          " (5 views of video 1 dirty)", b.ran ? "returned" : "never ran: the first flush "
	          "read no applied_flushes; views", b.rc);
	lt_expect(one == 5 && two == 3 && left == 0 && parked == 0, "token", "two flushers found "
	          "views:token missing (a store that restarted): the first read the largest applied "
	          "token (0) and stalled; the second set the counter, parked video 1's 5 views under "
	          "token 2 and committed them; 3 views of video 2 were recorded; then the first went "
	          "on and returned %" PRId64 ". The database has %" PRId64 " views of video 1 and %"
	          PRId64 " of video 2 (5 and 3 expected), the store %" PRId64 " and %" PRId64 " "
	          "batch(es) parked. Likeliest cause: views:token set with a plain SET to the "
	          "largest + 1, back under the tokens the other flusher used since, so the park "
	          "reused token 2, its INSERT was refused on the key and the batch taken for "
	          "applied. Set the counter only while it is still missing, in one step (SET NX, "
	          "or a script: views.h)", rc, one, two, left, parked);
	lt_expect(rc == 3, "token", "the stalled flush returned %" PRId64 "; after the other "
	          "flusher set the counter it parks and writes video 2's 3 views under a new "
	          "token, and returns 3", rc);
}

/* For flusher__stats_count_only_what_was_written: a flusher whose first
 * flush parks 7 views, which a recovery on another connection applies
 * right after the park (the store hook of the check above), so that the
 * flush's token INSERT is refused on the key. */
static void stats_count_a_token_taken(struct labtest *t, struct kit_store *st, struct kit_db *own)
{
	struct kit_db *other = labtest_connect(t);
	struct recover_beside r = { .db = other };
	struct flusher_stats fs = { 0 };
	struct flusher *f = NULL;
	int64_t before = db_total(t);
	record(st, 41, 5);
	record(st, 42, 2);
	kit_store_set_hook(st, recover_after_park, &r);
	int rc = start_flusher(&f, st, own, 2, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	for (int i = 0; i < 5000; i++) {   /* at most 10 s; a few ms when all is well */
		flusher_stats(f, &fs);
		if (fs.flushes >= 1)
			break;
		util_sleep_ns(2000000);
	}
	stop_flusher(f);
	kit_store_set_hook(st, NULL, NULL);
	kit_db_close(other);
	lt_expect(r.ran && r.applied == 7 && db_total(t) - before == 7, "token", "recover_flushes, "
	          "run on another connection right after the flusher parked its 7 views, %s %"
	          PRId64 "; the database gained %" PRId64 " views", r.ran ? "returned" : "never ran: "
	          "nothing was parked; views", r.applied, db_total(t) - before);
	lt_expect(fs.flushes >= 1 && fs.failed == 1 && fs.views == 0, "flush-loop", "a flusher "
	          "whose first flush met its token already applied (another flusher's recovery "
	          "applied its parked batch of 7 views before its transaction: the token's INSERT "
	          "refused on the key, KIT_DB_CONSTRAINT returned) said %" PRId64 " flushes, %" PRId64
	          " failed and %" PRId64 " views: that flush returned an error, and .failed counts "
	          "every flush that did (views.h), this one too; its views are the recovery's. "
	          "Likeliest cause: KIT_DB_CONSTRAINT left out of .failed (\"the batch is in the "
	          "database\"), or counted as views", fs.flushes, fs.failed, fs.views);
}

static void flusher__stop_resolves_a_parked_batch(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	record(st, 4, 7);
	crash_after_drain(st, own);
	int rc = start_flusher(&f, st, own, 60000, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	rc = stop_flusher(f);
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");
	lt_expect(db_total(t) == 7 && parked_count(st) == 0, "stop", "a batch of 7 views parked, "
	          "nothing dirty, a flusher started and stopped: %" PRId64 " views in the database, %"
	          PRId64 " batches still parked; stop_flusher's flush resolves what is parked too "
	          "(does it look at the dirty set before its first flush?)", db_total(t), parked_count(st));
	kit_db_close(own);
	kit_store_free(st);
}

/* The flusher's thread and the test's (flusher_stats, stop_flusher)
 * share the flusher's mutex: each unlock by the thread that locked it.
 * An unlock whose pthread_mutex_lock was left out lets go of a lock the
 * flusher's thread may hold at that moment, or of none; the harness knows
 * which thread holds each mutex (tests/harness/locks.h), so the missing
 * lock is seen whatever the timing, with no sanitizer. The same for a
 * condition attribute pthread_condattr_init never set up. */
static void flusher__locks_by_the_rules(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	struct flusher_stats fs = { 0 };
	schema(t);
	long stray = lt_lock_stray_unlocks(), in_thread = lt_lock_stray_unlocks_in_started();
	long attrs = lt_lock_uninit_condattrs(), destroyed = lt_lock_destroyed_in_use();
	record(st, 3, 10);
	long starts = lt_thread_starts();
	int rc = start_flusher(&f, st, own, 2, 100);
	long inited_at = lt_lock_cond_init_starts();
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	lt_expect(inited_at <= starts, "flush-loop", "start_flusher called pthread_cond_init after "
	          "its pthread_create: the thread may lock the flusher's mutex and wait on its "
	          "condition variable before they are set up (its wait then runs on the default "
	          "clock, or on a variable being overwritten). Initialise the mutex and the condition "
	          "variable, then start the thread");
	bool in = eventually(&(struct watch){ .t = t, .f = f, .st = st }, ten_written);
	flusher_stats(f, &fs);
	rc = stop_flusher(f);

	long bad = lt_lock_stray_unlocks() - stray, bad_thread = lt_lock_stray_unlocks_in_started() - in_thread;
	lt_expect(bad == 0, "flush-loop", "%ld pthread_mutex_unlock call(s) let go of a mutex the calling "
	          "thread did not hold (%ld in the flusher's thread, %ld in the test's, i.e. in "
	          "flusher_stats or stop_flusher): an unlock whose pthread_mutex_lock is missing releases "
	          "the lock the other thread may be holding, and the stats or the stop flag are read and "
	          "written with no lock at all", bad, bad_thread, bad - bad_thread);
	lt_expect(lt_lock_destroyed_in_use() == destroyed, "flush-loop", "stop_flusher destroyed the "
	          "flusher's mutex or condition variable (%ld call(s)) while the thread that locks "
	          "and waits on them was not yet joined: the thread may still be waking, taking the "
	          "mutex or returning from its wait on it, and a destroyed mutex or condition variable "
	          "is undefined to use. Join the thread first, then destroy them",
	          lt_lock_destroyed_in_use() - destroyed);
	lt_expect(lt_lock_uninit_condattrs() == attrs, "flush-loop", "pthread_condattr_setclock or "
	          "pthread_cond_init was given a condition attribute that pthread_condattr_init never "
	          "set up: its contents are whatever the stack held (call pthread_condattr_init first)");
	lt_expect(in, "flush-loop", "the flusher's stats never reached 10 views written (database has %"
	          PRId64 ")", db_total(t));
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "flush-loop");
	lt_expect_int_hint(db_total(t), 10, "views in the database", "flush-loop");
	kit_db_close(own);
	kit_store_free(st);
}

/* Nanoseconds from b to a. */
static int64_t ts_diff(struct timespec a, struct timespec b)
{
	return ((int64_t)a.tv_sec - (int64_t)b.tv_sec) * 1000000000LL + (a.tv_nsec - b.tv_nsec);
}

/* The clock a recorded wait's deadline is on: its own when it says, else
 * the one of the two read as it began that the deadline is nearer to
 * (they are some 50 years apart). */
static bool wait_on_monotonic(const struct lt_wait *w)
{
	if (w->clock == CLOCK_MONOTONIC || w->clock == CLOCK_REALTIME)
		return w->clock == CLOCK_MONOTONIC;
	int64_t m = ts_diff(w->deadline, w->began_mono), r = ts_diff(w->deadline, w->began_real);
	return (m < 0 ? -m : m) < (r < 0 ? -r : r);
}

/* The timed waits from n on of the threads started from start number
 * s0 on (the flusher's: a thread a failed check left running started
 * before), into w[0 .. max-1]; how many. */
static int flusher_waits(long n, long s0, struct lt_wait *w, int max)
{
	int got = 0;
	for (long i = n; i < lt_lock_waits() && got < max; i++)
		if (lt_lock_wait(i, &w[got]) && w[got].thread >= s0)
			got++;
	return got;
}

/* Poll until the flusher's thread has begun want timed waits since n,
 * for at most 10 s. */
static bool waits_past(long n, long s0, int want)
{
	struct lt_wait w[8];
	for (int i = 0; i < 5000; i++) {
		if (flusher_waits(n, s0, w, 8) >= want)
			return true;
		util_sleep_ns(2000000);
	}
	return false;
}

/* Each wait of the flusher ends one interval after where it started: the
 * first one interval after a clock reading made after start_flusher was
 * called and before the wait began (to 0.1 ms), each later one at least
 * one interval after the deadline of a wait that timed out. The harness
 * records every pthread_cond_timedwait of the flusher's thread
 * (tests/harness/locks.h), so an interval worked out wrong by a
 * millisecond over 24 days (INT_MAX ms), or a deadline not moved on
 * after a tick, is seen without waiting for either. */
/* Holds the flusher thread's first statements (every one, or only its
 * BEGINs: one a flush) hold_ms each, left of them: its first flushes are
 * slow, one after another, as under a database that stays slow. */
#define STALLS 12
struct stall {
	long flusher_no;        /* the start number of the flusher's thread */
	atomic_int left;        /* statements still to hold */
	int hold_ms;
	bool begins_only;       /* hold only the statements that open a transaction */
};

static void stall_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct stall *s = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	if (s->begins_only && strncasecmp(sql, "BEGIN", 5) != 0 && strncasecmp(sql, "START", 5) != 0)
		return;
	if (lt_thread_start_no() >= s->flusher_no && atomic_fetch_sub(&s->left, 1) > 0)
		util_sleep_ns(s->hold_ms * 1000000LL);
}

/* A flusher of interval_ms taking one video a flush, 8 videos dirty,
 * its first flushes slowed by s (filled in here but for hold_ms, left
 * and begins_only): of its timed waits after the first, how many began
 * with their deadline already past (*got: how many waits in all, 8
 * expected within 10 s). */
static int waits_behind_slow_flushes(struct labtest *t, struct kit_store *st, struct kit_db *own,
                                     int interval_ms, struct stall *s, int *got)
{
	struct lt_wait after[8];
	struct flusher *f = NULL;
	for (int v = 0; v < 8; v++)
		record(st, 60 + v, 1);
	long n = lt_lock_waits(), s0 = lt_thread_starts();
	s->flusher_no = s0;
	kit_db_set_hook(own, stall_hook, s);
	int rc = start_flusher(&f, st, own, interval_ms, 1);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher(interval %d ms, max 1) returned %d",
	          interval_ms, rc);
	waits_past(n, s0, 8);
	stop_flusher(f);
	kit_db_set_hook(own, NULL, NULL);
	(void)t;
	*got = flusher_waits(n, s0, after, 8);
	int behind = 0;
	for (int k = 1; k < *got; k++) {
		bool mono = wait_on_monotonic(&after[k]);
		behind += ts_diff(after[k].deadline, mono ? after[k].began_mono : after[k].began_real) <= 0;
	}
	return behind;
}

static void flusher__deadline_is_one_interval_away(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	const int intervals[] = { INT32_MAX, 2148, 1001 };
	const int64_t slack = 100000;   /* 0.1 ms, for a clock read in microseconds */
	schema(t);
	for (int i = 0; i < 3; i++) {
		struct flusher *f = NULL;
		struct timespec mono0, real0;
		struct lt_wait w;
		long n = lt_lock_waits(), s0 = lt_thread_starts();
		clock_gettime(CLOCK_MONOTONIC, &mono0);
		clock_gettime(CLOCK_REALTIME, &real0);
		/* the thread runs first (tests/harness/threads.h): what it reads
		 * at its start must be there before pthread_create */
		lt_thread_head_start(20);
		int rc = start_flusher(&f, st, own, intervals[i], 100);
		lt_thread_head_start(0);
		lt_expect(rc == 0 && f, "flush-loop", "start_flusher(interval %d ms) returned %d",
		          intervals[i], rc);
		bool waited = waits_past(n, s0, 1) && flusher_waits(n, s0, &w, 1) == 1;
		stop_flusher(f);
		lt_expect(waited, "flush-loop", "the flusher with a %d ms interval never called "
		          "pthread_cond_timedwait within 10 s of its start (a stop must be able to wake "
		          "it: wait on a condition variable with a deadline, §6)", intervals[i]);
		bool mono = wait_on_monotonic(&w);
		lt_expect(mono, "flush-loop", "with a %d ms interval the flusher's first "
		          "pthread_cond_timedwait deadline is on CLOCK_REALTIME, the wall clock: a step of "
		          "it (NTP, an administrator's date -s, a VM restored) moves every deadline by as "
		          "much, so the flusher stops flushing for that long or flushes back to back. "
		          "Create the condition variable with pthread_condattr_setclock(&attr, "
		          "CLOCK_MONOTONIC) and read that clock (hint 7)", intervals[i]);
		int64_t from = ts_diff(w.deadline, mono ? mono0 : real0) - intervals[i] * 1000000LL;
		int64_t span = ts_diff(mono ? w.began_mono : w.began_real, mono ? mono0 : real0);
		bool no_interval = from < -slack && from + intervals[i] * 1000000LL >= -slack;
		bool slept = from >= LT_SLEPT_NS - slack && from <= LT_SLEPT_NS + span + slack;
		lt_expect(from >= -slack && from <= span + slack, "flush-loop", "with a %d ms interval the "
		          "flusher's first pthread_cond_timedwait deadline was %+.6f s past start_flusher's "
		          "call plus one interval, when it must lie between 0 and %.6f s (the wait began "
		          "then): %s", intervals[i], (double)from / 1e9, (double)span / 1e9,
		          no_interval ? "the deadline is no interval at all past the start: the thread, "
		          "which this check lets run first, read an interval of 0. Does start_flusher "
		          "fill in the flusher (interval, max, store, db) only after pthread_create? The "
		          "thread may read it before that: set it all up first" :
		          slept ? "the deadline is an hour out. This check's machine has slept an hour, "
		          "so its CLOCK_BOOTTIME reads an hour past CLOCK_MONOTONIC, as after a laptop's "
		          "suspend: is the deadline read from CLOCK_BOOTTIME while the condition variable "
		          "waits on CLOCK_MONOTONIC? Read the clock it waits on" :
		          "is the interval's nanosecond count (ms x 1,000,000) or the carry into seconds "
		          "(nanoseconds / 1,000,000,000, the rest % 1,000,000,000) off?");
	}

	/* INT_MAX ms is 2,147,483.647 s: with the flusher's clock reading at
	 * 0.352999999 s into its second the deadline's nanoseconds carry
	 * 2,147,484 s exactly... less 1 ns, at 0.353 s exactly; a carry worked
	 * out with 10^9 - 1 or 10^9 + 1 is a second off there (the reading
	 * is made so by the harness, tests/harness/locks.h) */
	const long at[] = { 352999999L, 353000000L };
	for (int i = 0; i < 2; i++) {
		struct flusher *f = NULL;
		struct lt_wait w;
		struct timespec read;
		clockid_t clock;
		long n = lt_lock_waits(), s0 = lt_thread_starts();
		lt_lock_fake_clock(at[i], 1);
		int rc = start_flusher(&f, st, own, INT32_MAX, 100);
		lt_expect(rc == 0 && f, "flush-loop", "start_flusher(interval INT_MAX ms) returned %d", rc);
		bool waited = waits_past(n, s0, 1) && flusher_waits(n, s0, &w, 1) == 1;
		stop_flusher(f);
		bool faked = lt_lock_faked(&read, &clock);
		lt_lock_fake_clock(0, 0);
		if (!waited || !faked || (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME) ||
		    wait_on_monotonic(&w) != (clock == CLOCK_MONOTONIC))
			continue;   /* the deadline did not come from this reading */
		lt_expect(w.deadline.tv_nsec >= 0 && w.deadline.tv_nsec < 1000000000L, "flush-loop",
		          "with an INT_MAX ms interval and the flusher's clock read at %ld.%09ld s, its "
		          "first deadline had tv_nsec = %ld, which pthread_cond_timedwait refuses with "
		          "EINVAL at once (it returned %d), so the flusher does not wait: carry into "
		          "seconds when the nanoseconds reach 1,000,000,000 (>=, not >)",
		          (long)read.tv_sec, (long)read.tv_nsec, (long)w.deadline.tv_nsec, w.rc);
		int64_t off = ts_diff(w.deadline, read) - INT32_MAX * 1000000LL;
		lt_expect(off >= -slack && off <= slack, "flush-loop", "with an INT_MAX ms interval and "
		          "the flusher's clock read at %ld.%09ld s, its first deadline was %+.6f s from "
		          "that reading plus one interval: the carry of the nanoseconds into seconds is "
		          "off (tv_sec += ns / 1,000,000,000; tv_nsec = ns %% 1,000,000,000)",
		          (long)read.tv_sec, (long)read.tv_nsec, (double)off / 1e9);
	}

	/* a 20 ms flusher: the deadline moves on by an interval each tick,
	 * after a refused flush too (views dirty, the table away: every
	 * flush fails, and is retried at the next tick, not sooner) */
	struct flusher *f = NULL;
	struct lt_wait w[4];
	record(st, 5, 3);
	table_away(t);
	long n = lt_lock_waits(), s0 = lt_thread_starts();
	int rc = start_flusher(&f, st, own, 20, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher(interval 20 ms) returned %d", rc);
	bool ticked = waits_past(n, s0, 4);
	stop_flusher(f);
	table_back(t);
	int got = flusher_waits(n, s0, w, 4);
	lt_expect(ticked, "flush-loop", "a 20 ms flusher began %d timed waits in 10 s (4 expected)", got);
	for (int k = 0; k + 1 < got; k++) {
		if (w[k].rc != ETIMEDOUT || w[k + 1].thread != w[k].thread)
			continue;
		int64_t step = ts_diff(w[k + 1].deadline, w[k].deadline);
		lt_expect(step >= 20 * 1000000LL, "flush-loop", "after a wait that timed out at its deadline "
		          "and a flush the database refused (the table away), the 20 ms flusher's next "
		          "wait had a deadline %.3f ms later: each tick's deadline is one interval after "
		          "the last, and a failed flush is retried at the next tick (views.h), not sooner "
		          "(a deadline left where it was has passed, and the flusher flushes back to back; "
		          "a shorter wait after a failure sends more flushes to a database that is "
		          "refusing them)", (double)step / 1e6);
	}

	/* a 50 ms flusher, one video a flush, whose first flushes take 300
	 * ms or more each (a lock wait, a slow COMMIT, a database that stays
	 * slow): after each, the next tick is an interval on from then, or
	 * from the missed ticks' grid, never at once. "next = last deadline +
	 * interval" leaves every deadline behind the clock until it has
	 * caught up; "next = this flush's start + interval" is behind after
	 * every slow flush, so under a database that stays slow the flushes
	 * run back to back. One wait whose deadline has passed as it begins
	 * (a thread descheduled at the wrong moment) is let through. */
	struct stall s = { .left = STALLS, .hold_ms = 100 };
	int behind = waits_behind_slow_flushes(t, st, own, 50, &s, &got);
	int held = STALLS - atomic_load(&s.left);
	lt_expect(got == 8 && held > 0, "flush-loop", "a 50 ms flusher whose first flushes were slow "
	          "began %d timed waits in 10 s (8 expected)%s", got,
	          held > 0 ? "" : "; its flushes sent no statement");
	lt_expect(behind <= 1, "flush-loop", "while its flushes took 300 ms or more each (%d "
	          "statements held 100 ms), %d of the 50 ms flusher's %d timed waits after its first "
	          "began with their deadline already past, so it flushed back to back: is each "
	          "deadline the last one, or the flush's start, plus an interval? After a slow "
	          "flush either is behind the clock, and the flusher sends the next flush at once, "
	          "to a database that has just been slow. Take the next deadline from the clock "
	          "after the flush (or skip the ticks that have passed)",
	          held < STALLS ? held : STALLS, behind, got - 1);

	/* a 100 ms flusher whose first 7 flushes take 1.5 intervals each
	 * (each one's BEGIN held 150 ms): a flush less than two intervals
	 * long overruns one tick, and the flusher must skip that one too. A
	 * flusher that starts again from the clock only when it is more than
	 * a whole interval late keeps the missed tick, due at once: the
	 * flush after the 1st, 3rd, 5th and 7th slow one begins at once, its
	 * wait begun past its deadline (4 of 7; the back-to-back one ends
	 * two intervals late and resyncs). Load that stretches a flush past
	 * 200 ms hides one of them at most per flush, and a correct flusher
	 * never begins a wait behind the clock but when it is descheduled
	 * between its clock reading and its wait (one let through). */
	s = (struct stall){ .left = 7, .hold_ms = 150, .begins_only = true };
	behind = waits_behind_slow_flushes(t, st, own, 100, &s, &got);
	held = 7 - atomic_load(&s.left);
	lt_expect(got == 8 && held > 0, "flush-loop", "a 100 ms flusher whose first flushes took 150 "
	          "ms began %d timed waits in 10 s (8 expected)%s", got,
	          held > 0 ? "" : "; its flushes began no transaction");
	lt_expect(behind <= 1, "flush-loop", "while its flushes took 1.5 intervals each (%d BEGINs "
	          "held 150 ms), %d of the 100 ms flusher's %d timed waits after its first began "
	          "with their deadline already past: after a flush between one and two intervals "
	          "long it flushed again at once, back to back (views.h: \"never the missed ones "
	          "back to back\"). Likeliest cause: the flusher starts again from the clock only "
	          "when it is more than a whole interval behind, so a tick missed by less is still "
	          "due; skip every tick that has passed (next = now + interval, or the next tick "
	          "still ahead)", held < 7 ? held : 7, behind, got - 1);
	kit_db_close(own);
	kit_store_free(st);
}

/* Holds the flusher thread's first statement on its connection (the
 * flush under way) until released; counts the statements other threads
 * begin on that connection meanwhile, and keeps them waiting until the
 * held flush's transaction has ended, so two never share the connection. */
struct held_flush {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	long flusher_no;        /* the flusher thread's start number */
	bool held, release, flusher_done;
	int others;             /* statements begun beside the held flush */
};

static void hold_flush_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct held_flush *h = arg;
	(void)sql;
	(void)t_ns;
	bool mine = lt_thread_start_no() == h->flusher_no;
	pthread_mutex_lock(&h->mu);
	if (mine && h->release && (ev == KIT_DB_TX_COMMIT || ev == KIT_DB_TX_ROLLBACK)) {
		h->flusher_done = true;
		pthread_cond_broadcast(&h->cv);
	}
	if (ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START) {
		if (mine && !h->held) {
			h->held = true;
			pthread_cond_broadcast(&h->cv);
			while (!h->release)
				pthread_cond_wait(&h->cv, &h->mu);
		} else if (!mine && h->held && !h->flusher_done) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += 10;
			if (!h->release)
				h->others++;
			while (!h->flusher_done &&
			       pthread_cond_timedwait(&h->cv, &h->mu, &until) == 0)
				;
		}
	}
	pthread_mutex_unlock(&h->mu);
}

struct beside {
	struct flusher *f;
	struct flusher_stats stats;
	int rc;
	atomic_bool done;
};

static void *stats_beside(void *arg)
{
	struct beside *b = arg;
	flusher_stats(b->f, &b->stats);
	atomic_store(&b->done, true);
	return NULL;
}

static void *stop_beside(void *arg)
{
	struct beside *b = arg;
	b->rc = stop_flusher(b->f);
	atomic_store(&b->done, true);
	return NULL;
}

/* While the flusher's thread is in the middle of a flush (held at its
 * first statement, tests/harness: the connection's hook), flusher_stats
 * answers without waiting for that flush, and stop_flusher waits for the
 * thread before it flushes anything itself or returns: never two
 * flushes at once (§6), not even at the stop. How it waits is its own
 * (a pthread_join at once, or a condition variable the thread signals
 * before its join), so the check looks for what it must not do: a
 * statement beside the held flush, or a return before the thread ends.
 * Each is given 10 s, which only a call that waits for the held flush
 * uses up. */
static void flusher__stats_and_stop_beside_a_flush(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct held_flush h = { .flusher_no = -1 };
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.cv, NULL);
	schema(t);
	assert_int_equal(kit_store_set(st, VIEWS_TOKEN, 1), 0);
	record(st, 1, 5);
	kit_db_set_hook(own, hold_flush_hook, &h);
	struct flusher *f = NULL;
	h.flusher_no = lt_thread_starts();
	int rc = start_flusher(&f, st, own, 20, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);

	bool held = false;
	for (int i = 0; i < 5000 && !held && rc == 0 && f; i++) {
		pthread_mutex_lock(&h.mu);
		held = h.held;
		pthread_mutex_unlock(&h.mu);
		if (!held)
			util_sleep_ns(2000000);
	}
	struct beside stats = { .f = f }, stop = { .f = f };
	pthread_t ts, tp;
	bool stats_quick = false, joined_first = false, stop_early = false;
	int others = 0;
	if (held) {
		pthread_create(&ts, NULL, stats_beside, &stats);
		for (int i = 0; i < 5000 && !(stats_quick = atomic_load(&stats.done)); i++)
			util_sleep_ns(2000000);
		record(st, 2, 3);
		pthread_create(&tp, NULL, stop_beside, &stop);
		for (int i = 0; i < 5000 && stats_quick; i++) {
			pthread_mutex_lock(&h.mu);
			others = h.others;
			pthread_mutex_unlock(&h.mu);
			joined_first = lt_thread_join_begun(h.flusher_no);
			stop_early = atomic_load(&stop.done);
			if (others > 0 || joined_first || stop_early)
				break;
			util_sleep_ns(2000000);
		}
	}
	pthread_mutex_lock(&h.mu);
	h.release = true;
	pthread_cond_broadcast(&h.cv);
	pthread_mutex_unlock(&h.mu);
	if (held) {
		pthread_join(ts, NULL);
		pthread_join(tp, NULL);
	} else if (rc == 0 && f) {
		stop.rc = stop_flusher(f);
	}
	kit_db_set_hook(own, NULL, NULL);
	lt_expect(held, "flush-loop", "the 20 ms flusher ran no statement within 10 s with 5 views dirty");
	lt_expect(!held || stats_quick, "flush-loop", "flusher_stats did not return within 10 s while the "
	          "flusher's thread was in the middle of a flush: is the flusher's mutex held through "
	          "flush_views? Unlock it around the flush, and take it again only to count (hint 7): "
	          "a stats reader must not wait for a database that may be waiting for a lock");
	lt_expect(!held || others == 0, "flush-loop", "stop_flusher began %d statement(s) on the "
	          "flusher's connection while the thread's own flush was still under way: two flushes "
	          "at once, on one connection. Join the thread first, then flush what is left (§6)",
	          others);
	lt_expect(!held || !stats_quick || others > 0 || joined_first || !stop_early, "flush-loop",
	          "stop_flusher, called while the thread was in the middle of a flush, returned "
	          "(%d) before the thread had ended: it must wait for the thread (pthread_join, or a "
	          "wait for the thread to say it is done, then pthread_join) before it returns and "
	          "the caller frees what the thread still uses", stop.rc);
	lt_expect_int_hint(stop.rc, 0, "stop_flusher's result", "stop");
	lt_expect_int_hint(db_total(t), 8, "views in the database after stop_flusher", "stop");
	pthread_cond_destroy(&h.cv);
	pthread_mutex_destroy(&h.mu);
	kit_db_close(own);
	kit_store_free(st);
}

/* POSIX lets any condition wait return 0 with nobody signalling. The
 * flusher's first timed wait is made to (tests/harness/locks.h): it must
 * go on waiting and flushing, the stopping flag alone meaning stop. */
static void flusher__spurious_wakeup_is_not_a_stop(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	schema(t);
	record(st, 6, 10);
	int running = lt_thread_running();
	long n = lt_lock_waits(), s0 = lt_thread_starts();
	struct lt_wait w[2];
	lt_lock_spurious(1);
	int rc = start_flusher(&f, st, own, 20, 100);
	lt_expect(rc == 0 && f, "flush-loop", "start_flusher returned %d", rc);
	/* the thread waits again (a later wait begins), or ends */
	for (int i = 0; i < 5000; i++) {
		int got = flusher_waits(n, s0, w, 2);
		if (got >= 2 || (got == 1 && lt_thread_running() <= running))
			break;
		util_sleep_ns(2000000);
	}
	int got = flusher_waits(n, s0, w, 2);
	bool on = got >= 2 || lt_thread_running() > running;
	lt_expect(got < 2 || !w[0].spurious || ts_diff(w[1].deadline, w[0].deadline) == 0, "flush-loop",
	          "after its first pthread_cond_timedwait woke spuriously, the flusher's next wait had a "
	          "deadline %+.3f ms from the one it woke early from: a wake-up that is not a stop waits "
	          "on to the same deadline (moving it on restarts the interval, so each spurious "
	          "wake-up delays the flush)", (double)ts_diff(w[1].deadline, w[0].deadline) / 1e6);
	bool in = on && eventually(&(struct watch){ .t = t, .f = f, .st = st }, ten_written);
	lt_lock_spurious(0);
	int64_t before_stop = db_total(t);
	rc = stop_flusher(f);
	lt_expect(on, "flush-loop", "the flusher's thread ended after its first pthread_cond_timedwait "
	          "woke spuriously (returned 0, nobody signalled, as POSIX allows): only the stopping flag "
	          "may end the loop; a wake-up without it means wait on to the deadline");
	lt_expect(in, "flush-loop", "after a spurious wake-up the flusher never flushed the 10 views on "
	          "its own (database %" PRId64 " before stop_flusher)", before_stop);
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");
	lt_expect_int_hint(db_total(t), 10, "views in the database after stop_flusher", "stop");
	kit_db_close(own);
	kit_store_free(st);
}

/* Lets the held flusher thread go 0.2 s after it was taken. */
static void *let_the_thread_go_later(void *arg)
{
	(void)arg;
	util_sleep_ns(200000000);
	lt_lock_started_release();
	return NULL;
}

/* §6: a stop is prompt wherever the thread is, also in the gaps a
 * preemption opens between its test of the stopping flag and its wait.
 * Two gaps, forced: the thread held just before its timed wait, the
 * mutex still its own (a stop_flusher that sets the flag and signals
 * without taking the mutex signals nobody, and the thread then sleeps
 * out its interval); and the thread held just after its first, second,
 * third unlock (a thread that tests the flag in one hold of the mutex
 * and waits in another misses a stop that came between). Each hold is
 * let go 0.2 s after it was taken, while stop_flusher runs: a 3 s
 * flusher stops within 1.5 s every time. A thread with no such unlock
 * before its wait is not held, and stops as it would. */
static void flusher__stop_meets_the_thread_in_any_gap(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	schema(t);
	for (int round = 0; round < 4; round++) {
		struct flusher *f = NULL;
		bool before_wait = round == 0;
		record(st, 4, 1);
		long waits = lt_lock_waits();
		lt_lock_hold_started(before_wait ? LT_AT_TIMEDWAIT : LT_AT_UNLOCK, before_wait ? 1 : round);
		int rc = start_flusher(&f, st, own, 3000, 100);
		lt_expect(rc == 0 && f, "stop", "start_flusher returned %d", rc);
		/* held, or (no such unlock before it) already in its timed wait */
		bool held = false;
		for (int ms = 0; ms < 2000 && !(held = lt_lock_started_held(1)); ms++)
			if (lt_lock_waits() > waits)
				break;
		pthread_t rel;
		bool later = held && pthread_create(&rel, NULL, let_the_thread_go_later, NULL) == 0;
		if (!later)
			lt_lock_started_release();
		int64_t t0 = util_now_ns();
		rc = stop_flusher(f);
		double took = (double)(util_now_ns() - t0) / 1e9;
		lt_lock_started_release();
		if (later)
			pthread_join(rel, NULL);
		lt_expect(took < 1.5, "stop", "stop_flusher of a 3 s flusher took %.2f s, with the "
		          "flusher's thread held %s until 0.2 s into the stop: the stop came in that "
		          "gap and was missed, and the thread slept out its interval. %s", took,
		          before_wait ? "just before its timed wait, the mutex still its own" :
		          round == 1 ? "just after its first unlock" : round == 2 ? "just after its "
		          "second unlock" : "just after its third unlock", before_wait ? "Set the "
		          "stopping flag and signal with the mutex held: then the signal cannot come "
		          "between the thread's test of the flag and its wait" : "Test the flag and "
		          "wait in one hold of the mutex (while (!stopping) pthread_cond_timedwait): "
		          "a flag read, the mutex let go and taken again, and then a wait, misses a "
		          "stop that came between");
		lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");
	}
	lt_expect_int_hint(db_total(t), 4, "views in the database after the stops (4 recorded)",
	                   "stop");
	kit_db_close(own);
	kit_store_free(st);
}

/* stop_flusher sets the stopping flag under the mutex, then signals: the
 * thread that wakes finds it set. Signalled first, the thread may wake,
 * take the mutex before stop_flusher does, find no stop and wait out its
 * interval: a lost wake-up, so the stop is late now and then. The test
 * binary makes the thread win that race every time: the test thread's
 * lock of the mutex the flusher waits with lets a woken waiter go first
 * (tests/harness/locks.h: lt_lock_yield_to_waiter). A stop that locks
 * before it signals pays 0.5 s for it here. */
static void flusher__stop_wakes_a_thread_that_sees_it(void **state)
{
	struct labtest *t = *state;
	struct kit_db *own = labtest_connect(t);
	struct kit_store *st = new_store(state);
	struct flusher *f = NULL;
	schema(t);
	record(st, 4, 6);
	long n = lt_lock_waits(), s0 = lt_thread_starts();
	int rc = start_flusher(&f, st, own, 3000, 100);
	lt_expect(rc == 0 && f, "stop", "start_flusher returned %d", rc);
	bool waiting = waits_past(n, s0, 1);
	lt_lock_yield_to_waiter(500);
	rc = stop_flusher(f);
	lt_lock_yield_to_waiter(0);
	struct lt_wait w[4];
	int got = flusher_waits(n, s0, w, 4), again = -1;
	for (int k = 0; k + 1 < got && again < 0; k++)
		if (w[k].rc == 0 && !w[k].spurious && w[k + 1].thread == w[k].thread)
			again = k + 1;
	lt_expect(waiting, "flush-loop", "the 3 s flusher began no timed wait within 10 s of its start");
	lt_expect(again < 0, "stop", "woken by stop_flusher (its wait returned 0), the flusher's thread "
	          "waited again, to a deadline %.3f s after that wait began: it found no stop. Set the "
	          "stopping flag under the mutex before pthread_cond_signal; signalled first, a thread "
	          "that takes the mutex before stop_flusher does sees nothing and sleeps out its "
	          "interval, and the stop waits for it", again < 0 ? 0.0 :
	          (double)ts_diff(w[again].deadline, wait_on_monotonic(&w[again]) ? w[again].began_mono
	                                                                          : w[again].began_real) / 1e9);
	lt_expect_int_hint(rc, 0, "stop_flusher's result", "stop");
	lt_expect_int_hint(db_total(t), 6, "views in the database after stop_flusher (6 recorded)", "stop");
	kit_db_close(own);
	kit_store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LABTEST_STORES(record_view__counts_and_marks_dirty),
		cmocka_unit_test(record_view__both_or_neither),
		cmocka_unit_test(drain__no_orphan_when_it_lands_inside_a_record),
		LABTEST_STORES(drain__finds_a_video_marked_again),
		LABTEST_STORES(record_view__lost_reply_still_counted),
		LABTEST_STORES(drain_and_park__lost_reply_leaves_nothing_out),
		LABTEST_STORES(drain__takes_at_most_max_and_resets),
		cmocka_unit_test(drain__no_view_lost_between_read_and_reset),
		cmocka_unit_test(drain__store_failure_strands_nothing),
		cmocka_unit_test(park__no_view_lost_between_read_and_reset),
		cmocka_unit_test(park__store_failure_strands_nothing),
		STORE_REDIS(drain__get_then_del_loses_between_real_clients),
		STORE_REDIS(restart__no_view_key_expires),
		LABTEST_ALL(flush__one_upsert_adds_the_deltas),
		STORE_REDIS(flush__one_upsert_adds_the_deltas),
		LABTEST_ALL(flush__refused_views_go_back),
		STORE_REDIS(flush__refused_views_go_back),
		LABTEST_ALL(flush__upsert_refused_on_a_constraint_goes_back),
		LABTEST_ALL(flush__every_step_after_a_constraint_refusal_can_fail),
		LABTEST_ALL(flush__exact_under_threads_with_refusals),
		STORE_REDIS(flush__exact_under_threads_with_refusals),
		LABTEST_ALL(restart__loses_only_the_unflushed),
		STORE_REDIS(restart__loses_only_the_unflushed),
		LABTEST_ALL(flusher__flushes_on_its_own),
		STORE_REDIS(flusher__flushes_on_its_own),
		LABTEST_ALL(flusher__stop_flushes_the_rest),
		LABTEST_BOTH(flusher__two_flushers_each_its_own),
		LABTEST_ALL(flusher__stop_joins_the_thread),
		LABTEST_ALL(flusher__stop_is_prompt),
		LABTEST_BOTH(flusher__stop_wakes_a_thread_that_sees_it),
		LABTEST_BOTH(flusher__stop_meets_the_thread_in_any_gap),
		LABTEST_ALL(flusher__retries_after_a_refusal),
		STORE_REDIS(flusher__retries_after_a_refusal),
		LABTEST_ALL(flusher__a_refused_flush_waits_for_the_next_tick),
		STORE_REDIS(flusher__a_refused_flush_waits_for_the_next_tick),
		LABTEST_ALL(token__recorded_with_the_upsert),
		STORE_REDIS(token__recorded_with_the_upsert),
		LABTEST_ALL(token__commit_reply_lost),
		LABTEST_ALL(token__commit_connection_lost_keeps_the_park),
		LABTEST_ALL(flush__keeps_the_callers_lock_wait),
		LABTEST_STORES(drain__returns_exactly_the_dirty_deltas),
		LABTEST_ALL(flush__every_step_can_fail),
		LABTEST_ALL(flush__ids_and_tokens_past_2_31),
		LABTEST_ALL(flusher__stop_takes_more_than_one_batch),
		LABTEST_SQLITE(flusher__stop_flushes_the_rest_however_long),
		STORE_REDIS(token__commit_reply_lost),
		LABTEST_BOTH(flush__store_failure_at_every_step),
		LABTEST_BOTH(flush__store_failure_after_a_restart),
		LABTEST_STORES(drain__refused_takes_nothing),
		LABTEST_BOTH(recovery__tokens_and_counts_past_2_31),
		STORE_REDIS(recovery__tokens_and_counts_past_2_31),
		LABTEST_BOTH(flusher__takes_every_edge_of_its_domain),
		LABTEST_BOTH(flusher__first_flush_after_one_interval),
		LABTEST_BOTH(flusher__stop_returns_the_last_flush_error),
		LABTEST_BOTH(flusher__stop_says_what_is_left),
		LABTEST_ALL(flush__rows_in_video_id_order),
		LABTEST_BOTH(token__after_commit_failpoint_leaves_the_park),
		STORE_REDIS(token__after_commit_failpoint_leaves_the_park),
		LABTEST_STORES(record_view__failing_step_is_an_error),
		LABTEST_STORES(drain__failing_step_is_an_error),
		LABTEST_STORES(drain__failing_step_takes_nothing),
		LABTEST_STORES(flush__putback_meeting_a_bad_key_counts_once),
		STORE_REDIS(record_view__a_delta_that_is_no_integer_marks_nothing),
		STORE_REDIS(drain__a_delta_that_is_no_integer_takes_nothing),
		LABTEST_STORES(token__a_token_that_is_no_integer_takes_nothing),
		LABTEST_STORES(recovery__unreadable_park_ends),
		LABTEST_BOTH(token__every_failpoint_returns_an_error),
		LABTEST_BOTH(flusher__stop_past_2_31_and_zero_deltas),
		LABTEST_STORES(park__nothing_dirty_takes_no_token),
		LABTEST_BOTH(recovery__every_step_can_fail),
		LABTEST_BOTH(recovery__crash_inside_a_recovery_is_an_error),
		ALLOC_STORES(record_view__every_allocation_can_fail),
		ALLOC_ALL(flush__every_allocation_can_fail),
		ALLOC_ALL(recovery__every_allocation_can_fail),
		ALLOC_ALL(flusher__every_allocation_can_fail),
		ALLOC_STORES(flusher__thread_that_cannot_start),
		ALLOC_STORES(drain__nothing_left_allocated),
		ALLOC_ALL(flush__nothing_left_allocated),
		ALLOC_STORES(drain__nothing_left_after_a_failing_step),
		LABTEST_STORES(park__exactly_max_and_one_more),
		CRASH_ALL(token__crash_after_drain),
		CRASH_ALL(token__crash_before_commit),
		CRASH_ALL(token__crash_after_commit),
		CRASH_ALL(token__crash_mid_putback),
		CRASH_ALL(flush__store_gone_mid_putback_of_200_videos),
		LABTEST_ALL(flush__takes_at_most_max),
		STORE_REDIS(flush__takes_at_most_max),
		LABTEST_BOTH(flusher__long_intervals_wait),
		LABTEST_BOTH(recovery__counts_past_10_14),
		STORE_REDIS(recovery__counts_past_10_14),
		LABTEST_BOTH(flush__a_full_batch),
		LABTEST_BOTH(flusher__stats_count_only_what_was_written),
		LABTEST_BOTH(recovery__resolves_every_parked_batch),
		LABTEST_ALL(recovery__a_later_token_applied_first),
		STORE_REDIS(recovery__a_later_token_applied_first),
		LABTEST_BOTH(park__zero_deltas_take_no_token),
		STORE_REDIS(park__zero_deltas_take_no_token),
		LABTEST_ALL(flush__leaves_the_session_as_it_found_it),
		LABTEST_BOTH(flusher__locks_by_the_rules),
		LABTEST_BOTH(flusher__deadline_is_one_interval_away),
		LABTEST_BOTH(flusher__spurious_wakeup_is_not_a_stop),
		LABTEST_BOTH(flusher__stats_and_stop_beside_a_flush),
		LABTEST_ALL(flush__ids_at_the_ends_of_the_domain),
		LABTEST_ALL(flush__a_batch_below_zero_counts_its_size),
		STORE_REDIS(flush__ids_at_the_ends_of_the_domain),
		LABTEST_BOTH(flush__store_failure_while_refused),
		LABTEST_BOTH(flusher__stop_resolves_a_parked_batch),
		LABTEST_ALL(flush__two_stores_at_once),
		LABTEST_BOTH(flush__two_stores_put_back_at_once),
		LABTEST_PG(flush__first_calls_at_once),
		STORE_REDIS(flush__two_stores_at_once),
		LABTEST_ALL(token__a_stalled_flush_counts_once),
		LABTEST_ALL(token__a_batch_applied_before_writes_no_count),
		STORE_REDIS(token__a_stalled_flush_counts_once),
		LABTEST_ALL(token__a_stalled_flush_after_a_recovery_that_died),
		STORE_REDIS(token__a_stalled_flush_after_a_recovery_that_died),
		LABTEST_ALL(token__a_stalled_flush_refused_as_busy_puts_nothing_back),
		STORE_REDIS(token__a_stalled_flush_refused_as_busy_puts_nothing_back),
		LABTEST_STORES(drain__takes_a_delta_below_zero),
		LABTEST_ALL(token__two_recoveries_count_once),
		LABTEST_ALL(token__set_after_another_flusher_set_it),
		STORE_REDIS(token__set_after_another_flusher_set_it),
		LABTEST_BOTH(flusher__one_flush_per_tick),
	};
	return labtest_main("04-drain", tests);
}
