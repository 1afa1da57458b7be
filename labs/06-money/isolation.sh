#!/bin/sh
# labs/06-money/isolation.sh URL: two read-check-write debits at once, on
# a real PostgreSQL, at each isolation level (Lab 06, §4).
#
# An account holds 100. Two sessions each read it, check that 80 is
# covered, and take 80; the second session reads while the first is
# still open. Done four ways: with the balance in one row (read the row,
# UPDATE it); with the balance as the sum of ledger entries (read the
# sum, INSERT an entry); with the conditional debit, the check inside
# the UPDATE; and with the sum read after SELECT ... FOR UPDATE of the
# account's row. Prints what is left and each error. Works in a schema
# of its own, lab06_isolation, and drops it at the end.
#
#   labs/06-money/isolation.sh "$HOTROW_PG_URL"
set -eu
case ${1-} in
-h|--help) sed -n '2s/^# /usage: /p; 3,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
-?*) echo "labs/06-money/isolation.sh: unknown option '$1' (labs/06-money/isolation.sh --help shows the usage)" >&2; exit 2 ;;
esac
url=${1:?usage: labs/06-money/isolation.sh URL (a PostgreSQL URL, e.g. \$HOTROW_PG_URL)}
s=lab06_isolation
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; psql "$url" -qc "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1' EXIT
psql "$url" -q -v ON_ERROR_STOP=1 >/dev/null <<EOF
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS $s CASCADE;
CREATE SCHEMA $s;
CREATE TABLE $s.accounts (id int PRIMARY KEY, balance bigint NOT NULL);
CREATE TABLE $s.entries (account_id int NOT NULL, amount bigint NOT NULL);
EOF

# session FILE PAUSE READ WRITE LEVEL: one debit: read, pause, and write
# only if the read said the amount is covered (psql's \gset and \if).
session() {
	printf 'BEGIN ISOLATION LEVEL %s;\n%s \\gset\nSELECT pg_sleep(%s);\n\\if :covered\n%s\n\\endif\nCOMMIT;\n' \
		"$5" "$3" "$2" "$4" >"$1.sql"
	psql "$url" -q -f "$1.sql" >"$1.out" 2>&1 || true
}

race() { # LEVEL SHAPE
	psql "$url" -q >/dev/null <<EOF
TRUNCATE $s.accounts, $s.entries;
INSERT INTO $s.accounts VALUES (1, 100);
INSERT INTO $s.entries VALUES (1, 100);
EOF
	if [ "$2" = row ]; then
		read="SELECT balance >= 80 AS covered FROM $s.accounts WHERE id = 1"
		write="UPDATE $s.accounts SET balance = balance - 80 WHERE id = 1;"
		left="SELECT balance FROM $s.accounts WHERE id = 1"
	elif [ "$2" = conditional ]; then
		read="WITH d AS (UPDATE $s.accounts SET balance = balance - 80 WHERE id = 1 AND balance >= 80 RETURNING 1) SELECT count(*) > 0 AS covered FROM d"
		write="SELECT 'paid';"
		left="SELECT balance FROM $s.accounts WHERE id = 1"
	elif [ "$2" = "sum, row locked" ]; then
		read="SELECT 1 FROM $s.accounts WHERE id = 1 FOR UPDATE;
SELECT sum(amount) >= 80 AS covered FROM $s.entries WHERE account_id = 1"
		write="INSERT INTO $s.entries VALUES (1, -80);"
		left="SELECT sum(amount) FROM $s.entries WHERE account_id = 1"
	else
		read="SELECT sum(amount) >= 80 AS covered FROM $s.entries WHERE account_id = 1"
		write="INSERT INTO $s.entries VALUES (1, -80);"
		left="SELECT sum(amount) FROM $s.entries WHERE account_id = 1"
	fi
	session "$tmp/a" 1 "$read" "$write" "$1" &
	sleep 0.3
	session "$tmp/b" 0 "$read" "$write" "$1"
	wait
	printf '%-16s %-24s left %5s' "$1" "balance $2:" "$(psql "$url" -Atc "$left")"
	errs=$(for f in "$tmp/a.out" "$tmp/b.out"; do grep -m 1 'ERROR' "$f" || true; done | sed 's/.*ERROR: *//')
	if [ -n "$errs" ]; then
		printf '   one session: %s' "$errs"
	fi
	echo
}

echo "two sessions take 80 from 100 at once, each after checking that 80 is covered:"
for level in "READ COMMITTED" "REPEATABLE READ" "SERIALIZABLE"; do
	race "$level" row
	race "$level" "of entries"
	race "$level" conditional
	race "$level" "sum, row locked"
done
