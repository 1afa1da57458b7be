/*
 * promises.h: Lab 06's checks of money.h's promises that the other files
 * walk past (promises.c), for test_money.c's list.
 *   batch__fee_sums_past_2_31     a batch's fee sum exact past 2^31
 *   batch__fee_sums_past_int64_max  a fee that would take a batch's sum past
 *                                 INT64_MAX: that sale fails alone
 *   batch__fee_sums_past_int64_max_on_every_sub  the same on sub-account 1
 *                                 of two
 *   batch__fee_sums_up_to_int64_max_exactly  fees summing to exactly
 *                                 INT64_MAX: applied
 *   batch__fee_sums_of_two_subs_past_int64_max_together  two fees of 2^62 on
 *                                 two sub-accounts: each sum fits, both applied
 *   batch__refused_sales_add_no_fee_to_the_sum  fees of 2^62 on sales
 *                                 refused (applied before, short, invalid)
 *                                 count in no sum
 *   every_call__leaves_the_connection_as_it_found_it
 *                                 no transaction open, no session setting
 *                                 changed, after every kind of answer
 *   batch__domain_edges           each edge outside money_transfer's domain,
 *                                 in a batch: MONEY_INVALID, no row
 *   payout__two_at_once_from_two_subs  two payouts of 60 at once, no
 *                                 sub-account holding 60: none below zero
 *   transfer__zero_fee_writes_no_fee_entry  fee 0, alone and in a batch:
 *                                 two entries, none on the fee account
 *   batch__same_id_twice_in_one_batch  the second MONEY_ALREADY, paid once
 *   batch__same_as_its_sales_one_by_one  the fee account sells, then buys:
 *                                 the same answers and balances as one by one
 *   payout__two_at_once_both_covered  two payouts of 60 at once from
 *                                 sub-accounts of 100 and 80: both paid
 *   transfer__fee_sub_account_missing  a fee to a sub-account with no row:
 *                                 an error, nothing written, alone or in a batch
 *   money__refused_for_good_ends  every statement refused, with an error
 *                                 and as busy: each call gives up
 */
#ifndef HOTROW_TEST_LAB06_PROMISES_H
#define HOTROW_TEST_LAB06_PROMISES_H

void batch__fee_sums_past_2_31(void **state);
void batch__fee_sums_past_int64_max(void **state);
void batch__fee_sums_past_int64_max_on_every_sub(void **state);
void batch__fee_sums_up_to_int64_max_exactly(void **state);
void batch__fee_sums_of_two_subs_past_int64_max_together(void **state);
void batch__refused_sales_add_no_fee_to_the_sum(void **state);
void every_call__leaves_the_connection_as_it_found_it(void **state);
void batch__domain_edges(void **state);
void payout__two_at_once_from_two_subs(void **state);
void transfer__zero_fee_writes_no_fee_entry(void **state);
void batch__same_id_twice_in_one_batch(void **state);
void batch__same_as_its_sales_one_by_one(void **state);
void payout__two_at_once_both_covered(void **state);
void transfer__fee_sub_account_missing(void **state);
void money__refused_for_good_ends(void **state);

#endif
