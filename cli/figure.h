/*
 * figure.h: `hotrow sim --svg FILE`, a run or a sweep as a self-contained
 * SVG chart for handouts and slides: axes, labels, the measurement, and
 * the theory computed from the inputs beside it.
 *
 * Interface:
 *   a sweep of rps:   latency (mean and p99) against offered load, with the
 *                     queueing model's mean (M/D/1 for constant holds,
 *                     M/M/1 for exponential ones) and the ceiling: the
 *                     hockey stick;
 *   a sweep of anything else (rows, pool, hold-ms, ...): throughput against
 *                     that value, with offered load and the ceiling
 *                     rows / hold from the engine's theory;
 *   one run:          offered and completed per second over time with the
 *                     ceiling, and below it the pool filling (connections in
 *                     use, the pool's size, and when theory says it fills,
 *                     P / (lambda - mu));
 *   two runs (--compare): the completed per second and each tick's p99 of
 *                     both on one pair of axes, A solid, B dashed.
 * Same engine, same options: the same bytes (make figures relies on it).
 * Each returns 0, or 1 when the file cannot be written (said on stderr).
 */
#ifndef HOTROW_CLI_FIGURE_H
#define HOTROW_CLI_FIGURE_H

#include "engine/sim.h"

int figure_sweep(const char *path, const char *name, char *const *values,
                 const struct sim_config *runs, const struct sim_summary *sums, int n);
/* given: the run's config as it was given (the engine's own copy moves
 * on through the rate schedule). */
int figure_run(const char *path, const struct sim *s, const struct sim_config *given);

/* Two runs of the same seed on one figure; name_a and name_b label them
 * (the setup files' names). */
int figure_compare(const char *path, const struct sim *a, const struct sim *b,
                   const char *name_a, const char *name_b);

#endif
