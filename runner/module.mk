# runner/: the lab runner behind `hotrow lab` (build, run checks with
# timeouts in their own process groups, hints, grade, reset), a library
# that cli/lab.c fronts and tests/lab links without cli.
RUNNER_SRC := $(wildcard runner/*.c)
RUNNER_LIB := $(BUILD)/libhotrow-runner.a
$(RUNNER_LIB): $(RUNNER_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(RUNNER_LIB)
