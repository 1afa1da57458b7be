/*
 * lanes.h: the lock lanes, one line per counter row or slot.
 *
 * A lane shows who holds the row lock (■) and the requests queued for it in
 * FIFO order, oldest beside the holder, each drawn by how long it has waited
 * (∙ under 10 ms, ○ under a second, ● a second or more); the queue depth is
 * written at the right. The heading gives the ceiling, rows / hold time.
 * When the lanes do not fit one per line they fold into a grid of small
 * cells, "index, holder, depth", so 64 slots still fit in a few lines.
 *
 * Interface:
 *   int want = tui_lanes_height(snap, w);     lines it would like
 *   tui_lanes_draw(scr, rect, snap, glyphs);  draws within rect only
 */
#ifndef HOTROW_TUI_LANES_H
#define HOTROW_TUI_LANES_H

#include "engine/sim.h"
#include "tui/glyph.h"
#include "tui/screen.h"

/* Lines the lanes would use at width w, heading included. */
int tui_lanes_height(const struct sim_snapshot *snap, int w);
/* Draw the heading and the lanes into r; returns the lines used. */
int tui_lanes_draw(struct tui_screen *s, struct tui_rect r,
                   const struct sim_snapshot *snap, const struct tui_glyphs *g);

#endif
