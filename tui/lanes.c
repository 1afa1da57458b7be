/*
 * lanes.c: drawing row locks and their FIFO queues.
 */
#include <stdio.h>
#include <string.h>

#include "tui/fmt.h"
#include "tui/follow.h"
#include "tui/lanes.h"

#define LABEL_W 8     /* "slot 63 " */
#define DEPTH_W 14    /* " waiting 1,234" */
#define CELL_W  9     /* folded form: "63 ■ 1.2k" */

static enum tui_style depth_style(int depth)
{
	if (depth == 0)
		return TUI_GOOD;
	if (depth < 10)
		return TUI_WAIT1;
	if (depth < 100)
		return TUI_WAIT2;
	return TUI_WAIT3;
}

/* A lane's name: a slot of a sharded counter, a sub-account of the
 * ledger's fee account, or the one row. */
static const char *row_word(const struct sim_snapshot *snap)
{
	switch (snap->config.strategy) {
	case SIM_SHARDED: return "slot";
	case SIM_LEDGER:  return "fee";
	default:          return "row";
	}
}

int tui_lanes_height(const struct sim_snapshot *snap, int w)
{
	int n = snap->nlanes > 0 ? snap->nlanes : 1;
	int extra = (snap->nrows > snap->nlanes) + (snap->config.strategy == SIM_LEDGER);
	(void)w;
	return 1 + n + extra;
}

static void heading(struct tui_screen *s, struct tui_rect r,
                    const struct sim_snapshot *snap)
{
	char ceil[32], hold[32], trips[32];
	const struct sim_config *c = &snap->config;
	double hold_ms = sim_lock_ms(c);
	double trips_ms = c->trips_in_lock * c->rtt_ms;
	int rows = snap->nrows > 0 ? snap->nrows : 1;

	tui_fmt_ms(hold, sizeof hold, hold_ms);
	tui_fmt_ms(trips, sizeof trips, trips_ms);
	char line[128];
	int x = r.x + tui_screen_text(s, r.x, r.y, r.w, TUI_HEAD, "LOCK LANES");
	int n;
	if (sim_strategy_info(snap->config.strategy)->batches) {
		/* In transactions a second, the unit the chart's offered and
		 * done lines count in, and the very figure its ceiling line
		 * shows: only those with a transfer applied lock a fee row,
		 * and each carries B sales. */
		int b = sim_config_batch(&snap->config);
		double visits = sim_lock_visits(&snap->config);
		char more[64], sales[32];
		int room = r.x + r.w - x;
		tui_fmt_rate(ceil, sizeof ceil, snap->summary.theory.ceiling_per_s);
		n = snprintf(line, sizeof line, "  ceiling %s = %d fee row%s / %s hold", ceil,
		             rows, rows == 1 ? "" : "s", hold);
		/* What fits of the rest: the sales it carries, then the share
		 * that locks. */
		snprintf(more, sizeof more, " (%s sales)",
		         tui_fmt_rate(sales, sizeof sales, snap->summary.theory.ceiling_per_s * b));
		if (b > 1 && n + (int)strlen(more) <= room)
			n += snprintf(line + n, sizeof line - (size_t)n, "%s", more);
		snprintf(more, sizeof more, ", %.0f%% lock", 100 * visits);
		if (visits < 0.9995 && n + (int)strlen(more) <= room)
			n += snprintf(line + n, sizeof line - (size_t)n, "%s", more);
	} else {
		tui_fmt_rate(ceil, sizeof ceil, hold_ms > 0 ? rows * 1000.0 / hold_ms : 0);
		n = snprintf(line, sizeof line, "  ceiling %s = %d %s%s / %s hold", ceil,
		             rows, row_word(snap), rows == 1 ? "" : "s", hold);
	}
	/* The round trips made while the lock is held: the hold's share the
	 * database spends waiting for the app. */
	if (trips_ms > 0 && sim_strategy_direct(c->strategy)) {
		int m = snprintf(line + n, sizeof line - (size_t)n, " (%s RTT)", trips);
		if (n + m > r.x + r.w - x)
			line[n] = '\0';
		else
			n += m;
	}
	if (n > r.x + r.w - x)          /* narrow: the short form */
		snprintf(line, sizeof line, "  ceiling %s", ceil);
	tui_screen_text(s, x, r.y, r.x + r.w - x, TUI_DIM, line);
}

/* One lane per line: label, holder, queue, depth. */
static void lane_line(struct tui_screen *s, struct tui_rect r, int y, int i,
                      const struct sim_lane *l, const struct sim_snapshot *snap,
                      const struct tui_glyphs *g)
{
	char depth[32], num[24];
	int qx = r.x + LABEL_W + 2;
	int qw = r.w - LABEL_W - 2 - DEPTH_W;

	if (snap->nrows == 1)
		tui_screen_text(s, r.x, y, LABEL_W, TUI_BOLD, row_word(snap));
	else
		tui_screen_textf(s, r.x, y, LABEL_W, TUI_BOLD, "%s %d", row_word(snap), i);
	tui_screen_put(s, r.x + LABEL_W, y, l->held ? g->hold : g->free_lock,
	               l->held ? TUI_HOLD : TUI_DIM);
	tui_screen_put(s, r.x + LABEL_W + 1, y, g->vline, TUI_DIM);

	int shown = l->queue_len < qw ? l->queue_len : qw;
	if (l->queue_len > qw && qw > 0)
		shown = qw - 1;
	for (int k = 0; k < shown; k++) {
		/* Past the listed waiters the ages are unknown, but newer than
		 * the last listed one: draw them with its glyph at most. */
		int64_t age = k < l->nwaiters ? l->waiter_age_us[k]
		            : (l->nwaiters > 0 ? l->waiter_age_us[l->nwaiters - 1] : 0);
		int a = tui_glyph_age(age);
		tui_screen_put(s, qx + k, y, g->wait[a], (enum tui_style)(TUI_WAIT1 + a));
	}
	if (l->queue_len > shown && qw > 0)
		tui_screen_put(s, qx + shown, y, g->more, TUI_WAIT3);
	int fx = tui_follow_lane_x(snap, i, r.x + LABEL_W, qx, shown);
	if (fx >= 0)                  /* the like followed (tui/follow.c) */
		tui_screen_put(s, fx, y, tui_follow_glyph(g->ascii), TUI_KEY);

	snprintf(depth, sizeof depth, "%s waiting",
	         tui_fmt_int(num, sizeof num, l->queue_len));
	int dl = (int)strlen(depth);
	if (dl > DEPTH_W - 1)
		dl = DEPTH_W - 1;
	tui_screen_text(s, r.x + r.w - dl, y, dl, depth_style(l->queue_len), depth);
}

/* Folded: cells of "NN ■ depth" in a grid. */
static int folded(struct tui_screen *s, struct tui_rect r, int y0,
                  const struct sim_snapshot *snap, const struct tui_glyphs *g)
{
	int per_line = r.w / CELL_W > 0 ? r.w / CELL_W : 1;
	int lines = r.y + r.h - y0;
	int fit = per_line * lines;
	int n = snap->nlanes < fit ? snap->nlanes : fit;

	for (int i = 0; i < n; i++) {
		const struct sim_lane *l = &snap->lanes[i];
		char num[24];
		int x = r.x + (i % per_line) * CELL_W, y = y0 + i / per_line;
		tui_screen_textf(s, x, y, 2, TUI_DIM, "%2d", i);
		tui_screen_put(s, x + 3, y, l->held ? g->hold : g->free_lock,
		               l->held ? TUI_HOLD : TUI_DIM);
		tui_screen_text(s, x + 5, y, CELL_W - 6, depth_style(l->queue_len),
			tui_fmt_short(num, sizeof num, l->queue_len));
	}
	return n;
}

int tui_lanes_draw(struct tui_screen *s, struct tui_rect r,
                   const struct sim_snapshot *snap, const struct tui_glyphs *g)
{
	char num[24];
	int y = r.y + 1, end = r.y + r.h;
	int hidden = snap->nrows - snap->nlanes;

	if (r.h < 1 || r.w < LABEL_W + DEPTH_W + 4)
		return 0;
	heading(s, r, snap);
	int room = end - y - (hidden > 0 ? 1 : 0);
	if (snap->nlanes <= room) {
		for (int i = 0; i < snap->nlanes; i++)
			lane_line(s, r, y++, i, &snap->lanes[i], snap, g);
	} else {
		struct tui_rect fr = {r.x, y, r.w, room};
		int n = folded(s, fr, y, snap, g);
		hidden += snap->nlanes - n;
		int per_line = r.w / CELL_W > 0 ? r.w / CELL_W : 1;
		y += (n + per_line - 1) / per_line;
	}
	if (hidden > 0 && y < end)
		tui_screen_textf(s, r.x, y++, r.w, TUI_DIM, "+ %s more %ss not shown",
			tui_fmt_int(num, sizeof num, hidden), row_word(snap));
	/* The fee account is its sub-accounts: its balance is their sum. */
	if (snap->config.strategy == SIM_LEDGER && y < end)
		tui_screen_textf(s, r.x, y++, r.w, TUI_DIM, "fee balance = the sum of %d "
			"sub-account%s: %s sales credited", snap->nrows, snap->nrows == 1 ? "" : "s",
			tui_fmt_int(num, sizeof num, snap->summary.count.visible));
	return y - r.y;
}
