# tests/engine/: one cmocka binary per engine module, test_*.c.
ENGINE_TESTS := $(patsubst tests/engine/%.c,$(BUILD)/tests/engine/%,$(wildcard tests/engine/test_*.c))
TESTS += $(ENGINE_TESTS)
$(BUILD)/tests/engine/%: $(BUILD)/obj/tests/engine/%.o $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(LDLIBS) -o $@
# `hotrow sim` through the binary (HOTROW_BIN, set by make).
SCRIPT_TESTS += tests/engine/cli.sh
SCRIPT_TESTS += tests/engine/load.sh
SCRIPT_TESTS += tests/engine/trace.sh
SCRIPT_TESTS += tests/engine/compare.sh
