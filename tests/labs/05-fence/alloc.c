/*
 * alloc.c: Lab 05's allocation checks (alloc.h).
 *
 * The test binary counts every block allocated by the code linked into it
 * (the student's, the kit's) and can refuse the k-th one
 * (tests/harness/alloc.h). fence_apply() and fence_handle() run once per
 * k: a refused allocation must come back as a negative code with the
 * transaction rolled back (the fence and the views exactly as before), so
 * that the log delivers the batch again; the retry applies it once. No
 * block may be left allocated after any call. Allocations inside
 * libsqlite3, libpq and the MariaDB client are not seen.
 */
#include <stdio.h>
#include <string.h>

#include "labs/05-fence/fence.h"
#include "tests/harness/alloc.h"
#include "tests/harness/labtest.h"
#include "tests/labs/05-fence/alloc.h"

#include <stdint.h>

enum { VIDEOS = 40, EVENTS = 100, MAX_EVENTS = 400 };

static void prepare(struct labtest *t)
{
	labtest_exec(t, FENCE_SCHEMA);
	labtest_exec(t, "INSERT INTO log_progress (part, last_offset) VALUES (0, -1)");
}

static int64_t stored(struct labtest *t)
{
	return labtest_int(t, "SELECT last_offset FROM log_progress WHERE part = 0");
}

static int64_t views(struct labtest *t)
{
	return labtest_int(t, "SELECT coalesce(sum(views), 0) FROM video_views");
}

struct round {
	struct labtest *t;
	struct kit_db *db;
	bool handle;                       /* fence_handle, else fence_apply */
	int videos, events;                /* VIDEOS and EVENTS, or a full batch */
	bool long_ids;                     /* ids of 19 digits, half of them negative */
	int64_t first, views_before;
	struct fence_batch b;
	struct fence_event ev[MAX_EVENTS];
	struct kit_log_record recs[MAX_EVENTS];
};

/* Video v of the batch (0 <= v < videos), in ascending order: 7 + v, or
 * with long ids INT64_MIN + v for the first half and INT64_MAX - ... for
 * the second, each 19 digits and a sign. */
static int64_t video(const struct round *r, int v)
{
	if (!r->long_ids)
		return 7 + v;
	return v < r->videos / 2 ? INT64_MIN + v : INT64_MAX - (r->videos - 1 - v);
}

/* The next batch: events views of videos videos, right after the fence. */
static void next_batch(void *arg)
{
	struct round *r = arg;
	r->first = stored(r->t) + 1;
	r->views_before = views(r->t);
	memset(&r->b, 0, sizeof r->b);
	r->b.part = 0;
	r->b.first = r->first;
	r->b.last = r->first + r->events - 1;
	for (int i = 0; i < r->events; i++) {
		r->ev[i].video_id = video(r, i % r->videos);
		r->recs[i] = (struct kit_log_record){ r->first + i, sizeof r->ev[i], &r->ev[i] };
	}
	for (int v = 0; v < r->videos; v++)
		r->b.totals[r->b.n++] = (struct fence_total){ video(r, v), r->events / r->videos +
		                                              (v < r->events % r->videos) };
}

static int call(void *arg)
{
	struct round *r = arg;
	return r->handle ? fence_handle(r->db, 0, r->recs, r->events) : fence_apply(r->db, &r->b);
}

static void check(void *arg, int k, bool failed, int rc)
{
	struct round *r = arg;
	const char *what = r->handle ? "fence_handle" : "fence_apply";
	int done = r->handle ? 0 : 1;
	if (failed) {
		lt_expect(rc < 0, r->handle ? "handle-error" : "alloc",
		          "%s with allocation %d refused returned %d: a batch that did not go in "
		          "must come back negative, or the log never delivers it again", what, k, rc);
		/* fence.h: "fence_apply() rolls back and returns KIT_DB_ERR, and
		 * fence_handle() returns it". -ENOMEM (errno's code negated) or
		 * KIT_DB_BUSY is none of the codes the header gives a caller to
		 * read: BUSY says "a lock wait gave up, retry soon". */
		lt_expect(rc >= 0 || rc == KIT_DB_ERR, "alloc",
		          "%s with allocation %d refused returned %d: expected KIT_DB_ERR (%d), as "
		          "fence.h says for an allocation that fails (-ENOMEM, errno's code negated, "
		          "or KIT_DB_BUSY, a lock wait, is not what happened)", what, k, rc, KIT_DB_ERR);
		lt_expect_int_hint(stored(r->t), r->first - 1,
		                   "the partition's stored offset after a call whose allocation was refused "
		                   "(the transaction must roll back)", "alloc");
		lt_expect_int_hint(views(r->t), r->views_before,
		                   "views in video_views after a call whose allocation was refused", "alloc");
		rc = call(r);
		lt_expect(rc == done, "alloc", "%s again, nothing refused, returned %d: %s", what, rc,
		          labtest_why(r->db));
	} else {
		lt_expect(rc == done, NULL, "%s returned %d: %s", what, rc, labtest_why(r->db));
	}
	lt_expect_int_hint(stored(r->t), r->first + r->events - 1, "the stored offset after the batch went in",
	                   "alloc");
	lt_expect_int_hint(views(r->t), r->views_before + r->events, "views after the batch went in (once)",
	                   "alloc");
}

static void every_allocation(struct labtest *t, bool handle, bool full)
{
	static struct round r;     /* big: not on the stack */
	memset(&r, 0, sizeof r);
	prepare(t);
	r.t = t;
	r.db = labtest_db(t);
	r.handle = handle;
	r.videos = full ? FENCE_MAX_VIDEOS : VIDEOS;
	r.events = full ? MAX_EVENTS : EVENTS;
	r.long_ids = full;
	struct lt_alloc_case c = { .arg = &r, .setup = next_batch, .call = call, .check = check,
	                           .what = handle ? "fence_handle" : "fence_apply" };
	lt_alloc_each(&c);
}

void fence_apply__every_allocation_can_fail(void **state)
{
	every_allocation(*state, false, false);
}

void fence_handle__every_allocation_can_fail(void **state)
{
	every_allocation(*state, true, false);
}

/* The same with the biggest batch fence.h allows: FENCE_MAX_VIDEOS
 * distinct videos whose ids have 19 digits and a sign. Text that grows
 * only past some size (a buffer of 1,024 bytes doubled by realloc when
 * the upsert outgrows it, a second block for the long numbers) meets its
 * refusal only here: "sql = realloc(sql, cap)" loses the block it had
 * when realloc answers NULL, and every refused batch of a consumer
 * through an outage leaks one. Keep the old pointer until the new one is
 * known, or size the text for n videos at once. */
void fence_apply__every_allocation_can_fail_on_a_full_batch(void **state)
{
	every_allocation(*state, false, true);
}

void fence_handle__every_allocation_can_fail_on_a_full_batch(void **state)
{
	every_allocation(*state, true, true);
}

/* Each call, on each of its ways out: applied, refused by the fence, a
 * record it cannot read, and a position read. */
void fence_handle__nothing_left_allocated(void **state)
{
	struct labtest *t = *state;
	static struct round r;
	memset(&r, 0, sizeof r);
	prepare(t);
	r.t = t;
	r.db = labtest_db(t);
	r.videos = VIDEOS;
	r.events = EVENTS;
	size_t base = lt_alloc_live();

	next_batch(&r);
	lt_expect_int(fence_apply(r.db, &r.b), 1, "fence_apply of the next batch");
	lt_alloc_expect_none_left(base, "fence_apply of a batch it applied");
	lt_expect_int(fence_apply(r.db, &r.b), 0, "fence_apply of the same batch again");
	lt_alloc_expect_none_left(base, "fence_apply of a batch the fence refused");

	next_batch(&r);
	lt_expect_int(fence_handle(r.db, 0, r.recs, EVENTS), 0, "fence_handle of the next batch");
	lt_alloc_expect_none_left(base, "fence_handle of a batch it applied");
	lt_expect_int(fence_handle(r.db, 0, r.recs, EVENTS), 0, "fence_handle of the same batch again");
	lt_alloc_expect_none_left(base, "fence_handle of a batch applied before");
	next_batch(&r);
	r.recs[EVENTS / 2].len = 4;      /* a record of the wrong length */
	lt_expect(fence_handle(r.db, 0, r.recs, EVENTS) < 0, "totals",
	          "fence_handle of a batch with a record it cannot read returned 0");
	lt_alloc_expect_none_left(base, "fence_handle of a batch with a record it cannot read");

	/* the other batch it must refuse: one video more than it may hold */
	static struct fence_event many[FENCE_MAX_VIDEOS + 1];
	static struct kit_log_record many_recs[FENCE_MAX_VIDEOS + 1];
	int64_t from = stored(t) + 1;
	for (int i = 0; i <= FENCE_MAX_VIDEOS; i++) {
		many[i].video_id = 1000 + i;
		many_recs[i] = (struct kit_log_record){ from + i, sizeof many[i], &many[i] };
	}
	lt_expect(fence_handle(r.db, 0, many_recs, FENCE_MAX_VIDEOS + 1) < 0, "totals",
	          "fence_handle of a batch of %d distinct videos (the most is %d) returned 0",
	          FENCE_MAX_VIDEOS + 1, FENCE_MAX_VIDEOS);
	lt_alloc_expect_none_left(base, "fence_handle of a batch of more videos than it may hold "
	                          "(does that way out return before the batch is freed?)");

	int64_t next = -1;
	lt_expect_int(fence_position(r.db, 0, &next), 0, "fence_position");
	lt_alloc_expect_none_left(base, "fence_position");
	labtest_expect_fresh(t, "fence_handle__nothing_left_allocated", "alloc", LT_KEPT_BLOCK);
}
