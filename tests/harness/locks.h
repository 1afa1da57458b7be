/*
 * locks.h: watch how the code under test uses its mutexes and condition
 * variables, whatever the timing.
 *
 * A lab's test binary is linked with -Wl,--wrap for pthread_mutex_lock,
 * _trylock, _timedlock, _unlock, pthread_cond_wait, _timedwait,
 * pthread_condattr_init, _destroy, pthread_cond_init, pthread_mutex_destroy
 * and pthread_cond_destroy, and the semaphore waits (LABTEST_WRAP in
 * labs/module.mk): those calls made by the student's code and the
 * harness's go through locks.c first; the kit's go straight to the C
 * library under other names (tests/harness/threads.syms), untracked.
 *
 * Three things are recorded:
 *
 * - Stray unlocks: a pthread_mutex_unlock by a thread that does not hold
 *   the mutex (it never locked it, or another thread holds it). A
 *   function that forgot its pthread_mutex_lock but kept the unlock is
 *   seen at once, whether or not another thread held the mutex at that
 *   moment: the wrapper knows which thread locked each mutex last
 *   (a condition wait lets it go and takes it back).
 * - Condition attributes used before pthread_condattr_init: a
 *   pthread_condattr_setclock or pthread_cond_init given an attribute
 *   no pthread_condattr_init (since its last destroy) set up.
 * - The timed waits of the threads the code under test started
 *   (threads.h): each pthread_cond_timedwait's (or _clockwait's) deadline, what the clocks
 *   said as it began, and what it returned. A check can also make the
 *   next n of those waits wake at once, spuriously (return 0 without
 *   waiting), as POSIX allows any wait to.
 *
 * Interface:
 *   long stray = lt_lock_stray_unlocks();
 *   ...start_flusher, flusher_stats, stop_flusher...
 *   lt_lock_stray_unlocks() == stray                       // none new
 *   long w = lt_lock_waits();
 *   ...wait until lt_lock_waits() > w...
 *   struct lt_wait got;
 *   lt_lock_wait(w, &got);                                 // the first since
 */
#ifndef HOTROW_TESTS_LOCKS_H
#define HOTROW_TESTS_LOCKS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Unlocks of a mutex the calling thread did not hold, since the process
 * started; and of those, how many a thread the code under test started
 * (threads.h) made: the rest came from the test's own thread, i.e. from
 * a function the check called. */
long lt_lock_stray_unlocks(void);
long lt_lock_stray_unlocks_in_started(void);

/* Semaphore waits (sem_wait, sem_timedwait, sem_clockwait, sem_trywait;
 * wrapped too, the kit uses none) the code under test made since the
 * process started, whether or not they had to wait: a semaphore around a
 * call is a cap on how many run it at once, and a cap above the number
 * of callers a check can start shows in no timing. */
long lt_lock_sem_waits(void);

/* pthread_condattr_setclock / pthread_cond_init calls given a condition
 * attribute that pthread_condattr_init had not set up. */
long lt_lock_uninit_condattrs(void);

/* pthread_mutex_destroy / pthread_cond_destroy calls (wrapped too) of a
 * mutex a started thread locked, or a condition variable it waited on,
 * made by another thread while that started thread was not yet reaped
 * (threads.h: neither joined nor detached-and-finished): the thread may
 * still use what was destroyed (stop_flusher tidying up before its
 * pthread_join), whatever the timing. */
long lt_lock_destroyed_in_use(void);

/* What lt_thread_starts() (threads.h) said as the last pthread_cond_init
 * began, -1 before the first: a check that takes lt_thread_starts()
 * before a call that makes a condition variable and starts a thread that
 * waits on it (start_flusher) sees the variable made after the thread
 * started, when the thread may already be waiting on it, whatever the
 * timing. */
long lt_lock_cond_init_starts(void);

/* One pthread_cond_timedwait of a started thread. */
struct lt_wait {
	struct timespec deadline;      /* the absolute time it was given */
	clockid_t clock;               /* its clock (pthread_cond_clockwait), or -1:
	                                  the condition variable's (timedwait) */
	struct timespec began_mono;    /* CLOCK_MONOTONIC as it began */
	struct timespec began_real;    /* CLOCK_REALTIME as it began */
	long thread;                   /* the waiting thread's start number
	                                  (lt_thread_start_no, threads.h) */
	int rc;                        /* what it returned (-1: not yet) */
	bool spurious;                 /* made to wake at once (lt_lock_spurious) */
};

/* Timed waits started threads have begun since the process started; the
 * i-th of them (0-based), false when it has left the record (the last
 * 256 are kept) or has not begun. */
long lt_lock_waits(void);
bool lt_lock_wait(long i, struct lt_wait *out);

/* The next n timed waits of started threads return 0 at once, without
 * waiting (a spurious wake-up); 0 cancels what is left. */
void lt_lock_spurious(int n);

/* The next n clock_gettime calls of started threads (clock_gettime is
 * wrapped too; the kit's calls are not) return the time with its
 * nanoseconds replaced by nsec: a reading less than a second off, at a
 * chosen place in its second, where a deadline's carry into seconds can
 * be seen to go wrong. 0 cancels what is left. lt_lock_faked gives the
 * last reading so made and its clock; false when none was made since
 * lt_lock_fake_clock. */
void lt_lock_fake_clock(long nsec, int n);

/* From now on, this thread's own clock_gettime calls (the code under
 * test's; the kit's are not wrapped), and its time(), gettimeofday() and
 * timespec_get() calls, read a clock that runs factor times fast: each
 * real nanosecond since this call adds factor. A time limit the code
 * keeps in C ("give up after 2 s") is met within a real limit / factor,
 * so a check that holds a row for a second sees a limit of an hour.
 * factor 1 (or less) puts the real clock back. */
void lt_clock_fast_this_thread(int64_t factor);

/* The test binaries' machine has slept: the code under test reads
 * CLOCK_BOOTTIME (and CLOCK_BOOTTIME_ALARM) this far past
 * CLOCK_MONOTONIC, as on a laptop after a suspend or a VM that was
 * paused. A deadline read from one clock and waited for on the other
 * is then an hour off, as it would be there. */
#define LT_SLEPT_NS (3600LL * 1000000000LL)

/* From now on getpid() answers 1 in this process, as it does for every
 * worker that runs alone in a container of its own, and gettid() 1 too
 * (its main thread's id in that PID namespace; an exercise may not call
 * syscall(), runner/audit.c): what a worker seeds from its process or
 * thread id is then the same in all of them. For a forked child, one
 * thread, that stands for such a worker. */
void lt_pid_is_one(void);
bool lt_lock_faked(struct timespec *ts, clockid_t *clock);

/* Hold the calling thread at its next pthread_mutex_unlock (or
 * pthread_spin_unlock, pthread_rwlock_unlock), just after the lock was
 * let go, until lt_lock_unlock_release(): called from a db
 * hook at a COMMIT, it stops the code under test at the first unlock
 * after the commit, with whatever it still holds then (a condition
 * wait's release does not count). lt_lock_unlock_held(ms) waits up to ms
 * milliseconds for the hold to be taken. One hold at a time; release it
 * whether or not it was taken. */
/* Called (when some file of the test program defines it: labtest.c
 * does, failing the check) when the test's own thread, not one the code
 * under test started, calls pthread_mutex_lock on a non-recursive mutex
 * it already holds: a lock that would never return, typically because an
 * earlier call returned on an error path without unlocking. */
void lt_lock_relocked(const void *m) __attribute__((weak));

void lt_lock_hold_next_unlock(void);
/* The calling thread's next n pthread_mutex_trylock calls answer EBUSY
 * without trying, as they may whenever another thread holds the mutex
 * (a started thread between its wake-up and its unlock): a function that
 * "never waits" and takes a busy mutex for "nothing to report" shows.
 * Other threads' calls are not touched; 0 cancels what is left. */
void lt_lock_busy_trylocks(int n);

/* Record the mutexes and spin locks the calling thread releases (the
 * harness's own aside) from lt_lock_record() until lt_lock_recorded(),
 * which stops and gives up to max of them, each once, and how many: the
 * locks a call took on its way. Two objects that must not wait for each
 * other (batch.h's accumulators) share none. Read-write locks are not
 * recorded: two readers do not wait for each other. */
void lt_lock_record(void);
int lt_lock_recorded(const void **out, int max);
/* The calling thread's next n pthread_mutex_timedlock calls find their
 * deadline already past, as a wait of a second does on a machine busy
 * enough: a free mutex is taken, a held one answers ETIMEDOUT at once. A
 * function that waits for its mutex "at most a second" and fails past
 * that shows, on every run. Other threads' calls are not touched; 0
 * cancels what is left. */
void lt_lock_late_timedlocks(int n);
/* The calling thread's next pthread_mutex_lock of the mutex a started
 * thread is waiting with in a timed wait first lets that waiter go
 * ahead: it waits up to ms milliseconds for the wait to return (the
 * waiter then holds the mutex, and the lock waits on for it). So a
 * pthread_cond_signal sent before the lock that sets what the waiter
 * looks at (stop_flusher's "stopping") reaches a waiter that finds
 * nothing set yet, every time, where it would otherwise lose the race
 * to the lock only now and then. A lock before any signal costs the ms.
 * Used once; 0 cancels. */
void lt_lock_yield_to_waiter(int ms);

/* Hold a thread the code under test started (threads.h) at its k-th
 * (1-based) such place from now on, until lt_lock_started_release():
 * LT_AT_UNLOCK just after a pthread_mutex_unlock (the mutex let go, as a
 * preemption there leaves it); LT_AT_TIMEDWAIT just before a timed wait
 * begins, the mutex still held (as a preemption between the test of
 * what the thread waits for and the wait leaves it). A stop or a signal
 * that comes while it is held then meets the thread in that gap, every
 * time. lt_lock_started_held(ms) waits up to ms milliseconds for the
 * hold to be taken. One hold at a time; release it whether or not it was
 * taken. */
enum lt_hold_at { LT_AT_UNLOCK = 1, LT_AT_TIMEDWAIT };
void lt_lock_hold_started(enum lt_hold_at where, int k);
bool lt_lock_started_held(int ms);
void lt_lock_started_release(void);
bool lt_lock_unlock_held(int ms);
void lt_lock_unlock_release(void);

#endif
