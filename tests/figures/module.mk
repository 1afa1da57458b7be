# tests/figures/: the committed figures are up to date with the engine.
SCRIPT_TESTS += tests/figures/fresh.sh
