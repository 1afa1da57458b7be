#!/bin/sh
# tests/engine/compare.sh: `hotrow sim --compare A.conf B.conf` through the
# binary: the two tables side by side hold each side's own run (the same
# figures as `hotrow sim --json` with the file's options), B/A is B over
# A, both sides share A's seed, --svg draws both on one figure, and a bad
# setup file or usage is refused with its file and line, exit 2, nothing
# on stdout. Prints cmocka-style lines. HOTROW_BIN overrides the binary.
. "$(dirname "$0")/../harness/usage.sh"
set -u
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../harness/check.sh"

if [ ! -x "$bin" ]; then
	echo "[  FAILED  ] 1 test(s), listed below:"
	echo "compare: $bin is not built"
	exit 1
fi

cat >"$tmp/a.conf" <<'EOF'
# the viral post on its one row
scenario = viral-post
seconds = 2
EOF
# rows before the scenario: the scenario is applied first all the same
cat >"$tmp/b.conf" <<'EOF'
rows = 16        # sixteen slots
scenario = viral-post
strategy = sharded
seconds = 2
EOF

# compare__side_by_side: each column is that side's own run
"$bin" sim --compare "$tmp/a.conf" "$tmp/b.conf" >"$tmp/out" 2>"$tmp/err"
rc=$?
ja=$("$bin" sim --json --scenario viral-post --seconds 2)
jb=$("$bin" sim --json --scenario viral-post --strategy sharded --rows 16 --seconds 2)
field() { printf '%s' "$1" | grep -o "\"$2\":[0-9.]*" | head -1 | cut -d: -f2; }
want="$(field "$ja" completed) $(field "$jb" completed)"
got=$(awk '/^  completed / { print $2, $3 }' "$tmp/out")
if [ "$rc" = 0 ] && [ "$got" = "$want" ] && [ "$(field "$ja" completed)" != "$(field "$jb" completed)" ] &&
	grep -q "A  $tmp/a.conf: naive, one row" "$tmp/out" &&
	grep -q "B  $tmp/b.conf: sharded x16" "$tmp/out"; then
	ok compare__side_by_side
else
	bad compare__side_by_side "rc $rc, completed '$got', want '$want'"
fi

# compare__ratios_are_b_over_a: every row with a ratio, to its two decimals
# (or two figures under 0.1)
bad_rows=$(awk '/^  [a-z]/ && NF >= 4 && $NF ~ /^[0-9][0-9.e-]*$/ {
	a = $(NF - 2); b = $(NF - 1); r = $NF
	if (a == 0) { print; next }
	q = b / a
	tol = q < 0.1 ? q * 0.06 : 0.006
	if (q - r > tol || r - q > tol) print }' "$tmp/out")
n=$(awk '/^  [a-z]/ && NF >= 4 && $NF ~ /^[0-9][0-9.e-]*$/' "$tmp/out" | wc -l)
if [ -z "$bad_rows" ] && [ "$n" -ge 15 ] && grep -q "^  throughput, per s .* 3\.99$" "$tmp/out"; then
	ok compare__ratios_are_b_over_a
else
	bad compare__ratios_are_b_over_a "$n ratios; wrong: $bad_rows"
fi

# compare__one_seed: B's own seed gives way to A's, and is said
printf 'scenario = viral-post\nseconds = 2\nseed = 9\n' >"$tmp/s9.conf"
"$bin" sim --compare "$tmp/a.conf" "$tmp/s9.conf" --json >"$tmp/j" 2>"$tmp/err"
jseed1=$("$bin" sim --json --scenario viral-post --seconds 2 | grep -o '"summary":.*')
b_summary=$(sed 's/.*,"b":{"config"/{"config"/' "$tmp/j" | grep -o '"summary":.*' | sed 's/}$//')
if grep -q "s9.conf names seed 9; both sides run on 1" "$tmp/err" &&
	[ "$b_summary" = "$jseed1" ]; then
	ok compare__one_seed
else
	bad compare__one_seed "$(cat "$tmp/err")"
fi

# compare__svg_draws_both: one figure, A solid and B dashed, both named
"$bin" sim --compare "$tmp/a.conf" "$tmp/b.conf" --svg "$tmp/f.svg" >/dev/null 2>&1
if [ -s "$tmp/f.svg" ] && tail -1 "$tmp/f.svg" | grep -q '</svg>' &&
	[ "$(grep -c '<polyline' "$tmp/f.svg")" = 4 ] &&
	[ "$(grep '<polyline' "$tmp/f.svg" | grep -c 'stroke-dasharray')" = 2 ] &&
	grep -q "A: $tmp/a.conf" "$tmp/f.svg" && grep -q "B: $tmp/b.conf" "$tmp/f.svg"; then
	ok compare__svg_draws_both
else
	bad compare__svg_draws_both "no figure with two solid and two dashed lines"
fi

# refused EXPECTED ARGS...: exit 2, one line on stderr holding EXPECTED,
# nothing on stdout
refused() {
	name=$1 want=$2; shift 2
	"$bin" sim "$@" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" = 2 ] && [ ! -s "$tmp/o" ] && [ "$(wc -l <"$tmp/e")" = 1 ] &&
		grep -qF -- "$want" "$tmp/e"; then
		ok "$name"
	else
		bad "$name" "rc $rc: $(cat "$tmp/e")"
	fi
}
printf 'scenario = viral-post\nstrategy = sharded\n\nrows = x\n' >"$tmp/bad.conf"
refused compare__bad_value_names_file_and_line "bad.conf:4: rows accepts a whole number" \
	--compare "$tmp/a.conf" "$tmp/bad.conf"
printf '# fine\nrows 4\n' >"$tmp/bad.conf"
refused compare__line_without_equals "bad.conf:2: expected NAME = VALUE, not 'rows 4'" \
	--compare "$tmp/bad.conf" "$tmp/a.conf"
printf 'json = on\n' >"$tmp/bad.conf"
refused compare__unknown_name "bad.conf:1: 'json' is not an engine option" \
	--compare "$tmp/bad.conf" "$tmp/a.conf"
printf 'strategy = queue\nseconds = 1\nrows = 4\n' >"$tmp/bad.conf"
refused compare__whole_config_fault_names_its_line "bad.conf:3: rows: 4 rows need" \
	--compare "$tmp/a.conf" "$tmp/bad.conf"
printf 'scenario = viral-post\nscenario = viral-video\n' >"$tmp/bad.conf"
refused compare__scenario_twice "bad.conf:2: scenario given twice (first on line 1)" \
	--compare "$tmp/a.conf" "$tmp/bad.conf"
printf 'scenario = viral-pots\n' >"$tmp/bad.conf"
refused compare__unknown_scenario "bad.conf:1: scenario 'viral-pots' is not one of" \
	--compare "$tmp/a.conf" "$tmp/bad.conf"
refused compare__needs_two_files "--compare needs two setup files" --compare "$tmp/a.conf"
refused compare__three_files "unexpected argument" \
	--compare "$tmp/a.conf" "$tmp/b.conf" "$tmp/b.conf"
refused compare__missing_file "nope.conf: cannot read it" --compare "$tmp/a.conf" "$tmp/nope.conf"
refused compare__directory "is a directory" --compare "$tmp/a.conf" "$tmp"
refused compare__engine_option_beside "engine options go in the setup files" \
	--compare "$tmp/a.conf" "$tmp/b.conf" --rps 100
refused compare__not_with_sweep "--sweep: not with --compare" \
	--compare "$tmp/a.conf" "$tmp/b.conf" --sweep rows=1,2
refused compare__stray_word "unexpected argument '$tmp/a.conf'" "$tmp/a.conf"

# compare__seed_and_seconds_apply_to_both
"$bin" sim --compare "$tmp/a.conf" "$tmp/b.conf" --seed 5 --seconds 1 >"$tmp/out" 2>&1
if grep -q "the same seed (5)" "$tmp/out" && [ "$(grep -c 'for 1 s' "$tmp/out")" = 2 ]; then
	ok compare__seed_and_seconds_apply_to_both
else
	bad compare__seed_and_seconds_apply_to_both "$(head -3 "$tmp/out")"
fi

# compare__help_documents_the_format
if "$bin" sim --help | grep -q "A setup file (.conf) holds one engine option a line, NAME = VALUE"; then
	ok compare__help_documents_the_format
else
	bad compare__help_documents_the_format "hotrow sim --help says nothing of .conf files"
fi

summary
