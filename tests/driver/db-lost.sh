#!/bin/sh
# tests/driver/db-lost.sh: a driver whose database goes away mid-run stops
# at once: exit 1, one line on stderr saying the database went away, and
# no figures after it (no prediction block, no "exact" or "NOT EXACT").
#
# It needs a server of its own to stop: a copy of scripts/pg in a scratch
# checkout starts one there (initdb, its own socket), so the server of
# HOTROW_PG_URL is never touched. Skipped when PostgreSQL is not installed.
# Prints cmocka-style summary lines.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$root" || exit 1
tmp=$(mktemp -d)
chmod 755 "$tmp"       # the server's user (scripts/pg, as root) must reach it

. "$root/tests/harness/check.sh"
. "$root/tests/harness/kit.sh"

mkdir -p "$tmp/scripts"
cp scripts/pg "$tmp/scripts/pg"
pg() { "$tmp/scripts/pg" "$@"; }
trap 'pg down >/dev/null 2>&1; rm -rf "$tmp"' EXIT

name=driver__stops_when_the_database_goes_away
lab01_driver "$name"
if ! url=$(pg up 2>"$tmp/pg.err"); then
	if grep -q 'cannot find pg_ctl' "$tmp/pg.err"; then
		skip "$name" "PostgreSQL is not installed"
		summary
	fi
	bad "$name" "could not start a throwaway server: $(tail -n 1 "$tmp/pg.err")"
	summary
fi

# After its setup (well under a second) the driver runs one thread alone
# for 2 s, then 16 for 5 s: 2 s in, it is in one of them. Stop the server.
"$driver" --db "$url" --seconds 5 >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 2
pg down >/dev/null 2>&1
i=0
while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$pid" 2>/dev/null; then
	kill "$pid"
	bad "$name" "still running 30 s after the server stopped"
	summary
fi
wait "$pid"
rc=$?
lines=$(wc -l <"$tmp/err")
if [ "$rc" -ne 1 ]; then
	bad "$name" "exit $rc, want 1"
elif [ "$lines" -ne 1 ] || ! grep -q 'the database went away' "$tmp/err"; then
	bad "$name" "want one line saying the database went away on stderr, got $lines:
$(head -n 5 "$tmp/err")"
elif grep -qE 'exact|EXACT|predicted|measured' "$tmp/out"; then
	bad "$name" "figures printed after the failure:
$(tail -n 5 "$tmp/out")"
else
	ok "$name"
fi
summary
