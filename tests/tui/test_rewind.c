/*
 * test_rewind.c: going back in time (tui/rewind.c through the app).
 * Same seed, same picture: a frame rendered after scrubbing back (or
 * forward, or home and on) to t is the frame of a run played straight to
 * t, cell for cell, in several scenarios; the changes made on the way (a
 * new rate, a fault) are replayed at their times; a change made in the
 * past drops the old future; playing on from the past is the straight
 * run; a tour's b goes back through the record; the checkpoints stay
 * within their bounds on a long run; a new timeout leaves the backlog in
 * place, and the rewind keeps it so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include <ncurses.h>

#include "engine/sim_clone.h"
#include "tui/app.h"
#include "tui/rewind.h"
#include "tui/tour.h"
#include "tests/tui/fixture.h"

#define W 120
#define H 40

static struct tui_app *app(const char *scenario)
{
	struct sim_config c;

	sim_config_default(&c);
	assert_int_equal(sim_scenario(scenario, &c), 0);
	c.seconds = 0;
	c.arrivals = SIM_ARRIVE_POISSON;
	if (c.strategy == SIM_SHARDED && c.rows < 2)
		c.rows = 16;
	return tui_app_new(&c, NULL, false);
}

/* Play to sim_s in the uneven steps a frame loop takes at 30 frames a
 * second and 10x (a third of a second, some shorter). */
static void play_frames(struct tui_app *a, double sim_s)
{
	for (int i = 0; tui_app_now(a) < sim_s - 1e-9; i++) {
		double d = i % 3 ? 1.0 / 3 : 0.21;
		if (tui_app_now(a) + d > sim_s)
			d = sim_s - tui_app_now(a);
		tui_app_play(a, d);
	}
}

/* a's frame (scrubbed to the moment b was played to) is b's frame, the
 * bottom line aside: a shows the scrub bar there. Both are paused, and
 * the keys' passing notes are left to fade first. */
static void assert_same_frame(struct tui_app *a, struct tui_app *b, const char *what)
{
	struct tui_screen *sa = tui_screen_new(W, H), *sb = tui_screen_new(W, H);
	char bar[48];

	tui_app_view(a)->paused = tui_app_view(b)->paused = true;
	tui_app_advance(a, 5);        /* paused: only the keys' notes fade */
	tui_app_advance(b, 5);
	tui_app_render(a, sa);
	tui_app_render(b, sb);
	for (int y = 0; y < H - 1; y++) {
		char ra[4 * W + 1];
		snprintf(ra, sizeof ra, "%s", fx_row(sa, y));
		if (memcmp(&sa->cells[y * W], &sb->cells[y * W], W * sizeof *sa->cells))
			fail_msg("%s: row %d differs:\n  rewound  %s\n  straight %s", what, y,
			         ra, fx_row(sb, y));
	}
	snprintf(bar, sizeof bar, "REWIND %.1f / %.1f s", tui_app_now(a), tui_app_end(a));
	if (tui_app_now(a) < tui_app_end(a) && !strstr(fx_row(sa, H - 1), bar))
		fail_msg("%s: no scrub bar \"%s\" in: %s", what, bar, fx_row(sa, H - 1));
	tui_screen_free(sa);
	tui_screen_free(sb);
}

static void rewind__scrubbed_frame_is_the_straight_frame(void **state)
{
	static const char *const names[] = {
		"viral-post", "viral-post-sharded", "viral-post-coalesce",
		"viral-post-queue", "retry-storm",
	};

	(void)state;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct tui_app *a = app(names[i]), *b = app(names[i]);

		play_frames(a, 20);
		tui_app_seek(a, 7.3);                 /* back, between checkpoints */
		play_frames(b, 7.3);
		assert_same_frame(a, b, names[i]);
		tui_app_seek(a, 0);                   /* Home, then on by steps */
		tui_app_seek(a, 4);
		tui_app_seek(a, 8.3);
		tui_app_play(b, 1);
		assert_same_frame(a, b, names[i]);
		tui_app_seek(a, tui_app_end(a));      /* End */
		assert_true(tui_app_now(a) == 20);
		tui_app_free(a);
		tui_app_free(b);
	}
}

/* The record replays what the user did: a new rate at 5.1 s (a change
 * the engine takes live) and an app crash at 5.3 s, both after the
 * checkpoint at 4 s that the moment 5.9 s is rebuilt from. */
static void rewind__replays_changes_at_their_times(void **state)
{
	struct tui_app *a = app("viral-post-coalesce"), *b = app("viral-post-coalesce");
	struct tui_app *plain = app("viral-post-coalesce");
	const struct sim_snapshot *snap;

	(void)state;
	play_frames(a, 5.1);
	tui_app_key(a, KEY_UP);
	play_frames(a, 5.3);
	tui_app_key(a, 'A');
	play_frames(a, 15);
	tui_app_seek(a, 5.9);

	play_frames(b, 5.1);
	tui_app_key(b, KEY_UP);
	play_frames(b, 5.3);
	tui_app_key(b, 'A');
	play_frames(b, 5.9);
	assert_same_frame(a, b, "rate and crash");
	snap = tui_app_snapshot(a);
	assert_true(snap->config.rps > 2000);          /* the change is in the replay */
	assert_true(snap->summary.count.lost > 0);     /* and so is the crash */

	/* Before the change, the run knows nothing of it. */
	tui_app_seek(a, 4);
	play_frames(plain, 4);
	assert_same_frame(a, plain, "before the change");
	assert_true(tui_app_snapshot(a)->config.rps == 2000);
	tui_app_free(a);
	tui_app_free(b);
	tui_app_free(plain);
}

/* A change in the past starts another future: the old one's changes do
 * not come back, and playing on from there is the straight run. */
static void rewind__change_in_the_past_drops_the_old_future(void **state)
{
	struct tui_app *a = app("viral-post"), *b = app("viral-post");

	(void)state;
	play_frames(a, 10);
	tui_app_key(a, KEY_UP);
	play_frames(a, 20);
	tui_app_seek(a, 6);
	tui_app_key(a, KEY_DOWN);
	assert_true(tui_app_end(a) == 6);
	tui_app_view(a)->paused = false;
	play_frames(a, 14);

	play_frames(b, 6);
	tui_app_key(b, KEY_DOWN);
	play_frames(b, 14);
	assert_same_frame(a, b, "a new future");
	assert_true(tui_app_snapshot(a)->config.rps < 2000);
	tui_app_free(a);
	tui_app_free(b);
}

/* The keys: < and > step a second, paused; Home and End. */
static void rewind__keys_step_and_jump(void **state)
{
	struct tui_app *a = app("viral-post");

	(void)state;
	play_frames(a, 10);
	tui_app_key(a, '<');
	assert_true(tui_app_now(a) == 9);
	assert_true(tui_app_view(a)->paused);
	tui_app_key(a, '<');
	tui_app_key(a, '>');
	assert_true(tui_app_now(a) == 9);
	tui_app_key(a, KEY_HOME);
	assert_true(tui_app_now(a) == 0);
	tui_app_key(a, KEY_END);
	assert_true(tui_app_now(a) == 10);
	tui_app_key(a, '.');                      /* speed moved to , and . */
	assert_true(tui_app_view(a)->speed == 2);
	tui_app_free(a);
}

/* Compare mode goes back with both sides. */
static void rewind__compare_goes_back_with_both_sides(void **state)
{
	struct tui_app *a = app("viral-post"), *b = app("viral-post");
	struct tui_screen *sa = tui_screen_new(W, H);

	(void)state;
	tui_app_compare(a, true);
	tui_app_compare(b, true);
	play_frames(a, 12);
	tui_app_seek(a, 5.5);
	play_frames(b, 5.5);
	assert_same_frame(a, b, "compare");
	tui_app_render(a, sa);
	assert_true(tui_screen_has(sa, "BEFORE") && tui_screen_has(sa, "AFTER"));
	tui_screen_free(sa);
	tui_app_free(a);
	tui_app_free(b);
}

static struct tui_app *tour(void)
{
	char err[160];
	struct tui_tour *t = tui_tour_load("viral-post", err, sizeof err);

	assert_non_null(t);
	return tui_app_new(NULL, t, false);
}

/* A tour's b goes back in time through the record: the step begins again
 * as it began the first time, the same frame as replaying the tour to it
 * from t = 0, and it plays on the same. */
static void rewind__tour_back_goes_back_in_time(void **state)
{
	struct tui_app *a = tour(), *b = tour();

	(void)state;
	for (int i = 0; i < 3; i++) {     /* to step 4, which asks a question */
		tui_app_tour_finish_step(a);
		tui_app_key(a, '\r');
	}
	tui_app_key(a, KEY_PPAGE);        /* back to step 3 (b would answer) */
	assert_int_equal(tui_app_view(a)->step, 2);
	assert_true(tui_app_end(a) > tui_app_now(a));   /* the record, not a restart */
	tui_app_tour_goto(b, 2);
	assert_same_frame(a, b, "tour back");
	tui_app_tour_finish_step(a);
	tui_app_tour_finish_step(b);
	assert_same_frame(a, b, "tour back, played on");
	tui_app_free(a);
	tui_app_free(b);
}

/* In a tour, < and > move within the step, never out of it. */
static void rewind__tour_scrubs_within_its_step(void **state)
{
	struct tui_app *a = tour(), *b = tour();
	double begun;

	(void)state;
	tui_app_tour_finish_step(a);
	tui_app_key(a, '\r');             /* step 2 asks: close it unanswered */
	tui_app_tour_finish_step(a);
	tui_app_key(a, '\r');             /* step 3, from its first moment */
	begun = tui_app_now(a);
	tui_app_play(a, 2.5);
	tui_app_key(a, '<');
	assert_true(tui_app_now(a) == begun + 1.5);
	for (int i = 0; i < 3; i++)
		tui_app_key(a, '<');
	assert_true(tui_app_now(a) == begun);
	assert_int_equal(tui_app_view(a)->step, 2);
	tui_app_tour_goto(b, 2);
	assert_same_frame(a, b, "the step's start");
	for (int i = 0; i < 20; i++)      /* and > stops at the step's end */
		tui_app_key(a, '>');
	tui_app_tour_finish_step(b);
	assert_true(tui_app_now(a) == tui_app_now(b));
	tui_app_free(a);
	tui_app_free(b);
}

/* An hour at a low rate: the checkpoints never pass their bounds, and a
 * moment rebuilt from them is the moment the run went through. */
static void rewind__bounded_on_a_long_run(void **state)
{
	struct sim_config c;
	struct sim *s, *back, *straight;
	struct tui_rewind *r;
	struct sim_summary x, y;

	(void)state;
	sim_config_default(&c);
	c.seconds = 0;
	c.rps = 20;
	c.arrivals = SIM_ARRIVE_POISSON;
	s = sim_new(&c);
	r = tui_rewind_new(s);
	for (int64_t t = 0; t <= 3600000000; t += 250000) {
		tui_rewind_play(r, s, t);
		assert_true(tui_rewind_count(r) <= TUI_REWIND_MAX);
		assert_true(tui_rewind_bytes(r) <= TUI_REWIND_BYTES + (size_t)(1 << 20));
	}
	assert_true(tui_rewind_count(r) > TUI_REWIND_MAX / 2);
	back = tui_rewind_to(r, 1234567890);
	straight = sim_new(&c);
	sim_advance(straight, 1234567890);
	sim_summary(back, &x);
	sim_summary(straight, &y);
	assert_memory_equal(&x, &y, sizeof x);
	sim_free(back);
	sim_free(straight);
	tui_rewind_free(r);
	sim_free(s);
}

/* T (lock_timeout 300 ms) at 5 s on the viral post with a pool that
 * never runs dry, so the row's queue holds the backlog: the ~7,500 likes
 * waiting then wait on and keep their place (the lane still shows them
 * a second later), those arriving after are cancelled 300 ms after they
 * queued; scrubbed back to 7.3 s (rebuilt from a checkpoint after the
 * change, the queue's old and new likes packed in it) the frame is the
 * straight run's. */
static void rewind__a_new_timeout_spares_the_backlog_on_screen(void **state)
{
	struct sim_config c;
	struct tui_app *a, *b;
	const struct sim_snapshot *snap;

	(void)state;
	assert_int_equal(sim_scenario("viral-post", &c), 0);
	c.seconds = 0;
	c.pool = 0;
	a = tui_app_new(&c, NULL, false);
	b = tui_app_new(&c, NULL, false);
	play_frames(a, 5);
	tui_app_key(a, 'T');
	play_frames(a, 6);
	struct tui_screen *scr = tui_screen_new(W, H);
	tui_app_render(a, scr);                                /* the snapshot of 6 s */
	tui_screen_free(scr);
	snap = tui_app_snapshot(a);
	assert_int_equal(snap->config.lock_timeout_ms, 300);
	assert_true(snap->lanes[0].queue_len > 6500);        /* the backlog waits on */
	assert_true(snap->summary.lock_timeouts > 1300 && snap->summary.lock_timeouts < 1500);
	play_frames(a, 12);
	tui_app_seek(a, 7.3);

	play_frames(b, 5);
	tui_app_key(b, 'T');
	play_frames(b, 7.3);
	assert_same_frame(a, b, "lock_timeout with a backlog");
	tui_app_free(a);
	tui_app_free(b);
}

/* f at 3.1 s follows the next like to arrive; scrubbed back to 3.5 s
 * (from the checkpoint at 2 s, before the choice) the card and the mark
 * are there as in the straight run: whom to follow is in the run's
 * record, replayed with the rest. */
static void rewind__the_followed_like_comes_back(void **state)
{
	struct tui_app *a = app("viral-post"), *b = app("viral-post");
	struct tui_screen *scr = tui_screen_new(W, H);

	(void)state;
	play_frames(a, 3.1);
	tui_app_key(a, 'f');
	play_frames(a, 12);
	tui_app_seek(a, 3.5);
	tui_app_render(a, scr);
	assert_true(fx_find(scr, "FOLLOWING") >= 0);

	play_frames(b, 3.1);
	tui_app_key(b, 'f');
	play_frames(b, 3.5);
	assert_same_frame(a, b, "followed like");
	tui_screen_free(scr);
	tui_app_free(a);
	tui_app_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rewind__scrubbed_frame_is_the_straight_frame),
		cmocka_unit_test(rewind__replays_changes_at_their_times),
		cmocka_unit_test(rewind__change_in_the_past_drops_the_old_future),
		cmocka_unit_test(rewind__keys_step_and_jump),
		cmocka_unit_test(rewind__compare_goes_back_with_both_sides),
		cmocka_unit_test(rewind__tour_back_goes_back_in_time),
		cmocka_unit_test(rewind__tour_scrubs_within_its_step),
		cmocka_unit_test(rewind__bounded_on_a_long_run),
		cmocka_unit_test(rewind__a_new_timeout_spares_the_backlog_on_screen),
		cmocka_unit_test(rewind__the_followed_like_comes_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
