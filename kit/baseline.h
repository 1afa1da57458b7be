/*
 * baseline.h: the naive single-row baseline a lab driver measures first.
 *
 * Every write is one autocommit UPDATE of the same row. The baseline runs
 * it on one thread for up to a second, to time the hold when nobody
 * waits (from the start of the statement to its end, commit included),
 * then on T threads for S seconds; it prints what it measured beside the
 * ceiling that hold allows and the engine's prediction for the same row.
 * Labs 04 and 05 start with it before they measure their fix.
 *
 * Interface:
 *   struct kit_baseline b;
 *   if (kit_baseline_run(&b, "hotrow lab run 04", url,
 *                        "UPDATE video_counts SET views = views + 1 WHERE video_id = 1",
 *                        threads, seconds) != 0)
 *       return 1;                        // the reason is on stderr
 *   kit_baseline_print(&b, "hotrow lab run 04",
 *                      "UPDATE video_counts SET views = views + 1", "view");
 *   ... b.hold_ms, b.many.throughput_per_s, b.one.ok + b.many.ok ...
 */
#ifndef HOTROW_KIT_BASELINE_H
#define HOTROW_KIT_BASELINE_H

#include "kit/load.h"

struct kit_baseline {
	struct kit_load_result one;     /* the 1-thread run */
	struct kit_load_result many;    /* the T-thread run */
	double hold_ms;                 /* mean statement, 1 thread; 0 if none ended */
};

/* Run sql (one UPDATE, autocommit) against url: one thread for
 * min(seconds, 1), then `threads` threads for seconds; fill *b. Returns 0,
 * or KIT_DB_ERR after "CMD: naive run: <why>" on stderr (*b then holds
 * what was measured so far). */
int kit_baseline_run(struct kit_baseline *b, const char *cmd, const char *url,
                     const char *sql, int threads, double seconds);

/* Print the baseline as section 1 of a driver's report on stdout: the
 * statement as `shown`, the hold, the writes and throughput of the T-thread
 * run (each a `unit`, "view"), its latency and, when a hold was
 * measured, the ceiling 1 / hold and the engine's open-loop prediction at
 * the throughput reached (an engine error goes to stderr after "CMD: "). */
void kit_baseline_print(const struct kit_baseline *b, const char *cmd, const char *shown,
                        const char *unit);

#endif
