/*
 * sleeps.h: what the code under test asks to sleep, seen by Lab 08's
 * checks, and a bound on it.
 *
 * The test program defines nanosleep(), clock_nanosleep(), usleep() and
 * sleep() itself (sleeps.c), so every call the student's code makes to
 * them passes here first. On a thread with no watch armed they sleep as
 * the C library's do. On a thread with a watch armed each request is
 * noted (how long it asked, in the gap since the last attempt) and
 * bounded: a single request longer than max_ms, or any request once the
 * thread has spent budget_ms asleep in all, returns at once (0, errno 0)
 * and is counted as cut. A check then fails saying what was asked
 * instead of hanging on an uncapped backoff or a loop around nanosleep()
 * that never ends. A request the kernel would refuse (tv_nsec outside
 * 0..999999999, a negative tv_sec) is counted as malformed and refused
 * the same way (EINVAL), with no sleep.
 *
 *   struct lt_sleeps s;
 *   lt_sleeps_watch(&s, 4, 3000);        // no sleep over 4 ms, 3 s asleep at most
 *   lt_sleeps_deadline(30, "isolation__...");   // and back within 30 s, or exit
 *   rc = inside_count_retrying(...);
 *   lt_sleeps_unwatch();
 *   if (s.cut) ... s.first_cut_ms, s.first_cut_after, s.asleep_ms ...
 *
 * On a watched thread clock_gettime() counts in microseconds (tv_nsec a
 * multiple of 1,000, as many machines' clocks do), so a "random" number
 * taken from the clock's last digits is the same every time; it may also
 * be made to stand still until the first sleep (lt_sleeps_freeze_clock).
 *
 * Attempts are counted by lt_sleeps_note_attempt(), which a connection
 * hook calls at each BEGIN; lt_sleeps_take() hands the hook what was
 * asked since the previous attempt.
 */
#ifndef HOTROW_TESTS_LAB08_SLEEPS_H
#define HOTROW_TESTS_LAB08_SLEEPS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "kit/db.h"

struct lt_sleeps {
	double max_ms;          /* one request longer than this is cut */
	double budget_ms;       /* time asleep, in all, before every request is cut */
	int calls;              /* sleep calls made while watched */
	int clock_calls;        /* ... of them clock_nanosleep() */
	int usleep_calls;       /* ... of them usleep() */
	int attempts;           /* BEGINs seen (lt_sleeps_note_attempt) */
	double asleep_ms;       /* time really spent inside the sleep calls */
	double pending_ms;      /* asked since the last lt_sleeps_take() */
	double longest_ms;      /* the longest single request */
	int longest_after;      /* attempts before it */
	int64_t first_sec;      /* wall-clock second of the first request, -1 before */
	bool cut;               /* a request was cut (too long, or past the budget) */
	double first_cut_ms;    /* what the first cut request asked */
	int first_cut_after;    /* attempts before it */
	bool over_budget;       /* a cut was for the budget, not the size */
	int malformed;          /* requests the kernel refuses with EINVAL (tv_nsec
	                           outside 0..999999999, or tv_sec below 0): they
	                           sleep not at all */
	long long first_malformed_sec, first_malformed_nsec;   /* the first one */
	bool interrupt_sleep;   /* set after lt_sleeps_watch(): the first sleep()
	                           of each wait returns at once with all its
	                           seconds unslept, as when a signal arrives
	                           before it has slept, and is not counted as
	                           asked; a wait that does not sleep them again
	                           asks less than it meant to */
	bool interrupted;       /* ... done in this wait */
	int sleeps_interrupted; /* ... in all */
	bool advance_clock;     /* set after lt_sleeps_watch(): each request cut
	                           moves the thread's clocks (realtime and
	                           monotonic) on by what it asked, as if it had
	                           slept, so a call that also limits its retries
	                           by the time they take sees that time pass */
	double advanced_ms;     /* ... by this much so far */
	bool frozen;            /* lt_sleeps_freeze_clock: the clock stands ... */
	bool frozen_mono;       /* ... the monotonic ones too (not given NULL) */
	struct timespec frozen_realtime, frozen_monotonic;      /* ... here */
};

/* Arms a watch on the calling thread (s is zeroed first). */
void lt_sleeps_watch(struct lt_sleeps *s, double max_ms, double budget_ms);
/* A last resort for a wait the test program cannot see: if the watched
 * call has not returned (lt_sleeps_unwatch) within seconds, the process
 * says so, naming what (the check), and what it saw, and exits. One
 * watched call at a time; the calling thread must hold a watch. */
void lt_sleeps_deadline(double seconds, const char *what);
/* Until the watched thread's first sleep request, its clocks stand
 * still: clock_gettime() of CLOCK_REALTIME (and gettimeofday()) reads
 * realtime, of CLOCK_MONOTONIC and the other clocks that count from boot
 * reads monotonic, to the microsecond. Workers given the same two
 * values draw their first wait as if their failures had come in one
 * tick of the clock, as collisions on one row do: a generator seeded
 * from the clock alone then draws alike in each, one seeded from what
 * differs (the process id, a thread's own address) does not. A NULL
 * monotonic leaves the clocks that count from boot running: the wall
 * clock alone is set, and set back at the first sleep. Call after
 * lt_sleeps_watch(). */
void lt_sleeps_freeze_clock(const struct timespec *realtime, const struct timespec *monotonic);
/* Disarms the calling thread's watch (and its deadline). */
void lt_sleeps_unwatch(void);
/* For a hook: one more attempt began on this thread's watch (if any). */
void lt_sleeps_note_attempt(void);
/* What this thread's watch saw asked since the last call, in ms (0 with
 * no watch), and starts the next gap. */
double lt_sleeps_take(void);

/* Whether sql starts a transaction (BEGIN or START TRANSACTION, read as
 * the server reads it: tests/harness/sql.h): where an attempt of a
 * retrying call begins. */
bool lt_sql_begins(const char *sql);

/* A connection hook (kit_db_set_hook(db, lt_time_gap, &g)) that times a
 * call's first wait: from the end of the first attempt's last statement
 * (or its rollback) to the second attempt's BEGIN, in ms; -1 until then.
 * With a watch armed on the thread it also takes what the code asked to
 * sleep in that gap (lt_sleeps_take at each BEGIN): the wait as the code
 * drew it, which no load changes. Each BEGIN is also an attempt for the
 * watch (lt_sleeps_note_attempt). */
struct lt_gap {
	int64_t last_end;
	int begins;
	double ms;              /* the first wait as timed */
	double asked;           /* ... as asked of the sleep calls (0: none seen) */
};
#define LT_GAP_INIT { 0, 0, -1, -1 }
void lt_time_gap(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns);

#endif
