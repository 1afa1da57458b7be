/*
 * rewind.h: the past of one simulation on screen, kept so that the user
 * can step back, scrub to any moment of the run and play on from there.
 *
 * The engine is deterministic, so the past need not be stored moment by
 * moment: a checkpoint of the whole engine (engine/sim_clone.h) every few
 * simulated seconds, and the engine's own record of the calls made on the
 * way (new settings through sim_set, injected faults, whom to follow,
 * each at its simulated time: struct sim_record in engine/sim.h), rebuild
 * any moment: resume the nearest checkpoint before it and play on, the
 * record's later calls made again at their times. The picture is the
 * same as when the run first passed there, charts, lanes and the
 * followed like included (the charts' history is part of the engine's
 * state).
 *
 * Memory stays bounded: at most TUI_REWIND_MAX checkpoints and about
 * TUI_REWIND_BYTES of them; when either is full every other one goes and
 * the spacing doubles, so a long run keeps coarser checkpoints (and a
 * longer replay to reach a moment), never more memory.
 *
 * A change made in the past starts a new future: the checkpoints and
 * calls after that moment are dropped.
 *
 * Interface:
 *   struct tui_rewind *r = tui_rewind_new(s);     s at t = 0, just built
 *   tui_rewind_play(r, s, t_us);                  instead of sim_advance
 *   tui_rewind_set(r, s, &c);                     instead of sim_set
 *   tui_rewind_inject(r, s, fault);               instead of sim_inject
 *   sim_follow_next(s); tui_rewind_mark(r, s);    any other call recorded
 *   struct sim *p = tui_rewind_to(r, t_us);       a new sim at t_us, replayed
 *   tui_rewind_end(r)                             the furthest time reached
 *   tui_rewind_settings(r, s)                     the settings at s's moment
 *   tui_rewind_free(r);                           (s stays the caller's)
 *   tui_rewind_bar(scr, x, y, w, &v)              the scrub bar, drawn
 */
#ifndef HOTROW_TUI_REWIND_H
#define HOTROW_TUI_REWIND_H

#include <stddef.h>
#include <stdint.h>

#include "engine/sim.h"
#include "tui/frame.h"
#include "tui/screen.h"

#define TUI_REWIND_MAX     64                  /* checkpoints kept */
#define TUI_REWIND_BYTES   ((size_t)96 << 20)   /* ... and their memory */
#define TUI_REWIND_EVERY   2000000              /* first spacing, us */

struct tui_rewind;

/* Start the record of s's run; s must be at t = 0 with no change made
 * yet (just out of sim_new). s is not kept: pass it to each call. */
struct tui_rewind *tui_rewind_new(const struct sim *s);
void tui_rewind_free(struct tui_rewind *r);

/* Advance s to t_us (>= sim_now(s)) as sim_advance does, applying the
 * recorded changes due on the way at their times, and taking checkpoints
 * where they are due. */
void tui_rewind_play(struct tui_rewind *r, struct sim *s, int64_t t_us);
/* sim_set(s, c) now, recorded. Drops the record after now. */
void tui_rewind_set(struct tui_rewind *r, struct sim *s, const struct sim_config *c);
/* sim_inject(s, f) now, recorded. Drops the record after now. */
void tui_rewind_inject(struct tui_rewind *r, struct sim *s, enum sim_fault f);
/* A call the engine records (a sim_follow_* call) was just made on s:
 * s's record is the run's from now on, and what was kept after now goes. */
void tui_rewind_mark(struct tui_rewind *r, const struct sim *s);

/* A new simulation at t_us (0 <= t_us), rebuilt from the nearest
 * checkpoint at or before it with the recorded changes; the caller frees
 * it and uses it from then on in the calls above (the one it replaces is
 * the caller's to free). */
struct sim *tui_rewind_to(struct tui_rewind *r, int64_t t_us);

/* The settings last given (tui_rewind_set) up to s's moment, or those
 * the run was built with: what a screen that went back shows and changes
 * from. Valid until the next call on s. */
const struct sim_config *tui_rewind_settings(const struct tui_rewind *r, const struct sim *s);
/* The time of the checkpoint tui_rewind_to(r, t_us) would start from:
 * a moment ahead is reached sooner from there when it is after now. */
int64_t tui_rewind_before(const struct tui_rewind *r, int64_t t_us);
/* The furthest simulated time the run has been played to, in us. */
int64_t tui_rewind_end(const struct tui_rewind *r);
/* Checkpoints kept, and the bytes they hold. */
int tui_rewind_count(const struct tui_rewind *r);
size_t tui_rewind_bytes(const struct tui_rewind *r);

/* The scrub bar from v->scrub_s and v->scrub_end_s: w cells at (x, y),
 * the run from 0 to its end with the moment shown marked, and the keys. */
void tui_rewind_bar(struct tui_screen *scr, int x, int y, int w, const struct tui_view *v);

#endif
