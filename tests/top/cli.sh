#!/bin/sh
# tests/top/cli.sh: `hotrow top` through the binary: --help, bad usage
# (exit 2, one line naming the option), an unreachable server (exit 1, one
# line saying what to do), and, with HOTROW_PG_URL, one --dump frame.
# Prints cmocka-style summary lines. HOTROW_BIN overrides the binary.
. "$(dirname "$0")/../harness/usage.sh"
set -u
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../harness/check.sh"

if [ ! -x "$bin" ]; then
	echo "[  FAILED  ] 1 test(s), listed below:"
	echo "top cli: $bin is not built"
	exit 1
fi

# top__help: exit 0, the usage on stdout.
out=$("$bin" top --help 2>&1); rc=$?
case "$out" in
"usage: hotrow top"*) [ $rc -eq 0 ] && ok top__help || bad top__help "exit $rc" ;;
*) bad top__help "no usage line" ;;
esac

# top__usage_NAME: exit 2 and one line on stderr naming the option.
usage() {
	name=$1 want=$2; shift 2
	"$bin" top "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -q -- "$want" "$tmp/err"; then
		ok "top__usage_$name"
	else
		bad "top__usage_$name" "exit $rc, $lines line(s): $(head -c 200 "$tmp/err")"
	fi
}
usage interval   "--interval-ms" --db postgresql:///x --dump --interval-ms 5
usage size       "--size"        --db postgresql:///x --dump --size 10
usage after      "--after"       --db postgresql:///x --dump --after -1
usage sqlite     "--db"          --db sqlite::memory: --dump
usage unknown    "--frobnicate"  --frobnicate
usage no_tty     "--dump"        --db postgresql:///x
saved=${HOTROW_PG_URL-}
HOTROW_PG_URL=
export HOTROW_PG_URL
usage no_url     "HOTROW_PG_URL" --dump
HOTROW_PG_URL=$saved

# top__unreachable: exit 1, one line that says how to start a server.
"$bin" top --db "postgresql:///x?host=$tmp/nowhere" --dump >"$tmp/out" 2>"$tmp/err"; rc=$?
lines=$(wc -l <"$tmp/err")
if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -q "scripts/pg up" "$tmp/err"; then
	ok top__unreachable
else
	bad top__unreachable "exit $rc, $lines line(s): $(head -c 300 "$tmp/err")"
fi

# top__password_hidden: the unreachable server's URL, password as ***, and
# libpq's message about a bad one (which quotes the password back) too.
for url in "postgresql://u:s3cretpw@/x?host=$tmp/nowhere" "postgresql://u:s3cretpw%zz@/x?host=$tmp/nowhere" \
	"host=$tmp/nowhere password=s3cretpw"; do
	"$bin" top --db "$url" --dump >"$tmp/out" 2>"$tmp/err"
	grep -q "s3cretpw" "$tmp/err" && break
done
if ! grep -q "s3cretpw" "$tmp/err" && grep -q "password=\*\*\*" "$tmp/err"; then
	ok top__password_hidden
else
	bad top__password_hidden "$(head -c 300 "$tmp/err")"
fi

# top__dump_frame: with a server, one frame with every section.
if [ -n "${HOTROW_PG_URL:-}" ]; then
	if "$bin" top --db "$HOTROW_PG_URL" --dump --after 0 --size 120x30 >"$tmp/out" 2>"$tmp/err" &&
	   grep -q "CONTENDED ROWS" "$tmp/out" && grep -q "BACKENDS" "$tmp/out" &&
	   grep -q "PER SECOND" "$tmp/out" && grep -q "SAMPLER COST" "$tmp/out"; then
		ok top__dump_frame
	else
		bad top__dump_frame "$(head -c 300 "$tmp/err")"
	fi
fi

summary
