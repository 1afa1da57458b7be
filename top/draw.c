/*
 * draw.c: laying out a sample of a real server in the TUI's look.
 */
#include <stdio.h>
#include <string.h>

#include "top/draw.h"
#include "tui/fmt.h"
#include "tui/glyph.h"

#define LABEL_W 28    /* "posts (0,1) id=1" */
#define DEPTH_W 28    /* "12 waiting, oldest 1.25 s" */

/* A backend's cell: its shape in UTF-8 and in ASCII, and its style. */
static const struct { uint32_t utf8, ascii; enum tui_style style; } cell[TOP_NSTATES] = {
	[TOP_IDLE]       = { 0x00B7, '.', TUI_DIM },     /* · */
	[TOP_ACTIVE]     = { 0x25C6, 'a', TUI_UNREL },   /* ◆ */
	[TOP_IDLE_IN_TX] = { 0x25A1, 'i', TUI_WARN },    /* □ */
	[TOP_LOCK_WAIT]  = { 0x25CB, 'w', TUI_WAIT2 },   /* ○ */
	[TOP_IO_WAIT]    = { 0x25B2, 'd', TUI_FLUSH },   /* ▲ */
	[TOP_HOLDER]     = { 0x25A0, 'H', TUI_HOLD },    /* ■ */
};

static uint32_t shape(enum top_state st, bool ascii)
{
	return ascii ? cell[st].ascii : cell[st].utf8;
}

static void title(struct tui_screen *scr, const struct top_view *v, const struct top_sample *s)
{
	char t[32];
	tui_screen_fill(scr, (struct tui_rect){0, 0, scr->w, 1}, ' ', TUI_TITLE);
	tui_screen_textf(scr, 1, 0, scr->w - 2, TUI_TITLE,
		"hotrow top  %s  every %d ms  sample %lld  t = %s%s", s->server, v->interval_ms,
		(long long)s->seq, tui_fmt_s(t, sizeof t, s->t_s), v->paused ? "  paused" : "");
}

/* "public.posts (0,1) id=1", or "transaction 725" when no tuple lock
 * names the row. The relation comes schema and all (the sampler pins its
 * search_path); when that does not fit in fit columns, the table's own
 * name stands for it, so the key still shows. */
static void lane_label(char *buf, size_t len, const struct top_lane *l, int fit)
{
	if (l->tuple < 0 && l->query[0])     /* the row changed hands: only its statement is known */
		snprintf(buf, len, "%s", l->query);
	else if (l->tuple < 0)
		snprintf(buf, len, "transaction %lld", (long long)l->xid);
	else {
		const char *rel = l->relation;
		for (int pass = 0; pass < 2; pass++) {
			snprintf(buf, len, "%s (%lld,%lld)%s%s", rel, (long long)l->page,
			         (long long)l->tuple, l->key[0] ? " " : "", l->key);
			if ((int)strlen(buf) <= fit || !strrchr(l->relation, '.'))
				break;
			rel = strrchr(l->relation, '.') + 1;
		}
	}
}

/* Two lines: the queue, then who holds it and how the line is made. */
static int lane(struct tui_screen *scr, int y, int w, const struct top_lane *l,
                const struct top_sample *s, const struct tui_glyphs *g)
{
	char label[160], a[32], b[32];
	int qx = 1 + LABEL_W + 2, qw = w - qx - DEPTH_W - 1;

	lane_label(label, sizeof label, l, LABEL_W - 1);
	tui_screen_text(scr, 1, y, LABEL_W - 1, TUI_BOLD, label);
	tui_screen_put(scr, 1 + LABEL_W, y, l->holder_pid ? g->hold : g->free_lock,
	               l->holder_pid ? TUI_HOLD : TUI_DIM);
	tui_screen_put(scr, 2 + LABEL_W, y, g->vline, TUI_DIM);
	int shown = l->nwaiting < qw ? l->nwaiting : qw - 1;
	for (int k = 0; k < shown && qw > 0; k++) {
		/* past the listed waiters, draw the youngest listed age */
		double ms = k < l->nwaiters ? l->waiters[k].wait_ms
		          : l->nwaiters > 0 ? l->waiters[l->nwaiters - 1].wait_ms : 0;
		int age = tui_glyph_age((int64_t)(ms * 1000));
		tui_screen_put(scr, qx + k, y, g->wait[age], (enum tui_style)(TUI_WAIT1 + age));
	}
	if (l->nwaiting > shown && qw > 0)
		tui_screen_put(scr, qx + shown, y, g->more, TUI_WAIT3);
	tui_screen_textf(scr, w - DEPTH_W, y, DEPTH_W, l->oldest_wait_ms >= 1000 ? TUI_BAD : TUI_WARN,
		"%d waiting, oldest %s", l->nwaiting, tui_fmt_ms(a, sizeof a, l->oldest_wait_ms));

	int xid = 0;
	for (int k = 0; k < l->nwaiters; k++)
		xid += l->waiters[k].on_xid;
	int next = l->nwaiters > 0 ? l->waiters[0].pid : 0;
	if (s->innodb)
		tui_screen_textf(scr, 3, y + 1, w - 4, TUI_DIM,
			"held by connection %d (%s, %s); %d wait on the record lock itself; longest: %d",
			l->holder_pid, l->holder_state[0] ? l->holder_state : "?",
			tui_fmt_ms(b, sizeof b, l->holder_age_ms), l->nwaiting, next);
	else if (l->holder_pid)
		tui_screen_textf(scr, 3, y + 1, w - 4, TUI_DIM,
			"held by pid %d (%s, %s); %d waits on its transactionid, %d on a tuple "
			"lock; next: pid %d", l->holder_pid,
			l->holder_state[0] ? l->holder_state : "?", tui_fmt_ms(b, sizeof b, l->holder_age_ms),
			xid, l->nwaiting - xid, next);
	else
		tui_screen_textf(scr, 3, y + 1, w - 4, TUI_DIM,
			"holder not seen this sample; %d waits on a transactionid, %d on a tuple lock",
			xid, l->nwaiting - xid);
	return 2;
}

static int lanes(struct tui_screen *scr, int y, int maxy, const struct top_sample *s,
                 const struct tui_glyphs *g)
{
	char a[32];
	double oldest = 0;
	for (int i = 0; i < s->nlanes; i++)
		if (s->lanes[i].oldest_wait_ms > oldest)
			oldest = s->lanes[i].oldest_wait_ms;
	int x = 1 + tui_screen_text(scr, 1, y, -1, TUI_HEAD, "CONTENDED ROWS");
	if (s->nlanes_total == 0) {
		tui_screen_text(scr, x, y, -1, TUI_DIM, "  no row has a waiter right now");
		return 1;
	}
	tui_screen_textf(scr, x, y, -1, TUI_DIM, "  %d row%s with waiters, %d backend%s waiting "
		"for a row; oldest wait %s", s->nlanes_total, s->nlanes_total == 1 ? "" : "s",
		s->waiting_now, s->waiting_now == 1 ? "" : "s", tui_fmt_ms(a, sizeof a, oldest));
	int used = 1, drawn = 0;
	for (; drawn < s->nlanes && y + used + 2 <= maxy; drawn++)
		used += lane(scr, y + used, scr->w, &s->lanes[drawn], s, g);
	if (s->nlanes_total > drawn && y + used < maxy)
		tui_screen_textf(scr, 1, y + used++, -1, TUI_DIM, "+ %d more rows not shown",
			s->nlanes_total - drawn);
	return used;
}

static int backends(struct tui_screen *scr, int y, const struct top_sample *s, bool ascii)
{
	int x = 1 + tui_screen_text(scr, 1, y, -1, TUI_HEAD, "BACKENDS");
	tui_screen_textf(scr, x, y, -1, TUI_DIM, "  %d client connection%s (this one not counted)",
		s->nbackends, s->nbackends == 1 ? "" : "s");
	int per = (scr->w - 2) / 2, lines = 0;
	int n = s->nbackends < per * 3 ? s->nbackends : per * 3;
	for (int i = 0; i < n; i++) {
		enum top_state st = (enum top_state)s->backend_state[i];
		tui_screen_put(scr, 1 + (i % per) * 2, y + 1 + i / per, shape(st, ascii), cell[st].style);
		lines = i / per + 1;
	}
	if (lines == 0)
		lines = 1;
	int ly = y + 1 + lines;
	x = 1;
	for (int st = 0; st < TOP_NSTATES; st++) {
		tui_screen_put(scr, x, ly, shape((enum top_state)st, ascii), cell[st].style);
		x += 2;
		x += tui_screen_textf(scr, x, ly, -1, TUI_DIM, "%s %d", top_state_name((enum top_state)st),
		                      s->nstate[st]) + 2;
	}
	return 2 + lines;
}

static void rate(char *buf, size_t len, double per_s)
{
	if (per_s < 0)
		snprintf(buf, len, "...");
	else
		tui_fmt_rate(buf, len, per_s);
}

static int per_second(struct tui_screen *scr, int y, const struct top_view *v,
                      const struct top_sample *s)
{
	char c[32], r[32], w[32];
	rate(c, sizeof c, s->commits_per_s);
	rate(r, sizeof r, s->rollbacks_per_s);
	rate(w, sizeof w, s->new_waits_per_s);
	int x = 1 + tui_screen_text(scr, 1, y, -1, TUI_HEAD, "PER SECOND");
	tui_screen_textf(scr, x, y, -1, TUI_NORMAL,
		"  commits %s  rollbacks %s  new lock waits %s (those a %d ms sample caught)  "
		"waiting on a lock now %d", c, r, w, v->interval_ms, s->lock_waits_now);
	return 1;
}

static int statements(struct tui_screen *scr, int y, int maxy, const struct top_sample *s)
{
	char t[32], m[32], n[32];
	int x = 1 + tui_screen_text(scr, 1, y, -1, TUI_HEAD, "TOP STATEMENTS");
	if (s->innodb) {
		tui_screen_text(scr, x, y, -1, TUI_DIM, "  not on MariaDB (performance_schema is off "
			"on the kit's server)");
		return 1;
	}
	if (!s->have_statements) {
		tui_screen_text(scr, x, y, -1, TUI_DIM, "  pg_stat_statements is not installed in this "
			"database (CREATE EXTENSION pg_stat_statements; it needs shared_preload_libraries)");
		return 1;
	}
	tui_screen_text(scr, x, y, -1, TUI_DIM, "  by total time (pg_stat_statements, this database)");
	tui_screen_text(scr, 1, y + 1, -1, TUI_DIM, "     total       calls      mean  query");
	int used = 2;
	for (int i = 0; i < s->nstmts && y + used < maxy; i++, used++) {
		const struct top_stmt *st = &s->stmts[i];
		tui_screen_textf(scr, 1, y + used, -1, TUI_NORMAL, "%10s %11s %9s  %s",
			tui_fmt_ms(t, sizeof t, st->total_ms), tui_fmt_int(n, sizeof n, st->calls),
			tui_fmt_ms(m, sizeof m, st->mean_ms), st->query);
	}
	return used;
}

static void cost(struct tui_screen *scr, int y, const struct top_view *v, const struct top_sample *s)
{
	char q[32], srv[64];
	int x = 1 + tui_screen_text(scr, 1, y, -1, TUI_HEAD, "SAMPLER COST");
	if (s->server_ms_per_s >= 0)
		snprintf(srv, sizeof srv, "server %.2f ms/s (%.2f%% of a core)",
		         s->server_ms_per_s, s->server_ms_per_s / 10);
	else if (s->innodb)
		snprintf(srv, sizeof srv, "reads of information_schema only");
	else if (s->have_statements)
		snprintf(srv, sizeof srv, "server time: after a second");
	else
		snprintf(srv, sizeof srv, "server time: needs pg_stat_statements");
	tui_screen_textf(scr, x, y, -1, TUI_DIM, "  queries %s per sample, round trips included "
		"(%.1f%% of %d ms); %s", tui_fmt_ms(q, sizeof q, s->query_ms),
		100.0 * s->query_ms / (v->interval_ms > 0 ? v->interval_ms : 1), v->interval_ms, srv);
}

void top_draw(struct tui_screen *scr, const struct top_view *v, const struct top_sample *s)
{
	const struct tui_glyphs *g = tui_glyphs(v->ascii);
	int h = scr->h;

	tui_screen_clear(scr);
	title(scr, v, s);
	int y = 2;
	/* the bottom: statements (up to 7 lines), cost, error, keys */
	int bottom = h - 1 - 1 - (v->error ? 1 : 0);
	int stmt_lines = s->have_statements ? 2 + s->nstmts : 1;
	int fixed = 1 + 4 + 1 + 1 + stmt_lines + 1;   /* gaps, backends, rates, ... */
	y += lanes(scr, y, bottom - fixed, s, g) + 1;
	y += backends(scr, y, s, v->ascii) + 1;
	y += per_second(scr, y, v, s) + 1;
	y += statements(scr, y, bottom - 2, s) + 1;
	cost(scr, y < bottom ? y : bottom - 1, v, s);
	if (v->error)
		tui_screen_textf(scr, 1, h - 2, -1, TUI_BAD, "last sample failed: %s", v->error);
	tui_screen_text(scr, 1, h - 1, -1, TUI_DIM, "q quit  Space pause  + - sampling interval");
}
