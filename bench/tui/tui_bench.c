/*
 * tui_bench.c: `make bench-tui`, what one frame of the TUI costs.
 *
 * Drives the real app (engine, panels, ncurses copy-out) on a terminal
 * that ncurses writes to /dev/null, sized 200x60, in the viral-video
 * scenario (100,000 views/s). Prints, against the targets:
 *   - frame time: snapshot + drawing into the cell buffer + copy-out and
 *     doupdate, without the simulation's own work (reported beside it);
 *   - CPU use at 30 frames a second for 10 seconds of wall time, all work
 *     included (getrusage), as a share of one core.
 * These are printed figures, not assertions: run it on a quiet machine.
 * `tui_bench --quick` runs 1 second instead of 10.
 *
 * `tui_bench --rewind` plays a 20-minute viral video as the screen would
 * at 100x and prints the memory the rewind's checkpoints hold along the
 * way, then what a jump back costs.
 *
 * `tui_bench --speed [X [WALL_S]]` plays every built-in scenario as
 * `hotrow tui --scenario NAME --speed X` would (X = 100, WALL_S = 5 s of
 * wall time each; frames at 30 a second at most, each playing at most
 * 0.25 s of wall time, as the real loop does) and prints the factor each
 * reaches: where it is under X, the title bar says "(only Nx reached)".
 *
 * `tui_bench --play NAME SIM_S` plays SIM_S simulated seconds of scenario
 * NAME as `--speed 100` does (30 frames of 100/30 simulated seconds each
 * per wall second, each frame drawn), without a clock, and prints the last
 * frame; `--play-engine NAME SIM_S` runs the engine alone the same way
 * (sim_advance in 0.1 s steps) and prints its JSON. Neither depends on the
 * machine: run them under `valgrind --tool=callgrind` or
 * `perf stat -e instructions:u` to count what a simulated second costs on
 * a busy machine, and compare their output to check a change kept every
 * byte.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <ncurses.h>

#include "engine/sim.h"
#include "tui/app.h"
#include "tui/screen.h"
#include "util/opt.h"
#include "util/clock.h"

#define W 200
#define H 60
#define FPS 30

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The scenario as the screen plays it: no end, Poisson arrivals, a spread
 * over 16 rows at least. */
static int screen_config(const char *name, struct sim_config *c)
{
	if (sim_scenario(name, c) != 0)
		return -1;
	c->seconds = 0;
	c->arrivals = SIM_ARRIVE_POISSON;
	if (sim_strategy_info(c->strategy)->spread && c->rows < 2)
		c->rows = 16;
	return 0;
}

/* The frame loop of tui_app_run without a terminal to wait on. */
static double reach(const char *name, double x, double wall_s, double *first_s)
{
	struct sim_config c;
	struct tui_screen *scr = tui_screen_new(W, H);

	screen_config(name, &c);
	struct tui_app *app = tui_app_new(&c, NULL, false);
	if (!app) {
		tui_screen_free(scr);
		return -1;
	}
	tui_app_set_speed(app, x);
	double w0 = util_now(), last = w0, played = 0;
	*first_s = -1;
	while (util_now() - w0 < wall_s) {
		double t0 = util_now(), dt = t0 - last;
		last = t0;
		double before = tui_app_now(app);
		tui_app_advance(app, dt > 0.25 ? 0.25 : dt);
		played += tui_app_now(app) - before;
		tui_app_render(app, scr);
		tui_screen_blit(scr);
		doupdate();
		double wait = 1.0 / FPS - (util_now() - t0);
		if (wait > 0) {
			struct timespec ts = {0, (long)(wait * 1e9)};
			nanosleep(&ts, NULL);
		}
		if (*first_s < 0 && util_now() - w0 >= 1)      /* the first second alone */
			*first_s = played / (util_now() - w0);
	}
	double wall = util_now() - w0;
	tui_app_free(app);
	tui_screen_free(scr);
	return played / wall;
}

static int speeds(double x, double wall_s)
{
	printf("hotrow bench-tui --speed: each scenario at %gx for %g s of wall time, %dx%d\n",
	       x, wall_s, W, H);
	printf("  %-22s %12s %12s  %s\n", "scenario", "first 1 s", "overall", "keeps up");
	for (const char *const *n = sim_scenario_names(); *n; n++) {
		double first = -1, f = reach(*n, x, wall_s, &first);
		printf("  %-22s %11.3gx %11.3gx  %s\n", *n, first, f,
		       f < 0 ? "refused" : f >= 0.9 * x ? "yes" : "no: the title says so");
		fflush(stdout);
	}
	return 0;
}

/* --rewind: the memory the checkpoints take over a 20-minute viral video
 * played as the screen plays it at 100x (frames of 100/30 simulated
 * seconds), and what going back to a moment costs. */
static int rewind_memory(void)
{
	struct sim_config c;
	struct rusage ru;
	int n;
	size_t bytes;

	sim_scenario("viral-video", &c);
	c.seconds = 0;
	c.arrivals = SIM_ARRIVE_POISSON;
	struct tui_app *app = tui_app_new(&c, NULL, false);
	printf("hotrow bench-tui --rewind: viral-video for 1200 simulated s at 100x\n");
	printf("  %8s %12s %14s %12s\n", "t (s)", "checkpoints", "their memory", "cpu so far");
	for (int k = 1; k <= 4; k++) {
		while (tui_app_now(app) < 300.0 * k - 1e-9)
			tui_app_play(app, 100.0 / FPS);
		tui_app_rewind_use(app, &n, &bytes);
		printf("  %8.0f %12d %11.1f MB %10.1f s\n", tui_app_now(app), n,
		       (double)bytes / (1 << 20), cpu_s());
		fflush(stdout);
	}
	static const double to[] = { 600, 5, 1195, 1200 };
	for (size_t i = 0; i < sizeof to / sizeof to[0]; i++) {
		double c0 = cpu_s();
		tui_app_seek(app, to[i]);
		printf("  back to %6.0f s: %.2f s of CPU (replayed from the checkpoint before)\n",
		       to[i], cpu_s() - c0);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("  peak resident memory of the whole process: %.1f MB\n", ru.ru_maxrss / 1024.0);
	tui_app_free(app);
	return 0;
}

/* --play and --play-engine: a fixed simulated span, no clock. */
static int play(const char *name, double sim_s, bool engine_only)
{
	struct sim_config c;

	if (screen_config(name, &c) != 0) {
		fprintf(stderr, "tui_bench: no scenario '%s'\n", name);
		return 2;
	}
	if (engine_only) {
		struct sim *s = sim_new(&c);
		if (!s)
			return 1;
		for (int64_t t = 100000; t <= (int64_t)(sim_s * 1e6 + 0.5); t += 100000)
			sim_advance(s, t);
		sim_json(stdout, s);
		sim_free(s);
		return 0;
	}
	struct tui_screen *scr = tui_screen_new(W, H);
	struct tui_app *app = tui_app_new(&c, NULL, false);
	if (!app) {
		tui_screen_free(scr);
		return 1;
	}
	tui_app_set_speed(app, 100);
	while (tui_app_now(app) < sim_s - 1e-9) {
		tui_app_advance(app, 1.0 / FPS);
		tui_app_render(app, scr);
	}
	tui_screen_dump(scr, stdout);
	tui_app_free(app);
	tui_screen_free(scr);
	return 0;
}

/* --speed's X and WALL_S, the words that follow it. */
struct speed_args {
	bool on;
	int n;
	double v[2];             /* X (100), WALL_S (5) */
};

static int speed_word(const char *w, void *ctx, char *err, size_t len)
{
	struct speed_args *sp = ctx;
	char *end;
	double v = strtod(w, &end);
	if (!sp->on || sp->n == 2 || end == w || *end || !(v > 0 && v <= 100000)) {
		snprintf(err, len, "unexpected argument '%s' (--speed [X [WALL_S]], each above 0)", w);
		return -1;
	}
	sp->v[sp->n++] = v;
	return 0;
}

int main(int argc, char **argv)
{
	struct speed_args sp = { .v = { 100, 5 } };
	bool quick = false, rew = false;
	const char *play_name = NULL, *engine_name = NULL;
	double play_s = 6.7;
	const struct opt rows[] = {
		{ .name = "play", .arg = "NAME", .kind = OPT_STRING, .dest = &play_name,
		  .help = "play scenario NAME as --speed 100 does, for --sim-s\n"
		          "simulated seconds without a clock; print the last frame" },
		{ .name = "play-engine", .arg = "NAME", .kind = OPT_STRING, .dest = &engine_name,
		  .help = "the same with the engine alone (sim_advance in 0.1 s\n"
		          "steps); print its JSON" },
		{ .name = "sim-s", .arg = "S", .kind = OPT_DOUBLE, .dest = &play_s,
		  .min = 0, .max = 100000, .above_min = true,
		  .help = "the simulated span of --play and --play-engine (6.7)" },
		{ .name = "rewind", .kind = OPT_FLAG, .dest = &rew,
		  .help = "the rewind's checkpoints over a 20-minute viral video:\n"
		          "their memory, and the CPU a jump back costs" },
		{ .name = "quick", .kind = OPT_FLAG, .dest = &quick,
		  .help = "1 second of frames instead of 10" },
		{ .name = "speed", .kind = OPT_FLAG, .dest = &sp.on,
		  .help = "every scenario at X times (100) for WALL_S s (5) each:\n"
		          "the factor each reaches" },
	};
	const struct opt_table table = { .rows = rows, .n = sizeof rows / sizeof rows[0] };
	const struct opt_cmd cmd = { .name = "tui_bench", .usage = "[--quick] | --speed [X [WALL_S]] | --rewind\n"
	                                      "       | --play NAME | --play-engine NAME [--sim-s S]",
	                             .tables = &table, .ntables = 1, .positional = speed_word,
	                             .ctx = &sp };
	int parsed = opt_parse(&cmd, argc, argv, NULL);
	if (parsed != OPT_OK)
		return parsed == OPT_HELP ? 0 : 2;
	if (rew)
		return rewind_memory();
	if (play_name || engine_name)
		return play(engine_name ? engine_name : play_name, play_s, engine_name != NULL);
	bool speed_mode = sp.on;
	double seconds = quick ? 1 : 10;
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *term = newterm("xterm-256color", out, in);
	if (!term) {
		fprintf(stderr, "tui_bench: no terminfo for xterm-256color\n");
		return 1;
	}
	set_term(term);
	resizeterm(H, W);
	tui_screen_colors(true);
	if (speed_mode) {
		int rc = speeds(sp.v[0], sp.v[1]);
		endwin();
		delscreen(term);
		fclose(out);
		fclose(in);
		return rc;
	}

	struct sim_config c;
	sim_config_default(&c);
	sim_scenario("viral-video", &c);
	c.seconds = 0;
	c.arrivals = SIM_ARRIVE_POISSON;
	struct tui_app *app = tui_app_new(&c, NULL, false);
	struct tui_screen *scr = tui_screen_new(W, H);
	tui_app_play(app, 3);      /* past the collapse: full queues, full charts */

	/* 1. frame time, 300 frames */
	enum { N = 300 };
	static double frame[N], simt[N];
	for (int i = 0; i < N; i++) {
		double t0 = util_now();
		tui_app_play(app, 1.0 / FPS);
		double t1 = util_now();
		tui_app_render(app, scr);
		tui_screen_blit(scr);
		doupdate();
		double t2 = util_now();
		simt[i] = (t1 - t0) * 1e3;
		frame[i] = (t2 - t1) * 1e3;
	}
	qsort(frame, N, sizeof frame[0], cmp);
	qsort(simt, N, sizeof simt[0], cmp);

	/* 2. CPU at 30 fps, real time */
	double c0 = cpu_s(), w0 = util_now(), next = w0;
	int frames = 0;
	while (util_now() - w0 < seconds) {
		tui_app_advance(app, 1.0 / FPS);
		tui_app_render(app, scr);
		tui_screen_blit(scr);
		doupdate();
		frames++;
		next += 1.0 / FPS;
		double wait = next - util_now();
		util_sleep(wait);
	}
	double wall = util_now() - w0, cpu = cpu_s() - c0;

	endwin();
	delscreen(term);
	fclose(out);
	fclose(in);
	tui_screen_free(scr);
	tui_app_free(app);

	printf("hotrow bench-tui: %dx%d, viral-video (100,000 views/s, pool of 100)\n", W, H);
	printf("  frame (snapshot + draw + copy-out): median %.3f ms, p95 %.3f ms, max %.3f ms"
	       "   target <= 2 ms: %s (%.1fx under)\n",
	       frame[N / 2], frame[N * 95 / 100], frame[N - 1],
	       frame[N / 2] <= 2 ? "met" : "MISSED", 2 / frame[N / 2]);
	printf("  simulation per frame at 1x (not part of the target): median %.3f ms\n",
	       simt[N / 2]);
	printf("  CPU at %d fps over %.0f s: %.1f%% of one core (%d frames)"
	       "   target <= 10%%: %s\n",
	       FPS, wall, 100 * cpu / wall, frames, cpu / wall <= 0.10 ? "met" : "MISSED");
	return 0;
}
