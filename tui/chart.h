/*
 * chart.h: small time-series charts with labelled axes.
 *
 * Up to two series share one plot; the y axis is linear from zero or
 * logarithmic (latency, where 1 ms and 10 s both matter); an optional
 * reference line marks a limit such as the ceiling. Points are drawn in
 * braille (2 x 4 dots per cell; the first series a solid line, the second
 * a dotted one, every other dot) or, with ascii set, as '*' and 'o' one
 * point per column: the two differ in shape, so they stay apart without
 * colour. The newest sample sits at the right edge.
 *
 * Interface:
 *   struct tui_chart c = {.title = "...", .n = n, .y = {a, b}, ...};
 *   tui_chart_draw(scr, rect, &c, glyphs);
 * The chart reads c's arrays during the call only.
 */
#ifndef HOTROW_TUI_CHART_H
#define HOTROW_TUI_CHART_H

#include <stdbool.h>
#include <stddef.h>

#include "tui/glyph.h"
#include "tui/screen.h"

struct tui_chart {
	const char *title;
	const char *name[2];       /* series names for the heading; NULL: none */
	const double *y[2];        /* n samples each, oldest first; y[1] may be NULL */
	int n;
	double dt_s;               /* seconds between samples, for the x axis */
	bool log;                  /* log scale (values <= 0 drop to the floor) */
	double floor;              /* log scale: lowest value shown (e.g. 1 ms) */
	double ref;                /* reference line value; <= 0: none */
	const char *ref_name;      /* its label */
	char *(*fmt)(char *buf, size_t len, double v);  /* axis labels; NULL: counts */
	double cover;              /* the y axis reaches this value too (0: none):
	                              two charts of one quantity side by side
	                              both cover the larger's top, so they share
	                              one scale */
};

/* Draw c into r (heading line, plot, x axis). Needs r.h >= 4, r.w >= 20;
 * smaller rects get the heading only. */
void tui_chart_draw(struct tui_screen *s, struct tui_rect r,
                    const struct tui_chart *c, const struct tui_glyphs *g);

/* Scale helper, exposed for tests: the row (0 = bottom, rows-1 = top) for
 * v on a plot of `rows` steps between lo and hi. */
int tui_chart_level(double v, double lo, double hi, bool log, int rows);

#endif
