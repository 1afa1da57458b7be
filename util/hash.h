/*
 * hash.h: the kit's one splitmix64 and one FNV-1a.
 *
 * splitmix64 turns a counter into well-mixed 64-bit values: it seeds the
 * engine's generator, the load driver's threads and the crash schedules.
 * FNV-1a (32 bits) is a small, stable checksum and name hash: the log's
 * record sums and the test harness's machine tag. Header-only, libc-free;
 * see util/clock.h for why.
 *
 * Interface:
 *   uint64_t s = seed;  uint64_t r = util_splitmix64(&s);   // advances s
 *   uint32_t h = util_fnv1a(UTIL_FNV1A_INIT, bytes, n);     // chainable
 */
#ifndef HOTROW_UTIL_HASH_H
#define HOTROW_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define UTIL_FNV1A_INIT 2166136261u

/* The next value of the sequence started at *x; advances *x. */
static inline uint64_t util_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* FNV-1a of len bytes, continuing from h (UTIL_FNV1A_INIT to start). */
static inline uint32_t util_fnv1a(uint32_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

#endif
