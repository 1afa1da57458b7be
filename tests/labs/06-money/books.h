/*
 * books.h: the fixture Lab 06's check files share (books.c): books set
 * up through the student's functions, and the balances and rows read
 * back with the test's own SQL.
 *
 * Interface:
 *   struct kit_db *db = books(t);                 money_setup() on the check's database
 *   open_account(db, 1, 1, 500);                  money_open(), the check fails if it does
 *   int rc = transfer(db, 7, 1, 2, 100, 5, 1);    money_transfer() to fee account 99 with 1 sub
 *   same_fees_batch(t, 17, 2000000, 1000001);     books(), buyer 1 with enough, seller 2, fee
 *                                                 account 99, then one batch of 17 such sales
 *   balance(t, 1);                                 the sum of account 1's rows, by SQL
 *   rows_of(t, 7);                                 transfer 7's transfers row and entries
 *   sql_int(t, "SELECT ... %lld", (long long)x);  one integer a printf-built query returns
 *   const char *bad = books_fault(t);             NULL when the books balance
 *   closed_after_refusal(t, db, "money_open", k, rc);   fails if a transaction is left open
 *   audit_reads_only(db, &a);                     money_reconcile(), the check fails if it sends
 *                                                 a statement that writes or makes something
 */
#ifndef HOTROW_TEST_LAB06_BOOKS_H
#define HOTROW_TEST_LAB06_BOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "kit/db.h"
#include "tests/harness/labtest.h"

#define FEE_ACCOUNT 99          /* the platform's fee account in every check */

struct kit_db *books(struct labtest *t);
void open_account(struct kit_db *db, int64_t id, int subs, int64_t opening);
int transfer(struct kit_db *db, int64_t id, int64_t from, int64_t to, int64_t amount,
             int64_t fee, int subs);

int same_fees_batch(struct labtest *t, int n, int64_t amount, int64_t fee);

/* The integer the query fmt (printf arguments after it) returns. */
int64_t sql_int(struct labtest *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int64_t balance(struct labtest *t, int64_t account);
int64_t rows_of(struct labtest *t, int64_t transfer_id);

/* The books audited with the test's own SQL: the first fault found
 * (entries that do not sum to zero, a balance row that is not the sum of
 * its entries, one below zero but the outside's, an entry on a row that
 * does not exist, balances that do not sum to zero), or NULL. */
const char *books_fault(struct labtest *t);

/* Fail the check when db still has a transaction open after call's k-th
 * statement was refused (it returned rc): the path out after that failure
 * skipped its ROLLBACK. Only for a refused statement: one that ran and
 * lost its answer may be the BEGIN, which leaves a transaction the code
 * never heard of. */
struct money_audit;

/* money_reconcile(db, out), watched: the check fails when the audit sends a
 * statement that writes or makes something (money.h: it reads only). */
int audit_reads_only(struct kit_db *db, struct money_audit *out);

void closed_after_refusal(struct labtest *t, struct kit_db *db, const char *call, int k, int rc);

/* After a call that failed (what: which statement, how; rc: what it
 * returned), db's session as before (a line lt_session() read once the
 * caller had given it settings of its own, lt_session_own_values): fails
 * the check and returns false when a setting changed. A call that
 * changes a setting for its run and puts it back on its success path
 * only passes every check that compares after calls that succeed. */
bool session_kept_after_failure(struct labtest *t, struct kit_db *db, const char *before,
                                const char *what, int rc);

#endif
