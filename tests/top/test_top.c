/*
 * test_top.c: `hotrow top`'s sampler and frame against a real PostgreSQL
 * (and the same line on MariaDB).
 *
 * The contention is built by hand and known exactly: one session holds
 * row 1 of a table of two rows, K sessions queue behind it, row 2 stays
 * free. The sample must show one lane, the holder's pid, K waiters (one on
 * the holder's transactionid, K - 1 on the tuple lock) and the row's key;
 * the frame drawn from it must say so. The frame checks without a server
 * draw a sample made by hand.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kit/db.h"
#include "top/draw.h"
#include "top/sample.h"
#include "tests/harness/labtest.h"
#include "util/clock.h"

#define K 3                      /* sessions queued behind the holder */

struct waiter {
	const char *url;
	const char *sql;             /* NULL: row 1 of hot */
	int rc;
	pthread_t th;
};

static void *queue_up(void *arg)
{
	struct waiter *w = arg;
	struct kit_db *db;
	w->rc = kit_db_open(&db, w->url);
	if (w->rc == 0)
		w->rc = kit_db_exec(db, w->sql ? w->sql : "UPDATE hot SET n = n + 1 WHERE id = 1", 0, NULL);
	kit_db_close(db);
	return NULL;
}

static void sleep_ms(int ms)
{
	util_sleep_ns((int64_t)ms * 1000000);
}

/* This test's lanes: the sampler's search_path is pinned to pg_catalog,
 * so every table prints with its schema, this test's "lt_....hot" (the
 * server may be shared: other suites' tables are other lanes). */
static const char *hot_name(const struct labtest *t)
{
	static char name[300];
	snprintf(name, sizeof name, "%s.hot", t->place);
	return name;
}

static const struct top_lane *lane_of_hot(const struct top_sample *s, const char *hot, int *nlanes)
{
	const struct top_lane *found = NULL;
	*nlanes = 0;
	for (int i = 0; i < s->nlanes; i++)
		if (!strcmp(s->lanes[i].relation, hot)) {
			found = &s->lanes[i];
			(*nlanes)++;
		}
	return found;
}

/* Sample until row 1 has `want` waiters (each waiter queues in its own
 * time), at most 10 s. */
static int sample_until(struct top_sampler *ts, struct top_sample *s, const char *hot, int want)
{
	for (int i = 0; i < 100; i++) {
		int n;
		if (top_sampler_take(ts, s) != 0)
			return -1;
		const struct top_lane *l = lane_of_hot(s, hot, &n);
		if (l && l->nwaiting >= want)
			return 0;
		sleep_ms(100);
	}
	return -1;
}

static void sampler__one_holder_k_waiters(void **state)
{
	struct labtest *t = *state;
	struct kit_db *holder = labtest_connect(t);
	struct waiter w[K] = { { 0 } };
	struct top_sample *s = calloc(1, sizeof *s);
	struct top_sampler *ts;
	char err[512];
	int64_t holder_pid;
	assert_non_null(s);
	labtest_exec(t, "CREATE TABLE hot (id bigint PRIMARY KEY, n bigint NOT NULL DEFAULT 0);"
	                "INSERT INTO hot (id) VALUES (1), (2)");
	lt_expect(top_sampler_open(&ts, t->url, err, sizeof err) == 0, NULL, "open: %s", err);

	/* configure: the holder, then K sessions behind it, one at a time so
	 * the queue order is known */
	assert_int_equal(kit_db_query_int(holder, "SELECT pg_backend_pid()", 0, NULL, &holder_pid), 0);
	assert_int_equal(kit_db_begin(holder), 0);
	assert_int_equal(kit_db_exec(holder, "UPDATE hot SET n = n + 1 WHERE id = 1", 0, NULL), 0);
	for (int i = 0; i < K; i++) {
		w[i].url = t->url;
		pthread_create(&w[i].th, NULL, queue_up, &w[i]);
		lt_expect(sample_until(ts, s, hot_name(t), i + 1) == 0, NULL, "expected %d waiting for row 1 within "
		          "10 s, got fewer (%s)", i + 1, top_sampler_error(ts));
	}
	/* the other row is free: an update of it does not wait */
	labtest_exec(t, "UPDATE hot SET n = n + 1 WHERE id = 2");

	/* run: one more sample, and its frame */
	assert_int_equal(top_sampler_take(ts, s), 0);
	struct tui_screen *scr = tui_screen_new(120, 40);
	struct top_view v = { .interval_ms = 200 };
	top_draw(scr, &v, s);
	tui_screen_dump(scr, stdout);

	/* verify: the sample */
	int nlanes;
	const struct top_lane *l = lane_of_hot(s, hot_name(t), &nlanes);
	lt_expect_int(nlanes, 1, "lanes of table hot (rows with waiters); row 2 is free");
	lt_expect(!strcmp(l->key, "id=1"), NULL, "expected the key id=1, got \"%s\"", l->key);
	lt_expect_int(l->holder_pid, holder_pid, "the holder's pid");
	lt_expect_int(l->nwaiting, K, "waiters on row 1");
	int on_xid = 0;
	for (int i = 0; i < l->nwaiters; i++)
		on_xid += l->waiters[i].on_xid;
	lt_expect_int(on_xid, 1, "waiters on the holder's transactionid (the first in line)");
	lt_expect(l->waiters[0].on_xid, NULL, "expected the transactionid waiter first in line");
	for (int i = 1; i < l->nwaiters; i++)
		lt_expect(l->waiters[i].wait_ms <= l->waiters[i - 1].wait_ms + 1e-3 || i == 1, NULL,
		          "expected tuple waiters oldest first, got %.1f ms before %.1f ms",
		          l->waiters[i - 1].wait_ms, l->waiters[i].wait_ms);
	lt_expect(l->holder_age_ms >= l->oldest_wait_ms, NULL, "expected the holder's transaction "
	          "(%.0f ms) older than the oldest wait (%.0f ms)", l->holder_age_ms, l->oldest_wait_ms);
	int lock_cells = s->nstate[TOP_LOCK_WAIT];
	lt_expect(lock_cells >= K, NULL, "expected at least %d lock-wait cells, got %d", K, lock_cells);
	lt_expect(s->nstate[TOP_HOLDER] >= 1, NULL, "expected a holder cell, got %d",
	          s->nstate[TOP_HOLDER]);
	/* ... and the frame */
	char want[64];
	snprintf(want, sizeof want, "held by pid %lld", (long long)holder_pid);
	lt_expect(tui_screen_has(scr, "hot (") && tui_screen_has(scr, "id=1"), NULL,
	          "expected the frame to name the row and its key");
	lt_expect(tui_screen_has(scr, want), NULL, "expected \"%s\" in the frame", want);
	lt_expect(tui_screen_has(scr, "3 waiting"), NULL, "expected \"3 waiting\" in the frame");
	lt_expect(tui_screen_has(scr, "1 waits on its transactionid") &&
	          tui_screen_has(scr, "2 on a tuple lock"), NULL,
	          "expected the split: 1 waits on its transactionid, 2 on a tuple lock");
	lt_expect(!tui_screen_has(scr, "id=2"), NULL, "expected no lane for the free row 2");

	/* the holder commits: the line drains, in order, and the lane goes */
	assert_int_equal(kit_db_commit(holder), 0);
	for (int i = 0; i < K; i++) {
		pthread_join(w[i].th, NULL);
		lt_expect_int(w[i].rc, 0, "a queued update, once the holder committed");
	}
	assert_int_equal(top_sampler_take(ts, s), 0);
	lane_of_hot(s, hot_name(t), &nlanes);
	lt_expect_int(nlanes, 0, "lanes of table hot once the holder committed");
	lt_expect_int(labtest_int(t, "SELECT n FROM hot WHERE id = 1"), K + 1, "row 1's count");

	tui_screen_free(scr);
	top_sampler_close(ts);
	kit_db_close(holder);
	free(s);
}

/* The sampler's connection killed (as a restart would): the next sample
 * says the server is gone, and one a second later is a sample again. */
static void sampler__says_gone_and_comes_back(void **state)
{
	struct labtest *t = *state;
	struct top_sample *s = calloc(1, sizeof *s);
	struct top_sampler *ts;
	char err[512];
	assert_non_null(s);
	lt_expect(top_sampler_open(&ts, t->url, err, sizeof err) == 0, NULL, "open: %s", err);
	assert_int_equal(top_sampler_take(ts, s), 0);
	char sql[100];
	snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", top_sampler_pid(ts));
	labtest_exec(t, sql);
	sleep_ms(100);

	lt_expect(top_sampler_take(ts, s) != 0 && s->gone_s >= 0, NULL,
	          "expected the sample after the kill to fail and say the server is gone");
	lt_expect(strstr(top_sampler_error(ts), "the server is gone") != NULL, NULL,
	          "expected \"the server is gone\", got \"%s\"", top_sampler_error(ts));
	sleep_ms(1100);
	int rc = top_sampler_take(ts, s);
	if (rc != 0)     /* the retry is at most once a second: one more */
		sleep_ms(1100), rc = top_sampler_take(ts, s);
	lt_expect(rc == 0 && s->gone_s < 0 && s->reconnects == 1, NULL, "expected a sample again "
	          "after a second, got rc %d, gone %.1f s, %d reconnects: %s", rc, s->gone_s,
	          s->reconnects, top_sampler_error(ts));
	top_sampler_close(ts);
	free(s);
}

/* The same line on MariaDB: InnoDB's waiters all wait on the record lock
 * itself, the row is named by its table, index and key (lock_data), the
 * holder by its CONNECTION_ID(). The sampler reads INNODB_TRX and
 * INNODB_LOCK_WAITS, which InnoDB renews only when nobody on the server
 * read them in the last 0.1 s: each sample is taken once INNODB_TRX shows
 * the line as it should be (labtest_innodb_waiters()), and every session is
 * let go before anything is asserted. */
static void sampler__innodb_one_holder_k_waiters(void **state)
{
	struct labtest *t = *state;
	struct kit_db *holder = labtest_connect(t);
	struct waiter w[K] = { { 0 } };
	struct top_sample *s = calloc(1, sizeof *s), *after = calloc(1, sizeof *after);
	struct top_sampler *ts;
	char err[512];
	int64_t holder_id, lined = 0, drained = -1;
	int queued = 0, rc = -1, rc_after = -1;
	assert_non_null(s);
	assert_non_null(after);
	/* the table's name holds a dot: INNODB_LOCKS names it `db`.`hot.v2`,
	 * and the table is all that follows the database's name */
	labtest_exec(t, "CREATE TABLE `hot.v2` (id bigint PRIMARY KEY, n bigint NOT NULL DEFAULT 0);"
	                "INSERT INTO `hot.v2` (id) VALUES (1), (2)");
	lt_expect(top_sampler_open(&ts, t->url, err, sizeof err) == 0, NULL, "open: %s", err);

	/* configure: the holder, then K sessions behind it, each one waiting
	 * (as the server shows it) before the next comes */
	assert_int_equal(kit_db_query_int(holder, "SELECT CONNECTION_ID()", 0, NULL, &holder_id), 0);
	assert_int_equal(kit_db_begin(holder), 0);
	assert_int_equal(kit_db_exec(holder, "UPDATE `hot.v2` SET n = n + 1 WHERE id = 1", 0, NULL), 0);
	while (queued < K && lined == queued) {
		w[queued].url = t->url;
		w[queued].sql = "UPDATE `hot.v2` SET n = n + 1 WHERE id = 1";
		pthread_create(&w[queued].th, NULL, queue_up, &w[queued]);
		lined = labtest_innodb_waiters(t, ++queued);
	}
	labtest_exec(t, "UPDATE `hot.v2` SET n = n + 1 WHERE id = 2");

	/* run: a sample of the whole line, and its frame */
	struct tui_screen *scr = tui_screen_new(120, 40);
	struct top_view v = { .interval_ms = 200 };
	if (lined == K) {
		rc = top_sampler_take(ts, s);
		top_draw(scr, &v, s);
		tui_screen_dump(scr, stdout);
	}

	/* the holder commits, the line drains; a sample once INNODB_TRX shows
	 * nobody waiting */
	kit_db_commit(holder);
	kit_db_close(holder);
	for (int i = 0; i < queued; i++)
		pthread_join(w[i].th, NULL);
	if (rc == 0 && (drained = labtest_innodb_waiters(t, 0)) == 0)
		rc_after = top_sampler_take(ts, after);

	/* verify */
	lt_expect(lined == K, NULL, "expected %d, got %lld: sessions waiting for row 1, as "
	          "INNODB_TRX shows them; %s", K, (long long)lined, labtest_innodb_note());
	lt_expect(rc == 0, NULL, "a sample of the line: %s", top_sampler_error(ts));
	int nlanes;
	const struct top_lane *l = lane_of_hot(s, "hot.v2", &nlanes);
	lt_expect(s->innodb, NULL, "expected the sample to say it is InnoDB's");
	lt_expect_int(nlanes, 1, "lanes of table hot.v2 (rows with waiters); row 2 is free");
	lt_expect(!strcmp(l->key, "PRIMARY=1"), NULL, "expected the key PRIMARY=1, got \"%s\"", l->key);
	lt_expect_int(l->holder_pid, holder_id, "the holder's CONNECTION_ID()");
	lt_expect_int(l->nwaiting, K, "waiters on row 1");
	lt_expect(s->nstate[TOP_LOCK_WAIT] >= K && s->nstate[TOP_HOLDER] >= 1, NULL, "expected %d "
	          "lock-wait cells and a holder, got %d and %d", K, s->nstate[TOP_LOCK_WAIT],
	          s->nstate[TOP_HOLDER]);
	char want[64];
	snprintf(want, sizeof want, "held by connection %lld", (long long)holder_id);
	lt_expect(tui_screen_has(scr, want), NULL, "expected \"%s\" in the frame", want);
	lt_expect(tui_screen_has(scr, "3 waiting") && tui_screen_has(scr, "3 wait on the record lock"),
	          NULL, "expected 3 waiting, on the record lock itself, in the frame");
	lt_expect(!tui_screen_has(scr, "PRIMARY=2"), NULL, "expected no lane for the free row 2");
	for (int i = 0; i < K; i++)
		lt_expect_int(w[i].rc, 0, "a queued update, once the holder committed");
	lt_expect(drained == 0, NULL, "expected 0, got %lld: sessions waiting, as INNODB_TRX shows "
	          "them, once the holder committed; %s", (long long)drained, labtest_innodb_note());
	lt_expect(rc_after == 0, NULL, "a sample after the commit: %s", top_sampler_error(ts));
	lane_of_hot(after, "hot.v2", &nlanes);
	lt_expect_int(nlanes, 0, "lanes of table hot once the holder committed");
	lt_expect_int(labtest_int(t, "SELECT n FROM `hot.v2` WHERE id = 1"), K + 1, "row 1's count");

	tui_screen_free(scr);
	top_sampler_close(ts);
	free(s);
	free(after);
}

/* A wait for a table's lock is not a row's lane. An INSERT ... SELECT
 * holds the table's AUTO_INC lock for the whole statement (with
 * innodb_autoinc_lock_mode 0 or 1; MariaDB's default is 1), so a second
 * one waits for it: INNODB_LOCKS lists that wait with lock_type TABLE and
 * no page nor record. The sample must show no lane for that table. */
static void sampler__innodb_table_lock_is_no_lane(void **state)
{
	struct labtest *t = *state;
	struct top_sample *s = calloc(1, sizeof *s);
	struct top_sampler *ts;
	char err[512], sql[200];
	int64_t mode = -1, sleeping = 0, lined = 0;
	int rc = -1;
	assert_non_null(s);
	labtest_exec(t, "CREATE TABLE seqs (id bigint AUTO_INCREMENT PRIMARY KEY, v int)");
	assert_int_equal(kit_db_query_int(labtest_db(t), "SELECT @@innodb_autoinc_lock_mode", 0,
	                                  NULL, &mode), 0);
	if (mode == 2) {
		free(s);
		lt_skip("innodb_autoinc_lock_mode is 2 on this server: no INSERT holds the table's "
		        "AUTO_INC lock, so no table lock wait can be staged");
	}
	lt_expect(top_sampler_open(&ts, t->url, err, sizeof err) == 0, NULL, "open: %s", err);

	/* configure: the AUTO_INC lock held by an INSERT ... SELECT asleep in
	 * its second row, then a second INSERT ... SELECT waiting for it */
	struct lt_statement lock = { .url = t->url, .sql = "INSERT INTO seqs (v) SELECT "
	                          "IF(seq = 2, SLEEP(30), 0) FROM seq_1_to_2" };
	struct lt_statement queued = { .url = t->url, .sql = "INSERT INTO seqs (v) SELECT 1 "
	                            "FROM seq_1_to_2" };
	atomic_init(&lock.id, 0);
	atomic_init(&queued.id, 0);
	pthread_create(&lock.th, NULL, lt_run_statement, &lock);
	for (int i = 0; i < 1000 && atomic_load(&lock.id) == 0; i++)
		sleep_ms(10);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID = "
	         "%lld AND STATE = 'User sleep'", (long long)atomic_load(&lock.id));
	for (int i = 0; i < 1000 && sleeping == 0 && atomic_load(&lock.id) > 0; i++) {
		sleeping = labtest_int(t, sql);
		if (sleeping == 0)
			sleep_ms(10);
	}
	pthread_create(&queued.th, NULL, lt_run_statement, &queued);
	if (sleeping == 1)
		lined = labtest_innodb_waiters(t, 1);

	/* run */
	if (lined == 1)
		rc = top_sampler_take(ts, s);

	/* verify, after letting both go */
	snprintf(sql, sizeof sql, "KILL QUERY %lld", (long long)atomic_load(&lock.id));
	if (atomic_load(&lock.id) > 0)
		kit_db_exec(labtest_db(t), sql, 0, NULL);
	pthread_join(lock.th, NULL);
	pthread_join(queued.th, NULL);
	lt_expect(sleeping == 1, NULL, "expected the INSERT ... SELECT that holds the AUTO_INC lock "
	          "to be seen in its SLEEP, got %lld sessions (%d)", (long long)sleeping, lock.rc);
	lt_expect(lined == 1, NULL, "expected 1, got %lld: sessions waiting for the table's "
	          "AUTO_INC lock, as INNODB_TRX shows them; %s", (long long)lined,
	          labtest_innodb_note());
	lt_expect(rc == 0, NULL, "a sample beside the table lock wait: %s", top_sampler_error(ts));
	/* the server may be shared: other suites' lanes are not this one's */
	int nlanes = 0;
	for (int i = 0; i < s->nlanes; i++) {
		const struct top_lane *l = &s->lanes[i];
		bool ours = l->holder_pid == atomic_load(&lock.id) || !strcmp(l->relation, "seqs");
		for (int k = 0; k < l->nwaiters; k++)
			ours = ours || l->waiters[k].pid == atomic_load(&queued.id);
		nlanes += ours;
	}
	lt_expect_int(nlanes, 0, "lanes for the wait on table seqs' AUTO_INC lock (a table lock, "
	              "not a row: only INNODB_LOCKS' RECORD locks are rows)");
	top_sampler_close(ts);
	free(s);
}

static void sampler__refuses_sqlite_and_says_what_to_do(void **state)
{
	struct top_sampler *ts;
	char err[512];
	(void)state;
	assert_int_equal(top_sampler_open(&ts, "sqlite::memory:", err, sizeof err), -1);
	assert_null(ts);
	assert_non_null(strstr(err, "PostgreSQL"));
	assert_int_equal(top_sampler_open(&ts, "postgresql:///x?host=/nonexistent&connect_timeout=2",
	                                  err, sizeof err), -1);
	assert_non_null(strstr(err, "cannot reach"));
	assert_non_null(strstr(err, "scripts/pg up"));
	assert_null(strchr(err, '\n'));
}

static void draw__lane_names_holder_and_split(void **state)
{
	struct top_sample *s = calloc(1, sizeof *s);
	(void)state;
	assert_non_null(s);
	snprintf(s->server, sizeof s->server, "PostgreSQL 15");
	s->nlanes = s->nlanes_total = 1;
	s->waiting_now = 4;
	struct top_lane *l = &s->lanes[0];
	snprintf(l->relation, sizeof l->relation, "posts");
	snprintf(l->key, sizeof l->key, "id=42");
	snprintf(l->holder_state, sizeof l->holder_state, "idle in transaction");
	l->page = 0, l->tuple = 7, l->holder_pid = 100, l->holder_age_ms = 2500;
	l->nwaiting = l->nwaiters = 4;
	l->oldest_wait_ms = 1500;
	l->waiters[0] = (struct top_waiter){ 101, true, 1500 };
	l->waiters[1] = (struct top_waiter){ 102, false, 900 };
	l->waiters[2] = (struct top_waiter){ 103, false, 5 };
	l->waiters[3] = (struct top_waiter){ 104, false, 1 };
	s->nbackends = 6;
	uint8_t states[] = { TOP_HOLDER, TOP_LOCK_WAIT, TOP_LOCK_WAIT, TOP_LOCK_WAIT, TOP_LOCK_WAIT,
	                     TOP_IDLE };
	memcpy(s->backend_state, states, sizeof states);
	s->commits_per_s = 350;
	s->server_ms_per_s = -1;
	struct tui_screen *scr = tui_screen_new(120, 30);
	struct top_view v = { .interval_ms = 200 };

	top_draw(scr, &v, s);

	assert_true(tui_screen_has(scr, "posts (0,7) id=42"));
	assert_true(tui_screen_has(scr, "■│●○∙∙"));          /* holder, then by age */
	assert_true(tui_screen_has(scr, "4 waiting, oldest 1.5 s"));
	assert_true(tui_screen_has(scr, "held by pid 100 (idle in transaction, 2.5 s)"));
	assert_true(tui_screen_has(scr, "1 waits on its transactionid, 3 on a tuple lock; next: pid 101"));
	assert_true(tui_screen_has(scr, "■ ○ ○ ○ ○ ·"));
	assert_true(tui_screen_has(scr, "commits 350/s"));
	assert_true(tui_screen_has(scr, "pg_stat_statements is not installed"));
	v.ascii = true;
	top_draw(scr, &v, s);
	assert_true(tui_screen_has(scr, "#|@o.."));
	tui_screen_free(scr);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(draw__lane_names_holder_and_split),
		cmocka_unit_test(sampler__refuses_sqlite_and_says_what_to_do),
		LABTEST_PG(sampler__one_holder_k_waiters),
		LABTEST_PG(sampler__says_gone_and_comes_back),
		LABTEST_MYSQL(sampler__innodb_one_holder_k_waiters),
		LABTEST_MYSQL(sampler__innodb_table_lock_is_no_lane),
	};
	return labtest_main("top", tests);
}
