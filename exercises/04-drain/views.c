/*
 * views.c: Lab 04 — buffer views in the store, drain them atomically, and
 * add them to the database in one upsert per flush.
 *
 * Read labs/04-drain/README.md first; each TODO names its section. Check
 * your work with `hotrow lab check 04`.
 */
#include "labs/04-drain/views.h"

#include "kit/failpoint.h"

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

int park_views(struct kit_store *st, int max, int64_t *token, struct view_delta *out, int *n)
{
	/* TODO(§5b): the drain of drain_views, and in the same script: take a
	 * new token (INCR VIEWS_TOKEN; when that key is missing take nothing
	 * and return VIEWS_NO_TOKEN), add it to VIEWS_PARKED and each
	 * "<id>=<n>" to the set VIEWS_PARK_PREFIX "<token>". */
	(void)st;
	(void)max;
	(void)out;
	*token = 0;
	*n = 0;
	return KIT_STORE_ERR;
}

int64_t recover_flushes(struct kit_store *st, struct kit_db *db)
{
	/* TODO(§5b): for each token in VIEWS_PARKED: if applied_flushes has
	 * it, delete its park; if not, apply its batch under that same token
	 * (one transaction, as flush_views does), then delete the park.
	 * Return the views applied. */
	(void)st;
	(void)db;
	return KIT_DB_ERR;
}

int64_t flush_views(struct kit_store *st, struct kit_db *db, int max)
{
	/* TODO(§5): drain up to max videos; if there are any, add their deltas
	 * to video_counts with ONE multi-row INSERT ... ON CONFLICT statement
	 * ($1, $2, ... parameters; kit_db_engine(db) decides how the upsert is
	 * worded: KIT_DB_MYSQL says ON DUPLICATE KEY UPDATE, §5); if the
	 * database refuses, give every delta
	 * back to the store and return the database's error. On success
	 * return the number of views written.
	 * TODO(§5b): make it exact: recover_flushes first when anything is
	 * parked; park_views instead of drain_views; the token's row in
	 * applied_flushes in the SAME transaction as the upsert; the park
	 * deleted only after COMMIT; and kit_fp_hit() at the four failpoints
	 * views.h names (kit/failpoint.h), returning at once when one fires. */
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
