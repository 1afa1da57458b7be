/*
 * run.c: `hotrow lab run 04`, the naive view counter against yours.
 *
 * Two measured runs of T threads for S seconds on the database given.
 * First the naive path: every view is one autocommit UPDATE of the same
 * row (video 1), each timed by the db hook, so we know the hold. Then your
 * path: every view is record_view() on video 2 in the store (in-process,
 * or the real Redis --store names, whose round trip is measured first)
 * while one flusher (start_flusher) upserts the deltas every F ms on its
 * own connection. Before each run one thread alone measures the parts of a
 * view (the hold, the time outside it, the CPU) and the engine predicts
 * the run from those parts, the threads and the flush interval only; the
 * prediction is printed beside the run. At the end: whether the database
 * holds exactly the views that were acknowledged.
 *
 * Interface: build/labs/04-drain/run-solution [--db URL] [--store URL] [--threads T]
 *            [--seconds S] [--flush-ms F]; exit 0, 1 if the database
 *            failed or the count is off, 2 for bad usage.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kit/db.h"
#include "kit/load.h"
#include "kit/store.h"
#include "labs/04-drain/views.h"
#include "labs/driver/baseline.h"
#include "labs/driver/fail.h"
#include "labs/driver/predict.h"
#include "labs/driver/probe.h"
#include "labs/driver/runopt.h"
#include "labs/driver/span.h"

struct opts {
	const char *url;
	const char *store;
	int threads;
	double seconds;
	int flush_ms;
};

/* The options, from one table: KIT_RUNOPT_OK to run, _HELP or _BAD not to. */
static int parse(int argc, char **argv, struct opts *o)
{
	const struct opt table[] = {
		KIT_RUNOPT_DB(&o->url, "database (default sqlite:.hotrow/lab04.db); its video_counts\n"
		                       "table is dropped and made afresh"),
		{ .name = "store", .arg = "URL", .kind = OPT_STRING, .dest = &o->store,
		  .help = "the store: mem: (default, in-process) or a Redis, unix:PATH or\n"
		          "redis://HOST:PORT (its keys go under the namespace lab04-run)" },
		KIT_RUNOPT_THREADS(&o->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&o->seconds, "length of each of the two runs (default 5)"),
		{ .name = "flush-ms", .arg = "F", .kind = OPT_INT, .dest = &o->flush_ms,
		  .min = 1, .max = 60000, .accepts = "a whole number of milliseconds from 1 to 60000",
		  .help = "the flusher's interval, 1..60000 ms (default 100)" },
	};
	const struct kit_runopt_spec spec = { .cmd = "hotrow lab run 04", .opts = table,
	                                      .n = sizeof table / sizeof table[0] };
	return kit_runopt_parse(&spec, argc, argv);
}

/* ---- the two write paths ---- */

static int buffered_view(void *arg, struct kit_load_thread *th)
{
	(void)th;
	return record_view(arg, 2);
}

/* ---- the engine's view of the same numbers ---- */

/* record_view() alone, then the engine's prediction for T threads: views
 * into the engine's Redis, drained every flush_ms by a flush that holds
 * the row as long as the naive UPDATE did alone. */
static int predict_buffered(const struct opts *o, struct kit_store *st,
                            const struct drv_parts *naive, struct drv_parts *alone,
                            struct drv_prediction *p)
{
	struct drv_probe pr;
	drv_probe_default(&pr);
	pr.label = "record_view";
	/* On Redis the server counts its own time per command: read before and
	 * after the probe, it gives one record_view's service time alone. */
	int64_t calls0 = 0, calls1 = 0;
	double usec0 = 0, usec1 = 0;
	bool served = kit_store_is_redis(st) && kit_store_cmdstat(st, "evalsha", &calls0, &usec0) == 0;
	if (drv_probe_run(&pr, buffered_view, st, alone) != 0) {
		drv_fail("hotrow lab run 04", NULL, alone->error);
		return -2;   /* a request failed: stop (-1: the prediction refused) */
	}
	served = served && kit_store_cmdstat(st, "evalsha", &calls1, &usec1) == 0 && calls1 > calls0;
	double op_us = served ? (usec1 - usec0) / (double)(calls1 - calls0) : 0;
	if (served)
		printf("  record_view on the server: %.2f us a command (INFO commandstats, %lld calls "
		       "alone), at most %.0f/s from one server\n", op_us,
		       (long long)(calls1 - calls0), 1e6 / op_us);
	struct drv_inputs in;
	drv_inputs_init(&in, SIM_REDIS, o->threads, alone);
	in.flush = *naive;
	in.flush_ms = o->flush_ms;
	in.seconds = o->seconds;
	in.redis_op_us = op_us;
	return drv_predict(&in, p, "hotrow lab run 04");
}

/* Open the store --store names, under a namespace of the driver's own
 * on Redis, emptied first. */
static int open_store(struct kit_store **st, const char *url)
{
	char with_ns[1200];
	bool redis = strncmp(url, "mem:", 4) != 0 && !strchr(url, '?');
	snprintf(with_ns, sizeof with_ns, "%s%s", url, redis ? "?ns=lab04-run" : "");
	int rc = kit_store_open(st, with_ns);
	if (rc == 0)
		kit_store_restart(*st);
	return rc;
}

/* One client's round trip: the mean time of n GETs in a row, in us. */
static double round_trip_us(struct kit_store *st, int n)
{
	int64_t v, t0 = kit_load_now_ns();
	for (int i = 0; i < n; i++)
		if (kit_store_get(st, "lab04-rtt", &v) != 0)
			return -1;
	return (double)(kit_load_now_ns() - t0) / 1e3 / n;
}

/* How many GETs the store's server has served since it started, or -1
 * (in-process, or gone). The driver's own 2000 GETs of the round trip
 * come first, so a count that went down between two readings means the
 * server restarted in between, and lost what it held. */
static int64_t served_calls(struct kit_store *st)
{
	int64_t calls = 0;
	double usec;
	if (!kit_store_is_redis(st))
		return -1;
	return kit_store_cmdstat(st, "get", &calls, &usec) == 0 ? calls : -1;
}

/* Whether the store stopped answering; else *lag (if not NULL) is what
 * it holds for video 2. */
static bool store_gone(struct kit_store *st, int64_t *lag)
{
	int64_t v = 0;
	int rc = kit_store_get(st, VIEWS_DELTA_PREFIX "2", &v);
	if (lag)
		*lag = v;
	return rc == KIT_STORE_DOWN || rc == KIT_STORE_UNKNOWN;
}

/* Say, in words, that the store went away during the run and what that
 * cost, rather than letting the failures point at the lab's code. */
static void say_store_lost(const char *url, bool gone, bool solution)
{
	fflush(stdout);
	fprintf(stderr, "hotrow lab run 04: the store %s %s during the run: the views it held since "
	        "the last flush died with it (an in-memory buffer loses its unflushed window: "
	        "handout §7, Durability)%s\n", url,
	        gone ? "stopped answering (killed, or stopped?)" : "restarted",
	        solution ? "; this run used solutions/, so nothing here is a bug in the code" :
	        "; this run says nothing about your code: run it again with the store up");
}

static int setup(struct kit_db *db)
{
	return kit_db_exec(db, "DROP TABLE IF EXISTS video_counts", 0, NULL) ||
	       kit_db_exec(db, "DROP TABLE IF EXISTS applied_flushes", 0, NULL) ||
	       kit_db_exec(db, VIEWS_SCHEMA, 0, NULL) ||
	       kit_db_exec(db, VIEWS_TOKENS_SCHEMA, 0, NULL) ||
	       kit_db_exec(db, "INSERT INTO video_counts (video_id, views) VALUES (1, 0)", 0, NULL);
}

int main(int argc, char **argv)
{
	struct opts o = { "sqlite:.hotrow/lab04.db", "mem:", 16, 5, 100 };
	/* `hotrow lab run 04 --solutions` runs build/labs/04-drain/run-solution */
	const char *self = strrchr(argv[0], '/');
	bool solution = strcmp(self ? self + 1 : argv[0], "run-solution") == 0;
	int rc = parse(argc, argv, &o);
	if (rc != KIT_RUNOPT_OK)
		return rc == KIT_RUNOPT_HELP ? 0 : 2;
	if (strncmp(o.url, "sqlite:.hotrow/", 15) == 0)
		mkdir(".hotrow", 0777);

	struct kit_db *db = NULL, *fdb = NULL;
	struct kit_store *st = NULL;
	if (open_store(&st, o.store) != 0) {
		fprintf(stderr, "hotrow lab run 04: --store %s: %s\n", o.store, kit_store_errmsg(st));
		goto fail;
	}
	if (kit_db_open(&db, o.url) != 0 || setup(db) != 0 || kit_db_open(&fdb, o.url) != 0) {
		drv_fail_db("hotrow lab run 04", NULL, fdb ? fdb : db);
		goto fail;
	}
	bool lite = kit_db_engine(db) == KIT_DB_SQLITE;
	printf("Lab 04, buffer and drain, on %s: %d threads, %.1f s per run, flush every %d ms\n",
	       lite ? "SQLite" : "PostgreSQL", o.threads, o.seconds, o.flush_ms);
	double rtt = round_trip_us(st, 2000);
	printf("store %s: one command from one client takes %.3f us (mean of 2000 GETs)\n\n",
	       kit_store_is_redis(st) ? o.store : "mem: (in-process)", rtt);

	/* 1. the naive row: one thread alone, the prediction, then T threads */
	struct drv_baseline naive;
	if (drv_baseline_run(&naive, "hotrow lab run 04", o.url,
	                     "UPDATE video_counts SET views = views + 1 WHERE video_id = 1", o.threads,
	                     o.seconds) != 0)
		goto fail;
	drv_baseline_print(&naive, "UPDATE video_counts SET views = views + 1", "views");

	/* 2. record_view + the flusher */
	struct drv_parts alone;
	struct drv_prediction pb;
	int made = predict_buffered(&o, st, &naive.alone, &alone, &pb);
	if (made == -2) {
		if (store_gone(st, NULL))
			say_store_lost(o.store, true, solution);
		goto fail;
	}
	bool predicted = made == 0;
	int64_t probed = 0;             /* record_view's views alone, flushed with the rest */
	kit_store_get(st, VIEWS_DELTA_PREFIX "2", &probed);
	static struct drv_span upserts;
	struct drv_span_clock fclock;
	drv_span_init(&upserts, KIT_DB_STMT_START, "INSERT INTO video_counts", KIT_DB_STMT_END);
	drv_span_watch(&fclock, &upserts, fdb);
	struct flusher *f = NULL;
	if ((rc = start_flusher(&f, st, fdb, o.flush_ms, VIEWS_MAX_BATCH)) != 0) {
		fprintf(stderr, "hotrow lab run 04: start_flusher: %d (done §6 yet?)\n", rc);
		goto fail;
	}
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = NULL;
	c.threads = o.threads;
	c.seconds = o.seconds;
	c.label = "record_view";
	struct drv_run run;
	int64_t calls0 = served_calls(st);
	rc = drv_run_load(&c, NULL, buffered_view, st, &run);
	const struct kit_load_result buf = run.r;
	struct flusher_stats fs;
	flusher_stats(f, &fs);
	int64_t lag = 0;
	bool gone = store_gone(st, &lag);
	int stop = stop_flusher(f);
	int64_t calls1 = served_calls(st);
	bool lost = gone || (calls0 >= 0 && calls1 >= 0 && calls1 < calls0);
	if (lost)
		say_store_lost(o.store, gone, solution);
	else if (rc != 0 || stop != 0) {
		if (rc != 0)
			drv_fail("hotrow lab run 04", NULL, buf.error);
		else
			drv_fail_db("hotrow lab run 04", "stop_flusher", fdb);
		goto fail;
	}
	printf("\n2. record_view() in the store + one flusher every %d ms\n", o.flush_ms);
	printf("  views                         %8lld ok, %lld failed\n", (long long)buf.ok,
	       (long long)buf.failed);
	printf("  throughput                    %8.0f views/s (%.0fx the naive row)\n",
	       buf.throughput_per_s, naive.many.r.throughput_per_s > 0
	       ? buf.throughput_per_s / naive.many.r.throughput_per_s : 0);
	drv_print_latency(&buf, 3);
	printf("  flushes                       %8lld (%lld failed), upsert %.3f ms mean\n",
	       (long long)fs.flushes, (long long)fs.failed, drv_span_mean_ms(&upserts));
	if (gone)
		printf("  still in the store at the end     gone with the store\n");
	else
		printf("  still in the store at the end %8lld views (flushed by stop_flusher)\n",
		       (long long)lag);
	/* The row is locked by the upserts: their measured time, as often as
	 * they ran, over the run's length (a measurement, not a prediction). */
	double upsert_ms = drv_span_mean_ms(&upserts);
	printf("  row lock busy (measured)      %8.2f%% of the time (%lld upserts x %.3f ms in %.1f s)\n",
	       100.0 * upsert_ms * (double)fs.flushes / (buf.seconds * 1000), (long long)fs.flushes,
	       upsert_ms, buf.seconds);
	if (predicted && !lost) {
		drv_print_parts("record_view", &alone);
		printf("  the engine from the parts alone (its Redis serves one command per %.2f us%s):\n",
		       pb.config.redis_op_us, kit_store_is_redis(st) ? ", measured" : ", its default");
		drv_compare(&pb, &run, "views");
		printf("  predicted: the row lock busy %.2f%% of the time (hold alone / flush "
		       "interval),\n    the visible count lagging up to %.3f s\n",
		       100.0 * naive.alone.hold_ms / o.flush_ms, pb.max_lag_s);
	}

	/* 3. is every acknowledged view in the database? */
	int64_t got1 = -1, got2 = -1;
	if (kit_db_query_int(db, "SELECT views FROM video_counts WHERE video_id = 1", 0, NULL, &got1) ||
	    kit_db_query_int(db, "SELECT COALESCE(SUM(views), 0) FROM video_counts WHERE video_id = 2",
	                     0, NULL, &got2)) {
		drv_fail_db("hotrow lab run 04", "reading the counts", db);
		goto fail;
	}
	int64_t want1 = naive.writes, want2 = probed + buf.ok;
	bool exact = got1 == want1 && got2 == want2;
	printf("\ncounts: naive row %lld for %lld acknowledged, buffered %lld for %lld: %s\n",
	       (long long)got1, (long long)want1, (long long)got2, (long long)want2,
	       exact ? "exact" : lost ? "NOT EXACT: lost with the store (see above)" :
	       "NOT EXACT (see §4 and §5)");
	kit_db_close(fdb);
	kit_db_close(db);
	kit_store_free(st);
	return exact && !lost ? 0 : 1;
fail:
	kit_db_close(fdb);
	kit_db_close(db);
	kit_store_free(st);
	return 1;
}
