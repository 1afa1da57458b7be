#!/bin/sh
# tests/lab/lint-given.sh: scripts/lint-labs finds given code that drifted.
#
# The code a skeleton gives (exercises/LAB, no TODO in it) must be the
# code of the solution, or the checks that pass on the solution test
# something students never get. In a scratch copy of the labs: the copies
# as they are pass; a changed line in a given function, struct or #define
# of the skeleton fails, naming it; a change inside a TODO function does
# not. Prints cmocka-style lines and summary, as scripts/run-tests reads them.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotrow-lint-given-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests" "$tmp/scripts"
cp -R "$root/labs" "$root/exercises" "$root/solutions" "$tmp/"
cp -R "$root/tests/labs" "$root/tests/mutants" "$tmp/tests/"
ex=$tmp/exercises/06-money/money.c
cp "$ex" "$tmp/money.c.orig"

passed=0 failed=0
check() { # check NAME WANT(pass|fail) EXPECTED-TEXT
	echo "[ RUN      ] $1"
	out=$("$root/scripts/lint-labs" "$tmp" 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep "lint__06-money__given_code_matches_solution" | tail -n 1)
	ok=1
	case $2 in
	pass) case $line in *"[       OK ]"*) ;; *) ok=0 ;; esac ;;
	fail) case $line in *"[  FAILED  ]"*) ;; *) ok=0 ;; esac
	      [ "$rc" -ne 0 ] || ok=0
	      printf '%s\n' "$out" | grep -qF -- "$3" || ok=0 ;;
	esac
	if [ "$ok" -eq 1 ]; then
		echo "[       OK ] $1"
		passed=$((passed + 1))
	else
		printf '%s\n' "$out" | grep -v '^\[ *\(RUN\|OK\) ' | sed 's/^/    /'
		echo "    expected the given-code check to $2${3:+ with '$3'}"
		echo "[  FAILED  ] $1"
		failed=$((failed + 1))
	fi
	cp "$tmp/money.c.orig" "$ex"
}

check lint_given__copies_as_they_are_pass pass ""

sed -i 's/snprintf(n.s, sizeof n.s, "%" PRId64, v);/snprintf(n.s, sizeof n.s, "%" PRIi64, v);/' "$ex"
check lint_given__drifted_function_fails fail "num() is given code but differs"

sed -i 's/	char s\[24\];/	char s[32];/' "$ex"
check lint_given__drifted_struct_fails fail "struct num is given code but differs"

sed -i 's/^#include <stdio.h>$/#include <stdio.h>\n#define MONEY_GIVEN 1/' "$ex"
sed -i 's/^#include <stdio.h>$/#include <stdio.h>\n#define MONEY_GIVEN 2/' "$tmp/solutions/06-money/money.c"
check lint_given__drifted_define_fails fail "#define MONEY_GIVEN is given code but differs"
cp "$root/solutions/06-money/money.c" "$tmp/solutions/06-money/money.c"

# A student's TODO function is theirs to change.
awk '/TODO\(§3\): refuse what money.h calls invalid/ { print "\t/* changed */" } { print }' \
	"$tmp/money.c.orig" >"$ex"
check lint_given__todo_function_may_differ pass ""

echo "[==========] $((passed + failed)) test(s) run."
echo "[  PASSED  ] $passed test(s)."
[ "$failed" -eq 0 ] || echo "[  FAILED  ] $failed test(s)."
[ "$failed" -eq 0 ]
