/*
 * follow.c: the followed request's card and its mark in the lanes.
 */
#include <stdio.h>
#include <string.h>

#include "tui/fmt.h"
#include "tui/follow.h"

#define CARD_LINES 6     /* timeline entries shown: the newest */

void tui_follow_say(enum tui_follow_mode asked, enum tui_follow_mode got, char *note, size_t len)
{
	if (got == TUI_FOLLOW_SLOWEST)
		snprintf(note, len, "following the like in flight longest (f: stop)");
	else if (got == TUI_FOLLOW_OFF)
		snprintf(note, len, "following nobody");
	else
		snprintf(note, len, asked == TUI_FOLLOW_SLOWEST
		         ? "no like in flight: following the next to arrive"
		         : "following the next like to arrive (f again: the slowest)");
}

enum tui_follow_mode tui_follow_set(struct sim *s, enum tui_follow_mode mode,
                                    char *note, size_t len)
{
	enum tui_follow_mode got = mode;

	if (mode == TUI_FOLLOW_OFF) {
		sim_follow_off(s);
	} else if (mode != TUI_FOLLOW_SLOWEST || sim_follow_slowest(s) != 0) {
		sim_follow_next(s);
		got = TUI_FOLLOW_NEXT;
	}
	tui_follow_say(mode, got, note, len);
	return got;
}

enum tui_follow_mode tui_follow_cycle(struct sim *s, enum tui_follow_mode mode,
                                      char *note, size_t len)
{
	struct sim_trace now;

	sim_trace_get(s, &now);
	if (now.state == SIM_TRACE_NONE)
		mode = TUI_FOLLOW_OFF;
	return tui_follow_set(s, (enum tui_follow_mode)((mode + 1) % 3), note, len);
}

/* ---- the lanes' mark ---- */

uint32_t tui_follow_glyph(bool ascii)
{
	return ascii ? '@' : 0x25C9;     /* ◉ */
}

int tui_follow_lane_x(const struct sim_snapshot *snap, int lane, int holder_x,
                      int queue_x, int shown)
{
	const struct sim_trace *t = &snap->trace;

	if (t->state != SIM_TRACE_LIVE || t->row != lane)
		return -1;
	if (t->where == SIM_AT_HOLD || t->where == SIM_AT_FLUSH)
		return holder_x;
	if (t->where != SIM_AT_LOCK_WAIT)
		return -1;
	if (t->position <= 0)            /* drawn by a herd, waking to take it */
		return holder_x;
	return t->position <= shown ? queue_x + (int)t->position - 1 : queue_x + shown;
}

void tui_follow_pool_mark(struct tui_screen *s, int x, int y, int w,
                          const struct sim_snapshot *snap, bool ascii)
{
	const struct sim_trace *t = &snap->trace;
	char num[24];

	if (t->state != SIM_TRACE_LIVE || t->where != SIM_AT_POOL || t->position <= 0 || w < 6)
		return;
	tui_screen_put(s, x, y, tui_follow_glyph(ascii), TUI_KEY);
	tui_screen_textf(s, x + 2, y, w - 2, TUI_BOLD, "#%s in line",
	                 tui_fmt_int(num, sizeof num, t->position));
}

/* ---- the card ---- */

/* Each place's shape in the bar and its style. */
static const struct {
	char ascii;
	uint32_t uni;
	enum tui_style style;
	const char *word;
} place[SIM_AT_N] = {
	[SIM_AT_BEFORE]    = { '-', 0x2500, TUI_DIM,   "before followed" },  /* ─ */
	[SIM_AT_POOL]      = { 'p', 0x2591, TUI_WARN,  "pool wait" },   /* ░ */
	[SIM_AT_OUTSIDE]   = { 'o', 0x00B7, TUI_UNREL, "outside" },     /* · */
	[SIM_AT_LOCK_WAIT] = { 'L', 0x2592, TUI_WAIT3, "lock wait" },   /* ▒ */
	[SIM_AT_HOLD]      = { 'H', 0x2588, TUI_HOLD,  "hold" },        /* █ */
	[SIM_AT_FLUSH]     = { 'F', 0x2593, TUI_FLUSH, "flush" },       /* ▓ */
	[SIM_AT_BACKOFF]   = { 'b', '~',    TUI_DIM,   "backoff" },
	[SIM_AT_OTHER]     = { '.', '.',    TUI_DIM,   "other" },
};

int tui_follow_card_height(const struct sim_snapshot *snap)
{
	const struct sim_trace *t = &snap->trace;
	int n = t->nevents < CARD_LINES ? t->nevents : CARD_LINES;

	if (t->state == SIM_TRACE_NONE)
		return 0;
	if (t->state == SIM_TRACE_WAITING)
		return 1;
	return 2 + n + 2;
}

/* "lock wait, row 0, position 37 of 120" and the like: where it is now. */
static void status(const struct sim_snapshot *snap, char *buf, size_t len)
{
	const struct sim_trace *t = &snap->trace;
	char a[32], num[24], of[24];
	int n = 0;

	if (t->state != SIM_TRACE_LIVE) {
		snprintf(buf, len, "%s after %s", sim_trace_state_name((enum sim_trace_state)t->state),
		         tui_fmt_ms(a, sizeof a, (double)(t->end_us - t->first_us) / 1000.0));
		return;
	}
	n = snprintf(buf, len, "%s", place[t->where].word);
	if (t->position > 0 && t->where == SIM_AT_POOL)
		n += snprintf(buf + n, len - (size_t)n, ", position %s of %s",
		              tui_fmt_int(num, sizeof num, t->position),
		              tui_fmt_int(of, sizeof of, snap->pool_waiters));
	else if (t->position > 0 && t->row >= 0 && t->row < snap->nlanes)
		n += snprintf(buf + n, len - (size_t)n, ", position %s of %s",
		              tui_fmt_int(num, sizeof num, t->position),
		              tui_fmt_int(of, sizeof of, snap->lanes[t->row].queue_len));
	else if (t->where == SIM_AT_LOCK_WAIT)
		n += snprintf(buf + n, len - (size_t)n, ", drawn: waking up");
	if (t->wakes > 0 && n < (int)len)
		n += snprintf(buf + n, len - (size_t)n, ", woken %llu",
		              (unsigned long long)t->wakes);
	if (n < (int)len)
		snprintf(buf + n, len - (size_t)n, ", %s so far",
		         tui_fmt_ms(a, sizeof a, (double)(snap->now_us - t->first_us) / 1000.0));
}

/* One bar of where its time went, w cells: each place gets its share
 * (largest remainders), and at least one cell if it took any time. */
static void bar(struct tui_screen *s, int x, int y, int w, const struct sim_trace *t,
                bool ascii)
{
	int64_t total = 0;
	int cells[SIM_AT_N] = {0}, used = 0;
	double rem[SIM_AT_N] = {0};

	for (int p = 0; p < SIM_AT_N; p++)
		total += t->spent_us[p];
	if (total <= 0 || w <= 0)
		return;
	for (int p = 0; p < SIM_AT_N; p++) {
		double share = (double)w * (double)t->spent_us[p] / (double)total;
		cells[p] = (int)share;
		rem[p] = share - cells[p];
		if (t->spent_us[p] > 0 && cells[p] == 0) {
			cells[p] = 1;
			rem[p] = -1;
		}
		used += cells[p];
	}
	while (used < w) {              /* the largest remainders get the rest */
		int best = -1;
		for (int p = 0; p < SIM_AT_N; p++)
			if (t->spent_us[p] > 0 && (best < 0 || rem[p] > rem[best]))
				best = p;
		cells[best]++;
		rem[best] = -1;
		used++;
	}
	while (used > w) {              /* minimum cells took too many: the largest give */
		int big = 0;
		for (int p = 1; p < SIM_AT_N; p++)
			if (cells[p] > cells[big])
				big = p;
		cells[big]--;
		used--;
	}
	for (int p = 0; p < SIM_AT_N; p++)
		for (int k = 0; k < cells[p]; k++)
			tui_screen_put(s, x++, y, ascii ? (uint32_t)place[p].ascii : place[p].uni,
			               place[p].style);
}

/* The bar's key: each place's shape, name and share. */
static void legend(struct tui_screen *s, int x, int y, int w, const struct sim_trace *t,
                   bool ascii)
{
	int64_t total = 0;
	int end = x + w;

	for (int p = 0; p < SIM_AT_N; p++)
		total += t->spent_us[p];
	for (int p = 0; p < SIM_AT_N && total > 0; p++) {
		char item[48], a[32];
		if (t->spent_us[p] <= 0)
			continue;
		int n = snprintf(item, sizeof item, "%s %s %.0f%%", place[p].word,
		                 tui_fmt_ms(a, sizeof a, (double)t->spent_us[p] / 1000.0),
		                 100.0 * (double)t->spent_us[p] / (double)total);
		if (x + 2 + n > end)
			break;
		tui_screen_put(s, x, y, ascii ? (uint32_t)place[p].ascii : place[p].uni,
		               place[p].style);
		x += 2 + tui_screen_text(s, x + 2, y, end - x - 2, TUI_NORMAL, item) + 2;
	}
}

/* The last entry of an ended trace says how it ended. */
static enum tui_style entry_style(const struct sim_trace *t, int i)
{
	if (i + 1 < t->nevents || t->state == SIM_TRACE_LIVE)
		return TUI_NORMAL;
	return t->state == SIM_TRACE_COMPLETED ? TUI_GOOD : TUI_BAD;
}

int tui_follow_card_draw(struct tui_screen *s, struct tui_rect r,
                         const struct sim_snapshot *snap, bool ascii)
{
	const struct sim_trace *t = &snap->trace;
	char st[160], line[160], when[32];
	int y = r.y, x;

	if (t->state == SIM_TRACE_NONE || r.h < 1)
		return 0;
	tui_screen_put(s, r.x, y, tui_follow_glyph(ascii), TUI_KEY);
	x = r.x + 2;
	if (t->state == SIM_TRACE_WAITING) {
		tui_screen_textf(s, x, y, r.x + r.w - x, TUI_HEAD,
		                 "FOLLOWING like #%llu: not arrived yet",
		                 (unsigned long long)t->n);
		return 1;
	}
	status(snap, st, sizeof st);
	if (t->n)
		tui_screen_textf(s, x, y, r.x + r.w - x, TUI_HEAD, "FOLLOWING like #%llu  (f: %s)",
		                 (unsigned long long)t->n, "the slowest");
	else
		tui_screen_text(s, x, y, r.x + r.w - x, TUI_HEAD,
		                "FOLLOWING the oldest in flight  (f: stop)");
	y++;
	if (y < r.y + r.h)
		tui_screen_text(s, r.x + 2, y++, r.w - 2, t->state == SIM_TRACE_LIVE ? TUI_BOLD
		                : t->state == SIM_TRACE_COMPLETED ? TUI_GOOD : TUI_BAD, st);
	int room = r.y + r.h - y - 2;
	int n = t->nevents < CARD_LINES ? t->nevents : CARD_LINES;
	if (n > room)
		n = room;
	for (int i = t->nevents - n; i < t->nevents && y < r.y + r.h; i++, y++) {
		sim_trace_line(t, i, line, sizeof line);
		snprintf(when, sizeof when, "%9.3f s", (double)t->ev[i].t_us / 1e6);
		tui_screen_text(s, r.x, y, r.w, TUI_DIM, when);
		tui_screen_text(s, r.x + 13, y, r.w - 13, entry_style(t, i), line);
	}
	if (y + 2 > r.y + r.h)
		return y - r.y;
	bar(s, r.x + 1, y++, r.w - 2, t, ascii);
	legend(s, r.x + 1, y++, r.w - 2, t, ascii);
	return y - r.y;
}
