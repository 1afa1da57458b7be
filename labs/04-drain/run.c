/*
 * run.c: `hotrow lab run 04`, the naive view counter against yours.
 *
 * Two measured runs of T threads for S seconds on the database given.
 * First the naive path: every view is one autocommit UPDATE of the same
 * row (video 1), each timed by the db hook, so we know the hold. Then your
 * path: every view is record_view() on video 2 in the in-memory store while
 * one flusher (start_flusher) upserts the deltas every F ms on its own
 * connection. Beside each run it prints what the engine predicts for the
 * measured hold, and at the end whether the database holds exactly the
 * views that were acknowledged.
 *
 * Interface: build/labs/04-drain/run-solution [--db URL] [--threads T]
 *            [--seconds S] [--flush-ms F]; exit 0, 1 if the database
 *            failed or the count is off, 2 for bad usage.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "engine/sim.h"
#include "kit/db.h"
#include "kit/load.h"
#include "kit/store.h"
#include "labs/04-drain/views.h"

#define ENGINE_MAX_RPS 100000   /* the engine's Redis serves one command per 4 us */

struct opts {
	const char *url;
	int threads;
	double seconds;
	int flush_ms;
};

/* Statement timings summed by the db hook, for one kind of statement. */
struct timing {
	const char *verb;          /* "UPDATE" or "INSERT" */
	atomic_llong n, ns;
};

struct stmt_clock {            /* per connection: when the statement began */
	struct timing *t;
	int64_t start_ns;
};

static const char usage[] =
	"usage: hotrow lab run 04 [--db URL] [--threads T] [--seconds S] [--flush-ms F]\n"
	"  --db URL       database (default sqlite:.hotrow/lab04.db); its video_stats\n"
	"                 table is dropped and made afresh\n"
	"  --threads T    concurrent clients, 1..256 (default 16)\n"
	"  --seconds S    length of each of the two runs (default 5)\n"
	"  --flush-ms F   the flusher's interval, 1..60000 ms (default 100)\n";

static int bad(const char *opt, const char *accepts)
{
	fprintf(stderr, "hotrow lab run 04: %s accepts %s\n", opt, accepts);
	return 2;
}

/* 0 to run, 1 after --help, 2 for bad usage. */
static int parse(int argc, char **argv, struct opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage, stdout);
			return 1;
		}
		if (strcmp(a, "--db") && strcmp(a, "--threads") && strcmp(a, "--seconds") &&
		    strcmp(a, "--flush-ms")) {
			fprintf(stderr, "hotrow lab run 04: unknown option %s (try --help)\n", a);
			return 2;
		}
		if (i + 1 >= argc)
			return bad(a, strcmp(a, "--db") == 0 ? "a database URL" : "a value after it");
		const char *v = argv[++i];
		char *end;
		errno = 0;
		if (strcmp(a, "--db") == 0) {
			o->url = v;
		} else if (strcmp(a, "--threads") == 0) {
			long n = strtol(v, &end, 10);
			if (*end || errno || n < 1 || n > KIT_LOAD_MAX_THREADS)
				return bad(a, "a whole number from 1 to 256");
			o->threads = (int)n;
		} else if (strcmp(a, "--seconds") == 0) {
			o->seconds = strtod(v, &end);
			if (*end || errno || !(o->seconds > 0 && o->seconds <= 3600))
				return bad(a, "a number of seconds above 0, at most 3600");
		} else {
			long n = strtol(v, &end, 10);
			if (*end || errno || n < 1 || n > 60000)
				return bad(a, "a whole number of milliseconds from 1 to 60000");
			o->flush_ms = (int)n;
		}
	}
	return 0;
}

/* ---- timing statements through the db hook ---- */

static void clock_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct stmt_clock *c = arg;
	if (strncasecmp(sql, c->t->verb, strlen(c->t->verb)) != 0)
		return;
	if (ev == KIT_DB_STMT_START) {
		c->start_ns = t_ns;
	} else if (ev == KIT_DB_STMT_END && c->start_ns) {
		atomic_fetch_add_explicit(&c->t->n, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->t->ns, t_ns - c->start_ns, memory_order_relaxed);
		c->start_ns = 0;
	}
}

static double mean_ms(struct timing *t)
{
	long long n = atomic_load(&t->n);
	return n ? (double)atomic_load(&t->ns) / (double)n / 1e6 : 0;
}

static int clock_on(void *arg, struct kit_load_thread *th)
{
	struct stmt_clock *c = calloc(1, sizeof *c);
	if (!c)
		return KIT_DB_ERR;
	c->t = arg;
	th->local = c;
	kit_db_set_hook(th->db, clock_hook, c);
	return 0;
}

static int clock_off(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	kit_db_set_hook(th->db, NULL, NULL);
	free(th->local);
	th->local = NULL;
	return 0;
}

/* ---- the two write paths ---- */

static int naive_view(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return kit_db_exec(th->db, "UPDATE video_stats SET views = views + 1 WHERE video_id = 1",
	                   0, NULL);
}

static int buffered_view(void *arg, struct kit_load_thread *th)
{
	(void)th;
	return record_view(arg, 2);
}

static int naive_run(const struct opts *o, int threads, double seconds, struct timing *t,
                     struct kit_load_result *res)
{
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = o->url;
	c.threads = threads;
	c.seconds = seconds;
	c.label = "naive UPDATE";
	c.thread_init = clock_on;
	c.thread_done = clock_off;
	int rc = kit_load_run(&c, naive_view, t, res);
	if (rc != 0)
		fprintf(stderr, "hotrow lab run 04: naive run: %s\n", res->error);
	return rc;
}

/* ---- the engine's view of the same numbers ---- */

static void engine_run(enum sim_strategy strategy, double rps, double hold_ms, int flush_ms,
                       struct sim_summary *out)
{
	struct sim_config c;
	sim_config_default(&c);
	c.strategy = strategy;
	c.rows = 1;
	c.rps = rps;
	c.arrivals = SIM_ARRIVE_POISSON;
	c.hold_ms = hold_ms;
	c.hold_dist = SIM_DIST_CONST;
	c.work_ms = 0;
	c.pool = 0;
	c.unrelated_rps = 0;
	c.flush_ms = flush_ms;
	c.seconds = 5;
	char err[200];
	if (sim_config_check(&c, err, sizeof err) != 0) {
		fprintf(stderr, "hotrow lab run 04: engine: %s\n", err);
		memset(out, 0, sizeof *out);
		return;
	}
	struct sim *s = sim_new(&c);
	sim_run(s);
	sim_summary(s, out);
	sim_free(s);
}

static void print_latency(const struct kit_load_result *r)
{
	printf("  latency ms                    mean %.3f  p50 %.3f  p95 %.3f  p99 %.3f  max %.2f\n",
	       r->latency_ms.mean, r->latency_ms.p50, r->latency_ms.p95, r->latency_ms.p99,
	       r->latency_ms.max);
}

static int setup(struct kit_db *db)
{
	return kit_db_exec(db, "DROP TABLE IF EXISTS video_stats", 0, NULL) ||
	       kit_db_exec(db, VIEWS_SCHEMA, 0, NULL) ||
	       kit_db_exec(db, "INSERT INTO video_stats (video_id, views) VALUES (1, 0)", 0, NULL);
}

int main(int argc, char **argv)
{
	struct opts o = { "sqlite:.hotrow/lab04.db", 16, 5, 100 };
	int rc = parse(argc, argv, &o);
	if (rc != 0)
		return rc == 1 ? 0 : rc;
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

	/* 1. the naive row: one thread for the hold, then T threads */
	struct timing hold1 = { "UPDATE", 0, 0 }, holdn = { "UPDATE", 0, 0 };
	struct kit_load_result one, naive;
	if (naive_run(&o, 1, o.seconds < 1 ? o.seconds : 1, &hold1, &one) != 0 ||
	    naive_run(&o, o.threads, o.seconds, &holdn, &naive) != 0)
		goto fail;
	double hold = mean_ms(&hold1);
	printf("1. naive: UPDATE video_stats SET views = views + 1, one row, autocommit\n");
	printf("  hold per view, 1 thread       %8.3f ms (the statement with its commit)\n", hold);
	printf("  views                         %8lld ok, %lld failed\n", (long long)naive.ok,
	       (long long)naive.failed);
	printf("  throughput                    %8.0f views/s\n", naive.throughput_per_s);
	print_latency(&naive);
	if (hold > 0) {
		struct sim_summary p;
		engine_run(SIM_NAIVE, naive.throughput_per_s, hold, o.flush_ms, &p);
		printf("  predicted ceiling, 1 / hold   %8.0f views/s (you reached %.0f%%)\n",
		       1000.0 / hold, 100.0 * naive.throughput_per_s * hold / 1000.0);
		printf("  engine, Poisson at %.0f/s: rho %.2f, p50 %.2f ms, p99 %.2f ms\n",
		       naive.throughput_per_s, p.theory.rho, p.latency_ms.p50, p.latency_ms.p99);
	}

	/* 2. record_view + the flusher */
	struct timing upserts = { "INSERT", 0, 0 };
	struct stmt_clock fclock = { &upserts, 0 };
	kit_db_set_hook(fdb, clock_hook, &fclock);
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
	struct kit_load_result buf;
	rc = kit_load_run(&c, buffered_view, st, &buf);
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
	       buf.throughput_per_s,
	       naive.throughput_per_s > 0 ? buf.throughput_per_s / naive.throughput_per_s : 0);
	print_latency(&buf);
	printf("  flushes                       %8lld (%lld failed), upsert %.3f ms mean\n",
	       (long long)fs.flushes, (long long)fs.failed, mean_ms(&upserts));
	printf("  still in the store at the end %8lld views (flushed by stop_flusher)\n",
	       (long long)lag);
	if (hold > 0) {
		double rps = buf.throughput_per_s < ENGINE_MAX_RPS ? buf.throughput_per_s : ENGINE_MAX_RPS;
		struct sim_summary p;
		engine_run(SIM_REDIS, rps, hold, o.flush_ms, &p);
		printf("  engine, redis at %.0f/s: row lock busy %.2f%% of the time, "
		       "visible count lags up to %.3f s, %lld lost\n", rps,
		       100.0 * hold / o.flush_ms, p.count.max_lag_s, (long long)p.count.lost);
	}

	/* 3. is every acknowledged view in the database? */
	int64_t got1 = -1, got2 = -1;
	if (kit_db_query_int(db, "SELECT views FROM video_stats WHERE video_id = 1", 0, NULL, &got1) ||
	    kit_db_query_int(db, "SELECT COALESCE(SUM(views), 0) FROM video_stats WHERE video_id = 2",
	                     0, NULL, &got2)) {
		fprintf(stderr, "hotrow lab run 04: %s\n", kit_db_errmsg(db));
		goto fail;
	}
	int64_t want1 = one.ok + naive.ok;
	bool exact = got1 == want1 && got2 == buf.ok;
	printf("\ncounts: naive row %lld for %lld acknowledged, buffered %lld for %lld: %s\n",
	       (long long)got1, (long long)want1, (long long)got2, (long long)buf.ok,
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
