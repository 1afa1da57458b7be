/*
 * load.c: kit/load.h, T threads calling one operation.
 *
 * Each worker connects, runs thread_init, says it is ready and waits for
 * the go flag, so that every thread starts at the same moment (connection
 * set-up is not load). They wait asleep on a condition variable, not in
 * naps: while 32 backends are forked one by one, 31 threads waking every
 * 0.1 ms cost a 2-core machine more CPU than the run's own calls.
 * The main thread times the run, prints progress and raises the stop flag;
 * workers time each call into a histogram of their own, merged after join,
 * so the hot path shares nothing but a few relaxed counters.
 *
 * A timed run's rate counts as pgbench -T does: the calls that returned
 * by the deadline, over the set time. The calls still running at the
 * deadline finish (and count in ok), but the slowest of them would
 * otherwise set the time base: on a hot row whose waiters are served in
 * no order, the last one can take many times the mean.
 *
 * Latencies go into the kit's one histogram (util/hist.h, the engine's
 * too), in nanoseconds: exact below 128 ns, then 128 buckets per power of
 * two, so a percentile is within 1 % of the true value.
 */
#include "kit/load.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/hist.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct worker {
	struct run *run;
	pthread_t tid;
	struct kit_load_thread th;
	struct util_hist hist;            /* this worker's call times, ns */
	/* read by the progress line while the worker runs */
	atomic_llong ok, failed, busy, constraint;
	int64_t ok_in_time;               /* ok calls that returned by the deadline */
	int init_rc;                      /* 0, or why this worker could not start */
	int64_t end_ns;                   /* when its last call returned */
	/* The counters above are written on every call, and so are the next
	 * worker's th.iter and th.rng: keep them on separate cache lines. */
	char pad[64];
};

struct run {
	const struct kit_load_config *c;
	kit_load_op_fn *op;
	void *arg;
	pthread_mutex_t gate_lock;        /* guards ready and go */
	pthread_cond_t all_ready;         /* main waits here for ready == started */
	pthread_cond_t gate;              /* workers wait here for go */
	int ready;                        /* workers connected (or failed) */
	bool go;                          /* main has set t0: start calling */
	atomic_bool stop;
	atomic_bool lost;                 /* a connection broke: stop, say so */
	atomic_int running;               /* workers not yet finished */
	int64_t t0_ns;                    /* set by main before go */
	int64_t deadline_ns;              /* t0 + seconds; INT64_MAX for iterations */
	int64_t interval_ns;              /* open loop: per-thread gap between calls */
	pthread_mutex_t err_lock;         /* guards error */
	char error[512];
	struct worker *w;
};

const struct kit_load_limit kit_load_limits[KIT_LOAD_NLIMITS] = {
	[KIT_LOAD_LIMIT_THREADS] = { "--threads", 1, KIT_LOAD_MAX_THREADS, false, true,
	                             "a whole number from 1 to 256" },
	[KIT_LOAD_LIMIT_SECONDS] = { "--seconds", 0, 3600, true, false,
	                             "a number of seconds above 0, at most 3600" },
};
_Static_assert(KIT_LOAD_MAX_THREADS == 256, "kit_load_limits says \"from 1 to 256\"");

bool kit_load_limit_ok(const struct kit_load_limit *l, double v)
{
	bool low_ok = l->above_min ? v > l->min : v >= l->min;
	return low_ok && v <= l->max && (!l->integer || v == (double)(long long)v);
}

int64_t kit_load_now_ns(void)
{
	return util_now_ns();
}

/* Keep the first failure's message; later ones are only counted. */
static void note_error(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_error(struct run *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&r->err_lock);
	if (r->error[0] == '\0')
		vsnprintf(r->error, sizeof r->error, fmt, ap);
	pthread_mutex_unlock(&r->err_lock);
	va_end(ap);
}

uint64_t kit_load_rand(struct kit_load_thread *th)
{
	uint64_t x = th->rng;   /* xorshift64* */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	th->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Sleep until t_ns in short naps, so a stop is noticed; false if stopped. */
static bool wait_until(struct run *r, int64_t t_ns)
{
	for (;;) {
		if (atomic_load_explicit(&r->stop, memory_order_relaxed))
			return false;
		int64_t left = t_ns - kit_load_now_ns();
		if (left <= 0)
			return true;
		util_sleep_ns(left < 10000000 ? left : 10000000);
	}
}

static void call_loop(struct worker *w)
{
	struct run *r = w->run;
	const struct kit_load_config *c = r->c;
	int64_t next = r->t0_ns + (r->interval_ns ? r->interval_ns * w->th.index / c->threads : 0);

	for (w->th.iter = 0; !atomic_load_explicit(&r->stop, memory_order_relaxed); w->th.iter++) {
		if (c->iterations > 0 && w->th.iter >= c->iterations)
			break;
		int64_t start = kit_load_now_ns();
		/* The deadline by each worker's own clock: a main thread
		 * late to wake on a loaded machine lets no call start after. */
		if (start >= r->deadline_ns || (r->interval_ns && next >= r->deadline_ns))
			break;
		if (r->interval_ns) {        /* open loop: wait for the slot, count from it */
			if (!wait_until(r, next))
				break;
			start = next;
			next += r->interval_ns;
		}
		int rc = r->op(r->arg, &w->th);
		int64_t end = kit_load_now_ns();
		util_hist_add(&w->hist, end - start);
		if (rc == 0) {
			atomic_fetch_add_explicit(&w->ok, 1, memory_order_relaxed);
			w->ok_in_time += end <= r->deadline_ns;
			continue;
		}
		atomic_fetch_add_explicit(&w->failed, 1, memory_order_relaxed);
		if (rc == KIT_DB_BUSY)
			atomic_fetch_add_explicit(&w->busy, 1, memory_order_relaxed);
		if (rc == KIT_DB_CONSTRAINT)
			atomic_fetch_add_explicit(&w->constraint, 1, memory_order_relaxed);
		/* The server gone (shut down, restarted) is no fault of the
		 * code under load: stop at once and say so, before thousands of
		 * failures pile up behind it. */
		bool lost = w->th.db && !kit_db_connected(w->th.db);
		if (lost) {   /* this, not an earlier failure, is what the run ends with */
			pthread_mutex_lock(&r->err_lock);
			if (!atomic_load(&r->lost))
				snprintf(r->error, sizeof r->error, "the database went away: a call failed (%d): %s",
				         rc, kit_db_errmsg(w->th.db));
			atomic_store(&r->lost, true);
			pthread_mutex_unlock(&r->err_lock);
		} else {
			const char *m = w->th.db ? kit_db_errmsg(w->th.db) : "";
			if (w->th.db && !m[0])
				m = "the database reported no error (a TODO, or a failure of the code's own)";
			note_error(r, "a call failed (%d)%s%s", rc, m[0] ? ": " : "", m);
		}
		if (c->stop_on_error || lost)
			atomic_store(&r->stop, true);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	const struct kit_load_config *c = r->c;

	if (c->url) {
		w->init_rc = kit_db_open(&w->th.db, c->url);
		if (w->init_rc != 0)
			note_error(r, "thread could not connect (%d): %s", w->init_rc,
			           kit_db_errmsg(w->th.db));
	}
	if (w->init_rc == 0 && c->thread_init) {
		w->init_rc = c->thread_init(r->arg, &w->th);
		if (w->init_rc != 0)
			note_error(r, "thread_init failed (%d)", w->init_rc);
	}
	pthread_mutex_lock(&r->gate_lock);
	r->ready++;
	pthread_cond_signal(&r->all_ready);
	while (!r->go)
		pthread_cond_wait(&r->gate, &r->gate_lock);
	pthread_mutex_unlock(&r->gate_lock);
	if (w->init_rc == 0) {
		if (!atomic_load(&r->stop))
			call_loop(w);
		w->end_ns = kit_load_now_ns();
		if (c->thread_done)
			c->thread_done(r->arg, &w->th);
	}
	kit_db_close(w->th.db);
	w->th.db = NULL;
	atomic_fetch_sub(&r->running, 1);
	return NULL;
}

void kit_load_config_default(struct kit_load_config *c)
{
	memset(c, 0, sizeof *c);
	c->threads = 4;
	c->seconds = 5;
	c->progress = true;
	c->seed = 1;
}

static int64_t sum_counter(struct run *r, size_t offset)
{
	int64_t s = 0;
	for (int i = 0; i < r->c->threads; i++)
		s += atomic_load_explicit((atomic_llong *)((char *)&r->w[i] + offset),
		                          memory_order_relaxed);
	return s;
}

static void progress(struct run *r, int64_t now)
{
	double t = (double)(now - r->t0_ns) / 1e9;
	int64_t ok = sum_counter(r, offsetof(struct worker, ok));
	int64_t bad = sum_counter(r, offsetof(struct worker, failed));
	fprintf(stderr, "\r\033[K%s%s%.1f s  %lld ok  %lld failed  %.0f/s",
	        r->c->label ? r->c->label : "", r->c->label ? ": " : "", t,
	        (long long)ok, (long long)bad, t > 0 ? (double)ok / t : 0.0);
	fflush(stderr);
}

/* Until every worker is done: raise stop at the deadline, and keep the
 * progress line fresh on a terminal. */
static void watch(struct run *r)
{
	const struct kit_load_config *c = r->c;
	bool tty = c->progress && isatty(STDERR_FILENO);
	int64_t end = r->deadline_ns;
	int64_t next_line = r->t0_ns + 250000000LL;

	while (atomic_load(&r->running) > 0) {
		int64_t now = kit_load_now_ns();
		if (now >= end)
			atomic_store(&r->stop, true);
		if (tty && now >= next_line) {
			progress(r, now);
			next_line = now + 250000000LL;
		}
		/* Until the deadline, sleep up to it (50 ms at most, so a run
		 * that failed early ends soon): the loaded machine's cores are
		 * for the calls. After it, or counting iterations, 2 ms. */
		int64_t nap = 2000000;
		if (now < end && end != INT64_MAX)
			nap = end - now < 50000000 ? end - now : 50000000;
		if (tty && next_line - now < nap)
			nap = next_line - now;
		util_sleep_ns(nap > 100000 ? nap : 100000);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
}

static void result_init(struct kit_load_result *out, int threads)
{
	memset(out, 0, sizeof *out);
	out->threads = threads;
}

int kit_load_run(const struct kit_load_config *c, kit_load_op_fn *op, void *arg,
                 struct kit_load_result *out)
{
	result_init(out, c->threads);
	if (c->threads < 1 || c->threads > KIT_LOAD_MAX_THREADS) {
		snprintf(out->error, sizeof out->error, "threads %d: give 1 to %d",
		         c->threads, KIT_LOAD_MAX_THREADS);
		return KIT_DB_ERR;
	}
	if (c->iterations <= 0 && !(c->seconds > 0)) {
		snprintf(out->error, sizeof out->error, "give seconds > 0 or iterations > 0");
		return KIT_DB_ERR;
	}
	if (c->rate_per_s < 0 || op == NULL) {
		snprintf(out->error, sizeof out->error, op ? "rate_per_s must be >= 0" : "no operation");
		return KIT_DB_ERR;
	}

	struct run *r = calloc(1, sizeof *r);
	struct worker *w = calloc((size_t)c->threads, sizeof *w);
	if (r == NULL || w == NULL) {
		free(r);
		free(w);
		snprintf(out->error, sizeof out->error, "out of memory");
		return KIT_DB_ERR;
	}
	r->c = c;
	r->op = op;
	r->arg = arg;
	r->w = w;
	r->interval_ns = c->rate_per_s > 0 ? (int64_t)(1e9 * c->threads / c->rate_per_s) : 0;
	atomic_init(&r->stop, false);
	atomic_init(&r->running, 0);
	pthread_mutex_init(&r->err_lock, NULL);
	pthread_mutex_init(&r->gate_lock, NULL);
	pthread_cond_init(&r->all_ready, NULL);
	pthread_cond_init(&r->gate, NULL);

	uint64_t seed = c->seed;
	int started = 0;
	for (int i = 0; i < c->threads; i++) {
		w[i].run = r;
		w[i].th.index = i;
		w[i].th.rng = util_splitmix64(&seed) | 1;
		util_hist_init(&w[i].hist);
		atomic_init(&w[i].ok, 0);
		atomic_init(&w[i].failed, 0);
		atomic_init(&w[i].busy, 0);
		atomic_init(&w[i].constraint, 0);
		atomic_fetch_add(&r->running, 1);
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]) != 0) {
			atomic_fetch_sub(&r->running, 1);
			break;
		}
		started++;
	}
	int rc = 0;
	if (started < c->threads) {
		note_error(r, "could not start thread %d", started);
		rc = KIT_DB_ERR;
	}
	pthread_mutex_lock(&r->gate_lock);
	while (r->ready < started)   /* everyone connected (or failed) */
		pthread_cond_wait(&r->all_ready, &r->gate_lock);
	pthread_mutex_unlock(&r->gate_lock);
	for (int i = 0; i < started; i++)
		if (w[i].init_rc != 0)
			rc = KIT_DB_ERR;
	if (rc != 0)
		atomic_store(&r->stop, true);
	r->t0_ns = kit_load_now_ns();
	r->deadline_ns = c->iterations > 0 ? INT64_MAX : r->t0_ns + (int64_t)(c->seconds * 1e9);
	pthread_mutex_lock(&r->gate_lock);
	r->go = true;
	pthread_cond_broadcast(&r->gate);
	pthread_mutex_unlock(&r->gate_lock);

	watch(r);

	int64_t t_end = r->t0_ns, in_time = 0;
	struct util_hist *all = malloc(sizeof *all);
	if (all)
		util_hist_init(all);
	for (int i = 0; i < started; i++) {
		pthread_join(w[i].tid, NULL);
		if (w[i].end_ns > t_end)
			t_end = w[i].end_ns;
		out->ok += atomic_load(&w[i].ok);
		in_time += w[i].ok_in_time;
		out->failed += atomic_load(&w[i].failed);
		out->busy += atomic_load(&w[i].busy);
		out->constraint += atomic_load(&w[i].constraint);
		if (all)
			util_hist_merge(all, &w[i].hist);
	}
	out->seconds = (double)(t_end - r->t0_ns) / 1e9;
	out->ok_timed = c->iterations > 0 ? out->ok : in_time;
	out->timed_s = c->iterations > 0 || out->seconds < c->seconds ? out->seconds : c->seconds;
	out->throughput_per_s = out->timed_s > 0 ? (double)out->ok_timed / out->timed_s : 0;
	if (all && all->count > 0) {
		out->latency_ms.mean = util_hist_mean(all) / 1e6;
		out->latency_ms.p50 = util_hist_quantile(all, 0.50) / 1e6;
		out->latency_ms.p90 = util_hist_quantile(all, 0.90) / 1e6;
		out->latency_ms.p95 = util_hist_quantile(all, 0.95) / 1e6;
		out->latency_ms.p99 = util_hist_quantile(all, 0.99) / 1e6;
		out->latency_ms.max = (double)all->max / 1e6;
	}
	out->db_lost = atomic_load(&r->lost);
	if ((c->stop_on_error && out->failed > 0) || out->db_lost)
		rc = KIT_DB_ERR;
	snprintf(out->error, sizeof out->error, "%s", r->error);

	free(all);
	pthread_mutex_destroy(&r->err_lock);
	pthread_mutex_destroy(&r->gate_lock);
	pthread_cond_destroy(&r->all_ready);
	pthread_cond_destroy(&r->gate);
	free(w);
	free(r);
	return rc;
}

void kit_load_print(FILE *f, const struct kit_load_result *r)
{
	fprintf(f, "threads     %d, %.2f s\n", r->threads, r->seconds);
	fprintf(f, "calls       %lld ok, %lld failed", (long long)r->ok, (long long)r->failed);
	if (r->failed)
		fprintf(f, " (%lld busy, %lld constraint)", (long long)r->busy, (long long)r->constraint);
	fprintf(f, "\nthroughput  %.1f/s\n", r->throughput_per_s);
	fprintf(f, "latency ms  mean %.3f  p50 %.3f  p90 %.3f  p95 %.3f  p99 %.3f  max %.3f\n",
	        r->latency_ms.mean, r->latency_ms.p50, r->latency_ms.p90, r->latency_ms.p95,
	        r->latency_ms.p99, r->latency_ms.max);
	if (r->error[0])
		fprintf(f, "first error %s\n", r->error);
}
