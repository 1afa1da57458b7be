# tui/: the ncurses front end over the engine's snapshot.
TUI_SRC := $(wildcard tui/*.c)
TUI_LIB := $(BUILD)/libhotrow-tui.a
$(TUI_LIB): $(TUI_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(TUI_LIB)
