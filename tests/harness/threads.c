/*
 * threads.c: the pthread_create wrapper and failpoint of threads.h.
 *
 * The linker sends each pthread_create in the binary's own code to
 * __wrap_pthread_create here, and __real_pthread_create to the C
 * library's (or the sanitizer's, which intercepts it). The kit's come
 * as lt_kit_pthread_create (tests/harness/threads.syms) and are handed on
 * uncounted.
 */
#include "tests/harness/threads.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int lt_kit_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

static atomic_long starts;
static atomic_long countdown;   /* > 0: the start that takes it to 0 is refused */
static atomic_bool fired;

int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	atomic_fetch_add(&starts, 1);
	if (atomic_load(&countdown) > 0 && atomic_fetch_sub(&countdown, 1) == 1) {
		atomic_store(&fired, true);
		return EAGAIN;       /* *th untouched, no thread: as glibc leaves it */
	}
	return __real_pthread_create(th, attr, fn, arg);
}

int lt_kit_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	return __real_pthread_create(th, attr, fn, arg);
}

long lt_thread_starts(void) { return atomic_load(&starts); }

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
