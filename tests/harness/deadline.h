/*
 * deadline.h: the absolute CLOCK_REALTIME time ms milliseconds from now,
 * for pthread_cond_timedwait(), which the harness's waits (alloc.c,
 * threads.c, gate.c) and the checks' own give up by.
 *
 *   struct timespec until = lt_deadline_ms(1000);
 *   while (!done && pthread_cond_timedwait(&cv, &mu, &until) == 0)
 *           ;
 */
#ifndef HOTROW_TESTS_HARNESS_DEADLINE_H
#define HOTROW_TESTS_HARNESS_DEADLINE_H

#include <time.h>

static inline struct timespec lt_deadline_ms(long ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

#endif
