/*
 * contracts.h: Lab 08's checks of inside.h's promises (contracts.c), for
 * test_inside.c's list.
 *   one_trip__likes_only_its_post        a like of post 1 leaves posts 2 and 3 alone
 *   one_trip__refused_count_leaves_no_like   the count refused: the like fails, no like row
 *   keys__missing_row_is_no_row          a missing post or counter: INSIDE_NO_ROW, no like left
 *   keys__setup_over_tables_of_another_making  posts of another making, a stray likes:
 *                                        errors, nothing dropped or added, the session as
 *                                        it was on every path out
 *   every_step_can_fail                  each statement of each writer refused or its
 *                                        answer lost: an error, nothing half-done, the
 *                                        connection's next call works
 *   versions__fills_out_as_promised      the other engine's fields 0, wal_frames >= pinned,
 *                                        *out all zero on failure
 *   versions__sqlite_database_not_in_wal  sqlite::memory: (0|-1|-1): an error, *out all
 *                                        zero, not wal_frames -1
 *   isolation__no_wait_after_the_last_attempt   INSIDE_GAVE_UP with no wait after it
 *   isolation__wait_survives_signals     a backoff wait interrupted by signals is not shortened
 *   isolation__wait_survives_signals_and_a_clock_step   ... nor lengthened by the wall
 *                                        clock set back an hour as it began
 *   isolation__refused_begin_ends_the_call   a BEGIN refused (busy too): its code at once,
 *                                        no wait, no other attempt
 */
#ifndef HOTROW_TEST_LAB08_CONTRACTS_H
#define HOTROW_TEST_LAB08_CONTRACTS_H

void one_trip__likes_only_its_post(void **state);
void one_trip__refused_count_leaves_no_like(void **state);
void keys__missing_row_is_no_row(void **state);
void keys__setup_over_tables_of_another_making(void **state);
void every_step_can_fail(void **state);
void versions__fills_out_as_promised(void **state);
void versions__sqlite_database_not_in_wal(void **state);
void isolation__no_wait_after_the_last_attempt(void **state);
void isolation__wait_survives_signals(void **state);
void isolation__wait_survives_signals_and_a_clock_step(void **state);
void isolation__refused_begin_ends_the_call(void **state);

#endif
