/*
 * fixparts.h: a fix drawn as what it is, in place of the lock lanes.
 *
 * The buffered paths and append do not queue likes at a row lock: each
 * has a part of its own that takes the like, and a flusher that carries
 * what piled up to the counter row. This panel draws that part as the
 * engine models it (struct sim_fix_view):
 *   queue     the log (one partition) as a strip of events, the
 *             consumer's offset under it, the fence, the lag behind;
 *   redis     the in-memory counter with its dirty count (acknowledged,
 *             not yet in the row) and the INCRs queued for its one thread;
 *   coalesce  the app's buffer, lost if the app dies;
 *   append    the append table's rows not yet rolled up;
 * then the flusher (consumer, drain, flusher, rollup) with its batch and
 * what it waits for, the counter row, and the books: what the row shows
 * against what was acknowledged. So queue, in-memory counter and append
 * no longer look alike. The direct paths (naive, sharded, ledger) keep
 * the lanes (tui/lanes.h).
 *
 * Interface:
 *   if (tui_fixparts_has(snap)) {
 *       int want = tui_fixparts_height(snap, w);
 *       tui_fixparts_draw(scr, rect, snap, glyphs);    draws within rect only
 *   }
 */
#ifndef HOTROW_TUI_FIXPARTS_H
#define HOTROW_TUI_FIXPARTS_H

#include <stdbool.h>

#include "engine/sim.h"
#include "tui/glyph.h"
#include "tui/screen.h"

/* Whether snap's write path has parts of its own (a periodic flush). */
bool tui_fixparts_has(const struct sim_snapshot *snap);
/* Lines the panel would use at width w, heading included. */
int tui_fixparts_height(const struct sim_snapshot *snap, int w);
/* Draw the panel into r; returns the lines used. */
int tui_fixparts_draw(struct tui_screen *s, struct tui_rect r,
                      const struct sim_snapshot *snap, const struct tui_glyphs *g);

#endif
