/*
 * test_runopt.c: the lab drivers' option parser. Each test parses an argv
 * against a small table like a driver's and checks the destinations, the
 * return code and the exact text written to the output and error streams.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labs/driver/runopt.h"
#include "tests/harness/labtest.h"

/* A driver's options, their table, and what the parser printed. */
struct fixture {
	const char *url;
	int threads;
	double seconds;
	double work_ms;
	struct opt table[4];
	struct kit_runopt_spec spec;
	FILE *out, *err;
	char out_text[2048], err_text[512];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	if (f == NULL)
		return -1;
	f->url = "sqlite:x.db";
	f->threads = 16;
	f->seconds = 5;
	f->work_ms = 2;
	const struct opt table[] = {
		KIT_RUNOPT_DB(&f->url, "database (default sqlite:x.db)"),
		KIT_RUNOPT_THREADS(&f->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&f->seconds, "length of the run (default 5)"),
		{ .name = "work-ms", .arg = "W", .kind = OPT_DOUBLE, .dest = &f->work_ms,
		  .min = 0, .max = 1000, .accepts = "milliseconds from 0 to 1000",
		  .help = "app work per like, 0..1000\n(default 2)" },
	};
	memcpy(f->table, table, sizeof table);
	f->spec = (struct kit_runopt_spec){ .cmd = "hotrow lab run 99", .opts = f->table, .n = 4,
	                                    .footer = "That is all.\n" };
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
	if (f->out)
		fclose(f->out);
	if (f->err)
		fclose(f->err);
	f->spec.out = f->out = tmpfile();
	f->spec.err = f->err = tmpfile();
	assert_non_null(f->out);
	assert_non_null(f->err);
	char *argv[16] = { "run" };
	int argc = 1;
	va_list ap;
	va_start(ap, f);
	for (char *a; argc < 15 && (a = va_arg(ap, char *)) != NULL;)
		argv[argc++] = a;
	va_end(ap);
	int rc = kit_runopt_parse(&f->spec, argc, argv);
	slurp(f->out, f->out_text, sizeof f->out_text);
	slurp(f->err, f->err_text, sizeof f->err_text);
	return rc;
}

static void kit_runopt_parse__no_options_keep_the_defaults(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, NULL);

	assert_int_equal(rc, KIT_RUNOPT_OK);
	assert_string_equal(f->url, "sqlite:x.db");
	assert_int_equal(f->threads, 16);
	assert_true(f->seconds == 5 && f->work_ms == 2);
	assert_string_equal(f->out_text, "");
	assert_string_equal(f->err_text, "");
}

static void kit_runopt_parse__good_values_stored(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, "--db", "postgres://h/d", "--threads", "256", "--seconds", "0.5",
	               "--work-ms", "0", NULL);

	assert_int_equal(rc, KIT_RUNOPT_OK);
	assert_string_equal(f->url, "postgres://h/d");
	assert_int_equal(f->threads, 256);
	assert_true(f->seconds == 0.5);
	assert_true(f->work_ms == 0);
	assert_string_equal(f->err_text, "");
}

static void kit_runopt_parse__last_one_wins(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, "--threads", "1", "--threads", "7", NULL);

	assert_int_equal(rc, KIT_RUNOPT_OK);
	assert_int_equal(f->threads, 7);
}

static void kit_runopt_parse__bounds_included_unless_above_min(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(f, "--threads", "1", "--seconds", "3600", "--work-ms", "1000",
	                       NULL), KIT_RUNOPT_OK);
	assert_int_equal(f->threads, 1);
	assert_true(f->seconds == 3600 && f->work_ms == 1000);
	assert_int_equal(parse(f, "--seconds", "0", NULL), KIT_RUNOPT_BAD);
	assert_string_equal(f->err_text,
	                    "hotrow lab run 99: --seconds accepts a number of seconds above 0, "
	                    "at most 3600, not '0'\n");
	assert_true(f->seconds == 3600);
}

static void kit_runopt_parse__out_of_range_refused(void **state)
{
	struct fixture *f = *state;
	const char *cases[][2] = {
		{ "--threads", "0" }, { "--threads", "257" }, { "--threads", "-1" },
		{ "--seconds", "3600.5" }, { "--seconds", "-2" }, { "--work-ms", "1001" },
		{ "--work-ms", "-0.1" }, { "--threads", "99999999999999999999" },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc = parse(f, cases[i][0], cases[i][1], NULL);

		lt_expect_int(rc, KIT_RUNOPT_BAD, cases[i][1]);
		lt_expect(strstr(f->err_text, " accepts ") != NULL, NULL, "%s %s: %s", cases[i][0],
		          cases[i][1], f->err_text);
	}
	assert_int_equal(f->threads, 16);
	assert_true(f->seconds == 5 && f->work_ms == 2);
}

static void kit_runopt_parse__malformed_refused(void **state)
{
	struct fixture *f = *state;
	const char *cases[][2] = {
		{ "--threads", "abc" }, { "--threads", "5x" }, { "--threads", "1.5" },
		{ "--threads", "" }, { "--threads", "0x10" }, { "--seconds", "nan" },
		{ "--seconds", "1s" }, { "--work-ms", "" }, { "--work-ms", "inf" },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc = parse(f, cases[i][0], cases[i][1], NULL);

		lt_expect_int(rc, KIT_RUNOPT_BAD, cases[i][1]);
	}
	assert_int_equal(parse(f, "--threads", "abc", NULL), KIT_RUNOPT_BAD);
	assert_string_equal(f->err_text,
	                    "hotrow lab run 99: --threads accepts a whole number from 1 to 256, "
	                    "not 'abc'\n");
	assert_int_equal(f->threads, 16);
}

static void kit_runopt_parse__missing_value_refused(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, "--threads", "4", "--db", NULL);

	assert_int_equal(rc, KIT_RUNOPT_BAD);
	assert_string_equal(f->err_text, "hotrow lab run 99: --db needs a value: a database URL\n");
	assert_int_equal(f->threads, 4);
	assert_string_equal(f->url, "sqlite:x.db");
}

static void kit_runopt_parse__unknown_option_refused(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, "--thread", "4", NULL);

	assert_int_equal(rc, KIT_RUNOPT_BAD);
	assert_string_equal(f->err_text,
	                    "hotrow lab run 99: unknown option '--thread' "
	                    "(hotrow lab run 99 --help lists them)\n");
	assert_string_equal(f->out_text, "");
	assert_int_equal(f->threads, 16);
}

static void kit_runopt_parse__help_prints_the_table(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, "--threads", "4", "--help", "--bogus", NULL);

	assert_int_equal(rc, KIT_RUNOPT_HELP);
	assert_string_equal(f->out_text,
		"usage: hotrow lab run 99 [--db URL] [--threads T] [--seconds S] [--work-ms W]\n"
		"  --db URL      database (default sqlite:x.db)\n"
		"  --threads T   concurrent clients, 1..256 (default 16)\n"
		"  --seconds S   length of the run (default 5)\n"
		"  --work-ms W   app work per like, 0..1000\n"
		"                (default 2)\n"
		"That is all.\n");
	assert_string_equal(f->err_text, "");
	assert_int_equal(parse(f, "-h", NULL), KIT_RUNOPT_HELP);
}

static void kit_runopt_parse__bad_value_before_help_wins(void **state)
{
	struct fixture *f = *state;

	int rc = parse(f, "--threads", "300", "--help", NULL);

	assert_int_equal(rc, KIT_RUNOPT_BAD);
	assert_string_equal(f->out_text, "");
}

/* --threads and --seconds take their limits from the table `hotrow lab
 * run` checks (kit_load_limits): same verdict, same words, every value. */
static void kit_runopt_parse__threads_and_seconds_share_the_runners_limits(void **state)
{
	struct fixture *f = *state;
	static const char *const values[] = { "0", "0.5", "1", "2", "255", "256", "257",
	                                      "3600", "3600.5", "-1", "1e9",
	                                      "2.0" };
	static const struct { const char *name; int limit; } opts[] = {
		{ "--threads", KIT_LOAD_LIMIT_THREADS }, { "--seconds", KIT_LOAD_LIMIT_SECONDS },
	};
	for (size_t o = 0; o < 2; o++) {
		const struct kit_load_limit *l = &kit_load_limits[opts[o].limit];
		assert_string_equal(l->name, opts[o].name);
		for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
			char *end;
			double v = l->integer ? (double)strtol(values[i], &end, 10) : strtod(values[i], &end);
			bool runner_ok = *end == '\0' && kit_load_limit_ok(l, v);
			int rc = parse(f, opts[o].name, values[i], NULL);
			if ((rc == KIT_RUNOPT_OK) != runner_ok)
				fail_msg("%s %s: the driver says %s, the runner's table %s", opts[o].name,
				         values[i], rc == KIT_RUNOPT_OK ? "yes" : "no", runner_ok ? "yes" : "no");
			if (!runner_ok) {
				char want[160];
				snprintf(want, sizeof want, "hotrow lab run 99: %s accepts %s, not '%s'\n",
				         l->name, l->accepts, values[i]);
				assert_string_equal(f->err_text, want);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(kit_runopt_parse__no_options_keep_the_defaults,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(kit_runopt_parse__good_values_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(kit_runopt_parse__last_one_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(kit_runopt_parse__bounds_included_unless_above_min,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(kit_runopt_parse__out_of_range_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(kit_runopt_parse__malformed_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(kit_runopt_parse__missing_value_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(kit_runopt_parse__unknown_option_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(kit_runopt_parse__help_prints_the_table, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(kit_runopt_parse__bad_value_before_help_wins, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(
			kit_runopt_parse__threads_and_seconds_share_the_runners_limits, setup, teardown),
	};
	return cmocka_run_group_tests_name("kit_runopt", tests, NULL, NULL);
}
