/*
 * promises.h: Lab 08's check of where the backoff's doubling starts
 * (doubling.c), for test_inside.c's list.
 *   isolation__first_wait_is_at_most_base   after the first failure the wait
 *                                           is between base/2 and base;
 *                                           a cap of 0, or a base of 0, waits none
 */
#ifndef HOTROW_TEST_LAB08_PROMISES_H
#define HOTROW_TEST_LAB08_PROMISES_H

void isolation__first_wait_is_at_most_base(void **state);
void keys__one_like_per_user(void **state);

#endif
