#!/bin/sh
# tests/slides/check.sh: `hotrow slides --check`, the preflight.
#   - the shipped deck passes it (--quick: the engine's commands, every
#     Reveal: and Embed:, every layout) at the room's two screen sizes,
#     160x45 with LANG=C.UTF-8 and 100x30 with LANG=C, without PostgreSQL;
#   - and it can fail: a small deck whose reveal fails, whose line is cut,
#     whose Expect: names a number the command no longer prints, whose
#     Run: leaves a process running and whose Run: needs PostgreSQL gets
#     each reported, and exit 1;
#   - the deck's Run: lines build nothing `make test` alone builds, start
#     no server, and go through scripts/needs-pg for PostgreSQL; the
#     title slide shows no authoring notes.
# The deck's commands say build/hotrow: this runs from the kit's root.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
. "$root/tests/harness/check.sh"
trap 'rm -rf "$tmp"' EXIT INT TERM

for run in "C.UTF-8 160x45" "C 100x30"; do
	set -- $run
	name=check__shipped_deck_$(echo "$1_$2" | tr -c 'a-zA-Z0-9\n' _)
	if env -u HOTROW_PG_URL LANG="$1" LC_ALL= "$bin" slides --check --quick --size "$2" \
		>"$tmp/out" 2>&1 && grep -q ' 0 problems$' "$tmp/out"
	then ok "$name"
	else bad "$name" "$(grep -v '^checking' "$tmp/out" | head -5 | tr '\n' '|')"; fi
done

# Run: lines are self-contained: nothing that only `make test` builds
# (build/labs/...), no server started inline, PostgreSQL through
# scripts/needs-pg (it says "needs PostgreSQL: skipped" without one).
deck=slides/hot-rows.md
runs=$(sed -n 's/^Run: //p' "$deck")
bad_runs=$(printf '%s\n' "$runs" | grep -e 'build/labs/' -e 'scripts/pg up' -e 'pg-up' |
	head -2 | tr '\n' '|')
pg_runs=$(printf '%s\n' "$runs" | grep 'HOTROW_PG_URL' | grep -v '^`scripts/needs-pg ' | head -2 | tr '\n' '|')
if [ -z "$bad_runs$pg_runs" ]; then ok check__run_lines_self_contained
else bad check__run_lines_self_contained "$bad_runs$pg_runs"; fi

# The title slide shows the room the talk, not how to edit the deck.
if "$bin" slides "$deck" --dump 1 | grep -q -e 'Slides are separated' -e 'speaker notes'
then bad check__no_authoring_notes_on_screen "$("$bin" slides "$deck" --dump 1 | sed -n 6,7p)"
else ok check__no_authoring_notes_on_screen; fi

cat >"$tmp/bad.md" <<'DECK'
# A broken deck

| a table | with a cell that is one word far too long for a narrow screen |
|---|---|
| x | Supercalifragilisticexpialidociousandthensomemorelettersthatneverend |

Reveal: `echo 'mean latency 6.1 ms'; exit 3`
Expect: mean latency 6\.0

---

## Leaves a process running

Run: `sleep 60 >/dev/null 2>&1 & echo started`

---

## Needs PostgreSQL

Run: `scripts/needs-pg build/hotrow lab run 02 --solutions --db "$HOTROW_PG_URL"`
DECK
start=$(date +%s)
env -u HOTROW_PG_URL "$bin" slides "$tmp/bad.md" --check --size 60x20 >"$tmp/bad" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
if [ $rc = 1 ] && grep -q 'slide 1 .*Reveal: exit 3' "$tmp/bad" &&
   grep -q 'slide 1 .*no longer prints /mean latency 6\\.0/' "$tmp/bad" &&
   grep -q 'slide 1 .*cut at the right edge' "$tmp/bad" &&
   grep -q 'slide 2 .*left running: sleep (stopped)' "$tmp/bad" &&
   grep -q 'slide 3 .*needs PostgreSQL: skipped' "$tmp/bad" && [ "$took" -lt 30 ]
then ok check__reports_each_problem
else bad check__reports_each_problem "exit $rc in ${took}s: $(tr '\n' '|' <"$tmp/bad")"; fi
summary
