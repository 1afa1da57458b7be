/*
 * predict.h: the engine's prediction for a lab driver, from inputs only.
 *
 * A prediction is worth printing beside a measurement only if it did not
 * use that measurement. So the engine is asked with a struct drv_inputs,
 * which holds nothing but inputs: the threads, the parts of one request
 * measured with one thread alone (probe.h), the configured work, think
 * time and flush interval, and this machine's cores. There is no field a
 * measured throughput or latency could go into, drv_predict() refuses
 * parts that did not come from drv_probe_run(), and drv_compare() refuses
 * a prediction made after the run it is compared with began. The engine
 * runs a closed loop (the way the drivers' threads work: each sends one
 * request, waits for its end and sends the next).
 *
 * Interface:
 *   struct drv_parts alone;   drv_probe_run(&probe, op, arg, &alone);
 *   struct drv_inputs in;
 *   drv_inputs_init(&in, SIM_NAIVE, threads, &alone);
 *   in.work_ms = work_ms;                       // configured, inside the lock
 *   struct drv_prediction p;
 *   if (drv_predict(&in, &p, "hotrow lab run 01") != 0) ...   // why on stderr
 *   struct drv_run m;
 *   drv_run_load(&cfg, &hold, op, arg, &m);     // the run, after the prediction
 *   drv_compare(&p, &m, "likes");               // predicted, measured, ratio, why
 */
#ifndef HOTROW_DRIVER_PREDICT_H
#define HOTROW_DRIVER_PREDICT_H

#include <stdint.h>

#include "engine/sim.h"
#include "kit/load.h"
#include "labs/driver/probe.h"
#include "labs/driver/span.h"

/* Everything a prediction may use. Measurements enter only as drv_parts,
 * one thread alone, before the run predicted. */
struct drv_inputs {
	enum sim_strategy strategy;
	int rows;                  /* locks the writes spread over (default 1) */
	int threads;               /* closed-loop clients */
	struct drv_parts alone;    /* one client's request, one thread alone */
	struct drv_parts flush;    /* one flush's write, one thread alone (the
	                              buffered fixes: coalesce, redis, queue) */
	double work_ms;            /* configured app work inside the lock (part of
	                              alone.hold_ms) */
	double think_ms;           /* configured pause between a client's requests */
	double flush_ms;           /* configured flush, rollup or poll interval */
	int batch;                 /* the ledger: transfers a request carries
	                              (configured; 0 or 1: one) */
	int cores;                 /* CPUs here (default: what the system says) */
	enum sim_run_queues run_queues;   /* how they take jobs (engine/sim.h) */
	double cold_after_us;      /* this machine's cold cores (server.h:
	                              drv_probe_cold); 0: none */
	double cold_us, cold_per_ms;
	double seconds;            /* how long the engine simulates (default 5;
	                              shorter when the rate is high) */
	double redis_op_us;        /* redis: one command's service time on the
	                              server, one client alone (0: the engine's
	                              default, 4 us) */
	/* PostgreSQL's hand-off and log (server.h measures both before the
	 * run); left zero, a lock wakes one waiter and each commit flushes
	 * inside its hold */
	enum sim_handoff handoff;
	double wake_us;            /* herd: server CPU per waiter woken */
	double wake_lat_us;        /* herd: this machine's wake across cores
	                              (server.h: drv_probe_wake_lat) */
	double herd_bias;          /* herd: how the draw favours the waiters
	                              who queued last (engine/sim.h) */
	int herd_lanes;            /* herd: how many woken losers run at once,
	                              the rest asleep on the lock manager's
	                              lock (engine/sim.h); 0 = as cores free */
	double lockmgr_us;         /* herd: what each co-woken waiter adds to
	                              a hand-off (server.h: drv_probe_burst,
	                              beside the engine's own burst) */
	double contend_us;         /* server CPU a request spends once when it
	                              finds its row locked (server.h:
	                              drv_contend_us, from the wake probe's
	                              fewer clients and one client alone) */
	double wal_flush_ms;       /* one flush of the shared log, taken out
	                              of alone.hold_ms */
	enum sim_wal_order wal_order;   /* when the row goes: PostgreSQL's
	                              flush-release (zero), or InnoDB's
	                              release-flush with the binary log off */
};

struct drv_prediction {
	struct drv_inputs in;      /* what it was made from */
	struct sim_config config;  /* what the engine ran */
	double throughput_per_s;   /* the engine's simulation */
	double mean_ms, p50_ms, p99_ms;
	double mva_per_s, mva_mean_ms;   /* MVA of the same network (approximate with
	                                    cores or constant holds); < 0 n/a */
	double ceiling_per_s;      /* the locks: rows / hold */
	double clients_per_s;      /* the clients, never waiting: threads / (request + think) */
	double cpu_per_s;          /* the CPUs: cores / CPU per request; < 0 unknown */
	double max_lag_s;          /* the buffered fixes: how far the visible count lags */
	double wal_per_commit;     /* flushes of the shared log per commit; < 0 none */
	double server_cpu_ms;      /* the server's CPU per commit in the engine: the
	                              hold's CPU, the log's CPU (a leader's flush;
	                              on PostgreSQL's log a follower pays as much
	                              at its wake), and its herd wakes (on the
	                              rows and on the log) at wake_us each */
	int64_t made_ns;           /* when (kit_load_now_ns) */
};

/* A loaded run, measured. */
struct drv_run {
	struct kit_load_result r;
	int64_t started_ns;        /* when it began */
	double hold_ms;            /* the mean hold under load; 0 without a span */
	double wal_per_commit;     /* PostgreSQL: the server's WAL flushes per commit
	                              over the run (pg_stat_wal.wal_sync delta /
	                              pg_stat_database.xact_commit delta); < 0 not
	                              measured */
};

/* The CPUs this machine has online (at least 1). */
int drv_cores(void);

/* Set *in for strategy s with `threads` clients whose requests, alone,
 * cost *alone; rows 1, nothing configured, drv_cores() cores. */
void drv_inputs_init(struct drv_inputs *in, enum sim_strategy s, int threads,
                     const struct drv_parts *alone);

/* Run the engine on *in and fill *out. Returns 0, or -1 after "CMD: why"
 * on stderr when the parts did not come from a probe or the engine refuses
 * the config (*out is then all zero). */
int drv_predict(const struct drv_inputs *in, struct drv_prediction *out, const char *cmd);

/* PostgreSQL's shared log, before the run: one flush of the server's WAL
 * probed with one client alone (drv_probe_flush, on a scratch table of its
 * own, once per process) into in->wal_flush_ms, so the engine predicts
 * WAL flushes per commit. Set in->strategy first: a buffered fix's flush
 * hold is probed whole, its commit included, so it gets none. On SQLite
 * nothing: WAL with synchronous = NORMAL does not flush at commit.
 * Returns 0, or -1 after one line on stderr (drv_fail: "CMD: the
 * database went away: ..." when it did): the driver then stops. */
int drv_inputs_wal(struct drv_inputs *in, const char *url, const char *cmd);

/* The `hotrow sim` arguments that run exactly p's config, except
 * --clients (so another client count can be asked of the same parts),
 * into buf; always NUL-terminated. */
void drv_sim_args(const struct drv_prediction *p, char *buf, size_t len);

/* kit_load_run(c, op, arg, &out->r), noting when it began, on PostgreSQL
 * the WAL flushes per commit over it (a connection of its own reads the
 * counts before and after) and, with a
 * span, timing every thread's holds into it (from empty). c's own
 * thread_init and thread_done still run; th->local stays yours. Returns
 * what kit_load_run returns. */
int drv_run_load(const struct kit_load_config *c, struct drv_span *hold, kit_load_op_fn *op,
                 void *arg, struct drv_run *out);

/* Print the prediction beside the measurement on stdout: throughput,
 * p50/p99 and (PostgreSQL) WAL flushes per commit, each predicted,
 * measured and measured / predicted; when one
 * is off by more than 25 %, the measured parts that explain it; then the
 * Little's-law line, labelled as a check. `unit` names a request
 * ("likes"). Returns 0, or -1 (and prints only the refusal) when p was
 * made after m began: a prediction must not see its measurement. */
int drv_compare(const struct drv_prediction *p, const struct drv_run *m, const char *unit);

/* "  latency ms   mean .. p50 .. p95 .. p99 .. max ..": the percentiles of
 * a measured run with `digits` decimals (max always with 2). */
void drv_print_latency(const struct kit_load_result *r, int digits);

/* "  1 thread alone: hold .. ms, outside .. ms, CPU .. ms here + .. ms
 * in the server, N requests": the parts a prediction uses. */
void drv_print_parts(const char *what, const struct drv_parts *alone);

#endif
