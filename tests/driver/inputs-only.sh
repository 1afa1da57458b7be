#!/bin/sh
# tests/driver/inputs-only.sh: no lab driver (nor the fidelity bench) feeds a
# measurement of the run it predicts into the prediction.
#
# The structure that makes it so (labs/driver/predict.h): the engine is
# asked with a struct drv_inputs, whose measured fields are drv_parts that
# only drv_probe_run (one thread alone) fills. This checks the structure
# from outside, on the source:
#   - struct drv_inputs has no field for a throughput, latency or rate;
#   - every assignment into a drv_inputs in labs/*/run.c, labs/driver/*.c
#     and bench/*.c names no measurement of a loaded run (a throughput, a
#     latency, a kit_load_result, a drv_run);
#   - every drv_inputs_init() is given parts from a probe;
#   - the engine's WAL flushes per commit come from the flush probe, and
#     neither the prediction nor its inputs read pg_stat_wal's counts;
#   - kit/ does not depend on the engine (the drivers' support moved out).
# Prints cmocka-style lines for scripts/run-tests.
. "$(dirname "$0")/../harness/usage.sh"
set -u
cd "$(dirname "$0")/../.."
passed=0 failed=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

check() { # check NAME: runs the shell function NAME
	echo "[ RUN      ] $1"
	if "$1" >"$tmp" 2>&1; then
		echo "[       OK ] $1"; passed=$((passed + 1))
	else
		sed 's/^/    /' "$tmp"
		echo "[  FAILED  ] $1"; failed=$((failed + 1))
	fi
}

SOURCES="labs/*/run.c labs/driver/*.c bench/*.c"
MEASURED='throughput|latency|\.r\b|\.r\.|->r\b|->r\.|\bres\b|result|\.ok\b|->ok\b|\bmany\b|\brun\b|measured|elapsed|batches'

inputs__hold_no_measured_rate() {
	# the declarations: the text before a comment, on lines that end one
	body=$(sed -n '/^struct drv_inputs {/,/^};/p' labs/driver/predict.h | sed 's|/\*.*||' |
	       grep ';')
	[ -n "$body" ] || { echo "struct drv_inputs not found in labs/driver/predict.h"; return 1; }
	if printf '%s\n' "$body" | grep -nEi 'throughput|latency|\brps\b|_rps|\brate\b|_rate|rate_|per_s'; then
		echo "struct drv_inputs has a field a measured rate could go into"; return 1
	fi
}

inputs__assigned_from_inputs_only() {
	# every "in.X = ..." / "in->X = ..." (a drv_inputs, by the kit's naming)
	lines=$(grep -nE '\bin(\.|->)[a-z_]+ *=[^=]' $SOURCES)
	[ -n "$lines" ] || { echo "no assignment into a drv_inputs found"; return 1; }
	bad=$(printf '%s\n' "$lines" | grep -E "=.*($MEASURED)")
	if [ -n "$bad" ]; then
		printf 'a measurement goes into the inputs:\n%s\n' "$bad"; return 1
	fi
	printf '%s\n' "$lines"
}

inputs__parts_come_from_a_probe() {
	# drv_inputs_init(&in, strategy, threads, &PARTS): PARTS must be filled
	# by drv_probe_run in the same file.
	fail=0
	for f in $SOURCES; do
		for v in $(sed -n 's/.*drv_inputs_init([^,]*,[^,]*,[^,]*, *&*\([a-z_.>-]*\)).*/\1/p' "$f"); do
			case "$v" in
			a|alone|\*alone|b-\>alone) ;;
			*) echo "$f: drv_inputs_init is given '$v', not a probe's parts"; fail=1 ;;
			esac
		done
		if grep -q 'drv_inputs_init' "$f" && ! grep -q 'drv_probe_run' "$f" &&
		   [ "$f" != labs/driver/predict.c ]; then
			echo "$f: builds inputs but runs no probe"; fail=1
		fi
	done
	return $fail
}

wal__prediction_reads_no_count() {
	# The WAL line: the engine's flushes per commit come from the flush
	# probe (one client, before the run) through drv_inputs_wal; the
	# server's counts (pg_stat_wal, drv_wal_count) are read only around the
	# loaded run, in drv_run_load, and go into a drv_run.
	f=labs/driver/predict.c
	counts='pg_stat|wal_sync|xact_commit|drv_wal_count|wal_after|drv_run\b|kit_load_result'
	for fn in to_config drv_predict drv_inputs_wal; do
		body=$(sed -n "/^[a-z].* $fn(/,/^}/p" "$f")
		[ -n "$body" ] || { echo "$fn not found in $f"; return 1; }
		if printf '%s\n' "$body" | grep -nE "$counts"; then
			echo "$fn reads the server's counts of a run"; return 1
		fi
	done
	if sed -n '/^struct drv_inputs {/,/^};/p' labs/driver/predict.h | sed 's|/\*.*||' |
	   grep -nE 'per_commit|sync'; then
		echo "struct drv_inputs has a field a measured flush count could go into"; return 1
	fi
	grep -q 'wal_per_commit = sum\.wal\.flushes_per_commit' "$f" ||
		{ echo "the predicted WAL per commit is not the engine's"; return 1; }
	bad=$(grep -nE '\bin(\.|->)wal_flush_ms *=[^=]' $SOURCES | grep -vE '= *(flush_ms|f->flush_ms);')
	[ -z "$bad" ] || { printf 'the flush is not the probe'"'"'s:\n%s\n' "$bad"; return 1; }
}

kit__does_not_depend_on_the_engine() {
	if grep -n 'engine/\|sim\.h' kit/*.c kit/*.h; then
		echo "kit/ includes the engine"; return 1
	fi
	for m in predict baseline span runopt; do
		[ ! -e kit/$m.c ] || { echo "kit/$m.c is back"; return 1; }
	done
}

check inputs__hold_no_measured_rate
check inputs__assigned_from_inputs_only
check inputs__parts_come_from_a_probe
check wal__prediction_reads_no_count
check kit__does_not_depend_on_the_engine
echo "[==========] $((passed + failed)) test(s) run."
echo "[  PASSED  ] $passed test(s)."
[ "$failed" -eq 0 ] || echo "[  FAILED  ] $failed test(s)."
[ "$failed" -eq 0 ]
