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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <ncurses.h>

#include "engine/sim.h"
#include "tui/app.h"
#include "tui/screen.h"
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

int main(int argc, char **argv)
{
	double seconds = argc > 1 && !strcmp(argv[1], "--quick") ? 1 : 10;
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *term = newterm("xterm-256color", out, in);
	if (!term) {
		fprintf(stderr, "tui_bench: no terminfo for xterm-256color\n");
		return 1;
	}
	set_term(term);
	resizeterm(H, W);
	tui_screen_colors(true);

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
