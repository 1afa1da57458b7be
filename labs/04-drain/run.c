/*
 * run.c: `hotrow lab run 04`, the naive view counter against yours.
 *
 * Two measured runs of T threads for S seconds on the database given.
 * First the naive path: every view is one autocommit UPDATE of the same
 * row (video 1), each timed by the db hook, so we know the hold. Then your
 * path: every view is record_view() on video 2 in the in-memory store while
 * one flusher (start_flusher) upserts the deltas every F ms on its own
 * connection. Before each run one thread alone measures the parts of a
 * view (the hold, the time outside it, the CPU) and the engine predicts
 * the run from those parts, the threads and the flush interval only; the
 * prediction is printed beside the run. At the end: whether the database
 * holds exactly the views that were acknowledged.
 *
 * Interface: build/labs/04-drain/run-solution [--db URL] [--threads T]
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
#include "labs/driver/predict.h"
#include "labs/driver/probe.h"
#include "labs/driver/runopt.h"
#include "labs/driver/span.h"

struct opts {
	const char *url;
	int threads;
	double seconds;
	int flush_ms;
};

/* The options, from one table: KIT_RUNOPT_OK to run, _HELP or _BAD not to. */
static int parse(int argc, char **argv, struct opts *o)
{
	const struct kit_runopt table[] = {
		KIT_RUNOPT_DB(&o->url, "database (default sqlite:.hotrow/lab04.db); its video_counts\n"
		                       "table is dropped and made afresh"),
		KIT_RUNOPT_THREADS(&o->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&o->seconds, "length of each of the two runs (default 5)"),
		{ .name = "--flush-ms", .arg = "F", .kind = KIT_RUNOPT_INT, .dest = &o->flush_ms,
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
	if (drv_probe_run(&pr, buffered_view, st, alone) != 0) {
		fprintf(stderr, "hotrow lab run 04: %s\n", alone->error);
		return -1;
	}
	struct drv_inputs in;
	drv_inputs_init(&in, SIM_REDIS, o->threads, alone);
	in.flush = *naive;
	in.flush_ms = o->flush_ms;
	in.seconds = o->seconds;
	return drv_predict(&in, p, "hotrow lab run 04");
}

static int setup(struct kit_db *db)
{
	return kit_db_exec(db, "DROP TABLE IF EXISTS video_counts", 0, NULL) ||
	       kit_db_exec(db, VIEWS_SCHEMA, 0, NULL) ||
	       kit_db_exec(db, "INSERT INTO video_counts (video_id, views) VALUES (1, 0)", 0, NULL);
}

int main(int argc, char **argv)
{
	struct opts o = { "sqlite:.hotrow/lab04.db", 16, 5, 100 };
	int rc = parse(argc, argv, &o);
	if (rc != KIT_RUNOPT_OK)
		return rc == KIT_RUNOPT_HELP ? 0 : 2;
	if (strncmp(o.url, "sqlite:.hotrow/", 15) == 0)
		mkdir(".hotrow", 0777);

	struct kit_db *db = NULL, *fdb = NULL;
	struct kit_store *st = kit_store_new();
	if (!st || kit_db_open(&db, o.url) != 0 || setup(db) != 0 || kit_db_open(&fdb, o.url) != 0) {
		fprintf(stderr, "hotrow lab run 04: %s\n", !st ? "out of memory"
		        : kit_db_errmsg(fdb ? fdb : db));
		goto fail;
	}
	bool lite = kit_db_engine(db) == KIT_DB_SQLITE;
	printf("Lab 04, buffer and drain, on %s: %d threads, %.1f s per run, flush every %d ms\n\n",
	       lite ? "SQLite" : "PostgreSQL", o.threads, o.seconds, o.flush_ms);

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
	bool predicted = predict_buffered(&o, st, &naive.alone, &alone, &pb) == 0;
	int64_t probed = 0;             /* record_view's views alone, flushed with the rest */
	kit_store_get(st, VIEWS_DELTA_PREFIX "2", &probed);
	static struct drv_span upserts;
	struct drv_span_clock fclock;
	drv_span_init(&upserts, KIT_DB_STMT_START, "INSERT", KIT_DB_STMT_END);
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
	rc = drv_run_load(&c, NULL, buffered_view, st, &run);
	const struct kit_load_result buf = run.r;
	struct flusher_stats fs;
	flusher_stats(f, &fs);
	int64_t lag = 0;
	kit_store_get(st, VIEWS_DELTA_PREFIX "2", &lag);
	int stop = stop_flusher(f);
	if (rc != 0 || stop != 0) {
		fprintf(stderr, "hotrow lab run 04: %s\n", rc ? buf.error : kit_db_errmsg(fdb));
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
	printf("  still in the store at the end %8lld views (flushed by stop_flusher)\n",
	       (long long)lag);
	if (predicted) {
		drv_print_parts("record_view", &alone);
		printf("  the engine from the parts alone (its Redis serves one command per 4 us):\n");
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
		fprintf(stderr, "hotrow lab run 04: %s\n", kit_db_errmsg(db));
		goto fail;
	}
	int64_t want1 = naive.writes, want2 = probed + buf.ok;
	bool exact = got1 == want1 && got2 == want2;
	printf("\ncounts: naive row %lld for %lld acknowledged, buffered %lld for %lld: %s\n",
	       (long long)got1, (long long)want1, (long long)got2, (long long)want2,
	       exact ? "exact" : "NOT EXACT (see §4 and §5)");
	kit_db_close(fdb);
	kit_db_close(db);
	kit_store_free(st);
	return exact ? 0 : 1;
fail:
	kit_db_close(fdb);
	kit_db_close(db);
	kit_store_free(st);
	return 1;
}
