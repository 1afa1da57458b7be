/*
 * alloc.h: Lab 03's allocation checks (alloc.c), listed in the suite's
 * table by test_batch.c.
 *
 * Every allocation the code makes is refused in turn (tests/harness/alloc.h):
 * the call must say so, leave the likes where they were, and work when
 * retried; and nothing may stay allocated once an accumulator is freed.
 */
#ifndef HOTROW_TEST_LAB03_ALLOC_H
#define HOTROW_TEST_LAB03_ALLOC_H

#include "tests/harness/labtest.h"

void batch_acc__every_allocation_can_fail(void **state);
void batch_rollup__every_allocation_can_fail(void **state);
void batch_rollup__nothing_left_allocated(void **state);
void batch_acc__nothing_left_allocated(void **state);
int batch_alloc_teardown(void **state);

/* On every engine, with the teardown of alloc.c. */
#define ALLOC_ALL(f) \
	{ #f "/sqlite", f, labtest_setup_sqlite, batch_alloc_teardown, NULL }, \
	{ #f "/postgres", f, labtest_setup_pg, batch_alloc_teardown, NULL }, \
	{ #f "/mysql", f, labtest_setup_mysql, batch_alloc_teardown, NULL }

#endif
