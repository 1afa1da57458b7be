# cli/: main() and the subcommands of build/hotrow.
CLI_SRC := $(wildcard cli/*.c)
$(BUILD)/hotrow: $(CLI_SRC:%.c=$(BUILD)/obj/%.o) $(RUNNER_LIB) $(CLASS_LIB) $(TOP_LIB) $(TUI_LIB) \
		$(BENCH_LIB) $(DRIVER_LIB) $(ENGINE_LIB) $(KIT_LIB) $(UTIL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(NCURSES_LIBS) $(DB_LIBS) $(LDLIBS) -o $@
