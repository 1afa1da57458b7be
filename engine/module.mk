# engine/: the simulator, libc and libm only.
ENGINE_SRC := $(wildcard engine/*.c)
ENGINE_LIB := $(BUILD)/libhotrow-engine.a
$(ENGINE_LIB): $(ENGINE_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(ENGINE_LIB)
