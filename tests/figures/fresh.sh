#!/bin/sh
# tests/figures/fresh.sh: the committed figures (docs/figures/*.svg) are
# what the engine draws today: scripts/figures redraws them into a scratch
# directory and each must match byte for byte. When this fails after a
# change to the engine, run `make figures`, look at them, and commit.
# Prints cmocka-style summary lines.
. "$(dirname "$0")/../harness/usage.sh"
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 failed_names=
if ! scripts/figures "$tmp" 2>"$tmp/err"; then
	fail=1 failed_names=figures__draw
	echo "[  FAILED  ] figures__draw: $(cat "$tmp/err")"
fi
for f in "$tmp"/*.svg; do
	[ -e "$f" ] || continue
	name=figures__$(basename "$f" .svg | tr - _)
	if cmp -s "$f" "docs/figures/$(basename "$f")"; then
		pass=$((pass + 1)); echo "[       OK ] $name"
	else
		fail=$((fail + 1)); failed_names="$failed_names $name"
		echo "[  FAILED  ] $name: docs/figures/$(basename "$f") is out of date with the engine (run make figures)"
	fi
	# well formed: one svg element, closed
	if ! grep -q '^<svg ' "$f" || [ "$(tail -1 "$f")" != "</svg>" ]; then
		fail=$((fail + 1)); failed_names="$failed_names ${name}_closed"
		echo "[  FAILED  ] ${name}_closed: not a closed SVG"
	fi
done
echo "[==========] $((pass + fail)) test(s) run."
echo "[  PASSED  ] $pass test(s)."
if [ "$fail" -gt 0 ]; then
	echo "[  FAILED  ] $fail test(s), listed below:"
	for n in $failed_names; do echo "[  FAILED  ] $n"; done
	exit 1
fi
