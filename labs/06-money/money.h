/*
 * money.h: Lab 06, a ledger whose hot account never drifts.
 *
 * A marketplace sale moves money three ways: the buyer pays `amount`, the
 * seller gets `amount - fee`, and the platform's fee account gets `fee`.
 * Every movement is written twice over: as entries in an append-only
 * ledger (one row per account touched, signed, the rows of a transfer
 * summing to zero) and as the balance rows the entries change, in one
 * transaction. The fee account, which every sale credits, is split into
 * sub-accounts; its balance is their sum.
 *
 *   accounts(id, sub, balance)                  primary key (id, sub)
 *   transfers(id, debit, credit, amount, fee)   primary key id: the client's
 *                                               transfer id, the idempotency key
 *   entries(transfer_id, account_id, sub, amount)   the ledger: debits < 0
 *
 * Account MONEY_OUTSIDE (0) is the world outside the books: opening
 * balances come from it, so it is the one account allowed below zero, and
 * the balances of all accounts always sum to zero.
 *
 * Interface:
 *   money_setup(db);                                  once per database
 *   money_open(db, 1, 1, 500);                        buyer 1 with 500
 *   money_open(db, 2, 1, 0);                          seller 2
 *   money_open(db, 99, 8, 0);                         fee account, 8 sub-accounts
 *   struct money_fees fees = { 99, 8 };
 *   struct money_transfer t = { .id = 1001, .from = 1, .to = 2, .amount = 100, .fee = 5 };
 *   int rc = money_transfer(db, &fees, &t);           0, MONEY_ALREADY, or < 0
 *   int results[64]; money_batch(db, &fees, list, 64, results);
 *   struct money_audit a; money_reconcile(db, &a);    all zero: the books balance
 * Functions return 0 or a negative code, with kit_db_errmsg(db) saying why
 * for a database failure; on any failure nothing was written and the
 * connection is ready for the next call. An allocation that fails (malloc
 * or calloc returning NULL, if your code allocates) is such a failure:
 * KIT_DB_ERR, nothing written. No call leaves a block allocated. A
 * connection is used by one thread at a time; many threads, each with its
 * own connection, may move money between the same accounts at the same
 * time. A call that meets a row lock waits as long as its connection's
 * lock timeout allows (kit_db_set_lock_timeout; by default, without end):
 * it sets no timeout of its own, shorter or longer, not even for its own
 * transaction. Nor does it try again: a statement refused as KIT_DB_BUSY
 * (a lock wait that timed out, a deadlock, a serialization failure) ends
 * the call, or in money_batch the sale it belongs to, with KIT_DB_BUSY at
 * once. Whether and when to retry is the caller's choice: it knows its
 * deadline, and a retry inside holds it for a lock wait more each time.
 */
#ifndef HOTROW_LAB06_MONEY_H
#define HOTROW_LAB06_MONEY_H

#include <stdint.h>

#include "kit/db.h"

#define MONEY_OUTSIDE 0          /* where opening balances come from */
#define MONEY_MAX_SUBS 64        /* most sub-accounts one account may have */
#define MONEY_MAX_BATCH 10000    /* most transfers in one money_batch() */

/* Results besides 0 and the KIT_DB_* codes. */
enum {
	MONEY_ALREADY = 1,                  /* this transfer id was applied before:
	                                       nothing done now, and that is success */
	MONEY_NO_ACCOUNT = KIT_DB_NOROW,    /* the buyer or the seller does not exist */
	MONEY_INSUFFICIENT = -10,           /* the balance does not cover the amount */
	MONEY_INVALID = -11,                /* id <= 0, amount <= 0, fee outside
	                                       0..amount, from == to, or fees->subs
	                                       outside 1..MONEY_MAX_SUBS */
};

/* The platform's fee account and how many sub-accounts it is split into
 * (1 = one row). Sub-account k of account a is the row (a, k). */
struct money_fees {
	int64_t account;
	int subs;                   /* 1..MONEY_MAX_SUBS */
};

/* One sale. The id is chosen by the client and is the same on every retry
 * of the same sale. */
struct money_transfer {
	int64_t id;                 /* > 0 */
	int64_t from;               /* the buyer: pays amount, from sub-account 0 */
	int64_t to;                 /* the seller: gets amount - fee, on sub-account 0 */
	int64_t amount;             /* > 0 */
	int64_t fee;                /* 0..amount, to fee sub-account id % subs */
};

/* What money_reconcile() found; the books balance when every field is 0. */
struct money_audit {
	int64_t unbalanced;         /* transfers whose entries do not sum to zero
	                               (or that have none), plus entries of no transfer */
	int64_t drifted;            /* balance rows that differ from the sum of their entries */
	int64_t negative;           /* balance rows below zero, MONEY_OUTSIDE's excepted */
	int64_t total;              /* the sum of every balance row: 0 when no money
	                               was made or lost */
};

/* Create the tables if they do not exist, and MONEY_OUTSIDE's row. On
 * SQLite the balance column is CHECKed to hold an integer: a sum past
 * INT64_MAX is then an error there too, not a REAL (README §3). */
int money_setup(struct kit_db *db);

/* Create account `account` with `subs` sub-accounts (rows (account, 0) ..
 * (account, subs - 1)) and, when opening > 0, move `opening` to its
 * sub-account 0 from MONEY_OUTSIDE: a transfer with id -account, entries
 * and balances, in one transaction. KIT_DB_CONSTRAINT if it exists. */
int money_open(struct kit_db *db, int64_t account, int subs, int64_t opening);

/* Apply one sale in one transaction: the transfer row, its three entries
 * (buyer -amount, seller +(amount - fee), fee sub-account id % subs +fee;
 * a zero fee writes no fee entry) and the three balances.
 *
 * Returns 0 when applied now, by this call's own COMMIT (after a COMMIT
 * that failed it returns that error, even if a row with this id is there
 * by then: a retry on another connection may have written it);
 * MONEY_ALREADY when a transfer with this id was applied before (a retry
 * after an unclear outcome), writing nothing, whatever the other fields
 * say now (the id alone decides; they are not compared with the stored
 * transfer);
 * MONEY_INSUFFICIENT when the buyer's balance is below amount,
 * MONEY_NO_ACCOUNT, MONEY_INVALID, or another KIT_DB_* code, writing
 * nothing at all (a refused transfer may be sent again later with the
 * same id). Whatever the number of threads, no balance goes below zero,
 * and none past INT64_MAX: a sale that would credit one past it is the
 * database's error (a KIT_DB_* code), as a payout that would is. */
int money_transfer(struct kit_db *db, const struct money_fees *fees,
                   const struct money_transfer *t);

/* Apply n sales (1..MONEY_MAX_BATCH) in one transaction, in order, each as
 * money_transfer() would, with its own result in results[i]. A transfer
 * that fails leaves nothing behind and does not stop the others, whatever
 * its error (the fee credits below aside): on PostgreSQL a sale whose row
 * another transaction holds past the connection's lock timeout gets
 * KIT_DB_BUSY in results[i] and the batch goes on (on MariaDB a busy error
 * ends the whole transaction, savepoints too, so there the batch fails
 * with KIT_DB_BUSY). Returns 0 when the batch committed (results say what
 * each did), or a negative KIT_DB_* code when it did not: then nothing of
 * it was applied and results[] means nothing.
 *
 * The fees are the exception to "as money_transfer() would": each sale's
 * fee entry is written with the sale, but the fee sub-accounts' balances
 * are credited once each, with their sum, after the last sale and just
 * before COMMIT, in sub-account order, so two batches never hold fee rows
 * in a cycle. A sum is an int64_t like the balance it goes to, and no
 * balance holds more than INT64_MAX: a sale whose fee would take its
 * sub-account's sum past INT64_MAX fails alone, with KIT_DB_ERR, and the
 * batch goes on. The sum is of the fees the batch credits: a sale refused
 * for what it is (MONEY_INVALID, MONEY_ALREADY, MONEY_INSUFFICIENT,
 * MONEY_NO_ACCOUNT) is answered so, whatever its fee, and its fee is in
 * no sum. What only those final credits find fails the whole batch:
 * a sum that fits but would take its sub-account's balance past INT64_MAX
 * (the error PostgreSQL and MariaDB give such a credit, and on SQLite the
 * CHECK money_setup() puts on the balance column), and a fee
 * sub-account with no row (fees->subs more than the fee account was
 * opened with: MONEY_NO_ACCOUNT), unless the batch asks for each fee
 * sub-account's row as its sales meet it and refuses those sales alone,
 * which is right too.
 *
 * Batches that run at the same time should not touch the same buyers or
 * sellers in opposite orders: PostgreSQL would end one of them with a
 * deadlock (KIT_DB_BUSY), and it may be retried. */
int money_batch(struct kit_db *db, const struct money_fees *fees,
                const struct money_transfer *t, int n, int *results);

/* Pay `amount` out of the fee account to account `to`, in one transaction,
 * idempotent by id like a transfer (its transfers row has fee 0). The
 * money must come out of sub-accounts that hold it: no sub-account ever
 * goes below zero. Returns 0, MONEY_ALREADY, MONEY_INSUFFICIENT (no
 * sub-account holds the amount; nothing written), MONEY_NO_ACCOUNT (the
 * fee account or `to` was never opened: no money will ever come of
 * waiting, so it wins over MONEY_INSUFFICIENT when no sub-account holds
 * the amount either), MONEY_INVALID (id or amount <= 0, `to` the fee
 * account itself, fees->subs outside 1..MONEY_MAX_SUBS; MONEY_OUTSIDE is a
 * payee like any other: the platform taking its fees to the bank) or
 * another KIT_DB_* code. A sub-account below fees->subs with no row
 * (fees->subs more than the fee account was opened with) holds nothing,
 * as one at 0 does: the payout comes out of another that holds the
 * amount, and is MONEY_INSUFFICIENT when none does. */
int money_payout(struct kit_db *db, const struct money_fees *fees, int64_t id,
                 int64_t to, int64_t amount);

/* The balance of account `account`: the sum of its sub-accounts. It reads
 * only: on SQLite it takes no write lock (no kit_db_begin, BEGIN
 * IMMEDIATE), so a sale in flight does not hold it up. Returns
 * 0 (an account opened with nothing has balance 0), MONEY_NO_ACCOUNT when
 * it was never opened, or another KIT_DB_* code: KIT_DB_ERR when the sum
 * is past what an int64_t holds (never a figure clamped or wrapped). A
 * read while sales commit sees them all or none (README §3): one
 * statement, not one per sub-account. */
int money_balance(struct kit_db *db, int64_t account, int64_t *out);

/* Audit the books (see struct money_audit). Reads only; each field is one
 * statement, so a sale that commits during the audit is in a field whole
 * or not at all (README §8). On failure *out
 * is left as it was: no figure of an audit that did not finish is given. */
int money_reconcile(struct kit_db *db, struct money_audit *out);

#endif
