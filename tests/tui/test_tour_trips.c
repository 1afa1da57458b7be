/*
 * test_tour_trips.c: the round-trips and old-snapshot tours say what the
 * engine does.
 *
 * Each tour is played step by step on the engine as `hotrow demo` plays it
 * (a step's settings on entry, a new simulation only when one must
 * restart, then the step's seconds), and each number the narration states
 * is checked against the engine's: the hold, the ceiling, the row's
 * utilisation, and the throughput measured over the step.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/tour.h"

/* What each step's narration claims, in its own words. */
static const struct claim {
	const char *hold;           /* "2 ms a hold" */
	const char *ceiling;        /* "500 a second" */
	double ceiling_per_s;
	int trips;
} claims[] = {
	{ "2 ms a hold", "at most 500 a second", 500, 3 },
	{ "1 ms a hold", "ceiling of\n1,000 a second", 1000, 1 },
	{ "0.5 ms a hold", "ceiling of 2,000 a second", 2000, 0 },
};

/* The narration joins `say` lines with a space or a newline: compare
 * with every run of white space as one space. */
static bool says(const char *text, const char *phrase)
{
	char a[700], b[120];
	size_t k = 0;

	for (const char *p = text; *p && k + 1 < sizeof a; p++)
		if (!(*p == ' ' || *p == '\n') || (k && a[k - 1] != ' '))
			a[k++] = *p == '\n' ? ' ' : *p;
	a[k] = '\0';
	k = 0;
	for (const char *p = phrase; *p && k + 1 < sizeof b; p++)
		b[k++] = *p == '\n' ? ' ' : *p;
	b[k] = '\0';
	return strstr(a, b) != NULL;
}

static void tui_tour__round_trips_narration_matches_the_engine(void **state)
{
	char err[200] = "", hold[32];
	struct sim_config c;
	struct sim_summary before, after;
	struct sim *s = NULL;
	int64_t t = 0;
	struct tui_tour *tour = tui_tour_load("round-trips", err, sizeof err);

	(void)state;
	if (!tour)
		fail_msg("%s", err);
	assert_int_equal(tour->nsteps, 3);
	tui_tour_base(tour, &c);
	for (int i = 0; i < tour->nsteps; i++) {
		const struct tui_tour_step *st = &tour->steps[i];
		const struct claim *cl = &claims[i];
		bool restart = false;
		double got;

		assert_int_equal(tui_tour_apply(st, &c, &restart, err, sizeof err), 0);
		if (!s || restart) {
			sim_free(s);
			s = sim_new(&c);
			t = 0;
			assert_non_null(s);
		} else {
			sim_set(s, &c);
		}
		sim_summary(s, &before);
		t += (int64_t)(st->run_s * 1e6);
		sim_advance(s, t);
		sim_summary(s, &after);

		/* The hold and the ceiling, as said and as the engine has them. */
		assert_int_equal(c.trips_in_lock, cl->trips);
		snprintf(hold, sizeof hold, "%g ms a hold", sim_lock_ms(&c));
		assert_string_equal(hold, cl->hold);
		if (!says(st->say, cl->hold) || !says(st->say, cl->ceiling))
			fail_msg("step %d does not say '%s' and '%s': %s", i + 1, cl->hold,
			         cl->ceiling, st->say);
		assert_true(fabs(after.theory.ceiling_per_s - cl->ceiling_per_s) < 1e-6);

		/* What the row did over the step. */
		got = (double)(after.completed - before.completed) / st->run_s;
		if (i == 0) {
			/* Over the ceiling: the row runs flat out; the pool fills. */
			assert_true(fabs(got - 500) < 0.02 * 500);
			assert_int_equal(after.pool.max_in_use, c.pool);
		} else if (i == 1) {
			/* Under it: the backlog drains at up to 1,000 a second. */
			assert_true(got > 800 && got <= 1000 * 1.01);
			assert_true(after.theory.rho < 1);
		} else {
			/* "busy 40% of the time" */
			assert_true(says(st->say, "busy 40% of the time"));
			assert_true(fabs(after.theory.rho - 0.40) < 1e-9);
			assert_true(fabs(got - 800) < 0.05 * 800);
		}
	}
	sim_free(s);
	tui_tour_free(tour);
}

/* Play steps [0, upto] of a tour as `hotrow demo` does; the summary at
 * the end of each step goes to out[i]. */
static void play(struct tui_tour *tour, struct sim_summary *out, int upto)
{
	char err[200];
	struct sim_config c;
	struct sim *s = NULL;
	int64_t t = 0;

	tui_tour_base(tour, &c);
	for (int i = 0; i <= upto; i++) {
		bool restart = false;
		assert_int_equal(tui_tour_apply(&tour->steps[i], &c, &restart, err, sizeof err), 0);
		if (!s || restart) {
			sim_free(s);
			s = sim_new(&c);
			t = 0;
		} else {
			sim_set(s, &c);
		}
		t += (int64_t)(tour->steps[i].run_s * 1e6);
		sim_advance(s, t);
		sim_summary(s, &out[i]);
	}
	sim_free(s);
}

static void tui_tour__old_snapshot_narration_matches_the_engine(void **state)
{
	char err[200] = "";
	struct sim_summary o[3];
	struct tui_tour *tour = tui_tour_load("old-snapshot", err, sizeof err);

	(void)state;
	if (!tour)
		fail_msg("%s", err);
	assert_int_equal(tour->nsteps, 3);
	play(tour, o, 2);

	/* Reads of a busy row: 60 %, 2 buffers, 0.1 ms. */
	assert_true(says(tour->steps[0].say, "busy 60%"));
	assert_true(fabs(o[0].theory.rho - 0.6) < 1e-9);
	assert_true(says(tour->steps[0].say, "2 buffers"));
	assert_true(says(tour->steps[0].say, "0.1 ms"));
	assert_int_equal(o[0].reads.buffers_max, 2);
	assert_true(fabs(o[0].reads.latency_ms.max - 0.1) < 1e-9);

	/* Eight seconds under the snapshot: 12,000 updates. */
	assert_true(says(tour->steps[1].say, "12,001 versions on 65 pages"));
	assert_true(says(tour->steps[1].say, "66 buffers and takes 3.3 ms"));
	assert_true(o[1].reads.snapshot_open);
	assert_int_equal(o[1].reads.versions, 12001);
	assert_int_equal(o[1].reads.heap_pages, 65);
	assert_int_equal(o[1].reads.buffers, 66);
	assert_true(o[1].reads.last_ms > 3.2 && o[1].reads.last_ms <= 3.3 + 1e-9);

	/* After it ends: short reads, and the pages stay. */
	assert_true(says(tour->steps[2].say, "At 14 s it ends"));
	assert_true(says(tour->steps[2].say, "its 82 heap pages"));
	assert_false(o[2].reads.snapshot_open);
	assert_int_equal(o[2].reads.versions, 1);
	assert_int_equal(o[2].reads.buffers, 2);
	assert_int_equal(o[2].reads.heap_pages, 82);
	assert_true(fabs(o[2].reads.last_ms - 0.1) < 1e-9);
	tui_tour_free(tour);
}

/* Play a whole tour as `hotrow demo` does, keeping for each step the
 * engine's summary as the step started (after its settings) and ended:
 * the two a question's reveal is computed from. */
static void play_all(struct tui_tour *tour, struct sim_summary *from, struct sim_summary *to)
{
	char err[200];
	struct sim_config c;
	struct sim *s = NULL;
	int64_t t = 0;

	tui_tour_base(tour, &c);
	for (int i = 0; i < tour->nsteps; i++) {
		const struct tui_tour_step *st = &tour->steps[i];
		bool restart = false;
		assert_int_equal(tui_tour_apply(st, &c, &restart, err, sizeof err), 0);
		if (!s || restart) {
			sim_free(s);
			s = sim_new(&c);
			t = 0;
		} else {
			sim_set(s, &c);
		}
		sim_summary(s, &from[i]);
		int64_t end = t + (int64_t)(st->run_s * 1e6);
		for (int k = 0; k < st->nfaults; k++) {
			sim_advance(s, t + (int64_t)(st->faults[k].at_s * 1e6));
			sim_inject(s, st->faults[k].kind);
		}
		t = end;
		sim_advance(s, t);
		sim_summary(s, &to[i]);
	}
	sim_free(s);
}

static double done_per_s(const struct sim_summary *f, const struct sim_summary *t)
{
	return (double)(t->completed - f->completed) / (t->duration_s - f->duration_s);
}

/* Each question's right letter is what the engine does in that step, and
 * the reveal quotes the engine's own number. */
static void tui_tour__questions_are_answered_by_the_engine(void **state)
{
	char err[200] = "", why[600], want[64];
	struct sim_summary f[16], t[16];
	int asks = 0;
	struct tui_tour *vp = tui_tour_load("viral-post", err, sizeof err);
	struct tui_tour *vv = tui_tour_load("viral-video", err, sizeof err);

	(void)state;
	assert_non_null(vp);
	assert_non_null(vv);

	/* viral-post */
	assert_true(vp->nsteps <= 16);
	play_all(vp, f, t);
	for (int i = 0; i < vp->nsteps; i++) {
		const struct tui_tour_step *st = &vp->steps[i];
		if (!st->nchoices)
			continue;
		asks++;
		assert_int_equal(tui_tour_reveal(st, &f[i], &t[i], why, sizeof why), 0);
		double got = done_per_s(&f[i], &t[i]);
		if (strstr(st->ask, "What runs out first")) {
			/* C: the pool, full, a line waiting for it; the row at 500/s */
			assert_int_equal(st->answer, 2);
			assert_true(says(st->choices[2], "pool"));
			assert_int_equal(t[i].pool.max_in_use, 20);
			assert_true(t[i].pool.max_waiters > 0);    /* a line for the pool */
			assert_true(fabs(got - 500) < 0.05 * 500);
			assert_true(says(why, "20 of the pool's 20"));
			assert_true(says(why, "which does 500 likes a second"));
		} else if (strstr(st->ask, "Does the pool recover")) {
			/* B: the ceiling doubles to 1,000/s, still short of 2,000 */
			assert_int_equal(st->answer, 1);
			assert_true(fabs(t[i].theory.ceiling_per_s - 1000) < 1e-6);
			assert_true(got < 2000 * 0.6);
			assert_int_equal(t[i].pool.max_in_use, 20);
			assert_true(says(why, "ceiling is now 1,000 a second"));
		} else if (strstr(st->ask, "acknowledged likes are lost")) {
			/* B: about one flush interval, 2,000/s x 100 ms = 200 */
			assert_int_equal(st->answer, 1);
			assert_true(says(st->choices[1], "about 200"));
			assert_true(t[i].count.lost > 100 && t[i].count.lost < 400);
			snprintf(want, sizeof want, "lost %lld likes", (long long)t[i].count.lost);
			if (!says(why, want))
				fail_msg("'%s' not in '%s'", want, why);
		} else {
			fail_msg("viral-post step %d asks a question this test does not know: %s",
			         i + 1, st->ask);
		}
	}
	assert_true(asks >= 3);

	/* viral-video */
	asks = 0;
	assert_true(vv->nsteps <= 16);
	play_all(vv, f, t);
	for (int i = 0; i < vv->nsteps; i++) {
		const struct tui_tour_step *st = &vv->steps[i];
		if (!st->nchoices)
			continue;
		asks++;
		assert_int_equal(tui_tour_reveal(st, &f[i], &t[i], why, sizeof why), 0);
		double got = done_per_s(&f[i], &t[i]);
		if (strstr(st->ask, "16 slot rows")) {
			/* B: about 16,000 (16 rows x 1,000/s), not 100,000 nor 1,000 */
			assert_int_equal(st->answer, 1);
			assert_true(says(st->choices[1], "about 16,000"));
			assert_true(fabs(t[i].theory.ceiling_per_s - 16000) < 1e-6);
			assert_true(got > 16000 * 0.85 && got <= 16000 * 1.01);
			assert_true(says(why, "a ceiling of 16,000"));
		} else if (strstr(st->ask, "What binds now")) {
			/* B: the pool, on about 70 distinct rows */
			assert_int_equal(st->answer, 1);
			assert_int_equal(t[i].theory.binding, SIM_CEIL_POOL);
			assert_true(fabs(t[i].theory.distinct_rows - 70) < 1);
			assert_true(got < 100000 * 0.8 && got < 128000);
			assert_true(says(why, "What binds is the pool"));
			assert_true(says(why, "sit on 70 distinct rows"));
		} else if (strstr(st->ask, "How many views are lost")) {
			/* B: some at every drain: neither none nor all */
			assert_int_equal(st->answer, 1);
			assert_true(t[i].count.lost > 0 && t[i].count.lost < 400000 / 100);
			snprintf(want, sizeof want, "lost %lld views", (long long)t[i].count.lost);
			if (!says(why, want))
				fail_msg("'%s' not in '%s'", want, why);
		} else {
			fail_msg("viral-video step %d asks a question this test does not know: %s",
			         i + 1, st->ask);
		}
	}
	assert_true(asks >= 3);
	tui_tour_free(vp);
	tui_tour_free(vv);
}

/* The new settings parse with the engine's limits. */
static void tui_tour_set__round_trip_keys(void **state)
{
	struct sim_config c;
	char err[200];
	bool restart = false;

	(void)state;
	sim_config_default(&c);
	assert_int_equal(tui_tour_set(&c, "rtt-ms", "0.5", &restart, err, sizeof err), 0);
	assert_int_equal(tui_tour_set(&c, "trips-in-lock", "3", &restart, err, sizeof err), 0);
	assert_int_equal(tui_tour_set(&c, "read-rps", "10", &restart, err, sizeof err), 0);
	assert_false(restart);
	assert_true(c.rtt_ms == 0.5 && c.trips_in_lock == 3 && c.read_rps == 10);
	assert_int_equal(tui_tour_set(&c, "trips-in-lock", "1.5", &restart, err, sizeof err), -1);
	assert_int_equal(tui_tour_set(&c, "trips-in-lock", "101", &restart, err, sizeof err), -1);
	assert_non_null(strstr(err, "trips-in-lock"));
	assert_int_equal(c.trips_in_lock, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tui_tour__round_trips_narration_matches_the_engine),
		cmocka_unit_test(tui_tour__old_snapshot_narration_matches_the_engine),
		cmocka_unit_test(tui_tour_set__round_trip_keys),
		cmocka_unit_test(tui_tour__questions_are_answered_by_the_engine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
