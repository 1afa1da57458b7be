/*
 * test_help.c: one key table binds the keys and writes the overlay.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>

#include <ncurses.h>

#include "tui/help.h"
#include "tests/tui/fixture.h"

static void tui_help_table__every_action_has_a_key_and_no_key_two(void **state)
{
	(void)state;
	bool bound[TUI_NACTIONS] = {false};
	const struct tui_binding *t = tui_help_table();

	for (int i = 0; t[i].action != TUI_A_NONE; i++) {
		bound[t[i].action] = true;
		if (t[i].alt)             /* the second key of a pair does the opposite */
			bound[tui_help_action(t[i].alt, true)] = true;
		for (int j = 0; j < i; j++) {
			int a[2] = {t[i].key, t[i].alt}, b[2] = {t[j].key, t[j].alt};
			for (int x = 0; x < 2; x++)
				for (int y = 0; y < 2; y++)
					if (a[x] && a[x] == b[y])
						fail_msg("key %d bound twice (%s, %s)", a[x], t[i].keys, t[j].keys);
		}
	}
	for (int a = TUI_A_NONE + 1; a < TUI_NACTIONS; a++)
		if (!bound[a])
			fail_msg("action %d has no key", a);
}

static void tui_help_action__looks_keys_up_in_the_table(void **state)
{
	(void)state;
	assert_int_equal(tui_help_action('q', false), TUI_A_QUIT);
	assert_int_equal(tui_help_action('?', false), TUI_A_HELP);
	assert_int_equal(tui_help_action(KEY_UP, false), TUI_A_RATE_UP);
	assert_int_equal(tui_help_action('+', false), TUI_A_RATE_UP);
	assert_int_equal(tui_help_action(' ', false), TUI_A_PAUSE);
	assert_int_equal(tui_help_action('s', false), TUI_A_STRATEGY_NEXT);
	assert_int_equal(tui_help_action(']', false), TUI_A_SLOTS_UP);
	assert_int_equal(tui_help_action('Z', false), TUI_A_NONE);
	/* pairs: the second key does the opposite */
	assert_int_equal(tui_help_action('.', false), TUI_A_FASTER);
	assert_int_equal(tui_help_action(',', false), TUI_A_SLOWER);
	assert_int_equal(tui_help_action('<', false), TUI_A_BACK);
	assert_int_equal(tui_help_action('>', false), TUI_A_FORWARD);
	assert_int_equal(tui_help_action(KEY_HOME, false), TUI_A_HOME);
	assert_int_equal(tui_help_action(KEY_END, false), TUI_A_END);
	/* tour keys only while a tour plays */
	assert_int_equal(tui_help_action('\n', false), TUI_A_NONE);
	assert_int_equal(tui_help_action('\n', true), TUI_A_TOUR_NEXT);
	assert_int_equal(tui_help_action('b', true), TUI_A_TOUR_BACK);
}

static void tui_help_draw__lists_every_binding(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(80, 40);
	const struct tui_binding *t = tui_help_table();

	tui_help_draw(s, tui_glyphs(false), true);

	assert_true(tui_screen_has(s, "KEYS"));
	for (int i = 0; t[i].action != TUI_A_NONE; i++) {
		int y = fx_find(s, t[i].what);
		if (y < 0)
			fail_msg("overlay misses \"%s\"", t[i].what);
		assert_true(fx_col(s, y, t[i].keys) >= 0);
	}
	tui_screen_free(s);
}

/* On the smallest screen (80x24) the keys go in two columns: every key is
 * still listed, with the start of its words. */
static void tui_help_draw__every_key_on_the_smallest_screen(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(80, 24);
	const struct tui_binding *t = tui_help_table();
	char start[16];

	tui_help_draw(s, tui_glyphs(false), true);
	for (int i = 0; t[i].action != TUI_A_NONE; i++) {
		snprintf(start, sizeof start, "%.14s", t[i].what);
		int y = fx_find(s, start);
		if (y < 0)
			fail_msg("overlay misses \"%s\"", t[i].what);
		assert_true(fx_col(s, y, t[i].keys) >= 0);
	}
	tui_screen_free(s);
}

static void tui_help_hints__fit_the_width(void **state)
{
	(void)state;
	struct tui_screen *s = tui_screen_new(40, 1);

	tui_help_hints(s, 0, 0, 40, false);

	assert_true(tui_screen_has(s, "? help  q quit"));
	assert_false(tui_screen_has(s, "Enter"));
	assert_int_equal(tui_screen_at(s, 0, 0)->style, TUI_KEY);
	tui_screen_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tui_help_table__every_action_has_a_key_and_no_key_two),
		cmocka_unit_test(tui_help_action__looks_keys_up_in_the_table),
		cmocka_unit_test(tui_help_draw__lists_every_binding),
		cmocka_unit_test(tui_help_draw__every_key_on_the_smallest_screen),
		cmocka_unit_test(tui_help_hints__fit_the_width),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
