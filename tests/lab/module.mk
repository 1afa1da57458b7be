# tests/lab/: the lab runner (`hotrow lab`). test_lab is cmocka over the
# parts that need no build (output parsing, hints.md, lab names, progress);
# runner.sh drives build/hotrow end to end on a real lab in a scratch copy.
LAB_RUNNER_OBJ := $(BUILD)/obj/cli/lab_check.o $(BUILD)/obj/cli/lab_hint.o $(BUILD)/obj/cli/lab_tree.o \
                  $(BUILD)/obj/cli/lab_proc.o
TESTS += $(BUILD)/tests/lab/test_lab
SCRIPT_TESTS += tests/lab/runner.sh
$(BUILD)/tests/lab/test_lab: $(BUILD)/obj/tests/lab/test_lab.o $(LAB_RUNNER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(LDLIBS) -o $@
