/*
 * run.c: `hotrow lab run 08`, what the engine does under a hot row,
 * measured with your functions.
 *
 * One section per part of the handout, each a few short runs on the
 * database given, printed beside what the handout's arithmetic predicts
 * from the inputs (the page size, the row's width, the number of
 * updates) and the ratio of the two. On SQLite only the parts that exist
 * there run (§2 as the WAL a reader pins, §7); the others say so.
 *
 * Interface: build/labs/08-engine/run-solution [--db URL] [--threads T]
 *            [--seconds S] [--updates U]; exit 0, 1 if the database
 *            failed or a count came out wrong, 2 for bad usage.
 * It drops and recreates the tables counters, posts, likes and events.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kit/db.h"
#include "kit/load.h"
#include "labs/driver/fail.h"
#include "labs/driver/runopt.h"
#include "labs/driver/span.h"
#include "labs/08-engine/inside.h"

#define CMD "hotrow lab run 08"

struct opts {
	const char *url;
	int threads;
	double seconds;
	int updates;
};

static int parse(int argc, char **argv, struct opts *o)
{
	const struct opt table[] = {
		KIT_RUNOPT_DB(&o->url, "database (default sqlite:.hotrow/lab08.db); its counters,\n"
		                       "posts, likes and events tables are dropped and made afresh"),
		KIT_RUNOPT_THREADS(&o->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&o->seconds, "length of each loaded run (default 3)"),
		{ .name = "updates", .arg = "U", .kind = OPT_INT, .dest = &o->updates,
		  .min = 100, .max = 1000000,
		  .help = "updates of the counter in §2 (default 10000)" },
	};
	const struct kit_runopt_spec spec = { .cmd = CMD, .opts = table,
	                                      .n = sizeof table / sizeof table[0] };
	return kit_runopt_parse(&spec, argc, argv);
}

static struct kit_db *admin;   /* the driver's own connection */
static const struct opts *opt;

static bool stopped;   /* the first error is on stderr: print no figure after it */

/* Say the first error in one line (once the database went away, every
 * call fails: the rest say nothing) and stop. */
static void stop(const char *what, const char *msg)
{
	if (!stopped)
		drv_fail(CMD, what, msg);
	stopped = true;
}

static void stop_db(const char *what, const struct kit_db *db)
{
	if (!stopped)
		drv_fail_db(CMD, what, db);
	stopped = true;
}

/* A number the server counts; after a failure (-1), stopped is set and
 * the caller prints nothing. */
static int64_t num(const char *sql)
{
	int64_t v = -1;
	if (kit_db_query_int(admin, sql, 0, NULL, &v) != 0)
		stop_db(NULL, admin);
	return v;
}

static int copy_text(void *arg, int ncols, const char *const *values)
{
	snprintf(arg, 64, "%s", ncols > 0 && values[0] ? values[0] : "");
	return 0;
}

/* A setting of the server, as SHOW prints it; "?" if it cannot be read. */
static const char *setting(const char *name, char buf[64])
{
	char sql[80];
	snprintf(sql, sizeof sql, "SHOW %s", name);
	if (kit_db_query(admin, sql, 0, NULL, copy_text, buf) != 0)
		snprintf(buf, 64, "?");
	return buf;
}

static int run_sql(const char *sql)
{
	int rc = kit_db_exec(admin, sql, 0, NULL);
	if (rc != 0)
		stop_db(NULL, admin);
	return rc;
}

/* The lab's tables, empty but for counter 1 and post 1. */
static int fresh(void)
{
	return run_sql("DROP TABLE IF EXISTS likes; DROP TABLE IF EXISTS posts;"
	               " DROP TABLE IF EXISTS counters; DROP TABLE IF EXISTS events") ||
	       run_sql(INSIDE_SCHEMA) ||
	       run_sql("INSERT INTO counters (id) VALUES (1); INSERT INTO posts (id) VALUES (1)");
}

static int load(kit_load_op_fn *op, void *arg, const char *label, int threads,
                kit_load_thread_fn *init, kit_load_thread_fn *done, struct kit_load_result *r)
{
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = opt->url;
	c.threads = threads;
	c.seconds = opt->seconds;
	c.label = label;
	c.thread_init = init;
	c.thread_done = done;
	int rc = kit_load_run(&c, op, arg, r);
	if (rc != 0)
		stop(label, r->error);
	return rc;
}

/* A function of yours that failed: say which, and why if the database said. */
static int your_call(int rc, const char *what)
{
	if (rc != 0) {
		char said[96];
		snprintf(said, sizeof said, "%s returned %d", what, rc);
		stop_db(said, admin);
	}
	return rc;
}

static double ratio(double measured, double predicted)
{
	return predicted > 0 ? measured / predicted : 0;
}

/* ---- §2 Versions ---- */

/* U updates of counter 1 from the driver's connection, each its own
 * transaction, then its statistics flushed so inside_versions sees them. */
static int bump(int updates)
{
	char sql[200];
	if (kit_db_engine(admin) == KIT_DB_SQLITE) {
		for (int i = 0; i < updates; i++)
			if (run_sql("UPDATE counters SET n = n + 1 WHERE id = 1") != 0)
				return -1;
		return 0;
	}
	snprintf(sql, sizeof sql, "DO $$ BEGIN FOR i IN 1..%d LOOP"
	         " UPDATE counters SET n = n + 1 WHERE id = 1; COMMIT; END LOOP; END $$", updates);
	return run_sql(sql) || run_sql("SELECT pg_stat_force_next_flush()");
}

static int versions_row(const char *name, const struct inside_versions *v)
{
	int64_t index_kb = num("SELECT pg_indexes_size('counters') / 1024");
	if (stopped)
		return -1;
	printf("  %-32s %7lld %7lld %7lld %6lld %8lld %8lld\n", name, (long long)v->updates,
	       (long long)v->hot_updates, (long long)v->dead, (long long)v->heap_pages,
	       (long long)index_kb, (long long)v->buffers);
	return 0;
}

/* Open a transaction on its own connection and take its snapshot. */
static struct kit_db *old_snapshot(const char *begin)
{
	struct kit_db *db;
	int64_t n;
	if (kit_db_open(&db, opt->url) != 0 || kit_db_exec(db, begin, 0, NULL) != 0 ||
	    kit_db_query_int(db, "SELECT n FROM counters WHERE id = 1", 0, NULL, &n) != 0) {
		stop_db("the old snapshot", db);
		kit_db_close(db);
		return NULL;
	}
	return db;
}

static int versions_pg(void)
{
	struct inside_versions plain, indexed, held, vacuumed;
	int u = opt->updates;
	printf("§2 Versions: %d updates of one counter, each its own transaction\n", u);
	printf("  %-32s %7s %7s %7s %6s %8s %8s\n", "", "updates", "HOT", "dead", "pages",
	       "index KB", "buffers");
	if (fresh() || bump(u) || your_call(inside_versions(admin, 1, &plain), "inside_versions()"))
		return -1;
	if (versions_row("counter not indexed", &plain))
		return -1;
	if (fresh() || run_sql("CREATE INDEX counters_n ON counters (n)") || bump(u) ||
	    your_call(inside_versions(admin, 1, &indexed), "inside_versions()"))
		return -1;
	if (versions_row("counter indexed", &indexed))
		return -1;
	if (fresh())
		return -1;
	struct kit_db *old = old_snapshot("BEGIN ISOLATION LEVEL REPEATABLE READ");
	int rc = old == NULL || bump(u) ||
	         your_call(inside_versions(admin, 1, &held), "inside_versions()") ||
	         run_sql("VACUUM counters") ||
	         your_call(inside_versions(admin, 1, &vacuumed), "inside_versions()");
	kit_db_close(old);
	if (rc != 0)
		return -1;
	if (versions_row("not indexed, old snapshot open", &held) ||
	    versions_row("... then VACUUM, snapshot open", &vacuumed))
		return -1;

	/* A version of this row: a 24-byte tuple header and two 8-byte
	 * columns, 40 bytes, plus a 4-byte line pointer, in 8192-byte pages
	 * with a 24-byte page header. Nothing can be pruned, so every
	 * version stays, and reading the row walks them all. */
	int per_page = (8192 - 24) / (40 + 4);
	int pages = (u + 1 + per_page - 1) / per_page;
	printf("  predicted with the snapshot: %d versions a page, %d pages (measured/predicted "
	       "%.2f),\n  %d buffers per read, the pages and one index page (%.2f)\n\n",
	       per_page, pages, ratio((double)held.heap_pages, pages), pages + 1,
	       ratio((double)held.buffers, pages + 1));
	return 0;
}

static int versions_sqlite(void)
{
	struct inside_versions alone, held;
	int u = opt->updates;
	printf("§2 Versions, SQLite's counterpart: the WAL a reader pins (%d updates)\n", u);
	if (fresh() || bump(u) || your_call(inside_versions(admin, 1, &alone), "inside_versions()"))
		return -1;
	struct kit_db *reader = old_snapshot("BEGIN");
	int rc = reader == NULL || bump(u) ||
	         your_call(inside_versions(admin, 1, &held), "inside_versions()");
	kit_db_close(reader);
	if (rc != 0)
		return -1;
	printf("  no reader:          %7lld frames in the WAL, %7lld not copied back\n",
	       (long long)alone.wal_frames, (long long)alone.wal_pinned);
	printf("  a reader open:      %7lld frames in the WAL, %7lld not copied back "
	       "(predicted: a frame a commit, %d: %.2f)\n\n",
	       (long long)held.wal_frames, (long long)held.wal_pinned, u,
	       ratio((double)held.wal_pinned, u));
	return 0;
}

/* ---- §3 Keys ---- */

static int like(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return inside_like(th->db, 1, (int64_t)th->index * 1000000000LL + th->iter + 1);
}

static int keys_run(const char *name, bool yours)
{
	struct kit_load_result r;
	if (fresh() || (yours && (run_sql("DROP TABLE likes; DROP TABLE posts") ||
	                          your_call(inside_keys_setup(admin), "inside_keys_setup()") ||
	                          run_sql("INSERT INTO posts (id) VALUES (1)"))))
		return -1;
	const char *age = "SELECT mxid_age(relminmxid) FROM pg_class WHERE oid = 'posts'::regclass";
	int64_t before = num(age);
	if (load(like, NULL, name, opt->threads, NULL, NULL, &r) != 0)
		return -1;
	int64_t made = num(age) - before;
	if (stopped)
		return -1;
	printf("  %-28s %8.0f likes/s %8lld MultiXacts %6.2f per like\n", name, r.throughput_per_s,
	       (long long)made, r.ok ? (double)made / (double)r.ok : 0);
	return 0;
}

static int keys_pg(void)
{
	printf("§3 Keys: %d threads like post 1 for %.0f s (likes -> posts foreign key)\n",
	       opt->threads, opt->seconds);
	if (keys_run("key checked at the INSERT", false) || keys_run("yours (inside_keys_setup)", true))
		return -1;
	printf("  predicted: no MultiXact when no other transaction holds a lock on the post row\n"
	       "  while the like checks its key\n\n");
	return 0;
}

/* ---- §4 Isolation ---- */

struct retrying {
	const char *level;
	struct inside_retry policy;
	atomic_llong attempts, gave_up;
};

static int count_plain(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return kit_db_exec(th->db, "UPDATE counters SET n = n + 1 WHERE id = 1", 0, NULL);
}

static int count_retrying(void *arg, struct kit_load_thread *th)
{
	struct retrying *r = arg;
	int attempts = 0;
	int rc = inside_count_retrying(th->db, 1, r->level, &r->policy, &attempts);
	atomic_fetch_add(&r->attempts, attempts);
	atomic_fetch_add(&r->gave_up, rc == INSIDE_GAVE_UP);
	return rc;
}

static int isolation_pg(void)
{
	static const char *const levels[] = { "REPEATABLE READ", "SERIALIZABLE" };
	struct kit_load_result r;
	printf("§4 Isolation: %d threads add 1 to one counter for %.0f s; retries: at most 50,\n"
	       "  waits from 1 ms doubling to 50 ms\n", opt->threads, opt->seconds);
	if (fresh() || load(count_plain, NULL, "READ COMMITTED", opt->threads, NULL, NULL, &r))
		return -1;
	int64_t n = num("SELECT n FROM counters WHERE id = 1");
	if (stopped)
		return -1;
	printf("  %-16s %8.0f increments/s  1.00 attempts each   %s\n", "READ COMMITTED",
	       r.throughput_per_s, n == r.ok ? "exact" : "NOT EXACT");
	bool exact = n == r.ok;
	for (int i = 0; i < 2; i++) {
		struct retrying run = { .level = levels[i], .policy = { 50, 1, 50 } };
		if (fresh() || load(count_retrying, &run, levels[i], opt->threads, NULL, NULL, &r))
			return -1;
		n = num("SELECT n FROM counters WHERE id = 1");
		if (stopped)
			return -1;
		printf("  %-16s %8.0f increments/s %5.2f attempts each, %lld gave up   %s\n", levels[i],
		       r.throughput_per_s, r.ok ? (double)atomic_load(&run.attempts) / (double)r.ok : 0,
		       (long long)atomic_load(&run.gave_up), n == r.ok ? "exact" : "NOT EXACT");
		exact = exact && n == r.ok;
	}
	printf("\n");
	return exact ? 0 : 1;
}

/* ---- §5 Commits ---- */

static int count_own_row(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	char row[24];
	snprintf(row, sizeof row, "%d", th->index + 1);
	const char *params[] = { row };
	return kit_db_exec(th->db, "UPDATE counters SET n = n + 1 WHERE id = $1", 1, params);
}

static int count_async(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return inside_count_async(th->db, 1);
}

/* WAL syncs so far, every connection's flushed first: the load's threads
 * flushed theirs when they disconnected. */
static int64_t syncs(void)
{
	run_sql("SELECT pg_stat_force_next_flush()");
	return num("SELECT wal_sync FROM pg_stat_wal");
}

static int commits_run(const char *name, kit_load_op_fn *op, double predicted)
{
	struct kit_load_result r;
	int64_t s0 = syncs();
	if (load(op, NULL, name, opt->threads, NULL, NULL, &r) != 0)
		return -1;
	int64_t s = syncs() - s0;
	if (stopped)
		return -1;
	double per = r.ok ? (double)s / (double)r.ok : 0;
	printf("  %-30s %8.0f commits/s %7lld WAL syncs %5.2f per commit", name, r.throughput_per_s,
	       (long long)s, per);
	if (predicted > 0)
		printf("  (predicted %.2f, %.2f)", predicted, ratio(per, predicted));
	printf("\n");
	return 0;
}

static int commits_pg(void)
{
	char sql[200], a[64], b[64], c[64];
	printf("§5 Commits: %d threads for %.0f s; fsync %s, wal_sync_method %s, synchronous_commit %s\n",
	       opt->threads, opt->seconds, setting("fsync", a), setting("wal_sync_method", b),
	       setting("synchronous_commit", c));
	if (fresh())
		return -1;
	snprintf(sql, sizeof sql, "INSERT INTO counters (id) SELECT g FROM generate_series(2, %d) g",
	         opt->threads + 1);
	if (run_sql(sql) || commits_run("each thread its own row", count_own_row, 0) ||
	    commits_run("all on one row", count_plain, 1.0) ||
	    commits_run("one row, inside_count_async", count_async, 0))
		return -1;
	printf("  predicted 1.00 per commit on one row: the lock is released only after the flush\n\n");
	return 0;
}

/* ---- §6 One round trip ---- */

static int like_one(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return inside_like_one_statement(th->db, 1, (int64_t)th->index * 1000000000LL + th->iter + 1);
}

/* One like, on one thread to time `span` (from, verb, to) with nobody
 * waiting, then on T threads; the prediction is 1 / the lone span. With
 * show_many the span is also timed on the T threads (where it is still
 * the lock's hold). */
static int trip_run(const char *name, kit_load_op_fn *op, enum kit_db_event from, const char *verb,
                    enum kit_db_event to, bool show_many)
{
	struct drv_span span;
	struct kit_load_result one, many;
	drv_span_init(&span, from, verb, to);
	if (fresh() || load(op, &span, "1 thread", 1, drv_span_thread_init, drv_span_thread_done, &one))
		return -1;
	double alone = drv_span_mean_ms(&span);
	drv_span_reset(&span);
	if (fresh() || load(op, &span, name, opt->threads, drv_span_thread_init, drv_span_thread_done,
	                    &many))
		return -1;
	double ceiling = alone > 0 ? 1000.0 / alone : 0;
	printf("  %-27s %7.3f ms", name, alone);
	if (show_many)
		printf(" %7.3f ms", drv_span_mean_ms(&span));
	else
		printf(" %10s", "-");
	printf(" %8.0f likes/s  1/alone %5.0f (%.2f)\n", many.throughput_per_s, ceiling,
	       ratio(many.throughput_per_s, ceiling));
	return 0;
}

static int one_trip_pg(void)
{
	printf("§6 One round trip: the like as four statements, and as one (%d threads for %.0f s)\n"
	       "  %-27s %10s %10s %16s  %s\n", opt->threads, opt->seconds, "lock held", "alone",
	       "T threads", "throughput", "predicted (ratio)");
	/* Interactive: the row lock is ours from the end of the UPDATE to the
	 * end of COMMIT, one round trip. One statement: the lock lies inside
	 * the statement, so the statement's time alone is an upper bound;
	 * with T threads it would include the queue for the lock. */
	if (trip_run("BEGIN/INSERT/UPDATE/COMMIT", like, KIT_DB_STMT_END, "UPDATE", KIT_DB_TX_COMMIT,
	             true) ||
	    trip_run("one statement (at most)", like_one, KIT_DB_STMT_START, "WITH", KIT_DB_STMT_END,
	             false))
		return -1;
	printf("\n");
	return 0;
}

/* ---- §7 Appends ---- */

struct appends {
	bool spread;
	atomic_llong next;
};

static int append(void *arg, struct kit_load_thread *th)
{
	struct appends *a = arg;
	int64_t seq = atomic_fetch_add(&a->next, 1) + 1;
	char key[24], s[24];
	snprintf(key, sizeof key, "%lld", (long long)(a->spread ? inside_spread_key(seq) : seq));
	snprintf(s, sizeof s, "%lld", (long long)seq);
	const char *params[] = { key, s };
	return kit_db_exec(th->db, "INSERT INTO events (id, seq) VALUES ($1, $2)", 2, params);
}

/* A key's index entry: an 8-byte tuple header and the 8-byte key, plus a
 * 4-byte line pointer; a leaf page keeps 8192 - 24 (header) - 16
 * (special space) bytes for them. Leaves filled to 90% (the default
 * fillfactor, which PostgreSQL keeps when it splits the rightmost page)
 * or, for keys that land anywhere, to ln 2 = 69% on average. */
static double index_bytes_per_row(bool spread)
{
	double per_page = (8192 - 24 - 16) / (8 + 8 + 4);
	return 8192 / (per_page * (spread ? 0.69 : 0.90));
}

static int appends(void)
{
	bool pg = kit_db_engine(admin) == KIT_DB_POSTGRES;
	printf("§7 Appends: %d threads insert rows for %.0f s, key = the sequence or spread\n",
	       opt->threads, opt->seconds);
	for (int spread = 0; spread < 2; spread++) {
		struct appends a = { .spread = spread };
		struct kit_load_result r;
		if (fresh() || run_sql("CREATE TABLE events (id BIGINT PRIMARY KEY, seq BIGINT NOT NULL)") ||
		    load(append, &a, spread ? "spread" : "sequential", opt->threads, NULL, NULL, &r))
			return -1;
		printf("  %-12s %8.0f rows/s, %lld rows", spread ? "spread" : "sequential",
		       r.throughput_per_s, (long long)r.ok);
		if (pg) {
			int64_t bytes = num("SELECT pg_relation_size('events_pkey')");
			if (stopped)
				return -1;
			double per_row = r.ok ? (double)bytes / (double)r.ok : 0;
			double predicted = index_bytes_per_row(spread);
			printf(", key index %lld KB, %.1f bytes a row (predicted %.1f, %.2f)",
			       (long long)(bytes / 1024), per_row, predicted, ratio(per_row, predicted));
		} else {
			int64_t bytes = num("SELECT sum(pgsize) FROM dbstat"
			                    " WHERE name = 'sqlite_autoindex_events_1'");
			if (stopped)
				return -1;
			printf(", key index %lld KB, %.1f bytes a row", (long long)(bytes / 1024),
			       r.ok ? (double)bytes / (double)r.ok : 0);
		}
		printf("\n");
	}
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { "sqlite:.hotrow/lab08.db", 16, 3, 10000 };
	int rc = parse(argc, argv, &o);
	if (rc != KIT_RUNOPT_OK)
		return rc == KIT_RUNOPT_HELP ? 0 : 2;
	if (strncmp(o.url, "sqlite:.hotrow/", 15) == 0)
		mkdir(".hotrow", 0777);
	opt = &o;
	if (kit_db_open(&admin, o.url) != 0) {
		drv_fail_db(CMD, NULL, admin);
		kit_db_close(admin);
		return 1;
	}
	bool pg = kit_db_engine(admin) == KIT_DB_POSTGRES;
	printf("Lab 08, inside the engine, on %s\n\n", pg ? "PostgreSQL" : "SQLite");
	if (pg)
		rc = versions_pg() || keys_pg() || isolation_pg() || commits_pg() || one_trip_pg();
	else
		rc = versions_sqlite();
	if (rc == 0)
		rc = appends();
	if (rc == 0 && !pg)
		printf("§3 to §6 are PostgreSQL only: run with --db \"$HOTROW_PG_URL\"\n");
	kit_db_close(admin);
	return rc == 0 ? 0 : 1;
}
