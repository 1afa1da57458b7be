#!/bin/sh
# tests/engine/cli.sh: `hotrow sim` through the binary: the seed's table,
# JSON and CSV output, determinism, and bad usage (exit 2, one line on
# stderr naming the option). Prints cmocka-style summary lines.
# HOTROW_BIN overrides the binary (default build/hotrow).
. "$(dirname "$0")/../harness/usage.sh"
set -u
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../harness/check.sh"

if [ ! -x "$bin" ]; then
	echo "[  FAILED  ] 1 test(s), listed below:"
	echo "cli: $bin is not built"
	exit 1
fi

# sim__seed_table: the first reference text's numbers, exactly.
out=$("$bin" sim --sweep rows=1,4,16 --rps 2000 --seconds 1 --hold-ms 2 \
	--arrivals constant --slot round-robin --pool 0 2>&1)
w=$(printf '%s\n' "$out" | awk 'NR > 1 { print $1 "=" $3 }' | tr '\n' ' ')
if [ "$w" = "1=2998.5 4=0.0 16=0.0 " ]; then ok sim__seed_table
else bad sim__seed_table "worst waits were: $w"; fi

# sim__seed_table_json: the same through --json.
out=$("$bin" sim --json --sweep rows=1,4,16 --rps 2000 --seconds 1 --hold-ms 2 \
	--arrivals constant --slot round-robin --pool 0)
n=$(printf '%s' "$out" | grep -o '"worst_wait_ms":[0-9.]*' | tr '\n' ' ')
case "$out" in
\[*\]) if [ "$n" = '"worst_wait_ms":2998.5 "worst_wait_ms":0 "worst_wait_ms":0 ' ]; then
	ok sim__seed_table_json; else bad sim__seed_table_json "got $n"; fi ;;
*) bad sim__seed_table_json "not an array" ;;
esac

# sim__json_deterministic: same seed, same bytes; another seed differs.
a="$tmp/a.json" b="$tmp/b.json" c="$tmp/c.json"
args="--json --arrivals poisson --hold-dist exp --rps 600 --seconds 2 --client-timeout-ms 50 --retries 1 --unrelated-rps 50"
"$bin" sim $args >"$a" && "$bin" sim $args >"$b" && "$bin" sim $args --seed 2 >"$c"
if cmp -s "$a" "$b" && ! cmp -s "$a" "$c"; then ok sim__json_deterministic
else bad sim__json_deterministic "outputs differ (or the seed is ignored)"; fi

# sim__json_fields: the keys DESIGN.md promises.
j=$("$bin" sim --json --seconds 0.5)
missing=
for k in config summary offered completed failed abandoned throughput_per_s \
	worst_wait_ms latency_ms p50 p95 p99 max_in_use max_waiters exhausted_at_s \
	unrelated true visible lost double max_lag_s theory ceiling_per_s rho \
	mm1_mean_ms md1_mean_ms events; do
	case "$j" in *"\"$k\":"*) ;; *) missing="$missing $k" ;; esac
done
if [ -z "$missing" ]; then ok sim__json_fields; else bad sim__json_fields "missing:$missing"; fi

# sim__closed_loop: callers instead of a rate, MVA beside the measurement.
j=$("$bin" sim --json --clients 8 --think-ms 2 --outside-ms 1 --cores 2 --cpu-ms 0.5,0.2 --seconds 0.5)
missing=
for k in clients think_ms outside_ms cores cpu_db_ms cpu_client_ms \
	closed_throughput_per_s closed_mean_ms binding model; do
	case "$j" in *"\"$k\":"*) ;; *) missing="$missing $k" ;; esac
done
case "$j" in *'"closed_throughput_per_s":null'*) missing="$missing (null MVA)" ;; esac
if [ -z "$missing" ]; then ok sim__closed_loop; else bad sim__closed_loop "missing:$missing"; fi

# sim__dd1_label: constant arrivals and holds are not M/M/1.
out=$("$bin" sim --rps 400 --hold-ms 2 --pool 0 --arrivals constant --seconds 1)
case "$out" in
*"2.000  (D/D/1; measured/predicted 1.00)"*) case "$out" in *"6.000"*) bad sim__dd1_label "M/M/1's 6 ms printed" ;;
	*) ok sim__dd1_label ;; esac ;;
*) bad sim__dd1_label "no D/D/1 prediction of 2 ms" ;;
esac

# sim__at_the_ceiling: exactly at the ceiling, constant arrivals and holds
# still wait nothing (D/D/1), while random ones have no mean to predict; no
# sentinel (-1) reaches the words.
out=$("$bin" sim --strategy sharded --rows 4 --rps 2000 --hold-ms 2 --seconds 2 --pool 0 \
	--arrivals constant --slot round-robin)
out2=$("$bin" sim --strategy sharded --rows 4 --rps 2000 --hold-ms 2 --seconds 2 --pool 0)
case "$out$out2" in
*"-1.000"*) bad sim__at_the_ceiling "a -1 sentinel printed as a prediction" ;;
*) case "$out" in
	*"2.000  (D/D/1; measured/predicted 1.00)"*)
		case "$out2" in *"no steady state"*) ok sim__at_the_ceiling ;;
		*) bad sim__at_the_ceiling "random slots at rho = 1 not said to have no steady state" ;; esac ;;
	*) bad sim__at_the_ceiling "D/D/1 at rho = 1 not predicted as 2 ms" ;;
	esac ;;
esac

# sim__retry_storm: the scenario collapses, lock_timeout ends it.
out=$("$bin" sim --scenario retry-storm --seconds 40 --json)
out2=$("$bin" sim --scenario retry-storm --seconds 40 --lock-timeout-ms 300 --json)
d1=$(printf '%s' "$out" | grep -o '"double":[0-9]*' | cut -d: -f2)
c1=$(printf '%s' "$out" | grep -o '"completed":[0-9]*' | head -1 | cut -d: -f2)
c2=$(printf '%s' "$out2" | grep -o '"completed":[0-9]*' | head -1 | cut -d: -f2)
if [ "${d1:-0}" -gt 0 ] && [ "${c2:-0}" -gt $(( 3 * ${c1:-0} )) ]; then ok sim__retry_storm
else bad sim__retry_storm "doubled $d1, completed $c1 vs $c2 with lock_timeout"; fi

# sim__csv: a header and one line per tick.
if "$bin" sim --seconds 1 --csv "$tmp/s.csv" >/dev/null && head -1 "$tmp/s.csv" | grep -q '^t_s,' &&
   [ "$(wc -l <"$tmp/s.csv")" -ge 11 ]; then ok sim__csv
else bad sim__csv "no series written"; fi

# sim__readable: measured beside predicted, in words.
out=$("$bin" sim --seconds 1 --pool 50)
case "$out" in
*measured*predicted*"pool full after"*"In words:"*) ok sim__readable ;;
*) bad sim__readable "table or sentences missing" ;;
esac

# sim__schedule_words_NAME: with --schedule, "In words" names the peak and
# when it starts, compares the peak (not the first rate) with the ceiling,
# and the pool-full prediction counts from when arrivals pass the ceiling.
words() {
	name=$1 sched=$2; shift 2
	"$bin" sim --schedule "$sched" --seconds 20 | sed -n '/^In words:/,$p' | tr -s ' \n' '  ' >"$tmp/words"
	missing=
	for want in "$@"; do grep -qF -- "$want" "$tmp/words" || missing="$missing [$want]"; done
	if [ -z "$missing" ]; then ok "sim__schedule_words_$name"
	else bad "sim__schedule_words_$name" "missing$missing in: $(head -c 600 "$tmp/words")"; fi
}
words rise  200@0,2000@10 "Likes arrive at 200 a second, then 2000 a second from 10 s" \
	"The peak, 2000 a second from 10 s on, is 4.00 times the binding ceiling of 500/s" \
	"From 10 s the arrivals outrun it" "to about 15000 requests at 20 s" "gone at about 10.0133 s" \
	"the fluid line predicts 13638.364 ms a like" "about 30000 ms, is past a timeout of 1000 ms"
words drop  2000@0,200@10 "The peak, 2000 a second from 0 s to 10 s, is 4.00 times" \
	"to about 15000 requests at 10 s" "drains only after the arrivals stop at 20 s, by about 44.0 s"
words steps 200@0,800@5,300@10 "then 800 a second from 5 s, then 300 a second from 10 s" \
	"The peak, 800 a second from 5 s to 10 s, is 1.60 times" "to about 1500 requests at 10 s" \
	"drain it by about 17.5 s"
words zero  0@0,1000@2 "No likes arrive at first, then 1000 a second from 2 s" "is 2.00 times" \
	"gone at about 2.0400 s"
words stop  2000@0,0@5 "then none from 5 s" "to about 7500 requests at 5 s" "drain it by about 20.0 s"
words under 100@0,300@5,450@10 "The peak, 450 a second from 10 s on, is 0.90 times" \
	"every step stays under it"

# sim__schedule_predicts_throughput: the predicted column follows the
# schedule too (all its likes, done when the line has drained), not the
# first rate.
out=$("$bin" sim --schedule 200@0,2000@10 --seconds 20 --pool 0)
case "$out" in
*"throughput, per s"*"440.0   440.0  (22000 likes done by 50.0 s"*"4.000  (the peak, 2000/s)"*)
	ok sim__schedule_predicts_throughput ;;
*) bad sim__schedule_predicts_throughput "$(printf '%s\n' "$out" | grep -E 'throughput|offered load')" ;;
esac

# sim__schedule_predicts_latency: the mean latency has a prediction too,
# the fluid line's, with its ratio. Poisson arrivals and exponential holds
# into a peak 4 times the ceiling: the line (15,000 likes at 20 s) is long
# against the randomness in it (arrivals and services over the 10 s peak
# vary by about sqrt((2000 + 500) x 10) = 160 likes, 1 %), so the ratio
# must be 0.95 to 1.05 (seeds 1 to 8 give 0.98 to 1.02). The JSON names
# the model and carries the same number.
args="--schedule 200@0,2000@10 --seconds 20 --pool 0 --arrivals poisson --hold-dist exp"
out=$("$bin" sim $args)
j=$("$bin" sim $args --json)
r=$(printf '%s\n' "$out" | sed -n 's/^ *mean latency, ms .*(fluid schedule; measured\/predicted \([0-9.]*\))$/\1/p')
p=$(printf '%s\n' "$out" | sed -n 's/^ *mean latency, ms *[0-9.]* *\([0-9.]*\) .*/\1/p')
jp=$(printf '%s' "$j" | sed -n 's/.*"model":"fluid schedule","model_mean_ms":\([0-9.]*\),.*/\1/p')
jp=$(awk -v v="${jp:-0}" 'BEGIN { printf "%.3f", v }')
case "$r:$jp:$j" in
0.9[5-9]:"$p":*'"schedule":{"peak_rps":2000,'*|1.0[0-5]:"$p":*'"schedule":{"peak_rps":2000,'*)
	ok sim__schedule_predicts_latency ;;
*) bad sim__schedule_predicts_latency "ratio '$r', predicted '$p', JSON '$jp': $(printf '%s\n' "$out" | grep 'mean latency')" ;;
esac

# sim__schedule_near_ceiling_note: a peak within 20 % of the ceiling with
# random arrivals says the latency prediction is rough there; evenly
# spaced likes and constant holds (the fluid line is exact) do not.
note="within 20% of it"
a=$("$bin" sim --schedule 200@0,550@5 --seconds 20 --pool 0 --arrivals poisson | tr -s ' \n' '  ')
b=$("$bin" sim --schedule 200@0,550@5 --seconds 20 --pool 0 | tr -s ' \n' '  ')
case "$a" in
*"the peak is 1.10 times the ceiling, $note"*) case "$b" in *"$note"*)
	bad sim__schedule_near_ceiling_note "noted with constant arrivals and holds" ;;
	*) ok sim__schedule_near_ceiling_note ;; esac ;;
*) bad sim__schedule_near_ceiling_note "no note at a peak 1.10 times the ceiling" ;;
esac

# sim__help_and_list: --help on stdout, exit 0; scenarios listed.
if "$bin" sim --help | grep -q -- '--sweep' && "$bin" sim --list-scenarios | grep -q '^viral-video-redis'
then ok sim__help_and_list; else bad sim__help_and_list "help or list missing"; fi

# sim__scenarios_run: every scenario runs (shortened); one verdict, naming
# the scenarios that failed.
scenarios=$("$bin" sim --list-scenarios | awk '{print $1}')
failed=""
for s in $scenarios; do
	"$bin" sim --scenario "$s" --seconds 0.2 --json >/dev/null || failed="$failed $s"
done
if [ -z "$scenarios" ]; then bad sim__scenarios_run "no scenarios listed"
elif [ -n "$failed" ]; then bad sim__scenarios_run "failed:$failed"
else ok sim__scenarios_run; fi

# sim__bad_usage: exit 2, exactly one line on stderr, naming the option.
usage() { # usage NAME WORD ARGS...
	name=$1 word=$2; shift 2
	"$bin" sim "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -q -- "$word" "$tmp/err" && [ ! -s "$tmp/out" ]
	then ok "sim__bad_usage_$name"
	else bad "sim__bad_usage_$name" "exit $rc, $lines line(s): $(cat "$tmp/err")"; fi
}
# rates whose interval overflows the clock, by every way in
usage rps_tiny         "--rps"        --seconds 1 --rps 1e-13
usage unrelated_tiny   "--unrelated-rps" --seconds 1 --unrelated-rps 1e-13
usage schedule_tiny    "--schedule"   --seconds 1 --schedule 2000@0,1e-13@0.5
usage schedule_tiny0   "--schedule"   --seconds 1 --schedule 1e-13@0
usage sweep_rps_tiny   "--rps"        --seconds 1 --sweep rps=100,1e-13
# timeouts that would round to 0 ("never")
usage timeout_1e-300   "--client-timeout-ms" --client-timeout-ms 1e-300
usage timeout_sub_us   "--client-timeout-ms" --client-timeout-ms 0.0001
usage pool_timeout_sub_us "--pool-timeout-ms" --pool-timeout-ms 0.0004
usage lock_timeout_sub_us "--lock-timeout-ms" --lock-timeout-ms 0.0004
usage lock_timeout_1e-300 "--lock-timeout-ms" --lock-timeout-ms 1e-300
# rows only mean something to sharded
usage rows_naive       "--rows"       --rows 4 --strategy naive
usage rows_redis       "--rows"       --rows 4 --strategy redis
usage rows_scenario    "--rows"       --scenario viral-post-redis --rows 4
usage sweep_empty      "--sweep"      --sweep rows=1,,2
usage sweep_trailing   "--sweep"      --sweep rows=1,2,
usage sweep_twice      "--sweep"      --sweep rows=1,2 --sweep rps=1,2
usage list_then_bogus  "--bogus"      --list-scenarios --bogus
# round trips in the lock, reads and the old snapshot
usage rtt_negative     "--rtt-ms"     --rtt-ms -1
usage trips_fraction   "--trips-in-lock" --trips-in-lock 1.5
usage trips_too_many   "--trips-in-lock" --trips-in-lock 101
usage read_rps_tiny    "--read-rps"   --seconds 1 --read-rps 1e-13
usage read_ms_zero     "--read-ms"    --read-ms 0
usage snapshot_at_neg  "--snapshot-at" --snapshot-at -2
usage snapshot_for_word "--snapshot-for" --snapshot-for long
usage redis_op_zero    "--redis-op-us" --redis-op-us 0
usage redis_op_huge    "--redis-op-us" --redis-op-us 2e6

# sim__every_option_documented_and_checked: every engine option in
# `hotrow sim --help` is in the README, and a bad value for any of them
# exits 2 with one line naming it.
readme="$(dirname "$0")/../../README.md"
"$bin" sim --help | sed -n '/^engine:/,/^$/p' |
	sed -n 's/^  --\([a-z-]*\)\( [^ ]*\)\{0,1\} .*/\1\2/p' >"$tmp/opts"
undocumented= unchecked=
while read -r name arg; do
	[ -n "$name" ] || continue
	grep -q -- "--$name\b" "$readme" || undocumented="$undocumented --$name"
	if [ -z "$arg" ]; then set -- "--$name=bogus"; else set -- "--$name" bogus; fi
	"$bin" sim "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q -- "--$name" "$tmp/err" ||
	   [ -s "$tmp/out" ]; then unchecked="$unchecked --$name"; fi
	[ -n "$arg" ] || continue
	"$bin" sim "--$name" -1e12 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q -- "--$name" "$tmp/err"
	then unchecked="$unchecked --$name=-1e12"; fi
done <"$tmp/opts"
if [ "$(wc -l <"$tmp/opts")" -lt 40 ]; then
	bad sim__every_option_documented_and_checked "only $(wc -l <"$tmp/opts") options in --help"
elif [ -n "$undocumented$unchecked" ]; then
	bad sim__every_option_documented_and_checked "not in README:$undocumented; bad value not refused:$unchecked"
else ok sim__every_option_documented_and_checked; fi

# sim__timeout_reported_as_used: 1.5 us runs as 2 us, and says so.
j=$("$bin" sim --json --seconds 0.1 --client-timeout-ms 0.0015)
case "$j" in *'"client_timeout_ms":0.002,'*) ok sim__timeout_reported_as_used ;;
*) bad sim__timeout_reported_as_used "$(printf '%s' "$j" | grep -o '"client_timeout_ms":[^,]*')" ;; esac

# sim__times_reported_as_used: every time in ms runs in whole microseconds,
# and the config says which.
j=$("$bin" sim --json --seconds 0.1 --lock-timeout-ms 0.0015 --backoff-ms 2.0004 \
	--clients 2 --think-ms 1.0006 --outside-ms 0.5004 --cores 2 --cpu-ms 0.2004,0.1006 \
	--rtt-ms 0.3004 --read-ms 0.1006 --work-ms 0.0004)
missing=
for kv in lock_timeout_ms:0.002 backoff_ms:2 think_ms:1.001 outside_ms:0.5 \
	cpu_db_ms:0.2 cpu_client_ms:0.101 rtt_ms:0.3 read_ms:0.101 work_ms:0; do
	case "$j" in *"\"${kv%%:*}\":${kv#*:}"[,}]*) ;; *) missing="$missing $kv" ;; esac
done
if [ -z "$missing" ]; then ok sim__times_reported_as_used
else bad sim__times_reported_as_used "not rounded:$missing"; fi

# sim__one_round_trip_fix: three round trips of 0.5 ms inside a 0.5 ms
# hold cap the row at 500/s; as one statement it takes 2,000/s. The report
# names the split.
j=$("$bin" sim --rps 800 --hold-ms 0.5 --rtt-ms 0.5 --trips-in-lock 3 --seconds 1)
case "$j" in *"Of each 2 ms hold, 1.5 ms are 3 round trips"*"would take 2000 a second, not 500"*)
	ok sim__one_round_trip_fix ;;
*) bad sim__one_round_trip_fix "$(printf '%s' "$j" | grep -A1 'Of each')" ;; esac

# sim__snapshot_chain_json: Lab 08's 10,000 updates under an old snapshot:
# 10,001 versions, 55 heap pages, 56 buffers a read.
j=$("$bin" sim --json --rps 2000 --hold-ms 0.4 --seconds 6 --pool 0 --read-rps 10 --snapshot-at 0 --snapshot-for 5)
case "$j" in *'"versions":1,"versions_max":10001,"buffers":2,"buffers_max":56,"heap_pages":55,'*)
	ok sim__snapshot_chain_json ;;
*) bad sim__snapshot_chain_json "$(printf '%s' "$j" | grep -o '"reads":.*')" ;; esac

# sim__redis_op_time_is_an_input: the engine's Redis serves one command
# per --redis-op-us; a million INCRs a second finish at 1 / op time
# (4 us by default: 250,000/s; 0.5 us: all of them).
j4=$("$bin" sim --json --strategy redis --rps 1000000 --seconds 1)
j05=$("$bin" sim --json --strategy redis --rps 1000000 --seconds 1 --redis-op-us 0.5)
case "$j4|$j05" in *'"redis_op_us":4,'*'"redis_op_us":0.5,'*)
	t4=$(printf '%s' "$j4" | grep -o '"throughput_per_s":[0-9.]*' | head -1 | cut -d: -f2)
	t05=$(printf '%s' "$j05" | grep -o '"throughput_per_s":[0-9.]*' | head -1 | cut -d: -f2)
	if awk -v a="$t4" -v b="$t05" 'BEGIN { exit !(a > 240000 && a < 260000 && b > 950000) }'
	then ok sim__redis_op_time_is_an_input
	else bad sim__redis_op_time_is_an_input "throughput $t4 at 4 us, $t05 at 0.5 us"; fi ;;
*) bad sim__redis_op_time_is_an_input "redis_op_us missing from the JSON" ;; esac

# sim__rows_alone_mean_sharded: --rows N alone still picks sharded.
case "$("$bin" sim --rows 4 --seconds 0.1)" in
*"sharded, 4 rows"*) ok sim__rows_alone_mean_sharded ;;
*) bad sim__rows_alone_mean_sharded "not sharded" ;; esac

# sim__long_run_memory_bounded: a million simulated seconds of ticks (the
# whole series was 867 MB) fits in 200 MB of address space, CSV included.
# Sanitizer builds reserve terabytes of address space: skipped there.
if grep -q -e __asan_init -e __tsan_init "$bin" 2>/dev/null; then
	skip sim__long_run_memory_bounded "a sanitizer build reserves terabytes of address space"
elif (ulimit -v 200000 && "$bin" sim --seconds 1e6 --rps 0.01 --csv "$tmp/long.csv" >/dev/null 2>&1) &&
     [ "$(wc -l <"$tmp/long.csv")" -le 16385 ]; then ok sim__long_run_memory_bounded
else bad sim__long_run_memory_bounded "ran out of 200 MB, or the CSV has $(wc -l <"$tmp/long.csv" 2>/dev/null) lines"; fi

# The other faces take the same engine limits and refuse what they cannot
# show: exit 2 (slides: 1, a file it cannot use), one line on stderr.
usage_cmd() { # usage_cmd NAME RC WORD ARGS...
	name=$1 want=$2 word=$3; shift 3
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -q -- "$word" "$tmp/err" && [ ! -s "$tmp/out" ]
	then ok "$name"
	else bad "$name" "exit $rc, $lines line(s): $(head -c 300 "$tmp/err")"; fi
}
printf 'title tiny\nstep one\nset rps=1e-13\nsay hi\nrun 1\n' >"$tmp/tiny.tour"
usage_cmd tui__bad_usage_rps_tiny     2 "--rps"          tui --dump --rps 1e-13
usage_cmd demo__bad_usage_tour_rps    2 "line 3: rps:"   demo --dump "$tmp/tiny.tour"
# demo__tour_limits_are_the_cli_limits: a tour's lock timeout under 1 us
# gets the very line `hotrow sim` prints for it.
printf 'title tiny\nstep one\nset lock-timeout-ms=0.0004\nrun 1\n' >"$tmp/lt.tour"
"$bin" sim --lock-timeout-ms 0.0004 2>"$tmp/cli.err" >/dev/null
"$bin" demo --dump "$tmp/lt.tour" 2>"$tmp/tour.err" >/dev/null
m=$(sed 's/^hotrow sim: --//' "$tmp/cli.err")
if [ -n "$m" ] && grep -qF -- "line 3: $m (not '0.0004')" "$tmp/tour.err"
then ok demo__tour_limits_are_the_cli_limits
else bad demo__tour_limits_are_the_cli_limits "cli: $(cat "$tmp/cli.err") tour: $(cat "$tmp/tour.err")"; fi
# demo__a_fix_applies_live_headless: a tour's fix line changes the running
# simulation; the frame at the step's end names the second it came and the
# clock has run on from there; the same words with set start from t = 0.
printf 'title live\nscenario viral-post\nstep outage\nrun 3\nstep fix\n%s strategy=sharded rows=16\nrun 2\n' fix >"$tmp/fix.tour"
printf 'title live\nscenario viral-post\nstep outage\nrun 3\nstep fix\n%s strategy=sharded rows=16\nrun 2\n' set >"$tmp/set.tour"
"$bin" demo --dump --size 160x50 --step 2 "$tmp/fix.tour" >"$tmp/fix.out" 2>&1
"$bin" demo --dump --size 160x50 --step 2 "$tmp/set.tour" >"$tmp/set.out" 2>&1
if grep -q "t = 5 s" "$tmp/fix.out" && grep -q "Changed at 3.0 s: strategy naive -> sharded" "$tmp/fix.out" &&
	grep -q "t = 2 s" "$tmp/set.out" && ! grep -q "Changed at" "$tmp/set.out"
then ok demo__a_fix_applies_live_headless
else bad demo__a_fix_applies_live_headless "$(head -c 400 "$tmp/fix.out")"; fi
usage_cmd demo__bad_usage_step_past   2 "the tour has"   demo --dump --step 99
usage_cmd demo__bad_usage_dev_zero    2 "is a device"    demo --dump /dev/zero
usage_cmd demo__bad_usage_answer_e     2 "A to D"         demo --dump --step 2 --answer E
usage_cmd demo__bad_usage_answer_no_ask 2 "asks no question" demo --dump --step 1 --answer A
usage_cmd slides__bad_usage_dev_zero  2 "is a device"    slides --dump /dev/zero

# slides__dump_defangs_escapes: a deck's ESC bytes never reach the terminal.
printf '# Title\n\nred \033[31mtext\033]0;owned\007\n' >"$tmp/esc.md"
if "$bin" slides --dump "$tmp/esc.md" >"$tmp/out" 2>&1 && ! grep -q "$(printf '\033')" "$tmp/out" &&
   grep -q 'red ?\[31mtext' "$tmp/out"; then ok slides__dump_defangs_escapes
else bad slides__dump_defangs_escapes "$(od -c "$tmp/out" | head -5)"; fi

usage unknown_option   "--frobnicate" --frobnicate
usage rows_zero        "--rows"       --rows 0
usage rows_word        "--rows"       --rows many
usage rows_fraction    "--rows"       --rows 2.5
usage hold_negative    "--hold-ms"    --hold-ms -1
usage rps_missing      "--rps"        --rps
usage strategy         "--strategy"   --strategy fast
usage scenario         "--scenario"   --scenario viral-cat
usage crash_kind       "--crash"      --crash disk@3
usage crash_time       "--crash"      --crash app@soon
usage bug              "--bug"        --bug off-by-one
usage schedule         "--schedule"   --schedule 200@5,100@1
usage sweep_form       "--sweep"      --sweep rows
usage sweep_name       "--sweep"      --sweep colour=1,2
usage sweep_value      "--rows"       --sweep rows=1,0
usage csv_with_sweep   "--csv"        --sweep rows=1,2 --csv "$tmp/x.csv"
usage seconds_zero     "--seconds"    --seconds 0
usage clients_and_rps  "--clients"    --clients 4 --rps 100
usage clients_negative "--clients"    --clients -1
usage sweep_clients_rps "--clients"   --rps 100 --sweep clients=1,4
usage sweep_rps_clients "--clients"   --clients 4 --sweep rps=100,200
usage think_dist       "--think-dist" --clients 4 --think-dist gamma
usage cpu_form         "--cpu-ms"     --clients 4 --cpu-ms 1,x
usage cpu_over_hold    "--cpu-ms"     --clients 4 --cpu-ms 5
usage cores_word       "--cores"      --cores many
usage arrivals_word    "--arrivals"   --arrivals lumpy
usage burst_zero       "--burst"      --burst 0
usage backoff_word     "--backoff"    --backoff linear
usage budget_over      "--retry-budget" --retry-budget 1.5
usage lock_timeout_neg "--lock-timeout-ms" --lock-timeout-ms -5
usage lock_timeout_tiny "--lock-timeout-ms" --lock-timeout-ms 0.0001
usage counter_pool_neg "--counter-pool" --counter-pool -1
usage idempotent_word  "--idempotent" --idempotent=maybe
usage batch_zero       "--batch"      --strategy ledger --batch 0
usage batch_word       "--batch"      --strategy ledger --batch lots
usage refuse_one       "--refuse-frac" --strategy ledger --refuse-frac 1
usage refuse_negative  "--refuse-frac" --strategy ledger --refuse-frac -0.1

# sim__ledger_batches: one row, 2 ms holds, batches of 100: 50,000 transfers/s.
out=$("$bin" sim --strategy ledger --rows 1 --batch 100 --clients 32 --hold-ms 2 \
      --pool 0 --seconds 5 --json)
if printf '%s' "$out" | grep -q '"ceiling_transfers_per_s":50000[,}]' &&
   printf '%s' "$out" | grep -q '"batch":100,'
then ok sim__ledger_batches
else bad sim__ledger_batches "$(printf '%s' "$out" | grep -o '"ledger":{[^}]*}')"; fi

summary
