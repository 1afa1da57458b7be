/*
 * fence.c: Lab 05 reference solution — apply each batch exactly once.
 *
 * The idea in one line: the partition's progress and the totals it
 * produced change in the same transaction, so the database can never hold
 * one without the other, and the progress row both rejects old batches
 * (the fence) and tells a new owner where to start (the seek).
 */
#include "labs/05-fence/fence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The upsert for n videos: "INSERT ... VALUES ($1, $2), ($3, $4), ..."
 * and what to do with a video that has a row already, in the words of the
 * engine: ON CONFLICT on SQLite and PostgreSQL, ON DUPLICATE KEY UPDATE on
 * MariaDB (README §4). */
static char *upsert_sql(enum kit_db_engine engine, int n)
{
	size_t cap = 160 + (size_t)n * 24;
	char *sql = malloc(cap);
	if (!sql)
		return NULL;
	size_t len = (size_t)snprintf(sql, cap, "INSERT INTO video_views (video_id, views) VALUES ");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(sql + len, cap - len, "%s($%d, $%d)",
		                        i ? ", " : "", 2 * i + 1, 2 * i + 2);
	snprintf(sql + len, cap - len, "%s", engine == KIT_DB_MYSQL
	         ? " ON DUPLICATE KEY UPDATE views = views + VALUES(views)"
	         : " ON CONFLICT (video_id) DO UPDATE SET views = video_views.views + excluded.views");
	return sql;
}

/* One statement adds every total of b. */
static int add_totals(struct kit_db *db, const struct fence_batch *b)
{
	char (*text)[24] = malloc((size_t)b->n * 2 * sizeof *text);
	const char **params = malloc((size_t)b->n * 2 * sizeof *params);
	char *sql = upsert_sql(kit_db_engine(db), b->n);
	int rc = KIT_DB_ERR;
	if (text && params && sql) {
		for (int i = 0; i < b->n; i++) {
			snprintf(text[2 * i], sizeof text[0], "%lld", (long long)b->totals[i].video_id);
			snprintf(text[2 * i + 1], sizeof text[0], "%lld", (long long)b->totals[i].views);
			params[2 * i] = text[2 * i];
			params[2 * i + 1] = text[2 * i + 1];
		}
		rc = kit_db_exec(db, sql, 2 * b->n, params);
	}
	free(sql);
	free(params);
	free(text);
	return rc;
}

int fence_apply(struct kit_db *db, const struct fence_batch *b)
{
	char part[16], last[24], before[24];
	snprintf(part, sizeof part, "%d", b->part);
	snprintf(last, sizeof last, "%lld", (long long)b->last);
	snprintf(before, sizeof before, "%lld", (long long)(b->first - 1));

	int rc = kit_db_begin(db);
	if (rc != 0)
		return rc;
	/* The fence: only the batch that starts right after the stored offset
	 * moves it. One that repeats, overlaps or skips is refused. */
	rc = kit_db_exec(db, "UPDATE log_progress SET last_offset = $2 "
	                     "WHERE part = $1 AND last_offset = $3",
	                 3, (const char *[]){ part, last, before });
	if (rc == 0 && kit_db_changes(db) == 0) {
		kit_db_rollback(db);
		return 0;                 /* not next: applied before, or cut by someone else */
	}
	if (rc == 0)
		rc = add_totals(db, b);
	if (rc == 0)
		rc = kit_db_commit(db);
	if (rc != 0) {
		kit_db_rollback(db);
		return rc;
	}
	return 1;
}

int fence_position(struct kit_db *db, int part, int64_t *next)
{
	char p[16];
	snprintf(p, sizeof p, "%d", part);
	int64_t last;
	int rc = kit_db_query_int(db, "SELECT last_offset FROM log_progress WHERE part = $1",
	                          1, (const char *[]){ p }, &last);
	if (rc == 0)
		*next = last + 1;
	return rc;
}

int fence_on_assign(void *arg, struct kit_log_consumer *c, int part)
{
	int64_t next;
	int rc = fence_position(arg, part, &next);
	return rc != 0 ? rc : kit_log_seek(c, part, next);
}

static int by_video(const void *a, const void *b)
{
	int64_t x = ((const struct fence_total *)a)->video_id;
	int64_t y = ((const struct fence_total *)b)->video_id;
	return (x > y) - (x < y);
}

int fence_handle(void *arg, int part, const struct kit_log_record *recs, int n)
{
	struct fence_batch *b = calloc(1, sizeof *b);
	if (!b)
		return KIT_DB_ERR;
	b->part = part;
	b->first = recs[0].offset;
	b->last = recs[n - 1].offset;
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		struct fence_event ev;
		if (recs[i].len != sizeof ev) {
			rc = KIT_DB_ERR;
			break;
		}
		memcpy(&ev, recs[i].data, sizeof ev);
		int k = 0;
		while (k < b->n && b->totals[k].video_id != ev.video_id)
			k++;
		if (k == FENCE_MAX_VIDEOS) {
			rc = KIT_DB_ERR;
			break;
		}
		if (k == b->n)
			b->totals[b->n++] = (struct fence_total){ ev.video_id, 0 };
		b->totals[k].views++;
	}
	/* Rows in one order for every consumer: two batches never wait on
	 * each other's rows in a circle (no deadlock on PostgreSQL). */
	qsort(b->totals, (size_t)b->n, sizeof b->totals[0], by_video);
	if (rc == 0)
		rc = fence_apply(arg, b);
	free(b);
	return rc < 0 ? rc : 0;
}
