/*
 * sim_rng.c: xoshiro256** (Blackman and Vigna, public domain algorithm),
 * seeded through splitmix64; the draws are inline in sim_rng.h.
 */
#include "engine/sim_rng.h"
#include "util/hash.h"

void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = util_splitmix64(&seed);
}
