/*
 * runopt.h: the options of a lab driver (`hotrow lab run NN`), from a table.
 *
 * A driver describes each option once, in a table row: its name, the word
 * shown for its value, the kind of value, where the value goes, the range
 * it may take, what it accepts in words (for the error) and a help text
 * (for --help). kit_runopt_parse() walks argv with that table, and --help
 * prints the usage from the same rows, so the two never disagree. Every
 * driver takes --db, --threads and --seconds: KIT_RUNOPT_DB, _THREADS and
 * _SECONDS give their rows, with the same ranges and wording everywhere.
 *
 * Interface:
 *   struct opts o = { "sqlite:.hotrow/lab04.db", 16, 5, 100 };  // defaults
 *   const struct kit_runopt table[] = {
 *       KIT_RUNOPT_DB(&o.url, "database (default sqlite:.hotrow/lab04.db)"),
 *       KIT_RUNOPT_THREADS(&o.threads, "concurrent clients, 1..256 (default 16)"),
 *       KIT_RUNOPT_SECONDS(&o.seconds, "length of each run (default 5)"),
 *       { .name = "--flush-ms", .arg = "F", .kind = KIT_RUNOPT_INT, .dest = &o.flush_ms,
 *         .min = 1, .max = 60000, .accepts = "a whole number of milliseconds from 1 to 60000",
 *         .help = "the flusher's interval, 1..60000 ms (default 100)" },
 *   };
 *   const struct kit_runopt_spec spec = { .cmd = "hotrow lab run 04", .opts = table,
 *                                         .n = sizeof table / sizeof table[0] };
 *   int rc = kit_runopt_parse(&spec, argc, argv);
 *   if (rc != KIT_RUNOPT_OK)
 *       return rc == KIT_RUNOPT_HELP ? 0 : 2;
 * A destination keeps the default it holds unless its option is given; when
 * an option is given twice, the last one wins. Nothing is allocated: a
 * string value points into argv.
 */
#ifndef HOTROW_DRIVER_RUNOPT_H
#define HOTROW_DRIVER_RUNOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kit/load.h"

/* What kit_runopt_parse() returns; BAD is also the driver's exit status
 * for bad usage. */
enum {
	KIT_RUNOPT_OK = 0,       /* every option parsed: run */
	KIT_RUNOPT_HELP = 1,     /* --help or -h: the usage is printed, do not run */
	KIT_RUNOPT_BAD = 2,      /* bad usage: one line on the error stream, do not run */
};

enum kit_runopt_kind {
	KIT_RUNOPT_STRING,       /* dest is a const char **, any text */
	KIT_RUNOPT_INT,          /* dest is an int *, a whole number in [min, max] */
	KIT_RUNOPT_DOUBLE,       /* dest is a double *, a number in [min, max] */
};

/* One option, one row of a driver's table. */
struct kit_runopt {
	const char *name;        /* "--threads" */
	const char *arg;         /* what the usage calls its value: "T" */
	enum kit_runopt_kind kind;
	void *dest;              /* where the value goes, as kind says */
	double min, max;         /* the range, bounds included (not for STRING) */
	bool above_min;          /* min itself is refused: the value must lie above it */
	const char *accepts;     /* ends "--threads accepts ..." when the value is missing or bad */
	const char *help;        /* for --help; a '\n' starts a line under the first */
};

/* A driver's options: the command that prefixes usage and errors, the
 * table, and a line or more printed after the options by --help. */
struct kit_runopt_spec {
	const char *cmd;         /* "hotrow lab run 04" */
	const struct kit_runopt *opts;
	size_t n;                /* rows in opts */
	const char *footer;      /* printed as it is after the options; NULL: none */
	FILE *out, *err;         /* where usage and errors go; NULL: stdout and stderr */
};

/* The three options every driver takes. */
#define KIT_RUNOPT_DB(var, help_text) \
	{ .name = "--db", .arg = "URL", .kind = KIT_RUNOPT_STRING, .dest = (var), \
	  .accepts = "a database URL", .help = (help_text) }
#define KIT_RUNOPT_THREADS(var, help_text) \
	{ .name = "--threads", .arg = "T", .kind = KIT_RUNOPT_INT, .dest = (var), \
	  .min = 1, .max = KIT_LOAD_MAX_THREADS, .accepts = "a whole number from 1 to 256", \
	  .help = (help_text) }
#define KIT_RUNOPT_SECONDS(var, help_text) \
	{ .name = "--seconds", .arg = "S", .kind = KIT_RUNOPT_DOUBLE, .dest = (var), \
	  .min = 0, .max = 3600, .above_min = true, \
	  .accepts = "a number of seconds above 0, at most 3600", .help = (help_text) }

/* Parse argv[1..argc-1] as "--name value" pairs into the table's
 * destinations. Returns KIT_RUNOPT_OK; KIT_RUNOPT_HELP after printing the
 * usage on spec->out for --help or -h; or KIT_RUNOPT_BAD after printing one
 * line on spec->err: "CMD: unknown option X (try --help)" for a name not
 * in the table, or "CMD: --name accepts ..." for a value that is missing,
 * empty, malformed or out of range. Options before the one refused may
 * already have been stored; nothing else changes. */
int kit_runopt_parse(const struct kit_runopt_spec *spec, int argc, char **argv);

/* Print the usage: "usage: CMD [--name ARG]...", a line per option with
 * its help, then the footer. */
void kit_runopt_usage(const struct kit_runopt_spec *spec, FILE *f);

#endif
