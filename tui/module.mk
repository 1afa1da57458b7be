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

$(TUI_LIB): $(TUI_SRC:%.c=$(BUILD)/obj/%.o) $(TUI_TOURS_O)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
ALL += $(TUI_LIB)

# make bench-tui: frame time at 200x60 (viral-video) and CPU at 30 fps.
$(BUILD)/bench/tui_bench: $(BUILD)/obj/tui/bench/tui_bench.o $(TUI_LIB) $(ENGINE_LIB) $(UTIL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(NCURSES_LIBS) $(LDLIBS) -o $@
bench-tui: $(BUILD)/bench/tui_bench
	$(BUILD)/bench/tui_bench
