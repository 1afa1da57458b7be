# tests/util/: util/'s modules, one cmocka binary each, linked with util
# alone (util depends on libc only).
UTIL_TESTS := $(patsubst tests/util/%.c,$(BUILD)/tests/util/%,$(wildcard tests/util/test_*.c))
TESTS += $(UTIL_TESTS)
$(BUILD)/tests/util/%: $(BUILD)/obj/tests/util/%.o $(UTIL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(LDLIBS) -o $@
# Every file argument of build/hotrow (HOTROW_BIN, set by make) refused at once.
SCRIPT_TESTS += tests/util/files.sh
# Every script and command answers --help and -h, and refuses an unknown
# option, without acting on either (tests/util/help.sh, about 10 s).
SCRIPT_TESTS += tests/util/help.sh
# Every executable file of the repository (git ls-files, mode 755) answers
# --help and -h with a usage and refuses an unknown option, from the root
# and from its own directory, in a clean environment
# (tests/util/executables.sh, about 15 s; no binary, so no sanitizer run).
PLAIN_SCRIPTS += tests/util/executables.sh
