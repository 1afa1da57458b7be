#!/bin/sh
# tests/tui/rewind.sh: going back in time in `hotrow tui`, in a detached
# tmux session. Plays the viral post at 10x, pauses, presses < (back a
# second, the scrub bar shows), > (on a second), Home (t = 0) and End (the
# furthest moment), then, from t = 0, > three times: that frame must be,
# line for line, the frame `hotrow tui --dump --at 3` prints for a run
# played straight to 3 s, the bottom line (scrub bar or key hints) aside.
# Space plays on; q quits. Every wait polls the pane. Prints cmocka-style
# lines (tests/harness/check.sh).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${HOTROW_BIN:-$root/build/hotrow}
sock=hotrow-rewind-$$
tmp=$(mktemp -d)
S=rewind
. "$root/tests/harness/check.sh"

t() { tmux -L "$sock" "$@"; }
cleanup() { t kill-server 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM

if ! command -v tmux >/dev/null 2>&1; then
	skip rewind "tmux is not installed (scripts/deps installs it)"
	summary
fi
if [ ! -x "$bin" ]; then
	bad rewind "$bin is not built"
	summary
fi

pane() { t capture-pane -p -t "$S" 2>/dev/null; }
# wait_for TEXT: poll the pane until it shows TEXT (10 s at most).
wait_for() {
	n=100
	while [ "$n" -gt 0 ]; do
		pane | grep -qF -- "$1" && return 0
		n=$((n - 1))
		sleep 0.1
	done
	return 1
}
check() { # check NAME COMMAND...: one test; a failure shows the pane
	name=$1; shift
	if "$@"; then
		ok "$name"
	else
		bad "$name" "$*"
		echo "--- pane:"; pane | sed 's/^/    /'
	fi
}
# the simulated time in the title bar, and the run's end on the scrub bar
time_shown() { pane | sed -n '1s/.* t = \([0-9.]*\) s.*/\1/p'; }
end_shown() { pane | sed -n 's/.*REWIND [0-9.]* \/ \([0-9.]*\) s.*/\1/p'; }
# at T: the title bar says t = T s (to its precision), the scrub bar T too
at() {
	n=100
	while [ "$n" -gt 0 ]; do
		s=$(time_shown)
		[ -n "$s" ] && [ "$(echo "$s == $1" | bc)" = 1 ] &&
			pane | grep -qF "REWIND $(printf %.1f "$1") / " && return 0
		n=$((n - 1))
		sleep 0.1
	done
	return 1
}
gone() { n=50; while [ $n -gt 0 ]; do pane | grep -qF "REWIND" || return 0; n=$((n-1)); sleep 0.1; done; return 1; }

echo "[==========] Running hotrow tui's rewind in tmux ($sock)"

t -f /dev/null new-session -d -s "$S" -x 120 -y 40 \
	"ulimit -c 0; TERM=screen $bin tui --speed 10 --seed 7; echo \"hotrow exited \$?\"; exec sleep 600"
wait_for "LOCK LANES"
# let five simulated seconds pass, then pause there
n=100; while [ $n -gt 0 ]; do
	t0=$(time_shown); [ -n "$t0" ] && [ "${t0%%.*}" -ge 5 ] && break
	n=$((n - 1)); sleep 0.1
done
t send-keys -t "$S" Space
wait_for "PAUSED"
sleep 0.2
t1=$(time_shown)

t send-keys -t "$S" '<'
back=$(echo "$t1 - 1" | bc)
check "rewind__less_than_goes_back_a_second" at "$back"
check "rewind__scrub_bar_shows_the_run's_end" test "$(end_shown)" = "$(printf %.1f "$t1")"
t send-keys -t "$S" '<'
t send-keys -t "$S" '>'
check "rewind__greater_than_goes_on_a_second" at "$back"
t send-keys -t "$S" Home
check "rewind__home_goes_to_t_0" at 0
t send-keys -t "$S" End
end_back() { wait_for "t = $t1 s" && gone; }
check "rewind__end_comes_back_to_the_furthest_moment" end_back

# Same seed, same picture: t = 0, then on three seconds, against a run
# played straight to 3 s.
t send-keys -t "$S" Home
at 0
t send-keys -t "$S" '>' '>' '>'
at 3
pane | sed '$d' | sed -n '1,39p' > "$tmp/scrubbed"
"$bin" tui --dump --at 3 --speed 10 --seed 7 --paused --size 120x40 | sed -n '1,39p' > "$tmp/straight"
same() { diff "$tmp/straight" "$tmp/scrubbed" > "$tmp/diff" || { cat "$tmp/diff"; return 1; }; }
check "rewind__scrubbed_frame_is_the_straight_frame" same

# --rewind-to goes back: a time after --at is a usage error, in one line
late() { out=$("$bin" tui --dump --at 3 --rewind-to 5 2>&1); rc=$?
	[ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q -- '--rewind-to 5 is after --at 3'; }
check "rewind__rewind_to_after_at_is_a_usage_error" late

t send-keys -t "$S" Space
plays() { wait_for "running" && n=50 && while [ $n -gt 0 ]; do
	[ "$(echo "$(time_shown) > 3" | bc)" = 1 ] && return 0; n=$((n-1)); sleep 0.1; done; return 1; }
check "rewind__space_plays_on_from_the_past" plays
t send-keys -t "$S" q
check "rewind__q_quits" wait_for "hotrow exited 0"
summary
