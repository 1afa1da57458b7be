/*
 * main.c: build/hotrow, one binary with subcommands.
 *
 * `hotrow` alone opens the TUI when stdout is a terminal and prints the
 * usage otherwise; `hotrow CMD ...` runs a subcommand (see cmd.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "runner/tree.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *what;
} commands[] = {
	{"sim",   cmd_sim,   "run the simulator headless: a table, --json or --csv"},
	{"tui",   cmd_tui,   "watch lock queues and the pool fill up, live"},
	{"demo",  cmd_demo,  "play a scripted tour for a workshop (default: viral-post)"},
	{"lab",   cmd_lab,   "the guided labs: list, check, hint, watch, run, grade, reset"},
	{"slides", cmd_slides, "present the workshop deck; x runs a slide's demo command"},
	{"class", cmd_class, "class mode: one PostgreSQL server for a room, a place per student"},
	{"bench", cmd_bench, "benchmarks: the engine vs SimPy, one hot row vs pgbench"},
	{"top",   cmd_top,   "a real PostgreSQL's row locks and their queues, live"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

int cli_size_opt(void *dest, const char *v, void *ctx, char *why, size_t whylen)
{
	struct cli_size *s = dest;
	char *x;
	long w, h;

	(void)ctx, (void)why, (void)whylen;
	errno = 0;
	w = strtol(v, &x, 10);
	h = s->h;
	if (x != v && *x == 'x') {
		v = x + 1;
		h = strtol(v, &x, 10);
	}
	if (x == v || *x || errno || w < s->min_w || w > 1000 || h < s->min_h || h > 1000)
		return -1;
	s->w = (int)w, s->h = (int)h;
	return 0;
}

int cli_colour(int no_colour)
{
	const char *env = getenv("NO_COLOR");
	return !no_colour && (env == NULL || !*env);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hotrow [CMD] [options]\n"
		"\n"
		"hotrow teaches hot rows: one database row updated thousands of times a\n"
		"second, why it caps at 1 / lock-hold-time, and the fixes.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-7s %s\n", commands[i].name, commands[i].what);
	fprintf(out,
		"\n"
		"`hotrow CMD --help` lists a command's options. With no command,\n"
		"hotrow opens the TUI on a terminal.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		if (isatty(STDOUT_FILENO) && isatty(STDIN_FILENO))
			return cmd_tui(argc, argv);
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	runner_set_self(argv[0]);   /* the lab runner suggests commands with it */
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "hotrow: unknown command '%s' (try:", argv[1]);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(stderr, "%s %s", i > 0 ? "," : "", commands[i].name);
	fprintf(stderr, "; hotrow --help lists them)\n");
	return 2;
}
