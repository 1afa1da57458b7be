# labs/: every lab NN-name is built three ways from the same tests,
# tests/labs/NN-name/*.c, plus the shared harness tests/harness/labtest.c:
#
#   $(BUILD)/labs/NN-name/test-solution      against solutions/NN-name  (must pass)
#   $(BUILD)/labs/NN-name/test-exercise      against exercises/NN-name  (must fail)
#   $(BUILD)/labs/NN-name/test-mutant-M      against solutions/NN-name with
#                                            tests/mutants/NN-name/M.patch applied
#                                            (must fail: the bug is caught)
#
# `hotrow lab check` builds test-exercise through this file too, so what a
# student runs is what CI runs.
#
# A lab with labs/NN-name/run.c also gets run-solution and run-exercise:
# the driver `hotrow lab run NN` executes (--db URL --threads T --seconds S),
# linked with the kit, the drivers' support (labs/driver/) and the engine,
# so it can print the prediction.

LAB_NAMES := $(patsubst labs/%/,%,$(wildcard labs/[0-9][0-9]-*/))
LABTEST_OBJ := $(BUILD)/obj/tests/harness/labtest.o $(BUILD)/obj/tests/harness/gate.o \
	$(BUILD)/obj/tests/harness/steps.o $(BUILD)/obj/tests/harness/bounds.o \
	$(BUILD)/obj/tests/harness/alloc.o $(BUILD)/obj/tests/harness/threads.o \
	$(BUILD)/obj/tests/harness/session.o $(BUILD)/obj/tests/harness/locks.o \
	$(BUILD)/obj/tests/harness/sort.o $(BUILD)/obj/tests/harness/sql.o \
	$(BUILD)/obj/tests/harness/fmt.o $(BUILD)/obj/tests/harness/hold.o \
	$(BUILD)/obj/tests/harness/beside.o
# The allocation calls of everything linked into a test binary go through
# tests/harness/alloc.c (counted, and failed on demand), and its thread
# starts, joins and detaches through tests/harness/threads.c (starts
# counted and failed on demand, threads not yet reaped known), and its mutex
# and condition variable calls (and the unlocks of spin and read-write
# locks) through tests/harness/locks.c (stray unlocks,
# uninitialised attributes, the started threads' timed waits), as do its
# clock reads (clock_gettime, time, gettimeofday, timespec_get, clock: a thread's
# clock can be made to run fast); those inside
# the shared libraries (libpq, libsqlite3, libc) do not. Its qsort calls
# go through tests/harness/sort.c, which checks each comparator's answers,
# and its snprintf, sprintf, vsnprintf and vsprintf calls through
# tests/harness/fmt.c, which can hold a thread at a chosen text.
LABTEST_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=reallocarray,--wrap=free \
	-Wl,--wrap=strdup,--wrap=strndup,--wrap=asprintf,--wrap=vasprintf \
	-Wl,--wrap=aligned_alloc,--wrap=posix_memalign,--wrap=pthread_create \
	-Wl,--wrap=pthread_join,--wrap=pthread_detach \
	-Wl,--wrap=pthread_mutex_lock,--wrap=pthread_mutex_trylock,--wrap=pthread_mutex_timedlock \
	-Wl,--wrap=pthread_mutex_unlock,--wrap=pthread_cond_wait,--wrap=pthread_cond_timedwait \
	-Wl,--wrap=pthread_spin_unlock,--wrap=pthread_rwlock_unlock \
	-Wl,--wrap=pthread_cond_clockwait \
	-Wl,--wrap=pthread_condattr_init,--wrap=pthread_condattr_destroy \
	-Wl,--wrap=pthread_condattr_setclock,--wrap=pthread_cond_init,--wrap=clock_gettime \
	-Wl,--wrap=pthread_mutex_destroy,--wrap=pthread_cond_destroy \
	-Wl,--wrap=time,--wrap=gettimeofday,--wrap=timespec_get,--wrap=clock,--wrap=getpid,--wrap=gettid \
	-Wl,--wrap=qsort \
	-Wl,--wrap=sem_wait,--wrap=sem_trywait,--wrap=sem_timedwait,--wrap=sem_clockwait \
	-Wl,--wrap=snprintf,--wrap=sprintf,--wrap=vsnprintf,--wrap=vsprintf
# A lab's tests may wrap more names in its own test programs, one a line
# in tests/labs/NN-name/wrap.syms, with __wrap_ functions of their own
# (Lab 07 hands its detector's row callback each value at the end of a
# page nobody may read: tests/labs/07-contain/values.c).
LAB_LINK = $(CC) $(LDFLAGS) $(LABTEST_WRAP) $(LAB_WRAP) $(filter-out %.syms,$^) $(CMOCKA_LIBS) $(DB_LIBS) $(LDLIBS) -o $@
# The kit as the test binaries link it: its allocation calls renamed to
# lt_kit_* (tests/harness/alloc.syms), which alloc.c counts but does not
# refuse unless asked: a lab's check fails the student's allocations, not
# the kit's (whose own failures tests/kit checks). Its pthread_create is
# renamed too (tests/harness/threads.syms), and never refused.
LABTEST_KIT := $(BUILD)/labs/libhotrow-kit-counted.a
$(LABTEST_KIT): $(KIT_LIB) tests/harness/alloc.syms tests/harness/threads.syms
	@mkdir -p $(dir $@)
	objcopy --redefine-syms=tests/harness/alloc.syms --redefine-syms=tests/harness/threads.syms $< $@

# The lab's own code (a reference, a student's file, a mutant) is built
# with its array indexes checked wherever C knows the array's size: an
# index before or past a fixed array (a buffer sized for less than a full
# batch, a slot computed from a negative id) stops the check at that line
# (SIGILL, "Illegal instruction"), where it would have written over its
# neighbours unseen. So does a double converted to an integer type that
# cannot hold it (a row count of 2,147,483,647.5 rounded up and cast to
# int): C leaves it undefined, and at -O2 gcc hands back whatever is
# nearest to hand. So does a pointer cast to a type its address is not
# aligned for (a log record's bytes read as a struct where memcpy was
# needed), which x86 forgives and other machines do not. So does a
# signed sum or product past its type (a fee added to a sum and tested
# for a negative after: C leaves the overflow undefined, and the compiler
# may drop the test). No runtime
# library: the check is a trap instruction, so nothing new is linked or
# audited. Not under SAN=..., whose undefined-behaviour sanitizer reports
# a bad index with a message. Under SAN=... the lab's code does not see
# the sanitizer's macro: `hotrow lab check` runs the checks that start
# threads again in the SAN=thread build (the race pass, runner/check.h),
# and that build must run the code the plain one ran and the audit read.
LAB_BOUNDS := $(if $(SAN),-U__SANITIZE_THREAD__ -U__SANITIZE_ADDRESS__,-fsanitize=bounds,float-cast-overflow,alignment,signed-integer-overflow -fsanitize-undefined-trap-on-error)

# A mutant is the lab's tests linked again with one changed solution:
# about 900 links in make test. gold links them in a fifth of the CPU time GNU
# ld takes (0.03 s against 0.15 s each, measured here); where the
# compiler cannot use it, ld as before.
MUTANT_LD := $(shell $(CC) -fuse-ld=gold -Wl,--version 2>/dev/null | grep -q gold && echo -fuse-ld=gold)

define lab_rules
$(1)_TEST_OBJ := $$(patsubst %.c,$$(BUILD)/obj/%.o,$$(wildcard tests/labs/$(1)/*.c))
$(1)_SOL_OBJ  := $$(patsubst %.c,$$(BUILD)/obj/%.o,$$(wildcard solutions/$(1)/*.c))
$(1)_EX_OBJ   := $$(patsubst %.c,$$(BUILD)/obj/%.o,$$(wildcard exercises/$(1)/*.c))
$(1)_MUTANTS  := $$(basename $$(notdir $$(wildcard tests/mutants/$(1)/*.patch)))
$(1)_SYMS     := $$(wildcard tests/labs/$(1)/wrap.syms)
$(1)_WRAP     := $$(addprefix -Wl$$(comma)--wrap=,$$(if $$($(1)_SYMS),$$(shell cat $$($(1)_SYMS))))
$$($(1)_SOL_OBJ) $$($(1)_EX_OBJ): CFLAGS += $$(LAB_BOUNDS)
$$(BUILD)/labs/$(1)/test-solution $$(BUILD)/labs/$(1)/test-exercise: LAB_WRAP := $$($(1)_WRAP)

$$(BUILD)/labs/$(1)/test-solution: $$($(1)_TEST_OBJ) $$($(1)_SOL_OBJ) $$(LABTEST_OBJ) $$(LABTEST_KIT) $$($(1)_SYMS)
	@mkdir -p $$(dir $$@)
	$$(LAB_LINK)

$$(BUILD)/labs/$(1)/test-exercise: $$($(1)_TEST_OBJ) $$($(1)_EX_OBJ) $$(LABTEST_OBJ) $$(LABTEST_KIT) $$($(1)_SYMS)
	@mkdir -p $$(dir $$@)
	$$(LAB_LINK)

$$(BUILD)/labs/$(1)/test-mutant-%: tests/mutants/$(1)/%.patch $$(wildcard solutions/$(1)/*) \
		$$($(1)_TEST_OBJ) $$(LABTEST_OBJ) $$(LABTEST_KIT) $$($(1)_SYMS)
	@scripts/build-mutant $(1) $$< $$(BUILD)/mutants/$(1)/$$* $$@ \
		"$$(CC) $$(CPPFLAGS) $$(CFLAGS) $$(LAB_BOUNDS)" \
		"$$(MUTANT_LD) $$(LABTEST_WRAP) $$($(1)_WRAP) $$($(1)_TEST_OBJ) $$(LABTEST_OBJ) $$(LABTEST_KIT) $$(LDFLAGS) $$(CMOCKA_LIBS) $$(DB_LIBS) $$(LDLIBS)"
	@[ -z "$$$${HOTROW_MUTANT_STAMPS:-}" ] || : >"$$$$HOTROW_MUTANT_STAMPS/$(1)__$$*"

# The checks the suite holds, known before any student code runs: the
# test sources preprocessed, whose CMUnitTest array the runner reads
# (runner/check.h).
$$(BUILD)/labs/$(1)/checks.i: $$(wildcard tests/labs/$(1)/*.c) tests/harness/labtest.h
	@mkdir -p $$(dir $$@)
	@for f in $$(filter %.c,$$^); do $$(CC) $$(CPPFLAGS) -E -P $$$$f || exit 1; done >$$@.tmp && mv $$@.tmp $$@

ifneq ($$(wildcard labs/$(1)/run.c),)
$$(BUILD)/labs/$(1)/run-solution: $$(BUILD)/obj/labs/$(1)/run.o $$($(1)_SOL_OBJ) $$(DRIVER_LIB) $$(KIT_LIB) $$(ENGINE_LIB) $$(UTIL_LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) $$^ $$(DB_LIBS) $$(LDLIBS) -o $$@
$$(BUILD)/labs/$(1)/run-exercise: $$(BUILD)/obj/labs/$(1)/run.o $$($(1)_EX_OBJ) $$(DRIVER_LIB) $$(KIT_LIB) $$(ENGINE_LIB) $$(UTIL_LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) $$^ $$(DB_LIBS) $$(LDLIBS) -o $$@
ifneq ($$($(1)_SOL_OBJ),)
ALL += $$(BUILD)/labs/$(1)/run-solution
endif
endif

# The student kit (make student-kit) ships no solutions/: there a lab's
# suite is the student's to run (hotrow lab check), not make test's.
ifneq ($$($(1)_SOL_OBJ),)
TESTS     += $$(BUILD)/labs/$(1)/test-solution
MUST_FAIL += $$(BUILD)/labs/$(1)/test-exercise
MUTANTS   += $$(foreach m,$$($(1)_MUTANTS),$$(BUILD)/labs/$(1)/test-mutant-$$(m))
endif
endef

$(foreach lab,$(LAB_NAMES),$(eval $(call lab_rules,$(lab))))

# The handouts' tables, the mutants' headers and the hint tags agree.
LINTS += scripts/lint-labs
# Each labs/NN-name/parts agrees with the code and INSTRUCTOR.md's minutes.
LINTS += scripts/lint-parts
# Each skeleton.sum is what its exercises/ holds (hotrow lab reset reads it).
LINTS += scripts/skeleton-sums

# The mutation sweep (scripts/mutate): small changes to each reference
# solution, one at a time, that the checks should catch. Long, so not part
# of make test: `make mutate` sweeps every lab, `make mutate LAB=05-fence`
# one; MUTATE_FLAGS="--jobs 2" passes options. Each lab's report goes to
# build/mutate/LAB.txt too; the progress goes to the terminal.
.PHONY: mutate mutate-flags
MUTATE_LABS = $(if $(LAB),$(LAB),$(foreach l,$(LAB_NAMES),$(if $(wildcard solutions/$(l)/*.c),$(l))))
mutate:
	@mkdir -p $(BUILD)/mutate
	@scripts/with-servers sh -c 'st=0; for lab in $(MUTATE_LABS); do \
		scripts/mutate $(MUTATE_FLAGS) $$lab >$(BUILD)/mutate/$$lab.txt; rc=$$?; \
		cat $(BUILD)/mutate/$$lab.txt; [ $$rc -le 1 ] || exit $$rc; [ $$rc -eq 0 ] || st=1; \
		done; exit $$st'

# What scripts/mutate compiles and links a mutant with, as the rules above.
mutate-flags:
	@echo 'BUILD=$(BUILD)'
	@echo 'CC=$(CC)'
	@echo 'CPPFLAGS=$(CPPFLAGS)'
	@echo 'CFLAGS=$(CFLAGS) $(LAB_BOUNDS)'
	@echo 'LDFLAGS=$(LDFLAGS)'
	@$(foreach l,$(LAB_NAMES),echo 'LAB_LINK_$(l)=$(MUTANT_LD) $(LABTEST_WRAP) $($(l)_WRAP) $($(l)_TEST_OBJ) $(LABTEST_OBJ) $(LABTEST_KIT) $(CMOCKA_LIBS) $(DB_LIBS) $(LDLIBS)';)

# A tarball for courses that hand the kit out: no solutions, no mutants.
student-kit:
	@scripts/student-kit $(BUILD)


# tests/harness/: the gate, the step failpoints, the bounds, the session
# reader and the allocation counter the labs' checks use, tested on both
# engines like a lab.
HARNESS_TESTS := $(patsubst tests/harness/%.c,$(BUILD)/tests/harness/%,$(wildcard tests/harness/test_*.c))
TESTS += $(HARNESS_TESTS)
$(BUILD)/tests/harness/%: $(BUILD)/obj/tests/harness/%.o $(LABTEST_OBJ) $(LABTEST_KIT)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(LABTEST_WRAP) $^ $(CMOCKA_LIBS) $(DB_LIBS) $(LDLIBS) -o $@
