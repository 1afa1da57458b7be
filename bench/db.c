/*
 * db.c: `hotrow bench db`, one hot row on a real database, driven by
 * kit/load.h and, for PostgreSQL, by pgbench running the same statement.
 *
 * Every client runs the naive like in autocommit, over and over:
 *     UPDATE counter SET n = n + 1 WHERE id = 1
 * so every update queues for the one row lock and the throughput is about
 * 1 / (lock hold time). The same statement goes to SQLite (a scratch file)
 * and to PostgreSQL ($HOTROW_PG_URL or --pg) through the load driver; then
 * pgbench runs it as a custom script (-f) with as many clients against the
 * same server. The ratio kit/load / pgbench tells whether the driver
 * measures the database rather than itself. With a MariaDB server
 * ($HOTROW_MYSQL_URL or --mysql) the load driver runs the statement there
 * too, in a scratch database hotrow_bench_PID (bench/mysql-commit-order
 * runs it under each durability setting). After each run the counter
 * must have grown by exactly the updates reported; if not, exit 1.
 *
 * Interface: bench_db_main(argc, argv) from cli/bench.c, see bench/bench.h.
 * The scratch table (a SQLite file in /tmp, a PostgreSQL schema
 * hotrow_bench_PID so that two runs never share it) is removed afterwards,
 * also when a run fails.
 */
#include "bench/bench.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kit/db.h"
#include "kit/load.h"
#include "util/json.h"
#include "util/opt.h"

#define UPDATE_FMT "UPDATE %s SET n = n + 1 WHERE id = 1"

struct db_opts {
	bool sqlite, postgres, mysql;
	const char *pg_url, *mysql_url;
	int threads;
	int seconds;            /* whole seconds: pgbench -T takes no fraction */
	bool json;
	char schema[40];        /* PostgreSQL: hotrow_bench_PID */
	char pg_table[64];      /* schema.counter */
};

/* One side's figures. */
struct db_run {
	bool ran;
	int64_t updates;        /* reported as done */
	int64_t failed;
	double seconds;
	double per_s;
	double mean_ms, p50_ms, p99_ms;   /* p50/p99 < 0: not reported (pgbench) */
	int64_t row_grew;       /* the counter's growth, read back afterwards */
};

static const char help_header[] =
	"\n"
	"Hammer one counter row with the naive like, every client in autocommit:\n"
	"  UPDATE counter SET n = n + 1 WHERE id = 1\n"
	"through hotrow's load driver (kit/load.h) on SQLite and PostgreSQL, and\n"
	"through pgbench (-f, the same statement, as many clients) on the same\n"
	"PostgreSQL server. Prints updates per second, latency, the lock hold it\n"
	"implies (1 / throughput) and the ratio load driver / pgbench; checks that\n"
	"the row grew by exactly the updates each side reported. With a MariaDB\n"
	"server (--mysql URL or $HOTROW_MYSQL_URL) the load driver runs there too.\n"
	"\n"
	"options:\n";

enum { ENGINE_BOTH, ENGINE_SQLITE, ENGINE_POSTGRES, ENGINE_MYSQL };
static const struct opt_choice engines[] = {
	{ "both", ENGINE_BOTH }, { "sqlite", ENGINE_SQLITE }, { "postgres", ENGINE_POSTGRES },
	{ "mysql", ENGINE_MYSQL }, { NULL, 0 } };

/* Fill *o; -1 after one line on stderr for bad usage, 1 after --help. */
static int parse_opts(int argc, char **argv, struct db_opts *o)
{
	int engine = ENGINE_BOTH;

	memset(o, 0, sizeof *o);
	o->pg_url = getenv("HOTROW_PG_URL");
	if (o->pg_url && !*o->pg_url)
		o->pg_url = NULL;
	o->mysql_url = getenv("HOTROW_MYSQL_URL");
	if (o->mysql_url && !*o->mysql_url)
		o->mysql_url = NULL;
	o->threads = 8;
	o->seconds = 5;
	const struct opt rows[] = {
		{ .name = "engine", .arg = "NAME", .kind = OPT_CHOICE, .dest = &engine,
		  .choices = engines, .help = "both (default), sqlite, postgres or mysql; both\n"
		                              "runs every engine it has a URL for (SQLite always)" },
		{ .name = "pg", .arg = "URL", .kind = OPT_STRING, .dest = &o->pg_url,
		  .accepts = "a PostgreSQL URL or conninfo string",
		  .help = "the PostgreSQL server (default: $HOTROW_PG_URL;\n"
		          "`make pg-up` starts a throwaway one)" },
		{ .name = "mysql", .arg = "URL", .kind = OPT_STRING, .dest = &o->mysql_url,
		  .accepts = "a mysql:// URL",
		  .help = "the MariaDB server (default: $HOTROW_MYSQL_URL;\n"
		          "`make mysql-up` starts a throwaway one)" },
		{ .name = "threads", .arg = "T", .kind = OPT_INT, .dest = &o->threads, .min = 1,
		  .max = KIT_LOAD_MAX_THREADS, .help = "clients, 1..256 (default 8)" },
		{ .name = "seconds", .arg = "S", .kind = OPT_INT, .dest = &o->seconds, .min = 1,
		  .max = 600, .help = "per run, a whole number 1..600 (default 5)" },
		{ .name = "json", .kind = OPT_FLAG, .dest = &o->json,
		  .help = "one JSON object instead of the table" },
		{ .name = "help", .short_name = 'h', .kind = OPT_USAGE, .help = "this text" },
	};
	const struct opt_table table = { .rows = rows, .n = sizeof rows / sizeof rows[0] };
	const struct opt_cmd cmd = { .name = "hotrow bench db", .header = help_header,
	                             .tables = &table, .ntables = 1 };
	int rc = opt_parse(&cmd, argc, argv, NULL);
	if (rc != OPT_OK)
		return rc == OPT_HELP ? 1 : -1;
	snprintf(o->schema, sizeof o->schema, "hotrow_bench_%ld", (long)getpid());
	snprintf(o->pg_table, sizeof o->pg_table, "%s.counter", o->schema);
	o->sqlite = engine == ENGINE_BOTH || engine == ENGINE_SQLITE;
	o->postgres = (engine == ENGINE_BOTH || engine == ENGINE_POSTGRES) && o->pg_url;
	o->mysql = (engine == ENGINE_BOTH || engine == ENGINE_MYSQL) && o->mysql_url;
	if (engine == ENGINE_MYSQL && !o->mysql_url) {
		fprintf(stderr, "hotrow bench db: --engine mysql needs --mysql URL or "
			"HOTROW_MYSQL_URL (make mysql-up prints one)\n");
		return -1;
	}
	if (engine == ENGINE_POSTGRES && !o->pg_url) {
		fprintf(stderr, "hotrow bench db: --engine postgres needs --pg URL or "
			"HOTROW_PG_URL (make pg-up prints one)\n");
		return -1;
	}
	return 0;
}

/* The counter's table: in its own schema on PostgreSQL (its own database
 * on MariaDB, the same name), in a scratch file on SQLite. */
static const char *counter_table(const struct db_opts *o, struct kit_db *db)
{
	return kit_db_engine(db) == KIT_DB_SQLITE ? "counter" : o->pg_table;
}

/* Run one statement about the counter, each "%s" in fmt (at most two)
 * standing for its table; 0, or -1 with what was being done and the cause
 * on stderr. */
static int counter_exec(const struct db_opts *o, struct kit_db *db, const char *what,
                        const char *fmt)
{
	char sql[512];

	snprintf(sql, sizeof sql, fmt, counter_table(o, db), counter_table(o, db));
	if (kit_db_exec(db, sql, 0, NULL) != 0) {
		fprintf(stderr, "hotrow bench db: %s: %s\n", what, kit_db_errmsg(db));
		return -1;
	}
	return 0;
}

/* Make the scratch counter, n = 0 at id 1. */
static int counter_create(const struct db_opts *o, struct kit_db *db)
{
	char sql[128];

	snprintf(sql, sizeof sql, "CREATE %s %s",
		 kit_db_engine(db) == KIT_DB_MYSQL ? "DATABASE" : "SCHEMA", o->schema);
	if (kit_db_engine(db) != KIT_DB_SQLITE && kit_db_exec(db, sql, 0, NULL) != 0) {
		fprintf(stderr, "hotrow bench db: making the schema: %s\n", kit_db_errmsg(db));
		return -1;
	}
	return counter_exec(o, db, "making the counter",
		"CREATE TABLE %s (id integer PRIMARY KEY, n bigint NOT NULL); "
		"INSERT INTO %s VALUES (1, 0)");
}

static int counter_reset(const struct db_opts *o, struct kit_db *db)
{
	return counter_exec(o, db, "resetting the counter", "UPDATE %s SET n = 0 WHERE id = 1");
}

static int counter_read(const struct db_opts *o, struct kit_db *db, int64_t *n)
{
	char sql[128];

	snprintf(sql, sizeof sql, "SELECT n FROM %s WHERE id = 1", counter_table(o, db));
	if (kit_db_query_int(db, sql, 0, NULL, n) != 0) {
		fprintf(stderr, "hotrow bench db: reading the counter: %s\n", kit_db_errmsg(db));
		return -1;
	}
	return 0;
}

/* The load driver's operation: one naive like, in autocommit. */
static int like_op(void *arg, struct kit_load_thread *th)
{
	return kit_db_exec(th->db, arg, 0, NULL);
}

/* Drive url's counter with kit/load for o->seconds; fill *r. The counter
 * must exist (counter_create) and is reset first; admin reads it after. */
static int run_driver(const struct db_opts *o, const char *url, struct kit_db *admin,
                      const char *label, struct db_run *r)
{
	struct kit_load_config c;
	struct kit_load_result lr;
	char sql[128];
	int64_t n;

	snprintf(sql, sizeof sql, UPDATE_FMT, counter_table(o, admin));
	if (counter_reset(o, admin) != 0)
		return -1;
	kit_load_config_default(&c);
	c.url = url;
	c.threads = o->threads;
	c.seconds = o->seconds;
	c.label = label;
	if (kit_load_run(&c, like_op, sql, &lr) != 0) {
		fprintf(stderr, "hotrow bench db: %s: %s\n", label, lr.error);
		return -1;
	}
	if (counter_read(o, admin, &n) != 0)
		return -1;
	r->ran = true;
	r->updates = lr.ok;
	r->failed = lr.failed;
	r->seconds = lr.seconds;
	r->per_s = lr.throughput_per_s;
	r->mean_ms = lr.latency_ms.mean;
	r->p50_ms = lr.latency_ms.p50;
	r->p99_ms = lr.latency_ms.p99;
	r->row_grew = n;
	if (lr.failed && lr.error[0])
		fprintf(stderr, "hotrow bench db: %s: %lld updates failed, the first: %s\n",
			label, (long long)lr.failed, lr.error);
	return 0;
}

/* Run pgbench with the same statement as a custom script against url and
 * fill *r (row_grew is read by the caller). */
static int run_pgbench(const struct db_opts *o, const char *url, struct db_run *r)
{
	char script[160], log[4096];
	struct bench_pgbench p;

	snprintf(script, sizeof script, UPDATE_FMT ";\n", o->pg_table);
	if (bench_pgbench_run(url, script, "simple", o->threads, o->seconds, &p, log,
	                      sizeof log) != 0) {
		fprintf(stderr, "hotrow bench db: pgbench failed:\n%s", log);
		return -1;
	}
	r->ran = true;
	r->updates = p.transactions;
	r->failed = p.failed;
	r->per_s = p.tps;
	r->mean_ms = p.mean_ms;
	r->seconds = o->seconds;
	r->p50_ms = r->p99_ms = -1;
	return 0;
}

/* Remove a SQLite scratch file and its companions. */
static void sqlite_remove(const char *path)
{
	static const char *const ext[] = {"", "-wal", "-shm", "-journal"};
	char p[256];

	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		snprintf(p, sizeof p, "%s%s", path, ext[i]);
		unlink(p);
	}
}

/* The SQLite side, on a scratch file that is removed afterwards. */
static int bench_sqlite(const struct db_opts *o, struct db_run *r)
{
	char path[] = "/tmp/hotrow-bench-XXXXXX", url[64];
	struct kit_db *db;
	int fd = mkstemp(path), rc = -1;

	if (fd < 0) {
		fprintf(stderr, "hotrow bench db: scratch file: %s\n", strerror(errno));
		return -1;
	}
	close(fd);
	snprintf(url, sizeof url, "sqlite:%s", path);
	if (kit_db_open(&db, url) != 0)
		fprintf(stderr, "hotrow bench db: %s\n", kit_db_errmsg(db));
	else if (counter_create(o, db) == 0)
		rc = run_driver(o, url, db, "sqlite", r);
	kit_db_close(db);
	sqlite_remove(path);
	return rc;
}

/* A server's side, on one scratch schema (a database on MariaDB): the
 * load driver, then, when pgb is not NULL, pgbench. */
static int bench_server(const struct db_opts *o, const char *url, const char *label,
                        struct db_run *kit, struct db_run *pgb)
{
	struct kit_db *db;
	int rc = -1;

	if (kit_db_open(&db, url) != 0) {
		fprintf(stderr, "hotrow bench db: %s\n", kit_db_errmsg(db));
		kit_db_close(db);
		return -1;
	}
	char drop[128];

	if (counter_create(o, db) == 0 && run_driver(o, url, db, label, kit) == 0 &&
	    (pgb == NULL || (counter_reset(o, db) == 0 && run_pgbench(o, url, pgb) == 0 &&
	                     counter_read(o, db, &pgb->row_grew) == 0)))
		rc = 0;
	snprintf(drop, sizeof drop, kit_db_engine(db) == KIT_DB_MYSQL
		 ? "DROP DATABASE IF EXISTS %s" : "DROP SCHEMA IF EXISTS %s CASCADE", o->schema);
	if (kit_db_exec(db, drop, 0, NULL) != 0)
		fprintf(stderr, "hotrow bench db: dropping %s: %s\n", o->schema, kit_db_errmsg(db));
	kit_db_close(db);
	return rc;
}

static bool counts_agree(const struct db_run *r)
{
	return !r->ran || r->row_grew == r->updates;
}

static void json_run(FILE *f, const char *name, const struct db_run *r)
{
	fputc(',', f);
	util_json_str(f, name);
	fputc(':', f);
	if (!r->ran) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"updates\":%lld,\"failed\":%lld,\"seconds\":%.3f,\"per_s\":%.1f,"
		"\"mean_ms\":%.4f,", (long long)r->updates, (long long)r->failed,
		r->seconds, r->per_s, r->mean_ms);
	if (r->p50_ms >= 0)
		fprintf(f, "\"p50_ms\":%.4f,\"p99_ms\":%.4f,", r->p50_ms, r->p99_ms);
	else
		fputs("\"p50_ms\":null,\"p99_ms\":null,", f);
	fprintf(f, "\"row_grew\":%lld,\"counts_agree\":%s}", (long long)r->row_grew,
		counts_agree(r) ? "true" : "false");
}

static void table_run(FILE *f, const char *name, const struct db_run *r)
{
	if (!r->ran)
		return;
	fprintf(f, "%-24s %10lld %7lld %11.0f %9.3f", name, (long long)r->updates,
		(long long)r->failed, r->per_s, r->mean_ms);
	if (r->p50_ms >= 0)
		fprintf(f, " %8.3f %8.3f", r->p50_ms, r->p99_ms);
	else
		fprintf(f, " %8s %8s", "-", "-");
	fprintf(f, " %9.1f us  %s\n", r->per_s > 0 ? 1e6 / r->per_s : 0,
		counts_agree(r) ? "yes" : "NO");
}

int bench_db_main(int argc, char **argv)
{
	struct db_opts o;
	struct db_run lite = {0}, pg = {0}, pgb = {0}, my = {0};
	int rc = parse_opts(argc, argv, &o);
	bool ok = true;

	if (rc)
		return rc > 0 ? 0 : 2;
	if (!o.postgres && !o.json && (o.sqlite || !o.mysql))
		printf("NOTICE: no PostgreSQL (set HOTROW_PG_URL or --pg; make pg-up starts "
			"one): SQLite only, no pgbench comparison\n");
	if (o.sqlite && bench_sqlite(&o, &lite) != 0)
		ok = false;
	if (o.postgres && bench_server(&o, o.pg_url, "postgres", &pg, &pgb) != 0)
		ok = false;
	if (o.mysql && bench_server(&o, o.mysql_url, "mariadb", &my, NULL) != 0)
		ok = false;
	ok = ok && counts_agree(&lite) && counts_agree(&pg) && counts_agree(&pgb) && counts_agree(&my);
	double ratio = pg.ran && pgb.ran && pgb.per_s > 0 ? pg.per_s / pgb.per_s : -1;

	if (o.json) {
		char statement[128];
		snprintf(statement, sizeof statement, UPDATE_FMT, "counter");
		fputs("{\"statement\":", stdout);
		util_json_str(stdout, statement);
		printf(",\"threads\":%d,\"seconds\":%d", o.threads, o.seconds);
		json_run(stdout, "sqlite", &lite);
		json_run(stdout, "postgres", &pg);
		json_run(stdout, "pgbench", &pgb);
		json_run(stdout, "mysql", &my);
		if (ratio >= 0)
			printf(",\"kit_load_over_pgbench\":%.4f}\n", ratio);
		else
			printf(",\"kit_load_over_pgbench\":null}\n");
		return ok ? 0 : 1;
	}
	printf("one hot row: UPDATE ... SET n = n + 1 WHERE id = 1, autocommit, "
		"%d client(s), %d s per run\n\n", o.threads, o.seconds);
	printf("%-24s %10s %7s %11s %9s %8s %8s %12s  %s\n", "", "updates", "failed",
		"updates/s", "mean ms", "p50 ms", "p99 ms", "1/throughput", "row grew by the updates");
	table_run(stdout, "SQLite, kit/load", &lite);
	table_run(stdout, "PostgreSQL, kit/load", &pg);
	table_run(stdout, "PostgreSQL, pgbench -f", &pgb);
	table_run(stdout, "MariaDB, kit/load", &my);
	if (ratio >= 0)
		printf("\nkit/load / pgbench on the same server: %.2f x updates per second\n", ratio);
	printf("\nOne row takes one update at a time, so 1/throughput is about the time "
		"each update holds the row lock (commit included).\n");
	if (!ok)
		printf("FAILED: a run did not complete or a row did not grow by the updates reported\n");
	return ok ? 0 : 1;
}
