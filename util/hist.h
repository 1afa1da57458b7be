/*
 * hist.h: the kit's one log-bucket histogram of durations, for latency
 * percentiles: the engine's (microseconds), the load driver's and the lab
 * drivers' timers (nanoseconds).
 *
 * Values are non-negative integers in whatever unit the caller keeps.
 * Below 2^SUB_BITS each value has its own bucket; above, every power of two
 * is split into 2^SUB_BITS equal buckets, so a percentile is off by at most
 * 1 / 2^SUB_BITS of its value (under 1 % with the 7 sub-bits used here),
 * over the whole 64-bit range. The mean, minimum and maximum are exact.
 *
 * It is one .c beside util/'s headers (a few hundred lines of buckets do
 * not belong in every file that includes it): engine/module.mk and
 * kit/module.mk archive its object into both libraries, so neither links
 * the other.
 *
 * Interface:
 *   struct util_hist h; util_hist_init(&h);    (about 60 KB: heap or static)
 *   util_hist_add(&h, us);
 *   util_hist_quantile(&h, 0.99)   in the unit added, 0 when empty
 *   util_hist_mean(&h), h.count, h.min, h.max
 *   util_hist_merge(&all, &h)      adds every value of h to all
 *   util_hist_reset(&h)  empties it, touching only the buckets used since.
 * Not thread-safe: one histogram per thread, merged after they join.
 */
#ifndef HOTROW_UTIL_HIST_H
#define HOTROW_UTIL_HIST_H

#include <stdint.h>

#define UTIL_HIST_SUB_BITS 7
#define UTIL_HIST_BUCKETS  ((64 - UTIL_HIST_SUB_BITS + 1) << UTIL_HIST_SUB_BITS)
#define UTIL_HIST_FEW      64     /* below this many values, see few[] */

struct util_hist {
	uint64_t count;
	double sum;                       /* for the exact mean */
	int64_t min, max;                 /* exact; min is 0 when empty */
	int lo, hi;                       /* bucket range in use; lo > hi: none */
	/* The buckets of the first UTIL_HIST_FEW values: a histogram that sees
	 * only a few (one tick's worth) resets and answers quantiles from
	 * these, without sweeping thousands of buckets; same answers. */
	uint16_t few[UTIL_HIST_FEW];
	uint64_t b[UTIL_HIST_BUCKETS];      /* 64-bit: a long run can pass 4 billion in one bucket */
};

void util_hist_init(struct util_hist *h);
void util_hist_reset(struct util_hist *h);
/* Add every value h holds to into (h is unchanged). */
void util_hist_merge(struct util_hist *into, const struct util_hist *h);
double util_hist_mean(const struct util_hist *h);
/* The value at fraction q (0..1) of the way up: the middle of its bucket,
 * clamped to the exact minimum and maximum. */
double util_hist_quantile(const struct util_hist *h, double q);
/* Bucket helpers, exposed for the tests. */
int64_t util_hist_bucket_low(int b);

/* The bucket of v (negative counts as 0). Inline, with util_hist_add: the
 * engine adds every request's latency to two histograms, and the two
 * inlined calls share this. */
static inline int util_hist_bucket(int64_t v)
{
	const uint64_t sub = (uint64_t)1 << UTIL_HIST_SUB_BITS;
	uint64_t u = v < 0 ? 0 : (uint64_t)v;
	int e;

	if (u < sub)
		return (int)u;
	e = 63 - __builtin_clzll(u);                  /* u in [2^e, 2^(e+1)) */
	/* Group g = e - SUB_BITS + 1 >= 1 holds sub buckets of width 2^(g-1). */
	return ((e - UTIL_HIST_SUB_BITS + 1) << UTIL_HIST_SUB_BITS) +
	       (int)((u >> (e - UTIL_HIST_SUB_BITS)) - sub);
}

static inline void util_hist_add(struct util_hist *h, int64_t v)   /* negative counts as 0 */
{
	int b;

	if (v < 0)
		v = 0;
	b = util_hist_bucket(v);
	h->b[b]++;
	h->count++;
	if (h->count <= UTIL_HIST_FEW)
		h->few[h->count - 1] = (uint16_t)b;
	h->sum += (double)v;
	if (v > h->max)
		h->max = v;
	if (v < h->min || h->count == 1)
		h->min = v;
	if (b < h->lo)
		h->lo = b;
	if (b > h->hi)
		h->hi = b;
}

#endif
