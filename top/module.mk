# top/: `hotrow top`'s sampler (reads a PostgreSQL through kit/db) and its
# frame (draws with tui/): kit, tui <- top <- cli.
TOP_SRC := $(wildcard top/*.c)
TOP_LIB := $(BUILD)/libhotrow-top.a
$(TOP_LIB): $(TOP_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
ALL += $(TOP_LIB)
