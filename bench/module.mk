# bench/: side-by-side benchmarks (bench/README.md). Speed targets are
# printed as PASS/MISS by `make bench`, never asserted by `make test`; the
# smoke test only checks that the benches run and both sides agree.
#
#   make bench      the engine vs SimPy and a Python loop, full counts (~1 min)
#   make bench-db   one hot row: kit/load on SQLite and PostgreSQL vs pgbench
#                   (PostgreSQL from HOTROW_PG_URL; make pg-up starts one)

.PHONY: bench-db
BENCH_SMOKE := $(BUILD)/tests/bench/smoke

bench: $(BUILD)/hotrow
	@if [ -n "$(SAN)" ]; then echo "bench: note: a SAN=$(SAN) build is slow; the figures mean little"; fi
	@bench/run --hotrow $(BUILD)/hotrow

bench-db: $(BUILD)/hotrow
	@$(BUILD)/hotrow bench db

# A wrapper so scripts/run-tests can run the smoke test against this build's
# binary (plain, or SAN=...).
$(BENCH_SMOKE): bench/smoke-test bench/module.mk
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec bench/smoke-test %s\n' "$(BUILD)/hotrow" > $@
	chmod +x $@

SCRIPT_TESTS += $(BENCH_SMOKE)
test-run: $(BENCH_SMOKE)
