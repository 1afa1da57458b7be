# tests/labs/: the lab suites are built by labs/module.mk; this adds the
# lint that every hint tag a check prints has a hint.
SCRIPT_TESTS += tests/labs/hint_tags.sh
