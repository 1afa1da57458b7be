# tests/lab/: the lab runner (runner/, `hotrow lab`). test_lab is cmocka
# over the parts that need no build (reports, hints.md, lab names,
# progress, bounded output); runner.sh drives build/hotrow end to end on a
# real lab in a scratch copy, hostile student code included. handouts.sh
# runs every command the handouts print, verbatim. lint-given.sh: the lint
# that keeps a skeleton's given code the solution's finds a drifted copy;
# mutate.sh: scripts/mutate's list, usage, and allowlist entries that match.
TESTS += $(BUILD)/tests/lab/test_lab
SCRIPT_TESTS += tests/lab/runner.sh tests/lab/run-tests.sh
# The lint's test and mutate.sh build nothing: once, in make test.
PLAIN_SCRIPTS += tests/lab/lint-given.sh tests/lab/mutate.sh
# handouts.sh runs the drivers for seconds each: once, in make test, not
# again in every sanitizer build. It runs them in a scratch copy, so it
# goes beside the other suites (the runner removes a lab's test binaries
# when it first builds the lab: in this tree, from under them).
PLAIN_SCRIPTS += tests/lab/handouts.sh
# parts.sh: `lab check 02 --part` in a scratch copy (about 8 s): once.
PLAIN_SCRIPTS += tests/lab/parts.sh
# The audit of every mutant: once, in make test, over the mutants it built.
PLAIN_SCRIPTS += tests/lab/audit-mutants.sh
$(BUILD)/tests/lab/test_lab: $(BUILD)/obj/tests/lab/test_lab.o $(RUNNER_LIB) $(CLASS_LIB) $(KIT_LIB) $(UTIL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CMOCKA_LIBS) $(DB_LIBS) $(LDLIBS) -o $@
# store-lost.sh kills a Redis of its own under `lab run 04` (about 7 s,
# and the build of Lab 04's driver in a scratch copy of the kit): once, in
# make test.
PLAIN_SCRIPTS += tests/lab/store-lost.sh
