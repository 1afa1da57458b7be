/*
 * help.h: the one key table. It binds the keys and writes the ? overlay
 * and the hint bar, so what the screen says a key does is what it does.
 *
 * Interface:
 *   enum tui_action a = tui_help_action(key, in_tour);   TUI_A_NONE if unbound
 *   tui_help_draw(scr, glyphs, in_tour);                 the overlay, centred
 *   tui_help_hints(scr, x, y, w, in_tour);               the bottom bar
 * Keys come from ncurses (getch values, KEY_UP etc.).
 */
#ifndef HOTROW_TUI_HELP_H
#define HOTROW_TUI_HELP_H

#include <stdbool.h>

#include "tui/glyph.h"
#include "tui/screen.h"

enum tui_action {
	TUI_A_NONE,
	TUI_A_QUIT, TUI_A_HELP,
	TUI_A_RATE_UP, TUI_A_RATE_DOWN,
	TUI_A_HOLD_UP, TUI_A_HOLD_DOWN,
	TUI_A_STRATEGY_NEXT, TUI_A_STRATEGY_PREV,
	TUI_A_SLOTS_UP, TUI_A_SLOTS_DOWN,
	TUI_A_POOL_UP, TUI_A_POOL_DOWN,
	TUI_A_WORK,
	TUI_A_CRASH_APP, TUI_A_CRASH_CONSUMER, TUI_A_CRASH_REDIS,
	TUI_A_PAUSE, TUI_A_STEP,
	TUI_A_FASTER, TUI_A_SLOWER,
	TUI_A_BACK, TUI_A_FORWARD, TUI_A_HOME, TUI_A_END,   /* rewind */
	TUI_A_RESET, TUI_A_SCENARIO, TUI_A_PICKER,
	TUI_A_COMPARE, TUI_A_LATENCY,
	TUI_A_TOUR_NEXT, TUI_A_TOUR_BACK, TUI_A_ANSWER,
	TUI_A_LOCK_TIMEOUT, TUI_A_RETRY_BUDGET, TUI_A_BULKHEAD, TUI_A_IDEMPOTENT,
	TUI_A_FOLLOW,
	TUI_NACTIONS
};

struct tui_binding {
	int key, alt;             /* alt: a second key, or 0; on the speed and
	                             rewind lines, the opposite of key */
	const char *keys;         /* as shown, e.g. "Up/+" */
	const char *what;         /* what it does, for the overlay */
	const char *hint;         /* short form for the hint bar, or NULL */
	const char *hint_keys;    /* keys as the hint bar shows them */
	enum tui_action action;
	bool tour_only;           /* only bound while a tour plays */
};

/* The table, terminated by an entry with action TUI_A_NONE. */
const struct tui_binding *tui_help_table(void);
/* The action bound to key (tour keys only when in_tour). */
enum tui_action tui_help_action(int key, bool in_tour);
/* The overlay listing every binding, centred on the screen. */
void tui_help_draw(struct tui_screen *s, const struct tui_glyphs *g, bool in_tour);
/* The hint bar: as many short hints as fit in w columns. */
void tui_help_hints(struct tui_screen *s, int x, int y, int w, bool in_tour);

#endif
