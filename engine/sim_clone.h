/*
 * sim_clone.h: copies of a running simulation, for going back in time.
 *
 * The engine is deterministic: a copy of struct sim taken at time t and
 * advanced to t' ends exactly where the original is at t', byte for byte
 * (same events, same JSON). So a screen can keep a few copies along the
 * run and rebuild any moment from the nearest one before it.
 *
 * Two kinds of copy:
 *   - sim_clone: a full, runnable simulation, independent of the original
 *     (nothing is shared; free each with sim_free);
 *   - a checkpoint (struct sim_ckpt): a frozen copy trimmed to what is in
 *     use (queues, event heap, the time series so far), meant to be kept
 *     by the dozen. It cannot run; sim_ckpt_resume makes a runnable
 *     simulation from it, at its time, as often as asked.
 *
 * Interface:
 *   struct sim *c = sim_clone(s);            aborts only on OOM
 *   struct sim_ckpt *k = sim_ckpt_take(s, true);    false: no CSV history
 *   struct sim *r = sim_ckpt_resume(k);      r is at sim_ckpt_time(k)
 *   sim_ckpt_bytes(k)                        the memory k holds
 *   sim_ckpt_free(k);
 */
#ifndef HOTROW_SIM_CLONE_H
#define HOTROW_SIM_CLONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/sim.h"

struct sim_ckpt;

/* A deep copy of s that runs on its own. The caller frees it (sim_free). */
struct sim *sim_clone(const struct sim *s);

/* A frozen copy of s, as small as its state allows. s is unchanged.
 * Without history, it leaves out the series' long history, which only
 * sim_csv prints and which grows with the run (1.4 MB at 20 minutes):
 * a simulation resumed from it runs the same events, gives the same
 * summary, JSON and recent ticks (all a screen draws), but its CSV
 * starts at the checkpoint. */
struct sim_ckpt *sim_ckpt_take(const struct sim *s, bool history);
/* A new runnable simulation in the state k was taken in; k is unchanged
 * and may be resumed again. The caller frees the result (sim_free). */
struct sim *sim_ckpt_resume(const struct sim_ckpt *k);
/* The simulated time k was taken at, in microseconds. */
int64_t sim_ckpt_time(const struct sim_ckpt *k);
/* The bytes k holds, allocations included. */
size_t sim_ckpt_bytes(const struct sim_ckpt *k);
void sim_ckpt_free(struct sim_ckpt *k);

#endif
