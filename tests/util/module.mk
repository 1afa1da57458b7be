# tests/util/: one cmocka binary per util module that has code, test_*.c.
UTIL_TESTS := $(patsubst tests/util/%.c,$(BUILD)/tests/util/%,$(wildcard tests/util/test_*.c))
TESTS += $(UTIL_TESTS)
$(BUILD)/tests/util/%: $(BUILD)/obj/tests/util/%.o $(UTIL_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(LDLIBS) -o $@
