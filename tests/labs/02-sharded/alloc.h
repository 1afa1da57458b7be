/*
 * alloc.h: Lab 02's allocation checks (alloc.c), listed in the suite's
 * table by test_shard.c.
 *
 * Every allocation the code makes is refused in turn (tests/harness/alloc.h):
 * the call must say so, leave the count and N as they were, and work when
 * retried; and no call may leave a block allocated.
 */
#ifndef HOTROW_TEST_LAB02_ALLOC_H
#define HOTROW_TEST_LAB02_ALLOC_H

void shard_resize__every_allocation_can_fail(void **state);
void shard_resize__nothing_left_allocated(void **state);
void shard_increment__nothing_left_allocated(void **state);
void shard_increment__every_allocation_can_fail(void **state);
void shard_read__every_allocation_can_fail(void **state);

#endif
