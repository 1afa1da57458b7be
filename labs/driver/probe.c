/*
 * probe.c: one request's parts, one thread alone. See probe.h.
 *
 * The server's CPU comes from /proc/PID/stat of the backend that serves
 * the probe's connection (pg_backend_pid()): that works for a server on
 * this machine, which is how the labs run; for one elsewhere the PID means
 * nothing here, so a process that is not a postgres process reads as
 * unknown. Clock ticks are 10 ms; two seconds of requests make that a few
 * per cent at worst.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "labs/driver/probe.h"

#define BARE_RUNS 300          /* times the bare statement is timed */

void drv_probe_default(struct drv_probe *p)
{
	memset(p, 0, sizeof *p);
	p->warmup_seconds = 0.2;
	p->min_seconds = 2;
	p->min_requests = 500;
	p->max_seconds = 30;
	p->label = "1 thread";
}

/* CPU seconds of the calling thread. */
static double thread_cpu_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* CPU seconds of process pid if it is a postgres process on this
 * machine; < 0 when it cannot be read or is something else. */
static double server_cpu_s(long pid)
{
	char path[64], comm[64] = "", stat[1024];
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/comm", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (!fgets(comm, sizeof comm, f))
		comm[0] = '\0';
	fclose(f);
	if (strncmp(comm, "postgres", 8) != 0)
		return -1;
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	size_t n = fread(stat, 1, sizeof stat - 1, f);
	fclose(f);
	stat[n] = '\0';
	/* after "pid (comm) ": state is field 3; utime and stime are 14, 15 */
	const char *p = strrchr(stat, ')');
	unsigned long long ut, st;
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
	                        &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void fail(struct drv_parts *out, const struct drv_probe *p, const char *what,
                 struct kit_db *db)
{
	snprintf(out->error, sizeof out->error, "%s: %s%s%s", p->label, what, db ? ": " : "",
	         db ? kit_db_errmsg(db) : "");
}

/* Call op until the time and the count are both reached (or max_seconds);
 * time every request into the histograms when they are given. */
static int loop(const struct drv_probe *p, kit_load_op_fn *op, void *arg,
                struct kit_load_thread *th, struct drv_span_clock *clk, int64_t bare_ns,
                double min_s, int64_t min_n, struct sim_hist *req, struct sim_hist *hold,
                struct sim_hist *outside, struct drv_parts *out)
{
	int64_t t0 = kit_load_now_ns(), last_note = t0;
	bool tty = isatty(STDERR_FILENO);
	for (int64_t n = 0;; n++) {
		int64_t now = kit_load_now_ns();
		double s = (double)(now - t0) / 1e9;
		if ((s >= min_s && n >= min_n) || s >= p->max_seconds) {
			out->requests = n;
			out->seconds = s;
			break;
		}
		if (tty && req && now - last_note > 250000000) {
			fprintf(stderr, "\r%s, alone: %lld requests, %.1f s ", p->label, (long long)n, s);
			last_note = now;
		}
		int64_t held0 = clk->held_ns;
		int rc = op(arg, th);
		int64_t took = kit_load_now_ns() - now;
		th->iter++;
		if (rc != 0) {
			fail(out, p, "a request failed with one thread alone", th->db);
			return KIT_DB_ERR;
		}
		if (req) {
			int64_t held = clk->held_ns - held0;
			if (bare_ns > 0)
				held = took > bare_ns ? took - bare_ns : 0;
			sim_hist_add(req, took);
			sim_hist_add(hold, held);
			sim_hist_add(outside, took - held);
		}
	}
	if (tty && req)
		fprintf(stderr, "\r%*s\r", 60, "");
	return 0;
}

int drv_probe_run(const struct drv_probe *p, kit_load_op_fn *op, void *arg,
                  struct drv_parts *out)
{
	static atomic_ullong stamps;
	static struct sim_hist req, hold, outside;   /* large: not on the stack */
	static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
	struct kit_load_thread th = { .rng = 0x9e3779b97f4a7c15ULL };
	struct drv_span_clock clk = { 0 };
	int64_t pid = -1;
	int rc = KIT_DB_ERR;

	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&busy);
	sim_hist_init(&req);
	sim_hist_init(&hold);
	sim_hist_init(&outside);
	if (p->url && kit_db_open(&th.db, p->url) != 0) {
		fail(out, p, "cannot connect", th.db);
		goto done;
	}
	if (th.db && kit_db_engine(th.db) == KIT_DB_POSTGRES &&
	    kit_db_query_int(th.db, "SELECT pg_backend_pid()", 0, NULL, &pid) != 0) {
		fail(out, p, "cannot ask for the server's process", th.db);
		goto done;
	}
	if (p->thread_init && p->thread_init(arg, &th) != 0) {
		fail(out, p, "thread_init failed", th.db);
		goto done;
	}
	if (p->hold)
		drv_span_watch(&clk, p->hold, th.db);
	if (loop(p, op, arg, &th, &clk, 0, p->warmup_seconds, 1, NULL, NULL, NULL, out) != 0)
		goto finish;
	int64_t bare_ns = 0;
	if (p->bare_sql && !p->hold && th.db) {
		sim_hist_init(&req);
		for (int i = 0; i < BARE_RUNS; i++) {
			int64_t t0 = kit_load_now_ns();
			if (kit_db_exec(th.db, p->bare_sql, 0, NULL) != 0) {
				fail(out, p, "the bare statement failed", th.db);
				goto finish;
			}
			sim_hist_add(&req, kit_load_now_ns() - t0);
		}
		bare_ns = (int64_t)sim_hist_quantile(&req, 0.5);
		bare_ns = bare_ns > 0 ? bare_ns : 1;
		sim_hist_init(&req);
	}
	double cpu0 = thread_cpu_s(), srv0 = pid > 0 ? server_cpu_s((long)pid) : 0;
	if (loop(p, op, arg, &th, &clk, bare_ns, p->min_seconds, p->min_requests, &req, &hold,
	         &outside, out) != 0)
		goto finish;
	double cpu1 = thread_cpu_s(), srv1 = pid > 0 ? server_cpu_s((long)pid) : 0;
	double n = out->requests > 0 ? (double)out->requests : 1;
	bool held = p->hold || bare_ns;
	out->request_ms = sim_hist_mean(&req) / 1e6;
	out->hold_ms = held ? sim_hist_mean(&hold) / 1e6 : 0;
	out->outside_ms = sim_hist_mean(&outside) / 1e6;
	out->request_median_ms = sim_hist_quantile(&req, 0.5) / 1e6;
	out->hold_median_ms = held ? sim_hist_quantile(&hold, 0.5) / 1e6 : 0;
	out->outside_median_ms = sim_hist_quantile(&outside, 0.5) / 1e6;
	out->hold_p99_ms = held ? sim_hist_quantile(&hold, 0.99) / 1e6 : 0;
	out->cpu_client_ms = (cpu1 - cpu0) * 1000 / n;
	out->cpu_db_ms = srv0 < 0 || srv1 < 0 ? -1 : (srv1 - srv0) * 1000 / n;
	out->in_process = th.db && kit_db_engine(th.db) == KIT_DB_SQLITE;
	out->calls = th.iter;
	out->stamp = atomic_fetch_add(&stamps, 1) + 1;
	rc = 0;
finish:
	if (p->hold)
		kit_db_set_hook(th.db, NULL, NULL);
	if (p->thread_done)
		p->thread_done(arg, &th);
done:
	kit_db_close(th.db);
	pthread_mutex_unlock(&busy);
	return rc;
}
