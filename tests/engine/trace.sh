#!/bin/sh
# tests/engine/trace.sh: `hotrow sim --trace N|slowest` through the binary:
# the timeline after the table, the same under "trace" in JSON, the slowest
# found and followed, and bad usage (exit 2, one line naming --trace).
# `hotrow tui --dump --follow` frames too. Prints cmocka-style summary
# lines. HOTROW_BIN overrides the binary.
. "$(dirname "$0")/../harness/usage.sh"
set -u
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../harness/check.sh"

if [ ! -x "$bin" ]; then
	echo "[  FAILED  ] 1 test(s), listed below:"
	echo "trace: $bin is not built"
	exit 1
fi

# One row over its ceiling (600/s against 500/s), evenly spaced: like #400
# arrives at 665 ms behind 66 others and waits 133 ms for the lock.
over="--rps 600 --hold-ms 2 --seconds 1 --pool 0 --arrivals constant"

# trace__text: the steps in order, their times, where the time went.
out=$("$bin" sim $over --trace 400)
t=$(printf '%s\n' "$out" | sed -n '/^Request #400/,$p')
want="Request #400, completed after 135.000 ms:
       665.000 ms  arrived (like #400)
       665.000 ms  got a connection at once
       665.000 ms  joined row 0's lock queue at position 67
       798.000 ms  got row 0's lock after 133.000 ms
       800.000 ms  committed, released row 0
  where its time went:
      133.000 ms  lock wait        99%
        2.000 ms  hold             1%"
if [ "$t" = "$want" ]; then ok trace__text
else bad trace__text "got: $(printf '%s' "$t" | tr '\n' '|')"; fi
case "$out" in
"hotrow sim:"*"In words:"*"Request #400"*) ok trace__after_the_table ;;
*) bad trace__after_the_table "the timeline is not after the table" ;;
esac

# trace__json: under "trace", the same times and places.
j=$("$bin" sim $over --trace 400 --json)
missing=
for k in '"trace":{"request":400,"state":"completed","arrived_ms":665.000,"latency_ms":135.000' \
	'"lock_wait":133.000' '"hold":2.000' '"kind":"lock_queue","row":0,"arg":67' \
	'"kind":"committed"'; do
	case "$j" in *"$k"*) ;; *) missing="$missing $k" ;; esac
done
if [ -z "$missing" ]; then ok trace__json; else bad trace__json "missing:$missing"; fi
case $("$bin" sim $over --json) in
*'"trace"'*) bad trace__json_only_when_asked "a trace without --trace" ;;
*) ok trace__json_only_when_asked ;;
esac

# trace__slowest: the slowest that completed, whose latency is the run's max.
args="--rps 450 --arrivals poisson --hold-dist exp --hold-ms 2 --seconds 1 --handoff herd"
j=$("$bin" sim $args --json --trace slowest)
max=$(printf '%s' "$j" | grep -o '"max":[0-9.]*' | head -1 | cut -d: -f2)
lat=$(printf '%s' "$j" | grep -o '"trace":{[^[]*' | grep -o '"latency_ms":[0-9.]*' | cut -d: -f2)
if [ -n "$max" ] && [ -n "$lat" ] && awk -v a="$max" -v b="$lat" 'BEGIN { exit !(a - b < 0.001 && b - a < 0.001) }'
then ok trace__slowest
else bad trace__slowest "max latency $max, the trace's $lat"; fi
out=$("$bin" sim $args --trace slowest)
case "$out" in
*"(the slowest that completed), completed after"*"woken "*"times by other commits"*) ok trace__slowest_text ;;
*) bad trace__slowest_text "$(printf '%s' "$out" | sed -n '/^Request/,$p' | head -3 | tr '\n' '|')" ;;
esac

# trace__timeouts: the pool's, the server's, the client's, with a retry.
o=$("$bin" sim $over --pool 4 --pool-timeout-ms 5 --trace 400)
case "$o" in *"waits in the pool at position"*"pool timeout"*"no retry left"*) ok trace__pool_timeout ;;
*) bad trace__pool_timeout "$(printf '%s' "$o" | sed -n '/^Request/,$p' | tr '\n' '|')" ;; esac
o=$("$bin" sim $over --lock-timeout-ms 7.5 --trace 402)
case "$o" in *"Request #402, failed after 7.500 ms"*"lock_timeout: the server cancelled it"*) ok trace__lock_timeout ;;
*) bad trace__lock_timeout "$(printf '%s' "$o" | sed -n '/^Request/,$p' | tr '\n' '|')" ;; esac
o=$("$bin" sim $over --client-timeout-ms 10 --retries 1 --trace 450)
case "$o" in *"Request #450, abandoned"*"client timeout"*"retries: attempt 2"*"no retry left after 2 attempts"*) ok trace__client_timeout ;;
*) bad trace__client_timeout "$(printf '%s' "$o" | sed -n '/^Request/,$p' | tr '\n' '|')" ;; esac

# trace__tui_dump: hotrow tui --dump --follow: the frame shows the card,
# and the pool's line its place while it waits for a connection; the same
# frame twice; a bad --follow is one line and exit 2.
f=$("$bin" tui --dump --at 3.2 --follow next@2.9 --size 120x40)
pos=$(printf '%s\n' "$f" | sed -n 's/.*pool wait, position \([0-9,]*\) of.*/\1/p')
if printf '%s\n' "$f" | grep -q "FOLLOWING like #" && [ -n "$pos" ] && printf '%s\n' "$f" | grep -q "waiting for a connection  ◉ #$pos in line" &&
   [ "$f" = "$("$bin" tui --dump --at 3.2 --follow next@2.9 --size 120x40)" ]
then ok trace__tui_dump
else bad trace__tui_dump "position '$pos' not on the pool's line, or frames differ"; fi
f=$("$bin" tui --dump --ascii --at 3.2 --follow slowest@3 --size 120x40)
case "$f" in
*"@ FOLLOWING the oldest in flight"*"p pool wait"*) ok trace__tui_dump_slowest_ascii ;;
*) bad trace__tui_dump_slowest_ascii "$(printf '%s' "$f" | grep -n -A3 FOLLOW)" ;;
esac
"$bin" tui --dump --follow fast >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "--follow" "$tmp/err" && [ ! -s "$tmp/out" ]
then ok trace__tui_bad_follow
else bad trace__tui_bad_follow "exit $rc: $(cat "$tmp/err")"; fi

# trace__bad_usage: exit 2, one line on stderr naming --trace, nothing on stdout.
usage() { # usage NAME WORD ARGS...
	name=$1 word=$2; shift 2
	"$bin" sim "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -q -- "$word" "$tmp/err" && [ ! -s "$tmp/out" ]
	then ok "trace__bad_usage_$name"
	else bad "trace__bad_usage_$name" "exit $rc, $lines line(s): $(cat "$tmp/err")"; fi
}
usage zero     "--trace"  --trace 0
usage word     "--trace"  --trace abc
usage negative "--trace"  --trace -3
usage trailing "--trace"  --trace 12x
usage huge     "--trace"  --trace 99999999999999999999999
usage past     "request 5000 never arrived" $over --trace 5000
usage sweep    "--trace"  --sweep rows=1,2 --trace 3
usage none_done "--trace slowest" --rps 0.01 --arrivals poisson --seconds 0.5 --trace slowest

summary
