/*
 * chart.c: braille and ASCII line charts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/xmalloc.h"
#include "tui/chart.h"
#include "tui/fmt.h"

#define LABEL_W 8    /* y labels, then the axis line */

int tui_chart_level(double v, double lo, double hi, bool log, int rows)
{
	double f;

	if (rows <= 1 || !(hi > lo))
		return 0;
	if (log) {
		if (v <= lo)
			return 0;
		f = (log10(v) - log10(lo)) / (log10(hi) - log10(lo));
	} else {
		f = (v - lo) / (hi - lo);
	}
	if (!(f > 0))       /* also catches NaN */
		return 0;
	int k = (int)lround(f * (rows - 1));
	return k >= rows ? rows - 1 : k;
}

/* A round number at or above x: 1, 1.2, 1.5, 2 ... 8 times a power of ten. */
static double nice_ceil(double x)
{
	if (!(x > 0))
		return 1;
	double p = pow(10, floor(log10(x)));
	static const double steps[] = {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (steps[i] * p >= x * 0.999)
			return steps[i] * p;
	return 10 * p;
}

static void range(const struct tui_chart *c, int first, double *lo, double *hi)
{
	double mx = c->ref > 0 ? c->ref * 1.15 : 0;

	if (c->cover > mx)
		mx = c->cover;

	for (int k = 0; k < 2; k++)
		for (int i = first; c->y[k] && i < c->n; i++)
			if (c->y[k][i] > mx)
				mx = c->y[k][i];
	if (c->log) {
		*lo = c->floor > 0 ? c->floor : 1;
		double top = pow(10, ceil(log10(mx > *lo ? mx : *lo)));
		*hi = top < *lo * 100 ? *lo * 100 : top;
	} else {
		*lo = 0;
		/* headroom: a line at the top edge hides; and a flat zero still
		 * gets a readable axis (10, 5, 0), not 1, 1, 0 */
		*hi = mx > 0 ? nice_ceil(mx * 1.1) : 10;
		if (*hi < 10)
			*hi = 10;
	}
}

static void label(struct tui_screen *s, int x, int y, double v,
                  const struct tui_chart *c)
{
	char buf[32];
	if (c->fmt)
		c->fmt(buf, sizeof buf, v);
	else
		tui_fmt_short(buf, sizeof buf, v);
	int len = (int)strlen(buf);   /* labels are ASCII */
	if (len > LABEL_W - 1)
		len = LABEL_W - 1;
	tui_screen_text(s, x + LABEL_W - 1 - len, y, len, TUI_DIM, buf);
}

/* One legend entry, "G name", if it fits before end; returns the new x. */
static int legend(struct tui_screen *s, int x, int y, int end, uint32_t glyph,
                  enum tui_style st, const char *name)
{
	int need = 4 + (int)strlen(name);    /* names are ASCII */
	if (x + need > end)
		return end;
	tui_screen_put(s, x + 2, y, glyph, st);
	return x + 4 + tui_screen_text(s, x + 4, y, end - x - 4, TUI_DIM, name);
}

static void heading(struct tui_screen *s, struct tui_rect r,
                    const struct tui_chart *c, const struct tui_glyphs *g)
{
	int end = r.x + r.w;
	int x = r.x + tui_screen_text(s, r.x, r.y, r.w, TUI_HEAD, c->title);
	for (int k = 0; k < 2; k++)
		if (c->name[k] && c->y[k])
			x = legend(s, x, r.y, end, g->series[k], k ? TUI_SERIES2 : TUI_SERIES1,
			           c->name[k]);
	if (c->ref > 0 && c->ref_name)
		legend(s, x, r.y, end, g->ref, TUI_WARN, c->ref_name);
}

/* The screen row a value lands on, as the plot itself places it. */
static int row_of(double v, double lo, double hi, bool log, int top, int ph, int dots)
{
	int l = tui_chart_level(v, lo, hi, log, ph * dots);
	return top + (ph * dots - 1 - l) / dots;
}

static void axes(struct tui_screen *s, struct tui_rect r, int ph, int pw,
                 int shown, double lo, double hi, const struct tui_chart *c,
                 const struct tui_glyphs *g)
{
	int px = r.x + LABEL_W, top = r.y + 1, bottom = r.y + ph;
	int dots = g->ascii ? 1 : 4;
	char buf[40], span_s[24];

	for (int y = top; y <= bottom; y++)
		tui_screen_put(s, px - 1, y, g->vline, TUI_DIM);
	tui_screen_put(s, px - 1, bottom + 1, g->corner, TUI_DIM);
	for (int x = 0; x < pw; x++)
		tui_screen_put(s, px + x, bottom + 1, g->hline, TUI_DIM);
	label(s, r.x, top, hi, c);
	label(s, r.x, bottom, lo, c);
	/* Labels between, where a row is free: decades on a log scale, the
	 * middle on a linear one. */
	int last = top;
	if (c->log) {
		for (double v = hi / 10; v > lo * 1.001; v /= 10) {
			int y = row_of(v, lo, hi, true, top, ph, dots);
			if (y > last && y < bottom) {
				label(s, r.x, y, v, c);
				last = y;
			}
		}
	} else if (ph >= 5) {
		label(s, r.x, row_of(hi / 2, lo, hi, false, top, ph, dots), hi / 2, c);
	}
	/* x axis: how far back the left edge is */
	double span = shown * c->dt_s;
	if (span > 0 && pw > 16) {
		snprintf(buf, sizeof buf, "-%s", tui_fmt_s(span_s, sizeof span_s, span));
		tui_screen_text(s, px, bottom + 1, pw, TUI_DIM, buf);
		tui_screen_text(s, px + pw - 3, bottom + 1, 3, TUI_DIM, "now");
	}
}

static void plot_braille(struct tui_screen *s, int px, int top, int pw, int ph,
                         int first, double lo, double hi, const struct tui_chart *c)
{
	int cols = pw * 2, rows = ph * 4;
	uint8_t *bits = xcalloc((size_t)pw * (size_t)ph, 1);
	uint8_t *who = xcalloc((size_t)pw * (size_t)ph, 1);
	static const uint8_t dot[4][2] = {
		{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80},
	};

	for (int k = 0; k < 2; k++) {
		if (!c->y[k])
			continue;
		int prev = -1;
		for (int i = first; i < c->n; i++) {
			int dx = cols - (c->n - i);
			/* the second series dotted: its points in even dot columns */
			if (k == 1 && dx % 2)
				continue;
			int lv = tui_chart_level(c->y[k][i], lo, hi, c->log, rows);
			int a = prev < 0 ? lv : (prev < lv ? prev + 1 : lv);
			int b = prev < 0 ? lv : (prev > lv ? prev - 1 : lv);
			if (a > b) { int t = a; a = b; b = t; }
			for (int l = a; l <= b; l++) {
				int dy = rows - 1 - l;
				size_t cell = (size_t)(dy / 4) * (size_t)pw + (size_t)(dx / 2);
				bits[cell] |= dot[dy % 4][dx % 2];
				who[cell] = (uint8_t)(k + 1);
			}
			prev = lv;
		}
	}
	for (int y = 0; y < ph; y++)
		for (int x = 0; x < pw; x++) {
			size_t cell = (size_t)y * (size_t)pw + (size_t)x;
			if (bits[cell])
				tui_screen_put(s, px + x, top + y, 0x2800u + bits[cell],
				               who[cell] == 2 ? TUI_SERIES2 : TUI_SERIES1);
		}
	free(bits);
	free(who);
}

static void plot_ascii(struct tui_screen *s, int px, int top, int pw, int ph,
                       int first, double lo, double hi, const struct tui_chart *c,
                       const struct tui_glyphs *g)
{
	for (int k = 0; k < 2; k++) {
		if (!c->y[k])
			continue;
		for (int i = first; i < c->n; i++) {
			int x = pw - (c->n - i);
			int y = ph - 1 - tui_chart_level(c->y[k][i], lo, hi, c->log, ph);
			tui_screen_put(s, px + x, top + y, g->series[k],
			               k ? TUI_SERIES2 : TUI_SERIES1);
		}
	}
}

void tui_chart_draw(struct tui_screen *s, struct tui_rect r,
                    const struct tui_chart *c, const struct tui_glyphs *g)
{
	double lo, hi;

	if (r.h < 1)
		return;
	heading(s, r, c, g);
	if (r.h < 4 || r.w < 20)
		return;
	int ph = r.h - 2, pw = r.w - LABEL_W;
	int per_cell = g->ascii ? 1 : 2;
	int first = c->n > pw * per_cell ? c->n - pw * per_cell : 0;
	range(c, first, &lo, &hi);

	if (c->ref > 0) {
		/* Place it as the plot places a point of that value. */
		int y = row_of(c->ref, lo, hi, c->log, r.y + 1, ph, g->ascii ? 1 : 4);
		for (int x = 0; x < pw; x++)
			tui_screen_put(s, r.x + LABEL_W + x, y, g->ref, TUI_WARN);
	}
	if (g->ascii)
		plot_ascii(s, r.x + LABEL_W, r.y + 1, pw, ph, first, lo, hi, c, g);
	else
		plot_braille(s, r.x + LABEL_W, r.y + 1, pw, ph, first, lo, hi, c);
	axes(s, r, ph, pw, c->n - first, lo, hi, c, g);
}
