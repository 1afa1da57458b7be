#!/bin/sh
# tests/lab/run-tests.sh: scripts/run-tests judges mutants by their headers.
#
# Fake suites (shell scripts printing cmocka's TAP) in a scratch tree: a
# solution, and mutants caught by the named check, by another check only
# ("caught for the wrong reason"), by nothing, without a header, only by
# PostgreSQL checks that did not run, one that dies half-way and one
# that was never built, and one whose run ends at its first catch; mutants
# built beside the suites, one of them not at all; and
# five scripts on three lanes, each run once.
# Prints cmocka-style lines and summary, as scripts/run-tests reads them.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotrow-run-tests-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
mkdir -p build/labs/99-x tests/mutants/99-x

# suite NAME VERDICTS...: a fake binary printing TAP, "p"ass "f"ail "s"kip
# per check a, b, c/postgres; "die" stops before the rest.
suite() {
	f=build/labs/99-x/$1; shift
	{
		echo '#!/bin/sh'
		echo 'echo "1..3"'
		n=0
		for v in "$@"; do
			n=$((n + 1))
			c=$(echo "a b c/postgres" | cut -d' ' -f$n)
			case $v in
			p) echo "echo 'ok $n - $c'" ;;
			f) echo "echo 'not ok $n - $c'" ;;
			s) echo "echo 'not ok $n # SKIP $c'" ;;
			die) echo "kill -9 \$\$" ;;
			esac
		done
	} >"$f"
	chmod +x "$f"
}
patch_for() { # patch_for NAME CAUGHT_BY ENGINE
	printf 'Mistake: m\nCaught-By: %s\nEngine: %s\n--- a/x\n+++ b/x\n' "$2" "$3" >tests/mutants/99-x/$1.patch
}
suite test-solution p p p
suite test-mutant-right p f p;  patch_for right b "sqlite postgres"
suite test-mutant-wrong f p p;  patch_for wrong b "sqlite postgres"
suite test-mutant-missed p p p; patch_for missed b "sqlite postgres"
suite test-mutant-bare p f p;   printf -- '--- a/x\n+++ b/x\n' >tests/mutants/99-x/bare.patch
suite test-mutant-died p die;   patch_for died b "sqlite postgres"
patch_for unbuilt b "sqlite postgres"   # its binary never built
# The fake suites need no server: without one, the lanes make no databases.
# Their times are not the kit's: none goes to make test's HOTROW_TEST_TIMES.
unset HOTROW_PG_URL HOTROW_TEST_TIMES HOTROW_MUTANT_MAKE HOTROW_MUTANTS_DONE
out=$("$root/scripts/run-tests" pass:build/labs/99-x/test-solution \
	mutant:build/labs/99-x/test-mutant-right mutant:build/labs/99-x/test-mutant-wrong \
	mutant:build/labs/99-x/test-mutant-missed mutant:build/labs/99-x/test-mutant-bare \
	mutant:build/labs/99-x/test-mutant-died mutant:build/labs/99-x/test-mutant-unbuilt 2>&1)
rc=$?
# Without PostgreSQL: the solution skips c/postgres; a postgres-only mutant is skipped.
suite test-solution p p s
suite test-mutant-pgonly p p s; patch_for pgonly c postgres
out2=$("$root/scripts/run-tests" pass:build/labs/99-x/test-solution \
	mutant:build/labs/99-x/test-mutant-pgonly 2>&1)
rc2=$?
# Five scripts on three lanes: each lane takes the next one left, so every
# one runs, and only once (each appends its name to a file).
for i in 1 2 3 4 5; do
	printf '#!/bin/sh\necho %s >>"%s/ran"\necho "[  PASSED  ] 1 test(s)."\n' "$i" "$tmp" >"s$i.sh"
	chmod +x "s$i.sh"
done
out3=$(HOTROW_TEST_JOBS=3 "$root/scripts/run-tests" script:./s1.sh script:./s2.sh script:./s3.sh \
	script:./s4.sh script:./s5.sh 2>&1)
rc3=$?
ran=$(sort "$tmp/ran" 2>/dev/null | tr '\n' ' ')
# A last: script, named first, runs once all five have ended.
rm -f "$tmp/ran"
printf '#!/bin/sh\necho 6 >>"%s/ran"\necho "[  PASSED  ] 1 test(s)."\n' "$tmp" >s6.sh
chmod +x s6.sh
out4=$(HOTROW_TEST_JOBS=3 "$root/scripts/run-tests" last:./s6.sh script:./s1.sh script:./s2.sh \
	script:./s3.sh script:./s4.sh script:./s5.sh 2>&1)
rc4=$?
ran4=$(tr '\n' ' ' <"$tmp/ran" 2>/dev/null)
# A skeleton (fail:) whose first check fails and which would then wait
# 60 s: its run ends at the failure, and it is caught. Another that
# passes every check is missed.
{
	echo '#!/bin/sh'
	echo 'echo "1..2"'
	echo "echo 'not ok 1 - a'"
	echo 'exec sleep 60'
} >build/labs/99-x/test-exercise
chmod +x build/labs/99-x/test-exercise
suite test-exercise-passing p p p
# A mutant named by b and c/postgres whose b fails, and which would then
# wait 60 s before c/postgres fails too: its run ends at b, and the catch
# names b alone (c/postgres never reported).
suite test-solution p p p
{
	echo '#!/bin/sh'
	echo 'echo "1..3"'
	echo "echo 'ok 1 - a'"
	echo "echo 'not ok 2 - b'"
	echo 'sleep 60'
	echo "echo 'not ok 3 - c/postgres'"
} >build/labs/99-x/test-mutant-slow
chmod +x build/labs/99-x/test-mutant-slow
patch_for slow "b c" "sqlite postgres"
t0=$(date +%s)
out5=$("$root/scripts/run-tests" fail:build/labs/99-x/test-exercise \
	fail:build/labs/99-x/test-exercise-passing pass:build/labs/99-x/test-solution \
	mutant:build/labs/99-x/test-mutant-slow 2>&1)
rc5=$?
took5=$(($(date +%s) - t0))
# The same skeleton under a timeout that a TERM of its own ends without
# handing it on (its command in its group, as GNU timeout's is): the run
# still ends at the failure, the rest of the group with it.
mkdir -p fakebin
cat >fakebin/timeout <<'FAKE'
#!/bin/sh
shift 3 # -k 5 LIMIT
exec setsid sh -c '"$@" & wait $!' sh "$@"
FAKE
chmod +x fakebin/timeout
t0=$(date +%s)
out7=$(PATH="$tmp/fakebin:$PATH" "$root/scripts/run-tests" fail:build/labs/99-x/test-exercise 2>&1)
rc7=$?
took7=$(($(date +%s) - t0))
# Mutants built beside the suites (HOTROW_MUTANT_MAKE): a builder that
# makes "late" (caught by b) and fails on "broken" and "stale"; "stale"
# has an older binary (which would pass every check), "kept" a binary
# newer than its patch that the builder leaves as it is. The builder
# takes a while for each, so the lanes wait for it. A script named
# audit-mutants.sh (which reads what the build made) runs once the
# build has ended.
suite test-solution p p p
mkdir -p tpl x
cp build/labs/99-x/test-solution tpl/stale
suite test-mutant-late p f p; mv build/labs/99-x/test-mutant-late tpl/late
patch_for late b "sqlite postgres"; patch_for broken b "sqlite postgres"
patch_for stale b "sqlite postgres"; patch_for kept b "sqlite postgres"
cp tpl/stale build/labs/99-x/test-mutant-stale
touch -d '2001-01-01' build/labs/99-x/test-mutant-stale
suite test-mutant-kept p f p
cat >mk.sh <<'MK'
#!/bin/sh
st=0
for bin; do
	sleep 0.5
	echo "$bin" >>mk.order
	m=${bin##*/test-mutant-}
	case $m in
	late) cp "tpl/$m" "$bin" && : >"$HOTROW_MUTANT_STAMPS/99-x__$m" ;;
	kept) ;;
	*) echo "error: cannot build test-mutant-$m"; st=2 ;;
	esac
done
exit $st
MK
chmod +x mk.sh
printf '#!/bin/sh
if [ -f "$HOTROW_MUTANTS_DONE" ]; then echo "[  PASSED  ] 1 test(s)."; else echo "[  FAILED  ] 1 test(s)."; fi
' \
	>x/audit-mutants.sh
chmod +x x/audit-mutants.sh
out6=$(HOTROW_TEST_JOBS=3 HOTROW_MUTANT_MAKE="$tmp/mk.sh" "$root/scripts/run-tests" \
	pass:build/labs/99-x/test-solution script:./x/audit-mutants.sh \
	mutant:build/labs/99-x/test-mutant-late mutant:build/labs/99-x/test-mutant-broken \
	mutant:build/labs/99-x/test-mutant-stale mutant:build/labs/99-x/test-mutant-kept 2>&1)
rc6=$?

. "$root/tests/harness/check.sh"
# t NAME: start a check; ok / bad REASON end it (bad shows both runs).
t() { current=$1; echo "[ RUN      ] $1"; }
ok() { check_ok "$current"; }
bad() { printf '%s\n%s\n' "$out" "$out2" | sed 's/^/    /'; check_bad "$current" "$*"; }
line() { printf '%s\n' "$out" | grep "test-mutant-$1"; }

t run_tests__named_check_catches
case $(line right) in "caught "*" by b "*) ok ;; *) bad "right: $(line right)" ;; esac
t run_tests__other_check_is_the_wrong_reason
case $(line wrong) in "WRONG "*) ok ;; *) bad "wrong: $(line wrong)" ;; esac
t run_tests__nothing_failing_is_missed
case $(line missed) in "MISSED "*) ok ;; *) bad "missed: $(line missed)" ;; esac
t run_tests__no_header_fails
case $(line bare) in "NO HEADER "*) ok ;; *) bad "bare: $(line bare)" ;; esac
t run_tests__a_check_never_reported_fails
case $(line died) in "caught "*" by b "*) ok ;; *) bad "died: $(line died)" ;; esac
t run_tests__a_mutant_never_built_fails
case $(line unbuilt) in "NOT BUILT "*) ok ;; *) bad "unbuilt: $(line unbuilt)" ;; esac
t run_tests__summary_counts
if [ $rc -ne 1 ] || ! printf '%s\n' "$out" | tail -n 1 | grep -q "^5 passed, 4 failed$"; then
	bad "exit $rc, last line '$(printf '%s\n' "$out" | tail -n 1)', want '5 passed, 4 failed'"
else ok; fi
t run_tests__postgres_only_mutant_skipped_without_postgres
if [ $rc2 -ne 0 ] || ! printf '%s\n' "$out2" | grep -q "^skipped .*pgonly"; then bad "exit $rc2"; else ok; fi
t run_tests__lanes_run_every_suite_once
if [ $rc3 -ne 0 ] || [ "$ran" != "1 2 3 4 5 " ]; then
	printf '%s\n' "$out3" | sed 's/^/    /'; check_bad "$current" "exit $rc3, ran '$ran', want '1 2 3 4 5 '"
else ok; fi
t run_tests__last_runs_after_the_others
if [ $rc4 -ne 0 ] || [ "$(echo "$ran4" | wc -w)" -ne 6 ] ||
   [ "$(echo "$ran4" | awk '{ print $NF }')" != 6 ] ||
   ! printf '%s\n' "$out4" | grep -q "^6 passed"; then
	printf '%s\n' "$out4" | sed 's/^/    /'; check_bad "$current" "exit $rc4, ran in order '$ran4', want 6 last"
else ok; fi
t run_tests__a_skeleton_ends_at_its_first_failure
if [ $took5 -ge 30 ] || ! printf '%s\n' "$out5" | grep -q "^caught  labs/99-x/test-exercise (it fails, as it should: a)" ||
   ! printf '%s\n' "$out5" | grep -q "^MISSED  labs/99-x/test-exercise-passing" || [ $rc5 -ne 1 ]; then
	printf '%s\n' "$out5" | sed 's/^/    /'; check_bad "$current" "exit $rc5 after $took5 s"
else ok; fi
t run_tests__a_mutant_ends_at_its_first_catch
if [ $took5 -ge 30 ] || ! printf '%s\n' "$out5" | grep -qx "caught  labs/99-x/test-mutant-slow by b "; then
	printf '%s\n' "$out5" | sed 's/^/    /'; check_bad "$current" "exit $rc5 after $took5 s"
else ok; fi
t run_tests__a_run_ended_takes_its_whole_group
if [ $took7 -ge 30 ] || [ $rc7 -ne 0 ] ||
   ! printf '%s\n' "$out7" | grep -q "^caught  labs/99-x/test-exercise (it fails, as it should: a)"; then
	printf '%s\n' "$out7" | sed 's/^/    /'; check_bad "$current" "exit $rc7 after $took7 s"
else ok; fi

t run_tests__mutants_built_beside_the_suites
line6() { printf '%s\n' "$out6" | grep "test-mutant-$1"; }
if [ $rc6 -ne 1 ] || [ "$(wc -l <mk.order)" -ne 4 ] ||
   ! line6 late | grep -qx "caught  labs/99-x/test-mutant-late by b " ||
   ! line6 kept | grep -qx "caught  labs/99-x/test-mutant-kept by b " ||
   ! line6 broken | grep -q "^NOT BUILT .*failed for it" ||
   ! line6 stale | grep -q "^NOT BUILT .*failed for it" ||
   ! printf '%s\n' "$out6" | grep -q "^ok      ./x/audit-mutants.sh (1 passed)" ||
   ! printf '%s\n' "$out6" | grep -q "^NOTICE: the mutants' build beside the suites failed" ||
   ! printf '%s\n' "$out6" | tail -n 1 | grep -qx "6 passed, 2 failed"; then
	printf '%s\n' "$out6" | sed 's/^/    /'; check_bad "$current" "exit $rc6"
else ok; fi

summary
