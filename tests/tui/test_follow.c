/*
 * test_follow.c: one like followed on screen (tui/follow.c) over the real
 * engine: its mark in the lane at its position, the card's state and
 * timeline, the bar of where its time went, the f key's cycle, ASCII,
 * and a tour step's `follow`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "tui/app.h"
#include "tui/fmt.h"
#include "tests/tui/fixture.h"

#define MARK_UTF8  0x25C9     /* ◉ */

/* One row a little over its ceiling (520/s on 500/s), evenly spaced, no
 * pool: the line grows by 20 a second, so a like that arrives at 1 s
 * waits behind some 20 others, all on screen. */
static struct tui_app *slow_overload(bool ascii)
{
	struct sim_config c;

	sim_config_default(&c);
	c.rps = 520;
	c.hold_ms = 2;
	c.pool = 0;
	c.unrelated_rps = 0;
	c.seconds = 0;
	return tui_app_new(&c, NULL, ascii);
}

/* The column of the lane's bar (│ or |), where the queue begins after. */
static int lane_bar(const struct tui_screen *s, int y, bool ascii)
{
	for (int x = 0; x < s->w; x++)
		if (tui_screen_at(s, x, y)->ch == (ascii ? '|' : 0x2502))
			return x;
	return -1;
}

/* follow-1.1: the mark sits at the like's position in the lane's queue,
 * and moves up as the line moves; the card says the same position. */
static void follow__mark_at_its_position(void **state)
{
	struct tui_app *a = slow_overload(false);
	struct tui_screen *s = tui_screen_new(120, 40);
	const struct sim_snapshot *snap;
	char want[64];
	int64_t first;

	(void)state;
	tui_app_play(a, 1);
	tui_app_key(a, 'f');                     /* the next to arrive */
	tui_app_play(a, 0.005);
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	assert_int_equal(snap->trace.state, SIM_TRACE_LIVE);
	assert_int_equal(snap->trace.where, SIM_AT_LOCK_WAIT);
	first = snap->trace.position;
	assert_true(first > 5 && first < 40);
	int y = fx_find(s, "waiting");
	int bar = lane_bar(s, y, false);
	assert_true(bar > 0);
	assert_int_equal(fx_count(s, y, MARK_UTF8), 1);
	assert_int_equal(tui_screen_at(s, bar + (int)first, y)->ch, MARK_UTF8);
	snprintf(want, sizeof want, "FOLLOWING like #%llu", (unsigned long long)snap->trace.n);
	assert_true(fx_find(s, want) > y);
	snprintf(want, sizeof want, "lock wait, position %lld of %d", (long long)first,
	         snap->lanes[0].queue_len);
	assert_true(fx_find(s, want) > 0);

	tui_app_play(a, 0.010);                  /* five holds later */
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	assert_int_equal(snap->trace.position, first - 5);
	assert_int_equal(tui_screen_at(s, bar + (int)first - 5, y)->ch, MARK_UTF8);
	assert_int_equal(fx_count(s, y, MARK_UTF8), 1);
	tui_screen_free(s);
	tui_app_free(a);
}

/* follow-1.2: at its end the card says how it ended and one bar, the
 * card's width, splits its time: lock wait and hold in their shares. */
static void follow__ends_with_its_bar(void **state)
{
	struct tui_app *a = slow_overload(false);
	struct tui_screen *s = tui_screen_new(120, 40);
	const struct sim_snapshot *snap;
	char want[64], ms[24];

	(void)state;
	tui_app_play(a, 1);
	tui_app_key(a, 'f');
	tui_app_play(a, 0.5);
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	assert_int_equal(snap->trace.state, SIM_TRACE_COMPLETED);
	assert_int_equal(snap->trace.spent_us[SIM_AT_HOLD], 2000);
	snprintf(want, sizeof want, "completed after %s",
	         tui_fmt_ms(ms, sizeof ms, (double)(snap->trace.end_us - snap->trace.first_us) / 1000));
	assert_true(fx_find(s, want) > 0);
	assert_true(fx_find(s, "committed, released row 0") > 0);
	int y = fx_find(s, "\u2592 lock wait ");   /* the bar's key */
	assert_true(y > 0);
	/* the bar is the line above its key: lock wait and hold cells only */
	int wait = fx_count(s, y - 1, 0x2592), hold = fx_count(s, y - 1, 0x2588);
	assert_true(hold >= 1 && wait > hold);
	double lw = (double)snap->trace.spent_us[SIM_AT_LOCK_WAIT];
	double share = lw / (lw + 2000);
	assert_true(wait + hold > 40);
	assert_true(wait >= (int)(share * (wait + hold)) - 1 && wait <= (int)(share * (wait + hold)) + 1);
	assert_int_equal(fx_count(s, 1, MARK_UTF8) + fx_count(s, 2, MARK_UTF8), 0);  /* off the lanes */
	tui_screen_free(s);
	tui_app_free(a);
}

/* follow-1.3: f cycles the next arrival, the slowest in flight, nobody. */
static void follow__key_cycles(void **state)
{
	struct tui_app *a = slow_overload(false);
	struct tui_screen *s = tui_screen_new(120, 40);
	const struct sim_snapshot *snap;

	(void)state;
	tui_app_play(a, 1);
	tui_app_key(a, 'f');
	tui_app_render(a, s);
	assert_true(tui_screen_has(s, "following the next like to arrive"));
	assert_true(tui_screen_has(s, "not arrived yet"));
	tui_app_key(a, 'f');
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	assert_int_equal(snap->trace.state, SIM_TRACE_LIVE);
	assert_int_equal(snap->trace.n, 0);
	assert_true(tui_screen_has(s, "FOLLOWING the oldest in flight"));
	assert_true(tui_screen_has(s, "followed from here"));
	/* the oldest: the lane's holder (lock_wait it had, then its hold) */
	assert_int_equal(snap->trace.where, SIM_AT_HOLD);
	tui_app_key(a, 'f');
	tui_app_render(a, s);
	assert_int_equal(tui_app_snapshot(a)->trace.state, SIM_TRACE_NONE);
	assert_false(tui_screen_has(s, "FOLLOWING"));
	tui_screen_free(s);
	tui_app_free(a);
}

/* follow-1.4: waiting for a connection, the pool's line says its place
 * in that line, the card the same. */
static void follow__pool_mark(void **state)
{
	struct sim_config c;
	struct tui_app *a;
	struct tui_screen *s = tui_screen_new(120, 40);
	const struct sim_snapshot *snap;
	char want[96], num[24];

	(void)state;
	sim_config_default(&c);
	assert_int_equal(sim_scenario("viral-post", &c), 0);
	c.seconds = 0;
	a = tui_app_new(&c, NULL, false);
	tui_app_play(a, 2.9);
	tui_app_key(a, 'f');
	tui_app_play(a, 0.3);
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	assert_int_equal(snap->trace.where, SIM_AT_POOL);
	assert_true(snap->trace.position > 1000);
	tui_fmt_int(num, sizeof num, snap->trace.position);
	snprintf(want, sizeof want, "waiting for a connection  \u25C9 #%s in line", num);
	assert_true(fx_find(s, want) > 0);
	snprintf(want, sizeof want, "pool wait, position %s of ", num);
	assert_true(fx_find(s, want) > 0);
	assert_true(fx_find(s, "no free connection: waits in the pool at position") > 0);
	tui_screen_free(s);
	tui_app_free(a);
}

/* follow-1.5: in ASCII the mark is @ and the bar's places are letters. */
static void follow__ascii(void **state)
{
	struct tui_app *a = slow_overload(true);
	struct tui_screen *s = tui_screen_new(100, 30);
	const struct sim_snapshot *snap;

	(void)state;
	tui_app_play(a, 1);
	tui_app_key(a, 'f');
	tui_app_play(a, 0.005);
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	int y = fx_find(s, "waiting");
	assert_int_equal(tui_screen_at(s, lane_bar(s, y, true) + (int)snap->trace.position, y)->ch, '@');
	tui_app_play(a, 0.5);
	tui_app_render(a, s);
	y = fx_find(s, "L lock wait ");
	assert_true(y > 0);
	assert_true(fx_count(s, y - 1, 'L') > 40);
	for (int r = 0; r < s->h; r++)
		for (int x = 0; x < s->w; x++)
			assert_true(tui_screen_at(s, x, r)->ch < 128);
	tui_screen_free(s);
	tui_app_free(a);
}

/* follow-1.6: a tour step's `follow slowest` picks one as it starts; a
 * word it does not know is refused with the line. */
static void follow__tour_step(void **state)
{
	char err[200];
	struct tui_tour *t = tui_tour_parse(
		"title t\nstep one\nset rps=600 hold-ms=2 pool=0\nrun 1\n"
		"step two\nfollow slowest\nrun 0.001\npause\n", err, sizeof err);
	struct tui_app *a;
	struct tui_screen *s = tui_screen_new(120, 40);

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->steps[0].follow, -1);
	assert_int_equal(t->steps[1].follow, 2);
	a = tui_app_new(NULL, t, false);
	tui_app_advance(a, 10);                   /* step one, then two starts */
	tui_app_render(a, s);
	assert_int_equal(tui_app_view(a)->step, 1);
	assert_int_not_equal(tui_app_snapshot(a)->trace.state, SIM_TRACE_NONE);
	assert_int_equal(tui_app_snapshot(a)->trace.n, 0);
	assert_true(tui_screen_has(s, "FOLLOWING the oldest in flight"));
	tui_screen_free(s);
	tui_app_free(a);

	assert_null(tui_tour_parse("step a\nfollow fast\n", err, sizeof err));
	assert_string_equal(err, "line 2: follow takes slowest, next or off, not 'fast'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(follow__mark_at_its_position),
		cmocka_unit_test(follow__ends_with_its_bar),
		cmocka_unit_test(follow__key_cycles),
		cmocka_unit_test(follow__pool_mark),
		cmocka_unit_test(follow__ascii),
		cmocka_unit_test(follow__tour_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
