#!/bin/sh
# tests/lab/mutate.sh: scripts/mutate lists the mutants it should, refuses
# bad usage, and every reviewed equivalent in tests/mutate-allow/ is still
# a mutant of its solution (a stale entry would hide nothing, or the wrong
# thing). Lists only: nothing is built or run, so it is quick.
# Prints cmocka-style lines and summary, as scripts/run-tests reads them.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotrow-mutate-test-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
result() { # result NAME OK WHY
	echo "[ RUN      ] $1"
	if [ "$2" -eq 1 ]; then
		echo "[       OK ] $1"
		passed=$((passed + 1))
	else
		echo "    $3"
		echo "[  FAILED  ] $1"
		failed=$((failed + 1))
	fi
}
has() { grep -qF -- "$1" "$tmp/list"; }

"$root/scripts/mutate" --list 01-hot-row >"$tmp/list" 2>/dev/null
ok=1
has 'mutant: sql-where hot_row.c: rc = kit_db_exec(db, "UPDATE posts SET likes = likes + 1 WHERE id = $1", 1, params); => rc = kit_db_exec(db, "UPDATE posts SET likes = likes + 1", 1, params);' || ok=0
has 'mutant: drop hot_row.c: kit_db_rollback(db); => (dropped)' || ok=0
has 'mutant: cmp hot_row.c: if (rc == 0 && kit_db_changes(db) != 1) => if (rc == 0 && kit_db_changes(db) == 1)' || ok=0
grep -q '^+[[:space:]]*rc = kit_db_exec(db, "UPDATE posts SET likes = likes + 1", 1, params);$' "$tmp/list" || ok=0
result mutate__lists_clause_drop_and_flip "$ok" "scripts/mutate --list 01-hot-row lacks a mutant it must make"

# Only code: no mutant touches the comment lines of the solution.
ok=1
grep -q '^[-+][ 	]*\(/\*\| \*\)' "$tmp/list" && ok=0
result mutate__leaves_comments_alone "$ok" "a mutant changes a comment line"

ok=1
for bad in "--only nosuch 01-hot-row" "" "--jobs 0 01-hot-row" "99-nolab" "--nosuch 01-hot-row"; do
	# shellcheck disable=SC2086
	"$root/scripts/mutate" $bad >/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
		ok=0
		echo "    scripts/mutate $bad: exit $rc, $(wc -l <"$tmp/err") lines on stderr"
	fi
done
result mutate__bad_usage_exits_2_with_one_line "$ok" "expected exit 2 and a one-line error"

ok=1
for allow in "$root"/tests/mutate-allow/[0-9][0-9]-*.txt; do
	[ -f "$allow" ] || continue
	lab=$(basename "$allow" .txt)
	"$root/scripts/mutate" --list "$lab" 2>/dev/null | sed -n 's/^mutant: \(.*\)  (allowlisted)$/\1/p' >"$tmp/keys"
	sed -n 's/^mutant: //p' "$allow" | while IFS= read -r key; do
		grep -qxF -- "$key" "$tmp/keys" || echo "    $allow: no mutant has the key: $key"
	done >"$tmp/stale"
	[ -s "$tmp/stale" ] && { ok=0; cat "$tmp/stale"; }
done
result mutate__allowlist_entries_are_mutants "$ok" "review the entries above again (the solution changed?)"

echo "[==========] $((passed + failed)) test(s) run."
echo "[  PASSED  ] $passed test(s)."
[ "$failed" -eq 0 ] || echo "[  FAILED  ] $failed test(s)."
[ "$failed" -eq 0 ]
