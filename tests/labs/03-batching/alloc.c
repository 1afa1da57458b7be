/*
 * alloc.c: Lab 03's allocation checks (alloc.h).
 *
 * The test binary counts every block allocated by the code linked into it
 * (the student's, the kit's) and can refuse the k-th one
 * (tests/harness/alloc.h). Each operation that allocates runs once per k:
 * a refused allocation must come back as an error, with every like still
 * where it was (pending in the accumulator, or in the inbox for the next
 * rollup), a retry must then work, and after the accumulator is freed no
 * block may be left. Allocations inside libsqlite3 and libpq are not seen.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "labs/03-batching/batch.h"
#include "tests/harness/alloc.h"
#include "tests/harness/steps.h"
#include "tests/labs/03-batching/alloc.h"
#include "util/clock.h"

static struct batch_acc *held;   /* freed at teardown when a check failed */

int batch_alloc_teardown(void **state)
{
	batch_acc_free(held);
	held = NULL;
	return labtest_teardown(state);
}

static struct kit_db *fresh(struct labtest *t)
{
	struct kit_db *db = labtest_db(t);
	lt_expect(batch_setup(db) == 0, NULL, "batch_setup: %s", labtest_why(db));
	return db;
}

static int64_t counted(struct labtest *t)
{
	return labtest_int(t, "SELECT coalesce(sum(n), 0) FROM post_likes");
}

/* ---- the accumulator ---- */

struct acc_case {
	struct labtest *t;
	struct kit_db *db;
	int posts;              /* distinct posts pending before the call */
	enum { NEW, ADD, FLUSH, EMPTY_FLUSH, FLUSH_REFUSED, FLUSH_LARGER } op;
	int step;               /* FLUSH_REFUSED: the statement refused */
	bool step_reached;
	int64_t before;         /* counted in post_likes before the call */
	struct batch_acc *made; /* batch_acc_new's result */
	/* FLUSH: 3 likes of post 1000, one of those pending, added from
	 * another thread once the flush's COMMIT has returned, before the
	 * flush returns (likes that arrive while it runs: they stay pending
	 * for the next flush). A post already there; whatever the add
	 * allocates (an accumulator that moved its sums out for the flush
	 * makes a new table) is never refused: a refusal is the flush's. */
	pthread_t late;
	bool late_started, late_added;
	atomic_bool late_done;
};

enum { LATE_POST = 1000, LATE_LIKES = 3 };

static void *late_add_main(void *arg)
{
	struct acc_case *c = arg;
	lt_alloc_not_this_thread();
	c->late_added = batch_acc_add(held, LATE_POST, LATE_LIKES) == 0;
	atomic_store(&c->late_done, true);
	return NULL;
}

/* The add runs in a thread of its own, waited for at most 100 ms (and
 * joined once the flush returned): a flush that keeps the sums' mutex
 * through its COMMIT makes it wait until the flush returns (other checks
 * name that mistake), never hang this one. An add that comes later than
 * that, on a busy machine, is pending after the flush all the same; only
 * the settle then has nothing new to keep. */
static void late_add_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct acc_case *c = arg;
	(void)sql, (void)t_ns;
	if (ev != KIT_DB_TX_COMMIT || c->late_started)
		return;
	if (pthread_create(&c->late, NULL, late_add_main, c) != 0)
		return;
	c->late_started = true;
	for (int ms = 0; ms < 100 && !atomic_load(&c->late_done); ms++)
		util_sleep_ns(1000000);
}

enum { SMALLER_FLUSH = 4 };   /* FLUSH_LARGER's first flush, of that many posts */

static void acc_setup(void *arg)
{
	struct acc_case *c = arg;
	if (c->op == NEW)
		return;
	held = batch_acc_new();
	lt_expect(held != NULL, "acc", "batch_acc_new returned NULL with nothing refused");
	/* FLUSH_LARGER: a smaller flush first, which works (what a flush
	 * keeps in the accumulator between flushes, a copy buffer, is made
	 * there; the refused one must then grow it) */
	for (int i = 0; c->op == FLUSH_LARGER && i < SMALLER_FLUSH; i++)
		lt_expect_int_hint(batch_acc_add(held, 2000 + i, 1), 0,
		                   "batch_acc_add with nothing refused", "acc");
	if (c->op == FLUSH_LARGER)
		lt_expect(batch_acc_flush(held, c->db) == 0 && batch_acc_pending(held) == 0, "acc",
		          "a flush of %d posts with nothing refused: %s", SMALLER_FLUSH,
		          labtest_why(c->db));
	for (int i = 0; i < c->posts; i++)
		lt_expect_int_hint(batch_acc_add(held, 1000 + i, 1 + i % 3), 0,
		                   "batch_acc_add with nothing refused", "acc");
	c->before = counted(c->t);
}

static int64_t pending_of(int posts)
{
	int64_t n = 0;
	for (int i = 0; i < posts; i++)
		n += 1 + i % 3;
	return n;
}

static int acc_call(void *arg)
{
	struct acc_case *c = arg;
	switch (c->op) {
	case NEW:
		c->made = batch_acc_new();
		return c->made ? 0 : -1;
	case ADD:
		return batch_acc_add(held, 5000, 7);    /* a post not pending yet */
	case FLUSH: {
		c->late_started = c->late_added = false;
		atomic_store(&c->late_done, false);
		kit_db_set_hook(c->db, late_add_hook, c);
		int rc = batch_acc_flush(held, c->db);
		kit_db_set_hook(c->db, NULL, NULL);
		if (c->late_started)
			pthread_join(c->late, NULL);
		return rc;
	}
	case EMPTY_FLUSH:
		return batch_acc_flush(held, c->db);
	case FLUSH_LARGER:
		c->late_added = false;
		return batch_acc_flush(held, c->db);
	case FLUSH_REFUSED: {
		c->late_added = false;
		lt_step_arm(LT_STEP_FAILS, c->step);
		int rc = batch_acc_flush(held, c->db);
		c->step_reached = lt_step_disarm();
		return rc;
	}
	}
	return 0;
}

/* Why a flush refused twice over loses likes, for FLUSH_REFUSED's messages. */
#define PUT_BACK_NEEDS_MEMORY "A flush that takes the sums out before writing them and " \
	"puts them back on failure needs memory to put them back, and loses them when it has " \
	"none: leave the sums where they are until the database has said yes, and write a copy"

static void acc_check(void *arg, int k, bool failed, int rc)
{
	struct acc_case *c = arg;
	int64_t pending = pending_of(c->posts);
	switch (c->op) {
	case NEW:
		if (failed)
			lt_expect(c->made == NULL, "alloc", "batch_acc_new returned an accumulator "
			          "although its allocation %d was refused", k);
		else
			lt_expect(c->made != NULL, "acc", "batch_acc_new returned NULL with no allocation refused");
		return;
	case ADD:
		if (failed) {
			lt_expect_int_hint(rc, KIT_DB_ERR, "batch_acc_add with its allocation refused "
			                   "(batch.h: KIT_DB_ERR when out of memory)", "alloc");
			lt_expect_int_hint(batch_acc_pending(held), pending,
			                   "pending after a refused add (nothing may be counted)", "alloc");
			lt_expect_int_hint(batch_acc_add(held, 5000, 7), 0, "the same add again", "alloc");
		} else {
			lt_expect_int_hint(rc, 0, "batch_acc_add", "acc");
		}
		lt_expect_int_hint(batch_acc_pending(held), pending + 7, "pending after the add", "alloc");
		return;
	case EMPTY_FLUSH:
		lt_expect_int_hint(rc, 0, "a flush with nothing pending returns 0 (batch.h); "
		                   "with an allocation refused it must not have tried one", "alloc");
		return;
	case FLUSH_REFUSED:
		if (!failed && !c->step_reached)
			break;
		lt_expect(rc < 0, "flush-failure", "a flush with its statement %d refused%s returned %d",
		          c->step, failed ? " and an allocation refused" : "", rc);
		lt_expect(batch_acc_pending(held) == pending && counted(c->t) == c->before,
		          "flush-failure", "a flush with its statement %d refused and then its "
		          "allocation %d (after the refusal, if the flush makes one there): %lld "
		          "pending, %lld written (expected %lld and %lld). %s", c->step, k,
		          (long long)batch_acc_pending(held), (long long)counted(c->t),
		          (long long)pending, (long long)c->before, PUT_BACK_NEEDS_MEMORY);
		lt_expect(batch_acc_flush(held, c->db) == 0, "alloc", "the flush again, nothing "
		          "refused: %s", labtest_why(c->db));
		int64_t now = counted(c->t);
		lt_expect(now == c->before + pending, "flush-failure", "a flush with its statement %d "
		          "refused and then its allocation %d, then the flush again with nothing "
		          "refused: %lld likes written in all, expected %lld (batch_acc_pending said "
		          "every like was still pending). %s", c->step, k,
		          (long long)(now - c->before), (long long)pending, PUT_BACK_NEEDS_MEMORY);
		return;
	case FLUSH:
	case FLUSH_LARGER:
		break;
	}
	int64_t late = c->late_added ? LATE_LIKES : 0;
	if (failed) {
		lt_expect(rc < 0, "alloc", "allocation %d of the flush refused, yet it returned %d: "
		          "a NULL from malloc is a failure to report (%s). Or does the flush try "
		          "again after a refusal and report the second try's success? The refused "
		          "allocation is the flush's failure: return it, and the caller flushes "
		          "again", k, rc,
		          late ? "the flush reached a COMMIT, while 3 likes of a post it wrote, "
		          "added meanwhile, were pending: does the flush take back what it wrote by "
		          "building new sums, "
		          "and keep the old ones, written likes and all, when that allocation fails?"
		          : "it was refused before the flush's COMMIT");
		lt_expect(rc >= 0 || rc == KIT_DB_ERR, "alloc", "batch_acc_flush with allocation %d "
		          "refused returned %d: batch.h names the code for a failed allocation, "
		          "KIT_DB_ERR (a code of your own, -ENOMEM or -1, is none a caller can test "
		          "for)", k, rc);
		lt_expect_int_hint(batch_acc_pending(held), pending + late,
		                   "pending after a flush whose allocation was refused (all must stay)", "alloc");
		lt_expect_int_hint(counted(c->t), c->before,
		                   "likes in post_likes after a flush that failed (none may be written)", "alloc");
		lt_expect(batch_acc_flush(held, c->db) == 0, "alloc", "the flush again, nothing refused: %s",
		          labtest_why(c->db));
	} else {
		lt_expect(rc == 0, "acc", "batch_acc_flush: %s", labtest_why(c->db));
		lt_expect_int_hint(batch_acc_pending(held), late,
		                   "pending after a flush that worked, with 3 likes added after its COMMIT "
		                   "(they wait for the next flush)", "alloc");
		lt_expect(batch_acc_flush(held, c->db) == 0, "alloc", "the next flush: %s",
		          labtest_why(c->db));
	}
	lt_expect_int_hint(batch_acc_pending(held), 0, "pending after a flush that worked", "alloc");
	lt_expect_int_hint(counted(c->t), c->before + pending + late,
	                   "likes in post_likes after the flush", "alloc");
}

static void acc_teardown(void *arg)
{
	struct acc_case *c = arg;
	batch_acc_free(c->op == NEW ? c->made : held);
	c->made = NULL;
	if (c->op != NEW)
		held = NULL;
}

void batch_acc__every_allocation_can_fail(void **state)
{
	struct labtest *t = *state;
	struct acc_case c = { .t = t, .db = fresh(t) };
	struct lt_alloc_case ac = { .arg = &c, .setup = acc_setup, .call = acc_call,
	                            .check = acc_check, .teardown = acc_teardown };
	ac.what = "batch_acc_new";
	c.op = NEW;
	lt_alloc_each(&ac);
	/* The first post of an empty accumulator, and the 17th, 33rd (where a
	 * doubling table grows). */
	ac.what = "batch_acc_add";
	c.op = ADD;
	for (int posts = 0; posts <= 32; posts += 16) {
		c.posts = posts;
		lt_alloc_each(&ac);
	}
	ac.what = "batch_acc_flush";
	c.op = FLUSH;
	c.posts = 20;
	lt_alloc_each(&ac);
	/* The same for a later flush, of more posts than a first one that
	 * worked: refused, it must lose nothing it had before either. A copy
	 * buffer kept in the accumulator and grown with p = realloc(p, n)
	 * loses the old block when realloc answers NULL (realloc(NULL, n) on
	 * a first flush has nothing to lose), and batch_acc_free then frees
	 * the NULL, not the block: lt_alloc_each finds it still allocated. */
	ac.what = "batch_acc_flush of 40 posts after a flush of 4 (an old block that a refused "
	          "p = realloc(p, n) overwrote with NULL is lost: keep the old pointer until the "
	          "new one is not NULL)";
	c.op = FLUSH_LARGER;
	c.posts = 40;
	lt_alloc_each(&ac);
	ac.what = "batch_acc_flush of nothing";
	c.op = EMPTY_FLUSH;
	c.posts = 0;
	lt_alloc_each(&ac);
	/* Two failures in one flush: its statement k refused, and then each
	 * allocation in turn, the ones its failure path makes included (a
	 * flush that moved the sums out and puts them back on failure). */
	ac.what = "batch_acc_flush with a statement refused";
	c.op = FLUSH_REFUSED;
	c.posts = 20;
	for (c.step = 1; c.step <= 8; c.step++) {
		lt_alloc_each(&ac);
		if (!c.step_reached)
			break;
	}
}

/* ---- the rollup ---- */

struct rollup_case {
	struct labtest *t;
	struct kit_db *db;
	int64_t round, before, moved;
};

enum { ROLLUP_POSTS = 20 };   /* more than a table of 16 holds */

static void rollup_setup(void *arg)
{
	struct rollup_case *c = arg;
	c->round++;
	lt_expect(kit_db_begin(c->db) == 0, NULL, "BEGIN: %s", labtest_why(c->db));
	for (int p = 0; p < ROLLUP_POSTS; p++) {
		int rc = batch_record_like(c->db, 100 + p, c->round);
		lt_expect(rc == 0, "one-per-user", "batch_record_like(%d, %lld): %s", 100 + p,
		          (long long)c->round, labtest_why(c->db));
	}
	lt_expect(kit_db_commit(c->db) == 0, NULL, "COMMIT: %s", labtest_why(c->db));
	c->before = counted(c->t);
	c->moved = -1;
}

static int rollup_call(void *arg)
{
	struct rollup_case *c = arg;
	return batch_rollup(c->db, &c->moved);
}

static void rollup_check(void *arg, int k, bool failed, int rc)
{
	struct rollup_case *c = arg;
	if (failed) {
		lt_expect(rc < 0, "alloc", "allocation %d of the rollup refused, yet it returned %d", k, rc);
		lt_expect(rc >= 0 || rc == KIT_DB_ERR, "alloc", "batch_rollup with allocation %d refused returned %d: "
		          "batch.h names the code for a failed allocation, KIT_DB_ERR (a code of your own, -ENOMEM or -1, is none a caller can test for)", k, rc);
		lt_expect_int_hint(c->moved, -1, "*moved after a failed rollup (batch.h: left alone)", "alloc");
		lt_expect_int_hint(counted(c->t), c->before,
		                   "likes in post_likes after a rollup that failed (it must roll back)", "alloc");
		c->moved = -1;
		rc = batch_rollup(c->db, &c->moved);
		lt_expect(rc == 0, "alloc", "the rollup again, nothing refused: %s", labtest_why(c->db));
	} else {
		lt_expect(rc == 0, "rollup", "batch_rollup: %s", labtest_why(c->db));
	}
	lt_expect_int_hint(c->moved, ROLLUP_POSTS, "likes moved by the rollup that worked", "alloc");
	lt_expect_int_hint(counted(c->t), c->before + ROLLUP_POSTS, "likes in post_likes after it", "alloc");
}

void batch_rollup__every_allocation_can_fail(void **state)
{
	struct labtest *t = *state;
	struct rollup_case c = { .t = t, .db = fresh(t) };
	struct lt_alloc_case ac = { .arg = &c, .setup = rollup_setup, .call = rollup_call,
	                            .check = rollup_check, .what = "batch_rollup" };
	lt_alloc_each(&ac);
}

/* ---- nothing left ---- */

void batch_rollup__nothing_left_allocated(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	size_t base = lt_alloc_live();

	lt_expect(batch_like(db, 1, 1) == 0, "one-per-user", "batch_like: %s", labtest_why(db));
	lt_alloc_expect_none_left(base, "batch_like");
	lt_expect(batch_like(db, 1, 1) == KIT_DB_CONSTRAINT, "one-per-user", "a repeat like was not refused");
	lt_alloc_expect_none_left(base, "a refused repeat like");
	int64_t moved = 0, n = 0;
	lt_expect(batch_rollup(db, &moved) == 0, "rollup", "batch_rollup: %s", labtest_why(db));
	lt_alloc_expect_none_left(base, "batch_rollup");
	lt_expect(batch_count(db, 1, &n) == 0 && n == 1, "rollup", "batch_count: %s", labtest_why(db));
	lt_alloc_expect_none_left(base, "batch_count");
	labtest_expect_fresh(t, "batch_rollup__nothing_left_allocated", "alloc", LT_KEPT_BLOCK);
}

void batch_acc__nothing_left_allocated(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = fresh(t);
	size_t base = lt_alloc_live();

	held = batch_acc_new();
	lt_expect(held != NULL, "acc", "batch_acc_new returned NULL");
	batch_acc_free(held);
	held = NULL;
	lt_alloc_expect_none_left(base, "batch_acc_new and batch_acc_free of an empty accumulator");

	/* 1,007 posts: three upserts, and a pending table that grew six times. */
	held = batch_acc_new();
	for (int p = 0; p < 1007; p++)
		lt_expect_int_hint(batch_acc_add(held, 10 + p, 1), 0, "batch_acc_add", "acc");
	lt_expect(batch_acc_flush(held, db) == 0, "acc", "batch_acc_flush: %s", labtest_why(db));
	batch_acc_add(held, 3, 2);
	batch_acc_free(held);    /* one post still pending: freed with it */
	held = NULL;
	lt_alloc_expect_none_left(base, "an accumulator of 1,007 posts was flushed and freed with one post pending");
	labtest_expect_fresh(t, "batch_acc__nothing_left_allocated", "alloc", LT_KEPT_BLOCK);
}
