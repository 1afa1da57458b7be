/*
 * test_probe.c: drv_probe_run() (labs/driver/probe.h) on a real SQLite
 * file, one thread alone.
 *
 * The bare statement that splits an autocommit request into its hold and
 * the rest is timed among the measured requests, once after every eighth
 * of them, not only in one run of its own before them: a single run
 * catches the scheduler in one state, and its median then moved the hold
 * by a third from probe to probe. The check records the order of the
 * statements the probe's connection sends and counts the bare
 * statements that stand between two requests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kit/db.h"
#include "kit/load.h"
#include "labs/driver/probe.h"

#define MAX_SEEN 200000

/* The first letter of every statement the connection sent, in order. */
static char seen[MAX_SEEN];
static size_t nseen;

static void record(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)arg;
	(void)t_ns;
	if (ev == KIT_DB_STMT_START && nseen < MAX_SEEN)
		seen[nseen++] = sql[0];
}

static int make_row(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	int rc = kit_db_exec(th->db, "CREATE TABLE IF NOT EXISTS c (id INTEGER PRIMARY KEY, v "
	                             "INTEGER NOT NULL); INSERT OR IGNORE INTO c VALUES (1, 0)",
	                     0, NULL);
	kit_db_set_hook(th->db, record, NULL);
	return rc;
}

static int add_one(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return kit_db_exec(th->db, "UPDATE c SET v = v + 1 WHERE id = 1", 0, NULL);
}

static void probe__bare_statement_timed_among_the_requests(void **state)
{
	char url[] = "sqlite:/tmp/hotrow-test-probe-XXXXXX", *path = url + strlen("sqlite:");
	int fd = mkstemp(path);
	struct drv_probe p;
	struct drv_parts out;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	drv_probe_default(&p);
	p.url = url;
	p.bare_sql = "SELECT 1";
	p.thread_init = make_row;
	p.warmup_seconds = 0.05;
	p.min_seconds = 0.2;
	p.min_requests = 400;
	p.label = "test_probe";
	nseen = 0;
	int rc = drv_probe_run(&p, add_one, NULL, &out);
	char side[sizeof url + 8];
	unlink(path);
	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
	if (rc != 0)
		fail_msg("drv_probe_run on %s: %s", path, out.error);
	assert_true(nseen < MAX_SEEN);

	/* Runs of bare statements with a request on each side. */
	int between = 0, longest = 0;
	size_t i = 0;
	while (i < nseen) {
		size_t j = i;
		while (j < nseen && seen[j] == 'S')
			j++;
		if (j > i && i > 0 && j < nseen) {
			between++;
			longest = (int)(j - i) > longest ? (int)(j - i) : longest;
		}
		i = j > i ? j : i + 1;
	}
	if (between < out.requests / 8 - 1)
		fail_msg("%lld requests measured, and only %d run(s) of SELECT 1 stand between two "
		         "of them (expected one after every eighth: %lld); the longest run is %d",
		         (long long)out.requests, between, (long long)(out.requests / 8), longest);
	assert_true(out.outside_ms > 0 && out.outside_ms <= out.request_ms);
	assert_float_equal(out.hold_ms, out.request_ms - out.outside_ms, 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe__bare_statement_timed_among_the_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
