/*
 * alloc.h: Lab 07's allocation checks (alloc.c), listed in the suite's
 * table by test_contain.c.
 */
#ifndef HOTROW_TEST_LAB07_ALLOC_H
#define HOTROW_TEST_LAB07_ALLOC_H

void hot_keys__counting_allocates_nothing(void **state);
void hot_keys__topk_every_allocation_can_fail(void **state);

#endif
