/*
 * test_lab.c: the runner's pieces that need no build: the list of checks,
 * verdicts from the report channel (a process that dies fails what it did
 * not finish), bounded output, hints.md, naming labs, and the progress
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

#include "kit/url.h"
#include "runner/check.h"
#include "runner/hint.h"
#include "runner/parts.h"
#include "runner/text.h"
#include "runner/tree.h"

/* What make writes to build/labs/NN/checks.i: the test source
 * preprocessed, LABTEST_BOTH and cmocka_unit_test expanded. */
static const char preprocessed[] =
	"int labtest_run(const char *lab, const struct CMUnitTest *tests, size_t n);\n"
	"static void f(void **state) { const char *s = \"{ \\\"not a check\\\" }\"; (void)s; }\n"
	"int main(void)\n{\n const struct CMUnitTest tests[] = {\n"
	"  { \"like_post__counts_one_like\" \"/sqlite\", like_post__counts_one_like, "
	"labtest_setup_sqlite, labtest_teardown, ((void *)0) }, { \"like_post__counts_one_like\" "
	"\"/postgres\", like_post__counts_one_like, labtest_setup_pg, labtest_teardown, ((void *)0) },\n"
	"  { \"shard_choose_n__formula\", shard_choose_n__formula, ((void *)0), ((void *)0), ((void *)0) },\n"
	"  { \"hot_rows_now__sees_the_whole_line\", hot_rows_now__sees_the_whole_line, labtest_setup_pg, "
	"labtest_teardown, ((void *)0) },\n"
	" };\n return labtest_run(\"01-hot-row\", tests, sizeof(tests) / sizeof((tests)[0]));\n}\n";

static void runner_checks_parse__names_from_the_array(void **state)
{
	(void)state;
	char **names;
	unsigned *engines;

	int n = runner_checks_parse(preprocessed, &names, &engines);

	assert_int_equal(n, 4);
	assert_string_equal(names[0], "like_post__counts_one_like/sqlite");
	assert_string_equal(names[1], "like_post__counts_one_like/postgres");
	assert_string_equal(names[2], "shard_choose_n__formula");
	assert_string_equal(names[3], "hot_rows_now__sees_the_whole_line");
	/* The engine comes from the entry's setup, not from the name. */
	assert_int_equal(engines[0], RUNNER_ENGINE_SQLITE);
	assert_int_equal(engines[1], RUNNER_ENGINE_PG);
	assert_int_equal(engines[2], 0);
	assert_int_equal(engines[3], RUNNER_ENGINE_PG);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(engines);
}

/* A result expecting three checks, to be fed report lines. */
static void expect3(struct runner_result *r)
{
	memset(r, 0, sizeof *r);
	r->built = 1;
	r->n = 3;
	r->checks = calloc(3, sizeof *r->checks);
	assert_non_null(r->checks);
	snprintf(r->checks[0].name, sizeof r->checks[0].name, "a__one/sqlite");
	snprintf(r->checks[1].name, sizeof r->checks[1].name, "a__two/sqlite");
	snprintf(r->checks[2].name, sizeof r->checks[2].name, "a__three/postgres");
	r->checks[0].engines = r->checks[1].engines = RUNNER_ENGINE_SQLITE;
	r->checks[2].engines = RUNNER_ENGINE_PG;
	r->available = RUNNER_ENGINE_SQLITE;   /* no PostgreSQL given */
}

static void feed(struct runner_result *r, const char *lines)
{
	char *copy = strdup(lines);
	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		runner_result_report(r, l);
	free(copy);
}

static void runner_result_report__verdicts_details_hints(void **state)
{
	(void)state;
	struct runner_result r;
	expect3(&r);

	feed(&r, "notice PostgreSQL checks skipped: set HOTROW_PG_URL\n"
		 "start a__one/sqlite\nend a__one/sqlite pass\n"
		 "start a__two/sqlite\n"
		 "detail tests/labs/01-hot-row/test_hot_row.c:212: expected 8000, got 7994: likes\n"
		 "hint lost-update\nhint transaction\nend a__two/sqlite fail\n"
		 "start a__three/postgres\nend a__three/postgres skip\n");
	runner_result_finish(&r, "exited with status 1");

	assert_int_equal(r.passed, 1);
	assert_int_equal(r.failed, 1);
	assert_int_equal(r.skipped, 1);
	assert_string_equal(r.checks[1].details, "expected 8000, got 7994: likes\n");
	assert_string_equal(r.checks[1].where, "tests/labs/01-hot-row/test_hot_row.c:212");
	assert_string_equal(r.checks[1].hint, "lost-update transaction");
	assert_non_null(strstr(r.notices, "PostgreSQL checks skipped"));
	assert_null(r.running);
	runner_result_free(&r);
}

static void runner_result_report__death_fails_the_rest(void **state)
{
	(void)state;
	struct runner_result r;
	expect3(&r);
	r.available |= RUNNER_ENGINE_PG;

	/* A forged end for a check that is not running, and one for a check
	 * the lab does not have, change nothing. */
	feed(&r, "end a__three/postgres pass\nstart a__one/sqlite\nend a__one/sqlite pass\n"
		 "start nosuch\nend nosuch pass\nstart a__two/sqlite\n");
	runner_result_finish(&r, "killed by signal 6 (Aborted)");

	assert_int_equal(r.passed, 1);
	assert_int_equal(r.failed, 2);   /* the maximum is still 3 */
	assert_string_equal(r.running, "a__two/sqlite");
	assert_non_null(strstr(r.checks[1].details, "did not finish"));
	assert_non_null(strstr(r.checks[1].details, "Aborted"));
	assert_non_null(strstr(r.checks[2].details, "did not run"));
	assert_non_null(strstr(r.checks[2].details, "a__two/sqlite"));
	runner_result_free(&r);
}

static void runner_result_report__skips_and_details_by_the_rules(void **state)
{
	(void)state;
	struct runner_result r;
	expect3(&r);

	/* A skip of a check whose engine was given, a pass after a failure
	 * detail, and lines the check says; a__three's engine was not given,
	 * and the process died before it: it is skipped, not failed. */
	feed(&r, "start a__one/sqlite\nend a__one/sqlite skip\n"
		 "start a__two/sqlite\nsay predicted 42, measured 41\ndetail x.c:1: wrong\n"
		 "end a__two/sqlite pass\n");
	runner_result_finish(&r, "exited with status 0");

	assert_int_equal(r.passed, 0);
	assert_int_equal(r.failed, 2);
	assert_int_equal(r.skipped, 1);
	assert_non_null(strstr(r.checks[0].details, "a skip is not a pass"));
	assert_string_equal(r.checks[1].said, "predicted 42, measured 41\n");
	assert_int_equal(r.checks[2].verdict, RUNNER_SKIPPED);
	runner_result_free(&r);
}

static void runner_text__keeps_head_and_tail(void **state)
{
	(void)state;
	struct runner_text t;
	runner_text_init(&t, 8, 4);
	assert_null(runner_text_str(&t));

	runner_text_add(&t, "0123456789", 10);
	runner_text_add(&t, "abcdefghij", 10);
	char *s = runner_text_str(&t);

	assert_non_null(s);
	assert_int_equal(strncmp(s, "01234567", 8), 0);
	assert_non_null(strstr(s, "8 bytes cut"));
	assert_non_null(strstr(s, "ghij\n"));
	free(s);
	runner_text_free(&t);
}

/* A cut through λ (2 bytes) and 🔥 (4 bytes) leaves neither half behind. */
static void runner_text__cuts_between_characters(void **state)
{
	(void)state;
	struct runner_text t;
	runner_text_init(&t, 6, 5);
	runner_text_add(&t, "abcde\xce\xbb", 7);          /* the head ends inside λ */
	runner_text_add(&t, "0123456789", 10);
	runner_text_add(&t, "\xf0\x9f\x94\xa5xy", 6);     /* the tail starts inside 🔥 */
	char *s = runner_text_str(&t);

	assert_non_null(s);
	assert_string_equal(s, "abcde\n[... 16 bytes cut here ...]\nxy\n");
	free(s);
	runner_text_free(&t);
}

static void runner_hints_specific__latest_but_never_the_last(void **state)
{
	(void)state;
	char path[] = "/tmp/hotrow-test-hints-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char text[] = "# Hints\n## Hint 1: First [rollup]\na\n## Hint 2: Later [out-of-order, x]\nb\n"
			    "## Hint 3: The shape [rollup] [out-of-order]\nc\n";
	assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
	close(fd);
	struct runner_hints h;
	char tag[64];
	assert_int_equal(runner_hints_load(path, &h), 0);
	unlink(path);

	assert_int_equal(runner_hints_specific(&h, "rollup out-of-order", tag, sizeof tag), 1);
	assert_string_equal(tag, "out-of-order");
	assert_int_equal(runner_hints_specific(&h, "x", tag, sizeof tag), 1);   /* "[a, b]" */
	assert_int_equal(runner_hints_specific(&h, "rollup", tag, sizeof tag), 0);
	assert_int_equal(runner_hints_specific(&h, "nosuch", tag, sizeof tag), -1);
	runner_hints_free(&h);
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
	struct runner_progress p = {.passed = 3, .total = 7, .hints = 1}, q = {.passed = 9, .total = 9, .eng_passed = {5, 4}, .eng_total = {5, 4}};
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
	/* Done on SQLite is not done: PostgreSQL was never checked. */
	got.eng_total[1] = got.eng_passed[1] = 0;
	assert_string_equal(runner_progress_str(&got, s, sizeof s), "SQLite done, PostgreSQL not checked");
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
	struct runner_opts o = {0};
	unsetenv("HOTROW_LAB_ONLY");
	unsetenv("HOTROW_PG_URL");

	assert_int_equal(runner_db_env("sqlite", &o), 0);
	assert_string_equal(getenv("HOTROW_LAB_ONLY"), "sqlite");
	assert_true(o.only_sqlite);
	assert_null(getenv("HOTROW_PG_URL"));
	assert_int_equal(runner_db_env("postgresql:///postgres?host=/tmp", &o), 0);
	assert_string_equal(getenv("HOTROW_LAB_ONLY"), "postgres");
	assert_string_equal(getenv("HOTROW_PG_URL"), "postgresql:///postgres?host=/tmp");
	assert_string_equal(o.db_from, "--db");
	assert_int_equal(runner_db_env("host=/tmp dbname=x", &o), 0);
	assert_string_equal(getenv("HOTROW_PG_URL"), "host=/tmp dbname=x");
	assert_int_equal(runner_db_env("oracle://x", &o), -1);
	unsetenv("HOTROW_LAB_ONLY");
	assert_int_equal(runner_db_env(NULL, &o), 0);
	assert_string_equal(o.db_from, "HOTROW_PG_URL");
	unsetenv("HOTROW_PG_URL");
}

/* The table as LABTEST_ALL writes it (preprocessed): the MariaDB entry's
 * engine from its setup, and the runner's idea of which engines it gives. */
static void runner_engines__mariadb_beside_the_others(void **state)
{
	(void)state;
	const char *src = "const struct CMUnitTest tests[] = {\n"
		"{ \"f\" \"/sqlite\", f, labtest_setup_sqlite, labtest_teardown, ((void *)0) },\n"
		"{ \"f\" \"/postgres\", f, labtest_setup_pg, labtest_teardown, ((void *)0) },\n"
		"{ \"f\" \"/mysql\", f, labtest_setup_mysql, labtest_teardown, ((void *)0) },\n};\n";
	char **names;
	unsigned *engines;
	assert_int_equal(runner_checks_parse(src, &names, &engines), 3);
	assert_string_equal(names[2], "f/mysql");
	assert_int_equal(engines[0], RUNNER_ENGINE_SQLITE);
	assert_int_equal(engines[1], RUNNER_ENGINE_PG);
	assert_int_equal(engines[2], RUNNER_ENGINE_MYSQL);
	for (int i = 0; i < 3; i++)
		free(names[i]);
	free(names);
	free(engines);

	assert_string_equal(runner_engines_str(0), "no engine");
	assert_string_equal(runner_engines_str(RUNNER_ENGINE_MYSQL), "MariaDB");
	assert_string_equal(runner_engines_str(RUNNER_ENGINE_SQLITE | RUNNER_ENGINE_PG), "SQLite and PostgreSQL");
	assert_string_equal(runner_engines_str(RUNNER_ENGINE_SQLITE | RUNNER_ENGINE_PG | RUNNER_ENGINE_REDIS),
			    "SQLite, PostgreSQL and Redis");
	assert_string_equal(runner_engines_str(RUNNER_ENGINE_ALL), "SQLite, PostgreSQL, Redis and MariaDB");
	assert_string_equal(runner_engines_str(RUNNER_ENGINE_PG | RUNNER_ENGINE_MYSQL), "PostgreSQL and MariaDB");

	const char *vars[] = {"HOTROW_LAB_ONLY", "HOTROW_PG_URL", "HOTROW_REQUIRE_PG", "HOTROW_REDIS_URL",
			      "HOTROW_REQUIRE_REDIS", "HOTROW_MYSQL_URL", "HOTROW_REQUIRE_MYSQL"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
	assert_int_equal(runner_engines_available(), RUNNER_ENGINE_SQLITE);
	setenv("HOTROW_REQUIRE_MYSQL", "1", 1);
	assert_int_equal(runner_engines_available(), RUNNER_ENGINE_SQLITE | RUNNER_ENGINE_MYSQL);
	unsetenv("HOTROW_REQUIRE_MYSQL");
	setenv("HOTROW_MYSQL_URL", "mysql://u@localhost/x", 1);
	setenv("HOTROW_PG_URL", "postgresql:///x", 1);
	assert_int_equal(runner_engines_available(), RUNNER_ENGINE_SQLITE | RUNNER_ENGINE_PG | RUNNER_ENGINE_MYSQL);
	setenv("HOTROW_LAB_ONLY", "postgres", 1);
	assert_int_equal(runner_engines_available(), RUNNER_ENGINE_PG);
	setenv("HOTROW_LAB_ONLY", "sqlite", 1);
	assert_int_equal(runner_engines_available(), RUNNER_ENGINE_SQLITE);
	unsetenv("HOTROW_PG_URL");
	unsetenv("HOTROW_MYSQL_URL");
	unsetenv("HOTROW_LAB_ONLY");

	/* --db mysql://: only the MariaDB checks, the server required. */
	struct runner_opts o = {0};
	assert_int_equal(runner_db_env("mysql://root:s3cret@localhost/hotrow?socket=/x", &o), 0);
	assert_string_equal(getenv("HOTROW_LAB_ONLY"), "mysql");
	assert_string_equal(getenv("HOTROW_MYSQL_URL"), "mysql://root:s3cret@localhost/hotrow?socket=/x");
	assert_string_equal(getenv("HOTROW_REQUIRE_MYSQL"), "1");
	assert_true(o.only_mysql);
	assert_false(o.only_sqlite);
	assert_null(o.db_from);   /* no PostgreSQL URL to speak of */
	assert_int_equal(runner_engines_available(), RUNNER_ENGINE_MYSQL);
	char shown[128];
	assert_string_equal(kit_url_redact(getenv("HOTROW_MYSQL_URL"), shown, sizeof shown),
			    "mysql://root:***@localhost/hotrow?socket=/x");
	assert_int_equal(runner_db_env("mariadb://u:pw@h/d", &o), 0);
	assert_string_equal(kit_url_redact(getenv("HOTROW_MYSQL_URL"), shown, sizeof shown), "mariadb://u:***@h/d");
	assert_int_equal(runner_db_env("sqlite", &o), 0);
	assert_false(o.only_mysql);
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
}

/* A lab whose MariaDB checks were skipped for want of a server: those
 * skips are optional ones; a PostgreSQL one is not. */
static void runner_result_optional_skips__only_mariadb(void **state)
{
	(void)state;
	struct runner_check c[3] = {
		{.name = "f/sqlite", .verdict = RUNNER_PASSED, .engines = RUNNER_ENGINE_SQLITE},
		{.name = "f/postgres", .verdict = RUNNER_SKIPPED, .engines = RUNNER_ENGINE_PG},
		{.name = "f/mysql", .verdict = RUNNER_SKIPPED, .engines = RUNNER_ENGINE_MYSQL},
	};
	struct runner_result r = {.built = 1, .checks = c, .n = 3, .available = RUNNER_ENGINE_SQLITE};
	assert_int_equal(runner_result_optional_skips(&r), 1);
	r.available |= RUNNER_ENGINE_MYSQL;   /* given, yet skipped: not optional (it failed anyway) */
	assert_int_equal(runner_result_optional_skips(&r), 0);
}

#define SEC "\xc2\xa7"   /* the section sign, in UTF-8 */

/* Writes labs/02-sharded/parts, reads it, and takes it away again. */
static void put_parts(const char *text)
{
	char p[160];
	snprintf(p, sizeof p, "%s/labs/02-sharded/parts", tmpdir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void runner_parts_load__functions_helpers_and_checks(void **state)
{
	(void)state;
	struct runner_tree t;
	struct runner_parts ps;
	assert_int_equal(runner_tree_open(&t), 0);
	assert_int_equal(runner_parts_load(&t, &t.labs[0], &ps), 0);   /* no file: one implicit part */
	runner_parts_free(&ps);

	put_parts("# comment\n\nincrement  shard_read +fold_row @acc  " SEC "3  46  # trailing\n"
		  "resize shard_resize " SEC "5 76\n");
	assert_int_equal(runner_parts_load(&t, &t.labs[1], &ps), 2);
	const struct runner_part *inc = runner_part_find(&ps, "increment");
	assert_non_null(inc);
	assert_string_equal(inc->section, "3");
	assert_int_equal(inc->minutes, 46);
	assert_null(runner_part_find(&ps, "incr"));
	assert_true(runner_part_has(inc, "shard_read__sums_every_slot/sqlite"));
	assert_true(runner_part_has(inc, "acc__flushes"));                 /* @acc */
	assert_false(runner_part_has(inc, "fold_row__x"));                 /* a helper has no checks */
	assert_false(runner_part_has(inc, "shard_read_all__x"));           /* the whole name, not a prefix */
	assert_false(runner_part_has(inc, "shard_resize__grow_keeps_total"));
	assert_false(runner_part_has(inc, "shard_read"));                  /* not a check's name */
	assert_true(runner_part_has(runner_part_find(&ps, "resize"), "shard_resize__grow_keeps_total"));
	runner_parts_free(&ps);

	put_parts("increment shard_read 46\n");   /* no section */
	assert_int_equal(runner_parts_load(&t, &t.labs[1], &ps), -1);
	assert_non_null(strstr(ps.error, "labs/02-sharded/parts:1: "));
	runner_parts_free(&ps);
	put_parts("a f " SEC "1 5\na g " SEC "2 6\n");   /* a name twice */
	assert_int_equal(runner_parts_load(&t, &t.labs[1], &ps), -1);
	assert_non_null(strstr(ps.error, ":2: part a twice"));
	runner_parts_free(&ps);

	char p[160];
	snprintf(p, sizeof p, "%s/labs/02-sharded/parts", tmpdir);
	unlink(p);
	runner_tree_close(&t);
}

int main(void)
{
	const struct CMUnitTest parse[] = {
		cmocka_unit_test(runner_checks_parse__names_from_the_array),
		cmocka_unit_test(runner_result_report__skips_and_details_by_the_rules),
		cmocka_unit_test(runner_result_report__verdicts_details_hints),
		cmocka_unit_test(runner_result_report__death_fails_the_rest),
		cmocka_unit_test(runner_text__keeps_head_and_tail),
		cmocka_unit_test(runner_text__cuts_between_characters),
		cmocka_unit_test(runner_hints_specific__latest_but_never_the_last),
		cmocka_unit_test(runner_db_env__picks_the_engine),
		cmocka_unit_test(runner_engines__mariadb_beside_the_others),
		cmocka_unit_test(runner_result_optional_skips__only_mariadb),
	};
	const struct CMUnitTest tree[] = {
		cmocka_unit_test(runner_hints_load__titles_tags_bodies),
		cmocka_unit_test(runner_hints_first__tries_tags_in_order),
		cmocka_unit_test(runner_tree_find__accepts_every_spelling),
		cmocka_unit_test(runner_progress_put__round_trips_per_lab),
		cmocka_unit_test(runner_exercise_files__sources_only),
		cmocka_unit_test(runner_parts_load__functions_helpers_and_checks),
	};
	int failed = cmocka_run_group_tests_name("lab_output", parse, NULL, NULL);
	failed += cmocka_run_group_tests_name("runner_tree", tree, make_tree, remove_tree);
	return failed;
}
