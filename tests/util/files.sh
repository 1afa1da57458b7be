#!/bin/sh
# tests/util/files.sh: every file argument of build/hotrow refuses a
# directory, a FIFO and /dev/zero at once, with one line naming the option
# and the reason, and exit 2, before any work (a FIFO would block a reader
# for ever, /dev/zero never ends, `sim --csv DIR` used to fail only after
# the run). A file the run writes replaces the old one only when whole.
# Prints cmocka-style summary lines. HOTROW_BIN overrides the binary.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$root" || exit 1
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$root/tests/harness/check.sh"

mkfifo "$tmp/fifo"
mkdir "$tmp/dir"
printf 'ada\n' >"$tmp/roster"

# refused NAME WANT COMMAND...: exit 2 within 10 s, one line on stderr
# holding WANT, nothing on stdout.
refused() {
	name=$1 want=$2
	shift 2
	timeout 10 "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ $rc -eq 124 ]; then bad "$name" "still running after 10 s (blocked, or ran the work)"
	elif [ $rc -ne 2 ]; then bad "$name" "exit $rc, want 2: $(head -2 "$tmp/err")"
	elif [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -qF -- "$want" "$tmp/err"; then
		bad "$name" "want one line with '$want', got: $(head -3 "$tmp/err")"
	elif [ -s "$tmp/out" ]; then bad "$name" "printed on stdout: $(head -2 "$tmp/out")"
	else ok "$name"; fi
}

# A run of 10^6 simulated seconds would take minutes: refused before it.
long="--seconds 1000000 --rps 50"
refused files__sim_csv_directory "hotrow sim: --csv $tmp/dir: is a directory" \
	sim $long --csv "$tmp/dir"
refused files__sim_csv_fifo "--csv $tmp/fifo: is a FIFO" sim $long --csv "$tmp/fifo"
refused files__sim_csv_dev_zero "--csv /dev/zero: is a device" sim $long --csv /dev/zero
refused files__sim_csv_missing_directory "its directory $tmp/nope does not exist" \
	sim $long --csv "$tmp/nope/x.csv"
refused files__sim_svg_directory "hotrow sim: --svg $tmp/dir: is a directory" \
	sim $long --svg "$tmp/dir"
refused files__sim_svg_fifo "--svg $tmp/fifo: is a FIFO" sim $long --svg "$tmp/fifo"
refused files__class_roster_dev_zero "hotrow class: --roster /dev/zero: is a device" \
	class init --db postgresql:///nowhere --roster /dev/zero
refused files__class_roster_fifo "--roster $tmp/fifo: is a FIFO" \
	class init --db postgresql:///nowhere --roster "$tmp/fifo"
refused files__class_roster_directory "--roster $tmp/dir: is a directory" \
	class init --db postgresql:///nowhere --roster "$tmp/dir"
refused files__class_init_out_directory "hotrow class: --out $tmp/dir: is a directory" \
	class init --db postgresql:///nowhere --roster "$tmp/roster" --out "$tmp/dir"
refused files__class_grade_out_file "hotrow class: --out $tmp/roster: is not a directory" \
	class grade --db postgresql:///nowhere --out "$tmp/roster"
refused files__slides_deck_fifo "hotrow slides: the deck $tmp/fifo: is a FIFO" \
	slides --dump "$tmp/fifo"
refused files__slides_deck_dev_zero "the deck /dev/zero: is a device" slides --dump /dev/zero
refused files__slides_deck_directory "the deck $tmp/dir: is a directory" slides --dump "$tmp/dir"
refused files__slides_state_directory "hotrow slides: --state $tmp/dir: is a directory" \
	slides --presenter --dump --state "$tmp/dir"
refused files__slides_state_fifo "--state $tmp/fifo: is a FIFO" \
	slides --presenter --dump --state "$tmp/fifo"
refused files__demo_tour_fifo "hotrow demo: the tour $tmp/fifo: is a FIFO" demo --dump "$tmp/fifo"
refused files__demo_tour_directory "hotrow demo: the tour $tmp/dir: is a directory" demo --dump "$tmp/dir"
refused files__lab_grade_out_file "hotrow lab grade: --out $tmp/roster: is not a directory" \
	lab grade --out "$tmp/roster"

# A big deck is refused by its size before it is read.
head -c 1100000 /dev/zero | tr '\0' 'x' >"$tmp/big.md"
refused files__slides_deck_too_big "the deck $tmp/big.md: is 1100000 bytes" slides --dump "$tmp/big.md"

# The old CSV stays as it was when the run is refused, and is replaced
# whole (no temporary file left beside it) when the run succeeds.
name=files__sim_csv_replaced_only_when_whole
printf 'keep me\n' >"$tmp/dir/s.csv"
"$bin" sim --seconds 1 --csv "$tmp/dir/s.csv" --rows 0 >/dev/null 2>&1
rc1=$?
before=$(cat "$tmp/dir/s.csv")
"$bin" sim --seconds 1 --csv "$tmp/dir/s.csv" >/dev/null 2>&1
rc2=$?
if [ $rc1 -ne 2 ] || [ "$before" != "keep me" ]; then bad $name "a refused run (exit $rc1) changed the file: '$before'"
elif [ $rc2 -ne 0 ] || ! head -1 "$tmp/dir/s.csv" | grep -q '^t_s,'; then bad $name "exit $rc2 or no new CSV"
elif [ "$(ls "$tmp/dir")" != "s.csv" ]; then bad $name "left beside it: $(ls "$tmp/dir" | tr '\n' ' ')"
else ok $name; fi

summary
