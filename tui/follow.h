/*
 * follow.h: one request followed on screen (the engine's sim_follow_*).
 *
 * The `f` key picks whom to follow: the next like to arrive, then the
 * one in flight longest, then nobody. The lanes mark it where it waits or
 * holds, and a card shows its timeline as it happens and, under it, one
 * bar of where its time went (pool wait, lock wait, hold, flush ...),
 * each place with its own letter or shade, so the bar reads without
 * colour and in ASCII.
 *
 * Interface:
 *   mode = tui_follow_set(sim, TUI_FOLLOW_NEXT, note, sizeof note);
 *   mode = tui_follow_cycle(sim, mode, note, sizeof note);   the f key
 *   h = tui_follow_card_height(snap);     0 when nothing is followed
 *   tui_follow_card_draw(scr, rect, snap, ascii);
 *   x = tui_follow_lane_x(snap, lane, holder_x, queue_x, shown);
 */
#ifndef HOTROW_TUI_FOLLOW_H
#define HOTROW_TUI_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/sim.h"
#include "tui/screen.h"

enum tui_follow_mode {
	TUI_FOLLOW_OFF,
	TUI_FOLLOW_NEXT,          /* the next like to arrive */
	TUI_FOLLOW_SLOWEST        /* the like in flight longest when picked */
};

/* What tui_follow_set says in note when asked for one mode and it got
 * another (the slowest with nothing in flight: the next) or the same. */
void tui_follow_say(enum tui_follow_mode asked, enum tui_follow_mode got, char *note, size_t len);
/* Follow as mode says in s, and say what was done in note. The slowest
 * with nothing in flight falls back to the next arrival. Returns the mode
 * now in force. */
enum tui_follow_mode tui_follow_set(struct sim *s, enum tui_follow_mode mode,
                                    char *note, size_t len);
/* The f key: off -> the next arrival -> the slowest -> off. mode is the
 * one last set; a simulation that follows nobody (a restart) counts as off. */
enum tui_follow_mode tui_follow_cycle(struct sim *s, enum tui_follow_mode mode,
                                      char *note, size_t len);

/* Lines the card wants; 0 when nothing is followed. */
int tui_follow_card_height(const struct sim_snapshot *snap);
/* Draw the card into r; returns the lines used. */
int tui_follow_card_draw(struct tui_screen *s, struct tui_rect r,
                         const struct sim_snapshot *snap, bool ascii);

/* Where lane's line marks the followed like: holder_x while it holds the
 * lock (or waits for the flush), queue_x + position - 1 while it waits
 * among the shown waiters, queue_x + shown past them; -1 elsewhere. */
int tui_follow_lane_x(const struct sim_snapshot *snap, int lane, int holder_x,
                      int queue_x, int shown);
/* While it waits for a connection: its mark and place in that line,
 * from (x, y), at most w columns. */
void tui_follow_pool_mark(struct tui_screen *s, int x, int y, int w,
                          const struct sim_snapshot *snap, bool ascii);
/* The mark's shape. */
uint32_t tui_follow_glyph(bool ascii);

#endif
