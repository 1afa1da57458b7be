# labs/driver/: what the lab drivers (labs/NN-name/run.c) and the fidelity
# bench share: the option table (runopt), lock-hold timers (span), the
# one-thread measurement of a request's parts (probe), the engine's
# prediction from inputs only (predict) and the naive baseline (baseline).
# It calls the engine, so it lives here and not in kit/: kit/ is what the
# labs' own code links against and does not depend on the engine.
DRIVER_SRC := $(wildcard labs/driver/*.c)
DRIVER_LIB := $(BUILD)/libhotrow-driver.a
$(DRIVER_LIB): $(DRIVER_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(DRIVER_LIB)
