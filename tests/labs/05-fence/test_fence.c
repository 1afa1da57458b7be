/*
 * test_fence.c: Lab 05's checks, on SQLite, PostgreSQL and MariaDB.
 *
 * The first checks call the four functions directly, one property each,
 * deterministically. The last two run real consumer processes over real
 * log files and kill them at failpoints (crashes.c): 60 seeded schedules (20 on MariaDB)
 * of 6,000 events and 6 to 12 consumer fates each, then 100,000 events
 * under a few schedules. They run once every direct check passes (and are
 * skipped, not failed, otherwise: the direct check already names the bug). A
 * failing schedule prints its seed and the command that replays it:
 *   HOTROW_SEED=0x... [HOTROW_EVENTS=N] build/labs/05-fence/test-solution
 * replays that one schedule, printing the plan and each consumer's fate.
 */
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
#include <sys/mman.h>
#include <unistd.h>

#include "tests/harness/alloc.h"
#include "tests/harness/beside.h"
#include "tests/harness/bounds.h"
#include "tests/harness/deadline.h"
#include "tests/harness/gate.h"
#include "tests/harness/labtest.h"
#include "tests/harness/locks.h"
#include "tests/harness/session.h"
#include "tests/harness/sort.h"
#include "tests/harness/sql.h"
#include "tests/harness/steps.h"
#include "tests/labs/05-fence/alloc.h"
#include "tests/labs/05-fence/crashes.h"
#include "kit/failpoint.h"
#include "kit/log.h"
#include "labs/05-fence/fence.h"
#include "util/clock.h"

#define SCHEDULES 60           /* each with 6 to 12 consumer fates */
#define MYSQL_SCHEDULES 20     /* the first 20 of them on MariaDB, the third engine */
#define SCHEDULE_EVENTS 6000
#define BIG_SCHEDULES 3
#define BIG_EVENTS 100000
#define MAX_FAILING 5         /* stop a run after this many failing schedules */

static const char *self = "build/labs/05-fence/test-solution";

/* Direct checks that passed, per engine: the crash schedules run only once
 * all of them pass (they take a while, and a bug the direct checks already
 * name is easier to fix from their message). A replay always runs. */
#define DIRECT_CHECKS 13
static int direct_passed[3];       /* by enum kit_db_engine */

static void passed(struct labtest *t)
{
	direct_passed[t->engine]++;
}

static int gate(struct labtest *t)
{
	int n = direct_passed[t->engine];
	const char *only = getenv("HOTROW_LAB_CHECKS");
	const char *order = getenv("HOTROW_LAB_ORDER");
	/* A replay always runs; so does a run of named checks only (make test
	 * on a mutant) in which no direct check ran at all, and a run in an
	 * order of its own (scripts/mutate), where the direct checks may come
	 * later: it stops at the first failure, so a mutant the direct checks
	 * catch is caught whichever fails first. */
	if (getenv("HOTROW_SEED") || n == DIRECT_CHECKS || (only && *only && n == 0) ||
	    (order && *order))
		return 1;
	printf("NOTICE: crash schedules on %s not run: %d of the %d direct checks above pass; "
	       "fix those first\n", labtest_engine_word(t), direct_passed[t->engine], DIRECT_CHECKS);
	return 0;
}

/* ---- helpers ---- */

static void prepare(struct labtest *t)
{
	labtest_exec(t, FENCE_SCHEMA);
	for (int p = 0; p < CRASH_PARTITIONS; p++) {
		char sql[96];
		snprintf(sql, sizeof sql, "INSERT INTO log_progress (part, last_offset) VALUES (%d, -1)", p);
		labtest_exec(t, sql);
	}
}

/* video_views made anew, empty: capped, with a CHECK an operator added
 * that refuses a count of 1,000 or more (KIT_DB_CONSTRAINT). */
static void views_table(struct labtest *t, bool capped)
{
	labtest_exec(t, "DROP TABLE video_views");
	labtest_exec(t, capped ? "CREATE TABLE video_views (video_id BIGINT PRIMARY KEY, "
	                         "views BIGINT NOT NULL CHECK (views < 1000))"
	                       : "CREATE TABLE video_views (video_id BIGINT PRIMARY KEY, "
	                         "views BIGINT NOT NULL)");
}

static int64_t views_of(struct labtest *t, int video)
{
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT COALESCE(SUM(views), 0) FROM video_views WHERE video_id = %d", video);
	return labtest_int(t, sql);
}

static int64_t stored_last(struct labtest *t, int part)
{
	char sql[96];
	snprintf(sql, sizeof sql, "SELECT last_offset FROM log_progress WHERE part = %d", part);
	return labtest_int(t, sql);
}

/* A batch of partition part, offsets first..last, videos 1..n with k views each. */
static struct fence_batch *batch(int part, int64_t first, int64_t last, int n, int64_t k)
{
	static struct fence_batch b;
	memset(&b, 0, sizeof b);
	b.part = part;
	b.first = first;
	b.last = last;
	b.n = n;
	for (int i = 0; i < n; i++)
		b.totals[i] = (struct fence_total){ i + 1, k };
	return &b;
}

static int apply(struct labtest *t, const struct fence_batch *b)
{
	struct kit_db *db = labtest_db(t);
	int rc = fence_apply(db, b);
	lt_expect(rc >= 0, "fence", "fence_apply failed on a healthy database: %s", labtest_why(db));
	return rc;
}

/* Counts writing statements on video_views (the upsert) and on log_progress. */
/* Statements that wrote video_views (named it and changed a row: one
 * statement may carry the fence and an upsert that writes nothing when
 * the fence refuses, as a WITH on PostgreSQL does) and statements that
 * named log_progress. */
struct writes {
	int totals, progress;
	struct kit_db *db;
	bool names_totals;        /* the statement running names video_views */
	int locks;                /* SELECTs of video_views that lock its rows (FOR UPDATE, ...) */
	int named;                /* statements other than SELECT that name video_views, whether
	                             they changed a row or not */
};

static void count_writes(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)t_ns;
	struct writes *w = arg;
	if (ev == KIT_DB_STMT_END && w->names_totals) {
		w->names_totals = false;
		w->totals += kit_db_changes(w->db) > 0;
		return;
	}
	if (ev != KIT_DB_STMT_START)
		return;
	if (lt_sql_is(sql, "SELECT")) {
		w->locks += lt_sql_locking_read(sql) && lt_sql_names(sql, "video_views");
		return;
	}
	w->names_totals = lt_sql_names(sql, "video_views") > 0;
	w->named += w->names_totals;
	w->progress += lt_sql_names(sql, "log_progress");
}

/* ---- two consumers at once ---- */

#define FAST_CLOCK 3600             /* the consumer's own clock: a second reads as an hour */

/* The calls the gate races run on the real clock: the gate's own hold
 * (LT_GATE_PATIENCE_MS) and naps are read with clock_gettime in the
 * call's thread, so a fast clock there would give up on the other call
 * within a fraction of a millisecond (the race then not forced) and nap
 * until a deadline hours ahead (the other call, waiting for a lock the
 * held one has, gives up first). The fast clock is for the batch behind
 * a held row below, which no gate holds. */
static int apply_same_batch(void *arg, int who, struct kit_db *db)
{
	(void)who;
	return fence_apply(db, arg);
}

/* A batch whose progress row another transaction holds waits for it
 * (fence.h: as long as the connection's own limit allows), and when that
 * transaction ends without moving the row, the batch is next and applies.
 * A fence that skips a held row (SELECT ... FOR UPDATE SKIP LOCKED, "never
 * wait for a zombie") answers 0 at once, as if refused, and fence_handle
 * lets the log move past a batch that is not in; NOWAIT answers
 * KIT_DB_BUSY at once. A deadline the call keeps itself in C ("a batch
 * whose transaction ran over 2 s is shed") is a limit of its own too: the
 * batch's clock runs an hour a second here, so its wait behind the holder
 * outlasts any such deadline, and it answers KIT_DB_BUSY. */
struct held_batch {
	struct kit_db *db;
	const struct fence_batch *b;
	atomic_int waiting;            /* SQLite: the hook saw a busy wait */
	atomic_int done;
	int rc;
};

static void batch_busy_seen(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)sql, (void)t_ns;
	if (ev == KIT_DB_LOCK_WAIT)
		atomic_store(&((struct held_batch *)arg)->waiting, 1);
}

static void *apply_behind_holder(void *arg)
{
	struct held_batch *h = arg;
	lt_clock_fast_this_thread(FAST_CLOCK);
	h->rc = fence_apply(h->db, h->b);
	lt_clock_fast_this_thread(1);
	atomic_store(&h->done, 1);
	return NULL;
}

static void batch_waits_for_a_held_row(struct labtest *t, const struct fence_batch *b)
{
	labtest_exec(t, "DELETE FROM video_views; UPDATE log_progress SET last_offset = -1");
	struct kit_db *holder = labtest_connect(t);
	struct held_batch h = { .db = labtest_connect(t), .b = b };
	atomic_init(&h.waiting, 0);
	atomic_init(&h.done, 0);
	/* The holder lets go once the batch is seen waiting, or after 4 s:
	 * a lock wait of 15 s, far past that, so that a loaded machine (a
	 * slow look at the server's lock waits, a slow ROLLBACK) never makes
	 * a batch that waits rightly give up first. */
	assert_int_equal(kit_db_set_lock_timeout(h.db, 15000), 0);
	int64_t id = lt_session_id(h.db);
	char sql[96];
	snprintf(sql, sizeof sql, "UPDATE log_progress SET last_offset = last_offset WHERE part = %d", b->part);
	if (kit_db_begin(holder) != 0 || kit_db_exec(holder, sql, 0, NULL) != 0)
		fail_msg("the holder: %s", kit_db_errmsg(holder));
	kit_db_set_hook(h.db, batch_busy_seen, &h);
	pthread_t th;
	if (pthread_create(&th, NULL, apply_behind_holder, &h) != 0)
		fail_msg("pthread_create");
	bool seen = false;
	int64_t until = util_now_ns() + 4000000000LL;
	while (!atomic_load(&h.done) && util_now_ns() < until &&
	       !(seen = t->engine == KIT_DB_SQLITE ? atomic_load(&h.waiting) != 0
	                                           : lt_lock_waiting(labtest_db(t), id) == 1))
		util_sleep_ns(t->engine == KIT_DB_SQLITE ? 2000000 : lt_lock_poll_ns(labtest_db(t)));
	bool ended_first = atomic_load(&h.done) != 0;
	kit_db_rollback(holder);
	pthread_join(th, NULL);
	kit_db_set_hook(h.db, NULL, NULL);
	kit_db_close(h.db);
	kit_db_close(holder);
	lt_expect(!ended_first && h.rc == 1, "fence", "another transaction held partition %d's "
	          "progress row while its next batch was applied, then ended without moving it: "
	          "fence_apply returned %d%s (expected it to wait for the row, then 1: the batch "
	          "was next). %s", b->part, h.rc, ended_first ? " while the row was still held" : "",
	          ended_first && h.rc == 0 ? "Does the fence skip a row another consumer holds "
	          "(FOR UPDATE SKIP LOCKED, \"never wait for a zombie\")? Answered 0, fence_handle "
	          "lets the log move past a batch that is not in, and if the holder was a zombie "
	          "that failed, nobody applies it" : h.rc == KIT_DB_BUSY ? "Does the fence refuse "
	          "to wait (NOWAIT, a lock timeout of its own), or give up by a clock of its own "
	          "(a deadline kept in C with clock_gettime or time(), \"shed a batch that ran too "
	          "long\": the batch's clock runs an hour a second here)? fence.h: a statement that "
	          "finds a row held waits for it as long as the connection allows" : "");
	lt_expect_int_hint(views_of(t, 1), 5, "views of video 1 after the batch that waited for "
	                   "its progress row", "fence");
	(void)seen;
}

/* The same batch applied by two consumers at once (a zombie and the
 * partition's new owner), both held by the gate before their k-th
 * statement, for every k: one applies it (1), the other is refused (0),
 * and the views count once. An offset read with a SELECT and then moved
 * by an UPDATE without the old value in its WHERE lets both through when
 * both read first: on MariaDB too, where a SELECT without FOR UPDATE
 * reads the transaction's snapshot and takes no lock (its REPEATABLE READ
 * keeps the read stable, not the row), and the UPDATE then writes over
 * the other's move. */
static void fence_apply__same_batch_twice_at_once(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	struct fence_batch b = *batch(3, 0, 9, 2, 5);
	struct lt_gate *g = lt_gate_open(t, 2);
	/* A lock one call leaves held after it returned (a session-level
	 * pg_advisory_lock a way out never releases) would make the other
	 * call wait for ever: a wait gives up after 15 s instead, with
	 * KIT_DB_BUSY (the gate itself holds a call 1.5 s at most). */
	for (int who = 0; who < 2; who++)
		assert_int_equal(kit_db_set_lock_timeout(lt_gate_db(g, who), 15000), 0);
	/* A round whose gate opened only because a call did not reach its stop
	 * within LT_GATE_PATIENCE_MS (lt_gate_stalls: a loaded machine, a
	 * thread not scheduled) forced nothing: the call that was there ran
	 * alone, and the other then read what it had committed. Such a round
	 * is run again, up to 3 times, and the check judges only when some
	 * round from statement 2 on (both calls inside their transactions)
	 * opened with both calls there. (When these calls ran on a fast
	 * clock, the gate's 1.5 s lasted a fraction of a millisecond: under a
	 * load average of 22 every round opened so, and a fence read with a
	 * plain SELECT on MariaDB passed.) */
	int forced = 0, stalled = 0, inside = 0;    /* rounds from statement 2 on */
	bool swept = false;
	for (int k = 1; k <= 20 && !swept; k++) {
		for (int tries = 0; tries < 3; tries++) {
			int stalls = lt_gate_stalls(g);
			labtest_exec(t, "DELETE FROM video_views; UPDATE log_progress SET last_offset = -1");
			lt_gate_run(g, NULL, (int[]){ k, k }, apply_same_batch, &b);
			if (!lt_gate_reached(g)) {
				swept = true;
				break;
			}
			inside += k >= 2;
			int x = lt_gate_rc(g, 0), y = lt_gate_rc(g, 1);
			bool one_each = (x == 1 && y == 0) || (x == 0 && y == 1);
			lt_expect(one_each, "fence", "the same batch applied "
			          "by two consumers at once, both held before their statement %d: expected "
			          "one 1 and one 0, got %d and %d%s", k, x, y, x == 1 && y == 1 ? " (both "
			          "applied: the offset was read, then moved by an UPDATE that did not ask "
			          "for the old value; on MariaDB a plain SELECT reads a snapshot and locks "
			          "nothing, REPEATABLE READ or not)" : x == KIT_DB_BUSY || y == KIT_DB_BUSY ?
			          " (KIT_DB_BUSY: a lock wait gave up after 15 s, or the call gave up by a "
			          "clock of its own. The progress row's lock "
			          "is held only until the other transaction ends, so is a lock left held after "
			          "a call returned, such as a session-level pg_advisory_lock that the "
			          "fence's refusal never unlocks, or a transaction left open? Or does the call "
			          "set an isolation level of its own above READ COMMITTED? Then the loser gets a "
			          "serialization failure, which is KIT_DB_BUSY too, where the fence would have "
			          "refused it with 0)" : "");
			lt_expect_int_hint(views_of(t, 1), 5, "views of video 1 after its batch was applied "
			                   "twice at once", "fence");
			if (lt_gate_stalls(g) == stalls) {
				forced += k >= 2;
				break;
			}
			stalled++;
		}
	}
	lt_expect(forced > 0 || inside == 0, NULL, "the same batch applied by two consumers at "
	          "once: none of the %d rounds from statement 2 on opened with both calls at their "
	          "stops (or one waiting for the other's lock); %d round(s) opened only because a "
	          "call had not arrived within %d ms, and each k was tried 3 times. Nothing was shown "
	          "wrong, and nothing was judged either: the machine was too loaded for the gate; "
	          "run the check again", inside, stalled, LT_GATE_PATIENCE_MS);
	lt_gate_close(g);
	batch_waits_for_a_held_row(t, &b);
}

/* The same batch applied by a second consumer while the first holds its
 * transaction open, at its COMMIT, and then fails there (its session
 * ends: the server rolls it back). The second must wait for the first's
 * outcome and then apply the batch (1), the views counted once. A fence
 * that answers 0 while the other transaction is still open (it tried a
 * lock and did not get it: pg_try_advisory_xact_lock, SKIP LOCKED,
 * "another consumer is on it") is wrong whenever that one fails:
 * fence_handle lets the log move past a batch that is not in, and the
 * partition stops counting. PostgreSQL and MariaDB (SQLite's one writer
 * is in this process). */
static int apply_one(void *arg, struct kit_db *db)
{
	return fence_apply(db, arg);
}

static void fence_apply__same_batch_behind_one_that_fails(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	struct fence_batch b = *batch(3, 0, 9, 2, 5);
	struct lt_beside r;
	lt_beside_commit_lost(t, apply_one, apply_one, &b, 3000, &r);
	lt_expect(r.held, "fence", "fence_apply of partition 3's batch 0..9 returned %d without "
	          "a COMMIT", r.held_rc);
	lt_expect(!r.ended, "fence", "while one consumer's fence_apply of partition 3's batch "
	          "0..9 was at its COMMIT, not yet known to succeed, the same batch on another "
	          "connection returned %d at once%s. The first then failed (its session ended, "
	          "the server rolled it back), so the batch was not in: an answer given before "
	          "the other's outcome is a guess. Does the fence try a lock and answer when it "
	          "is not granted (pg_try_advisory_xact_lock, SKIP LOCKED, NOWAIT)? fence.h: a "
	          "statement that finds the row held waits for it", r.side_rc, r.side_rc == 0
	          ? " (0: \"refused, the batch is in\", and fence_handle lets the log move past "
	            "it)" : "");
	lt_expect(r.lost, NULL, "the first consumer's session could not be ended");
	lt_expect(r.held_rc < 0, "fence", "the consumer whose session ended at its COMMIT "
	          "returned %d, expected an error", r.held_rc);
	lt_expect_int_hint(r.side_rc, 1, "fence_apply's result for the batch that waited behind "
	                   "one that failed (1 = applied)", "fence");
	lt_expect_int_hint(views_of(t, 1), 5, "views of video 1 after the batch was applied once "
	                   "behind one that failed", "fence");
	lt_expect_int_hint(stored_last(t, 3), 9, "partition 3's last_offset after its batch "
	                   "0..9", "fence");
}

/* ---- fence_apply ---- */

static void fence_apply__new_batch_is_applied(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	labtest_exec(t, "INSERT INTO video_views (video_id, views) VALUES (2, 100)");

	int rc = apply(t, batch(1, 0, 99, 3, 7));

	lt_expect_int_hint(rc, 1, "fence_apply's result for a new batch (1 = applied)", "fence");
	lt_expect_int_hint(views_of(t, 1), 7, "views of video 1 (no row before: the upsert makes it)", "upsert");
	lt_expect_int_hint(views_of(t, 2), 107, "views of video 2 (100 before, 7 in the batch)", "upsert");
	lt_expect_int_hint(views_of(t, 3), 7, "views of video 3", "upsert");
	lt_expect_int_hint(stored_last(t, 1), 99, "partition 1's last_offset after its batch 0..99", "fence");
	lt_expect_int_hint(stored_last(t, 0), -1, "partition 0's last_offset (no batch of its own)", "fence");
	passed(t);
}

/* A total is an int64_t, and fence_apply takes any batch, not only the
 * ones fence_handle builds: a caller that replays a compacted log hands
 * it a day of one partition at once. Totals of 2^31, 2^32 + 1 and 2^53 +
 * 1 views, applied twice: a total printed with %d, sent as an int (an
 * int[] array parameter) or summed through a double stores another
 * number, or fails the batch for good. */
static void fence_apply__views_past_2_31(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	static const int64_t big[3] = { LT_PAST_INT32, LT_PAST_UINT32, LT_PAST_DOUBLE };
	int rc[2];
	for (int r = 0; r < 2; r++) {
		struct fence_batch *b = batch(0, r * 10, r * 10 + 9, 3, 0);
		for (int i = 0; i < 3; i++)
			b->totals[i].views = big[i];
		rc[r] = fence_apply(labtest_db(t), b);
	}
	int64_t got[3];
	for (int i = 0; i < 3; i++)
		got[i] = views_of(t, i + 1);
	lt_expect(rc[0] == 1 && rc[1] == 1 && got[0] == 2 * big[0] && got[1] == 2 * big[1] &&
	          got[2] == 2 * big[2], "upsert", "two batches, each with totals of 2^31, 2^32 + 1 "
	          "and 2^53 + 1 views for videos 1, 2 and 3: fence_apply returned %d and %d (%s), "
	          "and the videos have %lld, %lld and %lld views (expected 1 and 1, then %lld, %lld "
	          "and %lld). A total is an int64_t all the way into the upsert: printed with %%lld, "
	          "sent as a bigint, added up as an integer, not a double", rc[0], rc[1],
	          labtest_why(labtest_db(t)), (long long)got[0], (long long)got[1], (long long)got[2],
	          (long long)(2 * big[0]), (long long)(2 * big[1]), (long long)(2 * big[2]));
}

/* The longest batch there is: FENCE_MAX_VIDEOS videos, each id 20
 * characters as text (INT64_MIN upward) and each total 19 digits
 * (INT64_MAX - 255 upward): fence.h allows both. An upsert written into
 * a buffer sized "so much per video" for shorter numbers is cut short,
 * and the batch fails every time it is delivered. */
static void fence_apply__a_full_batch_of_the_longest_numbers(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	struct fence_batch *b = batch(0, 0, 999, FENCE_MAX_VIDEOS, 0);
	for (int i = 0; i < FENCE_MAX_VIDEOS; i++)
		b->totals[i] = (struct fence_total){ INT64_MIN + i,
		                                     INT64_MAX - (FENCE_MAX_VIDEOS - 1) + i };
	int rc = fence_apply(labtest_db(t), b);
	char why[300];
	snprintf(why, sizeof why, "%s", labtest_why(labtest_db(t)));
	int64_t rows = labtest_int(t, "SELECT count(*) FROM video_views");
	/* row i holds video INT64_MIN + i with INT64_MAX - 255 + i views */
	int64_t right = labtest_int(t, "SELECT count(*) FROM video_views WHERE views - "
	                            "9223372036854775552 BETWEEN 0 AND 255 AND video_id = "
	                            "(-9223372036854775807 - 1) + (views - 9223372036854775552)");
	lt_expect(rc == 1 && rows == FENCE_MAX_VIDEOS && right == FENCE_MAX_VIDEOS, "upsert",
	          "a batch of FENCE_MAX_VIDEOS (256) videos, ids from INT64_MIN up (20 characters "
	          "each) and totals from INT64_MAX - 255 up (19 digits): fence_apply returned %d "
	          "(%s), expected 1, and video_views holds %lld rows, %lld of them right (expected "
	          "256 and 256). Is the upsert's text cut short (a buffer sized for shorter "
	          "numbers, a snprintf whose result is not checked)? Size it for the longest "
	          "batch fence.h allows", rc, rc == 1 ? "applied" : why, (long long)rows,
	          (long long)right);
	lt_expect_int(stored_last(t, 0), rc == 1 ? 999 : -1, "partition 0's last_offset after "
	              "the batch of 256 videos");
}

static void fence_apply__redelivered_batch_counts_once(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	apply(t, batch(2, 0, 49, 2, 5));

	int again = apply(t, batch(2, 0, 49, 2, 5));

	lt_expect_int_hint(again, 0, "fence_apply's result for the same batch again (0 = already applied)",
	                   "fence");
	lt_expect_int_hint(views_of(t, 1), 5, "views of video 1 after its batch was delivered twice", "fence");
	lt_expect_int_hint(stored_last(t, 2), 49, "partition 2's last_offset after a redelivery", "fence");
	passed(t);
}

static void fence_apply__older_batch_is_refused(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	apply(t, batch(0, 0, 99, 1, 10));
	apply(t, batch(0, 100, 199, 1, 10));

	int old = apply(t, batch(0, 0, 99, 1, 10));

	lt_expect_int_hint(old, 0, "fence_apply's result for batch 0..99 after 100..199", "fence-newer");
	lt_expect_int_hint(views_of(t, 1), 20, "views of video 1 after an old batch came back", "fence-newer");
	lt_expect_int_hint(stored_last(t, 0), 199,
	                   "partition 0's last_offset (an old batch must not move it back)", "fence-newer");
	passed(t);
}

/* Another consumer cut the same events differently: 0..99 is applied, and
 * a batch 50..149 arrives (a zombie's, say). Half of it is in already, so
 * all of it is refused; "newer than 99" would count 50..99 twice. */
static void fence_apply__overlapping_batch_is_refused(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	apply(t, batch(0, 0, 99, 1, 100));

	int rc = apply(t, batch(0, 50, 149, 1, 100));

	lt_expect_int_hint(rc, 0, "fence_apply's result for batch 50..149 after 0..99 (it overlaps)",
	                   "fence-contiguous");
	lt_expect_int_hint(views_of(t, 1), 100, "views of video 1 after an overlapping batch came",
	                   "fence-contiguous");
	lt_expect_int_hint(stored_last(t, 0), 99, "partition 0's last_offset after an overlapping batch",
	                   "fence-contiguous");
	passed(t);
}

/* A batch that skips events (a position that ran ahead of the database)
 * would lose the events in the gap: refused too, the first batch of a
 * partition with nothing applied included (it starts at 0). */
static void fence_apply__batch_after_a_gap_is_refused(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	/* nothing applied yet (-1): the first batch too must start at 0 */
	int first = apply(t, batch(1, 100, 199, 1, 10));
	lt_expect(first == 0 && stored_last(t, 1) == -1 && views_of(t, 1) == 0, "fence-contiguous",
	          "batch 100..199 on a partition with nothing applied (last_offset -1) returned %d; "
	          "last_offset is now %lld, video 1 has %lld views (expected 0, -1 and 0: events "
	          "0..99 would be lost; is last_offset = -1 taken as \"any batch may come first\"?)",
	          first, (long long)stored_last(t, 1), (long long)views_of(t, 1));
	apply(t, batch(1, 0, 99, 1, 10));

	/* a stored offset below -1 is not "nothing applied" either: the batch
	 * that is next after -3 starts at -2, so one from 0 is refused too
	 * (fence.h: only if the stored last_offset is b->first - 1) */
	labtest_exec(t, "UPDATE log_progress SET last_offset = -3 WHERE part = 2");
	int below = apply(t, batch(2, 0, 99, 1, 10));
	lt_expect(below == 0 && stored_last(t, 2) == -3 && views_of(t, 1) == 10, "fence-contiguous",
	          "batch 0..99 on a partition whose last_offset is -3 returned %d; last_offset is now "
	          "%lld, video 1 has %lld views (expected 0, -3 and 10: 0 is not -3 + 1; is any "
	          "negative last_offset taken as \"nothing applied yet\", last_offset < 0?)",
	          below, (long long)stored_last(t, 2), (long long)views_of(t, 1));

	int rc = apply(t, batch(1, 200, 299, 1, 10));

	lt_expect_int_hint(rc, 0, "fence_apply's result for batch 200..299 after 0..99 (100..199 missing)",
	                   "fence-contiguous");
	lt_expect_int_hint(stored_last(t, 1), 99, "partition 1's last_offset after a batch past a gap",
	                   "fence-contiguous");
	lt_expect_int_hint(apply(t, batch(1, 100, 199, 1, 10)), 1,
	                   "fence_apply's result for 100..199, the batch that is next", "fence-contiguous");

	/* a partition with no log_progress row was never set up: nothing is
	 * known to be next there, so no batch is (FENCE_SCHEMA, fence.h) */
	const int64_t had = views_of(t, 1);
	for (int64_t from = 0; from <= 500; from += 500) {
		int none = fence_apply(labtest_db(t), batch(9, from, from + 99, 1, 10));
		int64_t rows = labtest_int(t, "SELECT COUNT(*) FROM log_progress WHERE part = 9");
		lt_expect(none <= 0 && rows == 0 && views_of(t, 1) == had, "fence-contiguous", "batch %lld..%lld "
		          "of partition 9, which has no log_progress row, returned %d; partition 9 now has "
		          "%lld progress row(s) and video 1 %lld views (expected 0 or an error, no row, %lld "
		          "views: the fence is an UPDATE of the row that exists. One that creates the row "
		          "(an upsert of log_progress) takes any first batch from any offset, and the events "
		          "before it are never counted)", (long long)from, (long long)from + 99, none,
		          (long long)rows, (long long)views_of(t, 1), (long long)had);
	}
	passed(t);
}

static void fence_apply__failure_changes_nothing(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	labtest_exec(t, "ALTER TABLE video_views RENAME TO video_views_away");
	struct kit_db *db = labtest_db(t);

	int rc = fence_apply(db, batch(3, 0, 29, 2, 3));

	lt_expect(rc < 0, "one-transaction", "fence_apply returned %d with video_views missing; "
	          "it must fail", rc);
	labtest_exec(t, "ALTER TABLE video_views_away RENAME TO video_views");
	lt_expect_int_hint(stored_last(t, 3), -1,
	                   "partition 3's last_offset after its batch failed to apply", "one-transaction");
	int later = apply(t, batch(3, 0, 29, 2, 3));
	lt_expect_int_hint(later, 1, "fence_apply's result for the same batch once the table is back",
	                   "one-transaction");
	lt_expect_int_hint(views_of(t, 2), 3, "views of video 2 after the retried batch", "one-transaction");

	/* The upsert refused by the table itself: a CHECK on views (a limit
	 * an operator added) answers KIT_DB_CONSTRAINT. That is the database
	 * failing the batch like any other error: the batch is not in, so
	 * fence_apply answers negative and fence_handle passes it on. Taken
	 * for "another consumer inserted the video first, the fence settles
	 * it" and answered 0, the log moves past views nobody counts. */
	views_table(t, true);
	int crc = fence_apply(db, batch(3, 30, 59, 2, 1000));
	int64_t clast = stored_last(t, 3);
	views_table(t, false);
	lt_expect(crc < 0 && clast == 29, "one-transaction", "fence_apply of batch 30..59 whose "
	          "upsert the table refused (a CHECK constraint: KIT_DB_CONSTRAINT) returned %d, "
	          "partition 3 then at %lld (expected the error and 29): a failed upsert is the "
	          "database's error whatever its code; answered 0 (\"refused by the fence\"), the "
	          "log moves past a batch that is not in", crc, (long long)clast);
	passed(t);
}

static void fence_apply__one_upsert_per_batch(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	struct kit_db *db = labtest_db(t);
	struct writes w = { .db = db };
	kit_db_set_hook(db, count_writes, &w);

	apply(t, batch(0, 0, 9, 5, 2));
	int locks_before = w.locks;
	apply(t, batch(0, 0, 9, 5, 2));
	lt_expect_int_hint(w.totals, 1, "statements writing video_views for a batch of 5 videos "
	                   "applied, then delivered again (the copy must meet the fence before it "
	                   "writes anything)", "one-upsert");
	lt_expect(w.locks == locks_before, "fence", "the batch delivered again sent %d SELECT ... FOR "
	          "UPDATE (or FOR SHARE) of video_views before the fence refused it: its videos' rows "
	          "were locked, and every other writer of those hot rows waited, for a batch that "
	          "was never going in. The fence goes first (fence.h, §3): the progress row's lock "
	          "is the only one a refused batch takes", w.locks - locks_before);
	w.totals = 0;
	apply(t, batch(0, 10, 10 + FENCE_MAX_VIDEOS - 1, FENCE_MAX_VIDEOS, 1));
	kit_db_set_hook(db, NULL, NULL);
	lt_expect_int_hint(w.totals, 1, "statements writing video_views for one batch of "
	                   "FENCE_MAX_VIDEOS (256) videos (is the upsert cut into chunks? one "
	                   "statement carries the whole batch)", "one-upsert");
	lt_expect_int_hint(views_of(t, FENCE_MAX_VIDEOS), 1, "views of video 256", "upsert");
	lt_expect_int_hint(views_of(t, 5), 3, "views of video 5 (2 in the first batch, 1 in the "
	                   "batch of 256)", "upsert");
	/* A batch of one video, new and then known: one statement too. An
	 * UPDATE and then an INSERT when it changed no row ("one video: a
	 * plain UPDATE is cheaper") is two, and a writer that inserts the
	 * video between them makes the INSERT fail on the key, the batch
	 * redelivered, where the upsert just adds. */
	static const int64_t one_first[] = { 266, 267 };
	for (int i = 0; i < 2; i++) {
		struct fence_batch one = { .part = 0, .first = one_first[i], .last = one_first[i],
		                           .n = 1 };
		one.totals[0] = (struct fence_total){ 7000, 4 };
		w.named = 0;
		kit_db_set_hook(db, count_writes, &w);
		lt_expect_int_hint(apply(t, &one), 1, "fence_apply's result for a batch of one video",
		                   "fence");
		kit_db_set_hook(db, NULL, NULL);
		lt_expect(w.named == 1, "one-upsert", "a batch of one video, %s, sent %d statements "
		          "that name video_views: one upsert carries any batch, one video too. An "
		          "UPDATE and then an INSERT when it changed no row is two, and a writer that "
		          "inserts the video between them makes the INSERT fail on the key",
		          i == 0 ? "not yet in video_views" : "already in it", w.named);
	}
	lt_expect_int_hint(views_of(t, 7000), 8, "views of video 7000 after two batches of 4",
	                   "upsert");
	passed(t);
}

/* ---- where to start reading ---- */

static void fence_position__is_stored_offset_plus_one(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	labtest_exec(t, "UPDATE log_progress SET last_offset = 41 WHERE part = 2");
	int64_t next = -7, fresh = -7;

	int rc = fence_position(labtest_db(t), 2, &next);
	int rc0 = fence_position(labtest_db(t), 0, &fresh);

	lt_expect(rc == 0 && rc0 == 0, "seek-from-db", "fence_position failed: %s",
	          labtest_why(labtest_db(t)));
	lt_expect_int_hint(next, 42, "position of partition 2 (last_offset 41 stored)", "seek-from-db");
	lt_expect_int_hint(fresh, 0, "position of partition 0 (nothing applied yet)", "seek-from-db");
	int norow = fence_position(labtest_db(t), 9, &next);
	lt_expect(norow == KIT_DB_NOROW, "seek-from-db", "fence_position of a partition without a "
	          "progress row returned %d (%s); fence.h: KIT_DB_NOROW (%d), kit_db_query_int's own "
	          "answer for a query that found no row: a caller tells \"no such partition\" from \"the "
	          "database failed\" by it", norow, norow == 0 ? "success" : norow == KIT_DB_ERR ?
	          "KIT_DB_ERR: every failure turned into one code?" : "another code", KIT_DB_NOROW);

	/* Partition 2's row held by a batch in flight (another connection's
	 * open transaction has written it): the row is there, so the position
	 * is 42, read at once (a plain read waits for no lock) or after a wait
	 * the connection's 1 s allows gave up (KIT_DB_BUSY). A read that skips
	 * the rows others hold (FOR SHARE SKIP LOCKED, "never hang an
	 * assignment") answers KIT_DB_NOROW: no progress row, for a partition
	 * that has one, and its caller may make one up. */
	struct kit_db *holder = labtest_connect(t), *reader = labtest_connect(t);
	assert_int_equal(kit_db_set_lock_timeout(reader, 1000), 0);
	assert_int_equal(kit_db_begin(holder), 0);
	assert_int_equal(kit_db_exec(holder, "UPDATE log_progress SET last_offset = last_offset "
	                             "WHERE part = 2", 0, NULL), 0);
	next = -7;
	int64_t t0 = util_now_ns();
	int held = fence_position(reader, 2, &next);
	int64_t waited_ms = (util_now_ns() - t0) / 1000000;
	char why[200];
	snprintf(why, sizeof why, "%s", labtest_why(reader));
	kit_db_rollback(holder);
	kit_db_close(holder);
	kit_db_close(reader);
	lt_expect((held == 0 && next == 42) || (held == KIT_DB_BUSY && waited_ms >= 800), "seek-from-db",
	          "fence_position of partition 2 (last_offset 41) while another connection's open "
	          "transaction held its progress row returned %d with position %lld after %lld ms (%s); "
	          "expected 42, or KIT_DB_BUSY once the connection's 1 s lock wait gave up%s", held,
	          (long long)next, (long long)waited_ms, why, held == KIT_DB_NOROW ? ": KIT_DB_NOROW "
	          "says the partition has no row, and it has one: does the read skip the rows others "
	          "hold (SKIP LOCKED)?" : held == KIT_DB_BUSY ? ": busy before the connection's limit, "
	          "does the read refuse to wait (NOWAIT)? fence.h: a statement waits as long as the "
	          "connection allows" : "");
	passed(t);
}

/* Every statement refused, for as long as the call keeps sending them (the
 * check stops refusing at the 200th): with an error, then as busy.
 * fence_position, fence_apply and fence_handle each give up and return the
 * database's code, KIT_DB_ERR and then KIT_DB_BUSY (passed on as it came:
 * the log hands fence_handle's answer to whoever polls): not KIT_DB_NOROW ("this partition
 * has no progress row", a caller may make one) for a row that is there,
 * not a retry until the lock goes, which never ends while it stays held.
 * Nothing changes; once the database answers, both work. */
static void fence__refused_for_good_ends(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	labtest_exec(t, "UPDATE log_progress SET last_offset = 41 WHERE part = 2");
	struct kit_db *db = labtest_db(t);
	static const char *const calls[] = { "fence_position", "fence_apply", "fence_handle" };
	struct fence_event evs[3] = { { 1 }, { 2 }, { 1 } };
	struct kit_log_record recs[3];
	for (int i = 0; i < 3; i++)
		recs[i] = (struct kit_log_record){ 42 + i, sizeof evs[i], &evs[i] };
	for (int i = 0; i < LT_REFUSAL_KINDS; i++) {
		int code = i ? KIT_DB_BUSY : KIT_DB_ERR;
		for (int c = 0; c < 3 * 3; c++) {
			struct lt_refusals r;
			int64_t next = -7;
			lt_refusals_arm(db, &r, i);
			int call = c / 3;                /* each call three times in a row */
			int rc = call == 0 ? fence_position(db, 2, &next)
			       : call == 1 ? fence_apply(db, batch(2, 42, 51, 3, 2)) : fence_handle(db, 2, recs, 3);
			lt_refusals_disarm(db);
			const char *hint = call == 0 ? "seek-from-db" : call == 1 ? "one-transaction" : "handle-error";
			lt_expect(r.stmts < 200, hint, "with every statement "
			          "refused%s, %s ran %d of them (the check stopped refusing after 200) and "
			          "returned %d: a retry without a bound never ends while the database is away "
			          "or a lock stays held; give up and return the error", i ? " as busy "
			          "(KIT_DB_BUSY)" : "", calls[call], r.stmts, rc);
			lt_expect(rc == code, hint, "with every statement "
			          "refused%s, %s returned %d, expected %d (%s), the database's own code%s",
			          i ? " as busy" : "", calls[call], rc, code, i ? "KIT_DB_BUSY" : "KIT_DB_ERR",
			          rc == KIT_DB_NOROW ? ": KIT_DB_NOROW says partition 2 has no progress row, "
			          "but it has one; only a read that found no row answers KIT_DB_NOROW, any "
			          "other failure is passed on as it came" : rc >= 0 ? ": it reported success "
			          "for a call the database refused" : ": is every failure answered as one code?");
		}
	}
	lt_expect_int_hint(stored_last(t, 2), 41, "partition 2's last_offset after every call was "
	                   "refused", "one-transaction");
	lt_expect_int_hint(views_of(t, 1), 0, "views of video 1 after every call was refused",
	                   "one-transaction");
	int64_t next = -7;
	int rc = fence_position(db, 2, &next);
	lt_expect(rc == 0 && next == 42, "seek-from-db", "fence_position once the database answers "
	          "again: returned %d, position %lld (expected 42)", rc, (long long)next);
	lt_expect_int_hint(apply(t, batch(2, 42, 51, 3, 2)), 1, "fence_apply of 42..51 once the "
	                   "database answers again", "fence");
}

/* fence_handle, like fence_apply, waits for a held progress row as long
 * as its connection allows and no longer (fence.h): a batch that did not
 * go in is the log's to deliver again. Another transaction holds
 * partition 0's row past the connection's lock wait of 1 s; fence_apply
 * of the batch runs first, alone (this run's baseline), then fence_handle
 * of the records that make the same batch. Each answers KIT_DB_BUSY after
 * one lock wait, in one transaction. A handler that calls fence_apply
 * again when it answers KIT_DB_BUSY ("a deadlock victim goes in the next
 * time") begins a second transaction and waits a second lock wait: its
 * consumer is held twice as long as its connection allows, and every
 * partition it owns waits meanwhile. The verdict counts the transactions
 * begun (exact, whatever the load); the time backs it up with room to
 * spare: a second wait, timed by the server, makes it 2 s at least, and
 * it must stay below 1.9 s or below the baseline's time plus 0.9 s,
 * whichever is more (a load that slows the calls slows the baseline as
 * much; at a load average of 32 either call took the wait plus 0.06 s at
 * most). Once the row is let go, the same records apply. */
#define HELD_WAIT_MS 1000

struct begins_seen {
	int begins;                /* BEGIN or START TRANSACTION sent */
	int stmts;
};

static void count_begins(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct begins_seen *s = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	s->stmts++;
	s->begins += lt_sql_is(sql, "BEGIN") || lt_sql_is(sql, "START TRANSACTION");
}

static void fence_handle__gives_up_after_one_lock_wait(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	struct fence_event ev[3] = { { 1 }, { 2 }, { 1 } };
	struct kit_log_record recs[3];
	for (int i = 0; i < 3; i++)
		recs[i] = (struct kit_log_record){ i, sizeof ev[i], &ev[i] };
	struct fence_batch b = { .part = 0, .first = 0, .last = 2, .n = 2 };
	b.totals[0] = (struct fence_total){ 1, 2 };
	b.totals[1] = (struct fence_total){ 2, 1 };

	struct kit_db *holder = labtest_connect(t), *db = labtest_connect(t);
	assert_int_equal(kit_db_set_lock_timeout(db, HELD_WAIT_MS), 0);
	if (kit_db_begin(holder) != 0 || kit_db_exec(holder, "UPDATE log_progress SET last_offset = "
	                                             "last_offset WHERE part = 0", 0, NULL) != 0)
		fail_msg("the holder: %s", kit_db_errmsg(holder));
	struct begins_seen a = { 0, 0 }, h = { 0, 0 };
	kit_db_set_hook(db, count_begins, &a);
	int64_t t0 = util_now_ns();
	int arc = fence_apply(db, &b);
	int64_t t1 = util_now_ns();
	kit_db_set_hook(db, count_begins, &h);
	int hrc = fence_handle(db, 0, recs, 3);
	int64_t t2 = util_now_ns();
	kit_db_set_hook(db, NULL, NULL);
	kit_db_rollback(holder);
	kit_db_close(holder);
	int64_t held_last = stored_last(t, 0), held_views = views_of(t, 1);
	int again = fence_handle(db, 0, recs, 3);
	kit_db_close(db);

	double wait_s = HELD_WAIT_MS / 1000.0, apply_s = (double)(t1 - t0) / 1e9,
	       handle_s = (double)(t2 - t1) / 1e9;
	double bound_s = apply_s + 0.9 * wait_s > 1.9 * wait_s ? apply_s + 0.9 * wait_s : 1.9 * wait_s;
	lt_expect(arc == KIT_DB_BUSY, "fence", "with partition 0's progress row held by another "
	          "transaction past the connection's lock wait of %.0f s, fence_apply returned %d after "
	          "%.2f s, expected KIT_DB_BUSY (%d) once the wait gave up: a statement that finds the "
	          "row held waits for it as long as the connection allows, then the database's code "
	          "is the answer", wait_s, arc, apply_s, KIT_DB_BUSY);
	lt_expect(hrc == KIT_DB_BUSY && h.begins <= 1 && handle_s < bound_s, "handle-error",
	          "with partition 0's progress row held by another transaction past the connection's "
	          "lock wait of %.0f s, fence_handle returned %d after %.2f s and began %d "
	          "transaction(s) in %d statement(s); fence_apply of the same batch, alone, returned "
	          "%d after %.2f s and began %d. Expected KIT_DB_BUSY (%d) after one lock wait, one "
	          "transaction, in under %.2f s%s", wait_s, hrc, handle_s, h.begins, h.stmts, arc,
	          apply_s, a.begins, KIT_DB_BUSY, bound_s, h.begins > 1 || handle_s >= bound_s ?
	          a.begins > 1 ? ": fence_apply itself tries again after KIT_DB_BUSY. fence.h: a "
	          "refused statement ends the call with its code at once; each try waits the whole "
	          "lock wait again, and the log delivers the batch again anyway" : ": does "
	          "fence_handle call fence_apply again when it answers KIT_DB_BUSY (\"a deadlock "
	          "victim goes in the next time\")? Each try waits the whole lock wait again, so the "
	          "consumer is held longer than its connection allows (fence.h), every partition it "
	          "owns waiting meanwhile; return the code: the log delivers the batch again" : "");
	lt_expect(held_last == -1 && held_views == 0, "handle-error", "after fence_handle's batch "
	          "met a held progress row and gave up, partition 0 stands at %lld and video 1 has "
	          "%lld views; expected -1 and 0 (nothing in)", (long long)held_last,
	          (long long)held_views);
	lt_expect(again == 0 && stored_last(t, 0) == 2 && views_of(t, 1) == 2 && views_of(t, 2) == 1,
	          "handle-error", "the same records delivered again once the row was let go: "
	          "fence_handle returned %d, partition 0 at %lld, videos 1 and 2 at %lld and %lld "
	          "views (expected 0, 2, 2 and 1)", again, (long long)stored_last(t, 0),
	          (long long)views_of(t, 1), (long long)views_of(t, 2));
}

/* A log in a fresh directory with 4 partitions and `each` events in each. */
static struct kit_log *make_log(char *dir, size_t len, int each)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, len, "%s/hotrow-fence-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	struct kit_log *log = NULL;
	if (!mkdtemp(dir) || kit_log_open(&log, dir, CRASH_PARTITIONS) != 0)
		fail_msg("log in %s: %s", dir, kit_log_errmsg(log));
	for (int p = 0; p < CRASH_PARTITIONS; p++)
		for (int i = 0; i < each; i++) {
			struct fence_event ev = { i % 3 + 1 };
			kit_log_append(log, p, &(struct kit_log_iov){ &ev, sizeof ev }, 1, NULL);
		}
	return log;
}

static void fence_on_assign__seeks_from_the_database_not_the_hint(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	labtest_exec(t, "UPDATE log_progress SET last_offset = 59 WHERE part = 1");
	char dir[512];
	struct kit_log *log = make_log(dir, sizeof dir, 100);
	kit_log_commit(log, FENCE_GROUP, 1, 10);      /* the hint lags: a crash after a commit */
	kit_log_commit(log, FENCE_GROUP, 3, 80);      /* ... or runs ahead of the database */
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = labtest_db(t) };
	kit_log_join(&c, log, FENCE_GROUP, "solo", &cb);

	int rc = kit_log_rebalance(c);
	int64_t p1 = -1, p3 = -1;
	kit_log_position(c, 1, &p1);
	kit_log_position(c, 3, &p3);
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);

	lt_expect(rc == 0, "seek-from-db", "the assignment failed: fence_on_assign returned %d", rc);
	lt_expect_int_hint(p1, 60, "position of partition 1 (database: 59 applied; log's hint: 10)",
	                   "seek-from-db");
	lt_expect_int_hint(p3, 0, "position of partition 3 (database: nothing applied; log's hint: 80)",
	                   "seek-from-db");
	passed(t);
}

/* fence_on_assign when the database cannot say where the partition
 * stands (log_progress renamed away for a moment): it must answer the
 * error, so the log lets the partition go instead of reading it from the
 * hint. A callback that answers 0 leaves the consumer at the hint (here
 * 10, with 59 applied): its batches overlap what is stored, the fence
 * refuses them, the log moves past them, and events 60.. are never
 * counted (§5). Once the table is back, the next rebalance seeks from
 * the database. */
static void fence_on_assign__failed_read_is_an_error(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	labtest_exec(t, "UPDATE log_progress SET last_offset = 59 WHERE part = 1");
	char dir[512];
	struct kit_log *log = make_log(dir, sizeof dir, 100);
	kit_log_commit(log, FENCE_GROUP, 1, 10);      /* the hint lags */
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = labtest_db(t) };
	kit_log_join(&c, log, FENCE_GROUP, "solo", &cb);

	labtest_exec(t, "ALTER TABLE log_progress RENAME TO log_progress_away");
	int failed = kit_log_rebalance(c);
	int owned = kit_log_owns(c, 1);
	int64_t at = -1;
	kit_log_position(c, 1, &at);
	labtest_exec(t, "ALTER TABLE log_progress_away RENAME TO log_progress");
	int rc = kit_log_rebalance(c);
	int64_t p1 = -1;
	kit_log_position(c, 1, &p1);
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);

	lt_expect(failed < 0 && !owned, "seek-from-db", "with log_progress missing, the assignment "
	          "returned %d and the consumer %s partition 1%s: fence_on_assign must return "
	          "fence_position's error, or the consumer reads from the log's hint (10) while "
	          "59 are applied, the fence refuses those batches and events 60.. are lost", failed,
	          owned ? "owns" : "does not own", owned && at == 10 ? " at the hint, 10" : "");
	lt_expect(rc == 0, "seek-from-db", "the assignment once log_progress was back failed: %d",
	          rc);
	lt_expect_int_hint(p1, 60, "position of partition 1 once log_progress was back "
	                   "(database: 59 applied; log's hint: 10)", "seek-from-db");

	/* the position read refused as busy (a lock wait that gave up: the
	 * row is held by a batch in flight, a zombie's or the last owner's):
	 * still no position, so the assignment fails, or reads again and
	 * seeks to 60; keeping the log's hint instead ("busy: not sure, keep
	 * what the log says") cuts batches from 10 that the fence refuses,
	 * and the log moves past events nobody applied */
	log = make_log(dir, sizeof dir, 100);
	kit_log_commit(log, FENCE_GROUP, 1, 10);
	kit_log_join(&c, log, FENCE_GROUP, "solo-busy", &cb);
	struct lt_refusals busy;
	lt_refusals_arm(labtest_db(t), &busy, 1);     /* every statement refused as busy */
	failed = kit_log_rebalance(c);
	lt_refusals_disarm(labtest_db(t));
	bool hit = busy.stmts > 0;
	lt_expect(busy.stmts < 200, "seek-from-db", "with the position read refused as busy for as "
	          "long as it was sent (the check stopped refusing at the 200th statement), "
	          "fence_on_assign sent %d: a read tried again until the row is let go never ends "
	          "while it stays held (a zombie's transaction, a session idle in one), and the "
	          "consumer's rebalance never returns. Give up and return KIT_DB_BUSY; the caller's "
	          "lock wait already bounded the wait", busy.stmts);
	lt_expect(busy.progress_reads <= 1, "seek-from-db", "with the position read refused as "
	          "busy, fence_on_assign read log_progress %d times: each read already waited as "
	          "long as the connection allows, so a rebalance stalls that many lock waits, with "
	          "every partition of the consumer unowned meanwhile. Return the first KIT_DB_BUSY "
	          "as it came (fence.h): the log assigns the partition again", busy.progress_reads);
	owned = kit_log_owns(c, 1);
	at = -1;
	kit_log_position(c, 1, &at);
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);
	lt_expect(!hit || (failed < 0 && !owned) || (owned && at == 60), "seek-from-db", "with the "
	          "position read refused as busy (KIT_DB_BUSY: the row held past the lock wait), the "
	          "assignment returned %d and the consumer %s partition 1%s%lld: fence_on_assign must "
	          "return fence_position's error, never keep the "
	          "log's hint, which lags the database: batches cut from 10 are refused by the fence "
	          "and events 60.. are lost", failed, owned ? "owns" : "does not own",
	          owned ? " at " : ", position ", (long long)at);

	/* partition 2's row is missing: fence_position says KIT_DB_NOROW, and
	 * the assignment fails; it must not make up a row (at -1, every event
	 * of the partition would be counted again) */
	labtest_exec(t, "DELETE FROM log_progress WHERE part = 2");
	log = make_log(dir, sizeof dir, 100);
	kit_log_join(&c, log, FENCE_GROUP, "solo2", &cb);
	failed = kit_log_rebalance(c);
	owned = kit_log_owns(c, 2);
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);
	int64_t rows = labtest_int(t, "SELECT COUNT(*) FROM log_progress WHERE part = 2");
	lt_expect(failed < 0 && !owned && rows == 0, "seek-from-db", "with partition 2's log_progress "
	          "row missing, the assignment returned %d, the consumer %s partition 2, and it has %lld "
	          "progress row(s) now: fence_on_assign must fail with fence_position's KIT_DB_NOROW and "
	          "change nothing (a row made up at -1 counts again every event that partition's "
	          "totals already hold)", failed, owned ? "owns" : "does not own", (long long)rows);
	lt_expect(failed == KIT_DB_NOROW, "seek-from-db", "with partition 2's log_progress row "
	          "missing, the assignment returned %d, not fence_position's KIT_DB_NOROW (%d): is "
	          "every failure answered as one code? fence.h wants the code passed on as it came, "
	          "so whoever reads it can tell a partition without a row from a database that failed",
	          failed, KIT_DB_NOROW);

	/* partition 3's row says -3: next would be -2, which the log refuses
	 * to seek to; the assignment fails with kit_log_seek's error, and the
	 * consumer does not read partition 3 from the hint */
	labtest_exec(t, "INSERT INTO log_progress (part, last_offset) VALUES (2, -1)");
	labtest_exec(t, "UPDATE log_progress SET last_offset = -3 WHERE part = 3");
	log = make_log(dir, sizeof dir, 100);
	kit_log_commit(log, FENCE_GROUP, 3, 10);
	kit_log_join(&c, log, FENCE_GROUP, "solo3", &cb);
	failed = kit_log_rebalance(c);
	owned = kit_log_owns(c, 3);
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);
	lt_expect(failed < 0 && !owned, "seek-from-db", "with partition 3's last_offset at -3 (a "
	          "position of -2, which kit_log_seek refuses), the assignment returned %d and the "
	          "consumer %s partition 3: fence_on_assign must return kit_log_seek's error too, or "
	          "the consumer reads on from the log's hint (10), not from where the database says",
	          failed, owned ? "owns" : "does not own");
	lt_expect(failed == KIT_LOG_INVAL, "seek-from-db", "with partition 3's last_offset at -3, "
	          "the assignment returned %d, not kit_log_seek's KIT_LOG_INVAL (%d): is every "
	          "failure answered as one code? fence.h wants the code passed on as it came", failed,
	          KIT_LOG_INVAL);
	passed(t);
}

/* ---- the whole consumer ---- */

static void fence_handle__adds_up_a_batch_per_video(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	char dir[512];
	struct kit_log *log = make_log(dir, sizeof dir, 30);   /* videos 1, 2, 3, 1, 2, 3, ... */
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = labtest_db(t) };
	kit_log_join(&c, log, FENCE_GROUP, "solo", &cb);
	struct writes w = { .db = labtest_db(t) };
	kit_db_set_hook(labtest_db(t), count_writes, &w);

	int handled = 0, n;
	while ((n = kit_log_poll(c, 12, fence_handle, labtest_db(t))) > 0)
		handled += n;
	/* The smallest batch: one record (offset 30 of partition 2, a view
	 * of video 7), first == last. */
	int upserts = w.totals, single = 0;
	int64_t last2 = stored_last(t, 2);
	struct fence_event ev7 = { 7 };
	if (n == 0 && kit_log_append(log, 2, &(struct kit_log_iov){ &ev7, sizeof ev7 }, 1, NULL) == 0)
		while ((n = kit_log_poll(c, 12, fence_handle, labtest_db(t))) > 0)
			single += n;
	kit_db_set_hook(labtest_db(t), NULL, NULL);
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);

	lt_expect(n == 0, "totals", "kit_log_poll with fence_handle failed (%d): %s", n,
	          labtest_why(labtest_db(t)));
	lt_expect_int_hint(handled, 120, "events handled from 4 partitions of 30", "totals");
	lt_expect_int_hint(views_of(t, 1), 40, "views of video 1", "totals");
	lt_expect_int_hint(views_of(t, 3), 40, "views of video 3", "totals");
	lt_expect_int_hint(last2, 29, "partition 2's last_offset", "totals");
	lt_expect_int_hint(upserts, 12, "upserts for 12 batches (3 of up to 12 events per partition)",
	                   "one-upsert");
	lt_expect_int_hint(single, 1, "events handled in a batch of one record, appended after", "totals");
	lt_expect(stored_last(t, 2) == 30 && views_of(t, 7) == 1 && w.totals - upserts == 1, "totals",
	          "a batch of one record (offset 30 of partition 2, one view of video 7): partition 2's "
	          "last_offset is %lld (expected 30), video 7 has %lld views (expected 1), %d upserts "
	          "ran (expected 1). A batch with first == last is a batch like any other: does a "
	          "path for one record skip part of the work (its last offset, its total)?",
	          (long long)stored_last(t, 2), (long long)views_of(t, 7), w.totals - upserts);
	passed(t);
}

/* The database refuses the first batch (video_views is renamed away):
 * fence_handle must say so, so that the log keeps its position and
 * delivers the batch again once the table is back. A handler that
 * answers 0 anyway lets the log move past it, and the fence then refuses
 * every later batch of that partition (none starts right after what is
 * stored): the partition stops counting, silently. */
static void fence_handle__failed_batch_is_delivered_again(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	char dir[512];
	struct kit_log *log = make_log(dir, sizeof dir, 30);   /* videos 1, 2, 3, 1, 2, 3, ... */
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = labtest_db(t) };
	kit_log_join(&c, log, FENCE_GROUP, "solo", &cb);
	labtest_exec(t, "ALTER TABLE video_views RENAME TO video_views_away");

	int refused = kit_log_poll(c, 12, fence_handle, labtest_db(t));

	labtest_exec(t, "ALTER TABLE video_views_away RENAME TO video_views");
	int handled = 0, n;
	while ((n = kit_log_poll(c, 12, fence_handle, labtest_db(t))) > 0)
		handled += n;
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);

	lt_expect(refused < 0, "handle-error", "kit_log_poll returned %d for a batch the database "
	          "refused (video_views was missing)%s; answer the error, so the log delivers the "
	          "batch again", refused, refused > 0 ? ": fence_handle answered 0, and the log "
	          "counted its records as handled and moved past them" : "");
	lt_expect(n == 0, "handle-error", "kit_log_poll with fence_handle failed (%d) once the table "
	          "was back: %s", n, labtest_why(labtest_db(t)));
	lt_expect_int_hint(views_of(t, 1) + views_of(t, 2) + views_of(t, 3), 120,
	                   "views in the database, 4 partitions of 30, after one refused batch",
	                   "handle-error");
	lt_expect_int_hint(handled, 120, "events handled once the table was back", "handle-error");

	/* The same through fence_handle when the table itself refuses the
	 * upsert: a CHECK an operator added (KIT_DB_CONSTRAINT). The batch is
	 * not in, whatever the code: a handler that answers 0 for a
	 * constraint ("skip the poison batch") lets the log move past it, and
	 * the fence then refuses every later batch of the partition. */
	views_table(t, true);
	labtest_exec(t, "INSERT INTO video_views (video_id, views) VALUES (1, 999)");
	labtest_exec(t, "UPDATE log_progress SET last_offset = 29 WHERE part = 2");
	struct fence_event ev = { 1 };
	struct kit_log_record one = { 30, sizeof ev, &ev };
	int crc = fence_handle(labtest_db(t), 2, &one, 1);
	int64_t clast = stored_last(t, 2), cviews = views_of(t, 1);
	lt_expect(crc < 0 && clast == 29 && cviews == 999, "handle-error", "fence_handle of offset "
	          "30 of partition 2, a view of video 1, whose upsert the table refused (a CHECK: "
	          "KIT_DB_CONSTRAINT) returned %d, with partition 2 at %lld and video 1 at %lld "
	          "(expected the error, 29 and 999)%s", crc, (long long)clast, (long long)cviews,
	          crc == 0 ? ": 0 tells the log the batch is in, and it moves past it; the fence "
	          "then refuses every later batch of the partition, which stops counting with no "
	          "error anywhere. A constraint is the database failing the batch like any other "
	          "error: pass it on" : "");
	passed(t);
}

/* Offsets with gaps inside a batch, as a compacted Kafka topic or its
 * transaction markers leave them: recs are in offset order, not one
 * apart (fence.h), so the batch ends at its last record's offset. A
 * handler that works the last offset out as first + n - 1 stores one
 * short of what it applied, and the next batch, which starts after the
 * real last, is refused for ever. */
static void fence_handle__offsets_with_gaps(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	labtest_exec(t, "UPDATE log_progress SET last_offset = 41 WHERE part = 1");
	struct fence_event ev[3] = { { 5 }, { 6 }, { 5 } };
	struct kit_log_record recs[3] = { { 42, sizeof ev[0], &ev[0] }, { 45, sizeof ev[1], &ev[1] },
	                                  { 49, sizeof ev[2], &ev[2] } };
	int rc = fence_handle(labtest_db(t), 1, recs, 3);
	int64_t last = stored_last(t, 1);
	struct kit_log_record next = { 50, sizeof ev[1], &ev[1] };
	int rc2 = fence_handle(labtest_db(t), 1, &next, 1);
	lt_expect(rc == 0 && last == 49, "totals", "fence_handle of partition 1's records at offsets "
	          "42, 45 and 49 (the gaps a compacted topic leaves), stored last 41: returned %d and "
	          "stored %lld as the last offset, expected 0 and 49 (the last record's offset)%s",
	          rc, (long long)last, last == 44 ? ": is the last offset worked out as first + n - "
	          "1? Offsets need not be one apart; take the last record's" : "");
	lt_expect(rc2 == 0 && stored_last(t, 1) == 50 && views_of(t, 5) == 2 && views_of(t, 6) == 2,
	          "totals", "then the record at offset 50: returned %d, partition 1 at %lld, videos 5 "
	          "and 6 at %lld and %lld views (expected 0, 50, 2 and 2)", rc2,
	          (long long)stored_last(t, 1), (long long)views_of(t, 5), (long long)views_of(t, 6));
	passed(t);
}

/* A connection that breaks at some statement of fence_apply: from then on
 * every statement is refused (the COMMIT, a read back after it, the
 * ROLLBACK), for k = 1, 2, ... Nothing committed, and nothing can be
 * known: the answer is an error, never 1 ("COMMIT almost never fails")
 * nor 0, which would move the log past a batch that is not in. Then the
 * server ends the dead session's transaction (a ROLLBACK here) and the
 * same batch, delivered again, counts once. Twice: a batch of 0 .. 9, and
 * a partition's first batch of one record, offset 0 .. 0, whose last
 * offset is 0: a read-back whose own failure goes unlooked at leaves the
 * offset it was to read at what it was set to (0, most often) and takes
 * that for "the stored offset is this batch's last". */
static void fence_apply__a_connection_broken_at_any_step(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	prepare(t);
	static const struct { int64_t last; int videos; int64_t views; } shapes[] = {
		{ 9, 3, 4 },      /* offsets 0 .. 9, 4 views of videos 1 .. 3 */
		{ 0, 1, 1 },      /* one record at offset 0: the partition's first, and last 0 */
	};
	for (int s = 0; s < 2; s++) {
		int64_t end = shapes[s].last, views = shapes[s].views;
		for (int k = 1; k <= 20; k++) {
			labtest_exec(t, "DELETE FROM video_views; UPDATE log_progress SET last_offset = -1");
			struct fence_batch b = *batch(2, 0, end, shapes[s].videos, views);
			kit_fp_clear();
			kit_fp_set("db-stmt-fails", KIT_FP_ERROR, k);
			int rc = fence_apply(db, &b);
			bool reached = kit_fp_count("db-stmt-fails") >= k;
			kit_fp_clear();
			if (!reached)
				break;
			kit_db_rollback(db);
			int64_t last = stored_last(t, 2);
			lt_expect(rc < 0 && last == -1, "one-transaction", "fence_apply of partition 2's "
			          "batch 0 .. %lld on a connection that broke at its statement %d (it and every "
			          "statement after it refused) returned %d with partition 2 stored at %lld; "
			          "expected an error and nothing stored%s", (long long)end, k, rc,
			          (long long)last, rc == 1 && end == 0 ? ": 1 says the batch is in, and "
			          "nothing committed. The batch's last offset is 0: is the read-back's own "
			          "result unlooked at, so that the offset it failed to read stays at the 0 it "
			          "was set to and passes for this batch's last? A read that failed knows "
			          "nothing: return the COMMIT's error" : rc == 1 ? ": 1 says the batch is in, "
			          "and nothing committed. When COMMIT fails and nothing can be read back, the "
			          "outcome is unknown: return the error, and let the next delivery ask the "
			          "fence" : rc == 0 ? ": 0 tells the log to move past a batch that is not in" : "");
			int again = fence_apply(db, &b);
			lt_expect(again == 1 && stored_last(t, 2) == end && views_of(t, 1) == views &&
			          views_of(t, shapes[s].videos) == views, "one-transaction", "the same batch "
			          "0 .. %lld delivered again after the connection broke at statement %d "
			          "returned %d, partition 2 at %lld, video 1 at %lld views (expected 1, %lld "
			          "and %lld)", (long long)end, k, again, (long long)stored_last(t, 2),
			          (long long)views_of(t, 1), (long long)end, (long long)views);
		}
	}
}

/* A consumer whose connection the server closed (a restart, a failover,
 * an idle timeout): fence_handle cannot apply its batch, so it is an
 * error whatever it knows of the connection, and the log delivers the
 * batch again. 0 would commit the log's hint past views that are not in
 * the database. */
static void fence_handle__a_closed_connection_is_an_error(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	struct kit_db *gone = labtest_connect(t);
	lt_expect(lt_end_session(t, gone, false), NULL, "the server still lists the test's "
	          "connection 5 s after the test ended it");
	struct fence_event ev[2] = { { 5 }, { 6 } };
	struct kit_log_record recs[2] = { { 0, sizeof ev[0], &ev[0] }, { 1, sizeof ev[1], &ev[1] } };
	int rc = fence_handle(gone, 1, recs, 2);
	kit_db_close(gone);
	lt_expect(rc < 0 && stored_last(t, 1) == -1, "handle-error", "fence_handle on a connection the "
	          "server had closed returned %d with partition 1 stored at %lld; expected an error "
	          "(the batch is not in the database, and the log must deliver it again)%s", rc,
	          (long long)stored_last(t, 1), rc == 0 ? ": 0 moves the log's hint past it, and a "
	          "consumer that does not seek from the database loses those views" : "");
}

/* ---- a producer retry: the same view at two offsets ---- */

/* The app appends a view of video 7; the log writes it, the answer is
 * lost (a timeout), the app appends it again. The log now holds one view
 * twice, at offsets 5 and 6 of partition 0, and the fence, which counts
 * offsets, applies both once: video 7 gets 2 views. That is your
 * consumer being right about offsets, and the count being wrong about
 * views. Then the same retry with an event id that the database keeps
 * under a unique key, in the transaction of the totals (this check's own
 * consumer, not yours): 1 view. */
struct view_with_id {
	int64_t video_id;
	int64_t event_id;   /* made once by the producer, the same on a retry */
};

/* Partition 0's records, each a struct view_with_id: count each event id
 * once (INSERT ... ON CONFLICT DO NOTHING, INSERT IGNORE on MariaDB;
 * changes() says whether it was new), all in one transaction. Returns the
 * views counted, < 0 on error. */
static int64_t apply_with_ids(struct kit_db *db, const struct kit_log_record *recs, int n)
{
	bool my = kit_db_engine(db) == KIT_DB_MYSQL;
	int64_t counted = 0;
	int rc = kit_db_begin(db);
	for (int i = 0; rc == 0 && i < n; i++) {
		struct view_with_id v;
		char id[24], video[24];
		memcpy(&v, recs[i].data, sizeof v);
		snprintf(id, sizeof id, "%lld", (long long)v.event_id);
		snprintf(video, sizeof video, "%lld", (long long)v.video_id);
		rc = kit_db_exec(db, my ? "INSERT IGNORE INTO seen_events (event_id) VALUES ($1)"
		                        : "INSERT INTO seen_events (event_id) VALUES ($1) ON CONFLICT DO NOTHING",
		                 1, (const char *[]){ id });
		if (rc == 0 && kit_db_changes(db) == 1) {
			counted++;
			rc = kit_db_exec(db, my ? "INSERT INTO video_views (video_id, views) VALUES ($1, 1) "
			                          "ON DUPLICATE KEY UPDATE views = views + 1"
			                        : "INSERT INTO video_views (video_id, views) VALUES ($1, 1) "
			                          "ON CONFLICT (video_id) DO UPDATE SET views = video_views.views + 1",
			                 1, (const char *[]){ video });
		}
	}
	if (rc == 0)
		rc = kit_db_commit(db);
	else
		kit_db_rollback(db);
	return rc == 0 ? counted : rc;
}

static void fence_handle__retried_append_counts_twice(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	char dir[512];
	struct kit_log *log = make_log(dir, sizeof dir, 5);   /* videos 1, 2, 3, 1, 2 at 0 .. 4 */
	struct fence_event ev = { 7 };
	int64_t first = -1, again = -1, end = 0;
	kit_log_append(log, 0, &(struct kit_log_iov){ &ev, sizeof ev }, 1, &first);
	/* ... the answer is lost on the way back: the producer retries */
	kit_log_append(log, 0, &(struct kit_log_iov){ &ev, sizeof ev }, 1, &again);
	kit_log_end(log, 0, &end);

	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = labtest_db(t) };
	kit_log_join(&c, log, FENCE_GROUP, "solo", &cb);
	int n;
	while ((n = kit_log_poll(c, 100, fence_handle, labtest_db(t))) > 0)
		;
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);

	lt_expect_int(end, 7, "records in partition 0: 5, then one view appended twice");
	lt_expect(n == 0, "totals", "kit_log_poll with fence_handle failed (%d): %s", n,
	          labtest_why(labtest_db(t)));
	lt_expect_int_hint(stored_last(t, 0), again, "partition 0's last_offset: both copies applied, "
	                   "each once (the fence sees two offsets)", "totals");
	lt_expect_int_hint(views_of(t, 7), 2, "views of video 7 after ONE view appended twice by a "
	                   "retry: the fence counts offsets, so the duplicate is counted (§7)", "totals");

	/* The same retry with an event id kept in the database. */
	labtest_exec(t, "CREATE TABLE seen_events (event_id BIGINT PRIMARY KEY)");
	labtest_exec(t, "DELETE FROM video_views");
	struct view_with_id v = { 7, 4211 };
	struct kit_log_record recs[2] = { { first, sizeof v, &v }, { again, sizeof v, &v } };
	int64_t counted = apply_with_ids(labtest_db(t), recs, 2);
	lt_expect_int(counted, 1, "views counted from the two copies by a consumer that keeps event ids "
	              "unique in the database");
	lt_expect_int(views_of(t, 7), 1, "views of video 7 with event ids");
}

/* ---- the mistake classes: every step failing, edges, order ---- */

static int64_t views_of_id(struct labtest *t, int64_t video)
{
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT COALESCE(SUM(views), 0) FROM video_views WHERE video_id = %lld",
	         (long long)video);
	return labtest_int(t, sql);
}

/* A COMMIT that fails, and a read-back that must name this batch: 1 only
 * when partition 2's own stored offset is this batch's last. Partition
 * 3 stands at the same last offset (another partition's progress), and
 * between the refused COMMIT and the call's next statement another
 * process applies a shorter batch of partition 2 from the same start
 * (offsets 0 .. 4). Neither is this batch: the answer is the COMMIT's
 * own error (fence.h: after a failed COMMIT, 1 only when the call reads
 * back that its batch is in, otherwise the COMMIT's code, never 1 or 0),
 * its views are not in, and partition 2 stays at 4. A read-back that
 * forgets the partition, or that takes "at or past the first offset" for
 * "in", answers 1; one that takes a stored offset moved by another for
 * the fence's refusal ("it refuses this batch now") answers 0. Either way
 * the log moves past views that nobody counted (5 .. 9 here). */
struct readback_trap {
	struct labtest *t;
	int state;          /* 0 before the COMMIT, 1 refused, 2 the other batch applied */
};

static void readback_trap_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct readback_trap *r = arg;
	(void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || sql == NULL)
		return;
	if (r->state == 0 && lt_sql_is(sql, "COMMIT")) {
		lt_step_arm(LT_STEP_FAILS, 1);
		r->state = 1;
	} else if (r->state == 1 && !lt_sql_is(sql, "ROLLBACK")) {
		labtest_exec(r->t, "UPDATE log_progress SET last_offset = 4 WHERE part = 2");
		r->state = 2;
	}
}

static void fence_apply__read_back_names_its_own_batch(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	labtest_exec(t, "UPDATE log_progress SET last_offset = 9 WHERE part = 3");
	struct kit_db *db = labtest_connect(t);
	struct fence_batch b = *batch(2, 0, 9, 3, 4);
	struct readback_trap r = { .t = t };
	kit_db_set_hook(db, readback_trap_hook, &r);
	int rc = fence_apply(db, &b);
	kit_db_set_hook(db, NULL, NULL);
	bool reached = lt_step_disarm();
	kit_db_close(db);
	lt_expect(reached, NULL, "fence_apply of partition 2's offsets 0 .. 9 sent no COMMIT");
	lt_expect(rc == KIT_DB_ERR && views_of(t, 1) == 0 && stored_last(t, 2) == (r.state == 2 ? 4 : -1),
	          "one-transaction", "fence_apply of partition 2's offsets 0 .. 9, its COMMIT "
	          "refused (KIT_DB_ERR), returned %d; the views of video 1 are %lld and partition 2 "
	          "stands at %lld (partition 3 at 9, and %s). Expected the COMMIT's own code, %d, "
	          "nothing in, partition 2 at %s: the batch is not in. %s The log then moves past "
	          "views nobody counted", rc, (long long)views_of(t, 1), (long long)stored_last(t, 2),
	          r.state == 2 ? "after the COMMIT another process applied partition 2's offsets "
	          "0 .. 4" : "no statement came after the COMMIT", KIT_DB_ERR, r.state == 2 ? "4" : "-1",
	          rc == 1 ? "1 only when partition 2's own stored offset is this batch's last (9); a "
	          "read-back that forgets the partition finds partition 3 at 9, and one that takes "
	          "\"at or past the first offset\" for \"in\" takes another batch for this one." :
	          rc == 0 ? "0 says the fence refused the batch as applied before: does the read-back "
	          "answer 0 when the stored offset is neither this batch's last nor the one before "
	          "its first (\"moved by another: the fence refuses it now\")? fence.h: after a "
	          "failed COMMIT the answer is 1 (read back as in) or the COMMIT's own code, never "
	          "0; 4 stored says offsets 5 .. 9 are in nobody's count." :
	          "Keep the COMMIT's own code: what runs after it only decides between that code "
	          "and 1.");
}

/* fence_apply fails at each of its statements in turn: refused before it
 * runs, or run with its answer lost (the COMMIT's too). Every time it
 * returns an error, or 1 when its batch is in, once (a lost COMMIT answer
 * read back, or a refusal tried again: true, and what the log needs to
 * hear); a refused statement that it answered with an error leaves the database as it was;
 * and the same batch delivered again then counts exactly once (applied
 * now, or found applied when it was the COMMIT's answer that was lost),
 * on the same connection: no transaction is left open behind the error. */
/* The batch is offsets at .. at + 9 of partition 2, right after what is
 * stored (at - 1): 0 for the check below, and past 2^31, 2^32 and near
 * INT64_MAX for the one after it. */
static void every_step(struct labtest *t, int64_t at)
{
	struct kit_db *db = labtest_db(t);
	size_t base = lt_alloc_live();
	char start[128];
	snprintf(start, sizeof start, "DELETE FROM video_views; UPDATE log_progress SET last_offset = %lld",
	         (long long)(at - 1));

	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
		for (int k = 1; k <= 20; k++) {
			labtest_exec(t, start);
			labtest_exec(t, "INSERT INTO video_views (video_id, views) VALUES (1, 100)");
			struct fence_batch b = *batch(2, at, at + 9, 3, 4);
			struct lt_tx_watch w = { 0 };
			kit_db_set_hook(db, lt_tx_watch_hook, &w);
			lt_step_arm(how, k);
			int rc = fence_apply(db, &b);
			bool reached = lt_step_disarm();
			kit_db_set_hook(db, NULL, NULL);
			if (!reached) {
				lt_expect_int_hint(rc, 1, "fence_apply's result with nothing failing", "fence");
				break;
			}
			/* A failed step is one of the call's ways out: whatever it
			 * made (the statement's text, its parameters) is freed there
			 * too, or a consumer that retries through an outage grows
			 * with every poll. */
			char what[120];
			snprintf(what, sizeof what, "fence_apply whose statement %d was %s", k,
			         lt_step_what(how));
			lt_alloc_expect_none_left(base, what);
			/* Nor does a lock of the session outlive the call on any of
			 * them: a session-level pg_advisory_lock left held after a lost
			 * answer or a refused unlock stops the partition's next owner,
			 * on another connection, batch after batch. */
			int64_t advisory = lt_session_user_locks(t, db);
			lt_expect(advisory == 0, "one-transaction", "statement %d of fence_apply %s: "
			          "afterwards its session still holds %lld advisory lock(s) (pg_advisory_lock, "
			          "GET_LOCK): a lock whose answer was lost was granted all the same, and a "
			          "refused unlock let nothing go; the next owner of the partition, on "
			          "another connection, waits on it. Take none (the fence row's lock already "
			          "keeps two batches apart), or pg_advisory_xact_lock, which the "
			          "transaction's end lets go on every path", k,
			          lt_step_what(how), (long long)advisory);
			lt_expect(w.outside == 0, "one-transaction", "statement %d of fence_apply %s: it "
			          "then sent %d write(s) with no transaction open, the first \"%s...\" "
			          "(returned %d): a statement whose answer was lost, or a refused COMMIT, "
			          "has ended the transaction (the connection rolled it back), so a "
			          "statement sent again after it commits on its own, the fence apart from "
			          "the totals. Return the error", k,
			          lt_step_what(how), w.outside, w.first, rc);
			/* 1 is true when the batch is in, once: a COMMIT whose answer was
			 * lost did commit, and a call that read back finds it so. Any
			 * other step's lost answer rolled back. After a refused step 1
			 * means the call tried again itself, which fence.h rules out:
			 * the refusal ends the call, and the log delivers the batch
			 * again. */
			bool in = stored_last(t, 2) == at + 9 && views_of(t, 1) == 104 && views_of(t, 2) == 4 &&
			          views_of(t, 3) == 4;
			lt_expect(!lt_step_refused(how) || rc != 1, "one-transaction", "statement %d of "
			          "fence_apply %s, and it returned 1 with the batch %s: it tried again "
			          "itself. fence.h: a refused statement ends the call with its code, at "
			          "once; the log delivers the batch again (a retry inside holds the "
			          "partition's consumer for a lock wait more each time)", k,
			          lt_step_what(how), in ? "in" : "not in");
			lt_expect(rc < 0 || (rc == 1 && in), "one-transaction", "statement %d of fence_apply "
			          "%s, yet it returned %d (%s)", k, lt_step_what(how), rc, rc == 1 ? "1, applied: is COMMIT's result "
			          "checked, and checked before the answer is decided?" : rc == 0 && !lt_step_refused(how) ?
			          "0, refused by the fence: a statement whose answer was lost is an error "
			          "(or, read back, 1 when its batch is in), not a refusal: 0 tells the log to "
			          "move past the batch whether or not it is stored" : rc == 0 ? "0, refused "
			          "by the fence: a failed statement is an error, not a refusal (a lock wait "
			          "that gave up, KIT_DB_BUSY, too: the batch is not in the database, and 0 "
			          "tells the log to move past it)" : "?");
			lt_expect(how != LT_STEP_BUSY || rc >= 0 || rc == KIT_DB_BUSY, "one-transaction",
			          "statement %d of fence_apply refused as KIT_DB_BUSY (%d: a lock wait that gave "
			          "up), and fence_apply returned %d: return the database's own code, so the "
			          "caller can tell a lock wait worth retrying soon from a hard failure", k,
			          KIT_DB_BUSY, rc);
			if (lt_step_refused(how) && rc < 0) {
				lt_expect(stored_last(t, 2) == at - 1 && views_of(t, 1) == 100 && views_of(t, 2) == 0,
				          "one-transaction", "statement %d of fence_apply refused: partition 2's "
				          "last_offset is %lld and videos 1 and 2 have %lld and %lld views, not %lld, "
				          "100 and 0 as before the call", k, (long long)stored_last(t, 2),
				          (long long)views_of(t, 1), (long long)views_of(t, 2), (long long)(at - 1));
			}
			int again = fence_apply(db, &b);
			lt_expect(again == 0 || again == 1, "one-transaction", "statement %d of fence_apply %s, "
			          "then the same batch again on the same connection: %d (%s)", k,
			          lt_step_what(how), again, labtest_why(db));
			lt_expect(stored_last(t, 2) == at + 9 && views_of(t, 1) == 104 && views_of(t, 2) == 4 &&
			          views_of(t, 3) == 4, "one-transaction", "statement %d of fence_apply %s, then "
			          "the batch delivered again: last_offset %lld, views %lld, %lld, %lld of "
			          "videos 1..3; expected %lld, and 104, 4, 4 (4 views each, once)", k,
			          lt_step_what(how), (long long)stored_last(t, 2), (long long)views_of(t, 1),
			          (long long)views_of(t, 2), (long long)views_of(t, 3), (long long)(at + 9));
		}
	}
}

static void fence_apply__every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	every_step(t, 0);
}

/* The same, with the batch's offsets past 2^31 (2^31 + 7 .. 2^31 + 16),
 * past 2^32, and ending at INT64_MAX - 1: a failure path has numbers of
 * its own to compare. A read-back after a refused COMMIT that takes the
 * batch's last offset as an int ("stored >= last", last wrapped
 * negative) finds any stored offset at or past it and answers 1 for a
 * batch that is not in; the log then moves past views nobody counted. */
static void fence_apply__every_step_can_fail_past_2_31(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	every_step(t, LT_PAST_INT32 + 7);
	every_step(t, LT_PAST_UINT32 + 7);
	every_step(t, INT64_MAX - 10);
}

/* Two refusals in a row: statement k of fence_apply refused (as
 * KIT_DB_BUSY, or with an error), then statement k + 1 refused too,
 * with the other code (the ROLLBACK after it, or a read-back after a
 * refused COMMIT: a connection that is going away). The answer is the
 * first refusal's own code: a busy COMMIT stays KIT_DB_BUSY whatever
 * the statement after it met (fence.h). And the call sends no refused
 * statement again: "It does not try again", not even a read-back "in
 * case the link blipped"; the log delivers the batch again. Then the
 * same batch, delivered again, counts once. */
struct refused_twice {
	int stmts;               /* statements started since the call began */
	int k;                   /* the first refused one; k + 1 is the second */
	char refused[2][256];    /* their text, cut short */
	int again;               /* a refused statement sent again after its refusal */
	char what[80];
};

static void refused_twice_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct refused_twice *r = arg;
	(void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || sql == NULL)
		return;
	int n = ++r->stmts;
	if (n == r->k || n == r->k + 1) {
		snprintf(r->refused[n - r->k], sizeof r->refused[0], "%s", sql);
		return;
	}
	if (n < r->k || lt_sql_is(sql, "ROLLBACK"))
		return;
	for (int i = 0; i < 2; i++) {
		if (r->refused[i][0] && strncmp(sql, r->refused[i], sizeof r->refused[i] - 1) == 0) {
			if (r->again++ == 0)
				snprintf(r->what, sizeof r->what, "%s", sql);
		}
	}
}

static void fence_apply__two_refusals_in_a_row(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	prepare(t);
	for (int busy_first = 1; busy_first >= 0; busy_first--) {
		int code = busy_first ? KIT_DB_BUSY : KIT_DB_ERR;
		for (int k = 1; k <= 20; k++) {
			labtest_exec(t, "DELETE FROM video_views; UPDATE log_progress SET last_offset = -1");
			struct fence_batch b = *batch(2, 0, 9, 3, 4);
			struct refused_twice r = { .k = k };
			kit_fp_clear();
			/* stmt_start asks db-stmt-fails first and db-stmt-busy only
			 * when that passes: busy on its k-th look is statement k
			 * either way, fails on its k-th is statement k, on its
			 * (k + 1)-th statement k + 1 */
			if (kit_fp_set("db-stmt-busy", KIT_FP_ONCE, k) != 0 ||
			    kit_fp_set("db-stmt-fails", KIT_FP_ONCE, busy_first ? k + 1 : k) != 0)
				fail_msg("cannot arm the step failpoints");
			kit_db_set_hook(db, refused_twice_hook, &r);
			int rc = fence_apply(db, &b);
			kit_db_set_hook(db, NULL, NULL);
			kit_fp_clear();
			if (r.stmts < k)
				break;
			const char *first = busy_first ? "refused as busy (KIT_DB_BUSY)" : "refused with an error";
			const char *second = busy_first ? "with an error" : "as busy";
			lt_expect(rc == code, "one-transaction", "statement %d of fence_apply (\"%.40s\") %s, "
			          "then statement %d (\"%.40s\") refused %s: fence_apply returned %d; "
			          "expected the first refusal's own code, %d%s", k, r.refused[0], first, k + 1,
			          r.refused[1], second, rc, code, rc == (busy_first ? KIT_DB_ERR : KIT_DB_BUSY) ?
			          ": the second statement's code took its place (a read-back after a failed "
			          "COMMIT, or the ROLLBACK, that failed too). fence.h: \"the COMMIT's own "
			          "negative code (KIT_DB_BUSY stays KIT_DB_BUSY)\"; keep the first code, and "
			          "let what runs after it only decide between that code and 1" : "");
			lt_expect(r.again == 0, "one-transaction", "statement %d of fence_apply (\"%.40s\") "
			          "%s, then statement %d (\"%.40s\") refused %s: fence_apply then sent a "
			          "refused statement again (%d time(s), the first \"%.60s\"), and returned %d. "
			          "fence.h: \"It does not try again\": a refusal ends the call with its code at "
			          "once (one ROLLBACK apart), and the log delivers the batch again; a read-back "
			          "tried again \"in case the link blipped\" holds the partition's consumer on a "
			          "connection that is going away", k, r.refused[0], first, k + 1, r.refused[1],
			          second, r.again, r.what, rc);
			kit_db_rollback(db);
			lt_expect(stored_last(t, 2) == -1 && views_of(t, 1) == 0, "one-transaction",
			          "statements %d and %d of fence_apply refused, and it returned %d: partition 2 "
			          "then stands at %lld and video 1 has %lld views; expected -1 and 0 (nothing "
			          "committed)", k, k + 1, rc, (long long)stored_last(t, 2),
			          (long long)views_of(t, 1));
			int again = fence_apply(db, &b);
			lt_expect(again == 1 && stored_last(t, 2) == 9 && views_of(t, 1) == 4 &&
			          views_of(t, 3) == 4, "one-transaction", "statements %d and %d of fence_apply "
			          "refused, then the same batch again on the same connection: returned %d, "
			          "partition 2 at %lld, video 1 at %lld views (expected 1, 9 and 4): %s", k,
			          k + 1, again, (long long)stored_last(t, 2), (long long)views_of(t, 1),
			          labtest_why(db));
		}
	}
}

/* The position of video's row in the order the rows were inserted
 * (tests/harness/labtest.h). */
static int64_t insert_rank(struct labtest *t, int64_t video)
{
	return labtest_insert_rank(t, "video_views", "video_id", video);
}

/* §4: "Sort the totals by video_id". One batch (offsets 8..16) of views
 * of eight videos, first seen in the order 5, 16, 2^32 + 1, 7, INT64_MAX,
 * 2^31 + 2, -3, INT64_MAX - 1 (ids an int cuts; INT64_MAX, 19 digits, that
 * a short buffer cuts and that a comparator taking x - y overflows against
 * -3; INT64_MAX - 1, which a comparator through a double finds equal to
 * INT64_MAX, both being 2^63 there, and so leaves after it;
 * 16 is also the batch's last offset, which a search that starts before
 * totals[0] reads as an id): every total exact, and the upsert brings
 * their rows in ascending id order, which the fresh table keeps as its
 * insertion order. The records lie at odd addresses, as nothing in
 * kit/log.h promises a struct fence_event's alignment: read through a
 * cast pointer, make SAN=undefined reports them. */
static void fence_handle__totals_in_video_id_order(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	labtest_insert_order_watch(t, "video_views", "video_id");   /* MariaDB: InnoDB keeps no insertion order */
	enum { EVENTS = 9, VIDEOS = 8 };
	const int64_t ids[EVENTS] = { 5, 16, LT_PAST_UINT32, 7, INT64_MAX, LT_PAST_INT32 + 2, -3, 5,
	                              INT64_MAX - 1 };
	const int64_t sorted[VIDEOS] = { -3, 5, 7, 16, LT_PAST_INT32 + 2, LT_PAST_UINT32,
	                                 INT64_MAX - 1, INT64_MAX };
	const int64_t views[VIDEOS] = { 1, 2, 1, 1, 1, 1, 1, 1 };
	static unsigned char raw[1 + EVENTS * sizeof(struct fence_event)];
	struct kit_log_record recs[EVENTS];
	for (int i = 0; i < EVENTS; i++) {
		unsigned char *at = raw + 1 + i * sizeof(struct fence_event);   /* odd address */
		memcpy(at, &(struct fence_event){ ids[i] }, sizeof(struct fence_event));
		recs[i] = (struct kit_log_record){ 8 + i, sizeof(struct fence_event), at };
	}
	labtest_exec(t, "UPDATE log_progress SET last_offset = 7 WHERE part = 1");

	lt_sort_reset();
	int rc = fence_handle(labtest_db(t), 1, recs, EVENTS);
	int inconsistent = lt_sort_inconsistent();

	lt_expect(rc == 0, "totals", "fence_handle of a 9-event batch returned %d: %s", rc,
	          labtest_why(labtest_db(t)));
	lt_expect_int_hint(stored_last(t, 1), 16, "partition 1's last_offset after its batch 8..16",
	                   "totals");
	lt_expect(inconsistent == 0, "sorted", "the comparator given to qsort answered %d pairs of "
	          "the sorted totals (neighbours, -3 against INT64_MAX, the first against itself) "
	          "inconsistently: cmp(a, b) and cmp(b, a) must have opposite signs (or both be 0), a "
	          "sorted before b must not compare above it, and a against itself is 0. One that returns only 0 and 1 (return x > y;) sorts right "
	          "under glibc 2.36's merge sort and wrong under a quicksort; one that takes the sign "
	          "of x - y overflows on ids far apart. Return (x > y) - (x < y)", inconsistent);
	for (int i = 0; i < VIDEOS; i++) {
		lt_expect(views_of_id(t, sorted[i]) == views[i], "totals", "video %lld has %lld views "
		          "after the batch, expected %lld (is a video id kept in an int, or printed "
		          "into a buffer too short for 19 digits?)",
		          (long long)sorted[i], (long long)views_of_id(t, sorted[i]), (long long)views[i]);
		lt_expect(insert_rank(t, sorted[i]) == i, "sorted", "the upsert wrote video %lld's row "
		          "as number %lld of 8, expected number %d: the totals must reach it in ascending "
		          "video_id (-3, 5, 7, 16, 2^31 + 2, 2^32 + 1, INT64_MAX - 1, INT64_MAX; §4, on every "
		          "engine: InnoDB's deadlock detection does not make the order free), "
		          "compared as 64-bit ids with < and > (x - y overflows when the ids are far "
		          "apart; a double has 53 bits and finds INT64_MAX - 1 equal to INT64_MAX)",
		          (long long)sorted[i], (long long)insert_rank(t, sorted[i]) + 1, i + 1);
	}

	/* The smallest batch that has an order: two videos, 9 seen before 3
	 * (partition 2, offsets 0..2). Their rows come after the eight. */
	const int64_t two[3] = { 9, 3, 9 };
	struct kit_log_record recs2[3];
	for (int i = 0; i < 3; i++) {
		unsigned char *at = raw + 1 + i * sizeof(struct fence_event);
		memcpy(at, &(struct fence_event){ two[i] }, sizeof(struct fence_event));
		recs2[i] = (struct kit_log_record){ i, sizeof(struct fence_event), at };
	}
	rc = fence_handle(labtest_db(t), 2, recs2, 3);
	lt_expect(rc == 0 && views_of_id(t, 3) == 1 && views_of_id(t, 9) == 2, "totals",
	          "fence_handle of a 3-event batch of videos 9, 3, 9 returned %d (%s); videos 3 and 9 "
	          "have %lld and %lld views (expected 1 and 2)", rc, labtest_why(labtest_db(t)),
	          (long long)views_of_id(t, 3), (long long)views_of_id(t, 9));
	lt_expect(insert_rank(t, 3) == VIDEOS && insert_rank(t, 9) == VIDEOS + 1, "sorted",
	          "a batch of two videos, 9 seen before 3: the upsert wrote video 3's row as number "
	          "%lld and video 9's as number %lld of 10, expected 9 and 10 (ascending video_id). Are "
	          "the totals sorted only when there are more than two? Two rows are locked in an "
	          "order too, and two batches that take 3 and 9 in opposite orders wait for each "
	          "other: sort every batch", (long long)insert_rank(t, 3) + 1,
	          (long long)insert_rank(t, 9) + 1);
}

/* fence_handle's domain: every record a struct fence_event, at most
 * FENCE_MAX_VIDEOS distinct videos in one batch. A batch outside it is
 * refused whole (an error, nothing applied, the offset unchanged); one at
 * the edge, exactly FENCE_MAX_VIDEOS videos, is applied whole. The ids
 * are 4,096 apart (and one is INT64_MAX, one INT64_MIN, one 0, one -1): a table that finds a
 * video by its id modulo a small size puts them all in one place, and one that takes a slot
 * whose id is 0 (or -1, "ids are never negative") for a free one adds the next new video's
 * views to that video. */
static int64_t cannot_hold_id(int i)
{
	return i == 4 ? 0 : i == 5 ? INT64_MAX : i == 6 ? INT64_MIN : i == 7 ? -1
	       : 1000 + (int64_t)i * 4096;
}

static void fence_handle__refuses_a_batch_it_cannot_hold(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	prepare(t);
	enum { N = FENCE_MAX_VIDEOS + 40 };
	static struct fence_event ev[N];
	static struct kit_log_record recs[N];
	for (int i = 0; i < N; i++) {
		ev[i].video_id = cannot_hold_id(i);
		recs[i] = (struct kit_log_record){ i, sizeof ev[i], &ev[i] };
	}

	/* one record too short, its 4 bytes the last of a page the process
	 * may read, the next page unreadable: a handler that copies 8 bytes
	 * out of a record before it looks at its length faults here (at the
	 * end of a mapping, as a log's last record can lie), where an
	 * overflow into a heap block would go unseen */
	long page = sysconf(_SC_PAGESIZE);
	char *two = mmap(NULL, (size_t)(2 * page), PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(two != MAP_FAILED);
	assert_int_equal(mprotect(two + page, (size_t)page, PROT_NONE), 0);
	char *half = two + page - (sizeof ev[3] - 4);
	memcpy(half, &ev[3], sizeof ev[3] - 4);
	recs[3] = (struct kit_log_record){ 3, sizeof ev[3] - 4, half };
	int rc = fence_handle(db, 0, recs, 6);
	recs[3] = (struct kit_log_record){ 3, sizeof ev[3], &ev[3] };
	munmap(two, (size_t)(2 * page));
	lt_expect(rc < 0, "totals", "fence_handle of 6 records, the 4th only %zu bytes long, "
	          "returned %d: a record that is not a struct fence_event is an error", sizeof ev[3] - 4, rc);
	lt_expect(stored_last(t, 0) == -1 && labtest_int(t, "SELECT count(*) FROM video_views") == 0,
	          "totals", "a batch with a short record was refused, yet partition 0's last_offset is "
	          "%lld and video_views has %lld rows (expected -1 and none: refused whole)",
	          (long long)stored_last(t, 0), (long long)labtest_int(t, "SELECT count(*) FROM video_views"));

	/* one record too long: 16 bytes are not a struct fence_event either
	 * (whose 8 bytes would be a guess), not even when the 8 past the event
	 * are all zero (a handler that reads them as "a newer producer's
	 * padding" takes a record fence.h says is not an event) */
	int64_t longer[2] = { ev[3].video_id, 0 };
	recs[3] = (struct kit_log_record){ 3, sizeof longer, longer };
	rc = fence_handle(db, 0, recs, 6);
	recs[3] = (struct kit_log_record){ 3, sizeof ev[3], &ev[3] };
	lt_expect(rc < 0, "totals", "fence_handle of 6 records, the 4th %zu bytes long (an event, "
	          "then 8 zero bytes), returned %d: a record that is not a struct fence_event (%zu "
	          "bytes) is an error, longer ones too, whatever the bytes past the event hold",
	          sizeof longer, rc, sizeof(struct fence_event));
	lt_expect(stored_last(t, 0) == -1 && labtest_int(t, "SELECT count(*) FROM video_views") == 0,
	          "totals", "a batch with a long record was refused, yet partition 0's last_offset is "
	          "%lld and video_views has %lld rows (expected -1 and none: refused whole)",
	          (long long)stored_last(t, 0), (long long)labtest_int(t, "SELECT count(*) FROM video_views"));

	/* one record of no bytes at all: not "a tombstone to skip" (fence.h:
	 * any length other than a struct fence_event's is not an event) */
	recs[3] = (struct kit_log_record){ 3, 0, &ev[3] };
	rc = fence_handle(db, 0, recs, 6);
	recs[3] = (struct kit_log_record){ 3, sizeof ev[3], &ev[3] };
	lt_expect(rc < 0, "totals", "fence_handle of 6 records, the 4th 0 bytes long, returned %d: "
	          "a record of length 0 is not a struct fence_event either, so the batch is an error "
	          "(fence.h), not a batch with a tombstone skipped", rc);
	lt_expect(stored_last(t, 0) == -1 && labtest_int(t, "SELECT count(*) FROM video_views") == 0,
	          "totals", "a batch with an empty record was refused, yet partition 0's last_offset is "
	          "%lld and video_views has %lld rows (expected -1 and none: refused whole)",
	          (long long)stored_last(t, 0), (long long)labtest_int(t, "SELECT count(*) FROM video_views"));

	rc = fence_handle(db, 0, recs, FENCE_MAX_VIDEOS + 1);
	lt_expect(rc < 0, "totals", "fence_handle of a batch of %d distinct videos (the most is %d) "
	          "returned %d, expected an error (%s)", FENCE_MAX_VIDEOS + 1, FENCE_MAX_VIDEOS, rc,
	          rc == 0 && labtest_int(t, "SELECT count(*) FROM video_views") < FENCE_MAX_VIDEOS + 1 ?
	          "fewer rows than videos came out: were two videos added up in one total? A slot "
	          "whose id is 0 taken for a free one does that to video 0 and the next new video" :
	          "is the limit checked?");
	lt_expect(stored_last(t, 0) == -1 && labtest_int(t, "SELECT count(*) FROM video_views") == 0,
	          "totals", "a batch of %d distinct videos was refused, yet partition 0's last_offset "
	          "is %lld and video_views has %lld rows (expected -1 and none: refused whole, or "
	          "the views past the %d-th are lost)", FENCE_MAX_VIDEOS + 1,
	          (long long)stored_last(t, 0), (long long)labtest_int(t, "SELECT count(*) FROM video_views"),
	          FENCE_MAX_VIDEOS);

	int64_t want0 = 1, want3 = 1, want5 = 1, want6 = 1, want7 = 1;
	for (int i = FENCE_MAX_VIDEOS; i < N; i++) {   /* the last 40 repeat the first ones */
		ev[i].video_id = cannot_hold_id(i % 8);
		want0 += ev[i].video_id == 0;
		want3 += ev[i].video_id == cannot_hold_id(3);
		want5 += ev[i].video_id == cannot_hold_id(5);
		want6 += ev[i].video_id == cannot_hold_id(6);
		want7 += ev[i].video_id == cannot_hold_id(7);
	}
	rc = fence_handle(db, 0, recs, N);
	lt_expect(rc == 0, "totals", "fence_handle of %d events of exactly %d distinct videos "
	          "(ids 1000 + 4096 i, 0, -1, INT64_MAX and INT64_MIN) returned %d (%s) (does it find a video by its id "
	          "modulo a table size, without going on past a slot another video holds?)", N,
	          FENCE_MAX_VIDEOS, rc, labtest_why(db));
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM video_views"), FENCE_MAX_VIDEOS,
	                   "rows in video_views after a batch of exactly FENCE_MAX_VIDEOS videos", "totals");
	lt_expect_int_hint(labtest_int(t, "SELECT SUM(views) FROM video_views"), N,
	                   "views in video_views after that batch", "totals");
	lt_expect_int_hint(views_of_id(t, 0), want0,
	                   "views of video 0 (seen once, then again among the last 40; a slot whose "
	                   "id is 0 taken for a free one gives video 0 the views of the next new video)",
	                   "totals");
	lt_expect_int_hint(views_of_id(t, cannot_hold_id(3)), want3,
	                   "views of video 13288 (seen once, then again among the last 40)", "totals");
	lt_expect_int_hint(views_of_id(t, INT64_MAX), want5,
	                   "views of video INT64_MAX (seen once, then again among the last 40; is its "
	                   "id printed into a buffer too short for 19 digits?)", "totals");
	lt_expect_int_hint(views_of_id(t, INT64_MIN), want6,
	                   "views of video INT64_MIN (seen once, then again among the last 40; its "
	                   "text, -9223372036854775808, is 20 characters and a NUL: is it printed into "
	                   "a buffer too short for them, and cut to another id?)", "totals");
	lt_expect_int_hint(views_of_id(t, -1), want7,
	                   "views of video -1 (seen once, then again among the last 40; a video id "
	                   "is any int64_t: a table that marks its free slots with id -1 loses every "
	                   "view of video -1)", "totals");
	lt_expect_int_hint(stored_last(t, 0), N - 1, "partition 0's last_offset", "totals");

	/* exactly FENCE_MAX_VIDEOS videos again, every id 19 digits and a
	 * sign: written into the upsert's text, about 7 KB of it (a buffer
	 * sized for short ids, "256 videos fit in 4 KB", cuts the statement,
	 * and this batch can never be applied) */
	for (int i = 0; i < FENCE_MAX_VIDEOS; i++) {
		ev[i].video_id = INT64_MIN + 1 + (int64_t)i * 1000003;
		recs[i] = (struct kit_log_record){ N + i, sizeof ev[i], &ev[i] };
	}
	rc = fence_handle(db, 0, recs, FENCE_MAX_VIDEOS);
	lt_expect(rc == 0 && stored_last(t, 0) == N + FENCE_MAX_VIDEOS - 1, "totals",
	          "fence_handle of %d events of %d distinct videos whose ids all have 19 digits and a "
	          "sign (INT64_MIN + 1 + 1000003 i) returned %d, partition 0's last_offset is %lld "
	          "(expected 0 and %lld: %s). Is the upsert's text built in a fixed buffer sized for "
	          "short ids?", FENCE_MAX_VIDEOS, FENCE_MAX_VIDEOS, rc, (long long)stored_last(t, 0),
	          (long long)N + FENCE_MAX_VIDEOS - 1, labtest_why(db));
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM video_views WHERE video_id BETWEEN "
	                               "-9223372036854775807 AND -9000000000000000000"),
	                   FENCE_MAX_VIDEOS, "rows of those long-id videos in video_views", "totals");
}

/* One batch can hold many views of one video: a viral video fills whole
 * batches, and a consumer that fell behind asks for big ones. 70,000 views
 * of video 42 and one of video 43 in one batch (offsets 0..70,000): 70,000
 * and 1, exactly. A per-video count kept in a 16-bit integer ("a batch is
 * a few thousand events") wraps at 65,536 and loses 65,536 views. */
static void fence_handle__many_views_of_one_video(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	prepare(t);
	enum { N = 70001 };
	static const struct fence_event hot = { 42 }, other = { 43 };
	struct kit_log_record *recs = calloc(N, sizeof *recs);
	assert_non_null(recs);
	for (int i = 0; i < N; i++)
		recs[i] = (struct kit_log_record){ i, sizeof hot, i == N / 2 ? &other : &hot };
	int rc = fence_handle(db, 0, recs, N);
	free(recs);
	lt_expect(rc == 0, "totals", "fence_handle of a batch of %d records (70,000 views of video "
	          "42, one of video 43) returned %d (%s)", N, rc, labtest_why(db));
	int64_t v42 = views_of(t, 42), v43 = views_of(t, 43);
	lt_expect(v42 == 70000 && v43 == 1 && stored_last(t, 0) == N - 1, "totals",
	          "after a batch of 70,000 views of video 42 and one of video 43: %lld and %lld views, "
	          "partition 0 at %lld (expected 70000, 1 and %d)%s", (long long)v42, (long long)v43,
	          (long long)stored_last(t, 0), N - 1, v42 == 70000 - 65536 ? ": the count wrapped at "
	          "65,536; is a video's count kept in a 16-bit integer? Count in the int64_t views of "
	          "its struct fence_total" : "");

	/* A consumer far behind asks for more still: 2^20 + 1 records on
	 * partition 1. fence.h takes any n; a batch refused for its size
	 * ("no poll brings a million") comes back at every poll, and the
	 * partition stops counting for good. */
	enum { BIG = (1 << 20) + 1 };
	recs = calloc(BIG, sizeof *recs);
	assert_non_null(recs);
	for (int i = 0; i < BIG; i++)
		recs[i] = (struct kit_log_record){ i, sizeof hot, i == 7 ? &other : &hot };
	labtest_exec(t, "DELETE FROM video_views");
	rc = fence_handle(db, 1, recs, BIG);
	free(recs);
	v42 = views_of(t, 42);
	v43 = views_of(t, 43);
	lt_expect(rc == 0 && v42 == BIG - 1 && v43 == 1 && stored_last(t, 1) == BIG - 1, "totals",
	          "fence_handle of a batch of %d records on partition 1 (1,048,576 views of video "
	          "42, one of video 43) returned %d, then %lld and %lld views, partition 1 at %lld "
	          "(expected 0, 1048576, 1 and %d): fence.h takes a batch of any size; is there a "
	          "cap on the records of a batch? Refused, the batch comes back at every poll and "
	          "the partition stops counting", BIG, rc, (long long)v42, (long long)v43,
	          (long long)stored_last(t, 1), BIG - 1);
}

/* Two consumers in one process (hotrow lab run 05 runs them as threads),
 * each on its own connection: consumer 0 handles 4 views of videos 100 and
 * 101 from partition 0 while consumer 1 handles 10 views of video 200
 * from partition 1. The gate holds consumer 0 before each of its
 * statements in turn while consumer 1 runs whole: each batch must still be
 * its own. A batch built in memory every thread shares (a static struct
 * fence_batch, to spare an allocation) is refilled by the other consumer
 * in between. */
struct two_batches {
	struct fence_event ev[2][10];
	struct kit_log_record recs[2][10];
	int n[2];
};

static int handle_own_batch(void *arg, int who, struct kit_db *db)
{
	struct two_batches *b = arg;
	return fence_handle(db, who, b->recs[who], b->n[who]);
}

/* Consumer 0's batch and consumer 1's, for lt_beside_commit(). */
static int handle_batch_0(void *arg, struct kit_db *db)
{
	return handle_own_batch(arg, 0, db);
}

static int handle_batch_1(void *arg, struct kit_db *db)
{
	return handle_own_batch(arg, 1, db);
}

static void fence_handle__threads_keep_their_own_batches(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	static struct two_batches b;
	b.n[0] = 4;
	b.n[1] = 10;
	for (int who = 0; who < 2; who++)
		for (int i = 0; i < b.n[who]; i++) {
			b.ev[who][i].video_id = who == 0 ? 100 + i % 2 : 200;
			b.recs[who][i] = (struct kit_log_record){ i, sizeof b.ev[who][i], &b.ev[who][i] };
		}
	struct lt_gate *g = lt_gate_open(t, 2);
	int rounds = 0;
	for (int k = 1; k <= 10; k++) {
		labtest_exec(t, "DELETE FROM video_views");
		labtest_exec(t, "UPDATE log_progress SET last_offset = -1");
		lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, handle_own_batch, &b);
		if (!lt_gate_held(g, 0))
			break;
		rounds++;
		int64_t v100 = views_of(t, 100), v101 = views_of(t, 101), v200 = views_of(t, 200);
		int64_t rows = labtest_int(t, "SELECT count(*) FROM video_views");
		lt_expect(lt_gate_rc(g, 0) == 0 && lt_gate_rc(g, 1) == 0, "own-batch", "consumer 0 held "
		          "before its statement %d while consumer 1 ran whole: fence_handle returned %d and "
		          "%d (%s)", k, lt_gate_rc(g, 0), lt_gate_rc(g, 1),
		          labtest_why(lt_gate_db(g, lt_gate_rc(g, 0) ? 0 : 1)));
		lt_expect(v100 == 2 && v101 == 2 && v200 == 10 && rows == 3 && stored_last(t, 0) == 3 &&
		          stored_last(t, 1) == 9, "own-batch", "consumer 0 (4 views of videos 100 and 101, "
		          "partition 0) held before its statement %d while consumer 1 (10 views of video "
		          "200, partition 1) ran whole: videos 100, 101 and 200 have %lld, %lld and %lld "
		          "views in %lld rows, partitions 0 and 1 stand at %lld and %lld (expected 2, 2, 10, "
		          "3 rows, 3 and 9). One consumer applied the other's batch: is the batch built in "
		          "memory that every thread shares, a static? Allocate it in each call",
		          k, (long long)v100, (long long)v101, (long long)v200, (long long)rows,
		          (long long)stored_last(t, 0), (long long)stored_last(t, 1));
	}
	lt_gate_close(g);
	lt_expect(rounds > 0, NULL, "consumer 0's fence_handle never reached a statement");

	/* The two partitions' consumers never wait for each other (§1: a
	 * video lives in one partition; §3: a zombie queues on its own
	 * partition's progress row). Consumer 0 is held at its COMMIT, its
	 * fence and its upsert done, while consumer 1 handles its batch of
	 * partition 1 on another connection: that must end within 5 s, while
	 * consumer 0 is still held. A lock wider than the partition's row
	 * (every progress row locked "in one order", LOCK TABLE log_progress)
	 * makes every consumer of the group queue behind every other's
	 * transaction. PostgreSQL and MariaDB: SQLite's writer has the whole
	 * file anyway. */
	if (t->engine == KIT_DB_SQLITE)
		return;
	labtest_exec(t, "DELETE FROM video_views");
	labtest_exec(t, "UPDATE log_progress SET last_offset = -1");
	struct lt_beside r;
	lt_beside_commit(t, handle_batch_0, handle_batch_1, &b, 5000, &r);
	lt_expect(r.held, "one-transaction", "consumer 0's fence_handle of partition 0 returned %d "
	          "without a COMMIT", r.held_rc);
	lt_expect(!r.held || (r.ended && r.side_rc == 0), "own-batch", "consumer 1's batch of partition 1 "
	          "%s while consumer 0's transaction of partition 0 was held at its COMMIT: "
	          "consumer 1 waited for a lock of consumer 0's, and consumers of different "
	          "partitions never share a row (a video lives in one partition). Is a lock wider "
	          "than the partition's own progress row taken: every log_progress row (SELECT ... "
	          "FOR UPDATE without WHERE part = $1), LOCK TABLE, an advisory lock of the group? "
	          "Then every consumer queues behind every other one",
	          r.what);
	lt_expect(r.held_rc == 0 && r.side_rc == 0 && views_of(t, 100) == 2 && views_of(t, 200) == 10 &&
	          stored_last(t, 0) == 3 && stored_last(t, 1) == 9, "own-batch", "the two consumers "
	          "returned %d and %d; videos 100 and 200 have %lld and %lld views, partitions 0 and 1 "
	          "stand at %lld and %lld (expected 0, 0, 2, 10, 3, 9)", r.held_rc, r.side_rc,
	          (long long)views_of(t, 100), (long long)views_of(t, 200),
	          (long long)stored_last(t, 0), (long long)stored_last(t, 1));
}

/* Two consumers of one process poll at the same moment, each on its own
 * connection, twenty times: partition 0's batch of 20,000 views of 100
 * videos and partition 1's of 20,000 views of 125 others, the two calls
 * let go together (a barrier), so that both add their events up at once
 * on the two cores. No statement comes between a batch's events and its
 * totals, so no gate can hold a consumer there: a batch built in memory
 * that every thread shares (a static "to spare a malloc per poll") is
 * caught here by running the two together, as a consumer group does. A
 * call that returns an error is delivered again alone, as the log would
 * (a lock wait between the two is no mistake); the views must then be
 * exact. */
#define AT_ONCE_EVENTS 20000
#define AT_ONCE_ROUNDS 20

struct at_once {
	struct kit_db *db;
	const struct kit_log_record *recs;
	int part, rc;
	int n;                   /* events in its batch; 0: AT_ONCE_EVENTS */
};

static void *run_at_once(void *arg)
{
	struct at_once *a = arg;
	a->rc = fence_handle(a->db, a->part, a->recs, a->n ? a->n : AT_ONCE_EVENTS);
	return NULL;
}

/* Both consumers' fence_handle let go together; a call that returned an
 * error is then delivered again alone, up to 3 times, as the log would (a
 * lock wait between the two is no mistake). Returns the calls delivered
 * again. */
static int both_at_once(struct at_once a[2])
{
	lt_at_once(2, run_at_once, a, sizeof a[0]);
	int again = 0;
	for (int who = 0; who < 2; who++)
		for (int tries = 0; a[who].rc < 0 && tries < 3; tries++, again++)
			a[who].rc = fence_handle(a[who].db, who, a[who].recs,
			                         a[who].n ? a[who].n : AT_ONCE_EVENTS);
	return again;
}

/* The two consumers' connections, closed. */
static void both_closed(struct at_once a[2])
{
	for (int who = 0; who < 2; who++)
		kit_db_close(a[who].db);
}

static void fence_handle__threads_at_once_keep_their_own_batches(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	static const int videos[2] = { 100, 125 }, first_video[2] = { 1000, 5000 };
	struct fence_event *ev = calloc(2 * AT_ONCE_EVENTS, sizeof *ev);
	struct kit_log_record *recs = calloc(2 * AT_ONCE_EVENTS, sizeof *recs);
	assert_non_null(ev);
	assert_non_null(recs);
	for (int who = 0; who < 2; who++)
		for (int i = 0; i < AT_ONCE_EVENTS; i++) {
			struct fence_event *e = &ev[who * AT_ONCE_EVENTS + i];
			e->video_id = first_video[who] + i % videos[who];
			recs[who * AT_ONCE_EVENTS + i] = (struct kit_log_record){ i, sizeof *e, e };
		}
	struct at_once a[2];
	for (int who = 0; who < 2; who++)
		a[who] = (struct at_once){ labtest_connect(t), recs + who * AT_ONCE_EVENTS, who, 0, 0 };
	int round, again = 0;
	char seen[200] = "";
	for (round = 1; round <= AT_ONCE_ROUNDS && !seen[0]; round++) {
		labtest_exec(t, "DELETE FROM video_views");
		labtest_exec(t, "UPDATE log_progress SET last_offset = -1");
		again += both_at_once(a);
		for (int who = 0; who < 2 && !seen[0]; who++) {
			char sql[200];
			snprintf(sql, sizeof sql, "SELECT count(*) FROM video_views WHERE video_id "
			         "BETWEEN %d AND %d AND views = %d", first_video[who],
			         first_video[who] + videos[who] - 1, AT_ONCE_EVENTS / videos[who]);
			int64_t right = labtest_int(t, sql);
			int64_t rows = labtest_int(t, "SELECT count(*) FROM video_views");
			int64_t last = stored_last(t, who);
			if (a[who].rc != 0 || right != videos[who] || rows != videos[0] + videos[1] ||
			    last != AT_ONCE_EVENTS - 1)
				snprintf(seen, sizeof seen, "consumer %d's fence_handle returned %d; %lld of "
				         "its %d videos have their %d views, of %lld rows in all (expected "
				         "%d); partition %d stands at %lld (expected %d)", who, a[who].rc,
				         (long long)right, videos[who], AT_ONCE_EVENTS / videos[who],
				         (long long)rows, videos[0] + videos[1], who, (long long)last,
				         AT_ONCE_EVENTS - 1);
		}
	}
	both_closed(a);
	free(ev);
	free(recs);
	lt_expect(!seen[0], "own-batch", "two consumers of one process called fence_handle at "
	          "the same moment, partition 0 with 20,000 views of videos 1000 to 1099 and "
	          "partition 1 with 20,000 of videos 5000 to 5124, each on its own connection; in "
	          "round %d of %d (%d call(s) delivered again alone after an error) %s. The two "
	          "batches were mixed while they were added up: is the batch built in memory that "
	          "every thread shares, a static? Allocate it in each call (or on the stack)",
	          round - 1, AT_ONCE_ROUNDS, again, seen);
}

/* Two consumers of one process meet a batch of a size neither has seen,
 * at the same moment: each round both handle n views of n videos of
 * their own partition, n new each round, the calls let go together. A
 * statement's text kept per size in a table every thread shares and
 * filled on first use with no lock is written by both at once; the plain
 * build mostly gets away with it (both write the same bytes), the race
 * pass of `hotrow lab check` (ThreadSanitizer) does not. The views must
 * be exact either way. */
static void fence_handle__threads_meet_a_new_size_at_once(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	static const int sizes[] = { 3, 29, 130, FENCE_MAX_VIDEOS };
	enum { MOST = FENCE_MAX_VIDEOS };
	struct fence_event *ev = calloc(2 * MOST, sizeof *ev);
	struct kit_log_record *recs = calloc(2 * MOST, sizeof *recs);
	assert_non_null(ev);
	assert_non_null(recs);
	struct at_once a[2];
	for (int who = 0; who < 2; who++)
		a[who] = (struct at_once){ labtest_connect(t), recs + who * MOST, who, 0, 0 };
	char seen[300] = "";
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && !seen[0]; k++) {
		int n = sizes[k];
		labtest_exec(t, "DELETE FROM video_views");
		labtest_exec(t, "UPDATE log_progress SET last_offset = -1");
		for (int who = 0; who < 2; who++)
			for (int i = 0; i < n; i++) {
				struct fence_event *e = &ev[who * MOST + i];
				e->video_id = (who + 1) * 10000 + i;
				recs[who * MOST + i] = (struct kit_log_record){ i, sizeof *e, e };
			}
		a[0].n = a[1].n = n;
		both_at_once(a);
		for (int who = 0; who < 2 && !seen[0]; who++) {
			char sql[200];
			snprintf(sql, sizeof sql, "SELECT count(*) FROM video_views WHERE video_id "
			         "BETWEEN %d AND %d AND views = 1", (who + 1) * 10000,
			         (who + 1) * 10000 + n - 1);
			int64_t right = labtest_int(t, sql);
			int64_t rows = labtest_int(t, "SELECT count(*) FROM video_views");
			if (a[who].rc != 0 || right != n || rows != 2 * n || stored_last(t, who) != n - 1)
				snprintf(seen, sizeof seen, "with batches of %d views of %d videos, consumer "
				         "%d's fence_handle returned %d (%s); %lld of its videos have their "
				         "view, of %lld rows in all (expected %d, %d rows)", n, n, who,
				         a[who].rc, a[who].rc ? labtest_why(a[who].db) : "", (long long)right,
				         (long long)rows, n, 2 * n);
		}
	}
	both_closed(a);
	free(ev);
	free(recs);
	lt_expect(!seen[0], "own-batch", "two consumers of one process called fence_handle at the "
	          "same moment, each on its own connection and partition, with batches of a size "
	          "new to both (3, 29, 130 and 256 views of as many videos): %s. Is something kept "
	          "between calls and shared by every thread (a statement's text cached per size, "
	          "a buffer) written by both at once? Build it in each call, or guard it", seen);
}

/* Two consumers of one process whose COMMITs both lose their answer at
 * the same moment, each on its own connection: partition 0's batch of
 * offsets 0 .. 9 (video 1) and partition 1's of offsets 0 .. 3 (video 2),
 * the two calls let go together, ten rounds. Both batches are in: each
 * call answers 1 (it read back its own partition) or the COMMIT's error
 * (it did not read back; fence.h allows both), never 0. A read-back that
 * keeps the partition's text in a buffer every thread shares (a static
 * "for a rare path") can ask about the other's partition, and answer from
 * the other's progress: the plain build sees that only when the two
 * reads cross and the answer comes out wrong; the race pass of `hotrow
 * lab check` (ThreadSanitizer, which the kit's failpoints do not order)
 * sees the two writes to the buffer every time. */
struct lost_commit {
	struct kit_db *db;
	struct fence_batch b;
	int rc;
};

static void *apply_lost_commit(void *arg)
{
	struct lost_commit *l = arg;
	l->rc = fence_apply(l->db, &l->b);
	return NULL;
}

#define LOST_COMMIT_ROUNDS 10

static void fence_apply__two_lost_commits_read_back_at_once(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	static const int64_t last[2] = { 9, 3 };
	struct lost_commit l[2];
	for (int who = 0; who < 2; who++) {
		l[who].db = labtest_connect(t);
		l[who].b = *batch(who, 0, last[who], 1, 5);
		l[who].b.totals[0].video_id = who + 1;
	}
	char seen[400] = "";
	int round;
	for (round = 1; round <= LOST_COMMIT_ROUNDS && !seen[0]; round++) {
		labtest_exec(t, "DELETE FROM video_views");
		labtest_exec(t, "UPDATE log_progress SET last_offset = -1");
		if (kit_fp_set("db-commit-reply-lost", KIT_FP_ERROR, 1) != 0)
			fail_msg("cannot arm db-commit-reply-lost");
		lt_at_once(2, apply_lost_commit, l, sizeof l[0]);
		kit_fp_set("db-commit-reply-lost", KIT_FP_OFF, 1);
		for (int who = 0; who < 2 && !seen[0]; who++)
			if (l[who].rc == 0 || l[who].rc > 1 || views_of(t, who + 1) != 5 ||
			    stored_last(t, who) != last[who])
				snprintf(seen, sizeof seen, "partition %d's fence_apply (offsets 0 .. %lld, "
				         "5 views of video %d) returned %d (%s); video %d has %lld views and "
				         "partition %d stands at %lld (expected 1 or the COMMIT's error, 5, %lld)", who,
				         (long long)last[who], who + 1, l[who].rc,
				         l[who].rc < 0 ? labtest_why(l[who].db) : "", who + 1,
				         (long long)views_of(t, who + 1), who, (long long)stored_last(t, who),
				         (long long)last[who]);
	}
	for (int who = 0; who < 2; who++)
		kit_db_close(l[who].db);
	lt_expect(!seen[0], "one-transaction", "two consumers of one process applied a batch "
	          "each at the same moment, partitions 0 and 1 on their own connections, and "
	          "both COMMITs committed with their answers lost; in round %d of %d %s. Both "
	          "batches are in: a call that reads back its own partition answers 1, one that "
	          "does not returns the COMMIT's error, and 0 (refused) is never right. Is "
	          "something the read-back uses shared by every thread (a static buffer for the "
	          "partition's text, a cached statement)? Then one call can ask about the "
	          "other's partition: build it in each call", round - 1, LOST_COMMIT_ROUNDS, seen);
}

/* Two consumers of one process are assigned partitions at the same
 * moment (a rebalance hands out every partition at once), each on its own
 * connection: consumer 0 asks where partition 0 resumes (41 applied: 42)
 * and is held by the gate before each of its statements in turn while
 * consumer 1 asks about partition 1 (99 applied: 100) whole. Each must
 * get its own partition's position. A partition number formatted into a
 * static buffer ("a few bytes, and assignments are rare") is overwritten
 * by the other consumer in between, and the first then reads the other
 * partition's offset and seeks there. */
struct two_positions {
	int64_t next[2];
};

static int position_own_part(void *arg, int who, struct kit_db *db)
{
	struct two_positions *p = arg;
	return fence_position(db, who, &p->next[who]);
}

static void fence_position__threads_keep_their_own_partitions(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	labtest_exec(t, "UPDATE log_progress SET last_offset = 41 WHERE part = 0");
	labtest_exec(t, "UPDATE log_progress SET last_offset = 99 WHERE part = 1");
	struct lt_gate *g = lt_gate_open(t, 2);
	int rounds = 0;
	for (int k = 1; k <= 6; k++) {
		struct two_positions p = { { -7, -7 } };
		lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, position_own_part, &p);
		if (!lt_gate_held(g, 0))
			break;
		rounds++;
		int a = lt_gate_rc(g, 0), b = lt_gate_rc(g, 1);
		lt_expect(a == 0 && b == 0 && p.next[0] == 42 && p.next[1] == 100, "own-batch",
		          "consumer 0 asked for partition 0's position (41 applied) and was held before "
		          "its statement %d while consumer 1 asked for partition 1's (99 applied) on "
		          "another connection: fence_position returned %d and %d, positions %lld and "
		          "%lld (expected 0 and 0, 42 and 100)%s", k, a, b, (long long)p.next[0],
		          (long long)p.next[1], p.next[0] == p.next[1] ? ": one consumer read the other partition"
		          "'s offset; is the partition's text kept in a static buffer that every thread "
		          "shares? Keep it on the call's stack" : "");
	}
	lt_gate_close(g);
	lt_expect(rounds > 0, "seek-from-db", "fence_position of partition 0 ran no statement");
}

/* Offsets past 2^31 and 2^32 (a long-lived log): the position is the
 * stored offset + 1, exactly, and the consumer seeks there. */
static void fence_position__offsets_past_2_31(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	prepare(t);
	char sql[128];
	snprintf(sql, sizeof sql, "UPDATE log_progress SET last_offset = %lld WHERE part = 1",
	         (long long)LT_PAST_INT32 + 6);
	labtest_exec(t, sql);
	snprintf(sql, sizeof sql, "UPDATE log_progress SET last_offset = %lld WHERE part = 2",
	         (long long)LT_PAST_UINT32 + 6);
	labtest_exec(t, sql);
	int64_t next1 = -7, next2 = -7;
	int rc1 = fence_position(db, 1, &next1), rc2 = fence_position(db, 2, &next2);
	lt_expect(rc1 == 0 && rc2 == 0, "seek-from-db", "fence_position failed: %s", labtest_why(db));
	lt_expect(next1 == LT_PAST_INT32 + 7 && next2 == LT_PAST_UINT32 + 7, "seek-from-db",
	          "fence_position with last_offset 2^31 + 6 and 2^32 + 7 stored: %lld and %lld, "
	          "expected 2^31 + 7 = %lld and 2^32 + 8 = %lld (is an offset kept in an int?)",
	          (long long)next1, (long long)next2, (long long)LT_PAST_INT32 + 7,
	          (long long)LT_PAST_UINT32 + 7);

	/* Offsets a double cannot hold (2^53 + 1 is the first integer it
	 * rounds) and the last one before INT64_MAX: a position read through
	 * strtod, atof or any double comes out one short or past the end. */
	snprintf(sql, sizeof sql, "UPDATE log_progress SET last_offset = %lld WHERE part = 0",
	         (long long)LT_PAST_DOUBLE);
	labtest_exec(t, sql);
	snprintf(sql, sizeof sql, "UPDATE log_progress SET last_offset = %lld WHERE part = 3",
	         (long long)INT64_MAX - 1);
	labtest_exec(t, sql);
	int64_t next0 = -7, next3 = -7;
	int rc0 = fence_position(db, 0, &next0), rc3 = fence_position(db, 3, &next3);
	lt_expect(rc0 == 0 && rc3 == 0 && next0 == LT_PAST_DOUBLE + 1 && next3 == INT64_MAX,
	          "seek-from-db", "fence_position with last_offset 2^53 + 1 and INT64_MAX - 1 stored: "
	          "returned %d and %d, positions %lld and %lld, expected 0 and 0, 2^53 + 2 = %lld and "
	          "INT64_MAX = %lld%s", rc0, rc3, (long long)next0, (long long)next3,
	          (long long)LT_PAST_DOUBLE + 1, (long long)INT64_MAX,
	          rc0 == 0 && next0 != LT_PAST_DOUBLE + 1 && next0 > LT_PAST_DOUBLE - 4 &&
	          next0 < LT_PAST_DOUBLE + 4 ? " (an offset read through a double, strtod or atof, "
	          "rounds past 2^53: read it as an integer, kit_db_query_int or strtoll)" : "");

	char dir[512];
	struct kit_log *log = make_log(dir, sizeof dir, 3);
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = db };
	kit_log_join(&c, log, FENCE_GROUP, "solo", &cb);
	int rc = kit_log_rebalance(c);
	int64_t p1 = -1, p2 = -1;
	kit_log_position(c, 1, &p1);
	kit_log_position(c, 2, &p2);
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);
	lt_expect(rc == 0, "seek-from-db", "the assignment failed: fence_on_assign returned %d", rc);
	lt_expect(p1 == LT_PAST_INT32 + 7 && p2 == LT_PAST_UINT32 + 7, "seek-from-db",
	          "fence_on_assign sought partitions 1 and 2 to %lld and %lld, expected %lld and %lld "
	          "(is the position kept in an int?)", (long long)p1, (long long)p2,
	          (long long)LT_PAST_INT32 + 7, (long long)LT_PAST_UINT32 + 7);
}

/* The fence's own offsets past 2^31 and 2^32, not only the position: the
 * batch that starts right after a stored 2^31 + 6 is applied and stores
 * its last offset exactly; so is one past 2^32; and a batch whose offsets
 * agree with the stored one only in their low 32 bits is refused. An
 * offset passed through an int (a "%d", an int variable) fails the first
 * two: the condition then compares a wrapped number and refuses the very
 * batch that is next. */
static void fence_apply__offsets_past_2_31(void **state)
{
	struct labtest *t = *state;
	prepare(t);
	char sql[128];
	snprintf(sql, sizeof sql, "UPDATE log_progress SET last_offset = %lld WHERE part = 1",
	         (long long)LT_PAST_INT32 + 6);
	labtest_exec(t, sql);
	snprintf(sql, sizeof sql, "UPDATE log_progress SET last_offset = %lld WHERE part = 2",
	         (long long)LT_PAST_UINT32 + 6);
	labtest_exec(t, sql);

	int rc1 = apply(t, batch(1, LT_PAST_INT32 + 7, LT_PAST_INT32 + 106, 2, 3));
	int rc2 = apply(t, batch(2, LT_PAST_UINT32 + 7, LT_PAST_UINT32 + 56, 2, 4));
	lt_expect(rc1 == 1 && rc2 == 1, "fence-contiguous", "fence_apply of the batch that is next "
	          "returned %d (after 2^31 + 6) and %d (after 2^32 + 7), expected 1 and 1: an "
	          "offset past 2^31 compared as an int (kept in an int, or printed with %%d) "
	          "refuses the next batch", rc1, rc2);
	lt_expect(stored_last(t, 1) == LT_PAST_INT32 + 106 && stored_last(t, 2) == LT_PAST_UINT32 + 56,
	          "fence-contiguous", "last_offset after those batches: %lld and %lld, expected "
	          "2^31 + 106 = %lld and 2^32 + 57 = %lld (is the batch's last offset cut to an int?)",
	          (long long)stored_last(t, 1), (long long)stored_last(t, 2),
	          (long long)LT_PAST_INT32 + 106, (long long)LT_PAST_UINT32 + 56);
	lt_expect_int_hint(views_of(t, 1), 7, "views of video 1 after the batches past 2^31 and 2^32",
	                   "fence-contiguous");

	/* 57 .. 99 agrees with 2^32 + 57 .. 2^32 + 99 in the low 32 bits only. */
	int low = apply(t, batch(2, LT_PAST_UINT32 + 57 - ((int64_t)1 << 32),
	                         LT_PAST_UINT32 + 99 - ((int64_t)1 << 32), 1, 5));
	lt_expect_int_hint(low, 0, "fence_apply's result for batch 58..100 after 2^32 + 57 was stored "
	                   "(the same low 32 bits, not the next batch)", "fence-contiguous");
	lt_expect_int_hint(stored_last(t, 2), LT_PAST_UINT32 + 56,
	                   "partition 2's last_offset after a batch that is next only in its low 32 bits",
	                   "fence-contiguous");
	lt_expect_int_hint(views_of(t, 1), 7, "views of video 1 after that batch was refused",
	                   "fence-contiguous");

	/* Offsets with more digits than a 32-bit number: 2^53 + 1 (16 digits,
	 * the first integer a double rounds) on partition 3, and the last
	 * batch before INT64_MAX (19 digits) on partition 0. An offset printed
	 * into a buffer sized for an int's 11 characters is cut (snprintf
	 * stops at the buffer's end), one passed through a double is rounded:
	 * either way the condition compares another number and refuses the
	 * batch that is next, and the partition stops counting. */
	snprintf(sql, sizeof sql, "UPDATE log_progress SET last_offset = %lld WHERE part = 3",
	         (long long)LT_PAST_DOUBLE);
	labtest_exec(t, sql);
	snprintf(sql, sizeof sql, "UPDATE log_progress SET last_offset = %lld WHERE part = 0",
	         (long long)INT64_MAX - 100);
	labtest_exec(t, sql);
	int rc3 = fence_apply(labtest_db(t), batch(3, LT_PAST_DOUBLE + 1, LT_PAST_DOUBLE + 2, 1, 6));
	int rc0 = fence_apply(labtest_db(t), batch(0, INT64_MAX - 99, INT64_MAX - 1, 1, 8));
	int64_t last3 = stored_last(t, 3), last0 = stored_last(t, 0), v1 = views_of(t, 1);
	lt_expect(rc3 == 1 && rc0 == 1 && last3 == LT_PAST_DOUBLE + 2 && last0 == INT64_MAX - 1 && v1 == 21,
	          "fence-contiguous", "batch 2^53 + 2 .. 2^53 + 3 after 2^53 + 1 (partition 3) and "
	          "INT64_MAX - 99 .. INT64_MAX - 1 after INT64_MAX - 100 (partition 0), each the next "
	          "batch: fence_apply returned %d and %d, last_offset is then %lld and %lld, video 1 "
	          "has %lld views (expected 1 and 1, %lld and %lld, 21). An offset printed into a text "
	          "buffer too short for its 16 or 19 digits (a char[12] holds an int's 11) is cut, "
	          "one passed through a double is rounded past 2^53: the fence then compares another "
	          "number. Give each offset 24 bytes and print it with %%lld",
	          rc3, rc0, (long long)last3, (long long)last0, (long long)v1,
	          (long long)LT_PAST_DOUBLE + 2, (long long)INT64_MAX - 1);

	/* The top of the domain: the batch INT64_MAX .. INT64_MAX, next after
	 * INT64_MAX - 1, applies and stores INT64_MAX; then the same batch
	 * delivered again, and one that overlaps it from INT64_MAX - 1, are
	 * refused (0), through fence_apply and fence_handle alike. A fence
	 * that does its arithmetic on the stored offset in SQL
	 * ("last_offset + 1 = first") overflows there: PostgreSQL answers
	 * "bigint out of range" and MariaDB error 1690, the call fails on
	 * every delivery, and the log delivers that batch for ever. (SQLite
	 * turns the sum into a REAL and refuses rightly.) */
	int top1 = fence_apply(labtest_db(t), batch(0, INT64_MAX, INT64_MAX, 1, 3));
	int top2 = fence_apply(labtest_db(t), batch(0, INT64_MAX, INT64_MAX, 1, 3));
	int top3 = fence_apply(labtest_db(t), batch(0, INT64_MAX - 1, INT64_MAX, 1, 3));
	struct fence_event tev = { 1 };
	struct kit_log_record trec = { INT64_MAX, sizeof tev, &tev };
	int top4 = fence_handle(labtest_db(t), 0, &trec, 1);
	char topwhy[200] = "";
	if (top2 < 0 || top3 < 0 || top4 < 0)
		snprintf(topwhy, sizeof topwhy, "%s", labtest_why(labtest_db(t)));
	int64_t topl = stored_last(t, 0), topv = views_of(t, 1);
	lt_expect(top1 == 1 && top2 == 0 && top3 == 0 && top4 == 0 && topl == INT64_MAX && topv == 24,
	          "fence-contiguous", "partition 0 at INT64_MAX - 1: the batch INT64_MAX .. INT64_MAX "
	          "returned %d, the same batch again %d, INT64_MAX - 1 .. INT64_MAX %d, and "
	          "fence_handle of the record at INT64_MAX %d; last_offset is then %lld and video 1 "
	          "has %lld views (expected 1, 0, 0, 0, INT64_MAX = %lld and 24)%s%s", top1, top2,
	          top3, top4, (long long)topl, (long long)topv, (long long)INT64_MAX,
	          top2 < 0 || top3 < 0 || top4 < 0 ? ". A batch delivered again after INT64_MAX "
	          "failed: is the fence written with arithmetic on the stored offset, "
	          "\"last_offset + 1 = first\"? At INT64_MAX the sum overflows (PostgreSQL: bigint "
	          "out of range; MariaDB: error 1690), and the batch fails on every delivery. "
	          "Compare the stored offset with first - 1, worked out in C (never below -1): "
	          : "", topwhy);

	/* a partition number is an int too: INT_MAX's row, beside the row of
	 * 214, what its first three digits name */
	labtest_exec(t, "INSERT INTO log_progress (part, last_offset) VALUES (2147483647, -1), (214, -1)");
	int top = fence_apply(labtest_db(t), batch(INT32_MAX, 0, 9, 1, 2));
	int64_t next = -1;
	int prc = fence_position(labtest_db(t), INT32_MAX, &next);
	lt_expect(top == 1 && stored_last(t, INT32_MAX) == 9 && stored_last(t, 214) == -1 && prc == 0 &&
	          next == 10, "fence", "batch 0..9 of partition INT_MAX (2147483647) returned %d; "
	          "last_offset of partitions 2147483647 and 214 is then %lld and %lld, and "
	          "fence_position(INT_MAX) answered %d with %lld (expected 1, 9 and -1, 0 with 10): is "
	          "the partition number printed into a buffer too short for its 10 digits, and cut "
	          "to another partition's?", top, (long long)stored_last(t, INT32_MAX),
	          (long long)stored_last(t, 214), prc, (long long)next);

	/* The same through fence_handle, whose offsets come from the records:
	 * a partition of a long-lived log passes 2^31 events. Records at
	 * 2^31 + 107 .. 2^31 + 109 of partition 1 and 2^32 + 57 .. 2^32 + 58
	 * of partition 2, each right after what is stored: a batch whose
	 * offsets the handler keeps in an int asks the fence for a wrapped
	 * number, is refused, and fence_handle answers 0 for it: the log
	 * moves on past views nobody counts. */
	struct fence_event hev[3] = { { 11 }, { 11 }, { 11 } };
	struct kit_log_record hrecs[3];
	for (int i = 0; i < 3; i++)
		hrecs[i] = (struct kit_log_record){ LT_PAST_INT32 + 107 + i, sizeof hev[i], &hev[i] };
	int h1 = fence_handle(labtest_db(t), 1, hrecs, 3);
	for (int i = 0; i < 2; i++)
		hrecs[i] = (struct kit_log_record){ LT_PAST_UINT32 + 57 + i, sizeof hev[i], &hev[i] };
	int h2 = fence_handle(labtest_db(t), 2, hrecs, 2);
	int64_t hl1 = stored_last(t, 1), hl2 = stored_last(t, 2), v11 = views_of(t, 11);
	lt_expect(h1 == 0 && h2 == 0 && hl1 == LT_PAST_INT32 + 109 && hl2 == LT_PAST_UINT32 + 58 &&
	          v11 == 5, "fence-contiguous", "fence_handle of records 2^31 + 107 .. 2^31 + 109 of "
	          "partition 1 and 2^32 + 57 .. 2^32 + 58 of partition 2, each right after what is "
	          "stored, returned %d and %d; last_offset is then %lld and %lld, video 11 has %lld "
	          "views (expected 0 and 0, %lld and %lld, 5): are the batch's first and last offsets "
	          "kept in an int while it is added up? recs[i].offset is an int64_t",
	          h1, h2, (long long)hl1, (long long)hl2, (long long)v11,
	          (long long)LT_PAST_INT32 + 109, (long long)LT_PAST_UINT32 + 58);
}

/* fence_handle answers 0 for a batch that is in the database, applied now
 * or BEFORE (fence.h): a batch delivered again after a crash (the log's
 * hint lags the database) is done, and the log must move past it. A
 * handler that answers an error for the fence's refusal makes the log
 * deliver that batch again, forever: the partition stops at it. Here
 * through kit_log_poll, as a consumer runs: the second poll, sought back to
 * offset 0, must move on past the batch it already has. */
static void fence_handle__batch_applied_before_answers_0(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	prepare(t);
	char dir[512];
	struct kit_log *log = make_log(dir, sizeof dir, 20);   /* videos 1, 2, 3, 1, 2, 3, ... */
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = db };
	kit_log_join(&c, log, FENCE_GROUP, "solo", &cb);
	int first = 0, n;
	while ((n = kit_log_poll(c, 10, fence_handle, db)) > 0)
		first += n;

	/* the consumer is sent back to the start of every partition: a crash
	 * that lost the log's hint, a restore of the log */
	int again = 0, sought = 0;
	for (int p = 0; p < CRASH_PARTITIONS; p++)
		sought |= kit_log_seek(c, p, 0);
	while ((n = kit_log_poll(c, 10, fence_handle, db)) > 0)
		again += n;
	int last_poll = n;
	int64_t p0 = -1;
	kit_log_position(c, 0, &p0);
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);

	lt_expect(sought == 0, "handle-error", "kit_log_seek back to 0 failed (%d)", sought);
	lt_expect_int_hint(first, 80, "events handled on the first pass (4 partitions of 20)", "totals");
	lt_expect(last_poll == 0 && again == 80, "handle-error", "the same 80 events delivered again: "
	          "kit_log_poll answered %d after handling %d of them (expected 0 after 80); fence_handle "
	          "must answer 0 for a batch the fence refuses as applied before, or the log delivers "
	          "it again forever and the partition stops there", last_poll, again);
	lt_expect_int_hint(p0, 20, "partition 0's position after the second pass", "handle-error");
	lt_expect_int_hint(views_of(t, 1) + views_of(t, 2) + views_of(t, 3), 80,
	                   "views in the database after every batch was delivered twice", "fence");
}

/* fence_apply leaves its connection as it found it, on each of its
 * answers (applied, refused, failed): no transaction open and no session
 * setting changed. A consumer that turns off synchronous_commit (or sets
 * a lock_timeout, an innodb_lock_wait_timeout, a PRAGMA synchronous) with
 * a plain SET changes every later transaction of that connection,
 * including ones that are not its own to make asynchronous; SET LOCAL,
 * inside the batch's transaction, ends with it (MariaDB and SQLite have
 * no SET LOCAL: set nothing). A path that returns before its ROLLBACK
 * leaves the transaction open with the partition's progress row locked:
 * on PostgreSQL and MariaDB the next BEGIN does not fail, and the next
 * batch joins it. On PostgreSQL the session starts at synchronous_commit
 * = remote_write, which a reset to "on" would not restore either. */
/* The lock wait each statement of a batch runs with, noted where the
 * batch cannot hide it: on the servers by row triggers on log_progress
 * and video_views, into lt_seen_wait (PostgreSQL's lock_timeout and
 * statement_timeout, MariaDB's innodb_lock_wait_timeout and
 * max_statement_time, as the statement sees them: a SET LOCAL, a
 * set_config(..., true) or a SET STATEMENT ... FOR shows; a statement
 * timeout of 30 s "so a batch never hangs" gives up on a lock wait the
 * connection would have kept: a limit of its own too); on SQLite the
 * kit's own busy wait, read by the hook as each statement starts. */
static atomic_int sqlite_wait_changed;

/* And the first PRAGMA synchronous that assigns, as the batch sends it:
 * SQLite has no setting of it for one transaction, so one a batch sends
 * changes the caller's connection, even when it puts a value back. */
struct batch_seen {
	struct kit_db *db;
	char pragma[200];
	char timeout[200];   /* the first statement that sets a timeout of any kind */
};

static void wait_seen(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct batch_seen *w = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	if (kit_db_engine(w->db) == KIT_DB_SQLITE && kit_db_lock_timeout(w->db) != 7000)
		atomic_store(&sqlite_wait_changed, 1);
	if (!w->pragma[0] && lt_sql_is(sql, "PRAGMA") && lt_sql_sets_durability(sql))
		snprintf(w->pragma, sizeof w->pragma, "%.160s", sql);
	if (!w->timeout[0] && lt_sql_sets_timeout(sql))
		snprintf(w->timeout, sizeof w->timeout, "%.160s", sql);
}

static void lock_wait_watch(struct labtest *t)
{
	if (t->engine == KIT_DB_POSTGRES) {
		labtest_exec(t, "CREATE TABLE lt_seen_wait (v TEXT)");
		labtest_exec(t, "CREATE OR REPLACE FUNCTION lt_seen_wait_f() RETURNS trigger "
		                "LANGUAGE plpgsql AS $$BEGIN INSERT INTO lt_seen_wait "
		                "VALUES (current_setting('lock_timeout') || '/' || "
		                "current_setting('statement_timeout')); RETURN NEW; END$$");
		labtest_exec(t, "CREATE TRIGGER lt_seen_wait_lp BEFORE UPDATE ON log_progress "
		                "FOR EACH ROW EXECUTE FUNCTION lt_seen_wait_f()");
		labtest_exec(t, "CREATE TRIGGER lt_seen_wait_vv BEFORE INSERT OR UPDATE ON video_views "
		                "FOR EACH ROW EXECUTE FUNCTION lt_seen_wait_f()");
	} else if (t->engine == KIT_DB_MYSQL) {
		labtest_exec(t, "CREATE TABLE lt_seen_wait (v VARCHAR(40))");
		labtest_exec(t, "CREATE TRIGGER lt_seen_wait_lp BEFORE UPDATE ON log_progress FOR EACH ROW "
		                "INSERT INTO lt_seen_wait VALUES (CONCAT(@@innodb_lock_wait_timeout, '/', "
		                "@@max_statement_time))");
		labtest_exec(t, "CREATE TRIGGER lt_seen_wait_vv BEFORE INSERT ON video_views FOR EACH ROW "
		                "INSERT INTO lt_seen_wait VALUES (CONCAT(@@innodb_lock_wait_timeout, '/', "
		                "@@max_statement_time))");
	}
	/* the session's own value, as the triggers see it */
	if (t->engine != KIT_DB_SQLITE)
		labtest_exec(t, "UPDATE log_progress SET last_offset = last_offset WHERE part = 0");
	atomic_store(&sqlite_wait_changed, 0);
}

static int64_t lock_waits_seen(struct labtest *t)
{
	if (t->engine == KIT_DB_SQLITE)
		return 1 + atomic_load(&sqlite_wait_changed);
	return labtest_int(t, "SELECT count(DISTINCT v) FROM lt_seen_wait");
}

/* A session whose settings are its own, not where the kit opens one: a
 * call that changes one and then "puts back the default" changes it.
 * PostgreSQL's synchronous_commit at remote_write; SQLite's synchronous
 * at FULL, where the kit opens a connection at NORMAL (a batch that turns
 * it OFF and "puts it back" to NORMAL changes it); a lock timeout of the
 * session's own (PostgreSQL's lock_timeout, MariaDB's
 * innodb_lock_wait_timeout; SQLite's is the kit's own busy wait, which no
 * pragma shows), and lt_session_own_values'. */
static void session_of_its_own(struct labtest *t, struct kit_db *db)
{
	if (t->engine == KIT_DB_POSTGRES)
		labtest_exec(t, "SET synchronous_commit = remote_write");
	if (t->engine == KIT_DB_SQLITE)
		labtest_exec(t, "PRAGMA synchronous = FULL");
	lt_session_own_values(t, db);
	assert_int_equal(kit_db_set_lock_timeout(db, 7000), 0);
}

static void fence_apply__leaves_the_session_as_it_found_it(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	prepare(t);
	session_of_its_own(t, db);
	lock_wait_watch(t);
	char before[LT_SESSION_LEN];
	lt_session(t, db, before, sizeof before);
	static const char *const what[] = { "a batch applied (1)", "the same batch again (0)",
	                                    "a batch whose upsert failed (an error)" };
	for (int step = 0; step < 3; step++) {
		if (step == 2)
			labtest_exec(t, "ALTER TABLE video_views RENAME TO video_views_away");
		struct batch_seen seen = { .db = db };
		kit_db_set_hook(db, wait_seen, &seen);
		int rc = fence_apply(db, batch(1, step == 2 ? 100 : 0, step == 2 ? 199 : 99, 2, 3));
		kit_db_set_hook(db, NULL, NULL);
		lt_expect(seen.pragma[0] == '\0', "one-transaction", "%s sent \"%s\": "
		          "how hard SQLite syncs a COMMIT is the caller's setting for the whole "
		          "connection (fence.h), which has it at FULL here, and SQLite has no setting of "
		          "it for one transaction. OFF for a batch lets a power cut corrupt the file after "
		          "the log has moved past the batch, and the value put back afterwards (NORMAL, "
		          "the kit's) is not the caller's: send no PRAGMA synchronous", what[step],
		          seen.pragma);
		lt_expect(seen.timeout[0] == '\0', "one-transaction", "%s sent \"%s\": fence.h says a "
		          "batch sets no limit of its own, not for the session, not for its own "
		          "transaction or statement, whatever it limits (a lock wait, the statement, the "
		          "time idle in a transaction, the deadlock check): a consumer paused inside a "
		          "batch then has its session ended by the server, or its batch refused by a "
		          "rule that is not the caller's (and deadlock_timeout is a superuser's setting)",
		          what[step], seen.timeout);
		if (step == 0)
			lt_expect(lock_waits_seen(t) == 1, "one-transaction", "a batch applied on a "
			          "connection whose lock wait is 7 s ran a statement with another one "
			          "(%s): a batch waits for a lock as long as its connection allows, the "
			          "caller's choice, and sets no limit of its own, not even for its own "
			          "transaction or statement (SET LOCAL lock_timeout, SET LOCAL "
			          "statement_timeout, SET STATEMENT innodb_lock_wait_timeout = 1 or "
			          "max_statement_time = 30 FOR ..., kit_db_set_lock_timeout put back "
			          "afterwards): a zombie gives up by the caller's rule, and so does the "
			          "partition's owner waiting behind it", t->engine == KIT_DB_SQLITE ?
			          "the kit's busy wait, read as each statement started" :
			          "read by a trigger on log_progress and video_views");
		char did[120];
		snprintf(did, sizeof did, "%s (it returned %d)", what[step], rc);
		/* before the rename back: on MariaDB an ALTER TABLE commits
		 * whatever transaction the call left open */
		lt_session_unchanged(t, db, before, did, "one-transaction");
		if (step == 2)
			labtest_exec(t, "ALTER TABLE video_views_away RENAME TO video_views");
	}
	lt_expect_int_hint(views_of(t, 2), 3, "views of video 2 after the three batches", "fence");
	labtest_expect_fresh(t, "fence_apply__leaves_the_session_as_it_found_it", "one-transaction",
	                     LT_KEPT_SETTING);
}

/* Not fence_apply only: every function of fence.h leaves its connection
 * as it found it and sets no limit of its own, on each of its answers.
 * The caller gave its connection a lock wait of 7 s and values of its
 * own of the settings a call is tempted to set "for one read" and then
 * put back (lt_session_own_values): fence_position found, missing
 * (KIT_DB_NOROW) and failing, fence_on_assign through a rebalance,
 * fence_handle applied, applied before and failing. A read that locks
 * the progress row "to wait for a batch in flight" under a lock_timeout
 * of its own (1 s) and then RESETs it, or sets innodb_lock_wait_timeout
 * back to DEFAULT, leaves the server's default where the caller's value
 * was, and every later statement of the consumer waits by a rule that
 * is not the caller's. */
static int session_call(struct labtest *t, int step, struct kit_log_consumer *c)
{
	struct kit_db *db = labtest_db(t);
	int64_t next = -1;
	struct fence_event ev[3] = { { 5 }, { 6 }, { 5 } };
	struct kit_log_record recs[3];
	for (int i = 0; i < 3; i++)
		recs[i] = (struct kit_log_record){ i, sizeof ev[i], &ev[i] };
	switch (step) {
	case 0: return fence_position(db, 1, &next);
	case 1: return fence_position(db, 99, &next);
	case 2: return fence_position(db, 1, &next);        /* log_progress renamed away */
	case 3: return kit_log_rebalance(c);                /* fence_on_assign for each partition */
	case 4: return fence_handle(db, 0, recs, 3);
	case 5: return fence_handle(db, 0, recs, 3);
	case 6: return fence_handle(db, 1, recs, 3);        /* video_views renamed away */
	default: return fence_apply(db, batch(2, 0, 9, 2, 3));
	}
}

static void fence__every_call_leaves_the_session_as_it_found_it(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	prepare(t);
	char dir[512];
	struct kit_log *log = make_log(dir, sizeof dir, 10);
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = db };
	kit_log_join(&c, log, FENCE_GROUP, "solo", &cb);
	session_of_its_own(t, db);
	char before[LT_SESSION_LEN];
	lt_session(t, db, before, sizeof before);
	static const char *const what[] = {
		"fence_position of a partition with a row (0)",
		"fence_position of a partition with no row (KIT_DB_NOROW)",
		"fence_position with log_progress unreadable (an error)",
		"fence_on_assign, called by a rebalance for each partition",
		"fence_handle of a batch it applied (0)",
		"fence_handle of the same batch again (0, applied before)",
		"fence_handle with video_views unwritable (an error)",
		"fence_apply of a batch it applied (1)",
	};
	for (int step = 0; step < (int)(sizeof what / sizeof what[0]); step++) {
		if (step == 2)
			labtest_exec(t, "ALTER TABLE log_progress RENAME TO log_progress_away");
		if (step == 6)
			labtest_exec(t, "ALTER TABLE video_views RENAME TO video_views_away");
		struct lt_call_watch w;
		lt_call_watch_init(&w, db);
		kit_db_set_hook(db, lt_call_watch, &w);
		int rc = session_call(t, step, c);
		kit_db_set_hook(db, NULL, NULL);
		lt_expect(w.timeout.sql[0] == '\0' && w.timeout.seen_ms < 0, "one-transaction",
		          "%s (it returned %d) %s%s%s: fence.h says a statement waits for a row held by "
		          "another as long as the connection's own limit allows (the caller's, 7 s "
		          "here) and that no call sets a limit of its own, not for the session, its "
		          "transaction or one statement, not even one put back afterwards", what[step],
		          rc, w.timeout.sql[0] ? "sent \"" : "ran a statement under a busy wait other "
		          "than the connection's", w.timeout.sql, w.timeout.sql[0] ? "\"" : "");
		lt_expect(w.durability[0] == '\0', "one-transaction", "%s (it returned %d) sent \"%s\": "
		          "how hard a COMMIT syncs is the caller's setting for the connection", what[step],
		          rc, w.durability);
		char did[120];
		snprintf(did, sizeof did, "%s (it returned %d)", what[step], rc);
		lt_session_unchanged(t, db, before, did, "one-transaction");
		if (step == 2)
			labtest_exec(t, "ALTER TABLE log_progress_away RENAME TO log_progress");
		if (step == 6)
			labtest_exec(t, "ALTER TABLE video_views_away RENAME TO video_views");
	}
	kit_log_leave(c);
	kit_log_close(log);
	kit_log_remove(dir);
	lt_expect_int_hint(views_of(t, 5), 2, "views of video 5 after fence_handle applied its batch "
	                   "(once)", "fence");
}

/* fence.h: b is the caller's, and fence_apply changes nothing in it, not
 * even the order of its totals; recs and their data are the log's, and
 * fence_handle only reads them. A batch of videos 9, 3 and 7, in that
 * order (fence_apply writes the totals as they come: the sort is the
 * caller's, fence_handle's), applied and then refused; records of
 * videos 9, 3, 9 handled, then handled again: after each call the batch,
 * the records and their bytes are what they were. A fence_apply that
 * sorts b->totals in place through a cast that drops const changes an
 * array that is not its own: two threads that apply one batch (a retry
 * on a second connection) sort it at once. */
static void totals_text(const struct fence_batch *b, char *out, size_t len)
{
	size_t used = 0;
	out[0] = '\0';
	for (int i = 0; i < b->n && i < 8 && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%lld:%lld", i ? ", " : "",
		                         (long long)b->totals[i].video_id, (long long)b->totals[i].views);
}

static void fence_apply__leaves_the_batch_as_it_was(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	prepare(t);
	static struct fence_batch b, copy;
	memset(&b, 0, sizeof b);
	b.part = 1;
	b.first = 0;
	b.last = 5;
	b.n = 3;
	b.totals[0] = (struct fence_total){ 9, 2 };
	b.totals[1] = (struct fence_total){ 3, 3 };
	b.totals[2] = (struct fence_total){ 7, 1 };
	memcpy(&copy, &b, sizeof b);
	for (int round = 0; round < 2; round++) {
		int rc = fence_apply(db, &b);
		lt_expect(rc == (round == 0), "fence", "fence_apply of partition 1's batch 0..5%s "
		          "returned %d, expected %d (%s)", round ? ", applied before," : "", rc,
		          round == 0, labtest_why(db));
		char now[200];
		totals_text(&b, now, sizeof now);
		lt_expect(memcmp(&b, &copy, sizeof b) == 0, "sorted", "after fence_apply%s, the batch "
		          "handed in holds the totals %s (video:views), part %d, offsets %lld..%lld; it "
		          "was handed in as 9:2, 3:3, 7:1, part 1, offsets 0..5. b is the caller's, "
		          "const (fence.h): does fence_apply sort b->totals in place through a cast that "
		          "drops const? Sort in fence_handle, the batch of its own, before the call",
		          round ? " (refused: applied before)" : "", now, b.part, (long long)b.first,
		          (long long)b.last);
	}
	lt_expect(views_of(t, 9) == 2 && views_of(t, 3) == 3 && views_of(t, 7) == 1, "totals",
	          "videos 9, 3 and 7 have %lld, %lld and %lld views after the batch, expected 2, 3 "
	          "and 1", (long long)views_of(t, 9), (long long)views_of(t, 3),
	          (long long)views_of(t, 7));

	const int64_t ids[3] = { 9, 3, 9 };
	static unsigned char raw[3 * sizeof(struct fence_event)], raw_copy[sizeof raw];
	struct kit_log_record recs[3], recs_copy[3];
	for (int i = 0; i < 3; i++) {
		memcpy(raw + i * sizeof(struct fence_event), &(struct fence_event){ ids[i] },
		       sizeof(struct fence_event));
		recs[i] = (struct kit_log_record){ i, sizeof(struct fence_event),
		                                   raw + i * sizeof(struct fence_event) };
	}
	memcpy(recs_copy, recs, sizeof recs);
	memcpy(raw_copy, raw, sizeof raw);
	for (int round = 0; round < 2; round++) {
		int rc = fence_handle(db, 2, recs, 3);
		lt_expect(rc == 0, "handle-error", "fence_handle of partition 2's records 0..2 (videos "
		          "9, 3, 9)%s returned %d (%s)", round ? ", applied before," : "", rc,
		          labtest_why(db));
		lt_expect(memcmp(recs, recs_copy, sizeof recs) == 0 && memcmp(raw, raw_copy, sizeof raw) == 0,
		          "sorted", "after fence_handle%s, the records handed in (videos 9, 3, 9 at "
		          "offsets 0..2) or their bytes changed: they are the log's (fence.h), read and "
		          "left as they are. Add the events up in a batch of the call's own and sort that",
		          round ? " (applied before)" : "");
	}
	lt_expect(views_of(t, 9) == 4 && views_of(t, 3) == 4, "totals", "videos 9 and 3 have %lld "
	          "and %lld views after the records 9, 3, 9, expected 4 and 4",
	          (long long)views_of(t, 9), (long long)views_of(t, 3));
}

/* ---- a zombie consumer ---- */

#define ZOMBIE_EVENTS 3000
#define SESSION_MS 400

/* A consumer process of partition 0 that stops itself (SIGSTOP) when it
 * holds its stop_on-th batch, before handing it to fence_handle. */
__attribute__((noreturn))
static void zombie_child(struct labtest *t, const char *dir, const char *name, int batch,
                         int stop_on)
{
	kit_fp_clear();
	kit_fp_set("log-before-handler", KIT_FP_STOP, stop_on);
	struct kit_db *db;
	struct kit_log *log;
	struct kit_log_consumer *c;
	if (kit_db_open(&db, t->url) != 0 || kit_log_open(&log, dir, CRASH_PARTITIONS) != 0)
		_exit(3);
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = db };
	if (kit_log_join(&c, log, FENCE_GROUP, name, &cb) != 0 ||
	    kit_log_set_session_timeout(c, SESSION_MS) != 0)
		_exit(3);
	int64_t end = 0, next = 0;
	kit_log_end(log, 0, &end);
	for (int i = 0, errors = 0; i < 100000; i++) {
		int n = kit_log_poll(c, batch, fence_handle, db);
		if (n < 0 && ++errors == 500) {
			fprintf(stderr, "consumer %s: %s / %s\n", name, kit_db_errmsg(db), kit_log_errmsg(log));
			_exit(4);
		}
		if (n == 0 && kit_log_committed(log, FENCE_GROUP, 0, &next) == 0 && next >= end) {
			kit_log_leave(c);
			_exit(0);
		}
		if (n <= 0)
			util_sleep_ns(2000000);
	}
	_exit(5);
}

/* Wait up to 30 s for pid to stop (stopped) or end (!stopped). 1 when it
 * did, and for an end, exited 0. */
static int wait_for(pid_t pid, int stopped)
{
	for (int i = 0; i < 6000; i++) {
		int st;
		pid_t got = waitpid(pid, &st, WNOHANG | (stopped ? WUNTRACED : 0));
		if (got == pid)
			return stopped ? WIFSTOPPED(st) : WIFEXITED(st) && WEXITSTATUS(st) == 0;
		util_sleep_ns(5000000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

/* Consumer A takes events 0..799 of partition 0 and stalls (SIGSTOP). The
 * group, after the session timeout, gives the partition to B, which reads
 * from the database in batches of 300, applies 0..299 and 300..599, and
 * stalls too with 600..899 in hand. A wakes up (SIGCONT) and hands its
 * batch, cut differently, to the fence; then finishes the partition once
 * B in turn is declared gone; then B wakes with its stale batch. Every
 * count must be exact: a fence that lets "newer" batches through counts
 * 0..599 twice. */
static void fence_consume__zombie_wakes_after_a_rebalance(void **state)
{
	struct labtest *t = *state;
	if (!gate(t))
		skip();
	prepare(t);
	char dir[512];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/hotrow-zombie-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	struct kit_log *log = NULL;
	if (!mkdtemp(dir) || kit_log_open(&log, dir, CRASH_PARTITIONS) != 0)
		fail_msg("log in %s: %s", dir, kit_log_errmsg(log));
	for (int i = 0; i < ZOMBIE_EVENTS; i++) {
		struct fence_event ev = { i % 3 + 1 };
		kit_log_append(log, 0, &(struct kit_log_iov){ &ev, sizeof ev }, 1, NULL);
	}
	kit_log_close(log);
	kit_db_close(t->db);       /* no handle of ours may cross fork() */
	t->db = NULL;
	fflush(stdout);
	fflush(stderr);

	pid_t a = fork();
	if (a == 0)
		zombie_child(t, dir, "A", 800, 1);
	int a_stopped = a > 0 && wait_for(a, 1);
	pid_t b = a_stopped ? fork() : -1;
	if (b == 0)
		zombie_child(t, dir, "B", 300, 3);
	int b_stopped = b > 0 && wait_for(b, 1);
	int64_t before = b_stopped ? stored_last(t, 0) : -2;
	if (a > 0)
		kill(a, SIGCONT);
	int a_done = a > 0 && wait_for(a, 0);
	if (b > 0)
		kill(b, SIGCONT);
	int b_done = b > 0 && wait_for(b, 0);
	kit_log_remove(dir);

	lt_expect(a_stopped && b_stopped, "crash", "the staging failed: consumer A %s, consumer B %s "
	          "(each must stop with a batch in hand)", a_stopped ? "stopped" : "did not stop",
	          b_stopped ? "stopped" : "did not stop");
	lt_expect_int_hint(before, 599, "partition 0's last_offset when B stalled (A still asleep with "
	                   "0..799)", "crash");
	lt_expect(a_done && b_done, "crash", "the consumers did not finish cleanly (A %s, B %s); "
	          "their messages are above", a_done ? "done" : "failed", b_done ? "done" : "failed");
	lt_expect_int_hint(views_of(t, 1) + views_of(t, 2) + views_of(t, 3), ZOMBIE_EVENTS,
	                   "views in the database after a zombie's batch 0..799 came back after "
	                   "0..599 was applied", "fence-contiguous");
	lt_expect_int_hint(stored_last(t, 0), ZOMBIE_EVENTS - 1, "partition 0's last_offset at the end",
	                   "fence-contiguous");
}

/* Run schedules seeds[0..n-1]; print each failure with its replay line. */
static int run_schedules(struct labtest *t, int n, int events, int bmin, int bmax, int big)
{
	const char *env = getenv("HOTROW_SEED");
	const char *env_events = getenv("HOTROW_EVENTS");
	const char *engine = labtest_engine_word(t);
	if (env_events && atoi(env_events) > 0)
		events = atoi(env_events);
	int failing = 0, k;
	struct crash_stats stats = { 0, 0, 0 };
	double t0 = util_now();
	for (k = 0; k < (env ? 1 : n) && failing < MAX_FAILING; k++) {
		uint64_t seed = env ? strtoull(env, NULL, 0) : crash_seed(k + (big ? 100000 : 0));
		struct crash_plan pl;
		char why[512];
		crash_plan_make(&pl, seed, events, bmin, bmax);
		if (env)
			crash_plan_print(&pl, stdout);
		int ok = crash_run(t, &pl, env != NULL, &stats, why, sizeof why) == 0;
		if ((k + 1) % 10 == 0 && !env) {
			printf("%s: schedule %d of %d, %d failing so far, %.1f s\n", engine, k + 1, n,
			       failing + !ok, util_now() - t0);
			fflush(stdout);
		}
		if (ok)
			continue;
		failing++;
		printf("FAILED schedule %d on %s, seed 0x%016llx: %s\n"
		       "  replay: HOTROW_SEED=0x%016llx HOTROW_EVENTS=%d HOTROW_LAB_ONLY=%s %s\n",
		       k, engine, (unsigned long long)seed, why, (unsigned long long)seed, events,
		       engine, self);
		fflush(stdout);
	}
	if (failing == MAX_FAILING)
		printf("(stopped after %d failing schedules)\n", MAX_FAILING);
	printf("%s: %d schedule(s) of %d events, %d failing; %d consumer processes, "
	       "%d killed at a failpoint, %d left the group; %.1f s\n", engine, k, events, failing,
	       stats.started, stats.killed, stats.left,
	       util_now() - t0);
	return failing;
}

static void fence_consume__exact_under_crash_schedules(void **state)
{
	struct labtest *t = *state;
	if (!gate(t))
		lt_skip("crash schedules not run: the direct checks must pass first");
	prepare(t);
	int failing = run_schedules(t, t->engine == KIT_DB_MYSQL ? MYSQL_SCHEDULES : SCHEDULES,
	                            SCHEDULE_EVENTS, 20, 300, 0);
	lt_expect_int_hint(failing, 0, "crash schedules ending with a wrong count (each printed "
	                   "above with its seed)", "crash");
}

static void fence_consume__100k_events_exact(void **state)
{
	struct labtest *t = *state;
	if (getenv("HOTROW_SEED"))
		skip();        /* a replay runs one schedule, in the check above */
	if (!gate(t))
		lt_skip("crash schedules not run: the direct checks must pass first");
	prepare(t);
	int failing = run_schedules(t, BIG_SCHEDULES, BIG_EVENTS, 1000, 5000, 1);
	lt_expect_int_hint(failing, 0, "100,000-event schedules ending with a wrong count (each "
	                   "printed above with its seed)", "crash");
}

int main(int argc, char **argv)
{
	(void)argc;
	if (argv[0] && strchr(argv[0], '/'))
		self = argv[0];
	const struct CMUnitTest tests[] = {
		LABTEST_ALL(fence_apply__new_batch_is_applied),
		LABTEST_ALL(fence_apply__redelivered_batch_counts_once),
		LABTEST_ALL(fence_apply__older_batch_is_refused),
		LABTEST_ALL(fence_apply__overlapping_batch_is_refused),
		LABTEST_ALL(fence_apply__batch_after_a_gap_is_refused),
		LABTEST_ALL(fence_apply__failure_changes_nothing),
		LABTEST_ALL(fence_apply__one_upsert_per_batch),
		LABTEST_ALL(fence_apply__same_batch_twice_at_once),
		LABTEST_PG(fence_apply__same_batch_behind_one_that_fails),
		LABTEST_MYSQL(fence_apply__same_batch_behind_one_that_fails),
		LABTEST_ALL(fence_position__is_stored_offset_plus_one),
		LABTEST_ALL(fence__refused_for_good_ends),
		LABTEST_ALL(fence_handle__gives_up_after_one_lock_wait),
		LABTEST_ALL(fence_on_assign__seeks_from_the_database_not_the_hint),
		LABTEST_ALL(fence_on_assign__failed_read_is_an_error),
		LABTEST_ALL(fence_handle__adds_up_a_batch_per_video),
		LABTEST_ALL(fence_handle__failed_batch_is_delivered_again),
		LABTEST_ALL(fence_handle__offsets_with_gaps),
		LABTEST_ALL(fence_apply__a_connection_broken_at_any_step),
		LABTEST_PG(fence_handle__a_closed_connection_is_an_error),
		LABTEST_MYSQL(fence_handle__a_closed_connection_is_an_error),
		LABTEST_ALL(fence_handle__retried_append_counts_twice),
		LABTEST_ALL(fence_apply__every_step_can_fail),
		LABTEST_ALL(fence_apply__every_step_can_fail_past_2_31),
		LABTEST_ALL(fence_apply__two_refusals_in_a_row),
		LABTEST_ALL(fence_apply__read_back_names_its_own_batch),
		LABTEST_ALL(fence_handle__totals_in_video_id_order),
		LABTEST_ALL(fence_handle__refuses_a_batch_it_cannot_hold),
		LABTEST_ALL(fence_handle__many_views_of_one_video),
		LABTEST_ALL(fence_handle__threads_keep_their_own_batches),
		LABTEST_ALL(fence_handle__threads_at_once_keep_their_own_batches),
		LABTEST_ALL(fence_handle__threads_meet_a_new_size_at_once),
		LABTEST_ALL(fence_apply__two_lost_commits_read_back_at_once),
		LABTEST_ALL(fence_position__offsets_past_2_31),
		LABTEST_ALL(fence_position__threads_keep_their_own_partitions),
		LABTEST_ALL(fence_apply__every_allocation_can_fail),
		LABTEST_ALL(fence_handle__every_allocation_can_fail),
		LABTEST_ALL(fence_apply__every_allocation_can_fail_on_a_full_batch),
		LABTEST_ALL(fence_handle__every_allocation_can_fail_on_a_full_batch),
		LABTEST_ALL(fence_handle__nothing_left_allocated),
		LABTEST_ALL(fence_apply__offsets_past_2_31),
		LABTEST_ALL(fence_apply__views_past_2_31),
		LABTEST_ALL(fence_apply__a_full_batch_of_the_longest_numbers),
		LABTEST_ALL(fence_handle__batch_applied_before_answers_0),
		LABTEST_ALL(fence_apply__leaves_the_session_as_it_found_it),
		LABTEST_ALL(fence__every_call_leaves_the_session_as_it_found_it),
		LABTEST_ALL(fence_apply__leaves_the_batch_as_it_was),
		LABTEST_ALL(fence_consume__zombie_wakes_after_a_rebalance),
		LABTEST_ALL(fence_consume__exact_under_crash_schedules),
		LABTEST_ALL(fence_consume__100k_events_exact),
	};
	return labtest_main("05-fence", tests);
}
