/*
 * sim_rng.c: xoshiro256** (Blackman and Vigna, public domain algorithm),
 * seeded through splitmix64.
 */
#include <assert.h>
#include <math.h>

#include "engine/sim_rng.h"
#include "util/hash.h"

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = util_splitmix64(&seed);
}

uint64_t sim_rng_next(struct sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double sim_rng_unit(struct sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t sim_rng_below(struct sim_rng *r, uint64_t n)
{
	/* Reject the top sliver that would make low values more likely. */
	uint64_t limit = (uint64_t)-1 - ((uint64_t)-1 % n + 1) % n;
	uint64_t x;

	assert(n > 0);
	do
		x = sim_rng_next(r);
	while (x > limit);
	return x % n;
}

double sim_rng_exp(struct sim_rng *r, double mean)
{
	/* 1 - u is in (0, 1], so the log is finite. */
	return -mean * log(1.0 - sim_rng_unit(r));
}
