/*
 * span.h: how long a connection holds a lock, timed through the db hook.
 *
 * A span runs from one database event to the next of another: from the
 * start of a statement to its end, from BEGIN to COMMIT, from the end of
 * an UPDATE to COMMIT. A struct kit_span says which events bound it and
 * sums the spans of every connection that watches for it; each watching
 * connection keeps its own clock (when its current span began). The lab
 * drivers use it to measure the hold that the engine's prediction needs.
 *
 * Interface:
 *   struct kit_span hold;
 *   kit_span_init(&hold, KIT_DB_STMT_START, "UPDATE", KIT_DB_STMT_END);
 *   c.thread_init = kit_span_thread_init;   // a kit_load run whose op arg
 *   c.thread_done = kit_span_thread_done;   // is &hold: every thread watches
 *   kit_load_run(&c, op, &hold, &res);
 *   printf("%.3f ms\n", kit_span_mean_ms(&hold));
 * Or, on a connection of your own:
 *   struct kit_span_clock clk;
 *   kit_span_watch(&clk, &hold, db);  ...  kit_db_set_hook(db, NULL, NULL);
 * The sums are atomic: any number of connections may watch one span.
 */
#ifndef HOTROW_KIT_SPAN_H
#define HOTROW_KIT_SPAN_H

#include <stdatomic.h>
#include <stdint.h>

#include "kit/db.h"
#include "kit/load.h"

/* Which events bound a span, and the spans seen so far. */
struct kit_span {
	enum kit_db_event from;  /* a span starts (again) at each of these ... */
	const char *verb;        /* ... of a statement starting with this word
	                            ("UPDATE", any case); NULL: of any */
	enum kit_db_event to;    /* ... and ends at the next of these;
	                            TX_ROLLBACK drops a span that has begun */
	atomic_llong n, ns;      /* spans ended, and their total length */
};

/* One connection's clock: when its current span began. */
struct kit_span_clock {
	struct kit_span *span;
	int64_t since_ns;        /* 0: no span in progress */
};

/* Set *s to time spans from `from` (of a statement starting with verb, if
 * verb is not NULL) to `to`, with nothing counted yet. verb is not copied. */
void kit_span_init(struct kit_span *s, enum kit_db_event from, const char *verb,
                   enum kit_db_event to);

/* Forget the spans counted so far; the bounds stay. No connection may be
 * ending a span meanwhile. */
void kit_span_reset(struct kit_span *s);

/* Time db's spans into s, with clk as db's clock; this sets db's hook
 * (kit_db_set_hook(db, NULL, NULL) stops it). clk and s must outlive the
 * watch. */
void kit_span_watch(struct kit_span_clock *clk, struct kit_span *s, struct kit_db *db);

/* kit_load thread_init and thread_done. init, for a run whose op arg is
 * the struct kit_span (or called from a thread_init of yours with it),
 * allocates the thread's clock into th->local and watches th->db; it
 * returns KIT_DB_ERR when out of memory. done unhooks th->db and frees
 * th->local, whatever the arg. */
int kit_span_thread_init(void *span, struct kit_load_thread *th);
int kit_span_thread_done(void *span, struct kit_load_thread *th);

/* The mean span in milliseconds; 0 when none has ended. */
double kit_span_mean_ms(const struct kit_span *s);

#endif
