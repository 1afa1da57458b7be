# hotrow: one hand-written makefile; each directory adds its part through
# a module.mk (engine/, tui/, kit/, cli/, labs/, tests/*, bench/).
#
#   make              build build/hotrow
#   make test         install what is missing, then run every suite
#   make demo         install what is missing, then run the demo
#   make SAN=address,undefined test    the same under ASan+UBSan
#   make SAN=thread test               the same under TSan
#   make SAN=... suites                only the suites that must pass
#   make WERROR=1 ...                  warnings are errors (CI)
#   make install PREFIX=/usr/local DESTDIR=
#   make bench, make bench-tui, make pg-up, make pg-down, make student-kit

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
ifneq ($(WERROR),)
WARN += -Werror
endif

OPT := -O2 -g
ifneq ($(SAN),)
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=$(SAN) -fno-sanitize-recover=all
endif

PKGS := ncursesw sqlite3 libpq cmocka
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
NCURSES_LIBS := $(shell pkg-config --libs ncursesw 2>/dev/null)
DB_LIBS := $(shell pkg-config --libs sqlite3 libpq 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

CPPFLAGS := -I. -D_GNU_SOURCE $(PKG_CFLAGS)
CFLAGS   := -std=c11 $(OPT) $(WARN) -pthread
LDFLAGS  := -pthread $(if $(SAN),-fsanitize=$(SAN))
LDLIBS   := -lm

# Filled in by the module.mk files.
TESTS      :=   # cmocka binaries that must pass
MUST_FAIL  :=   # binaries that must fail (skeletons and mutants): "caught"
SCRIPT_TESTS := # shell tests that print cmocka-style summaries
ALL        :=

# Keep objects that pattern rules chain through (test and lab objects), so
# nothing is rebuilt or deleted behind the test summary.
.SECONDARY:

.PHONY: all test test-run suites demo install uninstall clean deps pg-up pg-down \
        bench bench-tui student-kit
all: $(BUILD)/hotrow

include engine/module.mk
include tui/module.mk
include kit/module.mk
include labs/driver/module.mk
include bench/module.mk
include cli/module.mk
include $(wildcard labs/module.mk tests/*/module.mk)

all: $(ALL)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

deps:
	@scripts/deps

# The README's test command: set up first, then run every suite.
test: deps
	@$(MAKE) --no-print-directory test-run

# Script tests find the binary under test (plain or SAN) in HOTROW_BIN.
RUN_TESTS = HOTROW_BIN=$(CURDIR)/$(BUILD)/hotrow scripts/run-tests

test-run: $(BUILD)/hotrow $(TESTS) $(MUST_FAIL)
	@$(RUN_TESTS) $(foreach t,$(TESTS),pass:$(t)) \
		$(foreach t,$(MUST_FAIL),fail:$(t)) \
		$(foreach t,$(SCRIPT_TESTS),pass:$(t))

# Only the suites that must pass: what the sanitizer builds run in CI (the
# skeletons and mutants are about the tests' honesty, checked by make test).
suites: $(BUILD)/hotrow $(TESTS)
	@$(RUN_TESTS) $(foreach t,$(TESTS),pass:$(t)) \
		$(foreach t,$(SCRIPT_TESTS),pass:$(t))

demo: deps
	@$(MAKE) --no-print-directory $(BUILD)/hotrow
	@$(BUILD)/hotrow demo

install: $(BUILD)/hotrow
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/hotrow $(DESTDIR)$(PREFIX)/bin/hotrow

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/hotrow

pg-up:
	@scripts/pg up
pg-down:
	@scripts/pg down

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
