/*
 * load.h: a multi-threaded load driver for the labs and benches.
 *
 * T threads call one operation over and over, each thread with its own
 * database connection opened from a URL, for S seconds or N times per
 * thread. The driver times every call and reports throughput and latency
 * percentiles; on a terminal it keeps a progress line on stderr.
 *
 * Interface:
 *   static int like(void *arg, struct kit_load_thread *th)
 *   {   // th->db is this thread's connection; th->index, th->iter tell
 *       // who and which call this is (unique per run: use them for ids)
 *       return like_post(th->db, 1, th->index * 1000000 + th->iter);
 *   }
 *   struct kit_load_config c;
 *   kit_load_config_default(&c);            // 4 threads, 5 s, closed loop
 *   c.url = "sqlite:.hotrow/lab01.db"; c.threads = 16; c.seconds = 10;
 *   struct kit_load_result r;
 *   if (kit_load_run(&c, like, NULL, &r) != 0) puts(r.error);
 *   kit_load_print(stdout, &r);
 *
 * An operation returns 0 on success or a negative code (KIT_DB_* or its
 * own); failures are counted, not fatal, unless stop_on_error is set.
 * The operation must be safe to call from several threads at once with the
 * same arg (arg is shared; th->local is per thread).
 */
#ifndef HOTROW_KIT_LOAD_H
#define HOTROW_KIT_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kit/db.h"

#define KIT_LOAD_MAX_THREADS 256

/* The limits of the options every run takes, in one table: `hotrow lab
 * run` checks them before it builds anything (runner/run.c) and each
 * driver's option rows take theirs from it (labs/driver/runopt.h), so the
 * two never disagree. */
struct kit_load_limit {
	const char *name;       /* "--threads" */
	double min, max;        /* the range, bounds included ... */
	bool above_min;         /* ... but min itself refused */
	bool integer;           /* a whole number */
	const char *accepts;    /* in words: "--threads accepts ..." */
};
enum { KIT_LOAD_LIMIT_THREADS, KIT_LOAD_LIMIT_SECONDS, KIT_LOAD_NLIMITS };
extern const struct kit_load_limit kit_load_limits[KIT_LOAD_NLIMITS];

/* true when v lies within l (false for NaN). */
bool kit_load_limit_ok(const struct kit_load_limit *l, double v);

/* What one thread sees on each call. */
struct kit_load_thread {
	int index;              /* 0 .. threads-1 */
	int64_t iter;           /* this thread's call number, from 0 */
	struct kit_db *db;      /* this thread's own connection; NULL if url is NULL */
	void *local;            /* per-thread state, set by thread_init if given */
	uint64_t rng;           /* seeded per thread from config.seed; kit_load_rand() */
};

/* An operation: 0 on success, negative on failure. */
typedef int kit_load_op_fn(void *arg, struct kit_load_thread *th);
/* Per-thread setup and cleanup around the calls (both optional). A nonzero
 * return from thread_init aborts the run with that thread's error. */
typedef int kit_load_thread_fn(void *arg, struct kit_load_thread *th);

struct kit_load_config {
	const char *url;        /* each thread opens it; NULL: no connection */
	int threads;            /* 1 .. KIT_LOAD_MAX_THREADS */
	double seconds;         /* run this long (wall clock) when > 0 ... */
	int64_t iterations;     /* ... or exactly this many calls per thread
	                           when > 0 (then seconds is ignored) */
	double rate_per_s;      /* open loop: total calls started per second,
	                           spread evenly over the threads; latency then
	                           counts from the scheduled start, so queueing
	                           shows. 0: closed loop, as fast as possible */
	bool stop_on_error;     /* stop everything at the first failed call */
	bool progress;          /* progress line on stderr, if it is a terminal */
	const char *label;      /* shown in the progress line and report */
	uint64_t seed;          /* for th->rng */
	kit_load_thread_fn *thread_init;   /* after connecting, before the calls */
	kit_load_thread_fn *thread_done;   /* after the calls, before closing */
};

struct kit_load_latency { double mean, p50, p90, p95, p99, max; };   /* ms */

struct kit_load_result {
	int threads;
	int64_t ok;             /* calls that returned 0 */
	int64_t failed;         /* calls that returned < 0, all codes */
	int64_t busy;           /* ... of which KIT_DB_BUSY */
	int64_t constraint;     /* ... of which KIT_DB_CONSTRAINT */
	double seconds;         /* wall time from the first call to the last */
	int64_t ok_timed;       /* a timed run: the ok calls that returned by
	                           the deadline (as pgbench -T counts); with
	                           iterations, ok */
	double timed_s;         /* the time they took: the config's seconds
	                           (seconds, if the run stopped sooner) */
	double throughput_per_s;           /* ok_timed / timed_s */
	struct kit_load_latency latency_ms;   /* over every call, ok or not */
	char error[512];        /* the first failure's message, "" if none */
	bool db_lost;           /* a thread's connection broke: the run stopped
	                           at once, and error starts "the database went
	                           away" */
};

/* Defaults: 4 threads, 5 seconds, closed loop, progress on, seed 1. */
void kit_load_config_default(struct kit_load_config *c);

/* Run the load and fill *out (always, even on failure). A call failing on
 * a connection that is gone stops every thread at once (out->db_lost).
 * Returns 0 when every thread connected and ran (failed calls are counted
 * in *out, not
 * returned), KIT_DB_ERR for a bad config, a connection that could not be
 * opened, a thread_init failure, or the first failed call under
 * stop_on_error; out->error says which. Blocks until done. */
int kit_load_run(const struct kit_load_config *c, kit_load_op_fn *op, void *arg,
                 struct kit_load_result *out);

/* A readable block: calls, failures, throughput, latency percentiles. */
void kit_load_print(FILE *f, const struct kit_load_result *r);

/* A uniform 64-bit number from th->rng (xorshift*, not for cryptography). */
uint64_t kit_load_rand(struct kit_load_thread *th);

/* Monotonic nanoseconds, the clock the driver and the db hook use. */
int64_t kit_load_now_ns(void);

#endif
