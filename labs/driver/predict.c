/*
 * predict.c: the engine asked about a driver's load, from inputs only,
 * and the lines that set its answer beside the measurement. See predict.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labs/driver/fail.h"
#include "labs/driver/predict.h"
#include "labs/driver/server.h"
#include "util/clock.h"

#define OFF_BY 0.25            /* a ratio further than this from 1 asks why */
#define HOLD_MOVED 0.15        /* a hold under load this far from alone is a reason */
#define SIM_REQUESTS 200000.0  /* enough simulated requests for a p99 */
#define SKEWED 1.2             /* a mean hold this far above the median: exponential */
#define FLUSH_COMMITS 200      /* the flush probe's commits, one client alone */
#define FLUSH_TABLE "hotrow_flush_probe"
#define REPORTED_WAIT_NS 2000000000LL   /* how long the run's backends get to report */
#define REPORTED_STEP_NS 20000000LL

int drv_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

void drv_inputs_init(struct drv_inputs *in, enum sim_strategy s, int threads,
                     const struct drv_parts *alone)
{
	memset(in, 0, sizeof *in);
	in->strategy = s;
	in->rows = 1;
	in->threads = threads;
	in->alone = *alone;
	in->cores = drv_cores();
	in->run_queues = SIM_RUNQ_PER_CORE;   /* Linux at these short jobs */
	in->seconds = 5;
}

/* The buffered fixes: a client's request takes no row lock; a flush does. */
static bool buffered(enum sim_strategy s)
{
	return sim_strategy_info(s)->buffered;
}

/* The CPU a flush's leader spends waking from its sync, in ms: the
 * engine runs one on PostgreSQL's log (a herd, flush-release). */
static double leader_wake_ms(const struct sim_config *c)
{
	return c->handoff == SIM_HANDOFF_HERD && c->wal_order == SIM_WAL_FLUSH_RELEASE &&
	       c->wal_flush_ms > 0 ? c->wake_us / 1000 : 0;
}

/* What a follower's wake costs beyond a wake, in ms: on PostgreSQL's log
 * a commit a flush carried pays the flush's CPU as its leader did
 * (sim_wal.c). */
static double follow_extra_ms(const struct sim_config *c)
{
	return leader_wake_ms(c) > 0 ? fmax(0, c->wal_cpu_ms - c->wake_us / 1000) : 0;
}

/* The engine's config for *in: a closed loop of in->threads clients. */
static void to_config(const struct drv_inputs *in, struct sim_config *c)
{
	const struct drv_parts *a = &in->alone;
	sim_config_default(c);
	c->strategy = in->strategy;
	c->rows = in->rows;
	c->slot = SIM_SLOT_RANDOM;
	c->clients = in->threads;
	c->think_ms = in->think_ms;
	c->think_dist = SIM_DIST_CONST;
	/* Holds that vary (a mean well above the median: slow commits now and
	 * then) are closer to exponential than to constant. */
	const struct drv_parts *h = buffered(in->strategy) ? &in->flush : a;
	c->hold_dist = h->hold_ms > SKEWED * h->hold_median_ms ? SIM_DIST_EXP : SIM_DIST_CONST;
	c->pool = 0;                      /* every thread has its own connection */
	c->pool_timeout_ms = 0;
	c->client_timeout_ms = 0;
	c->unrelated_rps = 0;
	c->nphases = 0;
	c->flush_ms = in->flush_ms > 0 ? in->flush_ms : c->flush_ms;
	if (in->redis_op_us > 0)
		c->redis_op_us = in->redis_op_us;
	c->batch = in->batch > 1 ? in->batch : 1;
	if (buffered(in->strategy)) {
		c->hold_ms = in->flush.hold_ms > 0 ? in->flush.hold_ms : 0.001;
		c->work_ms = 0;
		c->outside_ms = a->request_ms;
	} else {
		/* With a shared log the commit's flush is its own station. */
		double db = a->hold_ms - in->work_ms - in->wal_flush_ms;
		c->hold_ms = db > 0.001 ? db : 0.001;
		c->work_ms = in->work_ms;
		c->outside_ms = a->outside_ms;
	}
	/* The engine counts the CPU as part of the hold and of the outside
	 * time; the server's parse and plan come before the lock, so its CPU
	 * per request may exceed the hold: then the whole hold is CPU, and
	 * the rest of the server's CPU is spent outside the lock (a batch's
	 * hundreds of statements before its one fee UPDATE). */
	c->cores = in->cores;
	c->run_queues = in->run_queues;
	if (in->cores > 0 && in->cold_after_us > 0) {
		c->cold_after_us = in->cold_after_us;
		c->cold_us = in->cold_us;
		c->cold_per_ms = in->cold_per_ms;
	}
	double client = a->cpu_client_ms, db = a->cpu_db_ms > 0 ? a->cpu_db_ms : 0;
	if (a->in_process && !buffered(in->strategy)) {
		/* SQLite works in the caller's thread: the hold is its CPU. */
		db = fmin(client, c->hold_ms);
		client -= db;
	}
	if (db > c->hold_ms)
		client += db - c->hold_ms;
	c->cpu_client_ms = fmin(client, c->outside_ms);
	c->cpu_db_ms = fmin(db, c->hold_ms);
	c->handoff = in->handoff;
	if (in->handoff == SIM_HANDOFF_HERD) {
		c->wake_us = in->wake_us;
		c->wake_lat_us = in->wake_lat_us;
		c->lockmgr_us = in->lockmgr_us;
		c->herd_bias = in->herd_bias;
		c->herd_lanes = in->herd_lanes;
	}
	c->contend_us = in->contend_us;
	c->wal_flush_ms = in->wal_flush_ms;
	c->wal_order = in->wal_order;
	/* What the probe's CPU leaves over, once the hold before the flush
	 * and the time outside are all CPU, was spent in the only other part
	 * of a request: the flush (writing the log, entering fdatasync, and
	 * on PostgreSQL's log the leader's wake from it, which the engine
	 * runs as a wake of its own: sim_wal.c). */
	if (c->wal_flush_ms > 0)
		c->wal_cpu_ms = fmin(c->wal_flush_ms, fmax(0, a->cpu_client_ms +
		                     fmax(a->cpu_db_ms, 0) - c->cpu_client_ms - c->cpu_db_ms -
		                     leader_wake_ms(c)));
}

int drv_predict(const struct drv_inputs *in, struct drv_prediction *out, const char *cmd)
{
	char err[200];
	memset(out, 0, sizeof *out);
	if (in->alone.stamp == 0 || (buffered(in->strategy) && in->flush.stamp == 0)) {
		fprintf(stderr, "%s: engine: refused, the parts were not measured by a probe "
		        "(one thread alone)\n", cmd);
		return -1;
	}
	struct sim_config c;
	to_config(in, &c);
	double x = 0, r = 0;
	bool mva = sim_mva(&c, &x, &r) == 0;
	/* Simulate enough requests for a p99, no more: a fast path would
	 * otherwise cost the engine millions of events for nothing. */
	c.seconds = in->seconds > 0 ? in->seconds : 5;
	if (mva && x > 0 && SIM_REQUESTS / x < c.seconds)
		c.seconds = fmax(SIM_REQUESTS / x, 0.5);
	if (sim_config_check(&c, err, sizeof err) != 0) {
		fprintf(stderr, "%s: engine: %s\n", cmd, err);
		return -1;
	}
	sim_config_round(&c);      /* what runs is what drv_sim_args prints */
	struct sim *s = sim_new(&c);
	if (s == NULL) {
		fprintf(stderr, "%s: engine: refused the config\n", cmd);
		return -1;
	}
	sim_run(s);
	struct sim_summary sum;
	sim_summary(s, &sum);
	sim_free(s);

	const struct drv_parts *a = &in->alone;
	out->in = *in;
	out->config = c;
	out->throughput_per_s = sum.throughput_per_s;
	out->mean_ms = sum.latency_ms.mean;
	out->p50_ms = sum.latency_ms.p50;
	out->p99_ms = sum.latency_ms.p99;
	out->mva_per_s = mva ? x : -1;
	out->mva_mean_ms = mva ? r : -1;
	/* a row is held for its flush of the shared log too (flush-release) */
	double held = c.hold_ms + c.work_ms +
	              (c.wal_order == SIM_WAL_FLUSH_RELEASE ? c.wal_flush_ms : 0);
	out->ceiling_per_s = held > 0 ? in->rows * 1000.0 / held : 0;
	out->clients_per_s = a->request_ms + in->think_ms > 0
	                     ? in->threads * 1000.0 / (a->request_ms + in->think_ms) : 0;
	double cpu = a->cpu_client_ms + (a->cpu_db_ms > 0 ? a->cpu_db_ms : 0);
	out->cpu_per_s = a->cpu_db_ms >= 0 && cpu > 0 ? in->cores * 1000.0 / cpu : -1;
	out->max_lag_s = sum.count.max_lag_s;
	out->wal_per_commit = sum.wal.flushes_per_commit;
	double commits = sum.wal.commits > 0 ? (double)sum.wal.commits : (double)sum.completed;
	out->server_cpu_ms = commits > 0
		? c.cpu_db_ms + (sum.wal.flushes_per_commit > 0 ? sum.wal.flushes_per_commit *
		                 c.wal_cpu_ms : 0) +
		  (double)(sum.wakes + sum.wal.wakes) / commits * c.wake_us / 1000 +
		  (double)sum.contended / commits * c.contend_us / 1000 +
		  (sum.wal.flushes_per_commit > 0 ? sum.wal.flushes_per_commit *
		                                    leader_wake_ms(&c) +
		                                    (1 - sum.wal.flushes_per_commit) *
		                                    follow_extra_ms(&c) : 0)
		: -1;
	out->made_ns = kit_load_now_ns();
	return 0;
}

static bool is_sqlite(const char *url)
{
	return url == NULL || strncmp(url, "sqlite:", 7) == 0;
}

int drv_inputs_wal(struct drv_inputs *in, const char *url, const char *cmd)
{
	static double flush_ms = -1;     /* one server a process: probed once */
	char err[256];

	if (is_sqlite(url))
		return 0;       /* WAL with synchronous = NORMAL: no flush at commit */
	if (buffered(in->strategy))
		return 0;       /* the flush's hold, probed whole, has its commit in it */
	if (flush_ms < 0) {
		/* A table of its own, so the lab's rows and counts stay the run's. */
		struct kit_db *db = NULL;
		double f = 0;
		int rc = kit_db_open(&db, url) != 0 ||
		         kit_db_exec(db, "DROP TABLE IF EXISTS " FLUSH_TABLE, 0, NULL) != 0 ||
		         kit_db_exec(db, "CREATE TABLE " FLUSH_TABLE " (id int PRIMARY KEY, "
		                     "n bigint NOT NULL)", 0, NULL) != 0 ||
		         kit_db_exec(db, "INSERT INTO " FLUSH_TABLE " VALUES (1, 0)", 0, NULL) != 0
		         ? -1 : 0;
		if (rc != 0)
			snprintf(err, sizeof err, "the flush probe's table: %s", kit_db_errmsg(db));
		else
			rc = drv_probe_flush(url, "UPDATE " FLUSH_TABLE " SET n = n + 1 WHERE id = 1",
			                     FLUSH_COMMITS, &f, err, sizeof err);
		/* the table goes; a server gone meanwhile is said so, as drv_fail_db does */
		if (kit_db_exec(db, "DROP TABLE IF EXISTS " FLUSH_TABLE, 0, NULL) != 0 && rc == 0)
			rc = -1, snprintf(err, sizeof err, "the flush probe's table: %s",
			                  kit_db_errmsg(db));
		bool gone = !kit_db_connected(db);
		kit_db_close(db);
		if (rc != 0) {
			drv_fail(cmd, gone ? "the database went away" : NULL, err);
			return -1;
		}
		flush_ms = f;
	}
	in->wal_flush_ms = flush_ms;
	return 0;
}

void drv_sim_args(const struct drv_prediction *p, char *buf, size_t len)
{
	static const char *const dist[] = { "const", "exp" };
	const struct sim_config *c = &p->config;
	int n;

	/* Times are whole microseconds (sim_config_round): %.3f is exact. */
	n = snprintf(buf, len, "--strategy %s --rows %d --slot %s --hold-ms %.3f --hold-dist %s "
	             "--work-ms %.3f --outside-ms %.3f --think-ms %.3f --think-dist %s "
	             "--cores %d --cpu-ms %.3f,%.3f --pool %d --pool-timeout-ms %.3f "
	             "--flush-ms %.3f --redis-op-us %.17g --batch %d --seconds %.17g --seed %llu",
	             sim_strategy_name(c->strategy), c->rows,
	             c->slot == SIM_SLOT_ROUND_ROBIN ? "round-robin" : "random", c->hold_ms,
	             dist[c->hold_dist], c->work_ms, c->outside_ms, c->think_ms, dist[c->think_dist],
	             c->cores, c->cpu_db_ms, c->cpu_client_ms, c->pool, c->pool_timeout_ms,
	             c->flush_ms, c->redis_op_us, c->batch, c->seconds,
	             (unsigned long long)c->seed);
	if (n < 0 || (size_t)n >= len)
		return;
	snprintf(buf + n, len - (size_t)n, " --handoff %s --wake-us %.0f --wake-lat-us %.0f "
	         "--lockmgr-us %.1f --herd-bias %.2f --contend-us %.0f --wal-flush-ms %.3f "
	         "--wal-cpu-ms %.3f --wal-order %s",
	         sim_handoff_name(c->handoff), c->wake_us, c->wake_lat_us, c->lockmgr_us,
	         c->herd_bias,
	         c->contend_us,
	         c->wal_flush_ms, c->wal_cpu_ms, sim_wal_order_name(c->wal_order));
	n = (int)strlen(buf);
	if (c->cold_after_us > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " --cold-after-us %.0f --cold-us %.1f --cold-per-ms %.1f",
		         c->cold_after_us, c->cold_us, c->cold_per_ms);
	n = (int)strlen(buf);
	if (c->herd_lanes > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " --herd-lanes %d", c->herd_lanes);
	n = (int)strlen(buf);
	if (c->run_queues != SIM_RUNQ_SHARED && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " --run-queues %s", sim_run_queues_name(c->run_queues));
}

/* ---- the loaded run ---- */

struct watched {
	const struct kit_load_config *c;
	struct drv_span *hold;
	kit_load_op_fn *op;
	void *arg;
	struct drv_span_clock clocks[KIT_LOAD_MAX_THREADS];
};

static int watched_init(void *arg, struct kit_load_thread *th)
{
	struct watched *w = arg;
	drv_span_watch(&w->clocks[th->index], w->hold, th->db);
	return w->c->thread_init ? w->c->thread_init(w->arg, th) : 0;
}

static int watched_done(void *arg, struct kit_load_thread *th)
{
	struct watched *w = arg;
	kit_db_set_hook(th->db, NULL, NULL);
	return w->c->thread_done ? w->c->thread_done(w->arg, th) : 0;
}

static int watched_op(void *arg, struct kit_load_thread *th)
{
	struct watched *w = arg;
	return w->op(w->arg, th);
}

/* The run's WAL flushes per commit, from the counts before it (s0, c0):
 * its backends report theirs as their connections end, so wait until the
 * commits cover its requests (each commits at least once), 2 s at most. */
static double wal_after(struct kit_db *admin, int64_t s0, int64_t c0, int64_t requests)
{
	int64_t s1 = -1, c1 = -1;
	for (int64_t waited = 0; ; waited += REPORTED_STEP_NS) {
		if (drv_wal_count(admin, &s1, &c1) != 0)
			return -1;
		if (c1 - c0 >= requests || waited >= REPORTED_WAIT_NS)
			break;
		util_sleep_ns(REPORTED_STEP_NS);
	}
	return c1 > c0 ? (double)(s1 - s0) / (double)(c1 - c0) : -1;
}

static int run_load(const struct kit_load_config *c, struct drv_span *hold, kit_load_op_fn *op,
                    void *arg, struct drv_run *out)
{
	out->started_ns = kit_load_now_ns();
	if (hold == NULL || c->url == NULL)
		return kit_load_run(c, op, arg, &out->r);
	struct watched *w = calloc(1, sizeof *w);
	if (w == NULL) {
		kit_load_run(c, op, arg, &out->r);   /* unwatched, rather than not at all */
		return KIT_DB_ERR;
	}
	*w = (struct watched){ .c = c, .hold = hold, .op = op, .arg = arg };
	struct kit_load_config wc = *c;
	wc.thread_init = watched_init;
	wc.thread_done = watched_done;
	drv_span_reset(hold);
	int rc = kit_load_run(&wc, watched_op, w, &out->r);
	out->hold_ms = drv_span_mean_ms(hold);
	free(w);
	return rc;
}

int drv_run_load(const struct kit_load_config *c, struct drv_span *hold, kit_load_op_fn *op,
                 void *arg, struct drv_run *out)
{
	struct kit_db *admin = NULL;
	int64_t s0 = 0, c0 = 0;

	memset(out, 0, sizeof *out);
	out->wal_per_commit = -1;
	bool wal = !is_sqlite(c->url) && kit_db_open(&admin, c->url) == 0 &&
	           drv_wal_count(admin, &s0, &c0) == 0;
	int rc = run_load(c, hold, op, arg, out);
	if (wal && rc == 0 && out->r.ok > 0)
		out->wal_per_commit = wal_after(admin, s0, c0, out->r.ok);
	kit_db_close(admin);
	return rc;
}

/* ---- the lines ---- */

static double ratio(double measured, double predicted)
{
	return predicted > 0 ? measured / predicted : 0;
}

static bool off(double r)
{
	return r > 0 && fabs(r - 1) > OFF_BY;
}

/* A time for people: "2.500 ms", or "12.0 us" below a tenth of a ms. */
static const char *ms(char *buf, size_t n, double v)
{
	if (v > 0 && v < 0.1)
		snprintf(buf, n, "%.1f us", v * 1000);
	else
		snprintf(buf, n, "%.3f ms", v);
	return buf;
}

static void row(const char *name, double predicted, double measured)
{
	char p[32], m[32];
	double r = ratio(measured, predicted);
	printf("  %-14s %16s %16s %8.2f%s\n", name, ms(p, sizeof p, predicted),
	       ms(m, sizeof m, measured), r, off(r) ? "  off by more than 25 %" : "");
}

/* The server's log: the engine's flushes per commit beside pg_stat_wal's.
 * SQLite as the kit opens it (WAL, synchronous = NORMAL) syncs at a
 * checkpoint only; 100 commits, 4 fdatasync (104 with FULL):
 *   strace -f -c -e trace=fdatasync sqlite3 x.db "PRAGMA journal_mode=WAL;
 *     PRAGMA synchronous=NORMAL; BEGIN; UPDATE t SET n=n+1; COMMIT; ..." */
static void wal_row(const struct drv_prediction *p, const struct drv_run *m)
{
	char pw[32] = "none", mw[32] = "unknown";

	if (p->in.alone.in_process) {
		printf("  %-14s %16s  SQLite: WAL with synchronous = NORMAL does not flush at "
		       "commit\n", "WAL per commit", "-");
		return;
	}
	if (p->wal_per_commit < 0 && m->wal_per_commit < 0)
		return;
	if (p->wal_per_commit >= 0)
		snprintf(pw, sizeof pw, "%.2f", p->wal_per_commit);
	if (m->wal_per_commit >= 0)
		snprintf(mw, sizeof mw, "%.2f", m->wal_per_commit);
	double r = m->wal_per_commit >= 0 ? ratio(m->wal_per_commit, p->wal_per_commit) : 0;
	char rs[16] = "-";
	if (r > 0)
		snprintf(rs, sizeof rs, "%.2f", r);
	printf("  %-14s %16s %16s %8s%s\n", "WAL per commit", pw, mw, rs,
	       off(r) ? "  off by more than 25 %" : "");
	printf("    (the server's log; measured: pg_stat_wal.wal_sync / "
	       "pg_stat_database.xact_commit)\n");
}

/* The load average over the last minute; < 0 when unknown. */
static double loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* Which measured parts explain a gap: each line names a measurement. */
static void explain(const struct drv_prediction *p, const struct drv_run *m, const char *unit)
{
	const struct drv_inputs *in = &p->in;
	const struct drv_parts *a = &in->alone;
	double x = m->r.throughput_per_s;
	int why = 0;

	printf("  why, from the measured parts:\n");
	double cpu = a->cpu_client_ms + (a->cpu_db_ms > 0 ? a->cpu_db_ms : 0);
	double busy = x * cpu / 1000;          /* cores our requests kept busy */
	if (in->threads > in->cores && busy > 0.5 * in->cores) {
		printf("    - %d threads share %d cores: at the measured %.0f %s/s the requests "
		       "kept %.2f cores busy\n      (CPU per request alone: %.3f ms here%s",
		       in->threads, in->cores, x, unit, busy, a->cpu_client_ms,
		       a->cpu_db_ms < 0 ? ", the server's unknown)\n"
		       : a->in_process ? ", the database's included)\n" : "");
		if (a->cpu_db_ms >= 0 && !a->in_process)
			printf(" + %.3f ms in the server)\n", a->cpu_db_ms);
		why++;
	}
	if (m->hold_ms > 0 && a->hold_ms > 0 && fabs(m->hold_ms / a->hold_ms - 1) > HOLD_MOVED) {
		printf("    - the hold %s under load: %.3f ms alone, %.3f ms (mean, measured) "
		       "with %d threads;\n      with that hold the locks allow %.0f/s\n",
		       m->hold_ms > a->hold_ms ? "grew" : "shrank", a->hold_ms, m->hold_ms,
		       in->threads, in->rows * 1000.0 / m->hold_ms);
		why++;
	}
	if (buffered(in->strategy) && a->request_ms > 0 &&
	    fabs(m->r.latency_ms.mean / a->request_ms - 1) > HOLD_MOVED) {
		char b1[32], b2[32];
		printf("    - a request took %s under load (mean, measured) against %s alone: it "
		       "takes no row lock,\n      so the clients' own path %s\n",
		       ms(b1, sizeof b1, m->r.latency_ms.mean), ms(b2, sizeof b2, a->request_ms),
		       m->r.latency_ms.mean > a->request_ms ? "slowed down (a lock of its own, or the CPUs)"
		                                            : "sped up");
		why++;
	}
	if (p->clients_per_s > 0 && p->clients_per_s < 1.25 * x) {
		printf("    - the app's own time capped it: %d threads / (%.3f ms per request "
		       "alone + %.3f think) = %.0f/s\n", in->threads, a->request_ms, in->think_ms,
		       p->clients_per_s);
		why++;
	}
	double op_us = p->config.redis_op_us > 0 ? p->config.redis_op_us : 4;
	if (in->strategy == SIM_REDIS && p->throughput_per_s > 0.9 * 1e6 / op_us &&
	    x > 1.25 * p->throughput_per_s) {
		printf("    - the engine's Redis is one server at %.2f us a command (%.0f/s)%s\n",
		       op_us, 1e6 / op_us, in->redis_op_us > 0 ? ", as measured"
		       : ";\n      not a measured part: this store is a table in the process, not one server");
		why++;
	}
	bool spread = off(ratio(m->r.latency_ms.p50, p->p50_ms)) ||
	              off(ratio(m->r.latency_ms.p99, p->p99_ms));
	if (spread && m->r.latency_ms.p50 > 0 && p->p50_ms > 0) {
		printf("    - the spread: measured p99 / p50 = %.1f, the engine's %.1f (the holds "
		       "alone: p99 / median = %.1f)\n", m->r.latency_ms.p99 / m->r.latency_ms.p50,
		       p->p99_ms / p->p50_ms, a->hold_median_ms > 0 ? a->hold_p99_ms / a->hold_median_ms : 0);
		why++;
	}
	if (a->in_process && spread) {
		printf("    - not a measured part: SQLite's waiters retry in naps instead of queueing "
		       "in turn,\n      so a few wait far longer than in a queue, most far shorter\n");
		why++;
	}
	double load = loadavg();
	if (load > in->cores) {
		printf("    - the machine was busy: load average %.1f on %d cores (other processes "
		       "took CPUs too)\n", load, in->cores);
		why++;
	}
	if (why == 0)
		printf("    - none of the measured parts: the prediction misses something this "
		       "machine does\n      (run it again: if it stays, it is worth a question)\n");
}

int drv_compare(const struct drv_prediction *p, const struct drv_run *m, const char *unit)
{
	if (p->made_ns == 0 || p->made_ns > m->started_ns) {
		printf("  (no prediction: one made after its run began would not be a prediction)\n");
		return -1;
	}
	const struct kit_load_result *r = &m->r;
	printf("  %-14s %16s %16s %8s\n", "", "predicted", "measured", "ratio");
	printf("  %-14s %14.0f/s %14.0f/s %8.2f%s\n", "throughput", p->throughput_per_s,
	       r->throughput_per_s, ratio(r->throughput_per_s, p->throughput_per_s),
	       off(ratio(r->throughput_per_s, p->throughput_per_s)) ? "  off by more than 25 %" : "");
	row("latency p50", p->p50_ms, r->latency_ms.p50);
	row("latency p99", p->p99_ms, r->latency_ms.p99);
	wal_row(p, m);
	if (off(ratio(r->throughput_per_s, p->throughput_per_s)) ||
	    off(ratio(r->latency_ms.p50, p->p50_ms)) || off(ratio(r->latency_ms.p99, p->p99_ms)))
		explain(p, m, unit);
	if (r->throughput_per_s > 0)
		printf("  check, not a prediction: Little's law with the measured throughput,\n"
		       "    W = L / X = %d / %.0f/s = %.3f ms mean (measured %.3f ms)\n",
		       p->in.threads, r->throughput_per_s, 1000.0 * p->in.threads / r->throughput_per_s,
		       r->latency_ms.mean);
	return 0;
}

void drv_print_latency(const struct kit_load_result *r, int digits)
{
	printf("  latency ms                    mean %.*f  p50 %.*f  p95 %.*f  p99 %.*f  max %.2f\n",
	       digits, r->latency_ms.mean, digits, r->latency_ms.p50, digits, r->latency_ms.p95,
	       digits, r->latency_ms.p99, r->latency_ms.max);
}

void drv_print_parts(const char *what, const struct drv_parts *a)
{
	char b[6][32];
	printf("  %s, 1 thread alone (%lld in %.1f s), mean (median):\n", what,
	       (long long)a->requests, a->seconds);
	if (a->hold_ms > 0 || a->hold_median_ms > 0)
		printf("    lock hold %s (%s), outside the lock %s (%s)\n", ms(b[0], 32, a->hold_ms),
		       ms(b[1], 32, a->hold_median_ms), ms(b[2], 32, a->outside_ms),
		       ms(b[3], 32, a->outside_median_ms));
	else
		printf("    no lock: the whole request %s (%s)\n", ms(b[0], 32, a->request_ms),
		       ms(b[1], 32, a->request_median_ms));
	printf("    CPU per request %s here", ms(b[4], 32, a->cpu_client_ms));
	if (a->in_process)
		printf(" (SQLite's work included: it runs in this thread)");
	else if (a->cpu_db_ms > 0)
		printf(" + %s in the server", ms(b[5], 32, a->cpu_db_ms));
	else if (a->cpu_db_ms < 0)
		printf(" (the server's is not visible from here)");
	putchar('\n');
}
