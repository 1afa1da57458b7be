/*
 * locks.c: the mutex and condition variable wrappers of locks.h.
 *
 * Each mutex the wrapped calls see gets a slot in a fixed table (no
 * allocation: alloc.c must not count the harness's own), found by its
 * address, holding the thread that holds it. A slot is taken at the
 * first lock; when the table is full, a mutex is simply not tracked
 * (nothing is reported for it). A lock that succeeds makes the caller
 * the holder; an unlock by any other thread is stray. A condition wait
 * lets the mutex go for its duration and takes it back on return.
 * Slots are guarded by a spin flag each: the critical sections are a
 * few loads and stores, and the real lock calls happen outside them.
 */
#include "tests/harness/locks.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __real_pthread_mutex_trylock(pthread_mutex_t *m);
int __real_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t);
int __real_pthread_mutex_unlock(pthread_mutex_t *m);
int __real_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int __real_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
int __real_pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                  const struct timespec *t);
int __real_pthread_condattr_init(pthread_condattr_t *a);
int __real_clock_gettime(clockid_t clock, struct timespec *ts);
time_t __real_time(time_t *t);
time_t __wrap_time(time_t *t);
int __real_gettimeofday(struct timeval *restrict tv, void *restrict tz);
int __wrap_gettimeofday(struct timeval *restrict tv, void *restrict tz);
int __real_timespec_get(struct timespec *ts, int base);
int __wrap_timespec_get(struct timespec *ts, int base);
clock_t __real_clock(void);
clock_t __wrap_clock(void);
int __wrap_clock_gettime(clockid_t clock, struct timespec *ts);
int lt_kit_clock_gettime(clockid_t clock, struct timespec *ts);
int __real_pthread_condattr_destroy(pthread_condattr_t *a);
int __real_pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clock);
int __real_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);

int __wrap_pthread_mutex_lock(pthread_mutex_t *m);
int __wrap_pthread_mutex_trylock(pthread_mutex_t *m);
int __wrap_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t);
int __wrap_pthread_mutex_unlock(pthread_mutex_t *m);
int __real_pthread_spin_unlock(pthread_spinlock_t *l);
int __wrap_pthread_spin_unlock(pthread_spinlock_t *l);
int __real_pthread_rwlock_unlock(pthread_rwlock_t *l);
int __wrap_pthread_rwlock_unlock(pthread_rwlock_t *l);
int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
int __wrap_pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                  const struct timespec *t);
int __wrap_pthread_condattr_init(pthread_condattr_t *a);
int __wrap_pthread_condattr_destroy(pthread_condattr_t *a);
int __wrap_pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clock);
int __wrap_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int __real_pthread_mutex_destroy(pthread_mutex_t *m);
int __real_pthread_cond_destroy(pthread_cond_t *c);
int __wrap_pthread_mutex_destroy(pthread_mutex_t *m);
int __wrap_pthread_cond_destroy(pthread_cond_t *c);
bool lt_thread_unreaped_no(long no);

/* The kit's calls, renamed (threads.syms): handed on untracked. */
int lt_kit_pthread_mutex_lock(pthread_mutex_t *m);
int lt_kit_pthread_mutex_unlock(pthread_mutex_t *m);
int lt_kit_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int lt_kit_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
int lt_kit_pthread_condattr_init(pthread_condattr_t *a);
int lt_kit_pthread_condattr_destroy(pthread_condattr_t *a);
int lt_kit_pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clock);
int lt_kit_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);

/* threads.c: whether the calling thread is one the code under test
 * started through the pthread_create wrapper. */
bool lt_thread_is_started(void);
long lt_thread_start_no(void);
bool lt_thread_own_lock(const pthread_mutex_t *m);
long lt_thread_starts(void);

#define SLOTS 4096

struct slot {
	atomic_flag busy;
	const void *m;           /* the mutex, or NULL: free */
	pthread_t holder;
	int depth;               /* > 0: held by holder (more than 1: recursive) */
	long user;               /* the start number of the last started thread
	                            that locked the mutex or waited on the
	                            condition variable; -1: none */
};

static struct slot slots[SLOTS];
static atomic_long stray, stray_started, uninit_attrs, destroyed_in_use;

static void grab(struct slot *s)
{
	while (atomic_flag_test_and_set_explicit(&s->busy, memory_order_acquire))
		;
}

static void let_go(struct slot *s)
{
	atomic_flag_clear_explicit(&s->busy, memory_order_release);
}

/* The slot of m, grabbed. With take, one near its place is taken for m if
 * it has none; NULL when m has none and (with take) none near its place
 * is free. */
static struct slot *lookup(const void *m, bool take)
{
	uintptr_t h = ((uintptr_t)m >> 4) * 2654435761u;
	for (int probe = 0; probe < 16; probe++) {
		struct slot *s = &slots[(h + (uintptr_t)probe) % SLOTS];
		grab(s);
		if (s->m == m)
			return s;
		if (take && s->m == NULL) {
			s->m = m;
			s->depth = 0;
			s->user = -1;
			return s;
		}
		let_go(s);
	}
	return NULL;
}

static struct slot *find(const void *m)
{
	return lookup(m, true);
}

static void took(pthread_mutex_t *m)
{
	struct slot *s = find(m);
	if (!s)
		return;
	if (s->depth > 0 && pthread_equal(s->holder, pthread_self())) {
		s->depth++;
	} else {
		s->holder = pthread_self();
		s->depth = 1;
	}
	if (lt_thread_is_started())
		s->user = lt_thread_start_no();
	let_go(s);
}

/* A started thread waits on c: it is c's user until it is reaped. */
static void waits_on(pthread_cond_t *c)
{
	if (!lt_thread_is_started())
		return;
	struct slot *s = find(c);
	if (s) {
		s->user = lt_thread_start_no();
		let_go(s);
	}
}

/* The slot of m if it has one (grabbed), else NULL; never takes one. */
static struct slot *find_existing(const void *m)
{
	return lookup(m, false);
}

/* A mutex or condition variable destroyed: counted when a started thread
 * that used it is not reaped yet (neither joined nor detached and
 * finished), by another thread. Its user is forgotten: the next object
 * made at that address starts afresh. */
static void destroyed(const void *m)
{
	struct slot *s = find_existing(m);
	if (!s)
		return;
	long user = s->user;
	s->user = -1;
	s->depth = 0;
	let_go(s);
	if (user >= 0 && lt_thread_start_no() != user && lt_thread_unreaped_no(user))
		atomic_fetch_add(&destroyed_in_use, 1);
}

/* Before an unlock or a wait: m leaves the caller; a stray unlock if the
 * caller did not hold it. */
static void gives_up(pthread_mutex_t *m)
{
	struct slot *s = find(m);
	if (!s)
		return;
	bool held = s->depth > 0 && pthread_equal(s->holder, pthread_self());
	if (held)
		s->depth--;
	let_go(s);
	if (!held) {
		atomic_fetch_add(&stray, 1);
		if (lt_thread_is_started())
			atomic_fetch_add(&stray_started, 1);
	}
}

/* Whether the table says the calling thread holds m. */
static bool held_here(const void *m)
{
	struct slot *s = find(m);
	if (!s)
		return false;
	bool mine = s->depth > 0 && pthread_equal(s->holder, pthread_self());
	let_go(s);
	return mine;
}

/* lt_lock_yield_to_waiter(): the armed thread, its patience in ms (0:
 * none armed); the mutex of a started thread's timed wait under way, and
 * how many such waits have returned. */
static atomic_int yield_ms;
static pthread_t yield_thread;
static _Atomic(pthread_mutex_t *) waited_on;
static atomic_long wait_returns;

static void nap_1ms(void);

void lt_lock_yield_to_waiter(int ms)
{
	yield_thread = pthread_self();
	atomic_store(&yield_ms, ms);
}

int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
	int ms = atomic_load(&yield_ms);
	if (ms > 0 && pthread_equal(yield_thread, pthread_self()) && atomic_load(&waited_on) == m &&
	    atomic_compare_exchange_strong(&yield_ms, &ms, 0)) {
		long r0 = atomic_load(&wait_returns);
		for (int i = 0; i < ms && atomic_load(&wait_returns) == r0; i++)
			nap_1ms();
	}
	/* The test's own thread locking a mutex it holds already: unless the
	 * mutex is recursive (then trylock takes it), that lock never
	 * returns. Said at once (lt_lock_relocked), not after the suite's
	 * timeout. Threads the code started keep the plain behaviour. */
	if (lt_lock_relocked && !lt_thread_is_started() && held_here(m)) {
		int rc = __real_pthread_mutex_trylock(m);
		if (rc == 0) {
			took(m);
			return 0;
		}
		if (rc == EBUSY)
			lt_lock_relocked(m);
	}
	int rc = __real_pthread_mutex_lock(m);
	if (rc == 0)
		took(m);
	return rc;
}

static _Thread_local int busy_trylocks;   /* lt_lock_busy_trylocks, this thread's */

void lt_lock_busy_trylocks(int n)
{
	busy_trylocks = n > 0 ? n : 0;
}

int __wrap_pthread_mutex_trylock(pthread_mutex_t *m)
{
	if (busy_trylocks > 0) {
		busy_trylocks--;
		return EBUSY;
	}
	int rc = __real_pthread_mutex_trylock(m);
	if (rc == 0)
		took(m);
	return rc;
}

static _Thread_local int late_timedlocks;   /* lt_lock_late_timedlocks, this thread's */

void lt_lock_late_timedlocks(int n)
{
	late_timedlocks = n > 0 ? n : 0;
}

int __wrap_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
	if (late_timedlocks > 0) {
		/* Its deadline has passed: a free mutex is still taken (POSIX:
		 * never a timeout when it can be locked at once), a held one
		 * answers ETIMEDOUT without waiting. */
		late_timedlocks--;
		int rc = __real_pthread_mutex_trylock(m);
		if (rc == 0)
			took(m);
		return rc == EBUSY ? ETIMEDOUT : rc;
	}
	int rc = __real_pthread_mutex_timedlock(m, t);
	if (rc == 0)
		took(m);
	return rc;
}

/* lt_lock_hold_next_unlock(): 0 off, 1 armed for unlock_thread, 2 that
 * thread is held just after its unlock, 3 let go. */
static atomic_int unlock_hold;
static pthread_t unlock_thread;

static void nap_1ms(void)
{
	struct timespec ms = { 0, 1000000 };
	nanosleep(&ms, NULL);
}

void lt_lock_hold_next_unlock(void)
{
	unlock_thread = pthread_self();
	atomic_store(&unlock_hold, 1);
}

bool lt_lock_unlock_held(int ms)
{
	for (int i = 0; i < ms && atomic_load(&unlock_hold) != 2; i++)
		nap_1ms();
	return atomic_load(&unlock_hold) == 2;
}

void lt_lock_unlock_release(void)
{
	atomic_store(&unlock_hold, 3);
}

/* lt_lock_hold_started(): 0 off, 1 armed, 2 a started thread is held,
 * 3 let go; the place, and how many of them are still to pass. */
static atomic_int started_hold, started_at, started_left;

void lt_lock_hold_started(enum lt_hold_at where, int k)
{
	atomic_store(&started_hold, 0);
	atomic_store(&started_at, (int)where);
	atomic_store(&started_left, k < 1 ? 1 : k);
	atomic_store(&started_hold, 1);
}

bool lt_lock_started_held(int ms)
{
	for (int i = 0; i < ms && atomic_load(&started_hold) != 2; i++)
		nap_1ms();
	return atomic_load(&started_hold) == 2;
}

void lt_lock_started_release(void)
{
	atomic_store(&started_hold, 3);
}

/* At a place of kind where: a started thread whose turn it is stays here
 * until let go. */
static void started_point(enum lt_hold_at where, const pthread_mutex_t *m)
{
	int armed = 1;
	if (atomic_load(&started_hold) != 1 || atomic_load(&started_at) != (int)where ||
	    (m && lt_thread_own_lock(m)) || !lt_thread_is_started() ||
	    atomic_fetch_sub(&started_left, 1) != 1)
		return;
	if (atomic_compare_exchange_strong(&started_hold, &armed, 2))
		while (atomic_load(&started_hold) == 2)
			nap_1ms();
}

/* After an unlock of any kind: the thread lt_lock_hold_next_unlock()
 * armed stays here until let go. */
static void held_after_unlock(void)
{
	int armed = 1;
	if (atomic_load(&unlock_hold) == 1 && pthread_equal(unlock_thread, pthread_self()) &&
	    atomic_compare_exchange_strong(&unlock_hold, &armed, 2))
		while (atomic_load(&unlock_hold) == 2)
			nap_1ms();
}

/* lt_lock_record: the locks this thread released since, each once. */
#define RECORD_MAX 32
static _Thread_local bool recording;
static _Thread_local const void *recorded[RECORD_MAX];
static _Thread_local int nrecorded;
bool lt_alloc_own_lock(const void *m);
#pragma weak lt_alloc_own_lock   /* alloc.o is in a lab's test binary only */

static void record_release(const void *l)
{
	if (!recording || lt_thread_own_lock(l) || (lt_alloc_own_lock && lt_alloc_own_lock(l)))
		return;
	for (int i = 0; i < nrecorded; i++)
		if (recorded[i] == l)
			return;
	if (nrecorded < RECORD_MAX)
		recorded[nrecorded++] = l;
}

void lt_lock_record(void)
{
	nrecorded = 0;
	recording = true;
}

int lt_lock_recorded(const void **out, int max)
{
	recording = false;
	int n = 0;
	for (int i = 0; i < nrecorded && n < max; i++)
		out[n++] = recorded[i];
	return n;
}

int __wrap_pthread_mutex_unlock(pthread_mutex_t *m)
{
	record_release(m);
	gives_up(m);
	int rc = __real_pthread_mutex_unlock(m);
	held_after_unlock();
	started_point(LT_AT_UNLOCK, m);
	return rc;
}

/* A spin lock or a read-write lock guards the same way: the hold after
 * the unlock is the same. */
int __wrap_pthread_spin_unlock(pthread_spinlock_t *l)
{
	record_release((const void *)l);
	int rc = __real_pthread_spin_unlock(l);
	held_after_unlock();
	return rc;
}

int __wrap_pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	int rc = __real_pthread_rwlock_unlock(l);
	held_after_unlock();
	return rc;
}

int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	waits_on(c);
	gives_up(m);
	int rc = __real_pthread_cond_wait(c, m);
	took(m);
	return rc;
}

/* ---- the timed waits of started threads ---- */

#define WAITS 256

static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;
static struct lt_wait waits[WAITS];
static long nwaits;
static atomic_int spurious_left;

/* A timed wait: clock is the one deadline t is on (-1: the condition
 * variable's own, pthread_cond_timedwait). */
static int timed_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock, const struct timespec *t)
{
	long i = -1;
	bool spurious = false;
	started_point(LT_AT_TIMEDWAIT, m);
	waits_on(c);
	if (lt_thread_is_started()) {
		struct lt_wait w = { .deadline = *t, .clock = clock, .rc = -1,
		                    .thread = lt_thread_start_no() };
		__real_clock_gettime(CLOCK_MONOTONIC, &w.began_mono);
		__real_clock_gettime(CLOCK_REALTIME, &w.began_real);
		int left = atomic_load(&spurious_left);
		while (left > 0 && !atomic_compare_exchange_weak(&spurious_left, &left, left - 1))
			;
		spurious = w.spurious = left > 0;
		__real_pthread_mutex_lock(&wlock);
		i = nwaits++;
		waits[i % WAITS] = w;
		__real_pthread_mutex_unlock(&wlock);
	}
	int rc;
	if (spurious) {
		rc = 0;   /* woken at once, the mutex never let go */
	} else {
		gives_up(m);
		if (i >= 0)
			atomic_store(&waited_on, m);
		rc = clock == (clockid_t)-1 ? __real_pthread_cond_timedwait(c, m, t)
		                            : __real_pthread_cond_clockwait(c, m, clock, t);
		if (i >= 0) {
			atomic_store(&waited_on, NULL);
			atomic_fetch_add(&wait_returns, 1);
		}
		took(m);
	}
	if (i >= 0) {
		__real_pthread_mutex_lock(&wlock);
		if (nwaits - i <= WAITS)
			waits[i % WAITS].rc = rc;
		__real_pthread_mutex_unlock(&wlock);
	}
	return rc;
}

int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	return timed_wait(c, m, (clockid_t)-1, t);
}

int __wrap_pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                  const struct timespec *t)
{
	return timed_wait(c, m, clock, t);
}

long lt_lock_waits(void)
{
	__real_pthread_mutex_lock(&wlock);
	long n = nwaits;
	__real_pthread_mutex_unlock(&wlock);
	return n;
}

bool lt_lock_wait(long i, struct lt_wait *out)
{
	__real_pthread_mutex_lock(&wlock);
	bool kept = i >= 0 && i < nwaits && nwaits - i <= WAITS;
	if (kept)
		*out = waits[i % WAITS];
	__real_pthread_mutex_unlock(&wlock);
	return kept;
}

void lt_lock_spurious(int n)
{
	atomic_store(&spurious_left, n > 0 ? n : 0);
}

/* ---- condition attributes ---- */

#define ATTRS 64

static pthread_mutex_t alock = PTHREAD_MUTEX_INITIALIZER;
static const void *attrs[ATTRS];   /* set up by pthread_condattr_init */

static bool attr_known(const void *a)
{
	for (int i = 0; i < ATTRS; i++)
		if (attrs[i] == a)
			return true;
	return false;
}

static void attr_set(const void *a, bool on)
{
	__real_pthread_mutex_lock(&alock);
	for (int i = 0; i < ATTRS; i++)
		if (attrs[i] == a)
			attrs[i] = NULL;
	for (int i = 0; on && i < ATTRS; i++)
		if (attrs[i] == NULL) {
			attrs[i] = a;
			break;
		}
	__real_pthread_mutex_unlock(&alock);
}

static void attr_check(const void *a)
{
	__real_pthread_mutex_lock(&alock);
	bool known = attr_known(a);
	__real_pthread_mutex_unlock(&alock);
	if (!known)
		atomic_fetch_add(&uninit_attrs, 1);
}

int __wrap_pthread_condattr_init(pthread_condattr_t *a)
{
	int rc = __real_pthread_condattr_init(a);
	if (rc == 0)
		attr_set(a, true);
	return rc;
}

int __wrap_pthread_condattr_destroy(pthread_condattr_t *a)
{
	attr_set(a, false);
	return __real_pthread_condattr_destroy(a);
}

int __wrap_pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clock)
{
	attr_check(a);
	return __real_pthread_condattr_setclock(a, clock);
}

/* lt_thread_starts() as the last pthread_cond_init began (-1: none yet). */
static atomic_long cond_init_starts = -1;

int __wrap_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	if (a != NULL)
		attr_check(a);
	atomic_store(&cond_init_starts, lt_thread_starts());
	return __real_pthread_cond_init(c, a);
}

long lt_lock_cond_init_starts(void) { return atomic_load(&cond_init_starts); }

/* ---- the clock a started thread reads ---- */

static atomic_int fakes_left;
static atomic_long fake_nsec;
static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
static struct timespec faked;
static clockid_t faked_clock;
static bool faked_any;

static _Thread_local int64_t fast_factor, fast_since_ns;

static int64_t real_mono_ns(void)
{
	struct timespec now;
	__real_clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void lt_clock_fast_this_thread(int64_t factor)
{
	fast_factor = factor > 1 ? factor : 0;
	fast_since_ns = real_mono_ns();
}

/* What a fast thread's clocks read beyond the real one. */
static int64_t fast_extra_ns(void)
{
	return fast_factor > 1 ? (real_mono_ns() - fast_since_ns) * (fast_factor - 1) : 0;
}

int __wrap_clock_gettime(clockid_t clock, struct timespec *ts)
{
	int rc = __real_clock_gettime(clock, ts);
	if (rc == 0 && (clock == CLOCK_BOOTTIME || clock == CLOCK_BOOTTIME_ALARM))
		ts->tv_sec += (time_t)(LT_SLEPT_NS / 1000000000);
	if (rc == 0 && fast_factor > 1 && clock != CLOCK_PROCESS_CPUTIME_ID &&
	    clock != CLOCK_THREAD_CPUTIME_ID) {
		int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + fast_extra_ns();
		ts->tv_sec = ns / 1000000000;
		ts->tv_nsec = ns % 1000000000;
	}
	if (rc != 0 || !lt_thread_is_started())
		return rc;
	int left = atomic_load(&fakes_left);
	while (left > 0 && !atomic_compare_exchange_weak(&fakes_left, &left, left - 1))
		;
	if (left > 0) {
		ts->tv_nsec = atomic_load(&fake_nsec);
		__real_pthread_mutex_lock(&clock_lock);
		faked = *ts;
		faked_clock = clock;
		faked_any = true;
		__real_pthread_mutex_unlock(&clock_lock);
	}
	return rc;
}

static atomic_bool pid_one;

void lt_pid_is_one(void)
{
	atomic_store(&pid_one, true);
}

pid_t __real_getpid(void);
pid_t __wrap_getpid(void);

pid_t __wrap_getpid(void)
{
	return atomic_load(&pid_one) ? 1 : __real_getpid();
}

/* In a container's PID namespace a process's main thread is tid 1 too:
 * a worker alone there answers gettid() 1 as it answers getpid() 1. */
pid_t __real_gettid(void);
pid_t __wrap_gettid(void);

pid_t __wrap_gettid(void)
{
	return atomic_load(&pid_one) ? 1 : __real_gettid();
}

/* The other clocks C code reads the wall time with: time(), gettimeofday()
 * and timespec_get() run as fast as clock_gettime in a thread made fast,
 * so a limit kept with them ("give up after 3 s", in whole seconds of
 * time()) is met as soon as one kept with clock_gettime. */

time_t __wrap_time(time_t *t)
{
	time_t now = __real_time(NULL);
	if (fast_factor > 1)
		now += (time_t)(fast_extra_ns() / 1000000000);
	if (t)
		*t = now;
	return now;
}

int __wrap_gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	int rc = __real_gettimeofday(tv, tz);
	if (rc == 0 && tv && fast_factor > 1) {
		int64_t us = (int64_t)tv->tv_sec * 1000000 + tv->tv_usec + fast_extra_ns() / 1000;
		tv->tv_sec = (time_t)(us / 1000000);
		tv->tv_usec = (suseconds_t)(us % 1000000);
	}
	return rc;
}

/* And clock(), the process's CPU time, which code may mistake for a
 * timer ("refuse an answer that took a second of clock()"): in a thread
 * made fast it runs as fast as the wall clock does there, so a limit
 * kept with it is met as soon as one kept with the wall clock. */
clock_t __wrap_clock(void)
{
	clock_t c = __real_clock();
	if (c != (clock_t)-1 && fast_factor > 1)
		c += (clock_t)(fast_extra_ns() / (1000000000 / CLOCKS_PER_SEC));
	return c;
}

int __wrap_timespec_get(struct timespec *ts, int base)
{
	int rc = __real_timespec_get(ts, base);
	if (rc != 0 && fast_factor > 1) {
		int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + fast_extra_ns();
		ts->tv_sec = (time_t)(ns / 1000000000);
		ts->tv_nsec = (long)(ns % 1000000000);
	}
	return rc;
}

void lt_lock_fake_clock(long nsec, int n)
{
	__real_pthread_mutex_lock(&clock_lock);
	faked_any = false;
	__real_pthread_mutex_unlock(&clock_lock);
	atomic_store(&fake_nsec, nsec);
	atomic_store(&fakes_left, n > 0 ? n : 0);
}

bool lt_lock_faked(struct timespec *ts, clockid_t *clock)
{
	__real_pthread_mutex_lock(&clock_lock);
	bool any = faked_any;
	*ts = faked;
	*clock = faked_clock;
	__real_pthread_mutex_unlock(&clock_lock);
	return any;
}

int lt_kit_clock_gettime(clockid_t clock, struct timespec *ts) { return __real_clock_gettime(clock, ts); }

/* ---- semaphores ---- */

static atomic_long sem_waits;

int __real_sem_wait(sem_t *s);
int __real_sem_trywait(sem_t *s);
int __real_sem_timedwait(sem_t *s, const struct timespec *t);
int __real_sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *t);
int __wrap_sem_wait(sem_t *s);
int __wrap_sem_trywait(sem_t *s);
int __wrap_sem_timedwait(sem_t *s, const struct timespec *t);
int __wrap_sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *t);

int __wrap_sem_wait(sem_t *s)
{
	atomic_fetch_add(&sem_waits, 1);
	return __real_sem_wait(s);
}

int __wrap_sem_trywait(sem_t *s)
{
	atomic_fetch_add(&sem_waits, 1);
	return __real_sem_trywait(s);
}

int __wrap_sem_timedwait(sem_t *s, const struct timespec *t)
{
	atomic_fetch_add(&sem_waits, 1);
	return __real_sem_timedwait(s, t);
}

int __wrap_sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *t)
{
	atomic_fetch_add(&sem_waits, 1);
	return __real_sem_clockwait(s, clock, t);
}

long lt_lock_sem_waits(void) { return atomic_load(&sem_waits); }

long lt_lock_stray_unlocks(void) { return atomic_load(&stray); }
long lt_lock_stray_unlocks_in_started(void) { return atomic_load(&stray_started); }
long lt_lock_uninit_condattrs(void) { return atomic_load(&uninit_attrs); }

int __wrap_pthread_mutex_destroy(pthread_mutex_t *m)
{
	destroyed(m);
	return __real_pthread_mutex_destroy(m);
}

int __wrap_pthread_cond_destroy(pthread_cond_t *c)
{
	destroyed(c);
	return __real_pthread_cond_destroy(c);
}

long lt_lock_destroyed_in_use(void) { return atomic_load(&destroyed_in_use); }

/* ---- the kit's calls ---- */

int lt_kit_pthread_mutex_lock(pthread_mutex_t *m) { return __real_pthread_mutex_lock(m); }
int lt_kit_pthread_mutex_unlock(pthread_mutex_t *m) { return __real_pthread_mutex_unlock(m); }
int lt_kit_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return __real_pthread_cond_wait(c, m);
}
int lt_kit_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	return __real_pthread_cond_timedwait(c, m, t);
}
int lt_kit_pthread_condattr_init(pthread_condattr_t *a) { return __real_pthread_condattr_init(a); }
int lt_kit_pthread_condattr_destroy(pthread_condattr_t *a)
{
	return __real_pthread_condattr_destroy(a);
}
int lt_kit_pthread_condattr_setclock(pthread_condattr_t *a, clockid_t clock)
{
	return __real_pthread_condattr_setclock(a, clock);
}
int lt_kit_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	return __real_pthread_cond_init(c, a);
}
