# tests/driver/: the lab drivers' support (labs/driver/), one cmocka binary
# per module, and inputs-only.sh: no driver feeds a measurement of a run
# into the prediction it prints beside it.
DRIVER_TESTS := $(patsubst tests/driver/%.c,$(BUILD)/tests/driver/%,$(wildcard tests/driver/test_*.c))
TESTS += $(DRIVER_TESTS)
SCRIPT_TESTS += tests/driver/inputs-only.sh
$(BUILD)/tests/driver/%: $(BUILD)/obj/tests/driver/%.o $(BUILD)/obj/tests/labs/labtest.o \
		$(DRIVER_LIB) $(KIT_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(DB_LIBS) $(LDLIBS) -o $@
