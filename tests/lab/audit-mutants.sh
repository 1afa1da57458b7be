#!/bin/sh
# tests/lab/audit-mutants.sh: the audit (runner/audit.h) lets through
# every reference solution and every mutant in tests/mutants/: they are
# the code students legitimately write, right or wrong, and a check can
# catch a mistake only in code it is allowed to run.
#
# Each mutant is read by `hotrow lab audit NN -- FILE.c ...` where make
# test built it (build/mutants/, newer than its patch), else applied to a
# scratch copy of its solution and compiled with the kit's flags. Under
# make test, which builds the mutants beside the suites, it first waits
# for that build to end (the file HOTROW_MUTANTS_DONE names).
# Prints cmocka-style lines and the summary scripts/run-tests adds up.
#
#   tests/lab/audit-mutants.sh        uses $HOTROW_BIN, else build/hotrow
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${HOTROW_BIN:-$root/build/hotrow}
. "$root/tests/harness/check.sh"
if [ ! -x "$bin" ]; then
	check_bad audit_mutants__binary "$bin is missing; run make first"
	summary
fi
if [ -n "${HOTROW_MUTANTS_DONE:-}" ]; then
	while [ ! -f "$HOTROW_MUTANTS_DONE" ]; do sleep 1; done
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotrow-audit-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$root" || exit 1
unset MAKEFLAGS MAKELEVEL MFLAGS
# The kit's own compiler flags, as make has them.
flags=$(printf 'print-flags:\n\t@echo $(CPPFLAGS) $(CFLAGS)\n' | make -s -f Makefile -f - print-flags WERROR= SAN=)
cc=${CC:-cc}

# built DIR REF: every DIR/*.c has its .o, newer than REF and than itself.
built() {
	for src in "$1"/*.c; do
		[ -f "${src%.c}.o" ] && [ "${src%.c}.o" -nt "$2" ] && [ "${src%.c}.o" -nt "$src" ] || return 1
	done
}

# audit NAME DIR LAB [built]: compile DIR/*.c (unless built), audit them.
audit() {
	[ "${4:-}" = built ] || for src in "$2"/*.c; do
		# shellcheck disable=SC2086
		if ! $cc $flags -c "$src" -o "${src%.c}.o" 2>"$tmp/cc.err"; then
			check_bad "$1" "does not compile: $(head -3 "$tmp/cc.err" | tr '\n' ' ')"
			return 0
		fi
	done
	# shellcheck disable=SC2046
	if "$bin" lab audit "$3" -- "$2"/*.c >"$tmp/out" 2>&1; then
		check_ok "$1"
	else
		check_bad "$1" "$(cat "$tmp/out")"
	fi
}

for sol in solutions/[0-9][0-9]-*/; do
	lab=$(basename "$sol")
	d=$tmp/$lab/solution
	mkdir -p "$d" && cp "$sol"*.c "$d"/ 2>/dev/null
	echo "[ RUN      ] audit__solution_$lab"
	audit "audit__solution_$lab" "$d" "$lab"
	for p in tests/mutants/"$lab"/*.patch; do
		[ -f "$p" ] || continue
		m=$(basename "$p" .patch)
		echo "[ RUN      ] audit__mutant_${lab}_$m"
		d=build/mutants/$lab/$m/solutions/$lab
		if [ -d "$d" ] && built "$d" "$p"; then
			audit "audit__mutant_${lab}_$m" "$d" "$lab" built
			continue
		fi
		d=$tmp/$lab/$m
		mkdir -p "$d/solutions" && cp -R "$sol" "$d/solutions/$lab"
		if ! patch -s -p1 -d "$d" <"$p" >"$tmp/patch.err" 2>&1; then
			check_bad "audit__mutant_${lab}_$m" "the patch does not apply: $(head -2 "$tmp/patch.err")"
			continue
		fi
		audit "audit__mutant_${lab}_$m" "$d/solutions/$lab" "$lab"
	done
done
summary
