/*
 * frame.c: laying out the panels on one screen.
 */
#include <stdio.h>
#include <string.h>

#include "tui/chart.h"
#include "tui/compare.h"
#include "tui/explain.h"
#include "tui/fixparts.h"
#include "tui/fmt.h"
#include "tui/follow.h"
#include "tui/frame.h"
#include "tui/help.h"
#include "tui/lanes.h"
#include "tui/pool.h"
#include "tui/rewind.h"
#include "tui/totals.h"

/* The chart inputs, pulled out of one snapshot's series. */
struct series {
	double offered[SIM_SNAP_SERIES], completed[SIM_SNAP_SERIES];
	double p50[SIM_SNAP_SERIES], p99[SIM_SNAP_SERIES];
	double queue[SIM_SNAP_SERIES], waiters[SIM_SNAP_SERIES];
	int n;
	double dt_s;
};

static void pull(const struct sim_snapshot *snap, struct series *o)
{
	o->n = snap->nseries;
	o->dt_s = (snap->config.tick_ms > 0 ? snap->config.tick_ms : 100) / 1000;
	for (int i = 0; i < o->n; i++) {
		const struct sim_tick *t = &snap->series[i];
		o->offered[i] = t->offered_per_s;
		o->completed[i] = t->completed_per_s;
		o->p50[i] = t->p50_ms;
		o->p99[i] = t->p99_ms;
		o->queue[i] = t->queue_len;
		o->waiters[i] = t->pool_waiters;
	}
}

void tui_frame_min(bool compare, int *w, int *h)
{
	*w = compare ? TUI_MIN_COMPARE_W : TUI_MIN_W;
	*h = TUI_MIN_H;
}

static const char *strategy_words(const struct sim_snapshot *snap, char *buf,
                                  size_t len)
{
	const struct sim_strategy_info *in = sim_strategy_info(snap->config.strategy);
	const char *name = in->name;
	char f[24];

	if (in->spread)
		snprintf(buf, len, "%s x%d", name, snap->nrows);
	else if (in->uses_rows)        /* the ledger's fee sub-accounts */
		snprintf(buf, len, "%s, fee x%d, batch %d", name, snap->nrows,
		         sim_config_batch(&snap->config));
	else if (!in->flushes)
		snprintf(buf, len, "%s, one row", name);
	else
		snprintf(buf, len, "%s, flush %s", name,
		         tui_fmt_ms(f, sizeof f, snap->config.flush_ms));
	return buf;
}

static void title_bar(struct tui_screen *s, const struct tui_view *v,
                      const struct sim_snapshot *a, const struct sim_snapshot *b)
{
	char st[64], st2[64], t[32], sp[80];
	const struct sim_snapshot *main = b ? b : a;

	tui_screen_fill(s, (struct tui_rect){0, 0, s->w, 1}, ' ', TUI_TITLE);
	if (v->speed_reached > 0)   /* the engine cannot keep up: say so */
		snprintf(sp, sizeof sp, "%gx (only %.3gx reached)", v->speed, v->speed_reached);
	else if (v->speed >= 1)
		snprintf(sp, sizeof sp, "%gx", v->speed);
	else
		snprintf(sp, sizeof sp, "%gx slow", v->speed);
	int x = 1;
	x += tui_screen_text(s, x, 0, -1, TUI_TITLE, "hotrow") + 2;
	if (main->config.scenario[0])
		x += tui_screen_text(s, x, 0, -1, TUI_TITLE, main->config.scenario) + 2;
	if (b)
		x += tui_screen_textf(s, x, 0, -1, TUI_TITLE, "%s  vs  %s",
			strategy_words(a, st, sizeof st), strategy_words(b, st2, sizeof st2)) + 2;
	else
		x += tui_screen_text(s, x, 0, -1, TUI_TITLE,
			strategy_words(a, st, sizeof st)) + 2;
	x += tui_screen_textf(s, x, 0, -1, TUI_TITLE, "t = %s  %s  %s",
		tui_fmt_s(t, sizeof t, (double)main->now_us / 1e6), sp,
		v->paused ? "PAUSED" : v->tour_title && v->asking ? "asking" :
		v->tour_title && v->step_done ? "waiting" : "running") + 2;
	if (v->message && x < s->w - 4) {
		int len = (int)strlen(v->message);
		int at = s->w - 1 - len > x ? s->w - 1 - len : x;
		tui_screen_text(s, at, 0, s->w - at, TUI_TITLE, v->message);
	}
}

/* A step's question: the question and its choices (the viewer's marked
 * with >), then, once the step has played, the engine's answer, why, and
 * the step's narration. Returns the next free line. */
static int question(struct tui_screen *s, const struct tui_view *v, int y)
{
	char line[700];
	size_t n = 0;

	y += tui_wrap(s, 1, y, s->w - 2, 2, TUI_BOLD, v->question);
	line[0] = '\0';
	for (int i = 0; i < v->nchoices && n < sizeof line; i++)
		n += (size_t)snprintf(line + n, sizeof line - n, "%s%s%c) %s", i ? "   " : "",
		                      i == v->chosen ? "> " : "", 'A' + i, v->choices[i]);
	y += tui_wrap(s, 1, y, s->w - 2, 2, TUI_HEAD, line);
	if (!v->reveal) {
		if (v->chosen >= 0)
			y += tui_wrap(s, 1, y, s->w - 2, 1, TUI_DIM,
			              "Your answer is in: the engine plays the step.");
		return y;
	}
	if (v->right < 0)       /* a tour without its answers: the panels say it */
		snprintf(line, sizeof line, "The engine has played it: its answer is on the "
		         "panels.");
	else if (v->chosen < 0)
		snprintf(line, sizeof line, "The engine's answer: %c. %s", 'A' + v->right, v->reveal);
	else if (v->chosen == v->right)
		snprintf(line, sizeof line, "Right: %c. %s", 'A' + v->right, v->reveal);
	else
		snprintf(line, sizeof line, "Not %c: the engine's answer is %c. %s",
		         'A' + v->chosen, 'A' + v->right, v->reveal);
	y += tui_wrap(s, 1, y, s->w - 2, 2, v->right < 0 ? TUI_HEAD : v->chosen == v->right
	              ? TUI_GOOD : TUI_WARN, line);
	if (v->narration)
		y += tui_wrap(s, 1, y, s->w - 2, 3, TUI_BOLD, v->narration);
	return y;
}

static int tour_box(struct tui_screen *s, const struct tui_view *v, int y)
{
	if (!v->tour_title)
		return y;
	int x = tui_screen_textf(s, 1, y, s->w - 2, TUI_HEAD, "%s  step %d of %d: %s",
		v->tour_title, v->step + 1, v->nsteps, v->step_title ? v->step_title : "");
	const char *cue = v->asking ? "[your answer: a-d]" : v->step_done
		? (v->step + 1 < v->nsteps ? "[Enter: next, b: back]" : "[the end; b: back, q: quit]")
		: "[playing; Enter skips]";
	int cl = (int)strlen(cue);
	if (1 + x + 2 + cl < s->w)
		tui_screen_text(s, s->w - 1 - cl, y, cl, v->step_done ? TUI_WARN : TUI_DIM, cue);
	y++;
	if (v->question)
		return question(s, v, y) + 1;
	if (v->narration)
		y += tui_wrap(s, 1, y, s->w - 2, 3, TUI_BOLD, v->narration);
	return y + 1;
}

/* The y each of the three charts must reach, for a split screen: the
 * larger of both sides' tops (their whole series, ceilings included), so
 * both draw one quantity on one scale. */
struct covers {
	double rate, latency, waiting;
};

static double top(const double *y, int n)
{
	double m = 0;
	for (int i = 0; i < n; i++)
		if (y[i] > m)
			m = y[i];
	return m;
}

static void cover(const struct sim_snapshot *snap, const struct series *d, struct covers *c)
{
	double ref = sim_strategy_direct(snap->config.strategy)
	             ? snap->summary.theory.ceiling_per_s * 1.15 : 0;
	double r = top(d->offered, d->n), q = top(d->p99, d->n);

	if (top(d->completed, d->n) > r)
		r = top(d->completed, d->n);
	if (ref > r)
		r = ref;
	if (top(d->p50, d->n) > q)
		q = top(d->p50, d->n);
	c->rate = r > c->rate ? r : c->rate;
	c->latency = q > c->latency ? q : c->latency;
	r = top(d->queue, d->n) > top(d->waiters, d->n) ? top(d->queue, d->n)
	                                                : top(d->waiters, d->n);
	c->waiting = r > c->waiting ? r : c->waiting;
}

static void charts(struct tui_screen *s, struct tui_rect r, int n,
                   const struct sim_snapshot *snap, const struct tui_view *v,
                   const struct series *d, const struct covers *cv)
{
	const struct tui_glyphs *g = tui_glyphs(v->ascii);
	char ceil[48], num[24];
	int y = r.y;

	snprintf(ceil, sizeof ceil, "ceiling %s",
	         tui_fmt_rate(num, sizeof num, snap->summary.theory.ceiling_per_s));
	struct tui_chart tp = {
		.title = "PER SECOND", .name = {"offered", "done"},
		.y = {d->offered, d->completed}, .n = d->n, .dt_s = d->dt_s,
		.ref = sim_strategy_direct(snap->config.strategy) ? snap->summary.theory.ceiling_per_s : 0,
		.ref_name = ceil, .cover = cv->rate,
	};
	const double *lat[3][2] = {{d->p99, d->p50}, {d->p99, NULL}, {d->p50, NULL}};
	const char *lat_name[3][2] = {{"p99", "p50"}, {"p99", NULL}, {"p50", NULL}};
	struct tui_chart lc = {
		.title = "LATENCY (log)", .name = {lat_name[v->latency][0], lat_name[v->latency][1]},
		.y = {lat[v->latency][0], lat[v->latency][1]}, .n = d->n, .dt_s = d->dt_s,
		.log = true, .floor = 0.1, .fmt = tui_fmt_ms, .cover = cv->latency,
	};
	struct tui_chart qc = {
		.title = "WAITING", .name = {"for the row lock", "for a connection"},
		.y = {d->queue, d->waiters}, .n = d->n, .dt_s = d->dt_s, .cover = cv->waiting,
	};
	const struct tui_chart *all[3] = {&tp, &lc, &qc};
	for (int i = 0; i < n; i++) {
		int h = (r.y + r.h - y) / (n - i);
		tui_chart_draw(s, (struct tui_rect){r.x, y, r.w, h - (i + 1 < n)}, all[i], g);
		y += h;
	}
}

/* The write path's own picture: a fix's parts (the log, the store, the
 * buffer, the append table), else the lock lanes. */
static int path_height(const struct sim_snapshot *snap, int w)
{
	return tui_fixparts_has(snap) ? tui_fixparts_height(snap, w) : tui_lanes_height(snap, w);
}

static int path_draw(struct tui_screen *s, struct tui_rect r, const struct sim_snapshot *snap,
                     const struct tui_glyphs *g)
{
	return tui_fixparts_has(snap) ? tui_fixparts_draw(s, r, snap, g)
	                              : tui_lanes_draw(s, r, snap, g);
}

/* Lanes over pool in r; returns the lines used. */
static int lanes_and_pool(struct tui_screen *s, struct tui_rect r,
                          const struct sim_snapshot *snap, const struct tui_glyphs *g)
{
	int pool_want = tui_pool_height(snap, r.w);
	int lanes_want = path_height(snap, r.w);
	int pool_h = pool_want < r.h - 3 ? pool_want : r.h - 3;
	int lanes_h = lanes_want < r.h - pool_h - 1 ? lanes_want : r.h - pool_h - 1;
	if (pool_h < 1)
		pool_h = r.h - lanes_h;
	int used = path_draw(s, (struct tui_rect){r.x, r.y, r.w, lanes_h}, snap, g);
	int py = r.y + (used > 0 ? used : lanes_h) + 1;
	return py - r.y + tui_pool_draw(s, (struct tui_rect){r.x, py, r.w, r.y + r.h - py}, snap, g);
}

/* The wide layout: lanes, pool and words on the left, charts right. */
static void pane_wide(struct tui_screen *s, struct tui_rect r,
                      const struct sim_snapshot *snap, const struct tui_view *v,
                      struct series *d)
{
	const struct tui_glyphs *g = tui_glyphs(v->ascii);
	int lw = r.w * 11 / 20, rw = r.w - lw - 2;
	int ex_min = 4;
	int top = lanes_and_pool(s, (struct tui_rect){r.x, r.y, lw, r.h - ex_min - 1}, snap, g);

	/* The followed like's card, then the words; the totals take what
	 * room is left at the bottom. */
	int ey = r.y + top + 1;
	int card = tui_follow_card_height(snap);
	if (card > 0 && card <= r.y + r.h - ey - ex_min)
		ey += tui_follow_card_draw(s, (struct tui_rect){r.x, ey, lw, card}, snap,
		                           v->ascii) + 1;
	int room = r.y + r.h - ey;
	int tot = room >= 12 + TUI_TOTALS_H ? TUI_TOTALS_H + 1 : 0;
	int used = tui_explain_draw(s, (struct tui_rect){r.x, ey, lw, room - tot},
	                            snap, v->ascii);
	if (tot && room - used - 1 >= TUI_TOTALS_H)
		tui_totals_draw(s, (struct tui_rect){r.x, r.y + r.h - TUI_TOTALS_H, lw,
		                                     TUI_TOTALS_H}, snap);
	static const struct covers none;
	pull(snap, d);
	charts(s, (struct tui_rect){r.x + lw + 2, r.y, rw, r.h},
	       r.h >= 24 ? 3 : r.h >= 10 ? 2 : 1, snap, v, d, &none);
}

/* Lines lanes and pool want, one blank between. */
static int top_want(const struct sim_snapshot *snap, int w)
{
	return path_height(snap, w) + 1 + tui_pool_height(snap, w);
}

/* The stacked layout, for one half of compare mode: lanes and pool in the
 * top top_h lines (the same for both halves, so they line up), then a
 * chart and the words. */
static void pane_stacked(struct tui_screen *s, struct tui_rect r, int top_h,
                         const char *label, const struct sim_snapshot *snap,
                         const struct tui_view *v, const struct series *d,
                         const struct covers *cv)
{
	const struct tui_glyphs *g = tui_glyphs(v->ascii);
	char st[64];
	int y = r.y;

	tui_screen_textf(s, r.x, y++, r.w, TUI_BOLD, "%s: %s", label,
	                 strategy_words(snap, st, sizeof st));
	lanes_and_pool(s, (struct tui_rect){r.x, y, r.w, top_h}, snap, g);
	y += top_h + 1;
	/* What is left goes to one chart and the words, the chart first. */
	int left = r.y + r.h - y;
	int ex_h = left - 8 < 8 ? left - 8 : 8;
	int chart_h = left - ex_h;
	charts(s, (struct tui_rect){r.x, y, r.w, chart_h}, 1, snap, v, d, cv);
	y += chart_h;
	tui_explain_draw(s, (struct tui_rect){r.x, y, r.w, r.y + r.h - y}, snap, v->ascii);
}

/* Say the screen is too small in whatever room there is: two lines when
 * they fit, else four short ones (20x5 still reads "need 80x24"). */
static void too_small(struct tui_screen *s, int need_w, int need_h)
{
	char msg[64], now[64], need[32], have[32];
	snprintf(msg, sizeof msg, "terminal too small (need %dx%d)", need_w, need_h);
	snprintf(now, sizeof now, "now %dx%d; make it bigger, or q to quit", s->w, s->h);
	snprintf(need, sizeof need, "need %dx%d", need_w, need_h);
	snprintf(have, sizeof have, "now %dx%d", s->w, s->h);
	const char *wide[] = { msg, now };
	const char *narrow[] = { "terminal too small", need, have, "q quits" };
	bool fits = (int)strlen(msg) <= s->w && (int)strlen(now) <= s->w;
	const char *const *lines = fits ? wide : narrow;
	int n = fits ? 2 : 4;
	int y = (s->h - n) / 2 > 0 ? (s->h - n) / 2 : 0;
	for (int i = 0; i < n && y + i < s->h; i++) {
		int len = (int)strlen(lines[i]);
		int x = (s->w - len) / 2 > 0 ? (s->w - len) / 2 : 0;
		tui_screen_text(s, x, y + i, s->w - x, i ? TUI_DIM : TUI_BAD, lines[i]);
	}
}

/* The scenario picker: every scenario with its one-line summary. */
static void picker(struct tui_screen *s, const struct tui_view *v)
{
	const char *const *names = sim_scenario_names();
	const struct tui_glyphs *g = tui_glyphs(v->ascii);
	int n = 0;
	while (names[n])
		n++;
	int w = s->w - 4 < 100 ? s->w - 4 : 100;
	int h = n + 4 < s->h - 2 ? n + 4 : s->h - 2;
	int x0 = (s->w - w) / 2, y0 = (s->h - h) / 2;
	int sel = v->picker - 1;

	tui_screen_fill(s, (struct tui_rect){x0, y0, w, h}, ' ', TUI_NORMAL);
	for (int x = x0; x < x0 + w; x++) {
		tui_screen_put(s, x, y0, g->hline, TUI_HEAD);
		tui_screen_put(s, x, y0 + h - 1, g->hline, TUI_HEAD);
	}
	for (int y = y0; y < y0 + h; y++) {
		tui_screen_put(s, x0, y, g->vline, TUI_HEAD);
		tui_screen_put(s, x0 + w - 1, y, g->vline, TUI_HEAD);
	}
	tui_screen_put(s, x0, y0, g->box[0], TUI_HEAD);
	tui_screen_put(s, x0 + w - 1, y0, g->box[1], TUI_HEAD);
	tui_screen_put(s, x0, y0 + h - 1, g->box[2], TUI_HEAD);
	tui_screen_put(s, x0 + w - 1, y0 + h - 1, g->box[3], TUI_HEAD);
	tui_screen_text(s, x0 + 2, y0, w - 4, TUI_HEAD,
	                " SCENARIOS  (Up/Down, Enter loads, Esc closes) ");
	/* Scroll so the highlighted line stays in view. */
	int rows = h - 4, first = sel >= rows ? sel - rows + 1 : 0;
	for (int i = first; i < n && i - first < rows; i++) {
		int y = y0 + 2 + i - first;
		enum tui_style st = i == sel ? TUI_KEY : TUI_NORMAL;
		if (i == sel)
			tui_screen_fill(s, (struct tui_rect){x0 + 1, y, w - 2, 1}, ' ', st);
		tui_screen_text(s, x0 + 2, y, 22, i == sel ? st : TUI_BOLD, names[i]);
		const char *blurb = sim_scenario_blurb(names[i]);
		tui_screen_text(s, x0 + 25, y, w - 27, st, blurb ? blurb : "");
	}
}

void tui_frame_draw(struct tui_screen *scr, const struct tui_view *v,
                    const struct sim_snapshot *a, const struct sim_snapshot *b)
{
	static struct series d, d2;    /* large; one frame is drawn at a time */
	int mw, mh;

	tui_screen_clear(scr);
	tui_frame_min(b != NULL, &mw, &mh);
	if (scr->w < mw || scr->h < mh) {
		too_small(scr, mw, mh);
		return;
	}
	title_bar(scr, v, a, b);
	int y = tour_box(scr, v, 1);
	struct tui_rect body = {1, y, scr->w - 2, scr->h - 1 - y};
	if (!b) {
		pane_wide(scr, body, a, v, &d);
	} else {
		struct covers cv = {0};
		pull(a, &d);
		pull(b, &d2);
		cover(a, &d, &cv);
		cover(b, &d2, &cv);
		int half = (body.w - 3) / 2;
		int top_h = top_want(a, half) > top_want(b, half) ? top_want(a, half) : top_want(b, half);
		if (top_h > body.h - 15)
			top_h = body.h - 15;
		pane_stacked(scr, (struct tui_rect){body.x, body.y, half, body.h}, top_h,
		             v->label[0] ? v->label[0] : "BEFORE", a, v, &d, &cv);
		for (int i = 0; i < body.h; i++)
			tui_screen_put(scr, body.x + half + 1, body.y + i,
			               tui_glyphs(v->ascii)->vline, TUI_DIM);
		pane_stacked(scr, (struct tui_rect){body.x + half + 3, body.y, body.w - half - 3, body.h},
		             top_h, v->label[1] ? v->label[1] : "AFTER", b, v, &d2, &cv);
	}
	if (v->scrubbing)
		tui_rewind_bar(scr, 1, scr->h - 1, scr->w - 2, v);
	else
		tui_help_hints(scr, 1, scr->h - 1, scr->w - 2, v->tour_title != NULL);
	if (v->picker)
		picker(scr, v);
	if (v->compare)
		tui_compare_draw(scr, v->compare, tui_glyphs(v->ascii));
	if (v->help)
		tui_help_draw(scr, tui_glyphs(v->ascii), v->tour_title != NULL);
}
