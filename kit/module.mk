# kit/: what labs and benches run against (db, load, store, log, failpoints),
# and what the lab drivers share (runopt, span, predict, baseline; the last
# two call the engine, so a binary that uses them links $(ENGINE_LIB) too).
KIT_SRC := $(wildcard kit/*.c)
KIT_LIB := $(BUILD)/libhotrow-kit.a
$(KIT_LIB): $(KIT_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(KIT_LIB)
