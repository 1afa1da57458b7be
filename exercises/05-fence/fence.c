/*
 * fence.c: Lab 05, the offset fence — your consumer.
 *
 * Read labs/05-fence/README.md first; fence.h says what each function
 * must do. Build and check with `hotrow lab check 05`.
 */
#include "labs/05-fence/fence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fence_apply(struct kit_db *db, const struct fence_batch *b)
{
	(void)db;
	(void)b;
	/* TODO(§3): open a transaction (kit_db_begin).
	 * TODO(§3): the fence: one UPDATE of the partition's log_progress row
	 *           that moves last_offset to b->last only when the batch
	 *           starts right after what is stored (b->first - 1). Ask
	 *           kit_db_changes() whether it moved; if not, roll back and
	 *           return 0.
	 * TODO(§4): one INSERT ... ON CONFLICT statement adding every
	 *           b->totals[i] to video_views ($1, $2, ... parameters),
	 *           in the order b holds them (b is the caller's: change
	 *           nothing in it).
	 *           The engine decides how that upsert is written: ask
	 *           kit_db_engine(db); KIT_DB_MYSQL (MariaDB) says it with
	 *           ON DUPLICATE KEY UPDATE ... VALUES(views) instead (§4).
	 * TODO(§3): commit and return 1. On any failure, roll back and return
	 *           the failing call's code. */
	return KIT_DB_ERR;
}

int fence_position(struct kit_db *db, int part, int64_t *next)
{
	(void)db;
	(void)part;
	(void)next;
	/* TODO(§5): read the partition's last_offset from log_progress
	 *           (kit_db_query_int) and set *next to the offset after it. */
	return KIT_DB_ERR;
}

int fence_on_assign(void *arg, struct kit_log_consumer *c, int part)
{
	(void)arg;
	(void)c;
	(void)part;
	/* TODO(§5): arg is the consumer's struct kit_db *. Move the consumer's
	 *           position in part (kit_log_seek) to where the database says
	 *           reading must resume. */
	return KIT_DB_ERR;
}

int fence_handle(void *arg, int part, const struct kit_log_record *recs, int n)
{
	(void)arg;
	(void)part;
	(void)recs;
	(void)n;
	/* TODO(§4): fill a struct fence_batch (it is large: allocate it): the
	 *           partition, the offsets of the first and the last record,
	 *           and one total per video (each record's data is a struct
	 *           fence_event; copy it out with memcpy).
	 * TODO(§4): keep the totals in one order, video_id ascending.
	 * TODO(§4): apply it with fence_apply(); return 0 when the batch is in
	 *           the database (applied now or before), the error otherwise. */
	return KIT_DB_ERR;
}
