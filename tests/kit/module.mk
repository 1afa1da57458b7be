# tests/kit/: one cmocka binary per kit module, test_*.c.
KIT_TESTS := $(patsubst tests/kit/%.c,$(BUILD)/tests/kit/%,$(wildcard tests/kit/test_*.c))
TESTS += $(KIT_TESTS)
$(BUILD)/tests/kit/%: $(BUILD)/obj/tests/kit/%.o $(BUILD)/obj/tests/harness/labtest.o $(KIT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(DB_LIBS) $(LDLIBS) -o $@
