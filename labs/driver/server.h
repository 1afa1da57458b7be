/*
 * server.h: two parts of a PostgreSQL server on this machine, measured
 * before the run a prediction is for: how long one flush of its
 * write-ahead log takes, and how much CPU a commit costs per waiter it
 * wakes.
 *
 * A commit in PostgreSQL wakes every backend waiting on the committing
 * transaction (each re-reads the row, one wins, the rest sleep again), so
 * the server's CPU per commit grows with the waiters. drv_probe_wake()
 * runs an operation on one hot row with two client counts, reads the CPU
 * of every backend serving them (/proc/PID/schedstat, or /proc/PID/stat
 * in 10 ms ticks), and takes the slope per waiter: at n clients on one
 * row, n - 1 wait at each commit. drv_probe_flush() times, on one
 * connection alone, the COMMIT of a transaction that updated a row
 * against a bare SELECT 1: the difference is the commit's own flush.
 * drv_probe_wake_lat() measures this machine, not the server: how long a
 * process woken from another core takes to run (two threads on two cores
 * wake each other through pipes; half the median round trip), the time
 * a hand-off's winner and the log's next leader lose before their wake.
 * drv_probe_burst() sends one statement on one hot row from n callers at
 * once and times each until its answer, with no caller sending again:
 * the row drains a queue of n - 1 sleepers, each commit waking all that
 * are left. At two sizes, its mean latency set beside the engine's for
 * the same burst gives what each co-woken waiter adds to a hand-off that
 * the other parts do not (bench/fidelity.c).
 *
 * Interface:
 *   double f;  char err[256];
 *   drv_probe_flush(url, "UPDATE t SET n = n + 1 WHERE id = 1", 200, &f, err, sizeof err);
 *   struct drv_wake w;
 *   drv_wake_default(&w);  w.url = url;  w.op = like_row_1;  w.arg = arg;
 *   drv_probe_wake(&w);    then w.wake_us, w.cpu_ms[0..1]; w.error on failure
 *   double c = drv_contend_us(&w, alone.cpu_db_ms);
 *   double lat;  drv_probe_wake_lat(2000, &lat);
 *   struct drv_burst b;
 *   drv_burst_default(&b);  b.url = url;  b.sql = "UPDATE t SET n = n + 1 WHERE id = 1";
 *   drv_probe_burst(&b);   then b.mean_ms[0..1]; b.error on failure
 *   drv_wal_count(admin, &syncs, &commits);   before and after a run
 *   struct drv_cold k;
 *   drv_probe_cold(url, "UPDATE t SET n = n + 1 WHERE id = 1", 200, &k, err, sizeof err);
 *   then k.after_us, k.us, k.per_ms (all 0: no cold cores seen)
 * Neither probe may use the run it is for; call them before it.
 *
 * drv_probe_cold() measures this machine's cold cores (engine/sim.h,
 * cold_after_us): one client alone sends the statement back to back, and
 * again after pauses of 0.05 to 2 ms, each request timed without its
 * pause. A request after a pause that left the cores idle long enough
 * takes longer (a halted vCPU woken through its host, a deep power
 * state); drv_cold_fit() turns those points into the engine's three
 * numbers.
 */
#ifndef HOTROW_DRIVER_SERVER_H
#define HOTROW_DRIVER_SERVER_H

#include "kit/load.h"

/* CPU seconds of process pid if it is a postgres process on this
 * machine; < 0 when it cannot be read or is something else. */
double drv_server_cpu_s(long pid);

/* The backends serving a kit/load run's threads, and the CPU each spent
 * over the run: drv_backends_start() from a thread_init (it asks the
 * server for the thread's pg_backend_pid), drv_backends_stop() from a
 * thread_done, then drv_backends_cpu_s() for the sum. */
struct drv_backends {
	long pid[KIT_LOAD_MAX_THREADS];
	double cpu0[KIT_LOAD_MAX_THREADS], cpu1[KIT_LOAD_MAX_THREADS];
};

/* 0, or -1 when the server does not answer (the thread then fails). */
int drv_backends_start(struct drv_backends *b, struct kit_load_thread *th);
void drv_backends_stop(struct drv_backends *b, const struct kit_load_thread *th);

/* CPU seconds the first n threads' backends spent between start and
 * stop; < 0 when one is unknown (a server on another machine). */
double drv_backends_cpu_s(const struct drv_backends *b, int n);

/* One commit's flush, in ms: the median COMMIT of `n` transactions each
 * running update_sql (a statement that writes), less the median bare
 * SELECT 1, on one connection to url. Returns 0, or -1 with err set (the
 * database's message). A result below 0 is reported as 0. */
int drv_probe_flush(const char *url, const char *update_sql, int n, double *flush_ms,
                    char *err, size_t errlen);

struct drv_wake {
	/* in */
	const char *url;
	kit_load_op_fn *op;         /* one request on ONE hot row */
	void *arg;
	int clients[2];             /* the two client counts (default 2 and 8) */
	double seconds;             /* each (default 1) */
	/* out */
	double cpu_ms[2];           /* server CPU per commit at each count */
	int64_t commits[2];
	double wake_us;             /* the slope per waiter, at least 0 */
	char error[512];
};

void drv_wake_default(struct drv_wake *w);

/* Half the median round trip of n wakes between two threads pinned to
 * two cores, in us, into *lat_us: a wake's latency across cores. With one
 * core (or pinning refused) *lat_us is 0: a woken process then waits for
 * the core, which the engine's CPU station models. Returns 0, or -1 when
 * the threads or pipes cannot be made (*lat_us 0). */
int drv_probe_wake_lat(int n, double *lat_us);

/* The server's WAL flushes so far (pg_stat_wal.wal_sync) and the commits
 * of db's database (pg_stat_database.xact_commit), as db last saw them: a
 * backend reports its counts when idle (at most once a second) and when
 * its connection ends. Returns 0, or -1 (not PostgreSQL, or unreadable). */
int drv_wal_count(struct kit_db *db, int64_t *syncs, int64_t *commits);

/* Run op with each client count and fill the outs. Returns 0; or -1 with
 * w->error set (a connection, a request, or a server this machine cannot
 * see: then the CPU is unknown). */
int drv_probe_wake(struct drv_wake *w);

/* What a request costs the server, in us of CPU, because it found its row
 * locked: at n clients on one row every request waits, once, and each
 * commit wakes the n - 1 waiting; so the wake probe's CPU per commit at
 * its fewer clients, less its n - 1 wakes, less a request's CPU with one
 * client alone (alone_cpu_ms, the same operation), is that once-a-request
 * part (the lock table's entries, going to sleep, the timers around it).
 * At least 0; 0 when alone_cpu_ms is unknown (< 0). */
double drv_contend_us(const struct drv_wake *w, double alone_cpu_ms);

/* A burst on one row: callers[k] connections each send sql once, all
 * at once (a barrier), and each is timed from its send to its answer;
 * the burst's mean latency, median over `reps` bursts, goes to
 * mean_ms[k]. */
struct drv_burst {
	const char *url;
	const char *sql;          /* one statement on the hot row, autocommit */
	int callers[2];           /* the two burst sizes (default 9 and 63) */
	int reps;                 /* bursts of each size (default 25) */
	double mean_ms[2];        /* out */
	char error[512];          /* why, when the probe fails */
};

void drv_burst_default(struct drv_burst *b);

/* Returns 0, or -1 with b->error set (a connection refused, a statement
 * failed, out of threads). */
int drv_probe_burst(struct drv_burst *b);

/* A core's cost of idling, as the engine takes it: a job starting on a
 * core idle g >= after_us pays us + per_ms (g - after_us) / 1000 more. */
#define DRV_COLD_POINTS 7
struct drv_cold {
	double after_us, us, per_ms;
	/* drv_probe_cold's points: the back-to-back request, and each
	 * pause as slept with the extra its requests took (medians) */
	double r0_us;
	int npoints;
	double g_us[DRV_COLD_POINTS], extra_us[DRV_COLD_POINTS];
};

/* The probe's points: pauses of g_us[i] (as slept, measured) made
 * requests take extra_us[i] longer than back to back (which took r0_us).
 * A point is cold when its extra is above the noise (5 us and 3 % of
 * r0_us; the points are not kept in out); after_us falls halfway between the last warm pause and the
 * first cold one, never below r0_us (back to back, a core idles less
 * than one request, and the probe's own parts already hold what such
 * idling costs); us and per_ms are the least-squares line through the
 * cold points, at least 0 each. No cold point: all 0. */
void drv_cold_fit(const double *g_us, const double *extra_us, int n, double r0_us,
                  struct drv_cold *out);

/* Time n requests of sql at each pause (the rounds interleaved), fit
 * them into *out. Returns 0, or -1 with err set (no connection, a
 * statement failed). */
int drv_probe_cold(const char *url, const char *sql, int n, struct drv_cold *out,
                   char *err, size_t errlen);

#endif
