# bench/: side-by-side benchmarks (bench/README.md). Speed targets are
# printed as PASS/MISS by `make bench`, never asserted by `make test`; the
# smoke test only checks that the benches run and both sides agree.
#
#   make bench      the engine vs SimPy and a Python loop, full counts (~1 min)
#   make bench-db   one hot row: kit/load on SQLite and PostgreSQL vs pgbench
#                   (PostgreSQL from HOTROW_PG_URL; make pg-up starts one)
#   make bench-fidelity  the engine's prediction from one client's parts vs
#                   kit/load and pgbench, on SQLite and (with HOTROW_PG_URL)
#                   PostgreSQL (~4 min)
#   make bench-tui  the TUI's frame time at 200x60 (viral-video) and its CPU
#                   at 30 fps (build/bench/tui_bench --quick: 1 s)
#
# The benchmarks' code is a library that build/hotrow links (cli/bench.c is
# its front); it links the kit, the drivers' support and the engine. The
# TUI's bench (bench/tui/) is a program of its own: it drives the screen.

BENCH_SRC := $(wildcard bench/*.c)
BENCH_LIB := $(BUILD)/libhotrow-bench.a
$(BENCH_LIB): $(BENCH_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(BENCH_LIB)

.PHONY: bench-db bench-fidelity

$(BUILD)/bench/tui_bench: $(BUILD)/obj/bench/tui/tui_bench.o $(TUI_LIB) $(ENGINE_LIB) $(UTIL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(NCURSES_LIBS) $(LDLIBS) -o $@
bench-tui: $(BUILD)/bench/tui_bench
	$(BUILD)/bench/tui_bench

bench: $(BUILD)/hotrow
	@if [ -n "$(SAN)" ]; then echo "bench: note: a SAN=$(SAN) build is slow; the figures mean little"; fi
	@bench/run --hotrow $(BUILD)/hotrow

bench-db: $(BUILD)/hotrow
	@$(BUILD)/hotrow bench db

bench-fidelity: $(BUILD)/hotrow
	@$(BUILD)/hotrow bench fidelity --db sqlite:/tmp/hotrow-fidelity-$$$$.db; rc=$$?; \
	 rm -f /tmp/hotrow-fidelity-$$$$.db*; \
	 if [ -n "$$HOTROW_PG_URL" ]; then echo; $(BUILD)/hotrow bench fidelity || rc=1; \
	 else echo "bench-fidelity: no HOTROW_PG_URL: PostgreSQL and pgbench skipped (make pg-up starts one)"; fi; \
	 exit $$rc

# The smoke test runs against HOTROW_BIN (this build's binary, set by make).
SCRIPT_TESTS += bench/smoke-test
