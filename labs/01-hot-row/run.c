/*
 * run.c: `hotrow lab run 01`, your like_post() against one hot row.
 *
 * Two measured runs on the database given. First one thread for a moment,
 * to see how long a like holds the lock when nobody waits (the db hook
 * times it: on PostgreSQL from the end of the counter's UPDATE to the end
 * of COMMIT, the row lock; on SQLite from the end of BEGIN to the end of
 * COMMIT, the file's write lock). Then T threads for S seconds, every like on the same post. Beside
 * the second run it prints what that hold allows: the ceiling 1/hold,
 * Little's law for T callers, and the engine's simulation of the same row.
 *
 * Interface: build/labs/01-hot-row/run-solution [--db URL] [--threads T]
 *            [--seconds S] [--check-ms C]; exit 0, 1 if the database
 *            failed or the count is off, 2 for bad usage.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "engine/sim.h"
#include "kit/db.h"
#include "kit/load.h"
#include "kit/predict.h"
#include "kit/runopt.h"
#include "kit/span.h"
#include "labs/01-hot-row/hot_row.h"

#define USERS_PER_THREAD 1000000000LL   /* user ids: run base + thread * this + call */

struct opts {
	const char *url;
	int threads;
	double seconds;
	double check_ms;
};

/* What the runs share: the options and the lock holds of every thread. */
struct run {
	const struct opts *o;
	int64_t user_base;
	struct kit_span hold;
};

/* The options, from one table: KIT_RUNOPT_OK to run, _HELP or _BAD not to. */
static int parse(int argc, char **argv, struct opts *o)
{
	const struct kit_runopt table[] = {
		KIT_RUNOPT_DB(&o->url, "database (default sqlite:.hotrow/lab01.db); its posts and\n"
		                       "likes tables are dropped and made afresh"),
		KIT_RUNOPT_THREADS(&o->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&o->seconds, "length of the measured run (default 5)"),
		{ .name = "--check-ms", .arg = "C", .kind = KIT_RUNOPT_DOUBLE, .dest = &o->check_ms,
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
		int64_t ns = (int64_t)(r->o->check_ms * 1e6);
		struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	return 0;
}

/* Every thread times its holds into the run's span. */
static int start_thread(void *arg, struct kit_load_thread *th)
{
	struct run *r = arg;
	return kit_span_thread_init(&r->hold, th);
}

static int like(void *arg, struct kit_load_thread *th)
{
	struct run *r = arg;
	struct hot_row_app app = { check, r };
	int64_t user = r->user_base + th->index * USERS_PER_THREAD + th->iter + 1;
	return like_post(th->db, 1, user, &app);
}

/* Run like() on threads for seconds; the mean hold comes back in *hold_ms. */
static int measure(struct run *r, int threads, double seconds, const char *label,
                   struct kit_load_result *res, double *hold_ms)
{
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = r->o->url;
	c.threads = threads;
	c.seconds = seconds;
	c.label = label;
	c.thread_init = start_thread;
	c.thread_done = kit_span_thread_done;
	kit_span_reset(&r->hold);
	int rc = kit_load_run(&c, like, r, res);
	if (rc != 0)
		fprintf(stderr, "hotrow lab run 01: %s: %s\n", label, res->error);
	*hold_ms = kit_span_mean_ms(&r->hold);
	r->user_base += (int64_t)KIT_LOAD_MAX_THREADS * USERS_PER_THREAD;
	return rc;
}

/* The engine, asked about the same row: Poisson arrivals at the rate we
 * reached, constant holds of the measured length. */
static int predict(double rps, double hold_ms, double seconds, struct sim_summary *out)
{
	struct sim_config c;
	kit_predict_config(&c, SIM_NAIVE, rps, hold_ms, 0);
	c.seconds = seconds < 10 ? seconds : 10;
	return kit_predict_run(&c, out, "hotrow lab run 01");
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
		fprintf(stderr, "hotrow lab run 01: %s\n", kit_db_errmsg(db));
		kit_db_close(db);
		return 1;
	}
	bool lite = kit_db_engine(db) == KIT_DB_SQLITE;
	/* The hold: PostgreSQL's row lock is ours once the counter UPDATE
	 * returns (its start may still be queueing for the lock), SQLite's
	 * write lock once BEGIN IMMEDIATE returns; both end when COMMIT does. */
	struct run r = { .o = &o };
	if (lite)
		kit_span_init(&r.hold, KIT_DB_TX_BEGIN, NULL, KIT_DB_TX_COMMIT);
	else
		kit_span_init(&r.hold, KIT_DB_STMT_END, "UPDATE", KIT_DB_TX_COMMIT);
	printf("Lab 01, the hot row, on %s: like_post() on one post, %d threads, %.1f s, "
	       "app check %.1f ms\n\n", lite ? "SQLite" : "PostgreSQL", o.threads, o.seconds,
	       o.check_ms);

	struct kit_load_result one, many;
	char many_label[32];
	snprintf(many_label, sizeof many_label, "%d threads", o.threads);
	double hold1, holdn;
	/* The lone thread runs up to 2 s: fsync times vary, so give it samples. */
	double alone = fmin(2.0, fmax(o.seconds / 2, fmin(o.seconds, 1.0)));
	if (measure(&r, 1, alone, "1 thread", &one, &hold1) != 0 ||
	    measure(&r, o.threads, o.seconds, many_label, &many, &holdn) != 0) {
		kit_db_close(db);
		return 1;
	}
	int64_t count = -1;
	if (kit_db_query_int(db, "SELECT likes FROM posts WHERE id = 1", 0, NULL, &count) != 0)
		fprintf(stderr, "hotrow lab run 01: %s\n", kit_db_errmsg(db));
	kit_db_close(db);

	const char *lock = lite ? "BEGIN to COMMIT, the file's write lock"
	                          : "counter UPDATE to COMMIT, the row lock";
	printf("hold per like (%s)\n", lock);
	printf("  1 thread, nobody waiting      %8.3f ms\n", hold1);
	printf("  %3d threads                   %8.3f ms (a holder may wait for a CPU too)\n\n",
	       o.threads, holdn);
	printf("measured, %d threads\n", o.threads);
	printf("  likes                         %8lld ok, %lld failed\n", (long long)many.ok,
	       (long long)many.failed);
	printf("  throughput                    %8.0f likes/s\n", many.throughput_per_s);
	kit_predict_latency(&many, 2);
	putchar('\n');

	double hold = hold1 > 0 ? hold1 : holdn;
	double ceiling = hold > 0 ? 1000.0 / hold : 0;
	printf("predicted from the 1-thread hold of %.3f ms\n", hold);
	printf("  ceiling, 1 / hold             %8.0f likes/s (you reached %.0f%%)\n", ceiling,
	       ceiling > 0 ? 100.0 * many.throughput_per_s / ceiling : 0);
	if (many.throughput_per_s > 0)
		printf("  Little's law, W = L / X       %8.2f ms mean latency for L = %d callers "
		       "(measured %.2f)\n", 1000.0 * o.threads / many.throughput_per_s, o.threads,
		       many.latency_ms.mean);
	struct sim_summary p;
	if (hold > 0 && many.throughput_per_s > 0 &&
	    predict(many.throughput_per_s, hold, o.seconds, &p) == 0) {
		printf("  engine, users arriving at random at %.0f/s (open loop):\n", many.throughput_per_s);
		printf("                                rho %.2f, p50 %.2f ms, p99 %.2f ms, "
		       "lock queue grows %.0f/s\n", p.theory.rho, p.latency_ms.p50, p.latency_ms.p99,
		       p.theory.growth_per_s);
		if (p.theory.rho > 1.05)
			printf("  (above the ceiling: with %d threads the hold was shorter than alone; "
			       "see question 2)\n", o.threads);
	}

	int64_t acked = one.ok + many.ok;
	printf("\ncounter %lld for %lld likes acknowledged: %s\n", (long long)count,
	       (long long)acked, count == acked ? "exact" : "NOT EXACT (see §5)");
	return count == acked ? 0 : 1;
}
