# bench/: side-by-side benchmarks (bench/README.md). Speed targets are
# printed as PASS/MISS by `make bench`, never asserted by `make test`; the
# smoke test only checks that the benches run and both sides agree.
#
#   make bench      the engine vs SimPy and a Python loop, full counts (~1 min)
#   make bench-db   one hot row: kit/load on SQLite and PostgreSQL vs pgbench
#                   (PostgreSQL from HOTROW_PG_URL; make pg-up starts one)

.PHONY: bench-db

bench: $(BUILD)/hotrow
	@if [ -n "$(SAN)" ]; then echo "bench: note: a SAN=$(SAN) build is slow; the figures mean little"; fi
	@bench/run --hotrow $(BUILD)/hotrow

bench-db: $(BUILD)/hotrow
	@$(BUILD)/hotrow bench db

# The smoke test runs against HOTROW_BIN (this build's binary, set by make).
SCRIPT_TESTS += bench/smoke-test
