/*
 * help.c: the key table and the two things drawn from it.
 */
#include <string.h>

#include <ncurses.h>

#include "tui/help.h"

static const struct tui_binding table[] = {
	{'?', KEY_F(1), "?", "this help (any key closes it)", "help", "?", TUI_A_HELP, false},
	{'q', 'Q', "q", "quit", "quit", "q", TUI_A_QUIT, false},
	{' ', 'p', "Space/p", "pause or resume", "pause", "Space", TUI_A_PAUSE, false},
	{'n', 0, "n", "step one tick (100 ms) while paused", NULL, NULL, TUI_A_STEP, false},
	{KEY_UP, '+', "Up/+", "more likes per second", "rate", "Up/Dn", TUI_A_RATE_UP, false},
	{KEY_DOWN, '-', "Down/-", "fewer likes per second", NULL, NULL, TUI_A_RATE_DOWN, false},
	{KEY_RIGHT, 'H', "Right/H", "longer lock hold", "hold", "Lt/Rt", TUI_A_HOLD_UP, false},
	{KEY_LEFT, 'h', "Left/h", "shorter lock hold", NULL, NULL, TUI_A_HOLD_DOWN, false},
	{'s', 0, "s", "next strategy: naive sharded ... append ledger", "strategy", "s", TUI_A_STRATEGY_NEXT, false},
	{'S', 0, "S", "previous strategy", NULL, NULL, TUI_A_STRATEGY_PREV, false},
	{']', 0, "]", "more slots (sharded)", "slots", "[ ]", TUI_A_SLOTS_UP, false},
	{'[', 0, "[", "fewer slots", NULL, NULL, TUI_A_SLOTS_DOWN, false},
	{'}', 0, "}", "bigger connection pool", "pool", "{ }", TUI_A_POOL_UP, false},
	{'{', 0, "{", "smaller connection pool", NULL, NULL, TUI_A_POOL_DOWN, false},
	{'w', 0, "w", "app work inside the transaction on/off (5 ms)", "work", "w", TUI_A_WORK, false},
	{'A', 0, "A", "crash the app (coalesce buffer lost)", NULL, NULL, TUI_A_CRASH_APP, false},
	{'C', 0, "C", "crash the queue consumer (batch redelivered)", NULL, NULL, TUI_A_CRASH_CONSUMER, false},
	{'R', 0, "R", "restart Redis (in-memory count lost)", NULL, NULL, TUI_A_CRASH_REDIS, false},
	{'T', 0, "T", "lock_timeout 300 ms on/off: the server cancels long waits", NULL, NULL, TUI_A_LOCK_TIMEOUT, false},
	{'B', 0, "B", "retry budget on/off: retries at most 10% of requests", NULL, NULL, TUI_A_RETRY_BUDGET, false},
	{'K', 0, "K", "bulkhead on/off: likes get a pool of their own, 80% as big", NULL, NULL, TUI_A_BULKHEAD, false},
	{'I', 0, "I", "idempotent likes on/off: a retry cannot count twice", NULL, NULL, TUI_A_IDEMPOTENT, false},
	/* a pair on one line: the second key does the opposite (pair()) */
	{'.', ',', ". ,", "faster or slower (0.01x slow motion to 100x)", "speed", ". ,", TUI_A_FASTER, false},
	{'<', '>', "< >", "back or on one second in time, paused (Space plays on)", "rewind", "< >", TUI_A_BACK, false},
	{KEY_HOME, KEY_END, "Home End", "to t = 0, or to the furthest moment played", NULL, NULL, TUI_A_HOME, false},
	{'r', 0, "r", "reset: start again from t = 0", NULL, NULL, TUI_A_RESET, false},
	{'\t', 0, "Tab", "next scenario (its summary shows in the title bar)", NULL, NULL, TUI_A_SCENARIO, false},
	{'o', 0, "o", "scenario picker: Up/Down, Enter to load, Esc to close", "scenarios", "o", TUI_A_PICKER, false},
	{'c', 0, "c", "compare any two setups, same arrivals (c again: off)", "compare", "c", TUI_A_COMPARE, false},
	{'l', 0, "l", "latency chart: p50 and p99, p99 only, p50 only", NULL, NULL, TUI_A_LATENCY, false},
	{'f', 0, "f", "follow a like: the next to arrive, then the slowest, then off", "follow", "f", TUI_A_FOLLOW, false},
	{'\r', KEY_NPAGE, "Enter/PgDn", "tour: next step", "next", "Enter", TUI_A_TOUR_NEXT, true},
	{'b', KEY_PPAGE, "b/PgUp", "tour: previous step", "back", "b", TUI_A_TOUR_BACK, true},
	{'a', 'd', "a-d", "tour: answer the question (a, b, c, d or A-D while it waits)", NULL, NULL, TUI_A_ANSWER, true},
	{0, 0, NULL, NULL, NULL, NULL, TUI_A_NONE, false},
};

const struct tui_binding *tui_help_table(void)
{
	return table;
}

/* A line that binds a pair of opposites gives its second key the
 * opposite action; on any other line both keys do the same. */
static enum tui_action pair(enum tui_action a)
{
	switch (a) {
	case TUI_A_FASTER: return TUI_A_SLOWER;
	case TUI_A_BACK:   return TUI_A_FORWARD;
	case TUI_A_HOME:   return TUI_A_END;
	default:           return a;
	}
}

enum tui_action tui_help_action(int key, bool in_tour)
{
	if (key == '\n' || key == KEY_ENTER)
		key = '\r';
	for (const struct tui_binding *b = table; b->action != TUI_A_NONE; b++) {
		if (b->tour_only && !in_tour)
			continue;
		if (key == b->key)
			return b->action;
		if (b->alt && key == b->alt)
			return pair(b->action);
	}
	return TUI_A_NONE;
}

void tui_help_draw(struct tui_screen *s, const struct tui_glyphs *g, bool in_tour)
{
	int n = 0;
	for (const struct tui_binding *b = table; b->action != TUI_A_NONE; b++)
		n += !b->tour_only || in_tour;
	/* One column where it fits below the title bar and a tour's words (8
	 * lines), or where two would not have room for their words; else two,
	 * so that every key is listed and the step's words stay readable (on
	 * a short screen the longer words cut at the column's edge). */
	int cols = n + 4 <= s->h && (n + 4 <= s->h - 8 || s->w < 120) ? 1 : 2;
	int rows = (n + cols - 1) / cols;
	int w = 78 < s->w - 2 ? 78 : s->w - 2;
	if (cols == 2 && s->w - 2 > w)
		w = s->w - 2 < 156 ? s->w - 2 : 156;
	int h = rows + 4 < s->h ? rows + 4 : s->h;
	/* Centred, or as low as it goes when that would cover the title bar
	 * and a tour's words at the top. */
	int x0 = (s->w - w) / 2, y0 = s->h - h >= 8 ? (s->h - h) / 2 : s->h - h;
	int x1 = x0 + w - 1, y1 = y0 + h - 1;
	int cw = (w - 4) / cols;           /* a column: keys, then the words */
	int kw = cols == 1 ? 11 : 10;

	tui_screen_fill(s, (struct tui_rect){x0, y0, w, h}, ' ', TUI_NORMAL);
	for (int x = x0; x <= x1; x++) {
		tui_screen_put(s, x, y0, g->hline, TUI_HEAD);
		tui_screen_put(s, x, y1, g->hline, TUI_HEAD);
	}
	for (int y = y0; y <= y1; y++) {
		tui_screen_put(s, x0, y, g->vline, TUI_HEAD);
		tui_screen_put(s, x1, y, g->vline, TUI_HEAD);
	}
	tui_screen_put(s, x0, y0, g->box[0], TUI_HEAD);
	tui_screen_put(s, x1, y0, g->box[1], TUI_HEAD);
	tui_screen_put(s, x0, y1, g->box[2], TUI_HEAD);
	tui_screen_put(s, x1, y1, g->box[3], TUI_HEAD);
	tui_screen_text(s, x0 + 2, y0, w - 4, TUI_HEAD, " KEYS  (any key closes this) ");
	int i = 0;
	for (const struct tui_binding *b = table; b->action != TUI_A_NONE; b++) {
		if (b->tour_only && !in_tour)
			continue;
		int y = y0 + 2 + i % rows, x = x0 + 3 + (i / rows) * cw;
		i++;
		if (y >= y1)
			continue;
		tui_screen_text(s, x, y, kw, TUI_KEY, b->keys);
		tui_screen_text(s, x + kw + 1, y, cw - kw - 2, TUI_NORMAL, b->what);
	}
}

void tui_help_hints(struct tui_screen *s, int x, int y, int w, bool in_tour)
{
	int end = x + w;
	/* Tour keys first: a presenter needs them most. */
	for (int pass = 0; pass < 2; pass++)
		for (const struct tui_binding *b = table; b->action != TUI_A_NONE; b++) {
			if (!b->hint || b->tour_only != (pass == 0) || (b->tour_only && !in_tour))
				continue;
			const char *key = b->hint_keys;
			int need = (int)strlen(key) + 1 + (int)strlen(b->hint) + 2;
			if (x + need > end)
				return;
			x += tui_screen_text(s, x, y, end - x, TUI_KEY, key);
			x += tui_screen_text(s, x + 1, y, end - x - 1, TUI_DIM, b->hint) + 3;
		}
}
