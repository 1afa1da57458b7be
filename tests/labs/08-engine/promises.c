/*
 * promises.c: Lab 08's checks of what inside.h promises where the other
 * check files stop short.
 *
 * Where inside_count_retrying()'s doubling starts. The
 * contract: after the k-th failure wait between d/2 and d, d =
 * min(cap_ms, base_ms * 2^(k-1)); so after the FIRST failure, between
 * base/2 and base. A doubling counted from k instead of k - 1 waits
 * between base and 2 base there, which the other checks (lower bounds on
 * the waits, the cap) do not see.
 *
 * The tables inside_keys_setup() makes: the other checks of likes run on
 * INSIDE_SCHEMA, which has the key (post_id, user_id); the student's own
 * tables must keep it too (inside_like's contract: KIT_DB_CONSTRAINT for
 * a duplicate).
 */
#include "tests/labs/08-engine/promises.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "labs/08-engine/inside.h"
#include "tests/harness/labtest.h"
#include "tests/labs/08-engine/sleeps.h"

/* Ten calls, each of whose first attempt fails to serialize (a trigger
 * raises 40001 while a sequence, restarted before each call, is at 1),
 * base 60 ms and a cap far above: each call's one wait is between 30 and
 * 60 ms, by the contract. Judged on what the code asked to sleep
 * (sleeps.h), so a loaded machine cannot change the verdict: every one of
 * the ten must ask for 30 to 60 ms. A doubling that starts at 2 base asks
 * for 60 to 120 ms, above 60 in all ten unless every uniform draw lands
 * within 0.001 ms of the bottom. A wait the test program cannot see (a
 * busy loop on the clock, a condition variable's timed wait) fails:
 * inside.h names the calls to sleep with. */
void isolation__first_wait_is_at_most_base(void **state)
{
	enum { CALLS = 10, BASE = 60 };
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, INSIDE_SCHEMA);
	labtest_exec(t, "INSERT INTO counters (id) VALUES (1); CREATE SEQUENCE first_failure");
	labtest_exec(t, "CREATE FUNCTION fail_first() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
	                " IF nextval('first_failure') = 1 THEN RAISE EXCEPTION"
	                " 'could not serialize access (planted by the check)'"
	                " USING ERRCODE = 'serialization_failure'; END IF; RETURN NEW; END $$");
	labtest_exec(t, "CREATE TRIGGER fail_first BEFORE UPDATE ON counters"
	                " FOR EACH ROW EXECUTE FUNCTION fail_first()");

	struct inside_retry policy = { 5, BASE, 100 * BASE };
	/* Every second call follows one that gave up at once (one attempt,
	 * failed): the doubling is counted within a call, so the next call's
	 * first wait is again base/2 to base. */
	const struct inside_retry once = { 1, BASE, 100 * BASE };
	int bad_once = 0;
	double asked[CALLS], took[CALLS];
	int bad_rc = 0, bad_attempts = 0, n = 0;
	bool exact = true;
	for (int i = 0; i < CALLS; i++) {
		if (i % 2) {
			labtest_exec(t, "ALTER SEQUENCE first_failure RESTART");
			int gave_up = inside_count_retrying(db, 1, "REPEATABLE READ", &once, NULL);
			if (gave_up != INSIDE_GAVE_UP && !bad_once)
				bad_once = gave_up ? gave_up : 1;
		}
		labtest_exec(t, "ALTER SEQUENCE first_failure RESTART");
		struct lt_gap g = LT_GAP_INIT;
		struct lt_sleeps watch;
		int attempts = -1;
		kit_db_set_hook(db, lt_time_gap, &g);
		lt_sleeps_watch(&watch, policy.cap_ms, 4.0 * policy.cap_ms);
		lt_sleeps_deadline(30, "isolation__first_wait_is_at_most_base");
		int rc = inside_count_retrying(db, 1, "REPEATABLE READ", &policy, &attempts);
		lt_sleeps_unwatch();
		kit_db_set_hook(db, NULL, NULL);
		if (rc != 0 && !bad_rc)
			bad_rc = rc;
		if (attempts != 2 && !bad_attempts)
			bad_attempts = attempts;
		if (g.ms >= 0) {
			asked[n] = g.asked;
			took[n++] = g.ms;
			exact = exact && g.asked > 0;
		}
	}
	lt_expect(bad_rc == 0 && bad_attempts == 0, "backoff", "a call whose first attempt fails "
	          "to serialize and whose second can commit: expected 0 after 2 attempts, got %d "
	          "after %d", bad_rc, bad_attempts ? bad_attempts : 2);
	lt_expect_int_hint(n, CALLS, "calls whose one wait the check saw (a BEGIN after the "
	                   "first attempt)", "backoff");
	char list[CALLS * 16] = "";
	int outside = 0;
	for (int i = 0; i < n; i++) {
		double v = exact ? asked[i] : took[i];
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%.*f", i ? " " : "",
		         exact ? 2 : 0, v);
		if (v < BASE / 2.0 - 0.001 || (exact && v > BASE + 0.001))
			outside++;
	}
	lt_expect(exact, "backoff", "of the %d waits between a failed attempt and the next, some "
	          "asked no sleep this program sees (they took %s ms): inside.h has the wait slept "
	          "with nanosleep, usleep, sleep or clock_nanosleep, which the checks can time and "
	          "cut short; a condition variable's timed wait, select(), poll() or a busy loop on "
	          "the clock they cannot", n, list);
	lt_expect(bad_once == 0, "limit", "a call with max_attempts 1 whose attempt failed to "
	          "serialize returned %d, expected INSIDE_GAVE_UP (%d)", bad_once, INSIDE_GAVE_UP);
	lt_expect(outside == 0, "backoff", "after the first failure (base %d ms) the waits %s %s "
	          "ms, %d of them outside %d to %d ms (calls 2, 4, ... each came after a call "
	          "that gave up): the contract's d after failure k is base * 2^(k-1), k counted "
	          "within the call, so the first wait is between base/2 and base; a doubling "
	          "counted from k (base * 2^k), or over the calls of a thread, waits longer", BASE,
	          exact ? "asked for were" : "took", list, outside, BASE / 2, BASE);

	/* A cap below base: d = min(cap, base), the cap holds from the first
	 * wait on (a d that starts at base and is capped only once doubled
	 * is not). */
	enum { CAP = 20 };
	const struct inside_retry low = { 5, BASE, CAP };
	double over = 0;
	for (int i = 0; i < 3; i++) {
		labtest_exec(t, "ALTER SEQUENCE first_failure RESTART");
		struct lt_gap g = LT_GAP_INIT;
		struct lt_sleeps watch;
		kit_db_set_hook(db, lt_time_gap, &g);
		lt_sleeps_watch(&watch, 4.0 * BASE, 16.0 * BASE);
		lt_sleeps_deadline(30, "isolation__first_wait_is_at_most_base");
		int rc = inside_count_retrying(db, 1, "REPEATABLE READ", &low, NULL);
		lt_sleeps_unwatch();
		kit_db_set_hook(db, NULL, NULL);
		lt_expect(rc == 0, "backoff", "base %d ms, cap %d ms, the first attempt failing: "
		          "returned %d, expected 0", BASE, CAP, rc);
		if (watch.longest_ms > over)
			over = watch.longest_ms;
	}
	lt_expect(over <= CAP + 0.001, "backoff", "base %d ms and cap %d ms (a cap below base): "
	          "the first wait asked for %.2f ms, expected at most the cap: d = min(cap_ms, "
	          "base_ms * 2^(k-1)) from the first failure on; a d that starts at base_ms and "
	          "is capped only after it doubles waits past the cap once (or is there a wait "
	          "before the first attempt? The contract has none)", BASE, CAP, over);

	/* A cap of 0 (inside.h: >= 0): no wait at all, not "no cap" */
	const struct inside_retry none = { 3, BASE, 0 };
	over = 0;
	for (int i = 0; i < 2; i++) {
		labtest_exec(t, "ALTER SEQUENCE first_failure RESTART");
		struct lt_sleeps watch;
		lt_sleeps_watch(&watch, 4.0 * BASE, 16.0 * BASE);
		lt_sleeps_deadline(30, "isolation__first_wait_is_at_most_base");
		int rc = inside_count_retrying(db, 1, "REPEATABLE READ", &none, NULL);
		lt_sleeps_unwatch();
		lt_expect(rc == 0, "backoff", "base %d ms, cap 0, the first attempt failing: returned "
		          "%d, expected 0", BASE, rc);
		if (watch.longest_ms > over)
			over = watch.longest_ms;
	}
	lt_expect(over <= 0.001, "backoff", "base %d ms and cap 0: a wait asked for %.2f ms, "
	          "expected none: no wait is longer than cap_ms (inside.h), so a cap of 0 retries "
	          "at once (is 0 taken for \"no cap\"?)", BASE, over);

	/* A base of 0, the edge of the backoff's domain (inside.h sets no
	 * floor on base_ms): d = min(cap_ms, 0 x 2^(k-1)) = 0 after every
	 * failure, so every retry comes at once, with a cap far above and
	 * with a cap of 0 alike. A 0 taken for "unset" and replaced by a
	 * default of 1 ms waits 0.5 to 1 ms after the first failure. */
	const struct inside_retry zero_base[2] = { { 3, 0, 100 * BASE }, { 3, 0, 0 } };
	for (int z = 0; z < 2; z++) {
		over = 0;
		int calls = 0;
		for (int i = 0; i < 2; i++) {
			labtest_exec(t, "ALTER SEQUENCE first_failure RESTART");
			struct lt_sleeps watch;
			lt_sleeps_watch(&watch, 4.0 * BASE, 16.0 * BASE);
			lt_sleeps_deadline(30, "isolation__first_wait_is_at_most_base");
			int rc = inside_count_retrying(db, 1, "REPEATABLE READ", &zero_base[z], NULL);
			lt_sleeps_unwatch();
			lt_expect(rc == 0, "backoff", "base 0, cap %d ms, the first attempt failing: "
			          "returned %d, expected 0", zero_base[z].cap_ms, rc);
			if (watch.longest_ms > over)
				over = watch.longest_ms;
			calls += watch.calls;
		}
		lt_expect(over <= 0.001, "backoff", "base_ms 0 and cap_ms %d: after the first "
		          "failure a wait asked for %.3f ms (%d sleep calls in two calls), expected "
		          "none: d = min(cap_ms, base_ms * 2^(k-1)) is 0 for a base of 0 (inside.h), "
		          "so every retry comes at once. Is a base of 0 taken for \"unset\" and "
		          "replaced by a default (1 ms)?", zero_base[z].cap_ms, over, calls);
	}
}

/* With the tables of inside_keys_setup(), a user likes a post once: the
 * second like of the same (post, user), by inside_like() and by
 * inside_like_one_statement(), is KIT_DB_CONSTRAINT and changes nothing.
 * Tables made without likes' primary key (post_id, user_id) count every
 * repeat. */
void keys__one_like_per_user(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	int rc = inside_keys_setup(db);
	lt_expect(rc == 0, "guarantee", "inside_keys_setup failed (%d): %s", rc, labtest_why(db));
	/* An index of likes that starts with post_id (the primary key
	 * (post_id, user_id), as inside.h has it): the key's check when a
	 * post is deleted, and every read of a post's likes, look likes up by
	 * post. A key declared (user_id, post_id) is as unique, and leaves
	 * each of them a scan of every like. */
	int64_t by_post = labtest_int(t, kit_db_engine(db) == KIT_DB_POSTGRES
		? "SELECT count(*) FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
		  " AND a.attnum = i.indkey[0] WHERE i.indrelid = 'likes'::regclass AND a.attname = 'post_id'"
		: "SELECT count(*) FROM pragma_index_list('likes') l, pragma_index_info(l.name) c"
		  " WHERE c.seqno = 0 AND c.name = 'post_id'");
	lt_expect(by_post >= 1, "guarantee", "no index of likes starts with post_id: its primary key "
	          "is (post_id, user_id), in that order (inside.h). A key (user_id, post_id) is as "
	          "unique, but the foreign key's check when a post is deleted, and every read of a "
	          "post's likes, then find no index by post and read every like");
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	labtest_exec(t, "INSERT INTO posts (id) VALUES (2)");
	lt_expect_int_hint(inside_like(db, 1, 7), 0, "user 7's first like of post 1", "guarantee");
	/* One like per user per post, not per user: user 7 likes post 2 too. */
	int other = inside_like(db, 2, 7);
	lt_expect(other == 0, "guarantee", "user 7, who liked post 1, then liked post 2: expected "
	          "0, got %d (%s): the key of likes is (post_id, user_id), one like per user and "
	          "post, not one per user", other, labtest_why(db));
	/* The duplicate must be refused at its INSERT, before the counter's
	 * UPDATE: a sequence (nextval is never rolled back) counts the UPDATEs
	 * of posts that began. A primary key declared DEFERRABLE INITIALLY
	 * DEFERRED (PostgreSQL takes it; SQLite refuses DEFERRABLE there)
	 * accepts the duplicate, lets it lock the hot row and write a version
	 * of it, and refuses it only at COMMIT. */
	bool pg = kit_db_engine(db) == KIT_DB_POSTGRES;
	if (pg)
		labtest_exec(t, "CREATE SEQUENCE posts_updates_begun;"
		                "CREATE FUNCTION note_posts_update() RETURNS trigger LANGUAGE plpgsql AS"
		                " $$ BEGIN PERFORM nextval('posts_updates_begun'); RETURN NEW; END $$;"
		                "CREATE TRIGGER note_posts_update BEFORE UPDATE ON posts"
		                " FOR EACH ROW EXECUTE FUNCTION note_posts_update()");
	const char *begun_sql = "SELECT CASE WHEN is_called THEN last_value ELSE 0 END"
	                        " FROM posts_updates_begun";
	int again = inside_like(db, 1, 7);
	int64_t begun = pg ? labtest_int(t, begun_sql) : 0;
	int one = inside_like_one_statement(db, 1, 7);
	if (pg) {
		int64_t begun_one = labtest_int(t, begun_sql) - begun;
		lt_expect(begun == 0, "guarantee", "user 7 liked post 1 again (inside_like): %" PRId64
		          " UPDATE of the post's counter began before the duplicate was refused, "
		          "expected none. Is the primary key of likes DEFERRABLE (checked at COMMIT)? "
		          "Then a duplicate locks the hot row and writes a version of it for nothing "
		          "(and INSERT ... ON CONFLICT cannot use the key): defer the foreign key only",
		          begun);
		lt_expect(begun_one == 0, "one-statement", "user 7 liked post 1 again "
		          "(inside_like_one_statement): %" PRId64 " UPDATE of the post's counter began "
		          "before the duplicate was refused, expected none: a duplicate that updates the "
		          "counter first locks the hot row and writes a version of it for nothing "
		          "(inside.h). Insert the like first and update the counter from the rows the "
		          "insert returned", begun_one);
		labtest_exec(t, "DROP TRIGGER note_posts_update ON posts");
	}
	int64_t likes = labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1 AND user_id = 7");
	int64_t count = labtest_int(t, "SELECT likes FROM posts WHERE id = 1");
	lt_expect(again == KIT_DB_CONSTRAINT && one == KIT_DB_CONSTRAINT, "guarantee", "user 7 "
	          "liked post 1 again (inside_like, then inside_like_one_statement): expected "
	          "KIT_DB_CONSTRAINT (%d) twice, got %d and %d%s", KIT_DB_CONSTRAINT, again, one,
	          again == 0 ? ": the likes table inside_keys_setup makes has no primary key "
	          "(post_id, user_id), so a like can be repeated" : "");
	lt_expect(likes == 1 && count == 1, "guarantee", "after user 7 liked post 1 three times: %lld "
	          "likes rows and a counter of %lld, expected 1 and 1", (long long)likes,
	          (long long)count);
}
