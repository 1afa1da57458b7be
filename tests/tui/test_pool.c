/*
 * test_pool.c: pool cells, waiters and the login page, from a known snapshot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tui/pool.h"
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

static void tui_pool_draw__cells_match_the_snapshot(void **state)
{
	struct sim_snapshot *snap = *state;
	struct tui_screen *s = tui_screen_new(60, 8);

	tui_pool_draw(s, (struct tui_rect){0, 0, 60, 8}, snap, tui_glyphs(false));

	assert_non_null(strstr(fx_row(s, 0), "20 of 20 in use, FULL"));
	assert_int_equal(fx_count(s, 1, 0x25A0), 1);     /* ■ holds the lock */
	assert_int_equal(fx_count(s, 1, 0x25CB), 18);    /* ○ waits for it */
	assert_int_equal(fx_count(s, 1, 0x25C6), 1);     /* ◆ login page */
	assert_int_equal(fx_count(s, 1, 0x00B7), 0);     /* · none idle */
	assert_int_equal(tui_screen_at(s, 0, 1)->style, TUI_HOLD);
	assert_true(fx_find(s, "2,107 requests waiting for a connection") > 0);
	tui_screen_free(s);
}

static void tui_pool_draw__login_page_fails_in_red(void **state)
{
	struct sim_snapshot *snap = *state;
	struct tui_screen *s = tui_screen_new(60, 8);

	tui_pool_draw(s, (struct tui_rect){0, 0, 60, 8}, snap, tui_glyphs(false));

	int y = fx_find(s, "FAILING 60/s of 100/s (490 so far)");
	assert_true(y > 0);
	int x = fx_col(s, y, "FAILING");
	assert_int_equal(tui_screen_at(s, x, y)->style, TUI_BAD);
	assert_int_equal(fx_count(s, y, 0x2716), 1);     /* ✖ */
	tui_screen_free(s);
}

static void tui_pool_draw__login_page_ok_when_connections_are_free(void **state)
{
	struct sim_snapshot *snap = *state;
	struct tui_screen *s = tui_screen_new(60, 8);

	for (int i = 5; i < 20; i++)
		snap->pool_cells[i] = SIM_CONN_IDLE;
	snap->pool_in_use = 5;
	snap->pool_waiters = 0;
	for (int i = 0; i < snap->nseries; i++)
		snap->series[i].unrelated_failed_per_s = 0;
	snap->summary.unrelated.failed = 0;
	tui_pool_draw(s, (struct tui_rect){0, 0, 60, 8}, snap, tui_glyphs(false));

	assert_non_null(strstr(fx_row(s, 0), "5 of 20 in use"));
	assert_null(strstr(fx_row(s, 0), "FULL"));
	assert_int_equal(fx_count(s, 1, 0x00B7), 15);
	assert_true(fx_find(s, "login page ✔ OK 100/s") > 0);
	assert_false(tui_screen_has(s, "FAILING"));
	tui_screen_free(s);
}

static void tui_pool_unrelated_failing__averages_the_last_second(void **state)
{
	struct sim_snapshot *snap = *state;

	for (int i = 0; i < snap->nseries; i++)
		snap->series[i].unrelated_failed_per_s = i == snap->nseries - 1 ? 150 : 0;
	assert_true(tui_pool_unrelated_failing(snap) == 15);   /* 150 over 10 ticks */
	snap->nseries = 0;
	assert_true(tui_pool_unrelated_failing(snap) == 0);
}

static void tui_pool_draw__login_page_stalls_before_it_fails(void **state)
{
	struct sim_snapshot *snap = *state;
	struct tui_screen *s = tui_screen_new(60, 8);

	for (int i = 0; i < snap->nseries; i++)
		snap->series[i].unrelated_failed_per_s = 0;
	tui_pool_draw(s, (struct tui_rect){0, 0, 60, 8}, snap, tui_glyphs(false));

	int y = fx_find(s, "login page ◔ STALLED behind 2,107 waiting requests");
	assert_true(y > 0);
	assert_int_equal(tui_screen_at(s, fx_col(s, y, "STALLED"), y)->style, TUI_WARN);
	tui_screen_free(s);
}

static void tui_pool_draw__short_rect_keeps_the_login_page(void **state)
{
	struct sim_snapshot *snap = *state;
	struct tui_screen *s = tui_screen_new(60, 3);

	int used = tui_pool_draw(s, (struct tui_rect){0, 0, 60, 3}, snap, tui_glyphs(true));

	assert_int_equal(used, 3);
	assert_int_equal(fx_count(s, 1, 'w'), 18);       /* ASCII: w H u */
	assert_int_equal(fx_count(s, 1, 'H'), 1);
	assert_non_null(strstr(fx_row(s, 2), "login page X FAILING"));
	tui_screen_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(tui_pool_draw__cells_match_the_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_pool_draw__login_page_fails_in_red, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_pool_draw__login_page_ok_when_connections_are_free, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_pool_unrelated_failing__averages_the_last_second, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_pool_draw__login_page_stalls_before_it_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_pool_draw__short_rect_keeps_the_login_page, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
