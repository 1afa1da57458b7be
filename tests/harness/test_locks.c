/*
 * test_locks.c: the mutex and condition variable wrappers of
 * tests/harness (locks.h).
 *
 * A lock and its unlock by one thread, and a condition wait between
 * them, are no stray unlock; an unlock by a thread that does not hold
 * the mutex is one, counted apart when a started thread makes it; a
 * condition attribute used before pthread_condattr_init is counted; a
 * started thread's timed waits are recorded with their deadline, what
 * they returned and the thread's start number, and the armed ones wake
 * at once; an armed timedlock of a held mutex answers ETIMEDOUT at once
 * and takes a free one; a lock armed to yield lets a signalled waiter look first; an armed clock reading of a started thread gets the chosen
 * nanoseconds, the test thread's never; a thread whose clock was made
 * fast reads it running that many times fast, other threads the real one,
 * and itself the real one again once it is put back.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/harness/labtest.h"
#include "tests/harness/locks.h"
#include "tests/harness/threads.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool hold_done;

/* Lock, wait 1 ms on the condition variable (realtime), unlock. */
static void *wait_a_little(void *arg)
{
	(void)arg;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&mu);
	while (pthread_cond_timedwait(&cv, &mu, &until) == 0)
		;
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void locks__a_wait_between_lock_and_unlock_is_no_stray(void **state)
{
	(void)state;
	long stray = lt_lock_stray_unlocks(), n = lt_lock_waits(), s0 = lt_thread_starts();
	pthread_t th;
	lt_expect_int(pthread_create(&th, NULL, wait_a_little, NULL), 0, "pthread_create");
	pthread_join(th, NULL);
	pthread_mutex_lock(&mu);
	pthread_mutex_unlock(&mu);
	lt_expect_int(lt_lock_stray_unlocks() - stray, 0, "stray unlocks");
	struct lt_wait w;
	lt_expect(lt_lock_waits() > n && lt_lock_wait(n, &w), NULL, "the started thread's wait was "
	          "not recorded");
	lt_expect_int(w.rc, ETIMEDOUT, "what the recorded wait returned");
	lt_expect_int(w.thread, s0, "the recorded wait's thread (its start number)");
	lt_expect(w.clock == (clockid_t)-1 && !w.spurious, NULL, "a plain timed wait recorded as "
	          "clock %d, spurious %d", (int)w.clock, w.spurious);
}

#if !defined(__SANITIZE_THREAD__)
static void *unlock_without_lock(void *arg)
{
	(void)arg;
	pthread_mutex_unlock(&mu);
	return NULL;
}
#endif

/* The real unlock runs too (the wrapper only watches): under TSan that
 * is a report of its own, so the stray unlocks are made only without. */
static void locks__stray_unlocks_counted(void **state)
{
	(void)state;
#if defined(__SANITIZE_THREAD__)
	skip();
#else
	pthread_mutexattr_t a;
	pthread_mutex_t checked;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&checked, &a);
	pthread_mutexattr_destroy(&a);
	long stray = lt_lock_stray_unlocks(), started = lt_lock_stray_unlocks_in_started();
	lt_expect_int(pthread_mutex_unlock(&checked), EPERM, "unlock of a mutex nobody holds");
	lt_expect_int(lt_lock_stray_unlocks() - stray, 1, "stray unlocks after one");
	lt_expect_int(lt_lock_stray_unlocks_in_started() - started, 0, "of them by a started thread");
	pthread_mutex_destroy(&checked);

	pthread_t th;
	lt_expect_int(pthread_create(&th, NULL, unlock_without_lock, NULL), 0, "pthread_create");
	pthread_join(th, NULL);
	lt_expect_int(lt_lock_stray_unlocks() - stray, 2, "stray unlocks after a started thread's");
	lt_expect_int(lt_lock_stray_unlocks_in_started() - started, 1, "of them by a started thread");
#endif
}

static void locks__condattr_used_before_init_counted(void **state)
{
	(void)state;
	long before = lt_lock_uninit_condattrs();
	pthread_condattr_t a;
	pthread_cond_t c;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&c, &a);
	pthread_condattr_destroy(&a);
	pthread_cond_destroy(&c);
	lt_expect_int(lt_lock_uninit_condattrs() - before, 0, "after init, setclock, cond_init");
	memset(&a, 0, sizeof a);   /* destroyed: no longer set up */
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	lt_expect_int(lt_lock_uninit_condattrs() - before, 1, "after setclock without init");
}

/* Every semaphore wait is counted, whether it had to wait or not, and
 * whatever its kind: a cap above the number of callers shows. */
static void locks__semaphore_waits_counted(void **state)
{
	(void)state;
	sem_t sem;
	assert_int_equal(sem_init(&sem, 0, 3), 0);
	long before = lt_lock_sem_waits();
	struct timespec at;
	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_sec += 1;
	lt_expect(sem_wait(&sem) == 0 && sem_trywait(&sem) == 0 && sem_timedwait(&sem, &at) == 0,
	          NULL, "three waits on a semaphore of 3");
	lt_expect(sem_trywait(&sem) == -1, NULL, "a fourth trywait on a semaphore of 3 went through");
	lt_expect_int(lt_lock_sem_waits() - before, 4, "semaphore waits counted after 4 of them");
	sem_destroy(&sem);
}

/* The machine has slept an hour (LT_SLEPT_NS): CLOCK_BOOTTIME reads that
 * far past CLOCK_MONOTONIC, and the other clocks are left as they are. */
static void locks__boottime_past_monotonic(void **state)
{
	(void)state;
	struct timespec mono, boot, mono2;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_MONOTONIC, &mono2);
	int64_t ahead = (int64_t)(boot.tv_sec - mono.tv_sec) * 1000000000 + (boot.tv_nsec - mono.tv_nsec);
	int64_t took = (int64_t)(mono2.tv_sec - mono.tv_sec) * 1000000000 + (mono2.tv_nsec - mono.tv_nsec);
	lt_expect(ahead >= LT_SLEPT_NS && ahead <= LT_SLEPT_NS + took + 1000000000LL, NULL,
	          "CLOCK_BOOTTIME read %.3f s past CLOCK_MONOTONIC, expected an hour", (double)ahead / 1e9);
}

/* lt_lock_cond_init_starts says how many threads had been started when
 * the last pthread_cond_init began: one made after a start shows. */
static void *nothing(void *arg)
{
	return arg;
}

static void locks__cond_init_after_a_start_seen(void **state)
{
	(void)state;
	pthread_cond_t c;
	pthread_t th;
	long s0 = lt_thread_starts();
	pthread_cond_init(&c, NULL);
	pthread_cond_destroy(&c);
	lt_expect_int(lt_lock_cond_init_starts(), s0, "starts as the cond_init before the start began");
	lt_expect(pthread_create(&th, NULL, nothing, NULL) == 0, NULL, "pthread_create failed");
	pthread_join(th, NULL);
	lt_expect_int(lt_lock_cond_init_starts(), s0, "the same after the start, no new cond_init");
	pthread_cond_init(&c, NULL);
	pthread_cond_destroy(&c);
	lt_expect_int(lt_lock_cond_init_starts(), s0 + 1, "starts as the cond_init after the start began");
}

static void *wait_a_while(void *arg)
{
	int *rc = arg;
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 3600;
	pthread_mutex_lock(&mu);
	*rc = pthread_cond_clockwait(&cv, &mu, CLOCK_MONOTONIC, &until);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* The calling thread's armed trylocks answer EBUSY on a free mutex, once
 * each; then trylock takes it again. Another thread's trylock is not
 * touched by them. */
static void *try_free(void *arg)
{
	pthread_mutex_t *m = arg;
	int rc = pthread_mutex_trylock(m);
	if (rc == 0)
		pthread_mutex_unlock(m);
	return (void *)(intptr_t)rc;
}

static void locks__armed_trylock_is_busy(void **state)
{
	(void)state;
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	lt_lock_busy_trylocks(1);
	pthread_t th;
	void *other = NULL;
	lt_expect_int(pthread_create(&th, NULL, try_free, &m), 0, "pthread_create");
	pthread_join(th, &other);
	lt_expect_int((int)(intptr_t)other, 0, "another thread's trylock of a free mutex, "
	              "with this thread's armed");
	lt_expect_int(pthread_mutex_trylock(&m), EBUSY, "an armed trylock of a free mutex");
	lt_expect_int(pthread_mutex_trylock(&m), 0, "the trylock after the armed one");
	pthread_mutex_unlock(&m);
	lt_lock_busy_trylocks(2);
	lt_lock_busy_trylocks(0);
	lt_expect_int(pthread_mutex_trylock(&m), 0, "a trylock after the arming was cancelled");
	pthread_mutex_unlock(&m);
}

/* A record holds the mutexes and spin locks this thread released, each
 * once, not its read-write locks, not another thread's, and not the
 * harness's own (an allocation's); it stops at lt_lock_recorded. */
static void *lock_and_unlock(void *arg)
{
	pthread_mutex_lock(arg);
	pthread_mutex_unlock(arg);
	return NULL;
}

static void locks__record_holds_what_this_thread_released(void **state)
{
	(void)state;
	static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER,
	                       other = PTHREAD_MUTEX_INITIALIZER;
	static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
	pthread_spinlock_t spin;
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	lt_lock_record();
	pthread_mutex_lock(&a);
	pthread_mutex_unlock(&a);
	pthread_mutex_lock(&b);
	free(malloc(64));
	pthread_mutex_unlock(&b);
	pthread_mutex_lock(&a);
	pthread_mutex_unlock(&a);
	pthread_spin_lock(&spin);
	pthread_spin_unlock(&spin);
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_t th;
	lt_expect_int(pthread_create(&th, NULL, lock_and_unlock, &other), 0, "pthread_create");
	pthread_join(th, NULL);
	const void *got[8];
	int n = lt_lock_recorded(got, 8);
	pthread_mutex_lock(&b);             /* after the record: not in it */
	pthread_mutex_unlock(&b);
	lt_expect_int(n, 3, "locks recorded: a, b and the spin lock, each once");
	lt_expect(n >= 3 && got[0] == (const void *)&a && got[1] == (const void *)&b &&
	          got[2] == (const void *)&spin, NULL, "the locks recorded, in the order released");
	lt_expect_int(lt_lock_recorded(got, 8), n, "the record read again");
	pthread_spin_destroy(&spin);
}

/* The calling thread's armed timedlocks find their deadline past: a held
 * mutex answers ETIMEDOUT at once (the holder keeps it), a free one is
 * taken; another thread's timedlock is not touched. */
static void *hold_until_told(void *arg)
{
	pthread_mutex_t *m = arg;
	pthread_mutex_lock(m);
	pthread_mutex_lock(&mu);
	while (!hold_done)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	pthread_mutex_unlock(m);
	return NULL;
}

static void *timedlock_free(void *arg)
{
	pthread_mutex_t *m = arg;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	int rc = pthread_mutex_timedlock(m, &until);
	if (rc == 0)
		pthread_mutex_unlock(m);
	return (void *)(intptr_t)rc;
}

static void locks__armed_timedlock_is_late(void **state)
{
	(void)state;
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	lt_lock_late_timedlocks(2);
	void *other = NULL;
	pthread_t th;
	lt_expect_int(pthread_create(&th, NULL, timedlock_free, &m), 0, "pthread_create");
	pthread_join(th, &other);
	lt_expect_int((int)(intptr_t)other, 0, "another thread's timedlock of a free mutex, "
	              "with this thread's armed");
	lt_expect_int(pthread_mutex_timedlock(&m, &until), 0, "an armed timedlock of a free mutex");
	pthread_mutex_unlock(&m);
	hold_done = false;
	lt_expect_int(pthread_create(&th, NULL, hold_until_told, &m), 0, "pthread_create");
	while (pthread_mutex_trylock(&m) == 0) {
		pthread_mutex_unlock(&m);
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	int rc = pthread_mutex_timedlock(&m, &until);
	pthread_mutex_lock(&mu);
	hold_done = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	if (rc == 0)
		pthread_mutex_unlock(&m);
	pthread_join(th, NULL);
	lt_expect_int(rc, ETIMEDOUT, "an armed timedlock (60 s ahead) of a mutex another thread holds");
	lt_expect_int(pthread_mutex_timedlock(&m, &until), 0, "the timedlock after the armed ones");
	pthread_mutex_unlock(&m);
	lt_lock_late_timedlocks(3);
	lt_lock_late_timedlocks(0);
	lt_expect_int(pthread_mutex_timedlock(&m, &until), 0, "a timedlock after the arming was cancelled");
	pthread_mutex_unlock(&m);
}

static void locks__armed_wait_wakes_at_once(void **state)
{
	(void)state;
	int rc = -1;
	long n = lt_lock_waits();
	lt_lock_spurious(1);
	pthread_t th;
	lt_expect_int(pthread_create(&th, NULL, wait_a_while, &rc), 0, "pthread_create");
	pthread_join(th, NULL);
	lt_lock_spurious(0);
	lt_expect_int(rc, 0, "an hour's wait armed to wake at once returned");
	struct lt_wait w;
	lt_expect(lt_lock_wait(n, &w) && w.spurious && w.clock == CLOCK_MONOTONIC && w.rc == 0, NULL,
	          "the armed wait was not recorded as a spurious CLOCK_MONOTONIC wait returning 0");
}

static void *read_clock(void *arg)
{
	clock_gettime(CLOCK_MONOTONIC, arg);
	return NULL;
}

static void locks__armed_clock_reading_faked_in_started_threads(void **state)
{
	(void)state;
	struct timespec mine, theirs, faked;
	clockid_t clock = -1;
	pthread_t th;
	lt_lock_fake_clock(123456789, 1);
	clock_gettime(CLOCK_MONOTONIC, &mine);   /* the test's own thread: real */
	lt_expect(!lt_lock_faked(&faked, &clock), NULL, "the test thread's reading was faked");
	lt_expect_int(pthread_create(&th, NULL, read_clock, &theirs), 0, "pthread_create");
	pthread_join(th, NULL);
	lt_expect_int(theirs.tv_nsec, 123456789, "the started thread's reading's nanoseconds");
	lt_expect(lt_lock_faked(&faked, &clock) && clock == CLOCK_MONOTONIC &&
	          faked.tv_sec == theirs.tv_sec && faked.tv_nsec == theirs.tv_nsec, NULL,
	          "the faked reading was not recorded");
	lt_expect(theirs.tv_sec - mine.tv_sec <= 1 && theirs.tv_sec - mine.tv_sec >= -1, NULL,
	          "the faked reading is more than a second off");
	lt_expect_int(pthread_create(&th, NULL, read_clock, &theirs), 0, "pthread_create");
	pthread_join(th, NULL);
	lt_lock_fake_clock(0, 0);
}

static void *read_clock_fast(void *arg)
{
	struct timespec *ts = arg;
	lt_clock_fast_this_thread(1000);
	clock_gettime(CLOCK_MONOTONIC, &ts[0]);
	struct timespec nap = { 0, 20000000 };
	nanosleep(&nap, NULL);
	clock_gettime(CLOCK_MONOTONIC, &ts[1]);
	lt_clock_fast_this_thread(1);
	clock_gettime(CLOCK_MONOTONIC, &ts[2]);
	return NULL;
}

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void locks__fast_clock_in_its_thread_only(void **state)
{
	(void)state;
	struct timespec ts[3], before, after;
	pthread_t th;
	clock_gettime(CLOCK_MONOTONIC, &before);
	lt_expect_int(pthread_create(&th, NULL, read_clock_fast, ts), 0, "pthread_create");
	pthread_join(th, NULL);
	clock_gettime(CLOCK_MONOTONIC, &after);
	/* 20 ms slept read as at least 20 s */
	lt_expect(ns_of(&ts[1]) - ns_of(&ts[0]) >= 20000000000LL, NULL, "a 20 ms nap on a clock "
	          "1,000 times fast read as %lld ns", (long long)(ns_of(&ts[1]) - ns_of(&ts[0])));
	lt_expect(ns_of(&ts[2]) <= ns_of(&after) && ns_of(&ts[2]) >= ns_of(&before), NULL,
	          "the clock put back did not read the real time");
	lt_expect(ns_of(&after) - ns_of(&before) < 20000000000LL, NULL,
	          "the test's own thread read the fast clock");
}

/* Waits (5 s at most) until flag is set, waiting again after any wake-up
 * that finds it unset. */
static pthread_mutex_t fmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fcv = PTHREAD_COND_INITIALIZER;
static bool flag;

static void *wait_for_flag(void *arg)
{
	(void)arg;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&fmu);
	while (!flag && pthread_cond_timedwait(&fcv, &fmu, &until) == 0)
		;
	pthread_mutex_unlock(&fmu);
	return NULL;
}

/* A signal sent before the lock that sets the flag: with the test
 * thread's lock yielding to the waiter, the waiter wakes to an unset flag
 * and waits again, every time. */
static void locks__yield_lets_a_signalled_waiter_look_first(void **state)
{
	(void)state;
	long n = lt_lock_waits(), s0 = lt_thread_starts();
	pthread_t th;
	flag = false;
	lt_expect_int(pthread_create(&th, NULL, wait_for_flag, NULL), 0, "pthread_create");
	for (int i = 0; i < 5000 && lt_lock_waits() == n; i++) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	lt_lock_yield_to_waiter(3000);
	pthread_cond_signal(&fcv);
	pthread_mutex_lock(&fmu);
	flag = true;
	pthread_cond_signal(&fcv);
	pthread_mutex_unlock(&fmu);
	pthread_join(th, NULL);
	struct lt_wait w[2];
	bool two = lt_lock_wait(n, &w[0]) && lt_lock_wait(n + 1, &w[1]);
	lt_expect(two && w[0].thread == s0 && w[1].thread == s0 && w[0].rc == 0, NULL, "the waiter, "
	          "signalled before the flag was set, did not wake (rc %d) and wait again (%ld waits)",
	          w[0].rc, lt_lock_waits() - n);
}

/* A started thread held just before its timed wait, the mutex still
 * held: the test thread cannot take the mutex until it is let go; and
 * one held after its second unlock, with the mutex free. The test's own
 * thread is never held. */
static atomic_int steps;

static void *lock_twice_then_wait(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&fmu);
		pthread_mutex_unlock(&fmu);
		atomic_fetch_add(&steps, 1);
	}
	return wait_for_flag(NULL);
}

static void locks__started_thread_held_where_armed(void **state)
{
	(void)state;
	pthread_t th;
	flag = false;
	atomic_store(&steps, 0);
	lt_lock_hold_started(LT_AT_UNLOCK, 2);
	pthread_mutex_lock(&fmu);          /* the test's own: never held */
	pthread_mutex_unlock(&fmu);
	lt_expect_int(pthread_create(&th, NULL, lock_twice_then_wait, NULL), 0, "pthread_create");
	bool held = lt_lock_started_held(5000);
	int at = atomic_load(&steps);
	lt_expect(held && at == 1, NULL, "held after its second unlock: %s, with %d steps done "
	          "(expected 1)", held ? "yes" : "no", at);
	lt_expect_int(pthread_mutex_trylock(&fmu), 0, "the mutex, free while the thread is held");
	pthread_mutex_unlock(&fmu);
	lt_lock_hold_started(LT_AT_TIMEDWAIT, 1);
	bool waiting = lt_lock_started_held(5000);
	lt_expect(waiting, NULL, "the thread was not held before its timed wait");
	lt_expect_int(pthread_mutex_trylock(&fmu), EBUSY, "the mutex, while the thread is held "
	              "before its wait");
	lt_lock_started_release();
	pthread_mutex_lock(&fmu);
	flag = true;
	pthread_cond_signal(&fcv);
	pthread_mutex_unlock(&fmu);
	pthread_join(th, NULL);
	lt_expect_int(atomic_load(&steps), 2, "steps done");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LABTEST_SQLITE(locks__a_wait_between_lock_and_unlock_is_no_stray),
		LABTEST_SQLITE(locks__stray_unlocks_counted),
		LABTEST_SQLITE(locks__condattr_used_before_init_counted),
		LABTEST_SQLITE(locks__semaphore_waits_counted),
		LABTEST_SQLITE(locks__boottime_past_monotonic),
		LABTEST_SQLITE(locks__cond_init_after_a_start_seen),
		LABTEST_SQLITE(locks__armed_wait_wakes_at_once),
		LABTEST_SQLITE(locks__armed_trylock_is_busy),
		LABTEST_SQLITE(locks__record_holds_what_this_thread_released),
		LABTEST_SQLITE(locks__armed_timedlock_is_late),
		LABTEST_SQLITE(locks__armed_clock_reading_faked_in_started_threads),
		LABTEST_SQLITE(locks__yield_lets_a_signalled_waiter_look_first),
		LABTEST_SQLITE(locks__fast_clock_in_its_thread_only),
		LABTEST_SQLITE(locks__started_thread_held_where_armed),
	};
	return labtest_main("harness", tests);
}
