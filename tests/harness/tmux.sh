# tests/harness/tmux.sh: driving a full-screen program in a detached tmux
# session on a server of its own (-L), for the end-to-end screen tests.
#
# Interface (sh), after tests/harness/check.sh, with $sock (the server's
# name), $tmp (a scratch directory) and $S (the session, set by the test's
# own start function) in the caller:
#   t ARGS...            tmux on that server
#   cleanup              kill the server and remove $tmp (trap it on EXIT)
#   wait_for TEXT [N]    poll the pane until it shows TEXT, N tenths of a
#                        second at most (100: generous for sanitizer builds
#                        on a busy machine; a pass costs no more)
#   wait_gone TEXT [N]   poll until the pane no longer shows TEXT (50)
#   check NAME CMD...    one test: ok, or bad with the pane printed
#   need_tmux            skip everything (and exit) when tmux is missing,
#                        fail when $bin is not built
# Every wait polls the pane; nothing sleeps blindly.

t() { tmux -L "$sock" "$@"; }
cleanup() { t kill-server 2>/dev/null; rm -rf "$tmp"; }

need_tmux() {
	if ! command -v tmux >/dev/null 2>&1; then
		skip "$1" "tmux is not installed (scripts/deps installs it)"
		summary
	fi
	if [ ! -x "$bin" ]; then
		bad "$1" "$bin is not built"
		summary
	fi
}

wait_for() {
	n=${2:-100}
	while [ "$n" -gt 0 ]; do
		t capture-pane -p -t "$S" 2>/dev/null | grep -qF -- "$1" && return 0
		n=$((n - 1))
		sleep 0.1
	done
	return 1
}

wait_gone() {
	n=${2:-50}
	while [ "$n" -gt 0 ]; do
		t capture-pane -p -t "$S" 2>/dev/null | grep -qF -- "$1" || return 0
		n=$((n - 1))
		sleep 0.1
	done
	return 1
}

check() {
	name=$1; shift
	if "$@"; then
		ok "$name"
	else
		bad "$name" "$*"
		echo "--- pane:"; t capture-pane -p -t "$S" 2>/dev/null | sed 's/^/    /'
	fi
}
