/*
 * opt.h: the kit's one command-line parser. Every front end and driver
 * describes its options once, in a table; parsing (through getopt_long),
 * the range checks, the error lines and --help all come from that table,
 * so they never disagree. util/ depends on libc alone.
 *
 * Interface:
 *   int threads = 16; bool json = false;
 *   const struct opt rows[] = {
 *       { .name = "threads", .short_name = 't', .arg = "T", .kind = OPT_INT,
 *         .dest = &threads, .min = 1, .max = 256, .help = "clients (16)" },
 *       { .name = "json", .kind = OPT_FLAG, .dest = &json, .help = "one JSON object" },
 *   };
 *   const struct opt_table t[] = { { .rows = rows, .n = 2 } };
 *   const struct opt_cmd cmd = { .name = "hotrow x", .tables = t, .ntables = 1 };
 *   int first;
 *   int rc = opt_parse(&cmd, argc, argv, &first);
 *   if (rc != OPT_OK)
 *       return rc == OPT_HELP ? 0 : 2;
 *   argv[first..argc-1] are the words after "--", if any.
 *
 * Each option takes "--name VALUE" or "--name=VALUE" (and "-x VALUE" or
 * "-xVALUE" with a short letter). A flag takes no value, or "=on"/"=off".
 * Names must be given whole (getopt_long's abbreviations are refused).
 * --help and -h print the usage from the table unless a row takes them.
 * A destination keeps what it holds unless its option is given; given
 * twice, the last value wins (a custom row may collect every one instead).
 * A file row is checked as it is parsed, so a directory, a FIFO or
 * /dev/zero given for a file is refused before the command does anything:
 * "NAME: --csv /tmp: is a directory, not a file".
 * Words that are not options go, in order, to cmd->positional; without one
 * they are an error. Nothing is allocated: a string value points into argv,
 * and getopt_long may reorder argv. opt_parse may be called again, in the
 * same process, on another argv (it resets getopt's state); it uses
 * getopt's globals, so one thread at a time.
 */
#ifndef HOTROW_UTIL_OPT_H
#define HOTROW_UTIL_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What opt_parse() returns; OPT_BAD is also a command's exit status for
 * bad usage. */
enum {
	OPT_OK = 0,      /* every option parsed: run */
	OPT_HELP = 1,    /* --help: the usage is printed on cmd->out, do not run */
	OPT_BAD = 2,     /* bad usage: one line on cmd->err, do not run */
};

enum opt_kind {
	OPT_FLAG,        /* bool: true when given ("=off" sets false) */
	OPT_STRING,      /* const char *: any text but the empty one */
	OPT_INT,         /* int: a whole number (decimal digits) in [min, max] */
	OPT_DOUBLE,      /* double: a finite number in [min, max] */
	OPT_U64,         /* uint64_t: a whole number from 0 up */
	OPT_CHOICE,      /* int (or an enum): the value of the word given */
	OPT_FILE_IN,     /* const char *: a regular file to read, of at most max
	                    bytes (max 0: any size); util_file_check_in */
	OPT_FILE_OUT,    /* const char *: where a file can be written (not a
	                    directory, FIFO or device); util_file_check_out */
	OPT_DIR_OUT,     /* const char *: a directory to write into, or one
	                    that can be made; util_file_check_dir */
	OPT_CUSTOM,      /* fn reads the value */
	OPT_USAGE,       /* --help: prints the usage, opt_parse returns OPT_HELP */
};

/* One word of an OPT_CHOICE and the value it stores. */
struct opt_choice {
	const char *word;
	int value;
};

struct opt;

/* Reads value into dest (ctx is the row's). Returns 0, or -1 to refuse
 * it; it may then replace what the error says the option accepts (why,
 * prefilled with the row's accepts) and must leave dest as it was. */
typedef int opt_custom_fn(void *dest, const char *value, void *ctx, char *why, size_t whylen);

/* One option, one row of a command's table. */
struct opt {
	const char *name;          /* the long name, without dashes: "threads" */
	char short_name;           /* 't' for -t; 0 none */
	const char *arg;           /* the value's word in help: "T"; NULL: a flag */
	enum opt_kind kind;
	void *dest;                /* where the value goes (or see opt_table.base) */
	size_t off;                /* with a table base: dest is base + off */
	double min, max;           /* OPT_INT and OPT_DOUBLE: bounds included ... */
	bool above_min;            /* ... but min itself refused */
	const struct opt_choice *choices;   /* OPT_CHOICE: ended by a NULL word */
	opt_custom_fn *fn;         /* OPT_CUSTOM */
	void *ctx;                 /* passed to fn */
	bool early;                /* applied before every other row, wherever it
	                              stands (a scenario the others then change) */
	const char *accepts;       /* what the error says it accepts; NULL: made
	                              from the kind, range and choices */
	const char *help;          /* for --help, '\n' starts a line under the
	                              first; NULL: a row --help does not show */
};

/* Rows with an optional heading above them in --help. */
struct opt_table {
	const char *heading;       /* printed as it is, on a line of its own; NULL none */
	const struct opt *rows;
	size_t n;
	void *base;                /* set: every row's destination is base + off */
	bool *seen;                /* set: seen[i] becomes true when rows[i] is given */
};

/* A command: its name, its tables, and the text around the options. */
struct opt_cmd {
	const char *name;          /* "hotrow sim": starts the usage and every error */
	const char *usage;         /* after the name on the usage line; NULL: "[--name ARG]..." */
	const char *header;        /* printed as it is after the usage line; NULL none */
	const char *footer;        /* printed as it is after the options; NULL none */
	const struct opt_table *tables;
	size_t ntables;
	/* a word that is not an option: 0, or -1 with a message in err */
	int (*positional)(const char *word, void *ctx, char *err, size_t errlen);
	void *ctx;                 /* passed to positional */
	FILE *out, *err;           /* usage and errors; NULL: stdout and stderr */
};

/* Parse argv[1..argc-1] against cmd's tables: OPT_OK, with *rest (if not
 * NULL) the index of the first word after "--" (argc when none); OPT_HELP
 * after printing the usage; or OPT_BAD after printing one line, "NAME:
 * --name accepts WORDS, not 'VALUE'", "NAME: --name needs a value: WORDS",
 * "NAME: unknown option '--x' (NAME --help lists them)" or the positional
 * callback's message. Options before the one refused may be stored. */
int opt_parse(const struct opt_cmd *cmd, int argc, char **argv, int *rest);

/* Apply one row of t by name ("rows") to value, as if "--name=value" were
 * given. 0, or -1 with one line in err, "--name accepts WORDS, not 'V'",
 * or "--name is not an option" for a name not in t. */
int opt_set(const struct opt_table *t, const char *name, const char *value,
            char *err, size_t errlen);

/* Print the usage: the usage line, the header, each table's heading and
 * a line per shown row (left column "-x, --name ARG", then its help), then
 * the footer. */
void opt_usage(const struct opt_cmd *cmd, FILE *f);

#endif
