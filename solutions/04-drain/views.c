/*
 * views.c: Lab 04 reference solution — buffer views in the store, drain
 * them atomically (one script, in Lua for Redis and in C for the
 * in-process store), add them to the database in one upsert per flush.
 */
#include "labs/04-drain/views.h"

#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- §3 record ---- */

/* Add views to videos' deltas and mark them dirty, as one step: the step
 * record_view runs, and the one that puts a refused flush back.
 * KEYS: the dirty set, the delta key prefix. ARGV: id, n, id, n, ... */
static int add_step(struct kit_store *st, struct kit_store_call *c)
{
	for (int i = 0; i + 1 < c->nargs; i += 2) {
		char key[64];
		snprintf(key, sizeof key, "%s%s", c->keys[1], c->args[i]);
		int rc = kit_store_incrby(st, key, strtoll(c->args[i + 1], NULL, 10), NULL);
		if (rc == 0)
			rc = kit_store_sadd(st, c->keys[0], c->args[i], NULL);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static const struct kit_store_script add_script = {
	"add",
	"for i = 1, #ARGV, 2 do\n"
	"  redis.call('INCRBY', KEYS[2] .. ARGV[i], ARGV[i + 1])\n"
	"  redis.call('SADD', KEYS[1], ARGV[i])\n"
	"end\n",
	add_step,
};

static const char *const view_keys[] = { VIEWS_DIRTY, VIEWS_DELTA_PREFIX };

/* Run add_script for rows[0 .. n-1]. */
static int add_views(struct kit_store *st, const struct view_delta *rows, int n)
{
	char (*text)[24] = malloc((size_t)n * 2 * sizeof *text);
	const char **args = malloc((size_t)n * 2 * sizeof *args);
	int rc = KIT_STORE_NOMEM;
	if (text && args) {
		for (int i = 0; i < n; i++) {
			snprintf(text[2 * i], sizeof text[0], "%" PRId64, rows[i].video_id);
			snprintf(text[2 * i + 1], sizeof text[0], "%" PRId64, rows[i].n);
			args[2 * i] = text[2 * i];
			args[2 * i + 1] = text[2 * i + 1];
		}
		struct kit_store_call c = { 2, view_keys, 2 * n, args, NULL, 0, 0 };
		rc = kit_store_eval(st, &add_script, &c);
	}
	free(args);
	free(text);
	return rc;
}

int record_view(struct kit_store *st, int64_t video_id)
{
	return add_views(st, &(struct view_delta){ video_id, 1 }, 1);
}

/* ---- §4 drain ---- */

/* Pop up to ARGV[1] dirty ids and take each one's delta with GETDEL;
 * answer id, n, id, n, ... for the deltas that were not zero. */
static int drain_step(struct kit_store *st, struct kit_store_call *c)
{
	char *ids[VIEWS_MAX_BATCH];
	int nids = 0;
	int rc = kit_store_spop(st, c->keys[0], atoi(c->args[0]), ids, &nids);
	for (int i = 0; i < nids; i++) {
		int64_t n = 0;
		char key[64];
		snprintf(key, sizeof key, "%s%s", c->keys[1], ids[i]);
		if (rc == 0)
			rc = kit_store_getdel(st, key, &n);
		if (rc == 0 && n != 0) {
			c->out[c->nout++] = strtoll(ids[i], NULL, 10);
			c->out[c->nout++] = n;
		}
		free(ids[i]);
	}
	return rc;
}

static const struct kit_store_script drain_script = {
	"drain",
	"local out = {}\n"
	"for _, id in ipairs(redis.call('SPOP', KEYS[1], ARGV[1])) do\n"
	"  local n = tonumber(redis.call('GETDEL', KEYS[2] .. id) or 0)\n"
	"  if n ~= 0 then\n"
	"    out[#out + 1] = tonumber(id)\n"
	"    out[#out + 1] = n\n"
	"  end\n"
	"end\n"
	"return out\n",
	drain_step,
};

int drain_views(struct kit_store *st, int max, struct view_delta *out, int *n)
{
	assert(max >= 1 && max <= VIEWS_MAX_BATCH);
	int64_t got[2 * VIEWS_MAX_BATCH];
	char count[16];
	snprintf(count, sizeof count, "%d", max);
	struct kit_store_call c = { 2, view_keys, 1, (const char *[]){ count }, got, 2 * max, 0 };
	int rc = kit_store_eval(st, &drain_script, &c);
	*n = 0;
	for (int i = 0; rc == 0 && i + 1 < c.nout; i += 2)
		out[(*n)++] = (struct view_delta){ got[i], got[i + 1] };
	return rc;
}

/* ---- §5 flush ---- */

static int by_id(const void *a, const void *b)
{
	const struct view_delta *x = a, *y = b;
	return (x->video_id > y->video_id) - (x->video_id < y->video_id);
}

/* Add rows[0..n-1] to video_counts in one statement. Sorted ids keep two
 * concurrent upserts from locking rows in opposite orders. */
static int upsert(struct kit_db *db, struct view_delta *rows, int n)
{
	qsort(rows, (size_t)n, sizeof *rows, by_id);
	size_t cap = 128 + (size_t)n * 32;
	char *sql = malloc(cap);
	char (*text)[24] = malloc((size_t)n * 2 * sizeof *text);
	const char **params = malloc((size_t)n * 2 * sizeof *params);
	int rc = KIT_DB_ERR;
	if (sql && text && params) {
		size_t len = (size_t)snprintf(sql, cap, "INSERT INTO video_counts (video_id, views) VALUES ");
		for (int i = 0; i < n; i++) {
			len += (size_t)snprintf(sql + len, cap - len, "%s($%d, $%d)",
			                        i ? ", " : "", 2 * i + 1, 2 * i + 2);
			snprintf(text[2 * i], sizeof text[0], "%" PRId64, rows[i].video_id);
			snprintf(text[2 * i + 1], sizeof text[0], "%" PRId64, rows[i].n);
			params[2 * i] = text[2 * i];
			params[2 * i + 1] = text[2 * i + 1];
		}
		snprintf(sql + len, cap - len, " ON CONFLICT (video_id) DO UPDATE"
		         " SET views = video_counts.views + excluded.views");
		rc = kit_db_exec(db, sql, 2 * n, params);
	}
	free(params);
	free(text);
	free(sql);
	return rc;
}

int64_t flush_views(struct kit_store *st, struct kit_db *db, int max)
{
	struct view_delta rows[VIEWS_MAX_BATCH];
	int n = 0;
	int rc = drain_views(st, max, rows, &n);
	if (rc != 0 || n == 0)
		return rc;
	rc = upsert(db, rows, n);
	if (rc != 0) {
		/* the database said no: the views go back for the next flush */
		int back = add_views(st, rows, n);
		if (back != 0)
			fprintf(stderr, "flush_views: %d videos' views lost: %s\n",
			        n, kit_store_strerror(back));
		return rc;
	}
	int64_t views = 0;
	for (int i = 0; i < n; i++)
		views += rows[i].n;
	return views;
}

/* ---- §6 the flush loop ---- */

struct flusher {
	pthread_t thread;
	struct kit_store *st;
	struct kit_db *db;
	int interval_ms, max;

	pthread_mutex_t mu;       /* guards what follows */
	pthread_cond_t wake;
	bool stopping;
	struct flusher_stats stats;
};

static int64_t flush_counted(struct flusher *f)
{
	int64_t r = flush_views(f->st, f->db, f->max);
	pthread_mutex_lock(&f->mu);
	f->stats.flushes++;
	if (r < 0)
		f->stats.failed++;
	else
		f->stats.views += r;
	pthread_mutex_unlock(&f->mu);
	return r;
}

static void *flusher_main(void *arg)
{
	struct flusher *f = arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&f->mu);
	while (!f->stopping) {
		next.tv_nsec += (long)f->interval_ms * 1000000L;
		next.tv_sec += next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		while (!f->stopping &&
		       pthread_cond_timedwait(&f->wake, &f->mu, &next) == 0)
			;   /* woken early but not stopping: keep waiting */
		if (f->stopping)
			break;
		pthread_mutex_unlock(&f->mu);
		flush_counted(f);
		pthread_mutex_lock(&f->mu);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

int start_flusher(struct flusher **out, struct kit_store *st, struct kit_db *db,
                  int interval_ms, int max)
{
	*out = NULL;
	if (interval_ms < 1 || max < 1 || max > VIEWS_MAX_BATCH)
		return KIT_DB_ERR;
	struct flusher *f = calloc(1, sizeof *f);
	if (!f)
		return KIT_STORE_NOMEM;
	f->st = st;
	f->db = db;
	f->interval_ms = interval_ms;
	f->max = max;
	pthread_mutex_init(&f->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&f->thread, NULL, flusher_main, f) != 0) {
		pthread_cond_destroy(&f->wake);
		pthread_mutex_destroy(&f->mu);
		free(f);
		return KIT_DB_ERR;
	}
	*out = f;
	return 0;
}

void flusher_stats(struct flusher *f, struct flusher_stats *out)
{
	pthread_mutex_lock(&f->mu);
	*out = f->stats;
	pthread_mutex_unlock(&f->mu);
}

int stop_flusher(struct flusher *f)
{
	if (!f)
		return 0;
	pthread_mutex_lock(&f->mu);
	f->stopping = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->mu);
	pthread_join(f->thread, NULL);

	/* the thread is gone: what is left is flushed from here */
	int64_t r, dirty = 0;
	do {
		r = flush_counted(f);
		if (r >= 0)
			r = kit_store_scard(f->st, VIEWS_DIRTY, &dirty);
	} while (r == 0 && dirty > 0);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->mu);
	free(f);
	return (int)r;
}
