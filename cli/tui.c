/*
 * cli/tui.c: `hotrow tui` and `hotrow demo`, the animated screen.
 *
 * Both take the engine's options (--scenario, --strategy, --rows, --rps,
 * --hold-ms, --pool, ...) and the screen's own (--ascii, --no-color,
 * --compare, --speed). --dump prints one frame as text instead of taking
 * the terminal: `hotrow tui --dump --size 120x40 --at 5`. A non-terminal
 * stdout without --dump is a usage error pointing at `hotrow sim`.
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/simopt.h"
#include "engine/sim.h"
#include "tui/app.h"
#include "tui/screen.h"
#include "tui/term.h"
#include "tui/tour.h"

struct opts {
	struct sim_config cfg;
	bool dump, ascii, colour, compare, paused, help_overlay;
	int w, h;
	double at_s;
	double speed;
	int latency;               /* enum tui_latency */
	int step;                  /* demo --dump: the tour step, 1-based; 0 none */
	int answer;                /* demo --dump --answer: 'A'..'D', '-' none, 0 not given */
	const char *tour;
	bool list;
};

static void usage(FILE *out, bool demo)
{
	if (demo)
		fprintf(out,
			"usage: hotrow demo [TOUR] [options]\n"
			"\n"
			"Plays a scripted tour: each step changes the scenario, says a\n"
			"sentence and plays for a while; Enter goes on, b goes back.\n"
			"TOUR is a built-in name (default viral-post) or a .tour file\n"
			"(the format is in tui/tours/README.md).\n"
			"\n"
			"  --list              print the built-in tours and exit\n"
			"  --dump              print one frame as text instead (no terminal)\n"
			"  --step N            with --dump: the end of step N (1-based); a step\n"
			"                      that asks a question shows it, not yet played\n"
			"  --answer X          with --step: answer its question with X (A to D,\n"
			"                      or - for none), play it and show the reveal\n");
	else
		fprintf(out,
			"usage: hotrow tui [options]\n"
			"\n"
			"Watch one hot row live: its lock queue, the connection pool filling,\n"
			"the login page failing, and the fixes. Press ? for the keys.\n"
			"Defaults to the viral post: 2,000 likes/s (random arrivals), 2 ms\n"
			"holds, a pool of 20, and a login page sharing the pool at 100/s.\n"
			"\n"
			"  --dump              print one frame as text instead (no terminal)\n"
			"  --at SECONDS        with --dump: the simulated time of the frame (5)\n");
	fprintf(out,
		"  --size WxH          with --dump: the frame's size (120x40)\n"
		"  --ascii             ASCII only, for terminals without UTF-8\n"
		"  --no-color          no colour (NO_COLOR in the environment does the same)\n"
		"  --compare           split screen: naive beside the chosen fix, same seed\n"
		"  --speed X           simulated seconds per real second (0.01 to 100; 1);\n"
		"                      the title says the factor reached where it falls short\n"
		"  --paused            start paused\n"
		"  --latency both|p99|p50   which latency lines to chart\n"
		"  --help-overlay      with --dump: show the ? overlay\n");
	if (demo)
		return;     /* a tour sets the engine itself */
	fprintf(out, "\nengine options, as for `hotrow sim` (--seconds is ignored: the\n"
	             "screen runs until you quit):\n");
	simopt_help(out);
}

static int bad(const char *cmd, const char *opt, const char *accepts)
{
	fprintf(stderr, "hotrow %s: %s accepts %s\n", cmd, opt, accepts);
	return 2;
}

/* Whether --name (or --name=...) appears among the arguments. */
static bool given(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], name, n) && (argv[i][n] == '\0' || argv[i][n] == '='))
			return true;
	return false;
}

/* The screen's own options that take a value. */
static bool takes_value(const char *a, bool demo)
{
	if (!strcmp(a, "--size") || !strcmp(a, "--speed") || !strcmp(a, "--latency"))
		return true;
	return demo ? !strcmp(a, "--step") || !strcmp(a, "--answer") : !strcmp(a, "--at");
}

/* Parse the screen's own option argv[*i] (value in argv[*i + 1]); returns
 * 1 when it was one, 0 when not, or an exit code + 10 on a bad value. */
static int own_option(int argc, char **argv, int *i, bool demo, struct opts *o)
{
	const char *cmd = argv[0], *a = argv[*i];
	const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	char *x;

	if (!strcmp(a, "--dump"))
		return o->dump = true, 1;
	if (!strcmp(a, "--ascii"))
		return o->ascii = true, 1;
	if (!strcmp(a, "--no-color") || !strcmp(a, "--no-colour"))
		return o->colour = false, 1;
	if (!strcmp(a, "--compare"))
		return o->compare = true, 1;
	if (!strcmp(a, "--paused"))
		return o->paused = true, 1;
	if (!strcmp(a, "--help-overlay"))
		return o->help_overlay = true, 1;
	if (demo && !strcmp(a, "--list"))
		return o->list = true, 1;
	if (!takes_value(a, demo))
		return 0;
	if (!v)
		return 10 + bad(cmd, a, "a value (see --help)");
	(*i)++;
	errno = 0;
	if (!strcmp(a, "--size")) {
		o->w = (int)strtol(v, &x, 10);
		if (*x != 'x' || (o->h = (int)strtol(x + 1, &x, 10)) < 1 || *x || o->w < 1 ||
		    o->w > 1000 || o->h > 1000)
			return 10 + bad(cmd, a, "WxH, e.g. 120x40 (1 to 1000 each)");
	} else if (!strcmp(a, "--at")) {
		o->at_s = strtod(v, &x);
		if (errno || *x || !(o->at_s >= 0 && o->at_s <= 36000))
			return 10 + bad(cmd, a, "simulated seconds from 0 to 36000");
	} else if (!strcmp(a, "--speed")) {
		o->speed = strtod(v, &x);
		if (errno || *x || !(o->speed >= 0.01 && o->speed <= 100))
			return 10 + bad(cmd, a, "a factor from 0.01 to 100");
	} else if (!strcmp(a, "--latency")) {
		o->latency = !strcmp(v, "both") ? 0 : !strcmp(v, "p99") ? 1 : !strcmp(v, "p50") ? 2 : -1;
		if (o->latency < 0)
			return 10 + bad(cmd, a, "both, p99 or p50");
	} else if (!strcmp(a, "--answer")) {
		o->answer = (v[0] >= 'A' && v[0] <= 'D') || v[0] == '-' ? v[0]
		          : v[0] >= 'a' && v[0] <= 'd' ? v[0] - 'a' + 'A' : 0;
		if (!o->answer || v[1])
			return 10 + bad(cmd, a, "a letter from A to D, or - for none");
	} else {    /* --step */
		o->step = (int)strtol(v, &x, 10);
		if (*x || o->step < 1)
			return 10 + bad(cmd, a, "a step number, 1 or more");
	}
	return 1;
}

/* Parse argv into o; returns -1 to go on, else the exit code. The engine
 * options are `hotrow sim`'s own (cli/simopt.h); a demo's tour sets the
 * engine itself, so demo takes only the screen's options. */
static int parse(int argc, char **argv, bool demo, struct opts *o)
{
	const char *cmd = argv[0];
	char err[200];

	memset(o, 0, sizeof *o);
	o->colour = getenv("NO_COLOR") == NULL || !*getenv("NO_COLOR");
	o->w = 120, o->h = 40, o->at_s = 5, o->speed = 1;
	sim_config_default(&o->cfg);
	sim_scenario("viral-post", &o->cfg);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout, demo);
			return 0;
		}
	if (!demo && simopt_scenario(argc, argv, &o->cfg, err, sizeof err) < 0)
		goto usage_error;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int r = own_option(argc, argv, &i, demo, o);
		if (r >= 10)
			return r - 10;
		if (r == 1)
			continue;
		if (!demo && (r = simopt_parse(argc, argv, &i, &o->cfg, err, sizeof err)) != 0) {
			if (r < 0)
				goto usage_error;
			continue;
		}
		if (a[0] == '-') {
			fprintf(stderr, "hotrow %s: %s is not an option (hotrow %s --help "
			        "lists them)\n", cmd, a, cmd);
			return 2;
		}
		if (demo && !o->tour) {
			o->tour = a;
			continue;
		}
		fprintf(stderr, "hotrow %s: unexpected argument '%s' (%s)\n", cmd, a,
		        demo ? "one TOUR at most" : "options start with --");
		return 2;
	}
	/* The screen's defaults where the command line is silent: random
	 * arrivals (evenly spaced ones fall in lock step with the pool and
	 * hide the login page's failures behind an artefact of the clock), and
	 * 16 slots for sharded (one slot would show nothing). */
	if (!given(argc, argv, "--arrivals"))
		o->cfg.arrivals = SIM_ARRIVE_POISSON;
	if (o->cfg.strategy == SIM_SHARDED && o->cfg.rows < 2 && !given(argc, argv, "--rows"))
		o->cfg.rows = 16;
	if (simopt_finish(&o->cfg, simopt_given(argc, argv, "strategy"), err, sizeof err) < 0)
		goto usage_error;
	o->cfg.seconds = 0;     /* the screen runs until you quit */
	if (sim_config_check(&o->cfg, err, sizeof err) < 0)
		goto usage_error;
	return -1;

usage_error:
	fprintf(stderr, "hotrow %s: %s\n", cmd, err);
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

	if (o->compare)
		tui_app_compare(app, true);
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
			tui_app_play(app, o->at_s);
		}
		v->help = o->help_overlay;
		struct tui_screen *scr = tui_screen_new(o->w, o->h);
		tui_app_render(app, scr);
		tui_screen_dump(scr, stdout);
		tui_screen_free(scr);
	} else {
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
