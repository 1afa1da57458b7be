#!/bin/sh
# tests/slides/locale.sh: `hotrow slides` started the way a user starts it.
#
# A plain shell with LANG=C.UTF-8 and nothing else set for it (env -i, as
# a fresh login would have it; TERM is tmux's own) types `build/hotrow
# slides`, turns the notes on, and walks every slide of the shipped deck;
# no slide may show the `~A`/`M-` marks ncurses prints for UTF-8 bytes it
# was not told about, and slide 9's live engine must draw its braille
# chart, and the presenter's view in a second window must show slide
# 18's notes (a rho among them) as they are. Then the same with LANG=C up to slide 9 (the Greek letters, the
# times sign, the embed): plain ASCII, the Greek letters spelled out. Prints cmocka-style lines (tests/harness/check.sh).
. "$(dirname "$0")/../harness/usage.sh"
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${HOTROW_BIN:-build/hotrow}
sock=hotrow-locale-$$
tmp=$(mktemp -d)
. "$root/tests/harness/check.sh"
cd "$root" || exit 1
t() { tmux -L "$sock" "$@"; }
trap 't kill-server 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM

if ! command -v tmux >/dev/null 2>&1; then
	skip slides__locale "tmux is not installed (scripts/deps installs it)"
	summary
fi
k=0
n=$("$bin" slides --dump | grep -c '^--- slide ')

# wait_for TEXT: poll the pane (5 s at most, every 20 ms) until it shows TEXT.
wait_for() {
	i=250
	while [ $i -gt 0 ]; do
		t capture-pane -p -t "$S" >"$tmp/pane" 2>/dev/null && grep -qF -- "$1" "$tmp/pane" && return 0
		i=$((i - 1))
		sleep 0.02
	done
	return 1
}

# walk LANG LAST: slides 1 to LAST with their notes, each pane appended
# to $tmp/all.LANG
walk() {
	S=walk-$(echo "$1" | tr -c "a-zA-Z0-9\n" _)
	: >"$tmp/all.$1"
	t new-session -d -s "$S" -x 100 -y 40 "env -i HOME=\"$HOME\" PATH=\"$PATH\" TERM=\"\$TERM\" LANG=$1 sh"
	t send-keys -t "$S" "$bin slides" Enter
	wait_for " 1 / $n " || return 1
	t send-keys -t "$S" n
	k=1
	while [ $k -le "$2" ]; do
		wait_for " $k / $n " || return 1
		cat "$tmp/pane" >>"$tmp/all.$1"
		if [ $k = 9 ]; then     # the live embed: the moment the workshop is about
			t send-keys -t "$S" x
			wait_for "live: 2.0 of" || return 1
			cat "$tmp/pane" >"$tmp/embed.$1"
			cat "$tmp/pane" >>"$tmp/all.$1"
			t send-keys -t "$S" Space      # stop, then back to the slide
			wait_for "any key returns" || wait_for "any key stops" || return 1
			t send-keys -t "$S" Space
			wait_for " 9 / $n " || return 1
		fi
		if [ $k = 18 ] && [ "$1" = C.UTF-8 ]; then   # the presenter's notes, in a second window
			t new-window -t "$S" "env -i HOME=\"$HOME\" PATH=\"$PATH\" TERM=\"\$TERM\" LANG=$1 $bin slides --presenter"
			S0=$S S=$S:1
			wait_for "NOW: Predict: four slots" && cat "$tmp/pane" >"$tmp/presenter"
			t kill-window -t "$S"
			S=$S0
		fi
		t send-keys -t "$S" Right
		k=$((k + 1))
	done
	t send-keys -t "$S" q
}

# A braille cell (U+2800..U+28FF) as bytes: E2 A0..A3 then one more. A
# character range would need a locale that collates them, which a plain
# machine (C and C.UTF-8 only) does not have.
braille=$(printf '\342[\240-\243]')
mojibake() { grep -nE '~[@-_]|M-[^ ]' "$1" | head -3; }

if walk C.UTF-8 "$n" && [ -s "$tmp/all.C.UTF-8" ]; then
	m=$(mojibake "$tmp/all.C.UTF-8")
	if [ -z "$m" ] && grep -q 'λ = 2,000/s' "$tmp/all.C.UTF-8"; then ok slides__utf8_no_mojibake
	else bad slides__utf8_no_mojibake "${m:-no λ on slide 8}"; fi
	if [ -s "$tmp/presenter" ] && [ -z "$(mojibake "$tmp/presenter")" ] &&
	   grep -q 'Exactly enough is ρ = 1' "$tmp/presenter"
	then ok slides__utf8_presenter_notes
	else bad slides__utf8_presenter_notes "$(head -8 "$tmp/presenter" 2>/dev/null | tr '\n' '|')"; fi
	if [ -z "$(mojibake "$tmp/embed.C.UTF-8")" ] && LC_ALL=C grep -q "$braille" "$tmp/embed.C.UTF-8" &&
	   grep -q 'CONNECTION POOL' "$tmp/embed.C.UTF-8"
	then ok slides__utf8_embed_draws_braille
	else bad slides__utf8_embed_draws_braille "$(head -3 "$tmp/embed.C.UTF-8" | tr '\n' '|')"; fi
else
	bad slides__utf8_no_mojibake "the walk stopped at slide $k: $(grep -v '^$' "$tmp/pane" | head -3 | tr '\n' '|')"
fi

if walk C 9 && [ -s "$tmp/all.C" ]; then
	m=$(mojibake "$tmp/all.C")
	high=$(LC_ALL=C grep -c '[^ -~]' "$tmp/all.C")
	if [ -z "$m" ] && [ "$high" = 0 ] && grep -q 'lambda = 2,000/s' "$tmp/all.C" &&
	   [ -z "$(mojibake "$tmp/embed.C")" ] && grep -q 'CONNECTION POOL' "$tmp/embed.C"
	then ok slides__ascii_fallback
	else bad slides__ascii_fallback "${m:-$high lines not ASCII, or no lambda}"; fi
else
	bad slides__ascii_fallback "the walk stopped at slide $k: $(grep -v '^$' "$tmp/pane" | head -3 | tr '\n' '|')"
fi
summary
