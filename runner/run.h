/*
 * run.h: `hotrow lab run`, a lab's driver over the student's code.
 *
 * Builds build/labs/NN-name/run-exercise (or run-solution) through make,
 * then runs it as a child in a process group of its own, its output going
 * straight to the terminal: a crash of the driver is reported (with the
 * signal's name), never a crash of hotrow; Ctrl-C ends it and everything
 * it started. On PostgreSQL each lab's driver works in a schema of its
 * own, labNN, made on first use and named in the URL's search_path, so
 * one lab's tables never break another's run; on SQLite each lab has its
 * own file (the drivers' default, sqlite:.hotrow/labNN.db).
 *
 * Interface:
 *   struct runner_run_args a = {.db = url, .threads = "16", .seconds = "5"};
 *   int rc = runner_run(&tree, lab, &a);
 */
#ifndef HOTROW_RUNNER_RUN_H
#define HOTROW_RUNNER_RUN_H

#include "runner/tree.h"

struct runner_run_args {
	const char *db;          /* --db URL, or NULL */
	const char *db_from;     /* "--db" or "HOTROW_PG_URL" */
	const char *threads;     /* as typed; checked by runner_run_check */
	const char *seconds;
	const char *store;       /* --store URL (Lab 04's driver), or NULL */
	int solutions;
	double timeout_s;        /* 0: none */
	int nextra;              /* what followed "--": the driver's own options */
	char **extra;
	/* When set, run the built driver through this instead (hotrow lab run
	 * --top: the live screen beside it). argv is the driver's command line,
	 * url the database it was given, log_path where its output goes; the
	 * result is the exit code. The runner stays free of the screen. */
	int (*beside)(char *const *argv, const char *url, const char *log_path);
};

/* Check --threads and --seconds before anything is built; prints the
 * usage error. Returns 0, or 2. */
int runner_run_check(const struct runner_run_args *a);

/* Build and run the driver. Returns the exit code: the driver's (0 or 1),
 * 1 when it could not be built or died, 130 when stopped by Ctrl-C. */
int runner_run(const struct runner_tree *t, const struct runner_lab *l, const struct runner_run_args *a);

#endif
