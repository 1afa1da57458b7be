/*
 * run.c: `hotrow lab run 05`, the hot row against a log and your consumers.
 *
 * Two measured runs on the database given. First the naive path: T
 * threads each UPDATE the same row once per view, autocommit, for S
 * seconds (one thread for one second first, to measure the hold alone).
 * Then the log: T threads append view events to a 4-partition log for S
 * seconds while C consumer threads (each with its own connection, log
 * handle and group membership) apply them with your fence_handle() and
 * fence_on_assign(); when the producers stop, the consumers drain what is
 * left. Before each run one thread alone measures the parts of a view
 * (the hold, the time outside it, the CPU), and the engine predicts the
 * run from those parts, the threads and the consumers' pause when the log
 * is empty (POLL_MS) only; the prediction is printed beside the run. At
 * the end: whether the database holds exactly the views appended.
 *
 * Interface: build/labs/05-fence/run-solution [--db URL] [--threads T]
 *            [--seconds S] [--consumers C] [--batch B]; exit 0, 1 when
 *            the database failed or the count is off, 2 for bad usage.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kit/db.h"
#include "kit/load.h"
#include "kit/log.h"
#include "labs/05-fence/fence.h"
#include "labs/driver/baseline.h"
#include "labs/driver/fail.h"
#include "labs/driver/predict.h"
#include "labs/driver/probe.h"
#include "labs/driver/runopt.h"
#include "labs/driver/span.h"
#include "util/clock.h"

#define PARTS 4
#define MAX_CONSUMERS 16
#define LOG_DIR ".hotrow/lab05-log"
#define POLL_MS 0.5           /* a consumer's pause when the log has nothing new */

struct opts {
	const char *url;
	int threads, consumers, batch;
	double seconds;
};

/* The options, from one table: KIT_RUNOPT_OK to run, _HELP or _BAD not to. */
static int parse(int argc, char **argv, struct opts *o)
{
	const struct opt table[] = {
		KIT_RUNOPT_DB(&o->url, "database (default sqlite:.hotrow/lab05.db); its video_views and\n"
		                       "log_progress tables are dropped and made afresh"),
		KIT_RUNOPT_THREADS(&o->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&o->seconds, "length of each of the two runs (default 5)"),
		{ .name = "consumers", .arg = "C", .kind = OPT_INT, .dest = &o->consumers,
		  .min = 1, .max = MAX_CONSUMERS,
		  .help = "consumer threads in the group, 1..16 (default 3)" },
		{ .name = "batch", .arg = "B", .kind = OPT_INT, .dest = &o->batch,
		  .min = 1, .max = 100000,
		  .help = "most events per batch, 1..100000 (default 2000)" },
	};
	const struct kit_runopt_spec spec = { .cmd = "hotrow lab run 05", .opts = table,
	                                      .n = sizeof table / sizeof table[0],
	                                      .footer = "The log lives in " LOG_DIR
	                                                " and is made afresh.\n" };
	return kit_runopt_parse(&spec, argc, argv);
}

static double now_s(void)
{
	return (double)kit_load_now_ns() / 1e9;
}

/* ---- 1. the naive row ---- */

/* ---- 2. producers and consumers ---- */

struct group {
	const struct opts *o;
	atomic_bool producing;        /* cleared when the producers stop */
	atomic_llong applied;         /* events handled by the consumers */
	atomic_llong batches;
	atomic_llong hot_batches;     /* ... that held the hot video, 2 */
	struct drv_span tx;           /* BEGIN to COMMIT of each batch */
	int failed;                   /* a consumer gave up; guarded by lock */
	char error[1400];
	pthread_mutex_t lock;
};

struct consumer {
	struct group *g;
	int index;
	pthread_t thread;
	struct kit_db *db;
};

static int count_batch(void *arg, int part, const struct kit_log_record *recs, int n)
{
	struct consumer *me = arg;
	int rc = fence_handle(me->db, part, recs, n);
	if (rc == 0) {
		atomic_fetch_add(&me->g->applied, n);
		atomic_fetch_add(&me->g->batches, 1);
		struct fence_event ev;
		for (int i = 0; i < n; i++) {
			memcpy(&ev, recs[i].data, sizeof ev);
			if (ev.video_id == 2) {
				atomic_fetch_add(&me->g->hot_batches, 1);
				break;
			}
		}
	}
	return rc;
}

/* Every partition's hint has reached its end. */
static bool drained(struct kit_log *log)
{
	for (int p = 0; p < PARTS; p++) {
		int64_t end, next;
		if (kit_log_end(log, p, &end) != 0 || kit_log_committed(log, FENCE_GROUP, p, &next) != 0 ||
		    next < end)
			return false;
	}
	return true;
}

static void give_up(struct group *g, const char *what, const char *msg)
{
	pthread_mutex_lock(&g->lock);
	if (!g->failed)
		snprintf(g->error, sizeof g->error, "%s: %s", what, msg);
	g->failed = 1;
	pthread_mutex_unlock(&g->lock);
}

static void *consume(void *arg)
{
	struct consumer *me = arg;
	struct group *g = me->g;
	struct kit_log *log = NULL;
	struct kit_log_consumer *c = NULL;
	char name[32];
	snprintf(name, sizeof name, "run-%d", me->index);
	struct drv_span_clock clk;
	drv_span_watch(&clk, &g->tx, me->db);
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = me->db };
	if (kit_log_open(&log, LOG_DIR, PARTS) != 0 ||
	    kit_log_join(&c, log, FENCE_GROUP, name, &cb) != 0) {
		give_up(g, "consumer", kit_log_errmsg(log));
		goto out;
	}
	int errors = 0;
	for (;;) {
		int n = kit_log_poll(c, g->o->batch, count_batch, me);
		if (n < 0 && !kit_db_connected(me->db)) {   /* the server, not the code: stop now */
			give_up(g, "the database went away: consumer", kit_db_errmsg(me->db));
			break;
		}
		if (n < 0 && ++errors == 50) {
			char msg[1200];
			const char *dberr = kit_db_errmsg(me->db);
			if (dberr && *dberr)
				snprintf(msg, sizeof msg, "code %d; database: %s; log: %s", n, dberr,
				         kit_log_errmsg(log));
			else
				snprintf(msg, sizeof msg, "code %d from your fence functions, with no "
				         "database or log error behind it (is fence.c written yet? "
				         "hotrow lab check 05)", n);
			give_up(g, "consumer, 50 failed polls in a row, the last", msg);
			break;
		}
		if (n >= 0)
			errors = 0;
		if (n != 0)
			continue;
		if (!atomic_load(&g->producing) && drained(log))
			break;
		util_sleep_ns((int64_t)(POLL_MS * 1e6));
	}
out:
	kit_log_leave(c);
	kit_log_close(log);
	kit_db_set_hook(me->db, NULL, NULL);
	return NULL;
}

static int producer_init(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	struct kit_log *log;
	if (kit_log_open(&log, LOG_DIR, PARTS) != 0) {
		fprintf(stderr, "hotrow lab run 05: %s\n", kit_log_errmsg(log));
		kit_log_close(log);
		return KIT_DB_ERR;
	}
	th->local = log;
	return 0;
}

static int producer_done(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	kit_log_close(th->local);
	return 0;
}

/* One view: three in four for video 2, the rest over videos 3..17. */
static int append_view(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	uint64_t r = kit_load_rand(th);
	struct fence_event ev = { r % 4 ? 2 : 3 + (int64_t)((r >> 8) % 15) };
	/* keyed by video: all views of one video go to one partition, so one
	 * consumer at a time writes its row */
	return kit_log_append(th->local, (int)(ev.video_id % PARTS),
	                      &(struct kit_log_iov){ &ev, sizeof ev }, 1, NULL) == 0 ? 0 : KIT_DB_ERR;
}

/* ---- the engine's view of the same numbers ---- */

/* One producer alone, then the engine's prediction for T producers: views
 * appended to a log that consumers drain, each batch holding the row as
 * long as the naive UPDATE did alone, the next one at most POLL_MS after
 * the log had nothing new. */
static int predict_log(const struct opts *o, const struct drv_parts *naive,
                       struct drv_parts *alone, struct drv_prediction *p)
{
	struct drv_probe pr;
	drv_probe_default(&pr);
	pr.label = "append to the log";
	pr.thread_init = producer_init;
	pr.thread_done = producer_done;
	if (drv_probe_run(&pr, append_view, NULL, alone) != 0) {
		drv_fail("hotrow lab run 05", NULL, alone->error);
		return -2;   /* a request failed: stop (-1: the prediction refused) */
	}
	struct drv_inputs in;
	drv_inputs_init(&in, SIM_QUEUE, o->threads, alone);
	in.flush = *naive;
	in.flush_ms = POLL_MS;
	in.seconds = o->seconds;
	return drv_predict(&in, p, "hotrow lab run 05");
}

static int setup(struct kit_db *db)
{
	if (kit_db_exec(db, "DROP TABLE IF EXISTS video_views", 0, NULL) ||
	    kit_db_exec(db, "DROP TABLE IF EXISTS log_progress", 0, NULL) ||
	    kit_db_exec(db, FENCE_SCHEMA, 0, NULL) ||
	    kit_db_exec(db, "INSERT INTO video_views (video_id, views) VALUES (1, 0)", 0, NULL))
		return -1;
	for (int p = 0; p < PARTS; p++) {
		char sql[96];
		snprintf(sql, sizeof sql, "INSERT INTO log_progress (part, last_offset) VALUES (%d, -1)", p);
		if (kit_db_exec(db, sql, 0, NULL) != 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { "sqlite:.hotrow/lab05.db", 16, 3, 2000, 5 };
	int rc = parse(argc, argv, &o);
	if (rc != KIT_RUNOPT_OK)
		return rc == KIT_RUNOPT_HELP ? 0 : 2;
	mkdir(".hotrow", 0777);
	kit_log_remove(LOG_DIR);

	struct kit_db *db = NULL;
	struct consumer cons[MAX_CONSUMERS];
	int started = 0;
	if (kit_db_open(&db, o.url) != 0 || setup(db) != 0) {
		drv_fail_db("hotrow lab run 05", NULL, db);
		kit_db_close(db);
		return 1;
	}
	bool lite = kit_db_engine(db) == KIT_DB_SQLITE;
	printf("Lab 05, the offset fence, on %s: %d threads, %.1f s per run, %d consumers, "
	       "batches of up to %d\n\n", lite ? "SQLite" : "PostgreSQL", o.threads, o.seconds,
	       o.consumers, o.batch);

	/* 1. the naive row: one thread alone, the prediction, then T threads */
	struct drv_baseline naive;
	if (drv_baseline_run(&naive, "hotrow lab run 05", o.url,
	                     "UPDATE video_views SET views = views + 1 WHERE video_id = 1", o.threads,
	                     o.seconds) != 0)
		goto fail;
	drv_baseline_print(&naive, "UPDATE video_views SET views = views + 1", "views");

	/* The log's prediction, from one producer alone (its views count too). */
	struct drv_parts alone;
	struct drv_prediction pl;
	int made = predict_log(&o, &naive.alone, &alone, &pl);
	if (made == -2)
		goto fail;
	bool predicted = made == 0;

	/* 2. the log and the consumer group */
	struct group g = { .o = &o };
	drv_span_init(&g.tx, KIT_DB_TX_BEGIN, NULL, KIT_DB_TX_COMMIT);
	atomic_store(&g.producing, true);
	pthread_mutex_init(&g.lock, NULL);
	for (; started < o.consumers; started++) {
		cons[started] = (struct consumer){ &g, started, 0, NULL };
		if (kit_db_open(&cons[started].db, o.url) != 0) {
			give_up(&g, "connect consumer", kit_db_errmsg(cons[started].db));
			kit_db_close(cons[started].db);
			atomic_store(&g.producing, false);
			break;
		}
		if (pthread_create(&cons[started].thread, NULL, consume, &cons[started]) != 0) {
			give_up(&g, "start consumer", "pthread_create failed");
			kit_db_close(cons[started].db);
			atomic_store(&g.producing, false);
			break;
		}
	}
	struct drv_run run = { .started_ns = 0 };   /* zeroed: a consumer may fail to start */
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = NULL;
	c.threads = o.threads;
	c.seconds = o.seconds;
	c.label = "append to the log";
	c.thread_init = producer_init;
	c.thread_done = producer_done;
	rc = started == o.consumers ? drv_run_load(&c, NULL, append_view, NULL, &run) : -1;
	const struct kit_load_result prod = run.r;
	long long lag = alone.calls + prod.ok - atomic_load(&g.applied);
	double t_stop = now_s();
	atomic_store(&g.producing, false);
	for (int i = 0; i < started; i++) {
		pthread_join(cons[i].thread, NULL);
		kit_db_close(cons[i].db);
	}
	double drain_s = now_s() - t_stop;
	if (rc != 0 || g.failed) {
		drv_fail("hotrow lab run 05", NULL, g.failed ? g.error : prod.error);
		goto fail;
	}
	long long batches = atomic_load(&g.batches);
	double tx_ms = drv_span_mean_ms(&g.tx);
	drv_span_destroy(&g.tx);
	printf("\n2. append to a %d-partition log; %d consumers apply batches behind the fence\n",
	       PARTS, o.consumers);
	printf("  views                         %8lld appended, %lld failed\n", (long long)prod.ok,
	       (long long)prod.failed);
	printf("  throughput                    %8.0f views/s (%.0fx the naive row)\n",
	       prod.throughput_per_s, naive.many.r.throughput_per_s > 0
	       ? prod.throughput_per_s / naive.many.r.throughput_per_s : 0);
	drv_print_latency(&prod, 3);
	printf("  batches                       %8lld, %.0f views each on average, "
	       "transaction %.3f ms mean\n", batches,
	       batches ? (double)atomic_load(&g.applied) / (double)batches : 0, tx_ms);
	printf("  behind when appends stopped   %8lld views, drained in %.2f s\n", lag, drain_s);
	if (batches > 0 && tx_ms > 0) {
		/* The hot row is locked by every transaction, of any consumer,
		 * whose batch held the hot video (a measurement). */
		double elapsed_ms = (prod.seconds + drain_s) * 1000;
		long long hot = atomic_load(&g.hot_batches);
		printf("  hot row lock busy (measured)  %8.1f%% of the time (%lld transactions with video 2 "
		       "x %.3f ms in %.1f s, all consumers)\n", 100.0 * tx_ms * (double)hot / elapsed_ms,
		       hot, tx_ms, elapsed_ms / 1000);
	}
	if (predicted) {
		drv_print_parts("an append", &alone);
		printf("  the engine from the parts alone (a batch every %.1f ms at most, holding the "
		       "row %.3f ms):\n", POLL_MS, naive.alone.hold_ms);
		drv_compare(&pl, &run, "views");
		printf("  predicted: the visible count lagging up to %.3f s\n", pl.max_lag_s);
	}

	/* 3. is every appended view in the database? */
	int64_t got1 = -1, got = -1;
	if (kit_db_query_int(db, "SELECT views FROM video_views WHERE video_id = 1", 0, NULL, &got1) ||
	    kit_db_query_int(db, "SELECT COALESCE(SUM(views), 0) FROM video_views WHERE video_id > 1",
	                     0, NULL, &got)) {
		drv_fail_db("hotrow lab run 05", "reading the counts", db);
		goto fail;
	}
	long long want1 = naive.writes, want = alone.calls + prod.ok;
	bool exact = got1 == want1 && got == want;
	printf("\ncounts: naive row %lld for %lld acknowledged, log %lld for %lld appended: %s\n",
	       (long long)got1, want1, (long long)got, want,
	       exact ? "exact" : "NOT EXACT (see §3 and §5)");
	kit_db_close(db);
	kit_log_remove(LOG_DIR);
	return exact ? 0 : 1;
fail:
	kit_db_close(db);
	return 1;
}
