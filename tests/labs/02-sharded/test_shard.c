/*
 * test_shard.c: the checks for Lab 02 (labs/02-sharded/shard.h).
 *
 * Every check that touches a database runs on SQLite, PostgreSQL and MariaDB.
 * Randomness is the test's: a counting source (0, 1, 2, ...) shows exactly
 * where likes land, and per-thread xorshift sources seeded by the thread
 * number keep the threaded checks repeatable in what they ask.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "labs/02-sharded/shard.h"
#include "tests/harness/alloc.h"
#include "tests/harness/beside.h"
#include "tests/harness/bounds.h"
#include "tests/harness/deadline.h"
#include "tests/harness/gate.h"
#include "tests/harness/labtest.h"
#include "tests/harness/session.h"
#include "tests/harness/sql.h"
#include "tests/harness/steps.h"
#include "tests/labs/02-sharded/alloc.h"
#include "util/clock.h"

#define POST 42

/* ---- fixture ---- */

/* Connections a check opens beyond the harness's own; teardown closes
 * them even when the check fails half-way. */
static struct kit_db *held[3];

static int teardown(void **state)
{
	for (int i = 0; i < 3; i++) {
		kit_db_close(held[i]);
		held[i] = NULL;
	}
	return labtest_teardown(state);
}

/* LABTEST_ALL with the teardown above: every engine, MariaDB included
 * (the name is older than the third engine). */
#define BOTH(f) \
	{ #f "/sqlite", f, labtest_setup_sqlite, teardown, NULL }, \
	{ #f "/postgres", f, labtest_setup_pg, teardown, NULL }, \
	{ #f "/mysql", f, labtest_setup_mysql, teardown, NULL }
/* A check for the server engines, whose row locks let a like commit in the
 * middle of a shrink: PostgreSQL and MariaDB. */
#define SERVERS(f) \
	{ #f "/postgres", f, labtest_setup_pg, teardown, NULL }, \
	{ #f "/mysql", f, labtest_setup_mysql, teardown, NULL }
/* A check of what PostgreSQL alone promises (a plain read never waits). */
#define PG_ONLY(f) { #f "/postgres", f, labtest_setup_pg, teardown, NULL }

/* ---- sleeps ---- */

/* nanosleep(), usleep(), clock_nanosleep(), sleep() and thrd_sleep(), as
 * the code calls them: counted while a thread watches its own call
 * (sleeps_watched), then slept. A call refused as busy "rolls back and
 * returns KIT_DB_BUSY at once" (shard.h): a pause before it returns ("back
 * off so the caller's retry does not meet the same held row") is the
 * caller's to choose, not the call's. */
static _Thread_local bool sleeps_watched;
static atomic_int sleeps_seen;

static void sleep_seen(void)
{
	if (sleeps_watched)
		atomic_fetch_add(&sleeps_seen, 1);
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	sleep_seen();
	return (int)syscall(SYS_nanosleep, req, rem);
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
	sleep_seen();
	return syscall(SYS_clock_nanosleep, clock, flags, req, rem) == 0 ? 0 : errno;
}

int usleep(useconds_t us)
{
	sleep_seen();
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	return (int)syscall(SYS_nanosleep, &ts, NULL);
}

unsigned int sleep(unsigned int seconds)
{
	sleep_seen();
	struct timespec ts = { (time_t)seconds, 0 }, rem = { 0, 0 };
	if (syscall(SYS_nanosleep, &ts, &rem) == 0)
		return 0;
	return (unsigned int)rem.tv_sec + (rem.tv_nsec > 0);
}

int thrd_sleep(const struct timespec *req, struct timespec *rem);
int thrd_sleep(const struct timespec *req, struct timespec *rem)
{
	sleep_seen();
	if (syscall(SYS_nanosleep, req, rem) == 0)
		return 0;
	return errno == EINTR ? -1 : -2;
}

/* Watches the calling thread's sleeps from now; sleeps_since() says how
 * many it made since and stops watching. */
static void watch_sleeps(void)
{
	atomic_store(&sleeps_seen, 0);
	sleeps_watched = true;
}

static int sleeps_since(void)
{
	sleeps_watched = false;
	return atomic_load(&sleeps_seen);
}

/* ---- random sources ---- */

static uint32_t counting(void *arg)        /* 0, 1, 2, ... */
{
	uint32_t *next = arg;
	return (*next)++;
}

static uint32_t xorshift(void *arg)
{
	uint32_t *x = arg;
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* ---- helpers ---- */

static struct kit_db *fresh(struct labtest *t)
{
	struct kit_db *db = labtest_db(t);
	lt_expect(shard_setup(db) == 0, NULL, "shard_setup: %s", labtest_why(db));
	return db;
}

static int64_t total(struct kit_db *db, int64_t post)
{
	int64_t n = -1;
	int rc = shard_read(db, post, &n);
	lt_expect(rc == 0, "never-liked", "shard_read failed (%d): %s", rc, labtest_why(db));
	return n;
}

static void like_n(struct kit_db *db, int64_t post, int times, shard_rand_fn *rnd, void *arg)
{
	for (int i = 0; i < times; i++) {
		int rc = shard_increment(db, post, rnd, arg);
		lt_expect(rc == 0, "upsert", "shard_increment failed (%d): %s", rc, labtest_why(db));
	}
}

/* The count stored in one slot row, -1 if the row does not exist. */
static int64_t slot_n(struct labtest *t, int64_t post, int slot)
{
	char sql[160];
	snprintf(sql, sizeof sql,
	         "SELECT coalesce((SELECT n FROM like_slots WHERE post_id = %lld AND slot = %d), -1)",
	         (long long)post, slot);
	return labtest_int(t, sql);
}

static int64_t rows_from(struct labtest *t, int64_t post, int n);

/* ---- shard_read ---- */

static void shard_read__zero_for_never_liked(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);

	lt_expect_int_hint(total(db, 7), 0, "count of a post nobody liked", "never-liked");
}

static void shard_read__sums_every_slot(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	uint32_t next = 0;

	like_n(db, POST, 100, counting, &next);
	like_n(db, POST + 1, 5, counting, &next);

	lt_expect_int_hint(total(db, POST), 100, "count after 100 likes spread over 16 slots",
	                   "sum-all-slots");
	lt_expect_int_hint(total(db, POST + 1), 5, "count of another post with 5 likes",
	                   "sum-all-slots");
}

/* ---- shard_increment ---- */

/* A post never resized has SHARD_DEFAULT_SLOTS rows to spread over,
 * whatever other posts were resized to: posts 0 and -1 (ids like any
 * other) are shrunk to 1 and 2 first. A like that takes a post with no
 * config row for "use post 0's", a site-wide default, piles every such
 * post's likes into one row. */
static void shard_increment__spreads_over_slots(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	uint32_t next = 0;

	lt_expect(shard_resize(db, 0, 1) == 0 && shard_resize(db, -1, 2) == 0, "fold",
	          "shard_resize of posts 0 and -1: %s", labtest_why(db));
	like_n(db, POST, 10 * SHARD_DEFAULT_SLOTS, counting, &next);

	lt_expect_int_hint(next, 10 * SHARD_DEFAULT_SLOTS,
	                   "calls to the random source (one per increment)", "one-slot");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM like_slots WHERE post_id = 42"),
	                   SHARD_DEFAULT_SLOTS,
	                   "slot rows used by 160 likes with random values 0..159 (posts 0 and -1 "
	                   "were shrunk to 1 and 2 slots before: is a post with no config row given "
	                   "post 0's N?)", "one-slot");
	for (int s = 0; s < SHARD_DEFAULT_SLOTS; s++) {
		char what[96];
		snprintf(what, sizeof what, "likes in slot %d (values 0..159, slot = value %% 16)", s);
		lt_expect_int_hint(slot_n(t, POST, s), 10, what, "one-slot");
	}
}

/* A like never waits for a resize that only grows: a growth records the
 * new N and moves no row, and the like reads N as it is, without a lock
 * (§5). While a resize of post 42 from 32 slots to 64 (an UPDATE of its
 * config row) is held at its COMMIT, a like of post 42 commits beside it. A like that reads N
 * with FOR SHARE ("so no increment runs during a resize") waits for
 * every resize, and puts a lock on the one config row every like of the
 * post touches: the hot row again. PostgreSQL: there a plain read of the
 * config row never waits (on MariaDB an INSERT ... SELECT reads it with a
 * shared lock anyway, README §5). */
static int grow_to_64(void *arg, struct kit_db *db)
{
	(void)arg;
	return shard_resize(db, POST, 64);
}

static int like_once(void *arg, struct kit_db *db)
{
	return shard_increment(db, POST, counting, arg);
}

static void shard_increment__never_waits_for_a_growth(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	uint32_t next = 0;
	lt_expect(shard_resize(db, POST, 32) == 0, "fold", "shard_resize to 32: %s",
	          labtest_why(db));   /* the config row is there: the growth updates it */
	like_n(db, POST, 3, counting, &next);
	struct lt_beside r;
	lt_beside_commit(t, grow_to_64, like_once, &next, 5000, &r);
	lt_expect(r.held, "live-n", "shard_resize of post 42 to 64 slots returned %d without a "
	          "COMMIT", r.held_rc);
	lt_expect(r.ended && r.side_rc == 0, "live-n", "while a resize of post 42 from 32 slots to "
	          "64 was held at its COMMIT, a like of post 42 %s: a growth moves no row, so a "
	          "like has nothing to wait for. Does the like read N with FOR SHARE (or FOR "
	          "UPDATE)? Then every like waits for every resize, and locks the one config row "
	          "every like of the post reads: the hot row this lab removes (§5)",
	          r.what);
	lt_expect(r.held_rc == 0, "live-n", "the held resize, let go, returned %d", r.held_rc);
	lt_expect_int_hint(total(db, POST), 4, "post 42's count after 3 likes, a growth and a "
	                   "like beside it", "live-n");
}

static void shard_increment__uses_the_live_n(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	uint32_t next = 0;

	lt_expect(shard_resize(db, POST, 3) == 0, "fold", "shard_resize: %s", labtest_why(db));
	like_n(db, POST, 30, counting, &next);

	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM like_slots WHERE post_id = 42"), 3,
	                   "slot rows after resizing to 3 and 30 likes", "live-n");
	lt_expect_int_hint(slot_n(t, POST, 2), 10, "likes in slot 2 of 3 (values 0..29)", "live-n");
	/* With one slot every like lands in slot 0 whatever the value, but
	 * the contract still draws one value per like: the caller's source
	 * (its state, its sequence) cannot tell N = 1 from any other N. */
	lt_expect(shard_resize(db, POST, 1) == 0, "fold", "shard_resize(42, 1): %s", labtest_why(db));
	like_n(db, POST, 5, counting, &next);
	lt_expect_int_hint(next, 35, "calls to the random source after 30 likes with N = 3 and 5 "
	                   "with N = 1 (one per like, even when one slot leaves nothing to draw: is "
	                   "the source skipped when N is 1?)", "one-slot");
	lt_expect_int_hint(slot_n(t, POST, 0), 35, "likes in slot 0 after the shrink to 1 (30 folded, "
	                   "5 new)", "live-n");
}

struct liker {
	struct labtest *t;
	int index;
	int times;
	atomic_int *done;          /* threads finished, for a watcher */
	int failures;
	char error[256];
};

static void *liker_main(void *arg)
{
	struct liker *l = arg;
	struct kit_db *db = labtest_connect(l->t);
	uint32_t x = 2463534242u + (uint32_t)l->index * 7919u;

	for (int i = 0; i < l->times; i++) {
		if (shard_increment(db, POST, xorshift, &x) != 0 && l->failures++ == 0)
			snprintf(l->error, sizeof l->error, "%s", labtest_why(db));
	}
	kit_db_close(db);
	if (l->done)
		atomic_fetch_add(l->done, 1);
	return NULL;
}

static void start_likers(struct labtest *t, pthread_t *tid, struct liker *l, int n, int times,
                         atomic_int *done)
{
	for (int i = 0; i < n; i++) {
		l[i] = (struct liker){ .t = t, .index = i, .times = times, .done = done };
		if (pthread_create(&tid[i], NULL, liker_main, &l[i]) != 0) {
			/* Failing now would pull the database out from under the
			 * threads already running: let them finish first. */
			for (int j = 0; j < i; j++)
				pthread_join(tid[j], NULL);
			fail_msg("pthread_create failed for liker %d", i);
		}
	}
}

static void join_likers(pthread_t *tid, struct liker *l, int n)
{
	for (int i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	for (int i = 0; i < n; i++)
		lt_expect(l[i].failures == 0, "upsert", "thread %d: %d increments failed, first: %s",
		          i, l[i].failures, l[i].error);
}

static void shard_increment__exact_under_threads(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	pthread_t tid[8];
	struct liker l[8];

	start_likers(t, tid, l, 8, 1000, NULL);
	join_likers(tid, l, 8);

	lt_expect_int_hint(total(db, POST), 8000, "likes after 8 threads x 1000 likes", "upsert");
}

/* ---- shard_resize ---- */

/* 16 slots holding 1, 2, ..., 16 likes: 136 in all. */
static void fill_staircase(struct kit_db *db)
{
	for (uint32_t s = 0; s < SHARD_DEFAULT_SLOTS; s++) {
		for (uint32_t k = 0; k <= s; k++) {
			uint32_t value = s;
			like_n(db, POST, 1, counting, &value);
		}
	}
}

static void shard_resize__shrink_folds_removed_slots(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	int n = 0;

	fill_staircase(db);
	lt_expect_int(total(db, POST), 136, "count before the resize (1 + 2 + ... + 16)");

	lt_expect(shard_resize(db, POST, 3) == 0, "fold", "shard_resize(3): %s", labtest_why(db));
	lt_expect_int_hint(total(db, POST), 136, "count after shrinking 16 slots to 3", "fold");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM like_slots WHERE post_id = 42 AND slot >= 3"),
	                   0, "rows left at slot >= 3 after shrinking to 3", "fold");
	/* slot 0 gets 0, 3, 6, 9, 12, 15 -> 1+4+7+10+13+16 = 51 */
	lt_expect_int_hint(slot_n(t, POST, 0), 51,
	                   "slot 0 after folding slots 3, 6, 9, 12, 15 into it", "fold");
	lt_expect(shard_slots(db, POST, &n) == 0, NULL, "shard_slots: %s", labtest_why(db));
	lt_expect_int_hint(n, 3, "N recorded after shrinking to 3", "live-n");

	lt_expect(shard_resize(db, POST, 1) == 0, "fold", "shard_resize(1): %s", labtest_why(db));
	lt_expect_int_hint(total(db, POST), 136, "count after shrinking to 1 slot", "fold");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM like_slots WHERE post_id = 42"),
	                   1, "rows after shrinking to 1 slot", "fold");

	/* A post with a row at every one of SHARD_MAX_SLOTS slots (slot s
	 * holding s + 1) shrinks to 4: all 1,020 rows past N are folded, not
	 * the first few hundred (a shrink that folds in batches, or with a
	 * LIMIT, is right on small posts only). */
	static char rows[SHARD_MAX_SLOTS * 32 + 100];
	size_t len = (size_t)snprintf(rows, sizeof rows, "INSERT INTO like_slots (post_id, slot, n) VALUES ");
	for (int s = 0; s < SHARD_MAX_SLOTS && len < sizeof rows; s++)
		len += (size_t)snprintf(rows + len, sizeof rows - len, "%s(43, %d, %d)", s ? ", " : "",
		                        s, s + 1);
	labtest_exec(t, rows);
	lt_expect(shard_resize(db, 43, SHARD_MAX_SLOTS) == 0, "fold", "shard_resize(43, %d): %s",
	          SHARD_MAX_SLOTS, labtest_why(db));
	lt_expect(shard_resize(db, 43, 4) == 0, "fold", "shard_resize(43, 4): %s", labtest_why(db));
	lt_expect_int_hint(rows_from(t, 43, 4), 0, "rows left at slot >= 4 after a post with rows at "
	                   "all 1,024 slots shrank to 4 (does the shrink fold only so many rows, a "
	                   "LIMIT or a batch?)", "fold");
	lt_expect_int_hint(total(db, 43), 1024 * 1025 / 2, "count of the post with 1,024 rows after "
	                   "the shrink to 4 (1 + 2 + ... + 1,024)", "fold");
	/* slot 3 gets slots 3, 7, ..., 1023: s + 1 = 4, 8, ..., 1024 */
	lt_expect_int_hint(slot_n(t, 43, 3), 4 * 256 * 257 / 2, "slot 3 after folding slots 7, 11, "
	                   "..., 1023 into it (4 + 8 + ... + 1,024)", "fold");

	/* The same rows under post 44 shrink to 512: 512 rows fold into 512
	 * different slots, far more targets than any shrink above (a fold
	 * built as one statement in a fixed buffer, or summed in an array
	 * sized for a few slots, is right only on the small shrinks). */
	len = (size_t)snprintf(rows, sizeof rows, "INSERT INTO like_slots (post_id, slot, n) VALUES ");
	for (int s = 0; s < SHARD_MAX_SLOTS && len < sizeof rows; s++)
		len += (size_t)snprintf(rows + len, sizeof rows - len, "%s(44, %d, %d)", s ? ", " : "",
		                        s, s + 1);
	labtest_exec(t, rows);
	lt_expect(shard_resize(db, 44, SHARD_MAX_SLOTS) == 0, "fold", "shard_resize(44, %d): %s",
	          SHARD_MAX_SLOTS, labtest_why(db));
	lt_expect(shard_resize(db, 44, 512) == 0, "fold", "shard_resize(44, 512), a post with a row "
	          "at each of the 1,024 slots, so 512 slots each receive a fold: %s (is the fold one "
	          "statement built in a buffer too small for 512 rows?)", labtest_why(db));
	lt_expect_int_hint(rows_from(t, 44, 512), 0, "rows left at slot >= 512 after a post with rows "
	                   "at all 1,024 slots shrank to 512", "fold");
	lt_expect_int_hint(total(db, 44), 1024 * 1025 / 2, "count of the post with 1,024 rows after "
	                   "the shrink to 512", "fold");
	/* slot 511 gets slot 1023: 512 + 1,024 */
	lt_expect_int_hint(slot_n(t, 44, 511), 512 + 1024, "slot 511 after folding slot 1023 into it "
	                   "(512 + 1,024)", "fold");

	/* A post grown to 1,024 slots whose few likes sit far apart (slots 1,
	 * 700 and 1,023, nothing between) shrinks to 4: the rows past N are
	 * every row at slot >= 4, wherever they are (a shrink that walks the
	 * slots in windows and stops at the first empty one, "no rows there,
	 * none further", leaves 700 and 1,023 behind). */
	labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (45, 1, 1), (45, 700, 10), "
	             "(45, 1023, 100)");
	lt_expect(shard_resize(db, 45, SHARD_MAX_SLOTS) == 0, "fold", "shard_resize(45, %d): %s",
	          SHARD_MAX_SLOTS, labtest_why(db));
	lt_expect(shard_resize(db, 45, 4) == 0, "fold", "shard_resize(45, 4): %s", labtest_why(db));
	lt_expect_int_hint(rows_from(t, 45, 4), 0, "rows left at slot >= 4 after a post with rows at "
	                   "slots 1, 700 and 1,023 only shrank to 4 (does the shrink look for rows past "
	                   "N in windows of slots, and stop at the first window with none?)", "fold");
	lt_expect_int_hint(total(db, 45), 111, "count of the post with rows at slots 1, 700 and 1,023 "
	                   "after the shrink to 4", "fold");
	lt_expect(slot_n(t, 45, 0) == 10 && slot_n(t, 45, 3) == 100, "fold", "after the shrink to 4, "
	          "slot 0 holds %lld (expected 10, from slot 700) and slot 3 %lld (expected 100, from "
	          "slot 1,023)", (long long)slot_n(t, 45, 0), (long long)slot_n(t, 45, 3));

	/* Rows that hold 0 (a grow that made its new slots' rows ahead of
	 * time, say) are rows at slot >= N too: the shrink removes every one
	 * (shard.h), not only those with likes to move. */
	labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (46, 2, 5), (46, 5, 0), "
	             "(46, 9, 0), (46, 10, 3)");
	lt_expect(shard_resize(db, 46, 16) == 0, "fold", "shard_resize(46, 16): %s", labtest_why(db));
	lt_expect(shard_resize(db, 46, 4) == 0, "fold", "shard_resize(46, 4): %s", labtest_why(db));
	lt_expect(rows_from(t, 46, 4) == 0 && total(db, 46) == 8, "fold", "a post with rows at slots "
	          "2 (5 likes), 5 and 9 (0 each) and 10 (3) shrank to 4: %lld rows left at slot >= 4 "
	          "and a count of %lld (expected none and 8). A row that holds 0 is a row past N "
	          "too: does the shrink remove only the rows with likes to move (n <> 0)?",
	          (long long)rows_from(t, 46, 4), (long long)total(db, 46));
}

/* Four grows of four posts at once, each on a connection of its own, let
 * go together: post p to 20 + p slots. Each post's N is its own: an id or
 * an N formatted into a buffer every thread shares is overwritten by
 * another grow's between its formatting and its statement (and the race
 * pass of `hotrow lab check` sees the two writes). PostgreSQL: grows of
 * different posts take no lock in common there. */
struct grow_call {
	struct kit_db *db;
	int64_t post;
	int rc;
};

static void *grow_at_once(void *arg)
{
	struct grow_call *g = arg;
	for (int k = 0; k < 3 && g->rc == 0; k++)
		g->rc = shard_resize(g->db, g->post, (int)(20 + g->post + k));
	return NULL;
}

static void shard_resize__grows_of_four_posts_at_once(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct grow_call g[4];
	for (int i = 0; i < 4; i++)
		g[i] = (struct grow_call){ labtest_connect(t), 1 + i, 0 };
	lt_at_once(4, grow_at_once, g, sizeof g[0]);
	for (int i = 0; i < 4; i++)
		kit_db_close(g[i].db);
	for (int i = 0; i < 4; i++) {
		int n = 0;
		lt_expect(shard_slots(db, 1 + i, &n) == 0, NULL, "shard_slots: %s", labtest_why(db));
		lt_expect(g[i].rc == 0 && n == 23 + i, "live-n", "four posts grown at once, each on "
		          "its own connection, post p to 20 + p, 21 + p, then 22 + p slots: post %d's "
		          "shard_resize returned %d and it has %d slots (expected 0 and %d). Is an id "
		          "or an N formatted into a buffer every thread shares?", 1 + i, g[i].rc, n,
		          23 + i);
	}
}

/* Four threads, each on a connection of its own, let go together, make
 * the process's first calls: five likes of a post of their own, a read,
 * its N, then a shrink to 2 + p slots. Anything built on a first call and
 * kept where every thread shares it (the increment's text behind a plain
 * "ready" flag, build the SQL once) is built by all four at once: the race
 * pass of `hotrow lab check` runs each such check in a process of its
 * own, where these are the first calls. Each post counts its own five.
 * PostgreSQL: the mistake is the C's. */
struct first_calls {
	struct kit_db *db;
	int64_t post, n;
	int rc, slots;
	const char *step;
};

static void *make_first_calls(void *arg)
{
	struct first_calls *f = arg;
	uint32_t x = 7 + (uint32_t)f->post;
	f->step = "shard_increment";
	for (int k = 0; k < 5 && f->rc == 0; k++)
		f->rc = shard_increment(f->db, f->post, xorshift, &x);
	if (f->rc == 0 && (f->step = "shard_read"))
		f->rc = shard_read(f->db, f->post, &f->n);
	if (f->rc == 0 && (f->step = "shard_slots"))
		f->rc = shard_slots(f->db, f->post, &f->slots);
	if (f->rc == 0 && (f->step = "shard_resize"))
		f->rc = shard_resize(f->db, f->post, 2 + (int)f->post);
	return NULL;
}

static void shard__first_calls_at_once(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct first_calls f[4];
	for (int i = 0; i < 4; i++)
		f[i] = (struct first_calls){ .db = labtest_connect(t), .post = 1 + i, .step = "" };
	lt_at_once(4, make_first_calls, f, sizeof f[0]);
	for (int i = 0; i < 4; i++)
		kit_db_close(f[i].db);
	for (int i = 0; i < 4; i++) {
		int n = 0;
		lt_expect(shard_slots(db, 1 + i, &n) == 0, NULL, "shard_slots: %s", labtest_why(db));
		int64_t after = total(db, 1 + i);
		lt_expect(f[i].rc == 0 && f[i].n == 5 && f[i].slots == 16 && n == 3 + i && after == 5,
		          "own-buffers", "four threads made the process's first calls at once, each on its own "
		          "connection and post: five likes, a read, shard_slots, a shrink to 2 + p: "
		          "post %d's %s returned %d; it read a count of %lld and %d slots, and after "
		          "the shrink has %d slots and counts %lld (expected 0, 5 and 16, then %d and "
		          "5). Is something built on the first call and shared by every thread (a "
		          "statement's text behind a \"ready\" flag) built by two at once?", 1 + i,
		          f[i].rc ? f[i].step : "calls", f[i].rc, (long long)f[i].n, f[i].slots, n,
		          (long long)after, 3 + i);
	}
}

static void shard_resize__grow_keeps_total(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	uint32_t next = 0;
	int n = 0;

	fill_staircase(db);
	lt_expect(shard_resize(db, POST, 64) == 0, "fold", "shard_resize(64): %s", labtest_why(db));
	lt_expect_int_hint(total(db, POST), 136, "count after growing 16 slots to 64", "fold");
	lt_expect(shard_slots(db, POST, &n) == 0, NULL, "shard_slots: %s", labtest_why(db));
	lt_expect_int_hint(n, 64, "N recorded after growing to 64", "live-n");

	next = 63;
	like_n(db, POST, 1, counting, &next);
	lt_expect_int_hint(slot_n(t, POST, 63), 1, "slot 63 after a like with value 63", "live-n");
	lt_expect_int(total(db, POST), 137, "count after one more like");

	/* Back to 16, the default N: a shrink like any other. A post without
	 * a config row has 16 slots, but deleting the row ("no row means the
	 * default") moves nothing: slot 63 would stay where it is. */
	lt_expect(shard_resize(db, POST, SHARD_DEFAULT_SLOTS) == 0, "fold", "shard_resize(16) after "
	          "the grow to 64: %s", labtest_why(db));
	lt_expect(shard_slots(db, POST, &n) == 0, NULL, "shard_slots: %s", labtest_why(db));
	lt_expect_int_hint(n, SHARD_DEFAULT_SLOTS, "N recorded after shrinking 64 slots to 16", "live-n");
	lt_expect_int_hint(total(db, POST), 137, "count after shrinking 64 slots to 16", "fold");
	lt_expect(rows_from(t, POST, SHARD_DEFAULT_SLOTS) == 0 && slot_n(t, POST, 15) == 17, "fold",
	          "after shrinking 64 slots back to 16, the default N: %lld rows left at slot >= 16 "
	          "and slot 15 holds %lld, expected none and 17 (16 + the like at slot 63). A shrink "
	          "to 16 is a shrink like any other, whatever N a post without a config row has: "
	          "is the resize to the default special-cased (the config row deleted, nothing "
	          "folded)?", (long long)rows_from(t, POST, SHARD_DEFAULT_SLOTS),
	          (long long)slot_n(t, POST, 15));
}

static void shard_resize__rejects_bad_n(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);

	fill_staircase(db);
	lt_expect(shard_resize(db, POST, 0) < 0, NULL, "shard_resize(0) should fail");
	lt_expect(shard_resize(db, POST, SHARD_MAX_SLOTS + 1) < 0, NULL,
	          "shard_resize(SHARD_MAX_SLOTS + 1) should fail");
	lt_expect_int(total(db, POST), 136, "count after two refused resizes");
}

/* A reader on a connection of its own, asked for the count at every step
 * of a resize (the db hook runs it before and after each statement and
 * transaction event): it must see 136 every time, never the removed rows
 * gone with their counts not yet added back. */
struct onlooker {
	struct kit_db *db;
	int reads;
	int64_t low, high;
	char error[300];
};

static void onlooker_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct onlooker *o = arg;
	int64_t n = -1;
	(void)ev;
	(void)sql;
	(void)t_ns;
	if (kit_db_query_int(o->db, "SELECT coalesce(sum(n), 0) FROM like_slots WHERE post_id = 42",
	                     0, NULL, &n) != 0) {
		if (!o->error[0])
			snprintf(o->error, sizeof o->error, "%s", labtest_why(o->db));
		return;
	}
	o->reads++;
	o->low = n < o->low ? n : o->low;
	o->high = n > o->high ? n : o->high;
}

static void shard_resize__others_never_see_a_partial_shrink(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct onlooker o = { .db = held[0] = labtest_connect(t), .low = INT64_MAX, .high = -1 };

	fill_staircase(db);
	kit_db_set_hook(db, onlooker_hook, &o);
	int rc = shard_resize(db, POST, 3);
	if (rc == 0)
		rc = shard_resize(db, POST, 1);
	kit_db_set_hook(db, NULL, NULL);

	lt_expect(rc == 0, "fold", "shard_resize: %s", labtest_why(db));
	lt_expect(o.error[0] == '\0', NULL, "the reader's connection failed: %s", o.error);
	lt_expect(o.reads > 0, NULL, "shard_resize ran no statement the reader could watch");
	lt_expect(o.low == 136 && o.high == 136, "fold-race",
	          "expected another connection to read 136 at every step of two shrinks (16 to 3, "
	          "then 1), got counts from %lld to %lld in %d reads: part of a shrink was "
	          "committed before the rest", (long long)o.low, (long long)o.high, o.reads);
	lt_expect_int_hint(total(db, POST), 136, "count after both shrinks", "fold");
}

/* On PostgreSQL a like that read N = 16 just before a shrink to 4
 * committed can still write slot 12 after it (section 5, point 2). The
 * row is planted here, on both engines, as that like leaves it. */
static void shard_read__counts_a_slot_beyond_n(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);

	fill_staircase(db);
	lt_expect(shard_resize(db, POST, 4) == 0, "fold", "shard_resize(4): %s", labtest_why(db));
	labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 12, 5)");

	lt_expect_int_hint(total(db, POST), 141,
	                   "count with N = 4 and 5 late likes in slot 12 (136 + 5)", "sum-all-slots");
	lt_expect(shard_resize(db, POST, 2) == 0, "fold", "shard_resize(2): %s", labtest_why(db));
	lt_expect_int_hint(total(db, POST), 141, "count after the next shrink, to 2", "fold");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM like_slots WHERE post_id = 42 AND slot >= 2"),
	                   0, "rows at slot >= 2 after shrinking to 2 (slot 12 too)", "fold");
	/* A like that read N = 1,024 (SHARD_MAX_SLOTS) just before that shrink
	 * leaves its row at slot 1,023: past N, and past any few times N a
	 * read might look up to. */
	labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 1023, 7)");
	lt_expect_int_hint(total(db, POST), 148, "count with N = 2 and 7 late likes in slot "
	                   "1,023 (141 + 7)", "sum-all-slots");
}

/* Another app server (here: a forked process, with memory of its own)
 * shrinks the post; this process's next like must use the new N. */
#define OTHER_POST 142

static void shard_increment__follows_a_resize_by_another_process(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	uint32_t next = 0;

	like_n(db, OTHER_POST, SHARD_DEFAULT_SLOTS, counting, &next);   /* one per slot */
	kit_db_close(t->db);             /* a connection must not cross a fork */
	t->db = NULL;
	fflush(NULL);
	pid_t pid = fork();
	lt_expect(pid >= 0, NULL, "fork failed");
	if (pid == 0) {
		struct kit_db *child;
		alarm(60);
		int rc = kit_db_open(&child, t->url);
		if (rc == 0)
			rc = shard_resize(child, OTHER_POST, 4);
		if (rc != 0)
			fprintf(stderr, "the other process's shard_resize(4): %s\n", labtest_why(child));
		_exit(rc == 0 ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	lt_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fold",
	          "the other process's shard_resize(4) failed (status %d)", status);

	db = labtest_db(t);
	next = 5;
	like_n(db, OTHER_POST, 1, counting, &next);
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM like_slots WHERE post_id = 142 AND slot >= 4"),
	                   0, "rows at slot >= 4 after another process shrank the post to 4 and this "
	                   "one liked it with value 5", "live-n");
	lt_expect_int_hint(slot_n(t, OTHER_POST, 1), 5,
	                   "slot 1 after the shrink to 4 (1 + 5 + 9 + 13) and a like with value 5",
	                   "live-n");
}

/* Likers keep going while this thread shrinks and grows the post; every
 * read along the way must be a real count (never lower than the one
 * before: committed likes cannot disappear) and the end must be exact. */
static void shard_resize__exact_under_concurrent_increments(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	static const int sizes[] = { 4, 32, 2, 8, 1, 16, 3, 64, 5 };
	enum { THREADS = 4, TIMES = 500 };
	pthread_t tid[THREADS];
	struct liker l[THREADS];
	atomic_int done = 0;
	int64_t last = 0;
	int resizes = 0;

	char anomaly[256] = "";
	start_likers(t, tid, l, THREADS, TIMES, &done);
	/* Check after joining: failing with threads still running would pull
	 * their database out from under them. */
	while (!anomaly[0] && (atomic_load(&done) < THREADS || resizes < 9)) {
		int64_t now = -1;
		if (shard_resize(db, POST, sizes[resizes++ % 9]) != 0 || shard_read(db, POST, &now) != 0)
			snprintf(anomaly, sizeof anomaly, "resize or read failed: %s", labtest_why(db));
		else if (now < last)
			snprintf(anomaly, sizeof anomaly,
			         "the count went down during resizes: %lld, then %lld",
			         (long long)last, (long long)now);
		else if (now > THREADS * TIMES)
			snprintf(anomaly, sizeof anomaly, "the count %lld exceeds the %d likes made",
			         (long long)now, THREADS * TIMES);
		last = now;
	}
	join_likers(tid, l, THREADS);

	lt_expect(anomaly[0] == '\0', "fold-race", "%s", anomaly);
	lt_expect_int_hint(total(db, POST), THREADS * TIMES,
	                   "likes after 4 threads x 500 likes with resizes in between", "fold-race");
	/* The last resize of the loop may have been to 1: a resize to 2
	 * from there is a grow, which only records N (shard.h), and a like
	 * that read a larger N before may have left a row past 2. So first
	 * to 64, the largest N of the loop, then the shrink to 2 folds
	 * every row past 2. */
	lt_expect(shard_resize(db, POST, 64) == 0 && shard_resize(db, POST, 2) == 0, "fold",
	          "shard_resize(64), then (2): %s", labtest_why(db));
	lt_expect_int_hint(total(db, POST), THREADS * TIMES, "likes after a final shrink to 2",
	                   "fold-race");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM like_slots WHERE post_id = 42 AND slot >= 2"),
	                   0, "rows at slot >= 2 after the final shrink", "fold-race");
}

/* PostgreSQL replays the race of section 5, point 3, step by step: a like
 * on a slot past the new N is in flight (it holds its row) when the shrink
 * starts; the shrink must wait for it and fold the value that includes it.
 * MariaDB runs it too. */
struct resizer {
	struct kit_db *db;
	int to;                        /* the shrink's N */
	int rc;
	char error[256];
	atomic_bool done;
};

static void *resizer_main(void *arg)
{
	struct resizer *r = arg;
	r->rc = shard_resize(r->db, POST, r->to);
	if (r->rc != 0)
		snprintf(r->error, sizeof r->error, "%s", labtest_why(r->db));
	atomic_store(&r->done, true);
	return NULL;
}

/* The server's id of db's session (lt_session_id), failing the check
 * when it cannot be read. */
static int64_t session_of(struct kit_db *db)
{
	int64_t id = lt_session_id(db);
	lt_expect(id >= 0, NULL, "the session's id: %s", labtest_why(db));
	return id;
}

/* On the server engines only: on SQLite a shrink holds the only write
 * lock, so no like can commit in the middle of it. From 16 slots to 4,
 * to 1 (a path of its own for N = 1 that sums the rows past slot 0 with a
 * plain SELECT, which waits for no lock, and deletes them afterwards,
 * deletes the like uncounted) and to 15 (one slot folded, the like's). */
static void shard_resize__folds_a_like_committed_during_the_shrink(void **state)
{
	static const struct { int to, like; } shrinks[] = { { 4, 5 }, { 1, 5 }, { 15, 15 } };
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct kit_db *a = held[0] = labtest_connect(t);
	struct kit_db *shrinker = held[1] = labtest_connect(t);
	int64_t pid = session_of(shrinker);

	for (size_t i = 0; i < sizeof shrinks / sizeof shrinks[0]; i++) {
		struct resizer r = { .db = shrinker, .to = shrinks[i].to };
		int64_t blocked = 0;
		pthread_t tid;
		labtest_exec(t, "DELETE FROM like_slots; DELETE FROM like_slot_config");
		for (uint32_t s = 0; s < SHARD_DEFAULT_SLOTS; s++) {
			uint32_t value = s;
			like_n(db, POST, 1, counting, &value);
		}
		lt_expect(kit_db_begin(a) == 0, NULL, "BEGIN on a: %s", labtest_why(a));
		uint32_t like = (uint32_t)shrinks[i].like;
		like_n(a, POST, 1, counting, &like);            /* not committed */

		if (pthread_create(&tid, NULL, resizer_main, &r) != 0) {
			kit_db_rollback(a);
			fail_msg("pthread_create failed");
		}
		/* Wait until the shrink is stuck behind a's row lock (or has
		 * finished without touching it), then let a commit. */
		int polls = kit_db_engine(db) == KIT_DB_MYSQL ? 100 : 4000;     /* 12 s, 8 s */
		for (int p = 0; p < polls && blocked == 0 && !atomic_load(&r.done); p++) {
			int waits = lt_lock_waiting(db, pid);
			if (waits < 0)
				break;
			if ((blocked = waits) == 0)
				util_sleep_ns(lt_lock_poll_ns(db));
		}
		int committed = kit_db_commit(a);
		pthread_join(tid, NULL);

		lt_expect(committed == 0, NULL, "COMMIT on a: %s", labtest_why(a));
		lt_expect(r.rc == 0, "fold", "shard_resize(%d): %s", shrinks[i].to, r.error);
		int64_t got = total(db, POST);
		lt_expect(got == 17, "fold-race",
		          "expected 17, got %lld: the count after 16 likes and a 17th, on slot %d, "
		          "committed while shrinking from 16 slots to %d%s", (long long)got,
		          shrinks[i].like, shrinks[i].to,
		          got >= 17 ? "" : blocked ? " (the shrink waited for the like's row, then "
		          "went on): is the row deleted uncounted? A shrink that reads the rows it "
		          "folds (a SELECT of them, or of their sum) and deletes them in another "
		          "statement deletes what committed in between: fold what the DELETE returns" :
		          " (the shrink never waited for the like's row)");
		lt_expect_int_hint(rows_from(t, POST, shrinks[i].to), 0,
		                   "rows at slot >= N after the shrink", "fold-race");
	}
}

/* A shrink held just before its COMMIT, by a hook on its connection: it
 * has written all it writes and holds every lock it takes. Or, with
 * like set, a like of post 42 at slot 9 held before its hold_at-th
 * statement (the kit's BEGIN and COMMIT counted too). */
struct held_shrink {
	struct kit_db *db;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool at_commit, go, done;      /* at_commit: at the hold */
	int rc;
	char error[256];
	bool like;
	int hold_at, seen;
};

static void hold_at_commit(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct held_shrink *h = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	if (h->hold_at ? ++h->seen != h->hold_at : !(lt_sql_is(sql, "COMMIT") || lt_sql_is(sql, "END")))
		return;
	pthread_mutex_lock(&h->mu);
	h->at_commit = true;
	pthread_cond_broadcast(&h->cv);
	while (!h->go)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

static void *held_shrink_main(void *arg)
{
	struct held_shrink *h = arg;
	uint32_t nine = 9;
	int rc = h->like ? shard_increment(h->db, POST, counting, &nine) : shard_resize(h->db, POST, 4);
	pthread_mutex_lock(&h->mu);
	h->rc = rc;
	if (rc != 0)
		snprintf(h->error, sizeof h->error, "%s", labtest_why(h->db));
	h->done = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

struct beside {
	struct kit_db *db;
	bool same_post;            /* also like post 42 at slot 2 */
	atomic_int stage;          /* 1: liking post 43, 2: liking post 42, 3: done */
	int rc[2];
};

static void *beside_main(void *arg)
{
	struct beside *b = arg;
	uint32_t five = 5, two = 2;
	atomic_store(&b->stage, 1);
	b->rc[0] = shard_increment(b->db, 43, counting, &five);
	atomic_store(&b->stage, 2);
	if (b->same_post)
		b->rc[1] = shard_increment(b->db, POST, counting, &two);
	atomic_store(&b->stage, 3);
	return NULL;
}

/* A like and a shrink wait for a row lock as long as their connection's
 * lock timeout allows (shard.h; the kit's default: without end). One that
 * sets a short timeout of its own for its transaction ("SET LOCAL
 * lock_timeout", or MariaDB's "SET STATEMENT innodb_lock_wait_timeout
 * ... FOR") leaves the session unchanged, yet gives up with KIT_DB_BUSY
 * whenever a hot slot's lock is held a little longer, which is exactly
 * when likes queue (README section 1). Another connection holds slot 9's
 * row; once the server says the call waits behind it (lt_lock_waiting:
 * pg_stat_activity, INNODB_TRX), the holder keeps it 0.7 s more (1.5 s on MariaDB, whose
 * shortest lock wait timeout is 1 s), then commits: the like,
 * then a shrink to 4, must return 0. The hold only makes the wait longer:
 * a slower machine cannot turn a right call into a wrong one. SQLite's
 * waits are timed by the kit itself (kit/db.c): not run there. */
#define HOLD_MS 700             /* PostgreSQL: lock_timeout is in ms */
#define HOLD_MY_MS 1500         /* MariaDB: innodb_lock_wait_timeout, 1 s at least */

static void staircase_rows(struct labtest *t);

struct waiter {
	struct kit_db *db;
	int nslots;                    /* 0: a like on slot 9 (or on slot, if set); else a shrink */
	int slot;
	int rc;
	char error[256];
	atomic_bool done;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	uint32_t value = w->slot ? (uint32_t)w->slot : 9;
	w->rc = w->nslots ? shard_resize(w->db, POST, w->nslots)
	                  : shard_increment(w->db, POST, counting, &value);
	if (w->rc != 0)
		snprintf(w->error, sizeof w->error, "%s", labtest_why(w->db));
	atomic_store(&w->done, true);
	return NULL;
}

static void shard__waits_as_long_as_the_session_allows(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct kit_db *a = held[0] = labtest_connect(t);
	struct kit_db *b = held[1] = labtest_connect(t);
	int64_t pid = session_of(b);
	staircase_rows(t);

	for (int shrink = 0; shrink <= 1; shrink++) {
		struct waiter w = { .db = b, .nslots = shrink ? 4 : 0 };
		int64_t blocked = 0;
		pthread_t tid;
		lt_expect(kit_db_begin(a) == 0, NULL, "BEGIN on a: %s", labtest_why(a));
		lt_expect(kit_db_exec(a, "UPDATE like_slots SET n = n + 1 WHERE post_id = 42 AND slot = 9",
		                      0, NULL) == 0, NULL, "UPDATE on a: %s", labtest_why(a));
		if (pthread_create(&tid, NULL, waiter_main, &w) != 0) {
			kit_db_rollback(a);
			fail_msg("pthread_create failed");
		}
		int polls = kit_db_engine(db) == KIT_DB_MYSQL ? 500 : 20000;   /* 60 s, 40 s */
		int hold_ms = kit_db_engine(db) == KIT_DB_MYSQL ? HOLD_MY_MS : HOLD_MS;
		for (int i = 0; i < polls && blocked == 0 && !atomic_load(&w.done); i++) {
			int waits = lt_lock_waiting(db, pid);
			if (waits < 0)
				break;
			if ((blocked = waits) == 0)
				util_sleep_ns(lt_lock_poll_ns(db));
		}
		if (blocked)
			util_sleep_ns(hold_ms * 1000000LL);
		int committed = kit_db_commit(a);
		pthread_join(tid, NULL);
		lt_expect(committed == 0, NULL, "COMMIT on a: %s", labtest_why(a));
		lt_expect(blocked != 0, NULL, "%s never waited for slot 9's row, which another "
		          "transaction held (it returned %d: %s)", shrink ? "the shrink to 4" : "the like",
		          w.rc, w.rc ? w.error : "no error");
		lt_expect(w.rc == 0, shrink ? "fold" : "upsert", "%s waited for slot 9's row, which "
		          "another transaction held %d ms longer and then committed, and returned %d "
		          "(%s): does it set a lock timeout of its own (SET LOCAL lock_timeout, SET "
		          "STATEMENT innodb_lock_wait_timeout ... FOR)? shard.h: a call waits as long as "
		          "its connection's lock timeout allows, and a hot slot's lock is held longer "
		          "under load", shrink ? "a shrink to 4" : "a like on slot 9", hold_ms, w.rc,
		          w.error);
		lt_expect_int_hint(total(db, POST), shrink ? 139 : 138, shrink ? "count after the "
		                   "shrink that waited" : "count after the like that waited", "upsert");
	}
}

/* The shrink locks what it moves and nothing more (README §5: "the
 * design above needs no lock beyond the rows themselves"). A shrink of
 * post 42 to 4 slots is held before its COMMIT, after folding slot 5
 * into slot 1: a like of post 43 must not wait for it, and on
 * PostgreSQL neither may a like of post 42 at slot 2, a row the shrink
 * never touched. A shrink that locks the whole table (LOCK TABLE) or
 * every row of the post (SELECT ... FOR UPDATE) "to be safe" makes
 * every like wait for every shrink, the one queue this lab removes.
 * Whether a like waits is read from the server (lt_lock_waiting:
 * pg_stat_activity, INNODB_TRX), not timed. On MariaDB a like of post 42 itself waits
 * (its INSERT ... SELECT takes a shared lock on the config row the
 * shrink wrote, README §5), so only the other post is asked there. On
 * SQLite every writer waits for the one write lock: not run. */
static void shard_resize__likes_beside_a_shrink_do_not_wait(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	bool pg = kit_db_engine(db) == KIT_DB_POSTGRES;
	labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 0, 1), (42, 1, 1),"
	             " (42, 2, 1), (42, 3, 1), (42, 5, 1), (43, 0, 1), (43, 5, 1), (43, 9, 1)");
	struct held_shrink h = { .db = held[0] = labtest_connect(t),
	                         .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	struct beside b = { .db = held[1] = labtest_connect(t), .same_post = pg };
	int64_t liker = session_of(b.db), blocked = 0;

	kit_db_set_hook(h.db, hold_at_commit, &h);
	pthread_t shrinker, liking;
	if (pthread_create(&shrinker, NULL, held_shrink_main, &h) != 0)
		fail_msg("pthread_create failed");
	struct timespec until = lt_deadline_ms(120000);
	pthread_mutex_lock(&h.mu);
	while (!h.at_commit && !h.done && pthread_cond_timedwait(&h.cv, &h.mu, &until) == 0)
		;
	bool at_commit = h.at_commit;
	pthread_mutex_unlock(&h.mu);

	int stage = 0;
	bool liking_started = at_commit && pthread_create(&liking, NULL, beside_main, &b) == 0;
	if (liking_started) {
		/* until the likes are done, or one waits behind a lock */
		while ((stage = atomic_load(&b.stage)) != 3 && blocked == 0) {
			int waits = lt_lock_waiting(db, liker);
			if (waits < 0)
				break;
			if ((blocked = waits) == 0)
				util_sleep_ns(lt_lock_poll_ns(db));
		}
		stage = atomic_load(&b.stage);
	}
	pthread_mutex_lock(&h.mu);
	h.go = true;
	pthread_cond_broadcast(&h.cv);
	pthread_mutex_unlock(&h.mu);
	pthread_join(shrinker, NULL);
	if (liking_started)
		pthread_join(liking, NULL);
	kit_db_set_hook(h.db, NULL, NULL);

	lt_expect(at_commit, "fold", "the shrink to 4 never sent a COMMIT (it returned %d: %s)",
	          h.rc, h.error);
	lt_expect(blocked == 0, "fold", "while a shrink of post 42 to 4 slots was before its COMMIT "
	          "(it had folded slot 5 into slot 1), a like of %s waited for a lock the shrink "
	          "held: does the shrink lock more than the rows it moves (LOCK TABLE like_slots, "
	          "or SELECT ... FOR UPDATE / FOR SHARE of every row of the post)? Then every like waits for "
	          "every shrink, the queue that sharding removes",
	          stage == 1 ? "post 43 (another post)" : "post 42 at slot 2 (a row the shrink "
	          "never touched)");
	lt_expect(h.rc == 0, "fold", "shard_resize(42, 4): %d, %s", h.rc, h.error);
	lt_expect(b.rc[0] == 0 && b.rc[1] == 0, "upsert", "the likes beside the shrink returned "
	          "%d and %d (%s)", b.rc[0], b.rc[1], labtest_why(b.db));
	lt_expect_int_hint(total(db, POST), pg ? 6 : 5, "count of post 42 after the shrink and its "
	                   "like", "fold");
	lt_expect_int_hint(total(db, 43), 4, "count of post 43 after its like", "fold");

	/* Likes do not wait for each other either, unless they hit the same
	 * slot (README section 1: two likes that land on different rows never
	 * wait for each other). A like of post 42 at slot 9 is held before
	 * each of its statements in turn while likes of post 43 and of post
	 * 42 at slot 2 run: neither may wait for a lock it holds (a like that
	 * takes a lock on the post, pg_advisory_xact_lock or a FOR UPDATE of
	 * a row every like reads, "so two first likes do not race", queues
	 * every like of the post behind every other). */
	int64_t likes42 = total(db, POST), likes43 = total(db, 43);
	for (int k = 1; k <= 8; k++) {
		struct held_shrink l = { .db = h.db, .mu = PTHREAD_MUTEX_INITIALIZER,
		                         .cv = PTHREAD_COND_INITIALIZER, .like = true, .hold_at = k };
		struct beside other = { .db = b.db, .same_post = true };
		pthread_t holder, liker2;
		kit_db_set_hook(l.db, hold_at_commit, &l);
		if (pthread_create(&holder, NULL, held_shrink_main, &l) != 0)
			fail_msg("pthread_create failed");
		until = lt_deadline_ms(120000);
		pthread_mutex_lock(&l.mu);
		while (!l.at_commit && !l.done && pthread_cond_timedwait(&l.cv, &l.mu, &until) == 0)
			;
		bool at_hold = l.at_commit;
		pthread_mutex_unlock(&l.mu);
		int64_t waited = 0;
		int at = 0;
		bool started = at_hold && pthread_create(&liker2, NULL, beside_main, &other) == 0;
		if (started) {
			/* a wait the server does not list as a lock wait (MariaDB's
			 * GET_LOCK) shows as likes that never finish: 20 s at most */
			int64_t give_up = util_now_ns() + 20000000000LL;
			while ((at = atomic_load(&other.stage)) != 3 && waited == 0) {
				int waits = lt_lock_waiting(db, liker);
				if (waits < 0)
					break;
				if ((waited = waits) == 0 && util_now_ns() > give_up)
					waited = 1;
				if (waited == 0)
					util_sleep_ns(lt_lock_poll_ns(db));
			}
			at = atomic_load(&other.stage);
		}
		pthread_mutex_lock(&l.mu);
		l.go = true;
		pthread_cond_broadcast(&l.cv);
		pthread_mutex_unlock(&l.mu);
		pthread_join(holder, NULL);
		if (started)
			pthread_join(liker2, NULL);
		kit_db_set_hook(l.db, NULL, NULL);
		lt_expect(l.rc == 0, "upsert", "a like of post 42 at slot 9: %d, %s", l.rc, l.error);
		if (!at_hold)
			break;                  /* the like sends fewer than k statements */
		lt_expect(waited == 0, "upsert", "while a like of post 42 at slot 9 was held before "
		          "its statement %d, a like of %s waited for a lock the first one held (or did "
		          "not finish within 20 s): does a "
		          "like lock more than its own slot's row (pg_advisory_xact_lock on the post, a "
		          "FOR UPDATE of the config row, a write to a row every like touches)? Then "
		          "every like of the post waits for every other, the one queue sharding removes",
		          k, at == 1 ? "post 43 (another post)" : "post 42 at slot 2 (another slot)");
		lt_expect(other.rc[0] == 0 && other.rc[1] == 0, "upsert", "the likes beside the held "
		          "like returned %d and %d (%s)", other.rc[0], other.rc[1], labtest_why(other.db));
		likes42 += 2;
		likes43 += 1;
		lt_expect_int_hint(total(db, POST), likes42, "count of post 42 after likes at slots 9 "
		                   "and 2", "upsert");
		lt_expect_int_hint(total(db, 43), likes43, "count of post 43 after its like", "upsert");
	}
}

/* Resizes of different posts share no row, so neither waits for the
 * other (shard.h: different threads "may call any of these at the same
 * time"). A shrink of post 42 to 4 is held at its COMMIT, holding every
 * lock it takes, while a shrink of post FAR_POST to 4 runs on another
 * connection: it must end beside it. One that waits shows a lock of the
 * process, not the database's: a static fold buffer "guarded" by a mutex
 * held for the whole resize, a process-wide mutex around every resize.
 * Then a shrink stuck behind a hot slot (shard.h lets it wait without
 * end) stops every resize of every post in the app server. FAR_POST is
 * 42 + 2^32 x 1,126,125: it falls on post 42's stripe for any lock keyed
 * on the post id modulo 2 to 16, 25, 64, 100, 1000 or 2^32 (a lock per
 * "post_id % 64", or the id cut to 32 bits), and on no other post's.
 * Post 43's one row lies between the two: on MariaDB a shrink's DELETE
 * also locks the first row past its range (the next key), which is post
 * 43's, never FAR_POST's. On SQLite every writer waits for the one write
 * lock: not run. */
#define FAR_POST (POST + ((int64_t)1 << 32) * 1126125)

static int shrink_42(void *arg, struct kit_db *db)
{
	(void)arg;
	return shard_resize(db, POST, 4);
}

static int shrink_far(void *arg, struct kit_db *db)
{
	(void)arg;
	return shard_resize(db, FAR_POST, 4);
}

static void shard_resize__resizes_of_two_posts_do_not_wait(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	staircase_rows(t);
	char sql[200];
	snprintf(sql, sizeof sql, "INSERT INTO like_slots (post_id, slot, n) SELECT %lld, slot, n "
	         "FROM like_slots WHERE post_id = 42", (long long)FAR_POST);
	labtest_exec(t, sql);
	labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (43, 0, 1)");
	const int64_t posts[] = { POST, 43, FAR_POST };
	for (int i = 0; i < 3; i++)
		lt_expect(shard_resize(db, posts[i], 16) == 0, "fold", "shard_resize(%lld, 16): %s",
		          (long long)posts[i], labtest_why(db));
	struct lt_beside r;
	lt_beside_commit(t, shrink_42, shrink_far, NULL, 5000, &r);
	lt_expect(r.held, "fold", "the shrink of post 42 to 4 returned %d without a COMMIT", r.held_rc);
	lt_expect(r.ended && r.side_rc == 0, "fold", "while a shrink of post 42 to 4 slots was held "
	          "at its COMMIT, a shrink of post %lld (42 + 2^32 x 1,126,125) to 4 on another "
	          "connection %s: the two touch no common row, so neither has anything to wait for. "
	          "%s Then one resize stuck behind a hot slot stops every resize of every post in the "
	          "process", (long long)FAR_POST, r.what, r.waited
	          ? "Does the resize lock more than its own post's rows (LOCK TABLE, a FOR UPDATE "
	            "without post_id, an advisory lock keyed on the post id modulo some number or "
	            "cut to 32 bits, which two posts share)?"
	          : "The database showed no lock wait: does the resize take a lock of the process "
	            "(a static fold buffer guarded by a mutex held for the whole resize, a "
	            "process-wide mutex around it, or one of a few striped by the post id)? Keep the "
	            "fold's sums in memory of the call's own (calloc) and take no lock beyond the "
	            "rows.");
	lt_expect(r.held_rc == 0, "fold", "the held shrink of post 42, let go, returned %d", r.held_rc);
	lt_expect_int_hint(total(db, POST), 136, "post 42's count after its shrink", "fold");
	lt_expect_int_hint(total(db, FAR_POST), 136, "the far post's count after its shrink", "fold");
	lt_expect_int_hint(rows_from(t, FAR_POST, 4), 0, "the far post's rows at slot >= 4 after its "
	                   "shrink", "fold");
}

/* A like that waits behind a hot slot holds up no other like of its
 * post. Slot 9 of post 42 (resized to 16, so its config row is there) is
 * held by another transaction; a like of post 42 at slot 9 has read N and
 * waits for it (the server shows the wait). Meanwhile a like of post 42
 * at slot 2 on a third connection must end without a wait: a like that
 * reads N with FOR UPDATE (on MariaDB too: the like has no lock before
 * its one statement, but one waiting in it holds the config row's) or
 * behind a mutex of the process queues every like of the post behind the
 * slowest, the one queue this lab removes (§5). On PostgreSQL the config
 * row also carries no lock of the likes afterwards (its xmax, the locker
 * or updater the row header names, is as the resize left it): one read
 * FOR KEY SHARE waits for nothing, yet writes the one row every like of
 * the post reads, once per like, and a MultiXact whenever two overlap.
 * On SQLite every writer waits for the one write lock: not run. */
static void shard_increment__likes_pass_a_like_waiting_on_a_hot_slot(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	bool pg = kit_db_engine(db) == KIT_DB_POSTGRES;
	struct kit_db *a = held[0] = labtest_connect(t);
	struct waiter w = { .db = held[1] = labtest_connect(t) };
	struct waiter other = { .db = held[2] = labtest_connect(t), .slot = 2 };
	int64_t first = session_of(w.db), second = session_of(other.db);
	labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 0, 1), (42, 1, 1),"
	             " (42, 2, 1), (42, 3, 1), (42, 4, 1), (42, 5, 1), (42, 6, 1), (42, 7, 1),"
	             " (42, 8, 1), (42, 9, 1), (42, 10, 1), (42, 11, 1), (42, 12, 1), (42, 13, 1),"
	             " (42, 14, 1), (42, 15, 1)");
	lt_expect(shard_resize(db, POST, 16) == 0, "live-n", "shard_resize(42, 16): %s",
	          labtest_why(db));
	/* xmax is an xid (or a MultiXact id): 32 bits, read as a number */
	static const char *const xmax_sql =
		"SELECT xmax::text::bigint FROM like_slot_config WHERE post_id = 42";
	int64_t xmax[2] = { 0, 0 };
	lt_expect(labtest_int(t, "SELECT count(*) FROM like_slot_config WHERE post_id = 42") == 1,
	          "live-n", "shard_resize(42, 16) returned 0 and left no like_slot_config row for "
	          "post 42: a resize writes the N it was given, with one upsert of the post's "
	          "config, also when it is the N the post has already (shard.h)");
	if (pg)
		xmax[0] = labtest_int(t, xmax_sql);

	lt_expect(kit_db_begin(a) == 0, NULL, "BEGIN on a: %s", labtest_why(a));
	lt_expect(kit_db_exec(a, "UPDATE like_slots SET n = n + 1 WHERE post_id = 42 AND slot = 9",
	                      0, NULL) == 0, NULL, "UPDATE on a: %s", labtest_why(a));
	pthread_t tid, tid2;
	if (pthread_create(&tid, NULL, waiter_main, &w) != 0) {
		kit_db_rollback(a);
		fail_msg("pthread_create failed");
	}
	int64_t blocked = 0, waited = 0;
	int polls = kit_db_engine(db) == KIT_DB_MYSQL ? 500 : 20000;   /* 60 s, 40 s */
	for (int i = 0; i < polls && blocked == 0 && !atomic_load(&w.done); i++) {
		int waits = lt_lock_waiting(db, first);
		if (waits < 0)
			break;
		if ((blocked = waits) == 0)
			util_sleep_ns(lt_lock_poll_ns(db));
	}
	bool started = blocked && pthread_create(&tid2, NULL, waiter_main, &other) == 0;
	if (started) {
		/* a wait the server does not list (a mutex of the process) shows
		 * as a like that does not end: 10 s at most */
		int64_t give_up = util_now_ns() + 10000000000LL;
		while (!atomic_load(&other.done) && waited == 0) {
			int waits = lt_lock_waiting(db, second);
			if (waits < 0)
				break;
			if ((waited = waits) == 0 && util_now_ns() > give_up)
				waited = 2;
			if (waited == 0)
				util_sleep_ns(lt_lock_poll_ns(db));
		}
	}
	int committed = kit_db_commit(a);
	pthread_join(tid, NULL);
	if (started)
		pthread_join(tid2, NULL);
	if (pg)
		xmax[1] = labtest_int(t, xmax_sql);

	lt_expect(committed == 0, NULL, "COMMIT on a: %s", labtest_why(a));
	lt_expect(blocked != 0, "upsert", "a like of post 42 at slot 9 never waited for slot 9's "
	          "row, which another transaction held (it returned %d: %s)", w.rc,
	          w.rc ? w.error : "no error");
	lt_expect(waited == 0, "upsert", "while a like of post 42 waited for slot 9's row (another "
	          "transaction held it), a like of post 42 at slot 2 on another connection %s: does "
	          "a like lock its post's config row (SELECT nslots ... FOR UPDATE or FOR SHARE), "
	          "or take a mutex of the process around its statement? A like waiting behind a hot "
	          "slot then holds up every like of the post, the one queue this lab removes (§5)",
	          waited == 2 ? "had not ended after 10 s (and the database showed no lock wait)"
	                      : "waited for a lock");
	lt_expect(w.rc == 0 && other.rc == 0, "upsert", "the like at slot 9 returned %d (%s), the "
	          "like at slot 2 %d (%s)", w.rc, w.error, other.rc, other.error);
	if (pg)
		lt_expect(xmax[0] == xmax[1], "live-n", "after two likes of post 42, its "
		          "config row carries a row lock: its xmax (the transaction that last locked "
		          "or changed it) went from %lld after the resize to %lld, and only a resize writes "
		          "that row. Does the like read N with FOR KEY SHARE (or FOR SHARE)? No like "
		          "waits for it, but every like then writes the one row every like of the post "
		          "reads (a MultiXact whenever two overlap): the hot row again. Read N with a "
		          "plain SELECT inside the upsert (§5)", (long long)xmax[0], (long long)xmax[1]);
	lt_expect_int_hint(total(db, POST), 19, "post 42's count after 16 likes, slot 9 + 1 by "
	                   "another transaction and the two likes", "upsert");
}

/* ---- shard_choose_n ---- */

static void shard_choose_n__formula(void **state)
{
	(void)state;
	lt_expect_int_hint(shard_choose_n(2000, 2.0, 1.0), 4, "N for 2000/s, 2 ms, headroom 1", "choose-n");
	lt_expect_int_hint(shard_choose_n(2000, 2.0, 2.0), 8, "N for 2000/s, 2 ms, headroom 2", "choose-n");
	lt_expect_int_hint(shard_choose_n(2001, 2.0, 1.0), 5, "N for 2001/s, 2 ms (round up)", "choose-n");
	lt_expect_int_hint(shard_choose_n(100000, 1.0, 1.0), 100, "N for 100000/s, 1 ms", "choose-n");
	lt_expect_int_hint(shard_choose_n(12000, 5.0, 1.0), 60, "N for 12000/s, 5 ms", "choose-n");
	/* 50000 * 1 / 1000 * 1.1 is 55.000000000000007 in floating point */
	lt_expect_int_hint(shard_choose_n(50000, 1.0, 1.1), 55,
	                   "N for 50000/s, 1 ms, headroom 1.1 (exactly 55)", "choose-n");
	lt_expect_int_hint(shard_choose_n(700, 2.0, 1.5), 3, "N for 700/s, 2 ms, headroom 1.5 (2.1)", "choose-n");
	lt_expect_int_hint(shard_choose_n(300, 1.0, 1.0), 1, "N for 300/s, 1 ms (under one row)", "choose-n");
	lt_expect_int_hint(shard_choose_n(0, 1.0, 1.0), 1, "N for no traffic (at least 1)", "choose-n");
	lt_expect_int_hint(shard_choose_n(1000, 0.0, 1.0), -1, "N for a hold of 0 ms (invalid)", "choose-n");
	lt_expect_int_hint(shard_choose_n(1000, 1.0, 0.5), -1, "N for headroom 0.5 (invalid)", "choose-n");
	lt_expect_int_hint(shard_choose_n(-1, 1.0, 1.0), -1, "N for a negative rate (invalid)", "choose-n");
	/* just above a whole number of rows: one more row, however small the excess */
	lt_expect_int_hint(shard_choose_n(4001, 1.0, 1.0), 5, "N for 4001/s, 1 ms (4.001 rows)", "choose-n");
	lt_expect_int_hint(shard_choose_n(40001, 0.1, 1.0), 5, "N for 40001/s, 0.1 ms (4.0001 rows)", "choose-n");
	lt_expect_int_hint(shard_choose_n(1000, 1.0, 1.0), 1, "N for exactly one row", "choose-n");
	lt_expect_int_hint(shard_choose_n(NAN, 1.0, 1.0), -1, "N for a rate that is not a number", "choose-n");
	lt_expect_int_hint(shard_choose_n(1000, NAN, 1.0), -1, "N for a hold that is not a number", "choose-n");
	lt_expect_int_hint(shard_choose_n(1000, 1.0, NAN), -1, "N for a headroom that is not a number", "choose-n");
	/* the bounds are exact: a tolerance on them lets bad input through */
	lt_expect_int_hint(shard_choose_n(1000, 1.0, nextafter(1.0, 0.0)), -1,
	                   "N for a headroom a hair below 1 (1 - 2^-53, still below 1: invalid; is the "
	                   "bound compared with a tolerance?)", "choose-n");
	lt_expect_int_hint(shard_choose_n(-1e-300, 1.0, 1.0), -1,
	                   "N for a rate a hair below 0 (-1e-300: invalid)", "choose-n");
	lt_expect_int_hint(shard_choose_n(-0.0, 1.0, 1.0), 1,
	                   "N for a rate of -0.0 (not below 0: no traffic, 1 row; is the sign bit "
	                   "tested, signbit(), rather than the value?)", "choose-n");
	lt_expect_int_hint(shard_choose_n(1000, -0.0, 1.0), -1,
	                   "N for a hold of -0.0 ms (not above 0: invalid)", "choose-n");
	lt_expect_int_hint(shard_choose_n(1000, 1e-300, 1.0), 1,
	                   "N for a hold a hair above 0 (1e-300 ms: valid, under one row)", "choose-n");
	lt_expect_int_hint(shard_choose_n(1000, nextafter(0.0, 1.0), 1.0), 1,
	                   "N for the smallest hold above 0 a double holds (a subnormal, 4.9e-324 ms: "
	                   "above 0, so valid; is the bound DBL_MIN or a tolerance rather than 0?)",
	                   "choose-n");
	/* A fraction of 10^-10 of the product or more is a row (shard.h), on
	 * small products too: an allowance that is absolute (1e-9 rows) rather
	 * than a part of the product swallows it. */
	lt_expect_int_hint(shard_choose_n(5000.0000008, 1.0, 1.0), 6,
	                   "N for 5000.0000008/s, 1 ms (5.0000000008 rows: the fraction is 1.6 x "
	                   "10^-10 of the product, so shard.h counts it as a row; is the crumb taken "
	                   "off as a fixed amount rather than a part of the product?)", "choose-n");
	lt_expect_int_hint(shard_choose_n(1000.0000002, 1.0, 1.0), 2,
	                   "N for 1000.0000002/s, 1 ms (1.0000000002 rows: 2 x 10^-10 of the product "
	                   "is a row)", "choose-n");
	lt_expect_int_hint(shard_choose_n(1e-200, 1e-200, 1.0), 1,
	                   "N for 1e-200/s at 1e-200 ms (a product below the smallest double, which "
	                   "comes out as 0: still at least 1 row; is \"at least 1\" written only for a "
	                   "rate of 0?)", "choose-n");
	/* A rate of 0 needs 1 row and an infinite product INT_MAX, but only
	 * once every argument is good: a shortcut taken before the checks
	 * answers bad input with a number of rows. */
	static const double bad[][3] = {
		{ 0, 0.0, 1 }, { 0, -1, 1 }, { 0, 1, 0.5 }, { 0, NAN, 1 }, { 0, 1, NAN },
		{ INFINITY, -1, 1 }, { INFINITY, 1, 0.5 }, { INFINITY, NAN, 1 },
		{ 1000, INFINITY, 0.5 }, { 1000, 0.0, INFINITY }, { NAN, INFINITY, 1 },
		{ -1, INFINITY, 1 }, { -1, 1, INFINITY },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int n = shard_choose_n(bad[i][0], bad[i][1], bad[i][2]);
		lt_expect(n == -1, "choose-n", "shard_choose_n(%g, %g, %g) returned %d, expected -1: "
		          "one argument is bad, whatever the others are (does it answer a rate of 0 with 1 "
		          "row, or an infinite argument with INT_MAX, before it checks every argument?)",
		          bad[i][0], bad[i][1], bad[i][2], n);
	}
}

/* The top of shard_choose_n's domain: N past SHARD_MAX_SLOTS comes back as
 * computed (shard.h: the caller decides), N past what an int holds comes
 * back as INT_MAX, and products a float cannot hold (2^24 + 1 rows, or
 * 100,000.001 rows) still round up exactly: the formula is worked in
 * double. No database. */
static void shard_choose_n__large_rates(void **state)
{
	(void)state;
	lt_expect_int_hint(shard_choose_n(2000000, 1.0, 1.0), 2000,
	                   "N for 2,000,000/s, 1 ms: above SHARD_MAX_SLOTS, and shard.h says such an N "
	                   "is returned as computed (is it capped at SHARD_MAX_SLOTS?)", "choose-n");
	lt_expect_int_hint(shard_choose_n((double)LT_PAST_FLOAT, 1000.0, 1.0), LT_PAST_FLOAT,
	                   "N for 2^24 + 1 rows (16,777,217/s, 1 s holds): a float cannot hold 2^24 + 1 "
	                   "(is the product worked in float?)", "choose-n");
	lt_expect_int_hint(shard_choose_n(100000001, 1.0, 1.0), 100001,
	                   "N for 100,000,001/s, 1 ms (100,000.001 rows; in float it is 100,000 "
	                   "exactly, so is the product worked in float?)", "choose-n");
	lt_expect_int_hint(shard_choose_n(2147483647, 1000.0, 1.0), INT32_MAX,
	                   "N for 2^31 - 1 rows (2,147,483,647/s, 1 s holds): INT_MAX itself", "choose-n");
	lt_expect_int_hint(shard_choose_n(2147483647.5, 1000.0, 1.0), INT32_MAX,
	                   "N for 2^31 - 0.5 rows (2,147,483,647.5/s, 1 s holds): the whole rows it "
	                   "needs, 2^31, are one more than an int holds, so INT_MAX (is the rounded-up "
	                   "product cast to int when only the product was bounded? A double past "
	                   "INT_MAX cast to int is undefined; the checks build it to stop there)",
	                   "choose-n");
	lt_expect_int_hint(shard_choose_n(2147483648.0, 1000.0, 1.0), INT32_MAX,
	                   "N for 2^31 rows (2,147,483,648/s, 1 s holds), one more than an int holds: "
	                   "shard.h says INT_MAX (is the double cast to int without a bound?)", "choose-n");
	lt_expect_int_hint(shard_choose_n(1e13, 1.0, 1.0), INT32_MAX,
	                   "N for 10^13/s, 1 ms (10^10 rows, more than an int holds): shard.h says "
	                   "INT_MAX (is the double cast to int without a bound?)", "choose-n");
	lt_expect_int_hint(shard_choose_n(INFINITY, 1.0, 1.0), INT32_MAX,
	                   "N for an infinite rate: INT_MAX (is the double cast to int without a bound?)",
	                   "choose-n");
	/* An infinite hold or headroom is no bad input (shard.h refuses only
	 * a negative rate, a hold of 0 or less, a headroom below 1 and NaN):
	 * the product is infinite, INT_MAX rows. Times a rate of 0 it is 0 x
	 * infinity, not a number: no like comes, and N is at least 1. */
	lt_expect_int_hint(shard_choose_n(1.0, INFINITY, 1.0), INT32_MAX,
	                   "N for 1/s with an infinite hold: the product is infinite, INT_MAX (is an "
	                   "infinite hold refused as bad input? shard.h refuses only a hold of 0 or "
	                   "less, and NaN)", "choose-n");
	lt_expect_int_hint(shard_choose_n(1.0, 1.0, INFINITY), INT32_MAX,
	                   "N for 1/s, 1 ms and an infinite headroom: INT_MAX (is an infinite "
	                   "headroom refused as bad input? shard.h refuses only one below 1, and NaN)",
	                   "choose-n");
	lt_expect_int_hint(shard_choose_n(0.0, INFINITY, 1.0), 1,
	                   "N for 0/s with an infinite hold: 0 x infinity is NaN, and a NaN cast to "
	                   "int is undefined (INT_MIN on x86); no like comes, so at least 1 row",
	                   "choose-n");
	lt_expect_int_hint(shard_choose_n(0.0, 1.0, INFINITY), 1,
	                   "N for 0/s with an infinite headroom: 0 x infinity is NaN (see above); at "
	                   "least 1 row", "choose-n");
}

/* "Taken on the exact product" (shard.h), at every size. A product that
 * is a whole number of rows gives that many, although the double holding
 * it may come out a hair above: the crumb grows with the product (a double
 * keeps 53 bits, so it is a few parts in 10^16 of it: 7e-15 at 55 rows,
 * 2.3e-10 at 1,540,000, 3.7e-9 at 29,700,000, 2.4e-7 at 2^31 - 2), so an
 * allowance of a fixed size (1e-12, or 1e-9) still adds a row somewhere.
 * A product that is a real fraction above a whole number gives one row
 * more, however small the fraction: 8e-9 of a row is still 10^7 times a
 * double's crumb at 1 to 4 rows, so an allowance of 1e-8 swallows a row
 * somebody needs, and a quarter of a row at 2^31 - 2 is 10^-10 of the
 * product, so an allowance of 10^-9 of the product swallows it (one of
 * 10^-12 of the product, as hint 6 says, keeps both). In every order of
 * the formula's three factors the whole-number products come out at most
 * 2 parts in 10^16 above, so the allowance holds whichever order a
 * solution multiplies in. No database. */
static void shard_choose_n__crumbs_and_fractions_at_every_size(void **state)
{
	(void)state;
	static const struct {
		double peak_per_s, hold_ms, headroom;
		int n;
		const char *what;
	} cases[] = {
		{ 50000, 1.0, 1.1, 55, "55 rows exactly (a crumb of 7e-15 in a double)" },
		{ 700000000, 2.0, 1.1, 1540000, "1,540,000 rows exactly (a crumb of 2.3e-10)" },
		{ 1000000000, 1.5, 1.1, 1650000, "1,650,000 rows exactly (a crumb of 2.3e-10)" },
		{ 900000000, 1.5, 2.2, 2970000, "2,970,000 rows exactly (a crumb of 4.7e-10)" },
		{ 9e9, 1.5, 2.2, 29700000, "29,700,000 rows exactly (a crumb of 3.7e-9)" },
		{ 3750000, 1.11, 2.64, 10989, "10,989 rows exactly (a crumb of 3.6e-12: 3.3 parts in "
		  "10^16 of the product, more than one DBL_EPSILON, 2.2 parts in 10^16)" },
		{ 1301505240000, 1.5, 1.1, 2147483646,
		  "2^31 - 2 rows exactly, at a rate near 2^40 (a crumb of 2.4e-7)" },
		{ 1000.000008, 1.0, 1.0, 2, "1.000000008 rows" },
		{ 2000.000008, 1.0, 1.0, 3, "2.000000008 rows" },
		{ 4000.000008, 1.0, 1.0, 5, "4.000000008 rows" },
		{ 2147483646250, 1.0, 1.0, INT32_MAX, "2^31 - 2 rows and a quarter" },
		{ 1099511627776, 1.0, 1.0, 1099511628, "2^40 / 1000 rows: 1,099,511,627.776" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char what[320];
		int got = shard_choose_n(cases[i].peak_per_s, cases[i].hold_ms, cases[i].headroom);
		snprintf(what, sizeof what, "N for %.13g/s, %g ms, headroom %g: %s (%s)",
		         cases[i].peak_per_s, cases[i].hold_ms, cases[i].headroom, cases[i].what,
		         got > cases[i].n
		                 ? "a crumb that grows with the product is not a row: is the allowance "
		                   "taken off before ceil too small for large products (a fixed amount, "
		                   "not a part of the product)?"
		                 : "a real fraction, however small, is a row, and a whole row more so: is "
		                   "the allowance taken off before ceil so large it swallows one?");
		lt_expect_int_hint(got, cases[i].n, what, "choose-n");
	}
}

/* Whether the fraction of the exact product p above whole rows m, p - m,
 * is 10^-10 of p or more: (p - m) * 10^10 >= p, decided exactly. p - m
 * is exact (m <= p < m + 1, m >= 1: Sterbenz), 10^10 is a double, and
 * fma rounds the exact d * 10^10 - p once, which keeps its sign. */
static bool share_is_a_row(double p, double m)
{
	return fma(p - m, 1e10, -p) >= 0;
}

/* The smallest double p above m whose fraction is 10^-10 of p or more,
 * then (share > 1e-10) the first one whose fraction is that share of p or
 * more: the limit of shard.h's "a fraction of a row that is 10^-10 of the
 * product or more is a row" itself, and points above it. */
static double at_share(double m, double share)
{
	double p = m / (1 - share);
	while (p > m && share_is_a_row(nextafter(p, 0), m))
		p = nextafter(p, 0);
	while (!share_is_a_row(p, m))
		p = nextafter(p, INFINITY);
	return p;
}

/* shard.h: "a fraction of a row that is 10^-10 of the product or more is
 * a row". At that limit itself, not only far above it: the smallest
 * product a double holds whose fraction above m whole rows is 10^-10 of
 * it or more (a share 1 + 10^-6 times 10^-10 at most), then shares 1.001,
 * 1.1, 1.5 and 3 times 10^-10, at whole-row counts m from 1 to 2^31 - 2,
 * each product given three ways whose exact product is the same (p/s at
 * 1000 ms, p/2 at 2000 ms, p at 500 ms and headroom 2): every one needs
 * m + 1 rows (the fraction is below 1, so ceil of the exact product is m
 * + 1). An allowance taken off before ceil that is 10^-10 of the product
 * itself, or more, swallows some of them: the limit is a row, so the
 * allowance must stay below it (hint 6: a part in 10^12). The expected N
 * comes from integer reasoning, not from the formula. No database. */
static void shard_choose_n__a_share_of_1e_10_is_a_row(void **state)
{
	(void)state;
	static const double share[] = { 1e-10, 1.001e-10, 1.1e-10, 1.5e-10, 3e-10 };
	double m[64];
	int nm = 0;
	for (double x = 1; x < 2147483646 && nm < 56; x = floor(x * 1.5) + 1)
		m[nm++] = x;
	m[nm++] = 55;
	m[nm++] = 16777217;             /* 2^24 + 1 */
	m[nm++] = 29700000;
	m[nm++] = 100000000;
	m[nm++] = 1000000000;
	m[nm++] = 2147483646;           /* 2^31 - 2: m + 1 is INT_MAX */
	for (int i = 0; i < nm; i++) {
		for (size_t j = 0; j < sizeof share / sizeof share[0]; j++) {
			double p = at_share(m[i], share[j]);
			const double args[3][3] = { { p, 1000, 1 }, { p / 2, 2000, 1 }, { p, 500, 2 } };
			for (int a = 0; a < 3; a++) {
				int got = shard_choose_n(args[a][0], args[a][1], args[a][2]);
				lt_expect(got == (int)m[i] + 1, "choose-n",
				          "shard_choose_n(%.17g, %g, %g): the exact product is %.17g, %.0f "
				          "whole rows and a fraction of %.6g of the product (%s 10^-10): "
				          "shard.h counts a fraction of 10^-10 of the product or more as a "
				          "row, so N is %.0f; it returned %d. Is the allowance taken off "
				          "before ceil 10^-10 of the product or more, the very share shard.h "
				          "names? It must stay below it: a part in 10^12 (hint 6)",
				          args[a][0], args[a][1], args[a][2], p, m[i], (p - m[i]) / p,
				          j == 0 ? "the limit itself, the first double at or above" :
				          "above", m[i] + 1, got);
			}
		}
	}
}

/* "Taken on the exact product" (shard.h) over the whole domain it
 * accepts, the ends of the doubles included: a hold of 2^-1074 ms, the
 * smallest double above 0, is valid, and so are a rate, hold or headroom
 * near 2^1023. Whether a solution gets these right depends on the order
 * it puts the factors together in. Rate x hold first, as the formula
 * reads (peak_per_s * hold_ms / 1000 * headroom), leaves the doubles only
 * where N is 1 or INT_MAX anyway: a product past the largest double is
 * past INT_MAX rows, one below DBL_MIN (2^-1022) is under 4 / 1000 of a
 * row even times the largest headroom, and what the division and the
 * headroom round is a few parts in 10^15 at most wherever N is 2 or more.
 * Other orders are exact at every size a server sees (the checks above)
 * and wrong here:
 *   - a row's ceiling 1000 / hold_ms first, the peak divided by it: past
 *     the largest double (+inf) for any hold below 5.6e-306 ms, so the
 *     peak over it is 0 rows, N = 1, whatever the product;
 *   - hold_ms / 1000 first (the hold in seconds): a tiny hold falls
 *     further into the subnormals, which keep fewer digits the smaller
 *     they are, or to 0;
 *   - peak_per_s / 1000 first (the rate per millisecond): the same for
 *     a tiny rate;
 *   - peak x headroom, or hold x headroom, first: past the largest double
 *     for a product a small hold or rate brings back down.
 * Each case's exact product, worked from the doubles' exact values (the
 * double 1e308 is 10^308 x (1 + 1.1e-17), 4.9e-324 is 2^-1074, 3e-320 is
 * 6072 x 2^-1074 = 2.99996680...e-320, 1e-310 is 20240225330731 x
 * 2^-1074 = 9.9999999999999694e-311):
 *   2^1023/s x 2^-1065 ms / 1000 x 1000 x 2^67   = 2^25       33,554,432
 *   2^1023/s x 2^-1074 ms / 1000 x 1000 x 2^71   = 2^20        1,048,576
 *   1e308/s x 2^-1074 ms / 1000 x 1e19 = 4.9406564584124655    5
 *   1e300/s x 3e-320 ms / 1000 x 1e30  = 29,999,666.0155  (a fraction of
 *     5.2 x 10^-10 of the product: a row)                     29,999,667
 *   1e300/s x 1e-310 ms / 1000 x 1e300 = 1.0 x 10^287       INT_MAX
 *   1500 x 2^-1074/s x 2^1023 ms / 1000 x 2^60   = 1.5 x 2^9         768
 *   2^1000/s x 1000 x 2^-1000 ms / 1000 x 2^30   = 2^30    1,073,741,824
 *   2^-1000/s x 1000 x 2^1000 ms / 1000 x 2^30   = 2^30    1,073,741,824
 * Every whole product is exact, every other one a fraction far from a
 * whole row and from the 10^-10 limit, so no allowance before ceil moves
 * them. No database. */
static void shard_choose_n__exact_at_the_ends_of_the_doubles(void **state)
{
	(void)state;
	static const struct {
		double peak_per_s, hold_ms, headroom;
		int n;
		const char *what;
	} cases[] = {
		{ 0x1p1023, 0x1p-1065, 1000 * 0x1p67, 33554432,
		  "2^1023/s, 2^-1065 ms, headroom 1000 x 2^67: exactly 2^25 rows" },
		{ 0x1p1023, 0x1p-1074, 1000 * 0x1p71, 1048576,
		  "2^1023/s, 2^-1074 ms (the smallest double above 0), headroom 1000 x 2^71: exactly "
		  "2^20 rows" },
		{ 1e308, 4.9e-324, 1e19, 5, "1e308/s, 4.9e-324 ms (2^-1074), headroom 1e19: 4.94 rows" },
		{ 1e300, 3e-320, 1e30, 29999667,
		  "1e300/s, 3e-320 ms (6072 x 2^-1074), headroom 1e30: 29,999,666.02 rows" },
		{ 1e300, 1e-310, 1e300, INT32_MAX,
		  "1e300/s, 1e-310 ms, headroom 1e300: 10^287 rows, past what an int holds" },
		{ 1500 * 0x1p-1074, 0x1p1023, 0x1p60, 768,
		  "1500 x 2^-1074/s (7.4e-321), 2^1023 ms, headroom 2^60: exactly 768 rows" },
		{ 0x1p1000, 1000 * 0x1p-1000, 0x1p30, 1073741824,
		  "2^1000/s, 1000 x 2^-1000 ms, headroom 2^30: exactly 2^30 rows" },
		{ 0x1p-1000, 1000 * 0x1p1000, 0x1p30, 1073741824,
		  "2^-1000/s, 1000 x 2^1000 ms, headroom 2^30: exactly 2^30 rows" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int got = shard_choose_n(cases[i].peak_per_s, cases[i].hold_ms, cases[i].headroom);
		const char *cause =
			got == 1 ? "Is the peak divided by a row's ceiling, 1000 / hold_ms? For a hold "
			"below 5.6e-306 ms (valid: above 0) that is past the largest double, +inf, and "
			"the peak over it is 0 rows. Or is a tiny hold or rate divided by 1000 first? "
			"At half of 2^-1074 or less it rounds to 0" :
			got == INT32_MAX ? "Are two large factors multiplied first (peak_per_s x "
			"headroom, or hold_ms x headroom)? Their product is past the largest double, "
			"though the third factor brings the exact product back down" :
			got > 1 ? "Is a tiny factor divided by 1000 first (hold_ms / 1000, the hold in "
			"seconds, or peak_per_s / 1000, the rate a millisecond)? A subnormal keeps fewer "
			"digits the smaller it is, and what it rounds off the large factors multiply "
			"back up" :
			"These arguments are all valid (a rate of 0 or more, a hold above 0, a headroom "
			"of 1 or more): N is at least 1";
		lt_expect(got == cases[i].n, "choose-n",
		          "expected %d, got %d: shard_choose_n(%a, %a, %a), %s. shard.h takes N on the "
		          "exact product for any hold above 0. %s. Work it as the formula reads, "
		          "peak_per_s * hold_ms / 1000 * headroom, the rate times the hold first: that "
		          "product leaves the doubles only where N is 1 or INT_MAX anyway",
		          cases[i].n, got, cases[i].peak_per_s, cases[i].hold_ms, cases[i].headroom,
		          cases[i].what, cause);
	}
}

/* ---- the mistake classes: edges of the domain, failing steps, races ---- */

#define LIKES_TOP 40

static uint32_t from_the_top(void *arg)   /* 2^32 - 1, 2^32 - 2, ... */
{
	uint32_t *next = arg;
	return UINT32_MAX - (*next)++;
}

/* fill_staircase's rows (slot s holds s + 1, 136 in all) in one statement
 * of the test's own, for checks that start from it many times. */
static void staircase_rows(struct labtest *t)
{
	labtest_exec(t, "DELETE FROM like_slots; DELETE FROM like_slot_config;"
	             "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 0, 1), (42, 1, 2), (42, 2, 3),"
	             " (42, 3, 4), (42, 4, 5), (42, 5, 6), (42, 6, 7), (42, 7, 8), (42, 8, 9), (42, 9, 10),"
	             " (42, 10, 11), (42, 11, 12), (42, 12, 13), (42, 13, 14), (42, 14, 15), (42, 15, 16)");
}

/* Rows of post at slot >= n. */
static int64_t rows_from(struct labtest *t, int64_t post, int n)
{
	char sql[160];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM like_slots WHERE post_id = %lld AND slot >= %d",
	         (long long)post, n);
	return labtest_int(t, sql);
}

/* Random values past 2^31 (the 40 at the top of uint32_t) and a post id
 * past 2^32: each like lands in slot value % N exactly, with N = 16 and
 * N = 1000, under exactly that post. */
static void shard_increment__values_and_ids_past_2_31(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	const int64_t post = LT_PAST_UINT32 + 4;
	int ns[] = { SHARD_DEFAULT_SLOTS, 1000 };

	for (int i = 0; i < 2; i++) {
		int n = ns[i];
		labtest_exec(t, "DELETE FROM like_slots");
		if (n != SHARD_DEFAULT_SLOTS)
			lt_expect(shard_resize(db, post, n) == 0, NULL, "shard_resize(%d): %s", n, labtest_why(db));
		uint32_t next = 0;
		like_n(db, post, LIKES_TOP, from_the_top, &next);
		lt_expect_int_hint(total(db, post), LIKES_TOP, "count of post 2^32 + 5", "uint32");
		for (uint32_t k = 0; k < (uint32_t)LIKES_TOP; k++) {
			uint32_t v = UINT32_MAX - k;
			int slot = (int)(v % (uint32_t)n);
			int64_t want = 0;
			for (uint32_t j = 0; j < (uint32_t)LIKES_TOP; j++)
				want += (UINT32_MAX - j) % (uint32_t)n == (uint32_t)slot;
			lt_expect(slot_n(t, post, slot) == want, "uint32",
			          "with N = %d, random value %u belongs in slot %d, which should hold %lld, "
			          "got %lld (is the random value or the post id kept in an int, or cut "
			          "short before the %%?)", n, v, slot, (long long)want,
			          (long long)slot_n(t, post, slot));
		}
		lt_expect_int_hint(rows_from(t, post, n), 0, "rows of the post at slot >= N", "uint32");
	}
}

/* A real random source, as a deployment passes: every value drawn is
 * kept, and each like must land in the slot value % N that its own value
 * names. 150 likes of a post resized to N = 7 before its first like
 * (7 divides no power of two, so a mapping that keeps only some bits of
 * the value shows), checked like by like: the verdict has no chance in
 * it for a correct solution (the expected slot is computed from the
 * value the call drew, never from a distribution). A wrong mapping that
 * puts a fraction q of all 32-bit values elsewhere (the low bits only, a
 * value scaled as if it stopped at RAND_MAX, a signed or float copy)
 * passes with probability (1 - q)^150: 8e-46 for q = 1/2 (a signed
 * copy), 1.4e-7 for q = 0.1, 4.6e-4 for q = 0.05. The seed changes every
 * run and a failure prints it. */
#define RANDOM_LIKES 150

struct drawn {
	uint32_t x;      /* xorshift32 state */
	uint32_t last;   /* the value the latest call drew */
	int calls;
};

static uint32_t draw(void *arg)
{
	struct drawn *d = arg;
	d->calls++;
	d->last = xorshift(&d->x);
	return d->last;
}

static void shard_increment__random_values_land_where_drawn(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	uint32_t seed = (uint32_t)now.tv_nsec ^ (uint32_t)now.tv_sec ^ (uint32_t)getpid() << 16;
	struct drawn d = { seed ? seed : 1, 0, 0 };
	const int n = 7;
	int64_t held_n[7] = { 0 };
	lt_expect(shard_resize(db, POST, n) == 0, NULL, "shard_resize(7): %s", labtest_why(db));
	for (int i = 0; i < RANDOM_LIKES; i++) {
		int calls = d.calls;
		like_n(db, POST, 1, draw, &d);
		lt_expect(d.calls == calls + 1, "one-slot", "a like called the random source %d "
		          "times, expected once", d.calls - calls);
		int slot = (int)(d.last % (uint32_t)n);
		int64_t got = slot_n(t, POST, slot);
		lt_expect(got == held_n[slot] + 1, "uint32", "like %d with N = %d drew %u, which "
		          "belongs in slot %d (value %% N): that slot holds %lld, expected %lld "
		          "(seed %u; is the value cut to fewer bits, scaled, or kept signed?)",
		          i + 1, n, d.last, slot, (long long)got, (long long)(held_n[slot] + 1), seed);
		held_n[slot] = got;
	}
	lt_expect_int_hint(total(db, POST), RANDOM_LIKES, "count after 150 likes with random "
	                   "values", "sum-all-slots");
}

/* N is per post: post 42 shrunk to 2 leaves post 43 at 16 slots. */
static void shard_increment__n_is_per_post(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	uint32_t next = 0;

	lt_expect(shard_resize(db, POST, 2) == 0, NULL, "shard_resize(2): %s", labtest_why(db));
	like_n(db, POST + 1, SHARD_DEFAULT_SLOTS, counting, &next);
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM like_slots WHERE post_id = 43"),
	                   SHARD_DEFAULT_SLOTS, "slot rows of post 43 after values 0 .. 15, with only post 42 "
	                   "resized (is N read for the right post?)", "live-n");
}

/* Exactly 1 and SHARD_MAX_SLOTS are accepted; 0, -1, SHARD_MAX_SLOTS + 1
 * and INT_MIN are refused before anything changes. */
static void shard_resize__edges_of_n(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	int ok[] = { SHARD_MAX_SLOTS, 1 }, bad[] = { 0, -1, SHARD_MAX_SLOTS + 1, INT32_MIN };
	int n = 0;

	staircase_rows(t);
	for (int i = 0; i < 2; i++) {
		lt_expect(shard_resize(db, POST, ok[i]) == 0, "bad-n",
		          "shard_resize(%d) is in 1 .. SHARD_MAX_SLOTS and should work: %s", ok[i], labtest_why(db));
		lt_expect(shard_slots(db, POST, &n) == 0 && n == ok[i], "bad-n",
		          "N after shard_resize(%d): got %d", ok[i], n);
		lt_expect_int(total(db, POST), 136, "count after the resize");
	}
	for (int i = 0; i < 4; i++) {
		lt_expect(shard_resize(db, POST, bad[i]) < 0, "bad-n", "shard_resize(%d) should fail", bad[i]);
		lt_expect(shard_slots(db, POST, &n) == 0 && n == 1, "bad-n",
		          "N after the refused shard_resize(%d): expected 1, got %d", bad[i], n);
	}
}

/* Slot counts past 2^31, 2^32 and 2^53 are read and fold without being cut
 * to an int, rounded to a double or cut short in their text. */
/* 2^62 + 1: 19 digits, and not a whole number of a double's steps there
 * (1,024), so a count read back through a double (strtod, atof) is cut
 * to 2^62, whether or not the sum is worked in one. */
#define COUNT_2_62 (((int64_t)1 << 62) + 1)
static void shard_resize__folds_counts_past_2_31(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	char sql[200];
	snprintf(sql, sizeof sql, "INSERT INTO like_slots (post_id, slot, n) VALUES "
	         "(42, 0, 1), (42, 4, %lld), (42, 8, %lld), (42, 12, %lld)", (long long)LT_PAST_INT32,
	         (long long)LT_PAST_UINT32, (long long)COUNT_2_62);
	labtest_exec(t, sql);
	const int64_t all = 1 + LT_PAST_INT32 + LT_PAST_UINT32 + COUNT_2_62;

	/* 19 digits, and not a whole number of a double's steps there (1,024) */
	lt_expect_int_hint(total(db, POST), all, "count before the fold, slots holding 1, 2^31, "
	                   "2^32 + 1 and 2^62 + 1 (is the sum worked in a double, such as SQLite's total()? "
	                   "past 2^53 a double skips integers)", "uint32");
	lt_expect(shard_resize(db, POST, 4) == 0, "fold", "shard_resize(4): %s", labtest_why(db));
	lt_expect_int_hint(slot_n(t, POST, 0), all,
	                   "slot 0 after folding slots 4 (2^31), 8 (2^32 + 1) and 12 (2^62 + 1) into "
	                   "it (is a count kept in an int, read with atoi, or with strtod or atof, "
	                   "whose double holds no odd number past 2^53, or printed into a buffer too "
	                   "short for 19 digits?)", "uint32");
	lt_expect_int(total(db, POST), all, "count after the fold");
}

/* A shrink fails at each of its statements in turn (refused, or run with
 * its answer lost): the count stays 136 throughout; a refused step leaves
 * N and the rows as they were; 0 means the shrink is complete; the same
 * shrink then works. */
static void shard_resize__every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	int n = 0;

	for (int how = LT_STEP_FAILS; how <= LT_STEP_REPLY_LOST; how++) {
		for (int k = 1; ; k++) {
			staircase_rows(t);
			size_t blocks = lt_alloc_live();
			lt_step_arm(how, k);
			int rc = shard_resize(db, POST, 4);
			if (!lt_step_disarm())
				break;
			char what[160];
			snprintf(what, sizeof what, "shard_resize(4) whose statement %d %s (is a block freed "
			         "only on the way out that worked? free it on every path)", k, lt_step_what(how));
			lt_alloc_expect_none_left(blocks, what);
			int64_t sum = labtest_int(t, "SELECT coalesce(sum(n), 0) FROM like_slots WHERE post_id = 42");
			int64_t nrec = labtest_int(t, "SELECT coalesce((SELECT nslots FROM like_slot_config "
			                              "WHERE post_id = 42), 16)");
			lt_expect(sum == 136, "fold", "statement %d of shard_resize(4) %s: the count is %lld, "
			          "not 136 (are the delete and the folds in one transaction?)",
			          k, lt_step_what(how), (long long)sum);
			lt_expect(rc != 0 || (nrec == 4 && rows_from(t, POST, 4) == 0), "commit-result",
			          "statement %d of shard_resize(4) %s: it returned 0, but N is %lld and %lld rows "
			          "are left at slot >= 4 (is the result of COMMIT ignored?)", k, lt_step_what(how),
			          (long long)nrec, (long long)rows_from(t, POST, 4));
			lt_expect(how != LT_STEP_FAILS || rc == 0 || (nrec == 16 && rows_from(t, POST, 4) == 12),
			          "fold", "statement %d of shard_resize(4) refused: it returned %d, yet N is %lld "
			          "and %lld rows are left at slot >= 4 (expected 16 and 12: a failed resize "
			          "changes nothing)", k, rc, (long long)nrec, (long long)rows_from(t, POST, 4));
			lt_expect(shard_resize(db, POST, 4) == 0, "fold",
			          "the same shard_resize(4) again after statement %d %s: %s", k,
			          lt_step_what(how), labtest_why(db));
			lt_expect(shard_slots(db, POST, &n) == 0 && n == 4, "live-n", "N after the retry: %d", n);
			lt_expect_int(total(db, POST), 136, "count after the retry");
		}
	}
}

/* Two shrinks, of posts 42 and 43 (16 slots holding 1 .. 16 each, 136),
 * each on its own connection, let go together while the database refuses
 * every statement from the k-th sent by either on (with an error, or as
 * busy), for every k: both meet the failure at about the same step and
 * run their failure paths at the same moment. Each post still counts
 * 136; a shrink that said 0 left N = 4 and no row past it, one that said
 * an error left N and the rows as they were; the same shrinks then work.
 * Under the race pass of `hotrow lab check` (ThreadSanitizer; the kit's
 * failpoints order no threads) anything the failure path keeps for every
 * thread (a count of failed resizes, the last error in a static) fails
 * it. */
struct failing_shrink {
	struct kit_db *db;
	int64_t post;
	int rc;
};

static void *shrink_failing(void *arg)
{
	struct failing_shrink *f = arg;
	f->rc = shard_resize(f->db, f->post, 4);
	return NULL;
}

/* "" when post stands as a shrink that answered rc leaves it, else what
 * is wrong, in why. */
static void shrink_fault(struct labtest *t, int64_t post, int rc, char *why, size_t len)
{
	char sql[200];
	snprintf(sql, sizeof sql, "SELECT coalesce(sum(n), 0) FROM like_slots WHERE post_id = %lld",
	         (long long)post);
	int64_t sum = labtest_int(t, sql);
	snprintf(sql, sizeof sql, "SELECT coalesce((SELECT nslots FROM like_slot_config WHERE "
	         "post_id = %lld), 16)", (long long)post);
	int64_t n = labtest_int(t, sql), past = rows_from(t, post, 4);
	why[0] = '\0';
	if (sum != 136 || (rc == 0 && (n != 4 || past != 0)) || (rc != 0 && (n != 16 || past != 12)))
		snprintf(why, len, "post %lld's shrink returned %d: it counts %lld, N is %lld and %lld "
		         "rows are at slot >= 4 (expected 136, and %s)", (long long)post, rc,
		         (long long)sum, (long long)n, (long long)past,
		         rc == 0 ? "N 4 with no such row" : "N 16 with 12 such rows, as before");
}

static void shard_resize__two_shrinks_fail_at_once(void **state)
{
	struct labtest *t = *state;
	fresh(t);
	struct failing_shrink f[2] = { { labtest_connect(t), POST, 0 },
	                               { labtest_connect(t), POST + 1, 0 } };
	char seen[400] = "", why[240];
	int rounds = 0;
	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY && !seen[0]; how++) {
		if (!lt_step_refused(how))
			continue;
		for (int k = 1; k <= 200 && !seen[0]; k++) {
			staircase_rows(t);
			labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) SELECT 43, slot, n "
			             "FROM like_slots WHERE post_id = 42");
			lt_step_arm_from(how, k);
			lt_at_once(2, shrink_failing, f, sizeof f[0]);
			if (!lt_step_disarm())
				break;
			rounds++;
			for (int who = 0; who < 2 && !seen[0]; who++) {
				shrink_fault(t, f[who].post, f[who].rc, why, sizeof why);
				if (why[0])
					snprintf(seen, sizeof seen, "with every statement from the %d-th %s, %s",
					         k, lt_step_what(how), why);
			}
			for (int who = 0; who < 2 && !seen[0]; who++) {
				int again = shard_resize(f[who].db, f[who].post, 4);
				shrink_fault(t, f[who].post, again, why, sizeof why);
				if (again != 0 || why[0])
					snprintf(seen, sizeof seen, "with every statement from the %d-th %s, post "
					         "%lld's shrink returned %d; the same shrink again returned %d (%s) "
					         "%s", k, lt_step_what(how), (long long)f[who].post, f[who].rc,
					         again, labtest_why(f[who].db), why);
			}
		}
	}
	for (int who = 0; who < 2; who++)
		kit_db_close(f[who].db);
	lt_expect(rounds > 0 || seen[0], "fold", "two shrinks let go together with every statement "
	          "refused ran no statement: shard_resize is not implemented yet");
	lt_expect(!seen[0], "fold", "two shrinks of posts 42 and 43 let go together, each on its "
	          "own connection, while the database refused their statements: %s. Is anything "
	          "kept between calls and shared by the threads (a count of failed resizes, the "
	          "last error in a static)? Keep it in the call", seen);
}

/* shard_read and shard_slots leave their output alone when they fail. */
static void shard_read__failure_leaves_total_untouched(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	int64_t sum = -7;
	int n = -7;

	staircase_rows(t);
	size_t blocks = lt_alloc_live();
	lt_step_arm(LT_STEP_FAILS, 1);
	int rc = shard_read(db, POST, &sum);
	lt_step_disarm();
	lt_expect(rc != 0 && sum == -7, "never-liked",
	          "shard_read with its statement refused: returned %d and set *total to %lld; "
	          "expected an error and *total untouched", rc, (long long)sum);
	lt_alloc_expect_none_left(blocks, "shard_read whose statement was refused (is a block freed "
	                          "only on the way out that worked? free it on every path)");
	/* The read runs, its row comes in, then the answer is lost: an error,
	 * and still nothing written (a row callback that stores straight into
	 * *total has already written it). */
	lt_step_arm(LT_STEP_REPLY_LOST, 1);
	rc = shard_read(db, POST, &sum);
	lt_step_disarm();
	lt_alloc_expect_none_left(blocks, "shard_read whose answer was lost");
	lt_expect(rc != 0 && sum == -7, "never-liked",
	          "shard_read with its answer lost after the row came in: returned %d and set *total "
	          "to %lld; expected an error and *total untouched (is *total written by the row "
	          "callback, before the query has succeeded? keep the sum aside and store it once "
	          "the call returned 0)", rc, (long long)sum);
	lt_step_arm(LT_STEP_FAILS, 1);
	rc = shard_slots(db, POST, &n);
	lt_step_disarm();
	lt_expect(rc != 0 && n == -7, "live-n",
	          "shard_slots with its statement refused: returned %d and set *nslots to %d; "
	          "expected an error and *nslots untouched", rc, n);
}

struct race {
	int nslots[2];                 /* resize targets, or 0 for an increment */
	uint32_t value;                /* the increment's random value */
};

static int resize_or_like(void *arg, int who, struct kit_db *db)
{
	struct race *r = arg;
	uint32_t value = r->value;
	if (r->nslots[who] == 0)
		return shard_increment(db, POST, counting, &value);
	return shard_resize(db, POST, r->nslots[who]);
}

/* A like lands whole while the resize is held before each of its
 * statements in turn (the gate sends the like first and holds the resize
 * until the like is done or waits for the resize's lock): it is counted
 * exactly once, wherever it falls. From N = 16 (no config row) to each
 * edge of N a resize can go to: 4, the usual shrink; 1, every row folded
 * into slot 0 (a path of its own for N = 1, "sum the rows past slot 0,
 * add the sum to slot 0, delete them", reads and then deletes, and
 * deletes a like that lands in between uncounted, on PostgreSQL); 15,
 * one slot folded (the like on slot 15); 16, the N the post has, and
 * 1,024, the largest, which fold nothing. */
static const struct resize_edge {
	int to;                        /* the resize's N, from 16 */
	int like;                      /* the like's slot: past N for a shrink */
	int into;                      /* the slot it folds into; -1: no fold */
} resize_edges[] = {
	{ 4, 9, 1 }, { 1, 9, 0 }, { 15, 15, 0 }, { 16, 9, -1 }, { SHARD_MAX_SLOTS, 9, -1 },
};

static void shard_resize__a_like_at_every_statement_of_a_shrink(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct lt_gate *g = lt_gate_open(t, 2);

	for (size_t e = 0; e < sizeof resize_edges / sizeof resize_edges[0]; e++) {
		const struct resize_edge *edge = &resize_edges[e];
		struct race r = { { edge->to, 0 }, (uint32_t)edge->like };
		const char *kind = edge->into < 0 ? "resize" : "shrink";
		/* Three times: the like's slot holds a row (the like waits for
		 * any lock the shrink took on it), then has none (the like
		 * inserts a row no lock covers: a shrink that locked the rows it
		 * read with SELECT ... FOR UPDATE and deletes in a second
		 * statement deletes that one uncounted); then the like's slot is
		 * one the shrink folds into, and it has no row (the like creates
		 * the fold's target row: a fold that asks whether the row is
		 * there, with an UPDATE or a SELECT, and then INSERTs it, fails
		 * on the like's new row; an upsert adds to it). A resize that
		 * folds nothing has no such slot. */
		for (int gap = 0; gap <= (edge->into < 0 ? 1 : 2); gap++) {
			int empty = gap == 2 ? edge->into : edge->like;
			r.value = (uint32_t)empty;
			int64_t want = gap ? 137 - (empty + 1) : 137;
			char del[96];
			snprintf(del, sizeof del, "DELETE FROM like_slots WHERE post_id = 42 AND slot = %d",
			         empty);
			for (int k = 1; k <= 40; k++) {
				staircase_rows(t);
				if (gap)
					labtest_exec(t, del);
				lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, resize_or_like, &r);
				if (!lt_gate_held(g, 0))
					break;
				int failed = lt_gate_rc(g, 0) != 0 ? 0 : 1;
				if (gap == 2)
					lt_expect(lt_gate_rc(g, 0) == 0 && lt_gate_rc(g, 1) == 0, "fold",
					          "a shrink to %d, held before its statement %d while a like "
					          "created the row of slot %d, a slot the shrink folds into (it "
					          "had no row): they returned %d and %d (%s); a fold that asks "
					          "whether the target row is there and then INSERTs it fails on "
					          "the row the like made: add to the target with one upsert",
					          edge->to, k, empty, lt_gate_rc(g, 0), lt_gate_rc(g, 1),
					          labtest_why(lt_gate_db(g, failed)));
				else
					lt_expect(lt_gate_rc(g, 0) == 0 && lt_gate_rc(g, 1) == 0, NULL,
					          "a %s from 16 slots to %d and a like at its statement %d: they "
					          "returned %d and %d (the %s's: %s)%s", kind, edge->to, k,
					          lt_gate_rc(g, 0), lt_gate_rc(g, 1), failed ? "like" : kind,
					          labtest_why(lt_gate_db(g, failed)),
					          lt_gate_rc(g, failed) == KIT_DB_BUSY ? "; KIT_DB_BUSY here is "
					          "a deadlock or a lock wait given up: the like reads the config "
					          "row, then writes its slot, so a shrink that writes slot rows "
					          "before the config row locks them in the opposite order: write "
					          "the config row first" : "");
				int64_t got = total(db, POST);
				lt_expect(got == want, "fold",
				          "expected %lld, got %lld: the count after a %s from 16 slots to %d "
				          "held before its statement %d while a like on slot %d ran whole "
				          "(%s)%s", (long long)want, (long long)got, kind, edge->to, k, empty,
				          gap == 2 ? "the slot is one the shrink folds into, and had no row" :
				          gap ? "the slot had no row: the like made it" : "136 in slots 0 "
				          "to 15 and the like",
				          got >= want ? "" : edge->to == 1 ? ". Is it deleted uncounted? A "
				          "shrink to 1 that sums the rows past slot 0 in one statement (or "
				          "reads them) and deletes them in another deletes a like that "
				          "committed in between: fold what the DELETE returns, for N = 1 too" :
				          edge->into < 0 ? ". A resize to this N folds nothing: is a row "
				          "deleted or overwritten?" : ". Is it deleted uncounted, by a "
				          "DELETE after the statement that read the rows to fold? Fold what "
				          "the DELETE returns");
			}
		}
	}
	lt_gate_close(g);
}

/* The statements a call sends before it has begun a transaction or
 * written anything: plain SELECTs (or SHOWs) outside a transaction, in
 * autocommit, each its own snapshot. first_act is the number of the
 * first statement that is anything else (BEGIN, START TRANSACTION, an
 * INSERT, UPDATE or DELETE, a SET, a WITH ... DELETE): a like that
 * commits before it committed before the call's transaction, or its one
 * statement, began. */
struct act_watch {
	int seen;
	int first_act;                 /* 0 until seen */
	char read[160];                /* the last read before it */
};

static void first_act_seen(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct act_watch *w = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	w->seen++;
	if (w->first_act)
		return;
	if (ev == KIT_DB_STMT_START && (lt_sql_is(sql, "SELECT") || lt_sql_is(sql, "SHOW")))
		snprintf(w->read, sizeof w->read, "%.150s", sql);
	else
		w->first_act = w->seen;
}

/* A check that reads and then acts, across two connections: a shrink
 * that looks before it begins ("any row at slot >= N? none, so only
 * record N") acts on what it saw, not on what is there when it writes.
 * The post has rows at slots 0 to 3 only, N = 16 (no config row), then
 * N = 8 (a config row); the gate holds a shrink to 4 before each of its
 * statements in turn, the first one too, while a like on slot 9 (then
 * 13, under N = 8 slot 5), past the new N, commits on another
 * connection. Where that like committed before the shrink had begun its
 * transaction or written anything (the shrink had sent only reads of its
 * own, in autocommit), shard.h's "moves the count of every row at slot
 * >= nslots ... and removes the row" covers it: no row is left at slot
 * >= 4. Wherever it falls, the count is 11 and both calls return 0. A
 * like that waits for the shrink's lock counts as arrived, and the gate
 * lets the shrink go on. */
static void shard_resize__no_row_past_n_from_a_like_before_it_began(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct lt_gate *g = lt_gate_open(t, 2);
	for (int config = 0; config < 2; config++) {
		struct race r = { { 4, 0 }, config ? 13 : 9 };
		const char *start = config
			? "DELETE FROM like_slots; DELETE FROM like_slot_config;"
			  "INSERT INTO like_slot_config (post_id, nslots) VALUES (42, 8);"
			  "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 0, 1), (42, 1, 2),"
			  " (42, 2, 3), (42, 3, 4)"
			: "DELETE FROM like_slots; DELETE FROM like_slot_config;"
			  "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 0, 1), (42, 1, 2),"
			  " (42, 2, 3), (42, 3, 4)";
		/* Which statements of this shrink come before its first act:
		 * the same shrink, from the same rows, alone, watched. The
		 * statements before that act read only, so with the like held
		 * off until then the gated shrink sends the same ones. */
		struct act_watch w = { 0, 0, "" };
		labtest_exec(t, start);
		struct kit_db *shrinker = lt_gate_db(g, 0);
		kit_db_set_hook(shrinker, first_act_seen, &w);
		int rc = shard_resize(shrinker, POST, 4);
		kit_db_set_hook(shrinker, NULL, NULL);
		lt_expect(rc == 0, "fold", "shard_resize(42, 4) alone: %d (%s)", rc,
		          labtest_why(shrinker));
		lt_expect(w.first_act > 0, NULL, "a shrink to 4 sent %d statements, every one a read "
		          "outside a transaction: it wrote no N", w.seen);
		for (int k = 1; k <= 40; k++) {
			labtest_exec(t, start);
			lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, resize_or_like, &r);
			if (!lt_gate_held(g, 0))
				break;
			lt_expect(lt_gate_rc(g, 0) == 0 && lt_gate_rc(g, 1) == 0, NULL,
			          "a shrink to 4 and a like at its statement %d (N = %d before): they "
			          "returned %d and %d (%s)", k, config ? 8 : 16, lt_gate_rc(g, 0),
			          lt_gate_rc(g, 1), labtest_why(lt_gate_db(g, lt_gate_rc(g, 0) ? 0 : 1)));
			lt_expect_int_hint(total(db, POST), 11, "count after a shrink to 4 and a like "
			                   "that landed during it (10 in slots 0 to 3, and the like)",
			                   "fold-race");
			if (k > w.first_act)
				continue;
			int64_t past = rows_from(t, POST, 4);
			lt_expect(past == 0, "fold-race", "N = %d, rows at slots 0 to 3 only; a like on "
			          "slot %d committed on another connection before the shrink to 4 sent its "
			          "statement %d, before it had begun a transaction or written anything%s%s%s; "
			          "the shrink returned 0 and left %lld row(s) at slot >= 4 (shard.h: "
			          "shrinking moves the count of every row at slot >= nslots into slot "
			          "(its slot %% nslots) and removes the row). Does it look first, outside "
			          "its transaction, whether any row is past N, and skip the fold when none "
			          "is? What it saw may have changed by the time it writes: fold what the "
			          "DELETE in the transaction returns, always", config ? 8 : 16,
			          config ? 5 : 9, k, k > 1 ? " (it had sent reads only, the last \"" : "",
			          k > 1 ? w.read : "", k > 1 ? "\")" : "", (long long)past);
		}
	}
	lt_gate_close(g);
}

/* Two shrinks of one post at once (to 4 and to 2), held together before
 * each statement in turn: both succeed, the count stays, and no row is
 * left at a slot >= the N that was recorded last. */
/* A read of the post (who 0), or a resize of it to rr->to (who 1). */
struct read_race {
	int to;
	int64_t total;
};

static int read_or_resize(void *arg, int who, struct kit_db *db)
{
	struct read_race *rr = arg;
	if (who == 0)
		return shard_read(db, POST, &rr->total);
	return shard_resize(db, POST, rr->to);
}

/* A read held before each of its statements in turn while a resize
 * runs whole (a grow from 4 to 16, then a shrink from 4 to 2), with a
 * row at slot 9 that a like which read the old N left: the read gives
 * the one total, 141, wherever the resize falls. A read in two
 * statements (the slots below N, then the rows at or past N, each
 * reading N anew) counts slot 9 in neither when a grow commits between
 * them: one statement sees one snapshot. */
static void shard_read__one_total_across_a_resize(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct lt_gate *g = lt_gate_open(t, 2);
	static const int to[] = { 16, 2 };
	for (int i = 0; i < 2; i++) {
		for (int k = 1; k <= 10; k++) {
			labtest_exec(t, "DELETE FROM like_slots; DELETE FROM like_slot_config;"
			             "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 0, 10), "
			             "(42, 1, 26), (42, 2, 42), (42, 3, 58)");
			lt_expect(shard_resize(db, POST, 4) == 0, "fold", "shard_resize(4): %s",
			          labtest_why(db));
			labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 9, 5)");
			struct read_race rr = { .to = to[i], .total = -1 };
			lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, read_or_resize, &rr);
			if (!lt_gate_held(g, 0))
				break;
			lt_expect(lt_gate_rc(g, 0) == 0 && lt_gate_rc(g, 1) == 0, NULL, "a read held before "
			          "its statement %d while a resize to %d ran: they returned %d and %d (%s)",
			          k, to[i], lt_gate_rc(g, 0), lt_gate_rc(g, 1),
			          labtest_why(lt_gate_db(g, lt_gate_rc(g, 0) ? 0 : 1)));
			lt_expect(rr.total == 141, "sum-all-slots", "a read of the post (N = 4, 136 in "
			          "slots 0 to 3 and 5 at slot 9, left by a like that read the old N) held "
			          "before its statement %d while a %s to %d committed: it gave %lld, "
			          "expected 141%s", k, to[i] > 4 ? "grow" : "shrink", to[i],
			          (long long)rr.total, rr.total == 136 ? ": slot 9 counted in neither part; "
			          "does the read sum the slots below N and those at or past N in two "
			          "statements, each reading N anew? Sum every row of the post in one "
			          "statement" : "");
		}
	}
	lt_gate_close(g);
}

/* Every write of a post's N, in the order the rows were written: a
 * trigger on like_slot_config logs each row an INSERT or UPDATE leaves
 * there (a rolled-back write leaves no log row either), so the check
 * sees which resizes wrote their N, and which wrote last. The check's
 * teardown drops the log with the rest of its schema or database. */
static void log_config_writes(struct labtest *t)
{
	switch (t->engine) {
	case KIT_DB_POSTGRES:
		labtest_exec(t, "CREATE TABLE config_log (id BIGSERIAL PRIMARY KEY, post_id BIGINT, "
		             "nslots INT);"
		             "CREATE FUNCTION config_logged() RETURNS trigger LANGUAGE plpgsql AS "
		             "$$BEGIN INSERT INTO config_log (post_id, nslots) VALUES (NEW.post_id, "
		             "NEW.nslots); RETURN NULL; END$$;"
		             "CREATE TRIGGER config_logged AFTER INSERT OR UPDATE ON like_slot_config "
		             "FOR EACH ROW EXECUTE FUNCTION config_logged()");
		break;
	case KIT_DB_MYSQL:
		labtest_exec(t, "CREATE TABLE config_log (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
		             "post_id BIGINT, nslots INT)");
		labtest_exec(t, "CREATE TRIGGER config_inserted AFTER INSERT ON like_slot_config FOR "
		             "EACH ROW INSERT INTO config_log (post_id, nslots) VALUES (NEW.post_id, "
		             "NEW.nslots)");
		labtest_exec(t, "CREATE TRIGGER config_updated AFTER UPDATE ON like_slot_config FOR "
		             "EACH ROW INSERT INTO config_log (post_id, nslots) VALUES (NEW.post_id, "
		             "NEW.nslots)");
		break;
	default:
		labtest_exec(t, "CREATE TABLE config_log (id INTEGER PRIMARY KEY AUTOINCREMENT, "
		             "post_id BIGINT, nslots INT);"
		             "CREATE TRIGGER config_inserted AFTER INSERT ON like_slot_config BEGIN "
		             "INSERT INTO config_log (post_id, nslots) VALUES (NEW.post_id, NEW.nslots); "
		             "END;"
		             "CREATE TRIGGER config_updated AFTER UPDATE ON like_slot_config BEGIN "
		             "INSERT INTO config_log (post_id, nslots) VALUES (NEW.post_id, NEW.nslots); "
		             "END");
		break;
	}
}

static void shard_resize__two_shrinks_at_once(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	/* to 4 and to 2; then to 16, the default N, and to 4: a resize to
	 * the default writes its N like any other (one that deletes the
	 * config row instead takes no lock where no row is yet, and is lost
	 * when the other's upsert commits) */
	static const int pairs[2][2] = { { 4, 2 }, { SHARD_DEFAULT_SLOTS, 4 } };
	struct lt_gate *g = lt_gate_open(t, 2);
	int n = 0;

	/* Both are the post's first resize (no config row yet): the second
	 * to write its N finds the first one's row, and must change it (an
	 * upsert), not leave it ("INSERT ... ON CONFLICT DO NOTHING", or
	 * INSERT IGNORE, after an UPDATE that matched nothing returns 0 with
	 * its N never written: the caller's resize is lost). The final
	 * states are the same either way, so a trigger says which wrote. */
	/* Then the same pairs on a post resized to 16 before (its config row
	 * there): the second waits for the first's lock on that row, as long
	 * as its connection allows, and then resizes; a resize that takes the
	 * row with NOWAIT (or a lock timeout of its own) answers KIT_DB_BUSY
	 * where shard.h says both succeed, one after the other. */
	log_config_writes(t);
	for (int pr = 0; pr < 4; pr++) {
		const int a = pairs[pr % 2][0], b = pairs[pr % 2][1];
		const bool known = pr >= 2;
		struct race r = { { a, b }, 9 };
		for (int k = 1; k <= 40; k++) {
			staircase_rows(t);
			if (known)
				lt_expect(shard_resize(db, POST, SHARD_DEFAULT_SLOTS) == 0, "fold",
				          "shard_resize(42, 16): %s", labtest_why(db));
			labtest_exec(t, "DELETE FROM config_log");
			lt_gate_run(g, NULL, (int[]){ k, k }, resize_or_like, &r);
			if (!lt_gate_reached(g))
				break;
			char sql[120];
			snprintf(sql, sizeof sql, "SELECT count(*) FROM config_log WHERE post_id = 42 AND "
			         "nslots = %d", a);
			int64_t wrote_a = labtest_int(t, sql);
			snprintf(sql, sizeof sql, "SELECT count(*) FROM config_log WHERE post_id = 42 AND "
			         "nslots = %d", b);
			int64_t wrote_b = labtest_int(t, sql);
			int64_t last = labtest_int(t, "SELECT coalesce((SELECT nslots FROM config_log WHERE "
			                              "post_id = 42 ORDER BY id DESC LIMIT 1), -1)");
			lt_expect((lt_gate_rc(g, 0) != 0 || wrote_a > 0) && (lt_gate_rc(g, 1) != 0 ||
			          wrote_b > 0), "live-n", "two first resizes of one post at once (no config "
			          "row yet), to %d and to %d, held before their statement %d: they returned "
			          "%d and %d, yet the config row was never written with %d: a resize that "
			          "returned 0 left the other's N in place. %s", a, b, k, lt_gate_rc(g, 0),
			          lt_gate_rc(g, 1), wrote_a ? b : a, (wrote_a ? b : a) == SHARD_DEFAULT_SLOTS
			          ? "A resize to the default N writes its N too: a DELETE of the config row "
			          "(\"no row means the default\") finds no row to lock while the other's "
			          "upsert is uncommitted, and the other's N stays. Write N with one upsert, "
			          "whatever N" : "An UPDATE that matched nothing and then an INSERT that does "
			          "nothing on a conflict (ON CONFLICT DO NOTHING, INSERT IGNORE) loses the "
			          "second resize when the first inserted the row meanwhile: write N with one "
			          "upsert (ON CONFLICT DO UPDATE, ON DUPLICATE KEY UPDATE)");
			lt_expect(shard_slots(db, POST, &n) == 0 && n == last, "live-n", "two first resizes "
			          "at once, to %d and to %d, held before their statement %d: N is %d, where "
			          "the last write of the config row set %lld", a, b, k, n, (long long)last);

			lt_expect(lt_gate_rc(g, 0) == 0 && lt_gate_rc(g, 1) == 0, "fold",
			          "two resizes at once%s, to %d and to %d, held before their statement %d: "
			          "they returned %d and %d (%s); a deadlock means they lock rows in "
			          "different orders: let the config row, written first, order them; "
			          "KIT_DB_BUSY (%d) with no wait means the config row was taken with NOWAIT "
			          "or a lock timeout of the call's own (shard.h: both succeed, one after "
			          "the other)", known ? " of a post resized before (its config row there)"
			          : "", a, b, k, lt_gate_rc(g, 0), lt_gate_rc(g, 1),
			          labtest_why(lt_gate_db(g, lt_gate_rc(g, 0) ? 0 : 1)), KIT_DB_BUSY);
			lt_expect_int_hint(total(db, POST), 136, "count after two resizes at once", "fold");
			lt_expect(shard_slots(db, POST, &n) == 0 && (n == a || n == b), "live-n",
			          "N after resizes to %d and %d: %d", a, b, n);
			lt_expect(rows_from(t, POST, n) == 0, "fold",
			          "two resizes at once, to %d and to %d, held before their statement %d: N "
			          "is %d, yet %lld rows are left at slot >= %d (the shrinks interleaved: one "
			          "folded into slots the other had just removed)", a, b, k, n,
			          (long long)rows_from(t, POST, n), n);
		}
	}
	lt_gate_close(g);
}

/* A refused N is refused in C, as shard.h says: KIT_DB_ERR, and not one
 * statement sent (a db hook counts them, BEGIN and ROLLBACK included). An
 * N of 0 let through to the database is refused by the table's CHECK
 * instead, with another code, after a BEGIN and a write were sent; one
 * checked after kit_db_begin ("validate next to the write") sends a BEGIN
 * and a ROLLBACK, and on SQLite its BEGIN IMMEDIATE waits behind any
 * writer and may answer KIT_DB_BUSY for an N that can never work. */
static void count_statements(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)sql;
	(void)t_ns;
	if (ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START)
		++*(int *)arg;
}

static void shard_resize__refuses_bad_n_before_the_database(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	static const int bad[] = { 0, -1, SHARD_MAX_SLOTS + 1 };
	for (int i = 0; i < 3; i++) {
		int sent = 0;
		kit_db_set_hook(db, count_statements, &sent);
		int rc = shard_resize(db, POST, bad[i]);
		kit_db_set_hook(db, NULL, NULL);
		lt_expect(rc == KIT_DB_ERR && sent == 0, "bad-n", "shard_resize(%d) returned %d "
		          "(statements sent: %d), expected KIT_DB_ERR (%d) before touching the database",
		          bad[i], rc, sent, KIT_DB_ERR);
	}
}

/* A like that finds its slot locked by another transaction fails with
 * KIT_DB_BUSY once its lock timeout (100 ms here) runs out, having asked
 * the random source once: shard.h promises exactly one call per like,
 * and a retry loop that draws again breaks it (and, with a slot of its
 * own choosing each time, is a different like). The holder lets go after
 * at most 2 s, so a like that waits it out still ends. */
#define BUSY_HOLD_MS 4000
struct busy_like {
	struct kit_db *db;
	uint32_t next;                 /* the counting source: calls = next - 9 */
	int rc;
	atomic_int done;
	atomic_int released;           /* the holder has let go */
	uint32_t first_next;           /* next once the first like returned */
	int again_rc;                  /* the caller's retry, on the same thread */
	uint32_t again_calls;          /* ... and its calls of the source */
};

static void *busy_like_main(void *arg)
{
	struct busy_like *b = arg;
	b->rc = shard_increment(b->db, POST, counting, &b->next);
	b->first_next = b->next;
	atomic_store(&b->done, 1);
	/* The caller tries the like again on the same thread once the slot
	 * is free: a new like, so a new draw (one remembered from the busy
	 * like, "a retry goes to the same slot", is no call of the source). */
	for (int i = 0; i < 2 * BUSY_HOLD_MS / 10 && !atomic_load(&b->released); i++)
		util_sleep_ns(10 * 1000000LL);
	uint32_t before = b->next;
	b->again_rc = shard_increment(b->db, POST, counting, &b->next);
	b->again_calls = b->next - before;
	return NULL;
}

static void *busy_shrink_main(void *arg)
{
	struct busy_like *b = arg;
	b->rc = shard_resize(b->db, POST, 4);
	atomic_store(&b->done, 1);
	return NULL;
}

/* Slot 9 locked by an open transaction of db's (SQLite: the whole
 * database) while main runs on b->db, whose lock timeout is 100 ms (1 s
 * on MariaDB): the holder lets go once main is done, or after BUSY_HOLD_MS
 * (a call that waits that long has waited past its lock timeout). */
static void run_against_slot_9(struct labtest *t, struct kit_db *db, struct busy_like *b,
                               void *(*main)(void *))
{
	lt_expect(kit_db_begin(db) == 0, NULL, "BEGIN: %s", labtest_why(db));
	labtest_exec(t, "UPDATE like_slots SET n = n + 1 WHERE post_id = 42 AND slot = 9");
	pthread_t tid;
	if (pthread_create(&tid, NULL, main, b) != 0) {
		kit_db_rollback(db);
		fail_msg("pthread_create failed");
	}
	for (int i = 0; i < BUSY_HOLD_MS / 10 && !atomic_load(&b->done); i++)
		usleep(10000);
	kit_db_rollback(db);
	atomic_store(&b->released, 1);
	pthread_join(tid, NULL);
}

static void shard_increment__busy_slot_draws_once(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 9, 1)");
	held[0] = labtest_connect(t);
	lt_expect(kit_db_set_lock_timeout(held[0], 100) == 0, NULL, "lock timeout: %s", labtest_why(held[0]));

	/* Reads beside the writer: they never wait for it (README section
	 * 6: in WAL mode SQLite's readers run beside its one writer). */
	lt_expect(kit_db_begin(db) == 0, NULL, "BEGIN: %s", labtest_why(db));
	labtest_exec(t, "UPDATE like_slots SET n = n + 1 WHERE post_id = 42 AND slot = 9");
	int64_t seen = -1;
	int nslots = -1;
	int read_rc = shard_read(held[0], POST, &seen);
	int slots_rc = shard_slots(held[0], POST, &nslots);
	kit_db_rollback(db);
	lt_expect(read_rc == 0 && seen == 1, "exact-read", "while another transaction held slot 9 "
	          "(on SQLite, the write lock) shard_read on another connection returned %d with %lld, "
	          "expected 0 with 1, the committed count: does the read take a write lock "
	          "(kit_db_begin is BEGIN IMMEDIATE on SQLite)? Then every read waits behind every "
	          "like and shrink", read_rc, (long long)seen);
	lt_expect(slots_rc == 0 && nslots == 16, "live-n", "while another transaction held slot 9 "
	          "(on SQLite, the write lock) shard_slots on another connection returned %d with N = "
	          "%d, expected 0 with 16: does it take a write lock (kit_db_begin)?", slots_rc, nslots);

	struct busy_like b = { .db = held[0], .next = 9 };
	run_against_slot_9(t, db, &b, busy_like_main);
	uint32_t calls = b.first_next - 9;
	lt_expect(calls == 1, "one-slot", "a like whose slot was locked by another transaction called "
	          "the random source %u times and returned %d: shard.h asks for exactly one call per "
	          "like (does it retry a KIT_DB_BUSY with a new random number? return the error "
	          "instead)", calls, b.rc);
	lt_expect(b.rc == KIT_DB_BUSY, "busy", "a like on slot 9, which another transaction held "
	          "until the like returned or %d ms had passed, returned %d, not KIT_DB_BUSY (%d): "
	          "its connection's lock timeout is 100 ms (1 s on MariaDB). Does it set a longer "
	          "one of its own (SET LOCAL lock_timeout = 0 or '5s', SET STATEMENT "
	          "innodb_lock_wait_timeout = 50 FOR ...)? shard.h: a call waits as long as its "
	          "connection's lock timeout allows, and no longer", BUSY_HOLD_MS, b.rc, KIT_DB_BUSY);
	lt_expect(b.again_rc == 0, "busy", "after a like answered %d (KIT_DB_BUSY is %d), the "
	          "caller's next like of the post on the same connection, the slot free by then, "
	          "returned %d (%s): did the busy like leave its transaction open (a BEGIN whose "
	          "error path returns without ROLLBACK)? Then the next statement on the connection "
	          "runs in that transaction, refused on PostgreSQL (\"current transaction is "
	          "aborted\"); every path out of a call ends its transaction", b.rc, KIT_DB_BUSY,
	          b.again_rc, b.again_rc ? labtest_why(b.db) : "no error");
	lt_expect(b.again_calls == 1, "one-slot", "after a like answered KIT_DB_BUSY, the caller's "
	          "next like of the post on the same thread, the slot free by then, returned %d and "
	          "called the random source %u time(s), expected once: every like draws its own "
	          "value (is the busy like's draw kept for the retry, \"a retry goes to the same "
	          "slot\"?)", b.again_rc, b.again_calls);
	int64_t want = (b.rc == 0 ? 2 : 1) + (b.again_rc == 0);
	lt_expect(total(db, POST) == want, "upsert", "after a like that returned %d against a locked "
	          "slot, and the same like again (%d), the count is %lld, expected %lld", b.rc,
	          b.again_rc, (long long)total(db, POST), (long long)want);

	/* The same for a shrink to 4, whose DELETE meets slot 9. */
	struct busy_like s = { .db = held[0] };
	run_against_slot_9(t, db, &s, busy_shrink_main);
	lt_expect(s.rc == KIT_DB_BUSY, "busy", "a shrink to 4, whose DELETE met slot 9 held by "
	          "another transaction until the shrink returned or %d ms had passed, returned %d, "
	          "not KIT_DB_BUSY (%d): its connection's lock timeout is 100 ms (1 s on MariaDB). "
	          "Does it set a longer one of its own (SET LOCAL lock_timeout = 0 or '5s')? "
	          "shard.h: a call waits as long as its connection's lock timeout allows, and no "
	          "longer", BUSY_HOLD_MS, s.rc, KIT_DB_BUSY);
	if (s.rc != 0) {
		int n = -1;
		lt_expect(shard_slots(db, POST, &n) == 0 && n == 16, "fold", "N after a shrink that "
		          "returned %d: %d, expected 16 (a failed resize changes nothing)", s.rc, n);
	}
	lt_expect_int_hint(total(db, POST), want, "count after the shrink that met a held slot", "fold");
}

/* A like whose statements a shrink could separate (N read in one
 * statement, the upsert in another) writes to a slot the shrink has
 * just removed. The gate holds the like before each of its statements in
 * turn while a shrink to 4 runs whole: every like must land below slot 4,
 * which only a like that reads N in the statement that adds it can
 * promise (README section 5, point 1). */
static void shard_increment__reads_n_in_the_statement_that_adds(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct race r = { { 0, 4 }, 9 };
	struct lt_gate *g = lt_gate_open(t, 2);

	for (int k = 1; k <= 10; k++) {
		staircase_rows(t);
		lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, resize_or_like, &r);
		if (!lt_gate_held(g, 0))
			break;
		lt_expect(lt_gate_rc(g, 0) == 0 && lt_gate_rc(g, 1) == 0, NULL,
		          "a like held before its statement %d while a shrink to 4 ran: they returned %d "
		          "and %d (%s)", k, lt_gate_rc(g, 0), lt_gate_rc(g, 1), labtest_why(lt_gate_db(g, 0)));
		lt_expect_int_hint(total(db, POST), 137, "count after a like and a shrink", "fold");
		lt_expect(rows_from(t, POST, 4) == 0, "live-n",
		          "a shrink to 4 ran whole while a like was held before its statement %d; the like "
		          "then wrote a row at slot >= 4 (slot 9): it used the N it had read before the "
		          "shrink. Read N inside the upsert (a scalar subquery), not in a statement of "
		          "its own", k);
	}
	lt_gate_close(g);
}

/* A shrink moves only its own post's rows: post 43's rows at slot >= 4
 * stay where they are, and post 42 gets exactly its own 136. */
static void shard_resize__leaves_other_posts_alone(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	staircase_rows(t);
	labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (43, 1, 100), (43, 7, 1000), "
	             "(43, 12, 10000)");
	lt_expect(shard_resize(db, POST, 4) == 0, "fold", "shard_resize(42, 4): %s", labtest_why(db));
	lt_expect(total(db, POST) == 136 && total(db, POST + 1) == 11100, "fold",
	          "after post 42 shrank to 4, post 42 reads %lld (expected 136) and post 43 %lld "
	          "(expected 11100): does the shrink's DELETE name the post (WHERE post_id = ...)?",
	          (long long)total(db, POST), (long long)total(db, POST + 1));
	lt_expect(slot_n(t, POST + 1, 7) == 1000 && slot_n(t, POST + 1, 12) == 10000, "fold",
	          "post 43's rows at slots 7 and 12 hold %lld and %lld after post 42 shrank, "
	          "expected 1000 and 10000 untouched", (long long)slot_n(t, POST + 1, 7),
	          (long long)slot_n(t, POST + 1, 12));
}

/* A resize writes only the rows its fold fills: shard.h says growing only
 * records the new N, and a shrink moves each removed row's count into its
 * slot % N (hint 7: upsert each nonzero sum). Rows are created by likes
 * (README section 2): a post never liked still has none after a shrink to
 * 4 and a grow to 1024; a post with likes at slots 1, 7 and 12 keeps
 * exactly those three rows through a grow to 1024, and a shrink to 4
 * leaves rows at slots 0, 1 and 3 and none at slot 2. A fold that writes
 * every remaining slot, adding 0 where nothing moved, creates empty rows
 * (1024 of them for a grow) and, on the servers, holds a lock on every
 * slot of the post until it commits: every like of the post waits. */
static void shard_resize__writes_only_the_slots_it_fills(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	const int64_t liked = POST + 1;

	lt_expect(shard_resize(db, POST, 4) == 0, "fold", "shard_resize(42, 4) of a post never liked: %s",
	          labtest_why(db));
	lt_expect_int_hint(rows_from(t, POST, 0), 0, "rows of a post never liked, after a shrink to 4 "
	                   "(does the fold upsert every slot below N, even those that receive 0?)", "fold");
	lt_expect(shard_resize(db, POST, SHARD_MAX_SLOTS) == 0, "fold",
	          "shard_resize(42, 1024) of a post never liked: %s", labtest_why(db));
	lt_expect_int_hint(rows_from(t, POST, 0), 0, "rows of a post never liked, after a grow to 1024 "
	                   "(growing only records the new N)", "fold");

	labtest_exec(t, "INSERT INTO like_slots (post_id, slot, n) VALUES (43, 1, 1), (43, 7, 20), (43, 12, 300)");
	lt_expect(shard_resize(db, liked, SHARD_MAX_SLOTS) == 0, "fold", "shard_resize(43, 1024): %s",
	          labtest_why(db));
	lt_expect_int_hint(rows_from(t, liked, 0), 3, "rows of post 43 (slots 1, 7 and 12) after a grow "
	                   "to 1024 (growing only records the new N)", "fold");
	lt_expect(shard_resize(db, liked, 4) == 0, "fold", "shard_resize(43, 4): %s", labtest_why(db));
	lt_expect(rows_from(t, liked, 0) == 3 && slot_n(t, liked, 0) == 300 && slot_n(t, liked, 1) == 1 &&
	          slot_n(t, liked, 2) == -1 && slot_n(t, liked, 3) == 20, "fold",
	          "post 43 with rows at slots 1, 7 and 12 (1, 20 and 300 likes) shrunk to 4 has %lld rows, "
	          "slots 0..3 holding %lld, %lld, %lld and %lld (-1: no row); expected 3 rows: 300, 1, "
	          "no row, 20 (does the fold write slots that receive nothing?)",
	          (long long)rows_from(t, liked, 0), (long long)slot_n(t, liked, 0),
	          (long long)slot_n(t, liked, 1), (long long)slot_n(t, liked, 2),
	          (long long)slot_n(t, liked, 3));
	lt_expect_int(total(db, liked), 321, "count of post 43 after the grow and the shrink");
}

/* A like whose statement fails (refused, or run with its answer lost)
 * says so: shard.h's functions return a negative code on failure. A
 * refused like counts nothing; a like whose answer was lost may have
 * counted, but the caller must hear an error either way. */
static void shard_increment__failure_is_an_error(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	uint32_t next = 0;
	like_n(db, POST, 3, counting, &next);

	for (int how = LT_STEP_FAILS; how <= LT_STEP_REPLY_LOST; how++) {
		for (int k = 1; k <= 10; k++) {
			int64_t before = total(db, POST);
			size_t blocks = lt_alloc_live();
			lt_step_arm(how, k);
			int rc = shard_increment(db, POST, counting, &next);
			if (!lt_step_disarm())
				break;
			char what[160];
			snprintf(what, sizeof what, "shard_increment whose statement %d %s (is a block freed "
			         "only on the way out that worked? free it on every path)", k, lt_step_what(how));
			lt_alloc_expect_none_left(blocks, what);
			int64_t after = total(db, POST);
			lt_expect(rc < 0, "upsert", "statement %d of shard_increment %s, yet it returned %d "
			          "(is kit_db_exec's result dropped? return it)", k, lt_step_what(how), rc);
			lt_expect(how != LT_STEP_FAILS || after == before, "upsert", "statement %d of "
			          "shard_increment refused: the count went from %lld to %lld",
			          k, (long long)before, (long long)after);
		}
	}
	like_n(db, POST, 1, counting, &next);

	/* PostgreSQL: a connection whose server process has ended, and the
	 * kit knows (kit_db_connected() says 0): an error, and the random
	 * source still called once (shard.h: exactly once per like, whatever
	 * the database answers; a like that gives up before its draw when
	 * the connection looks gone puts a caller's sequence out of step). */
	if (t->engine != KIT_DB_POSTGRES)
		return;
	struct kit_db *gone = held[0] = labtest_connect(t);
	lt_expect(lt_end_session(t, gone, true), NULL, "the test's connection whose server process "
	          "it ended still says it is connected");
	uint32_t drawn = next;
	int rc = shard_increment(gone, POST, counting, &next);
	lt_expect(rc < 0 && next == drawn + 1, "upsert", "shard_increment on a connection the server "
	          "had ended (kit_db_connected() 0) returned %d and called the random source %u "
	          "time(s): expected an error and one call (shard.h: rnd is called exactly once per "
	          "like; does the like give up before its draw when the connection looks gone?)",
	          rc, (unsigned)(next - drawn));
}

/* A statement refused as KIT_DB_BUSY, as a lock wait that timed out is,
 * makes the call answer KIT_DB_BUSY, not another error: a caller retries
 * a busy like or shrink and gives up on a broken one (shard.h: the
 * negative KIT_DB_* code; hint 11: each failure ends in its own code).
 * Each statement of a like, a read and a shrink in turn. */
static void shard__busy_is_answered_busy(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	uint32_t next = 0;
	like_n(db, POST, 3, counting, &next);

	for (int k = 1; k <= 10; k++) {
		int64_t before = total(db, POST);
		lt_step_arm(LT_STEP_BUSY, k);
		watch_sleeps();
		int rc = shard_increment(db, POST, counting, &next);
		int slept = sleeps_since();
		if (!lt_step_disarm())
			break;
		lt_expect(rc == KIT_DB_BUSY, "busy", "statement %d of shard_increment %s: it returned %d, "
		          "not KIT_DB_BUSY (%d) (is every failure turned into KIT_DB_ERR? return the "
		          "code kit_db gave)", k, lt_step_what(LT_STEP_BUSY), rc, KIT_DB_BUSY);
		lt_expect(slept == 0, "busy", "statement %d of shard_increment %s: it slept %d time(s) "
		          "before it returned %d; shard.h: a call refused as busy rolls back and returns "
		          "KIT_DB_BUSY at once (a back-off before the retry is the caller's to choose)",
		          k, lt_step_what(LT_STEP_BUSY), slept, rc);
		lt_expect_int_hint(total(db, POST), before, "count after a like refused as busy", "upsert");
	}
	for (int k = 1; k <= 10; k++) {
		int64_t got = -7;
		lt_step_arm(LT_STEP_BUSY, k);
		int rc = shard_read(db, POST, &got);
		if (!lt_step_disarm())
			break;
		lt_expect(rc == KIT_DB_BUSY && got == -7, "busy", "statement %d of shard_read %s: it "
		          "returned %d (not KIT_DB_BUSY, %d?) and left the total at %lld (was -7)", k,
		          lt_step_what(LT_STEP_BUSY), rc, KIT_DB_BUSY, (long long)got);
	}
	for (int k = 1; k <= 10; k++) {
		int got = -7;
		lt_step_arm(LT_STEP_BUSY, k);
		int rc = shard_slots(db, POST, &got);
		if (!lt_step_disarm())
			break;
		lt_expect(rc == KIT_DB_BUSY && got == -7, "busy", "statement %d of shard_slots %s: it "
		          "returned %d (not KIT_DB_BUSY, %d?) and left N at %d (was -7): is every "
		          "failure turned into KIT_DB_ERR? Return the code kit_db gave",
		          k, lt_step_what(LT_STEP_BUSY), rc, KIT_DB_BUSY, got);
	}
	for (int k = 1; k <= 10; k++) {
		lt_step_arm(LT_STEP_BUSY, k);
		int rc = shard_setup(db);
		if (!lt_step_disarm())
			break;
		lt_expect(rc == KIT_DB_BUSY, "busy", "statement %d of shard_setup %s: it returned %d, "
		          "not KIT_DB_BUSY (%d): is every failure turned into KIT_DB_ERR? Return the code "
		          "kit_db gave", k, lt_step_what(LT_STEP_BUSY), rc, KIT_DB_BUSY);
	}
	for (int k = 1; ; k++) {
		staircase_rows(t);
		lt_step_arm(LT_STEP_BUSY, k);
		watch_sleeps();
		int rc = shard_resize(db, POST, 4);
		int slept = sleeps_since();
		if (!lt_step_disarm())
			break;
		lt_expect(slept == 0, "busy", "statement %d of shard_resize(4) %s: it slept %d time(s) "
		          "before it returned %d; shard.h: a call refused as busy rolls back and returns "
		          "KIT_DB_BUSY at once, without retrying (a back-off \"so the caller's retry does "
		          "not meet the same held row\" is the caller's to choose)", k,
		          lt_step_what(LT_STEP_BUSY), slept, rc);
		/* A lock wait that timed out ends no transaction (MariaDB undoes
		 * the statement only; PostgreSQL leaves the transaction failed;
		 * the kit refuses before the statement runs): a shrink that skips
		 * its ROLLBACK for KIT_DB_BUSY leaves it open, and on SQLite the
		 * next BEGIN is refused, so this sweep would end there unseen. */
		int64_t open = lt_in_transaction(t, db);
		if (open != 0)
			kit_db_rollback(db);
		lt_expect(open == 0, "busy", "statement %d of shard_resize(4) %s: it returned %d and "
		          "left a transaction open on the connection (%lld): is the ROLLBACK skipped for "
		          "KIT_DB_BUSY (\"the server rolled it back already\")? Roll back on every "
		          "failure", k, lt_step_what(LT_STEP_BUSY), rc, (long long)open);
		int64_t nrec = labtest_int(t, "SELECT coalesce((SELECT nslots FROM like_slot_config "
		                              "WHERE post_id = 42), 16)");
		lt_expect(rc == KIT_DB_BUSY, "busy", "statement %d of shard_resize(4) %s: it returned %d, "
		          "not KIT_DB_BUSY (%d) (does the shrink answer KIT_DB_ERR for every failure? "
		          "roll back and return the failing call's code)", k, lt_step_what(LT_STEP_BUSY),
		          rc, KIT_DB_BUSY);
		lt_expect(nrec == 16 && rows_from(t, POST, 4) == 12 && total(db, POST) == 136, "fold",
		          "statement %d of shard_resize(4) %s: N is %lld, %lld rows at slot >= 4, count "
		          "%lld (expected 16, 12 and 136: a failed resize changes nothing)", k,
		          lt_step_what(LT_STEP_BUSY), (long long)nrec, (long long)rows_from(t, POST, 4),
		          (long long)total(db, POST));
	}
}

/* shard_read is the exact count (shard.h): a like that another app server
 * committed a moment ago is in it. A cache in front of the read, however
 * short, is the caller's choice (README section 3), not shard_read's: its
 * memory never hears of another process's likes. */
static void shard_read__sees_a_like_made_elsewhere_at_once(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	uint32_t next = 0;
	like_n(db, POST, 10, counting, &next);
	lt_expect_int_hint(total(db, POST), 10, "count after 10 likes", "sum-all-slots");

	held[0] = labtest_connect(t);   /* another app server's connection */
	for (int i = 1; i <= 3; i++) {
		int rc = kit_db_exec(held[0], "UPDATE like_slots SET n = n + 1 WHERE post_id = 42 AND slot = 3",
		                     0, NULL);
		lt_expect(rc == 0, NULL, "another connection's like: %s", labtest_why(held[0]));
		int64_t got = total(db, POST);
		lt_expect(got == 10 + i, "exact-read", "shard_read right after like %d made on another "
		          "connection (committed): expected %d, got %lld (does shard_read answer from "
		          "memory of this process, a cache or a static? another app server's likes never "
		          "reach it: ask the database every time)", i, 10 + i, (long long)got);
	}
}

/* Each call of shard.h, on each of its ways out, leaves its connection as
 * it found it: no transaction open, no setting changed (a lock timeout set
 * "so a shrink never waits long", a PRAGMA or a SET for speed, outlives
 * the call and changes every later statement on that connection), no
 * timeout of its own sent (shard.h: "it sets no timeout of its own,
 * shorter or longer, not even for its own transaction"), and no wait for
 * the disk turned down, not even for one transaction (a like that
 * returned 0 survives a crash).
 * Four times: with the connection's lock timeout at the kit's default
 * (a call that caps "a wait without end" shows there), then at 4 s set by
 * the caller (a call that "puts the default back" afterwards shows
 * there), then at 150 ms (a call that raises a short wait to a floor of
 * its own, "a shrink needs a second or two", shows there), then with a
 * session that does not stand where a fresh one does: MariaDB at READ
 * COMMITTED with innodb_lock_wait_timeout = 17, PostgreSQL with
 * default_transaction_isolation = 'repeatable read' and
 * synchronous_commit = remote_write, SQLite with synchronous = FULL and
 * a busy wait of 60 s (a call that changes one "for its work" and then
 * puts back the server's default, SET ... REPEATABLE READ, RESET or =
 * DEFAULT, rather than what it found, shows there). A resize to the N
 * the post has already is among the calls (an early return for "nothing
 * to do" inside the transaction leaves it open), and so is each call
 * refused by the database (its way out on an error). */
static void shard__leaves_the_session_as_it_found_it(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	char before[LT_SESSION_LEN];
	static const char *const step[] = {
		"shard_setup", "a like", "shard_read", "shard_slots", "a shrink to 4",
		"a grow to 8", "a resize to 8, the N the post has", "a refused shard_resize(0)",
		"a shrink refused by the database", "a like refused by the database",
		"a read refused by the database", "shard_slots refused by the database",
		"a grow to 16 refused by the database",
	};
	static const char *const own[] = {
		[KIT_DB_SQLITE] = "PRAGMA synchronous = FULL",
		[KIT_DB_POSTGRES] = "SET default_transaction_isolation = 'repeatable read';"
		                    " SET synchronous_commit = remote_write",
		[KIT_DB_MYSQL] = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED;"
		                 " SET SESSION innodb_lock_wait_timeout = 17",
	};
	uint32_t next = 0;
	int64_t n64 = 0;
	int n = 0;
	lt_session_own_values(t, db);
	for (int round = 0; round < 4; round++) {
		int wait = round == 1 ? 4000 : round == 2 ? 150 : 60000;
		if (round > 0 && (round < 3 || t->engine == KIT_DB_SQLITE))
			lt_expect(kit_db_set_lock_timeout(db, wait) == 0, NULL,
			          "kit_db_set_lock_timeout(%d): %s", wait, labtest_why(db));
		if (round == 3)
			lt_expect(kit_db_exec(db, own[t->engine], 0, NULL) == 0, NULL,
			          "giving the session settings other than a fresh one's (%s): %s",
			          own[t->engine], labtest_why(db));
		lt_session(t, db, before, sizeof before);
		for (int i = 0; i < 13; i++) {
			struct lt_call_watch w;
			lt_call_watch_init(&w, db);
			int rc = 0;
			kit_db_set_hook(db, lt_call_watch, &w);
			switch (i) {
			case 0: rc = shard_setup(db); break;
			case 1: rc = shard_increment(db, POST, counting, &next); break;
			case 2: rc = shard_read(db, POST, &n64); break;
			case 3: rc = shard_slots(db, POST, &n); break;
			case 4: rc = shard_resize(db, POST, 4); break;
			case 5: rc = shard_resize(db, POST, 8); break;
			case 6: rc = shard_resize(db, POST, 8); break;
			case 7: rc = shard_resize(db, POST, 0) == 0; break;
			case 8:
				lt_step_arm(LT_STEP_FAILS, 3);
				rc = shard_resize(db, POST, 2) == 0;
				lt_step_disarm();
				break;
			case 9:
				lt_step_arm(LT_STEP_FAILS, 1);
				rc = shard_increment(db, POST, counting, &next) == 0;
				lt_step_disarm();
				break;
			case 10:
				lt_step_arm(LT_STEP_FAILS, 1);
				rc = shard_read(db, POST, &n64) == 0;
				lt_step_disarm();
				break;
			case 11:
				lt_step_arm(LT_STEP_FAILS, 1);
				rc = shard_slots(db, POST, &n) == 0;
				lt_step_disarm();
				break;
			case 12:
				lt_step_arm(LT_STEP_FAILS, 2);
				rc = shard_resize(db, POST, 16) == 0;
				lt_step_disarm();
				break;
			}
			kit_db_set_hook(db, NULL, NULL);
			lt_expect(rc == 0, NULL, "%s: unexpected result (%s)", step[i], labtest_why(db));
			lt_expect(w.timeout.sql[0] == '\0', "busy", "%s set a timeout of its own: it sent \"%s\". "
			          "shard.h: a call waits as long as its connection's lock timeout allows and "
			          "sets no timeout of its own, shorter or longer, not even for its own "
			          "transaction or statement (a cap on a wait \"without end\" gives up where "
			          "the caller chose to wait; one longer than the caller's waits past it)",
			          step[i], w.timeout.sql);
			lt_expect(w.durability[0] == '\0', NULL, "%s sent \"%s\": how long a COMMIT waits "
			          "for the disk is the caller's choice, made on its connection, and a call "
			          "changes it in neither direction. Turned down (off, OFF, NORMAL), the "
			          "COMMIT returns before the like or the shrink is on disk, and a crash loses "
			          "it after the call said 0 (shard.h: a like that returned 0 survives a "
			          "crash); turned up for the call and then reset (RESET, = NORMAL, = on), "
			          "the caller's own value is gone and the default stands in its place. Not "
			          "even for one transaction (SET LOCAL)", step[i], w.durability);
			lt_expect(w.timeout.seen_ms < 0, "busy", "%s ran a statement under a busy wait of %d ms, "
			          "where its connection's is %d ms (kit_db_lock_timeout): shard.h: a call "
			          "sets no timeout of its own, shorter or longer, not even for its own "
			          "transaction, and kit_db_set_lock_timeout(db, 0) after it puts back the "
			          "kit's default, not the caller's", step[i], w.timeout.seen_ms,
			          w.timeout.expect_ms);
			lt_session_unchanged(t, db, before, step[i], "commit-result");
		}
	}
	labtest_expect_fresh(t, "shard__leaves_the_session_as_it_found_it", "busy",
	                     LT_KEPT_SETTING);
}

/* shard.h: "Post ids are any int64_t". The ends of that domain and -1:
 * each post's likes stay its own through likes, a read and a shrink (an
 * id printed as unsigned, or cut to 32 bits, lands elsewhere or is
 * refused by the database). */
static void shard__post_ids_at_the_ends_of_int64(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	const int64_t posts[] = { INT64_MIN, -1, 0, INT64_MAX };
	for (int i = 0; i < 4; i++) {
		uint32_t next = 5;
		for (int k = 0; k < i + 2; k++) {
			int rc = shard_increment(db, posts[i], counting, &next);
			lt_expect(rc == 0, "uint32", "a like of post %lld returned %d (%s): post ids are any "
			          "int64_t (shard.h), 0 and negative ones too; is some id refused as \"no "
			          "post\"?", (long long)posts[i], rc, labtest_why(db));
		}
	}
	for (int i = 0; i < 4; i++) {
		lt_expect(shard_resize(db, posts[i], 2) == 0, "uint32", "shard_resize(post %lld, 2): %s",
		          (long long)posts[i], labtest_why(db));
		int64_t got = -7;
		int rc = shard_read(db, posts[i], &got);
		lt_expect(rc == 0 && got == i + 2, "uint32", "post %lld after %d likes and a shrink: "
		          "shard_read returned %d and read %lld (is the post id printed as unsigned, kept "
		          "in an int, or refused as \"no post\"?)", (long long)posts[i], i + 2, rc,
		          (long long)got);
	}
	lt_expect_int_hint(labtest_int(t, "SELECT count(DISTINCT post_id) FROM like_slots"), 4,
	                   "posts with slot rows", "uint32");
	/* Each like stored under exactly its post: a buffer too short for
	 * "-9223372036854775808" (20 characters and the NUL) cuts the id, and
	 * every call cuts it the same way, so the reads above agree. */
	for (int i = 0; i < 4; i++) {
		char sql[120];
		snprintf(sql, sizeof sql, "SELECT coalesce(sum(n), 0) FROM like_slots WHERE post_id = %lld",
		         (long long)posts[i]);
		lt_expect(labtest_int(t, sql) == i + 2, "uint32", "like_slots holds %lld likes under post "
		          "%lld, which was liked %d times: the id was written as another number (is the "
		          "buffer it is printed into big enough for 20 characters and the NUL?)",
		          (long long)labtest_int(t, sql), (long long)posts[i], i + 2);
	}
	/* The longest texts at once: post INT64_MIN (20 characters) with a
	 * row at each of the 1,024 slots, slot s holding 10^15 + s (16
	 * digits), shrinks from 1,024 to 512 slots: 512 slots each receive a
	 * fold, 2 x 10^15 + 2s + 512. A statement text or a buffer sized for
	 * short ids and small counts ("40 characters a row is plenty") is
	 * cut short here, or overruns. */
	static char rows[64 + 1024 * 48];
	size_t cap = sizeof rows, len = 0;
	len += (size_t)snprintf(rows + len, cap - len, "INSERT INTO like_slots (post_id, slot, n) VALUES ");
	for (int s = 0; s < SHARD_MAX_SLOTS; s++)
		len += (size_t)snprintf(rows + len, cap - len, "%s(%lld, %d, %lld)", s ? ", " : "",
		                        (long long)INT64_MIN, s, 1000000000000000LL + s);
	labtest_exec(t, "DELETE FROM like_slots WHERE post_id = -9223372036854775808;"
	             "DELETE FROM like_slot_config WHERE post_id = -9223372036854775808;"
	             "INSERT INTO like_slot_config (post_id, nslots) VALUES (-9223372036854775808, 1024)");
	labtest_exec(t, rows);
	const int64_t all = 1024 * 1000000000000000LL + 1023 * 1024 / 2;
	int rc = shard_resize(db, INT64_MIN, 512);
	lt_expect(rc == 0, "uint32", "post %lld, a row at each of the 1,024 slots holding 10^15 and "
	          "more, shrunk to 512: returned %d (%s); is the fold's statement built in a buffer "
	          "too small for 512 rows of a 20-character id and 16-digit counts?",
	          (long long)INT64_MIN, rc, labtest_why(db));
	lt_expect_int_hint(total(db, INT64_MIN), all, "count of post INT64_MIN after its shrink "
	                   "from 1,024 slots to 512", "uint32");
	lt_expect_int_hint(rows_from(t, INT64_MIN, 512), 0, "rows of post INT64_MIN left at slot "
	                   ">= 512 after the shrink", "fold");
	for (int s = 0; s < 512; s += 73)
		lt_expect(slot_n(t, INT64_MIN, s) == 2000000000000000LL + 2 * s + 512, "uint32",
		          "slot %d of post INT64_MIN after the shrink holds %lld, expected %lld "
		          "(10^15 + %d and 10^15 + %d)", s, (long long)slot_n(t, INT64_MIN, s),
		          2000000000000000LL + 2 * s + 512, s, s + 512);
}

/* The table guards N as well as shard_resize() does: a config row of 0
 * slots written straight into like_slot_config (by hand, by another
 * program) is refused by its CHECK, and likes go on working. With 0 in
 * it, every increment of that post would divide by zero. */
static void shard_setup__refuses_zero_slots(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	int rc = kit_db_exec(db, "INSERT INTO like_slot_config (post_id, nslots) VALUES (42, 0)",
	                     0, NULL);
	lt_expect(rc == KIT_DB_CONSTRAINT, "bad-n", "a like_slot_config row with nslots = 0, "
	          "inserted with SQL, was accepted (%d): the table's CHECK must refuse N < 1", rc);
	uint32_t next = 0;
	rc = shard_increment(db, POST, counting, &next);
	lt_expect(rc == 0, "bad-n", "a like after the refused config row: %d, %s", rc,
	          labtest_why(db));
	lt_expect_int(total(db, POST), 1, "count after one like");
}

/* shard.h: shard_setup creates the tables "if they do not exist". Every
 * app server runs it as it starts, so it runs against tables that are
 * there and full: on another connection and on this one again, it must
 * answer 0 and leave every count and every N as they were (a setup that
 * drops the tables first wipes the counts; one without IF NOT EXISTS
 * fails on the second server). */
static void shard_setup__again_keeps_what_is_there(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	fill_staircase(db);
	lt_expect(shard_resize(db, POST, 4) == 0, "fold", "shard_resize(4): %s", labtest_why(db));
	held[0] = labtest_connect(t);   /* another app server, starting */
	struct kit_db *who[] = { held[0], db };
	for (int i = 0; i < 2; i++) {
		int rc = shard_setup(who[i]);
		lt_expect(rc == 0, NULL, "shard_setup run again %s, with the tables there (as every app "
		          "server starting runs it): returned %d (%s). shard.h: it creates the tables if "
		          "they do not exist (IF NOT EXISTS)", i ? "on the same connection" :
		          "on another connection", rc, labtest_why(who[i]));
		int n = 0;
		lt_expect(total(db, POST) == 136 && shard_slots(db, POST, &n) == 0 && n == 4, NULL,
		          "after shard_setup ran again %s: post 42 reads %lld with N = %d, expected 136 "
		          "and 4 as before. Does shard_setup drop the tables (or delete their rows) "
		          "before it creates them? It must keep whatever is there",
		          i ? "on the same connection" : "on another connection",
		          (long long)total(db, POST), n);
	}
	/* shard.h: a like that returned 0 survives a crash or a restart of
	 * the server. An UNLOGGED table (PostgreSQL) is emptied by a crash, a
	 * MEMORY table (MariaDB) by a restart, a TEMP one by the connection's
	 * end. */
	enum kit_db_engine e = kit_db_engine(db);
	int64_t fleeting = labtest_int(t, e == KIT_DB_POSTGRES
		? "SELECT count(*) FROM pg_class WHERE oid IN ('like_slots'::regclass,"
		  " 'like_slot_config'::regclass) AND relpersistence <> 'p'"
		: e == KIT_DB_MYSQL
		? "SELECT count(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"
		  " AND TABLE_NAME IN ('like_slots', 'like_slot_config') AND ENGINE <> 'InnoDB'"
		: "SELECT count(*) FROM sqlite_temp_master WHERE name IN ('like_slots', 'like_slot_config')");
	lt_expect(fleeting == 0, NULL, "%lld of like_slots and like_slot_config %s: shard.h: the "
	          "tables are ordinary ones, so that a like that returned 0 survives a crash or a "
	          "restart of the server (an UNLOGGED table is emptied by a crash, a MEMORY table "
	          "by a restart, a TEMP table when its connection ends)", (long long)fleeting,
	          e == KIT_DB_POSTGRES ? "are UNLOGGED or TEMP" : e == KIT_DB_MYSQL
	          ? "use another engine than InnoDB" : "are TEMP tables");
}

/* Two threads, each on its own connection and post, call the functions
 * at the same time: a like, a read and a shrink to 4 each. One is held
 * before each of its statements in turn (the gate) while the other runs
 * its calls whole. Each call must act on its own arguments: text built in
 * a buffer that every thread shares (a static char array) is rewritten by
 * the other thread between the snprintf and the statement, and the like,
 * the read or the shrink lands on the other post. Posts 42 and 43 hold 10
 * and 100 likes at slot 9; the likes draw 3 and 5. */
struct two_posts {
	int64_t post[2];
	uint32_t value[2];
	int64_t read[2];
};

static uint32_t fixed_value(void *arg)
{
	return *(const uint32_t *)arg;
}

static int like_read_shrink(void *arg, int who, struct kit_db *db)
{
	struct two_posts *r = arg;
	uint32_t v = r->value[who];
	int rc = shard_increment(db, r->post[who], fixed_value, &v);
	if (rc == 0)
		rc = shard_read(db, r->post[who], &r->read[who]);
	if (rc == 0)
		rc = shard_resize(db, r->post[who], 4);
	return rc;
}

static void shard__threads_keep_their_own_arguments(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	struct lt_gate *g = lt_gate_open(t, 2);
	struct two_posts r = { { POST, POST + 1 }, { 3, 5 }, { -1, -1 } };

	int rounds = 0;
	for (int k = 1; k <= 20; k++) {
		labtest_exec(t, "DELETE FROM like_slots; DELETE FROM like_slot_config;"
		             "INSERT INTO like_slots (post_id, slot, n) VALUES (42, 9, 10), (43, 9, 100)");
		r.read[0] = r.read[1] = -1;
		lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, like_read_shrink, &r);
		if (!lt_gate_held(g, 0))
			break;
		rounds++;
		lt_expect(lt_gate_rc(g, 0) == 0 && lt_gate_rc(g, 1) == 0, NULL,
		          "post 42's like, read and shrink held before statement %d while post 43's ran: "
		          "they returned %d and %d (%s)", k, lt_gate_rc(g, 0), lt_gate_rc(g, 1),
		          labtest_why(lt_gate_db(g, lt_gate_rc(g, 0) ? 0 : 1)));
		int n42 = 0, n43 = 0;
		lt_expect(shard_slots(db, POST, &n42) == 0 && shard_slots(db, POST + 1, &n43) == 0, NULL,
		          "shard_slots: %s", labtest_why(db));
		int64_t t42 = total(db, POST), t43 = total(db, POST + 1);
		lt_expect(r.read[0] == 11 && r.read[1] == 101 && t42 == 11 && t43 == 101 && n42 == 4 &&
		          n43 == 4 && slot_n(t, POST, 3) == 1 && rows_from(t, POST, 4) == 0,
		          "own-buffers", "two threads liked, read and shrank posts 42 and 43 (10 and 100 likes "
		          "before, one like each, values 3 and 5), post 42's calls held before their "
		          "statement %d while post 43's ran whole: post 42 read %lld and holds %lld with "
		          "N = %d, post 43 read %lld and holds %lld with N = %d, expected 11, 11, 4 and "
		          "101, 101, 4 (and post 42's like at slot 3). A call acted on the other "
		          "thread's post or value: is the text of a parameter built in a buffer that "
		          "every thread shares (a static array)? Keep it on the stack of the call",
		          k, (long long)r.read[0], (long long)t42, n42, (long long)r.read[1],
		          (long long)t43, n43);
	}
	lt_gate_close(g);
	lt_expect(rounds > 0, NULL, "the like, read and shrink of one thread never reached a statement");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(shard_read__zero_for_never_liked),
		BOTH(shard_read__sums_every_slot),
		BOTH(shard_increment__spreads_over_slots),
		BOTH(shard_increment__uses_the_live_n),
		PG_ONLY(shard_increment__never_waits_for_a_growth),
		BOTH(shard_increment__exact_under_threads),
		BOTH(shard_resize__shrink_folds_removed_slots),
		BOTH(shard_resize__grow_keeps_total),
		LABTEST_PG(shard_resize__grows_of_four_posts_at_once),
		PG_ONLY(shard__first_calls_at_once),
		BOTH(shard_resize__rejects_bad_n),
		BOTH(shard_read__counts_a_slot_beyond_n),
		BOTH(shard_read__one_total_across_a_resize),
		BOTH(shard_increment__follows_a_resize_by_another_process),
		BOTH(shard_resize__others_never_see_a_partial_shrink),
		BOTH(shard_resize__exact_under_concurrent_increments),
		SERVERS(shard_resize__folds_a_like_committed_during_the_shrink),
		SERVERS(shard__waits_as_long_as_the_session_allows),
		SERVERS(shard_resize__likes_beside_a_shrink_do_not_wait),
		SERVERS(shard_resize__resizes_of_two_posts_do_not_wait),
		SERVERS(shard_increment__likes_pass_a_like_waiting_on_a_hot_slot),
		BOTH(shard_increment__values_and_ids_past_2_31),
		BOTH(shard_increment__random_values_land_where_drawn),
		BOTH(shard_resize__edges_of_n),
		BOTH(shard_increment__n_is_per_post),
		BOTH(shard_resize__folds_counts_past_2_31),
		BOTH(shard_resize__every_step_can_fail),
		BOTH(shard_resize__two_shrinks_fail_at_once),
		BOTH(shard_read__failure_leaves_total_untouched),
		BOTH(shard_resize__a_like_at_every_statement_of_a_shrink),
		BOTH(shard_resize__no_row_past_n_from_a_like_before_it_began),
		BOTH(shard_resize__two_shrinks_at_once),
		BOTH(shard_setup__refuses_zero_slots),
		BOTH(shard_setup__again_keeps_what_is_there),
		BOTH(shard_resize__refuses_bad_n_before_the_database),
		BOTH(shard_increment__busy_slot_draws_once),
		BOTH(shard_increment__reads_n_in_the_statement_that_adds),
		BOTH(shard_resize__leaves_other_posts_alone),
		BOTH(shard_resize__writes_only_the_slots_it_fills),
		BOTH(shard_increment__failure_is_an_error),
		BOTH(shard__leaves_the_session_as_it_found_it),
		BOTH(shard__post_ids_at_the_ends_of_int64),
		BOTH(shard__threads_keep_their_own_arguments),
		BOTH(shard__busy_is_answered_busy),
		BOTH(shard_read__sees_a_like_made_elsewhere_at_once),
		cmocka_unit_test(shard_choose_n__formula),
		BOTH(shard_resize__every_allocation_can_fail),
		BOTH(shard_resize__nothing_left_allocated),
		BOTH(shard_increment__nothing_left_allocated),
		BOTH(shard_increment__every_allocation_can_fail),
		BOTH(shard_read__every_allocation_can_fail),
		cmocka_unit_test(shard_choose_n__large_rates),
		cmocka_unit_test(shard_choose_n__crumbs_and_fractions_at_every_size),
		cmocka_unit_test(shard_choose_n__a_share_of_1e_10_is_a_row),
		cmocka_unit_test(shard_choose_n__exact_at_the_ends_of_the_doubles),
	};
	return labtest_main("02-sharded", tests);
}
