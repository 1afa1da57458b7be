#!/bin/sh
# tests/lab/parts.sh: `hotrow lab check NN --part NAME` end to end on Lab 02,
# in a scratch copy of the kit (as runner.sh does), on SQLite only: the
# solution's part passes and says so without marking the lab done, only
# that part's checks run, the skeleton's part fails, a part that does not
# exist is a usage error naming the parts, and `--part` alone lists them.
# `lab hint 02 --part P` walks only P's hints, and the lab's order goes on
# from what was seen; every lab with a parts file lists its parts.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${HOTROW_BIN:-$root/build/hotrow}
. "$root/tests/harness/check.sh"
. "$root/tests/harness/kit.sh"
if [ ! -x "$bin" ]; then
	check_bad parts__binary "$bin is missing; run make first"
	summary
fi
if [ ! -d "$root/solutions/02-sharded" ] || [ ! -f "$root/labs/02-sharded/parts" ]; then
	skip parts "no solutions/02-sharded or labs/02-sharded/parts here"
	summary
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotrow-parts-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
kit=$tmp/kit
kit_copy "$kit"
export HOTROW_ROOT="$kit" HOTROW_LAB_ONLY=sqlite NO_COLOR=1
unset HOTROW_LAB_CHECKS HOTROW_LAB_ORDER
out=$tmp/out err=$tmp/err
hl() { (cd "$kit" && "$bin" lab "$@") >"$out" 2>"$err" </dev/null; }
t() { current=$1; echo "[ RUN      ] $1"; }
ok() { check_ok "$current"; }
bad() {
	sed 's/^/    out: /' "$out" | head -n 30
	sed 's/^/    err: /' "$err" | head -n 5
	check_bad "$current" "$*"
}
has() { grep -q -- "$1" "$out"; }

t parts__solution_part_passes_without_marking_the_lab
mkdir -p "$kit/.hotrow"
printf '02-sharded passed=3 total=15 hints=0\n' >"$kit/.hotrow/progress"
cp "$kit/.hotrow/progress" "$tmp/progress.before"
hl check 02 --part increment --solutions --db sqlite; rc=$?
if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
elif ! has "^part increment of Lab 02: \([1-9][0-9]*\) of \1 checks passing"; then bad "no 'part increment of Lab 02: X of X checks passing'"
elif ! has "part increment done"; then bad "does not say 'part increment done'"
elif has "Lab 02 done"; then bad "says the whole lab is done"
elif ! cmp -s "$kit/.hotrow/progress" "$tmp/progress.before"; then bad "the lab's progress changed: $(cat "$kit/.hotrow/progress")"
else ok; fi

t parts__runs_only_the_part_s_checks
# shard_resize is the other part's: none of its checks may run or count.
if grep -q 'shard_resize__' "$out"; then bad "a check of shard_resize ran under --part increment"
elif ! has 'shard_increment__' || ! has 'shard_read__' || ! has 'shard_choose_n__'; then bad "a function of the part has no check shown"
else ok; fi

t parts__skeleton_part_fails
hl check 02 --part resize; rc=$?
if [ $rc -ne 1 ]; then bad "exit $rc, want 1"
elif ! has "^part resize of Lab 02: [0-9][0-9]* of [1-9]"; then bad "no 'part resize of Lab 02: X of N'"
elif has "part resize done"; then bad "a failing part says done"
elif grep -v '^  *\(ok\|FAIL\|skip\) *shard_resize__' "$out" | grep -q '^  *\(ok\|FAIL\) '; then bad "a check outside shard_resize ran"
elif ! has "README.md (section 5)" || ! has "check 02 --part resize"; then bad "the next step does not name the part's section and command"
elif ! cmp -s "$kit/.hotrow/progress" "$tmp/progress.before"; then bad "the lab's progress changed"
else ok; fi

t parts__unknown_part_is_usage_error
hl check 02 --part nope; rc=$?
if [ $rc -ne 2 ]; then bad "exit $rc, want 2"
elif [ "$(wc -l <"$err")" -ne 1 ] || ! grep -q "no part 'nope'.*increment, resize" "$err"; then bad "want one line listing the parts"
else ok; fi

t parts__listed_with_minutes
# The minutes as the parts file gives them (scripts/lab-sizes keeps them).
part_minutes() { awk -v p="$1" '$1 == p { print $NF }' labs/02-sharded/parts; }
hl check 02 --part; rc1=$?
cp "$out" "$tmp/alone"
hl parts 02; rc2=$?
if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then bad "exit $rc1 / $rc2, want 0"
elif ! cmp -s "$out" "$tmp/alone"; then bad "--part alone and 'lab parts 02' differ"
elif ! has "increment  *$(part_minutes increment) min.*shard_increment" ||
     ! has "resize  *$(part_minutes resize) min.*shard_resize"; then bad "no part with its minutes and functions"
else ok; fi

t parts__lab_without_parts
hl check 01 --part increment; rc=$?
if [ $rc -ne 2 ] || ! grep -q "no parts" "$err"; then bad "exit $rc, want 2 saying Lab 01 has no parts"
else ok; fi

t parts__hint_walks_the_part_s_hints
# The part's hints are the ones tagged [part:resize], in the file's order.
part_hints() { awk -v p="[part:$1]" '/^## Hint/ && index($0, p) { sub(/:.*/, "", $3); print $3 }' \
	"$root/labs/02-sharded/hints.md"; }
first=$(part_hints resize | sed -n 1p) second=$(part_hints resize | sed -n 2p)
other=$(part_hints increment | sed -n 1p)
rm -f "$kit/.hotrow/progress"
hl hint 02 --part resize; rc1=$?
cp "$out" "$tmp/hint1"
hl hint 02 --part resize; rc2=$?
if [ -z "$first" ] || [ -z "$second" ] || [ -z "$other" ]; then bad "labs/02-sharded/hints.md has no [part:] tags"
elif [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then bad "exit $rc1 / $rc2, want 0"
elif ! grep -q "^Hint $first of [0-9]*: " "$tmp/hint1"; then bad "the first call did not reveal hint $first: $(grep '^Hint' "$tmp/hint1")"
elif ! grep -q "again reveals hint $second" "$tmp/hint1" || ! grep -q -- "--part resize" "$tmp/hint1"; then bad "it does not point at the part's next hint ($second)"
elif ! has "^Hint $first of .*(shown before)" || ! has "^Hint $second of [0-9]*: "; then bad "the second call did not show $first as before and reveal $second"
elif grep -q "^Hint $other of" "$tmp/hint1" "$out"; then bad "hint $other, of part increment, was shown for part resize"
else ok; fi

t parts__hint_without_part_keeps_the_lab_s_order
# Hints seen through a part stay seen; the lab's order reveals the first
# one not seen yet, and the set survives in .hotrow/progress.
hl hint 02; rc=$?
if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
elif ! has "^Hint $other of [0-9]*: "; then bad "did not reveal hint $other: $(grep '^Hint' "$out")"
elif has "^Hint $first of [0-9]*: [^(]*$"; then bad "revealed hint $first again"
elif ! grep -q "^02-sharded .* seen=[0-9a-f]" "$kit/.hotrow/progress"; then bad "no seen= set in .hotrow/progress"
else ok; fi

t parts__hint_of_an_unknown_part_is_usage_error
hl hint 02 --part nope; rc=$?
if [ $rc -ne 2 ] || ! grep -q "no part 'nope'" "$err"; then bad "exit $rc, want 2 naming the parts"
else ok; fi

t parts__every_split_lab_lists_its_parts
# Each lab with a parts file: `lab parts` lists each line's part.
why=
for f in "$root"/labs/[0-9][0-9]-*/parts; do
	lab=$(basename "$(dirname "$f")")
	hl parts "${lab%%-*}" || { why="lab parts ${lab%%-*}: exit $?"; break; }
	for p in $(awk '!/^#/ && NF { print $1 }' "$f"); do
		has "^  $p  *[0-9]* min" || { why="lab parts ${lab%%-*} does not list $p"; break 2; }
	done
done
if [ -n "$why" ]; then bad "$why"; else ok; fi
summary
