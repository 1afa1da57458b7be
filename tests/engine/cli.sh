#!/bin/sh
# tests/engine/cli.sh: `hotrow sim` through the binary: the seed's table,
# JSON and CSV output, determinism, and bad usage (exit 2, one line on
# stderr naming the option). Prints cmocka-style summary lines.
# HOTROW_BIN overrides the binary (default build/hotrow).
set -u
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 failed_names=

ok()   { pass=$((pass + 1)); echo "[       OK ] $1"; }
bad()  { fail=$((fail + 1)); failed_names="$failed_names $1"; echo "[  FAILED  ] $1: $2"; }

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
*"2.000  (D/D/1)"*) case "$out" in *"6.000"*) bad sim__dd1_label "M/M/1's 6 ms printed" ;;
	*) ok sim__dd1_label ;; esac ;;
*) bad sim__dd1_label "no D/D/1 prediction of 2 ms" ;;
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

# sim__help_and_list: --help on stdout, exit 0; scenarios listed.
if "$bin" sim --help | grep -q -- '--sweep' && "$bin" sim --list-scenarios | grep -q '^viral-video-redis'
then ok sim__help_and_list; else bad sim__help_and_list "help or list missing"; fi

# sim__scenarios_run: every scenario runs (shortened).
for s in $("$bin" sim --list-scenarios | awk '{print $1}'); do
	if ! "$bin" sim --scenario "$s" --seconds 0.2 --json >/dev/null; then
		bad "sim__scenario_$s" "failed"; continue
	fi
done
ok sim__scenarios_run

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

echo "[==========] $((pass + fail)) test(s) run."
echo "[  PASSED  ] $pass test(s)."
if [ "$fail" -gt 0 ]; then
	echo "[  FAILED  ] $fail test(s), listed below:"
	for n in $failed_names; do echo "[  FAILED  ] $n"; done
	exit 1
fi
exit 0
