/*
 * runner_check.h: build a lab's tests against the student's code, run them,
 * and read cmocka's output back into one verdict per check.
 *
 * The build goes through the kit's own make rules (labs/module.mk), so what
 * a student runs is what CI runs: build/labs/NN-name/test-exercise, or
 * test-solution with --solutions. A compile error is not a crash: the
 * result says "not built" and carries the compiler's messages. The test
 * binary's stdout and stderr are read as one stream, line by line:
 *   [ RUN      ] name      a check starts; lines until its verdict are its
 *                          details ("expected 8000, got 7994: ...",
 *                          "HINT: lost-update", cmocka's [ ERROR ]/[ LINE ])
 *   [       OK ] name      passed       [  SKIPPED ] name   skipped
 *   [  FAILED  ] name      failed       [  ERROR   ] name   failed
 * and lines starting "NOTICE" are kept to show the student once.
 *
 * Interface:
 *   struct runner_opts o = { .db = NULL, .solutions = 0, .live = 1 };
 *   if (runner_db_env(url) != 0) ...bad --db...
 *   int rc = runner_check_cmd(&tree, lab, &o);   // prints, records progress
 * or, to get the verdicts without printing (grade):
 *   struct runner_result r;
 *   runner_check_run(&tree, lab, &o, &r); ... runner_result_free(&r);
 */
#ifndef HOTROW_RUNNER_CHECK_H
#define HOTROW_RUNNER_CHECK_H

#include "cli/runner_tree.h"

struct runner_opts {
	int solutions;   /* build against solutions/ (instructors) */
	int live;        /* print each check as it finishes */
};

enum runner_verdict { RUNNER_PASSED, RUNNER_FAILED, RUNNER_SKIPPED };

struct runner_check {
	char name[160];            /* "like_post__exact_under_threads/sqlite" */
	enum runner_verdict verdict;
	char *details;             /* failure text, lines joined by '\n'; owned, may be NULL */
	char where[200];           /* "tests/labs/...c:42" from cmocka, or "" */
	char hint[128];            /* its "HINT: tag" tags, space separated, or "" */
	double seconds;            /* from its RUN line to its verdict */
};

struct runner_result {
	int built;                 /* 0: the build failed; build_log says why */
	int interrupted;           /* the build was killed (Ctrl-C), not refused */
	char *build_log;           /* make's and the compiler's output; owned, may be NULL */
	char *notices;             /* NOTICE lines of the harness; owned, may be NULL */
	char *stray;               /* other output outside any check; owned, may be NULL */
	struct runner_check *checks;  /* in the order they ran; owned */
	size_t n;
	int passed, failed, skipped;
	int status;                /* test binary: exit code, or 128 + signal */
};

/* Point the lab tests at one database: "sqlite:..." runs only the SQLite
 * checks; a postgres:// or postgresql:// URL or a conninfo ("host=...")
 * runs only the PostgreSQL checks against it (HOTROW_LAB_ONLY and
 * HOTROW_PG_URL are set in this process's environment, which the test
 * binaries inherit). NULL changes nothing. Returns 0, or -1 when url is not
 * a database URL (nothing set). */
int runner_db_env(const char *url);

/* Run `make -s TARGET` (relative to the kit root) with the build's output
 * in *log (caller frees; NULL when nothing was printed). Returns 0 when the
 * target is up to date, -2 when make was killed by a signal, -1 when it
 * failed. */
int runner_build(const struct runner_tree *t, const char *target, char **log);

/* Print a build log without make's own "make: ***" lines. */
void runner_build_log_print(FILE *out, const char *log);

/* Build and run one lab's tests. Returns 0 when the suite ran (r holds the
 * verdicts; r->built == 0 when it did not compile), -1 when the test binary
 * could not be started (r->stray says why). r is always filled and must be
 * freed with runner_result_free. */
int runner_check_run(const struct runner_tree *t, const struct runner_lab *l, const struct runner_opts *o,
                  struct runner_result *r);
void runner_result_free(struct runner_result *r);

/* Read a whole suite's output (what runner_check_run reads as it streams)
 * into r, as if the build had succeeded; for tests. Free r afterwards. */
void runner_result_parse(struct runner_result *r, const char *output);

/* `hotrow lab check`: run, print every check, the first failure's hint and
 * what to do next, and record progress (not with --solutions). Returns the
 * exit code: 0 when every check that ran passed, 1 otherwise. */
int runner_check_cmd(const struct runner_tree *t, const struct runner_lab *l, const struct runner_opts *o);

#endif
