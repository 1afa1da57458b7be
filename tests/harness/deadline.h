/*
 * deadline.h: the harness's own clocks. lt_deadline_ms() is the absolute
 * CLOCK_REALTIME time ms milliseconds from now, for
 * pthread_cond_timedwait(), which the harness's waits (alloc.c,
 * threads.c, gate.c) and the checks' own give up by; lt_real_now_ns() is
 * CLOCK_MONOTONIC in nanoseconds, for the harness's own patience.
 *
 *   struct timespec until = lt_deadline_ms(1000);
 *   while (!done && pthread_cond_timedwait(&cv, &mu, &until) == 0)
 *           ;
 *
 * Both ask the kernel directly, not through clock_gettime(): a check may
 * make clock_gettime() run an hour a second in the thread that calls the
 * student's code (lt_clock_fast_this_thread, locks.h), or hand it a
 * made-up reading, and the harness often runs in that same thread (the
 * gate's hook runs inside a statement of the call it holds). A deadline
 * read from the fast clock lies hours ahead: a held call then slept until
 * something else woke it, which a lock wait never does, and the gate's
 * patience ran out in a fraction of a millisecond, so it forced no
 * interleaving at all.
 */
#ifndef HOTROW_TESTS_HARNESS_DEADLINE_H
#define HOTROW_TESTS_HARNESS_DEADLINE_H

#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline struct timespec lt_real_clock(clockid_t clock)
{
	struct timespec t = { 0, 0 };

	syscall(SYS_clock_gettime, clock, &t);
	return t;
}

static inline int64_t lt_real_now_ns(void)
{
	struct timespec t = lt_real_clock(CLOCK_MONOTONIC);

	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline struct timespec lt_deadline_ms(long ms)
{
	struct timespec t = lt_real_clock(CLOCK_REALTIME);

	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

#endif
