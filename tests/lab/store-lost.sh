#!/bin/sh
# tests/lab/store-lost.sh: `hotrow lab run 04 --solutions` on a real Redis
# that is killed with SIGKILL while the views are being recorded. The
# driver must not die of SIGPIPE (which the runner would call a crash in
# the code it drives); it must say in words that the store went away and
# that the unflushed window was lost with it, and must not send the
# reader to the handout's sections on the student's code.
#
# Starts its own redis-server on a socket in a scratch directory (the
# kit's shared one from scripts/redis is left alone); skipped with a
# notice when redis-server is not installed. Takes about 10 s on a quiet
# machine, with the build of Lab 04's driver in a scratch copy of the kit
# (kit_copy): two one-thread probes of 2 s each are part of every run of
# the driver, and the kill lands 0.3 s into a run of 2 s.
# Prints cmocka-style summary lines. HOTROW_BIN overrides the binary.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$root" || exit 1
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
pidfile=$tmp/redis.pid
stop_redis() { [ -s "$pidfile" ] && kill -9 "$(cat "$pidfile")" 2>/dev/null; }
trap 'stop_redis; rm -rf "$tmp"' EXIT

. "$root/tests/harness/check.sh"

name=store_lost__redis_killed_mid_run_is_said_in_words
if [ ! -d solutions/04-drain ]; then
	skip "$name" "no reference solution to drive here (a student kit)"
	summary
fi
if ! command -v redis-server >/dev/null 2>&1; then
	skip "$name" "redis-server is not installed (scripts/deps)"
	summary
fi
sock=$tmp/redis.sock
redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --save '' --appendonly no \
	--dir "$tmp" --daemonize yes --pidfile "$pidfile" --logfile "$tmp/redis.log" >/dev/null
i=0
until redis-cli -s "$sock" ping 2>/dev/null | grep -q PONG; do
	i=$((i + 1))
	if [ $i -gt 50 ]; then
		bad "$name" "redis-server did not start: $(tail -2 "$tmp/redis.log")"
		summary
	fi
	sleep 0.1
done

# In a scratch copy of the kit (kit_copy): in this tree the runner would
# remove the Lab 04 binaries that other suites of make test are running.
. "$root/tests/harness/kit.sh"
kit_copy "$tmp/kit"
binabs=$(cd "$(dirname "$bin")" && pwd -P)/$(basename "$bin")
(cd "$tmp/kit" && exec env HOTROW_ROOT="$tmp/kit" "$binabs" lab run 04 --solutions \
	--db "sqlite:$tmp/lab04.db" --store "unix:$sock" --threads 2 --seconds 2) >"$tmp/out" 2>&1 &
run=$!
# The flusher loads its script second (SCRIPT LOAD, after record_view's
# probe loaded the first): from then on, views are being recorded.
i=0
until redis-cli -s "$sock" info commandstats 2>/dev/null | grep -q '^cmdstat_script|load:calls=[2-9]'; do
	i=$((i + 1))
	if [ $i -gt 1200 ] || ! kill -0 $run 2>/dev/null; then
		break
	fi
	sleep 0.05
done
sleep 0.3
stop_redis
wait $run
rc=$?

if [ $rc -ne 1 ]; then bad "$name" "exit $rc, want 1: $(tail -3 "$tmp/out")"
elif grep -q 'signal\|crash' "$tmp/out"; then bad "$name" "$(grep 'signal\|crash' "$tmp/out" | head -1)"
elif ! grep -q "the store unix:$sock stopped answering" "$tmp/out"; then
	bad "$name" "no line saying the store went away: $(tail -3 "$tmp/out")"
elif ! grep -q 'unflushed window' "$tmp/out" || ! grep -q 'used solutions/' "$tmp/out"; then
	bad "$name" "the lost window or the solutions/ run is not named: $(grep 'store' "$tmp/out" | head -2)"
elif grep -q '§4 and §5\|TODO' "$tmp/out"; then
	bad "$name" "points at the student's sections: $(grep '§4 and §5\|TODO' "$tmp/out" | head -1)"
else ok "$name"; fi
summary
