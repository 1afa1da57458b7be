/*
 * edges.h: Lab 06's checks at the edges of each function's domain
 * (edges.c), for test_money.c's list.
 *   transfer__domain_edges            fee = amount and 0 applied; fee above
 *                                     the amount or below 0, amount < 0,
 *                                     id <= 0, from == to: MONEY_INVALID
 *   transfer__values_past_2_31        id, amount, fee, seller's share, payout and a batch's
 *                                     ids past 2^31
 *   transfer__values_past_2_53        amounts a double cannot hold
 *   transfer__credit_past_int64_max_is_an_error  a sale, a batch's sale and a payout
 *                                     to a seller holding INT64_MAX: errors, nothing written
 *   batch__size_edges                 0 and MONEY_MAX_BATCH + 1: MONEY_INVALID
 *   batch__exactly_max                MONEY_MAX_BATCH transfers, all applied
 *   batch__ids_near_int64_max_with_refused_sales  ids of 19 digits, two sales
 *                                     refused among them: undone alone
 *   batch__fee_sums_past_2_24         a batch's fee sum exact past 2^24
 *   reconcile__rows_with_no_entries   a transfer and a balance with no entry
 *   reconcile__counts_past_ten_thousand  10,001 faults of each kind, each counted
 */
#ifndef HOTROW_TEST_LAB06_EDGES_H
#define HOTROW_TEST_LAB06_EDGES_H

void transfer__domain_edges(void **state);
void transfer__values_past_2_31(void **state);
void transfer__values_past_2_53(void **state);
void transfer__credit_past_int64_max_is_an_error(void **state);
void batch__size_edges(void **state);
void batch__exactly_max(void **state);
void batch__ids_near_int64_max_with_refused_sales(void **state);
void batch__fee_sums_past_2_24(void **state);
void reconcile__rows_with_no_entries(void **state);
void reconcile__counts_past_ten_thousand(void **state);

#endif
