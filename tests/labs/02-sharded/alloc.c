/*
 * alloc.c: Lab 02's allocation checks (alloc.h).
 *
 * The test binary counts every block allocated by the code linked into it
 * and can refuse the k-th one the student's code makes
 * (tests/harness/alloc.h). A shrink runs once per k: a refused allocation
 * must come back as an error with the shrink rolled back (the post's N
 * and its count as before), and the same shrink must then work. After
 * every call, nothing the code allocated may still be allocated.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "labs/02-sharded/shard.h"
#include "tests/harness/alloc.h"
#include "tests/harness/labtest.h"
#include "tests/labs/02-sharded/alloc.h"
#include "util/clock.h"

#define POST 42
#define LIKES 40

static uint32_t counting(void *arg)        /* 0, 1, 2, ... */
{
	uint32_t *next = arg;
	return (*next)++;
}

static struct kit_db *fresh(struct labtest *t)
{
	struct kit_db *db = labtest_db(t);
	lt_expect(shard_setup(db) == 0, NULL, "shard_setup: %s", labtest_why(db));
	uint32_t next = 0;
	for (int i = 0; i < LIKES; i++)
		lt_expect(shard_increment(db, POST, counting, &next) == 0, "upsert", "shard_increment: %s",
		          labtest_why(db));
	return db;
}

static int64_t total(struct kit_db *db)
{
	int64_t n = -1;
	lt_expect(shard_read(db, POST, &n) == 0, "sum-all-slots", "shard_read: %s", labtest_why(db));
	return n;
}

static int slots(struct kit_db *db)
{
	int n = -1;
	lt_expect(shard_slots(db, POST, &n) == 0, "live-n", "shard_slots: %s", labtest_why(db));
	return n;
}

struct shrink {
	struct kit_db *db;
};

/* Every round starts from 16 slots, all holding likes. */
static void back_to_16(void *arg)
{
	struct shrink *s = arg;
	lt_expect(shard_resize(s->db, POST, 16) == 0, "fold", "shard_resize to 16: %s", labtest_why(s->db));
	/* the last shrink folded every row into slots 0..3: spread the 40
	 * likes over all 16 again, so that each round's shrink has 12 rows
	 * past N to fold (a fold that allocates per row is refused at each) */
	lt_expect(kit_db_exec(s->db, "DELETE FROM like_slots WHERE post_id = 42", 0, NULL) == 0,
	          NULL, "DELETE: %s", labtest_why(s->db));
	lt_expect(kit_db_exec(s->db, "INSERT INTO like_slots (post_id, slot, n) VALUES "
	                      "(42, 0, 3), (42, 1, 3), (42, 2, 3), (42, 3, 3), (42, 4, 3), (42, 5, 3),"
	                      " (42, 6, 3), (42, 7, 3), (42, 8, 2), (42, 9, 2), (42, 10, 2), (42, 11, 2),"
	                      " (42, 12, 2), (42, 13, 2), (42, 14, 2), (42, 15, 2)", 0, NULL) == 0,
	          NULL, "INSERT: %s", labtest_why(s->db));
}

static int shrink_call(void *arg)
{
	struct shrink *s = arg;
	return shard_resize(s->db, POST, 4);
}

static void shrink_check(void *arg, int k, bool failed, int rc)
{
	struct shrink *s = arg;
	if (failed) {
		lt_expect(rc < 0, "alloc", "shard_resize to 4 with allocation %d refused returned %d: "
		          "a shrink that did not happen must be an error", k, rc);
		lt_expect(rc >= 0 || rc == KIT_DB_ERR, "alloc", "shard_resize to 4 with allocation %d refused returned %d: "
		          "shard.h names the code for a failed allocation, KIT_DB_ERR (a code of your own, -ENOMEM or -1, is none a caller can test for)", k, rc);
		lt_expect_int_hint(slots(s->db), 16, "N after a shrink whose allocation was refused "
		                   "(it must roll back)", "alloc");
		lt_expect_int_hint(total(s->db), LIKES, "the count after a refused shrink", "alloc");
		rc = shard_resize(s->db, POST, 4);
		lt_expect(rc == 0, "alloc", "the same shrink again, nothing refused: %s", labtest_why(s->db));
	} else {
		lt_expect(rc == 0, "fold", "shard_resize to 4: %s", labtest_why(s->db));
	}
	lt_expect_int_hint(slots(s->db), 4, "N after the shrink", "fold");
	lt_expect_int_hint(total(s->db), LIKES, "the count after the shrink", "fold");
}

/* A grow is a resize too: the same promise when it records the new N. */
static void back_to_4(void *arg)
{
	struct shrink *s = arg;
	lt_expect(shard_resize(s->db, POST, 4) == 0, "fold", "shard_resize to 4: %s", labtest_why(s->db));
}

static int grow_call(void *arg)
{
	struct shrink *s = arg;
	return shard_resize(s->db, POST, 16);
}

static void grow_check(void *arg, int k, bool failed, int rc)
{
	struct shrink *s = arg;
	if (failed) {
		lt_expect(rc < 0, "alloc", "shard_resize from 4 to 16 with allocation %d refused returned "
		          "%d: a growth that did not happen must be an error", k, rc);
		lt_expect(rc >= 0 || rc == KIT_DB_ERR, "alloc", "shard_resize from 4 to 16 with allocation %d refused returned %d: "
		          "shard.h names the code for a failed allocation, KIT_DB_ERR (a code of your own, -ENOMEM or -1, is none a caller can test for)", k, rc);
		lt_expect_int_hint(slots(s->db), 4, "N after a growth whose allocation was refused", "alloc");
		rc = shard_resize(s->db, POST, 16);
		lt_expect(rc == 0, "alloc", "the same growth again, nothing refused: %s", labtest_why(s->db));
	} else {
		lt_expect(rc == 0, "fold", "shard_resize to 16: %s", labtest_why(s->db));
	}
	lt_expect_int_hint(slots(s->db), 16, "N after the growth", "live-n");
	lt_expect_int_hint(total(s->db), LIKES, "the count after the growth", "fold");
}

void shard_resize__every_allocation_can_fail(void **state)
{
	struct shrink s = { fresh(*state) };
	struct lt_alloc_case c = { .arg = &s, .setup = back_to_16, .call = shrink_call,
	                           .check = shrink_check, .what = "shard_resize" };
	lt_alloc_each(&c);
	struct lt_alloc_case g = { .arg = &s, .setup = back_to_4, .call = grow_call,
	                           .check = grow_check, .what = "shard_resize (a growth)" };
	lt_alloc_each(&g);
}

void shard_resize__nothing_left_allocated(void **state)
{
	struct kit_db *db = fresh(*state);
	size_t base = lt_alloc_live();
	lt_expect(shard_resize(db, POST, 3) == 0, "fold", "shard_resize to 3: %s", labtest_why(db));
	lt_alloc_expect_none_left(base, "a shrink from 16 slots to 3");
	lt_expect(shard_resize(db, POST, SHARD_MAX_SLOTS) == 0, "fold", "shard_resize to the most: %s",
	          labtest_why(db));
	lt_alloc_expect_none_left(base, "a growth to SHARD_MAX_SLOTS");
	lt_expect(shard_resize(db, POST, 0) < 0, "bad-n", "shard_resize to 0 was not refused");
	lt_alloc_expect_none_left(base, "a refused shard_resize to 0");
	lt_expect_int_hint(total(db), LIKES, "the count after the resizes", "fold");
}

/* Each call, then this check again alone in a fresh process
 * (labtest_rerun_fresh): a block allocated once for the whole process (a
 * statement's text built at the first call and kept, "build the SQL
 * once") is never freed, and is left over there. */
void shard_increment__nothing_left_allocated(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	lt_expect(shard_setup(db) == 0, NULL, "shard_setup: %s", labtest_why(db));
	size_t base = lt_alloc_live();
	uint32_t next = 7;
	lt_expect(shard_increment(db, POST, counting, &next) == 0, "upsert", "shard_increment: %s",
	          labtest_why(db));
	lt_alloc_expect_none_left(base, "shard_increment");
	lt_expect_int_hint(total(db), 1, "the count after one like", "never-liked");
	lt_alloc_expect_none_left(base, "shard_read");
	lt_expect_int_hint(slots(db), SHARD_DEFAULT_SLOTS, "N of a post never resized", "live-n");
	lt_alloc_expect_none_left(base, "shard_slots");
	lt_expect(shard_resize(db, POST, 4) == 0, "fold", "shard_resize to 4: %s", labtest_why(db));
	lt_alloc_expect_none_left(base, "a shrink to 4");
	lt_expect(shard_resize(db, POST, 16) == 0, "fold", "shard_resize to 16: %s", labtest_why(db));
	lt_alloc_expect_none_left(base, "a growth to 16");
	lt_expect_int_hint(total(db), 1, "the count after the shrink and the growth", "fold");
	labtest_expect_fresh(t, "shard_increment__nothing_left_allocated", "alloc",
	                     "a block allocated once for the whole process (a statement's text "
	                     "built at the first call and kept, \"build the SQL once\") is never "
	                     "freed either (shard.h: no call leaves a block allocated)");
}

/* A like or a read whose allocation is refused is a failure like a
 * refused statement (shard.h): an error, the count as it was (a like
 * dropped while the caller hears 0 is a like lost without a word), *total
 * untouched, no block left, and the retry works. */
struct one_call {
	struct kit_db *db;
	int64_t before;       /* the count when the round began */
	int64_t sum;          /* what shard_read stored, -7 when it stored nothing */
	uint32_t next;
	uint32_t drawn;       /* next when the round began */
};

static void count_before(void *arg)
{
	struct one_call *o = arg;
	o->before = total(o->db);
	o->sum = -7;
	o->drawn = o->next;
}

static int like_call(void *arg)
{
	struct one_call *o = arg;
	return shard_increment(o->db, POST, counting, &o->next);
}

static void like_check(void *arg, int k, bool failed, int rc)
{
	struct one_call *o = arg;
	if (failed) {
		lt_expect(rc < 0, "alloc", "shard_increment with allocation %d refused returned %d: a "
		          "like that was not recorded must be an error (is a NULL from malloc or a -1 from asprintf "
		          "answered with 0? return KIT_DB_ERR)", k, rc);
		lt_expect(rc >= 0 || rc == KIT_DB_ERR, "alloc", "shard_increment with allocation %d refused returned %d: "
		          "shard.h names the code for a failed allocation, KIT_DB_ERR (a code of your own, -ENOMEM or -1, is none a caller can test for)", k, rc);
		lt_expect_int_hint(total(o->db), o->before, "the count after a like whose allocation "
		                   "was refused (nothing may be written)", "alloc");
		lt_expect(o->next - o->drawn == 1, "alloc", "shard_increment with allocation %d "
		          "refused called the random source %u times; shard.h: exactly once a like, "
		          "failed or not (a caller stepping a known sequence, a replay or a test, is "
		          "then one draw out from every like after). Is the draw made only after an "
		          "allocation that can fail? Draw first", k, (unsigned)(o->next - o->drawn));
		lt_expect(shard_increment(o->db, POST, counting, &o->next) == 0, "alloc",
		          "the same like again, nothing refused: %s", labtest_why(o->db));
	} else {
		lt_expect(rc == 0, "upsert", "shard_increment: %s", labtest_why(o->db));
	}
	lt_expect_int_hint(total(o->db), o->before + 1, "the count after the like", "upsert");
}

void shard_increment__every_allocation_can_fail(void **state)
{
	struct one_call o = { .db = fresh(*state) };
	struct lt_alloc_case c = { .arg = &o, .setup = count_before, .call = like_call,
	                           .check = like_check, .what = "shard_increment" };
	lt_alloc_each(&c);
}

static int read_call(void *arg)
{
	struct one_call *o = arg;
	return shard_read(o->db, POST, &o->sum);
}

static void read_check(void *arg, int k, bool failed, int rc)
{
	struct one_call *o = arg;
	if (failed) {
		lt_expect(rc < 0 && o->sum == -7, "alloc", "shard_read with allocation %d refused "
		          "returned %d and set *total to %lld; expected an error and *total untouched "
		          "(a read that could not run knows no count, not a count of 0)",
		          k, rc, (long long)o->sum);
		lt_expect(rc >= 0 || rc == KIT_DB_ERR, "alloc", "shard_read with allocation %d refused returned %d: "
		          "shard.h names the code for a failed allocation, KIT_DB_ERR (a code of your own, -ENOMEM or -1, is none a caller can test for)", k, rc);
		lt_expect(shard_read(o->db, POST, &o->sum) == 0, "alloc",
		          "the same read again, nothing refused: %s", labtest_why(o->db));
	} else {
		lt_expect(rc == 0, "sum-all-slots", "shard_read: %s", labtest_why(o->db));
	}
	lt_expect_int_hint(o->sum, LIKES, "shard_read's count", "sum-all-slots");
}

void shard_read__every_allocation_can_fail(void **state)
{
	struct one_call o = { .db = fresh(*state) };
	struct lt_alloc_case c = { .arg = &o, .setup = count_before, .call = read_call,
	                           .check = read_check, .what = "shard_read" };
	lt_alloc_each(&c);
}
