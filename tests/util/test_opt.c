/*
 * test_opt.c: the one option parser (util/opt). Each test parses an argv
 * against a small command's table and checks the destinations, the return
 * code and the exact text written to the output and error streams.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/opt.h"

enum colour { RED = 3, GREEN = 5 };

/* A command's settings, its table, and what the parser printed. */
struct fixture {
	int rows;
	double hold;
	uint64_t seed;
	const char *out_file;
	bool json;
	int colour;
	int ncrash;
	const char *crash[4];
	const char *words[4];
	int nwords;
	bool seen[8];
	struct opt table[8];
	struct opt_table tables[1];
	struct opt_cmd cmd;
	FILE *out, *err;
	char out_text[2048], err_text[512];
	int rest;
};

static const struct opt_choice colours[] = { { "red", RED }, { "green", GREEN }, { NULL, 0 } };

/* --crash: repeatable, each value kept; "x" is refused with its own words. */
static int crash(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	struct fixture *f = ctx;
	(void)dest;
	if (!strcmp(v, "x")) {
		snprintf(why, len, "anything but x");
		return -1;
	}
	if (f->ncrash == 4)
		return -1;
	f->crash[f->ncrash++] = v;
	return 0;
}

static int word(const char *w, void *ctx, char *err, size_t len)
{
	struct fixture *f = ctx;
	if (f->nwords == 2) {
		snprintf(err, len, "two words at most, not '%s'", w);
		return -1;
	}
	f->words[f->nwords++] = w;
	return 0;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	if (f == NULL)
		return -1;
	f->rows = 1;
	f->hold = 2;
	f->seed = 1;
	f->colour = RED;
	const struct opt table[] = {
		{ .name = "rows", .short_name = 'r', .arg = "N", .kind = OPT_INT, .dest = &f->rows,
		  .min = 1, .max = 64, .help = "counter rows (1)" },
		{ .name = "hold-ms", .arg = "MS", .kind = OPT_DOUBLE, .dest = &f->hold,
		  .min = 0, .max = 1000, .above_min = true, .help = "lock hold\n(2)" },
		{ .name = "seed", .arg = "N", .kind = OPT_U64, .dest = &f->seed, .help = "seed (1)" },
		{ .name = "out", .arg = "FILE", .kind = OPT_STRING, .dest = &f->out_file,
		  .accepts = "a file name", .help = "write FILE" },
		{ .name = "json", .kind = OPT_FLAG, .dest = &f->json, .help = "JSON" },
		{ .name = "colour", .arg = "C", .kind = OPT_CHOICE, .dest = &f->colour,
		  .choices = colours, .help = "red|green (red)" },
		{ .name = "crash", .arg = "KIND@S", .kind = OPT_CUSTOM, .fn = crash, .ctx = f,
		  .accepts = "a crash", .help = "a crash (repeatable)" },
		{ .name = "hidden", .kind = OPT_FLAG, .dest = &f->json },
	};
	memcpy(f->table, table, sizeof table);
	f->tables[0] = (struct opt_table){ .heading = "options:", .rows = f->table, .n = 8,
	                                   .seen = f->seen };
	f->cmd = (struct opt_cmd){ .name = "hotrow t", .usage = "[options] [WORD]...",
	                           .header = "Tests the parser.\n", .footer = "That is all.\n",
	                           .tables = f->tables, .ntables = 1, .positional = word,
	                           .ctx = f };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	if (f->out)
		fclose(f->out);
	if (f->err)
		fclose(f->err);
	free(f);
	return 0;
}

static void slurp(FILE *s, char *buf, size_t len)
{
	rewind(s);
	size_t n = fread(buf, 1, len - 1, s);
	buf[n] = '\0';
}

/* Parse the NULL-ended words after a program name; what this parse
 * printed lands in f->out_text and f->err_text. */
static int parse(struct fixture *f, ...)
{
	static char *argv[16];
	int argc = 1;
	va_list ap;

	if (f->out)
		fclose(f->out);
	if (f->err)
		fclose(f->err);
	f->cmd.out = f->out = tmpfile();
	f->cmd.err = f->err = tmpfile();
	assert_non_null(f->out);
	assert_non_null(f->err);
	argv[0] = "t";
	va_start(ap, f);
	for (char *a; argc < 15 && (a = va_arg(ap, char *)) != NULL;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	int rc = opt_parse(&f->cmd, argc, argv, &f->rest);
	slurp(f->out, f->out_text, sizeof f->out_text);
	slurp(f->err, f->err_text, sizeof f->err_text);
	return rc;
}

static void opt_parse__name_equals_value_and_name_value(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, "--rows=4", "--hold-ms", "0.5", "--seed=18446744073709551615",
	               "--out", "x.csv", "-r", "7", NULL);

	assert_int_equal(rc, OPT_OK);
	assert_int_equal(f->rows, 7);
	assert_true(f->hold == 0.5);
	assert_true(f->seed == UINT64_MAX);
	assert_string_equal(f->out_file, "x.csv");
	assert_true(f->seen[0] && f->seen[1] && f->seen[2] && f->seen[3] && !f->seen[4]);
	assert_string_equal(f->err_text, "");
	assert_string_equal(f->out_text, "");
}

/* A file row checks the file as it parses: a directory, a device or a
 * missing directory is refused at once with the reason, dest untouched. */
static void opt_parse__file_rows_check_the_file(void **state)
{
	struct fixture *f = *state;
	char path[] = "/tmp/hotrow-test-opt-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "12345678", 8), 8);
	close(fd);

	f->table[3].kind = OPT_FILE_OUT;
	assert_int_equal(parse(f, "--out", "/tmp", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: --out /tmp: is a directory, not a file\n");
	assert_int_equal(parse(f, "--out=/dev/zero", NULL), OPT_BAD);
	assert_string_equal(f->err_text,
	                    "hotrow t: --out /dev/zero: is a device (like /dev/zero), not a file\n");
	assert_int_equal(parse(f, "--out", "/nonexistent-dir/x.csv", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: --out /nonexistent-dir/x.csv: its directory "
	                    "/nonexistent-dir does not exist\n");
	assert_null(f->out_file);
	assert_int_equal(parse(f, "--out", path, NULL), OPT_OK);
	assert_string_equal(f->out_file, path);

	f->out_file = NULL;
	f->table[3].kind = OPT_FILE_IN;
	f->table[3].max = 7;
	assert_int_equal(parse(f, "--out", path, NULL), OPT_BAD);
	assert_non_null(strstr(f->err_text, ": is 8 bytes, more than the 7 this takes\n"));
	f->table[3].max = 8;
	assert_int_equal(parse(f, "--out", path, NULL), OPT_OK);
	assert_int_equal(parse(f, "--out", "", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: --out accepts a file name, not ''\n");

	f->table[3].kind = OPT_DIR_OUT;
	assert_int_equal(parse(f, "--out", path, NULL), OPT_BAD);
	assert_non_null(strstr(f->err_text, ": is not a directory\n"));
	assert_int_equal(parse(f, "--out", "/tmp", NULL), OPT_OK);
	unlink(path);
}

static void opt_parse__missing_value(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(f, "--rows", "3", "--out", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: --out needs a value: a file name\n");
	assert_int_equal(f->rows, 3);
	assert_int_equal(parse(f, "-r", NULL), OPT_BAD);
	assert_string_equal(f->err_text,
	                    "hotrow t: --rows needs a value: a whole number from 1 to 64\n");
}

static void opt_parse__out_of_range_or_malformed(void **state)
{
	struct fixture *f = *state;
	const char *cases[][2] = {
		{ "--rows", "0" }, { "--rows", "65" }, { "--rows", "2.5" }, { "--rows", "" },
		{ "--rows", "0x10" }, { "--rows", "99999999999999999999" }, { "--hold-ms", "0" },
		{ "--hold-ms", "1000.5" }, { "--hold-ms", "1ms" }, { "--seed", "-1" },
		{ "--seed", "1.5" }, { "--out", "" }, { "--colour", "blue" }, { "--json=maybe" },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc = cases[i][1] ? parse(f, cases[i][0], cases[i][1], NULL)
		                     : parse(f, cases[i][0], NULL);
		if (rc != OPT_BAD || !strstr(f->err_text, " accepts "))
			fail_msg("%s %s: rc %d, %s", cases[i][0], cases[i][1] ? cases[i][1] : "", rc,
			         f->err_text);
	}
	assert_int_equal(parse(f, "--rows", "65", NULL), OPT_BAD);
	assert_string_equal(f->err_text,
	                    "hotrow t: --rows accepts a whole number from 1 to 64, not '65'\n");
	assert_int_equal(parse(f, "--hold-ms=0", NULL), OPT_BAD);
	assert_string_equal(f->err_text,
	                    "hotrow t: --hold-ms accepts a number above 0, at most 1000, not '0'\n");
	assert_int_equal(f->rows, 1);
	assert_true(f->hold == 2);
}

static void opt_parse__nan_and_inf_refused(void **state)
{
	struct fixture *f = *state;
	const char *values[] = { "nan", "NaN", "inf", "-inf", "infinity", "1e999" };

	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
		if (parse(f, "--hold-ms", values[i], NULL) != OPT_BAD)
			fail_msg("--hold-ms %s was taken", values[i]);
	assert_true(f->hold == 2);
}

static void opt_parse__unknown_option(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(f, "--frobnicate", NULL), OPT_BAD);
	assert_string_equal(f->err_text,
	                    "hotrow t: unknown option '--frobnicate' (hotrow t --help lists them)\n");
	assert_int_equal(parse(f, "-z", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: unknown option '-z' (hotrow t --help lists them)\n");
	/* getopt_long would take an abbreviation; the kit does not */
	assert_int_equal(parse(f, "--row", "3", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: unknown option '--row' (hotrow t --help lists them)\n");
	assert_int_equal(parse(f, "--ro=3", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: unknown option '--ro' (hotrow t --help lists them)\n");
	assert_int_equal(f->rows, 1);
	assert_int_equal(parse(f, "--help=1", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: --help takes no value\n");
}

static void opt_parse__flag(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(f, "--json", NULL), OPT_OK);
	assert_true(f->json);
	assert_int_equal(parse(f, "--json=off", NULL), OPT_OK);
	assert_false(f->json);
	assert_int_equal(parse(f, "--json", "word", NULL), OPT_OK);
	assert_true(f->json);
	assert_int_equal(f->nwords, 1);           /* a flag does not eat the next word */
	assert_string_equal(f->words[0], "word");
}

static void opt_parse__choice(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(f, "--colour", "green", NULL), OPT_OK);
	assert_int_equal(f->colour, GREEN);
	assert_int_equal(parse(f, "--colour=blue", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: --colour accepts red or green, not 'blue'\n");
	assert_int_equal(f->colour, GREEN);
}

static void opt_parse__repeat_last_wins_custom_collects(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, "--rows", "2", "--crash", "a@1", "--rows=9", "--crash=b@2", NULL);

	assert_int_equal(rc, OPT_OK);
	assert_int_equal(f->rows, 9);
	assert_int_equal(f->ncrash, 2);
	assert_string_equal(f->crash[0], "a@1");
	assert_string_equal(f->crash[1], "b@2");
	assert_int_equal(parse(f, "--crash", "x", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: --crash accepts anything but x, not 'x'\n");
}

static void opt_parse__positionals_in_order_and_after_dashes(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, "one", "--rows", "3", "two", "--", "--json", "x", NULL);

	assert_int_equal(rc, OPT_OK);
	assert_int_equal(f->nwords, 2);
	assert_string_equal(f->words[0], "one");
	assert_string_equal(f->words[1], "two");
	assert_int_equal(f->rest, 6);             /* argv[6] is "--json", not parsed */
	assert_false(f->json);
	assert_int_equal(parse(f, "three", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: two words at most, not 'three'\n");
	f->cmd.positional = NULL;
	assert_int_equal(parse(f, "stray", NULL), OPT_BAD);
	assert_string_equal(f->err_text, "hotrow t: unexpected argument 'stray'\n");
}

static void opt_parse__help_generated_from_the_table(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, "--rows", "4", "--help", "--bogus", NULL);

	assert_int_equal(rc, OPT_HELP);
	assert_string_equal(f->out_text,
		"usage: hotrow t [options] [WORD]...\n"
		"Tests the parser.\n"
		"options:\n"
		"  -r, --rows N     counter rows (1)\n"
		"  --hold-ms MS     lock hold\n"
		"                   (2)\n"
		"  --seed N         seed (1)\n"
		"  --out FILE       write FILE\n"
		"  --json           JSON\n"
		"  --colour C       red|green (red)\n"
		"  --crash KIND@S   a crash (repeatable)\n"
		"That is all.\n");
	assert_string_equal(f->err_text, "");
	assert_int_equal(parse(f, "-h", NULL), OPT_HELP);
	f->cmd.usage = NULL;
	FILE *u = tmpfile();
	assert_non_null(u);
	opt_usage(&f->cmd, u);
	rewind(u);
	assert_non_null(fgets(f->out_text, sizeof f->out_text, u));
	fclose(u);
	assert_string_equal(f->out_text, "usage: hotrow t [--rows N] [--hold-ms MS] [--seed N] "
	                    "[--out FILE] [--json] [--colour C] [--crash KIND@S]\n");
}

static void opt_parse__bad_value_before_help_wins(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(f, "--rows", "300", "--help", NULL), OPT_BAD);
	assert_string_equal(f->out_text, "");
}

/* Early rows apply first wherever they stand, so the others change them. */
static void opt_parse__early_rows_first(void **state)
{
	struct fixture *f = *state;

	f->table[0].early = true;
	assert_int_equal(parse(f, "--hold-ms", "3", "--rows", "5", NULL), OPT_OK);
	assert_int_equal(f->rows, 5);
	assert_true(f->hold == 3);
	assert_int_equal(f->nwords, 0);
}

/* Sweeps and tests parse again and again in one process: getopt's state
 * starts afresh each time, even after a parse that stopped midway. */
static void opt_parse__twice_in_one_process(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(f, "--rows", "3", "--bogus", "--rows", "4", NULL), OPT_BAD);
	assert_int_equal(f->rows, 3);
	assert_int_equal(parse(f, "--rows", "5", "w", NULL), OPT_OK);
	assert_int_equal(f->rows, 5);
	assert_int_equal(parse(f, "w", "--rows", "6", NULL), OPT_OK);
	assert_int_equal(f->rows, 6);
	assert_int_equal(f->nwords, 2);
}

static void opt_set__one_row_by_name(void **state)
{
	struct fixture *f = *state;
	char err[160];

	assert_int_equal(opt_set(&f->tables[0], "rows", "12", err, sizeof err), 0);
	assert_int_equal(f->rows, 12);
	assert_int_equal(opt_set(&f->tables[0], "rows", "0", err, sizeof err), -1);
	assert_string_equal(err, "--rows accepts a whole number from 1 to 64, not '0'");
	assert_int_equal(opt_set(&f->tables[0], "colour", "green", err, sizeof err), 0);
	assert_int_equal(f->colour, GREEN);
	assert_int_equal(opt_set(&f->tables[0], "nope", "1", err, sizeof err), -1);
	assert_string_equal(err, "--nope is not an option");
}

/* A table with a base: each row's destination is base + off. */
struct config {
	int a;
	double b;
};

static void opt_parse__table_base_and_offsets(void **state)
{
	struct fixture *f = *state;
	struct config c = { 1, 1 };
	static const struct opt rows[] = {
		{ .name = "a", .arg = "A", .kind = OPT_INT, .off = offsetof(struct config, a),
		  .min = 0, .max = 9, .help = "a" },
		{ .name = "b", .arg = "B", .kind = OPT_DOUBLE, .off = offsetof(struct config, b),
		  .min = 0, .max = 9, .help = "b" },
	};
	struct opt_table t[] = { f->tables[0], { .rows = rows, .n = 2, .base = &c } };

	f->cmd.tables = t;
	f->cmd.ntables = 2;
	assert_int_equal(parse(f, "--a", "4", "--b=2.5", "--rows", "2", NULL), OPT_OK);
	assert_int_equal(c.a, 4);
	assert_true(c.b == 2.5);
	assert_int_equal(f->rows, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(opt_parse__name_equals_value_and_name_value, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(opt_parse__missing_value, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__out_of_range_or_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__nan_and_inf_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__unknown_option, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__flag, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__choice, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__repeat_last_wins_custom_collects, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(opt_parse__positionals_in_order_and_after_dashes,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__help_generated_from_the_table, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(opt_parse__bad_value_before_help_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__early_rows_first, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__twice_in_one_process, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_set__one_row_by_name, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__file_rows_check_the_file, setup, teardown),
		cmocka_unit_test_setup_teardown(opt_parse__table_base_and_offsets, setup, teardown),
	};
	return cmocka_run_group_tests_name("util_opt", tests, NULL, NULL);
}
