/*
 * alloc.h: Lab 04's allocation checks (alloc.c), listed in the suite's
 * table by test_views.c.
 *
 * Every allocation the student's code makes is refused in turn
 * (tests/harness/alloc.h): the call must say so, keep every view in the
 * store or the database exactly once, and work when retried; and no block
 * the code allocated, or took from the kit, may be left once the store is
 * freed. A pthread_create refused in start_flusher is a failure like a
 * refused allocation (tests/harness/threads.h).
 */
#ifndef HOTROW_TEST_LAB04_ALLOC_H
#define HOTROW_TEST_LAB04_ALLOC_H

#include "tests/harness/labtest.h"

void record_view__every_allocation_can_fail(void **state);
void flush__every_allocation_can_fail(void **state);
void recovery__every_allocation_can_fail(void **state);
void flusher__every_allocation_can_fail(void **state);
void flusher__thread_that_cannot_start(void **state);
void drain__nothing_left_allocated(void **state);
void flush__nothing_left_allocated(void **state);
void drain__nothing_left_after_a_failing_step(void **state);
int drain_alloc_teardown(void **state);

/* On the in-process store and on a real Redis (both with SQLite). */
#define ALLOC_STORES(f) \
	{ #f "/mem", f, labtest_setup_sqlite, drain_alloc_teardown, NULL }, \
	{ #f "/redis", f, labtest_setup_redis, drain_alloc_teardown, NULL }
/* On every engine with the in-process store, and on SQLite with Redis. */
#define ALLOC_ALL(f) \
	{ #f "/sqlite", f, labtest_setup_sqlite, drain_alloc_teardown, NULL }, \
	{ #f "/postgres", f, labtest_setup_pg, drain_alloc_teardown, NULL }, \
	{ #f "/mysql", f, labtest_setup_mysql, drain_alloc_teardown, NULL }, \
	{ #f "/redis", f, labtest_setup_redis, drain_alloc_teardown, NULL }

#endif
