/*
 * glyph.h: the shapes the panels draw, in UTF-8 and in plain ASCII.
 *
 * Every state has its own shape, so the picture still reads on a terminal
 * without colour; --ascii swaps the whole set for one that any terminal
 * shows. Panels take the set from the view and never spell a glyph out.
 *
 * Interface:
 *   const struct tui_glyphs *g = tui_glyphs(ascii);
 *   tui_screen_put(s, x, y, g->hold, TUI_HOLD);
 */
#ifndef HOTROW_TUI_GLYPH_H
#define HOTROW_TUI_GLYPH_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/sim.h"

struct tui_glyphs {
	bool ascii;
	uint32_t hold;            /* a request holding the row lock */
	uint32_t free_lock;       /* nobody holds it */
	uint32_t wait[3];         /* waiting: < 10 ms, < 1 s, >= 1 s */
	uint32_t more;            /* the queue goes on past the edge */
	uint32_t conn[6];         /* pool cells, by enum sim_conn_state */
	uint32_t ok, slow, fail;  /* an endpoint answering, stalled, failing */
	uint32_t hline, vline, corner;   /* chart axes */
	uint32_t box[4];          /* overlay corners: top left, top right,
	                             bottom left, bottom right */
	uint32_t ref;             /* a reference line in a chart (the ceiling) */
	uint32_t series[2];       /* a chart's two series: their points in ASCII,
	                             their legend in braille (where the first is a
	                             solid line and the second a dotted one) */
	uint32_t sep;             /* between facts on one line */
};

const struct tui_glyphs *tui_glyphs(bool ascii);

/* Which of the three waiting glyphs (0..2) fits a wait of age_us. */
int tui_glyph_age(int64_t age_us);

#endif
