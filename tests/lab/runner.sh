#!/bin/sh
# tests/lab/runner.sh: end-to-end checks of `hotrow lab` on a real lab.
#
# Copies the kit's sources (no .git or .hotrow/; of build/ only the kit's
# objects and libraries, so the copy need not compile them again) to a
# temporary directory and drives build/hotrow there with HOTROW_ROOT
# pointing at the copy, so the real exercises/ and .hotrow/ are never
# touched. Runs on SQLite only (HOTROW_LAB_ONLY=sqlite) to stay quick.
# The second half plants hostile code in a tiny lab 99 (endless loops,
# sleeps, forks, crashes, floods of output, forged cmocka lines) and checks
# that the runner stays in charge. Prints cmocka-style lines and the
# summary scripts/run-tests adds up (tests/harness/check.sh):
#   [ RUN      ] runner__name   [       OK ] / [  FAILED  ] runner__name: why
#   [  PASSED  ] N test(s).     [  FAILED  ] N test(s), listed below:
#
#   tests/lab/runner.sh                 uses $HOTROW_BIN (make sets it to
#                                       the build's binary), else build/hotrow
#   HOTROW_BIN=... LAB=02 tests/lab/runner.sh
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${HOTROW_BIN:-$root/build/hotrow}
lab=${LAB:-01}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
. "$root/tests/harness/check.sh"
. "$root/tests/harness/kit.sh"

if [ ! -x "$bin" ]; then
	check_bad runner__binary "$bin is missing; run make first"
	summary
fi
labdir=$(cd "$root" && ls -d labs/"$lab"-*/ 2>/dev/null | head -n 1)
if [ -z "$labdir" ]; then
	skip runner "no labs/$lab-*/ in this tree"
	summary
fi
name=$(basename "$labdir")
if [ ! -d "$root/solutions/$name" ]; then
	skip runner "no solutions/$name (a student kit?)"
	summary
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotrow-runner-XXXXXX")
watch_pid=
cleanup() {
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
kit=$tmp/kit
kit_copy "$kit"

# Only the lab under test, plus a tiny lab 99 so "every lab" means two:
# quicker to build, and immune to other labs being half-written.
for d in "$kit"/labs/[0-9][0-9]-*/; do
	other=$(basename "$d")
	[ "$other" = "$name" ] && continue
	rm -rf "$kit/labs/$other" "$kit/exercises/$other" "$kit/solutions/$other" \
		"$kit/tests/labs/$other" "$kit/tests/mutants/$other"
done
tiny=99-tiny
mkdir -p "$kit/labs/$tiny" "$kit/exercises/$tiny" "$kit/solutions/$tiny" "$kit/tests/labs/$tiny"
printf '# Lab 99 \342\200\224 Tiny\n\n## 1. The answer\n' >"$kit/labs/$tiny/README.md"
printf '# Hints \342\200\224 Lab 99\n\n## Hint 1: Ask [answer]\nIt is 42.\n\n## Hint 2: Ask again [again]\nStill 42.\n\n## Hint 3: The shape of the answer\nreturn 42;\n' >"$kit/labs/$tiny/hints.md"
printf 'int tiny_answer(void);\n' >"$kit/labs/$tiny/tiny.h"
# tiny_c SIDE BODY [TOP]: the lab's one function, with BODY inside.
tiny_c() {
	printf '#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n#include "labs/%s/tiny.h"\n%s\nint tiny_answer(void) { %s }\n' \
		"$tiny" "${3:-}" "$2" >"$kit/$1/$tiny/tiny.c"
}
tiny_c exercises 'return 0;'
tiny_c solutions 'return 42;'
# before_c BODY [TOP]: code of the checks' own (not audited, as a lab's
# tests are not), run at the start of the first check: what the runner
# must survive at run time even where the audit would refuse it.
before_c() {
	printf '#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n#include "tests/harness/labtest.h"\n%s\nvoid tiny_before(void);\nvoid tiny_before(void) { %s }\n' \
		"${2:-}" "$1" >"$kit/tests/labs/$tiny/before.c"
}
before_c ''
cat >"$kit/tests/labs/$tiny/test_tiny.c" <<TINY
#include "tests/harness/labtest.h"
#include "labs/$tiny/tiny.h"
void tiny_before(void);
static void tiny_answer__is_42(void **state)
{
	(void)state;
	tiny_before();
	lt_expect_int_hint(tiny_answer(), 42, "the answer", "answer again");
}
static void tiny_answer__again(void **state)
{
	(void)state;
	lt_expect_int_hint(tiny_answer(), 42, "the answer, asked again", "answer");
}
static void tiny_answer__third_time(void **state)
{
	(void)state;
	int got = tiny_answer();
	lt_say("predicted 42, measured %d", got);
	lt_expect_int_hint(got, 42, "the answer, a third time", "again");
}
static void tiny_answer__on_the_server(void **state)
{
	(void)state;
	lt_expect_int(tiny_answer(), 42, "the answer, next to a PostgreSQL");
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tiny_answer__is_42),
		cmocka_unit_test(tiny_answer__again),
		cmocka_unit_test(tiny_answer__third_time),
		LABTEST_PG(tiny_answer__on_the_server),
	};
	return labtest_main("$tiny", tests);
}
TINY
# A driver, so `lab run 99` has something to run: it calls the answer once.
cat >"$kit/labs/$tiny/run.c" <<TINY
#include <stdio.h>
#include <stdlib.h>
#include "labs/$tiny/tiny.h"
int main(int argc, char **argv)
{
	int a = tiny_answer();
	printf("the answer is %d\\n", a);
	for (int i = 0; i < argc; i++)
		printf("argv[%d] %s\\n", i, argv[i]);
	printf("database from the environment: %s\\n", getenv("HOTROW_RUN_DB") ? "yes" : "no");
	return a == 42 ? 0 : 1;
}
TINY

cp "$bin" "$tmp/hotrow" && bin=$tmp/hotrow   # immune to a relink meanwhile
export HOTROW_ROOT="$kit" HOTROW_LAB_ONLY=sqlite NO_COLOR=1
unset HOTROW_PG_URL HOTROW_REQUIRE_PG MAKEFLAGS MAKELEVEL MFLAGS
ex=$(ls "$kit/exercises/$name"/*.c | head -n 1)
cp "$ex" "$tmp/pristine.c"

out=$tmp/out err=$tmp/err
hl() { (cd "$kit" && "$bin" lab "$@") >"$out" 2>"$err" </dev/null; }

# t NAME: start a check; ok / bad REASON end it (bad shows what hotrow
# printed).
t() { current=$1; echo "[ RUN      ] $1"; }
ok() { check_ok "$current"; }
bad() {
	sed 's/^/    out: /' "$out" | head -n 40
	sed 's/^/    err: /' "$err" | head -n 10
	check_bad "$current" "$*"
}
has() { grep -q -- "$1" "$out"; }

t runner__list_shows_every_lab
hl; rc=$?
if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
elif ! has "$lab " || ! has "not started" || ! has "hotrow lab check $lab"; then bad "no lab $lab, status or next step"
else ok; fi

t runner__suggests_the_command_as_typed
# A student runs build/hotrow, not an installed hotrow: what the runner
# tells them to type next must work when pasted.
mkdir -p "$kit/build" && ln -sf "$bin" "$kit/build/hotrow"
(cd "$kit" && build/hotrow lab) >"$out" 2>"$err" </dev/null; rc=$?
if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
elif ! has "  check    build/hotrow lab check $lab "; then bad "the next step does not say build/hotrow"
else ok; fi
rm -f "$kit/build/hotrow"

t runner__unknown_lab_is_usage_error
hl check 77; rc=$?
if [ $rc -ne 2 ]; then bad "exit $rc, want 2"
elif [ "$(wc -l <"$err")" -ne 1 ] || ! grep -q "unknown lab '77'.*$name" "$err"; then bad "want one line naming the labs"
else ok; fi

t runner__bad_option_is_usage_error
hl check "$lab" --frobnicate; rc=$?
if [ $rc -ne 2 ] || ! grep -q -- "--frobnicate" "$err"; then bad "exit $rc, want 2 naming the option"
else ok; fi

t runner__help_for_every_command
missing=
for c in "" list check parts hint watch run grade reset; do
	# shellcheck disable=SC2086
	hl $c --help || missing="$missing ${c:-lab}"
	has "usage: hotrow lab" || missing="$missing ${c:-lab}(text)"
done
if [ -n "$missing" ]; then bad "--help failed for:$missing"; else ok; fi

t runner__check_skeleton_fails_with_expected_got
hl check "$lab"; rc=$?
if [ $rc -ne 1 ]; then bad "exit $rc, want 1"
elif ! has "FAIL " || ! has "expected .*, got "; then bad "no failed check with expected vs got"
elif ! has "Hint for" && ! has "hotrow lab hint $lab"; then bad "no hint and no pointer to one"
elif ! grep -q "^$name passed=[0-9]* total=[1-9]" "$kit/.hotrow/progress"; then bad "progress not recorded"
else ok; fi

t runner__db_password_hidden
# A class URL carries the student's password; the screen may be projected.
url="postgresql://student7:s3cretpw@/db?host=$tmp/nowhere"
hl check "$lab" --db "$url"; cat "$out" "$err" >"$tmp/check"
hl run "$lab" --db "$url"; cat "$out" "$err" >"$tmp/run"; cat "$tmp/check" "$tmp/run" >"$out"
if grep -q s3cretpw "$out"; then bad "the password is on screen"
elif ! has "PostgreSQL: postgresql://student7:\*\*\*@/db" || ! grep -q "student7:\*\*\*@" "$tmp/run"
then bad "want the URL with the password as ***"
else ok; fi

t runner__list_shows_progress
hl; rc=$?
if [ $rc -ne 0 ] || ! has "of [0-9]* checks passing"; then bad "no 'N of M checks passing'"; else ok; fi

t runner__check_solutions_passes
hl check "$lab" --solutions; rc=$?
if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
elif has "FAIL " || ! has "checks passing"; then bad "a check failed against the solution"
else ok; fi

t runner__check_solutions_passes_the_race_pass
if ! has "no race in the [0-9]* checks"; then bad "no race pass, or it found a race in the solution"
else ok; fi

# The race pass: a counter every liker thread adds to with no lock, in a
# copy of the solution. The plain checks pass it; ThreadSanitizer does not.
sol=$(ls "$kit/solutions/$name/"*.c | head -n 1)
cp "$sol" "$tmp/solution.c"
if [ "$name" = 01-hot-row ] && "$py" - "$sol" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
i = s.index("int like_post(")
j = s.index("\n{\n", i) + 3
s = s[:i] + "static long likes_seen;\n\n" + s[i:j] + "\tlikes_seen++;\n" + s[j:]
open(p, "w").write(s)
PY
then
	t runner__race_pass_fails_a_data_race
	hl check "$lab" --solutions; rc=$?
	if [ $rc -ne 1 ]; then bad "exit $rc, want 1"
	elif ! has "under ThreadSanitizer, a data race" || ! has "like_post (solutions/$name/"; then
		bad "no data race named in like_post"
	elif ! has "of [0-9]* checks passing" || has "Lab $lab done"; then bad "no count, or done"
	else ok; fi

	t runner__race_pass_skipped_with_no_races
	hl check "$lab" --solutions --no-races; rc=$?
	if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
	elif ! has "Races: not checked (--no-races)"; then bad "no line saying the race pass was skipped"
	else ok; fi
fi
cp "$tmp/solution.c" "$sol"

t runner__hint_reveals_in_order
hl hint "$lab"; rc1=$?; cp "$out" "$tmp/hint1"
hl hint "$lab"; rc2=$?
if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then bad "exit $rc1/$rc2, want 0"
elif ! grep -q "^Hint 1 of" "$tmp/hint1"; then bad "first call did not show hint 1"
elif ! has "Hint 2 of" && ! has "last hint"; then bad "second call did not move on"
elif ! grep -q "^$name .*hints=[12]" "$kit/.hotrow/progress"; then bad "hints revealed not recorded"
else ok; fi

t runner__compile_error_shows_compiler
printf '\nint this_does_not_compile(void) { return }\n' >>"$kit/exercises/$name/$(basename "$ex")"
hl check "$lab"; rc=$?
if [ $rc -ne 1 ]; then bad "exit $rc, want 1"
elif ! has "does not compile" || ! has "error:"; then bad "no compiler message"
else ok; fi

t runner__reset_without_terminal_or_yes_is_usage_error
hl reset "$lab"; rc=$?
if [ $rc -ne 2 ] || cmp -s "$ex" "$tmp/pristine.c"; then bad "exit $rc (want 2) or the file changed without --yes"; else ok; fi

t runner__reset_restores_and_backs_up
hl reset "$lab" --yes; rc=$?
backup=$(ls -d "$kit/.hotrow/backup/$name"-* 2>/dev/null | head -n 1)
if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
elif ! cmp -s "$ex" "$tmp/pristine.c"; then bad "skeleton not restored"
elif [ -z "$backup" ] || ! grep -q this_does_not_compile "$backup/$(basename "$ex")"; then bad "student's file not in .hotrow/backup/"
else ok; fi

t runner__reset_twice_is_a_no_op
hl reset "$lab" --yes; rc=$?
if [ $rc -ne 0 ] || ! has "already the skeleton"; then bad "exit $rc or not recognised as pristine"; else ok; fi

json_score() { # json_score FILE -> "score max" or fails
	"$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
assert isinstance(d["tests"], list) and d["tests"]
for x in d["tests"]:
    assert set(("name","score","max_score","status","output")) <= set(x)
    assert x["status"] in ("passed","failed")
print(d["score"], d["max_score"])' "$1"
}
xml_ok() {
	"$py" -c 'import sys,xml.dom.minidom as m; d=m.parse(sys.argv[1]); assert d.getElementsByTagName("testcase")' "$1"
}

t runner__grade_skeletons_writes_reports
hl grade "$lab" --out "$tmp/grade"; rc=$?
s=$(json_score "$tmp/grade/results.json" 2>"$tmp/jerr")
if [ $rc -ne 1 ]; then bad "exit $rc, want 1 (skeletons fail)"
elif [ -z "$s" ]; then bad "results.json invalid: $(cat "$tmp/jerr")"
elif ! "$py" -m json.tool "$tmp/grade/results.json" >/dev/null; then bad "json.tool rejects results.json"
elif ! xml_ok "$tmp/grade/junit.xml"; then bad "junit.xml does not parse"
elif [ "${s% *}" -ge "${s#* }" ]; then bad "score $s: skeletons cannot score full marks"
elif ! has "^Score: "; then bad "no score line"
else ok; fi

t runner__grade_solutions_full_marks_every_lab
hl grade --solutions --out "$tmp/grade-sol"; rc=$?
s=$("$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
labs=sorted(set(x["name"].split(":")[0] for x in d["tests"]))
print(d["score"], d["max_score"], " ".join(labs))' "$tmp/grade-sol/results.json" 2>"$tmp/jerr")
# shellcheck disable=SC2086
set -- $s
if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
elif [ $# -lt 3 ]; then bad "results.json invalid: $(cat "$tmp/jerr")"
elif [ "$1" -ne "$2" ] || [ "$2" -eq 0 ]; then bad "score $1 of $2, want full marks"
elif [ "$3 ${4:-}" != "$name $tiny" ]; then bad "graded '$3 ${4:-}', want '$name $tiny'"
elif ! xml_ok "$tmp/grade-sol/junit.xml"; then bad "junit.xml does not parse"
elif ! has "^Score: $2/$2"; then bad "no 'Score: $2/$2' line"
else ok; fi

# On the tiny lab: a watch's checks are the same run as a lab check's,
# and each of lab 01's takes half a minute.
t runner__watch_rechecks_on_save
fifo=$tmp/keys
mkfifo "$fifo"
(cd "$kit" && exec "$bin" lab watch 99 <"$fifo" >"$tmp/watch" 2>&1) &
watch_pid=$!
exec 3>"$fifo"
wait_for() { # poll, at most ~60 s, so a broken watch cannot hang the suite
	i=0
	while [ $i -lt 600 ]; do
		grep -q "$1" "$tmp/watch" && return 0
		kill -0 "$watch_pid" 2>/dev/null || return 1
		sleep 0.1; i=$((i + 1))
	done
	return 1
}
if ! wait_for "\[watch 1\]"; then cp "$tmp/watch" "$out"; bad "first check never finished"
else
	cp "$kit/exercises/$tiny/tiny.c" "$tmp/tiny.c"
	cp "$tmp/tiny.c" "$kit/exercises/$tiny/tiny.c"   # a save (same text)
	if ! wait_for "\[watch 2\]"; then cp "$tmp/watch" "$out"; bad "a save did not trigger a check"
	else
		printf q >&3
		wait "$watch_pid"; rc=$?
		watch_pid=
		if [ $rc -gt 1 ]; then cp "$tmp/watch" "$out"; bad "exit $rc after q"; else ok; fi
	fi
fi
exec 3>&-

t runner__run_rejects_bad_threads
hl run "$lab" --threads 0; rc=$?
if [ $rc -ne 2 ] || ! grep -q -- "--threads" "$err"; then bad "exit $rc, want 2 naming --threads"; else ok; fi


# ---- hostile or broken student code, in the tiny lab ----
# Each case writes exercises/99-tiny/tiny.c and checks with a short
# --timeout; none may hang the runner or give the skeleton a pass.
leftovers() { # processes still running from a check's private copy
	pgrep -f "$kit/.hotrow/run/" 2>/dev/null | wc -l
}
settle() { # settle N: wait until no leftovers, at most N tenths of a second
	n=0
	while [ "$n" -lt "$1" ] && [ "$(leftovers)" -ne 0 ]; do sleep 0.1; n=$((n + 1)); done
}
compilers() { # compilers working in this test's kit (not another run's)
	for p in $(pgrep cc1 2>/dev/null); do
		case $(readlink "/proc/$p/cwd" 2>/dev/null) in "$tmp"/*) echo "$p" ;; esac
	done | wc -l
}
hostile() { # hostile BODY [TOP] [TIMEOUT]: check lab 99; sets rc, secs
	tiny_c exercises "$1" "${2:-}"
	s0=$(date +%s)
	hl check 99 --timeout "${3:-5}"; rc=$?
	secs=$(( $(date +%s) - s0 ))
}
# at_run BODY [TOP] [TIMEOUT]: BODY in the checks' own code (before_c),
# the exercise right; check lab 99; sets rc, secs.
at_run() {
	before_c "$1" "${2:-}"
	hostile 'return 42;' '' "${3:-5}"
	before_c ''
}
tiny_c exercises 'return 42;'
hl check 99 >/dev/null   # builds the tiny lab once, so timeouts below time the code

t runner__hostile_infinite_loop_times_out_naming_the_check
hostile 'for (;;) ; return 42;'
if [ $rc -ne 1 ]; then bad "exit $rc, want 1"
elif [ $secs -gt 30 ]; then bad "took $secs s with --timeout 5"
elif ! has "timed out" || ! has "tiny_answer__is_42"; then bad "no timeout naming the check"
elif ! has "0 of 3 checks"; then bad "want 0 of 3 (the maximum kept)"
elif [ "$(leftovers)" -ne 0 ]; then bad "test processes left running"
else ok; fi

t runner__hostile_sleep_600_times_out
hostile 'sleep(600); return 42;'
if [ $rc -ne 1 ] || [ $secs -gt 30 ] || ! has "timed out"; then bad "exit $rc after $secs s, want 1 and a timeout"
elif [ "$(leftovers)" -ne 0 ]; then bad "test processes left running"
else ok; fi

t runner__hostile_include_dev_zero_build_times_out
before_c '' '#include "/dev/zero"'
hostile 'return 42;' '' 2
before_c ''
if [ $rc -ne 1 ] || [ $secs -gt 40 ]; then bad "exit $rc after $secs s, want 1 within the build's limit"
elif ! has "took longer than"; then bad "no word that the build was stopped"
elif [ "$(compilers)" -ne 0 ]; then bad "the compiler still runs"
else ok; fi

t runner__hostile_50_forked_sleepers_are_killed
at_run 'for (int i = 0; i < 50; i++) if (fork() == 0) { sleep(600); _exit(0); }'
settle 10
if [ $rc -ne 0 ] || [ $secs -gt 30 ]; then bad "exit $rc after $secs s, want 0 (the answer is right) at once"
elif [ "$(leftovers)" -ne 0 ]; then bad "$(leftovers) forked children left running"
else ok; fi

t runner__hostile_printf_without_newline_keeps_verdicts
hostile 'printf("dbg "); return 42;'
if [ $rc -ne 0 ] || ! has "3 of 3 checks passing"; then bad "exit $rc, want 3 of 3"; else ok; fi

t runner__hostile_100mb_of_output_is_bounded
hostile 'static char line[1024]; for (int i = 0; i < 1023; i++) line[i] = 120; line[1023] = 0; for (int i = 0; i < 100 * 1024; i++) puts(line); return 0;' '' 60
if [ $rc -ne 1 ] || ! has "0 of 3 checks"; then bad "exit $rc, want 0 of 3"
elif ! has "bytes cut here"; then bad "no word of the output cut"
elif [ "$(wc -c <"$out")" -gt 200000 ]; then bad "$(wc -c <"$out") bytes shown"
else ok; fi

t runner__hostile_fake_cmocka_lines_do_not_pass
hostile 'static int once; if (!once++) { printf("[==========] Running 3 test(s).\n[ RUN      ] tiny_answer__is_42\n[       OK ] tiny_answer__is_42\n[ RUN      ] tiny_answer__again\n[       OK ] tiny_answer__again\n[ RUN      ] tiny_answer__third_time\n[       OK ] tiny_answer__third_time\n[  PASSED  ] 3 test(s).\n"); fflush(stdout); } return 0;'
if [ $rc -ne 1 ] || ! has "0 of 3 checks" || has "done"; then bad "exit $rc: the fake lines counted"; else ok; fi

t runner__hostile_early_exit_0_keeps_the_maximum
at_run 'exit(0);'
if [ $rc -ne 1 ] || ! has "0 of 3 checks"; then bad "exit $rc, want 0 of 3"
elif ! has "exited with status 0"; then bad "does not say the process exited"
else ok; fi

t runner__hostile_abort_names_the_signal
at_run 'abort();'
if [ $rc -ne 1 ] || ! has "0 of 3 checks" || ! has "Aborted"; then bad "exit $rc, want 0 of 3 and SIGABRT named"; else ok; fi

t runner__hostile_exit_255_is_not_a_signal
at_run 'exit(255);'
if [ $rc -ne 1 ] || ! has "exited with status 255" || has "Unknown signal"; then bad "exit $rc, want 'exited with status 255'"; else ok; fi

t runner__crash_in_a_check_is_said_in_words
at_run 'raise(SIGSEGV);'
if [ $rc -ne 1 ] || ! has "crashed: Segmentation fault.*pointer"; then bad "exit $rc, want the crash named"
elif has "Test failed with exception"; then bad "cmocka's own crash line shown"
else ok; fi

# A crash while another thread holds the output's locks (as a crash
# inside malloc leaves malloc's lock held): cmocka's handler, which
# prints, would wait for ever; the harness gives it 10 s, then the
# program dies of its crash, said in words, well inside --timeout 40.
t runner__crash_while_the_output_is_held_is_said_in_words
at_run 'pthread_t th; pthread_create(&th, NULL, hold_output, NULL); while (!held) usleep(1000); raise(SIGSEGV);' \
	'#include <pthread.h>
#include <stdatomic.h>
static atomic_int held;
static void *hold_output(void *a) { (void)a; flockfile(stdout); flockfile(stderr); atomic_store(&held, 1); for (;;) pause(); return NULL; }' 40
if [ $rc -ne 1 ] || ! has "crashed: Segmentation fault"; then
	bad "exit $rc after $secs s, want the crash named: $(tail -4 "$out" | tr '\n' ' ')"
elif has "timed out"; then bad "the check timed out ($secs s) instead of ending with its crash"
elif [ $secs -gt 30 ]; then bad "took $secs s"
else ok; fi

t runner__index_past_a_fixed_array_stops_the_check
hostile 'static int slot[4]; volatile int i = 4; slot[i] = 42; return slot[i];'
if [ $rc -ne 1 ] || ! has "crashed: Illegal instruction.*fixed-size array"; then
	bad "exit $rc, want the write past slot[3] stopped and said in words"
elif has "checks passing" && ! has "0 of 3 checks"; then bad "a check passed over the bad index"
else ok; fi

t runner__hostile_crash_under_lab_run_is_reported
tiny_c exercises 'raise(SIGSEGV); return 42;'
hl run 99; rc=$?
if [ $rc -ne 1 ]; then bad "exit $rc, want 1 (hotrow itself must not die)"
elif ! grep -q "Segmentation fault" "$err"; then bad "the crash is not named"
else ok; fi

t runner__hostile_sigterm_to_the_runner_ends_the_group
tiny_c exercises 'sleep(600); return 42;'
grep "^$tiny " "$kit/.hotrow/progress" >"$tmp/progress-before"
(cd "$kit" && exec "$bin" lab check 99 --timeout 300) >"$out" 2>"$err" </dev/null &
rpid=$!
i=0; while [ $i -lt 100 ] && [ "$(leftovers)" -eq 0 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM "$rpid"
s0=$(date +%s); wait "$rpid"; rc=$?; secs=$(( $(date +%s) - s0 ))
settle 5
if [ $secs -gt 10 ]; then bad "the runner took $secs s to stop"
elif [ "$(leftovers)" -ne 0 ]; then bad "test processes outlived the runner"
elif [ $rc -eq 0 ]; then bad "exit 0 after SIGTERM"
elif ! grep "^$tiny " "$kit/.hotrow/progress" | cmp -s - "$tmp/progress-before"; then
	bad "the stopped run was recorded as progress"
else ok; fi

t runner__ctrl_c_on_check_ends_the_group_unrecorded
tiny_c exercises 'sleep(600); return 42;'
grep "^$tiny " "$kit/.hotrow/progress" >"$tmp/progress-before"
(cd "$kit" && exec "$bin" lab check 99 --timeout 300) >"$out" 2>"$err" </dev/null &
rpid=$!
i=0; while [ $i -lt 100 ] && [ "$(leftovers)" -eq 0 ]; do sleep 0.1; i=$((i + 1)); done
kill -INT "$rpid"
s0=$(date +%s); wait "$rpid"; rc=$?; secs=$(( $(date +%s) - s0 ))
settle 5
if [ $rc -ne 130 ]; then bad "exit $rc after Ctrl-C, want 130"
elif [ $secs -gt 10 ] || [ "$(leftovers)" -ne 0 ]; then bad "took $secs s, or test processes outlived it"
elif ! grep "^$tiny " "$kit/.hotrow/progress" | cmp -s - "$tmp/progress-before"; then
	bad "the interrupted run was recorded as progress"
else ok; fi

t runner__two_checks_at_once
tiny_c exercises 'usleep(300000); return 42;'
(cd "$kit" && "$bin" lab check 99) >"$tmp/c1" 2>&1 </dev/null & p1=$!
(cd "$kit" && "$bin" lab check 99) >"$tmp/c2" 2>&1 </dev/null & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
if [ $r1 -ne 0 ] || [ $r2 -ne 0 ] || grep -q "busy" "$tmp/c1" "$tmp/c2"; then
	cp "$tmp/c2" "$out"; bad "exits $r1/$r2, want 0/0"
else ok; fi

t runner__watch_q_during_a_check
tiny_c exercises 'sleep(600); return 42;'
(cd "$kit" && exec "$bin" lab watch 99 <"$fifo" >"$tmp/watch" 2>&1) &
watch_pid=$!
exec 3>"$fifo"
i=0; while [ $i -lt 100 ] && [ "$(leftovers)" -eq 0 ]; do sleep 0.1; i=$((i + 1)); done
printf q >&3
s0=$(date +%s); wait "$watch_pid"; rc=$?; secs=$(( $(date +%s) - s0 )); watch_pid=
exec 3>&-
if [ $secs -gt 10 ]; then bad "q took $secs s"
elif [ "$(leftovers)" -ne 0 ]; then bad "the check outlived the watch"
else ok; fi

t runner__watch_a_saved_fix_during_a_check
tiny_c exercises 'sleep(600); return 42;'
(cd "$kit" && exec "$bin" lab watch 99 <"$fifo" >"$tmp/watch" 2>&1) &
watch_pid=$!
exec 3>"$fifo"
i=0; while [ $i -lt 100 ] && [ "$(leftovers)" -eq 0 ]; do sleep 0.1; i=$((i + 1)); done
tiny_c exercises 'return 42;'   # the fix, saved while the check sleeps
i=0; while [ $i -lt 300 ] && ! grep -q "3 of 3 checks passing" "$tmp/watch"; do sleep 0.1; i=$((i + 1)); done
printf q >&3
wait "$watch_pid"; watch_pid=
exec 3>&-
if ! grep -q "3 of 3 checks passing" "$tmp/watch"; then cp "$tmp/watch" "$out"; bad "the saved fix was not checked"
elif [ "$(leftovers)" -ne 0 ]; then bad "the stopped check outlived the watch"
else ok; fi

t runner__watch_restores_the_terminal_after_a_crash
tiny_c exercises 'return 42;'
if "$py" - "$bin" "$kit" >"$out" 2>&1 <<'PY'
import os, pty, signal, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    os.chdir(sys.argv[2])
    os.execv(sys.argv[1], [sys.argv[1], "lab", "watch", "99"])
buf, t0 = b"", time.time()
while b"[watch 1]" not in buf and time.time() - t0 < 60:
    try:
        buf += os.read(fd, 4096)
    except OSError:
        break
lflag = termios.tcgetattr(fd)[3]
raw = not (lflag & termios.ICANON) and not (lflag & termios.ECHO)
os.kill(pid, signal.SIGSEGV)
os.waitpid(pid, 0)
lflag = termios.tcgetattr(fd)[3]
back = bool(lflag & termios.ICANON) and bool(lflag & termios.ECHO)
print("raw while watching:", raw, "restored after SEGV:", back)
sys.exit(0 if raw and back else 1)
PY
then ok; else bad "the terminal was left as the watch set it"; fi


# ---- forged grades: code that reaches for its judge is refused ----
# Each forge below passed every check before the audit; now the exercise
# is refused with one line naming the symbol and the rule, and nothing of
# it runs.
refused() { # refused PATTERN: one refusal line matching it, no verdicts
	[ $rc -eq 1 ] && [ "$(grep -c "^Refused, not run: exercises/$tiny/" "$out")" -eq 1 ] &&
		grep -q "^Refused, not run: exercises/$tiny/[a-z]*\.[ch].*\($1\)" "$out" &&
		! has "checks passing" && ! has "done"
}

t runner__forge_fail_handler_is_refused
hostile 'return 0;' 'void _fail(const char *file, const int line); void _fail(const char *file, const int line) { (void)file; (void)line; }'
if ! refused '_fail'; then bad "exit $rc: a _fail of the exercise's own was not refused"
else
	hl grade 99 --out "$tmp/grade-forged"
	if ! has "Score: 0/3" || ! has "refused, not run: .*_fail"; then bad "the grade of a refused lab is not 0"
	else ok; fi
fi

t runner__forge_interposed_cmocka_is_refused
hostile 'return 0;' '#include <dlfcn.h>
struct t_ { const char *n; void (*f)(void **); int (*s)(void **); int (*d)(void **); void *st; };
static void empty(void **st) { (void)st; }
int _cmocka_run_group_tests(const char *g, struct t_ *t, size_t n, void *s, void *d);
int _cmocka_run_group_tests(const char *g, struct t_ *t, size_t n, void *s, void *d)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].st)
			((struct t_ *)t[i].st)->f = empty;
	int (*real)(const char *, struct t_ *, size_t, void *, void *) =
		(int (*)(const char *, struct t_ *, size_t, void *, void *))dlsym(RTLD_NEXT, "_cmocka_run_group_tests");
	return real(g, t, n, s, d);
}'
if ! refused '_cmocka_run_group_tests\|dlsym'; then bad "exit $rc: an interposed cmocka was not refused"; else ok; fi

t runner__forge_constructor_on_the_report_fd_is_refused
hostile 'return 0;' '__attribute__((constructor)) static void forge(void)
{
	static const char b[] = "start tiny_answer__is_42\nend tiny_answer__is_42 pass\nstart tiny_answer__again\nend tiny_answer__again pass\nstart tiny_answer__third_time\nend tiny_answer__third_time pass\n";
	if (write(3, b, sizeof b - 1) < 0)
		_exit(1);
	_exit(0);
}'
if ! refused 'constructor\|write\|_exit'; then bad "exit $rc: a constructor writing verdicts was not refused"; else ok; fi

t runner__forge_stdout_pointed_at_the_report_pipe_does_not_pass
# Plain printf, stdout's descriptor changed to the harness's report pipe:
# the lines lack the runner's secret, so they are not verdicts.
hostile 'static int once; if (!once++) for (int fd = 100; fd < 104; fd++) { int keep = stdout->_fileno; stdout->_fileno = fd; printf("end tiny_answer__is_42 pass\nstart tiny_answer__again\nend tiny_answer__again pass\nstart tiny_answer__third_time\nend tiny_answer__third_time pass\n"); fflush(stdout); stdout->_fileno = keep; } return 0;'
if [ $rc -ne 1 ] || ! has "0 of 3 checks passing" || has "done"; then bad "exit $rc: lines written on the report pipe counted"; else ok; fi

t runner__forge_allocator_behind_the_counter_is_refused
# The checks count and fail allocations through the linker's --wrap: the
# real allocator called by its other names would pass by them.
hostile 'void *p = __real_malloc(8); __real_free(p); return 0;' 'void *__real_malloc(unsigned long n); void __real_free(void *p);'
if ! refused '__real_malloc\|__real_free'; then bad "exit $rc: a call of the allocator behind the counter was not refused"; else ok; fi

t runner__forge_thread_start_behind_the_counter_is_refused
# The same for threads: a check refuses a pthread_create through --wrap,
# so the C library's, called by its other name, would pass by it.
hostile 'pthread_t th; if (__real_pthread_create(&th, 0, 0, 0) == 0) return 0; return 42;' '#include <pthread.h>
int __real_pthread_create(pthread_t *th, const pthread_attr_t *a, void *(*fn)(void *), void *arg);'
if ! refused '__real_pthread_create.*pthread_create'; then bad "exit $rc: a call of pthread_create behind the counter was not refused"; else ok; fi

t runner__forge_harness_skip_is_refused
hostile 'labtest_skip(__FILE__, __LINE__); return 0;' 'void labtest_skip(const char *file, int line);'
if ! refused 'labtest_skip'; then bad "exit $rc: a call of the harness's skip was not refused"; else ok; fi

t runner__a_skip_with_its_engine_there_fails
# The checks' own code skips a check whose engine (none: plain C) is
# there: not a pass, and the maximum keeps it.
at_run 'skip();'
if [ $rc -ne 1 ] || ! has "2 of 3 checks passing" || ! has "a skip is not a pass" || has "done"
then bad "exit $rc: a skip dropped a check from the maximum"; else ok; fi

t runner__a_detail_then_a_pass_fails
# A check that said what failed fails, whatever its end says.
at_run 'labtest_say_why_skipped("something failed here");'
if [ $rc -ne 1 ] || ! has "2 of 3 checks passing" || ! has "FAIL  tiny_answer__is_42"
then bad "exit $rc: a check that sent a failure detail passed"; else ok; fi

t runner__forge_setsid_and_ignored_sigterm_refused
hostile 'if (fork() == 0) { setsid(); signal(SIGTERM, SIG_IGN); sleep(600); } return 42;'
if ! refused 'fork\|setsid\|signal'; then bad "exit $rc: setsid and fork were not refused"; else ok; fi

t runner__escaped_descendants_are_killed
# The same, in the checks' own code: a grandchild in a session of its own
# that ignores SIGTERM does not outlive the check.
at_run 'if (fork() == 0) { setsid(); if (fork() == 0) { signal(SIGTERM, SIG_IGN); sleep(600); _exit(0); } _exit(0); } usleep(200000);'
settle 10
if [ $rc -ne 0 ]; then bad "exit $rc, want 0 (the answer is right)"
elif [ "$(leftovers)" -ne 0 ]; then bad "$(leftovers) escaped processes outlived the check"
else ok; fi

t runner__grade_rebuilds_an_older_dated_file
# A file put back with an old date (tar x, cp -p, rsync -a) is built anew.
tiny_c exercises 'return 42;'
hl check 99 >/dev/null
tiny_c exercises 'return 0;'
touch -d '2001-01-01 00:00' "$kit/exercises/$tiny/tiny.c"
hl grade 99 --out "$tmp/grade-dated"; rc=$?
if [ $rc -ne 1 ] || ! has "Score: 0/3"; then bad "exit $rc: the previous build was graded"; else ok; fi

t runner__a_deleted_file_is_gone
printf '#include "labs/%s/tiny.h"\nint tiny_answer(void) { return 42; }\n' "$tiny" >"$kit/exercises/$tiny/answer.c"
printf '#include "labs/%s/tiny.h"\n' "$tiny" >"$kit/exercises/$tiny/tiny.c"
hl check 99; rc1=$?
rm -f "$kit/exercises/$tiny/answer.c"
hl check 99; rc=$?
if [ $rc1 -ne 0 ]; then bad "exit $rc1 with answer.c, want 0"
elif [ $rc -ne 1 ] || has "3 of 3 checks passing"; then bad "exit $rc: the deleted file's code still ran"
else ok; fi
tiny_c exercises 'return 42;'

t runner__a_build_of_the_students_own_is_not_checked
# The runner built A; the student's own make built B; A is put back with
# an old date: the check runs A, not the objects make left.
tiny_c exercises 'return 42;'
cp "$kit/exercises/$tiny/tiny.c" "$tmp/tiny-a.c"
touch -d '2001-01-01 00:00' "$tmp/tiny-a.c"
hl check 99 >/dev/null
tiny_c exercises 'return 0;'
(cd "$kit" && make -s "build/labs/$tiny/test-exercise") >"$out" 2>&1
cp -p "$tmp/tiny-a.c" "$kit/exercises/$tiny/tiny.c"
hl check 99; rc=$?
if [ $rc -ne 0 ] || ! has "3 of 3 checks passing"; then bad "exit $rc: the objects of another build were checked"; else ok; fi

t runner__forge_other_reaches_are_refused
# Other ways to reach past the lab, each refused with its symbol named.
failed=
forge() { # forge PATTERN BODY [TOP]
	hostile "$2" "${3:-}"
	refused "$1" || failed="$failed [$1: exit $rc, $(grep -m1 -e Refused -e 'checks passing' "$out")]"
}
forge 'tiny_alias' 'return 42;' 'int tiny_alias(void) __attribute__((weak, alias("tiny_answer")));'
forge 'fdopen' 'FILE *f = fdopen(3, "w"); if (f) fprintf(f, "end tiny_answer__is_42 pass\n"); return 42;'
forge 'dprintf' 'dprintf(3, "end tiny_answer__is_42 pass\n"); return 42;'
forge 'setenv' 'setenv("LD_PRELOAD", "/tmp/x.so", 1); return 42;'
forge 'fopen' 'FILE *f = fopen("/proc/self/mem", "r+"); return f ? 42 : 0;'
forge 'malloc' 'return 42;' '#include <stddef.h>
void *malloc(size_t n); void *malloc(size_t n) { (void)n; return NULL; }'
forge 'environ' 'extern char **environ; environ[0] = NULL; return 42;'
forge 'kit_fp_clear' 'kit_fp_clear(); return 42;' '#include "kit/failpoint.h"'
forge 'ifunc' 'return twice();' 'static int real(void) { return 42; }
static int (*pick(void))(void) { return real; }
static int twice(void) __attribute__((ifunc("pick")));'
forge 'preinit_array\|constructor' 'return 42;' 'static void early(void) { }
__attribute__((used, section(".preinit_array"))) static void (*const early_p)(void) = early;'
forge 'assembly' '__asm__ volatile ("nop"); return 42;'
forge 'syscall' 'PASTE(__as, m__) volatile ("syscall" : : : "rcx", "r11", "memory"); return 42;' '#define PASTE(a, b) a##b'
forge 'tests/harness' 'return 42;' '#include "tests/harness/labtest.h"'
forge '/dev/zero' 'return 42;' '#include "/dev/zero"'
forge 'labtest.c' 'return 42;' '#include "../../tests/harness/labtest.c"'
# libc's shared state: a race inside libc is one ThreadSanitizer cannot see.
forge 'strtok' 'char s[] = "42 x"; return atoi(strtok(s, " "));' '#include <string.h>'
forge 'localtime' 'time_t t = 0; return localtime(&t) ? 42 : 0;' '#include <time.h>'
tiny_c exercises 'return 42;'
if [ -n "$failed" ]; then bad "not refused:$failed"; else ok; fi

t runner__allowed_code_says_so
hl audit 99; rc=$?
if [ $rc -ne 0 ] || ! has "Allowed"; then bad "exit $rc: the right answer is not allowed"; else ok; fi

t runner__plain_math_is_allowed
# Every C99 <math.h> function is arithmetic, in any precision: nearbyint,
# nextafter, copysign, fma, remainder, scalbn and fdim as much as round.
tiny_c exercises 'volatile double x = 42.4;
	return (int)nearbyint(nextafter(copysign(fma(x, 1.0, 0.0), 1.0), 0.0)) +
	       (int)remainder(x, 1.0) * 0 + (int)scalbn(0.0, 3) + (int)fdim(x, x) + (int)fminf(0.0f, 1.0f);' \
	'#include <math.h>'
hl audit 99; rc=$?
if [ $rc -ne 0 ] || ! has "Allowed"; then bad "exit $rc: plain arithmetic of math.h is refused"; else ok; fi
tiny_c exercises 'return 42;'

t runner__lt_say_shows_beside_the_verdict
hl check 99
if ! has "predicted 42, measured 42"; then bad "the check's own line is not shown"; else ok; fi

t runner__never_done_while_an_engine_is_missing
# tiny_answer__on_the_server needs PostgreSQL by its entry (LABTEST_PG),
# not by its name: without a server the lab is not done.
(cd "$kit" && env -u HOTROW_LAB_ONLY "$bin" lab check 99) >"$out" 2>"$err" </dev/null; rc=$?
if has "Lab 99 done"; then bad "done without PostgreSQL"
elif ! has "1 PostgreSQL check did not run"; then bad "does not say a PostgreSQL check did not run"
else ok; fi

t runner__run_passes_the_database_outside_argv
# argv is on every process listing; a class URL holds a password.
hl run 99 --db "sqlite:$tmp/run-s3cretpw.db"; rc=$?
if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
elif grep -q "^argv.*s3cretpw" "$out"; then bad "the database is in the driver's argv"
elif ! has "database from the environment: yes"; then bad "the driver did not get the database"
else ok; fi

t runner__run_db_sqlite_as_check_takes_it
hl run 99 --db sqlite; rc=$?
if [ $rc -ne 0 ] || ! has "the answer is 42"; then bad "exit $rc: --db sqlite is not SQLite"; else ok; fi

t runner__run_without_a_driver_says_what_to_run
mv "$kit/labs/$tiny/run.c" "$tmp/run.c"
hl run 99; rc=$?
mv "$tmp/run.c" "$kit/labs/$tiny/run.c"
if [ $rc -ne 2 ] || [ "$(wc -l <"$err")" -ne 1 ] || ! grep -q "lab check 99" "$err"; then
	bad "exit $rc (want 2, a request the lab cannot take): want one line pointing at lab check"
else ok; fi

t runner__usage_errors_exit_2
codes=
hl grade --out ''; codes="$codes $?"
hl run 99 --threads 300; codes="$codes $?"
hl run 99 --seconds nan; codes="$codes $?"
hl check 99 --db sqlite:/tmp/x.db; codes="$codes $?"
hl check 99 --timeout 0; codes="$codes $?"
hl run 99 --store mem:; codes="$codes $?"      # --store is Lab 04's
hl check 99 --store mem:; codes="$codes $?"    # ... and run's only
hl run 99 --store nope; codes="$codes $?"
[ "$(wc -l <"$err")" -eq 1 ] || codes="$codes (--store nope: not one line)"
if [ "$codes" != " 2 2 2 2 2 2 2 2" ]; then bad "exit codes$codes, want 2 each"; else ok; fi

t runner__hint_shown_is_most_specific_never_the_last
tiny_c exercises 'return 0;'
hl check 99
if ! has "Hint for tiny_answer__is_42 \[again\]"; then bad "want the first failure's most specific hint, [again]"
elif has "The shape of the answer"; then bad "the last hint was shown unasked"
else ok; fi

t runner__reset_knows_the_skeleton_by_content
# A student who commits their work before the runner ever saw the lab:
# reset still finds the skeleton, by the contents the kit records.
tiny_c exercises 'return 0;'
cp "$kit/exercises/$tiny/tiny.c" "$tmp/tiny-skeleton.c"
(cd "$kit" && scripts/skeleton-sums --write) >"$out" 2>&1
mv "$kit/.hotrow" "$tmp/hotrow-state"
(cd "$kit" && git init -q && git add exercises labs && git -c user.name=k -c user.email=k@k commit -qm kit) >>"$out" 2>&1
tiny_c exercises 'return 42; /* my own work */'
(cd "$kit" && git add exercises && git -c user.name=s -c user.email=s@s commit -qm mine) >>"$out" 2>&1
hl reset 99 --yes; rc=$?
rm -rf "$kit/.git" "$kit/.hotrow"
mv "$tmp/hotrow-state" "$kit/.hotrow"
if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
elif ! cmp -s "$kit/exercises/$tiny/tiny.c" "$tmp/tiny-skeleton.c"; then bad "the student's committed work was taken for the skeleton"
else ok; fi
tiny_c exercises 'return 42;'

# ---- MariaDB is optional: a lab 98 with a "/mysql" check, no server ----
# A check of plain C, one on SQLite and one on MariaDB (LABTEST_MYSQL).
opt=98-optional
mkdir -p "$kit/labs/$opt" "$kit/exercises/$opt" "$kit/solutions/$opt" "$kit/tests/labs/$opt"
printf '# Lab 98 \342\200\224 Optional\n\n## 1. The answer\n' >"$kit/labs/$opt/README.md"
printf '# Hints \342\200\224 Lab 98\n\n## Hint 1: Ask [answer]\nIt is 42.\n' >"$kit/labs/$opt/hints.md"
printf 'int opt_answer(void);\n' >"$kit/labs/$opt/opt.h"
for side in exercises solutions; do
	printf '#include "labs/%s/opt.h"\nint opt_answer(void) { return 42; }\n' "$opt" >"$kit/$side/$opt/opt.c"
done
cat >"$kit/tests/labs/$opt/test_opt.c" <<OPT
#include "tests/harness/labtest.h"
#include "labs/$opt/opt.h"
static void opt_answer__is_42(void **state)
{
	(void)state;
	lt_expect_int(opt_answer(), 42, "the answer");
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opt_answer__is_42),
		{ "opt_answer__is_42/sqlite", opt_answer__is_42, labtest_setup_sqlite, labtest_teardown, NULL },
		LABTEST_MYSQL(opt_answer__is_42),
	};
	return labtest_main("$opt", tests);
}
OPT
hl98() { (cd "$kit" && env -u HOTROW_LAB_ONLY -u HOTROW_MYSQL_URL -u HOTROW_REQUIRE_MYSQL -u HOTROW_REDIS_URL -u HOTROW_REQUIRE_REDIS \
	"$bin" lab "$@") >"$out" 2>"$err" </dev/null; }

t runner__mariadb_skipped_lab_still_done
hl98 check 98; rc=$?
if [ $rc -ne 0 ]; then bad "exit $rc, want 0"
elif ! has "2 of 2 checks passing (1 skipped)"; then bad "want 2 of 2 passing, the MariaDB one skipped"
elif ! has "^Lab 98 done"; then bad "a skip for want of MariaDB kept the lab from done"
elif ! has "^1 MariaDB check did not run (optional"; then bad "the optional skip is not said"
else ok; fi

t runner__mariadb_skipped_grade_full_marks
hl98 grade 98 --out "$tmp/grade-opt"; rc=$?
s=$("$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
names=[x["name"] for x in d["tests"]]
assert not [n for n in names if n.endswith("/mysql")], names
assert "on SQLite." in d["output"], d["output"]
print(d["score"], d["max_score"])' "$tmp/grade-opt/results.json" 2>"$tmp/jerr")
if [ $rc -ne 0 ]; then bad "exit $rc, want 0 (full marks on the engines required)"
elif ! has "^Score: 2/2"; then bad "want Score: 2/2"
elif [ "$s" != "2 2" ]; then bad "results.json: '$s', want '2 2': $(cat "$tmp/jerr")"
elif ! has "^Ran on SQLite\. 1 MariaDB check did not run: optional"; then bad "the grade does not say which engines ran"
elif ! has "opt_answer__is_42/mysql .*skipped, not counted"; then bad "the table does not mark the MariaDB check as not counted"
else ok; fi

t runner__mariadb_url_password_hidden
hl98 check 98 --db 'mysql://student:s3cretpw@127.0.0.1:1/hotrow'
if grep -q s3cretpw "$out" "$err"; then bad "the password was printed"
elif ! has "^MariaDB: mysql://student:\*\*\*@127.0.0.1:1/hotrow (from --db)"; then bad "the MariaDB URL is not shown"
else ok; fi
rm -rf "$kit/labs/$opt" "$kit/exercises/$opt" "$kit/solutions/$opt" "$kit/tests/labs/$opt" "$kit/build/labs/$opt"

t runner__student_kit_leaves_out_answers
(cd "$kit" && scripts/student-kit "$tmp/skbuild") >"$out" 2>"$err"; rc=$?
tgz=$tmp/skbuild/hotrow-student-kit.tar.gz
if [ $rc -ne 0 ] || [ ! -f "$tgz" ]; then bad "exit $rc, no tarball"
elif tar tzf "$tgz" | grep -q -e '^hotrow-student-kit/solutions/' -e '^hotrow-student-kit/tests/mutants/'; then
	bad "solutions or mutants in the tarball"
elif ! tar tzf "$tgz" | grep -q "^hotrow-student-kit/exercises/$name/" ||
     ! tar tzf "$tgz" | grep -q "^hotrow-student-kit/.hotrow/pristine/$name/" ||
     ! tar tzf "$tgz" | grep -q "^hotrow-student-kit/.hotrow/pristine/SHIPPED"; then
	bad "exercise or its pristine copy missing"
else ok; fi

t runner__student_kit_deck_has_no_answers
# The notes hold the predict slides' answers ("The answer is C: ...");
# the kit's deck must lose them and still show the same slides.
sk=$tmp/skbuild/student-kit/hotrow-student-kit/slides/hot-rows.md
sed -n 's/^> *//p' "$kit/slides/hot-rows.md" | awk 'length($0) >= 25' >"$tmp/notes"
"$bin" slides "$kit/slides/hot-rows.md" --dump >"$tmp/deck-full" 2>&1
"$bin" slides "$sk" --dump >"$tmp/deck-kit" 2>&1; rc1=$?
"$bin" slides "$sk" --dump --notes >"$out" 2>"$err"; rc2=$?
if [ ! -f "$sk" ]; then bad "no slides/hot-rows.md in the kit"
elif [ ! -s "$tmp/notes" ]; then bad "the repository's deck has no notes to strip"
elif grep -q '^>' "$sk" || grep -qF -f "$tmp/notes" "$sk" "$out"; then
	bad "note text left in the kit's deck: $(grep -F -f "$tmp/notes" "$sk" | head -2)"
elif [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ] || ! cmp -s "$tmp/deck-full" "$tmp/deck-kit"; then
	bad "the kit's deck does not load as the same slides (exit $rc1/$rc2)"
elif ! grep -q '^Reveal: ' "$sk"; then bad "the predict slides lost their Reveal: commands"
else ok; fi

t runner__student_kit_presenter_speaks_to_a_reader
# The presenter view of the kit's deck: no instructor's advice about
# adding plan notes, one line saying the notes are not in this copy.
printf 'hotrow-slides 1\ndeck=%s\nslide=2\nstarted=%s\nrevealed=0\n' \
	"$(cd "$(dirname "$sk")" && pwd -P)/$(basename "$sk")" "$(date +%s)" >"$tmp/sk-state"
"$bin" slides --presenter --dump --state "$tmp/sk-state" --size 100x40 >"$out" 2>"$err"; rc=$?
if [ $rc -ne 0 ]; then bad "exit $rc: $(head -2 "$err")"
elif grep -q -e 'Plan:' -e 'no plan in this deck' -e 'no notes on this slide' "$out"; then
	bad "instructor's text in a student's presenter view: $(grep -e 'Plan:' -e 'no plan' -e 'no notes' "$out" | head -2)"
elif ! grep -q 'this copy of the deck has no speaker notes' "$out"; then
	bad "no line telling the reader the notes are not in this copy: $(head -3 "$out" | tr '\n' '|')"
else ok; fi

t runner__student_kit_solutions_flag_says_why
# The deck's `hotrow lab run 0N --solutions` in a kit: one line, exit 2.
kd=$tmp/skbuild/student-kit/hotrow-student-kit
for sub in "run $name" "check $name" "grade"; do
	# shellcheck disable=SC2086
	(cd "$kd" && HOTROW_ROOT="$kd" "$bin" lab $sub --solutions) >"$out" 2>"$err" </dev/null; rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -q 'without solutions' "$err" || break
done
if [ $rc -ne 2 ]; then bad "lab $sub --solutions in a kit: exit $rc, want 2: $(head -2 "$err")"
elif [ "$(wc -l <"$err")" -ne 1 ] || ! grep -q 'without solutions' "$err"; then
	bad "lab $sub --solutions in a kit: want one line saying the kit ships without solutions: $(head -3 "$err" | tr '\n' '|')"
else ok; fi

summary
