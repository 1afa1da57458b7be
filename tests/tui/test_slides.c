/*
 * test_slides.c: the deck parser and slide layout behind `hotrow slides`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/slides.h"

static char deck_path[64];

static void write_deck(const char *text)
{
	strcpy(deck_path, "/tmp/hotrow-slides-XXXXXX");
	int fd = mkstemp(deck_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int teardown(void **state)
{
	(void)state;
	unlink(deck_path);
	return 0;
}

static void tui_deck_load__splits_at_rules(void **state)
{
	(void)state;
	write_deck("# One\n\nfirst\n\n---\n\n## Two\nsecond\n---\n## Three\n");
	char err[256];
	struct tui_deck *d = tui_deck_load(deck_path, err, sizeof err);
	assert_non_null(d);
	assert_int_equal(tui_deck_count(d), 3);

	struct tui_slide_text t;
	tui_deck_layout(d, 1, 40, 0, &t);
	assert_int_equal(t.nlines, 2);
	assert_string_equal(t.lines[0], "Two");
	assert_int_equal(t.kinds[0], TUI_LINE_TITLE);
	assert_string_equal(t.lines[1], "second");
	tui_slide_text_free(&t);
	tui_deck_free(d);
}

static void tui_deck_load__missing_file_says_why(void **state)
{
	(void)state;
	char err[256];
	assert_null(tui_deck_load("/nonexistent/deck.md", err, sizeof err));
	assert_non_null(strstr(err, "/nonexistent/deck.md"));
	write_deck("\n\n---\n\n");
	assert_null(tui_deck_load(deck_path, err, sizeof err));
	assert_non_null(strstr(err, "no slides"));
}

static void tui_deck_layout__wraps_to_width_with_indent(void **state)
{
	(void)state;
	write_deck("## T\n- one two three four five six seven eight nine ten\n");
	char err[256];
	struct tui_deck *d = tui_deck_load(deck_path, err, sizeof err);
	assert_non_null(d);

	struct tui_slide_text t;
	tui_deck_layout(d, 0, 20, 0, &t);
	assert_true(t.nlines >= 4);
	for (int i = 0; i < t.nlines; i++)
		assert_true(tui_text_width(t.lines[i]) <= 20);
	assert_string_equal(t.lines[1], "\xe2\x80\xa2 one two three four");   /* a bullet */
	assert_memory_equal(t.lines[2], "  ", 2);   /* continuation keeps the indent */
	tui_slide_text_free(&t);
	tui_deck_free(d);
}

static void tui_deck_layout__notes_and_run(void **state)
{
	(void)state;
	write_deck("## T\nbody **bold** `code`\n> say this aloud\nRun: `build/hotrow sim --rps 2000`\n");
	char err[256];
	struct tui_deck *d = tui_deck_load(deck_path, err, sizeof err);
	assert_non_null(d);

	struct tui_slide_text t;
	tui_deck_layout(d, 0, 60, 0, &t);
	assert_int_equal(t.nlines, 3);                 /* notes hidden */
	assert_string_equal(t.lines[1], "body bold code");
	assert_string_equal(t.styles[1], "     bbbb cccc");   /* the marks become styles */
	assert_int_equal(t.kinds[2], TUI_LINE_RUN);
	assert_string_equal(t.lines[2], "$ build/hotrow sim --rps 2000");
	assert_string_equal(t.run, "build/hotrow sim --rps 2000");
	tui_slide_text_free(&t);

	tui_deck_layout(d, 0, 60, 1, &t);
	assert_int_equal(t.nlines, 4);
	assert_int_equal(t.kinds[2], TUI_LINE_NOTE);
	assert_string_equal(t.lines[2], "say this aloud");
	tui_slide_text_free(&t);
	tui_deck_free(d);
}

/* A deck is text to show, never bytes for the terminal: ESC sequences
 * (colour, cursor moves, a window title) and C1 controls become '?'. */
static void tui_deck_load__control_characters_are_defanged(void **state)
{
	(void)state;
	write_deck("# T\x1b[2J\r\nred \x1b[31mtext\x1b]0;owned\x07 \xc2\x9b" "2J and \xcf\x81\n");
	char err[256];
	struct tui_deck *d = tui_deck_load(deck_path, err, sizeof err);
	assert_non_null(d);
	struct tui_slide_text t;
	tui_deck_layout(d, 0, 76, 0, &t);
	assert_int_equal(t.nlines, 2);
	assert_string_equal(t.lines[0], "T?[2J");
	assert_string_equal(t.lines[1], "red ?[31mtext?]0;owned? ?2J and \xcf\x81");
	tui_slide_text_free(&t);
	tui_deck_free(d);
}

/* `hotrow slides /dev/zero` must not read without end. */
static void tui_deck_load__refuses_a_huge_file(void **state)
{
	(void)state;
	char err[256];
	assert_null(tui_deck_load("/dev/zero", err, sizeof err));
	assert_non_null(strstr(err, "/dev/zero: too big for a deck"));
}

static void tui_text_width__counts_columns_not_bytes(void **state)
{
	(void)state;
	assert_int_equal(tui_text_width("rho"), 3);
	assert_int_equal(tui_text_width("\xcf\x81 = \xce\xbb/\xce\xbc"), 7);   /* ρ = λ/μ */
}


/* A Markdown table is drawn as aligned columns: no pipes, no |---| row,
 * the header bold with a rule under it. */
static void tui_deck_layout__table_as_columns(void **state)
{
	(void)state;
	write_deck("## T\n| hold | ceiling |\n|---|---|\n| 1 ms | **~1,000** / s |\n| 20 ms | 50 / s |\n");
	char err[256];
	struct tui_deck *d = tui_deck_load(deck_path, err, sizeof err);
	assert_non_null(d);
	struct tui_slide_text t;
	tui_deck_layout(d, 0, 60, 0, &t);
	assert_int_equal(t.nlines, 5);
	assert_string_equal(t.lines[1], "hold   ceiling");
	assert_string_equal(t.styles[1], "bbbb   bbbbbbb");
	assert_int_equal(tui_text_width(t.lines[2]), 17);        /* the rule, the table wide */
	assert_string_equal(t.lines[3], "1 ms   ~1,000 / s");
	assert_string_equal(t.styles[3], "       bbbbbb    ");
	assert_string_equal(t.lines[4], "20 ms  50 / s");
	for (int i = 0; i < t.nlines; i++)
		assert_null(strchr(t.lines[i], '|'));
	assert_int_equal(t.cut, 0);
	tui_slide_text_free(&t);
	tui_deck_free(d);
}

/* A table wider than the slide wraps its widest column's cells. */
static void tui_deck_layout__wide_table_wraps_cells(void **state)
{
	(void)state;
	write_deck("## T\n| fix | gives up |\n|---|---|\n| coalesce | a crash loses one interval of likes |\n");
	char err[256];
	struct tui_deck *d = tui_deck_load(deck_path, err, sizeof err);
	assert_non_null(d);
	struct tui_slide_text t;
	tui_deck_layout(d, 0, 24, 0, &t);
	for (int i = 0; i < t.nlines; i++)
		assert_true(tui_text_width(t.lines[i]) <= 24);
	assert_string_equal(t.lines[3], "coalesce  a crash loses");
	assert_string_equal(t.lines[4], "          one interval");
	assert_int_equal(t.cut, 0);
	tui_slide_text_free(&t);
	tui_deck_free(d);
}

/* Notes for whoever edits the deck sit in <!-- -->: never on screen. */
static void tui_deck_layout__authoring_comments_hidden(void **state)
{
	(void)state;
	write_deck("# Deck\n<!-- how to edit\nthis deck -->\nshown\n<!-- one line -->\n");
	char err[256];
	struct tui_deck *d = tui_deck_load(deck_path, err, sizeof err);
	assert_non_null(d);
	struct tui_slide_text t;
	tui_deck_layout(d, 0, 60, 1, &t);
	assert_int_equal(t.nlines, 2);
	assert_string_equal(t.lines[1], "shown");
	tui_slide_text_free(&t);
	tui_deck_free(d);
}

/* A command longer than the slide folds at spaces, each line but the
 * last ending in a backslash, nothing cut. */
static void tui_deck_layout__long_command_folds(void **state)
{
	(void)state;
	write_deck("## T\nRun: `build/hotrow sim --sweep rows=1,4,16 --rps 2000 --seconds 1 --hold-ms 2`\n");
	char err[256];
	struct tui_deck *d = tui_deck_load(deck_path, err, sizeof err);
	assert_non_null(d);
	struct tui_slide_text t;
	tui_deck_layout(d, 0, 40, 0, &t);
	assert_int_equal(t.nlines, 3);
	assert_string_equal(t.lines[1], "$ build/hotrow sim --sweep rows=1,4,16 \\");
	assert_string_equal(t.lines[2], "    --rps 2000 --seconds 1 --hold-ms 2");
	assert_int_equal(t.cut, 0);
	tui_slide_text_free(&t);
	tui_deck_layout(d, 0, 200, 0, &t);
	assert_int_equal(t.nlines, 2);           /* wide enough: one line */
	tui_slide_text_free(&t);
	tui_deck_free(d);
}

/* Without UTF-8 the deck reads in ASCII, wrapped after folding. */
static void tui_deck_ascii__spells_the_letters_out(void **state)
{
	(void)state;
	write_deck("## \xcf\x81 = \xce\xbb/\xce\xbc\n- 4 \xc3\x97 500 \xe2\x80\x93 \xe2\x88\x92 \xe2\x97\x86\n");
	char err[256];
	struct tui_deck *d = tui_deck_load(deck_path, err, sizeof err);
	assert_non_null(d);
	tui_deck_ascii(d);
	struct tui_slide_text t;
	tui_deck_layout(d, 0, 60, 0, &t);
	assert_string_equal(t.lines[0], "rho = lambda/mu");
	assert_string_equal(t.lines[1], "- 4 x 500 - - ?");
	tui_slide_text_free(&t);
	tui_deck_free(d);
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(tui_deck_load__splits_at_rules, teardown),
		cmocka_unit_test_teardown(tui_deck_load__missing_file_says_why, teardown),
		cmocka_unit_test_teardown(tui_deck_layout__wraps_to_width_with_indent, teardown),
		cmocka_unit_test_teardown(tui_deck_layout__notes_and_run, teardown),
		cmocka_unit_test_teardown(tui_deck_load__control_characters_are_defanged, teardown),
		cmocka_unit_test(tui_deck_load__refuses_a_huge_file),
		cmocka_unit_test(tui_text_width__counts_columns_not_bytes),
		cmocka_unit_test_teardown(tui_deck_layout__table_as_columns, teardown),
		cmocka_unit_test_teardown(tui_deck_layout__wide_table_wraps_cells, teardown),
		cmocka_unit_test_teardown(tui_deck_layout__authoring_comments_hidden, teardown),
		cmocka_unit_test_teardown(tui_deck_layout__long_command_folds, teardown),
		cmocka_unit_test_teardown(tui_deck_ascii__spells_the_letters_out, teardown),
	};
	return cmocka_run_group_tests_name("slides", tests, NULL, NULL);
}
