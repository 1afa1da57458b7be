/*
 * races.c: Lab 08's checks of a call that another connection overtakes
 * (the gate of tests/harness/gate.h runs the other connection's statement
 * whole before each statement of the call in turn), and of ids at both
 * ends of int64 on the tables inside_keys_setup() makes.
 */
#include "tests/labs/08-engine/races.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "labs/08-engine/inside.h"
#include "tests/harness/gate.h"
#include "tests/harness/labtest.h"
#include "tests/harness/sql.h"
#include "tests/harness/steps.h"

#define SWEEP_MAX 20            /* more statements than any call here runs */

/* ---- a counter deleted while it is counted ---- */

/* The statements of one call as the gate counts them, and the first that
 * takes a lock another writer of the row would wait for: a write, a
 * locking read, a LOCK, or SQLite's BEGIN IMMEDIATE (the write lock). */
struct first_lock {
	int seen, at;
};

static bool takes_a_lock(const char *sql)
{
	static const char *const verbs[] = {
		"UPDATE", "DELETE", "INSERT", "REPLACE", "MERGE", "WITH", "LOCK",
		"BEGIN IMMEDIATE", "BEGIN EXCLUSIVE",
	};
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (lt_sql_is(sql, verbs[i]))
			return true;
	return lt_sql_locking_read(sql);
}

static void note_first_lock(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct first_lock *f = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	f->seen++;
	if (f->at == 0 && takes_a_lock(sql))
		f->at = f->seen;
}

/* Connection 0 counts counter 1; connection 1 deletes it. */
static int count_or_delete(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	if (who == 0)
		return inside_count_async(db, 1);
	return kit_db_exec(db, "DELETE FROM counters WHERE id = 1", 0, NULL);
}

/* Counter 1 deleted by another connection, the DELETE run whole before
 * each statement of inside_count_async(counter 1) in turn, up to the
 * first that locks (the UPDATE; stopping the DELETE behind a lock the
 * call holds would only show the call's own order): the call answers
 * INSIDE_NO_ROW, as for a row that was never there, and no counter 1 is
 * left. A call that looks the row up first (SELECT 1 ..., "no BEGIN for
 * a missing row") and then trusts its UPDATE answers 0, "counted", for a
 * row deleted between the look and the write: only the UPDATE's own
 * changed-row count says whether it counted. Which statement locks first
 * is read from one call alone beforehand; a call that sends nothing
 * recognised as a write is judged with the DELETE before its first
 * statement only. Each order is forced, not drawn: the verdict is the
 * same on every run. */
void commits__async_row_deleted_meanwhile(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, "CREATE TABLE counters (id BIGINT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0)");
	labtest_exec(t, "INSERT INTO counters (id) VALUES (1)");
	struct first_lock f = { 0, 0 };
	kit_db_set_hook(db, note_first_lock, &f);
	int rc = inside_count_async(db, 1);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0, "async", "inside_count_async() of counter 1, alone: %d, %s", rc,
	          labtest_why(db));
	int last = f.at > 0 ? f.at : 1;
	struct lt_gate *g = lt_gate_open(t, 2);
	for (int k = 1; k <= last && k <= SWEEP_MAX; k++) {
		labtest_exec(t, "DELETE FROM counters");
		labtest_exec(t, "INSERT INTO counters (id) VALUES (1)");
		lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, count_or_delete, NULL);
		if (!lt_gate_held(g, 0))
			break;
		int a = lt_gate_rc(g, 0), d = lt_gate_rc(g, 1);
		int64_t left = labtest_int(t, "SELECT count(*) FROM counters");
		lt_expect(d == 0, NULL, "the test's DELETE of counter 1 (before statement %d of "
		          "inside_count_async()) returned %d", k, d);
		lt_expect(a == INSIDE_NO_ROW, "async", "counter 1 was deleted by another connection "
		          "before statement %d of inside_count_async(counter 1), which is before the "
		          "call's first write (statement %d when it runs alone): it returned %d, "
		          "expected INSIDE_NO_ROW (%d), as nothing was counted.%s", k, last, a,
		          INSIDE_NO_ROW, a == 0 ? " Does the call look the row up first (SELECT 1 "
		          "... before BEGIN) and then trust its UPDATE? The row can go between the "
		          "look and the write: only the UPDATE's changed-row count (kit_db_changes) "
		          "says whether it counted" : "");
		lt_expect(left == 0, "async", "counter 1 deleted before statement %d of "
		          "inside_count_async(counter 1): %lld counter row(s) after the call, expected "
		          "none (a count that inserts the row it misses brings a deleted counter back)",
		          k, (long long)left);
	}
	lt_gate_close(g);
}

/* ---- posts and likes made by another connection during the setup ---- */

/* The posts and likes of INSIDE_SCHEMA (its key checked at each INSERT),
 * with a post and a like of their own. */
#define FOREIGN_TABLES \
	"CREATE TABLE posts (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0);" \
	"CREATE TABLE likes (post_id BIGINT NOT NULL REFERENCES posts," \
	" user_id BIGINT NOT NULL, PRIMARY KEY (post_id, user_id));" \
	"INSERT INTO posts (id, likes) VALUES (42, 3);" \
	"INSERT INTO likes (post_id, user_id) VALUES (42, 9)"

/* Connection 0 runs the setup; connection 1 makes the tables its way. */
static int setup_or_make(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	if (who == 0)
		return inside_keys_setup(db);
	return kit_db_exec(db, FOREIGN_TABLES, 0, NULL);
}

static bool there(struct kit_db *db, const char *table)
{
	char sql[64];
	int64_t n;
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
	return kit_db_query_int(db, sql, 0, NULL, &n) == 0;
}

/* inside.h: where posts or likes are there already and are not as the
 * setup makes them (INSIDE_SCHEMA's key is checked at each INSERT), an
 * error rather than 0, and their rows stay. Another connection makes
 * them the INSIDE_SCHEMA way, with post 42 and its like by user 9, run
 * whole before each statement of inside_keys_setup() in turn (when its
 * CREATE waits behind the setup's own uncommitted CREATE, the setup goes
 * on first: then the other connection's CREATE fails and the setup's 0
 * is right). Whenever the other connection made them, the setup returns
 * an error and leaves them as they were: post 42 with 3 likes, the like
 * (42, 9), and on PostgreSQL likes' key checked at each INSERT (not
 * deferred). A setup that looks whether the tables are there and then
 * says CREATE TABLE IF NOT EXISTS ("idempotent") adopts tables made
 * between the look and the CREATEs: 0, and every like then adds a
 * MultiXact. The plain CREATE refuses them itself. */
void keys__setup_while_another_makes_them(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	bool pg = t->engine == KIT_DB_POSTGRES;
	struct lt_gate *g = lt_gate_open(t, 2);
	int k;
	for (k = 1; k <= SWEEP_MAX; k++) {
		lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, setup_or_make, NULL);
		bool held = lt_gate_held(g, 0);
		int s = lt_gate_rc(g, 0), m = lt_gate_rc(g, 1);
		bool posts = there(db, "posts"), likes = there(db, "likes");
		int64_t post42 = -1, like42 = -1, deferred = -1;
		if (posts && likes) {
			post42 = labtest_int(t, "SELECT COALESCE(SUM(likes), -1) FROM posts WHERE id = 42");
			like42 = labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 42 AND "
			                        "user_id = 9");
			if (pg)
				deferred = labtest_int(t, "SELECT count(*) FROM pg_constraint WHERE conrelid"
				                          " = 'likes'::regclass AND contype = 'f' AND condeferred");
		}
		labtest_exec(t, "DROP TABLE IF EXISTS likes");
		labtest_exec(t, "DROP TABLE IF EXISTS posts");
		if (!held)
			break;
		if (m == 0) {
			lt_expect(s < 0, "guarantee", "another connection made posts and likes the "
			          "INSIDE_SCHEMA way (their key checked at each INSERT) before statement %d "
			          "of inside_keys_setup(): the setup returned %d, expected an error "
			          "(inside.h: where the tables are there already and are not as the setup "
			          "makes them, an error rather than 0)%s", k, s, s == 0 ? ". Does it look "
			          "whether the tables are there and then CREATE TABLE IF NOT EXISTS? Tables "
			          "made between the look and the CREATEs are adopted as they are: a plain "
			          "CREATE TABLE refuses them itself" : "");
			lt_expect(post42 == 3 && like42 == 1 && deferred <= 0, "guarantee",
			          "another connection made posts and likes (post 42 with 3 likes, the like "
			          "(42, 9), the key checked at each INSERT) before statement %d of "
			          "inside_keys_setup(), which returned %d: after it, post 42 counts %lld "
			          "(-1: gone), the like is there %lld time(s)%s; expected them left as "
			          "they were (their rows stay, their key is not replaced)", k, s,
			          (long long)post42, (long long)like42, deferred > 0 ? ", and likes' key "
			          "is now deferred" : "");
		} else {
			lt_expect(s == 0 && posts && likes, "guarantee", "before statement %d of "
			          "inside_keys_setup() another connection's CREATE of the tables waited for "
			          "the setup and then failed (%d): the setup returned %d and left posts "
			          "%s and likes %s, expected 0 and both (%s)", k, m, s,
			          posts ? "made" : "missing", likes ? "made" : "missing", labtest_why(db));
		}
	}
	lt_expect(k > 1, "guarantee", "inside_keys_setup() ran no statement: got %d",
	          lt_gate_rc(g, 0));
	lt_gate_close(g);
}

/* ---- ids at both ends of int64 ---- */

static const int64_t post_ids[] = {
	INT64_MIN, -1000000000000000001LL, -1, 0, INT64_MAX,
};
static const int64_t user_ids[] = {
	INT64_MIN, -1000000000000000001LL, INT64_MAX,
};
#define N_POSTS (int)(sizeof post_ids / sizeof post_ids[0])
#define N_USERS (int)(sizeof user_ids / sizeof user_ids[0])

static int64_t count_of(struct kit_db *db, const char *sql, int64_t a, int64_t b)
{
	char ta[24], tb[24];
	snprintf(ta, sizeof ta, "%" PRId64, a);
	snprintf(tb, sizeof tb, "%" PRId64, b);
	const char *params[] = { ta, tb };
	int64_t n = -1;
	if (kit_db_query_int(db, sql, strstr(sql, "$2") ? 2 : 1, params, &n) != 0)
		return -1;
	return n;
}

/* On the tables of inside_keys_setup(): posts INT64_MIN, -10^18 - 1, -1,
 * 0 and INT64_MAX (INSIDE_SCHEMA's id is any BIGINT: a CHECK (id > 0)
 * "as ids come from a sequence" refuses them), each liked by users
 * INT64_MIN, -10^18 - 1 and INT64_MAX through like(): each like 0, its
 * row holding exactly the ids given, and each post counting 3. An id's
 * text needs 20 characters and its NUL (the minus sign and 19 digits):
 * a buffer of 20 cuts every id of -10^18 and below to its first 19
 * characters, another post or user. */
static void likes_across_int64(struct labtest *t, bool one_statement)
{
	struct kit_db *db = labtest_db(t);
	const char *name = one_statement ? "inside_like_one_statement()" : "inside_like()";
	const char *tag = one_statement ? "one-statement" : "guarantee";
	int rc = inside_keys_setup(db);
	lt_expect(rc == 0, NULL, "inside_keys_setup(): %d, %s", rc, labtest_why(db));
	for (int p = 0; p < N_POSTS; p++) {
		char id[24];
		snprintf(id, sizeof id, "%" PRId64, post_ids[p]);
		const char *params[] = { id };
		rc = kit_db_exec(db, "INSERT INTO posts (id) VALUES ($1)", 1, params);
		lt_expect(rc == 0, "guarantee", "INSERT INTO posts (id) VALUES (%s) on the tables of "
		          "inside_keys_setup() returned %d (%s): posts' id is any BIGINT, as in "
		          "INSIDE_SCHEMA, negative and 0 too (a CHECK on it, \"ids come from a "
		          "sequence\", refuses ids the header allows)", id, rc, labtest_why(db));
	}
	for (int p = 0; p < N_POSTS; p++) {
		for (int u = 0; u < N_USERS; u++) {
			int64_t post = post_ids[p], user = user_ids[u];
			rc = one_statement ? inside_like_one_statement(db, post, user)
			                   : inside_like(db, post, user);
			int64_t stored = count_of(db, "SELECT count(*) FROM likes WHERE post_id = $1 AND "
			                              "user_id = $2", post, user);
			lt_expect(rc == 0 && stored == 1, tag, "%s of post %" PRId64 " by user %" PRId64
			          " returned %d (%s), and %lld like row(s) hold exactly those ids: expected "
			          "0 and 1. An id's text needs 21 bytes (a minus sign, 19 digits and the "
			          "NUL): is it printed into a shorter buffer, so that an id of -10^18 or "
			          "below is cut to another post or user?", name, post, user, rc,
			          rc == 0 ? "" : rc == INSIDE_NO_ROW ? "INSIDE_NO_ROW: no post matched" :
			          labtest_why(db), (long long)stored);
		}
	}
	for (int p = 0; p < N_POSTS; p++) {
		int64_t likes = count_of(db, "SELECT likes FROM posts WHERE id = $1", post_ids[p], 0);
		lt_expect(likes == N_USERS, tag, "post %" PRId64 " counts %lld likes after %d likes of "
		          "it by %s, expected %d", post_ids[p], (long long)likes, N_USERS, name, N_USERS);
	}
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM likes"), N_POSTS * N_USERS,
	                   "like rows after every post was liked by every user", tag);
}

void keys__ids_across_int64(void **state)
{
	likes_across_int64(*state, false);
}

void one_trip__ids_across_int64(void **state)
{
	likes_across_int64(*state, true);
}
