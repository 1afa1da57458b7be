/*
 * alloc.h: Lab 05's allocation checks (alloc.c), listed in the suite's
 * table by test_fence.c.
 *
 * Every allocation the code makes is refused in turn (tests/harness/alloc.h):
 * the call must say so, leave the views and the fence as they were, and
 * work when retried; and no call may leave a block allocated.
 */
#ifndef HOTROW_TEST_LAB05_ALLOC_H
#define HOTROW_TEST_LAB05_ALLOC_H

void fence_apply__every_allocation_can_fail(void **state);
void fence_handle__every_allocation_can_fail(void **state);
void fence_apply__every_allocation_can_fail_on_a_full_batch(void **state);
void fence_handle__every_allocation_can_fail_on_a_full_batch(void **state);
void fence_handle__nothing_left_allocated(void **state);

#endif
