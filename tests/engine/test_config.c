/*
 * test_config.c: defaults, names, scenarios and config checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/sim.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_config_default__passes_check),
		cmocka_unit_test(sim_scenario__every_name_loads_and_checks),
		cmocka_unit_test(sim_scenario__numbers_from_the_texts),
		cmocka_unit_test(sim_scenario__unknown_leaves_config),
		cmocka_unit_test(sim_config_check__names_the_field),
		cmocka_unit_test(sim_strategy_parse__round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
