/*
 * sim_series.h: the per-tick time series, in bounded memory.
 *
 * A run of any length keeps two views of its ticks:
 *   - the most recent SIM_SNAP_SERIES ticks, exactly, for the screen;
 *   - the whole run for --csv, at most SIM_SERIES_MAX lines: when the
 *     history fills, neighbouring pairs merge into one line that covers
 *     both (so a long run has coarser lines, never more memory).
 * A merged line averages the per-second rates over its time, keeps the
 * higher of the two p50s and p99s (a merged line never hides a slow tick),
 * and the end-of-tick state (queue, pool, counts) of its later half.
 *
 * Interface:
 *   struct sim_series q; sim_series_init(&q);
 *   sim_series_add(&q, &tick);             copies; never allocates after init
 *   sim_series_recent(&q, out, max)        newest ticks, oldest first
 *   for (i = 0; i < sim_series_len(&q); i++) sim_series_at(&q, i, &t);
 *   sim_series_free(&q);
 */
#ifndef HOTROW_SIM_SERIES_H
#define HOTROW_SIM_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "engine/sim.h"

#define SIM_SERIES_MAX 16384     /* history lines kept; even */

struct sim_series {
	struct sim_tick *recent;     /* ring of SIM_SNAP_SERIES raw ticks */
	size_t nrecent, head;        /* head: index of the oldest */
	struct sim_tick *hist;       /* SIM_SERIES_MAX lines, oldest first */
	size_t nhist;
	uint64_t stride;             /* raw ticks per history line (a power of 2) */
	struct sim_tick pend;        /* the line being filled */
	uint64_t npend;              /* raw ticks merged into pend so far */
};

/* Allocate both buffers (xmalloc: aborts on OOM). */
void sim_series_init(struct sim_series *q);
void sim_series_free(struct sim_series *q);
/* Add one raw tick; its t_s must be after the previous tick's. */
void sim_series_add(struct sim_series *q, const struct sim_tick *t);
/* Copy the newest min(max, kept) raw ticks into out, oldest first;
 * returns how many. */
int sim_series_recent(const struct sim_series *q, struct sim_tick *out, int max);
/* History lines, the one still filling included. */
size_t sim_series_len(const struct sim_series *q);
void sim_series_at(const struct sim_series *q, size_t i, struct sim_tick *out);

#endif
