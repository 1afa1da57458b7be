/*
 * test_config.c: defaults, names, scenarios and config checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/sim_impl.h"     /* the write paths' table, to agree with */

static void sim_config_default__passes_check(void **state)
{
	struct sim_config c;
	char err[160];

	(void)state;
	sim_config_default(&c);
	assert_int_equal(sim_config_check(&c, err, sizeof err), 0);
	assert_int_equal(c.strategy, SIM_NAIVE);
	assert_true(c.hold_ms == 2 && c.rps == 2000);
}

static void sim_scenario__every_name_loads_and_checks(void **state)
{
	const char *const *names = sim_scenario_names();
	char err[160];
	int n = 0;

	(void)state;
	for (; names[n]; n++) {
		struct sim_config c;
		assert_int_equal(sim_scenario(names[n], &c), 0);
		assert_string_equal(c.scenario, names[n]);
		assert_non_null(sim_scenario_blurb(names[n]));
		assert_int_equal(sim_config_check(&c, err, sizeof err), 0);
	}
	assert_true(n >= 13);
}

static void sim_scenario__numbers_from_the_texts(void **state)
{
	struct sim_config c;

	(void)state;
	assert_int_equal(sim_scenario("viral-post", &c), 0);
	assert_true(c.rps == 2000 && c.seconds == 1200 && c.hold_ms == 2);
	assert_int_equal(c.strategy, SIM_NAIVE);
	assert_int_equal(sim_scenario("viral-video", &c), 0);
	assert_true(c.rps == 100000 && c.hold_ms == 1 && c.pool == 100);
	assert_int_equal(sim_scenario("viral-post-sharded", &c), 0);
	assert_int_equal(c.strategy, SIM_SHARDED);
	assert_int_equal(c.rows, 16);
	assert_int_equal(sim_scenario("viral-post-redis", &c), 0);
	assert_int_equal(c.strategy, SIM_REDIS);
}

static void sim_scenario__unknown_leaves_config(void **state)
{
	struct sim_config c, before;

	(void)state;
	sim_config_default(&c);
	c.rps = 123;
	before = c;
	assert_int_equal(sim_scenario("viral-cat", &c), -1);
	assert_memory_equal(&c, &before, sizeof c);
	assert_null(sim_scenario_blurb("viral-cat"));
}

static void sim_config_check__names_the_field(void **state)
{
	struct sim_config c;
	char err[160];

	(void)state;
	sim_config_default(&c);
	c.rows = 0;
	assert_int_equal(sim_config_check(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "--rows"));
	sim_config_default(&c);
	c.hold_ms = -1;
	assert_int_equal(sim_config_check(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "--hold-ms"));
	sim_config_default(&c);
	c.nphases = 2;
	c.phases[0] = (struct sim_phase){ 5, 100 };
	c.phases[1] = (struct sim_phase){ 5, 200 };
	assert_int_equal(sim_config_check(&c, err, sizeof err), -1);
	assert_non_null(strstr(err, "--schedule"));
}

static void sim_strategy_parse__round_trip(void **state)
{
	enum sim_strategy st;
	enum sim_fault f;

	(void)state;
	for (int i = 0; i < SIM_NSTRATEGIES; i++) {
		assert_int_equal(sim_strategy_parse(sim_strategy_name((enum sim_strategy)i), &st), 0);
		assert_int_equal(st, i);
	}
	for (int i = 0; i < SIM_NFAULTS; i++) {
		assert_int_equal(sim_fault_parse(sim_fault_name((enum sim_fault)i), &f), 0);
		assert_int_equal(f, i);
	}
	assert_int_equal(sim_strategy_parse("fast", &st), -1);
	assert_int_equal(sim_fault_parse("disk", &f), -1);
}

/* The public descriptor says what the engine's write paths do: the rows
 * it counts, its flusher, its name; and sim_set keeps what the restart
 * question names. */
static void sim_strategy_info__agrees_with_the_write_paths(void **state)
{
	(void)state;
	for (int i = 0; i < SIM_NSTRATEGIES; i++) {
		const struct sim_strategy_info *in = sim_strategy_info((enum sim_strategy)i);
		const struct sim_path *p = sim_path_of((enum sim_strategy)i);
		struct sim_config c;

		assert_non_null(in);
		assert_string_equal(in->name, sim_strategy_name((enum sim_strategy)i));
		assert_int_equal(in->uses_rows, p->sharded);
		assert_int_equal(in->flushes, p->flushes);
		assert_true(!in->buffered || (in->flushes && !p->row_lock));
		assert_true(!in->spread || in->uses_rows);
		sim_config_default(&c);
		c.strategy = (enum sim_strategy)i;
		c.rows = 8;
		assert_int_equal(sim_config_rows(&c), in->uses_rows ? 8 : 1);
	}
	assert_null(sim_strategy_info(SIM_NSTRATEGIES));
}

static void sim_config_restarts__the_structure_and_only_it(void **state)
{
	struct sim_config a, b;

	(void)state;
	sim_config_default(&a);
	b = a;
	b.hold_ms = 5;
	b.lock_timeout_ms = 300;
	b.handoff = SIM_HANDOFF_HERD;
	b.wal_flush_ms = 1;
	assert_false(sim_config_restarts(&a, &b));
	b.strategy = SIM_SHARDED;       /* a fix applies live */
	b.rows = 4;
	b.pool = 50;
	assert_false(sim_config_restarts(&a, &b));
	b.cores = 4;
	assert_true(sim_config_restarts(&a, &b));
	sim_config_keep(&b, &a);
	assert_false(sim_config_restarts(&a, &b));
	assert_int_equal(b.cores, 0);
	assert_int_equal(b.rows, 4);
	assert_true(b.hold_ms == 5 && b.handoff == SIM_HANDOFF_HERD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_config_default__passes_check),
		cmocka_unit_test(sim_scenario__every_name_loads_and_checks),
		cmocka_unit_test(sim_scenario__numbers_from_the_texts),
		cmocka_unit_test(sim_scenario__unknown_leaves_config),
		cmocka_unit_test(sim_config_check__names_the_field),
		cmocka_unit_test(sim_strategy_parse__round_trip),
		cmocka_unit_test(sim_strategy_info__agrees_with_the_write_paths),
		cmocka_unit_test(sim_config_restarts__the_structure_and_only_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
