/*
 * clock.h: the kit's one monotonic clock and one sleep.
 *
 * Header-only (static inline), so the engine, the kit, the runner and the
 * tests can all use it without any of them linking another: util/ depends
 * on libc alone, and nothing in it depends on anything else in the kit.
 *
 * Interface:
 *   int64_t t0 = util_now_ns();          // CLOCK_MONOTONIC, nanoseconds
 *   double s = util_now();               // the same clock, in seconds
 *   util_sleep_ns(2000000);              // 2 ms, resumed after a signal
 *   util_sleep(0.01);                    // 10 ms
 * A duration of zero or less returns at once.
 */
#ifndef HOTROW_UTIL_CLOCK_H
#define HOTROW_UTIL_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

static inline int64_t util_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline double util_now(void)
{
	return (double)util_now_ns() / 1e9;
}

/* Sleep ns nanoseconds in all, even when a signal interrupts the nap. */
static inline void util_sleep_ns(int64_t ns)
{
	if (ns <= 0)
		return;
	struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static inline void util_sleep(double seconds)
{
	util_sleep_ns((int64_t)(seconds * 1e9));
}

#endif
