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

#include <stdint.h>

struct sim_rng {
	uint64_t s[4];
};

void sim_rng_seed(struct sim_rng *r, uint64_t seed);
uint64_t sim_rng_next(struct sim_rng *r);
double sim_rng_unit(struct sim_rng *r);
uint64_t sim_rng_below(struct sim_rng *r, uint64_t n);
double sim_rng_exp(struct sim_rng *r, double mean);

#endif
