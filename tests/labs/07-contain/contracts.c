/*
 * contracts.c: Lab 07's checks of what contain.h promises beyond the
 * lines test_contain.c stages: two full lines at once beside waits on
 * other kinds of lock (an advisory lock, a table lock), each line naming
 * its own row by its ctid; one line whose first waiter sits in the middle
 * of the order the server lists its sessions in; KIT_DB_ERR with *n = 0 on SQLite and when the
 * query fails; the endpoints' codes (a missing post or user, an exhausted
 * pool) and the pools' connections, which a failed contain_open() and
 * contain_close() leave none of.
 */
#include "tests/labs/07-contain/contracts.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "labs/07-contain/contain.h"
#include "tests/harness/beside.h"
#include "tests/harness/labtest.h"
#include "tests/harness/session.h"
#include "tests/harness/sql.h"
#include "tests/harness/steps.h"
#include "util/clock.h"

/* A backend that runs one statement and waits in it: for a row, an
 * advisory lock, a table. */
struct blocked {
	char url[1100];
	char sql[700];
	struct kit_db *db;           /* opened by the caller, or NULL: one from url */
	int rc;
	pthread_t th;
};

/* Runs b->sql on b->db (or a connection of its own from b->url), then
 * closes that connection. */
static void *run_blocked(void *arg)
{
	struct blocked *b = arg;
	struct kit_db *db = b->db;
	b->rc = db != NULL ? 0 : kit_db_open(&db, b->url);
	if (b->rc == 0)
		b->rc = kit_db_exec(db, b->sql, 0, NULL);
	kit_db_close(db);
	return NULL;
}

/* Backends of this check (their statement carries its place) waiting for
 * a lock of any kind; waits until there are n, for at most ten seconds. */
static void await_blocked(struct labtest *t, int n)
{
	char sql[600];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
	         "'Lock' AND query LIKE '%%/* %s */%%'", t->place);
	int64_t got = 0;
	for (int i = 0; i < 1000 && (got = labtest_int(t, sql)) < n; i++)
		util_sleep_ns(10 * 1000000LL);
	lt_expect_int(got, n, "backends of this check waiting for a lock while the lines form");
}

static void start_blocked(struct labtest *t, struct blocked *b, int *nb, const char *fmt,
                          long long a)
{
	struct blocked *w = &b[*nb];
	snprintf(w->url, sizeof w->url, "%s", t->url);
	w->db = NULL;
	char what[300];
	snprintf(what, sizeof what, fmt, a);
	snprintf(w->sql, sizeof w->sql, "%s /* %s */", what, t->place);
	lt_expect(pthread_create(&w->th, NULL, run_blocked, w) == 0, NULL, "pthread_create");
	++*nb;
	await_blocked(t, *nb);
}

/* A connection of the check's own in an open transaction that ran sql. */
static struct kit_db *holding(struct labtest *t, const char *sql, int64_t *pid)
{
	struct kit_db *db = labtest_connect(t);
	assert_int_equal(kit_db_query_int(db, "SELECT pg_backend_pid()", 0, NULL, pid), 0);
	assert_int_equal(kit_db_begin(db), 0);
	assert_int_equal(kit_db_exec(db, sql, 0, NULL), 0);
	return db;
}

/* Two lines at once, each long enough to have tuple waiters (row 1: three
 * waiters, row 2: two), beside a backend waiting for an advisory lock and
 * one waiting for a table lock (LOCK TABLE users): exactly two lines,
 * each with its own count, holder, and row (page and tuple as the row's
 * ctid before it was locked). Counting waits of every lock type adds a
 * line; matching a tuple waiter to the wrong transactionid wait moves
 * waiters from one line to the other. */
void hot_rows_now__two_lines_beside_other_locks(void **state)
{
	struct labtest *t = *state;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	/* 2,000 rows first, so rows 1 and 2 are on page 10 or later, with
	 * tuple numbers of two digits or more: a page or tuple read from
	 * another column (0 from "posts"), or in another base, shows. */
	labtest_exec(t, "INSERT INTO posts (id) SELECT 10000 + g FROM generate_series(1, 2000) g;"
	                "INSERT INTO posts (id) VALUES (1), (2), (3)");
	int64_t page[3], tuple[3];
	for (int id = 1; id <= 2; id++) {
		char sql[200];
		snprintf(sql, sizeof sql, "SELECT (ctid::text::point)[0]::bigint FROM posts WHERE id = %d",
		         id);
		page[id] = labtest_int(t, sql);
		snprintf(sql, sizeof sql, "SELECT (ctid::text::point)[1]::bigint FROM posts WHERE id = %d",
		         id);
		tuple[id] = labtest_int(t, sql);
	}

	/* configure */
	int64_t pid1, pid2, pid_adv, pid_tab;
	struct kit_db *h1 = holding(t, "UPDATE posts SET likes = likes + 1 WHERE id = 1", &pid1);
	struct kit_db *h2 = holding(t, "UPDATE posts SET likes = likes + 1 WHERE id = 2", &pid2);
	struct kit_db *ha = holding(t, "SELECT pg_advisory_xact_lock(pg_backend_pid())", &pid_adv);
	struct kit_db *ht = holding(t, "LOCK TABLE users IN ACCESS EXCLUSIVE MODE", &pid_tab);
	struct blocked b[7];
	int nb = 0;
	static const int line[] = { 1, 1, 1, 2, 2 };
	for (int i = 0; i < 5; i++)
		start_blocked(t, b, &nb, "UPDATE posts SET likes = likes + 1 WHERE id = %lld",
		              line[i]);
	start_blocked(t, b, &nb, "SELECT pg_advisory_xact_lock(%lld)", (long long)pid_adv);
	start_blocked(t, b, &nb, "SELECT count(*) FROM users WHERE id > %lld", 0);
	util_sleep_ns(20 * 1000000LL);

	/* run */
	struct hot_row_now rows[8];
	memset(rows, 0, sizeof rows);
	for (int i = 0; i < 8; i++)
		rows[i].page = rows[i].tuple = -7;       /* neither a place nor "unnamed" */
	int n = -1;
	int rc = hot_rows_now(labtest_db(t), rows, 8, &n);

	/* verify, after letting every line go */
	kit_db_commit(h1);
	kit_db_commit(h2);
	kit_db_commit(ha);
	kit_db_commit(ht);
	for (int i = 0; i < nb; i++)
		pthread_join(b[i].th, NULL);
	kit_db_close(h1);
	kit_db_close(h2);
	kit_db_close(ha);
	kit_db_close(ht);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", labtest_why(labtest_db(t)));
	lt_expect_int_hint(n, 2, "lines while row 1 has 3 waiters, row 2 has 2, one backend waits "
	                   "for an advisory lock and one for LOCK TABLE (only row waits are hot rows: "
	                   "tuple and transactionid locks)", "signature");
	static const struct { int id, waiting; } want[] = { { 1, 3 }, { 2, 2 } };
	int64_t holders[3] = { 0, pid1, pid2 };
	for (int i = 0; i < 2 && i < n; i++) {
		int id = want[i].id;
		lt_expect(rows[i].waiting == want[i].waiting && rows[i].holder_pid == holders[id],
		          "signature", "line %d: expected row %d's line, %d waiting behind pid %lld, got "
		          "%d waiting behind pid %d (with two lines at once, a tuple waiter belongs to "
		          "the line of the transactionid wait on the same row)", i + 1, id,
		          want[i].waiting, (long long)holders[id], rows[i].waiting, rows[i].holder_pid);
		lt_expect(!strcmp(rows[i].relation, "posts") && rows[i].page == page[id] &&
		          rows[i].tuple == tuple[id], "signature", "line %d: expected row %d as posts, "
		          "page %lld, tuple %lld (its ctid), got \"%s\", page %lld, tuple %lld", i + 1,
		          id, (long long)page[id], (long long)tuple[id], rows[i].relation,
		          (long long)rows[i].page, (long long)rows[i].tuple);
	}
}

/* Where pg_stat_activity lists a session: the place of its backend's
 * slot, the order the detector's join with pg_locks reads its waits in. */
static int64_t listed_at(struct labtest *t, int64_t pid)
{
	char sql[200];
	snprintf(sql, sizeof sql, "SELECT ordinality FROM pg_stat_get_activity(NULL) WITH "
	         "ORDINALITY s WHERE pid = %lld", (long long)pid);
	return labtest_int(t, sql);
}

#define LINE_OF 5
#define LINE_STAGINGS 8

/* A line of LINE_OF on row 1 behind the holder h (its pid *pid), whose
 * first waiter (on the holder's transactionid, holding the row's tuple
 * lock) is the session that pg_stat_activity lists in the middle; the
 * others wait on the tuple lock. Returns that first waiter's pid; wpid
 * gets the LINE_OF waiters'. */
static int64_t stage_line(struct labtest *t, struct kit_db **h, int64_t *pid, struct blocked *b,
                          int64_t *wpid)
{
	int64_t at[LINE_OF];
	int order[LINE_OF];
	*h = holding(t, "UPDATE posts SET likes = likes + 1 WHERE id = 1", pid);
	for (int i = 0; i < LINE_OF; i++) {
		b[i] = (struct blocked){ .db = labtest_connect(t) };
		snprintf(b[i].sql, sizeof b[i].sql, "UPDATE posts SET likes = likes + 1 WHERE id = 1 "
		         "/* %s */", t->place);
		assert_int_equal(kit_db_query_int(b[i].db, "SELECT pg_backend_pid()", 0, NULL,
		                                  &wpid[i]), 0);
		at[i] = listed_at(t, wpid[i]);
		int k = i;                      /* insertion sort by the place listed */
		for (; k > 0 && at[order[k - 1]] > at[i]; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	int first = order[LINE_OF / 2];
	lt_expect(pthread_create(&b[first].th, NULL, run_blocked, &b[first]) == 0, NULL,
	          "pthread_create");
	await_blocked(t, 1);
	int nb = 1;
	for (int i = 0; i < LINE_OF; i++)
		if (i != first) {
			lt_expect(pthread_create(&b[i].th, NULL, run_blocked, &b[i]) == 0, NULL,
			          "pthread_create");
			await_blocked(t, ++nb);
		}
	return wpid[first];
}

static void end_line(struct kit_db *h, struct blocked *b)
{
	kit_db_commit(h);
	for (int i = 0; i < LINE_OF; i++)
		pthread_join(b[i].th, NULL);
	kit_db_close(h);
}

/* One line of five on row 1, whose first waiter (on the holder's
 * transactionid, holding the row's tuple lock) is the session that
 * pg_stat_activity lists third of the five: the others, which wait on the
 * tuple lock, come before it and after it in the order the server reads
 * the waits in, whichever way it reads them. One line, five waiting, the
 * holder's pid. A tuple waiter matched to any wait on the same row (not
 * only a transactionid wait) takes the first the server lists, here
 * another tuple waiter, whose transaction is none: its line splits in two,
 * one of them without a holder. It went unseen where the first waiter was
 * also the first session opened, as in every other line the checks stage.
 * pg_locks lists the waits in the order of its shared hash table, which
 * follows the lock's tag (the holder's xid, the row's ctid), not the
 * sessions: a line whose transactionid wait pg_locks lists first (about
 * one staging in five) is let go and staged again, up to LINE_STAGINGS
 * times, so that the wrong match is seen in every run but about one in
 * 0.2^8 (1 in 390,000). */
void hot_rows_now__one_line_whoever_queues_first(void **state)
{
	struct labtest *t = *state;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");

	/* configure: a line whose transactionid wait pg_locks does not list
	 * first among the row's waits */
	struct kit_db *h;
	int64_t pid, first_pid = 0, on_xid = 0, wpid[LINE_OF];
	struct blocked b[LINE_OF];
	int staged = 0;
	char sql[400];
	for (;;) {
		first_pid = stage_line(t, &h, &pid, b, wpid);
		staged++;
		snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_locks WHERE pid = %lld AND locktype = "
		         "'transactionid' AND NOT granted", (long long)first_pid);
		on_xid = labtest_int(t, sql);
		/* pg_locks' own order: no join, which could read it in another */
		int len = snprintf(sql, sizeof sql, "SELECT coalesce((SELECT locktype FROM pg_locks "
		                   "WHERE NOT granted AND locktype IN ('tuple', 'transactionid') AND "
		                   "pid IN (%lld", (long long)wpid[0]);
		for (int i = 1; i < LINE_OF; i++)
			len += snprintf(sql + len, sizeof sql - (size_t)len, ", %lld", (long long)wpid[i]);
		snprintf(sql + len, sizeof sql - (size_t)len, ") LIMIT 1) = 'transactionid', false)::int");
		if (labtest_int(t, sql) == 0 || staged == LINE_STAGINGS)
			break;
		end_line(h, b);
	}
	util_sleep_ns(20 * 1000000LL);

	/* run */
	struct hot_row_now rows[8];
	int n = -1;
	int rc = hot_rows_now(labtest_db(t), rows, 8, &n);

	/* verify, after letting the line go */
	end_line(h, b);
	lt_expect_int(on_xid, 1, "waits on the holder's transactionid of the session that queued "
	              "first (as pg_locks shows them)");
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", labtest_why(labtest_db(t)));
	bool one = n == 1 && rows[0].waiting == LINE_OF && rows[0].holder_pid == pid;
	for (int i = 0; !one && i < n && i < 8; i++)
		lt_say("line %d of %d: %d waiting behind pid %d", i + 1, n, rows[i].waiting,
		       rows[i].holder_pid);
	lt_expect(one, "signature", "expected one line, %d waiting behind pid %lld, got %d "
	          "line%s (the first waiter is the third of the %d sessions as pg_stat_activity "
	          "lists them): a tuple waiter is behind the transactionid wait whose backend "
	          "holds that tuple lock (locktype 'transactionid'), not behind whichever wait on "
	          "the row the server lists first", LINE_OF, (long long)pid, n, n == 1 ? "" : "s",
	          LINE_OF);
}

/* hot_rows_now() is PostgreSQL's: on SQLite KIT_DB_ERR, and *n is 0. */
void hot_rows_now__refused_on_sqlite(void **state)
{
	struct labtest *t = *state;
	struct hot_row_now rows[2];
	int n = -1;
	int rc = hot_rows_now(labtest_db(t), rows, 2, &n);
	lt_expect(rc == KIT_DB_ERR, "signature", "hot_rows_now() on SQLite returned %d, expected "
	          "KIT_DB_ERR (%d): there is no pg_locks to read", rc, KIT_DB_ERR);
	lt_expect_int_hint(n, 0, "*n after hot_rows_now() was refused", "signature");
}

/* The detector's statement refused, or its answer lost: a KIT_DB_* code,
 * never 0, and *n is 0. A line is staged first (row 1 held, one waiter),
 * so a statement whose answer is lost has already handed its row over:
 * *n counted while the rows came in and left there says a line was
 * found by a call that failed. */
void hot_rows_now__query_fails(void **state)
{
	struct labtest *t = *state;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	int64_t pid;
	struct kit_db *h = holding(t, "UPDATE posts SET likes = likes + 1 WHERE id = 1", &pid);
	struct blocked b[1];
	int nb = 0;
	start_blocked(t, b, &nb, "UPDATE posts SET likes = likes + 1 WHERE id = %lld", 1);
	int failed = 0;
	for (int how = LT_STEP_FAILS; how <= LT_STEP_REPLY_LOST; how++) {
		for (int k = 1; k <= 5; k++, failed++) {
			struct hot_row_now rows[2];
			int n = -1;
			lt_step_arm(how, k);
			int rc = hot_rows_now(labtest_db(t), rows, 2, &n);
			if (!lt_step_disarm())
				break;
			lt_expect(rc < 0 && n == 0, "signature", "statement %d of hot_rows_now() %s, "
			          "with one line on row 1: returned %d with *n = %d, expected a KIT_DB_* "
			          "code and 0 (is *n set from the rows counted even when the query then "
			          "failed?)", k, lt_step_what(how), rc, n);
		}
	}
	kit_db_commit(h);
	pthread_join(b[0].th, NULL);
	kit_db_close(h);
	lt_expect(failed > 0, "signature", "hot_rows_now() ran no statement: it reads the waits "
	          "from pg_locks");
}

/* A line on a table outside the detector's search_path, in a schema and
 * under a name long enough that ::regclass::text prints 80-odd
 * characters: relation is that text as the server prints it (schema and
 * all: two tables of one name in two schemas are two rows), cut to the
 * 63 characters that fit, and always ends with a NUL inside its 64
 * bytes. */
static int take_text(void *arg, int ncols, const char *const *v)
{
	if (ncols >= 1 && v[0])
		snprintf(arg, 200, "%s", v[0]);
	return 0;
}

void hot_rows_now__names_a_table_beyond_the_search_path(void **state)
{
	struct labtest *t = *state;
	contain_own_db(t);
	char schema[100], table[200], sql[700], want[200] = "";
	snprintf(schema, sizeof schema, "%.40s_away", t->place);
	snprintf(table, sizeof table, "%s.posts_counted_in_a_table_with_a_long_name", schema);
	snprintf(sql, sizeof sql, "CREATE SCHEMA %s; CREATE TABLE %s (id BIGINT PRIMARY KEY, likes "
	         "BIGINT NOT NULL DEFAULT 0); INSERT INTO %s (id) VALUES (1)", schema, table, table);
	labtest_exec(t, sql);
	snprintf(sql, sizeof sql, "SELECT '%s'::regclass::text", table);
	lt_expect(kit_db_query(labtest_db(t), sql, 0, NULL, take_text, want) == 0 && want[0], NULL,
	          "%s: %s", sql, labtest_why(labtest_db(t)));

	int64_t pid;
	snprintf(sql, sizeof sql, "UPDATE %s SET likes = likes + 1 WHERE id = 1", table);
	struct kit_db *h = holding(t, sql, &pid);
	struct blocked b[2];
	int nb = 0;
	snprintf(sql, sizeof sql, "UPDATE %s SET likes = likes + 1 WHERE id = %%lld", table);
	start_blocked(t, b, &nb, sql, 1);
	start_blocked(t, b, &nb, sql, 1);

	struct hot_row_now rows[2];
	memset(rows, 'x', sizeof rows);
	int n = -1;
	int rc = hot_rows_now(labtest_db(t), rows, 2, &n);
	kit_db_commit(h);
	for (int i = 0; i < nb; i++)
		pthread_join(b[i].th, NULL);
	kit_db_close(h);

	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", labtest_why(labtest_db(t)));
	lt_expect_int_hint(n, 1, "lines while row 1 of a table outside the search_path has 2 waiters",
	                   "signature");
	if (rc != 0 || n != 1)
		return;
	bool ended = memchr(rows[0].relation, 0, sizeof rows[0].relation) != NULL;
	lt_expect(ended, "signature", "the relation of the line fills all %zu bytes of relation[] "
	          "with no NUL (its name as the server prints it is %zu characters): copied with "
	          "strncpy or memcpy, which stop at the buffer's end without one?",
	          sizeof rows[0].relation, strlen(want));
	if (!ended)
		return;
	size_t fit = sizeof rows[0].relation - 1;
	lt_expect(strlen(rows[0].relation) == (strlen(want) < fit ? strlen(want) : fit) &&
	          strncmp(rows[0].relation, want, fit) == 0, "signature", "expected the relation "
	          "as ::regclass::text prints it from the detector's session, cut to %zu characters: "
	          "\"%.*s\", got \"%s\" (a table outside the search_path is printed with its "
	          "schema; pg_class.relname alone leaves it out)", fit, (int)fit, want,
	          rows[0].relation);
}

/* The endpoints' codes: a like of a post that does not exist is
 * KIT_DB_NOROW; a like while every connection of the likes' pool is taken
 * is KIT_POOL_TIMEOUT, and counts nothing; the login page finds a user
 * (0), not a missing one (KIT_DB_NOROW), and times out when its own pool
 * is taken. Each pool waits its acquire timeout (300 ms here, the lock
 * timeout 20 ms) before it says KIT_POOL_TIMEOUT: only the lower bound is
 * judged, which a loaded machine can only lengthen; and the call waits it
 * out once (the pool counts its timeouts), not again and again. */
/* A connection of a pool's, put back by a thread after ms. */
struct put_later {
	struct kit_pool *pool;
	struct kit_db *db;
	int ms;
	pthread_t th;
};

static void *put_back_later(void *arg)
{
	struct put_later *p = arg;
	util_sleep_ns(p->ms * 1000000LL);
	kit_pool_put(p->pool, p->db);
	return NULL;
}

void contain__endpoints_say_what_happened(void **state)
{
	struct labtest *t = *state;
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (4294967298), (-5), "
	             "(9223372036854775807), (-9223372036854775807 - 1); INSERT INTO users VALUES (7, 'ann'), (4294967304, 'bob'), "
	             "(-9, 'cy'), (-9223372036854775807 - 1, 'dee')");
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 1, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 300, .lock_timeout_ms = 20,
	                              .contain = true };
	char err[512];
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);

	int64_t like_wait = -1, login_wait = -1;
	int like_missing = contain_like(&app, 2);
	int login_ok = contain_login(&app, 7);
	int login_missing = contain_login(&app, 8);
	int login_after_missing = contain_login(&app, 7);
	/* ids past 2^32: post 2^32 + 2 and user 2^32 + 8 exist, post 2 and
	 * user 8 do not */
	int like_big = contain_like(&app, 4294967298LL);
	int login_big = contain_login(&app, 4294967304LL);
	/* ids are BIGINTs, negative ones too */
	int like_neg = contain_like(&app, -5);
	int login_neg = contain_login(&app, -9);
	/* the ends of int64_t: 19 digits, 20 characters with the sign */
	int like_max = contain_like(&app, INT64_MAX);
	int login_min = contain_login(&app, INT64_MIN);
	int like_min = contain_like(&app, INT64_MIN);
	struct kit_db *taken = NULL;
	int like_starved = KIT_DB_ERR, login_starved = KIT_DB_ERR;
	long like_asked = -1, login_asked = -1;   /* timeouts of the starved call's pool */
	if (kit_pool_get(app.likes, &taken) == 0) {
		int64_t t0 = util_now_ns();
		long before = kit_pool_timeouts(app.likes);
		like_starved = contain_like(&app, 1);
		like_asked = kit_pool_timeouts(app.likes) - before;
		like_wait = util_now_ns() - t0;
		kit_pool_put(app.likes, taken);
	}
	if (kit_pool_get(app.login, &taken) == 0) {
		int64_t t0 = util_now_ns();
		long before = kit_pool_timeouts(app.login);
		login_starved = contain_login(&app, 7);
		login_asked = kit_pool_timeouts(app.login) - before;
		login_wait = util_now_ns() - t0;
		kit_pool_put(app.login, taken);
	}
	int like_ok = contain_like(&app, 1);
	/* a like that waits 100 ms for its connection, five times its lock
	 * timeout, and then finds the row free: the lock timeout is the
	 * row's, not a budget of the request's */
	int like_late = KIT_DB_ERR;
	struct put_later later = { .pool = app.likes, .ms = 100 };
	if (kit_pool_get(app.likes, &later.db) == 0) {
		if (pthread_create(&later.th, NULL, put_back_later, &later) == 0) {
			like_late = contain_like(&app, 1);
			pthread_join(later.th, NULL);
		} else {
			kit_pool_put(app.likes, later.db);
		}
	}
	contain_close(&app);

	lt_expect(login_after_missing == 0, "bulkhead", "contain_login() of user 8, which does not "
	          "exist, returned %d, and the next login, of user 7, on the login page's one "
	          "connection, returned %d: does the login that found no user leave its transaction "
	          "open (no ROLLBACK on that path)? The connection goes back to the pool inside it, "
	          "and every later call on it fails", login_missing, login_after_missing);
	lt_expect(like_missing == KIT_DB_NOROW, "bulkhead", "contain_like() of post 2, which does "
	          "not exist, returned %d, expected KIT_DB_NOROW (%d): check how many rows the "
	          "UPDATE changed", like_missing, KIT_DB_NOROW);
	lt_expect(like_starved == KIT_POOL_TIMEOUT, "bulkhead", "contain_like() while the likes' "
	          "one connection was taken returned %d, expected KIT_POOL_TIMEOUT (%d): the pool's "
	          "answer is the like's answer", like_starved, KIT_POOL_TIMEOUT);
	lt_expect(like_starved != KIT_POOL_TIMEOUT || like_wait >= 300 * 1000000LL, "bulkhead",
	          "contain_like() with the likes' one connection taken gave up after %.1f ms, expected "
	          "the acquire timeout of 300 ms (the lock timeout is 20 ms): is the likes' pool "
	          "opened with lock_timeout_ms, or another number, as its acquire timeout?",
	          (double)like_wait / 1e6);
	lt_expect(like_starved != KIT_POOL_TIMEOUT || like_asked == 1, "bulkhead",
	          "contain_like() with the likes' one connection taken waited out the acquire "
	          "timeout %ld times (%.1f ms in all, the acquire timeout is 300 ms): the pool's "
	          "KIT_POOL_TIMEOUT is the like's answer; asking again multiplies the wait the "
	          "config sets (acquire_timeout_ms) and keeps a request waiting that containment "
	          "should fail fast", like_asked, (double)like_wait / 1e6);
	lt_expect(login_starved != KIT_POOL_TIMEOUT || login_asked == 1, "bulkhead",
	          "contain_login() with the login page's one connection taken waited out the "
	          "acquire timeout %ld times (%.1f ms in all, the acquire timeout is 300 ms): the "
	          "pool's KIT_POOL_TIMEOUT is the login's answer", login_asked,
	          (double)login_wait / 1e6);
	lt_expect(like_ok == 0, "bulkhead", "contain_like() of post 1 returned %d", like_ok);
	lt_expect(like_late == 0, "lock-timeout", "contain_like() of post 1, free, that waited "
	          "100 ms for its connection (acquire timeout 300 ms, lock timeout 20 ms) returned "
	          "%d, expected 0%s", like_late, like_late == KIT_DB_BUSY ? ": KIT_DB_BUSY for a "
	          "row nobody held; is the lock timeout counted from the request's start, with the "
	          "app's clock, instead of left to the server (SET LOCAL lock_timeout), which "
	          "counts only the wait for the row?" : "");
	lt_expect_int_hint(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"),
	                   1 + (like_late == 0), "post 1's likes after one like, one that found no "
	                   "connection and one that waited for its connection", "bulkhead");
	lt_expect(like_max == 0 && login_min == 0, "bulkhead", "contain_like() of post INT64_MAX "
	          "and contain_login() of user INT64_MIN (both exist) returned %d and %d, expected "
	          "0 and 0%s", like_max, login_min, like_max == KIT_DB_NOROW ||
	          login_min == KIT_DB_NOROW ? ": KIT_DB_NOROW, another id's answer; is the id "
	          "printed into a buffer too short for 20 characters (snprintf cuts it)?" : "");
	lt_expect_int_hint(labtest_int(t, "SELECT likes FROM posts WHERE id = 9223372036854775807"),
	                   1, "post INT64_MAX's likes after its one like", "bulkhead");
	lt_expect(like_min == 0, "bulkhead", "contain_like() of post INT64_MIN (it exists; 20 "
	          "characters with its sign) returned %d, expected 0%s", like_min,
	          like_min == KIT_DB_NOROW ? ": KIT_DB_NOROW, another post's answer; is the id "
	          "printed into a buffer of 20 bytes, one short for the sign and the NUL?" : "");
	lt_expect_int_hint(labtest_int(t, "SELECT likes FROM posts WHERE id = -9223372036854775807 - 1"),
	                   1, "post INT64_MIN's likes after its one like", "bulkhead");
	lt_expect(login_ok == 0, "bulkhead", "contain_login() of user 7 returned %d, expected 0",
	          login_ok);
	lt_expect(like_big == 0, "bulkhead", "contain_like() of post 2^32 + 2 (4294967298, which "
	          "exists; post 2 does not) returned %d, expected 0%s", like_big,
	          like_big == KIT_DB_NOROW ? ": KIT_DB_NOROW, the answer for post 2; is the id "
	          "printed through an int (%d)? It is an int64_t: PRId64" : "");
	lt_expect_int_hint(labtest_int(t, "SELECT likes FROM posts WHERE id = 4294967298"), 1,
	                   "post 2^32 + 2's likes after its one like", "bulkhead");
	lt_expect(login_big == 0, "bulkhead", "contain_login() of user 2^32 + 8 (4294967304, who "
	          "exists; user 8 does not) returned %d, expected 0%s", login_big,
	          login_big == KIT_DB_NOROW ? ": KIT_DB_NOROW, the answer for user 8; is the id "
	          "printed through an int (%d)? It is an int64_t: PRId64" : "");
	lt_expect(like_neg == 0, "bulkhead", "contain_like() of post -5 (which exists: ids are "
	          "BIGINT, int64_t in contain.h) returned %d, expected 0: is the id printed unsigned "
	          "(PRIu64, %%llu), which makes -5 a number past 2^63 that no BIGINT holds?", like_neg);
	lt_expect_int_hint(labtest_int(t, "SELECT likes FROM posts WHERE id = -5"), 1,
	                   "post -5's likes after its one like", "bulkhead");
	lt_expect(login_neg == 0, "bulkhead", "contain_login() of user -9 (who exists) returned %d, "
	          "expected 0: is the id printed unsigned?", login_neg);
	lt_expect(login_missing == KIT_DB_NOROW, "bulkhead", "contain_login() of user 8, who does "
	          "not exist, returned %d, expected KIT_DB_NOROW (%d): the login page reads the "
	          "user's row", login_missing, KIT_DB_NOROW);
	lt_expect(login_starved == KIT_POOL_TIMEOUT, "bulkhead", "contain_login() while the login "
	          "page's one connection was taken returned %d, expected KIT_POOL_TIMEOUT (%d)",
	          login_starved, KIT_POOL_TIMEOUT);
	lt_expect(login_starved != KIT_POOL_TIMEOUT || login_wait >= 300 * 1000000LL, "bulkhead",
	          "contain_login() with the login page's one connection taken gave up after %.1f ms, "
	          "expected the acquire timeout of 300 ms (the lock timeout is 20 ms): is the login "
	          "pool opened with another number as its acquire timeout?", (double)login_wait / 1e6);
}

/* A like whose k-th statement is refused (the pool's reset, BEGIN, SET
 * LOCAL, the UPDATE, COMMIT), or runs with its answer lost, for every k:
 * a KIT_DB_* code, never 0 and never one that says something else
 * happened (KIT_DB_BUSY, KIT_DB_NOROW, KIT_POOL_TIMEOUT), the like counted at most once (once only when
 * the COMMIT's answer was lost), and the next like works. A SET LOCAL
 * sent after a refused BEGIN runs outside any transaction (PostgreSQL
 * warns and goes on), and so would the UPDATE. */
/* A like whose pooled connection breaks just before its UPDATE (the
 * server ends its session, as a restart or a failover does) fails with a KIT_DB_* code, and the
 * connection goes back to the pool all the same: the pool owns it (a
 * broken one fails its next reset, which the next like reports as its
 * code). A like that closes it instead ("never hand a dead connection
 * back") leaves the pool one short for good: with a pool of one, every
 * later like waits out the acquire timeout (KIT_POOL_TIMEOUT), and
 * contain_close() closes the freed handle again. */
struct break_at_update {
	struct labtest *t;
	struct kit_db *db;
	bool ended;
};

/* The likes' connection's hook: its session ended by the server just
 * before the like's UPDATE is sent, once. */
static void end_at_update(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct break_at_update *b = arg;
	(void)t_ns;
	if (ev == KIT_DB_STMT_START && !b->ended && sql && lt_sql_is(sql, "UPDATE"))
		b->ended = lt_end_session(b->t, b->db, false);
}

void contain_like__a_broken_connection_goes_back(void **state)
{
	struct labtest *t = *state;
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 1, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 300, .lock_timeout_ms = 200,
	                              .contain = true };
	char err[512];
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct break_at_update b = { .t = t };
	lt_expect(kit_pool_get(app.likes, &b.db) == 0, NULL, "kit_pool_get of the likes' pool");
	if (b.db) {
		kit_db_set_hook(b.db, end_at_update, &b);
		kit_pool_put(app.likes, b.db);
	}
	long before = kit_pool_timeouts(app.likes);
	/* the hook stays: it fires once, and b outlives the connection */
	int first = contain_like(&app, 1);
	lt_expect(b.ended, NULL, "the like sent no UPDATE, or its session could not be ended");
	int second = contain_like(&app, 1);
	long timeouts = kit_pool_timeouts(app.likes) - before;
	lt_expect(first < 0 && first != KIT_POOL_TIMEOUT, "bulkhead", "a like on the likes' one "
	          "connection, whose session the server had ended, returned %d: expected a "
	          "KIT_DB_* code", first);
	lt_expect(second != KIT_POOL_TIMEOUT && timeouts == 0, "bulkhead", "after a like failed on "
	          "the likes' one broken connection, the next like returned %d, and %ld call(s) "
	          "found the pool empty: the connection did not go back. Is a connection "
	          "kit_db_connected() says is gone closed (kit_db_close) instead of handed back "
	          "with kit_pool_put? The pool still counts it as lent, every later like waits "
	          "out the acquire timeout, and kit_pool_close() closes it again", second,
	          timeouts);
	contain_close(&app);
}

void contain_like__every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 1, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 200, .lock_timeout_ms = 100,
	                              .contain = true };
	char err[512];
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	int runs = 0;
	char bad[600] = "";
	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY && !bad[0]; how++) {
		for (int k = 1; k <= 10 && !bad[0]; k++, runs++) {
			int64_t before = labtest_int(t, "SELECT likes FROM posts WHERE id = 1");
			lt_step_arm(how, k);
			int rc = contain_like(&app, 1);
			if (!lt_step_disarm())
				break;
			int64_t added = labtest_int(t, "SELECT likes FROM posts WHERE id = 1") - before;
			int again = contain_like(&app, 1);
			/* Refused as busy, as the lock timeout refuses it: the like
			 * ends there with KIT_DB_BUSY, uncounted. One that tries
			 * again holds its pooled connection for another lock wait,
			 * which is what containment is there to stop. */
			if (how == LT_STEP_BUSY && (rc != KIT_DB_BUSY || added != 0))
				snprintf(bad, sizeof bad, "statement %d of a like %s: it returned %d and "
				         "the count changed by %lld, expected KIT_DB_BUSY and no change%s",
				         k, lt_step_what(how), rc, (long long)added, rc == 0 ? ": it tried "
				         "again itself. contain.h: a like the lock timeout refuses returns "
				         "KIT_DB_BUSY at once; a retry inside holds its pooled connection "
				         "for another lock wait, which the timeout is there to stop" :
				         " (is every failure mapped to one code? Pass the statement's own "
				         "code on)");
			else if (how != LT_STEP_BUSY &&
			         (rc == KIT_DB_BUSY || rc == KIT_DB_NOROW || rc == KIT_POOL_TIMEOUT))
				snprintf(bad, sizeof bad, "statement %d of a like %s: it returned %d (%s), "
				         "which tells the caller something else happened: the post is "
				         "there, its row was not held and a connection was had; is "
				         "every failure mapped to one code? Pass the statement's own "
				         "code on", k, lt_step_what(how), rc,
				         rc == KIT_DB_BUSY ? "KIT_DB_BUSY, the lock timeout" :
				         rc == KIT_DB_NOROW ? "KIT_DB_NOROW, no such post" :
				         "KIT_POOL_TIMEOUT, no connection");
			else if (how != LT_STEP_BUSY &&
			         (rc >= 0 || added < 0 || added > (how == LT_STEP_REPLY_LOST)))
				snprintf(bad, sizeof bad, "statement %d of a like %s: it returned %d and "
				         "the count changed by %lld, expected a KIT_DB_* code and no change%s",
				         k, lt_step_what(how), rc, (long long)added,
				         lt_step_refused(how) && added == 1 ? ". The like was counted, so "
				         "the refused statement came after its COMMIT: what does the like "
				         "send once it has committed? A RESET, or a SET that puts the lock "
				         "timeout back, can fail after the like counted, and then leaves "
				         "the like's setting on the session; SET LOCAL ends with the "
				         "transaction and needs no statement after COMMIT" :
				         " (is an error of BEGIN or SET LOCAL passed over?)");
			else if (again != 0)
				snprintf(bad, sizeof bad, "statement %d of a like %s, then the next like "
				         "returned %d: %s", k, lt_step_what(how), again,
				         again == KIT_POOL_TIMEOUT ? "KIT_POOL_TIMEOUT, no connection came "
				         "free: was the failed like's connection never put back in the pool "
				         "(kit_pool_put on every path out, the error paths too)?" :
				         "is a transaction left open on the pooled connection, so that the "
				         "pool's reset or the next BEGIN fails?");
		}
	}
	/* The login page likewise: its pool's reset or its SELECT refused, or
	 * its answer lost, is a KIT_DB_* code, not KIT_POOL_TIMEOUT (a
	 * connection was had), nor KIT_DB_NOROW (the user is there). */
	labtest_exec(t, "INSERT INTO users VALUES (7, 'ann')");
	int logins = 0;
	for (int how = LT_STEP_FAILS; how <= LT_STEP_REPLY_LOST && !bad[0]; how++) {
		for (int k = 1; k <= 10 && !bad[0]; k++, logins++) {
			lt_step_arm(how, k);
			int rc = contain_login(&app, 7);
			if (!lt_step_disarm())
				break;
			int again = contain_login(&app, 7);
			if (rc == KIT_DB_BUSY || rc == KIT_DB_NOROW || rc == KIT_POOL_TIMEOUT || rc >= 0)
				snprintf(bad, sizeof bad, "statement %d of a login %s: it returned %d (%s), "
				         "expected the statement's own KIT_DB_* code: user 7 is there, no "
				         "lock was waited for and a connection was had (a failed reset "
				         "comes back from kit_pool_get as the reset's code: is every "
				         "failure of kit_pool_get reported as KIT_POOL_TIMEOUT?)", k,
				         lt_step_what(how), rc,
				         rc >= 0 ? "success" : rc == KIT_DB_BUSY ? "KIT_DB_BUSY" :
				         rc == KIT_DB_NOROW ? "KIT_DB_NOROW, no such user" :
				         "KIT_POOL_TIMEOUT, no connection");
			else if (again != 0)
				snprintf(bad, sizeof bad, "statement %d of a login %s, then the next login "
				         "returned %d", k, lt_step_what(how), again);
		}
	}
	contain_close(&app);
	lt_expect(!bad[0], "rollback", "%s", bad);
	lt_expect(runs > 0, "rollback", "contain_like() ran no statement");
	lt_expect(logins > 0, "rollback", "contain_login() ran no statement");
}

/* The post deleted by another client just before the k-th statement a
 * like starts on the likes' pool's one connection (the pool's reset at
 * checkout is the first), on the check's own connection: deleted says
 * whether it took the row (1), found it locked by the like's own UPDATE
 * and left it (0: SKIP LOCKED, so it never waits on the thread that runs
 * it), or never ran (-1: the like ran fewer than k statements). */
struct delete_before {
	struct labtest *t;
	int k, seen, deleted, rc;
};

static void delete_before_kth(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct delete_before *d = arg;
	(void)sql, (void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || ++d->seen != d->k)
		return;
	struct kit_db *db = labtest_db(d->t);
	d->rc = kit_db_exec(db, "DELETE FROM posts WHERE id IN (SELECT id FROM posts WHERE id = 1 "
	                    "FOR UPDATE SKIP LOCKED)", 0, NULL);
	d->deleted = d->rc == 0 ? (int)kit_db_changes(db) : -2;
}

/* A post deleted while a like of it runs, between any two of its
 * statements (the sweep puts the DELETE before its 1st, 2nd, ...
 * statement in turn, until the like has fewer): when the DELETE took the
 * row, the like's UPDATE found none, and the like must answer
 * KIT_DB_NOROW; when the like had the row locked already, the DELETE
 * leaves it, and the like counts (0, one like more). A like that checks
 * the post is there in a statement of its own (SELECT 1 ... WHERE id =
 * $1) and then runs the UPDATE without looking at its row count answers
 * 0, "counted", for a like that counted nothing: a check-then-act, which
 * only the UPDATE's own count closes. */
void contain_like__post_deleted_between_any_two_statements(void **state)
{
	struct labtest *t = *state;
	labtest_exec(t, CONTAIN_SCHEMA);
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 1, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 2000, .lock_timeout_ms = 1000,
	                              .contain = true };
	char err[512], bad[700] = "";
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct kit_db *db = NULL;
	lt_expect(kit_pool_get(app.likes, &db) == 0, NULL, "kit_pool_get of the likes' pool");
	struct delete_before d = { .t = t };
	kit_db_set_hook(db, delete_before_kth, &d);
	kit_pool_put(app.likes, db);
	int k, deleted = 0, kept = 0;
	for (k = 1; k <= 20 && !bad[0]; k++) {
		labtest_exec(t, "INSERT INTO posts (id, likes) VALUES (1, 5) ON CONFLICT (id) DO "
		             "UPDATE SET likes = 5");
		d = (struct delete_before){ .t = t, .k = k, .deleted = -1 };
		int rc = contain_like(&app, 1);
		if (d.deleted == -1)
			break;
		int64_t left = labtest_int(t, "SELECT count(*) FROM posts WHERE id = 1");
		int64_t likes = left ? labtest_int(t, "SELECT likes FROM posts WHERE id = 1") : -1;
		deleted += d.deleted == 1;
		kept += d.deleted == 0;
		if (d.deleted == -2)
			snprintf(bad, sizeof bad, "the check's DELETE of post 1 before the like's statement "
			         "%d failed (%d): %s", k, d.rc, labtest_why(labtest_db(t)));
		else if (d.deleted == 1 && rc != KIT_DB_NOROW)
			snprintf(bad, sizeof bad, "post 1 was deleted just before the like's statement %d, "
			         "while the like held no lock on it, and the like returned %d, expected "
			         "KIT_DB_NOROW (%d): its UPDATE found no row, so nothing was counted%s", k,
			         rc, KIT_DB_NOROW, rc == 0 ? ". 0 says the like counted. Is the post "
			         "looked up in a statement of its own (SELECT ... WHERE id = $1) and the "
			         "UPDATE run without looking at its row count? The post can go between the "
			         "two: kit_db_changes() after the UPDATE says whether it found the row" : "");
		else if (d.deleted == 0 && (rc != 0 || left != 1 || likes != 6))
			snprintf(bad, sizeof bad, "post 1 was locked by the like when another client tried "
			         "to delete it before the like's statement %d (so it stayed): the like "
			         "returned %d and the post has %lld likes, expected 0 and 6 (5 + this like)",
			         k, rc, (long long)likes);
	}
	kit_db_set_hook(db, NULL, NULL);
	contain_close(&app);
	lt_expect(!bad[0], "norow", "%s", bad);
	lt_expect(deleted > 0, "norow", "over %d statements of a like, another client's DELETE "
	          "never found post 1 unlocked: the like sent no statement before its UPDATE?", k - 1);
	lt_expect(kept > 0, "norow", "over %d statements of a like, the post was never locked "
	          "by the like when another client tried to delete it: was it never updated inside "
	          "a transaction, or never committed after?", k - 1);
}

/* Backends connected with application_name name, once the count has
 * settled (a closed connection's backend ends a moment later). */
static int64_t backends(struct labtest *t, const char *name, int64_t want)
{
	char sql[300];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
	         "'%s'", name);
	int64_t got = labtest_int(t, sql);
	for (int i = 0; i < 300 && got != want; i++) {
		util_sleep_ns(10 * 1000000LL);
		got = labtest_int(t, sql);
	}
	return got;
}

/* contain_open() that fails leaves nothing open: an unreachable server is
 * KIT_DB_ERR, and when the likes' pool cannot be opened (0 connections),
 * the login pool it already opened is closed again. contain_close() ends
 * every connection of both pools. Connections are counted by an
 * application_name of the check's own. */
void contain_open__leaves_nothing_open(void **state)
{
	struct labtest *t = *state;
	char url[1200], name[64];
	snprintf(name, sizeof name, "h07_%s", t->place + (strlen(t->place) > 40 ?
	                                                   strlen(t->place) - 40 : 0));
	snprintf(url, sizeof url, "%s%sapplication_name=%s", t->url,
	         strchr(t->url, '?') ? "&" : "?", name);
	struct contain_app app;
	struct contain_config cfg = { .url = "postgresql:///postgres?host=/nonexistent/hotrow",
	                              .pool_size = 2, .counter_pool_size = 2,
	                              .acquire_timeout_ms = 50, .lock_timeout_ms = 100,
	                              .contain = true };
	char err[512] = "";
	int unreachable = contain_open(&app, &cfg, err, sizeof err);
	lt_expect(unreachable == KIT_DB_ERR, "bulkhead", "contain_open() of a server that is not "
	          "there returned %d, expected KIT_DB_ERR (%d)", unreachable, KIT_DB_ERR);
	if (unreachable == 0)
		contain_close(&app);
	/* contain.h: "KIT_DB_ERR with the reason in err": what kit_pool_open
	 * said (here libpq's "connection to server on socket
	 * \"/nonexistent/hotrow/..."), with words of the app's own around it if
	 * it likes */
	lt_expect(unreachable != KIT_DB_ERR || strstr(err, "/nonexistent/hotrow") != NULL, "bulkhead",
	          "contain_open() of a server that is not there (its socket in /nonexistent/hotrow) "
	          "put \"%s\" in err: the reason kit_pool_open gave, which names the server it could "
	          "not reach, is gone. Pass err and errlen on to kit_pool_open (or keep its words "
	          "in yours)", err);

	cfg.url = url;
	cfg.counter_pool_size = 0;
	/* contain.h: a failed contain_open leaves no pointer in app to a pool
	 * it closed (the caller's app starts zeroed here, as an app = {0} would),
	 * so a cleanup path that calls contain_close(app) anyway closes nothing
	 * twice */
	memset(&app, 0, sizeof app);
	int half = contain_open(&app, &cfg, err, sizeof err);
	bool dangling = half != 0 && (app.login != NULL || app.likes != NULL);
	if (half == 0 || !dangling)
		contain_close(&app);
	lt_expect(!dangling, "bulkhead", "contain_open() with a likes' pool of 0 connections "
	          "failed and left app.login = %p, app.likes = %p: it closed the login pool it had "
	          "opened but kept the pointer, and a contain_close() on the caller's cleanup path "
	          "closes it a second time; set it back to NULL", (void *)app.login,
	          (void *)app.likes);
	lt_expect(half == KIT_DB_ERR, "bulkhead", "contain_open() with a likes' pool of 0 "
	          "connections returned %d, expected KIT_DB_ERR (%d)", half, KIT_DB_ERR);
	lt_expect(half != KIT_DB_ERR || strstr(err, "pool of 0 connections") != NULL, "bulkhead",
	          "contain_open() with a likes' pool of 0 connections put \"%s\" in err, not the "
	          "reason kit_pool_open gave (\"pool of 0 connections, ...\")", err);
	lt_expect_int_hint(backends(t, name, 0), 0, "connections left open by a contain_open() "
	                   "whose second pool failed (close the first before returning)", "bulkhead");
	/* the login pool of 0 this time: whichever pool a contain_open()
	 * opens first, the other one failing closes it */
	cfg.pool_size = 0;
	cfg.counter_pool_size = 2;
	memset(&app, 0, sizeof app);
	half = contain_open(&app, &cfg, err, sizeof err);
	dangling = half != 0 && (app.login != NULL || app.likes != NULL);
	if (half == 0 || !dangling)
		contain_close(&app);
	lt_expect(!dangling, "bulkhead", "contain_open() with a login pool of 0 connections "
	          "failed and left app.login = %p, app.likes = %p: a pool it closed is still named "
	          "in app, and a contain_close() on the caller's cleanup path closes it a second "
	          "time; set it back to NULL", (void *)app.login, (void *)app.likes);
	lt_expect(half == KIT_DB_ERR, "bulkhead", "contain_open() with a login pool of 0 "
	          "connections returned %d, expected KIT_DB_ERR (%d)", half, KIT_DB_ERR);
	lt_expect(half != KIT_DB_ERR || strstr(err, "pool of 0 connections") != NULL, "bulkhead",
	          "contain_open() with a login pool of 0 connections put \"%s\" in err, not the "
	          "reason kit_pool_open gave (\"pool of 0 connections, ...\")", err);
	lt_expect_int_hint(backends(t, name, 0), 0, "connections left open by a contain_open() "
	                   "whose login pool (0 connections) failed: close the pool already open "
	                   "before returning, whichever it is", "bulkhead");
	cfg.pool_size = 2;

	cfg.counter_pool_size = 2;
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	int64_t open_now = backends(t, name, 4);
	contain_close(&app);
	lt_expect_int_hint(open_now, 4, "connections of a contained app with pools of 2 and 2",
	                   "bulkhead");
	lt_expect_int_hint(backends(t, name, 0), 0, "connections left open after contain_close()",
	                   "bulkhead");
}

/* Two likes, of posts 1 and 2 (no row lock between them), on the like
 * endpoint's pool of two, let go together while the database refuses
 * every statement from the k-th sent by either on (with an error, or as
 * busy), for every k: both meet the failure at about the same step and
 * run their failure paths at the same moment. Each answers 0 (counted) or
 * a KIT_DB_* code (KIT_DB_BUSY for a busy refusal), never
 * KIT_POOL_TIMEOUT or KIT_DB_NOROW; the posts count the likes that said
 * 0; and two likes then work (both connections went back). Under the
 * race pass of `hotrow lab check` (ThreadSanitizer; the kit's failpoints
 * order no threads) anything the failure path keeps for every thread (a
 * count of refused likes, the last error in a static) fails it. */
struct failing_like {
	struct contain_app *app;
	int64_t post;
	int rc;
};

static void *like_failing(void *arg)
{
	struct failing_like *f = arg;
	f->rc = contain_like(f->app, f->post);
	return NULL;
}

void contain_like__two_likes_fail_at_once(void **state)
{
	struct labtest *t = *state;
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (2)");
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 1, .counter_pool_size = 2,
	                              .acquire_timeout_ms = 2000, .lock_timeout_ms = 1000,
	                              .contain = true };
	char err[512];
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct failing_like f[2] = { { &app, 1, 0 }, { &app, 2, 0 } };
	char bad[600] = "";
	int rounds = 0;
	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY && !bad[0]; how++) {
		if (!lt_step_refused(how))
			continue;
		for (int k = 1; k <= 40 && !bad[0]; k++) {
			labtest_exec(t, "UPDATE posts SET likes = 0");
			lt_step_arm_from(how, k);
			lt_at_once(2, like_failing, f, sizeof f[0]);
			if (!lt_step_disarm())
				break;
			rounds++;
			for (int who = 0; who < 2 && !bad[0]; who++) {
				int rc = f[who].rc;
				char sql[80];
				snprintf(sql, sizeof sql, "SELECT likes FROM posts WHERE id = %lld",
				         (long long)f[who].post);
				int64_t likes = labtest_int(t, sql);
				bool code_ok = rc == 0 || (how == LT_STEP_BUSY ? rc == KIT_DB_BUSY :
				               rc < 0 && rc != KIT_POOL_TIMEOUT && rc != KIT_DB_NOROW);
				if (!code_ok || likes != (rc == 0))
					snprintf(bad, sizeof bad, "with every statement from the %d-th %s, the "
					         "like of post %lld returned %d and the post counts %lld (expected "
					         "0 and 1, or %s and 0)", k, lt_step_what(how),
					         (long long)f[who].post, rc, (long long)likes,
					         how == LT_STEP_BUSY ? "KIT_DB_BUSY" : "a KIT_DB_* code other "
					         "than KIT_DB_NOROW, not KIT_POOL_TIMEOUT,");
			}
			if (!bad[0]) {
				lt_at_once(2, like_failing, f, sizeof f[0]);
				if (f[0].rc != 0 || f[1].rc != 0)
					snprintf(bad, sizeof bad, "with every statement from the %d-th %s, then "
					         "two likes at once with nothing refused: they returned %d and %d%s",
					         k, lt_step_what(how), f[0].rc, f[1].rc,
					         f[0].rc == KIT_POOL_TIMEOUT || f[1].rc == KIT_POOL_TIMEOUT ?
					         " (KIT_POOL_TIMEOUT: a failed like's connection never went back "
					         "to the pool)" : "");
			}
		}
	}
	contain_close(&app);
	lt_expect(rounds > 0 || bad[0], "bulkhead", "two likes let go together with every statement "
	          "refused ran no statement: contain_like is not implemented yet");
	lt_expect(!bad[0], "bulkhead", "two likes of posts 1 and 2 let go together on the like "
	          "endpoint's pool of two, while the database refused their statements: %s. Is "
	          "anything kept between calls and shared by the threads (a count of refused "
	          "likes, the last error in a static)? Keep it in the call", bad);
}
