# tests/tui/: cmocka over headless frames (test_*.c), and the tmux end-to-end
# scripts (e2e.sh; rewind.sh, going back in time), which print a
# cmocka-style summary and drive the binary make names in HOTROW_BIN, so
# `make SAN=address,undefined test` drives the sanitized hotrow.
TUI_TESTS := $(patsubst tests/tui/%.c,$(BUILD)/tests/tui/%,$(wildcard tests/tui/test_*.c))
TESTS += $(TUI_TESTS)
SCRIPT_TESTS += tests/tui/e2e.sh
SCRIPT_TESTS += tests/tui/e2e_follow.sh
SCRIPT_TESTS += tests/tui/rewind.sh
$(BUILD)/tests/tui/%: $(BUILD)/obj/tests/tui/%.o $(TUI_LIB) $(ENGINE_LIB) $(UTIL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(NCURSES_LIBS) $(LDLIBS) -o $@
