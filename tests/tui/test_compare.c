/*
 * test_compare.c: compare mode with any two setups (tui/compare.h,
 * tui_app_compare_setups): the picker and its keys, a scenario beside a
 * setup file on one seed, the keys changing the right side only, a file
 * that turns bad, one scale per quantity on both sides, and ASCII.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <unistd.h>

#include <ncurses.h>

#include "tui/app.h"
#include "tui/compare.h"
#include "tui/frame.h"
#include "tui/tour.h"
#include "tests/tui/fixture.h"

struct fx {
	char path[64];
	const char *files[1];
	struct tui_app *a;
	struct tui_screen *s;
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	struct sim_config c;
	int fd;

	snprintf(f->path, sizeof f->path, "/tmp/hotrow-cmp-XXXXXX");
	fd = mkstemp(f->path);
	assert_true(fd >= 0);
	close(fd);
	write_file(f->path, "# sixteen slots\nscenario = viral-post\nstrategy = sharded\n"
	                    "rows = 16\nseed = 7\n");
	f->files[0] = f->path;
	sim_config_default(&c);
	sim_scenario("viral-post", &c);
	c.seconds = 0;
	c.arrivals = SIM_ARRIVE_POISSON;
	c.seed = 3;
	f->a = tui_app_new(&c, NULL, false);
	assert_non_null(f->a);
	tui_app_setup_files(f->a, f->files, 1);
	f->s = tui_screen_new(120, 40);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	tui_screen_free(f->s);
	tui_app_free(f->a);
	unlink(f->path);
	free(f);
	return 0;
}

static const char *base(const char *path)
{
	return strrchr(path, '/') + 1;
}

static void tui_app_compare_setups__scenario_beside_a_file_on_one_seed(void **state)
{
	struct fx *f = *state;
	char err[600], want[96];

	assert_int_equal(tui_app_compare_setups(f->a, "viral-video", f->path, err, sizeof err), 0);
	tui_app_play(f->a, 2);
	tui_app_render(f->a, f->s);
	const struct sim_snapshot *l = tui_app_snapshot_left(f->a), *r = tui_app_snapshot(f->a);
	assert_non_null(l);
	/* each side is its setup, whole */
	struct sim_config video;
	sim_config_default(&video);
	sim_scenario("viral-video", &video);
	assert_string_equal(l->config.scenario, "viral-video");
	assert_true(l->config.rps == video.rps && l->config.hold_ms == video.hold_ms);
	assert_int_equal(r->config.strategy, SIM_SHARDED);
	assert_int_equal(r->config.rows, 16);
	/* one seed, the right side's (the file's 7): the same arrivals */
	assert_true(r->config.seed == 7 && l->config.seed == 7);
	assert_true(l->now_us == 2000000 && r->now_us == 2000000);
	assert_true(fx_find(f->s, "A viral-video: naive, one row") == 1);
	snprintf(want, sizeof want, "B %s: sharded x16", base(f->path));
	assert_true(fx_col(f->s, 1, want) > 55);
}

static void tui_app_compare_setups__the_keys_change_the_right_side(void **state)
{
	struct fx *f = *state;
	char err[600];

	assert_int_equal(tui_app_compare_setups(f->a, "current", "viral-post-queue", err,
	                                        sizeof err), 0);
	tui_app_play(f->a, 1);
	tui_app_key(f->a, 'S');            /* strategy back one: queue to coalesce */
	tui_app_key(f->a, KEY_UP);         /* a live change: more likes a second */
	tui_app_play(f->a, 1);
	tui_app_render(f->a, f->s);
	const struct sim_snapshot *l = tui_app_snapshot_left(f->a), *r = tui_app_snapshot(f->a);
	assert_int_equal(r->config.strategy, SIM_COALESCE);
	assert_int_equal(l->config.strategy, SIM_NAIVE);    /* the current setup, kept */
	assert_true(r->config.rps > l->config.rps);
	assert_true(tui_screen_has(f->s, "A current: naive, one row"));
	assert_true(tui_screen_has(f->s, "B viral-post-queue: coalesce"));
	/* c turns it off */
	tui_app_key(f->a, 'c');
	tui_app_render(f->a, f->s);
	assert_null(tui_app_snapshot_left(f->a));
	assert_false(tui_screen_has(f->s, "A current"));
}

static void tui_compare_key__the_picker_chooses_both_sides(void **state)
{
	struct fx *f = *state;

	tui_app_key(f->a, 'c');
	tui_app_render(f->a, f->s);
	assert_true(tui_screen_has(f->s, "COMPARE  (Left/Right: side, Up/Down: setup"));
	int y = fx_find(f->s, "A, the left side");
	assert_true(y > 0 && fx_col(f->s, y, "B, the right side") > 40);
	assert_true(tui_screen_has(f->s, "> the current setup "));
	assert_true(tui_screen_has(f->s, "> the current setup on one row (naive)"));
	assert_true(tui_screen_has(f->s, base(f->path)));    /* the --setup file */
	/* B moves up past the top to the last choice, the file; A to naive */
	tui_app_key(f->a, KEY_UP);
	tui_app_key(f->a, KEY_UP);
	tui_app_key(f->a, KEY_LEFT);
	tui_app_key(f->a, KEY_DOWN);
	tui_app_key(f->a, '\r');
	tui_app_render(f->a, f->s);
	assert_false(tui_screen_has(f->s, "COMPARE  (Left/Right"));
	assert_true(tui_screen_has(f->s, "A naive: naive, one row"));
	assert_true(tui_screen_has(f->s, "sharded x16"));
	/* Esc closes a picker without comparing */
	tui_app_key(f->a, 'c');                  /* off */
	tui_app_key(f->a, 'c');                  /* the picker again */
	tui_app_key(f->a, 27);
	tui_app_render(f->a, f->s);
	assert_null(tui_app_snapshot_left(f->a));
	assert_false(tui_screen_has(f->s, "COMPARE  (Left/Right"));
}

static void tui_app_compare_setups__a_bad_setup_is_said_and_changes_nothing(void **state)
{
	struct fx *f = *state;
	char err[600], want[96];

	assert_int_equal(tui_app_compare_setups(f->a, "current", "no-such", err, sizeof err), -1);
	assert_non_null(strstr(err, "'no-such' is not a setup"));
	write_file(f->path, "strategy = sharded\n\nrows = many\n");   /* edited since */
	assert_int_equal(tui_app_compare_setups(f->a, "current", f->path, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s:3: rows accepts a whole number", f->path);
	assert_non_null(strstr(err, want));
	tui_app_render(f->a, f->s);
	assert_null(tui_app_snapshot_left(f->a));
	assert_int_equal(tui_app_snapshot(f->a)->config.strategy, SIM_NAIVE);
}

/* The text of cells x..x+7 of row y, blanks dropped, into out (16). */
static void label_at(const struct tui_screen *s, int x, int y, char *out)
{
	int n = 0;
	for (int i = 0; i < 7; i++) {
		uint32_t ch = tui_screen_at(s, x + i, y)->ch;
		if (ch != ' ' && ch < 0x80 && n < 15)
			out[n++] = (char)ch;
	}
	out[n] = '\0';
}

/* A split screen never shows one quantity on two scales: the left side
 * peaks at 2,000/s, the right at 500/s; both axes top out alike. */
static void tui_frame_draw__both_sides_share_the_scale(void **state)
{
	(void)state;
	struct sim_snapshot *a = fx_viral(), *b = fx_viral();
	struct tui_view v = { .speed = 1 };
	struct tui_screen *s = tui_screen_new(120, 40);
	char left[16], right[16];

	b->config.strategy = SIM_QUEUE;
	for (int i = 0; i < b->nseries; i++)
		b->series[i].offered_per_s = b->series[i].completed_per_s = 200;
	tui_frame_draw(s, &v, a, b);
	int y = fx_find(s, "PER SECOND");
	assert_true(y > 0);
	/* the top labels: the 8 cells left of each chart's axis */
	int xr = fx_col(s, y, "\u2502 PER SECOND") + 2;
	assert_true(xr > 50);
	label_at(s, 1, y + 1, left);
	label_at(s, xr, y + 1, right);
	assert_string_equal(left, right);
	assert_string_equal(left, "2,500");
	tui_screen_free(s);
	free(a);
	free(b);
}

/* In ASCII both sides' charts keep their two shapes (* and o), and
 * nothing but ASCII is drawn. */
static void tui_frame_draw__compare_in_ascii(void **state)
{
	(void)state;
	struct sim_snapshot *a = fx_viral(), *b = fx_viral();
	struct tui_view v = { .speed = 1, .ascii = true, .label = { "A one", "B two" } };
	struct tui_screen *s = tui_screen_new(120, 40);

	b->config.strategy = SIM_SHARDED;
	b->nrows = b->nlanes = 4;
	tui_frame_draw(s, &v, a, b);
	for (int y = 0; y < s->h; y++)
		for (int x = 0; x < s->w; x++)
			if (tui_screen_at(s, x, y)->ch >= 0x80)
				fail_msg("non-ASCII U+%04X at %d,%d", tui_screen_at(s, x, y)->ch, x, y);
	int y = fx_find(s, "PER SECOND  * offered  o done");
	assert_true(y > 0);
	assert_true(fx_col(s, y, "B two") < 0);
	assert_true(strstr(strstr(fx_row(s, y), "o done") + 6, "PER SECOND  * offered  o done"));
	assert_true(fx_find(s, "A one: naive, one row") == 1);
	tui_screen_free(s);
	free(a);
	free(b);
}

/* A tour step can put any two setups side by side: `current` is the
 * step's own settings; a later `compare on` is naive beside them again. */
static void tui_tour__compare_two_setups(void **state)
{
	(void)state;
	char err[200];
	struct tui_tour *t = tui_tour_parse(
		"title Two\n"
		"step Queue beside the viral video\n"
		"set strategy=queue\n"
		"compare viral-video current\n"
		"run 1\n"
		"step Naive beside it\n"
		"compare on\n"
		"run 1\n", err, sizeof err);
	assert_non_null(t);
	assert_int_equal(t->steps[0].compare, 2);
	assert_string_equal(t->steps[0].compare_with[0], "viral-video");
	assert_string_equal(t->steps[0].compare_with[1], "current");
	struct tui_app *a = tui_app_new(NULL, t, false);
	struct tui_screen *s = tui_screen_new(120, 40);
	tui_app_tour_finish_step(a);
	tui_app_render(a, s);
	assert_string_equal(tui_app_snapshot_left(a)->config.scenario, "viral-video");
	assert_int_equal(tui_app_snapshot(a)->config.strategy, SIM_QUEUE);
	assert_true(tui_screen_has(s, "A viral-video: naive, one row"));
	assert_true(tui_screen_has(s, "B current: queue"));
	tui_app_key(a, '\r');
	tui_app_tour_finish_step(a);
	tui_app_render(a, s);
	assert_true(tui_screen_has(s, "BEFORE: naive, one row"));
	assert_true(tui_screen_has(s, "AFTER: queue"));
	tui_screen_free(s);
	tui_app_free(a);

	const char *bad[] = { "step x\ncompare viral-post nope\n",
	                      "step x\ncompare current naive viral-post\n" };
	const char *why[] = { "not 'nope'", "not three words" };
	for (int i = 0; i < 2; i++) {
		assert_null(tui_tour_parse(bad[i], err, sizeof err));
		if (!strstr(err, why[i]))
			fail_msg("'%s' does not say %s", err, why[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(tui_app_compare_setups__scenario_beside_a_file_on_one_seed,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(tui_app_compare_setups__the_keys_change_the_right_side,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(tui_compare_key__the_picker_chooses_both_sides,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(tui_app_compare_setups__a_bad_setup_is_said_and_changes_nothing,
		                                setup, teardown),
		cmocka_unit_test(tui_frame_draw__both_sides_share_the_scale),
		cmocka_unit_test(tui_frame_draw__compare_in_ascii),
		cmocka_unit_test(tui_tour__compare_two_setups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
