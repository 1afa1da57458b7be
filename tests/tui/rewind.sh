#!/bin/sh
# tests/tui/rewind.sh: going back in time in `hotrow tui`, in a detached
# tmux session. Plays the viral post at 10x, pauses, presses < (back a
# second, the scrub bar shows), > (on a second), Home (t = 0) and End (the
# furthest moment), then, from t = 0, > three times: that frame must be,
# line for line, the frame `hotrow tui --dump --at 3` prints for a run
# played straight to 3 s, the bottom line (scrub bar or key hints) aside.
# Space plays on; q quits and restores the terminal. Every wait polls the
# pane. Prints cmocka-style lines (tests/harness/check.sh).
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${HOTROW_BIN:-$root/build/hotrow}
sock=hotrow-rewind-$$
tmp=$(mktemp -d)
. "$root/tests/harness/check.sh"
. "$root/tests/harness/tmux.sh"
trap cleanup EXIT INT TERM
need_tmux rewind
prefix=rewind

pane() { t capture-pane -p -t "$S" 2>/dev/null; }
# the run's end on the scrub bar
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

echo "[==========] Running hotrow tui's rewind in tmux ($sock)"

start "TERM=screen" "tui --speed 10 --seed 7"
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
end_back() { wait_for "t = $t1 s" && wait_gone "REWIND"; }
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
check "rewind__q_quits_and_restores_the_terminal" restored 0
summary
