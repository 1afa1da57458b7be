/*
 * test_lanes.c: lock lanes drawn from a known snapshot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tui/lanes.h"
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

static void tui_lanes_draw__holder_queue_and_depth(void **state)
{
	struct sim_snapshot *snap = *state;
	struct tui_screen *s = tui_screen_new(60, 4);

	int used = tui_lanes_draw(s, (struct tui_rect){0, 0, 60, 4}, snap, tui_glyphs(false));

	assert_int_equal(used, 2);
	assert_non_null(strstr(fx_row(s, 0), "ceiling 500/s = 1 row / 2 ms hold"));
	assert_non_null(strstr(fx_row(s, 1), "19 waiting"));
	int hx = fx_col(s, 1, "■");
	assert_true(hx > 0);
	assert_int_equal(tui_screen_at(s, hx, 1)->style, TUI_HOLD);
	/* FIFO, oldest beside the holder: 5 x ● (>= 1 s), 10 x ○, 4 x ∙ */
	assert_int_equal(fx_count(s, 1, 0x25CF), 5);
	assert_int_equal(fx_count(s, 1, 0x25CB), 10);
	assert_int_equal(fx_count(s, 1, 0x2219), 4);
	assert_int_equal(tui_screen_at(s, hx + 2, 1)->ch, 0x25CF);
	assert_int_equal(tui_screen_at(s, hx + 2, 1)->style, TUI_WAIT3);
	assert_int_equal(tui_screen_at(s, hx + 2 + 18, 1)->ch, 0x2219);
	tui_screen_free(s);
}

static void tui_lanes_draw__depth_matches_queue_beyond_the_listed_waiters(void **state)
{
	struct sim_snapshot *snap = *state;
	struct tui_screen *s = tui_screen_new(50, 3);

	snap->lanes[0].queue_len = 1482;    /* only 19 listed */
	tui_lanes_draw(s, (struct tui_rect){0, 0, 50, 3}, snap, tui_glyphs(false));

	assert_non_null(strstr(fx_row(s, 1), "1,482 waiting"));
	assert_int_equal(fx_count(s, 1, 0x2026), 1);     /* … the queue goes on */
	tui_screen_free(s);
}

static void tui_lanes_draw__ascii_glyphs(void **state)
{
	struct sim_snapshot *snap = *state;
	struct tui_screen *s = tui_screen_new(60, 3);

	tui_lanes_draw(s, (struct tui_rect){0, 0, 60, 3}, snap, tui_glyphs(true));

	assert_non_null(strstr(fx_row(s, 1), "#|@@@@@oooooooooo...."));
	for (int x = 0; x < 60; x++)
		assert_true(tui_screen_at(s, x, 1)->ch < 0x80);
	tui_screen_free(s);
}

static void tui_lanes_draw__sharded_one_line_per_slot(void **state)
{
	struct sim_snapshot *snap = *state;
	struct tui_screen *s = tui_screen_new(60, 20);

	snap->config.strategy = SIM_SHARDED;
	snap->nrows = snap->nlanes = 16;
	for (int i = 0; i < 16; i++) {
		snap->lanes[i] = (struct sim_lane){.held = i % 4 == 0, .queue_len = i};
	}
	tui_lanes_draw(s, (struct tui_rect){0, 0, 60, 20}, snap, tui_glyphs(false));

	assert_non_null(strstr(fx_row(s, 0), "ceiling 8,000/s = 16 slots / 2 ms hold"));
	for (int i = 0; i < 16; i++) {
		char want[32];
		snprintf(want, sizeof want, "%d waiting", i);
		assert_non_null(strstr(fx_row(s, 1 + i), want));
		assert_int_equal(fx_count(s, 1 + i, 0x25A0), i % 4 == 0);
	}
	tui_screen_free(s);
}

static void tui_lanes_draw__folds_when_lanes_do_not_fit(void **state)
{
	struct sim_snapshot *snap = *state;
	struct tui_screen *s = tui_screen_new(54, 6);

	snap->config.strategy = SIM_SHARDED;
	snap->nrows = 100;                   /* 64 listed, 36 summarised */
	snap->nlanes = 64;
	for (int i = 0; i < 64; i++)
		snap->lanes[i] = (struct sim_lane){.held = true, .queue_len = i == 7 ? 12 : 0};
	tui_lanes_draw(s, (struct tui_rect){0, 0, 54, 6}, snap, tui_glyphs(false));

	/* 6 cells a line, 4 lines of lanes: 24 shown, 76 summarised */
	assert_non_null(strstr(fx_row(s, 2), " 7 ■ 12"));
	assert_non_null(strstr(fx_row(s, 5), "+ 76 more slots not shown"));
	tui_screen_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(tui_lanes_draw__holder_queue_and_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_lanes_draw__depth_matches_queue_beyond_the_listed_waiters, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_lanes_draw__ascii_glyphs, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_lanes_draw__sharded_one_line_per_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_lanes_draw__folds_when_lanes_do_not_fit, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
