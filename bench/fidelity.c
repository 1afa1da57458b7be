/*
 * fidelity.c: `hotrow bench fidelity`, the engine's prediction beside a
 * real database.
 *
 * For three shapes of counter (1 row, 16 slots, 128 slots), every client
 * runs the same autocommit statement on a random slot, over and over:
 *     UPDATE counter SET n = n + 1 WHERE id = $1
 * First one client alone measures the parts of a request the way the lab
 * drivers do (labs/driver/probe.h: the lock hold, the time outside it,
 * the CPU per request here and in the server). On PostgreSQL two more
 * parts of the server are measured before any cell (labs/driver/server.h):
 * one flush of its log (a COMMIT less a SELECT 1, one client) and the CPU
 * a commit costs per waiter it wakes (the slope of the backends' CPU per
 * commit between 2 and 8 clients on one row), and one part of this
 * machine: how long a process woken from another core takes to run (two
 * threads waking each other across two cores). On every database one
 * more part of the machine is measured: what a request costs after a
 * pause that left the cores idle (one client, pauses of 0.05 to 2 ms;
 * labs/driver/server.h, drv_probe_cold), which the engine charges to a
 * CPU job that lands on a core idle that long. The engine then runs with
 * a herd hand-off and one shared log, whose flush has a CPU part: the
 * probe's CPU that the hold before the flush and the time outside cannot
 * hold (labs/driver/predict.c). From those parts only, the
 * engine predicts the throughput of 1, 4, 16 and 32 clients (a closed
 * loop, this machine's cores). --slots, --clients and --think-ms ask
 * another grid: a shape per slot count, a cell per client count and think
 * time (a pause before each request, outside any transaction, in kit/load,
 * pgbench and the engine alike). SQLite as the kit opens it (WAL,
 * synchronous = NORMAL) flushes nothing at commit and locks the file: one
 * lock that wakes one waiter, no shared log. Then each cell is measured twice: through
 * kit/load (one connection per thread, the calls that returned by the
 * deadline, as pgbench -T counts) and through pgbench with the same
 * statement (-M extended, a random slot from \set), taking turns of one
 * second, the pair's order swapped every second, so that a change in the
 * machine's other work, or one that grows through the cell, falls on both. The ratios say how
 * far the engine is from the database (target: within 25 % of pgbench
 * from 2 clients up) and whether kit/load measures the database rather
 * than itself (target: at least 0.95 x pgbench). Targets are printed as
 * ok / MISS, never asserted: the figures depend on the machine and on
 * what else runs on it, so the load average is printed beside them.
 *
 * On PostgreSQL the WAL flushes per transaction (pg_stat_wal) of each
 * kit/load run are printed as a measurement beside the engine's: below 1,
 * commits shared a flush (group commit).
 *
 * On MariaDB (InnoDB) the slots are row locks as on PostgreSQL, and a lock
 * wakes its oldest waiter. The server's settings are read, not assumed:
 * with the binary log off and innodb_flush_log_at_trx_commit = 1 InnoDB
 * releases the row before the redo flush its client then waits for, so
 * the engine runs --wal-order release-flush with the flush probed as on
 * PostgreSQL; with the binary log on, the row is kept until the commit is
 * durable (flush-release); with no flush at commit, no shared log. Each
 * cell also gives the engine's answer under the other order, and the
 * redo flushes per transaction measured (Innodb_data_fsyncs). There is no
 * pgbench: the peer the targets use is kit/load. The JSON gives, per shape, every
 * part the prediction used and sim_args, the `hotrow sim` arguments that
 * reproduce it with any --clients.
 *
 * Interface: bench_fidelity_main(argc, argv) from cli/bench.c, see bench.h.
 * The scratch schema (hotrow_fidelity_PID) or table is removed afterwards.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench/bench.h"
#include "kit/db.h"
#include "kit/load.h"
#include "labs/driver/predict.h"
#include "labs/driver/probe.h"
#include "labs/driver/server.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/opt.h"

#define CMD "hotrow bench fidelity"
#define MAX_LIST 16              /* values a --clients, --slots or --think-ms list takes */
#define MAX_SLOTS 100000
#define MAX_THINK_MS 1000.0
/* How PostgreSQL's herd draw favours the backends that queued last
 * (engine/sim.h, herd_bias): not probed before the cells, but measured
 * with the repeat counters of bench/README.md, "Who wins the race", on
 * PostgreSQL 15 at 4 to 64 clients on one row: the middle of the B
 * each count at 16 clients and more asks for. */
#define PG_HERD_BIAS 2.0

/* A list option's values and what it accepts. */
struct list {
	int n;
	double v[MAX_LIST];
};
struct list_spec {
	double min, max;
	double step;             /* every value a whole multiple of it */
	const char *accepts;
};

/* The default grid: 1 row, 16 and 128 slots; 1, 4, 16 and 32 clients; no
 * think time. */
static const struct list default_slots = { 3, { 1, 16, 128 } };
static const struct list default_clients = { 4, { 1, 4, 16, 32 } };
static const struct list default_think = { 1, { 0 } };

struct shape {
	char name[24];           /* "1 row", "16 slots" */
	int rows;
};

struct fid_opts {
	const char *url;
	bool scratch;            /* a SQLite file of our own, removed afterwards */
	char scratch_path[64];
	bool quick, json;
	int seconds;             /* per cell and tool (pgbench -T is whole seconds) */
	struct list slots, clients, think_ms;   /* the grid: a shape per slot count,
	                                            a cell per clients x think time */
};

struct cell {
	int clients;
	double think_ms;         /* each client's pause between its requests */
	double pause_ms;         /* what one such pause takes here, probed before
	                            the cell (a sleep ends late): the engine's */
	char sim_args[768];      /* what the engine ran, less --clients */
	bool lost;               /* a tool's turn failed twice: nothing measured */
	double predicted, mva;   /* per second; mva < 0: n/a */
	double other;            /* the engine under the other commit order;
	                            < 0: not run (only on MariaDB) */
	double other_rq;         /* the engine with the other run queues */
	double one_lane;         /* the engine with the herd's losers paced
	                            one at a time (--herd-lanes 1); < 0: not
	                            run (no herd) */
	double pred_wal;         /* the engine's flushes per commit; < 0: no log */
	double pred_tail;        /* the engine's latency p99 / p50 */
	double kit_tail;         /* kit/load's, its turns' mean; < 0: not measured */
	double kit;
	double pgbench;          /* < 0: not run */
	double wal_per_tx;       /* < 0: not measured */
	double server_cpu_ms;    /* the backends' CPU per commit in kit/load's
	                            turns (PostgreSQL); < 0: not measured */
	double pred_cpu_ms;      /* the engine's; < 0: none */
	double load;             /* the load average when the cell ended */
	/* CPU per transaction of the client process, user + system, µs:
	 * what each tool spends beside the server (on SQLite, the database's
	 * work too: it runs in kit/load's process); < 0: not measured */
	double kit_cpu_us, pgbench_cpu_us;
};

struct shape_result {
	struct shape shape;
	struct drv_parts alone;
	int ncells;
	struct cell cells[MAX_LIST * MAX_LIST];
	char sim_args[768];      /* the first cell's: what the engine ran, less --clients */
	double wal_cpu_ms;       /* the flush's CPU part the probe's CPU leaves */
};

struct fid {
	struct fid_opts o;
	bool postgres, mysql, pgbench;
	char table[64];          /* schema.counter or counter */
	char schema[40];
	struct kit_db *admin;
	int rows;                /* the shape being run */
	int64_t think_ns;        /* the cell being run: each request's pause first */
	struct drv_backends backends;   /* kit/load's, in a turn (PostgreSQL) */
	char sql[128];
	/* the server's parts, measured before every cell (PostgreSQL) */
	double flush_ms;         /* one flush of the log */
	struct drv_wake wake;    /* CPU per waiter a commit wakes */
	double wake_lat_us;      /* this machine: a wake across cores, us */
	struct drv_cold cold;    /* this machine: what a core idle long costs */
	struct drv_burst burst;  /* two bursts on one row, measured */
	double burst_engine_ms[2];   /* the engine's mean for each, lockmgr 0 */
	double lockmgr_us;       /* what each co-woken waiter adds to a hand-off */
	double contend_us;       /* CPU a request spends once on a locked row */
	double contend_alone_ms; /* the one-client CPU per request it is taken from */
	/* MariaDB's settings, read before the cells */
	int64_t log_bin, flush_at_commit;
	enum sim_wal_order order;
	enum sim_run_queues run_queues;   /* the engine's cores (engine/sim.h) */
};

static const char *db_name(const struct fid *f)
{
	return f->postgres ? "PostgreSQL" : f->mysql ? "MariaDB" : "SQLite";
}

static const char help_header[] =
	"\n"
	"How close is the engine to a real database? For 1 row, 16 slots and 128\n"
	"slots, one client alone measures the parts of an autocommit\n"
	"  UPDATE counter SET n = n + 1 WHERE id = $1   (a random slot)\n"
	"(the lock hold, the time outside it, the CPU per request); on PostgreSQL\n"
	"also one log flush, the CPU a commit spends per waiter it wakes, how\n"
	"long a process woken from another core takes to run, and, from two\n"
	"bursts on one row (every caller sending once, at once) beside the\n"
	"engine's, what each co-woken waiter adds to a hand-off. From those parts\n"
	"only the engine predicts 1, 4, 16 and 32 clients; then kit/load and\n"
	"pgbench (PostgreSQL only) run each cell. Prints predicted, kit/load,\n"
	"pgbench and the ratios (targets: engine within 25 % of pgbench from 2\n"
	"clients up, kit/load at least 0.95 x pgbench), with the load average.\n"
	"--slots, --clients and --think-ms run another grid: every slot count is a\n"
	"shape, every client count at every think time a cell. A think time is a\n"
	"pause before each request, outside any transaction: a sleep in kit/load's\n"
	"threads, \\sleep in pgbench's script (whole microseconds), --think-ms in\n"
	"the engine.\n"
	"On MariaDB (--db mysql://...) the engine takes InnoDB's commit order from\n"
	"the server's settings, and kit/load is the peer.\n"
	"\n"
	"options:\n";

static struct list_spec slots_spec = {
	1, MAX_SLOTS, 1, "a comma-separated list of up to 16 slot counts, each 1..100000"
};
static struct list_spec clients_spec = {
	1, KIT_LOAD_MAX_THREADS, 1,
	"a comma-separated list of up to 16 client counts, each 1..256"
};
static struct list_spec think_spec = {
	0, MAX_THINK_MS, 0.001, "a comma-separated list of up to 16 think times in ms, each "
	"0..1000 in whole microseconds (pgbench's \\sleep takes whole us)"
};

/* "4,64,1024" into the struct list at dest, each value within ctx's
 * struct list_spec; -1 (and dest untouched) for an empty item, a word, a
 * value out of range or more than MAX_LIST values. */
static int list_opt(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	const struct list_spec *spec = ctx;
	struct list l = { 0 };
	const char *p = v;
	(void)why, (void)len;
	for (;;) {
		char *end;
		errno = 0;
		double x = strtod(p, &end);
		if (end == p || errno || !isfinite(x) || x < spec->min || x > spec->max ||
		    l.n == MAX_LIST || (*end != ',' && *end != '\0'))
			return -1;
		double units = x / spec->step;
		if (fabs(units - round(units)) > 1e-6)
			return -1;
		l.v[l.n++] = round(units) * spec->step;
		if (*end == '\0')
			break;
		p = end + 1;
	}
	*(struct list *)dest = l;
	return 0;
}

/* Fill *o; 1 after --help, -1 after one line on stderr for bad usage. */
static int parse_opts(int argc, char **argv, struct fid_opts *o)
{
	memset(o, 0, sizeof *o);
	o->url = getenv("HOTROW_PG_URL");
	if (o->url && !*o->url)
		o->url = NULL;
	o->seconds = 5;
	o->slots = default_slots;
	o->clients = default_clients;
	o->think_ms = default_think;
	const struct opt rows[] = {
		{ .name = "db", .arg = "URL", .kind = OPT_STRING, .dest = &o->url,
		  .accepts = "a database URL",
		  .help = "the database (default: $HOTROW_PG_URL, else a scratch SQLite\n"
		          "file); its scratch schema or table is removed afterwards" },
		{ .name = "seconds", .arg = "S", .kind = OPT_INT, .dest = &o->seconds, .min = 1,
		  .max = 600, .help = "per cell and tool, a whole number 1..600 (default 5)" },
		{ .name = "slots", .arg = "LIST", .kind = OPT_CUSTOM, .dest = &o->slots,
		  .fn = list_opt, .ctx = &slots_spec, .accepts = slots_spec.accepts,
		  .help = "the shapes' slot counts, e.g. 1,4,64,1024 (default 1,16,128)" },
		{ .name = "clients", .arg = "LIST", .kind = OPT_CUSTOM, .dest = &o->clients,
		  .fn = list_opt, .ctx = &clients_spec, .accepts = clients_spec.accepts,
		  .help = "the cells' client counts, e.g. 2,8,64 (default 1,4,16,32)" },
		{ .name = "think-ms", .arg = "LIST", .kind = OPT_CUSTOM, .dest = &o->think_ms,
		  .fn = list_opt, .ctx = &think_spec, .accepts = think_spec.accepts,
		  .help = "each client's pause before a request, outside any\n"
		          "transaction, e.g. 0,0.5,2 (default 0)" },
		{ .name = "quick", .kind = OPT_FLAG, .dest = &o->quick,
		  .help = "1 s cells and a short probe: checks it works (CI)" },
		{ .name = "json", .kind = OPT_FLAG, .dest = &o->json,
		  .help = "one JSON object instead of the table" },
		{ .name = "help", .short_name = 'h', .kind = OPT_USAGE, .help = "this text" },
	};
	bool seen[sizeof rows / sizeof rows[0]] = { false };
	const struct opt_table table = { .rows = rows, .n = sizeof rows / sizeof rows[0],
	                                 .seen = seen };
	const struct opt_cmd cmd = { .name = CMD, .header = help_header, .tables = &table,
	                             .ntables = 1 };
	int rc = opt_parse(&cmd, argc, argv, NULL);
	if (rc != OPT_OK)
		return rc == OPT_HELP ? 1 : -1;
	bool seconds_given = seen[1];
	if (o->quick && !seconds_given)
		o->seconds = 1;
	if (o->url == NULL) {
		snprintf(o->scratch_path, sizeof o->scratch_path, "/tmp/hotrow-fidelity-%ld.db",
			 (long)getpid());
		o->scratch = true;
	}
	return 0;
}

static void sqlite_remove(const char *path)
{
	static const char *const ext[] = { "", "-wal", "-shm", "-journal" };
	char p[128];
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		snprintf(p, sizeof p, "%s%s", path, ext[i]);
		unlink(p);
	}
}

static int exec_or_say(struct fid *f, const char *what, const char *sql)
{
	if (kit_db_exec(f->admin, sql, 0, NULL) == 0)
		return 0;
	fprintf(stderr, CMD ": %s: %s\n", what, kit_db_errmsg(f->admin));
	return -1;
}

/* The largest slot count of the grid. */
static int max_slots(const struct fid_opts *o)
{
	int n = 1;
	for (int i = 0; i < o->slots.n; i++)
		n = o->slots.v[i] > n ? (int)o->slots.v[i] : n;
	return n;
}

/* The counter: the grid's most slots, n = 0, in a schema of its own on
 * PostgreSQL. */
static int setup(struct fid *f)
{
	char sql[256];
	if (f->postgres) {
		snprintf(f->schema, sizeof f->schema, "hotrow_fidelity_%ld", (long)getpid());
		snprintf(f->table, sizeof f->table, "%s.counter", f->schema);
		snprintf(sql, sizeof sql, "CREATE SCHEMA %s", f->schema);
		if (exec_or_say(f, "making the schema", sql) != 0)
			return -1;
	} else {
		snprintf(f->table, sizeof f->table, "hotrow_fidelity_counter");
		snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", f->table);
		if (exec_or_say(f, "dropping an old counter", sql) != 0)
			return -1;
	}
	snprintf(sql, sizeof sql, "CREATE TABLE %s (id integer PRIMARY KEY, n bigint NOT NULL)",
		 f->table);
	if (exec_or_say(f, "making the counter", sql) != 0)
		return -1;
	/* one transaction: a thousand slots are not a thousand log flushes */
	if (exec_or_say(f, "filling the counter", "BEGIN") != 0)
		return -1;
	for (int i = 1, n = max_slots(&f->o); i <= n; i++) {
		snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (%d, 0)", f->table, i);
		if (exec_or_say(f, "filling the counter", sql) != 0) {
			kit_db_exec(f->admin, "ROLLBACK", 0, NULL);
			return -1;
		}
	}
	if (exec_or_say(f, "filling the counter", "COMMIT") != 0)
		return -1;
	snprintf(f->sql, sizeof f->sql, "UPDATE %s SET n = n + 1 WHERE id = $1", f->table);
	return 0;
}

static void teardown(struct fid *f)
{
	char sql[128];
	if (f->postgres)
		snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s CASCADE", f->schema);
	else
		snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", f->table);
	if (f->admin && kit_db_exec(f->admin, sql, 0, NULL) != 0)
		fprintf(stderr, CMD ": removing the counter: %s\n", kit_db_errmsg(f->admin));
}

/* One like on a random slot of the shape being run, after the cell's
 * think time (autocommit: no transaction is open while it sleeps). */
static int like(void *arg, struct kit_load_thread *th)
{
	const struct fid *f = arg;
	char slot[16];
	if (f->think_ns > 0)
		util_sleep_ns(f->think_ns);
	snprintf(slot, sizeof slot, "%d", 1 + (int)((kit_load_rand(th) >> 33) % (uint64_t)f->rows));
	const char *p[] = { slot };
	return kit_db_exec(th->db, f->sql, 1, p);
}

static void progress(const struct fid *f, const char *shape, int clients, const char *what)
{
	char think[32] = "";
	if (f->think_ns > 0)
		snprintf(think, sizeof think, ", think %g ms", (double)f->think_ns / 1e6);
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r%-72s\r" CMD ": %s, %s, %d client%s%s: %s ", "", shape,
			db_name(f), clients, clients == 1 ? "" : "s", think, what);
	else
		fprintf(stderr, CMD ": %s, %d client%s%s: %s\n", shape, clients,
			clients == 1 ? "" : "s", think, what);
}

/* Log flushes so far (pg_stat_wal.wal_sync; on MariaDB every fsync of
 * InnoDB's, which the redo log's at each commit outnumber by far); < 0
 * when not available. */
static int64_t wal_syncs(struct fid *f)
{
	int64_t n = -1;
	const char *sql = f->postgres ? "SELECT wal_sync FROM pg_stat_wal" :
	                  f->mysql ? "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
	                             "WHERE VARIABLE_NAME = 'INNODB_DATA_FSYNCS'" : NULL;
	if (!sql || kit_db_query_int(f->admin, sql, 0, NULL, &n) != 0)
		return -1;
	return n;
}

static double loadavg(void);

/* One tool's turns in a cell, added up. */
struct turn {
	int64_t done;            /* transactions in the turns' timed seconds */
	double seconds;
	int64_t all;             /* kit/load: every call, the last ones too */
	int64_t syncs;           /* WAL flushes during kit/load's turns; < 0 unknown */
	double server_cpu_s;     /* the backends' CPU over kit/load's turns; < 0
	                            unknown */
	double tail;             /* sum of each kit/load turn's p99 / p50, the
	                            think time taken out of both */
	int turns;
	double cpu_s;            /* the client process's CPU over the turns */
	int64_t cpu_tx;          /* ... and the transactions it ran */
};

/* CPU seconds, user + system, of this process (RUSAGE_SELF) or of its
 * children that have been waited for (RUSAGE_CHILDREN). */
static double cpu_s(int who)
{
	struct rusage u;
	if (getrusage(who, &u) != 0)
		return 0;
	return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
	       (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* A kit/load thread's backend, and its CPU before and after the calls. */
static int backend_init(void *arg, struct kit_load_thread *th)
{
	struct fid *f = arg;
	if (!f->postgres) {
		f->backends.cpu0[th->index] = -1;
		return 0;
	}
	return drv_backends_start(&f->backends, th);
}

static int backend_done(void *arg, struct kit_load_thread *th)
{
	struct fid *f = arg;
	if (f->postgres)
		drv_backends_stop(&f->backends, th);
	return 0;
}

static int kit_turn(struct fid *f, int clients, int seconds, const char *label,
                    struct turn *t)
{
	struct kit_load_config lc;
	kit_load_config_default(&lc);
	lc.url = f->o.url;
	lc.threads = clients;
	lc.seconds = seconds;
	lc.label = label;
	lc.progress = false;
	lc.thread_init = backend_init;
	lc.thread_done = backend_done;
	struct drv_run m;
	int64_t w0 = wal_syncs(f);
	double c0 = cpu_s(RUSAGE_SELF);
	int rc = drv_run_load(&lc, NULL, like, f, &m);
	t->cpu_s += cpu_s(RUSAGE_SELF) - c0;
	t->cpu_tx += m.r.ok;
	if (rc != 0 || m.r.failed > 0) {
		fprintf(stderr, "\n" CMD ": %s: %s\n", label, m.r.error);
		return -1;
	}
	/* A backend reports its WAL counts when its connection ends: let the
	 * run's backends go first. */
	int64_t w1 = -1;
	if (w0 >= 0) {
		util_sleep_ns(200000000);
		w1 = wal_syncs(f);
	}
	double cpu = f->postgres ? drv_backends_cpu_s(&f->backends, clients) : -1;
	t->server_cpu_s = cpu >= 0 && t->server_cpu_s >= 0 ? t->server_cpu_s + cpu : -1;
	t->done += m.r.ok_timed;
	t->seconds += m.r.timed_s;
	t->all += m.r.ok;
	/* a call's latency has the think time in it: the request's is the rest */
	double think_ms = (double)f->think_ns / 1e6;
	double p50 = m.r.latency_ms.p50 - think_ms, p99 = m.r.latency_ms.p99 - think_ms;
	if (p50 > 0) {
		t->tail += p99 / p50;
		t->turns++;
	}
	t->syncs = w0 >= 0 && w1 >= 0 && t->syncs >= 0 ? t->syncs + (w1 - w0) : -1;
	return 0;
}

/* pgbench's script: the think time (\sleep takes whole microseconds, as
 * --think-ms is checked to be), then the UPDATE, autocommit. */
static int pgbench_turn(struct fid *f, int clients, int seconds, const char *label,
                        struct turn *t)
{
	char script[320], sleep[48] = "", log[4096];
	struct bench_pgbench pb;
	if (f->think_ns > 0)
		snprintf(sleep, sizeof sleep, "\\sleep %lld us\n",
			 (long long)((f->think_ns + 500) / 1000));
	snprintf(script, sizeof script,
		 "\\set slot random(1, %d)\n%sUPDATE %s SET n = n + 1 WHERE id = :slot;\n",
		 f->rows, sleep, f->table);
	double c0 = cpu_s(RUSAGE_CHILDREN);   /* pgbench's, Debian's wrapper script too */
	if (bench_pgbench_run(f->o.url, script, "extended", clients, seconds, &pb, log,
	                      sizeof log) != 0) {
		fprintf(stderr, "\n" CMD ": %s: pgbench failed:\n%s", label, log);
		return -1;
	}
	t->cpu_s += cpu_s(RUSAGE_CHILDREN) - c0;
	t->cpu_tx += pb.transactions;
	t->done += pb.transactions;
	t->seconds += pb.tps > 0 ? (double)pb.transactions / pb.tps : 0;
	return 0;
}

#define PAUSE_PROBES 100

/* How long a thread's sleep of think_ms really lasts on this machine now,
 * the mean of PAUSE_PROBES: the timer's slack and the wait for a core
 * make it longer than asked. Taken before a cell, it is an input. */
static double probe_pause(double think_ms)
{
	if (think_ms <= 0)
		return 0;
	int64_t ns = (int64_t)llround(think_ms * 1e6), t0 = util_now_ns();
	for (int i = 0; i < PAUSE_PROBES; i++)
		util_sleep_ns(ns);
	return (double)(util_now_ns() - t0) / 1e6 / PAUSE_PROBES;
}

/* One turn of kit/load (or pgbench), and once more a second later when it
 * fails: on a loaded machine 64 connections opened at once may time out.
 * 0, or -1 when both failed (each said why on stderr). */
static int turn_twice(struct fid *f, const struct cell *c, int secs, const char *label,
                      struct turn *t, bool pgbench)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		if (attempt)
			util_sleep_ns(1000000000);
		int rc = pgbench ? pgbench_turn(f, c->clients, secs, label, t)
		                 : kit_turn(f, c->clients, secs, label, t);
		if (rc == 0)
			return 0;
		if (!kit_db_connected(f->admin))
			return -1;
		fprintf(stderr, CMD ": %s: %s\n", label, attempt ? "lost: the cell is left out"
		                                                  : "once more in a second");
	}
	return -1;
}

/* One client alone running op, the parts every prediction starts from;
 * -1 after one line on stderr. */
static int probe_alone(struct fid *f, const char *label, kit_load_op_fn *op,
                       struct drv_parts *out)
{
	struct drv_probe p;

	drv_probe_default(&p);
	p.url = f->o.url;
	p.bare_sql = "SELECT 1";
	p.label = label;
	if (f->o.quick) {
		p.warmup_seconds = 0.1;
		p.min_seconds = 0.3;
		p.min_requests = 50;
	}
	if (drv_probe_run(&p, op, f, out) != 0) {
		fprintf(stderr, "\n" CMD ": %s\n", out->error);
		return -1;
	}
	return 0;
}

/* PostgreSQL's hand-off and log, as the probes before the cells gave
 * them (the lock manager's share is 0 until probe_lockmgr has it). */
static void server_parts(const struct fid *f, struct drv_inputs *in)
{
	in->handoff = SIM_HANDOFF_HERD;
	in->wake_us = f->wake.wake_us;
	in->wake_lat_us = f->wake_lat_us;
	in->lockmgr_us = f->lockmgr_us;
	in->herd_bias = PG_HERD_BIAS;
	in->contend_us = f->contend_us;
	in->wal_flush_ms = f->flush_ms;
}

/* Predict and measure one cell of a shape; the engine's arguments go to
 * c->sim_args (the same for every cell of a shape but --clients and
 * --think-ms). */
static int run_cell(struct fid *f, struct shape_result *res, struct cell *c)
{
	const struct drv_parts *alone = &res->alone;
	const char *name = res->shape.name;
	char label[64];
	f->think_ns = (int64_t)llround(c->think_ms * 1e6);
	if (c->think_ms > 0)
		snprintf(label, sizeof label, "%s, %d clients, think %g ms", name, c->clients,
			 c->think_ms);
	else
		snprintf(label, sizeof label, "%s, %d clients", name, c->clients);
	/* SQLite has one write lock for the whole file, whatever the row. */
	struct drv_inputs in;
	int rows = f->postgres || f->mysql ? res->shape.rows : 1;
	drv_inputs_init(&in, rows > 1 ? SIM_SHARDED : SIM_NAIVE, c->clients, alone);
	in.rows = rows;
	in.seconds = f->o.seconds;
	progress(f, name, c->clients, "one pause");
	c->pause_ms = probe_pause(c->think_ms);
	in.think_ms = c->pause_ms;
	in.cold_after_us = f->cold.after_us;
	in.cold_us = f->cold.us;
	in.cold_per_ms = f->cold.per_ms;
	if (f->postgres)
		server_parts(f, &in);
	struct drv_prediction p;
	c->other = -1;
	if (f->mysql && f->flush_ms > 0) {
		/* the same parts under the order the server does not use first */
		in.wal_flush_ms = f->flush_ms;
		in.wal_order = f->order == SIM_WAL_RELEASE_FLUSH ? SIM_WAL_FLUSH_RELEASE
		                                                 : SIM_WAL_RELEASE_FLUSH;
		progress(f, name, c->clients, "engine, the other order");
		if (drv_predict(&in, &p, CMD) != 0)
			return -1;
		c->other = p.throughput_per_s;
	}
	in.wal_order = f->order;
	in.run_queues = f->run_queues == SIM_RUNQ_SHARED ? SIM_RUNQ_PER_CORE : SIM_RUNQ_SHARED;
	progress(f, name, c->clients, "engine, the other run queues");
	if (drv_predict(&in, &p, CMD) != 0)
		return -1;
	c->other_rq = p.throughput_per_s;
	in.run_queues = f->run_queues;
	c->one_lane = -1;
	if (f->postgres) {
		in.herd_lanes = 1;
		progress(f, name, c->clients, "engine, one lane");
		if (drv_predict(&in, &p, CMD) != 0)
			return -1;
		c->one_lane = p.throughput_per_s;
		in.herd_lanes = 0;
	}
	progress(f, name, c->clients, "engine");
	if (drv_predict(&in, &p, CMD) != 0)
		return -1;
	c->predicted = p.throughput_per_s;
	c->mva = p.mva_per_s;
	c->pred_wal = p.wal_per_commit;
	c->pred_cpu_ms = f->postgres ? p.server_cpu_ms : -1;
	c->pred_tail = p.p50_ms > 0 ? p.p99_ms / p.p50_ms : -1;
	drv_sim_args(&p, c->sim_args, sizeof c->sim_args);
	res->wal_cpu_ms = p.config.wal_cpu_ms;

	/* kit/load and pgbench take turns of one second each (pgbench -T
	 * counts whole seconds), the pair's order swapped every second (kit/load,
	 * pgbench, pgbench, kit/load, kit/load, ...). What else the machine
	 * runs drifts over seconds: 1 s runs of pgbench alone on 16 rows at 16
	 * clients here spread by 8 %, runs of 3 s by 4 %, and a dip lasted
	 * three runs. Turns that short put a drift on both tools alike, and one
	 * that grows through the cell (the table's dead versions, the log's
	 * files) favours neither. */
	int slices = f->pgbench ? f->o.seconds : 1;
	int secs = f->pgbench ? 1 : f->o.seconds;   /* kit/load alone: one turn */
	struct turn kit = { 0 }, pgb = { 0 };
	kit.server_cpu_s = f->postgres ? 0 : -1;
	c->lost = false;
	for (int h = 0; h < slices && !c->lost; h++) {
		for (int k = 0; k < 2 && !c->lost; k++) {
			bool pg = (k == 1) != (h % 2 == 1);
			if (pg && !f->pgbench)
				continue;
			progress(f, name, c->clients, pg ? "pgbench" : "kit/load");
			c->lost = turn_twice(f, c, secs, label, pg ? &pgb : &kit, pg) != 0;
		}
	}
	c->load = loadavg();
	f->think_ns = 0;
	if (c->lost) {
		c->kit = c->pgbench = c->wal_per_tx = c->kit_tail = c->server_cpu_ms = -1;
		c->kit_cpu_us = c->pgbench_cpu_us = -1;
		/* a server that went away stops the bench; a busy one loses a cell */
		return kit_db_connected(f->admin) ? 0 : -1;
	}
	c->kit = kit.seconds > 0 ? (double)kit.done / kit.seconds : 0;
	c->wal_per_tx = kit.syncs >= 0 && kit.all > 0 ? (double)kit.syncs / (double)kit.all : -1;
	c->pgbench = f->pgbench && pgb.seconds > 0 ? (double)pgb.done / pgb.seconds : -1;
	c->kit_tail = kit.turns ? kit.tail / kit.turns : -1;
	c->kit_cpu_us = kit.cpu_tx > 0 ? kit.cpu_s * 1e6 / (double)kit.cpu_tx : -1;
	c->pgbench_cpu_us = pgb.cpu_tx > 0 ? pgb.cpu_s * 1e6 / (double)pgb.cpu_tx : -1;
	c->server_cpu_ms = kit.server_cpu_s >= 0 && kit.all > 0
	                   ? kit.server_cpu_s * 1000 / (double)kit.all : -1;
	return 0;
}

/* Shape i of the grid: its slot count and name. */
static void shape_of(const struct fid_opts *o, int i, struct shape *sh)
{
	sh->rows = (int)o->slots.v[i];
	snprintf(sh->name, sizeof sh->name, sh->rows == 1 ? "%d row" : "%d slots", sh->rows);
}

/* One shape: its probe, then a cell per think time and client count. */
static int run_shape(struct fid *f, struct shape_result *res)
{
	const char *name = res->shape.name;
	f->rows = res->shape.rows;
	f->think_ns = 0;
	progress(f, name, 1, "one client alone");
	if (probe_alone(f, name, like, &res->alone) != 0)
		return -1;
	res->ncells = 0;
	for (int t = 0; t < f->o.think_ms.n; t++)
		for (int k = 0; k < f->o.clients.n; k++) {
			struct cell *c = &res->cells[res->ncells++];
			c->clients = (int)f->o.clients.v[k];
			c->think_ms = f->o.think_ms.v[t];
			if (run_cell(f, res, c) != 0)
				return -1;
		}
	snprintf(res->sim_args, sizeof res->sim_args, "%s", res->cells[0].sim_args);
	return 0;
}

/* One like on row 1, whatever the shape: the wake probe's hot row. */
static int like_one(void *arg, struct kit_load_thread *th)
{
	const struct fid *f = arg;
	const char *p[] = { "1" };
	return kit_db_exec(th->db, f->sql, 1, p);
}

/*
 * What each co-woken waiter adds to a hand-off, beyond the parts the
 * other probes give: two bursts on row 1 (every caller sends once, at
 * once; bench/README.md, "Past 32 waiters"), each beside the engine's
 * own burst from row 1's parts alone with nothing added. On one row a
 * burst of n callers drains n - 1 sleepers, and a hand-off with w
 * waiting delays its winner by lockmgr_us (w - 1), which adds
 * lockmgr_us m (m - 1) / 3 to the burst's mean latency (m = n - 1;
 * tests/engine/test_handoff.c, handoff-1.6). What the engine misses
 * grows between the two sizes by that much: the slope is lockmgr_us.
 */
static int probe_lockmgr(struct fid *f, const char *sql)
{
	struct drv_parts alone;

	f->lockmgr_us = 0;
	drv_burst_default(&f->burst);
	f->burst.url = f->o.url;
	f->burst.sql = sql;
	if (f->o.quick)
		f->burst.reps = 3;
	progress(f, "the server", 1, "one row's parts for the bursts");
	if (probe_alone(f, "the burst probe", like_one, &alone) != 0)
		return -1;
	/* one row alone, the operation the wake probe ran: what a request
	 * that waits costs over one that does not (server.h) */
	f->contend_alone_ms = alone.cpu_db_ms;
	f->contend_us = drv_contend_us(&f->wake, alone.cpu_db_ms);
	progress(f, "the server", f->burst.callers[1], "bursts on one row");
	if (drv_probe_burst(&f->burst) != 0) {
		fprintf(stderr, "\n" CMD ": %s\n", f->burst.error);
		return -1;
	}
	for (int k = 0; k < 2; k++) {
		struct drv_inputs in;
		struct drv_prediction pr;
		drv_inputs_init(&in, SIM_NAIVE, f->burst.callers[k], &alone);
		in.think_ms = 1e5;           /* past the 10 s simulated: one request each */
		in.seconds = 10;
		server_parts(f, &in);        /* lockmgr_us still 0 */
		if (drv_predict(&in, &pr, CMD) != 0)
			return -1;
		f->burst_engine_ms[k] = pr.mean_ms;
	}
	double m0 = f->burst.callers[0] - 1, m1 = f->burst.callers[1] - 1;
	double missed = (f->burst.mean_ms[1] - f->burst_engine_ms[1]) -
	                (f->burst.mean_ms[0] - f->burst_engine_ms[0]);
	double per = missed * 1000 / ((m1 * (m1 - 1) - m0 * (m0 - 1)) / 3);
	f->lockmgr_us = per > 0 ? per : 0;
	return 0;
}

/* PostgreSQL's log flush and its wakes, before any cell runs. */
static int probe_server(struct fid *f)
{
	char sql[160], err[256];
	progress(f, "the server", 1, "one flush of the log");
	snprintf(sql, sizeof sql, "UPDATE %s SET n = n + 1 WHERE id = 1", f->table);
	if (drv_probe_flush(f->o.url, sql, f->o.quick ? 100 : 400, &f->flush_ms, err,
	                    sizeof err) != 0) {
		fprintf(stderr, "\n" CMD ": %s\n", err);
		return -1;
	}
	drv_wake_default(&f->wake);
	f->wake.url = f->o.url;
	f->wake.op = like_one;
	f->wake.arg = f;
	f->wake.seconds = f->o.quick ? 0.5 : 2;
	progress(f, "the server", f->wake.clients[1], "CPU per waiter woken");
	if (drv_probe_wake(&f->wake) != 0) {
		fprintf(stderr, "\n" CMD ": %s\n", f->wake.error);
		return -1;
	}
	progress(f, "the machine", 2, "a wake across cores");
	if (drv_probe_wake_lat(f->o.quick ? 500 : 4000, &f->wake_lat_us) != 0) {
		fprintf(stderr, "\n" CMD ": the wake probe could not start two threads and "
		        "their pipes (out of threads or file descriptors?)\n");
		return -1;
	}
	return probe_lockmgr(f, sql);
}

/* This machine's cold cores: one client, the hot row's statement after
 * pauses (labs/driver/server.h, drv_probe_cold). */
static int probe_cold(struct fid *f)
{
	char sql[160], err[256];
	progress(f, "the machine", 1, "a core idle a while");
	snprintf(sql, sizeof sql, "UPDATE %s SET n = n + 1 WHERE id = 1", f->table);
	if (drv_probe_cold(f->o.url, sql, f->o.quick ? 50 : 200, &f->cold, err, sizeof err) != 0) {
		fprintf(stderr, "\n" CMD ": %s\n", err);
		return -1;
	}
	return 0;
}

/* MariaDB: the binary log and innodb_flush_log_at_trx_commit decide when
 * the row goes and whether a commit waits for a flush; then, if it
 * does, one flush as on PostgreSQL. */
static int probe_innodb(struct fid *f)
{
	char sql[160], err[256];
	if (kit_db_query_int(f->admin, "SELECT @@log_bin", 0, NULL, &f->log_bin) != 0 ||
	    kit_db_query_int(f->admin, "SELECT @@innodb_flush_log_at_trx_commit", 0, NULL,
	                     &f->flush_at_commit) != 0) {
		fprintf(stderr, CMD ": reading the server's settings: %s\n", kit_db_errmsg(f->admin));
		return -1;
	}
	f->order = f->log_bin ? SIM_WAL_FLUSH_RELEASE : SIM_WAL_RELEASE_FLUSH;
	f->flush_ms = 0;
	if (!f->log_bin && f->flush_at_commit != 1)
		return 0;         /* nothing flushed at commit: no log to wait for */
	progress(f, "the server", 1, "one flush of the log");
	snprintf(sql, sizeof sql, "UPDATE %s SET n = n + 1 WHERE id = 1", f->table);
	if (drv_probe_flush(f->o.url, sql, f->o.quick ? 100 : 400, &f->flush_ms, err,
	                    sizeof err) != 0) {
		fprintf(stderr, "\n" CMD ": %s\n", err);
		return -1;
	}
	return 0;
}

static double loadavg(void)
{
	double l = -1;
	FILE *fp = fopen("/proc/loadavg", "r");
	if (fp) {
		if (fscanf(fp, "%lf", &l) != 1)
			l = -1;
		fclose(fp);
	}
	return l;
}

static double cpu_ms(const struct drv_parts *a)
{
	return a->cpu_client_ms + (a->cpu_db_ms > 0 ? a->cpu_db_ms : 0);
}

/* The measurement a prediction is held to: pgbench where it ran, kit/load
 * on MariaDB (no pgbench there); < 0: none (SQLite). */
static double peer(const struct fid *f, const struct cell *c)
{
	return c->pgbench > 0 ? c->pgbench : f->mysql && c->kit > 0 ? c->kit : -1;
}

/* The targets over the whole run: cells from 2 clients up whose
 * prediction is within 25 % of the peer, cells where kit/load reaches
 * 0.95 x pgbench, and on one row at 16 clients kit/load's p99/p50 over the
 * engine's (target: within a factor of 1.5 either way). */
struct verdicts {
	int pred_ok, pred_cells, kit_ok, kit_cells;
	int rq_ok;               /* the same, the engine with the other run queues */
	int lane_ok;             /* the same, the herd's losers one at a time */
	double tail_ratio;       /* < 0: not measured */
};

static void tally(const struct fid *f, const struct shape_result *res, int nshapes,
                  struct verdicts *v)
{
	memset(v, 0, sizeof *v);
	v->tail_ratio = -1;
	for (int s = 0; s < nshapes; s++)
		for (int k = 0; k < res[s].ncells; k++) {
			const struct cell *c = &res[s].cells[k];
			if (peer(f, c) <= 0)
				continue;
			double rp = c->predicted / peer(f, c);
			if (c->clients >= 2) {
				v->pred_cells++;
				v->pred_ok += rp >= 0.75 && rp <= 1.25;
				double rq = c->other_rq / peer(f, c);
				v->rq_ok += rq >= 0.75 && rq <= 1.25;
				double ln = c->one_lane / peer(f, c);
				v->lane_ok += c->one_lane >= 0 && ln >= 0.75 && ln <= 1.25;
			}
			if (c->pgbench > 0) {
				v->kit_cells++;
				v->kit_ok += c->kit / c->pgbench >= 0.95;
			}
			if (res[s].shape.rows == 1 && c->clients == 16 && c->think_ms == 0 &&
			    c->kit_tail > 0 && c->pred_tail > 0)
				v->tail_ratio = c->kit_tail / c->pred_tail;
		}
}

static void json_num(double v, int digits)
{
	if (v < 0 || !isfinite(v))
		fputs("null", stdout);
	else
		printf("%.*f", digits, v);
}

static void print_json(const struct fid *f, const struct shape_result *res, int nshapes,
                       double load0, double load1)
{
	fputs("{\"db\":", stdout);
	util_json_str(stdout, f->postgres ? "postgresql" : f->mysql ? "mysql" : "sqlite");
	printf(",\"cores\":%d,\"seconds\":%d,\"quick\":%s,\"loadavg\":[", drv_cores(), f->o.seconds,
	       f->o.quick ? "true" : "false");
	json_num(load0, 2);
	putchar(',');
	json_num(load1, 2);
	struct verdicts v;
	tally(f, res, nshapes, &v);
	printf("],\"pgbench\":%s,\"run_queues\":\"%s\",\"targets\":{\"predicted_within_25pct\":%d,"
	       "\"of\":%d,\"other_run_queues_within_25pct\":%d,\"one_lane_within_25pct\":%d,"
	       "\"kit_at_least_095\":%d,\"kit_of\":%d,\"one_row_16_p99_p50_kit_over_engine\":",
	       f->pgbench ? "true" : "false", sim_run_queues_name(f->run_queues), v.pred_ok,
	       v.pred_cells, v.rq_ok, v.lane_ok, v.kit_ok, v.kit_cells);
	json_num(v.tail_ratio, 2);
	printf("},\"shapes\":[");
	for (int s = 0; s < nshapes; s++) {
		const struct drv_parts *a = &res[s].alone;
		fputs(s ? ",{\"shape\":" : "{\"shape\":", stdout);
		util_json_str(stdout, res[s].shape.name);
		printf(",\"rows\":%d,\"one_client\":{\"hold_ms\":%.4f,"
		       "\"outside_ms\":%.4f,\"request_ms\":%.4f,\"hold_median_ms\":%.4f,"
		       "\"outside_median_ms\":%.4f,\"hold_p99_ms\":%.4f,\"cpu_ms\":%.4f,"
		       "\"cpu_client_ms\":%.4f,\"cpu_db_ms\":",
		       res[s].shape.rows, a->hold_ms, a->outside_ms, a->request_ms,
		       a->hold_median_ms, a->outside_median_ms, a->hold_p99_ms,
		       cpu_ms(a), a->cpu_client_ms);
		json_num(a->cpu_db_ms, 4);
		bool log = f->postgres || (f->mysql && f->flush_ms > 0);
		printf(",\"requests\":%lld},\"server\":{\"handoff\":\"%s\",\"wal_flush_ms\":",
		       (long long)a->requests, f->postgres ? "herd" : "fifo");
		json_num(log ? f->flush_ms : -1, 4);
		fputs(",\"wal_cpu_ms\":", stdout);
		json_num(log ? res[s].wal_cpu_ms : -1, 4);
		printf(",\"wal_order\":\"%s\"", sim_wal_order_name(f->order));
		if (f->mysql)
			printf(",\"log_bin\":%s,\"innodb_flush_log_at_trx_commit\":%lld",
			       f->log_bin ? "true" : "false", (long long)f->flush_at_commit);
		fputs(",\"wake_us\":", stdout);
		json_num(f->postgres ? f->wake.wake_us : -1, 2);
		fputs(",\"wake_lat_us\":", stdout);
		json_num(f->postgres ? f->wake_lat_us : -1, 2);
		fputs(",\"lockmgr_us\":", stdout);
		json_num(f->postgres ? f->lockmgr_us : -1, 2);
		fputs(",\"herd_bias\":", stdout);
		json_num(f->postgres ? PG_HERD_BIAS : -1, 2);
		printf(",\"cold_after_us\":%.0f,\"cold_us\":%.1f,\"cold_per_ms\":%.1f,"
		       "\"cold_probe\":{\"back_to_back_us\":%.1f,\"pause_us\":[",
		       f->cold.after_us, f->cold.us, f->cold.per_ms, f->cold.r0_us);
		for (int k = 0; k < f->cold.npoints; k++)
			printf("%s%.1f", k ? "," : "", f->cold.g_us[k]);
		fputs("],\"extra_us\":[", stdout);
		for (int k = 0; k < f->cold.npoints; k++)
			printf("%s%.1f", k ? "," : "", f->cold.extra_us[k]);
		fputs("]}", stdout);
		fputs(",\"contend_us\":", stdout);
		json_num(f->postgres ? f->contend_us : -1, 1);
		fputs(",\"contend_alone_cpu_ms\":", stdout);
		json_num(f->postgres ? f->contend_alone_ms : -1, 4);
		if (f->postgres)
			printf(",\"burst_probe\":{\"callers\":[%d,%d],\"mean_ms\":[%.4f,%.4f],"
			       "\"engine_mean_ms\":[%.4f,%.4f]}", f->burst.callers[0],
			       f->burst.callers[1], f->burst.mean_ms[0], f->burst.mean_ms[1],
			       f->burst_engine_ms[0], f->burst_engine_ms[1]);
		if (f->postgres)
			printf(",\"wake_probe\":{\"clients\":[%d,%d],\"cpu_ms_per_commit\":[%.4f,%.4f],"
			       "\"commits\":[%lld,%lld]}", f->wake.clients[0], f->wake.clients[1],
			       f->wake.cpu_ms[0], f->wake.cpu_ms[1], (long long)f->wake.commits[0],
			       (long long)f->wake.commits[1]);
		fputs("},\"sim_args\":", stdout);
		util_json_str(stdout, res[s].sim_args);
		fputs(",\"cells\":[", stdout);
		for (int k = 0; k < res[s].ncells; k++) {
			const struct cell *c = &res[s].cells[k];
			printf("%s{\"clients\":%d,\"think_ms\":%.3f,\"pause_ms\":%.4f,"
			       "\"sim_args\":", k ? "," : "", c->clients, c->think_ms, c->pause_ms);
			util_json_str(stdout, c->sim_args);
			printf(",\"predicted_tps\":%.1f,\"mva_tps\":", c->predicted);
			json_num(c->mva, 1);
			printf(",\"other_run_queues_tps\":");
			json_num(c->other_rq, 1);
			printf(",\"one_lane_tps\":");
			json_num(c->one_lane, 1);
			printf(",\"other_order_tps\":");
			json_num(c->other, 1);
			printf(",\"lost\":%s,\"kit_tps\":", c->lost ? "true" : "false");
			json_num(c->kit, 1);
			fputs(",\"pgbench_tps\":", stdout);
			json_num(c->pgbench, 1);
			printf(",\"wal_syncs_per_tx\":");
			json_num(c->wal_per_tx, 3);
			printf(",\"predicted_wal_per_commit\":");
			json_num(c->pred_wal, 3);
			printf(",\"server_cpu_ms_per_commit\":");
			json_num(c->server_cpu_ms, 4);
			printf(",\"predicted_server_cpu_ms_per_commit\":");
			json_num(c->pred_cpu_ms, 4);
			printf(",\"predicted_p99_over_p50\":");
			json_num(c->pred_tail, 2);
			printf(",\"kit_p99_over_p50\":");
			json_num(c->kit_tail, 2);
			printf(",\"client_cpu_us_per_tx\":{\"kit\":");
			json_num(c->kit_cpu_us, 1);
			printf(",\"pgbench\":");
			json_num(c->pgbench_cpu_us, 1);
			putchar('}');
			printf(",\"loadavg\":");
			json_num(c->load, 2);
			putchar('}');
		}
		printf("]}");
	}
	printf("]}\n");
}

/* "measured/predicted" with two decimals, "-" for either one missing. */
static void pair(char *buf, size_t n, double measured, double predicted)
{
	char m[12] = "-", p[12] = "-";
	if (measured >= 0)
		snprintf(m, sizeof m, "%.2f", measured);
	if (predicted >= 0)
		snprintf(p, sizeof p, "%.2f", predicted);
	snprintf(buf, n, "%s/%s", m, p);
}

/* "1.02 ok" or "0.61 MISS" against a target band; "-" without a peer. */
static const char *verdict(double r, double lo, double hi, char *buf, size_t n)
{
	if (r <= 0)
		return "-";
	snprintf(buf, n, "%.2f %s", r, r >= lo && r <= hi ? "ok" : "MISS");
	return buf;
}

static void print_table(const struct fid *f, const struct shape_result *res, int nshapes,
                        double load0, double load1)
{
	printf("fidelity on %s: %d cores, %d s per cell and tool, load average %.2f before, "
	       "%.2f after\n", db_name(f), drv_cores(), f->o.seconds, load0, load1);
	printf("every client: UPDATE counter SET n = n + 1 WHERE id = $1 on a random slot, "
	       "autocommit\n");
	if (f->mysql)
		printf("MariaDB: binary log %s, innodb_flush_log_at_trx_commit = %lld: the engine "
		       "runs --wal-order %s%s; no pgbench: kit/load is the peer\n",
		       f->log_bin ? "on" : "off", (long long)f->flush_at_commit,
		       sim_wal_order_name(f->order),
		       f->flush_ms > 0 ? "" : " with no flush at commit");
	else if (!f->postgres)
		printf("SQLite: one write lock for the whole file, so the engine sees 1 lock for "
		       "every shape; no pgbench\n");
	else if (!f->pgbench)
		printf("pgbench is not installed (it comes with postgresql-client): no pgbench "
		       "column\n");
	for (int s = 0; s < nshapes; s++) {
		const struct drv_parts *a = &res[s].alone;
		printf("\n%s: one client alone, %lld requests, mean: hold %.3f ms, outside %.3f ms, "
		       "CPU %.3f ms here", res[s].shape.name, (long long)a->requests, a->hold_ms,
		       a->outside_ms, a->cpu_client_ms);
		if (a->cpu_db_ms >= 0 && f->postgres)
			printf(" + %.3f ms in the server", a->cpu_db_ms);
		printf("\n  medians: hold %.3f ms, outside %.3f ms; hold p99 %.3f ms", a->hold_median_ms,
		       a->outside_median_ms, a->hold_p99_ms);
		if (f->postgres)
			printf("\n  the server, before the cells: one log flush %.3f ms (in the hold "
			       "above; %.3f ms of it CPU: the CPU the hold before it and the time "
			       "outside cannot hold); CPU per commit %.3f ms at %d clients, %.3f ms at "
			       "%d: %.1f us a waiter woken; a wake across cores reaches its "
			       "core in %.1f us; bursts on one row of %d and %d callers: mean "
			       "%.3f and %.3f ms, the engine %.3f and %.3f: %.1f us a hand-off "
			       "for each co-woken waiter; one client alone %.3f ms of CPU a "
			       "request: %.0f us more for each request that waits",
			       f->flush_ms, res[s].wal_cpu_ms,
			       f->wake.cpu_ms[0], f->wake.clients[0], f->wake.cpu_ms[1],
			       f->wake.clients[1], f->wake.wake_us, f->wake_lat_us,
			       f->burst.callers[0], f->burst.callers[1], f->burst.mean_ms[0],
			       f->burst.mean_ms[1], f->burst_engine_ms[0], f->burst_engine_ms[1],
			       f->lockmgr_us, f->contend_alone_ms, f->contend_us);
		if (f->cold.after_us > 0)
			printf("\n  the machine, before the cells: a request after a pause took "
			       "%.0f us more past %.0f us of idle, %.0f us more for each further ms "
			       "(back to back %.0f us)", f->cold.us, f->cold.after_us, f->cold.per_ms,
			       f->cold.r0_us);
		else
			printf("\n  the machine, before the cells: no cold core seen (a request "
			       "after a pause of up to 2 ms took as long as back to back)");
		if (f->mysql && f->flush_ms > 0)
			printf("\n  the server, before the cells: one redo log flush %.3f ms (in the "
			       "hold above; %.3f ms of it CPU)", f->flush_ms, res[s].wal_cpu_ms);
		printf("\n  engine: hotrow sim %s --clients N", res[s].sim_args);
		if (f->o.think_ms.n > 1)
			printf(" (its --think-ms the cell's)");
		printf("\n  %7s %6s %6s %9s %9s %9s %9s %9s %9s %9s %9s %12s %12s %11s %11s %11s %5s\n",
		       "clients", "think", "pause", "predicted", "other", "runq", "lane", "MVA", "kit/load",
		       "pgbench",
		       "pred/kit", "pred/pgbench", "kit/pgbench", "WAL/tx", "CPU/commit", "p99/p50",
		       "load");
		for (int k = 0; k < res[s].ncells; k++) {
			const struct cell *c = &res[s].cells[k];
			char v1[24], v2[24], v3[24], mva[16], pg[16], wal[24], tail[24], oth[16];
			char kit[16], cpu[24], rq[16], lane[16];
			snprintf(kit, sizeof kit, c->lost ? "lost" : "%.0f", c->kit);
			snprintf(mva, sizeof mva, c->mva >= 0 ? "%.0f" : "-", c->mva);
			snprintf(oth, sizeof oth, c->other >= 0 ? "%.0f" : "-", c->other);
			snprintf(rq, sizeof rq, c->other_rq >= 0 ? "%.0f" : "-", c->other_rq);
			snprintf(lane, sizeof lane, c->one_lane >= 0 ? "%.0f" : "-", c->one_lane);
			snprintf(pg, sizeof pg, c->pgbench >= 0 ? "%.0f" : "-", c->pgbench);
			pair(wal, sizeof wal, c->wal_per_tx, c->pred_wal);
			pair(tail, sizeof tail, c->kit_tail, c->pred_tail);
			pair(cpu, sizeof cpu, c->server_cpu_ms, c->pred_cpu_ms);
			double rp = c->pgbench > 0 ? c->predicted / c->pgbench : -1;
			double rk = c->pgbench > 0 ? c->kit / c->pgbench : -1;
			double rkit = c->kit > 0 ? c->predicted / c->kit : 0;
			if (c->clients < 2 && rp > 0)
				snprintf(v1, sizeof v1, "%.2f", rp);
			/* on MariaDB kit/load is the peer: its ratio has the target */
			snprintf(v3, sizeof v3, "%.2f", rkit);
			if (f->mysql && c->clients >= 2)
				verdict(rkit, 0.75, 1.25, v3, sizeof v3);
			printf("  %7d %6g %6.3f %9.0f %9s %9s %9s %9s %9s %9s %9s %12s %12s %11s %11s %11s "
			       "%5.1f\n", c->clients, c->think_ms, c->pause_ms, c->predicted, oth, rq, lane,
			       mva, kit, pg, v3,
			       c->clients < 2 ? (rp > 0 ? v1 : "-") : verdict(rp, 0.75, 1.25, v1, sizeof v1),
			       verdict(rk, 0.95, 1e9, v2, sizeof v2), wal, cpu, tail, c->load);
		}
	}
	struct verdicts v;
	tally(f, res, nshapes, &v);
	char tail[96] = "";
	if (v.tail_ratio > 0)
		snprintf(tail, sizeof tail, "; one row, 16 clients: p99/p50 kit/load over the engine "
			 "%.2f (within 1.5 either way: %s)", v.tail_ratio,
			 v.tail_ratio <= 1.5 && v.tail_ratio >= 1 / 1.5 ? "ok" : "MISS");
	if (v.pred_cells && f->mysql)
		printf("\ntargets: predicted within 25 %% of kit/load in %d of %d cells from 2 "
		       "clients up (runq: %d)%s\n", v.pred_ok, v.pred_cells, v.rq_ok, tail);
	else if (v.pred_cells)
		printf("\ntargets: predicted within 25 %% of pgbench in %d of %d cells from 2 clients "
		       "up (runq: %d; lane: %d); kit/load at least 0.95 x pgbench in %d of %d%s\n",
		       v.pred_ok, v.pred_cells, v.rq_ok, v.lane_ok, v.kit_ok, v.kit_cells, tail);
	printf("\npredicted: the engine, a closed loop fed only the parts measured before the "
	       "cells (MVA: the same\nnetwork solved, where it applies: not with a herd or a "
	       "shared log); other: the engine under the other commit order (MariaDB only);\n"
	       "runq: the engine with the other --run-queues (shared: a CPU job starts on any free\n"
	       "core; per-core: on one drawn at random, where it waits while another idles);\n"
	       "lane: the engine with a commit's woken losers one at a time (--herd-lanes 1),\n"
	       "asleep on the lock manager's lock, not in the run queue (PostgreSQL only);\n"
	       "pred/kit and pred/pgbench: predicted / measured. Targets: predicted within 25 %% "
	       "of pgbench\n(kit/load on MariaDB) from 2 clients up; kit/load at least 0.95 x "
	       "pgbench. WAL/tx: log\nflushes per transaction, kit/load's run (pg_stat_wal; "
	       "MariaDB: Innodb_data_fsyncs) / the\nengine's (below 1, commits shared a flush). "
	       "p99/p50: latency, kit/load / the engine (the think\ntime taken out). think: "
	       "the pause asked before each request, ms; pause: what a sleep of\nit took here, "
	       "probed before the cell: the engine's think time. CPU/commit: the server's\nCPU per "
	       "commit, ms, kit/load's backends (/proc/PID/schedstat) / the engine's (the hold's\n"
	       "CPU, its share of the log's, its herd wakes). load: the load average\nwhen "
	       "the cell ended (more than the cores: other work shared them).\n");
}

int bench_fidelity_main(int argc, char **argv)
{
	struct fid f = { .run_queues = SIM_RUNQ_PER_CORE };
	int rc = parse_opts(argc, argv, &f.o);
	if (rc)
		return rc > 0 ? 0 : 2;
	char url[96];
	if (f.o.scratch) {
		snprintf(url, sizeof url, "sqlite:%s", f.o.scratch_path);
		f.o.url = url;
		fprintf(stderr, CMD ": no --db and no HOTROW_PG_URL: SQLite only, on a scratch "
			"file (make pg-up starts a PostgreSQL)\n");
	}
	if (kit_db_open(&f.admin, f.o.url) != 0) {
		fprintf(stderr, CMD ": %s\n", kit_db_errmsg(f.admin));
		kit_db_close(f.admin);
		return 1;
	}
	f.postgres = kit_db_engine(f.admin) == KIT_DB_POSTGRES;
	f.mysql = kit_db_engine(f.admin) == KIT_DB_MYSQL;
	f.pgbench = f.postgres && bench_pgbench_found();
	int nshapes = f.o.slots.n;
	struct shape_result *res = calloc((size_t)nshapes, sizeof *res);
	if (res == NULL) {
		fprintf(stderr, CMD ": out of memory\n");
		kit_db_close(f.admin);
		return 1;
	}
	for (int s = 0; s < nshapes; s++)
		shape_of(&f.o, s, &res[s].shape);
	double load0 = loadavg();
	rc = setup(&f);
	if (rc == 0 && f.postgres)
		rc = probe_server(&f);
	else if (rc == 0 && f.mysql)
		rc = probe_innodb(&f);
	if (rc == 0)
		rc = probe_cold(&f);
	for (int s = 0; rc == 0 && s < nshapes; s++)
		rc = run_shape(&f, &res[s]);
	double load1 = loadavg();
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r%-72s\r", "");
	teardown(&f);
	kit_db_close(f.admin);
	if (f.o.scratch)
		sqlite_remove(f.o.scratch_path);
	if (rc == 0 && f.o.json)
		print_json(&f, res, nshapes, load0, load1);
	else if (rc == 0)
		print_table(&f, res, nshapes, load0, load1);
	free(res);
	return rc == 0 ? 0 : 1;
}
