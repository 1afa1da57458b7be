/*
 * threads.c: the pthread_create wrapper and failpoint of threads.h, and
 * the record of which started threads are not reaped yet.
 *
 * The linker sends each pthread_create, pthread_join and pthread_detach
 * in the binary's own code to __wrap_pthread_... here, and
 * __real_pthread_... to the C library's (or the sanitizer's, which
 * intercepts them). The kit's pthread_create comes as
 * lt_kit_pthread_create (tests/harness/threads.syms) and is handed on
 * uncounted and untracked; a join or detach of a thread this file does not
 * track is simply handed on.
 *
 * A tracked thread runs trampoline(), which calls the real start function
 * and notes its end (also through pthread_exit or a cancel: a cleanup
 * handler). Its slot is freed when it is joined, or when it is both
 * detached and finished. The table is static (no allocation: the
 * allocation counter of alloc.c must not see the harness's own); a start
 * past LT_THREAD_SLOTS runs untracked and is counted in overflow.
 */
#include "tests/harness/threads.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "tests/harness/deadline.h"

int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int lt_kit_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __real_pthread_join(pthread_t th, void **ret);
int __wrap_pthread_join(pthread_t th, void **ret);
int __real_pthread_detach(pthread_t th);
int __wrap_pthread_detach(pthread_t th);

static atomic_long starts;
static atomic_long kit_starts;   /* the kit's, through lt_kit_pthread_create */
static atomic_long countdown;   /* > 0: the start that takes it to 0 is refused */
static atomic_bool fired;

#define LT_THREAD_SLOTS 256

struct tracked {
	bool used;                  /* the slot is taken */
	bool known;                 /* th is set (pthread_create has returned) */
	bool finished;              /* the start function has returned */
	bool detached;
	bool running;               /* the start function has been called */
	long no;                    /* its start's number: lt_thread_starts() before it */
	pthread_t th;
	void *(*fn)(void *);
	void *arg;
};

static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tchange = PTHREAD_COND_INITIALIZER;
static struct tracked slots[LT_THREAD_SLOTS];
static atomic_long overflow;
static atomic_int head_start_ms;   /* lt_thread_head_start */

/* Whether m is this file's own lock (locks.c counts the code under
 * test's places, not the harness's). */
bool lt_thread_own_lock(const pthread_mutex_t *m);
bool lt_thread_own_lock(const pthread_mutex_t *m)
{
	return m == &tlock;
}

/* Under tlock: free s once nothing can refer to it any more. */
static void maybe_free(struct tracked *s)
{
	if (s->known && s->finished && s->detached)
		s->used = false;
}

static void finished(void *arg)
{
	struct tracked *s = arg;
	pthread_mutex_lock(&tlock);
	s->finished = true;
	maybe_free(s);
	pthread_cond_broadcast(&tchange);
	pthread_mutex_unlock(&tlock);
}

/* In the threads started through the wrapper: their start's number
 * (locks.c asks); -1 in every other thread. */
static _Thread_local long started_no = -1;

bool lt_thread_is_started(void);
bool lt_thread_is_started(void)
{
	return started_no >= 0;
}

long lt_thread_start_no(void)
{
	return started_no;
}

static void *trampoline(void *arg)
{
	struct tracked *s = arg;
	pthread_mutex_lock(&tlock);
	started_no = s->no;
	void *(*fn)(void *) = s->fn;
	void *fn_arg = s->arg;
	s->running = true;
	pthread_cond_broadcast(&tchange);
	pthread_mutex_unlock(&tlock);
	void *r;
	pthread_cleanup_push(finished, s);
	r = fn(fn_arg);
	pthread_cleanup_pop(1);
	return r;
}

int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	long no = atomic_fetch_add(&starts, 1);
	if (atomic_load(&countdown) > 0 && atomic_fetch_sub(&countdown, 1) == 1) {
		atomic_store(&fired, true);
		return EAGAIN;       /* *th untouched, no thread: as glibc leaves it */
	}
	int detached = PTHREAD_CREATE_JOINABLE;
	if (attr != NULL)
		pthread_attr_getdetachstate(attr, &detached);

	struct tracked *s = NULL;
	pthread_mutex_lock(&tlock);
	for (int i = 0; i < LT_THREAD_SLOTS && s == NULL; i++)
		if (!slots[i].used)
			s = &slots[i];
	if (s != NULL)
		*s = (struct tracked){ .used = true, .detached = detached == PTHREAD_CREATE_DETACHED,
		                       .no = no, .fn = fn, .arg = arg };
	pthread_mutex_unlock(&tlock);
	if (s == NULL) {
		atomic_fetch_add(&overflow, 1);
		return __real_pthread_create(th, attr, fn, arg);
	}

	int rc = __real_pthread_create(th, attr, trampoline, s);
	pthread_mutex_lock(&tlock);
	if (rc != 0) {
		s->used = false;
	} else {
		s->th = *th;
		s->known = true;
		/* a head start: the new thread runs first, for up to ms
		 * milliseconds, before its creator goes on (no sleep call: the
		 * checks of some labs count those) */
		int ms = atomic_load(&head_start_ms);
		if (ms > 0) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += 1;
			while (!s->running && !s->finished &&
			       pthread_cond_timedwait(&tchange, &tlock, &until) == 0)
				;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += (long)ms * 1000000L;
			until.tv_sec += until.tv_nsec / 1000000000L;
			until.tv_nsec %= 1000000000L;
			while (!s->finished && pthread_cond_timedwait(&tchange, &tlock, &until) == 0)
				;
		}
		maybe_free(s);
	}
	pthread_cond_broadcast(&tchange);
	pthread_mutex_unlock(&tlock);
	return rc;
}

void lt_thread_head_start(int ms)
{
	atomic_store(&head_start_ms, ms > 0 ? ms : 0);
}

int lt_kit_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	atomic_fetch_add(&kit_starts, 1);
	return __real_pthread_create(th, attr, fn, arg);
}

/* Under tlock: the slot of a started, unreaped thread th, or NULL. */
static struct tracked *find(pthread_t th)
{
	for (int i = 0; i < LT_THREAD_SLOTS; i++)
		if (slots[i].used && slots[i].known && pthread_equal(slots[i].th, th))
			return &slots[i];
	return NULL;
}

/* The start numbers of the threads whose join has begun, the last
 * LT_THREAD_SLOTS of them. */
static long join_begun[LT_THREAD_SLOTS];
static long njoin_begun;

bool lt_thread_unreaped_no(long no)
{
	bool alive = false;
	pthread_mutex_lock(&tlock);
	for (int i = 0; i < LT_THREAD_SLOTS && !alive; i++)
		alive = slots[i].used && slots[i].no == no;
	pthread_mutex_unlock(&tlock);
	return alive;
}

bool lt_thread_join_begun(long no)
{
	bool seen = false;
	pthread_mutex_lock(&tlock);
	for (long i = 0; i < njoin_begun && i < LT_THREAD_SLOTS && !seen; i++)
		seen = join_begun[i] == no;
	pthread_mutex_unlock(&tlock);
	return seen;
}

int __wrap_pthread_join(pthread_t th, void **ret)
{
	/* The slot is looked up before the join: once joined, th may name a
	 * new thread at once. Nothing else frees a joinable thread's slot. */
	pthread_mutex_lock(&tlock);
	struct tracked *s = find(th);
	if (s != NULL)
		join_begun[njoin_begun++ % LT_THREAD_SLOTS] = s->no;
	pthread_mutex_unlock(&tlock);
	int rc = __real_pthread_join(th, ret);
	if (rc == 0 && s != NULL) {
		pthread_mutex_lock(&tlock);
		s->used = false;
		pthread_cond_broadcast(&tchange);
		pthread_mutex_unlock(&tlock);
	}
	return rc;
}

int __wrap_pthread_detach(pthread_t th)
{
	pthread_mutex_lock(&tlock);
	struct tracked *s = find(th);
	int rc = __real_pthread_detach(th);
	if (rc == 0 && s != NULL) {
		s->detached = true;
		maybe_free(s);
		pthread_cond_broadcast(&tchange);
	}
	pthread_mutex_unlock(&tlock);
	return rc;
}

long lt_thread_starts(void) { return atomic_load(&starts); }
long lt_thread_starts_all(void) { return atomic_load(&starts) + atomic_load(&kit_starts); }

void lt_thread_arm(int k)
{
	lt_thread_disarm();
	atomic_store(&fired, false);
	atomic_store(&countdown, k > 0 ? k : 1);
}

bool lt_thread_disarm(void)
{
	atomic_store(&countdown, 0);
	return atomic_exchange(&fired, false);
}

/* Under tlock. */
static int count(bool only_running, bool only_detached)
{
	int n = 0;
	for (int i = 0; i < LT_THREAD_SLOTS; i++) {
		const struct tracked *s = &slots[i];
		if (s->used && (!only_running || !s->finished) && (!only_detached || s->detached))
			n++;
	}
	return n;
}

int lt_thread_unreaped(void)
{
	pthread_mutex_lock(&tlock);
	int n = count(false, false) + (int)atomic_load(&overflow);
	pthread_mutex_unlock(&tlock);
	return n;
}

int lt_thread_running(void)
{
	pthread_mutex_lock(&tlock);
	int n = count(true, false) + (int)atomic_load(&overflow);
	pthread_mutex_unlock(&tlock);
	return n;
}

int lt_thread_settle(int ms)
{
	struct timespec until = lt_deadline_ms(ms);
	pthread_mutex_lock(&tlock);
	while (count(true, true) > 0 && pthread_cond_timedwait(&tchange, &tlock, &until) == 0)
		;
	int n = count(false, false) + (int)atomic_load(&overflow);
	pthread_mutex_unlock(&tlock);
	return n;
}
