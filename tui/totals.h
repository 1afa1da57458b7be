/*
 * totals.h: the running totals since t = 0, for the numbers people ask
 * about afterwards ("how many logins failed?").
 *
 * Five short lines: likes offered, done and failed; the login page's calls
 * and failures; latency percentiles; when the pool filled and its longest
 * line; the count, visible against acknowledged, with the likes that blind
 * retries counted twice (or that were applied though the client saw a
 * timeout). Drawn only where the layout has room left.
 *
 * Interface:
 *   int used = tui_totals_draw(scr, rect, snap);   0 when r.h < 2
 */
#ifndef HOTROW_TUI_TOTALS_H
#define HOTROW_TUI_TOTALS_H

#include "engine/sim.h"
#include "tui/screen.h"

#define TUI_TOTALS_H 6   /* heading and five lines */

/* Draw the heading and as many lines as fit in r; returns the lines used. */
int tui_totals_draw(struct tui_screen *s, struct tui_rect r,
                    const struct sim_snapshot *snap);

#endif
