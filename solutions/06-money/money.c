/*
 * money.c: Lab 06 reference solution.
 *
 * One transfer is five statements in one transaction, in this order: the
 * transfer row (the idempotency key: a retry stops here), the buyer's
 * conditional debit (the balance check and the write in one statement,
 * under the row's lock), the seller's credit, the ledger entries, and
 * last the fee sub-account's credit, the row every sale wants. A batch
 * runs the same steps for each transfer inside a savepoint, so a refused
 * one is undone alone, and credits the fee sub-accounts once at the end
 * with the batch's sums, in the same transaction as the entries.
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

static int valid(const struct money_fees *fees, const struct money_transfer *t)
{
	return fees->subs >= 1 && fees->subs <= MONEY_MAX_SUBS && t->id > 0 && t->amount > 0 &&
	       t->fee >= 0 && t->fee <= t->amount && t->from != t->to;
}

/* The statements of one transfer, inside the caller's transaction. The
 * fee is credited now, or, when due is not NULL, added to due[sub] for
 * the caller to credit later in the same transaction. On failure the
 * caller rolls back what this wrote. */
static int apply(struct kit_db *db, const struct money_fees *fees,
                 const struct money_transfer *t, int64_t *due)
{
	int sub = (int)(t->id % fees->subs);
	struct num id = num(t->id), from = num(t->from), to = num(t->to), amount = num(t->amount),
	           fee = num(t->fee), net = num(t->amount - t->fee), debit = num(-t->amount),
	           fa = num(fees->account), fs = num(sub);

	const char *tr[] = { id.s, from.s, to.s, amount.s, fee.s };
	int rc = kit_db_exec(db, kit_db_engine(db) == KIT_DB_MYSQL
		? "INSERT IGNORE INTO transfers (id, debit, credit, amount, fee) VALUES ($1, $2, $3, $4, $5)"
		: "INSERT INTO transfers (id, debit, credit, amount, fee) "
		  "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING", 5, tr);
	if (rc != 0)
		return rc;
	if (kit_db_changes(db) == 0)
		return MONEY_ALREADY;

	const char *buyer[] = { from.s, amount.s };
	rc = kit_db_exec(db, "UPDATE accounts SET balance = balance - $2 "
	                     "WHERE id = $1 AND sub = 0 AND balance >= $2", 2, buyer);
	if (rc != 0)
		return rc;
	if (kit_db_changes(db) != 1) {
		int64_t n = 0;
		rc = kit_db_query_int(db, "SELECT count(*) FROM accounts WHERE id = $1 AND sub = 0",
		                      1, buyer, &n);
		return rc != 0 ? rc : n > 0 ? MONEY_INSUFFICIENT : MONEY_NO_ACCOUNT;
	}
	rc = credit(db, t->to, 0, t->amount - t->fee);
	if (rc != 0)
		return rc;

	const char *en[] = { id.s, from.s, debit.s, to.s, net.s, fa.s, fs.s, fee.s };
	rc = kit_db_exec(db, t->fee > 0
		? "INSERT INTO entries (transfer_id, account_id, sub, amount) "
		  "VALUES ($1, $2, 0, $3), ($1, $4, 0, $5), ($1, $6, $7, $8)"
		: "INSERT INTO entries (transfer_id, account_id, sub, amount) "
		  "VALUES ($1, $2, 0, $3), ($1, $4, 0, $5)", t->fee > 0 ? 8 : 5, en);
	if (rc != 0 || t->fee == 0)
		return rc;
	if (due) {
		/* A sum past INT64_MAX would fit no balance: this sale fails alone. */
		if (t->fee > INT64_MAX - due[sub])
			return KIT_DB_ERR;
		due[sub] += t->fee;
		return 0;
	}
	return credit(db, fees->account, sub, t->fee);
}

int money_transfer(struct kit_db *db, const struct money_fees *fees,
                   const struct money_transfer *t)
{
	if (!valid(fees, t))
		return MONEY_INVALID;
	int rc = kit_db_begin(db);
	if (rc != 0)
		return rc;
	rc = apply(db, fees, t, NULL);
	if (rc == 0)
		return kit_db_commit(db);
	kit_db_rollback(db);
	return rc;
}

int money_batch(struct kit_db *db, const struct money_fees *fees,
                const struct money_transfer *t, int n, int *results)
{
	if (n < 1 || n > MONEY_MAX_BATCH || fees->subs < 1 || fees->subs > MONEY_MAX_SUBS)
		return MONEY_INVALID;
	int64_t due[MONEY_MAX_SUBS] = { 0 };
	int rc = kit_db_begin(db);
	for (int i = 0; i < n && rc == 0; i++) {
		if (!valid(fees, &t[i])) {
			results[i] = MONEY_INVALID;
			continue;
		}
		rc = kit_db_exec(db, "SAVEPOINT one_transfer", 0, NULL);
		if (rc != 0)
			break;
		results[i] = apply(db, fees, &t[i], due);
		/* A refused transfer is undone alone; the batch goes on. */
		if (results[i] != 0)
			rc = kit_db_exec(db, "ROLLBACK TO SAVEPOINT one_transfer", 0, NULL);
		/* Except after a busy error on MariaDB: InnoDB rolls a deadlock
		 * victim back whole, so the savepoint is gone and the batch
		 * fails with the sale's KIT_DB_BUSY, which its caller may retry. */
		if (rc != 0 && results[i] == KIT_DB_BUSY)
			rc = KIT_DB_BUSY;
		if (rc == 0)
			rc = kit_db_exec(db, "RELEASE SAVEPOINT one_transfer", 0, NULL);
	}
	/* The fee sub-accounts last, once each, in order. */
	for (int k = 0; k < fees->subs && rc == 0; k++)
		if (due[k] != 0)
			rc = credit(db, fees->account, k, due[k]);
	if (rc == 0)
		return kit_db_commit(db);
	kit_db_rollback(db);
	return rc;
}

int money_payout(struct kit_db *db, const struct money_fees *fees, int64_t id,
                 int64_t to, int64_t amount)
{
	if (id <= 0 || amount <= 0 || to == fees->account || fees->subs < 1 ||
	    fees->subs > MONEY_MAX_SUBS)
		return MONEY_INVALID;
	struct num tid = num(id), fa = num(fees->account), dst = num(to), amt = num(amount),
	           debit = num(-amount);
	int rc = kit_db_begin(db);
	if (rc != 0)
		return rc;
	const char *tr[] = { tid.s, fa.s, dst.s, amt.s };
	rc = kit_db_exec(db, kit_db_engine(db) == KIT_DB_MYSQL
		? "INSERT IGNORE INTO transfers (id, debit, credit, amount, fee) VALUES ($1, $2, $3, $4, 0)"
		: "INSERT INTO transfers (id, debit, credit, amount, fee) "
		  "VALUES ($1, $2, $3, $4, 0) ON CONFLICT (id) DO NOTHING", 4, tr);
	if (rc == 0 && kit_db_changes(db) == 0)
		rc = MONEY_ALREADY;

	/* The reservation: the whole amount from one sub-account that holds
	 * it, checked and taken in one statement. */
	int sub = -1;
	for (int j = 0; j < fees->subs && rc == 0 && sub < 0; j++) {
		int k = (int)((id % fees->subs + j) % fees->subs);
		struct num s = num(k);
		const char *p[] = { fa.s, s.s, amt.s };
		rc = kit_db_exec(db, "UPDATE accounts SET balance = balance - $3 "
		                     "WHERE id = $1 AND sub = $2 AND balance >= $3", 3, p);
		if (rc == 0 && kit_db_changes(db) == 1)
			sub = k;
	}
	if (rc == 0 && sub < 0) {
		/* None holds it: not enough yet, or no fee account or no payee at
		 * all, which no waiting mends (MONEY_NO_ACCOUNT wins). */
		int64_t rows = 0;
		rc = kit_db_query_int(db, "SELECT COUNT(*) FROM accounts WHERE sub = 0 AND id IN ($1, $2)",
		                      2, (const char *[]){ fa.s, dst.s }, &rows);
		if (rc == 0)
			rc = rows == 2 ? MONEY_INSUFFICIENT : MONEY_NO_ACCOUNT;
	}
	if (rc == 0)
		rc = credit(db, to, 0, amount);
	if (rc == 0) {
		struct num s = num(sub);
		const char *en[] = { tid.s, fa.s, s.s, debit.s, dst.s, amt.s };
		rc = kit_db_exec(db, "INSERT INTO entries (transfer_id, account_id, sub, amount) "
		                     "VALUES ($1, $2, $3, $4), ($1, $5, 0, $6)", 6, en);
	}
	if (rc == 0)
		return kit_db_commit(db);
	kit_db_rollback(db);
	return rc;
}

int money_balance(struct kit_db *db, int64_t account, int64_t *out)
{
	struct num a = num(account);
	const char *p[] = { a.s };
	return kit_db_query_int(db, "SELECT SUM(balance) FROM accounts WHERE id = $1 GROUP BY id",
	                        1, p, out);
}

/* The audit's four queries, their figures into *out as they come. */
static int audit(struct kit_db *db, struct money_audit *out)
{
	/* both halves in one statement: added up in C from two, a transfers
	 * row written in between moves its entries from one half to the
	 * other, and the figure is one the books never held */
	int rc = kit_db_query_int(db,
		"SELECT (SELECT count(*) FROM (SELECT t.id FROM transfers t"
		"    LEFT JOIN entries e ON e.transfer_id = t.id"
		"    GROUP BY t.id HAVING count(e.transfer_id) = 0 OR SUM(e.amount) <> 0) AS bad)"
		" + (SELECT count(*) FROM entries e"
		"    WHERE NOT EXISTS (SELECT 1 FROM transfers t WHERE t.id = e.transfer_id))",
		0, NULL, &out->unbalanced);
	if (rc == 0)
		rc = kit_db_query_int(db,
			"SELECT count(*) FROM accounts a WHERE a.balance <>"
			" (SELECT COALESCE(SUM(e.amount), 0) FROM entries e"
			"   WHERE e.account_id = a.id AND e.sub = a.sub)",
			0, NULL, &out->drifted);
	if (rc == 0)
		rc = kit_db_query_int(db, "SELECT count(*) FROM accounts WHERE balance < 0 AND id <> 0",
		                      0, NULL, &out->negative);
	if (rc == 0)
		rc = kit_db_query_int(db, "SELECT COALESCE(SUM(balance), 0) FROM accounts",
		                      0, NULL, &out->total);
	return rc;
}

/* Into a copy first: a failed audit leaves *out as it was. */
int money_reconcile(struct kit_db *db, struct money_audit *out)
{
	struct money_audit copy;
	int rc = audit(db, &copy);
	if (rc == 0)
		*out = copy;
	return rc;
}
