/*
 * span.h: how long a connection holds a lock, timed through the db hook.
 *
 * A span runs from one database event to the next of another: from the
 * start of a statement to its end, from BEGIN to COMMIT, from the end of
 * an UPDATE to COMMIT. A struct drv_span says which events bound it and
 * collects the spans of every connection that watches for it: their count,
 * their mean and a histogram for the median. Each watching connection
 * keeps its own clock (when its current span began, how long its spans
 * lasted). The lab drivers use it to measure the lock hold that the engine's
 * prediction needs (one thread alone, see probe.h) and the hold under
 * load, printed beside it as a measurement.
 *
 * Interface:
 *   struct drv_span hold;
 *   drv_span_init(&hold, KIT_DB_STMT_START, "UPDATE", KIT_DB_STMT_END);
 *   c.thread_init = drv_span_thread_init;   // a kit_load run whose op arg
 *   c.thread_done = drv_span_thread_done;   // is &hold: every thread watches
 *   kit_load_run(&c, op, &hold, &res);
 *   printf("%.3f ms\n", drv_span_median_ms(&hold));
 * Or, on a connection of your own:
 *   struct drv_span_clock clk;
 *   drv_span_watch(&clk, &hold, db);  ...  kit_db_set_hook(db, NULL, NULL);
 * Any number of connections may watch one span at once. A struct drv_span
 * is large (a histogram): keep it static or in a struct of the run.
 */
#ifndef HOTROW_DRIVER_SPAN_H
#define HOTROW_DRIVER_SPAN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kit/db.h"
#include "kit/load.h"
#include "util/hist.h"

/* Which events bound a span, and the spans seen so far. */
struct drv_span {
	enum kit_db_event from;  /* a span starts (again) at each of these ... */
	const char *verb;        /* ... of a statement starting with this word
	                            ("UPDATE", any case); NULL: of any */
	enum kit_db_event to;    /* ... and ends at the next of these;
	                            TX_ROLLBACK drops a span that has begun */
	atomic_llong n, ns;      /* spans ended, and their total length */
	pthread_mutex_t lock;    /* guards hist */
	struct util_hist hist;   /* every span's length in nanoseconds */
};

/* One connection's clock. */
struct drv_span_clock {
	struct drv_span *span;
	int64_t since_ns;        /* when the current span began; 0: none in progress */
	int64_t held_ns;         /* the spans that ended here, summed */
	int64_t ended;           /* how many ended here */
};

/* Set *s to time spans from `from` (of a statement starting with verb, if
 * verb is not NULL) to `to`, with nothing counted yet. verb is not copied.
 * Call drv_span_destroy() when done with it. */
void drv_span_init(struct drv_span *s, enum kit_db_event from, const char *verb,
                   enum kit_db_event to);
void drv_span_destroy(struct drv_span *s);

/* Forget the spans counted so far; the bounds stay. No connection may be
 * ending a span meanwhile. */
void drv_span_reset(struct drv_span *s);

/* Time db's spans into s, with clk as db's clock; this sets db's hook
 * (kit_db_set_hook(db, NULL, NULL) stops it). clk and s must outlive the
 * watch. */
void drv_span_watch(struct drv_span_clock *clk, struct drv_span *s, struct kit_db *db);

/* kit_load thread_init and thread_done. init, for a run whose op arg is
 * the struct drv_span (or called from a thread_init of yours with it),
 * allocates the thread's clock into th->local and watches th->db; it
 * returns KIT_DB_ERR when out of memory. done unhooks th->db and frees
 * th->local, whatever the arg. */
int drv_span_thread_init(void *span, struct kit_load_thread *th);
int drv_span_thread_done(void *span, struct kit_load_thread *th);

/* The mean and the median span in milliseconds; 0 when none has ended. */
double drv_span_mean_ms(struct drv_span *s);
double drv_span_median_ms(struct drv_span *s);
long long drv_span_count(struct drv_span *s);

#endif
