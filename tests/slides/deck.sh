#!/bin/sh
# tests/slides/deck.sh: slides/hot-rows.md as an instructor uses it.
#   - 45 to 60 slides; every lab in labs/ has an opening slide ("## Lab NN:")
#     and a closing one ("## Lab NN: what we saw");
#   - each part of the plan ("> Plan: H:MM" notes), but the break, has a
#     predict-then-reveal slide, and every Reveal: command runs and answers;
#   - every Run: command works verbatim: `hotrow sim` ones are run as they
#     are, the screens (`tui`, `demo`) with --dump added, and those that
#     name a lab need that lab in this tree (a notice otherwise);
#   - the presenter view follows the main screen: the main screen runs in
#     tmux, keys move it and reveal an answer, and `--presenter --dump` and
#     a presenter in a second tmux window show the slide, its notes, the
#     next slide and the plan.
# In the student kit (.hotrow/pristine/SHIPPED) the deck ships without its
# speaker notes, so the checks that read notes (the plan, the presenter's
# notes) are skipped there, and only there.
# The deck's commands say build/hotrow, so this runs from the kit's root
# and needs the plain build; HOTROW_BIN (a sanitizer build) drives the
# presenter part. Prints cmocka-style summary lines.
. "$(dirname "$0")/../harness/usage.sh"
set -u
bin=${HOTROW_BIN:-build/hotrow}
deck=slides/hot-rows.md
tmp=$(mktemp -d)
sock=hotrow-deck-$$
. "$(dirname "$0")/../harness/check.sh"
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$tmp" 2>/dev/null || { sleep 0.5; rm -rf "$tmp"; }' EXIT

n=$("$bin" slides "$deck" --dump | grep -c '^--- slide ')
if [ "$n" -ge 45 ] && [ "$n" -le 60 ]; then ok deck__length
else bad deck__length "$n slides, not 45-60"; fi

missing=
for d in labs/[0-9][0-9]-*/; do
	nn=$(basename "$d" | cut -c1-2)
	grep -q "^## Lab $nn: " "$deck" || missing="$missing $nn-opening"
	grep -q "^## Lab $nn: what we saw" "$deck" || missing="$missing $nn-closing"
done
if [ -z "$missing" ]; then ok deck__every_lab_opens_and_closes
else bad deck__every_lab_opens_and_closes "missing:$missing"; fi

# What the presenter shows of slide 3's notes and of the plan.
notes=1 note3='Hands up for each letter' plan3='^plan: "Opening" from 0:00; on time' plan_end='plan: "Closing"'
if ! grep -q '^>' "$deck" && [ -f .hotrow/pristine/SHIPPED ]; then
	notes=0 note3='no speaker notes' plan3='this copy of the deck has no speaker notes' plan_end=$plan3
	echo "NOTICE: a student kit's deck (no speaker notes): the presenter shows none"
fi

# A part of the plan runs from one "Plan:" note to the next.
if [ $notes = 0 ]; then
	skip deck__predict_in_every_part "no plan notes in a student kit's deck"
else
	awk 'function flush() { if (plan != "") { part = plan; order[++n] = plan } if (rev) seen[part] = 1; plan = ""; rev = 0 }
	     /^---$/ { flush(); next } /^> Plan: / { plan = $0 } /^Reveal: / { rev = 1 }
	     END { flush(); for (i = 1; i <= n; i++) if (!(order[i] in seen) && order[i] !~ /Break/) print order[i] }' "$deck" >"$tmp/unrevealed"
	if [ ! -s "$tmp/unrevealed" ] && grep -q '^> Plan: ' "$deck"; then ok deck__predict_in_every_part
	else bad deck__predict_in_every_part "no Reveal: in $(tr '\n' ';' <"$tmp/unrevealed")"; fi
fi

if [ ! -x build/hotrow ]; then
	skip deck__reveals_answer "build/hotrow is not built (the deck's commands name it)"
	skip deck__commands_work "build/hotrow is not built"
else
	"$bin" slides "$deck" --dump --reveal >"$tmp/revealed" 2>&1
	answers=$(grep -c '^The engine says:' "$tmp/revealed")
	reveals=$(grep -c '^Reveal: ' "$deck")
	if [ "$answers" = "$reveals" ] && ! grep -q '^(exit [0-9]*)$\|^(killed' "$tmp/revealed" &&
	   ! awk '/^The engine says:/ { getline; getline; if ($0 ~ /^--- slide|^$/) bad = 1 } END { exit !bad }' "$tmp/revealed"
	then ok deck__reveals_answer
	else bad deck__reveals_answer "$answers answers for $reveals Reveal: lines, or one failed: $(grep -B3 '^(exit' "$tmp/revealed" | head -4)"; fi

	embeds=$(grep -c '^Embed: ' "$deck")
	played=$(grep -c '^The engine, live (at [0-9.]* simulated s):' "$tmp/revealed")
	if [ "$embeds" -ge 1 ] && [ "$played" = "$embeds" ] &&
	   [ "$(grep -c 'CONNECTION POOL' "$tmp/revealed")" -ge "$embeds" ]
	then ok deck__embeds_play
	else bad deck__embeds_play "$played of $embeds Embed: lines drew the engine's screen"; fi

	sed -n 's/^Run: //p' "$deck" | tr -d '`' >"$tmp/commands"
	broken= notice=
	while IFS= read -r cmd; do
		case $cmd in
		"build/hotrow sim "*)
			sh -c "$cmd" >/dev/null 2>"$tmp/err" || broken="$broken [$cmd: $(head -1 "$tmp/err")]" ;;
		"build/hotrow tui "*|"build/hotrow demo"*)
			sh -c "$cmd --dump --at 1 --size 100x30" >/dev/null 2>"$tmp/err" ||
				broken="$broken [$cmd: $(head -1 "$tmp/err")]" ;;
		"build/hotrow lab") build/hotrow lab </dev/null >/dev/null 2>&1 || broken="$broken [$cmd]" ;;
		"build/hotrow lab grade") ;;   # every lab's suite: what make test runs anyway
		"scripts/needs-pg "*)          # without a server it says so in words
			env -u HOTROW_PG_URL sh -c "$cmd" 2>&1 | grep -q '^needs PostgreSQL: skipped' ||
				broken="$broken [$cmd: no 'needs PostgreSQL: skipped' without a server]"
			nn=$(printf '%s\n' "$cmd" | sed -n 's/.*lab [a-z]* \(0[0-9]\).*/\1/p')
			ls -d labs/"$nn"-*/ >/dev/null 2>&1 || notice="$notice $nn" ;;
		*"lab "*" 0"[0-9]*|*build/labs/0[0-9]-*)
			nn=$(printf '%s\n' "$cmd" | sed -n 's/.*lab [a-z]* \(0[0-9]\).*/\1/p; s/.*build\/labs\/\(0[0-9]\)-.*/\1/p' | head -1)
			if ls -d labs/"$nn"-*/ >/dev/null 2>&1; then
				sub=$(printf '%s\n' "$cmd" | sed -n 's/.*hotrow lab \([a-z]*\) .*/\1/p')
				if [ -n "$sub" ] && ! build/hotrow lab "$sub" --help >/dev/null 2>&1; then
					broken="$broken [$cmd: no lab $sub]"
				fi
			else
				notice="$notice $nn"
			fi ;;
		*) broken="$broken [$cmd: not a command this test knows]" ;;
		esac
	done <"$tmp/commands"
	[ -n "$notice" ] && echo "NOTICE: the deck names labs not in this tree:$notice (merged later)"
	if [ -z "$broken" ]; then ok deck__commands_work
	else bad deck__commands_work "$broken"; fi
fi

# deck__handout: make handout's file has every slide, every answer, every
# figure the deck names, and no speaker notes.
if [ -x build/hotrow ] && HANDOUT_QUICK=1 scripts/handout "$deck" "$tmp/handout" >/dev/null 2>"$tmp/err"; then
	h=$tmp/handout/handout.md
	html=$tmp/handout/handout.html before=$tmp/handout/handout-before.html
	figs=$(grep -o 'docs/figures/[a-z0-9-]*\.svg' "$deck" | sort -u | wc -l)
	shown=$(grep -c '^!\[.*\](figures/' "$h")
	if [ "$(grep -c '^## ' "$h")" = "$(grep -c '^## ' "$deck")" ] &&
	   [ "$(grep -c "^\*\*The engine's answer:\*\*" "$h")" = "$(grep -c '^Reveal: ' "$deck")" ] &&
	   [ "$shown" = "$figs" ] && ! grep -q '^>' "$h" && [ -s "$tmp/handout/figures/hockey-stick.svg" ]
	then ok deck__handout
	else bad deck__handout "$shown of $figs figures, or slides, answers or notes wrong"; fi
	# deck__handout_html: one page each, readable by all; every slide, every
	# figure inside; the answers in one, none in the before-the-session copy;
	# no speaker note or authoring comment in either; a Run:'s real output.
	note=$(sed -n 's/^> //p' "$deck" | awk 'length($0) > 30' | head -1)
	if [ "$(grep -c '<section' "$html")" = "$n" ] && [ "$(grep -c '<section' "$before")" = "$n" ] &&
	   [ "$(grep -c '<svg' "$html")" = "$figs" ] &&
	   [ "$(grep -c 'class="answer"' "$html")" = "$(grep -c '^Reveal: ' "$deck")" ] &&
	   ! grep -q 'class="answer"' "$before" && ! grep -qF "$note" "$html" &&
	   ! grep -q 'For whoever edits this deck' "$html" && grep -q '2998.5 ms' "$html" &&
	   [ "$(stat -c %a "$h")" = 644 ] && [ "$(stat -c %a "$html")" = 644 ]
	then ok deck__handout_html
	else bad deck__handout_html "$(grep -c '<section' "$html") sections, $(grep -c '<svg' "$html") of $figs figures, mode $(stat -c %a "$html")"; fi
else
	skip deck__handout "build/hotrow is not built, or scripts/handout failed: $(cat "$tmp/err" 2>/dev/null)"
fi

# The presenter view, following a main screen driven under tmux.
state=$tmp/state
if "$bin" slides --presenter --dump --state "$state" >/dev/null 2>&1; then
	bad presenter__needs_a_main_screen "printed a view with no state file"
else ok presenter__needs_a_main_screen; fi
if ! command -v tmux >/dev/null 2>&1; then
	skip presenter__follows_main "tmux is not installed (scripts/deps installs it)"
else
	tmux -L "$sock" new-session -d -s main -x 100 -y 40 \
		"TERM=xterm $bin slides $deck --state $state; sleep 30"
	sleep 1
	tmux -L "$sock" send-keys -t main Right Right
	sleep 0.5
	tmux -L "$sock" send-keys -t main x
	i=0
	until grep -q 'revealed=1' "$state" 2>/dev/null || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.3
	tmux -L "$sock" capture-pane -p -t main >"$tmp/main"
	"$bin" slides --presenter --dump --state "$state" --size 100x40 >"$tmp/view" 2>&1
	if grep -q '^slide 3 of ' "$tmp/view" && grep -q '(answer revealed)' "$tmp/view" &&
	   grep -q '^NOW: Predict: what runs out first?' "$tmp/view" &&
	   grep -q '^NEXT: What one UPDATE really does' "$tmp/view" &&
	   grep -qF "$note3" "$tmp/view" && grep -q "$plan3" "$tmp/view" &&
	   grep -q 'The engine says:' "$tmp/main" && grep -q 'pool full after' "$tmp/main"
	then ok presenter__follows_main
	else bad presenter__follows_main "view: $(head -4 "$tmp/view" | tr '\n' '|') main: $(grep -c . "$tmp/main") lines"; fi

	# presenter__embed_plays_live: slide 9's x plays the engine inside the slide.
	tmux -L "$sock" new-window -t main "TERM=xterm $bin slides $deck --state $tmp/state2; sleep 30"
	sleep 1
	tmux -L "$sock" send-keys -t main:1 Right Right Right Right Right Right Right Right
	sleep 0.5
	tmux -L "$sock" send-keys -t main:1 x
	i=0
	until tmux -L "$sock" capture-pane -p -t main:1 | grep -q 'live: .* simulated s' || [ $i -ge 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	tmux -L "$sock" capture-pane -p -t main:1 >"$tmp/embed"
	if grep -q 'live: .* simulated s' "$tmp/embed" && grep -q 'CONNECTION POOL' "$tmp/embed" &&
	   grep -q 'How one row takes down the login page' "$tmp/embed"
	then ok presenter__embed_plays_live
	else bad presenter__embed_plays_live "$(head -4 "$tmp/embed" | tr '\n' '|')"; fi
	tmux -L "$sock" kill-window -t main:1

	tmux -L "$sock" new-window -t main "TERM=xterm $bin slides --presenter --state $state; sleep 30"
	sleep 1
	tmux -L "$sock" send-keys -t main:0 G
	i=0
	until tmux -L "$sock" capture-pane -p -t main:1 | grep -q "slide $n of $n" || [ $i -ge 30 ]; do
		sleep 0.1; i=$((i + 1))
	done
	tmux -L "$sock" capture-pane -p -t main:1 >"$tmp/pane"
	if grep -q "slide $n of $n" "$tmp/pane" && grep -q 'NEXT: (the end of the deck)' "$tmp/pane" &&
	   grep -q "$plan_end" "$tmp/pane"
	then ok presenter__live_view_follows
	else bad presenter__live_view_follows "$(head -5 "$tmp/pane" | tr '\n' '|')"; fi
fi

summary
