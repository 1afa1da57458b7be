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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "engine/sim.h"
#include "kit/db.h"
#include "kit/load.h"
#include "labs/01-hot-row/hot_row.h"

#define USERS_PER_THREAD 1000000000LL   /* user ids: run base + thread * this + call */

struct opts {
	const char *url;
	int threads;
	double seconds;
	double check_ms;
};

/* What the runs share: the check's length and each thread's lock holds. */
struct run {
	const struct opts *o;
	int64_t user_base;
	bool lite;
	atomic_llong holds, hold_ns;      /* summed over threads */
};

/* Per thread: when the current like's lock was taken. */
struct holder {
	struct run *run;
	int64_t since_ns;                 /* 0: not holding */
};

static const char usage[] =
	"usage: hotrow lab run 01 [--db URL] [--threads T] [--seconds S] [--check-ms C]\n"
	"  --db URL       database (default sqlite:.hotrow/lab01.db); its posts and\n"
	"                 likes tables are dropped and made afresh\n"
	"  --threads T    concurrent clients, 1..256 (default 16)\n"
	"  --seconds S    length of the measured run (default 5)\n"
	"  --check-ms C   how long the app's check takes per like, 0..1000 (default 1)\n";

static int bad(const char *opt, const char *accepts)
{
	fprintf(stderr, "hotrow lab run 01: %s accepts %s\n", opt, accepts);
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
		    strcmp(a, "--check-ms")) {
			fprintf(stderr, "hotrow lab run 01: unknown option %s (try --help)\n", a);
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
			o->check_ms = strtod(v, &end);
			if (*end || errno || !(o->check_ms >= 0 && o->check_ms <= 1000))
				return bad(a, "milliseconds from 0 to 1000");
		}
	}
	return 0;
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

/* The hold: PostgreSQL's row lock is ours once the counter UPDATE returns
 * (its start may still be queueing for the lock), SQLite's write lock once
 * BEGIN IMMEDIATE returns; both end when COMMIT returns. */
static void hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct holder *h = arg;
	struct run *r = h->run;

	if (r->lite ? ev == KIT_DB_TX_BEGIN
	            : ev == KIT_DB_STMT_END && strncasecmp(sql, "UPDATE", 6) == 0) {
		if (h->since_ns == 0)
			h->since_ns = t_ns;
	} else if (ev == KIT_DB_TX_COMMIT || ev == KIT_DB_TX_ROLLBACK) {
		if (h->since_ns != 0 && ev == KIT_DB_TX_COMMIT) {
			atomic_fetch_add_explicit(&r->holds, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&r->hold_ns, t_ns - h->since_ns, memory_order_relaxed);
		}
		h->since_ns = 0;
	}
}

static int start_thread(void *arg, struct kit_load_thread *th)
{
	struct holder *h = calloc(1, sizeof *h);
	if (h == NULL)
		return KIT_DB_ERR;
	h->run = arg;
	th->local = h;
	kit_db_set_hook(th->db, hook, h);
	return 0;
}

static int end_thread(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	kit_db_set_hook(th->db, NULL, NULL);
	free(th->local);
	th->local = NULL;
	return 0;
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
	c.thread_done = end_thread;
	atomic_store(&r->holds, 0);
	atomic_store(&r->hold_ns, 0);
	int rc = kit_load_run(&c, like, r, res);
	if (rc != 0)
		fprintf(stderr, "hotrow lab run 01: %s: %s\n", label, res->error);
	long long n = atomic_load(&r->holds);
	*hold_ms = n > 0 ? (double)atomic_load(&r->hold_ns) / (double)n / 1e6 : 0;
	r->user_base += (int64_t)KIT_LOAD_MAX_THREADS * USERS_PER_THREAD;
	return rc;
}

/* The engine, asked about the same row: Poisson arrivals at the rate we
 * reached, constant holds of the measured length. */
static int predict(double rps, double hold_ms, double seconds, struct sim_summary *out)
{
	struct sim_config c;
	sim_config_default(&c);
	c.strategy = SIM_NAIVE;
	c.rows = 1;
	c.rps = rps;
	c.arrivals = SIM_ARRIVE_POISSON;
	c.hold_ms = hold_ms;
	c.hold_dist = SIM_DIST_CONST;
	c.work_ms = 0;
	c.pool = 0;
	c.unrelated_rps = 0;
	c.seconds = seconds < 10 ? seconds : 10;
	char err[200];
	if (sim_config_check(&c, err, sizeof err) != 0) {
		fprintf(stderr, "hotrow lab run 01: engine: %s\n", err);
		return -1;
	}
	struct sim *s = sim_new(&c);
	sim_run(s);
	sim_summary(s, out);
	sim_free(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { "sqlite:.hotrow/lab01.db", 16, 5, 1 };
	int rc = parse(argc, argv, &o);
	if (rc != 0)
		return rc == 1 ? 0 : rc;
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
	struct run r = { .o = &o, .lite = kit_db_engine(db) == KIT_DB_SQLITE };
	printf("Lab 01, the hot row, on %s: like_post() on one post, %d threads, %.1f s, "
	       "app check %.1f ms\n\n", r.lite ? "SQLite" : "PostgreSQL", o.threads, o.seconds,
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

	const char *lock = r.lite ? "BEGIN to COMMIT, the file's write lock"
	                          : "counter UPDATE to COMMIT, the row lock";
	printf("hold per like (%s)\n", lock);
	printf("  1 thread, nobody waiting      %8.3f ms\n", hold1);
	printf("  %3d threads                   %8.3f ms (a holder may wait for a CPU too)\n\n",
	       o.threads, holdn);
	printf("measured, %d threads\n", o.threads);
	printf("  likes                         %8lld ok, %lld failed\n", (long long)many.ok,
	       (long long)many.failed);
	printf("  throughput                    %8.0f likes/s\n", many.throughput_per_s);
	printf("  latency ms                    mean %.2f  p50 %.2f  p95 %.2f  p99 %.2f  max %.2f\n\n",
	       many.latency_ms.mean, many.latency_ms.p50, many.latency_ms.p95,
	       many.latency_ms.p99, many.latency_ms.max);

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
