/*
 * test_lab.c: the runner's pieces that need no build: reading cmocka's
 * output into verdicts, parsing hints.md, naming labs, and the progress
 * file. The end-to-end behaviour (make, a real lab) is tests/lab/runner.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/runner_check.h"
#include "cli/runner_hint.h"
#include "cli/runner_tree.h"

/* What the lab harness and cmocka 1.1.5 print, quirks included: the
 * failure message before cmocka's own lines, "[ ERROR ]" and "[ LINE ]" on
 * one line, several HINT lines, a notice before the run, and the summary
 * repeating the failed names. */
static const char suite_output[] =
	"NOTICE: PostgreSQL checks skipped: set HOTROW_PG_URL to run them\n"
	"[==========] Running 4 test(s).\n"
	"[ RUN      ] like_post__counts_one_like/sqlite\n"
	"[       OK ] like_post__counts_one_like/sqlite\n"
	"[ RUN      ] like_post__exact_under_threads/sqlite\n"
	"tests/labs/01-hot-row/test_hot_row.c:212: expected 8000, got 7994: likes after 8 threads\n"
	"HINT: lost-update\n"
	"HINT: transaction\n"
	"[  ERROR   ] --- [   LINE   ] --- tests/labs/01-hot-row/test_hot_row.c:212: error: Failure!\n"
	"[  FAILED  ] like_post__exact_under_threads/sqlite\n"
	"[ RUN      ] like_post__exact_under_threads/postgres\n"
	"[  SKIPPED ] like_post__exact_under_threads/postgres\n"
	"[ RUN      ] like_post__asserts/sqlite\n"
	"[  ERROR   ] --- 0x1 != 0x2\n"
	"[   LINE   ] --- tests/labs/01-hot-row/test_hot_row.c:40: error: Failure!\n"
	"[  FAILED  ] like_post__asserts/sqlite\n"
	"[==========] 4 test(s) run.\n"
	"[  PASSED  ] 1 test(s).\n"
	"[  SKIPPED ] 1 test(s), listed below:\n"
	"[  SKIPPED ] like_post__exact_under_threads/postgres\n"
	"[  FAILED  ] 2 test(s), listed below:\n"
	"[  FAILED  ] like_post__exact_under_threads/sqlite\n"
	"[  FAILED  ] like_post__asserts/sqlite\n";

static void runner_result_parse__verdicts_and_counts(void **state)
{
	(void)state;
	struct runner_result r;

	runner_result_parse(&r, suite_output);

	assert_int_equal(r.n, 4);
	assert_int_equal(r.passed, 1);
	assert_int_equal(r.failed, 2);
	assert_int_equal(r.skipped, 1);
	assert_string_equal(r.checks[0].name, "like_post__counts_one_like/sqlite");
	assert_int_equal(r.checks[0].verdict, RUNNER_PASSED);
	assert_int_equal(r.checks[1].verdict, RUNNER_FAILED);
	assert_int_equal(r.checks[2].verdict, RUNNER_SKIPPED);
	assert_int_equal(r.checks[3].verdict, RUNNER_FAILED);
	runner_result_free(&r);
}

static void runner_result_parse__failure_details(void **state)
{
	(void)state;
	struct runner_result r;

	runner_result_parse(&r, suite_output);

	const struct runner_check *c = &r.checks[1];
	assert_non_null(c->details);
	assert_string_equal(c->details, "expected 8000, got 7994: likes after 8 threads\n");
	assert_string_equal(c->where, "tests/labs/01-hot-row/test_hot_row.c:212");
	assert_string_equal(c->hint, "lost-update transaction");
	/* A plain cmocka assertion keeps its message and its line. */
	assert_string_equal(r.checks[3].details, "0x1 != 0x2\n");
	assert_string_equal(r.checks[3].where, "tests/labs/01-hot-row/test_hot_row.c:40");
	assert_null(r.checks[0].details);
	assert_non_null(r.notices);
	assert_non_null(strstr(r.notices, "NOTICE: PostgreSQL checks skipped"));
	runner_result_free(&r);
}

static void runner_result_parse__output_cut_inside_a_check(void **state)
{
	(void)state;
	struct runner_result r;

	runner_result_parse(&r, "[ RUN      ] crash__midway/sqlite\npartial line\n");

	assert_int_equal(r.n, 1);
	assert_int_equal(r.failed, 1);
	assert_non_null(strstr(r.checks[0].details, "partial line"));
	assert_non_null(strstr(r.checks[0].details, "ended inside this check"));
	runner_result_free(&r);
}

static char tmpdir[64];

static int make_tree(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/hotrow-test-lab-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	char p[160];
	const char *dirs[] = {"labs", "labs/01-hot-row", "labs/02-sharded", "labs/notalab", "exercises",
			      "exercises/01-hot-row"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", tmpdir, dirs[i]);
		assert_int_equal(mkdir(p, 0777), 0);
	}
	const char *files[][2] = {
		{"Makefile", "all:\n"},
		{"labs/module.mk", "\n"},
		{"labs/01-hot-row/README.md", "# Lab 01 \xe2\x80\x94 The hot row\n\n## 1. Intro\n"},
		{"labs/02-sharded/README.md", "# Lab 02 - Sharded counters\n"},
		{"exercises/01-hot-row/hot_row.c", "int x;\n"},
		{"exercises/01-hot-row/.hot_row.c.swp", ""},
		{"labs/01-hot-row/hints.md",
		 "# Hints \xe2\x80\x94 Lab 01\n\nPreface, not a hint.\n\n"
		 "## Hint 1: What holds the lock? [work-outside]\n\nList the steps.\n\nThen cut.\n\n"
		 "## Hint 2: Count what you changed [lost-update] [transaction]\nOne statement.\n"
		 "## Hint 3: Nearly there\n\n"},
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", tmpdir, files[i][0]);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	setenv("HOTROW_ROOT", tmpdir, 1);
	return 0;
}

static int remove_tree(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void runner_hints_load__titles_tags_bodies(void **state)
{
	(void)state;
	char path[160];
	struct runner_hints h;
	snprintf(path, sizeof path, "%s/labs/01-hot-row/hints.md", tmpdir);

	assert_int_equal(runner_hints_load(path, &h), 0);

	assert_int_equal(h.n, 3);
	assert_string_equal(h.v[0].title, "What holds the lock?");
	assert_string_equal(h.v[0].tags, " work-outside ");
	assert_string_equal(h.v[0].body, "List the steps.\n\nThen cut.");
	assert_string_equal(h.v[1].title, "Count what you changed");
	assert_string_equal(h.v[1].tags, " lost-update transaction ");
	assert_string_equal(h.v[2].title, "Nearly there");
	assert_string_equal(h.v[2].body, "");
	runner_hints_free(&h);
}

static void runner_hints_first__tries_tags_in_order(void **state)
{
	(void)state;
	char path[160], tag[64];
	struct runner_hints h;
	snprintf(path, sizeof path, "%s/labs/01-hot-row/hints.md", tmpdir);
	assert_int_equal(runner_hints_load(path, &h), 0);

	assert_int_equal(runner_hints_first(&h, "nosuch transaction", tag, sizeof tag), 1);
	assert_string_equal(tag, "transaction");
	assert_int_equal(runner_hints_first(&h, "work-outside lost-update", tag, sizeof tag), 0);
	assert_int_equal(runner_hints_first(&h, "nosuch", tag, sizeof tag), -1);
	assert_int_equal(runner_hints_tagged(&h, "lost"), -1);   /* whole tags only */
	runner_hints_free(&h);
}

static void runner_tree_find__accepts_every_spelling(void **state)
{
	(void)state;
	struct runner_tree t;

	assert_int_equal(runner_tree_open(&t), 0);

	assert_int_equal(t.nlabs, 2);   /* labs/notalab is not one */
	assert_string_equal(t.labs[0].title, "The hot row");
	assert_string_equal(t.labs[1].title, "Sharded counters");
	assert_ptr_equal(runner_tree_find(&t, "01"), &t.labs[0]);
	assert_ptr_equal(runner_tree_find(&t, "1"), &t.labs[0]);
	assert_ptr_equal(runner_tree_find(&t, "01-hot-row"), &t.labs[0]);
	assert_ptr_equal(runner_tree_find(&t, "2"), &t.labs[1]);
	assert_null(runner_tree_find(&t, "3"));
	assert_null(runner_tree_find(&t, "01-hot"));
	assert_null(runner_tree_find(&t, "hot-row"));
	runner_tree_close(&t);
}

static void runner_progress_put__round_trips_per_lab(void **state)
{
	(void)state;
	struct runner_tree t;
	struct runner_progress p = {.passed = 3, .total = 7, .hints = 1}, q = {.passed = 9, .total = 9};
	char s[64];
	assert_int_equal(runner_tree_open(&t), 0);

	assert_int_equal(runner_progress_put(&t, &t.labs[0], &p), 0);
	assert_int_equal(runner_progress_put(&t, &t.labs[1], &q), 0);
	p.passed = 4;
	assert_int_equal(runner_progress_put(&t, &t.labs[0], &p), 0);

	struct runner_progress got;
	runner_progress_get(&t, &t.labs[0], &got);
	assert_int_equal(got.passed, 4);
	assert_int_equal(got.total, 7);
	assert_int_equal(got.hints, 1);
	assert_string_equal(runner_progress_str(&got, s, sizeof s), "4 of 7 checks passing");
	runner_progress_get(&t, &t.labs[1], &got);
	assert_string_equal(runner_progress_str(&got, s, sizeof s), "done");
	got = (struct runner_progress){0};
	assert_string_equal(runner_progress_str(&got, s, sizeof s), "not started");
	runner_tree_close(&t);
}

static void runner_exercise_files__sources_only(void **state)
{
	(void)state;
	struct runner_tree t;
	char files[128];
	assert_int_equal(runner_tree_open(&t), 0);

	runner_exercise_files(&t, &t.labs[0], files, sizeof files);
	assert_string_equal(files, "hot_row.c");   /* not the editor's swap file */
	runner_exercise_files(&t, &t.labs[1], files, sizeof files);
	assert_string_equal(files, "");
	runner_tree_close(&t);
}

static void runner_db_env__picks_the_engine(void **state)
{
	(void)state;
	unsetenv("HOTROW_LAB_ONLY");
	unsetenv("HOTROW_PG_URL");

	assert_int_equal(runner_db_env("sqlite:/tmp/x.db"), 0);
	assert_string_equal(getenv("HOTROW_LAB_ONLY"), "sqlite");
	assert_null(getenv("HOTROW_PG_URL"));
	assert_int_equal(runner_db_env("postgresql:///postgres?host=/tmp"), 0);
	assert_string_equal(getenv("HOTROW_LAB_ONLY"), "postgres");
	assert_string_equal(getenv("HOTROW_PG_URL"), "postgresql:///postgres?host=/tmp");
	assert_int_equal(runner_db_env("host=/tmp dbname=x"), 0);
	assert_string_equal(getenv("HOTROW_PG_URL"), "host=/tmp dbname=x");
	assert_int_equal(runner_db_env("mysql://x"), -1);
	assert_int_equal(runner_db_env("sqlite:"), -1);
	unsetenv("HOTROW_LAB_ONLY");
	unsetenv("HOTROW_PG_URL");
}

int main(void)
{
	const struct CMUnitTest parse[] = {
		cmocka_unit_test(runner_result_parse__verdicts_and_counts),
		cmocka_unit_test(runner_result_parse__failure_details),
		cmocka_unit_test(runner_result_parse__output_cut_inside_a_check),
		cmocka_unit_test(runner_db_env__picks_the_engine),
	};
	const struct CMUnitTest tree[] = {
		cmocka_unit_test(runner_hints_load__titles_tags_bodies),
		cmocka_unit_test(runner_hints_first__tries_tags_in_order),
		cmocka_unit_test(runner_tree_find__accepts_every_spelling),
		cmocka_unit_test(runner_progress_put__round_trips_per_lab),
		cmocka_unit_test(runner_exercise_files__sources_only),
	};
	int failed = cmocka_run_group_tests_name("lab_output", parse, NULL, NULL);
	failed += cmocka_run_group_tests_name("runner_tree", tree, make_tree, remove_tree);
	return failed;
}
