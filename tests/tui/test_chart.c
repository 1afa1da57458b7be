/*
 * test_chart.c: scales, axes and both plot styles.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tui/chart.h"
#include "tui/fmt.h"
#include "tests/tui/fixture.h"

static void tui_chart_level__linear_and_log(void **state)
{
	(void)state;
	assert_int_equal(tui_chart_level(0, 0, 100, false, 11), 0);
	assert_int_equal(tui_chart_level(50, 0, 100, false, 11), 5);
	assert_int_equal(tui_chart_level(100, 0, 100, false, 11), 10);
	assert_int_equal(tui_chart_level(500, 0, 100, false, 11), 10);  /* clamped */
	/* 0.1 ms .. 10 s is 5 decades on 6 levels: one level a decade */
	assert_int_equal(tui_chart_level(1, 0.1, 10000, true, 6), 1);
	assert_int_equal(tui_chart_level(1000, 0.1, 10000, true, 6), 4);
	assert_int_equal(tui_chart_level(0, 0.1, 10000, true, 6), 0);    /* floor */
}

static void tui_chart_draw__ascii_points_axes_and_ceiling(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(40, 8);
	double off[10], done[10];
	for (int i = 0; i < 10; i++)
		off[i] = 2000, done[i] = 500;
	struct tui_chart c = {
		.title = "PER SECOND", .name = {"offered", "completed"},
		.y = {off, done}, .n = 10, .dt_s = 0.1, .ref = 500, .ref_name = "ceiling",
	};

	tui_chart_draw(s, (struct tui_rect){0, 0, 40, 8}, &c, tui_glyphs(true));

	/* the ceiling's legend does not fit in 40 columns: left out whole */
	assert_string_equal(fx_row(s, 0), "PER SECOND  * offered  o completed");
	/* offered (2,000) on one row, completed (500) lower, on the ceiling */
	int yo = -1, yc = -1;
	for (int y = 1; y < 7; y++) {
		if (fx_count(s, y, '*') == 10)
			yo = y;
		if (fx_count(s, y, 'o') == 10)
			yc = y;
	}
	assert_true(yo > 0);
	assert_true(yc > yo);
	assert_non_null(strstr(fx_row(s, yc), "|----"));      /* the ceiling row */
	assert_non_null(strstr(fx_row(s, 7), "-1 s"));        /* x axis span */
	assert_non_null(strstr(fx_row(s, 7), "now"));
	assert_non_null(strstr(fx_row(s, 6), "0|"));          /* y axis from 0 */
	tui_screen_free(s);
}

static void tui_chart_draw__braille_log_scale_labels_decades(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(50, 12);
	double p99[20];
	for (int i = 0; i < 20; i++)
		p99[i] = i < 10 ? 2 : 1500;
	struct tui_chart c = {
		.title = "LATENCY", .name = {"p99", NULL}, .y = {p99, NULL}, .n = 20,
		.dt_s = 0.1, .log = true, .floor = 0.1, .fmt = tui_fmt_ms,
	};

	tui_chart_draw(s, (struct tui_rect){0, 0, 50, 12}, &c, tui_glyphs(false));

	assert_true(fx_find(s, "10 s│") == 1);          /* top decade */
	assert_true(fx_find(s, "0.1 ms│") == 10);       /* the floor */
	assert_true(fx_find(s, "1 s│") > 1);
	assert_true(fx_find(s, "1 ms│") > fx_find(s, "1 s│"));
	/* braille dots drawn, nothing else in the plot */
	int dots = 0;
	for (int y = 1; y <= 10; y++)
		for (int x = 8; x < 50; x++) {
			uint32_t ch = tui_screen_at(s, x, y)->ch;
			dots += ch >= 0x2800 && ch <= 0x28FF;
		}
	assert_true(dots >= 10);
	tui_screen_free(s);
}

/* The glyphs a chart of data drawn as series k (0 or 1) puts in the plot
 * and its legend, as one string of code points, for comparing shapes. */
static void shapes(const double *data, int n, int k, bool ascii, uint32_t *out, size_t len)
{
	struct tui_screen *s = tui_screen_new(40, 8);
	struct tui_chart c = { .title = "T", .n = n, .dt_s = 0.1 };
	c.y[k] = data;
	c.name[k] = "x";
	tui_chart_draw(s, (struct tui_rect){0, 0, 40, 8}, &c, tui_glyphs(ascii));
	size_t o = 0;
	memset(out, 0, len * sizeof *out);
	for (int y = 0; y < 7; y++)
		for (int x = y ? 8 : 0; x < 40 && o + 1 < len; x++)
			out[o++] = tui_screen_at(s, x, y)->ch;   /* the plot, and the legend */
	out[o] = 0;
	tui_screen_free(s);
}

/* Without colour the two series must still look different: the same data
 * drawn as the first and as the second series gives other glyphs, in
 * braille and in ASCII, in the plot and in the legend. */
static void tui_chart_draw__series_differ_in_shape_not_only_colour(void **state)
{
	(void)state;
	double flat[60], ramp[60];
	for (int i = 0; i < 60; i++)
		flat[i] = 500, ramp[i] = 40 * i;
	for (int ascii = 0; ascii < 2; ascii++) {
		const double *sets[] = { flat, ramp };
		for (int d = 0; d < 2; d++) {
			uint32_t first[400], second[400];
			shapes(sets[d], 60, 0, ascii, first, 400);
			shapes(sets[d], 60, 1, ascii, second, 400);
			assert_true(memcmp(first, second, sizeof first) != 0);
		}
	}
	/* the legends differ from each other too */
	for (int ascii = 0; ascii < 2; ascii++) {
		const struct tui_glyphs *g = tui_glyphs(ascii);
		assert_true(g->series[0] != g->series[1]);
		assert_true(g->series[0] != g->ref && g->series[1] != g->ref);
	}
}

static void tui_chart_draw__tiny_rect_draws_only_the_title(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(30, 3);
	double y[3] = {1, 2, 3};
	struct tui_chart c = {.title = "T", .y = {y, NULL}, .n = 3, .dt_s = 1};

	tui_chart_draw(s, (struct tui_rect){0, 0, 30, 3}, &c, tui_glyphs(false));

	assert_string_equal(fx_row(s, 0), "T");
	assert_string_equal(fx_row(s, 1), "");
	tui_screen_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tui_chart_level__linear_and_log),
		cmocka_unit_test(tui_chart_draw__ascii_points_axes_and_ceiling),
		cmocka_unit_test(tui_chart_draw__braille_log_scale_labels_decades),
		cmocka_unit_test(tui_chart_draw__tiny_rect_draws_only_the_title),
		cmocka_unit_test(tui_chart_draw__series_differ_in_shape_not_only_colour),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
