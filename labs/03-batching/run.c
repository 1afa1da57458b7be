/*
 * run.c: `hotrow lab run 03`, one hot row against append + rollup and
 * against coalescing in the app, measured.
 *
 * Three runs of T threads for S seconds on the database given. Each like
 * is a request with --work-ms of pretend application work:
 *   naive     BEGIN; UPDATE the post's row; work; COMMIT
 *   append    BEGIN; batch_record_like; work; COMMIT, and a rollup every
 *             --flush-ms on a connection of its own
 *   coalesce  work; batch_acc_add, and a flush every --flush-ms
 * After each fix it rolls up or flushes what is left and checks that the
 * count equals the likes acknowledged. Before each run one thread alone
 * measures the parts of a like (the lock hold, the time outside it, the
 * CPU), and the engine predicts the run from those parts, the work and
 * the flush interval only; the prediction is printed beside the run.
 *
 * Interface: build/labs/03-batching/run-solution [--db URL] [--threads T]
 *            [--seconds S] [--work-ms W] [--flush-ms F]; exit 0, 1 if the
 *            database failed or a count was off, 2 for bad usage.
 */
#include <pthread.h>
#include <stdatomic.h>
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
#include "labs/03-batching/batch.h"
#include "util/clock.h"

enum mode { NAIVE, APPEND, COALESCE };

struct run {
	const char *url;
	int threads;
	double seconds;
	double work_ms;
	double flush_ms;
	enum mode mode;
	int64_t post;                /* a fresh post per run */
	struct batch_acc *acc;       /* COALESCE */
};

/* The options, from one table: KIT_RUNOPT_OK to run, _HELP or _BAD not to. */
static int parse(int argc, char **argv, struct run *r)
{
	const struct opt table[] = {
		KIT_RUNOPT_DB(&r->url, "database (default sqlite:.hotrow/lab03.db)"),
		KIT_RUNOPT_THREADS(&r->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&r->seconds, "length of each measured run (default 5)"),
		{ .name = "work-ms", .arg = "W", .kind = OPT_DOUBLE, .dest = &r->work_ms,
		  .min = 0, .max = 1000, .accepts = "milliseconds from 0 to 1000",
		  .help = "app work in each like, 0..1000 (default 2); inside the\n"
		          "transaction for naive and append, outside for coalesce" },
		{ .name = "flush-ms", .arg = "F", .kind = OPT_DOUBLE, .dest = &r->flush_ms,
		  .min = 1, .max = 60000, .accepts = "milliseconds from 1 to 60000",
		  .help = "rollup / flush interval, 1..60000 (default 100)" },
	};
	const struct kit_runopt_spec spec = { .cmd = "hotrow lab run 03", .opts = table,
	                                      .n = sizeof table / sizeof table[0] };
	return kit_runopt_parse(&spec, argc, argv);
}

static void pause_ms(double ms)
{
	util_sleep_ns((int64_t)(ms * 1e6));
}

/* One like, as the mode says. */
static int like(void *arg, struct kit_load_thread *th)
{
	const struct run *r = arg;
	if (r->mode == COALESCE) {
		pause_ms(r->work_ms);
		return batch_acc_add(r->acc, r->post, 1);
	}
	int rc = kit_db_begin(th->db);
	if (rc != 0)
		return rc;
	if (r->mode == NAIVE) {
		char post[24];
		snprintf(post, sizeof post, "%lld", (long long)r->post);
		const char *p[] = { post };
		rc = kit_db_exec(th->db, "UPDATE lab03_naive SET n = n + 1 WHERE post_id = $1", 1, p);
	} else {
		rc = batch_record_like(th->db, r->post, (int64_t)th->index * 1000000000 + th->iter);
	}
	if (rc == 0)
		pause_ms(r->work_ms);
	if (rc != 0) {
		kit_db_rollback(th->db);
		return rc;
	}
	return kit_db_commit(th->db);
}

/* ---- the lock hold, seen through the db hook ---- */

/* On PostgreSQL from the end of the write (the row lock is taken by then)
 * to the end of its commit; on SQLite from BEGIN IMMEDIATE, which takes
 * the file's write lock, to the end of COMMIT. */
static struct drv_span hold;

static void hold_init(bool lite)
{
	if (lite)
		drv_span_init(&hold, KIT_DB_TX_BEGIN, NULL, KIT_DB_TX_COMMIT);
	else
		drv_span_init(&hold, KIT_DB_STMT_END, NULL, KIT_DB_TX_COMMIT);
}

/* A fresh post for the next run (and its naive row). */
static int next_post(struct run *r, struct kit_db *db)
{
	r->post++;
	char post[24];
	snprintf(post, sizeof post, "%lld", (long long)r->post);
	const char *p[] = { post };
	if (r->mode == NAIVE &&
	    kit_db_exec(db, "INSERT INTO lab03_naive (post_id, n) VALUES ($1, 0)", 1, p) != 0) {
		drv_fail_db("hotrow lab run 03", NULL, db);
		return -1;
	}
	return 0;
}

/* ---- the background rollup / flush ---- */

struct background {
	struct run *r;
	struct kit_db *db;
	atomic_bool stop;
	int failures;
	char error[256];
};

static int catch_up(struct run *r, struct kit_db *db)
{
	if (r->mode == COALESCE)
		return batch_acc_flush(r->acc, db);
	int64_t moved = 1;
	int rc = 0;
	while (rc == 0 && moved > 0)
		rc = batch_rollup(db, &moved);
	return rc;
}

static void *background_main(void *arg)
{
	struct background *b = arg;
	while (!atomic_load(&b->stop)) {
		pause_ms(b->r->flush_ms);
		if (catch_up(b->r, b->db) != 0 && b->failures++ == 0)
			snprintf(b->error, sizeof b->error, "%s", kit_db_errmsg(b->db));
	}
	return NULL;
}

/* Run the mode with T threads on a fresh post; fill *m and, for the
 * fixes, check the count. Returns 0, or 1 on any failure. */
static int measure(struct run *r, struct kit_db *db, const char *label, struct drv_run *m)
{
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = r->url;
	c.threads = r->threads;
	c.seconds = r->seconds;
	c.label = label;
	if (next_post(r, db) != 0)
		return 1;
	struct kit_load_result *res = &m->r;

	struct background b = { .r = r };
	pthread_t tid;
	bool bg = r->mode != NAIVE;
	if (bg) {
		if (kit_db_open(&b.db, r->url) != 0) {
			drv_fail_db("hotrow lab run 03", label, b.db);
			kit_db_close(b.db);
			return 1;
		}
		atomic_init(&b.stop, false);
		if (pthread_create(&tid, NULL, background_main, &b) != 0) {
			fprintf(stderr, "hotrow lab run 03: %s: cannot start the background %s thread\n",
			        label, r->mode == COALESCE ? "flush" : "rollup");
			kit_db_close(b.db);
			return 1;
		}
	}
	int rc = drv_run_load(&c, r->mode == COALESCE ? NULL : &hold, like, r, m);
	if (bg) {
		atomic_store(&b.stop, true);
		pthread_join(tid, NULL);
		kit_db_close(b.db);
	}
	if (rc != 0)
		return drv_fail("hotrow lab run 03", label, res->error);
	if (b.failures) {
		char what[160];
		snprintf(what, sizeof what, "%s: %d background %s failed, first", label, b.failures,
		         r->mode == COALESCE ? "flushes" : "rollups");
		return drv_fail("hotrow lab run 03", what, b.error);
	}
	if (!bg)
		return 0;
	int64_t n = -1;
	if (catch_up(r, db) != 0 || batch_count(db, r->post, &n) != 0)
		return drv_fail_db("hotrow lab run 03", label, db);
	if (n != res->ok) {
		fprintf(stderr, "hotrow lab run 03: %s: count %lld for %lld likes acknowledged\n",
		        label, (long long)n, (long long)res->ok);
		return 1;
	}
	return 0;
}

/* One thread alone on a fresh post, then the engine's prediction for
 * r->threads from those parts (and, for coalesce, the naive write's parts
 * for its flushes). */
static int predict(struct run *r, struct kit_db *db, bool lite, const struct drv_parts *naive,
                   struct drv_parts *alone, struct drv_prediction *p)
{
	static const char *const names[] = { "naive row", "append", "coalesce" };
	if (next_post(r, db) != 0)
		return -1;
	struct drv_probe pr;
	drv_probe_default(&pr);
	pr.url = r->mode == COALESCE ? NULL : r->url;   /* coalescing takes no lock */
	pr.hold = r->mode == COALESCE ? NULL : &hold;
	pr.label = names[r->mode];
	if (drv_probe_run(&pr, like, r, alone) != 0) {
		drv_fail("hotrow lab run 03", NULL, alone->error);
		return -1;
	}
	/* On SQLite every insert still takes the one write lock: the engine's
	 * append model (no lock between inserts) would flatter it. */
	enum sim_strategy s = r->mode == NAIVE ? SIM_NAIVE
	                    : r->mode == APPEND ? (lite ? SIM_NAIVE : SIM_APPEND) : SIM_COALESCE;
	struct drv_inputs in;
	drv_inputs_init(&in, s, r->threads, alone);
	in.work_ms = r->mode == COALESCE ? 0 : r->work_ms;   /* coalesce: outside any lock */
	in.flush_ms = r->flush_ms;
	in.flush = naive ? *naive : *alone;
	in.seconds = r->seconds;
	if (drv_inputs_wal(&in, r->url, "hotrow lab run 03") != 0)
		return -1;
	return drv_predict(&in, p, "hotrow lab run 03");
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
	printf("  the engine from the parts alone:\n");
	drv_compare(p, m, "likes");
}

int main(int argc, char **argv)
{
	struct run r = { "sqlite:.hotrow/lab03.db", 16, 5, 2, 100, NAIVE, 0, NULL };
	int rc = parse(argc, argv, &r);
	if (rc != KIT_RUNOPT_OK)
		return rc == KIT_RUNOPT_HELP ? 0 : 2;
	if (strncmp(r.url, "sqlite:.hotrow/", 15) == 0)
		mkdir(".hotrow", 0777);

	struct kit_db *db;
	int64_t last = 0;
	if (kit_db_open(&db, r.url) != 0 || batch_setup(db) != 0 ||
	    kit_db_exec(db, "CREATE TABLE IF NOT EXISTS lab03_naive "
	                    "(post_id bigint PRIMARY KEY, n bigint NOT NULL)", 0, NULL) != 0 ||
	    kit_db_query_int(db, "SELECT coalesce(max(post_id), 0) FROM "
	                         "(SELECT post_id FROM lab03_naive UNION ALL "
	                         "SELECT post_id FROM likes) AS seen", 0, NULL, &last) != 0) {
		drv_fail_db("hotrow lab run 03", NULL, db);
		kit_db_close(db);
		return 1;
	}
	r.post = last;
	r.acc = batch_acc_new();
	bool lite = kit_db_engine(db) == KIT_DB_SQLITE;
	printf("Lab 03, batching, on %s: %d threads, %g s per run, %.1f ms of work per like, "
	       "rollup/flush every %.0f ms\n", lite ? "SQLite" : "PostgreSQL", r.threads,
	       r.seconds, r.work_ms, r.flush_ms);

	struct drv_parts alone[3];
	struct drv_prediction p[3];
	struct drv_run naive, append, coalesce;
	rc = r.acc == NULL;
	if (rc != 0)
		fprintf(stderr, "hotrow lab run 03: batch_acc_new returned NULL (not written yet?)\n");
	hold_init(lite);
	if (rc == 0)
		rc = predict(&r, db, lite, NULL, &alone[NAIVE], &p[NAIVE]) != 0 ||
		     measure(&r, db, "naive row", &naive) != 0;
	r.mode = APPEND;
	if (rc == 0)
		rc = predict(&r, db, lite, &alone[NAIVE], &alone[APPEND], &p[APPEND]) != 0 ||
		     measure(&r, db, "append + rollup", &append) != 0;
	r.mode = COALESCE;
	if (rc == 0)
		rc = predict(&r, db, lite, &alone[NAIVE], &alone[COALESCE], &p[COALESCE]) != 0 ||
		     measure(&r, db, "coalesce", &coalesce) != 0;
	drv_span_destroy(&hold);
	if (rc != 0) {
		batch_acc_free(r.acc);
		kit_db_close(db);
		return 1;
	}

	report("naive: BEGIN; UPDATE the post's row; work; COMMIT", &alone[NAIVE], &p[NAIVE], &naive);
	report(lite ? "append + rollup: BEGIN; INSERT the like; work; COMMIT (SQLite: one lock)"
	            : "append + rollup: BEGIN; INSERT the like; work; COMMIT",
	       &alone[APPEND], &p[APPEND], &append);
	report("coalesce in the app: work; add to the buffer, flushed every F ms",
	       &alone[COALESCE], &p[COALESCE], &coalesce);
	printf("\ncounts after the last rollup and flush: exact (%lld and %lld likes)\n",
	       (long long)append.r.ok, (long long)coalesce.r.ok);
	if (lite)
		printf("SQLite lets one transaction write at a time: append still queues; see Lab 02, §6.\n");
	batch_acc_free(r.acc);
	kit_db_close(db);
	return 0;
}
