/*
 * predict.h: what the engine predicts for a measured hold, printed beside
 * what was measured.
 *
 * The lab drivers measure how long a write holds its lock, then ask the
 * engine (engine/sim.h) what one row with that hold allows, and print the
 * two side by side. kit_predict_config() fills a sim_config for either
 * kind of load a driver compares with: users arriving at random (open
 * loop) or a fixed set of clients each with one request in flight (closed
 * loop, like kit_load's threads); kit_predict_run() runs it to the end.
 * The print functions write the lines the drivers share, on stdout.
 *
 * Interface:
 *   struct sim_config c;
 *   kit_predict_config(&c, SIM_NAIVE, res.throughput_per_s, hold_ms, 0);
 *   c.seconds = 5;                       // change any field, then run
 *   struct sim_summary p;
 *   if (kit_predict_run(&c, &p, "hotrow lab run 04") != 0)
 *       return;                          // the reason is on stderr
 */
#ifndef HOTROW_KIT_PREDICT_H
#define HOTROW_KIT_PREDICT_H

#include <stdbool.h>

#include "engine/sim.h"
#include "kit/load.h"

/* Set *c to the engine's view of one row whose lock each write holds for
 * hold_ms (constant), under strategy s, offered rps writes a second and no
 * other traffic. clients == 0: open loop, Poisson arrivals, no connection
 * pool, no app work; clients > 0: closed loop, constant arrivals behind a
 * pool of that many connections that never time out. Every other field
 * keeps sim_config_default()'s value. */
void kit_predict_config(struct sim_config *c, enum sim_strategy s, double rps, double hold_ms,
                        int clients);

/* Run the engine on *c until the last write ends and fill *out. Returns 0,
 * or -1 when sim_config_check() refuses *c: then *out is all zero and
 * "CMD: engine: <why>" is on stderr. */
int kit_predict_run(const struct sim_config *c, struct sim_summary *out, const char *cmd);

/* ---- the lines the drivers print ---- */

/* The results table (Labs 02 and 03): a header, then one row per measured
 * run and per prediction, each named in the first column. A predicted row
 * has the mean latency a closed loop of `threads` clients would see (by
 * Little's law, threads / throughput) and, with show_ceiling, the row's
 * ceiling at the end. */
void kit_predict_table_header(void);
void kit_predict_table_measured(const char *name, const struct kit_load_result *m);
void kit_predict_table_predicted(const char *name, const struct sim_summary *p, int threads,
                                 bool show_ceiling);

/* "  latency ms   mean .. p50 .. p95 .. p99 .. max ..": the percentiles of
 * a measured run with `digits` decimals (max always with 2). */
void kit_predict_latency(const struct kit_load_result *r, int digits);

#endif
