/*
 * money.c: Lab 06, your ledger.
 *
 * money_setup() and money_open() are done for you: read them, they show
 * the tables, how an opening balance is written as a transfer with its
 * entries, and how a parameter goes in as text. The rest is yours; each
 * TODO names the section of labs/06-money/README.md that explains it.
 * Check your work with
 *     build/hotrow lab check 06
 * (export HOTROW_PG_URL=$(scripts/pg up) first: two of the mistakes this
 * lab is about only PostgreSQL shows).
 */
#include "labs/06-money/money.h"

#include <inttypes.h>
#include <stdio.h>

/* An int64 as text, for a statement parameter. */
struct num {
	char s[24];
};

static struct num num(int64_t v)
{
	struct num n;
	snprintf(n.s, sizeof n.s, "%" PRId64, v);
	return n;
}

int money_setup(struct kit_db *db)
{
	/* No balance holds more than INT64_MAX. PostgreSQL and MariaDB refuse
	 * a sum past it; SQLite would store it as a REAL, rounded, so there
	 * the CHECK refuses it instead. */
	int rc = kit_db_exec(db, kit_db_engine(db) == KIT_DB_SQLITE
		? "CREATE TABLE IF NOT EXISTS accounts ("
		  "  id BIGINT NOT NULL, sub INT NOT NULL,"
		  "  balance BIGINT NOT NULL CHECK (typeof(balance) = 'integer'),"
		  "  PRIMARY KEY (id, sub))"
		: "CREATE TABLE IF NOT EXISTS accounts ("
		  "  id BIGINT NOT NULL, sub INT NOT NULL, balance BIGINT NOT NULL,"
		  "  PRIMARY KEY (id, sub))", 0, NULL);
	if (rc == 0)
		rc = kit_db_exec(db,
			"CREATE TABLE IF NOT EXISTS transfers ("
			"  id BIGINT PRIMARY KEY, debit BIGINT NOT NULL, credit BIGINT NOT NULL,"
			"  amount BIGINT NOT NULL, fee BIGINT NOT NULL);"
			"CREATE TABLE IF NOT EXISTS entries ("
			"  transfer_id BIGINT NOT NULL, account_id BIGINT NOT NULL, sub INT NOT NULL,"
			"  amount BIGINT NOT NULL);"
			"CREATE INDEX IF NOT EXISTS entries_by_transfer ON entries (transfer_id);"
			"CREATE INDEX IF NOT EXISTS entries_by_account ON entries (account_id, sub)",
			0, NULL);
	/* The outside world's row, once: MariaDB says "insert unless the key
	 * is there" as INSERT IGNORE (README §5). */
	if (rc == 0)
		rc = kit_db_exec(db, kit_db_engine(db) == KIT_DB_MYSQL
			? "INSERT IGNORE INTO accounts (id, sub, balance) VALUES (0, 0, 0)"
			: "INSERT INTO accounts (id, sub, balance) VALUES (0, 0, 0) ON CONFLICT DO NOTHING",
			0, NULL);
	return rc;
}

/* Add delta to balance row (account, sub); MONEY_NO_ACCOUNT if none. */
static int credit(struct kit_db *db, int64_t account, int sub, int64_t delta)
{
	struct num a = num(account), s = num(sub), d = num(delta);
	const char *p[] = { a.s, s.s, d.s };
	int rc = kit_db_exec(db, "UPDATE accounts SET balance = balance + $3 "
	                         "WHERE id = $1 AND sub = $2", 3, p);
	if (rc == 0 && kit_db_changes(db) != 1)
		rc = MONEY_NO_ACCOUNT;
	return rc;
}

int money_open(struct kit_db *db, int64_t account, int subs, int64_t opening)
{
	if (account <= 0 || subs < 1 || subs > MONEY_MAX_SUBS || opening < 0)
		return MONEY_INVALID;
	struct num id = num(-account), a = num(account), o = num(opening), m = num(-opening);
	int rc = kit_db_begin(db);
	for (int k = 0; k < subs && rc == 0; k++) {
		struct num s = num(k);
		const char *p[] = { a.s, s.s };
		rc = kit_db_exec(db, "INSERT INTO accounts (id, sub, balance) VALUES ($1, $2, 0)", 2, p);
	}
	if (rc == 0 && opening > 0) {
		const char *t[] = { id.s, a.s, o.s, m.s };
		rc = kit_db_exec(db, "INSERT INTO transfers (id, debit, credit, amount, fee) "
		                     "VALUES ($1, 0, $2, $3, 0)", 3, t);
		if (rc == 0)
			rc = kit_db_exec(db, "INSERT INTO entries (transfer_id, account_id, sub, amount) "
			                     "VALUES ($1, 0, 0, $4), ($1, $2, 0, $3)", 4, t);
		if (rc == 0)
			rc = credit(db, MONEY_OUTSIDE, 0, -opening);
		if (rc == 0)
			rc = credit(db, account, 0, opening);
	}
	if (rc == 0)
		return kit_db_commit(db);
	kit_db_rollback(db);
	return rc;
}

int money_transfer(struct kit_db *db, const struct money_fees *fees,
                   const struct money_transfer *t)
{
	/* TODO(§3): refuse what money.h calls invalid with MONEY_INVALID, then
	 * in one transaction: the transfers row, the buyer's debit, the
	 * seller's credit, the three entries, and last the fee sub-account's
	 * credit (sub-account t->id % fees->subs, §6). Any failure: roll back
	 * and return its code.
	 * TODO(§4): the buyer's debit must refuse to take the balance below
	 * zero, even with other transfers from the same buyer running at the
	 * same moment: MONEY_INSUFFICIENT (and MONEY_NO_ACCOUNT when the buyer
	 * does not exist).
	 * TODO(§5): a transfer id that was applied before returns
	 * MONEY_ALREADY and changes nothing. The engine decides how "insert
	 * unless the id is there" is written: ask kit_db_engine(db);
	 * KIT_DB_MYSQL (MariaDB) says INSERT IGNORE (§5). */
	(void)db;
	(void)fees;
	(void)t;
	return KIT_DB_ERR;
}

int money_batch(struct kit_db *db, const struct money_fees *fees,
                const struct money_transfer *t, int n, int *results)
{
	/* TODO(§7): one transaction for the whole batch; each transfer inside
	 * a savepoint of its own, so a refused one is undone alone and gets
	 * its own code in results[i] while the others go on. */
	(void)db;
	(void)fees;
	(void)t;
	(void)n;
	(void)results;
	return KIT_DB_ERR;
}

int money_payout(struct kit_db *db, const struct money_fees *fees, int64_t id,
                 int64_t to, int64_t amount)
{
	/* TODO(§6): pay out of the split fee account without taking any
	 * sub-account below zero, idempotent by id like a transfer. */
	(void)db;
	(void)fees;
	(void)id;
	(void)to;
	(void)amount;
	return KIT_DB_ERR;
}

int money_balance(struct kit_db *db, int64_t account, int64_t *out)
{
	/* TODO(§3): the account's balance is the sum of its sub-accounts;
	 * MONEY_NO_ACCOUNT when it has none. */
	(void)db;
	(void)account;
	(void)out;
	return KIT_DB_ERR;
}

int money_reconcile(struct kit_db *db, struct money_audit *out)
{
	/* TODO(§8): fill every field of *out, each with one query; when a
	 * query fails, leave *out as it was. */
	(void)db;
	(void)out;
	return KIT_DB_ERR;
}
