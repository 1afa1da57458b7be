# engine/: the simulator, libc and libm only. The latency histogram it
# shares with the kit (util/hist.c) goes into this library too, so that a
# program linking the engine needs nothing more.
ENGINE_SRC := $(wildcard engine/*.c)
ENGINE_LIB := $(BUILD)/libhotrow-engine.a
$(ENGINE_LIB): $(ENGINE_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/util/hist.o \
		$(BUILD)/obj/util/json.o
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(ENGINE_LIB)
# The engine's events are the screen's limit at 100x (bench/README.md,
# "make bench-tui"): its objects are built with -O3 (3 % fewer instructions
# than -O2 on the viral video), except in the sanitizer builds.
ifeq ($(SAN),)
$(ENGINE_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/util/hist.o: CFLAGS += -O3
endif
