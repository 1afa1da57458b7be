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
#   start ENV [ARGS]     hotrow ARGS (default: tui) under env ENV in a fresh
#                        120x40 session named $prefix1, $prefix2 ... ($prefix
#                        set by the caller); its pid in $tmp/pid, the tty
#                        settings saved before and after; the pane then says
#                        "hotrow exited RC" and stays for inspection
#   restored RC [TEXT]   hotrow exited with RC, the tty settings came back,
#                        the alternate screen is gone (TEXT, LOCK LANES by
#                        default, no longer shows), the cursor is visible
#   sig NAME             send signal NAME to hotrow, once it is up
#   time_shown           the simulated time on the title bar ("t = 1.2 s")
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

# Poll the pane every 0.1 s, at most $1 times, until `grep -q $2 -- $3`
# finds the text ($4 = gone: until it does not).
poll_pane() {
	n=$1
	while [ "$n" -gt 0 ]; do
		if t capture-pane -p -t "$S" 2>/dev/null | grep -q $2 -- "$3"; then
			[ "${4:-}" != gone ] && return 0
		else
			[ "${4:-}" = gone ] && return 0
		fi
		n=$((n - 1))
		sleep 0.1
	done
	return 1
}

wait_for() { poll_pane "${2:-100}" -F "$1"; }

# Like wait_for, with a basic regular expression (grep's), for a mark
# that must sit on a given line: the screen may not have drawn the key yet.
wait_match() { poll_pane "${2:-100}" -G "$1"; }

wait_gone() { poll_pane "${2:-50}" -F "$1" gone; }

check() {
	name=$1; shift
	if "$@"; then
		ok "$name"
	else
		bad "$name" "$*"
		echo "--- pane:"; t capture-pane -p -t "$S" 2>/dev/null | sed 's/^/    /'
	fi
}

# start's shell saves the tty settings, runs hotrow and only then reports
# the exit code, so a check that sees the exit code finds the settings
# written. It traps SIGQUIT (Ctrl-\ reaches the whole foreground group)
# so that it lives to report; hotrow gets the default back at exec. No
# core files. Each start makes its new session before the old one is
# killed, so the server never exits in between.
S= runs=0
start() {
	old=$S runs=$((runs + 1)) S=$prefix$runs
	rm -f "$tmp/before" "$tmp/after" "$tmp/pid"
	t -f /dev/null new-session -d -s "$S" -x 120 -y 40 \
		"trap true QUIT; ulimit -c 0; stty -g > $tmp/before; sh -c 'echo \$\$ > $tmp/pid; exec env $1 $bin ${2:-tui}'; rc=\$?; stty -g > $tmp/after; echo \"hotrow exited \$rc\"; exec sleep 600"
	[ -n "$old" ] && t kill-session -t "$old" 2>/dev/null
	return 0
}

restored() {
	wait_for "hotrow exited $1" && [ -s "$tmp/after" ] &&
		cmp -s "$tmp/before" "$tmp/after" && wait_gone "${2:-LOCK LANES}" 5 &&
		[ "$(t display -p -t "$S" '#{alternate_on}')" = 0 ] &&
		[ "$(t display -p -t "$S" '#{cursor_flag}')" = 1 ]
}

sig() { [ -s "$tmp/pid" ] && kill -"$1" "$(cat "$tmp/pid")"; }
time_shown() { t capture-pane -p -t "$S" | sed -n '1s/.* t = \([0-9.]*\) s.*/\1/p'; }
