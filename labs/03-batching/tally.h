/*
 * tally.h: Lab 03 helper, given: per-post sums and the upsert that adds
 * them to post_likes. Building SQL text in C is not the point of the lab,
 * so this part is done; read it, then use it from batch.c.
 *
 * Interface:
 *   struct tally t = TALLY_EMPTY;
 *   tally_add(&t, post, 1);            ... as often as needed
 *   tally_write(db, &t);               inside your transaction
 *   tally_free(&t);
 * A tally is plain memory: it has no lock. Everything is static inline,
 * so a file that includes this and uses only part of it compiles cleanly.
 */
#ifndef HOTROW_LAB03_TALLY_H
#define HOTROW_LAB03_TALLY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit/db.h"
#include "labs/03-batching/batch.h"

struct tally_entry {
	int64_t post_id;
	int64_t n;
};

struct tally {
	struct tally_entry *e;   /* len entries in use, room for cap */
	size_t len, cap;
};

#define TALLY_EMPTY { NULL, 0, 0 }

static inline void tally_free(struct tally *t)
{
	free(t->e);
	*t = (struct tally)TALLY_EMPTY;
}

/* Add k (may be negative) to post_id's sum, making the entry if needed.
 * A linear search: one flush interval sees few distinct posts (a hash
 * table is the next step if yours does not). Returns 0, or KIT_DB_ERR when
 * out of memory, with t unchanged. */
static inline int tally_add(struct tally *t, int64_t post_id, int64_t k)
{
	for (size_t i = 0; i < t->len; i++) {
		if (t->e[i].post_id == post_id) {
			t->e[i].n += k;
			return 0;
		}
	}
	if (t->len == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct tally_entry *e = realloc(t->e, cap * sizeof *e);
		if (e == NULL)
			return KIT_DB_ERR;
		t->e = e;
		t->cap = cap;
	}
	t->e[t->len++] = (struct tally_entry){ post_id, k };
	return 0;
}

/* Drop the entries whose sum is 0. */
static inline void tally_compact(struct tally *t)
{
	size_t keep = 0;
	for (size_t i = 0; i < t->len; i++)
		if (t->e[i].n != 0)
			t->e[keep++] = t->e[i];
	t->len = keep;
}

static inline int tally_by_post(const void *a, const void *b)
{
	const struct tally_entry *x = a, *y = b;
	return (x->post_id > y->post_id) - (x->post_id < y->post_id);
}

/* Add every sum in t to post_likes: one multi-row upsert
 *   INSERT INTO post_likes (post_id, n) VALUES ($1, $2), ($3, $4), ...
 *   ON CONFLICT (post_id) DO UPDATE SET n = post_likes.n + excluded.n
 * (on MariaDB: ON DUPLICATE KEY UPDATE n = n + VALUES(n))
 * per BATCH_FLUSH_ROWS entries (none when t is empty). Run it inside a
 * transaction (batch.h: the flush and the rollup begin one with
 * kit_db_begin and end it with kit_db_commit). Sorts t by
 * post first, so two writers always lock counter rows in the same order
 * (PostgreSQL would otherwise find deadlocks). t is not otherwise changed. */
static inline int tally_write(struct kit_db *db, struct tally *t)
{
	if (t->len > 0)
		qsort(t->e, t->len, sizeof *t->e, tally_by_post);
	for (size_t at = 0; at < t->len; at += BATCH_FLUSH_ROWS) {
		size_t rows = t->len - at < BATCH_FLUSH_ROWS ? t->len - at : BATCH_FLUSH_ROWS;
		char *sql = malloc(160 + rows * 24);
		char (*num)[24] = malloc(2 * rows * sizeof *num);
		const char **params = malloc(2 * rows * sizeof *params);
		int rc = KIT_DB_ERR;
		if (sql && num && params) {
			size_t len = (size_t)sprintf(sql, "INSERT INTO post_likes (post_id, n) VALUES ");
			for (size_t i = 0; i < rows; i++) {
				len += (size_t)sprintf(sql + len, "%s($%zu, $%zu)", i ? ", " : "",
				                       2 * i + 1, 2 * i + 2);
				snprintf(num[2 * i], sizeof num[0], "%lld", (long long)t->e[at + i].post_id);
				snprintf(num[2 * i + 1], sizeof num[0], "%lld", (long long)t->e[at + i].n);
				params[2 * i] = num[2 * i];
				params[2 * i + 1] = num[2 * i + 1];
			}
			strcpy(sql + len, kit_db_engine(db) == KIT_DB_MYSQL
			       ? " ON DUPLICATE KEY UPDATE n = n + VALUES(n)"
			       : " ON CONFLICT (post_id) DO UPDATE SET n = post_likes.n + excluded.n");
			rc = kit_db_exec(db, sql, (int)(2 * rows), params);
		}
		free(sql);
		free(num);
		free(params);
		if (rc != 0)
			return rc;
	}
	return 0;
}

#endif
