/*
 * server.c: a PostgreSQL server's flush and its wakes, measured before a
 * run. See server.h.
 *
 * The backends' CPU is read per process: /proc/PID/schedstat gives the
 * time on a CPU in nanoseconds (kernels with schedstats), /proc/PID/stat
 * in clock ticks of 10 ms otherwise. Each client thread asks for its own
 * backend's PID once connected and reads that backend's CPU before its
 * first request and after its last, so only the run's work is counted.
 */
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kit/db.h"
#include "labs/driver/probe.h"
#include "labs/driver/server.h"
#include "util/clock.h"
#include "util/hist.h"

/* Is pid a postgres process? Its comm starts "postgres". */
static int is_postgres(long pid)
{
	char path[64], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/comm", pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (!fgets(comm, sizeof comm, f))
		comm[0] = '\0';
	fclose(f);
	return strncmp(comm, "postgres", 8) == 0;
}

double drv_server_cpu_s(long pid)
{
	char path[64], stat[1024];
	unsigned long long ns, ut, st;
	FILE *f;

	if (!is_postgres(pid))
		return -1;
	snprintf(path, sizeof path, "/proc/%ld/schedstat", pid);
	if ((f = fopen(path, "r")) != NULL) {
		int got = fscanf(f, "%llu", &ns);
		fclose(f);
		if (got == 1)
			return (double)ns / 1e9;
	}
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	size_t n = fread(stat, 1, sizeof stat - 1, f);
	fclose(f);
	stat[n] = '\0';
	/* after "pid (comm) ": state is field 3; utime and stime are 14, 15 */
	const char *p = strrchr(stat, ')');
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
	                        &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* ---- the flush ---- */

static int say(struct kit_db *db, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", what, db ? kit_db_errmsg(db) : "no connection");
	return -1;
}

/* Nanoseconds one exec of sql takes. */
static int timed(struct kit_db *db, const char *sql, int64_t *ns)
{
	int64_t t0 = kit_load_now_ns();
	int rc = kit_db_exec(db, sql, 0, NULL);
	*ns = kit_load_now_ns() - t0;
	return rc;
}

int drv_probe_flush(const char *url, const char *update_sql, int n, double *flush_ms,
                    char *err, size_t errlen)
{
	static struct util_hist commit, bare;       /* large: not on the stack */
	static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
	struct kit_db *db = NULL;
	int64_t ns;
	int rc = -1;

	*flush_ms = 0;
	pthread_mutex_lock(&busy);
	util_hist_init(&commit);
	util_hist_init(&bare);
	if (kit_db_open(&db, url) != 0) {
		say(db, "the flush probe cannot connect", err, errlen);
		goto done;
	}
	for (int i = 0; i < n + n / 10; i++) {     /* the first tenth warms up */
		if (kit_db_exec(db, "BEGIN", 0, NULL) != 0 || kit_db_exec(db, update_sql, 0, NULL) != 0) {
			say(db, "the flush probe's update failed", err, errlen);
			goto done;
		}
		if (timed(db, "COMMIT", &ns) != 0) {
			say(db, "the flush probe's COMMIT failed", err, errlen);
			goto done;
		}
		if (i >= n / 10)
			util_hist_add(&commit, ns);
		if (timed(db, "SELECT 1", &ns) != 0) {
			say(db, "the flush probe's SELECT 1 failed", err, errlen);
			goto done;
		}
		if (i >= n / 10)
			util_hist_add(&bare, ns);
	}
	double f = (util_hist_quantile(&commit, 0.5) - util_hist_quantile(&bare, 0.5)) / 1e6;
	*flush_ms = f > 0 ? f : 0;
	rc = 0;
done:
	kit_db_close(db);
	pthread_mutex_unlock(&busy);
	return rc;
}

/* ---- cold cores ---- */

void drv_cold_fit(const double *g_us, const double *extra_us, int n, double r0_us,
                  struct drv_cold *out)
{
	double noise = r0_us * 0.03 > 5 ? r0_us * 0.03 : 5, warm = 0;
	int first = -1;

	memset(out, 0, sizeof *out);
	for (int i = 0; i < n; i++) {       /* the last warm point before the first cold */
		if (extra_us[i] > noise) {
			first = i;
			break;
		}
		warm = g_us[i];
	}
	if (first < 0)
		return;
	out->after_us = (warm + g_us[first]) / 2;
	if (out->after_us < r0_us)
		out->after_us = r0_us;
	/* extra = us + per_ms (g - after) / 1000 over the points from first */
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	int m = 0;
	for (int i = first; i < n; i++) {
		double x = (g_us[i] - out->after_us) / 1000;
		sx += x;
		sy += extra_us[i];
		sxx += x * x;
		sxy += x * extra_us[i];
		m++;
	}
	double d = m * sxx - sx * sx;
	out->per_ms = m > 1 && d > 1e-12 ? (m * sxy - sx * sy) / d : 0;
	if (out->per_ms < 0)
		out->per_ms = 0;
	out->us = (sy - out->per_ms * sx) / m;
	if (out->us < 0) {                  /* through the origin at after_us instead */
		out->us = 0;
		out->per_ms = sxx > 1e-12 && sxy > 0 ? sxy / sxx : 0;
	}
}

/* The probe's pauses, in ms: 0 first (back to back). */
static const double cold_pause_ms[] = { 0, 0.05, 0.1, 0.2, 0.35, 0.5, 1, 2 };
#define NPAUSE (int)(sizeof cold_pause_ms / sizeof cold_pause_ms[0])

int drv_probe_cold(const char *url, const char *sql, int n, struct drv_cold *out,
                   char *err, size_t errlen)
{
	static struct util_hist took[NPAUSE];     /* large: not on the stack */
	static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
	double slept_ns[NPAUSE] = { 0 }, g[NPAUSE - 1], extra[NPAUSE - 1];
	_Static_assert(NPAUSE - 1 == DRV_COLD_POINTS, "a point for each pause");
	struct kit_db *db = NULL;
	int64_t ns;
	int rc = -1, rounds = 10;

	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&busy);
	for (int k = 0; k < NPAUSE; k++)
		util_hist_init(&took[k]);
	if (kit_db_open(&db, url) != 0) {
		say(db, "the cold-core probe cannot connect", err, errlen);
		goto done;
	}
	for (int i = 0; i < 20; i++)              /* warm up */
		if (kit_db_exec(db, sql, 0, NULL) != 0) {
			say(db, "the cold-core probe's statement failed", err, errlen);
			goto done;
		}
	/* rounds of n / rounds requests at each pause in turn, so that a
	 * change in the machine's other work falls on every pause alike */
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NPAUSE; k++)
			for (int i = 0; i < (n + rounds - 1) / rounds; i++) {
				if (cold_pause_ms[k] > 0) {
					int64_t t0 = kit_load_now_ns();
					util_sleep_ns((int64_t)(cold_pause_ms[k] * 1e6));
					slept_ns[k] += (double)(kit_load_now_ns() - t0);
				}
				if (timed(db, sql, &ns) != 0) {
					say(db, "the cold-core probe's statement failed", err, errlen);
					goto done;
				}
				util_hist_add(&took[k], ns);
			}
	/* the median request, so one preempted request is not a cold core */
	double r0 = util_hist_quantile(&took[0], 0.5) / 1e3;
	for (int k = 1; k < NPAUSE; k++) {
		g[k - 1] = slept_ns[k] / (double)took[k].count / 1e3;
		extra[k - 1] = util_hist_quantile(&took[k], 0.5) / 1e3 - r0;
	}
	drv_cold_fit(g, extra, NPAUSE - 1, r0, out);
	out->r0_us = r0;
	out->npoints = NPAUSE - 1;
	memcpy(out->g_us, g, sizeof g);
	memcpy(out->extra_us, extra, sizeof extra);
	rc = 0;
done:
	kit_db_close(db);
	pthread_mutex_unlock(&busy);
	return rc;
}

int drv_wal_count(struct kit_db *db, int64_t *syncs, int64_t *commits)
{
	if (db == NULL || kit_db_engine(db) != KIT_DB_POSTGRES ||
	    kit_db_query_int(db, "SELECT wal_sync FROM pg_stat_wal", 0, NULL, syncs) != 0 ||
	    kit_db_query_int(db, "SELECT xact_commit FROM pg_stat_database "
	                     "WHERE datname = current_database()", 0, NULL, commits) != 0)
		return -1;
	return 0;
}

/* ---- the wakes ---- */

int drv_backends_start(struct drv_backends *b, struct kit_load_thread *th)
{
	int64_t pid = -1;

	b->pid[th->index] = -1;
	b->cpu0[th->index] = b->cpu1[th->index] = -1;
	if (kit_db_query_int(th->db, "SELECT pg_backend_pid()", 0, NULL, &pid) != 0)
		return -1;
	b->pid[th->index] = (long)pid;
	b->cpu0[th->index] = drv_server_cpu_s((long)pid);
	return 0;
}

void drv_backends_stop(struct drv_backends *b, const struct kit_load_thread *th)
{
	if (b->pid[th->index] > 0)
		b->cpu1[th->index] = drv_server_cpu_s(b->pid[th->index]);
}

double drv_backends_cpu_s(const struct drv_backends *b, int n)
{
	double sum = 0;

	for (int i = 0; i < n; i++) {
		if (b->cpu0[i] < 0 || b->cpu1[i] < 0)
			return -1;
		sum += b->cpu1[i] - b->cpu0[i];
	}
	return sum;
}

struct wake_run {
	kit_load_op_fn *op;
	void *arg;
	struct drv_backends b;
};

static int wake_init(void *arg, struct kit_load_thread *th)
{
	struct wake_run *w = arg;

	return drv_backends_start(&w->b, th);
}

static int wake_done(void *arg, struct kit_load_thread *th)
{
	struct wake_run *w = arg;

	drv_backends_stop(&w->b, th);
	return 0;
}

static int wake_op(void *arg, struct kit_load_thread *th)
{
	struct wake_run *w = arg;

	return w->op(w->arg, th);
}

void drv_wake_default(struct drv_wake *w)
{
	memset(w, 0, sizeof *w);
	w->clients[0] = 2;
	w->clients[1] = 8;
	w->seconds = 1;
}

int drv_probe_wake(struct drv_wake *w)
{
	struct wake_run *run = calloc(1, sizeof *run);

	if (run == NULL) {
		snprintf(w->error, sizeof w->error, "the wake probe: out of memory");
		return -1;
	}
	run->op = w->op;
	run->arg = w->arg;
	for (int k = 0; k < 2; k++) {
		struct kit_load_config c;
		struct kit_load_result r;
		double cpu;

		kit_load_config_default(&c);
		c.url = w->url;
		c.threads = w->clients[k];
		c.seconds = w->seconds;
		c.progress = false;
		c.label = "the wake probe";
		c.thread_init = wake_init;
		c.thread_done = wake_done;
		if (kit_load_run(&c, wake_op, run, &r) != 0 || r.failed > 0 || r.ok == 0) {
			snprintf(w->error, sizeof w->error, "the wake probe, %d clients: %.400s",
			         w->clients[k], r.error[0] ? r.error : "no request succeeded");
			free(run);
			return -1;
		}
		cpu = drv_backends_cpu_s(&run->b, w->clients[k]);
		if (cpu < 0) {
			snprintf(w->error, sizeof w->error, "the wake probe: the server's "
			         "processes are not on this machine, so their CPU is unknown");
			free(run);
			return -1;
		}
		w->commits[k] = r.ok;
		w->cpu_ms[k] = cpu * 1000 / (double)r.ok;
	}
	free(run);
	/* n clients on one row: n - 1 wait at each commit, and all wake. */
	double slope = (w->cpu_ms[1] - w->cpu_ms[0]) * 1000 / (w->clients[1] - w->clients[0]);
	w->wake_us = slope > 0 ? slope : 0;
	return 0;
}

double drv_contend_us(const struct drv_wake *w, double alone_cpu_ms)
{
	if (alone_cpu_ms < 0 || w->commits[0] <= 0)
		return 0;
	double us = (w->cpu_ms[0] - alone_cpu_ms) * 1000 - w->wake_us * (w->clients[0] - 1);
	return us > 0 ? us : 0;
}

/* ---- a wake's latency across cores ---- */

struct pingpong {
	int to[2], back[2];      /* pipes: main -> partner, partner -> main */
	int n;
};

static bool pin(pthread_t t, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(t, sizeof set, &set) == 0;
}

static void *partner(void *arg)
{
	struct pingpong *p = arg;
	char c;

	for (int i = 0; i < p->n; i++)
		if (read(p->to[0], &c, 1) != 1 || write(p->back[1], &c, 1) != 1)
			break;
	return NULL;
}

int drv_probe_wake_lat(int n, double *lat_us)
{
	static struct util_hist trips;               /* large: not on the stack */
	static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
	struct pingpong p = { { -1, -1 }, { -1, -1 }, n + n / 10 };
	cpu_set_t mine;
	int cpus[2], k = 0, rc = -1;
	pthread_t t;
	char c = 'w';

	*lat_us = 0;
	if (sched_getaffinity(0, sizeof mine, &mine) != 0)
		return -1;
	for (int i = 0; i < CPU_SETSIZE && k < 2; i++)
		if (CPU_ISSET(i, &mine))
			cpus[k++] = i;
	if (k < 2)
		return 0;                            /* one core: nothing to cross */
	pthread_mutex_lock(&busy);
	if (pipe(p.to) != 0 || pipe(p.back) != 0)
		goto done;
	if (pthread_create(&t, NULL, partner, &p) != 0)
		goto done;
	bool pinned = pin(t, cpus[1]) && pin(pthread_self(), cpus[0]);
	util_hist_init(&trips);
	for (int i = 0; i < p.n; i++) {              /* the first tenth warms up */
		int64_t t0 = kit_load_now_ns();
		if (write(p.to[1], &c, 1) != 1 || read(p.back[0], &c, 1) != 1)
			break;
		if (i >= n / 10)
			util_hist_add(&trips, kit_load_now_ns() - t0);
	}
	close(p.to[1]);                              /* the partner stops at EOF */
	p.to[1] = -1;
	pthread_join(t, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
	if (pinned && trips.count > 0)
		*lat_us = util_hist_quantile(&trips, 0.5) / 2 / 1000;
	rc = 0;
done:
	for (int i = 0; i < 2; i++) {
		if (p.to[i] >= 0)
			close(p.to[i]);
		if (p.back[i] >= 0)
			close(p.back[i]);
	}
	pthread_mutex_unlock(&busy);
	return rc;
}

/* ---- a burst on one row ---- */

#define BURST_MAX 64

struct burst {
	struct kit_db *db[BURST_MAX];
	const char *sql;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool go, abort;           /* under mu: send now; or do not send at all */
	double ms[BURST_MAX];
	bool failed[BURST_MAX];
};

struct burst_caller {
	struct burst *b;
	int i;
};

static void *burst_send(void *arg)
{
	struct burst_caller *c = arg;
	struct burst *b = c->b;
	bool abort;

	pthread_mutex_lock(&b->mu);
	while (!b->go)
		pthread_cond_wait(&b->cv, &b->mu);
	abort = b->abort;
	pthread_mutex_unlock(&b->mu);
	if (abort)
		return NULL;
	int64_t t0 = kit_load_now_ns();
	b->failed[c->i] = kit_db_exec(b->db[c->i], b->sql, 0, NULL) != 0;
	b->ms[c->i] = (double)(kit_load_now_ns() - t0) / 1e6;
	return NULL;
}

/* One burst of n callers, all let go at once: its mean latency into
 * *mean_ms. */
static int burst_once(struct burst *b, int n, double *mean_ms, char *err, size_t len)
{
	pthread_t t[BURST_MAX];
	struct burst_caller c[BURST_MAX];
	int started = 0;

	b->go = b->abort = false;
	for (; started < n; started++) {
		c[started].b = b;
		c[started].i = started;
		b->failed[started] = false;
		if (pthread_create(&t[started], NULL, burst_send, &c[started]) != 0)
			break;
	}
	pthread_mutex_lock(&b->mu);
	b->go = true;
	b->abort = started < n;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	if (started < n) {
		snprintf(err, len, "the burst probe: could not start %d threads", n);
		return -1;
	}
	double sum = 0;
	for (int i = 0; i < n; i++) {
		if (b->failed[i]) {
			snprintf(err, len, "the burst probe: %.400s", kit_db_errmsg(b->db[i]));
			return -1;
		}
		sum += b->ms[i];
	}
	*mean_ms = sum / n;
	return 0;
}

void drv_burst_default(struct drv_burst *b)
{
	memset(b, 0, sizeof *b);
	b->callers[0] = 9;
	b->callers[1] = 63;
	b->reps = 25;
}

int drv_probe_burst(struct drv_burst *b)
{
	struct burst *run = calloc(1, sizeof *run);
	int most = b->callers[0] > b->callers[1] ? b->callers[0] : b->callers[1];
	int rc = -1;

	b->error[0] = '\0';
	if (run == NULL) {
		snprintf(b->error, sizeof b->error, "the burst probe: out of memory");
		return -1;
	}
	if (most < 1 || most > BURST_MAX || b->reps < 1) {
		snprintf(b->error, sizeof b->error, "the burst probe: 1 to %d callers, "
		         "at least one burst", BURST_MAX);
		free(run);
		return -1;
	}
	run->sql = b->sql;
	pthread_mutex_init(&run->mu, NULL);
	pthread_cond_init(&run->cv, NULL);
	for (int i = 0; i < most; i++)
		if (kit_db_open(&run->db[i], b->url) != 0) {
			snprintf(b->error, sizeof b->error, "the burst probe, connection %d: %.400s",
			         i + 1, kit_db_errmsg(run->db[i]));
			goto done;
		}
	for (int k = 0; k < 2; k++) {
		double means[64];
		int reps = b->reps < 64 ? b->reps : 64;
		for (int r = 0; r < reps; r++)
			if (burst_once(run, b->callers[k], &means[r], b->error, sizeof b->error) != 0)
				goto done;
		b->mean_ms[k] = drv_median(means, reps);
	}
	rc = 0;
done:
	for (int i = 0; i < most; i++)
		kit_db_close(run->db[i]);
	pthread_cond_destroy(&run->cv);
	pthread_mutex_destroy(&run->mu);
	free(run);
	return rc;
}
