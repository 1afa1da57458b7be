#!/bin/sh
# tests/util/executables.sh: every executable file the repository holds
# (git ls-files, mode 755: scripts, bench, labs' demos, tests, CI) answers
# --help and -h with its usage and refuses an unknown option, started the
# two ways a user starts it: from the repository's root (bench/run) and
# from its own directory (./run). tests/util/help.sh holds scripts/ and
# hotrow's commands to the stricter letter; this one makes sure nothing
# executable is left out.
#
# Each run has a clean environment (env -i PATH HOME: no LANG, no LC_*, no
# server URL), no input, 30 s at most, and the server programs and
# apt-get on PATH replaced by stand-ins that write down any call, so a
# script that acts instead of answering shows as a stand-in called or a
# change in the repository (git status). Help: exit 0, "usage" on
# stdout, nothing on stderr. An unknown option (-x): a non-zero exit,
# nothing on stdout, a message on stderr naming it. Prints cmocka-style
# lines and the summary.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd -P)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotrow-exec-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

. "$root/tests/harness/check.sh"

mkdir "$tmp/fake" "$tmp/calls"
chmod 755 "$tmp" "$tmp/fake"
chmod 1777 "$tmp/calls"
for p in pg_ctl initdb postgres psql redis-server redis-cli mariadbd mysqld mariadb \
	mariadb-install-db mysql_install_db apt-get sudo tmux; do
	printf '#!/bin/sh\necho "%s $*" >>%s/calls/called\nexit 1\n' "$p" "$tmp" >"$tmp/fake/$p"
	chmod 755 "$tmp/fake/$p"
done

if ! files=$(git -C "$root" ls-files -s 2>/dev/null | awk '$1 ~ /755$/ { print $4 }') ||
   [ -z "$files" ]; then
	skip executables "not a git checkout: no list of executable files"
	summary
fi

# run DIR FILE ARG: FILE as started from DIR; rc, out, err and why (what
# it left behind: a stand-in called, the repository changed) say what it did.
run() {
	before=$(git -C "$root" status --porcelain 2>/dev/null)
	(cd "$root/$1" && timeout -k 5 30 env -i PATH="$tmp/fake:$PATH" HOME="$HOME" \
		PG_BIN="$tmp/fake" TMPDIR="${TMPDIR:-/tmp}" "$2" "$3" </dev/null >"$tmp/out" 2>"$tmp/err")
	rc=$?
	why=
	if [ -s "$tmp/calls/called" ]; then
		why="called $(head -1 "$tmp/calls/called")"
	elif [ "$(git -C "$root" status --porcelain 2>/dev/null)" != "$before" ]; then
		why="changed the repository: $(git -C "$root" status --porcelain | head -3 | tr '\n' ' ')"
	fi
	rm -f "$tmp/calls/called"
}

for f in $files; do
	d=$(dirname "$f")
	n=$(echo "$f" | tr -c 'a-zA-Z0-9\n' _)
	for how in root own; do
		if [ $how = root ]; then dir=. cmd=$f; else dir=$d cmd=./$(basename "$f"); fi
		for opt in --help -h; do
			name=executables__${n}_${how}_$(echo "$opt" | tr -d -)
			run "$dir" "$cmd" "$opt"
			if [ $rc -ne 0 ]; then bad "$name" "$cmd $opt in $dir: exit $rc, want 0: $(cat "$tmp/err" "$tmp/out" | head -2 | tr '\n' ' ')"
			elif [ -n "$why" ]; then bad "$name" "$cmd $opt in $dir: $why"
			elif ! grep -qi usage "$tmp/out"; then bad "$name" "$cmd $opt in $dir: no usage on stdout: $(head -2 "$tmp/out" | tr '\n' ' ')"
			elif [ -s "$tmp/err" ]; then bad "$name" "$cmd $opt in $dir: wrote on stderr: $(head -2 "$tmp/err" | tr '\n' ' ')"
			else ok "$name"; fi
		done
		name=executables__${n}_${how}_unknown
		run "$dir" "$cmd" -x
		if [ $rc -eq 0 ]; then bad "$name" "$cmd -x in $dir: exit 0, want an unknown option refused"
		elif [ $rc -ge 124 ]; then bad "$name" "$cmd -x in $dir: exit $rc (timed out or killed)"
		elif [ -n "$why" ]; then bad "$name" "$cmd -x in $dir: $why"
		elif [ -s "$tmp/out" ]; then bad "$name" "$cmd -x in $dir: printed on stdout: $(head -2 "$tmp/out" | tr '\n' ' ')"
		elif ! grep -qF -- "-x" "$tmp/err"; then bad "$name" "$cmd -x in $dir: stderr does not name -x: $(head -2 "$tmp/err" | tr '\n' ' ')"
		else ok "$name"; fi
	done
done
summary
