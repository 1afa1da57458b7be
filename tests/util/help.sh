#!/bin/sh
# tests/util/help.sh: every command an instructor or a student starts
# answers --help and -h with its usage and refuses an unknown option, and
# does neither by acting: each file in scripts/, build/hotrow, each command
# `build/hotrow --help` lists and each subcommand those list.
#
# Run from an empty scratch directory, with the server programs and apt-get
# on PATH (and PG_BIN) replaced by stand-ins that write down any call, so
# that a script taking --help for a command or an argument shows as a
# stand-in called, a file in the scratch directory or the repository (git
# status), not as a real server. Help: exit 0, something on stdout, nothing
# on stderr. An unknown option (-x): exit 2, nothing on stdout, one line on
# stderr naming the option and where the usage is (--help). scripts/deps is
# only asked for its help. Prints cmocka-style lines and summary.
# HOTROW_BIN overrides the binary.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd -P)
bin=${HOTROW_BIN:-$root/build/hotrow}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotrow-help-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

. "$root/tests/harness/check.sh"

# The stand-ins: a server run as its own user must be able to write down.
mkdir "$tmp/fake" "$tmp/calls" "$tmp/cwd"
chmod 755 "$tmp" "$tmp/fake"
chmod 1777 "$tmp/calls"
for p in pg_ctl initdb postgres redis-server redis-cli mariadbd mysqld \
	mariadb-install-db mysql_install_db apt-get sudo; do
	printf '#!/bin/sh\necho "%s $*" >>%s/calls/called\nexit 1\n' "$p" "$tmp" >"$tmp/fake/$p"
	chmod 755 "$tmp/fake/$p"
done
PATH=$tmp/fake:$PATH PG_BIN=$tmp/fake
export PATH PG_BIN
# No server is named, so a script that goes on would start one.
unset HOTROW_PG_URL HOTROW_REDIS_URL HOTROW_MYSQL_URL NO_PG NO_REDIS NO_MYSQL

# left NAME: what the command left behind (a stand-in called, a file in
# the scratch directory, a change in the repository), or nothing.
left() {
	if [ -s "$tmp/calls/called" ]; then
		echo "called $(head -1 "$tmp/calls/called")"
	elif [ -n "$(ls -A "$tmp/cwd")" ]; then
		echo "left $(ls -A "$tmp/cwd" | head -3 | tr '\n' ' ')in the directory it ran in"
	elif [ "$(git -C "$root" status --porcelain 2>/dev/null)" != "$before" ]; then
		echo "changed the repository: $(git -C "$root" status --porcelain | head -3 | tr '\n' ' ')"
	fi
	rm -rf "$tmp/calls/called" "$tmp/cwd"/* "$tmp/cwd"/.[!.]* 2>/dev/null
}

# run COMMAND...: run it in the scratch directory, no input, 60 s at most;
# rc, out and err hold what it did.
run() {
	before=$(git -C "$root" status --porcelain 2>/dev/null)
	(cd "$tmp/cwd" && timeout -k 5 60 "$@" </dev/null >"$tmp/out" 2>"$tmp/err")
	rc=$?
}

# helps NAME COMMAND...: exit 0, usage on stdout, nothing else.
helps() {
	name=$1
	shift
	run "$@"
	why=$(left)
	if [ $rc -ne 0 ]; then bad "$name" "exit $rc, want 0: $(cat "$tmp/err" "$tmp/out" | head -2 | tr '\n' ' ')"
	elif [ -n "$why" ]; then bad "$name" "$why"
	elif [ ! -s "$tmp/out" ]; then bad "$name" "printed no usage on stdout"
	elif [ -s "$tmp/err" ]; then bad "$name" "wrote on stderr: $(head -2 "$tmp/err")"
	else ok "$name"; fi
}

# refuses NAME OPTION COMMAND...: exit 2, one line on stderr naming OPTION
# and --help, nothing on stdout, nothing done.
refuses() {
	name=$1 opt=$2
	shift 2
	run "$@"
	why=$(left)
	if [ $rc -ne 2 ]; then bad "$name" "exit $rc, want 2: $(cat "$tmp/err" "$tmp/out" | head -2 | tr '\n' ' ')"
	elif [ -n "$why" ]; then bad "$name" "$why"
	elif [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -qF -- "$opt" "$tmp/err" ||
	     ! grep -qF -- "--help" "$tmp/err"; then
		bad "$name" "want one line naming '$opt' and --help, got: $(head -3 "$tmp/err" | tr '\n' ' ')"
	elif [ -s "$tmp/out" ]; then bad "$name" "printed on stdout: $(head -2 "$tmp/out")"
	else ok "$name"; fi
}

# The names a help lists under "commands:" or "subcommands:", and the
# words after "hotrow CMD " in its usage lines.
commands() {
	awk '/^(sub)?commands:$/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'
}
subcommands() {
	{ "$bin" "$1" --help | commands; "$bin" "$1" --help | grep -o "hotrow $1 [a-z][a-z]*" |
		sed "s/^hotrow $1 //"; } | sort -u
}

for f in "$root"/scripts/*; do
	s=$(basename "$f")
	helps "help__scripts_${s}_help" "$f" --help
	helps "help__scripts_${s}_h" "$f" -h
	[ "$s" = deps ] && continue   # it installs packages: its help only
	refuses "help__scripts_${s}_unknown" -x "$f" -x
done
# needs-pg runs its command when a server is named: -x must not be one.
refuses help__scripts_needs-pg_unknown_with_pg -x env HOTROW_PG_URL=postgresql:///nowhere \
	"$root/scripts/needs-pg" -x

if [ ! -x "$bin" ]; then
	skip help__hotrow "no $bin: make builds it"
	summary
fi
helps help__hotrow_help "$bin" --help
helps help__hotrow_h "$bin" -h
refuses help__hotrow_unknown -x "$bin" -x
# The unknown command's line names every command the help lists.
cmds=$("$bin" --help | commands)
"$bin" -x 2>"$tmp/err" >/dev/null
missing=
for c in $cmds; do
	grep -q "[ ,]${c}[,;]" "$tmp/err" || missing="$missing $c"
done
if [ -z "$cmds" ]; then bad help__hotrow_unknown_lists_commands "hotrow --help lists no commands:"
elif [ -n "$missing" ]; then bad help__hotrow_unknown_lists_commands "hotrow -x does not name:$missing"
else ok help__hotrow_unknown_lists_commands; fi
for c in $cmds; do
	helps "help__hotrow_${c}_help" "$bin" "$c" --help
	helps "help__hotrow_${c}_h" "$bin" "$c" -h
	refuses "help__hotrow_${c}_unknown" -x "$bin" "$c" -x
	for sub in $(subcommands "$c"); do
		helps "help__hotrow_${c}_${sub}_help" "$bin" "$c" "$sub" --help
		helps "help__hotrow_${c}_${sub}_h" "$bin" "$c" "$sub" -h
		refuses "help__hotrow_${c}_${sub}_unknown" -x "$bin" "$c" "$sub" -x
	done
done
summary
