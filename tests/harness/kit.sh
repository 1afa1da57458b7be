# tests/harness/kit.sh: set-ups that several script tests share, beside
# check.sh (source that first: these report through skip, bad, summary).
#
# Interface (sh):
#   . "$root/tests/harness/kit.sh"
#   kit_copy DIR        copy the kit's sources to DIR (created), with the
#                       kit's built objects and libraries but not .git,
#                       .hotrow/ or the build's labs, mutants, sanitizer
#                       builds, tests and benches: a scratch kit where
#                       build/hotrow can run with HOTROW_ROOT=DIR and touch
#                       nothing real
#   lab01_driver NAME   set $driver to Lab 01's driver built with the
#                       reference solution (run from the repository's
#                       root, HOTROW_BIN's build); when there is none,
#                       report NAME skipped (a student kit) or failed (not
#                       built) and end the script with summary
kit_copy() {
	mkdir -p "$1" || return 1
	(cd "$root" && tar --exclude=./build/labs --exclude=./build/mutants --exclude="./build/san-*" \
		--exclude=./build/student-kit --exclude=./build/tests --exclude=./build/bench \
		--exclude=./.git --exclude=./.hotrow -cf - .) | (cd "$1" && tar xf -)
}

lab01_driver() {
	driver=$(dirname "${HOTROW_BIN:-build/hotrow}")/labs/01-hot-row/run-solution
	if [ ! -x "$driver" ] && [ ! -d solutions/01-hot-row ]; then
		skip "$1" "no reference solution to drive here (a student kit)"
		summary
	fi
	if [ ! -x "$driver" ]; then
		bad "$1" "$driver is not built"
		summary
	fi
}
