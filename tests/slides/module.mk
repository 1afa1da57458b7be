# tests/slides/: the workshop deck (every command it shows works, a
# predict-then-reveal slide per section, each lab opens and closes) and the
# presenter view following the main screen under tmux.
SCRIPT_TESTS += tests/slides/deck.sh
# `hotrow slides` as a user starts it (no locale set by the test) must not
# print mojibake; without UTF-8 it falls back to ASCII.
SCRIPT_TESTS += tests/slides/locale.sh
