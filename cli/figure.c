/*
 * figure.c: SVG charts of runs and sweeps (see figure.h). Plain SVG 1.1,
 * no script, no external font or style: it opens in a browser, prints, and
 * converts with rsvg-convert. Numbers are printed with fixed precision so
 * the same run gives the same bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/figure.h"
#include "engine/xmalloc.h"
#include "util/file.h"
#include "util/json.h"

#define W 760            /* the picture */
#define LEFT 78          /* plot area margins */
#define RIGHT 24
#define TOP 56
#define PANEL_H 300
#define GAP 74           /* between two panels (axis labels of the upper one) */

#define C_MEAN   "#1f5fa8"   /* measured mean, throughput */
#define C_P99    "#c0392b"   /* measured p99 */
#define C_THEORY "#222222"   /* theory: dashed */
#define C_OFFER  "#8a8a8a"   /* offered load, limits */
#define C_POOL   "#2e8b57"   /* pool in use */
#define C_GRID   "#e4e4e4"

struct panel {
	double x0, y0, w, h;          /* plot area, pixels */
	double xmin, xmax, ymin, ymax;
	int legend;                   /* entries drawn so far */
};

static double px(const struct panel *p, double x)
{
	return p->x0 + (x - p->xmin) / (p->xmax - p->xmin) * p->w;
}

/* y clamped into the panel, so a value off the chart sits on its edge. */
static double py(const struct panel *p, double y)
{
	if (y > p->ymax)
		y = p->ymax;
	if (y < p->ymin)
		y = p->ymin;
	return p->y0 + p->h - (y - p->ymin) / (p->ymax - p->ymin) * p->h;
}

/* A step of 1, 2 or 5 times a power of ten giving about n ticks. */
static double nice_step(double range, int n)
{
	double raw = range / n, mag = pow(10, floor(log10(raw))), f = raw / mag;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static double nice_max(double v, int n)
{
	if (v <= 0)
		return 1;
	double step = nice_step(v, n);
	return ceil(v / step - 1e-9) * step;
}

/* 1234567 -> "1,234,567"; 2.5 -> "2.5". */
static void number(char *out, size_t len, double v)
{
	if (fabs(v) >= 1000 && fabs(v - round(v)) < 1e-9) {
		char digits[32];
		snprintf(digits, sizeof digits, "%.0f", fabs(v));
		size_t n = strlen(digits), o = 0;
		if (v < 0 && o + 1 < len)
			out[o++] = '-';
		for (size_t i = 0; i < n && o + 2 < len; i++) {
			if (i && (n - i) % 3 == 0)
				out[o++] = ',';
			out[o++] = digits[i];
		}
		out[o] = '\0';
	} else {
		snprintf(out, len, "%.10g", round(v * 1000) / 1000);
	}
}

static void text(FILE *f, double x, double y, const char *anchor, const char *style, const char *s)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s%s%s>", x, y, anchor,
	        style ? " " : "", style ? style : "", "");
	util_json_xml(f, s);
	fputs("</text>\n", f);
}

static void begin(FILE *f, int height, const char *title, const char *subtitle)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
	        "font-size=\"13\">\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, height, W, height);
	text(f, LEFT, 24, "start", "font-size=\"17\" font-weight=\"bold\"", title);
	text(f, LEFT, 43, "start", "fill=\"#555555\"", subtitle);
}

static void axes(FILE *f, const struct panel *p, const char *xlabel, const char *ylabel, int xticks)
{
	char s[40];
	double step = nice_step(p->ymax - p->ymin, 5);
	for (double y = p->ymin; y <= p->ymax + step * 1e-6; y += step) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
		        p->x0, py(p, y), p->x0 + p->w, py(p, y), C_GRID);
		number(s, sizeof s, y);
		text(f, p->x0 - 8, py(p, y) + 4, "end", NULL, s);
	}
	if (xticks) {
		step = nice_step(p->xmax - p->xmin, 6);
		for (double x = ceil(p->xmin / step) * step; x <= p->xmax + step * 1e-6; x += step) {
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			        px(p, x), p->y0, px(p, x), p->y0 + p->h, C_GRID);
			number(s, sizeof s, x);
			text(f, px(p, x), p->y0 + p->h + 18, "middle", NULL, s);
		}
	}
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
	        "stroke=\"#444444\"/>\n", p->x0, p->y0, p->w, p->h);
	text(f, p->x0 + p->w / 2, p->y0 + p->h + 40, "middle", NULL, xlabel);
	fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\">",
	        p->x0 - 56, p->y0 + p->h / 2);
	util_json_xml(f, ylabel);
	fputs("</text>\n", f);
}

/* A polyline through n points; dash "" for solid. */
static void line(FILE *f, const struct panel *p, const double *x, const double *y, int n,
                 const char *color, const char *dash, double width)
{
	if (n < 1)
		return;
	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s%s%s points=\"",
	        color, width, *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "");
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%.1f,%.1f", i ? " " : "", px(p, x[i]), py(p, y[i]));
	fputs("\"/>\n", f);
}

/* Markers; a value above the chart becomes a triangle on its top edge
 * (sweep_latency lists those values under the legend). */
static void dots(FILE *f, const struct panel *p, const double *x, const double *y, int n, const char *color)
{
	for (int i = 0; i < n; i++)
		if (y[i] > p->ymax)
			fprintf(f, "<path d=\"M%.1f %.1f l-5 9 h10 z\" fill=\"%s\"/>\n", px(p, x[i]), p->y0, color);
		else
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
			        px(p, x[i]), py(p, y[i]), color);
}

static void legend(FILE *f, struct panel *p, const char *color, const char *dash, const char *what)
{
	double x = p->x0 + 14, y = p->y0 + 18 + 18 * p->legend++;
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"16\" fill=\"white\" "
	        "fill-opacity=\"0.85\"/>\n", x - 4, y - 12, 36 + 7 * (int)strlen(what));
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
	        "stroke-width=\"2.5\"%s%s%s/>\n", x, y - 4, x + 24, y - 4, color,
	        *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "");
	text(f, x + 30, y, "start", NULL, what);
}

static void vline(FILE *f, const struct panel *p, double x, const char *color, const char *label)
{
	if (x < p->xmin || x > p->xmax)
		return;
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
	        "stroke-width=\"1.5\" stroke-dasharray=\"2 4\"/>\n", px(p, x), p->y0, px(p, x), p->y0 + p->h, color);
	int right = px(p, x) > p->x0 + p->w - 220;   /* no room on its right */
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"12\" fill=\"%s\">",
	        px(p, x) + (right ? -6 : 6), p->y0 + p->h * 0.55, right ? "end" : "start", color);
	util_json_xml(f, label);
	fputs("</text>\n", f);
}

static void hline(FILE *f, const struct panel *p, double y, const char *color, const char *label)
{
	char style[40];
	snprintf(style, sizeof style, "font-size=\"12\" fill=\"%s\"", color);
	if (y < p->ymin || y > p->ymax)
		return;
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
	        "stroke-width=\"1.5\" stroke-dasharray=\"2 4\"/>\n", p->x0, py(p, y), p->x0 + p->w, py(p, y), color);
	text(f, p->x0 + p->w - 6, py(p, y) - 6, "end", style, label);
}

/* The chart goes to a new file that replaces path only once it is whole. */
static FILE *open_svg(struct util_file_out *o, const char *path)
{
	char why[PATH_MAX + 64];
	if (util_file_begin(o, path, 0666, why, sizeof why) != 0) {
		fprintf(stderr, "hotrow sim: --svg %s: %s\n", path, why);
		return NULL;
	}
	return o->f;
}

static int close_svg(struct util_file_out *o)
{
	char why[PATH_MAX + 64];
	fputs("</svg>\n", o->f);
	if (util_file_commit(o, why, sizeof why) != 0) {
		fprintf(stderr, "hotrow sim: --svg %s: %s\n", o->path, why);
		return 1;
	}
	return 0;
}

/* The queueing model's mean time in system at rate rps (per row: rps /
 * rows), from the inputs only; < 0 where no model applies or it diverges. */
static double model_mean_ms(const struct sim_config *c, double rps, const char **name)
{
	double hold = c->hold_ms + c->work_ms, rho = rps / c->rows * hold / 1000;
	if (c->arrivals == SIM_ARRIVE_CONSTANT && c->hold_dist == SIM_DIST_CONST) {
		*name = "D/D/1: the hold, no wait, up to the ceiling";
		return rho < 1 ? hold : -1;
	}
	if (c->arrivals == SIM_ARRIVE_CONSTANT) {
		*name = NULL;
		return -1;
	}
	if (rho >= 1)
		return -1;
	if (c->hold_dist == SIM_DIST_CONST) {
		*name = "M/D/1 mean: hold + \xcf\x81\xc2\xb7hold / 2(1 \xe2\x88\x92 \xcf\x81)";
		return hold + rho * hold / (2 * (1 - rho));
	}
	*name = "M/M/1 mean: hold / (1 \xe2\x88\x92 \xcf\x81)";
	return hold / (1 - rho);
}

static int numeric(char *const *values, int n, double *x)
{
	for (int i = 0; i < n; i++) {
		char *end;
		x[i] = strtod(values[i], &end);
		if (end == values[i] || *end)
			return 0;
	}
	return 1;
}

static int sweep_latency(FILE *f, const struct sim_config *runs, const struct sim_summary *sums, int n)
{
	const struct sim_config *c = &runs[0];
	double *x = xmalloc(n * sizeof *x), *mean = xmalloc(n * sizeof *mean), *p99 = xmalloc(n * sizeof *p99);
	double hold = c->hold_ms + c->work_ms, ceiling = sums[0].theory.ceiling_per_s, xmax = 0, top = 5 * hold;
	for (int i = 0; i < n; i++) {
		x[i] = runs[i].rps;
		mean[i] = sums[i].latency_ms.mean;
		p99[i] = sums[i].latency_ms.p99;
		xmax = fmax(xmax, x[i]);
		if (x[i] < ceiling * 0.999)   /* the chart shows the knee; the overload is labelled */
			top = fmax(top, p99[i]);
	}
	char sub[200], s[80];
	snprintf(sub, sizeof sub, "%d row%s, %g ms holds (%s), %s arrivals, %g s a point, seed %llu",
	         c->rows, c->rows > 1 ? "s" : "", hold, c->hold_dist == SIM_DIST_CONST ? "constant" : "exponential",
	         c->arrivals == SIM_ARRIVE_POISSON ? "Poisson" : "constant", c->seconds,
	         (unsigned long long)c->seed);
	begin(f, TOP + PANEL_H + 60, "Latency against offered load: the hockey stick", sub);
	struct panel p = { LEFT, TOP + 4, W - LEFT - RIGHT, PANEL_H, 0, nice_max(fmax(xmax, ceiling) * 1.04, 6),
	                   0, nice_max(top * 1.1, 5), 0 };
	axes(f, &p, "offered load (likes per second)", "latency (ms)", 1);
	const char *model = NULL;
	int m = 0;
	double tx[201], ty[201];
	for (int i = 0; i <= 200; i++) {
		double r = ceiling * i / 200.0, w = model_mean_ms(c, r, &model);
		if (w < 0 || w > p.ymax * 1.5)
			break;
		tx[m] = r, ty[m++] = w;
	}
	char v[40];
	number(v, sizeof v, ceiling);
	snprintf(s, sizeof s, "ceiling %s/s = rows / hold", v);
	vline(f, &p, ceiling, C_OFFER, s);
	line(f, &p, tx, ty, m, C_THEORY, "6 4", 1.8);
	line(f, &p, x, p99, n, C_P99, "", 1.2);
	line(f, &p, x, mean, n, C_MEAN, "", 1.2);
	dots(f, &p, x, p99, n, C_P99);
	dots(f, &p, x, mean, n, C_MEAN);
	legend(f, &p, C_MEAN, "", "measured mean");
	legend(f, &p, C_P99, "", "measured p99");
	if (model)
		legend(f, &p, C_THEORY, "6 4", model);
	int off = 0;
	for (int i = 0; i < n; i++) {
		if (p99[i] <= p.ymax)
			continue;
		char a[32], b[32], r[32], line_text[120];
		number(r, sizeof r, x[i]);
		number(a, sizeof a, round(mean[i]));
		number(b, sizeof b, round(p99[i]));
		if (!off++)
			text(f, p.x0 + 14, p.y0 + 24 + 18 * p.legend, "start", NULL,
			     "\xe2\x96\xb2 off the chart (mean, p99):");
		snprintf(line_text, sizeof line_text, "at %s/s: %s ms, %s ms", r, a, b);
		text(f, p.x0 + 26, p.y0 + 24 + 18 * p.legend + 16 * off, "start", "font-size=\"12\"", line_text);
	}
	free(x), free(mean), free(p99);
	return 0;
}

static int sweep_throughput(FILE *f, const char *name, char *const *values,
                            const struct sim_config *runs, const struct sim_summary *sums, int n)
{
	double *x = xmalloc(n * sizeof *x), *got = xmalloc(n * sizeof *got),
	       *offer = xmalloc(n * sizeof *offer), *theory = xmalloc(n * sizeof *theory);
	int num = numeric(values, n, x), points = num ? 0 : 1;
	double top = 0;
	for (int i = 0; i < n; i++) {
		if (!num)
			x[i] = i + 1;
		got[i] = sums[i].throughput_per_s;
		offer[i] = sums[i].duration_s > 0 ? sums[i].offered / runs[i].seconds : runs[i].rps;
		theory[i] = fmin(offer[i], sums[i].theory.ceiling_per_s);
		top = fmax(top, fmax(got[i], offer[i]));
	}
	const struct sim_config *c = &runs[0];
	char title[120], sub[200], xl[80];
	snprintf(title, sizeof title, "Throughput against %s", name);
	snprintf(sub, sizeof sub, "%g likes/s offered, %g ms holds, %s, %g s a point, seed %llu",
	         c->rps, c->hold_ms + c->work_ms, sim_strategy_name(c->strategy), c->seconds,
	         (unsigned long long)c->seed);
	begin(f, TOP + PANEL_H + 60, title, sub);
	double lo = num ? fmin(0, x[0]) : 0.5, hi = num ? nice_max(x[n - 1] * 1.04, 6) : n + 0.5;
	for (int i = 0; num && i < n; i++)
		hi = fmax(hi, x[i]);
	struct panel p = { LEFT, TOP + 4, W - LEFT - RIGHT, PANEL_H, lo, hi, 0, nice_max(top * 1.12, 5), 0 };
	snprintf(xl, sizeof xl, "%s", name);
	axes(f, &p, xl, "likes per second", num);
	for (int i = 0; !num && i < n; i++)
		text(f, px(&p, x[i]), p.y0 + p.h + 18, "middle", NULL, values[i]);
	(void)points;
	line(f, &p, x, offer, n, C_OFFER, "2 4", 1.5);
	line(f, &p, x, theory, n, C_THEORY, "6 4", 1.8);
	line(f, &p, x, got, n, C_MEAN, "", 1.2);
	dots(f, &p, x, got, n, C_MEAN);
	legend(f, &p, C_MEAN, "", "measured throughput");
	legend(f, &p, C_THEORY, "6 4", "theory: min(offered, rows / hold)");
	legend(f, &p, C_OFFER, "2 4", "offered");
	free(x), free(got), free(offer), free(theory);
	return 0;
}

int figure_sweep(const char *path, const char *name, char *const *values,
                 const struct sim_config *runs, const struct sim_summary *sums, int n)
{
	struct util_file_out out;
	FILE *f = open_svg(&out, path);
	if (!f)
		return 1;
	if (!strcmp(name, "rps"))
		sweep_latency(f, runs, sums, n);
	else
		sweep_throughput(f, name, values, runs, sums, n);
	return close_svg(&out);
}

/* When the offered rate first passes the ceiling, from the config. */
static double overload_at_s(const struct sim_config *c, double ceiling)
{
	if (c->rps > ceiling)
		return 0;
	for (int i = 0; i < c->nphases; i++)
		if (c->phases[i].rps > ceiling)
			return c->phases[i].at_us / 1e6;
	return -1;
}

int figure_run(const char *path, const struct sim *s, const struct sim_config *given)
{
	struct sim_snapshot *snap = xmalloc(sizeof *snap);
	sim_snapshot(s, snap);
	const struct sim_config *c = &snap->config;
	const struct sim_summary *o = &snap->summary;
	int n = snap->nseries;
	double *t = xmalloc((n + 1) * sizeof *t), *off = xmalloc((n + 1) * sizeof *off),
	       *done = xmalloc((n + 1) * sizeof *done), *use = xmalloc((n + 1) * sizeof *use);
	double top = 0, tmax = 0, umax = c->pool;
	for (int i = 0; i < n; i++) {
		const struct sim_tick *k = &snap->series[i];
		t[i] = k->t_s, off[i] = k->offered_per_s, done[i] = k->completed_per_s;
		use[i] = k->pool_in_use;
		top = fmax(top, fmax(off[i], done[i]));
		tmax = fmax(tmax, t[i]);
		umax = fmax(umax, use[i]);
	}
	struct util_file_out out;
	FILE *f = open_svg(&out, path);
	if (!f) {
		free(snap), free(t), free(off), free(done), free(use);
		return 1;
	}
	char sub[220], lbl[120], v[40];
	snprintf(sub, sizeof sub, "%s%s%s, %d row%s, %g ms holds, pool %d%s, seed %llu",
	         c->scenario[0] ? c->scenario : sim_strategy_name(c->strategy), c->scenario[0] ? ": " : "",
	         c->scenario[0] ? sim_strategy_name(c->strategy) : "", c->rows, c->rows > 1 ? "s" : "",
	         c->hold_ms + c->work_ms, c->pool, c->pool ? "" : " (unbounded)", (unsigned long long)c->seed);
	int height = TOP + 2 * PANEL_H + GAP + 60;
	begin(f, height, "One run: the row's ceiling, then the pool filling up", sub);
	struct panel a = { LEFT, TOP + 4, W - LEFT - RIGHT, PANEL_H, 0, nice_max(tmax, 6), 0, nice_max(top * 1.12, 5), 0 };
	axes(f, &a, "simulated time (s)", "likes per second", 1);
	number(v, sizeof v, o->theory.ceiling_per_s);
	snprintf(lbl, sizeof lbl, "theory: ceiling %s/s = rows / hold", v);
	hline(f, &a, o->theory.ceiling_per_s, C_THEORY, lbl);
	line(f, &a, t, off, n, C_OFFER, "", 1.5);
	line(f, &a, t, done, n, C_MEAN, "", 2);
	legend(f, &a, C_OFFER, "", "offered");
	legend(f, &a, C_MEAN, "", "completed");

	struct panel b = { LEFT, a.y0 + PANEL_H + GAP, W - LEFT - RIGHT, PANEL_H, 0, a.xmax, 0,
	                   nice_max(fmax(umax, 1) * 1.12, 5), 0 };
	axes(f, &b, "simulated time (s)", "connections in use", 1);
	if (c->pool) {
		snprintf(lbl, sizeof lbl, "pool size %d", c->pool);
		hline(f, &b, c->pool, C_OFFER, lbl);
	}
	/* A schedule's pool_full_s counts from the start already (the fluid line). */
	double over = o->theory.model == SIM_MODEL_FLUID ? 0 : overload_at_s(given, o->theory.ceiling_per_s);
	if (c->pool && over >= 0 && o->theory.pool_full_s >= 0) {
		number(v, sizeof v, round((over + o->theory.pool_full_s) * 100) / 100);
		snprintf(lbl, sizeof lbl, "theory: full at %s s = overload + P / (\xce\xbb \xe2\x88\x92 \xce\xbc)", v);
		vline(f, &b, over + o->theory.pool_full_s, C_THEORY, lbl);
	}
	line(f, &b, t, use, n, C_POOL, "", 2);
	legend(f, &b, C_POOL, "", o->pool.exhausted_at_s >= 0 ? "in use (measured: full when it meets the pool size)" :
	       "in use (measured)");
	free(snap), free(t), free(off), free(done), free(use);
	return close_svg(&out);
}

/* One side's time series, pulled from its snapshot. */
struct side_series {
	int n;
	double *t, *done, *p99;
	double top_done, top_p99, tmax;
};

static void side_pull(const struct sim *s, struct side_series *o)
{
	struct sim_snapshot *snap = xmalloc(sizeof *snap);
	sim_snapshot(s, snap);
	o->n = snap->nseries;
	o->t = xmalloc((o->n + 1) * sizeof *o->t);
	o->done = xmalloc((o->n + 1) * sizeof *o->done);
	o->p99 = xmalloc((o->n + 1) * sizeof *o->p99);
	o->top_done = o->top_p99 = o->tmax = 0;
	for (int i = 0; i < o->n; i++) {
		const struct sim_tick *k = &snap->series[i];
		o->t[i] = k->t_s, o->done[i] = k->completed_per_s, o->p99[i] = k->p99_ms;
		o->top_done = fmax(o->top_done, fmax(k->completed_per_s, k->offered_per_s));
		o->top_p99 = fmax(o->top_p99, k->p99_ms);
		o->tmax = fmax(o->tmax, k->t_s);
	}
	free(snap);
}

static void side_free(struct side_series *o)
{
	free(o->t), free(o->done), free(o->p99);
}

int figure_compare(const char *path, const struct sim *a, const struct sim *b,
                   const char *name_a, const char *name_b)
{
	struct side_series sa, sb;
	char sub[300], la[160], lb[160];
	const char *dash_b = "7 4";    /* B dashed: apart without colour too */

	side_pull(a, &sa);
	side_pull(b, &sb);
	struct util_file_out out;
	FILE *f = open_svg(&out, path);
	if (!f) {
		side_free(&sa), side_free(&sb);
		return 1;
	}
	snprintf(sub, sizeof sub, "A: %s (solid), B: %s (dashed); the same seed, %llu",
	         name_a, name_b, (unsigned long long)sim_config(a)->seed);
	begin(f, TOP + 2 * PANEL_H + GAP + 60, "Two setups, the same arrivals, one scale", sub);
	double tmax = nice_max(fmax(sa.tmax, sb.tmax), 6);
	struct panel p = { LEFT, TOP + 4, W - LEFT - RIGHT, PANEL_H, 0, tmax, 0,
	                   nice_max(fmax(fmax(sa.top_done, sb.top_done), 1) * 1.12, 5), 0 };
	axes(f, &p, "simulated time (s)", "likes completed per second", 1);
	line(f, &p, sa.t, sa.done, sa.n, C_MEAN, "", 2);
	line(f, &p, sb.t, sb.done, sb.n, C_P99, dash_b, 2);
	snprintf(la, sizeof la, "A: %s", name_a);
	snprintf(lb, sizeof lb, "B: %s", name_b);
	legend(f, &p, C_MEAN, "", la);
	legend(f, &p, C_P99, dash_b, lb);

	struct panel q = { LEFT, p.y0 + PANEL_H + GAP, W - LEFT - RIGHT, PANEL_H, 0, tmax, 0,
	                   nice_max(fmax(fmax(sa.top_p99, sb.top_p99), 1) * 1.12, 5), 0 };
	axes(f, &q, "simulated time (s)", "p99 latency of the tick (ms)", 1);
	line(f, &q, sa.t, sa.p99, sa.n, C_MEAN, "", 2);
	line(f, &q, sb.t, sb.p99, sb.n, C_P99, dash_b, 2);
	legend(f, &q, C_MEAN, "", la);
	legend(f, &q, C_P99, dash_b, lb);
	side_free(&sa), side_free(&sb);
	return close_svg(&out);
}
