/* hist.c: util/hist.h, log-linear buckets (HDR-style) over integers. */
#include <string.h>

#include "util/hist.h"

#define SUB (1 << UTIL_HIST_SUB_BITS)

void util_hist_init(struct util_hist *h)
{
	memset(h, 0, sizeof *h);
	h->lo = UTIL_HIST_BUCKETS;
	h->hi = -1;
}

/* Few values spread over many buckets: work from few[], not the range. */
static int few_cheaper(const struct util_hist *h)
{
	return h->count <= UTIL_HIST_FEW && (uint64_t)(h->hi - h->lo + 1) > 4 * h->count;
}

void util_hist_reset(struct util_hist *h)
{
	/* Whichever touches less: the few values' buckets, or the range. */
	if (few_cheaper(h))
		for (uint64_t i = 0; i < h->count; i++)
			h->b[h->few[i]] = 0;
	else if (h->lo <= h->hi)
		memset(&h->b[h->lo], 0, (size_t)(h->hi - h->lo + 1) * sizeof h->b[0]);
	h->count = 0;
	h->sum = 0;
	h->min = h->max = 0;
	h->lo = UTIL_HIST_BUCKETS;
	h->hi = -1;
}

int64_t util_hist_bucket_low(int b)
{
	int g = b >> UTIL_HIST_SUB_BITS, k = b & (SUB - 1);

	if (g == 0)
		return k;
	return (int64_t)(SUB + k) << (g - 1);
}

static int64_t bucket_width(int b)
{
	int g = b >> UTIL_HIST_SUB_BITS;

	return g == 0 ? 1 : (int64_t)1 << (g - 1);
}

void util_hist_merge(struct util_hist *into, const struct util_hist *h)
{
	if (!h->count)
		return;
	for (int b = h->lo; b <= h->hi; b++)
		into->b[b] += h->b[b];
	/* few[] stays whole while the total is small: then both were small. */
	if (into->count + h->count <= UTIL_HIST_FEW)
		memcpy(&into->few[into->count], h->few, (size_t)h->count * sizeof h->few[0]);
	if (h->min < into->min || into->count == 0)
		into->min = h->min;
	if (h->max > into->max)
		into->max = h->max;
	into->count += h->count;
	into->sum += h->sum;
	if (h->lo < into->lo)
		into->lo = h->lo;
	if (h->hi > into->hi)
		into->hi = h->hi;
}

double util_hist_mean(const struct util_hist *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}

/* The value reported for bucket b: its middle, clamped to min and max. */
static double bucket_value(const struct util_hist *h, int b)
{
	double mid;

	if (bucket_width(b) == 1)
		mid = (double)util_hist_bucket_low(b);
	else
		mid = (double)util_hist_bucket_low(b) + (double)(bucket_width(b) - 1) / 2.0;
	if (mid < (double)h->min)
		mid = (double)h->min;
	return mid > (double)h->max ? (double)h->max : mid;
}

/* The rank-th smallest of the few values' buckets (rank from 1). */
static int few_rank(const struct util_hist *h, uint64_t rank)
{
	uint16_t v[UTIL_HIST_FEW];
	int n = (int)h->count;

	for (int i = 0; i < n; i++) {           /* insertion sort: n <= 64 */
		int j = i;
		while (j > 0 && v[j - 1] > h->few[i]) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = h->few[i];
	}
	return v[rank - 1];
}

double util_hist_quantile(const struct util_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0.0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	/* The smallest value with at least ceil(q * count) values at or below. */
	rank = (uint64_t)(q * (double)h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	if (few_cheaper(h))
		return bucket_value(h, few_rank(h, rank));
	for (int b = h->lo; b <= h->hi; b++) {
		seen += h->b[b];
		if (seen >= rank)
			return bucket_value(h, b);
	}
	return (double)h->max;
}
