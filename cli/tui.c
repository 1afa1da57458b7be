/*
 * cli/tui.c: `hotrow tui` and `hotrow demo`, the animated screen.
 *
 * Both take the engine's options (--scenario, --strategy, --rows, --rps,
 * --hold-ms, --pool, ...) and the screen's own (--ascii, --no-color,
 * --compare, --speed). --dump prints one frame as text instead of taking
 * the terminal: `hotrow tui --dump --size 120x40 --at 5`. A non-terminal
 * stdout without --dump is a usage error pointing at `hotrow sim`.
 */
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/simconf.h"
#include "cli/simopt.h"
#include "engine/sim.h"
#include "tui/app.h"
#include "tui/compare.h"
#include "tui/screen.h"
#include "tui/term.h"
#include "tui/tour.h"
#include "util/file.h"

struct opts {
	struct sim_config cfg;
	bool dump, ascii, colour, compare, paused, help_overlay;
	struct cli_size size;       /* --dump: the frame's */
	double at_s;
	double rewind_s;            /* --rewind-to: back to this second; -1 not given */
	double speed;
	int latency;               /* enum tui_latency */
	int step;                  /* demo --dump: the tour step, 1-based; 0 none */
	int answer;                /* demo --dump --answer: 'A'..'D', '-' none, 0 not given */
	double autoplay_s;         /* demo --autoplay S: 0 not given */
	bool loop;                 /* demo --loop */
	const char *tour;
	bool list;
	struct { int presses; double at_s; } follow;  /* --follow: f pressed
	                              presses times (1 the next like, 2 the
	                              slowest), at_s into the run with --dump */
	const char *setups[TUI_CMP_MAX_FILES];   /* --setup FILE, for the compare picker */
	int nsetups;
	const char *left, *right;  /* --left, --right: compare these two setups */
};

static const char tui_header[] =
	"\n"
	"Watch one hot row live: its lock queue, the connection pool filling,\n"
	"the login page failing, and the fixes. Press ? for the keys.\n"
	"Defaults to the viral post: 2,000 likes/s (random arrivals), 2 ms\n"
	"holds, a pool of 20, and a login page sharing the pool at 100/s.\n"
	"\n";

static const char demo_header[] =
	"\n"
	"Plays a scripted tour: each step changes the scenario, says a\n"
	"sentence and plays for a while; Enter goes on, b goes back.\n"
	"TOUR is a built-in name (default viral-post) or a .tour file\n"
	"(the format is in tui/tours/README.md).\n"
	"\n";

/* --follow next|slowest[@SECONDS] */
static int follow_opt(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	struct { int presses; double at_s; } *f = dest;
	const char *at = strchr(v, '@');
	size_t n = at ? (size_t)(at - v) : strlen(v);
	char *end;

	(void)ctx, (void)why, (void)len;
	if (n == 4 && !strncmp(v, "next", 4))
		f->presses = 1;
	else if (n == 7 && !strncmp(v, "slowest", 7))
		f->presses = 2;
	else
		return -1;
	f->at_s = 0;
	if (at) {
		f->at_s = strtod(at + 1, &end);
		if (end == at + 1 || *end || !(f->at_s >= 0 && f->at_s <= 36000))
			return -1;
	}
	return 0;
}

static const struct opt_choice latencies[] = {
	{ "both", TUI_LAT_BOTH }, { "p99", TUI_LAT_P99 }, { "p50", TUI_LAT_P50 },
	{ NULL, 0 } };

/* --answer X: A to D (either case), or - for none, into an int dest. */
static int answer_opt(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	int a = (v[0] >= 'A' && v[0] <= 'D') || v[0] == '-' ? v[0]
	      : v[0] >= 'a' && v[0] <= 'd' ? v[0] - 'a' + 'A' : 0;
	(void)ctx, (void)why, (void)len;
	if (!a || v[1])
		return -1;
	*(int *)dest = a;
	return 0;
}

/* --setup FILE, repeatable: kept for the compare picker (and read once
 * the options are parsed, so a bad line is said with its file and line). */
static int setup_opt(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	struct opts *o = ctx;
	(void)dest;
	if (o->nsetups == TUI_CMP_MAX_FILES) {
		snprintf(why, len, "at most %d setup files", TUI_CMP_MAX_FILES);
		return -1;
	}
	o->setups[o->nsetups++] = v;
	return 0;
}

/* Every --setup file reads as a setup: 0, or -1 with err. */
static int setups_read(const struct opts *o, char *err, size_t len)
{
	struct sim_config c;
	char why[SIMCONF_ERR];
	for (int i = 0; i < o->nsetups; i++)
		if (simconf_load(o->setups[i], &c, why, sizeof why) < 0) {
			snprintf(err, len, "--setup %s", why);
			return -1;
		}
	return 0;
}

/* A word that is not an option: a demo's TOUR, once. */
static int tour_word(const char *w, void *ctx, char *err, size_t len)
{
	struct opts *o = ctx;
	if (o->tour) {
		snprintf(err, len, "unexpected argument '%s' (one TOUR at most)", w);
		return -1;
	}
	/* Not a built-in name but a path that exists: a file it must be (a
	 * FIFO would block the reader, /dev/zero never ends). */
	bool builtin = false;
	for (const char *const *n = tui_tour_names(); *n; n++)
		builtin |= !strcmp(*n, w);
	char why[PATH_MAX + 64];
	if (!builtin && access(w, F_OK) == 0 &&
	    util_file_check_in(w, TUI_TOUR_MAX_BYTES, why, sizeof why) != 0) {
		snprintf(err, len, "the tour %s: %s", w, why);
		return -1;
	}
	o->tour = w;
	return 0;
}

/* Parse argv into o; returns -1 to go on, else the exit code. The engine
 * options are `hotrow sim`'s own (cli/simopt.h); a demo's tour sets the
 * engine itself, so demo takes only the screen's options. */
static int parse(int argc, char **argv, bool demo, struct opts *o)
{
	char cmd_name[16], err[SIMCONF_ERR + 16];
	bool no_colour = false;
	struct simopt_given given;

	memset(o, 0, sizeof *o);
	o->size = (struct cli_size){ 120, 40, 1, 1 };
	o->at_s = 5, o->speed = 1, o->rewind_s = -1;
	sim_config_default(&o->cfg);
	sim_scenario("viral-post", &o->cfg);
	snprintf(cmd_name, sizeof cmd_name, "hotrow %s", demo ? "demo" : "tui");

	const struct opt demo_rows[] = {
		{ .name = "list", .kind = OPT_FLAG, .dest = &o->list,
		  .help = "print the built-in tours and exit" },
		{ .name = "dump", .kind = OPT_FLAG, .dest = &o->dump,
		  .help = "print one frame as text instead (no terminal)" },
		{ .name = "step", .arg = "N", .kind = OPT_INT, .dest = &o->step, .min = 1,
		  .max = 1000000, .accepts = "a step number, 1 or more",
		  .help = "with --dump: the end of step N (1-based); a step\n"
		          "that asks a question shows it, not yet played" },
		{ .name = "answer", .arg = "X", .kind = OPT_CUSTOM, .dest = &o->answer,
		  .fn = answer_opt, .accepts = "a letter from A to D, or - for none",
		  .help = "with --step: answer its question with X (A to D,\n"
		          "or - for none), play it and show the reveal" },
		{ .name = "autoplay", .arg = "S", .kind = OPT_DOUBLE, .dest = &o->autoplay_s,
		  .min = 1, .max = 3600, .accepts = "seconds from 1 to 3600",
		  .help = "unattended: a step that waits goes on after S real\n"
		          "seconds (a question closes unanswered and plays)" },
		{ .name = "loop", .kind = OPT_FLAG, .dest = &o->loop,
		  .help = "unattended, for a break screen: autoplay (every 8 s\n"
		          "unless --autoplay says) and start again after the last step" },
	};
	const struct opt tui_rows[] = {
		{ .name = "dump", .kind = OPT_FLAG, .dest = &o->dump,
		  .help = "print one frame as text instead (no terminal)" },
		{ .name = "at", .arg = "SECONDS", .kind = OPT_DOUBLE, .dest = &o->at_s, .min = 0,
		  .max = 36000, .accepts = "simulated seconds from 0 to 36000",
		  .help = "with --dump: the simulated time of the frame (5)" },
		{ .name = "follow", .arg = "next|slowest[@S]", .kind = OPT_CUSTOM,
		  .dest = &o->follow, .fn = follow_opt,
		  .accepts = "next or slowest, then @SECONDS if you like (slowest@2)",
		  .help = "follow one like as the f key does: the next to\n"
		          "arrive or the slowest in flight, chosen S simulated\n"
		          "seconds in with --dump (0), from the start live" },
		{ .name = "rewind-to", .arg = "SECONDS", .kind = OPT_DOUBLE, .dest = &o->rewind_s,
		  .min = 0, .max = 36000, .accepts = "simulated seconds from 0 to 36000",
		  .help = "with --dump: play to --at, then go back in time to\n"
		          "this second (as < and Home do) and show that frame" },
	};
	const struct opt screen_rows[] = {
		{ .name = "size", .arg = "WxH", .kind = OPT_CUSTOM, .dest = &o->size, .fn = cli_size_opt,
		  .accepts = "WxH, e.g. 120x40 (1 to 1000 each)",
		  .help = "with --dump: the frame's size (120x40)" },
		CLI_SCREEN_ROWS(&o->ascii, &no_colour),
		{ .name = "compare", .kind = OPT_FLAG, .dest = &o->compare,
		  .help = "split screen: naive beside the chosen fix, same seed" },
		{ .name = "setup", .arg = "FILE", .kind = OPT_CUSTOM, .fn = setup_opt, .ctx = o,
		  .accepts = "a setup file (hotrow sim --help: NAME = VALUE lines)",
		  .help = "a setup file the c key's picker offers beside the\n"
		          "scenarios (repeatable; the format: hotrow sim --help)" },
		{ .name = "left", .arg = "SETUP", .kind = OPT_STRING, .dest = &o->left,
		  .help = "compare from the start: SETUP on the left, one of\n"
		          "current, naive, a scenario, a --setup file" },
		{ .name = "right", .arg = "SETUP", .kind = OPT_STRING, .dest = &o->right,
		  .help = "... and on the right (both: current unless given)" },
		{ .name = "speed", .arg = "X", .kind = OPT_DOUBLE, .dest = &o->speed, .min = 0.01,
		  .max = 100, .accepts = "a factor from 0.01 to 100",
		  .help = "simulated seconds per real second (0.01 to 100; 1);\n"
		          "the title says the factor reached where it falls short" },
		{ .name = "paused", .kind = OPT_FLAG, .dest = &o->paused, .help = "start paused" },
		{ .name = "latency", .arg = "both|p99|p50", .kind = OPT_CHOICE, .dest = &o->latency,
		  .choices = latencies, .help = "which latency lines to chart" },
		{ .name = "help-overlay", .kind = OPT_FLAG, .dest = &o->help_overlay,
		  .help = "with --dump: show the ? overlay" },
	};
	const struct opt_table tables[] = {
		{ .rows = demo ? demo_rows : tui_rows,
		  .n = demo ? sizeof demo_rows / sizeof demo_rows[0] : sizeof tui_rows / sizeof tui_rows[0] },
		{ .rows = screen_rows, .n = sizeof screen_rows / sizeof screen_rows[0] },
		simopt_table(&o->cfg, &given, "\nengine options, as for `hotrow sim` (--seconds is "
		             "ignored: the\nscreen runs until you quit):"),
	};
	const struct opt_cmd cmd = {
		.name = cmd_name, .usage = demo ? "[TOUR] [options]" : "[options]",
		.header = demo ? demo_header : tui_header, .tables = tables,
		.ntables = demo ? 2 : 3,   /* a tour sets the engine itself */
		.positional = demo ? tour_word : NULL, .ctx = o,
	};
	int rc = opt_parse(&cmd, argc, argv, NULL);
	if (rc != OPT_OK)
		return rc == OPT_HELP ? 0 : 2;
	o->colour = cli_colour(no_colour);
	if (setups_read(o, err, sizeof err) < 0)
		goto usage_error;
	if (demo)
		return -1;
	/* The screen's defaults where the command line is silent: random
	 * arrivals (evenly spaced ones fall in lock step with the pool and
	 * hide the login page's failures behind an artefact of the clock), and
	 * 16 slots for sharded (one slot would show nothing). */
	if (!simopt_was_given(&given, "arrivals"))
		o->cfg.arrivals = SIM_ARRIVE_POISSON;
	if (sim_strategy_info(o->cfg.strategy)->spread && o->cfg.rows < 2 &&
	    !simopt_was_given(&given, "rows"))
		o->cfg.rows = 16;
	if (simopt_finish(&o->cfg, &given, err, sizeof err) < 0)
		goto usage_error;
	o->cfg.seconds = 0;     /* the screen runs until you quit */
	if (sim_config_check(&o->cfg, err, sizeof err) < 0)
		goto usage_error;
	if (o->rewind_s > o->at_s) {
		snprintf(err, sizeof err, "--rewind-to %g is after --at %g: rewind goes back, "
		         "give a time at or before --at", o->rewind_s, o->at_s);
		goto usage_error;
	}
	return -1;

usage_error:
	fprintf(stderr, "%s: %s\n", cmd_name, err);
	return 2;
}

static int run(struct opts *o, struct tui_tour *tour, bool demo)
{
	struct tui_app *app = tui_app_new(&o->cfg, tour, o->ascii);
	struct tui_view *v;
	int rc = 0;

	if (!app) {       /* checked before: not reached, but never a crash */
		char err[160] = "the tour's settings";
		if (!tour)
			sim_config_check(&o->cfg, err, sizeof err);
		fprintf(stderr, "hotrow %s: the engine refused %s\n", demo ? "demo" : "tui", err);
		return 2;
	}
	v = tui_app_view(app);

	tui_app_setup_files(app, o->setups, o->nsetups);
	if (o->compare)
		tui_app_compare(app, true);
	if (o->left || o->right) {
		char err[SIMCONF_ERR + 64];
		if (tui_app_compare_setups(app, o->left ? o->left : "current",
		                           o->right ? o->right : "current", err, sizeof err) < 0) {
			fprintf(stderr, "hotrow %s: --%s: %s\n", demo ? "demo" : "tui",
			        o->left ? "left" : "right", err);
			tui_app_free(app);
			return 2;
		}
	}
	if (demo && (o->autoplay_s > 0 || o->loop))
		tui_app_autoplay(app, o->autoplay_s > 0 ? o->autoplay_s : 8, o->loop);
	v->paused = o->paused;
	tui_app_set_speed(app, o->speed);
	v->latency = (enum tui_latency)o->latency;
	if (o->dump) {
		if (demo && o->step > 0) {
			tui_app_tour_goto(app, o->step - 1);
			if (o->answer > 0 && o->answer != '-' && !tui_app_tour_answer(app, o->answer)) {
				fprintf(stderr, "hotrow demo: --answer %c: step %d asks no question "
				        "with that choice\n", o->answer, o->step);
				tui_app_free(app);
				return 2;
			}
			if (!v->asking || o->answer)
				tui_app_tour_finish_step(app);
		} else if (!demo) {
			double first = o->follow.presses && o->follow.at_s < o->at_s
			               ? o->follow.at_s : o->at_s;
			tui_app_play(app, first);
			for (int k = 0; k < o->follow.presses; k++)
				tui_app_key(app, 'f');
			tui_app_play(app, o->at_s - first);
			if (o->rewind_s >= 0)
				tui_app_seek(app, o->rewind_s);
		}
		v->help = o->help_overlay;
		struct tui_screen *scr = tui_screen_new(o->size.w, o->size.h);
		tui_app_render(app, scr);
		tui_screen_dump(scr, stdout);
		tui_screen_free(scr);
	} else {
		for (int k = 0; k < o->follow.presses; k++)
			tui_app_key(app, 'f');
		rc = tui_app_run(app, o->colour);
		if (rc) {
			fprintf(stderr, "hotrow %s: cannot draw on this terminal (TERM=%s); use "
			        "`hotrow sim` for text output, or --dump for one frame\n",
			        demo ? "demo" : "tui", getenv("TERM") ? getenv("TERM") : "unset");
			rc = 2;
		}
	}
	tui_app_free(app);
	tui_term_exit_signalled();      /* SIGTERM or SIGHUP: die of it, now clean */
	return rc;
}

/* ncursesw draws wide characters only under a UTF-8 locale; anywhere
 * else the ASCII glyphs are the ones that will show. */
static void pick_charset(struct opts *o)
{
	setlocale(LC_ALL, "");
	if (!o->dump && strcmp(nl_langinfo(CODESET), "UTF-8"))
		o->ascii = true;
}

static int check_tty(const char *cmd, const struct opts *o)
{
	if (o->dump || (isatty(STDOUT_FILENO) && isatty(STDIN_FILENO)))
		return 0;
	fprintf(stderr, "hotrow %s: stdout is not a terminal; use `hotrow sim` for "
	        "text output, or --dump for one frame\n", cmd);
	return 2;
}

int cmd_tui(int argc, char **argv)
{
	struct opts o;
	char *plain[] = {"tui", NULL};
	if (strcmp(argv[0], "tui"))      /* plain `hotrow` on a terminal */
		argc = 1, argv = plain;
	int rc = parse(argc, argv, false, &o);
	if (rc >= 0)
		return rc;
	if ((rc = check_tty(argv[0], &o)))
		return rc;
	pick_charset(&o);
	return run(&o, NULL, false);
}

int cmd_demo(int argc, char **argv)
{
	struct opts o;
	char err[256];
	int rc = parse(argc, argv, true, &o);

	if (rc >= 0)
		return rc;
	if (o.list) {
		for (const char *const *n = tui_tour_names(); *n; n++)
			printf("%s\n", *n);
		return 0;
	}
	struct tui_tour *t = tui_tour_load(o.tour ? o.tour : "viral-post", err, sizeof err);
	if (!t) {
		fprintf(stderr, "hotrow demo: %s\n", err);
		return 2;
	}
	if (o.step > t->nsteps) {
		fprintf(stderr, "hotrow demo: --step %d, but the tour has %d steps\n", o.step, t->nsteps);
		tui_tour_free(t);
		return 2;
	}
	if ((rc = check_tty(argv[0], &o))) {
		tui_tour_free(t);
		return rc;
	}
	pick_charset(&o);
	return run(&o, t, true);
}
