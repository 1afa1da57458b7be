#!/bin/sh
# tests/top/restart.sh: `hotrow top` on a server that restarts under it,
# and what its watching costs the server's commit counter. A private
# throwaway server (scripts/pg, copied into a temporary tree, so the
# shared one of the other suites is never stopped): top --dump samples
# through `scripts/pg down` and `up`, says on stderr that the server is
# gone and then back, and its last frame is a live one. Then, on the same
# server, 40 samples must add no commit to pg_stat_database (they run in
# one read-only transaction; before, each query was one). Prints
# cmocka-style summary lines; skipped without PostgreSQL's binaries.
. "$(dirname "$0")/../harness/usage.sh"
set -u
bin=${HOTROW_BIN:-build/hotrow}
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
chmod 755 "$tmp"          # the server's user (postgres, when run as root) must reach it
. "$here/tests/harness/check.sh"

mkdir -p "$tmp/kit/scripts"
cp "$here/scripts/pg" "$tmp/kit/scripts/pg"
pg() { "$tmp/kit/scripts/pg" "$@" 2>>"$tmp/pg.log"; }
trap 'pg down; rm -rf "$tmp"' EXIT

url=$(pg up)
if [ -z "$url" ] || ! psql "$url" -XAtqc 'select 1' >/dev/null 2>&1; then
	if [ "${HOTROW_REQUIRE_PG:-}" = 1 ]; then
		bad top__restart "cannot start a private server: $(tail -3 "$tmp/pg.log")"
	else
		skip top__restart "no PostgreSQL to start here (scripts/pg up failed)"
	fi
	summary
fi

# top__restart: gone, then back, and the last frame is a live one. top
# samples for 20 s: a loaded machine may take ten to start a server.
"$bin" top --db "$url" --dump --after 20 --interval-ms 100 >"$tmp/frame" 2>"$tmp/err" &
top=$!
sleep 1
pg down
sleep 1.5
pg up >/dev/null
wait $top
rc=$?
if [ $rc -eq 0 ] && grep -q "the server is gone" "$tmp/err" && grep -q "the server is back" "$tmp/err" &&
   ! grep -q "failed" "$tmp/frame" && grep -q "BACKENDS" "$tmp/frame"; then
	ok top__restart
else
	bad top__restart "exit $rc; stderr: $(cut -c 1-150 "$tmp/err"); frame: $(grep -i 'fail\|gone' "$tmp/frame" | head -2)"
fi

# top__no_own_commits: the commit counter before and after 40 samples.
# Each reading is flushed at once; the reading itself is one commit.
commits() {
	psql "$url" -XAtq -c "select pg_stat_force_next_flush()" \
		-c "select xact_commit from pg_stat_database where datname = current_database()"
}
c0=$(commits)
"$bin" top --db "$url" --dump --after 2 --interval-ms 50 >/dev/null 2>"$tmp/err2"
c1=$(commits)
# Allowed: the readings' own (2), top's one to set its session up, and
# what the server's background (autovacuum) does meanwhile; one commit a
# query, as before, would be 120 or more.
n=$((c1 - c0))
if [ "$n" -le 10 ]; then ok top__no_own_commits
else bad top__no_own_commits "40 samples added $n commits (10 at most: the readings, top's setup, autovacuum)"; fi
summary
