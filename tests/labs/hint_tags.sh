#!/bin/sh
# tests/labs/hint_tags.sh: every hint tag a lab's checks print resolves to
# a hint in labs/NN-name/hints.md, whose headings carry tags as
# "[tag] [tag]" (one tag per bracket pair, or several split by spaces).
# Prints cmocka-style lines, one check per lab.
set -u
cd "$(dirname "$0")/../.."
pass=0 fail=0 failed_names=
for dir in tests/labs/[0-9][0-9]-*/; do
	lab=$(basename "$dir")
	hints="labs/$lab/hints.md"
	missing=$(python3 - "$dir" "$hints" <<'PY'
import re, sys, glob
d, hints = sys.argv[1], sys.argv[2]
try:
    text = open(hints).read()
except OSError:
    text = ""
have = set()
for head in re.findall(r'^## .*$', text, re.M):
    for group in re.findall(r'\[([^\]]*)\]', head):
        have.update(group.split())   # as the runner reads them: split on spaces only
used = set()
for path in glob.glob(d + '*.c'):
    src = open(path).read()
    for call in re.findall(r'\blt_(?:expect\w*|fail)\s*\((.*?)\);', src, re.S):
        for lit in re.findall(r'"([a-z][a-z0-9-]*)"\s*[,)]', call + ')'):
            used.update(t for t in re.split(r'[ ,]+', lit) if t)
print(' '.join(sorted(used - have)))
PY
)
	if [ -z "$missing" ]; then
		pass=$((pass + 1)); echo "[       OK ] hint_tags__$lab"
	else
		fail=$((fail + 1)); failed_names="$failed_names hint_tags__$lab"
		echo "[  FAILED  ] hint_tags__$lab: tags with no hint in $hints: $missing"
	fi
done
echo "[==========] $((pass + fail)) test(s) run."
echo "[  PASSED  ] $pass test(s)."
if [ "$fail" -gt 0 ]; then
	echo "[  FAILED  ] $fail test(s), listed below:"
	for n in $failed_names; do echo "[  FAILED  ] $n"; done
	exit 1
fi
exit 0
