/*
 * pool.c: drawing pooled connections, their waiters and the collateral
 * damage on other endpoints.
 */
#include <stdio.h>
#include <string.h>

#include "tui/fmt.h"
#include "tui/follow.h"
#include "tui/pool.h"

static const enum tui_style conn_style[] = {
	[SIM_CONN_IDLE] = TUI_DIM,
	[SIM_CONN_LOCK_WAIT] = TUI_WAIT2,
	[SIM_CONN_LOCK_HOLD] = TUI_HOLD,
	[SIM_CONN_UNRELATED] = TUI_UNREL,
	[SIM_CONN_FLUSH] = TUI_FLUSH,
	[SIM_CONN_OUTSIDE] = TUI_WAIT1,
};

static const char *const conn_word[] = {
	[SIM_CONN_IDLE] = "idle",
	[SIM_CONN_LOCK_WAIT] = "lock wait",
	[SIM_CONN_LOCK_HOLD] = "lock held",
	[SIM_CONN_UNRELATED] = "login",
	[SIM_CONN_FLUSH] = "flush",
	[SIM_CONN_OUTSIDE] = "outside lock",
};

/* Columns per cell: two ("■ ") when they fit in a few lines, else one. */
static int cell_w(const struct sim_snapshot *snap, int w)
{
	return snap->npool * 2 <= w * 3 ? 2 : 1;
}

static int cell_lines(const struct sim_snapshot *snap, int w)
{
	int per = w / cell_w(snap, w);
	if (per < 1)
		per = 1;
	return snap->npool > 0 ? (snap->npool + per - 1) / per : 1;
}

int tui_pool_height(const struct sim_snapshot *snap, int w)
{
	int cl = cell_lines(snap, w);
	return 1 + (cl > 4 ? 4 : cl) + 3;
}

double tui_pool_unrelated_failing(const struct sim_snapshot *snap)
{
	/* Over the last second: one tick alone jitters (a burst of timeouts
	 * can even outrun the arrivals for 100 ms). */
	double tick_s = (snap->config.tick_ms > 0 ? snap->config.tick_ms : 100) / 1000;
	int n = (int)(1 / tick_s + 0.5), k = 0;
	double sum = 0;

	for (int i = snap->nseries - 1; i >= 0 && k < n; i--, k++)
		sum += snap->series[i].unrelated_failed_per_s;
	return k ? sum / k : 0;
}

static void heading(struct tui_screen *s, struct tui_rect r,
                    const struct sim_snapshot *snap)
{
	char a[24], b[24];
	int x = r.x + tui_screen_text(s, r.x, r.y, r.w, TUI_HEAD, "CONNECTION POOL");
	bool full = snap->pool_size > 0 && snap->pool_in_use >= snap->pool_size;

	if (snap->counter_pool_size > 0) {     /* a bulkhead: each pool for itself */
		int cp = snap->counter_pool_size, mp = snap->pool_size - cp;
		int mu = snap->pool_in_use - snap->counter_in_use;
		bool cfull = snap->counter_in_use >= cp, mfull = mp > 0 && mu >= mp;
		x += tui_screen_textf(s, x, r.y, r.x + r.w - x, cfull ? TUI_BAD : TUI_DIM,
			"S  likes' own %s of %d%s", tui_fmt_int(a, sizeof a, snap->counter_in_use),
			cp, cfull ? " FULL" : "");
		tui_screen_textf(s, x, r.y, r.x + r.w - x, mfull ? TUI_BAD : TUI_DIM,
			"  shared %s of %d%s", tui_fmt_int(b, sizeof b, mu), mp, mfull ? " FULL" : "");
		return;
	}
	if (snap->pool_size > 0)
		tui_screen_textf(s, x, r.y, r.x + r.w - x, full ? TUI_BAD : TUI_DIM,
			"  %s of %d in use%s", tui_fmt_int(a, sizeof a, snap->pool_in_use),
			snap->pool_size, full ? ", FULL" : "");
	else
		tui_screen_textf(s, x, r.y, r.x + r.w - x, TUI_DIM,
			"  unbounded, %s in use", tui_fmt_int(b, sizeof b, snap->pool_in_use));
}

/* The cells, at most maxl lines; an ellipsis when some do not fit. */
static int cells(struct tui_screen *s, struct tui_rect r, int y, int maxl,
                 const struct sim_snapshot *snap, const struct tui_glyphs *g)
{
	int cw = cell_w(snap, r.w), per = r.w / cw;
	int fit = per * maxl, n = snap->npool;
	bool cut = n > fit;

	if (cut)
		n = fit - 1;
	for (int i = 0; i < n; i++) {
		enum sim_conn_state c = snap->pool_cells[i];
		tui_screen_put(s, r.x + (i % per) * cw, y + i / per, g->conn[c], conn_style[c]);
	}
	if (cut)
		tui_screen_put(s, r.x + (n % per) * cw, y + n / per, g->more, TUI_DIM);
	int used = (n + (cut ? 1 : 0) + per - 1) / per;
	return used > 0 ? used : 1;
}

static void legend(struct tui_screen *s, struct tui_rect r, int y,
                   const struct tui_glyphs *g)
{
	int x = r.x;
	for (int c = SIM_CONN_IDLE; c <= SIM_CONN_FLUSH && x < r.x + r.w; c++) {
		tui_screen_put(s, x, y, g->conn[c], conn_style[c]);
		x += 2;
		x += tui_screen_text(s, x, y, r.x + r.w - x, TUI_DIM, conn_word[c]) + 2;
	}
}

static void waiters(struct tui_screen *s, struct tui_rect r, int y,
                    const struct sim_snapshot *snap, const struct tui_glyphs *g)
{
	char a[24], b[24];
	int n;
	if (snap->counter_pool_size > 0) {
		int shared = snap->pool_waiters - snap->counter_waiters;
		n = tui_screen_textf(s, r.x, y, r.w, shared > 0 ? TUI_WARN : TUI_DIM,
			"%s likes waiting for their own pool, %s requests for the shared one",
			tui_fmt_int(a, sizeof a, snap->counter_waiters),
			tui_fmt_int(b, sizeof b, shared));
	} else {
		n = tui_screen_textf(s, r.x, y, r.w, snap->pool_waiters > 0 ? TUI_WARN : TUI_DIM,
			"%s request%s waiting for a connection",
			tui_fmt_int(a, sizeof a, snap->pool_waiters),
			snap->pool_waiters == 1 ? "" : "s");
	}
	tui_follow_pool_mark(s, r.x + n + 2, y, r.w - n - 2, snap, g->ascii);
}

/* The login page's line: OK, STALLED (queued behind the hot row's
 * requests) or FAILING (its acquire timeout gave up), with a long form and
 * a short one for narrow panels. */
static void endpoint(struct tui_screen *s, struct tui_rect r, int y,
                     const struct sim_snapshot *snap, const struct tui_glyphs *g)
{
	char a[24], b[24], c[24], full[128], brief[64];
	double failing = tui_pool_unrelated_failing(snap);
	double offered = snap->config.unrelated_rps;
	int64_t failed = (int64_t)snap->summary.unrelated.failed;
	int queued = snap->pool_waiters - snap->counter_waiters;   /* ahead of a login */
	uint32_t glyph;
	enum tui_style st;

	if (offered <= 0) {
		tui_screen_text(s, r.x, y, r.w, TUI_DIM, "login page: no traffic");
		return;
	}
	tui_fmt_rate(a, sizeof a, offered);
	tui_fmt_int(c, sizeof c, failed);
	if (failing > 0) {
		glyph = g->fail, st = TUI_BAD;
		tui_fmt_rate(b, sizeof b, failing);
		snprintf(brief, sizeof brief, "FAILING %s of %s", b, a);
		snprintf(full, sizeof full, "%s (%s so far)", brief, c);
	} else if (queued > 0) {
		glyph = g->slow, st = TUI_WARN;
		snprintf(brief, sizeof brief, "STALLED");
		snprintf(full, sizeof full, "STALLED behind %s waiting requests",
		         tui_fmt_int(b, sizeof b, queued));
	} else {
		glyph = g->ok, st = TUI_GOOD;
		snprintf(brief, sizeof brief, "OK %s", a);
		if (failed)
			snprintf(full, sizeof full, "OK %s (%s failed earlier)", a, c);
		else
			snprintf(full, sizeof full, "%s", brief);
	}
	int x = r.x + tui_screen_text(s, r.x, y, r.w, TUI_BOLD, "login page ");
	tui_screen_put(s, x, y, glyph, st);
	x += 2;
	int room = r.x + r.w - x;
	tui_screen_text(s, x, y, room, st, (int)strlen(full) <= room ? full : brief);
}

int tui_pool_draw(struct tui_screen *s, struct tui_rect r,
                  const struct sim_snapshot *snap, const struct tui_glyphs *g)
{
	int y = r.y, end = r.y + r.h;

	if (r.h < 1 || r.w < 10)
		return 0;
	heading(s, r, snap);
	y++;
	/* Cells first, then the endpoint status, the waiters, the legend. */
	int avail = end - y;
	int n_end = avail >= 2, n_wait = avail >= 3, n_leg = avail >= 4;
	int maxl = avail - n_end - n_wait - n_leg;
	int want = cell_lines(snap, r.w);
	if (maxl > want)
		maxl = want;
	if (maxl >= 1)
		y += cells(s, r, y, maxl, snap, g);
	if (n_leg)
		legend(s, r, y++, g);
	if (n_wait)
		waiters(s, r, y++, snap, g);
	if (n_end)
		endpoint(s, r, y++, snap, g);
	return y - r.y;
}
