# util/: what every part may use, libc alone: header-only helpers (clock,
# hash), the one option parser (opt.c), the one JSON and XML text writer
# (json.c) and the histogram (hist.c), linked as a library by build/hotrow,
# the lab drivers and the tests.
UTIL_SRC := $(wildcard util/*.c)
UTIL_LIB := $(BUILD)/libhotrow-util.a
$(UTIL_LIB): $(UTIL_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(UTIL_LIB)
