/*
 * test_screen.c: the cell buffer, its text dump, the number formats and
 * the colour/no-colour attribute mapping.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ncurses.h>

#include "tui/fmt.h"
#include "tui/screen.h"
#include "tests/tui/fixture.h"

static void tui_screen_text__clips_at_the_edge(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(10, 2);

	int n = tui_screen_text(s, 6, 0, -1, TUI_BOLD, "abcdef");
	tui_screen_text(s, -2, 1, -1, TUI_NORMAL, "xyz");

	assert_int_equal(n, 4);
	assert_string_equal(fx_row(s, 0), "      abcd");
	assert_int_equal(tui_screen_at(s, 9, 0)->style, TUI_BOLD);
	assert_null(tui_screen_at(s, 10, 0));
	tui_screen_free(s);
}

static void tui_screen_text__utf8_is_one_cell_per_code_point(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(8, 1);

	tui_screen_text(s, 0, 0, -1, TUI_NORMAL, "ρ=4 ■○");

	assert_int_equal(tui_screen_at(s, 0, 0)->ch, 0x3C1);
	assert_int_equal(tui_screen_at(s, 4, 0)->ch, 0x25A0);
	assert_int_equal(tui_screen_at(s, 5, 0)->ch, 0x25CB);
	assert_string_equal(fx_row(s, 0), "ρ=4 ■○");
	tui_screen_free(s);
}

static void tui_screen_text__control_characters_show_as_question_marks(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(8, 1);

	tui_screen_text(s, 0, 0, -1, TUI_NORMAL, "a\tb\x1b");

	assert_string_equal(fx_row(s, 0), "a?b?");
	tui_screen_free(s);
}

static void tui_screen_dump__drops_trailing_blanks(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(6, 3);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	tui_screen_text(s, 1, 1, -1, TUI_NORMAL, "hi");
	tui_screen_dump(s, f);
	fclose(f);

	assert_string_equal(buf, "\n hi\n\n");
	free(buf);
	tui_screen_free(s);
}

static void tui_screen_resize__blanks_the_grid(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(4, 4);

	tui_screen_text(s, 0, 0, -1, TUI_NORMAL, "full");
	tui_screen_resize(s, 9, 2);

	assert_int_equal(s->w, 9);
	assert_int_equal(s->h, 2);
	assert_false(tui_screen_has(s, "full"));
	tui_screen_free(s);
}

static void tui_fmt__reads_like_a_person_says_it(void **state)
{
	(void)state;
	char b[32];

	assert_string_equal(tui_fmt_int(b, sizeof b, 1234567), "1,234,567");
	assert_string_equal(tui_fmt_int(b, sizeof b, -1500), "-1,500");
	assert_string_equal(tui_fmt_int(b, sizeof b, 999), "999");
	assert_string_equal(tui_fmt_rate(b, sizeof b, 2000), "2,000/s");
	assert_string_equal(tui_fmt_ms(b, sizeof b, 2), "2 ms");
	assert_string_equal(tui_fmt_ms(b, sizeof b, 0.25), "0.25 ms");
	assert_string_equal(tui_fmt_ms(b, sizeof b, 1500), "1.5 s");
	assert_string_equal(tui_fmt_s(b, sizeof b, 20.0 / 1500), "0.013 s");
	assert_string_equal(tui_fmt_ratio(b, sizeof b, 4), "4.0");
	assert_string_equal(tui_fmt_short(b, sizeof b, 12000), "12k");
	assert_string_equal(tui_fmt_short(b, sizeof b, 12500), "12.5k");
}

/* Colour is decided at copy-out: with colour off every style maps to
 * bold/reverse/dim only, and the failure style still stands out. */
static void tui_screen_colors__no_color_uses_attributes_only(void **state)
{
	(void)state;
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *t = newterm("xterm-256color", out, in);
	assert_non_null(t);
	set_term(t);

	tui_screen_colors(false);
	for (int st = 0; st < TUI_NSTYLES; st++)
		assert_int_equal(tui_screen_style_attr((enum tui_style)st) & A_COLOR, 0);
	assert_true(tui_screen_style_attr(TUI_BAD) & A_REVERSE);
	assert_true(tui_screen_style_attr(TUI_TITLE) & A_REVERSE);

	tui_screen_colors(true);
	assert_int_not_equal(tui_screen_style_attr(TUI_BAD) & A_COLOR, 0);
	assert_int_not_equal(tui_screen_style_attr(TUI_HOLD) & A_COLOR, 0);

	endwin();
	delscreen(t);
	fclose(out);
	fclose(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tui_screen_text__clips_at_the_edge),
		cmocka_unit_test(tui_screen_text__utf8_is_one_cell_per_code_point),
		cmocka_unit_test(tui_screen_text__control_characters_show_as_question_marks),
		cmocka_unit_test(tui_screen_dump__drops_trailing_blanks),
		cmocka_unit_test(tui_screen_resize__blanks_the_grid),
		cmocka_unit_test(tui_fmt__reads_like_a_person_says_it),
		cmocka_unit_test(tui_screen_colors__no_color_uses_attributes_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
