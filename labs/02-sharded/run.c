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
#include "kit/predict.h"
#include "kit/runopt.h"
#include "kit/span.h"
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

/* The options, from one table: KIT_RUNOPT_OK to run, _HELP or _BAD not to. */
static int parse(int argc, char **argv, struct run *r)
{
	const struct kit_runopt table[] = {
		KIT_RUNOPT_DB(&r->url, "database (default sqlite:.hotrow/lab02.db)"),
		KIT_RUNOPT_THREADS(&r->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&r->seconds, "length of each measured run (default 5)"),
		{ .name = "--slots", .arg = "N", .kind = KIT_RUNOPT_INT, .dest = &r->slots,
		  .min = 1, .max = SHARD_MAX_SLOTS, .accepts = "a whole number from 1 to 1024",
		  .help = "slots for the sharded run, 1..1024 (default 16)" },
		{ .name = "--work-ms", .arg = "W", .kind = KIT_RUNOPT_DOUBLE, .dest = &r->work_ms,
		  .min = 0, .max = 1000, .accepts = "milliseconds from 0 to 1000",
		  .help = "app work inside each like's transaction, after the write,\n"
		          "0..1000 (default 2; 0 = one autocommit statement)" },
	};
	const struct kit_runopt_spec spec = { .cmd = "hotrow lab run 02", .opts = table,
	                                      .n = sizeof table / sizeof table[0] };
	return kit_runopt_parse(&spec, argc, argv);
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

/* How long the write's lock is held, seen with one thread: from the start
 * of the write to the end of its commit (the end of the statement when
 * there is no transaction). */
static struct kit_span one_thread_hold;

static int watch_hold(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return kit_span_thread_init(&one_thread_hold, th);
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
		kit_span_init(&one_thread_hold, KIT_DB_STMT_START, NULL,
		              r->work_ms == 0 ? KIT_DB_STMT_END : KIT_DB_TX_COMMIT);
		c.thread_init = watch_hold;
		c.thread_done = kit_span_thread_done;
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
	kit_predict_config(&c, rows > 1 ? SIM_SHARDED : SIM_NAIVE, r->threads * 1000.0 / hold_ms,
	                   hold_ms, r->threads);
	c.rows = rows;
	c.slot = SIM_SLOT_RANDOM;
	c.seconds = r->seconds < 5 ? r->seconds : 5;
	kit_predict_run(&c, out, "hotrow lab run 02");
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
	if (rc != KIT_RUNOPT_OK)
		return rc == KIT_RUNOPT_HELP ? 0 : 2;
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
	double hold = kit_span_mean_ms(&one_thread_hold);
	if (hold == 0)
		hold = one.latency_ms.mean;
	struct sim_summary p1, pn;
	predict(&r, 1, hold, &p1);
	/* SQLite has one write lock for the whole file: N rows are still one
	 * lock, so the engine is asked about one row either way. */
	predict(&r, lite ? 1 : r.slots, hold, &pn);

	printf("lock hold per like (write to end of commit), 1 thread: %.2f ms; "
	       "one row's ceiling %.0f/s\n\n", hold, hold > 0 ? 1000 / hold : 0);
	kit_predict_table_header();
	char name[64];
	kit_predict_table_measured("naive, 1 row", &naive);
	snprintf(name, sizeof name, "sharded, %d slots", r.slots);
	kit_predict_table_measured(name, &sharded);
	kit_predict_table_predicted("engine, 1 row", &p1, r.threads, true);
	snprintf(name, sizeof name, "engine, %d %s", lite ? 1 : r.slots,
	         lite ? "lock (SQLite)" : "rows");
	kit_predict_table_predicted(name, &pn, r.threads, true);
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
