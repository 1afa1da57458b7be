/*
 * alloc.h: Lab 06's allocation checks (alloc.c), listed in the suite's
 * table by test_money.c.
 *
 * Every allocation the code makes is refused in turn (tests/harness/alloc.h):
 * the call must say so and write nothing, and the same call must then
 * work; and no call may leave a block allocated.
 */
#ifndef HOTROW_TEST_LAB06_ALLOC_H
#define HOTROW_TEST_LAB06_ALLOC_H

void transfer__every_allocation_can_fail(void **state);
void batch__every_allocation_can_fail(void **state);
void money__nothing_left_allocated(void **state);
void money__every_allocation_can_fail_in_the_other_calls(void **state);

#endif
