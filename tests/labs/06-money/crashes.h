/*
 * crashes.h: Lab 06's crash checks (crashes.c), for test_money.c's list.
 *
 * Each check runs a fixed list of sales in a child process that a
 * failpoint kills with SIGKILL at a named place, then retries every sale
 * with the same ids from the parent, as a client that never heard the
 * answers would, and audits the books against a model of the sales:
 *   crash__before_commit   killed inside a transfer's transaction
 *   crash__after_commit    killed after a COMMIT, before the caller heard
 *   crash__mid_batch       killed in the middle of a batch
 * The failpoints (kit/failpoint.h) are hit from a db hook, so any code
 * that talks to the database through kit/db passes them.
 */
#ifndef HOTROW_TEST_LAB06_CRASHES_H
#define HOTROW_TEST_LAB06_CRASHES_H

void crash__before_commit(void **state);
void crash__after_commit(void **state);
void crash__mid_batch(void **state);

#endif
