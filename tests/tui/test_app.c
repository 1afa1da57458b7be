/*
 * test_app.c: the app over the real engine: frames match the engine's
 * snapshot, keys change the simulation, tours replay deterministically.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include <ncurses.h>

#include "engine/sim_field.h"
#include "tui/app.h"
#include "tui/fmt.h"
#include "tests/tui/fixture.h"

static struct tui_app *viral(void)
{
	struct sim_config c;
	sim_config_default(&c);
	assert_int_equal(sim_scenario("viral-post", &c), 0);
	c.seconds = 0;
	c.arrivals = SIM_ARRIVE_POISSON;
	return tui_app_new(&c, NULL, false);
}

static void tui_app_render__lanes_and_pool_match_the_snapshot(void **state)
{
	(void)state;
	struct tui_app *a = viral();
	struct tui_screen *s = tui_screen_new(120, 40);
	char want[64], num[24];

	tui_app_play(a, 3);
	tui_app_render(a, s);
	const struct sim_snapshot *snap = tui_app_snapshot(a);

	assert_int_equal(snap->now_us, 3000000);
	snprintf(want, sizeof want, "%s waiting",
	         tui_fmt_int(num, sizeof num, snap->lanes[0].queue_len));
	assert_true(fx_find(s, want) == 2);
	snprintf(want, sizeof want, "%d of 20 in use", snap->pool_in_use);
	assert_true(fx_find(s, want) > 0);
	snprintf(want, sizeof want, "%s requests waiting for a connection",
	         tui_fmt_int(num, sizeof num, snap->pool_waiters));
	assert_true(fx_find(s, want) > 0);
	/* the collapse is on screen three seconds in */
	assert_int_equal(snap->pool_in_use, 20);
	assert_true(snap->pool_waiters > 1000);
	assert_true(tui_screen_has(s, "FULL"));
	/* pool cells drawn one for one */
	int y = fx_find(s, "CONNECTION POOL") + 1;
	int held = 0, waits = 0;
	for (int i = 0; i < snap->npool; i++) {
		held += snap->pool_cells[i] == SIM_CONN_LOCK_HOLD;
		waits += snap->pool_cells[i] == SIM_CONN_LOCK_WAIT;
	}
	assert_int_equal(fx_count(s, y, 0x25A0), held);
	assert_int_equal(fx_count(s, y, 0x25CB), waits);
	tui_screen_free(s);
	tui_app_free(a);
}

static void tui_app_key__controls_change_the_simulation(void **state)
{
	(void)state;
	struct tui_app *a = viral();
	struct tui_screen *s = tui_screen_new(120, 40);

	assert_true(tui_app_key(a, 's'));             /* naive -> sharded */
	assert_true(tui_app_key(a, ']'));             /* 16 -> 32 slots */
	tui_app_play(a, 2);
	tui_app_render(a, s);
	assert_int_equal(tui_app_snapshot(a)->config.strategy, SIM_SHARDED);
	assert_int_equal(tui_app_snapshot(a)->nrows, 32);
	assert_true(tui_screen_has(s, "sharded x32"));
	assert_true(tui_screen_has(s, "login page ✔ OK"));

	assert_true(tui_app_key(a, KEY_DOWN));        /* 2,000 -> 1,500/s */
	tui_app_render(a, s);
	assert_true(tui_app_snapshot(a)->config.rps == 1500);
	assert_true(tui_app_key(a, ' '));             /* pause */
	tui_app_advance(a, 1.0);
	assert_true(tui_app_now(a) == 2.0);
	assert_true(tui_app_key(a, 'n'));             /* one tick */
	assert_true(tui_app_now(a) > 2.09 && tui_app_now(a) < 2.11);
	assert_true(tui_app_key(a, '?'));
	assert_true(tui_app_view(a)->help);
	assert_true(tui_app_key(a, 'x'));             /* any key closes it */
	assert_false(tui_app_view(a)->help);
	assert_false(tui_app_key(a, 'q'));
	tui_screen_free(s);
	tui_app_free(a);
}

/* The retry storm live: blind retries count likes twice and the totals
 * say so; T, B, I and K turn on the fixes the scenario's blurb names. */
static void tui_app_key__retry_storm_fixes(void **state)
{
	(void)state;
	struct sim_config c;
	struct tui_screen *s = tui_screen_new(120, 40);

	sim_config_default(&c);
	assert_int_equal(sim_scenario("retry-storm", &c), 0);
	c.seconds = 0;
	struct tui_app *a = tui_app_new(&c, NULL, false);
	assert_non_null(a);
	tui_app_play(a, 15);
	tui_app_render(a, s);
	const struct sim_snapshot *snap = tui_app_snapshot(a);
	assert_true(snap->summary.count.doubled > 0);
	assert_true(fx_find(s, "counted twice by blind retries") > 0);

	assert_true(tui_app_key(a, 'T'));
	assert_true(tui_app_key(a, 'B'));
	assert_true(tui_app_key(a, 'I'));
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	assert_true(snap->config.lock_timeout_ms == 300);
	assert_true(snap->config.retry_budget == 0.1);
	assert_true(snap->config.idempotent);
	assert_true(tui_app_now(a) == 15.0);            /* live: no restart */
	assert_true(tui_app_key(a, 'K'));               /* a pool of its own */
	tui_app_render(a, s);
	assert_int_equal(tui_app_snapshot(a)->config.counter_pool, 400);
	assert_true(tui_app_now(a) == 0.0);
	assert_true(tui_app_key(a, 'T'));               /* and off again */
	tui_app_render(a, s);
	assert_true(tui_app_snapshot(a)->config.lock_timeout_ms == 0);
	tui_screen_free(s);
	tui_app_free(a);
}

/* A key restarts the simulation only when the engine says its change
 * needs one (sim_config_restarts): more slots do, the slot key at the
 * top of its ladder changes nothing and the run goes on. */
/* Whether any row of the screen holds text. */
static bool on_screen(struct tui_screen *scr, const char *text)
{
	for (int y = 0; y < scr->h; y++)
		if (strstr(fx_row(scr, y), text))
			return true;
	return false;
}

static void tui_app_key__restarts_only_what_the_engine_cannot_take_live(void **state)
{
	(void)state;
	struct tui_app *a = viral();
	struct tui_screen *s = tui_screen_new(200, 50);

	tui_app_play(a, 3);
	assert_true(tui_app_key(a, 's'));             /* naive -> sharded, 16 slots: live */
	tui_app_render(a, s);
	assert_true(tui_app_now(a) == 3.0);
	assert_int_equal(tui_app_snapshot(a)->nrows, 16);
	assert_true(on_screen(s, "Changed at 3.0 s: strategy naive -> sharded, rows 1 -> 16."));
	assert_true(tui_app_snapshot(a)->lanes[0].queue_len > 0);   /* the backlog stays */
	tui_app_play(a, 1);
	assert_true(tui_app_key(a, ']'));             /* 32 slots: live too */
	tui_app_render(a, s);
	assert_int_equal(tui_app_snapshot(a)->nrows, 32);
	assert_true(tui_app_now(a) == 4.0);
	assert_true(on_screen(s, "Changed at 4.0 s: rows 16 -> 32."));
	assert_true(tui_app_key(a, KEY_UP));          /* a rate is live */
	assert_true(tui_app_now(a) == 4.0);
	assert_true(tui_app_key(a, 'K'));             /* a bulkhead is built in: t = 0 */
	assert_true(tui_app_now(a) == 0.0);
	tui_screen_free(s);
	tui_app_free(a);
}

/* Settings the engine refuses keep the simulation as it runs and say
 * why: 4 callers that never wait on a coalescing path. */
static void tui_app_key__refused_settings_keep_the_simulation(void **state)
{
	(void)state;
	struct sim_config c;
	struct tui_screen *s = tui_screen_new(120, 40);

	sim_config_default(&c);
	c.seconds = 0;
	c.clients = 4;
	struct tui_app *a = tui_app_new(&c, NULL, false);
	assert_non_null(a);
	assert_true(tui_app_key(a, 's'));               /* naive -> sharded */
	tui_app_play(a, 1);
	assert_true(tui_app_key(a, 's'));               /* sharded -> coalesce: refused */
	tui_app_render(a, s);
	assert_int_equal(tui_app_snapshot(a)->config.strategy, SIM_SHARDED);
	assert_true(tui_app_now(a) == 1.0);
	assert_non_null(tui_app_view(a)->message);
	assert_non_null(strstr(tui_app_view(a)->message, "refused: --clients"));
	tui_app_play(a, 1);                             /* and it runs on */
	assert_true(tui_app_snapshot(a)->summary.completed > 0);
	tui_screen_free(s);
	tui_app_free(a);

	c.cpu_db_ms = 5;                                /* more CPU than the hold */
	assert_null(tui_app_new(&c, NULL, false));
}

/* When the engine cannot play 100 simulated seconds a second, the title
 * says the factor it reaches; when it keeps up, nothing more. */
static void tui_app_reach__title_says_the_real_factor(void **state)
{
	(void)state;
	struct tui_app *a = viral();
	struct tui_screen *s = tui_screen_new(120, 40);
	struct tui_view *v = tui_app_view(a);

	tui_app_set_speed(a, 100);
	tui_app_reach(v, 1.0, 96);
	tui_app_render(a, s);
	assert_true(v->speed_reached == 0);
	assert_true(fx_find(s, "100x  running") == 0);
	tui_app_reach(v, 2.0, 48.6);
	tui_app_render(a, s);
	assert_true(v->speed_reached > 24.2 && v->speed_reached < 24.4);
	assert_true(fx_find(s, "100x (only 24.3x reached)") == 0);
	tui_app_reach(v, 1.0, 92);           /* said until 95 %: no flicker */
	assert_true(v->speed_reached == 92);
	tui_app_reach(v, 1.0, 96);
	assert_true(v->speed_reached == 0);
	tui_screen_free(s);
	tui_app_free(a);
}

static void tui_app_key__scenario_picker(void **state)
{
	(void)state;
	struct tui_app *a = viral();
	struct tui_screen *s = tui_screen_new(120, 40);
	const char *const *names = sim_scenario_names();

	assert_true(tui_app_key(a, 'o'));
	assert_int_equal(tui_app_view(a)->picker, 1);      /* on viral-post */
	tui_app_render(a, s);
	assert_true(tui_screen_has(s, "SCENARIOS"));
	char start[41];               /* long blurbs are cut at the box's edge */
	snprintf(start, sizeof start, "%s", sim_scenario_blurb(names[1]));
	assert_true(tui_screen_has(s, start));
	assert_true(tui_app_key(a, KEY_DOWN));
	assert_true(tui_app_key(a, 'q'));                  /* q closes, not quits */
	assert_int_equal(tui_app_view(a)->picker, 0);
	assert_true(tui_app_key(a, 'o'));
	assert_true(tui_app_key(a, KEY_DOWN));
	assert_true(tui_app_key(a, '\r'));
	assert_int_equal(tui_app_view(a)->picker, 0);
	tui_app_render(a, s);
	assert_string_equal(tui_app_snapshot(a)->config.scenario, names[1]);
	assert_true(tui_screen_has(s, names[1]));
	tui_screen_free(s);
	tui_app_free(a);
}

static void tui_app_compare__same_arrivals_on_both_sides(void **state)
{
	(void)state;
	struct tui_app *a = viral();
	struct tui_screen *s = tui_screen_new(120, 40);

	tui_app_compare(a, true);
	tui_app_play(a, 2);
	tui_app_render(a, s);

	const struct sim_snapshot *fix = tui_app_snapshot(a);
	assert_int_equal(fix->config.strategy, SIM_SHARDED);
	assert_true(tui_screen_has(s, "BEFORE: naive, one row"));
	assert_true(tui_screen_has(s, "AFTER: sharded x16"));
	assert_true(tui_screen_has(s, "login page ◔ STALLED"));   /* the naive side */
	assert_true(tui_screen_has(s, "login page ✔ OK"));        /* the fix */
	tui_app_play(a, 6);           /* past the 5 s acquire timeout */
	tui_app_render(a, s);
	assert_true(tui_screen_has(s, "login page ✖ FAILING"));
	tui_screen_free(s);
	tui_app_free(a);
}

static void tui_app_tour__steps_replay_the_same_frame(void **state)
{
	(void)state;
	char err[200];
	struct tui_tour *t = tui_tour_load("viral-post", err, sizeof err);
	assert_non_null(t);
	struct tui_app *a = tui_app_new(NULL, t, false);
	struct tui_screen *s1 = tui_screen_new(120, 40), *s2 = tui_screen_new(120, 40);

	assert_int_equal(tui_app_view(a)->step, 0);
	tui_app_advance(a, 100);                      /* plays step 1, stops at its pause */
	assert_true(tui_app_view(a)->step_done);
	assert_int_equal(tui_app_view(a)->step, 0);
	tui_app_key(a, '\r');                         /* step 2 */
	tui_app_tour_finish_step(a);
	tui_app_render(a, s1);
	assert_true(tui_screen_has(s1, "step 2 of"));

	tui_app_key(a, '\r');                         /* step 3, then back to 2 */
	tui_app_key(a, 'b');
	tui_app_tour_finish_step(a);
	tui_app_render(a, s2);
	for (int y = 1; y < 40; y++)                  /* the title's message differs */
		assert_string_equal(fx_row(s1, y), fx_row(s2, y));
	tui_screen_free(s1);
	tui_screen_free(s2);
	tui_app_free(a);
}

/* A question waits before its step plays; a letter records the choice
 * and the step plays; when its time is up the engine's answer shows,
 * with its number and whether the viewer was right. */
static void tui_app_tour__a_letter_answers_and_the_end_reveals(void **state)
{
	(void)state;
	char err[200];
	struct tui_tour *t = tui_tour_load("viral-video", err, sizeof err);
	assert_non_null(t);
	struct tui_app *a = tui_app_new(NULL, t, false);
	struct tui_screen *s = tui_screen_new(120, 40);
	struct tui_view *v = tui_app_view(a);

	tui_app_tour_goto(a, 2);                      /* 128 slots: what binds? */
	assert_true(v->asking);
	assert_int_equal(v->nchoices, 3);
	double t0 = tui_app_now(a);
	tui_app_advance(a, 10);                       /* nothing plays while it asks */
	assert_true(tui_app_now(a) == t0);
	tui_app_render(a, s);
	assert_true(tui_screen_has(s, "What binds now?"));
	assert_true(tui_screen_has(s, "[your answer: a-d]"));
	assert_false(tui_screen_has(s, "Right:"));
	/* While the room votes the panels still show the last step's engine:
	 * 16 slots, not the 128 the question is about. */
	assert_true(tui_screen_has(s, "= 16 slots"));
	assert_false(tui_screen_has(s, "= 128 slots"));
	assert_int_equal(tui_app_snapshot(a)->config.rows, 16);

	assert_true(tui_app_key(a, 'b'));             /* an answer here, not "back" */
	assert_int_equal(v->step, 2);
	assert_false(v->asking);
	assert_int_equal(v->chosen, 1);
	assert_null(v->reveal);
	tui_app_render(a, s);
	assert_true(tui_screen_has(s, "> B) the pool"));
	assert_true(tui_screen_has(s, "= 128 slots"));  /* the vote is in: now it shows */
	tui_app_advance(a, 100);                      /* the step plays to its end */
	assert_true(v->step_done);
	assert_non_null(v->reveal);
	tui_app_render(a, s);
	assert_true(tui_screen_has(s, "Right: B."));
	assert_true(tui_screen_has(s, "What binds is the pool"));
	assert_true(tui_screen_has(s, "70 distinct"));
	assert_false(tui_app_tour_answer(a, 'a'));    /* answered: letters act as keys again */

	tui_app_tour_goto(a, 1);                      /* 16 slots: a wrong answer */
	assert_true(tui_app_key(a, 'A'));
	assert_int_equal(v->chosen, 0);
	tui_app_key(a, '\r');                         /* Enter plays the rest and reveals */
	tui_app_render(a, s);
	assert_true(tui_screen_has(s, "Not A: the engine's answer is B."));
	assert_false(tui_app_tour_answer(a, 'e'));
	tui_app_tour_goto(a, 0);                      /* a step without a question */
	assert_false(v->asking);
	assert_false(tui_app_tour_answer(a, 'a'));
	tui_screen_free(s);
	tui_app_free(a);
}

/* The viral-video tour narrates what its bug steps do to the count: the
 * GET-then-DEL drain loses views, the fenced consumer counts nothing twice
 * through its crash, the unfenced one does. Hold the narration to it. */
static void tui_app_tour__viral_video_bugs_do_what_the_narration_says(void **state)
{
	(void)state;
	char err[200];
	struct tui_tour *t = tui_tour_load("viral-video", err, sizeof err);
	assert_non_null(t);
	struct tui_app *a = tui_app_new(NULL, t, false);
	struct tui_screen *s = tui_screen_new(120, 40);
	const struct sim_snapshot *snap;

	tui_app_tour_goto(a, 4);                      /* the drain that loses views */
	tui_app_tour_finish_step(a);
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	assert_true(snap->config.bug_get_then_del);
	assert_true(snap->summary.count.lost > 0);
	assert_int_equal(snap->summary.count.doubled, 0);

	tui_app_tour_goto(a, 5);                      /* a fenced consumer crashes */
	tui_app_tour_finish_step(a);
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	assert_int_equal(snap->config.strategy, SIM_QUEUE);
	assert_false(snap->config.bug_get_then_del);
	assert_int_equal(snap->summary.count.lost, 0);
	assert_int_equal(snap->summary.count.doubled, 0);

	tui_app_tour_goto(a, 6);                      /* the same crash, no fence */
	tui_app_tour_finish_step(a);
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	assert_true(snap->config.bug_no_fence);
	assert_true(snap->summary.count.doubled > 0);
	{
		char n[32], want[64];     /* the totals say what the summary counted */
		snprintf(want, sizeof want, "+%s redelivered",
		         tui_fmt_int(n, sizeof n, (int64_t)snap->summary.count.doubled));
		assert_true(tui_screen_has(s, want));
	}
	assert_false(tui_screen_has(s, "blind retries"));   /* nothing retried */

	tui_app_tour_goto(a, 7);                      /* the plays stop: the overshoot */
	tui_app_tour_finish_step(a);
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	int64_t over = snap->summary.count.visible - snap->summary.count.true_count;
	assert_true(over > 0);                        /* a whole batch, as narrated */
	assert_true(over >= (int64_t)snap->summary.count.doubled * 9 / 10);
	assert_true(over <= (int64_t)snap->summary.count.doubled);
	tui_screen_free(s);
	tui_app_free(a);
}

/* The payday tour's narration, held to the engine's counts: one fee row
 * applies at most 500 sales a second while a fifth are refused before it
 * and the pool fills and fails sales; eight sub-accounts take the 1,600
 * that reach them and fail nothing; batches of 100 carry the same 2,000
 * sales a second on one row busy a tenth of the time. In every step each
 * answered sale was applied or refused, and the fee rows hold the applied. */
static void payday_books(const struct sim_snapshot *snap)
{
	const struct sim_summary *m = &snap->summary;
	assert_int_equal(m->ledger.transfers - m->ledger.refused, (uint64_t)m->count.visible);
	assert_int_equal(m->count.visible, m->count.true_count);
	if (m->ledger.transfers > 1000) {
		double f = (double)m->ledger.refused / (double)m->ledger.transfers;
		if (f < 0.18 || f > 0.22)
			fail_msg("a fifth refused, the narration says; the engine refused %.3f", f);
	}
}

/* The lane header and the chart's ceiling line give one figure: the
 * number after "LOCK LANES  ceiling " is the one after "ceiling " in the
 * PER SECOND legend. Returns it, for the caller's own check. */
static double ceilings_agree(const struct tui_screen *s)
{
	char buf[4096], lane[32] = "", chart[32] = "";
	for (int y = 0; y < s->h; y++) {
		const char *row = tui_screen_row(s, y, buf, sizeof buf);
		const char *l = strstr(row, "LOCK LANES  ceiling ");
		const char *c = strstr(row, "\u2508 ceiling ");
		if (l)
			sscanf(l + strlen("LOCK LANES  ceiling "), "%31[0-9,.k]", lane);
		if (c)
			sscanf(c + strlen("\u2508 ceiling "), "%31[0-9,.k]", chart);
	}
	if (!lane[0] || !chart[0])
		fail_msg("no ceiling: lanes '%s', chart '%s'", lane, chart);
	if (strcmp(lane, chart))
		fail_msg("the lanes say a ceiling of %s/s, the chart %s/s", lane, chart);
	double v = 0;
	for (const char *p = lane; *p; p++)
		if (*p >= '0' && *p <= '9')
			v = v * 10 + (*p - '0');
	return v;
}

static void near(double got, double want, double rel)
{
	if (got < want * (1 - rel) || got > want * (1 + rel))
		fail_msg("expected %.6g within %.0f%%, got %.6g", want, rel * 100, got);
}

static void tui_app_tour__payday_does_what_the_narration_says(void **state)
{
	(void)state;
	char err[200];
	struct tui_tour *t = tui_tour_load("payday", err, sizeof err);
	assert_non_null(t);
	struct tui_app *a = tui_app_new(NULL, t, false);
	struct tui_screen *s = tui_screen_new(120, 40);
	const struct sim_snapshot *snap;
	double secs;

	tui_app_tour_finish_step(a);                  /* one fee row */
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	secs = (double)snap->now_us / 1e6;
	assert_int_equal(snap->config.strategy, SIM_LEDGER);
	assert_int_equal(snap->nrows, 1);
	assert_true(snap->config.rps == 2000);
	near(snap->config.refuse_frac, 0.2, 0);
	near(1000 / snap->config.hold_ms, 500, 0);                      /* 1 / 2 ms */
	near((double)snap->summary.count.visible / secs, 500, 0.02);    /* applied */
	assert_int_equal(snap->pool_in_use, 20);                        /* the pool fills */
	assert_true(snap->summary.failed > 0);                          /* and sales fail */
	payday_books(snap);
	assert_true(tui_screen_has(s, "ceiling 625/s = 1 fee row / 2 ms hold, 80% lock"));
	near(ceilings_agree(s), 625, 0);        /* 500 locking a second: 80% of 625 */

	tui_app_key(a, '\r');                         /* eight sub-accounts */
	tui_app_tour_finish_step(a);
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	secs = (double)snap->now_us / 1e6;
	assert_int_equal(snap->nrows, 8);
	near(8 * 1000 / snap->config.hold_ms, 4000, 0);                 /* 8 x 500 */
	near((double)snap->summary.count.visible / secs, 1600, 0.05);   /* what reaches them */
	assert_int_equal(snap->summary.failed + snap->summary.abandoned, 0);
	for (int i = 0; i < snap->nlanes; i++)                          /* lanes stay short */
		assert_true(snap->lanes[i].queue_len < 10);
	payday_books(snap);
	assert_true(tui_screen_has(s, "fee 7"));
	near(ceilings_agree(s), 5000, 0);

	tui_app_key(a, '\r');                         /* batches of 100 */
	tui_app_tour_finish_step(a);
	tui_app_render(a, s);
	snap = tui_app_snapshot(a);
	secs = (double)snap->now_us / 1e6;
	assert_int_equal(snap->nrows, 1);
	assert_int_equal(sim_config_batch(&snap->config), 100);
	near(snap->config.rps * 100, 2000, 0);                          /* the same sales */
	near(100 * 1000 / snap->config.hold_ms, 20000, 0);              /* 100 / 5 ms */
	near(snap->summary.ledger.ceiling_transfers_per_s, 20000, 1e-6);
	near(ceilings_agree(s), 200, 0);         /* batches a second: 20,000 sales */
	near((double)snap->summary.ledger.transfers / secs, 2000, 0.25);   /* Poisson: ~80 batches */
	near((double)snap->lanes[0].completed * snap->config.hold_ms / 1000 / secs, 0.10, 0.25);
	assert_int_equal(snap->summary.failed + snap->summary.abandoned, 0);
	payday_books(snap);
	tui_screen_free(s);
	tui_app_free(a);
}


/* Compare mode: each key reaches both sides, and the two differ in the
 * write path alone, live changes and rebuilds alike. */
static void tui_app_compare__both_sides_take_every_field(void **state)
{
	(void)state;
	static const int keys[] = { 'T', 'B', 'I', KEY_UP, '+', '}', 'w', ']', 's', 'K' };
	struct tui_app *a = viral();
	struct tui_screen *scr = tui_screen_new(160, 50);
	size_t n;
	const struct sim_field *f = sim_fields(&n);

	tui_app_compare(a, true);
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		tui_app_play(a, 0.5);
		assert_true(tui_app_key(a, keys[k]));
		tui_app_render(a, scr);
		const struct sim_snapshot *l = tui_app_snapshot_left(a), *r = tui_app_snapshot(a);
		assert_non_null(l);
		assert_int_equal(l->config.strategy, SIM_NAIVE);
		assert_int_equal(l->config.rows, 1);
		assert_true(l->now_us == r->now_us);
		for (size_t i = 0; i < n; i++)
			if (strcmp(f[i].json, "strategy") && strcmp(f[i].json, "rows") &&
			    !sim_field_equal(&f[i], &l->config, &r->config))
				fail_msg("key %d: %s differs between the sides", keys[k], f[i].json);
	}
	assert_true(tui_app_snapshot(a)->config.lock_timeout_ms > 0);
	assert_true(tui_app_snapshot(a)->config.idempotent);
	tui_app_compare(a, false);
	tui_app_render(a, scr);
	assert_null(tui_app_snapshot_left(a));
	tui_screen_free(scr);
	tui_app_free(a);
}

/* A tour's `fix` applies live: the frame after it says what changed and
 * when, and the clock runs on; `set` with the same words starts the new
 * path from t = 0. */
static void tui_app_tour__fix_applies_live(void **state)
{
	(void)state;
	static const char *const words[] = { "fix", "set" };
	char err[200], text[300];

	for (int w = 0; w < 2; w++) {
		snprintf(text, sizeof text, "title T\nscenario viral-post\nstep one\nrun 3\n"
		         "step two\n%s strategy=sharded rows=16 pool-timeout-ms=800\nrun 1\n",
		         words[w]);
		struct tui_tour *t = tui_tour_parse(text, err, sizeof err);
		assert_non_null(t);
		struct tui_app *a = tui_app_new(NULL, t, false);
		struct tui_screen *scr = tui_screen_new(200, 50);
		tui_app_tour_finish_step(a);
		tui_app_tour_goto(a, 1);
		tui_app_tour_finish_step(a);
		tui_app_render(a, scr);
		if (w == 0) {
			assert_true(tui_app_now(a) == 4.0);
			assert_true(on_screen(scr, "Changed at 3.0 s: strategy naive -> sharded, "
			                      "rows 1 -> 16, pool-timeout-ms 5000 -> 800."));
			assert_true(tui_app_snapshot(a)->lanes[0].completed >
			            tui_app_snapshot(a)->lanes[1].completed);
		} else {
			assert_true(tui_app_now(a) == 1.0);
			assert_false(on_screen(scr, "Changed at"));
		}
		assert_int_equal(tui_app_snapshot(a)->nrows, 16);
		tui_screen_free(scr);
		tui_app_free(a);
	}
}

/* The viral post's first fix is deployed live, 16 s in: the backlog of
 * naive likes drains through row 0 first, then the slots take the line,
 * and by the step's end (26 s) it is gone; the words name the change. */
static void tui_app_tour__viral_post_fix_drains_the_backlog(void **state)
{
	(void)state;
	char err[200];
	struct tui_tour *t = tui_tour_load("viral-post", err, sizeof err);
	assert_non_null(t);
	struct tui_app *a = tui_app_new(NULL, t, false);
	struct tui_screen *scr = tui_screen_new(200, 50);

	tui_app_tour_goto(a, 4);
	assert_non_null(strstr(tui_app_view(a)->step_title, "deployed live"));
	tui_app_render(a, scr);
	assert_true(tui_app_now(a) == 16.0);
	assert_true(tui_app_snapshot(a)->pool_waiters > 9000);    /* the outage's line */
	assert_true(on_screen(scr, "Changed at 16.0 s: strategy naive -> sharded, rows 1 -> 16"));
	tui_app_play(a, 2);
	tui_app_render(a, scr);
	assert_true(tui_app_snapshot(a)->pool_waiters > 9000);    /* still the old line */
	tui_app_tour_finish_step(a);
	tui_app_render(a, scr);
	assert_true(tui_app_now(a) == 26.0);
	assert_int_equal(tui_app_snapshot(a)->pool_waiters, 0);
	assert_true(tui_app_snapshot(a)->summary.in_flight < 50);
	tui_screen_free(scr);
	tui_app_free(a);
}

/* Unattended (`hotrow demo --loop`): a waiting step goes on after the
 * autoplay time, a question closes unanswered and then plays with its
 * settings, and after the last step the tour starts again. */
static void tui_app_tour__autoplay_and_loop(void **state)
{
	(void)state;
	char err[200];
	struct tui_tour *t = tui_tour_parse(
		"title T\nstep one\nrun 1\npause\n"
		"step two\nset strategy=sharded rows=4\nask How many rows?\nA) one\nB) four\n"
		"answer B\nwhy {ceiling/s} a second\nrun 1\n", err, sizeof err);
	assert_non_null(t);
	struct tui_app *a = tui_app_new(NULL, t, false);
	struct tui_view *v = tui_app_view(a);
	struct tui_screen *scr = tui_screen_new(120, 40);
	tui_app_autoplay(a, 5, true);

	for (int i = 0; i < 4; i++)                   /* 2 s: step one done, waiting */
		tui_app_advance(a, 0.5);
	assert_int_equal(v->step, 0);
	assert_true(v->step_done);
	for (int i = 0; i < 7; i++)                   /* 3.5 s more: still waiting */
		tui_app_advance(a, 0.5);
	assert_int_equal(v->step, 0);
	tui_app_advance(a, 0.5);                      /* 5 s waited: step two asks */
	assert_int_equal(v->step, 1);
	assert_true(v->asking);
	tui_app_render(a, scr);
	assert_int_equal(tui_app_snapshot(a)->config.rows, 1);
	for (int i = 0; i < 10; i++)                  /* the vote closes unanswered */
		tui_app_advance(a, 0.5);
	assert_false(v->asking);
	assert_int_equal(v->chosen, -1);
	for (int i = 0; i < 3; i++)                   /* the step plays, then reveals */
		tui_app_advance(a, 0.5);
	assert_true(v->step_done);
	assert_non_null(v->reveal);
	tui_app_render(a, scr);
	assert_int_equal(tui_app_snapshot(a)->config.rows, 4);
	tui_app_key(a, 'p');                          /* keys: the wait starts again */
	tui_app_key(a, 'p');
	for (int i = 0; i < 9; i++)
		tui_app_advance(a, 0.5);
	assert_int_equal(v->step, 1);
	for (int i = 0; i < 2; i++)                   /* then the loop: step one again */
		tui_app_advance(a, 0.5);
	assert_int_equal(v->step, 0);
	assert_false(v->step_done);

	tui_app_autoplay(a, 0, true);                 /* off: the tour waits for ever */
	for (int i = 0; i < 100; i++)
		tui_app_advance(a, 0.5);
	assert_int_equal(v->step, 0);
	tui_screen_free(scr);
	tui_app_free(a);
}


/* The retry storm's bulkhead: the likes' own pool is full, the shared one
 * is not, so the login page is OK on every panel (not "STALLED" beside
 * "0 failed", not one pool "400 of 900 in use" beside "never full"). */
static void tui_app_tour__bulkhead_panels_agree(void **state)
{
	(void)state;
	char err[200];
	struct tui_tour *t = tui_tour_load("retry-storm", err, sizeof err);
	assert_non_null(t);
	struct tui_app *a = tui_app_new(NULL, t, false);
	struct tui_screen *s = tui_screen_new(160, 45);

	tui_app_tour_goto(a, t->nsteps - 1);          /* Or: a bulkhead */
	tui_app_tour_finish_step(a);
	tui_app_render(a, s);
	const struct sim_snapshot *snap = tui_app_snapshot(a);
	assert_true(snap->config.counter_pool > 0);
	assert_int_equal(snap->summary.unrelated.failed, 0);
	assert_true(tui_screen_has(s, "likes' own 400 of 400 FULL"));
	assert_true(tui_screen_has(s, "login page"));
	assert_false(tui_screen_has(s, "STALLED"));
	assert_false(tui_screen_has(s, "of 900"));
	assert_true(tui_screen_has(s, "likes' own full at t ="));
	assert_false(tui_screen_has(s, "pool    never full"));
	tui_screen_free(s);
	tui_app_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tui_app_render__lanes_and_pool_match_the_snapshot),
		cmocka_unit_test(tui_app_key__controls_change_the_simulation),
		cmocka_unit_test(tui_app_key__retry_storm_fixes),
		cmocka_unit_test(tui_app_key__restarts_only_what_the_engine_cannot_take_live),
		cmocka_unit_test(tui_app_key__refused_settings_keep_the_simulation),
		cmocka_unit_test(tui_app_reach__title_says_the_real_factor),
		cmocka_unit_test(tui_app_key__scenario_picker),
		cmocka_unit_test(tui_app_compare__same_arrivals_on_both_sides),
		cmocka_unit_test(tui_app_tour__steps_replay_the_same_frame),
		cmocka_unit_test(tui_app_tour__viral_video_bugs_do_what_the_narration_says),
		cmocka_unit_test(tui_app_tour__payday_does_what_the_narration_says),
		cmocka_unit_test(tui_app_tour__a_letter_answers_and_the_end_reveals),
		cmocka_unit_test(tui_app_tour__autoplay_and_loop),
		cmocka_unit_test(tui_app_compare__both_sides_take_every_field),
		cmocka_unit_test(tui_app_tour__fix_applies_live),
		cmocka_unit_test(tui_app_tour__viral_post_fix_drains_the_backlog),
		cmocka_unit_test(tui_app_tour__bulkhead_panels_agree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
