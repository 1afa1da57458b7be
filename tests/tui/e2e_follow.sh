#!/bin/sh
# tests/tui/e2e_follow.sh: following one like in `hotrow tui` end to end,
# in a detached tmux session on its own server (-L): f picks the next like
# to arrive, the card shows its place and then how it ended with the bar
# of where its time went; f again follows the slowest in flight, again
# nobody; the same in ASCII without colour (LANG=C, NO_COLOR); the
# viral-post tour follows the slowest at its third step; q restores the
# terminal. Every wait polls the pane. Prints cmocka-style lines.
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${HOTROW_BIN:-$root/build/hotrow}
sock=hotrow-follow-$$
tmp=$(mktemp -d)
. "$root/tests/harness/check.sh"
. "$root/tests/harness/tmux.sh"
trap cleanup EXIT INT TERM
need_tmux e2e_follow

prefix=follow
pane_has() { t capture-pane -p -t "$S" | grep -q -- "$1"; }

echo "[==========] Running hotrow tui's follow in tmux ($sock)"

# One row over its ceiling (600/s on 500/s), started paused and stepped a
# tick (100 ms) at a time with n: after 0.6 s some 60 wait; the like that
# arrives next is still in the line a tick later, then done.
over="--rps 600 --hold-ms 2 --pool 0 --unrelated-rps 0 --arrivals constant"
start "TERM=screen" "tui $over --paused"
wait_for "PAUSED" 300
for k in 1 2 3 4 5 6; do t send-keys -t "$S" n; done
wait_for "t = 0.6 s"
t send-keys -t "$S" f
check "follow__f_follows_the_next_arrival" wait_for "following the next like to arrive"
check "follow__not_arrived_yet" wait_for "not arrived yet"
t send-keys -t "$S" n
check "follow__card_shows_its_place" wait_for "lock wait, position"
check "follow__mark_in_the_lane" wait_match '^ row .*│.*◉'
check "follow__joined_at_its_position" wait_for "joined row 0's lock queue at position"
t send-keys -t "$S" Space
check "follow__card_says_how_it_ended" wait_for "completed after"
check "follow__bar_of_where_its_time_went" wait_for "▒ lock wait"
check "follow__timeline_ends_committed" wait_for "committed, released row 0"
check "follow__mark_leaves_the_lane" sh -c "! tmux -L $sock capture-pane -p -t $S | grep -q '^ row .*◉'"
t send-keys -t "$S" f
check "follow__f_again_the_slowest_in_flight" wait_for "FOLLOWING the oldest in flight"
t send-keys -t "$S" f
check "follow__f_again_nobody" wait_gone "FOLLOWING"
t send-keys -t "$S" '?'
check "follow__help_lists_f" wait_for "follow a like: the next to arrive"
t send-keys -t "$S" x
t send-keys -t "$S" q
check "follow__q_restores_the_terminal" restored 0

# ASCII and no colour: the mark is @, the bar's places are letters.
start "TERM=screen LANG=C LC_ALL=C NO_COLOR=1" "tui $over --paused"
wait_for "PAUSED" 300
for k in 1 2 3 4 5 6; do t send-keys -t "$S" n; done
wait_for "t = 0.6 s"
t send-keys -t "$S" f n
check "follow__ascii_mark_in_the_lane" wait_match '^ row .*|.*@'
t send-keys -t "$S" Space
check "follow__ascii_card" wait_for "@ FOLLOWING like #"
check "follow__ascii_bar" wait_for "L lock wait"
check "follow__no_colour" sh -c "! tmux -L $sock capture-pane -e -p -t $S | grep -q \"$(printf '\033')\[[0-9;]*3[1-7]m\""
t send-keys -t "$S" q
check "follow__ascii_q_restores_the_terminal" restored 0

# The viral-post tour follows the slowest as the pool runs dry (step 3).
start "TERM=screen" "demo viral-post"
wait_for "step 1 of" 300
for k in 1 2 3 4; do
	pane_has "step 3 of" && break
	t send-keys -t "$S" Enter
	sleep 0.3
done
check "follow__tour_step_follows_the_slowest" wait_for "FOLLOWING the oldest in flight" 150
check "follow__tour_bar_pool_wait" wait_for "░ pool wait" 150
t send-keys -t "$S" q
check "follow__tour_q_restores_the_terminal" restored 0

summary
