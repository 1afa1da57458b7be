/*
 * test_load.c: the load driver. Counts and identities are checked
 * exactly; time only as "ran at least as long as asked".
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kit/load.h"
#include "tests/harness/labtest.h"
#include "util/clock.h"

#define THREADS 8
#define ITERS   1000

struct seen {
	atomic_int calls;
	atomic_uchar hit[THREADS][ITERS];   /* each (thread, iter) once */
};

static int mark(void *arg, struct kit_load_thread *th)
{
	struct seen *s = arg;
	atomic_fetch_add(&s->calls, 1);
	if (th->index < THREADS && th->iter < ITERS)
		atomic_fetch_add(&s->hit[th->index][th->iter], 1);
	return 0;
}

static void quiet(struct kit_load_config *c)
{
	kit_load_config_default(c);
	c->progress = false;
}

static void load_run__iterations_exact(void **state)
{
	(void)state;
	struct seen *s = calloc(1, sizeof *s);
	struct kit_load_config c;
	struct kit_load_result r;
	quiet(&c);
	c.threads = THREADS;
	c.iterations = ITERS;

	assert_int_equal(kit_load_run(&c, mark, s, &r), 0);
	lt_expect_int(r.ok, THREADS * ITERS, "calls that returned 0");
	lt_expect_int(r.failed, 0, "failed calls");
	lt_expect_int(atomic_load(&s->calls), THREADS * ITERS, "calls made");
	int once = 0;
	for (int t = 0; t < THREADS; t++)
		for (int i = 0; i < ITERS; i++)
			once += atomic_load(&s->hit[t][i]) == 1;
	lt_expect_int(once, THREADS * ITERS, "(thread, iter) pairs seen exactly once");
	lt_expect(r.latency_ms.p50 <= r.latency_ms.p90 && r.latency_ms.p90 <= r.latency_ms.p95 &&
	          r.latency_ms.p95 <= r.latency_ms.p99 && r.latency_ms.p99 <= r.latency_ms.max, NULL,
	          "percentiles in order: %g %g %g %g %g", r.latency_ms.p50, r.latency_ms.p90,
	          r.latency_ms.p95, r.latency_ms.p99, r.latency_ms.max);
	free(s);
}

static int some_fail(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	if (th->iter % 10 == 3)
		return KIT_DB_BUSY;
	if (th->iter % 10 == 7)
		return KIT_DB_CONSTRAINT;
	if (th->iter % 10 == 9)
		return -42;
	return 0;
}

static void load_run__counts_failures_by_kind(void **state)
{
	(void)state;
	struct kit_load_config c;
	struct kit_load_result r;
	quiet(&c);
	c.threads = 4;
	c.iterations = 100;

	assert_int_equal(kit_load_run(&c, some_fail, NULL, &r), 0);
	lt_expect_int(r.ok, 4 * 70, "ok calls");
	lt_expect_int(r.failed, 4 * 30, "failed calls");
	lt_expect_int(r.busy, 4 * 10, "busy calls");
	lt_expect_int(r.constraint, 4 * 10, "constraint calls");
	lt_expect(strstr(r.error, "a call failed") != NULL, NULL, "first error: %s", r.error);
}

static void load_run__stop_on_error(void **state)
{
	(void)state;
	struct kit_load_config c;
	struct kit_load_result r;
	quiet(&c);
	c.threads = 4;
	c.iterations = 100000;
	c.stop_on_error = true;

	assert_int_equal(kit_load_run(&c, some_fail, NULL, &r), KIT_DB_ERR);
	lt_expect(r.failed >= 1 && r.ok < 4 * 100000, NULL,
	          "stopped early: %lld ok, %lld failed", (long long)r.ok, (long long)r.failed);
}

static void load_run__bad_config_says_why(void **state)
{
	(void)state;
	struct kit_load_config c;
	struct kit_load_result r;
	quiet(&c);

	c.threads = 0;
	assert_int_equal(kit_load_run(&c, mark, NULL, &r), KIT_DB_ERR);
	lt_expect(strstr(r.error, "threads 0") != NULL, NULL, "error: %s", r.error);
	c.threads = 2;
	c.seconds = 0;
	assert_int_equal(kit_load_run(&c, mark, NULL, &r), KIT_DB_ERR);
	lt_expect(strstr(r.error, "seconds") != NULL, NULL, "error: %s", r.error);
}

static int nap_1ms(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	(void)th;
	util_sleep_ns(1000000);
	return 0;
}

static void load_run__seconds_runs_until_deadline(void **state)
{
	(void)state;
	struct kit_load_config c;
	struct kit_load_result r;
	quiet(&c);
	c.threads = 2;
	c.seconds = 0.2;

	assert_int_equal(kit_load_run(&c, nap_1ms, NULL, &r), 0);
	lt_expect(r.seconds >= 0.2, NULL, "ran %.3f s of 0.2", r.seconds);
	lt_expect(r.ok > 0, NULL, "calls made: %lld", (long long)r.ok);
	lt_expect(r.latency_ms.p50 >= 0.9, NULL,
	          "a 1 ms nap takes at least about 1 ms: p50 %.3f", r.latency_ms.p50);
}

/* Thread 1's first call takes 0.4 s, past the 0.2 s deadline. */
static int one_straggler(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	util_sleep_ns(th->index == 1 && th->iter == 0 ? 400000000 : 1000000);
	return 0;
}

/* A timed run's rate is the calls that returned by the deadline over
 * the set seconds, as pgbench -T counts: the straggler finishes and is
 * in ok, but neither its call nor its late end enters the rate. */
static void load_run__rate_counts_calls_by_the_deadline(void **state)
{
	(void)state;
	struct kit_load_config c;
	struct kit_load_result r;
	quiet(&c);
	c.threads = 2;
	c.seconds = 0.2;

	assert_int_equal(kit_load_run(&c, one_straggler, NULL, &r), 0);
	lt_expect(r.seconds >= 0.4, NULL, "the straggler ran to %.3f s", r.seconds);
	/* (thread 0's last 1 ms call may cross the deadline too) */
	lt_expect(r.ok - r.ok_timed == 1 || r.ok - r.ok_timed == 2, NULL,
	          "ok %lld: the %lld timed calls, the straggler and at most one more",
	          (long long)r.ok, (long long)r.ok_timed);
	lt_expect(r.timed_s == 0.2, NULL, "timed over %.6f s, not 0.2", r.timed_s);
	lt_expect(r.throughput_per_s == (double)r.ok_timed / 0.2, NULL,
	          "rate %.3f/s is %lld calls / 0.2 s", r.throughput_per_s, (long long)r.ok_timed);
}

static void load_run__open_loop_keeps_to_the_rate(void **state)
{
	(void)state;
	struct seen *s = calloc(1, sizeof *s);
	struct kit_load_config c;
	struct kit_load_result r;
	quiet(&c);
	c.threads = 2;
	c.seconds = 0.5;
	c.rate_per_s = 100;

	assert_int_equal(kit_load_run(&c, mark, s, &r), 0);
	/* Calls start on a schedule of 100/s from t0, and none after the
	 * deadline: at most 50 slots, plus one per thread at t0. */
	lt_expect(r.ok >= 1 && r.ok <= 52, NULL, "calls in 0.5 s at 100/s: %lld", (long long)r.ok);
	free(s);
}

static int fail_init(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return th->index == 1 ? -7 : 0;
}

static void load_run__thread_init_failure_stops_run(void **state)
{
	(void)state;
	struct seen *s = calloc(1, sizeof *s);
	struct kit_load_config c;
	struct kit_load_result r;
	quiet(&c);
	c.threads = 3;
	c.iterations = 10;
	c.thread_init = fail_init;

	assert_int_equal(kit_load_run(&c, mark, s, &r), KIT_DB_ERR);
	lt_expect_int(atomic_load(&s->calls), 0, "calls made after a thread failed to start");
	lt_expect(strstr(r.error, "thread_init failed (-7)") != NULL, NULL, "error: %s", r.error);
	free(s);
}

static void load_run__bad_url_names_connection(void **state)
{
	(void)state;
	struct kit_load_config c;
	struct kit_load_result r;
	quiet(&c);
	c.threads = 2;
	c.iterations = 10;
	c.url = "sqlite:/nonexistent-dir/x.db";

	assert_int_equal(kit_load_run(&c, mark, NULL, &r), KIT_DB_ERR);
	lt_expect(strstr(r.error, "could not connect") && strstr(r.error, "/nonexistent-dir/x.db"), NULL,
	          "error: %s", r.error);
}

static int insert_own(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	char id[32];
	snprintf(id, sizeof id, "%lld", (long long)th->index * 1000 + th->iter);
	const char *p[] = { id };
	return kit_db_exec(th->db, "INSERT INTO hits (id) VALUES ($1)", 1, p);
}

static void load_run__each_thread_connects(void **state)
{
	struct labtest *t = *state;
	struct kit_load_config c;
	struct kit_load_result r;
	labtest_exec(t, "CREATE TABLE hits (id INTEGER PRIMARY KEY)");
	quiet(&c);
	c.url = t->url;
	c.threads = 4;
	c.iterations = 250;

	assert_int_equal(kit_load_run(&c, insert_own, NULL, &r), 0);
	lt_expect_int(r.failed, 0, r.error);
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM hits"), 1000, "rows inserted by 4 threads x 250");
}

/* Thread 0's 20th call kills its own connection, as a server shutting
 * down would; every other call is a plain SELECT. */
static int select_then_die(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	if (th->index == 0 && th->iter == 20)
		kit_db_exec(th->db, "SELECT pg_terminate_backend(pg_backend_pid())", 0, NULL);
	return kit_db_exec(th->db, "SELECT 1", 0, NULL);
}

static void load_run__stops_when_the_database_goes_away(void **state)
{
	struct labtest *t = *state;
	struct kit_load_config c;
	struct kit_load_result r;
	quiet(&c);
	c.url = t->url;
	c.threads = 2;
	c.seconds = 30;   /* it must stop long before */

	int rc = kit_load_run(&c, select_then_die, NULL, &r);

	lt_expect(rc != 0, NULL, "the run returned 0 after its connection was killed");
	lt_expect(r.db_lost, NULL, "db_lost not set; error: %s", r.error);
	lt_expect(!strncmp(r.error, "the database went away", 22), NULL, "error: %s", r.error);
	lt_expect(r.seconds < 10, NULL, "ran %.1f s after the connection died", r.seconds);
	lt_expect(r.failed <= 2, NULL, "%lld failures piled up, want the first only (one per thread)",
	          (long long)r.failed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(load_run__iterations_exact),
		cmocka_unit_test(load_run__counts_failures_by_kind),
		cmocka_unit_test(load_run__stop_on_error),
		cmocka_unit_test(load_run__bad_config_says_why),
		cmocka_unit_test(load_run__seconds_runs_until_deadline),
		cmocka_unit_test(load_run__rate_counts_calls_by_the_deadline),
		cmocka_unit_test(load_run__open_loop_keeps_to_the_rate),
		cmocka_unit_test(load_run__thread_init_failure_stops_run),
		cmocka_unit_test(load_run__bad_url_names_connection),
		LABTEST_BOTH(load_run__each_thread_connects),
		LABTEST_PG(load_run__stops_when_the_database_goes_away),
	};
	return labtest_main("kit/load", tests);
}
