# tests/harness/check.sh: the lines every script test prints, in cmocka's
# own format, so scripts/run-tests and a reader see one kind of report.
#
# Interface (sh):
#   . "$(dirname "$0")/../harness/check.sh"
#   ok NAME              a check passed
#   bad NAME WHY         a check failed, with the reason on the same line
#   skip NAME WHY        a check could not run here; a NOTICE says why
#   summary              the closing lines; exits 1 if any check failed, else 0
# Counts live in check_pass, check_fail and check_skip. ok and bad are
# check_ok and check_bad under short names: a test whose checks span
# several commands may redefine ok and bad over them (tests/lab/runner.sh:
# the name of the running check, and what it printed on failure).
check_pass=0 check_fail=0 check_skip=0 check_failed=

check_ok() {
	check_pass=$((check_pass + 1))
	echo "[       OK ] $1"
}

check_bad() {
	check_fail=$((check_fail + 1))
	check_failed="$check_failed $1"
	echo "[  FAILED  ] $1: $2"
}

ok() { check_ok "$@"; }
bad() { check_bad "$@"; }

skip() {
	check_skip=$((check_skip + 1))
	echo "[  SKIPPED ] $1: $2"
	echo "NOTICE: $1 skipped: $2"
}

summary() {
	echo "[==========] $((check_pass + check_fail + check_skip)) test(s) run."
	echo "[  PASSED  ] $check_pass test(s)."
	[ "$check_skip" -gt 0 ] && echo "[  SKIPPED ] $check_skip test(s)."
	if [ "$check_fail" -gt 0 ]; then
		echo "[  FAILED  ] $check_fail test(s), listed below:"
		for n in $check_failed; do
			echo "[  FAILED  ] $n"
		done
		exit 1
	fi
	exit 0
}
