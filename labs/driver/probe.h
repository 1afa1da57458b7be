/*
 * probe.h: the parts of one request, measured with one thread alone.
 *
 * A prediction may use what one request costs when nobody else runs,
 * never what the loaded run it predicts achieved. drv_probe_run() calls an
 * operation on one thread, on its own connection: first a warm-up, then
 * for at least min_seconds and min_requests. It splits each request into
 * the lock hold (the span given: from taking the lock to the end of
 * COMMIT) and the rest, the time outside the lock (round trips, parsing,
 * the app's own work), and takes a robust mean and the median of each
 * (see below); it also measures the CPU time per request, of the calling thread (getrusage) and, on a local
 * PostgreSQL, of the server process that serves the connection (/proc).
 *
 * Interface:
 *   struct drv_span hold;                       // the lock's bounds
 *   drv_span_init(&hold, KIT_DB_STMT_END, "UPDATE", KIT_DB_TX_COMMIT);
 *   struct drv_probe p;
 *   drv_probe_default(&p);                      // 2 s, 500 requests, warm-up
 *   p.url = url; p.hold = &hold; p.label = "like_post, 1 thread";
 *   struct drv_parts alone;
 *   if (drv_probe_run(&p, like, arg, &alone) != 0)
 *       fprintf(stderr, "%s\n", alone.error);
 *   ... then drv_inputs (predict.h) takes `alone` ...
 * The probe owns the connection's db hook while it runs: a thread_init of
 * yours must not set one.
 */
#ifndef HOTROW_DRIVER_PROBE_H
#define HOTROW_DRIVER_PROBE_H

#include <stdint.h>

#include "kit/load.h"
#include "labs/driver/span.h"

/* What to run and for how long. */
struct drv_probe {
	const char *url;                    /* the thread's connection; NULL: none */
	struct drv_span *hold;              /* times the lock hold; NULL: see bare_sql */
	const char *bare_sql;               /* without a span: a statement that takes no
	                                       lock ("SELECT 1"). Its median time, timed
	                                       after every eighth request, is the part of
	                                       each request outside the lock, the rest is
	                                       the hold (one autocommit statement, whose
	                                       lock the client cannot see); its CPU, timed
	                                       in a run of its own, is not counted in the
	                                       requests'. NULL too: the op takes no lock */
	kit_load_thread_fn *thread_init;    /* as in kit_load (optional) */
	kit_load_thread_fn *thread_done;
	double warmup_seconds;              /* not counted (default 0.2) */
	double min_seconds;                 /* at least this long (default 2) ... */
	int64_t min_requests;               /* ... and this many requests (default 500) */
	double max_seconds;                 /* but stop here even short of min_requests
	                                       (default 30) */
	const char *label;                  /* for the progress line and errors */
};

/* One request, one thread alone, in ms. The engine is given means: a
 * closed loop's throughput is one over the mean time of a round, and the
 * slow tail of commits (a WAL flush that waits for the disk, a SQLite
 * checkpoint) is part of that mean. But a busy machine slows everything
 * for a moment now and then, which would move a plain mean by tens of per
 * cent from run to run; so the probe takes the mean of every window of
 * 0.2 s and gives the median of those window means (a median of means:
 * the tail that recurs stays in, a burst of someone else's work drops
 * out). The per-request medians are there for comparison. */
struct drv_parts {
	double hold_ms;          /* the lock hold (the span); 0 without a span */
	double outside_ms;       /* the request minus its hold */
	double request_ms;       /* the whole request (each a median of means) */
	double hold_median_ms, outside_median_ms, request_median_ms;
	double hold_p99_ms;
	double cpu_client_ms;    /* CPU of the calling thread per request (mean) */
	double cpu_db_ms;        /* CPU of the server's process per request (mean);
	                            0 on SQLite (it runs in the caller, counted
	                            above) or without a connection; < 0 unknown
	                            (a server this machine cannot see) */
	bool in_process;         /* SQLite: the database's work is in cpu_client_ms */
	int64_t requests;        /* measured, after the warm-up */
	int windows;             /* of 0.2 s, whose means gave the figures */
	int64_t calls;           /* every call made, the warm-up's included */
	double seconds;
	uint64_t stamp;          /* set by drv_probe_run only: predict.h refuses
	                            parts that did not come from a probe */
	char error[512];         /* why the probe failed; "" on success; starts
	                            "the database went away" when the server did */
};

void drv_probe_default(struct drv_probe *p);

/* The median of v[0..n) (sorted in place; the mean of the two middle
 * values when n is even); 0 when n is 0. */
double drv_median(double *v, int n);

/* Run op on one thread as *p says and fill *out. Returns 0; or KIT_DB_ERR
 * when the connection, thread_init or a call failed (out->error says which
 * and the database's message; no parts are set). */
int drv_probe_run(const struct drv_probe *p, kit_load_op_fn *op, void *arg,
                  struct drv_parts *out);

#endif
