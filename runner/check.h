/*
 * check.h: build a lab's tests against the student's code, run them, and
 * collect one verdict per check.
 *
 * The build goes through the kit's own make rules (labs/module.mk), so what
 * a student runs is what CI runs: build/labs/NN-name/test-exercise, or
 * test-solution with --solutions. A compile error is not a crash: the
 * result says "not built" and carries the compiler's messages.
 *
 * Before anything is linked, the student's sources and objects are
 * audited (runner/audit.h); refused code is not linked or run, and every
 * check fails with the one line that says why.
 *
 * Verdicts never come from what the student's code prints:
 *   - the checks expected are known before anything runs: make writes the
 *     lab's test sources, preprocessed, to build/labs/NN-name/checks.i and
 *     the runner reads the names of the CMUnitTest array there;
 *   - the verdicts come from the harness on a pipe of their own (the report
 *     channel of tests/harness/labtest.h), not from stdout;
 *   - a check that never ended (the process died, exited early or timed
 *     out) fails, and says how the process ended; the maximum never shrinks;
 *   - a check that sent any failure detail fails, whatever its end says;
 *     a skip counts as a skip only when the runner did not give the
 *     check's engine (runner_engines_available), else it fails.
 * The test binary's stdout and stderr are kept per check (bounded: the
 * first and last part, with how much was cut) and shown with a failure.
 *
 * The race pass: when every check passed, the checks that started threads
 * (the harness says so on its channel: "threads N") run again in the
 * SAN=thread build of the same test binary, each in a process of its own
 * (so it is the first to call the lab's code there, and a cache filled on
 * first use is filled under its threads), the others left out. The first
 * ThreadSanitizer report ends that run and fails the check it came from,
 * with both accesses named; nothing else from that run counts (a
 * check slower than its limit there, a build that cannot be made), so it
 * can only find races, never pass a check. --no-races (o->no_races)
 * leaves it out.
 *
 * The test binary is copied to a directory of this invocation's own
 * (.hotrow/run/PID/) under a lock before it runs, so two checks at once
 * neither rebuild it under each other nor fail with "Text file busy".
 *
 * Interface:
 *   struct runner_opts o = {.timeout_s = RUNNER_TIMEOUT_S};
 *   if (runner_db_env(url, &o) != 0) ...bad --db...
 *   struct runner_result r;
 *   runner_check_run(&tree, lab, &o, &r); ... runner_result_free(&r);
 * (runner_check_cmd in show.h prints it all for `hotrow lab check`, each
 * check as it ends through o.on_check.)
 */
#ifndef HOTROW_RUNNER_CHECK_H
#define HOTROW_RUNNER_CHECK_H

#include "runner/parts.h"
#include "runner/proc.h"
#include "runner/tree.h"

#define RUNNER_TIMEOUT_S 120   /* per test binary, unless --timeout */

struct runner_check;

struct runner_opts {
	int solutions;        /* build against solutions/ (instructors) */
	int live;             /* print the build's progress and the notices as they come */
	/* Called as each check ends (with live set), to show it: the runner
	 * that runs the checks does not know how they are shown (show.h). */
	void (*on_check)(const struct runner_check *c);
	double timeout_s;     /* per test binary; the build gets 4 times as long */
	const char *db;       /* --db URL, or NULL */
	const char *db_from;  /* where the PostgreSQL URL came from ("--db", "HOTROW_PG_URL") */
	int only_sqlite;      /* --db sqlite: the PostgreSQL checks are not wanted */
	int only_mysql;       /* --db mysql://...: only the MariaDB checks are wanted */
	const struct runner_part *part;   /* --part: only its checks are expected and run */
	int no_races;         /* --no-races: no second run under ThreadSanitizer */
	/* `lab watch`: descriptors to answer while building and checking
	 * (see runner_child); watched() returning non-zero stops the check. */
	int watch_fd[2];
	int (*watched)(void *watch_arg, int fd);
	void *watch_arg;
};

enum runner_verdict { RUNNER_PASSED, RUNNER_FAILED, RUNNER_SKIPPED };

/* The engines a check needs, from its entry in the test table (its setup
 * function), never from its name; 0: none (a check of plain C). */
#define RUNNER_ENGINE_SQLITE 1u
#define RUNNER_ENGINE_PG     2u
#define RUNNER_ENGINE_REDIS  4u
#define RUNNER_ENGINE_MYSQL  8u   /* MariaDB (labtest_setup_mysql: "/mysql" checks) */
#define RUNNER_ENGINE_ALL    15u
/* Engines a student may leave out: a check skipped only for want of one
 * neither blocks "done" nor counts in the maximum of `lab grade`. */
#define RUNNER_ENGINES_OPTIONAL RUNNER_ENGINE_MYSQL

struct runner_check {
	char name[160];            /* "like_post__exact_under_threads/sqlite" */
	enum runner_verdict verdict;
	int state;                 /* 0 not started, 1 started, 2 ended */
	char *details;             /* failure text, lines joined by '\n'; owned, may be NULL */
	char *output;              /* what it printed (bounded); owned, may be NULL */
	char where[200];           /* "tests/labs/...c:42", or "" */
	char hint[128];            /* its hint tags, space separated, or "" */
	char *said;                /* what the check itself said (lt_say), lines; owned, may be NULL */
	unsigned engines;          /* RUNNER_ENGINE_* it needs */
	double seconds;            /* from its start to its verdict */
	int threads;               /* it started threads (the harness says): the race pass runs it */
};

struct runner_result {
	int built;                 /* 0: the build failed (build_log says why) or was refused */
	char *refused;             /* why the audit refused the code (one line); owned, or NULL */
	unsigned available;        /* RUNNER_ENGINE_* the runner gave the checks */
	int interrupted;           /* the runner was stopped (Ctrl-C, SIGTERM) */
	int cancelled;             /* o->watched() stopped it */
	int build_timed_out;       /* the build was killed at its time limit */
	char *build_log;           /* make's and the compiler's output; owned, may be NULL */
	char *notices;             /* the harness's notices; owned, may be NULL */
	char *stray;               /* output outside any check; owned, may be NULL */
	struct runner_check *checks;   /* every check expected, in order; owned */
	char *dropped;             /* --part: the other parts' checks, one a line (not run); owned */
	size_t n;
	int passed, failed, skipped;
	struct runner_exit exit;   /* how the test binary ended */
	char ended[160];           /* that, in words, when it was not a normal end; or "" */
	const char *running;       /* the check that was running when it ended, or NULL */
};

/* Point the lab tests at one database: "sqlite:..." runs only the SQLite
 * checks; a postgres:// or postgresql:// URL or a conninfo ("host=...")
 * runs only the PostgreSQL checks against it, and a server it cannot
 * reach fails them instead of skipping them (HOTROW_LAB_ONLY,
 * HOTROW_PG_URL, HOTROW_PG_FROM and HOTROW_REQUIRE_PG are set in this
 * process's environment, which the test binaries inherit); a mysql:// or
 * mariadb:// URL does the same for the MariaDB checks (HOTROW_LAB_ONLY=mysql,
 * HOTROW_MYSQL_URL, HOTROW_REQUIRE_MYSQL). NULL changes nothing. Fills
 * o->db, o->db_from, o->only_sqlite and o->only_mysql. Returns 0, or -1
 * when url is not a database URL (nothing set). */
int runner_db_env(const char *url, struct runner_opts *o);

/* Whether url names a MariaDB server (mysql:// or mariadb://). */
int runner_is_mysql_url(const char *url);

/* Run `make -s TARGETS` (relative to the kit root; targets space
 * separated) within timeout_s (0: none), answering o's watched
 * descriptors when o is not NULL, with the build's output in *log
 * (caller frees; NULL when nothing was printed). Returns 0 when the targets
 * are up to date, -2 when the runner was stopped, -3 when the time limit
 * passed, -1 when the build failed. */
int runner_build(const struct runner_tree *t, const char *targets, double timeout_s,
                 const struct runner_opts *o, char **log);

/* Build what runner_audit reads: the lab's list of checks and the objects
 * of exercises/NN-name/ (solutions/ with o->solutions), from the files as
 * they are (runner_files_fresh). Returns as runner_build does. */
int runner_build_objects(const struct runner_tree *t, const struct runner_lab *l,
                         const struct runner_opts *o, double timeout_s, char **log);

/* Print a build log without make's own "make: ***" lines. */
void runner_build_log_print(FILE *out, const char *log);

/* The names in the CMUnitTest arrays of preprocessed C source text, in
 * order, into *names (caller frees each and the array), and, when engines
 * is not NULL, the RUNNER_ENGINE_* each needs into *engines (caller
 * frees). Returns how many, or -1 when out of memory. */
int runner_checks_parse(const char *source, char ***names, unsigned **engines);

/* The engines the checks get in this process's environment (see
 * runner_db_env): SQLite unless only another engine was asked for;
 * PostgreSQL when a URL is set or required; Redis beside SQLite when
 * HOTROW_REDIS_URL is set or required; MariaDB when HOTROW_MYSQL_URL is
 * set or HOTROW_REQUIRE_MYSQL=1. HOTROW_LAB_ONLY=sqlite, postgres or mysql
 * keeps one. A check skipped although every engine it needs was given
 * did not pass: it fails. */
unsigned runner_engines_available(void);

/* "PostgreSQL", "SQLite and Redis", "SQLite, PostgreSQL and MariaDB" for
 * a RUNNER_ENGINE_* mask; "no engine" for 0. */
const char *runner_engines_str(unsigned engines);

/* How many of r's checks were skipped only for want of an optional engine
 * (RUNNER_ENGINES_OPTIONAL) the runner did not give: MariaDB. */
int runner_result_optional_skips(const struct runner_result *r);

/* Build and run one lab's tests. Returns 0 when the suite ran (r holds the
 * verdicts; r->built == 0 when it did not compile), -1 when the test binary
 * could not be started (r->stray says why). r is always filled and must be
 * freed with runner_result_free. */
int runner_check_run(const struct runner_tree *t, const struct runner_lab *l,
                     const struct runner_opts *o, struct runner_result *r);
void runner_result_free(struct runner_result *r);

/* Feed one report line (see tests/harness/labtest.h) into r, as
 * runner_check_run does while the suite runs; for tests. r->checks must
 * hold the expected checks. */
void runner_result_report(struct runner_result *r, char *line);

/* After the process ended: every check not ended fails, saying how the
 * process ended (status_text), and the counts are made; for tests too. */
void runner_result_finish(struct runner_result *r, const char *status_text);

#endif
