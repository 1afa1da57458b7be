/*
 * baseline.h: the naive single-row baseline a lab driver measures first.
 *
 * Every write is one autocommit UPDATE of the same row. The baseline
 * measures its parts with one thread alone (probe.h: the statement less a
 * bare round trip is the hold), asks the engine what T threads of it give
 * (predict.h), and only then runs T threads for S seconds; it prints the
 * prediction beside the measurement. Labs 04 and 05 start with it before
 * they measure their fix, and use its parts for their flushes' hold.
 *
 * Interface:
 *   struct drv_baseline b;
 *   if (drv_baseline_run(&b, "hotrow lab run 04", url,
 *                        "UPDATE video_counts SET views = views + 1 WHERE video_id = 1",
 *                        threads, seconds) != 0)
 *       return 1;                        // the reason is on stderr
 *   drv_baseline_print(&b, "UPDATE video_counts SET views = views + 1", "views");
 *   ... b.alone.hold_ms, b.many.r.throughput_per_s, b.writes ...
 */
#ifndef HOTROW_DRIVER_BASELINE_H
#define HOTROW_DRIVER_BASELINE_H

#include <stdbool.h>

#include "labs/driver/predict.h"

struct drv_baseline {
	struct drv_parts alone;          /* one thread alone */
	struct drv_prediction predicted; /* from alone and the threads */
	bool have_prediction;
	struct drv_run many;             /* the T-thread run */
	long long writes;                /* every UPDATE that succeeded, probe included */
};

/* Run sql (one UPDATE, autocommit) against url: the probe, the prediction,
 * then `threads` threads for seconds; fill *b. Returns 0, or KIT_DB_ERR
 * after "CMD: naive run: <why>" on stderr (*b then holds what was
 * measured so far). */
int drv_baseline_run(struct drv_baseline *b, const char *cmd, const char *url,
                     const char *sql, int threads, double seconds);

/* Print the baseline as section 1 of a driver's report on stdout: the
 * statement as `shown`, the parts alone, the writes of the T-thread run
 * (`unit`, "views"), its latency and the prediction beside it. */
void drv_baseline_print(const struct drv_baseline *b, const char *shown, const char *unit);

#endif
