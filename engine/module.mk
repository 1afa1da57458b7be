# engine/: the simulator, libc and libm only (and util/).
ENGINE_SRC := $(wildcard engine/*.c)
ENGINE_LIB := $(BUILD)/libhotrow-engine.a
$(ENGINE_LIB): $(ENGINE_SRC:%.c=$(BUILD)/obj/%.o) $(UTIL_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(ENGINE_LIB)
