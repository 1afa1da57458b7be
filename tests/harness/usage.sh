# tests/harness/usage.sh: sourced first by a test script that takes no
# arguments, before it makes or starts anything. -h or --help prints
# "usage: SCRIPT" and the script's opening comment on stdout and exits 0;
# any other argument is refused with one line on stderr and exit 2. POSIX
# sh keeps the script's own arguments in a sourced file, so $0 and $1 are
# the script's.
case ${1-} in
-h|--help)
	echo "usage: $0 (no arguments; scripts/run-tests script:$0 runs it with the others)"
	echo
	sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
	exit 0 ;;
esac
if [ $# -gt 0 ]; then
	echo "$0: takes no arguments, not '$1' ($0 --help shows the usage)" >&2
	exit 2
fi
