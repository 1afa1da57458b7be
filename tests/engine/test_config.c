/*
 * test_config.c: defaults, names, scenarios and config checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/sim_field.h"
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

/* Set field f of c to v (an INT or BATCH as int, a DOUBLE as double). */
static void put(const struct sim_field *f, struct sim_config *c, double v)
{
	if (f->kind == SIM_FIELD_DOUBLE) {
		*(double *)((char *)c + f->off) = v;
	} else {
		int i = (int)v;
		memcpy((char *)c + f->off, &i, sizeof i);
	}
}

/* What sim_config_check says of one field at v, from a config where no
 * other rule is near its edge; 0 when it takes it. */
static int check_at(const struct sim_field *f, double v, char *err, size_t len)
{
	struct sim_config c;

	sim_config_default(&c);
	c.hold_ms = c.outside_ms = c.wal_flush_ms = 1e6;   /* room for the CPU parts */
	c.think_ms = 1;
	put(f, &c, v);
	err[0] = '\0';
	return sim_config_check(&c, err, len);
}

/* Every field's range and its message come from the field table: the
 * bounds pass, a step outside either fails naming the option on one line,
 * 0 passes where the table says what it means, and between 0 and a
 * field's least it fails (a rate or a timeout that would round to 0). */
static void sim_config_check__every_range_is_the_tables(void **state)
{
	size_t n;
	const struct sim_field *f = sim_fields(&n);
	char err[200], opt[40];
	int tried = 0;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		snprintf(opt, sizeof opt, "--%s:", f[i].option);
		if (f[i].kind == SIM_FIELD_ENUM || f[i].kind == SIM_FIELD_STRATEGY) {
			struct sim_config c;
			int bad = 99;
			sim_config_default(&c);
			memcpy((char *)&c + f[i].off, &bad, sizeof bad);
			assert_int_equal(sim_config_check(&c, err, sizeof err), -1);
			assert_non_null(strstr(err, opt));
			assert_non_null(strstr(err, " or "));
			tried++;
			continue;
		}
		if (f[i].kind != SIM_FIELD_INT && f[i].kind != SIM_FIELD_BATCH &&
		    f[i].kind != SIM_FIELD_DOUBLE)
			continue;
		double lo = f[i].least > f[i].min ? f[i].least : f[i].min;
		double step = f[i].kind == SIM_FIELD_DOUBLE ? lo / 2 : 1;
		if (check_at(&f[i], lo, err, sizeof err) != 0 ||
		    check_at(&f[i], f[i].max, err, sizeof err) != 0)
			fail_msg("%s: a bound of its own range refused: %s", f[i].option, err);
		double outside[] = { f[i].max + (f[i].kind == SIM_FIELD_DOUBLE ? f[i].max : 1),
		                     lo - step, -1 };
		for (size_t k = 0; k < sizeof outside / sizeof outside[0]; k++) {
			if (outside[k] == 0 || (outside[k] == lo - step && step == 0))
				continue;
			if (check_at(&f[i], outside[k], err, sizeof err) != -1)
				fail_msg("%s = %g taken, outside %g..%g", f[i].option, outside[k], lo,
				         f[i].max);
			if (!strstr(err, opt) || strchr(err, '\n'))
				fail_msg("%s = %g: the message is not one line naming it: %s",
				         f[i].option, outside[k], err);
			tried++;
		}
		assert_int_equal(check_at(&f[i], 0, err, sizeof err) == 0,
		                 f[i].zero != NULL || f[i].min <= 0);
		if (f[i].zero) {   /* the message says what 0 means */
			char z[64];
			snprintf(z, sizeof z, "0 (%s)", f[i].zero);
			check_at(&f[i], -1, err, sizeof err);
			if (!strstr(err, z))
				fail_msg("%s: the message does not say %s: %s", f[i].option, z, err);
		}
	}
	assert_true(tried > 80);
	/* the message says what 0 means and the range, in plain numbers */
	const struct sim_field *lt = sim_field_find("lock-timeout-ms");
	check_at(lt, 0.0004, err, sizeof err);
	assert_string_equal(err, "--lock-timeout-ms: expected 0 (never) or milliseconds from 0.001 "
	                         "to 1000000000");
	check_at(sim_field_find("pool"), -1, err, sizeof err);
	assert_string_equal(err, "--pool: expected an integer from 0 (unbounded) to 1000000");
	check_at(sim_field_find("handoff"), 0, err, sizeof err);
	assert_string_equal(err, "");
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
		cmocka_unit_test(sim_config_check__every_range_is_the_tables),
		cmocka_unit_test(sim_strategy_parse__round_trip),
		cmocka_unit_test(sim_strategy_info__agrees_with_the_write_paths),
		cmocka_unit_test(sim_config_restarts__the_structure_and_only_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
