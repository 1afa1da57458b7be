/*
 * views.c: Lab 04 — buffer views in the store, drain them atomically, and
 * add them to the database in one upsert per flush.
 *
 * Read labs/04-drain/README.md first; each TODO names its section. Check
 * your work with `hotrow lab check 04`.
 */
#include "labs/04-drain/views.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int record_view(struct kit_store *st, int64_t video_id)
{
	/* TODO(§3): add 1 to the key VIEWS_DELTA_PREFIX "<video_id>" and add
	 * "<video_id>" to the set VIEWS_DIRTY, so that no other client can
	 * ever see one change without the other: one script (§2), a C step
	 * and the same in Lua, run with kit_store_eval. Return 0 or the
	 * store's error code. */
	(void)st;
	(void)video_id;
	return KIT_STORE_ERR;
}

int drain_views(struct kit_store *st, int max, struct view_delta *out, int *n)
{
	/* TODO(§4): take up to max ids out of VIEWS_DIRTY and, for each, read
	 * its delta and reset it to zero, so that a view recorded at any
	 * instant is either in out or still in the store: one script again,
	 * answering id, delta, id, delta, ... Skip zero deltas. Set *n to the
	 * number of entries written to out. */
	(void)st;
	(void)max;
	(void)out;
	*n = 0;
	return KIT_STORE_ERR;
}

int64_t flush_views(struct kit_store *st, struct kit_db *db, int max)
{
	/* TODO(§5): drain up to max videos; if there are any, add their deltas
	 * to video_counts with ONE multi-row INSERT ... ON CONFLICT statement
	 * ($1, $2, ... parameters); if the database refuses, give every delta
	 * back to the store and return the database's error. On success
	 * return the number of views written. */
	(void)st;
	(void)db;
	(void)max;
	return KIT_DB_ERR;
}

struct flusher {
	/* TODO(§6): what the flush thread and stop_flusher share: the store,
	 * the database, the interval, the batch size, the thread, a way to wake
	 * it early, a stop flag, and the counters of struct flusher_stats. */
	struct flusher_stats stats;
};

int start_flusher(struct flusher **out, struct kit_store *st, struct kit_db *db,
                  int interval_ms, int max)
{
	/* TODO(§6): allocate a flusher and start a thread that calls
	 * flush_views once per interval_ms until told to stop. */
	(void)st;
	(void)db;
	(void)interval_ms;
	(void)max;
	*out = NULL;
	return KIT_DB_ERR;
}

void flusher_stats(struct flusher *f, struct flusher_stats *out)
{
	/* TODO(§6): copy the counters, safely: the thread updates them. */
	*out = f->stats;
}

int stop_flusher(struct flusher *f)
{
	/* TODO(§6): tell the thread to stop (now, not after its interval), join
	 * it, flush until nothing is dirty, and free f. */
	(void)f;
	return 0;
}
