/*
 * contracts.c: Lab 08's checks of what inside.h promises beyond
 * test_inside.c's measurements: the one-statement like changes its own
 * post and no other, a like or a count of a row that is not there is
 * INSIDE_NO_ROW, every function with each of its statements refused (or
 * its answer lost) returns the error and leaves a connection that works,
 * inside_versions() fills *out as promised on both engines, and the
 * backoff neither waits after the last attempt nor ends a wait early
 * when a signal interrupts it.
 */
#include "tests/labs/08-engine/contracts.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "labs/08-engine/inside.h"
#include "tests/harness/alloc.h"
#include "tests/harness/labtest.h"
#include "tests/harness/session.h"
#include "tests/harness/steps.h"
#include "tests/labs/08-engine/sleeps.h"
#include "util/clock.h"

#define SWEEP_MAX 20            /* more statements than any call here runs */

static int64_t likes_of(struct labtest *t, int post)
{
	char sql[100];
	snprintf(sql, sizeof sql, "SELECT likes FROM posts WHERE id = %d", post);
	return labtest_int(t, sql);
}

/* Two posts: a like of post 1, as one statement, adds one to post 1 and
 * nothing to post 2. An UPDATE that lost its WHERE adds one to every post
 * (and, its change count being 2, may even report failure after the
 * statement committed). */
void one_trip__likes_only_its_post(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, INSIDE_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (2), (3)");
	int rc = inside_like_one_statement(db, 1, 7);
	lt_expect(likes_of(t, 1) == 1 && likes_of(t, 2) == 0 && likes_of(t, 3) == 0, "one-statement",
	          "after one like of post 1 (it returned %d), posts 1, 2 and 3 count %lld, %lld and "
	          "%lld likes, expected 1, 0 and 0: the counter's UPDATE must name the liked post",
	          rc, (long long)likes_of(t, 1), (long long)likes_of(t, 2), (long long)likes_of(t, 3));
	lt_expect(rc == 0, "one-statement", "a like of post 1 by user 7 as one statement returned %d "
	          "(%s)", rc, labtest_why(db));
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1 AND "
	                               "user_id = 7"), 1, "likes rows of (1, 7)", "one-statement");
}

/* The like and its count commit together or not at all (inside.h):
 * with the count's UPDATE refused for post 2 (a trigger raises an
 * error), the one-statement like of post 2 fails and leaves no like
 * row. Two statements sent in one string ("INSERT ...; UPDATE ...") are
 * one transaction on PostgreSQL, but SQLite (and MariaDB) commit each on
 * its own: there the like stays without its count. */
void one_trip__refused_count_leaves_no_like(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, INSIDE_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (2)");
	if (kit_db_engine(db) == KIT_DB_SQLITE) {
		labtest_exec(t, "CREATE TRIGGER refuse_count BEFORE UPDATE ON posts WHEN NEW.id = 2"
		                " BEGIN SELECT RAISE(ABORT, 'the count of post 2 refused by the check');"
		                " END");
	} else {
		labtest_exec(t, "CREATE FUNCTION refuse_count() RETURNS trigger LANGUAGE plpgsql AS $$"
		                " BEGIN RAISE EXCEPTION 'the count of post 2 refused by the check';"
		                " END $$");
		labtest_exec(t, "CREATE TRIGGER refuse_count BEFORE UPDATE ON posts FOR EACH ROW"
		                " WHEN (NEW.id = 2) EXECUTE FUNCTION refuse_count()");
	}
	int rc = inside_like_one_statement(db, 2, 7);
	int64_t left = labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 2");
	lt_expect(rc < 0, "one-statement", "the like of post 2, whose count's UPDATE a trigger "
	          "refuses, returned %d, expected an error", rc);
	lt_expect(left == 0, "one-statement", "the like of post 2, whose count's UPDATE was "
	          "refused (it returned %d), left %" PRId64 " like row: the like and its count "
	          "must commit together or not at all. Are they two statements that commit "
	          "apart (one string \"INSERT ...; UPDATE ...\" is one transaction on PostgreSQL, "
	          "but not on SQLite, where inside_like() keeps them in one)?", rc, left);
	lt_expect_int(likes_of(t, 2), 0, "post 2's count after its refused like");
	rc = inside_like_one_statement(db, 1, 7);
	lt_expect(rc == 0, "one-statement", "then a like of post 1 on the same connection "
	          "returned %d (%s)", rc, labtest_why(db));
	lt_expect_int(likes_of(t, 1), 1, "post 1's count after its like");
}

/* A row that is not there: without a foreign key to refuse the like
 * first, inside_like() of a missing post is INSIDE_NO_ROW and leaves no
 * like, and so does inside_like_one_statement() on PostgreSQL;
 * inside_count_async() of a missing counter is INSIDE_NO_ROW. */
void keys__missing_row_is_no_row(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, "CREATE TABLE posts (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0);"
	                "CREATE TABLE likes (post_id BIGINT NOT NULL, user_id BIGINT NOT NULL,"
	                " PRIMARY KEY (post_id, user_id));"
	                "CREATE TABLE counters (id BIGINT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0)");
	int rc = inside_like(db, 5, 1);
	lt_expect(rc == INSIDE_NO_ROW, "guarantee", "inside_like() of post 5, which does not exist "
	          "(and no foreign key refuses the like first), returned %d, expected INSIDE_NO_ROW "
	          "(%d): the UPDATE matched no row", rc, INSIDE_NO_ROW);
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM likes"), 0,
	                   "likes left by the like of a missing post (rolled back?)", "guarantee");
	rc = inside_count_async(db, 5);
	lt_expect(rc == INSIDE_NO_ROW, "async", "inside_count_async() of counter 5, which does not "
	          "exist, returned %d, expected INSIDE_NO_ROW (%d)", rc, INSIDE_NO_ROW);
	if (kit_db_engine(db) == KIT_DB_POSTGRES) {
		rc = inside_like_one_statement(db, 5, 1);
		lt_expect(rc == INSIDE_NO_ROW, "one-statement", "inside_like_one_statement() of post 5, "
		          "which does not exist, returned %d, expected INSIDE_NO_ROW (%d): the UPDATE "
		          "matched no row", rc, INSIDE_NO_ROW);
		/* "nothing of that call stays": one statement commits what it
		 * wrote, so the like must not be written at all; a change count
		 * seen after it returned comes too late to undo it. */
		lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM likes"), 0, "likes left by "
		                   "the one-statement like of a missing post (no key refused it: does "
		                   "the INSERT run whether or not the post is there? inside.h: with or "
		                   "without the foreign key, it may not count on the key)", "one-statement");
	}
}

/* One of the four writers, by number, on row or post 1 (user `user`). */
static int write_one(int which, struct kit_db *db, int user, int *attempts)
{
	static const struct inside_retry policy = { 3, 1, 2 };
	switch (which) {
	case 0: return inside_like(db, 1, user);
	case 1: return inside_like_one_statement(db, 1, user);
	case 2: return inside_count_async(db, 1);
	default: return inside_count_retrying(db, 1, "REPEATABLE READ", &policy, attempts);
	}
}

static const char *const writer_name[] = {
	"inside_like()", "inside_like_one_statement()", "inside_count_async()",
	"inside_count_retrying()",
};

/* What the writer added: likes of post 1 (and its like rows) or counter 1. */
static int64_t written(struct labtest *t, int which)
{
	return which < 2 ? labtest_int(t, "SELECT likes FROM posts WHERE id = 1")
	                 : labtest_int(t, "SELECT n FROM counters WHERE id = 1");
}

/* Which statement of a call the armed step (lt_step_arm) hits, seen by a
 * connection hook: whether it is a BEGIN, the BEGINs up to it (the
 * attempts made), and the BEGINs after it; with a sleep watch on the
 * thread, the sleeps asked after it are lt_sleeps_take()'s once the call
 * is back. Every statement passes the hook before the failpoint. */
struct step_begin {
	int k, seen, begins;
	bool is_begin;
	int begins_after;
};

static void note_step_begin(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct step_begin *b = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	bool begins = lt_sql_begins(sql);
	if (++b->seen < b->k) {
		b->begins += begins;
	} else if (b->seen == b->k) {
		b->begins += begins;
		b->is_begin = begins;
		(void)lt_sleeps_take();         /* from here on: sleeps after it */
	} else if (b->is_begin && begins) {
		b->begins_after++;
	}
}

/* inside_keys_setup() over tables another hand made, on a session with
 * settings of its own: a posts table there already with an index that
 * holds likes (not a table inside.h's keys make), and then a stray table
 * named likes. Each is an error with the rows left as they were and no
 * table added, and each path out leaves the session as it found it (a
 * SET lock_timeout "for the CREATEs", RESET only on success, stays on a
 * pooled connection after a failed setup). Last, the setup on an empty
 * database: 0, and the session unchanged too. */
static bool table_is_there(struct labtest *t, const char *table)
{
	char sql[200];
	snprintf(sql, sizeof sql, t->engine == KIT_DB_SQLITE
	         ? "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'"
	         : t->engine == KIT_DB_MYSQL
	         ? "SELECT count(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"
	           " AND TABLE_NAME = '%s'"
	         : "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
	           " AND tablename = '%s'", table);
	return labtest_int(t, sql) > 0;
}

void keys__setup_over_tables_of_another_making(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	char before[LT_SESSION_LEN];
	lt_session_own_values(t, db);
	lt_session(t, db, before, sizeof before);

	labtest_exec(t, "CREATE TABLE posts (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0)");
	labtest_exec(t, "CREATE INDEX posts_by_likes ON posts (likes)");
	labtest_exec(t, "INSERT INTO posts (id, likes) VALUES (1, 5), (2, 7)");
	int rc = inside_keys_setup(db);
	int64_t kept = labtest_int(t, "SELECT count(*) + COALESCE(SUM(likes), 0) FROM posts");
	bool likes_made = table_is_there(t, "likes");
	lt_expect(rc < 0 && kept == 14 && !likes_made, "guarantee", "inside_keys_setup() with a "
	          "posts table there already, made by another hand with an index on likes, returned "
	          "%d, left posts with %lld (rows + likes; 14 before) and %s likes: expected an "
	          "error, the rows kept and no table added (inside.h: where posts is there already "
	          "and is not as the keys make it, an error rather than 0). Does the setup create "
	          "its tables IF NOT EXISTS, so that 0 says nothing about the tables there?", rc,
	          (long long)kept, likes_made ? "made" : "did not make");
	lt_session_unchanged(t, db, before, "inside_keys_setup() over a posts table of another "
	                     "making (an error)", "guarantee");
	if (likes_made)
		labtest_exec(t, "DROP TABLE likes");
	labtest_exec(t, "DROP TABLE posts");

	labtest_exec(t, "CREATE TABLE likes (stray INT)");
	rc = inside_keys_setup(db);
	bool posts_made = table_is_there(t, "posts");
	lt_expect(rc < 0 && !posts_made, "guarantee", "inside_keys_setup() with a stray table named "
	          "likes there already returned %d and %s posts: expected an error and no table "
	          "added", rc, posts_made ? "made" : "did not make");
	lt_session_unchanged(t, db, before, "inside_keys_setup() over a stray likes table (an "
	                     "error)", "guarantee");
	if (posts_made)
		labtest_exec(t, "DROP TABLE posts");
	labtest_exec(t, "DROP TABLE likes");

	rc = inside_keys_setup(db);
	lt_expect(rc == 0, "guarantee", "inside_keys_setup() on a database without posts or likes: "
	          "%d, %s", rc, labtest_why(db));
	lt_session_unchanged(t, db, before, "inside_keys_setup()", "guarantee");
}

/* Each writer with its k-th statement refused, run with its answer lost,
 * or refused as KIT_DB_BUSY (a lock wait that timed out), for every k: a
 * negative code; the row unchanged (or, when the COMMIT's answer was
 * lost, changed once); the likes rows and the counter agree; and the same
 * connection's next call works. A busy refusal ends no transaction: a
 * call that skips its ROLLBACK for KIT_DB_BUSY ("the server rolled it
 * back already") leaves one open (on PostgreSQL failed, refusing every
 * statement after it). inside_count_retrying() retries a busy UPDATE or
 * COMMIT, so there a refusal may end in 0 and one increment. A retry
 * loop that fails to BEGIN has made an attempt, and says so in
 * *attempts. */
void every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	int rc0 = inside_keys_setup(db);
	lt_expect(rc0 == 0, NULL, "inside_keys_setup(): %d, %s", rc0, labtest_why(db));
	labtest_exec(t, "CREATE TABLE counters (id BIGINT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0);"
	                "INSERT INTO counters (id) VALUES (1); INSERT INTO posts (id) VALUES (1)");
	int user = 0;
	for (int which = 0; which < 4; which++) {
		if (which == 3 && kit_db_engine(db) != KIT_DB_POSTGRES)
			break;                  /* inside_count_retrying() is PostgreSQL's */
		for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
			for (int k = 1; k <= SWEEP_MAX; k++) {
				int64_t before = written(t, which);
				int attempts = -1;
				size_t blocks = lt_alloc_live();
				struct step_begin b = { .k = k };
				kit_db_set_hook(db, note_step_begin, &b);
				lt_step_arm(how, k);
				int rc = write_one(which, db, ++user, &attempts);
				kit_db_set_hook(db, NULL, NULL);
				if (!lt_step_disarm())
					break;
				int64_t added = written(t, which) - before;
				/* retried, as a serialization failure is; not a BEGIN
				 * (inside.h: a BEGIN that fails is returned at once) */
				bool retried = which == 3 && how == LT_STEP_BUSY && rc == 0 && added == 1 &&
				               !b.is_begin;
				lt_expect(rc < 0 || retried, "rollback", "statement %d of %s %s: returned %d, "
				          "expected a negative code%s", k, writer_name[which], lt_step_what(how),
				          rc, which == 3 && b.is_begin ? " (the statement was the attempt's "
				          "BEGIN: inside.h has a BEGIN that fails, KIT_DB_BUSY or not, "
				          "returned at once, not retried: no transaction ran, so none failed "
				          "to serialize)" : "");
				lt_expect(added == 0 || retried || (added == 1 && how == LT_STEP_REPLY_LOST),
				          "rollback",
				          "statement %d of %s %s: it returned %d and the row changed by %lld",
				          k, writer_name[which], lt_step_what(how), rc, (long long)added);
				if (which < 2)
					lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM likes") -
					                   labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 0,
					                   "like rows minus post 1's counter after a failed like",
					                   "rollback");
				if (which == 3 && how == LT_STEP_FAILS && k == 1)
					lt_expect_int_hint(attempts, 1, "*attempts after the first BEGIN was "
					                   "refused (that attempt was made)", "retry");
				before = written(t, which);
				rc = write_one(which, db, ++user, &attempts);
				lt_expect(rc == 0, "rollback", "statement %d of %s %s, then the next call on "
				          "the same connection returned %d (%s): is a transaction left open?",
				          k, writer_name[which], lt_step_what(how), rc, labtest_why(db));
				lt_expect_int_hint(written(t, which) - before, 1, "added by the next call",
				                   "rollback");
				char what[200];
				snprintf(what, sizeof what, "statement %d of %s %s, and the next call (inside.h: "
				         "no call leaves a block allocated, on its error paths either)", k,
				         writer_name[which], lt_step_what(how));
				lt_alloc_expect_none_left(blocks, what);
			}
		}
	}
}

/* Whether the connection is inside a transaction ("leaves no transaction
 * open behind it", inside.h): on PostgreSQL the session's transaction
 * began before this statement (or has failed, so that no statement
 * runs); on SQLite a BEGIN is refused. */
static bool tx_open(struct kit_db *db)
{
	if (kit_db_engine(db) == KIT_DB_SQLITE) {
		if (kit_db_exec(db, "BEGIN", 0, NULL) != 0)
			return true;
		kit_db_rollback(db);
		return false;
	}
	int64_t open = 0;
	return kit_db_query_int(db, "SELECT count(*) FROM pg_stat_activity WHERE pid = "
	                            "pg_backend_pid() AND xact_start < query_start", 0, NULL,
	                        &open) != 0 || open != 0;
}

/* *out on failure is all zero, no transaction is left open and the next
 * call works, and on SQLite the PostgreSQL fields are 0
 * (and on PostgreSQL the SQLite ones): *out starts filled with garbage
 * each time. With updates behind a reader, SQLite's wal_frames counts at
 * least the frames that stay pinned, and at least one per commit. */
void versions__fills_out_as_promised(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, INSIDE_SCHEMA);
	labtest_exec(t, "INSERT INTO counters (id) VALUES (1)");
	bool sqlite = kit_db_engine(db) == KIT_DB_SQLITE;
	struct kit_db *reader = NULL;
	if (sqlite) {
		int64_t n;
		reader = labtest_connect(t);
		if (kit_db_exec(reader, "BEGIN", 0, NULL) != 0 ||
		    kit_db_query_int(reader, "SELECT n FROM counters WHERE id = 1", 0, NULL, &n) != 0)
			fail_msg("the reader: %s", kit_db_errmsg(reader));
	}
	for (int i = 0; i < 50; i++)
		labtest_exec(t, "UPDATE counters SET n = n + 1 WHERE id = 1");

	struct inside_versions v;
	char session[LT_SESSION_LEN];
	lt_session_own_values(t, db);
	lt_session(t, db, session, sizeof session);
	/* a measurement changes nothing it measures: no VACUUM or ANALYZE of
	 * the table "so the counts are exact" (VACUUM removes the dead
	 * versions the call is there to count) */
	static const char maint[] = "SELECT vacuum_count + analyze_count FROM pg_stat_user_tables"
		" WHERE relid = 'counters'::regclass";
	int64_t maint_before = sqlite ? 0 : labtest_int(t, maint);
	memset(&v, 0x5a, sizeof v);
	int rc = inside_versions(db, 1, &v);
	int64_t maint_after = sqlite ? 0 : labtest_int(t, maint);
	lt_expect(maint_after == maint_before, "versions", "inside_versions() ran VACUUM or ANALYZE "
	          "on counters (%" PRId64 " runs): a measurement must leave the table as it found "
	          "it; VACUUM removes the very dead versions it is there to count, and costs a pass "
	          "over the table on every call", maint_after - maint_before);
	if (reader) {
		kit_db_rollback(reader);
		kit_db_close(reader);
	}
	/* A setting changed "for the read" (enable_seqscan, a PRAGMA)
	 * stays for every later statement of the connection. */
	lt_session_unchanged(t, db, session, "inside_versions()", "versions");
	lt_expect(rc == 0, "versions", "inside_versions(): %d, %s", rc, labtest_why(db));
	if (sqlite) {
		lt_expect(v.updates == 0 && v.hot_updates == 0 && v.dead == 0 && v.heap_pages == 0 &&
		          v.buffers == 0, "versions", "on SQLite the PostgreSQL fields are 0, got "
		          "updates %lld, hot_updates %lld, dead %lld, heap_pages %lld, buffers %lld",
		          (long long)v.updates, (long long)v.hot_updates, (long long)v.dead,
		          (long long)v.heap_pages, (long long)v.buffers);
		lt_expect(v.wal_frames >= 50 && v.wal_frames >= v.wal_pinned && v.wal_pinned >= 1,
		          "wal", "after 50 commits behind an open reader expected wal_frames >= 50 "
		          "(the WAL's frames) and >= wal_pinned >= 1, got wal_frames %lld, wal_pinned "
		          "%lld", (long long)v.wal_frames, (long long)v.wal_pinned);
	} else {
		lt_expect(v.wal_frames == 0 && v.wal_pinned == 0, "versions", "on PostgreSQL the "
		          "SQLite fields are 0, got wal_frames %lld, wal_pinned %lld",
		          (long long)v.wal_frames, (long long)v.wal_pinned);
	}

	static const struct inside_versions zero;
	for (int how = LT_STEP_FAILS; how <= LT_STEP_REPLY_LOST; how++) {
		for (int k = 1; k <= SWEEP_MAX; k++) {
			memset(&v, 0x5a, sizeof v);
			size_t blocks = lt_alloc_live();
			lt_step_arm(how, k);
			rc = inside_versions(db, 1, &v);
			if (!lt_step_disarm())
				break;
			lt_expect(rc < 0, "versions", "statement %d of inside_versions() %s: returned %d, "
			          "expected a negative code", k, lt_step_what(how), rc);
			lt_expect(memcmp(&v, &zero, sizeof v) == 0, "versions", "statement %d of "
			          "inside_versions() %s: *out is not all zero (on failure it must be)", k,
			          lt_step_what(how));
			lt_expect(!tx_open(db), "versions", "statement %d of inside_versions() %s: it "
			          "returned %d and left a transaction open on the connection (is a BEGIN "
			          "around the reads not ended on the error path?)", k, lt_step_what(how), rc);
			struct inside_versions next;
			rc = inside_versions(db, 1, &next);
			lt_expect(rc == 0, "versions", "statement %d of inside_versions() %s, then the "
			          "next call on the same connection returned %d (%s)", k,
			          lt_step_what(how), rc, labtest_why(db));
			char what[160];
			snprintf(what, sizeof what, "statement %d of inside_versions() %s, and the next "
			         "call (is what it allocated freed on the error path too?)", k,
			         lt_step_what(how));
			lt_alloc_expect_none_left(blocks, what);
		}
	}
}

/* A text column's value, into 40 bytes, for kit_db_query. */
static int copy_text(void *arg, int ncols, const char *const *values)
{
	snprintf(arg, 40, "%s", ncols > 0 && values[0] ? values[0] : "");
	return 0;
}

/* A SQLite database that is not in WAL mode ("sqlite::memory:", a URL
 * db.h takes, cannot be): the PASSIVE checkpoint answers 0|-1|-1, not
 * busy and no counts. The call measured nothing, and asking again will
 * not change that: KIT_DB_ERR with *out all zero (inside.h: "On failure
 * *out is all zero"), neither a success with wal_frames -1 nor
 * KIT_DB_BUSY, which tells the caller to ask again later (one that does
 * so on busy then loops for ever). */
void versions__sqlite_database_not_in_wal(void **state)
{
	(void)state;
	struct kit_db *mem = NULL;
	if (kit_db_open(&mem, "sqlite::memory:") != 0)
		fail_msg("sqlite::memory:: %s", mem ? kit_db_errmsg(mem) : "not opened");
	if (kit_db_exec(mem, INSIDE_SCHEMA, 0, NULL) != 0 ||
	    kit_db_exec(mem, "INSERT INTO counters (id) VALUES (1)", 0, NULL) != 0)
		fail_msg("the tables in sqlite::memory:: %s", kit_db_errmsg(mem));
	for (int i = 0; i < 20; i++)
		if (kit_db_exec(mem, "UPDATE counters SET n = n + 1 WHERE id = 1", 0, NULL) != 0)
			fail_msg("an update in sqlite::memory:: %s", kit_db_errmsg(mem));
	char mode[40] = "";
	kit_db_query(mem, "PRAGMA journal_mode", 0, NULL, copy_text, mode);
	struct inside_versions v;
	static const struct inside_versions zero;
	memset(&v, 0x5a, sizeof v);
	int rc = inside_versions(mem, 1, &v);
	bool failed = rc == KIT_DB_ERR && memcmp(&v, &zero, sizeof v) == 0;
	lt_expect(failed, "versions", "inside_versions() on sqlite::memory: (journal_mode %s, no "
	          "WAL: PRAGMA wal_checkpoint(PASSIVE) answers 0|-1|-1, not busy and no counts) "
	          "returned %d with wal_frames %lld and wal_pinned %lld: expected KIT_DB_ERR (%d) "
	          "with *out all zero (the handout: a failure, never a success with -1 frames; "
	          "inside.h: \"On failure *out is all zero\").%s", mode, rc,
	          (long long)v.wal_frames, (long long)v.wal_pinned, KIT_DB_ERR,
	          rc == KIT_DB_BUSY ? " KIT_DB_BUSY says \"ask again later\", but this database "
	          "answers the same on every try: a caller that retries on busy loops for ever. "
	          "Only busy = 1 is busy; counts of -1 with busy 0 are an error" : rc == 0 ?
	          " Is the checkpoint's row copied into *out whenever busy is 0, its -1 taken for "
	          "a count?" : "");
	rc = inside_count_async(mem, 1);
	lt_expect(rc == 0, "versions", "then inside_count_async() on the same connection returned "
	          "%d (%s): is a transaction left open?", rc, kit_db_errmsg(mem));
	kit_db_close(mem);
}

/* ---- the backoff's waits ---- */

/* When the last statement of an attempt ended (the hook's clock). */
static void note_end(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)sql;
	if (ev == KIT_DB_STMT_END || ev == KIT_DB_TX_ROLLBACK)
		*(int64_t *)arg = t_ns;
}

static void plant(struct labtest *t, int fail)
{
	char sql[600];
	labtest_exec(t, INSIDE_SCHEMA);
	labtest_exec(t, "INSERT INTO counters (id) VALUES (1); CREATE SEQUENCE tries");
	snprintf(sql, sizeof sql,
	         "CREATE FUNCTION flaky() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
	         " IF nextval('tries') <= %d THEN RAISE EXCEPTION"
	         " 'could not serialize access (planted by the check)'"
	         " USING ERRCODE = 'serialization_failure'; END IF; RETURN NEW; END $$", fail);
	labtest_exec(t, sql);
	labtest_exec(t, "CREATE TRIGGER flaky BEFORE UPDATE ON counters"
	                " FOR EACH ROW EXECUTE FUNCTION flaky()");
}

/* max_attempts 1 and every attempt failing: INSIDE_GAVE_UP right after the
 * one attempt, with no wait after it (base and cap 1,000 ms: a wait would
 * be 500 ms or more; the check allows 250 ms between the attempt's last
 * statement and the return, for a machine under load). */
void isolation__no_wait_after_the_last_attempt(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	plant(t, 1000);
	int64_t end = 0;
	kit_db_set_hook(db, note_end, &end);
	struct inside_retry policy = { 1, 1000, 1000 };
	int attempts = -1;
	int rc = inside_count_retrying(db, 1, "REPEATABLE READ", &policy, &attempts);
	int64_t back = util_now_ns();
	kit_db_set_hook(db, NULL, NULL);
	double ms = end ? (double)(back - end) / 1e6 : -1;
	lt_expect(rc == INSIDE_GAVE_UP && attempts == 1, "limit", "max_attempts 1, the attempt "
	          "failing to serialize: expected INSIDE_GAVE_UP (%d) after 1 attempt, got %d after "
	          "%d", INSIDE_GAVE_UP, rc, attempts);
	lt_expect(ms >= 0 && ms < 250, "limit", "max_attempts 1: %.0f ms passed between the "
	          "attempt's last statement and the return, expected no wait (a wait after the "
	          "last attempt delays the answer and buys nothing)", ms);
}

/* A BEGIN refused, as busy or with another error, ends the call at once
 * with its code (inside.h): no transaction began, so none failed to
 * serialize, and the backoff is for retrying a transaction that ran.
 * One planted serialization failure, so the call makes two attempts;
 * each statement refused in turn, and where it is a BEGIN (the first
 * attempt's, then the second's, after the one wait): the call returns
 * that BEGIN's code (KIT_DB_BUSY for busy), sends no BEGIN after it and
 * asks no sleep after it. */
void isolation__refused_begin_ends_the_call(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	plant(t, 1);
	const struct inside_retry policy = { 3, 1, 2 };
	int judged = 0;
	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
		if (!lt_step_refused(how))
			continue;
		for (int k = 1; k <= 12; k++) {
			labtest_exec(t, "ALTER SEQUENCE tries RESTART");
			struct step_begin b = { .k = k };
			struct lt_sleeps asked;
			int attempts = -1;
			kit_db_set_hook(db, note_step_begin, &b);
			lt_sleeps_watch(&asked, 1000, 5000);
			lt_sleeps_deadline(30, "isolation__refused_begin_ends_the_call");
			lt_step_arm(how, k);
			int rc = inside_count_retrying(db, 1, "REPEATABLE READ", &policy, &attempts);
			bool reached = lt_step_disarm();
			double after = lt_sleeps_take();
			int sleeps = asked.calls;
			lt_sleeps_unwatch();
			kit_db_set_hook(db, NULL, NULL);
			if (!reached)
				break;
			if (!b.is_begin)
				continue;
			judged++;
			int want = how == LT_STEP_BUSY ? KIT_DB_BUSY : KIT_DB_ERR;
			lt_expect(rc == want && b.begins_after == 0 && after == 0, "retry",
			          "the BEGIN of attempt %d (statement %d) %s: the call returned %d after "
			          "%d more BEGIN(s), and asked to sleep %.2f ms after the refusal (%d sleep "
			          "calls in all); expected %d (%s) at once, with no wait and no other "
			          "attempt. inside.h: a BEGIN that fails, KIT_DB_BUSY or not, is returned "
			          "at once: no transaction began, so none failed to serialize; the backoff "
			          "is for retrying a transaction that ran. Is a busy BEGIN retried like a "
			          "serialization failure?", b.begins, k, lt_step_what(how), rc,
			          b.begins_after, after, sleeps, want,
			          how == LT_STEP_BUSY ? "KIT_DB_BUSY" : "KIT_DB_ERR");
			lt_expect(attempts == b.begins, "retry", "the BEGIN of attempt %d %s: *attempts "
			          "was %d, expected %d (the refused attempt was made)", b.begins,
			          lt_step_what(how), attempts, b.begins);
		}
	}
	lt_expect(judged == 4, "retry", "expected to refuse 4 BEGINs (the two attempts' of a call "
	          "whose first attempt fails to serialize, with an error and then as busy), "
	          "refused %d: does each attempt begin with BEGIN (kit_db_exec of \"BEGIN "
	          "ISOLATION LEVEL ...\")?", judged);
}

/* A signal that interrupts the backoff's sleep must not shorten it: one
 * planted failure, base and cap 400 ms, so the one wait is 200 to 400 ms,
 * while another thread sends this one SIGUSR1 every 5 ms (a handler that
 * does nothing, no SA_RESTART). A sleep that gives up on EINTR waits
 * about 5 ms. */
static void on_usr1(int sig)
{
	(void)sig;
}

struct pinger {
	pthread_t target, th;
	atomic_bool stop;
};

static void *ping(void *arg)
{
	struct pinger *p = arg;
	for (int i = 0; i < 600 && !atomic_load(&p->stop); i++) {
		pthread_kill(p->target, SIGUSR1);
		util_sleep_ns(5 * 1000000LL);
	}
	return NULL;
}

/* The wait of isolation__wait_survives_signals, and (step) with the
 * thread's wall clock an hour ahead until the first sleep, then back. */
static void wait_under_signals(void **state, bool step, const char *name)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	plant(t, 1);
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	static struct pinger p;
	p.target = pthread_self();
	atomic_store(&p.stop, false);
	struct lt_gap g = LT_GAP_INIT;
	kit_db_set_hook(db, lt_time_gap, &g);
	pthread_create(&p.th, NULL, ping, &p);
	struct inside_retry policy = { 3, 400, 400 };
	int attempts = -1;
	/* A loop around nanosleep() that never ends (`|| errno == EINTR`
	 * keeps going once a signal has set errno) would hold the check for
	 * ever: past 1.5 s asleep in all, every sleep returns at once. */
	struct lt_sleeps asked;
	lt_sleeps_watch(&asked, policy.cap_ms, 1500);
	if (step) {
		struct timespec wall;
		clock_gettime(CLOCK_REALTIME, &wall);
		wall.tv_sec += 3600;
		lt_sleeps_freeze_clock(&wall, NULL);
	}
	lt_sleeps_deadline(30, name);
	int rc = inside_count_retrying(db, 1, "REPEATABLE READ", &policy, &attempts);
	lt_sleeps_unwatch();
	atomic_store(&p.stop, true);
	pthread_join(p.th, NULL);
	kit_db_set_hook(db, NULL, NULL);
	sigaction(SIGUSR1, &old, NULL);
	lt_expect(!asked.cut || !asked.over_budget, "backoff", "one wait of 200 to 400 ms, and "
	          "the call was still asleep after %.1f s, in %d sleep calls: the loop around "
	          "nanosleep() goes on after the sleep is done (its condition must be `!= 0 && "
	          "errno == EINTR`; with `||`, an errno left at EINTR by a signal never lets it "
	          "end)", asked.asleep_ms / 1e3, asked.calls);
	lt_expect(!step || !asked.cut, "backoff", "base and cap 400 ms, signals every 5 ms, and "
	          "the wall clock (gettimeofday, CLOCK_REALTIME) set back an hour as the wait "
	          "began: after %d attempts the backoff asked to sleep %.1f s. A wait is a "
	          "duration, which a wall clock set back meanwhile does not change (inside.h): is "
	          "what is left after EINTR taken from a deadline on the wall clock? Sleep again "
	          "the remainder nanosleep() gives back (or to a CLOCK_MONOTONIC deadline)",
	          asked.first_cut_after, asked.first_cut_ms / 1000);
	lt_expect(step || !asked.cut, "backoff", "base and cap 400 ms, and after %d attempts the "
	          "backoff asked to sleep %.0f ms: no wait is longer than the cap",
	          asked.first_cut_after, asked.first_cut_ms);
	lt_expect(rc == 0 && attempts == 2, "backoff", "one planted failure, then a commit: "
	          "expected 0 after 2 attempts, got %d after %d (%s)", rc, attempts,
	          labtest_why(db));
	/* slept in full, but not between the attempt's end and the next BEGIN */
	lt_expect(g.ms >= 195 || asked.asleep_ms < 195, "backoff", "the wait after the first "
	          "failure (base and cap 400 ms) slept %.0f ms, but only %.0f ms passed between the "
	          "failed attempt's last statement (its ROLLBACK) and the next BEGIN: the wait came "
	          "before the ROLLBACK, and the failed transaction held its locks through the "
	          "sleep. Roll back first, then wait, then BEGIN again", asked.asleep_ms, g.ms);
	lt_expect(g.ms >= 195, "backoff", "the wait after the first failure (base and cap 400 ms: "
	          "200 to 400 ms) took %.0f ms while a signal arrived every 5 ms: a sleep "
	          "interrupted by a signal (EINTR) must go on for the time that remains%s", g.ms,
	          asked.clock_calls ? "; clock_nanosleep() was asked, and unlike nanosleep() it "
	          "returns the error number (EINTR) and leaves errno alone: loop while its result "
	          "is EINTR" : asked.usleep_calls ? "; usleep() was asked, and a signal ends it "
	          "(-1, EINTR) with no remainder to sleep again: sleep with nanosleep() and go on "
	          "with the remainder it gives back" : "");
}

void isolation__wait_survives_signals(void **state)
{
	wait_under_signals(state, false, "isolation__wait_survives_signals");
}

/* The same wait, signals every 5 ms, with the wall clock set back an
 * hour as it begins (the thread's CLOCK_REALTIME and gettimeofday read
 * an hour ahead until its first sleep, then the kernel's): the clock
 * moved and the signals both, in one wait. What is left after EINTR is
 * nanosleep()'s remainder, or a CLOCK_MONOTONIC deadline's; one taken
 * from a wall-clock deadline is an hour longer. */
void isolation__wait_survives_signals_and_a_clock_step(void **state)
{
	wait_under_signals(state, true, "isolation__wait_survives_signals_and_a_clock_step");
}
