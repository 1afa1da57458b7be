# tests/driver/: the lab drivers' support (labs/driver/), one cmocka binary
# per module, and inputs-only.sh: no driver feeds a measurement of a run
# into the prediction it prints beside it; wal-line.sh: on PostgreSQL the
# predicted WAL flushes per commit sit beside pg_stat_wal's; db-lost.sh: a driver whose
# database goes away mid-run stops at once, in one line.
DRIVER_TESTS := $(patsubst tests/driver/%.c,$(BUILD)/tests/driver/%,$(wildcard tests/driver/test_*.c))
TESTS += $(DRIVER_TESTS)
SCRIPT_TESTS += tests/driver/inputs-only.sh tests/driver/db-lost.sh tests/driver/wal-line.sh
$(BUILD)/tests/driver/%: $(BUILD)/obj/tests/driver/%.o $(BUILD)/obj/tests/harness/labtest.o \
		$(DRIVER_LIB) $(KIT_LIB) $(ENGINE_LIB) $(UTIL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(DB_LIBS) $(LDLIBS) -o $@
# db-lost.sh runs Lab 01's driver (with the reference solution: the student
# kit has none, and there db-lost.sh says it is not built).
ifneq ($(wildcard solutions/01-hot-row/*.c),)
test-run suites: $(BUILD)/labs/01-hot-row/run-solution
endif
