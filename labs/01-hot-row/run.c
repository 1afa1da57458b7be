/*
 * run.c: `hotrow lab run 01`, your like_post() against one hot row.
 *
 * First one thread alone, for at least 2 s and 500 likes, measures the
 * parts of a like: how long it holds the lock when nobody waits (the db
 * hook times it: on PostgreSQL from the end of the counter's UPDATE to the
 * end of COMMIT, the row lock; on SQLite from the end of BEGIN to the end
 * of COMMIT, the file's write lock), the time outside the lock, and the
 * CPU per like. From those parts alone the engine predicts T threads (a
 * closed loop on this machine's cores); then T threads run for S seconds,
 * every like on the same post, and the prediction is printed beside them
 * with the ceiling 1/hold. Little's law with the measured throughput is
 * printed as what it is, a check.
 *
 * Interface: build/labs/01-hot-row/run-solution [--db URL] [--threads T]
 *            [--seconds S] [--check-ms C]; exit 0, 1 if the database
 *            failed or the count is off, 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kit/db.h"
#include "kit/load.h"
#include "labs/driver/fail.h"
#include "labs/driver/predict.h"
#include "labs/driver/probe.h"
#include "labs/driver/runopt.h"
#include "labs/driver/span.h"
#include "labs/01-hot-row/hot_row.h"
#include "util/clock.h"

#define USERS_PER_THREAD 1000000000LL   /* user ids: run base + thread * this + call */

struct opts {
	const char *url;
	int threads;
	double seconds;
	double check_ms;
};

/* What the runs share: the options and the lock's bounds. */
struct run {
	const struct opts *o;
	int64_t user_base;
	struct drv_span hold;
};

/* The options, from one table: KIT_RUNOPT_OK to run, _HELP or _BAD not to. */
static int parse(int argc, char **argv, struct opts *o)
{
	const struct opt table[] = {
		KIT_RUNOPT_DB(&o->url, "database (default sqlite:.hotrow/lab01.db); its posts and\n"
		                       "likes tables are dropped and made afresh"),
		KIT_RUNOPT_THREADS(&o->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&o->seconds, "length of the measured run (default 5)"),
		{ .name = "check-ms", .arg = "C", .kind = OPT_DOUBLE, .dest = &o->check_ms,
		  .min = 0, .max = 1000, .accepts = "milliseconds from 0 to 1000",
		  .help = "how long the app's check takes per like, 0..1000 (default 1)" },
	};
	const struct kit_runopt_spec spec = { .cmd = "hotrow lab run 01", .opts = table,
	                                      .n = sizeof table / sizeof table[0] };
	return kit_runopt_parse(&spec, argc, argv);
}

static int check(void *arg, int64_t post_id, int64_t user_id)
{
	const struct run *r = arg;
	(void)post_id;
	(void)user_id;
	if (r->o->check_ms > 0) {
		util_sleep_ns((int64_t)(r->o->check_ms * 1e6));
	}
	return 0;
}

static int like(void *arg, struct kit_load_thread *th)
{
	struct run *r = arg;
	struct hot_row_app app = { check, r };
	int64_t user = r->user_base + th->index * USERS_PER_THREAD + th->iter + 1;
	return like_post(th->db, 1, user, &app);
}

/* One thread alone: the parts of a like, into *alone. */
static int measure_alone(struct run *r, struct drv_parts *alone)
{
	struct drv_probe p;
	drv_probe_default(&p);
	p.url = r->o->url;
	p.hold = &r->hold;
	p.label = "like_post";
	int rc = drv_probe_run(&p, like, r, alone);
	if (rc != 0)
		drv_fail("hotrow lab run 01", NULL, alone->error);
	r->user_base += (int64_t)KIT_LOAD_MAX_THREADS * USERS_PER_THREAD;
	return rc;
}

/* T threads for S seconds, every hold timed. */
static int measure_many(struct run *r, struct drv_run *m)
{
	char label[32];
	snprintf(label, sizeof label, "%d threads", r->o->threads);
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = r->o->url;
	c.threads = r->o->threads;
	c.seconds = r->o->seconds;
	c.label = label;
	int rc = drv_run_load(&c, &r->hold, like, r, m);
	if (rc != 0)
		drv_fail("hotrow lab run 01", label, m->r.error);
	r->user_base += (int64_t)KIT_LOAD_MAX_THREADS * USERS_PER_THREAD;
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o = { "sqlite:.hotrow/lab01.db", 16, 5, 1 };
	int rc = parse(argc, argv, &o);
	if (rc != KIT_RUNOPT_OK)
		return rc == KIT_RUNOPT_HELP ? 0 : 2;
	if (strncmp(o.url, "sqlite:.hotrow/", 15) == 0)
		mkdir(".hotrow", 0777);

	struct kit_db *db;
	if (kit_db_open(&db, o.url) != 0 ||
	    kit_db_exec(db, "DROP TABLE IF EXISTS likes; DROP TABLE IF EXISTS posts", 0, NULL) != 0 ||
	    kit_db_exec(db, HOT_ROW_SCHEMA, 0, NULL) != 0 ||
	    kit_db_exec(db, "INSERT INTO posts (id) VALUES (1)", 0, NULL) != 0) {
		drv_fail_db("hotrow lab run 01", NULL, db);
		kit_db_close(db);
		return 1;
	}
	bool lite = kit_db_engine(db) == KIT_DB_SQLITE;
	/* The hold: PostgreSQL's row lock is ours once the counter UPDATE
	 * returns (its start may still be queueing for the lock), SQLite's
	 * write lock once BEGIN IMMEDIATE returns; both end when COMMIT does. */
	struct run r = { .o = &o };
	if (lite)
		drv_span_init(&r.hold, KIT_DB_TX_BEGIN, NULL, KIT_DB_TX_COMMIT);
	else
		drv_span_init(&r.hold, KIT_DB_STMT_END, "UPDATE", KIT_DB_TX_COMMIT);
	printf("Lab 01, the hot row, on %s: like_post() on one post, %d threads, %.1f s, "
	       "app check %.1f ms\n\n", lite ? "SQLite" : "PostgreSQL", o.threads, o.seconds,
	       o.check_ms);

	/* The prediction is made from the lone thread's parts before the
	 * loaded run starts: it cannot see what it predicts. */
	struct drv_parts alone;
	struct drv_run many;
	struct drv_prediction p;
	bool predicted = false;
	bool probed = measure_alone(&r, &alone) == 0;
	if (probed) {
		struct drv_inputs in;
		drv_inputs_init(&in, SIM_NAIVE, o.threads, &alone);
		in.seconds = o.seconds;
		probed = drv_inputs_wal(&in, o.url, "hotrow lab run 01") == 0;
		predicted = probed && drv_predict(&in, &p, "hotrow lab run 01") == 0;
	}
	if (!probed || measure_many(&r, &many) != 0) {
		drv_span_destroy(&r.hold);
		kit_db_close(db);
		return 1;
	}
	drv_span_destroy(&r.hold);
	int64_t count;
	if (kit_db_query_int(db, "SELECT likes FROM posts WHERE id = 1", 0, NULL, &count) != 0) {
		drv_fail_db("hotrow lab run 01", "reading the counter", db);
		kit_db_close(db);
		return 1;
	}
	kit_db_close(db);

	const char *lock = lite ? "BEGIN to COMMIT, the file's write lock"
	                          : "counter UPDATE to COMMIT, the row lock";
	printf("1. the parts of a like (the hold: %s)\n", lock);
	drv_print_parts("like_post", &alone);
	printf("  the hold with %d threads        %8.3f ms mean (measured under load; a holder "
	       "may wait for a CPU too)\n\n", o.threads, many.hold_ms);
	printf("2. %d threads for %.1f s, measured\n", o.threads, o.seconds);
	printf("  likes                         %8lld ok, %lld failed\n", (long long)many.r.ok,
	       (long long)many.r.failed);
	drv_print_latency(&many.r, 2);
	putchar('\n');
	if (predicted) {
		printf("3. predicted from the parts alone: the engine, %d clients in a closed loop "
		       "on %d cores\n", o.threads, p.in.cores);
		printf("  ceiling, 1 / hold alone       %8.0f likes/s (you reached %.0f%%)\n",
		       p.ceiling_per_s, p.ceiling_per_s > 0
		       ? 100.0 * many.r.throughput_per_s / p.ceiling_per_s : 0);
		drv_compare(&p, &many, "likes");
	}

	int64_t acked = alone.calls + many.r.ok;
	printf("\ncounter %lld for %lld likes acknowledged: %s\n", (long long)count,
	       (long long)acked, count == acked ? "exact" : "NOT EXACT (see §5)");
	return count == acked ? 0 : 1;
}
