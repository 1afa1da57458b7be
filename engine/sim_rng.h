/*
 * sim_rng.h: the simulation's seeded pseudo-random numbers (xoshiro256**).
 *
 * Each simulation owns one generator, so a run depends on its seed alone:
 * the same seed gives the same stream on every machine, byte for byte.
 * The state is expanded from the 64-bit seed with splitmix64, so any seed,
 * including 0, gives a good stream.
 *
 * Interface:
 *   struct sim_rng r; sim_rng_seed(&r, 42);
 *   sim_rng_next(&r)      64 random bits
 *   sim_rng_unit(&r)      a double in [0, 1) with 53 random bits
 *   sim_rng_below(&r, n)  an integer in [0, n), n > 0, without modulo bias
 *   sim_rng_exp(&r, m)    exponential with mean m
 */
#ifndef HOTROW_SIM_RNG_H
#define HOTROW_SIM_RNG_H

#include <assert.h>
#include <math.h>
#include <stdint.h>

struct sim_rng {
	uint64_t s[4];
};

void sim_rng_seed(struct sim_rng *r, uint64_t seed);

/* The draws run once or more per simulated request: inline, here. */
static inline uint64_t sim_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t sim_rng_next(struct sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = sim_rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = sim_rng_rotl(s[3], 45);
	return result;
}

static inline double sim_rng_unit(struct sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53;
}

static inline uint64_t sim_rng_below(struct sim_rng *r, uint64_t n)
{
	/* Reject the top sliver that would make low values more likely. */
	uint64_t limit, x;

	assert(n > 0);
	if ((n & (n - 1)) == 0)       /* a power of two: no sliver, no division */
		return sim_rng_next(r) & (n - 1);
	limit = (uint64_t)-1 - ((uint64_t)-1 % n + 1) % n;
	do
		x = sim_rng_next(r);
	while (x > limit);
	return x % n;
}

static inline double sim_rng_exp(struct sim_rng *r, double mean)
{
	/* 1 - u is in (0, 1], so the log is finite. */
	return -mean * log(1.0 - sim_rng_unit(r));
}

#endif
