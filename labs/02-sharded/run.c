/*
 * run.c: `hotrow lab run 02`, one hot row against N slot rows, measured.
 *
 * Drives T threads for S seconds twice on the database given: first every
 * like updates one counter row, then every like goes through your
 * shard_increment(). Each like is a transaction that holds its lock for
 * --work-ms of pretend application work after the write (the slow part of
 * a real request), so the row-lock ceiling shows above the noise of a
 * small machine. Before each run, one thread alone measures the parts of
 * a like (the lock hold, the time outside it, the CPU), and the engine
 * predicts the run from those parts only; the prediction is printed
 * beside the measurement.
 *
 * Interface: build/labs/02-sharded/run-solution [--db URL] [--threads T]
 *            [--seconds S] [--slots N] [--work-ms W]; exit 0, 1 if the
 *            database failed, 2 for bad usage.
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
#include "labs/02-sharded/shard.h"
#include "util/clock.h"

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
	const struct opt table[] = {
		KIT_RUNOPT_DB(&r->url, "database (default sqlite:.hotrow/lab02.db)"),
		KIT_RUNOPT_THREADS(&r->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&r->seconds, "length of each measured run (default 5)"),
		{ .name = "slots", .arg = "N", .kind = OPT_INT, .dest = &r->slots,
		  .min = 1, .max = SHARD_MAX_SLOTS,
		  .help = "slots for the sharded run, 1..1024 (default 16)" },
		{ .name = "work-ms", .arg = "W", .kind = OPT_DOUBLE, .dest = &r->work_ms,
		  .min = 0, .max = 1000, .accepts = "milliseconds from 0 to 1000",
		  .help = "app work inside each like's transaction, after the write,\n"
		          "0..1000 (default 2; 0 = one autocommit statement)" },
	};
	const struct kit_runopt_spec spec = { .cmd = "hotrow lab run 02", .opts = table,
	                                      .n = sizeof table / sizeof table[0] };
	return kit_runopt_parse(&spec, argc, argv);
}

static uint32_t load_rand(void *arg)
{
	return (uint32_t)(kit_load_rand(arg) >> 32);
}

static void pause_ms(double ms)
{
	util_sleep_ns((int64_t)(ms * 1e6));
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

/* How long the write's lock is held: on PostgreSQL from the end of the
 * write (the row lock is taken by then; its start may still be queueing
 * for it) to the end of its commit, on SQLite from BEGIN IMMEDIATE (which
 * takes the file's lock) to the end of COMMIT. Without work each like is
 * one autocommit statement, whose lock the client cannot see: the probe
 * then takes a bare round trip (SELECT 1) as the part outside the lock. */
static struct drv_span hold;

static void hold_init(bool lite)
{
	if (lite)
		drv_span_init(&hold, KIT_DB_TX_BEGIN, NULL, KIT_DB_TX_COMMIT);
	else
		drv_span_init(&hold, KIT_DB_STMT_END, NULL, KIT_DB_TX_COMMIT);
}

/* One thread alone, then the engine's prediction for r->threads. */
static int predict(struct run *r, bool lite, int rows, struct drv_parts *alone,
                   struct drv_prediction *p)
{
	struct drv_probe pr;
	drv_probe_default(&pr);
	pr.url = r->url;
	if (r->work_ms > 0)
		pr.hold = &hold;
	else
		pr.bare_sql = "SELECT 1";
	pr.label = r->write == WRITE_NAIVE ? "naive row" : "sharded";
	if (drv_probe_run(&pr, like, r, alone) != 0) {
		drv_fail("hotrow lab run 02", NULL, alone->error);
		return -1;
	}
	/* SQLite has one write lock for the whole file: N rows are still one
	 * lock, so the engine is asked about one row either way. */
	struct drv_inputs in;
	drv_inputs_init(&in, rows > 1 && !lite ? SIM_SHARDED : SIM_NAIVE, r->threads, alone);
	in.rows = lite ? 1 : rows;
	in.work_ms = r->work_ms;
	in.seconds = r->seconds;
	if (drv_inputs_wal(&in, r->url, "hotrow lab run 02") != 0)
		return -1;
	return drv_predict(&in, p, "hotrow lab run 02");
}

static int measure(struct run *r, const char *label, struct drv_run *m)
{
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = r->url;
	c.threads = r->threads;
	c.seconds = r->seconds;
	c.label = label;
	int rc = drv_run_load(&c, r->work_ms > 0 ? &hold : NULL, like, r, m);
	if (rc != 0)
		drv_fail("hotrow lab run 02", label, m->r.error);
	return rc;
}

static void report(const char *title, const struct drv_parts *alone,
                   const struct drv_prediction *p, const struct drv_run *m)
{
	printf("\n%s\n", title);
	drv_print_parts("a like", alone);
	if (m->hold_ms > 0)
		printf("    the hold with %d threads: %.3f ms mean (measured under load)\n",
		       m->r.threads, m->hold_ms);
	printf("  %d threads, measured: %lld likes ok, %lld failed\n", m->r.threads,
	       (long long)m->r.ok, (long long)m->r.failed);
	printf("  the engine from the parts alone (ceiling %.0f/s):\n", p->ceiling_per_s);
	drv_compare(p, m, "likes");
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
		drv_fail_db("hotrow lab run 02", NULL, db);
		kit_db_close(db);
		return 1;
	}
	bool lite = kit_db_engine(db) == KIT_DB_SQLITE;
	printf("Lab 02, sharded counters, on %s: %d threads, %g s per run, "
	       "%.1f ms of work in each like's transaction\n",
	       lite ? "SQLite" : "PostgreSQL", r.threads, r.seconds, r.work_ms);

	hold_init(lite);
	struct drv_parts naive_alone, sharded_alone;
	struct drv_prediction p1, pn;
	struct drv_run naive, sharded;
	if (predict(&r, lite, 1, &naive_alone, &p1) != 0 || measure(&r, "naive row", &naive) != 0)
		goto fail;
	r.write = WRITE_SHARDED;
	if (predict(&r, lite, r.slots, &sharded_alone, &pn) != 0 ||
	    measure(&r, "sharded", &sharded) != 0)
		goto fail;

	int64_t total = -1;
	if (shard_read(db, POST, &total) != 0) {
		drv_fail_db("hotrow lab run 02", "shard_read", db);
		goto fail;
	}
	report("naive: every like updates one row", &naive_alone, &p1, &naive);
	char title[96];
	snprintf(title, sizeof title, "sharded: shard_increment() over %d slots%s", r.slots,
	         lite ? " (SQLite: still one lock)" : "");
	report(title, &sharded_alone, &pn, &sharded);
	int64_t acked = sharded_alone.calls + sharded.r.ok;
	printf("\nsharded count %lld for %lld likes acknowledged: %s\n", (long long)total,
	       (long long)acked, total == acked ? "exact" : "NOT EXACT");
	if (lite)
		printf("SQLite lets one transaction write at a time, whatever the row: see §6.\n");
	drv_span_destroy(&hold);
	kit_db_close(db);
	return total == acked ? 0 : 1;
fail:    /* the failure is on stderr already, in one line */
	drv_span_destroy(&hold);
	kit_db_close(db);
	return 1;
}
