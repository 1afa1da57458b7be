/*
 * sim_series.c: a ring of recent ticks and a history that halves its
 * resolution instead of growing (see sim_series.h).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim_series.h"
#include "engine/xmalloc.h"

void sim_series_init(struct sim_series *q)
{
	memset(q, 0, sizeof *q);
	q->recent = xmalloc(SIM_SNAP_SERIES * sizeof *q->recent);
	q->hist = xmalloc(SIM_SERIES_MAX * sizeof *q->hist);
	q->stride = 1;
}

void sim_series_free(struct sim_series *q)
{
	free(q->recent);
	free(q->hist);
	memset(q, 0, sizeof *q);
}

static double wmean(double a, double wa, double b, double wb)
{
	return wa + wb > 0 ? (a * wa + b * wb) / (wa + wb) : b;
}

static double max2(double a, double b)
{
	return a > b ? a : b;
}

/* *a (which began at a_start) followed by b, as one line in *a. */
static void merge(struct sim_tick *a, double a_start, const struct sim_tick *b)
{
	double wa = a->t_s - a_start, wb = b->t_s - a->t_s;

	a->offered_per_s = wmean(a->offered_per_s, wa, b->offered_per_s, wb);
	a->completed_per_s = wmean(a->completed_per_s, wa, b->completed_per_s, wb);
	a->failed_per_s = wmean(a->failed_per_s, wa, b->failed_per_s, wb);
	a->unrelated_failed_per_s = wmean(a->unrelated_failed_per_s, wa,
	                                  b->unrelated_failed_per_s, wb);
	a->p50_ms = max2(a->p50_ms, b->p50_ms);
	a->p99_ms = max2(a->p99_ms, b->p99_ms);
	a->t_s = b->t_s;
	a->queue_len = b->queue_len;
	a->pool_in_use = b->pool_in_use;
	a->pool_waiters = b->pool_waiters;
	a->true_count = b->true_count;
	a->visible = b->visible;
}

/* Halve the history: lines 2j and 2j+1 become line j. */
static void halve(struct sim_series *q)
{
	double start = 0;

	assert(q->nhist % 2 == 0);
	for (size_t j = 0; j < q->nhist / 2; j++) {
		struct sim_tick a = q->hist[2 * j];
		double next = q->hist[2 * j + 1].t_s;
		merge(&a, start, &q->hist[2 * j + 1]);
		q->hist[j] = a;
		start = next;
	}
	q->nhist /= 2;
	q->stride *= 2;
}

void sim_series_add(struct sim_series *q, const struct sim_tick *t)
{
	if (q->nrecent < SIM_SNAP_SERIES) {
		q->recent[(q->head + q->nrecent++) % SIM_SNAP_SERIES] = *t;
	} else {
		q->recent[q->head] = *t;
		q->head = (q->head + 1) % SIM_SNAP_SERIES;
	}

	if (q->npend == 0)
		q->pend = *t;
	else
		merge(&q->pend, q->nhist ? q->hist[q->nhist - 1].t_s : 0, t);
	if (++q->npend < q->stride)
		return;
	if (q->nhist == SIM_SERIES_MAX)
		halve(q);     /* pend now holds half a line: keep filling it */
	if (q->npend < q->stride)
		return;
	q->hist[q->nhist++] = q->pend;
	q->npend = 0;
}

int sim_series_recent(const struct sim_series *q, struct sim_tick *out, int max)
{
	int n = (size_t)max < q->nrecent ? max : (int)q->nrecent;
	size_t first = q->nrecent - (size_t)n;

	for (int i = 0; i < n; i++)
		out[i] = q->recent[(q->head + first + (size_t)i) % SIM_SNAP_SERIES];
	return n;
}

size_t sim_series_len(const struct sim_series *q)
{
	return q->nhist + (q->npend > 0);
}

void sim_series_at(const struct sim_series *q, size_t i, struct sim_tick *out)
{
	assert(i < sim_series_len(q));
	*out = i < q->nhist ? q->hist[i] : q->pend;
}
