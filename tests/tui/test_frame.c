/*
 * test_frame.c: whole frames from a known snapshot at the sizes a
 * workshop meets: 80x24, 120x40, too small, compare mode, ASCII.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tui/frame.h"
#include "tests/tui/fixture.h"

struct fx {
	struct sim_snapshot *snap;
	struct tui_view view;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	f->snap = fx_viral();
	f->view.speed = 1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	free(f->snap);
	free(f);
	return 0;
}

/* Every panel shows up on a frame of w x h. */
static void check_full(struct fx *f, int w, int h)
{
	struct tui_screen *s = tui_screen_new(w, h);

	tui_frame_draw(s, &f->view, f->snap, NULL);

	assert_non_null(strstr(fx_row(s, 0), "hotrow  viral-post  naive, one row  t = 3 s  1x  running"));
	assert_int_equal(tui_screen_at(s, 0, 0)->style, TUI_TITLE);
	assert_true(fx_find(s, "LOCK LANES") == 1);
	assert_true(fx_find(s, "19 waiting") == 2);
	assert_true(fx_find(s, "CONNECTION POOL  20 of 20 in use, FULL") > 2);
	assert_true(fx_find(s, "login page ✖ FAILING 60/s of 100/s") > 0);
	assert_true(fx_find(s, "PER SECOND") > 0);
	assert_true(fx_find(s, "LATENCY (log)") > 0);
	assert_true(fx_find(s, "WHAT IS HAPPENING") > 0);
	assert_true(fx_find(s, "ρ = 4.0") > 0);
	assert_true(fx_find(s, "? help  q quit") == h - 1);
	/* nothing drawn past the edges: the grid is exactly w x h */
	assert_int_equal(s->w, w);
	tui_screen_free(s);
}

static void tui_frame_draw__80x24_has_every_panel(void **state)
{
	struct fx *f = *state;
	check_full(f, 80, 24);
	struct tui_screen *s = tui_screen_new(80, 24);
	tui_frame_draw(s, &f->view, f->snap, NULL);
	assert_false(tui_screen_has(s, "SINCE t = 0"));     /* no room: left out */
	tui_screen_free(s);
}

static void tui_frame_draw__120x40_has_every_panel_and_three_charts(void **state)
{
	struct fx *f = *state;
	check_full(f, 120, 40);
	struct tui_screen *s = tui_screen_new(120, 40);
	tui_frame_draw(s, &f->view, f->snap, NULL);
	assert_true(fx_find(s, "WAITING  ⠒ for the row lock") > 0);
	assert_true(fx_find(s, "grows by 1,500 requests each second") > 0);
	/* room left over for the totals, right above the key hints */
	assert_true(fx_find(s, "SINCE t = 0") == 33);
	assert_true(fx_find(s, "likes   6,000 offered, 1,500 done, 0 failed") == 34);
	assert_true(fx_find(s, "login   600 calls, 490 failed") == 35);
	assert_true(fx_find(s, "pool    full at t = 0.013 s") == 37);
	assert_true(fx_find(s, "count   ") == 38);
	tui_screen_free(s);
}

static void tui_frame_draw__too_small_says_so(void **state)
{
	struct fx *f = *state;
	struct tui_screen *s = tui_screen_new(60, 20);

	tui_frame_draw(s, &f->view, f->snap, NULL);

	int y = fx_find(s, "terminal too small (need 80x24)");
	assert_true(y >= 0);
	assert_true(fx_find(s, "now 60x20") == y + 1);
	assert_false(tui_screen_has(s, "LOCK LANES"));
	/* and it recovers once the screen is big enough */
	tui_screen_resize(s, 80, 24);
	tui_frame_draw(s, &f->view, f->snap, NULL);
	assert_false(tui_screen_has(s, "too small"));
	assert_true(tui_screen_has(s, "LOCK LANES"));
	/* a tiny terminal still gets the whole message, cut nowhere */
	tui_screen_resize(s, 20, 5);
	tui_frame_draw(s, &f->view, f->snap, NULL);
	y = fx_find(s, "terminal too small");
	assert_true(y >= 0);
	assert_true(fx_find(s, "need 80x24") == y + 1);
	assert_true(fx_find(s, "now 20x5") == y + 2);
	assert_true(fx_find(s, "q quits") == y + 3);
	tui_screen_free(s);
}

static void tui_frame_draw__compare_splits_the_screen(void **state)
{
	struct fx *f = *state;
	struct sim_snapshot *fix = fx_viral();
	struct tui_screen *s = tui_screen_new(120, 40);

	fix->config.strategy = SIM_SHARDED;
	fix->nrows = fix->nlanes = 16;
	for (int i = 0; i < 16; i++)
		fix->lanes[i] = (struct sim_lane){.held = i == 3};
	tui_frame_draw(s, &f->view, f->snap, fix);

	int y = fx_find(s, "BEFORE: naive, one row");
	assert_true(y > 0);
	assert_true(fx_col(s, y, "AFTER: sharded x16") > 55);
	assert_true(fx_find(s, "naive, one row  vs  sharded x16") == 0);
	assert_true(fx_find(s, "ceiling 8,000/s = 16 slots / 2 ms hold") > 0);
	tui_screen_free(s);
	/* compare needs more width */
	s = tui_screen_new(90, 30);
	tui_frame_draw(s, &f->view, f->snap, fix);
	assert_true(tui_screen_has(s, "terminal too small (need 100x24)"));
	tui_screen_free(s);
	free(fix);
}

static void tui_frame_draw__ascii_frame_is_pure_ascii(void **state)
{
	struct fx *f = *state;
	struct tui_screen *s = tui_screen_new(120, 40);

	f->view.ascii = true;
	tui_frame_draw(s, &f->view, f->snap, NULL);

	for (int y = 0; y < s->h; y++)
		for (int x = 0; x < s->w; x++)
			if (tui_screen_at(s, x, y)->ch >= 0x80)
				fail_msg("non-ASCII U+%04X at %d,%d", tui_screen_at(s, x, y)->ch, x, y);
	assert_true(tui_screen_has(s, "#|@@@@@oooooooooo...."));
	assert_true(tui_screen_has(s, "rho = 4.0"));
	tui_screen_free(s);
}

static void tui_frame_draw__tour_narration_and_help_overlay(void **state)
{
	struct fx *f = *state;
	struct tui_screen *s = tui_screen_new(120, 40);

	f->view.tour_title = "The viral post";
	f->view.step_title = "The pool runs dry";
	f->view.narration = "All 20 connections are parked behind one row lock.";
	f->view.step = 2;
	f->view.nsteps = 9;
	f->view.step_done = true;
	f->view.paused = true;
	f->view.help = true;
	tui_frame_draw(s, &f->view, f->snap, NULL);

	assert_true(fx_find(s, "The viral post  step 3 of 9: The pool runs dry") == 1);
	assert_true(fx_find(s, "[Enter: next, b: back]") == 1);
	assert_true(fx_find(s, "All 20 connections are parked") == 2);
	assert_true(tui_screen_has(s, "PAUSED"));
	assert_true(tui_screen_has(s, "KEYS  (any key closes this)"));
	assert_true(tui_screen_has(s, "tour: next step"));
	tui_screen_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(tui_frame_draw__80x24_has_every_panel, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_frame_draw__120x40_has_every_panel_and_three_charts, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_frame_draw__too_small_says_so, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_frame_draw__compare_splits_the_screen, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_frame_draw__ascii_frame_is_pure_ascii, setup, teardown),
		cmocka_unit_test_setup_teardown(tui_frame_draw__tour_narration_and_help_overlay, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
