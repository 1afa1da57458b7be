/*
 * pool.h: the application's connection pool, cell by cell.
 *
 * One cell per pooled connection, shaped by what it is doing: idle (·),
 * waiting for a row lock (○), holding one (■), serving another endpoint
 * (◆) or applying a batch for a fix (▲). Below the cells: how many
 * requests wait for a connection, and the unrelated endpoint (the login
 * page) that needs a connection too: STALLED while it queues behind them,
 * FAILING in red once its acquire timeout gives up. That line is the
 * collateral damage of a hot row.
 *
 * Interface:
 *   int want = tui_pool_height(snap, w);
 *   tui_pool_draw(scr, rect, snap, glyphs);
 */
#ifndef HOTROW_TUI_POOL_H
#define HOTROW_TUI_POOL_H

#include "engine/sim.h"
#include "tui/glyph.h"
#include "tui/screen.h"

/* Lines the pool would like at width w (heading, cells, legend, status). */
int tui_pool_height(const struct sim_snapshot *snap, int w);
/* Draw into r; returns the lines used. Lines that do not fit are dropped
 * from the bottom up, the endpoint status last of all. */
int tui_pool_draw(struct tui_screen *s, struct tui_rect r,
                  const struct sim_snapshot *snap, const struct tui_glyphs *g);

/* The unrelated endpoint's failures per second over the last second. */
double tui_pool_unrelated_failing(const struct sim_snapshot *snap);

#endif
