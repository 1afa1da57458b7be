# kit/: what labs and benches run against (db, load, store, log, failpoints).
KIT_SRC := $(wildcard kit/*.c)
KIT_LIB := $(BUILD)/libhotrow-kit.a
$(KIT_LIB): $(KIT_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(KIT_LIB)
