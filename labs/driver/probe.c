/*
 * probe.c: one request's parts, one thread alone. See probe.h.
 *
 * The server's CPU comes from /proc of the backend that serves the
 * probe's connection (pg_backend_pid(); drv_server_cpu_s in server.h):
 * that works for a server on this machine, which is how the labs run; for
 * one elsewhere the PID means nothing here, so a process that is not a
 * postgres process reads as unknown.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "labs/driver/probe.h"
#include "labs/driver/server.h"

#define BARE_RUNS 300          /* runs of the bare statement alone, for its CPU */
#define BARE_EVERY 8           /* and once after every this many measured requests */
#define WINDOW_S 0.2           /* the means are taken per window this long ... */
#define MAX_WINDOWS 1024       /* ... and their median is the figure */

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

static void fail(struct drv_parts *out, const struct drv_probe *p, const char *what,
                 struct kit_db *db)
{
	bool lost = db && !kit_db_connected(db);   /* the server, not the code, failed */
	snprintf(out->error, sizeof out->error, "%s%s: %s%s%s", lost ? "the database went away: " : "",
	         p->label, what, db ? ": " : "", db ? kit_db_errmsg(db) : "");
}

/* What the measured requests add up to: each request's parts in a
 * histogram (for the medians) and, per window of WINDOW_S, their means. */
struct tally {
	struct util_hist req, hold, outside;
	struct util_hist bare;           /* the bare statement, timed among the requests */
	int64_t w_start, w_n;            /* the window being filled */
	double w_req, w_hold, w_out;     /* its sums, ns */
	int nwin;
	double win[3][MAX_WINDOWS];      /* per window: mean request, hold, outside */
};

static void close_window(struct tally *t)
{
	if (t->w_n == 0 || t->nwin == MAX_WINDOWS)
		return;
	t->win[0][t->nwin] = t->w_req / (double)t->w_n;
	t->win[1][t->nwin] = t->w_hold / (double)t->w_n;
	t->win[2][t->nwin] = t->w_out / (double)t->w_n;
	t->nwin++;
	t->w_n = 0;
	t->w_req = t->w_hold = t->w_out = 0;
}

static void add(struct tally *t, int64_t now, int64_t took, int64_t held)
{
	util_hist_add(&t->req, took);
	util_hist_add(&t->hold, held);
	util_hist_add(&t->outside, took - held);
	if (t->w_n == 0)
		t->w_start = now;
	t->w_n++;
	t->w_req += (double)took;
	t->w_hold += (double)held;
	t->w_out += (double)(took - held);
	if (now + took - t->w_start >= (int64_t)(WINDOW_S * 1e9))
		close_window(t);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double drv_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median of the first n values of v (sorted in place), ns in, ms out. */
static double median_ms(double *v, int n)
{
	return drv_median(v, n) / 1e6;
}

/* Call op until the time and the count are both reached (or max_seconds);
 * with a tally, time every request into it. */
static int loop(const struct drv_probe *p, kit_load_op_fn *op, void *arg,
                struct kit_load_thread *th, struct drv_span_clock *clk, double min_s,
                int64_t min_n, struct tally *t, struct drv_parts *out)
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
		if (tty && t && now - last_note > 250000000) {
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
		if (t)
			add(t, now, took, clk->held_ns - held0);
		if (t && p->bare_sql && !p->hold && th->db && n % BARE_EVERY == BARE_EVERY - 1) {
			int64_t b0 = kit_load_now_ns();
			if (kit_db_exec(th->db, p->bare_sql, 0, NULL) != 0) {
				fail(out, p, "the bare statement failed", th->db);
				return KIT_DB_ERR;
			}
			util_hist_add(&t->bare, kit_load_now_ns() - b0);
		}
	}
	if (t)
		close_window(t);
	if (tty && t)
		fprintf(stderr, "\r%*s\r", 60, "");
	return 0;
}

int drv_probe_run(const struct drv_probe *p, kit_load_op_fn *op, void *arg,
                  struct drv_parts *out)
{
	static atomic_ullong stamps;
	static struct tally t;                       /* large: not on the stack */
	static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
	struct kit_load_thread th = { .rng = 0x9e3779b97f4a7c15ULL };
	struct drv_span_clock clk = { 0 };
	int64_t pid = -1;
	int rc = KIT_DB_ERR;

	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&busy);
	memset(&t, 0, sizeof t);
	util_hist_init(&t.req);
	util_hist_init(&t.hold);
	util_hist_init(&t.outside);
	util_hist_init(&t.bare);
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
	if (p->hold && th.db)
		drv_span_watch(&clk, p->hold, th.db);
	if (loop(p, op, arg, &th, &clk, p->warmup_seconds, 1, NULL, out) != 0)
		goto finish;
	/*
	 * The bare statement is timed among the measured requests, once after
	 * every BARE_EVERY of them, not in a run of its own before them: a
	 * round trip alone is either about 20 us or about 110 us here, by
	 * where the scheduler has just put the two processes, and which of
	 * the two a run of 300 caught changed from probe to probe while the
	 * requests' own times did not (bench/README.md, "The bare statement,
	 * timed among the requests"). Its CPU, client's and server's, is
	 * measured in a run of its own and taken out of the requests'.
	 */
	bool bare = p->bare_sql && !p->hold && th.db;
	double bare_cpu = 0, bare_srv = 0;
	if (bare) {
		double c0 = thread_cpu_s(), s0 = pid > 0 ? drv_server_cpu_s((long)pid) : 0;
		for (int i = 0; i < BARE_RUNS; i++)
			if (kit_db_exec(th.db, p->bare_sql, 0, NULL) != 0) {
				fail(out, p, "the bare statement failed", th.db);
				goto finish;
			}
		double c1 = thread_cpu_s(), s1 = pid > 0 ? drv_server_cpu_s((long)pid) : 0;
		bare_cpu = (c1 - c0) / BARE_RUNS;
		bare_srv = s0 >= 0 && s1 >= 0 ? (s1 - s0) / BARE_RUNS : 0;
	}
	double cpu0 = thread_cpu_s(), srv0 = pid > 0 ? drv_server_cpu_s((long)pid) : 0;
	if (loop(p, op, arg, &th, &clk, p->min_seconds, p->min_requests, &t, out) != 0)
		goto finish;
	double cpu1 = thread_cpu_s(), srv1 = pid > 0 ? drv_server_cpu_s((long)pid) : 0;
	double n = out->requests > 0 ? (double)out->requests : 1;
	cpu1 -= bare_cpu * (double)t.bare.count;
	if (srv0 >= 0 && srv1 >= 0)
		srv1 -= bare_srv * (double)t.bare.count;
	out->request_median_ms = util_hist_quantile(&t.req, 0.5) / 1e6;
	out->request_ms = median_ms(t.win[0], t.nwin);
	if (bare) {
		/* each request's hold is its time less the bare statement's
		 * median, so every median and quantile moves by that much */
		double b = util_hist_quantile(&t.bare, 0.5) / 1e6;
		out->hold_median_ms = fmax(out->request_median_ms - b, 0);
		out->outside_median_ms = fmin(b, out->request_median_ms);
		out->hold_p99_ms = fmax(util_hist_quantile(&t.req, 0.99) / 1e6 - b, 0);
		out->hold_ms = fmax(out->request_ms - b, 0);
		out->outside_ms = fmin(b, out->request_ms);
	} else {
		bool held = p->hold && th.db;
		out->hold_median_ms = held ? util_hist_quantile(&t.hold, 0.5) / 1e6 : 0;
		out->outside_median_ms = util_hist_quantile(&t.outside, 0.5) / 1e6;
		out->hold_p99_ms = held ? util_hist_quantile(&t.hold, 0.99) / 1e6 : 0;
		out->hold_ms = held ? median_ms(t.win[1], t.nwin) : 0;
		out->outside_ms = median_ms(t.win[2], t.nwin);
	}
	out->windows = t.nwin;
	out->cpu_client_ms = (cpu1 - cpu0) * 1000 / n;
	out->cpu_db_ms = srv0 < 0 || srv1 < 0 ? -1 : (srv1 - srv0) * 1000 / n;
	out->in_process = th.db && kit_db_engine(th.db) == KIT_DB_SQLITE;
	out->calls = th.iter;
	out->stamp = atomic_fetch_add(&stamps, 1) + 1;
	rc = 0;
finish:
	if (p->hold && th.db)
		kit_db_set_hook(th.db, NULL, NULL);
	if (p->thread_done)
		p->thread_done(arg, &th);
done:
	kit_db_close(th.db);
	pthread_mutex_unlock(&busy);
	return rc;
}
