# tests/engine/: one cmocka binary per engine module, test_*.c.
ENGINE_TESTS := $(patsubst tests/engine/%.c,$(BUILD)/tests/engine/%,$(wildcard tests/engine/test_*.c))
TESTS += $(ENGINE_TESTS)
$(BUILD)/tests/engine/%: $(BUILD)/obj/tests/engine/%.o $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(LDLIBS) -o $@
# `hotrow sim` through the binary: a wrapper points tests/engine/cli.sh at
# this build's hotrow (plain or SAN=...).
ENGINE_CLI_TEST := $(BUILD)/tests/engine/cli
$(ENGINE_CLI_TEST): tests/engine/cli.sh tests/engine/module.mk
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nHOTROW_BIN=%s exec tests/engine/cli.sh\n' "$(BUILD)/hotrow" > $@
	chmod +x $@
SCRIPT_TESTS += $(ENGINE_CLI_TEST)
test-run: $(ENGINE_CLI_TEST)
