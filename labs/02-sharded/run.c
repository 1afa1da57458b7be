/*
 * run.c: `hotrow lab run 02`, one hot row against N slot rows, measured.
 *
 * Drives T threads for S seconds twice on the database given: first every
 * like updates one counter row, then every like goes through your
 * shard_increment(). Each like is a transaction that holds its lock for
 * --work-ms of pretend application work after the write (the slow part of
 * a real request), so the row-lock ceiling shows above the noise of a
 * small machine. Beside the measurements it prints what the engine
 * predicts for the hold time it measured with one thread.
 *
 * Interface: build/labs/02-sharded/run-solution [--db URL] [--threads T]
 *            [--seconds S] [--slots N] [--work-ms W]; exit 0, 1 if the
 *            database failed, 2 for bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "engine/sim.h"
#include "kit/db.h"
#include "kit/load.h"
#include "labs/02-sharded/shard.h"

#define POST 1

struct run {
	const char *url;
	int threads;
	double seconds;
	int slots;
	double work_ms;
	enum { WRITE_NAIVE, WRITE_SHARDED } write;
};

static const char usage[] =
	"usage: hotrow lab run 02 [--db URL] [--threads T] [--seconds S] [--slots N] [--work-ms W]\n"
	"  --db URL      database (default sqlite:.hotrow/lab02.db)\n"
	"  --threads T   concurrent clients, 1..256 (default 16)\n"
	"  --seconds S   length of each measured run (default 5)\n"
	"  --slots N     slots for the sharded run, 1..1024 (default 16)\n"
	"  --work-ms W   app work inside each like's transaction, after the write,\n"
	"                0..1000 (default 2; 0 = one autocommit statement)\n";

/* What each option accepts, for the usage errors; NULL: no such option. */
static const char *accepts(const char *opt)
{
	static const char *const table[][2] = {
		{ "--db", "a database URL" },
		{ "--threads", "a whole number from 1 to 256" },
		{ "--seconds", "a number of seconds above 0, at most 3600" },
		{ "--slots", "a whole number from 1 to 1024" },
		{ "--work-ms", "milliseconds from 0 to 1000" },
	};
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(opt, table[i][0]) == 0)
			return table[i][1];
	return NULL;
}

static int bad(const char *opt, const char *what)
{
	fprintf(stderr, "hotrow lab run 02: %s accepts %s\n", opt, what);
	return 2;
}

static int parse(int argc, char **argv, struct run *r)
{
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
			fputs(usage, stdout);
			return 1;
		}
		if (accepts(o) == NULL) {
			fprintf(stderr, "hotrow lab run 02: unknown option %s (try --help)\n", o);
			return 2;
		}
		if (i + 1 >= argc)
			return bad(o, accepts(o));
		const char *v = argv[++i];
		char *end;
		errno = 0;
		if (strcmp(o, "--db") == 0) {
			r->url = v;
		} else if (strcmp(o, "--threads") == 0) {
			long n = strtol(v, &end, 10);
			if (*end || errno || n < 1 || n > KIT_LOAD_MAX_THREADS)
				return bad(o, accepts(o));
			r->threads = (int)n;
		} else if (strcmp(o, "--seconds") == 0) {
			r->seconds = strtod(v, &end);
			if (*end || errno || !(r->seconds > 0 && r->seconds <= 3600))
				return bad(o, accepts(o));
		} else if (strcmp(o, "--slots") == 0) {
			long n = strtol(v, &end, 10);
			if (*end || errno || n < 1 || n > SHARD_MAX_SLOTS)
				return bad(o, accepts(o));
			r->slots = (int)n;
		} else if (strcmp(o, "--work-ms") == 0) {
			r->work_ms = strtod(v, &end);
			if (*end || errno || !(r->work_ms >= 0 && r->work_ms <= 1000))
				return bad(o, accepts(o));
		}
	}
	return 0;
}

/* The database's message, or a nudge when shard.c failed without one. */
static const char *why(struct kit_db *db)
{
	const char *m = kit_db_errmsg(db);
	return m && m[0] ? m : "failed without a database error (is shard.c still a TODO?)";
}

static uint32_t load_rand(void *arg)
{
	return (uint32_t)(kit_load_rand(arg) >> 32);
}

static void pause_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* One like: the write, then the app's work, then commit. */
static int like(void *arg, struct kit_load_thread *th)
{
	const struct run *r = arg;
	int rc = r->work_ms > 0 ? kit_db_begin(th->db) : 0;
	if (rc != 0)
		return rc;
	if (r->write == WRITE_NAIVE)
		rc = kit_db_exec(th->db, "UPDATE lab02_naive SET n = n + 1 WHERE post_id = 1", 0, NULL);
	else
		rc = shard_increment(th->db, POST, load_rand, th);
	if (r->work_ms > 0) {
		if (rc == 0)
			pause_ms(r->work_ms);
		rc = rc == 0 ? kit_db_commit(th->db) : (kit_db_rollback(th->db), rc);
	}
	return rc;
}

/* How long the write's lock is held: from the start of the write to the
 * end of its commit (the end of the statement when there is no
 * transaction), summed over the calls of one thread. */
struct hold {
	bool autocommit;
	int64_t since_ns;        /* 0 when no write is in progress */
	int64_t total_ns, n;
};

static void hold_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct hold *h = arg;
	(void)sql;
	if (ev == KIT_DB_STMT_START && h->since_ns == 0)
		h->since_ns = t_ns;
	else if (h->since_ns && (ev == KIT_DB_TX_COMMIT || (h->autocommit && ev == KIT_DB_STMT_END))) {
		h->total_ns += t_ns - h->since_ns;
		h->n++;
		h->since_ns = 0;
	}
}

static struct hold one_thread_hold;

static int watch_hold(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	kit_db_set_hook(th->db, hold_hook, &one_thread_hold);
	return 0;
}

static int measure(struct run *r, int threads, double seconds, const char *label,
                   struct kit_load_result *res)
{
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = r->url;
	c.threads = threads;
	c.seconds = seconds;
	c.label = label;
	if (threads == 1) {
		one_thread_hold = (struct hold){ .autocommit = r->work_ms == 0 };
		c.thread_init = watch_hold;
	}
	int rc = kit_load_run(&c, like, r, res);
	if (rc != 0)
		fprintf(stderr, "hotrow lab run 02: %s: %s\n", label, res->error);
	return rc;
}

/* The engine's view: T clients, each would send one like per hold if it
 * never waited, on `rows` rows with the measured hold. */
static void predict(const struct run *r, int rows, double hold_ms, struct sim_summary *out)
{
	struct sim_config c;
	sim_config_default(&c);
	c.strategy = rows > 1 ? SIM_SHARDED : SIM_NAIVE;
	c.rows = rows;
	c.slot = SIM_SLOT_RANDOM;
	c.rps = r->threads * 1000.0 / hold_ms;
	c.arrivals = SIM_ARRIVE_CONSTANT;
	c.hold_ms = hold_ms;
	c.hold_dist = SIM_DIST_CONST;
	c.pool = r->threads;
	c.pool_timeout_ms = 0;
	c.client_timeout_ms = 0;
	c.unrelated_rps = 0;
	c.seconds = r->seconds < 5 ? r->seconds : 5;
	char err[200];
	if (sim_config_check(&c, err, sizeof err) != 0) {
		memset(out, 0, sizeof *out);
		fprintf(stderr, "hotrow lab run 02: engine: %s\n", err);
		return;
	}
	struct sim *s = sim_new(&c);
	sim_run(s);
	sim_summary(s, out);
	sim_free(s);
}

static void row_measured(const char *name, const struct kit_load_result *m)
{
	printf("  %-24s %9.0f/s %9.2f %9.2f %9.2f %8lld\n", name, m->throughput_per_s,
	       m->latency_ms.p50, m->latency_ms.p99, m->latency_ms.mean, (long long)m->failed);
}

static void row_predicted(const char *name, const struct sim_summary *p, int threads)
{
	/* Closed loop: each client always has one like in flight, so by
	 * Little's law its mean latency is threads / throughput. */
	double mean = p->throughput_per_s > 0 ? threads * 1000.0 / p->throughput_per_s : 0;
	printf("  %-24s %9.0f/s %9s %9s %9.2f %8s   ceiling %.0f/s\n", name, p->throughput_per_s,
	       "", "", mean, "", p->theory.ceiling_per_s);
}

/* Fresh tables: the naive row at 0, the post's slots empty, N = slots. */
static int prepare(struct kit_db *db, int slots)
{
	int rc = shard_setup(db);
	if (rc == 0)
		rc = kit_db_exec(db,
			"CREATE TABLE IF NOT EXISTS lab02_naive (post_id bigint PRIMARY KEY, n bigint NOT NULL);"
			"DELETE FROM lab02_naive; INSERT INTO lab02_naive VALUES (1, 0);"
			"DELETE FROM like_slots WHERE post_id = 1;"
			"DELETE FROM like_slot_config WHERE post_id = 1", 0, NULL);
	if (rc == 0)
		rc = shard_resize(db, POST, slots);
	return rc;
}

int main(int argc, char **argv)
{
	struct run r = { "sqlite:.hotrow/lab02.db", 16, 5, 16, 2, WRITE_NAIVE };
	int rc = parse(argc, argv, &r);
	if (rc != 0)
		return rc == 1 ? 0 : rc;
	if (strncmp(r.url, "sqlite:.hotrow/", 15) == 0)
		mkdir(".hotrow", 0777);

	struct kit_db *db;
	if (kit_db_open(&db, r.url) != 0 || prepare(db, r.slots) != 0) {
		fprintf(stderr, "hotrow lab run 02: %s\n", why(db));
		kit_db_close(db);
		return 1;
	}
	bool lite = kit_db_engine(db) == KIT_DB_SQLITE;
	printf("Lab 02, sharded counters, on %s: %d threads, %g s per run, "
	       "%.1f ms of work in each like's transaction\n",
	       lite ? "SQLite" : "PostgreSQL", r.threads, r.seconds, r.work_ms);

	struct kit_load_result one, naive, sharded;
	if (measure(&r, 1, r.seconds < 1 ? r.seconds : 1, "hold (1 thread)", &one) != 0 ||
	    measure(&r, r.threads, r.seconds, "naive row", &naive) != 0)
		goto fail;
	r.write = WRITE_SHARDED;
	if (measure(&r, r.threads, r.seconds, "sharded", &sharded) != 0)
		goto fail;

	int64_t total = -1;
	if (shard_read(db, POST, &total) != 0)
		goto fail;
	double hold = one_thread_hold.n ? one_thread_hold.total_ns / 1e6 / one_thread_hold.n
	                                : one.latency_ms.mean;
	struct sim_summary p1, pn;
	predict(&r, 1, hold, &p1);
	/* SQLite has one write lock for the whole file: N rows are still one
	 * lock, so the engine is asked about one row either way. */
	predict(&r, lite ? 1 : r.slots, hold, &pn);

	printf("lock hold per like (write to end of commit), 1 thread: %.2f ms; "
	       "one row's ceiling %.0f/s\n\n", hold, hold > 0 ? 1000 / hold : 0);
	printf("  %-24s %11s %9s %9s %9s %8s\n", "", "throughput", "p50 ms", "p99 ms", "mean ms", "failed");
	char name[64];
	row_measured("naive, 1 row", &naive);
	snprintf(name, sizeof name, "sharded, %d slots", r.slots);
	row_measured(name, &sharded);
	row_predicted("engine, 1 row", &p1, r.threads);
	snprintf(name, sizeof name, "engine, %d %s", lite ? 1 : r.slots,
	         lite ? "lock (SQLite)" : "rows");
	row_predicted(name, &pn, r.threads);
	printf("\nsharded count %lld for %lld likes acknowledged: %s\n", (long long)total,
	       (long long)sharded.ok, total == sharded.ok ? "exact" : "NOT EXACT");
	if (lite)
		printf("SQLite lets one transaction write at a time, whatever the row: see §6.\n");
	kit_db_close(db);
	return total == sharded.ok ? 0 : 1;
fail:
	fprintf(stderr, "hotrow lab run 02: %s\n", why(db));
	kit_db_close(db);
	return 1;
}
