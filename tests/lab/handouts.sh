#!/bin/sh
# tests/lab/handouts.sh: every command a lab handout prints works verbatim.
#
# The commands are the lines of labs/*/README.md's code blocks (fenced, or
# indented four spaces) that start with "hotrow ", "build/hotrow " or
# "make " (a line ending in "\" goes on with the next). Each runs as it is
# printed, from the repository's root, with the binary under test first on
# PATH as "hotrow". It must exit 0 unless its trailing comment says
# otherwise, in words the handout's reader understands too:
#   ... # exits 1 ...   the command fails on purpose (a planted mistake
#                       caught, a skeleton not written yet): it must exit 1
#   ... # long ...      takes minutes: skipped here, with a notice
#   ... # live ...      waits for a person at a terminal: skipped, with a notice
# A command naming $HOTROW_PG_URL or scripts/pg is skipped when
# HOTROW_PG_URL is not set, one naming $HOTROW_REDIS_URL when that is not.
# Each gets HOTROW_HANDOUT_TIMEOUT seconds (default 300). Prints
# cmocka-style summary lines. HOTROW_BIN overrides the binary (default
# build/hotrow).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$root" || exit 1
bin=${HOTROW_BIN:-build/hotrow}
limit=${HOTROW_HANDOUT_TIMEOUT:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$root/tests/harness/check.sh"

if [ ! -x "$bin" ]; then
	echo "[  FAILED  ] 1 test(s), listed below:"
	echo "handouts: $bin is not built"
	exit 1
fi
mkdir -p "$tmp/path"
ln -s "$(cd "$(dirname "$bin")" && pwd -P)/$(basename "$bin")" "$tmp/path/hotrow"

# FILE:LINE<tab>COMMAND for every command the handouts print.
python3 - labs/*/README.md >"$tmp/commands" <<'EOF'
import re, sys

def commands(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    out, fenced, after_blank_or_code, i = [], False, True, 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith('```'):
            fenced = not fenced
            i += 1
            continue
        indented = line.startswith('    ') and after_blank_or_code
        after_blank_or_code = line.strip() == '' or indented or fenced
        text = line.strip()
        if (fenced or indented) and re.match(r'(hotrow|build/hotrow|make) ', text):
            start = i + 1
            while text.endswith('\\') and i + 1 < len(lines):
                i += 1
                text = text[:-1] + ' ' + lines[i].strip()
            out.append((start, text))
        i += 1
    return out

for path in sys.argv[1:]:
    for n, text in commands(path):
        print('%s:%d\t%s' % (path, n, text))
EOF
if [ ! -s "$tmp/commands" ]; then
	bad handouts__found "no command found in labs/*/README.md"
fi

while IFS='	' read -r where cmd; do
	name="handout:$where"
	comment=
	case "$cmd" in *'#'*) comment=${cmd#*#} ;; esac
	want=0
	case " $comment " in
	*" long "*|*" long,"*|*" long;"*|*" long:"*) skip "$name" "marked long: $cmd"; continue ;;
	*" live "*|*" live,"*|*" live;"*|*" live:"*) skip "$name" "marked live: $cmd"; continue ;;
	*"exits 1"*) want=1 ;;
	esac
	case "$cmd" in
	*HOTROW_PG_URL*|*scripts/pg*)
		if [ -z "${HOTROW_PG_URL:-}" ]; then
			skip "$name" "HOTROW_PG_URL is not set: $cmd"; continue
		fi ;;
	esac
	case "$cmd" in
	*HOTROW_REDIS_URL*|*scripts/redis*)
		if [ -z "${HOTROW_REDIS_URL:-}" ]; then
			skip "$name" "HOTROW_REDIS_URL is not set: $cmd"; continue
		fi ;;
	esac
	echo "[ RUN      ] $name: $cmd"
	PATH="$tmp/path:$PATH" timeout -k 10 "$limit" sh -c "$cmd" </dev/null >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		ok "$name"
	else
		tail -n 15 "$tmp/out" | sed 's/^/    | /'
		if [ "$rc" -eq 124 ]; then
			bad "$name" "still running after $limit s (mark it # long, or shorten it)"
		else
			bad "$name" "exited $rc, the handout promises $want"
		fi
	fi
done <"$tmp/commands"

summary
