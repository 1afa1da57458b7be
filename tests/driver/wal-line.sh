#!/bin/sh
# tests/driver/wal-line.sh: a lab driver on PostgreSQL prints the engine's
# WAL flushes per commit beside the server's own count over the run
# (pg_stat_wal.wal_sync / pg_stat_database.xact_commit), with their
# ratio; on SQLite it prints why there is none (WAL with synchronous =
# NORMAL does not flush at commit). Lab 01's driver with the reference
# solution, one short run on each engine; the PostgreSQL one needs
# HOTROW_PG_URL (skipped without it, failed with HOTROW_REQUIRE_PG=1).
# That the prediction never reads the count is inputs-only.sh's check.
# Prints cmocka-style summary lines.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$root" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$root/tests/harness/check.sh"
. "$root/tests/harness/kit.sh"
lab01_driver wal__line

num='[0-9][0-9]*\.[0-9][0-9]'
name=wal__predicted_beside_pg_stat_wal
url=${HOTROW_PG_URL:-}
if [ -z "$url" ] || ! psql "$url" -Atqc 'select 1' >/dev/null 2>&1; then
	if [ "${HOTROW_REQUIRE_PG:-}" = 1 ]; then
		bad $name "HOTROW_PG_URL is unset or unreachable (HOTROW_REQUIRE_PG=1)"
	else
		skip $name "HOTROW_PG_URL is unset (scripts/pg up prints one)"
	fi
elif ! "$driver" --db "$url" --threads 4 --seconds 0.5 --check-ms 0 >"$tmp/pg" 2>&1; then
	bad $name "the driver failed: $(tail -n 1 "$tmp/pg")"
elif ! grep -q "^  WAL per commit  *$num  *$num  *$num" "$tmp/pg"; then
	bad $name "no 'WAL per commit PREDICTED MEASURED RATIO' line: $(grep WAL "$tmp/pg")"
elif ! grep -q 'pg_stat_wal.wal_sync / pg_stat_database.xact_commit' "$tmp/pg"; then
	bad $name "the line does not say where the measured count comes from"
elif psql "$url" -Atqc "select 1 from pg_class where relname = 'hotrow_flush_probe'" | grep -q 1; then
	bad $name "the flush probe's table was left behind"
else
	ok $name
fi

name=wal__none_on_sqlite_and_why
if ! "$driver" --db "sqlite:$tmp/lab01.db" --threads 2 --seconds 0.5 --check-ms 0 \
		>"$tmp/lite" 2>&1; then
	bad $name "the driver failed: $(tail -n 1 "$tmp/lite")"
elif ! grep -q '^  WAL per commit .*synchronous = NORMAL does not flush at commit' "$tmp/lite"; then
	bad $name "no line saying why SQLite has no flush per commit: $(grep WAL "$tmp/lite")"
elif grep -q 'pg_stat_wal' "$tmp/lite"; then
	bad $name "a PostgreSQL count printed for SQLite"
else
	ok $name
fi
summary
