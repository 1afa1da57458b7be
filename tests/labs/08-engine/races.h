/*
 * races.h: Lab 08's checks of what a call answers when another
 * connection changes the tables while it is under way, and of ids at the
 * ends of int64 (races.c), for test_inside.c's list.
 *   commits__async_row_deleted_meanwhile   counter 1 deleted by another connection
 *                                        before each statement of inside_count_async()
 *                                        up to its write: INSIDE_NO_ROW, nothing counted
 *   keys__setup_while_another_makes_them   posts and likes made the INSIDE_SCHEMA way by
 *                                        another connection before each statement of
 *                                        inside_keys_setup(): an error, their rows and
 *                                        key left as they were
 *   keys__ids_across_int64               posts INT64_MIN, -10^18 - 1, -1, 0, INT64_MAX
 *                                        on the setup's tables, liked by users at the
 *                                        ends of int64: each row holds its ids
 *   one_trip__ids_across_int64           the same likes as one statement
 */
#ifndef HOTROW_TEST_LAB08_RACES_H
#define HOTROW_TEST_LAB08_RACES_H

void commits__async_row_deleted_meanwhile(void **state);
void keys__setup_while_another_makes_them(void **state);
void keys__ids_across_int64(void **state);
void one_trip__ids_across_int64(void **state);

#endif
