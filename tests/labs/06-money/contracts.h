/*
 * contracts.h: Lab 06's checks of money.h's promises at their edges
 * (contracts.c), for test_money.c's list.
 *   open__domain_edges                money_setup twice; account <= 0, subs 0 and 65,
 *                                     opening -1 refused; 64 subs and an id past 2^31 opened;
 *                                     money_balance of an empty and of a missing account
 *   open__every_step_can_fail         each statement of money_open refused or its answer lost
 *   transfer__buyer_pays_from_sub_0   a buyer debited on sub-account 0 only; a missing
 *                                     buyer, a sale of 0, 64 fee sub-accounts
 *   payout__domain_edges              id 0, amount 0 and -5, the fee account as payee,
 *                                     subs 0 and 65 refused; exactly a sub-account's balance paid
 *   payout__out_of_one_sub_only       a payout that starts at sub-account 0 takes from it alone
 *   batch__invalid_one_in_the_middle  MONEY_INVALID in its slot, the others applied; subs 65
 *   batch__every_step_can_fail        each statement of a batch refused or its answer lost
 *   reconcile__every_step_can_fail    the audit sends no write; each statement of it refused:
 *                                     an error, and the next audit works
 *   balance__every_step_can_fail      each statement of money_balance refused: an error, no
 *                                     transaction left open, and the next call works
 *   balance__reads_only               on a read-only session, and behind a row another
 *                                     transaction holds: the balance, at once
 *   balance__past_int64_max_is_an_error  sub-accounts that add up past INT64_MAX: an error
 *   balance__values_a_sentinel_could_take  MONEY_OUTSIDE at exactly -1 is a balance
 *   reconcile__a_row_below_zero_under_any_id  a negative id's row below zero
 *                                 counts as negative
 */
#ifndef HOTROW_TEST_LAB06_CONTRACTS_H
#define HOTROW_TEST_LAB06_CONTRACTS_H

void open__domain_edges(void **state);
void open__every_step_can_fail(void **state);
void transfer__buyer_pays_from_sub_0(void **state);
void payout__domain_edges(void **state);
void payout__out_of_one_sub_only(void **state);
void batch__invalid_one_in_the_middle(void **state);
void batch__every_step_can_fail(void **state);
void reconcile__every_step_can_fail(void **state);
void balance__every_step_can_fail(void **state);
void balance__reads_only(void **state);
void balance__past_int64_max_is_an_error(void **state);
void balance__values_a_sentinel_could_take(void **state);
void reconcile__a_row_below_zero_under_any_id(void **state);

#endif
