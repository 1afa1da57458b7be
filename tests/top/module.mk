# tests/top/: `hotrow top`'s sampler against a real PostgreSQL (skipped
# without HOTROW_PG_URL, as the lab suites are) and its frame, headless.
TOP_TESTS := $(patsubst tests/top/%.c,$(BUILD)/tests/top/%,$(wildcard tests/top/test_*.c))
TESTS += $(TOP_TESTS)
$(BUILD)/tests/top/%: $(BUILD)/obj/tests/top/%.o $(BUILD)/obj/tests/harness/labtest.o $(TOP_LIB) \
		$(TUI_LIB) $(ENGINE_LIB) $(KIT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(NCURSES_LIBS) $(DB_LIBS) $(LDLIBS) -o $@
SCRIPT_TESTS += tests/top/cli.sh
SCRIPT_TESTS += tests/top/restart.sh
