/*
 * test_explain.c: the plain-words panel says the right numbers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tui/explain.h"
#include "tests/tui/fixture.h"

static int setup(void **state)
{
	*state = fx_viral();
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* All paragraphs joined, for substring checks. */
static const char *all_text(const struct sim_snapshot *snap, bool ascii)
{
	static char buf[4096];
	struct tui_para p[TUI_EXPLAIN_MAX];
	int n = tui_explain(snap, ascii, p, TUI_EXPLAIN_MAX);
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		strcat(buf, p[i].text);
		strcat(buf, "\n");
	}
	return buf;
}

static void tui_explain__overload_numbers(void **state)
{
	const char *t = all_text(*state, false);

	assert_non_null(strstr(t, "Ceiling 500/s (1 row / 2 ms hold), arrivals 2,000/s: "
	                          "offered load ρ = 4.0"));
	assert_non_null(strstr(t, "grows by 1,500 requests each second"));
	assert_non_null(strstr(t, "the pool of 20 is full in 0.013 s"));
	/* Overloaded: no steady state, so Little's law is not quoted as one. */
	assert_non_null(strstr(t, "this queue is still growing: 1,866 in the system so far"));
	assert_non_null(strstr(t, "login page fails 60/s (490 so far)"));
}

static void tui_explain__little_only_in_steady_state(void **state)
{
	struct sim_snapshot *snap = *state;

	snap->summary.theory.rho = 0.5;
	snap->summary.theory.growth_per_s = 0;
	snap->summary.theory.binding_per_s = 500;
	snap->config.rps = 250;
	snap->summary.theory.steady = true;
	snap->summary.theory.little_L = 0.51;
	snap->summary.theory.little_lambda = 250;
	snap->summary.theory.little_W_ms = 2.04;
	const char *t = all_text(snap, false);
	assert_non_null(strstr(t, "L = λ × W: 0.51 in the system = 250/s × 2 ms"));
	snap->summary.theory.steady = false;
	t = all_text(snap, false);
	assert_non_null(strstr(t, "still filling: 0.51 in the system so far"));
}

static void tui_explain__retry_storm_and_double_counts(void **state)
{
	struct sim_snapshot *snap = *state;

	/* Back under the ceiling, but the row serves abandoned statements. */
	snap->config.rps = 350;
	snap->summary.theory.rho = 0.7;
	snap->summary.theory.growth_per_s = 0;
	snap->summary.orphans_run = 9000;
	snap->summary.retried = 26000;
	snap->summary.count.visible = 11739;
	snap->summary.count.true_count = 2763;
	snap->summary.count.doubled = 4719;
	snap->summary.count.unacked = 4257;
	const char *t = all_text(snap, false);
	assert_non_null(strstr(t, "Retry storm: 9,000 statements ran after their clients gave up"));
	assert_non_null(strstr(t, "lock_timeout would let the server give up too"));
	assert_non_null(strstr(t, "4,719 likes counted twice by blind retries"));
	assert_null(strstr(t, "predicts"));       /* the open-loop model does not describe it */
	snap->config.idempotent = true;
	t = all_text(snap, false);
	assert_null(strstr(t, "an idempotent write would"));
}

static void tui_explain__closed_loop_quotes_mva(void **state)
{
	struct sim_snapshot *snap = *state;

	snap->config.clients = 16;
	snap->summary.theory.rho = 0.95;
	snap->summary.theory.growth_per_s = 0;
	snap->summary.theory.closed_throughput_per_s = 475;
	const char *t = all_text(snap, false);
	assert_non_null(strstr(t, "16 callers in a closed loop: MVA predicts 475/s"));
}

static void tui_explain__names_the_binding_ceiling(void **state)
{
	struct sim_snapshot *snap = *state;

	/* 128 random slots behind a pool of 100: the connections sit on
	 * about 69.6 distinct rows, and that, not 128,000/s, binds. */
	snap->config.strategy = SIM_SHARDED;
	snap->config.rows = snap->nrows = 128;
	snap->config.pool = 100;
	snap->config.hold_ms = 1;
	snap->config.rps = 100000;
	snap->summary.theory.ceiling_per_s = 128000;
	snap->summary.theory.rho = 0.78;
	snap->summary.theory.growth_per_s = 0;
	snap->summary.theory.binding = SIM_CEIL_POOL;
	snap->summary.theory.distinct_rows = 69.58;
	snap->summary.theory.pool_ceiling_per_s = 69580;
	snap->summary.theory.binding_per_s = 69580;
	const char *t = all_text(snap, false);
	assert_non_null(strstr(t, "The binding ceiling is the pool: 100 connections land on "
	                          "69.6 distinct rows of 128"));
	assert_null(strstr(t, "predicts"));    /* no queueing formula below a lower ceiling */
}

static void tui_explain__under_the_ceiling_quotes_queueing_theory(void **state)
{
	struct sim_snapshot *snap = *state;

	snap->config.strategy = SIM_SHARDED;
	snap->config.rows = snap->nrows = 16;
	snap->summary.theory.ceiling_per_s = 8000;
	snap->summary.theory.rho = 0.25;
	snap->summary.theory.growth_per_s = 0;
	snap->summary.theory.md1_mean_ms = 2.33;
	snap->summary.theory.model = SIM_MODEL_MD1;
	snap->summary.theory.model_mean_ms = 2.33;
	snap->summary.theory.binding_per_s = 8000;
	for (int i = 0; i < snap->nseries; i++)
		snap->series[i].unrelated_failed_per_s = 0;
	const char *t = all_text(snap, false);

	assert_non_null(strstr(t, "Ceiling 8,000/s (16 slots / 2 ms hold), arrivals 2,000/s: ρ = 0.25."));
	assert_non_null(strstr(t, "busy 25% of the time; M/D/1 predicts 2.3 ms"));
	assert_null(strstr(t, "grows by"));
	assert_non_null(strstr(t, "the login page queues behind 2,107 requests"));
	snap->pool_waiters = 0;
	t = all_text(snap, false);
	assert_null(strstr(t, "login page"));
}

static void tui_explain__fixes_show_the_count(void **state)
{
	struct sim_snapshot *snap = *state;

	snap->config.strategy = SIM_COALESCE;
	snap->config.flush_ms = 100;
	snap->summary.theory.rho = 0.02;
	snap->summary.theory.growth_per_s = 0;
	snap->summary.count.true_count = 24000;
	snap->summary.count.visible = 23800;
	snap->summary.count.max_lag_s = 0.1;
	snap->summary.count.lost = 150;
	const char *t = all_text(snap, false);

	assert_non_null(strstr(t, "one UPDATE +k every 100 ms"));
	assert_non_null(strstr(t, "Count: true 24,000, visible 23,800 (lag up to 0.1 s); lost 150, double 0."));
	struct tui_para p[TUI_EXPLAIN_MAX];
	int n = tui_explain(snap, false, p, TUI_EXPLAIN_MAX);
	assert_int_equal(p[n - 1].style, TUI_BAD);       /* a lost count is bad news */
}

static void tui_explain__ascii_spells_greek_out(void **state)
{
	const char *t = all_text(*state, true);

	assert_non_null(strstr(t, "rho = 4.0"));
	assert_non_null(strstr(t, "L = lambda x W"));
	for (const char *p = t; *p; p++)
		assert_true((unsigned char)*p < 0x80);
}

static void tui_explain_draw__drops_least_important_first(void **state)
{
	struct tui_screen *s = tui_screen_new(80, 4);

	tui_explain_draw(s, (struct tui_rect){0, 0, 80, 4}, *state, false);

	assert_true(tui_screen_has(s, "WHAT IS HAPPENING"));
	assert_true(tui_screen_has(s, "ρ = 4.0"));           /* rank 0 stays */
	assert_true(tui_screen_has(s, "grows by 1,500"));    /* rank 1 stays */
	assert_false(tui_screen_has(s, "Naive: every like")); /* rank 5 goes */
	tui_screen_free(s);
}

static void tui_wrap__breaks_at_spaces(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(10, 4);

	int n = tui_wrap(s, 0, 0, 10, 4, TUI_NORMAL, "the row lock is held");

	assert_int_equal(n, 3);
	assert_string_equal(fx_row(s, 0), "the row");
	assert_string_equal(fx_row(s, 1), "lock is");
	assert_string_equal(fx_row(s, 2), "held");
	assert_int_equal(tui_wrap_lines(10, "the row lock is held"), 3);
	tui_screen_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(tui_explain__overload_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_explain__little_only_in_steady_state, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_explain__names_the_binding_ceiling, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_explain__retry_storm_and_double_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_explain__closed_loop_quotes_mva, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_explain__under_the_ceiling_quotes_queueing_theory, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_explain__fixes_show_the_count, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_explain__ascii_spells_greek_out, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_explain_draw__drops_least_important_first, setup, teardown),
		cmocka_unit_test(tui_wrap__breaks_at_spaces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
