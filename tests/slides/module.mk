# tests/slides/: the workshop deck (every command it shows works, a
# predict-then-reveal slide per section, each lab opens and closes) and the
# presenter view following the main screen under tmux.
SCRIPT_TESTS += tests/slides/deck.sh
# `hotrow slides` as a user starts it (no locale set by the test) must not
# print mojibake; without UTF-8 it falls back to ASCII.
SCRIPT_TESTS += tests/slides/locale.sh
# hotrow slides --check on the shipped deck at the room's two sizes, in
# UTF-8 and in ASCII, and on a broken deck (it must fail there).
SCRIPT_TESTS += tests/slides/check.sh
