# tui/: the ncurses front end over the engine's snapshot.
TUI_SRC := $(wildcard tui/*.c)
TUI_LIB := $(BUILD)/libhotrow-tui.a

# The tours in tui/tours/ are compiled in (see tui/tours/README.md).
TUI_TOURS := $(sort $(wildcard tui/tours/*.tour))
TUI_TOURS_C := $(BUILD)/gen/tui/tours_gen.c
TUI_TOURS_O := $(BUILD)/obj/gen/tui/tours_gen.o
$(TUI_TOURS_C): $(TUI_TOURS) tui/tours/embed.sh
	@mkdir -p $(dir $@)
	sh tui/tours/embed.sh $(TUI_TOURS) > $@
$(TUI_TOURS_O): $(TUI_TOURS_C)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# A tour's `set` lines go through the command line's own option table
# (cli/simopt.c over util/opt.c), so both are in the library.
$(TUI_LIB): $(TUI_SRC:%.c=$(BUILD)/obj/%.o) $(TUI_TOURS_O) $(BUILD)/obj/cli/simopt.o $(BUILD)/obj/cli/simconf.o \
		$(BUILD)/obj/util/opt.o
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
ALL += $(TUI_LIB)
