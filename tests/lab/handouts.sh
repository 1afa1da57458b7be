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
#
# The commands run in a scratch copy of the kit (tests/harness/kit.sh's
# kit_copy, and its lab test objects), never in this tree: the runner a
# handout drives removes a lab's test binaries when it first builds the
# lab, and writes .hotrow/progress, so in this tree it would take the
# binaries from under every suite that runs beside it. The copy's
# scripts/pg, scripts/redis and scripts/mysql are this tree's, so a
# handout's `make mysql-up` or `$(scripts/pg up)` finds the server the
# other suites use rather than starting a second one.
#
# Most of the time goes to drivers that run for the seconds they are
# told, not to the CPU, so one handout's commands run in order while
# other handouts' run beside them: HOTROW_HANDOUT_JOBS workers (default
# 4; 1: one after another) take the next handout left, the longest
# first. A handout's commands stay together and in order (they build
# the same targets and may rely on each other). Every worker but the
# first gets a PostgreSQL database of its own on the same server, so a
# lab's checks that read pg_locks or pg_stat_activity of their database
# never see another lab's driver; when one cannot be made, one worker.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$root" || exit 1
bin=${HOTROW_BIN:-build/hotrow}
limit=${HOTROW_HANDOUT_TIMEOUT:-300}
tmp=$(mktemp -d)
# A handout's `make mysql-up` (or pg-up, redis-up) starts a server in this
# tree when the URLs point elsewhere: one that was not running before the
# commands is stopped after them.
started=
for s in pg mysql redis; do
	scripts/$s status >/dev/null 2>&1 || started="$started $s"
done
stop_started() {
	for s in $started; do
		if scripts/$s status >/dev/null 2>&1; then scripts/$s down >/dev/null 2>&1; fi
	done
}
trap 'stop_started; rm -rf "$tmp"' EXIT

. "$root/tests/harness/check.sh"

if [ ! -x "$bin" ]; then
	echo "[  FAILED  ] 1 test(s), listed below:"
	echo "handouts: $bin is not built"
	exit 1
fi
mkdir -p "$tmp/path"
ln -s "$(cd "$(dirname "$bin")" && pwd -P)/$(basename "$bin")" "$tmp/path/hotrow"

. "$root/tests/harness/kit.sh"
kit=$tmp/kit
if ! kit_copy "$kit"; then
	bad handouts__copy "could not copy the kit to $kit"
	summary
fi
for s in pg mysql redis; do
	printf '#!/bin/sh\n# handouts.sh: the server of the tree this copy came from\nexec "%s/scripts/%s" "$@"\n' \
		"$root" "$s" >"$kit/scripts/$s"
done
cd "$kit" || exit 1
export HOTROW_ROOT="$kit"

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

# A handout's weight, to start the longest first: its drivers and checks
# (a run of the solutions twice: it gets through every phase), the
# seconds a command waits on purpose (--after N), one for anything else.
def weight(text):
    w = 1
    if re.search(r' lab (run|check) ', text):
        w = 10 if '--solutions' in text else 5
    m = re.search(r'--after (\d+)', text)
    return w + (int(m.group(1)) if m else 0)

found = [(path, commands(path)) for path in sys.argv[1:]]
found.sort(key=lambda f: -sum(weight(t) for _, t in f[1]))
for path, cmds in found:
    for n, text in cmds:
        print('%s:%d\t%s' % (path, n, text))
EOF
if [ ! -s "$tmp/commands" ]; then
	bad handouts__found "no command found in labs/*/README.md"
fi

# try WORKER: run the commands in $tmp/todo.WORKER, one after another.
try() {
	w=$1
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
		PATH="$tmp/path:$PATH" timeout -k 10 "$limit" sh -c "$cmd" </dev/null >"$tmp/out.$w" 2>&1
		rc=$?
		if [ "$rc" -eq "$want" ]; then
			ok "$name"
		else
			tail -n 15 "$tmp/out.$w" | sed 's/^/    | /'
			if [ "$rc" -eq 124 ]; then
				bad "$name" "still running after $limit s (mark it # long, or shorten it)"
			else
				bad "$name" "exited $rc, the handout promises $want"
			fi
		fi
	done <"$tmp/todo.$w"
}

# worker N: take the handouts left (a directory made first claims one) and
# run them; the counts go to $tmp/counts.N.
worker() {
	w=$1
	for f in $(cut -d: -f1 "$tmp/commands" | uniq); do
		mkdir "$tmp/claim.$(echo "$f" | tr / _)" 2>/dev/null || continue
		grep "^$f:" "$tmp/commands" >"$tmp/todo.$w"
		try "$w"
	done
	echo "$check_pass $check_fail $check_skip $check_failed" >"$tmp/counts.$w"
}

# worker_db N: a database of worker N's own on HOTROW_PG_URL's server; its
# URL on stdout, nothing when it cannot be made.
worker_db() {
	db=hotrow_handout_$$_$1
	psql "$HOTROW_PG_URL" -qAtX -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" \
		>/dev/null 2>&1 || return 0
	echo "$db" >>"$tmp/dbs"
	case $HOTROW_PG_URL in
	postgres://*\?*|postgresql://*\?*) echo "$HOTROW_PG_URL&dbname=$db" ;;
	postgres://*|postgresql://*) echo "$HOTROW_PG_URL?dbname=$db" ;;
	*) echo "$HOTROW_PG_URL dbname=$db" ;;
	esac
}

jobs=${HOTROW_HANDOUT_JOBS:-4}
case $jobs in ''|*[!0-9]*|0) jobs=1 ;; esac
# What the handouts' commands build shares the kit's libraries and the
# checks' harness: bring it all up to date once, before the workers, so
# that two makes never write one file at once. The commands still build
# (and say so) themselves; a target that does not build here fails there.
if [ "$jobs" -gt 1 ]; then
	targets=
	for d in labs/[0-9][0-9]-*/; do
		l=$(basename "$d")
		targets="$targets build/labs/$l/test-exercise"
		[ -f "$d/run.c" ] && targets="$targets build/labs/$l/run-exercise"
		[ -f "$d/run.c" ] && [ -d "solutions/$l" ] && targets="$targets build/labs/$l/run-solution"
	done
	# shellcheck disable=SC2086
	make -s -k --no-print-directory SAN= $targets >/dev/null 2>&1
fi
: >"$tmp/dbs"
if [ "$jobs" -gt 1 ] && [ -n "${HOTROW_PG_URL:-}" ]; then
	k=1
	while [ "$k" -lt "$jobs" ]; do
		url=$(command -v psql >/dev/null && worker_db "$k")
		if [ -z "$url" ]; then
			echo "NOTICE: handouts: no PostgreSQL database of its own for a second worker; one worker"
			jobs=1
			break
		fi
		eval "workerurl_$k=\$url"
		k=$((k + 1))
	done
fi
k=0
while [ "$k" -lt "$jobs" ]; do
	(
		eval "url=\${workerurl_$k:-}"
		[ -z "$url" ] || export HOTROW_PG_URL="$url"
		worker "$k" >"$tmp/log.$k" 2>&1
	) &
	k=$((k + 1))
done
wait
k=0
while [ "$k" -lt "$jobs" ]; do
	cat "$tmp/log.$k"
	if read -r p f s names <"$tmp/counts.$k"; then
		check_pass=$((check_pass + p)) check_fail=$((check_fail + f)) check_skip=$((check_skip + s))
		check_failed="$check_failed $names"
	else
		bad "handouts__worker_$k" "a worker ended without its counts"
	fi
	k=$((k + 1))
done
while read -r db; do
	psql "$HOTROW_PG_URL" -qAtX -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
done <"$tmp/dbs"

summary
