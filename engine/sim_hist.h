/*
 * sim_hist.h: a log-bucket histogram of durations, for latency percentiles.
 *
 * Values are integer microseconds. Below 2^SUB_BITS each value has its own
 * bucket; above, every power of two is split into 2^SUB_BITS equal buckets,
 * so a percentile is off by at most 1 / 2^SUB_BITS of its value (under 1 %
 * with the 7 sub-bits used here). The mean, minimum and maximum are exact.
 *
 * Interface:
 *   struct sim_hist h; sim_hist_init(&h);      (all zero: empty)
 *   sim_hist_add(&h, us);
 *   sim_hist_quantile(&h, 0.99)   microseconds, 0 when empty
 *   sim_hist_mean(&h), h.count, h.max
 *   sim_hist_reset(&h)  empties it, touching only the buckets used since.
 */
#ifndef HOTROW_SIM_HIST_H
#define HOTROW_SIM_HIST_H

#include <stdint.h>

#define SIM_HIST_SUB_BITS 7
#define SIM_HIST_BUCKETS  ((64 - SIM_HIST_SUB_BITS + 1) << SIM_HIST_SUB_BITS)
#define SIM_HIST_FEW      64     /* below this many values, see few[] */

struct sim_hist {
	uint64_t count;
	double sum;                       /* for the exact mean */
	int64_t min, max;                 /* exact; min is 0 when empty */
	int lo, hi;                       /* bucket range in use; lo > hi: none */
	/* The buckets of the first SIM_HIST_FEW values: a histogram that sees
	 * only a few (one tick's worth) resets and answers quantiles from
	 * these, without sweeping thousands of buckets; same answers. */
	uint16_t few[SIM_HIST_FEW];
	uint64_t b[SIM_HIST_BUCKETS];      /* 64-bit: a long run can pass 4 billion in one bucket */
};

void sim_hist_init(struct sim_hist *h);
void sim_hist_reset(struct sim_hist *h);
void sim_hist_add(struct sim_hist *h, int64_t us);   /* negative counts as 0 */
double sim_hist_mean(const struct sim_hist *h);
/* The value at fraction q (0..1) of the way up: the middle of its bucket,
 * clamped to the exact minimum and maximum. */
double sim_hist_quantile(const struct sim_hist *h, double q);
/* Bucket helpers, exposed for the tests. */
int sim_hist_bucket(int64_t us);
int64_t sim_hist_bucket_low(int b);

#endif
