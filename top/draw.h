/*
 * draw.h: one frame of `hotrow top`, drawn from one sample.
 *
 * The frame has the TUI's look: a title bar; CONTENDED ROWS, one lane per
 * row with the holder (■) and its waiters in queue order, each drawn by
 * how long it has waited (∙ under 10 ms, ○ under a second, ● longer), and
 * under it who holds the row and how the line is split between the
 * transactionid wait and the tuple lock; BACKENDS as pool cells by state;
 * PER SECOND rates; TOP STATEMENTS from pg_stat_statements; and what the
 * sampling cost the server. It only draws: the terminal, if any, is the
 * caller's.
 *
 * Interface:
 *   struct top_view v = { .interval_ms = 200, .url = url };
 *   top_draw(scr, &v, &sample);
 *   tui_screen_dump(scr, stdout);     or tui_screen_blit(scr) on a terminal
 */
#ifndef HOTROW_TOP_DRAW_H
#define HOTROW_TOP_DRAW_H

#include <stdbool.h>

#include "top/sample.h"
#include "tui/screen.h"

struct top_view {
	int interval_ms;           /* the sampling interval */
	bool ascii;                /* ASCII glyphs only */
	bool paused;               /* sampling stopped (Space) */
	const char *error;         /* the last sample's error, or NULL */
};

/* Clear scr and draw the frame for sample s. */
void top_draw(struct tui_screen *scr, const struct top_view *v, const struct top_sample *s);

#endif
