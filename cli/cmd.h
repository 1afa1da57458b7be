/*
 * cmd.h: the subcommands of build/hotrow.
 *
 * Interface: main() picks a subcommand by name and calls its cmd_* function
 * with argv[0] set to the subcommand's name. Each returns the process exit
 * code: 0 success, 1 the work failed (a test, a database error), 2 bad usage
 * (after printing one line naming the option and what it accepts).
 * Every subcommand answers --help on stdout with exit 0.
 */
#ifndef HOTROW_CLI_CMD_H
#define HOTROW_CLI_CMD_H

#include <stddef.h>

#include "util/opt.h"

int cmd_sim(int argc, char **argv);    /* cli/sim.c: headless engine runs */
int cmd_tui(int argc, char **argv);    /* cli/tui.c: the animated screen */
int cmd_demo(int argc, char **argv);   /* cli/tui.c: a scripted tour */
int cmd_lab(int argc, char **argv);    /* cli/lab.c: the lab runner */
int cmd_class(int argc, char **argv);  /* cli/class.c: one PostgreSQL for a room */
int cmd_bench(int argc, char **argv);  /* cli/bench.c: side-by-side benchmarks */
int cmd_slides(int argc, char **argv); /* cli/slides.c: the workshop decks */
int cmd_top(int argc, char **argv);    /* cli/top.c: a real PostgreSQL's lock queues */

/* cli/top.c, for `hotrow lab run NN --top`: run the driver argv (argv[0]
 * its path) with its output in log_path, and the live screen of the
 * PostgreSQL at url beside it until the driver exits (q stops both). Then
 * print the log. Returns the driver's exit code (130 when stopped). */
int cmd_top_beside(char *const *argv, const char *url, const char *log_path);

/* cli/main.c: the size of a screen that --dump lays out, for the
 * commands' util/opt tables: a custom row whose dest is a struct cli_size
 * holding the defaults and the least width and height allowed.
 *   { .name = "size", .arg = "WxH", .kind = OPT_CUSTOM, .fn = cli_size_opt,
 *     .dest = &o->size, .accepts = "WxH, e.g. 120x40 (...)", ... }
 * "WxH" sets both, "W" the width alone; each at most 1000. */
struct cli_size {
	int w, h;
	int min_w, min_h;
};
int cli_size_opt(void *dest, const char *v, void *ctx, char *why, size_t whylen);

/* The rows of every live screen for its glyphs and colours, for a util/opt
 * table: --ascii into *ascii, --no-color (or --no-colour) into *no_colour;
 * cli_colour then says whether to draw in colour (NO_COLOR counts too). */
#define CLI_SCREEN_ROWS(ascii, no_colour) \
	{ .name = "ascii", .kind = OPT_FLAG, .dest = (ascii), \
	  .help = "ASCII only, for terminals without UTF-8" }, \
	{ .name = "no-color", .kind = OPT_FLAG, .dest = (no_colour), \
	  .help = "no colour (NO_COLOR in the environment does the same)" }, \
	{ .name = "no-colour", .kind = OPT_FLAG, .dest = (no_colour) }
int cli_colour(int no_colour);

#endif
