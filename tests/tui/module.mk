# tests/tui/: cmocka over headless frames (test_*.c), and the tmux end-to-end
# script (e2e.sh), which prints a cmocka-style summary. The script runs
# through a small wrapper in $(BUILD) that points it at that build's binary,
# so `make SAN=address,undefined test` drives the sanitized hotrow.
TUI_TESTS := $(patsubst tests/tui/%.c,$(BUILD)/tests/tui/%,$(wildcard tests/tui/test_*.c))
TESTS += $(TUI_TESTS) $(BUILD)/tests/tui/e2e
$(BUILD)/tests/tui/%: $(BUILD)/obj/tests/tui/%.o $(TUI_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(NCURSES_LIBS) $(LDLIBS) -o $@
$(BUILD)/tests/tui/e2e: tests/tui/e2e.sh $(BUILD)/hotrow
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nHOTROW="%s" exec "%s" "$$@"\n' "$(CURDIR)/$(BUILD)/hotrow" \
		"$(CURDIR)/tests/tui/e2e.sh" > $@
	chmod +x $@
