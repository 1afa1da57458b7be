/*
 * contracts.h: Lab 07's checks of contain.h's promises beyond the staged
 * lines of test_contain.c (contracts.c), for its list.
 *   hot_rows_now__two_lines_beside_other_locks   two lines of 3 and 2 waiters, an
 *                                   advisory and a table lock waited for: two lines,
 *                                   each with its count, holder and ctid
 *   hot_rows_now__one_line_whoever_queues_first  a line of 5 whose first waiter is the
 *                                   third session pg_stat_activity lists: one line
 *   hot_rows_now__names_a_table_beyond_the_search_path  a line on a table of another
 *                                   schema, its name 80-odd characters: relation as
 *                                   ::regclass::text prints it, cut to 63, NUL-ended
 *   hot_rows_now__refused_on_sqlite  KIT_DB_ERR and *n = 0
 *   hot_rows_now__query_fails        its statement refused or its answer lost: an error, *n = 0
 *   contain__endpoints_say_what_happened   a missing post or user: KIT_DB_NOROW; a taken
 *                                   pool: KIT_POOL_TIMEOUT, nothing counted
 *   contain_open__leaves_nothing_open      a failed open and contain_close() leave no
 *                                   connection behind
 *   contain_like__every_step_can_fail      each statement of a like refused or its answer
 *                                   lost: an error, counted at most once, the next like works
 *   contain_like__two_likes_fail_at_once   two likes let go together, every statement from
 *                                   the k-th refused: counted only when 0, both connections back
 *   contain_like__post_deleted_between_any_two_statements  the post deleted before the
 *                                   like's k-th statement, every k: KIT_DB_NOROW when its
 *                                   UPDATE found no row, else 0 and counted
 * And from test_contain.c, for the detector's checks here too:
 *   contain_own_db(t)                on PostgreSQL, the check's URL moved into a
 *                                   database of its own (no other suite's waits)
 */
#ifndef HOTROW_TEST_LAB07_CONTRACTS_H
#define HOTROW_TEST_LAB07_CONTRACTS_H

void hot_rows_now__two_lines_beside_other_locks(void **state);
void hot_rows_now__one_line_whoever_queues_first(void **state);
void hot_rows_now__names_a_table_beyond_the_search_path(void **state);
void hot_rows_now__refused_on_sqlite(void **state);
void hot_rows_now__query_fails(void **state);
void contain__endpoints_say_what_happened(void **state);
void contain_like__a_broken_connection_goes_back(void **state);
void contain_open__leaves_nothing_open(void **state);
void contain_like__every_step_can_fail(void **state);
void contain_like__two_likes_fail_at_once(void **state);
void contain_like__post_deleted_between_any_two_statements(void **state);

struct labtest;
void contain_own_db(struct labtest *t);

#endif
