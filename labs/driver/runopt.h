/*
 * runopt.h: the options of a lab driver (`hotrow lab run NN`), from a
 * table of util/opt rows.
 *
 * A driver describes each option once, in a row (util/opt.h): its name,
 * the word shown for its value, the kind of value, where the value goes,
 * the range it may take and a help text. kit_runopt_parse() parses argv
 * with that table through util/opt, and --help prints the usage from the
 * same rows, so the two never disagree. Every driver takes --db, --threads
 * and --seconds: KIT_RUNOPT_DB, _THREADS and _SECONDS give their rows, with
 * the limits `hotrow lab run` checks before it builds anything
 * (kit_load_limits in kit/load.h), the same everywhere.
 *
 * Interface:
 *   struct opts o = { "sqlite:.hotrow/lab04.db", 16, 5, 100 };  // defaults
 *   const struct opt table[] = {
 *       KIT_RUNOPT_DB(&o.url, "database (default sqlite:.hotrow/lab04.db)"),
 *       KIT_RUNOPT_THREADS(&o.threads, "concurrent clients, 1..256 (default 16)"),
 *       KIT_RUNOPT_SECONDS(&o.seconds, "length of each run (default 5)"),
 *       { .name = "flush-ms", .arg = "F", .kind = OPT_INT, .dest = &o.flush_ms,
 *         .min = 1, .max = 60000, .help = "the flusher's interval, 1..60000 ms (default 100)" },
 *   };
 *   const struct kit_runopt_spec spec = { .cmd = "hotrow lab run 04", .opts = table,
 *                                         .n = sizeof table / sizeof table[0] };
 *   int rc = kit_runopt_parse(&spec, argc, argv);
 *   if (rc != KIT_RUNOPT_OK)
 *       return rc == KIT_RUNOPT_HELP ? 0 : 2;
 * The database may come from HOTROW_RUN_DB instead of --db (how `hotrow lab
 * run` passes it: a password in argv is on every process listing).
 * A destination keeps the default it holds unless its option is given; when
 * an option is given twice, the last one wins. Nothing is allocated: a
 * string value points into argv.
 */
#ifndef HOTROW_DRIVER_RUNOPT_H
#define HOTROW_DRIVER_RUNOPT_H

#include <stddef.h>
#include <stdio.h>

#include "kit/load.h"
#include "util/opt.h"

/* What kit_runopt_parse() returns (util/opt's codes); BAD is also the
 * driver's exit status for bad usage. */
enum {
	KIT_RUNOPT_OK = OPT_OK,       /* every option parsed: run */
	KIT_RUNOPT_HELP = OPT_HELP,   /* --help or -h: the usage is printed, do not run */
	KIT_RUNOPT_BAD = OPT_BAD,     /* bad usage: one line on the error stream, do not run */
};

/* A driver's options: the command that prefixes usage and errors, the
 * table, and a line or more printed after the options by --help. */
struct kit_runopt_spec {
	const char *cmd;         /* "hotrow lab run 04" */
	const struct opt *opts;
	size_t n;                /* rows in opts */
	const char *footer;      /* printed as it is after the options; NULL: none */
	FILE *out, *err;         /* where usage and errors go; NULL: stdout and stderr */
};

/* The three options every driver takes. --threads and --seconds take
 * their range and words from kit_load_limits (a table inside a function
 * may be filled from it). */
#define KIT_RUNOPT_DB(var, help_text) \
	{ .name = "db", .arg = "URL", .kind = OPT_STRING, .dest = (var), \
	  .accepts = "a database URL", .help = (help_text) }
#define KIT_RUNOPT_LIMIT(which, word, k, var, help_text) \
	{ .name = kit_load_limits[which].name + 2, .arg = (word), .kind = (k), .dest = (var), \
	  .min = kit_load_limits[which].min, .max = kit_load_limits[which].max, \
	  .above_min = kit_load_limits[which].above_min, \
	  .accepts = kit_load_limits[which].accepts, .help = (help_text) }
#define KIT_RUNOPT_THREADS(var, help_text) \
	KIT_RUNOPT_LIMIT(KIT_LOAD_LIMIT_THREADS, "T", OPT_INT, var, help_text)
#define KIT_RUNOPT_SECONDS(var, help_text) \
	KIT_RUNOPT_LIMIT(KIT_LOAD_LIMIT_SECONDS, "S", OPT_DOUBLE, var, help_text)

/* Parse argv[1..argc-1] into the table's destinations (util/opt's
 * opt_parse; a driver takes no other words). Returns KIT_RUNOPT_OK;
 * KIT_RUNOPT_HELP after printing the usage on spec->out for --help or -h;
 * or KIT_RUNOPT_BAD after printing one line on spec->err, such as
 * "CMD: --threads accepts a whole number from 1 to 256, not '300'". */
int kit_runopt_parse(const struct kit_runopt_spec *spec, int argc, char **argv);

#endif
