# hotrow: one hand-written makefile; each directory adds its part through
# a module.mk (engine/, tui/, kit/, cli/, labs/, tests/*, bench/).
#
#   make              build build/hotrow
#   make test         install what is missing, then run every suite
#                     (starting a throwaway PostgreSQL; NO_PG=1: without)
#   make demo         install what is missing, then run the demo
#   make SAN=address,undefined test    the same under ASan+UBSan
#   make SAN=thread test               the same under TSan
#   make figures (docs/figures/), make handout (build/handout/)
#   make SAN=... suites                only the suites that must pass
#   make WERROR=1 ...                  warnings are errors (CI)
#   make install PREFIX=/usr/local DESTDIR=
#   make bench, make bench-tui, make pg-up, make pg-down, make student-kit
#   make redis-up, make redis-down       a throwaway Redis (scripts/redis)
#   make mysql-up, make mysql-down       a throwaway MariaDB (scripts/mysql)
#   make mutate [LAB=05-fence]           the mutation sweep of the labs' checks (long)

CC      ?= cc
PREFIX  ?= /usr/local
DESTDIR ?=
SAN     ?=
WERROR  ?=

comma := ,
ifeq ($(SAN),)
BUILD := build
else
BUILD := build/san-$(subst $(comma),-,$(SAN))
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# Always errors, in a student's build too (GCC 14 refuses them by default):
# an int given where the kit asks for an int64_t *, a pointer used as an
# integer, a call to an undeclared function.
WARN += -Werror=incompatible-pointer-types -Werror=int-conversion \
        -Werror=implicit-function-declaration
ifneq ($(WERROR),)
WARN += -Werror
endif

OPT := -O2 -g
ifneq ($(SAN),)
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=$(SAN) -fno-sanitize-recover=all
endif

PKGS := ncursesw sqlite3 libpq libmariadb hiredis cmocka
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
NCURSES_LIBS := $(shell pkg-config --libs ncursesw 2>/dev/null)
DB_LIBS := $(shell pkg-config --libs sqlite3 libpq libmariadb hiredis 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

CPPFLAGS := -I. -D_GNU_SOURCE $(PKG_CFLAGS)
CFLAGS   := -std=c11 $(OPT) $(WARN) -pthread
LDFLAGS  := -pthread $(if $(SAN),-fsanitize=$(SAN))
LDLIBS   := -lm

# Filled in by the module.mk files.
TESTS      :=   # cmocka binaries that must pass
MUST_FAIL  :=   # binaries that must fail (the skeletons): "caught"
MUTANTS    :=   # planted mistakes: caught by the checks their headers name
SCRIPT_TESTS := # shell tests that print cmocka-style summaries
LINTS      :=   # scripts that check the kit's text against its code
PLAIN_SCRIPTS := # script tests run by make test only, not by the sanitizer builds
LAST_SCRIPTS :=  # script tests that run the lab runner in this tree, which removes a
                 # lab's binaries when it first builds the lab: make test runs them
                 # after every other suite (run-tests' last:), one after another
ALL        :=

# Keep objects that pattern rules chain through (test and lab objects), so
# nothing is rebuilt or deleted behind the test summary.
.SECONDARY:

.PHONY: all test test-run suites demo install uninstall clean deps pg-up pg-down \
        redis-up redis-down mysql-up mysql-down \
        bench bench-tui student-kit
all: $(BUILD)/hotrow

include util/module.mk
include engine/module.mk
include class/module.mk
include tui/module.mk
include kit/module.mk
include top/module.mk
include labs/driver/module.mk
include bench/module.mk
include runner/module.mk
include cli/module.mk
include $(wildcard labs/module.mk tests/*/module.mk)

all: $(ALL)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

deps:
	@scripts/deps

# The README's test command: set up first, then run every suite, against
# a throwaway PostgreSQL, Redis and MariaDB that scripts/with-servers
# starts and stops when none is named (HOTROW_PG_URL, HOTROW_REDIS_URL,
# HOTROW_MYSQL_URL) and the server is installed; NO_PG=1, NO_REDIS=1 or
# NO_MYSQL=1 skips one.
test: deps
	@scripts/with-servers $(MAKE) --no-print-directory test-run

# Script tests find the binary under test (plain or SAN) in HOTROW_BIN.
RUN_TESTS = HOTROW_BIN=$(CURDIR)/$(BUILD)/hotrow scripts/run-tests

# The mutants are built beside the suites, not before them (most of the
# suites' time is spent waiting on servers and clocks): scripts/run-tests
# hands them to MUTANT_MAKE in the order its lanes take them. Two jobs of
# their own; not through make's job server, whose descriptors every suite
# would then inherit.
MUTANT_MAKE = $(firstword $(MAKE)) -s -k -j2 --no-print-directory
test-run: $(BUILD)/hotrow $(TESTS) $(MUST_FAIL)
	@HOTROW_MUTANT_MAKE='$(MUTANT_MAKE)' $(RUN_TESTS) $(foreach t,$(TESTS),pass:$(t)) \
		$(foreach t,$(MUST_FAIL),fail:$(t)) \
		$(foreach t,$(MUTANTS),mutant:$(t)) \
		$(foreach t,$(filter-out $(LAST_SCRIPTS),$(SCRIPT_TESTS) $(PLAIN_SCRIPTS) $(LINTS)),script:$(t)) \
		$(foreach t,$(LAST_SCRIPTS),last:$(t))

# Every mutant's binary, as make test builds them beside the suites.
.PHONY: mutants
mutants: $(MUTANTS)

# Only the suites that must pass: what the sanitizer builds run in CI (the
# skeletons and mutants are about the tests' honesty, checked by make test).
suites: $(BUILD)/hotrow $(TESTS)
	@$(RUN_TESTS) $(foreach t,$(TESTS),pass:$(t)) \
		$(foreach t,$(SCRIPT_TESTS),script:$(t))

demo: deps
	@$(MAKE) --no-print-directory $(BUILD)/hotrow
	@$(BUILD)/hotrow demo

install: $(BUILD)/hotrow
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/hotrow $(DESTDIR)$(PREFIX)/bin/hotrow

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/hotrow

# The key figures (docs/figures/*.svg), redrawn by the engine; commit them.
.PHONY: figures handout
figures: $(BUILD)/hotrow
	@HOTROW_BIN=$(BUILD)/hotrow scripts/figures docs/figures

# The deck as one Markdown file for printing, with the figures and the
# predict slides' answers: build/handout/handout.md; the same as one HTML
# page with every Run:'s output (handout.html) and without the answers
# (handout-before.html), and a PDF where weasyprint or wkhtmltopdf is.
handout: $(BUILD)/hotrow
	@HOTROW_BIN=$(BUILD)/hotrow scripts/handout slides/hot-rows.md build/handout

pg-up:
	@scripts/pg up
pg-down:
	@scripts/pg down
redis-up:
	@scripts/redis up
redis-down:
	@scripts/redis down
mysql-up:
	@scripts/mysql up
mysql-down:
	@scripts/mysql down

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
