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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
