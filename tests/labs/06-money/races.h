/*
 * races.h: Lab 06's forced races and failing steps (races.c), for
 * test_money.c's list.
 *   payout__two_at_once_from_one_sub   two payouts of 80 from 100, every interleaving
 *   transfer__same_id_in_flight        one sale sent twice at once
 *   payout__same_id_in_flight          one payout sent twice at once
 *   transfer__refused_while_the_buyer_is_paid  a short buyer paid by another sale meanwhile
 *   batch__same_batch_twice_at_once    one batch applied twice at once
 *   batch__two_batches_cross_the_fee_subs  two batches meeting the fee sub-accounts in opposite orders
 *   batch__fee_rows_locked_in_sub_order  the order a batch locks the fee rows in, watched
 *   transfer__retry_beside_a_failed_commit  a sale's COMMIT fails while its retry runs
 *                                      on another connection: 0 from one of them at most
 *   batch__retry_beside_a_failed_commit  the same for a batch of one sale
 *   payout__no_sub_holds_it_all        80 from two sub-accounts of 50: MONEY_INSUFFICIENT
 *   payout__short_every_step_can_fail  that payout, each statement refused: the code
 *   transfer__short_every_step_can_fail  a sale by a buyer who is short or missing,
 *                                      each statement refused: the code, nothing open
 *   transfer__every_step_can_fail      each statement of a sale refused, or its answer lost
 *   transfer__two_sales_fail_at_once   two sales let go together, every statement from
 *                                      the k-th refused
 *   payout__every_step_can_fail        the same for a payout
 *   transfer__nothing_shared_between_threads  a sale held inside the snprintf of its amount
 *                                      while eight sales run on another connection
 *   money__first_calls_at_once         four threads' first sale, batch, payout and
 *                                      balance, let go together
 *   balance__reads_an_account_opened_meanwhile  the account opened whole before
 *                                      each statement of a balance read
 */
#ifndef HOTROW_TEST_LAB06_RACES_H
#define HOTROW_TEST_LAB06_RACES_H

void payout__two_at_once_from_one_sub(void **state);
void transfer__same_id_in_flight(void **state);
void payout__same_id_in_flight(void **state);
void transfer__refused_while_the_buyer_is_paid(void **state);
void batch__debit_checked_where_it_is_taken(void **state);
void payout__waits_for_a_sale_crediting_its_sub(void **state);
void payout__sales_to_other_subs_do_not_wait(void **state);
void batch__same_batch_twice_at_once(void **state);
void batch__two_batches_cross_the_fee_subs(void **state);
void batch__fee_rows_locked_in_sub_order(void **state);
void batch__two_batches_keep_their_own_statements(void **state);
void transfer__zero_fee_touches_no_fee_row(void **state);
void transfer__retry_beside_a_failed_commit(void **state);
void batch__retry_beside_a_failed_commit(void **state);
void payout__no_sub_holds_it_all(void **state);
void payout__short_every_step_can_fail(void **state);
void transfer__short_every_step_can_fail(void **state);
void transfer__every_step_can_fail(void **state);
void transfer__two_sales_fail_at_once(void **state);
void payout__every_step_can_fail(void **state);
void transfer__nothing_shared_between_threads(void **state);
void money__first_calls_at_once(void **state);
void balance__reads_an_account_opened_meanwhile(void **state);

#endif
