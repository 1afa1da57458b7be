/*
 * pool.c: connections on a free list, waiters in a FIFO.
 *
 * A connection put back goes straight to the oldest waiter, so a request
 * that has waited longest is served first (the fairness that makes an
 * unrelated endpoint queue behind every like in line). Each waiter sleeps
 * on its own condition variable; a waiter whose time runs out takes itself
 * off the list, unless a connection was handed to it just then.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kit/pool.h"

struct waiter {
	pthread_cond_t cond;
	struct kit_db *db;           /* handed over by kit_pool_put */
	struct waiter *next;
};

struct kit_pool {
	int size;
	int acquire_timeout_ms;
	char *reset_sql;             /* NULL: none */
	struct kit_db **all;         /* every connection, for close */

	/* guarded by lock */
	pthread_mutex_t lock;
	struct kit_db **free;        /* free[0 .. nfree-1] */
	int nfree;
	struct waiter *head, *tail;  /* oldest first */
	long timeouts;               /* kit_pool_get calls answered KIT_POOL_TIMEOUT */
};

int kit_pool_open(struct kit_pool **out, const char *url, int size, int acquire_timeout_ms,
                  const char *reset_sql, char *err, size_t errlen)
{
	*out = NULL;
	if (size < 1 || size > 256 || acquire_timeout_ms < 0) {
		snprintf(err, errlen, "pool of %d connections, %d ms acquire timeout: give 1..256 "
		         "and 0 or more", size, acquire_timeout_ms);
		return KIT_DB_ERR;
	}
	struct kit_pool *p = calloc(1, sizeof *p);
	if (!p || !(p->all = calloc((size_t)size, sizeof *p->all)) ||
	    !(p->free = calloc((size_t)size, sizeof *p->free)) ||
	    (reset_sql && *reset_sql && !(p->reset_sql = strdup(reset_sql)))) {
		snprintf(err, errlen, "out of memory");
		if (p) {
			free(p->all);
			free(p->free);
		}
		free(p);
		return KIT_DB_ERR;
	}
	p->size = size;
	p->acquire_timeout_ms = acquire_timeout_ms;
	pthread_mutex_init(&p->lock, NULL);
	for (int i = 0; i < size; i++) {
		if (kit_db_open(&p->all[i], url) != 0) {
			snprintf(err, errlen, "%s", kit_db_errmsg(p->all[i]));
			kit_pool_close(p);         /* closes what was opened */
			return KIT_DB_ERR;
		}
		p->free[p->nfree++] = p->all[i];
	}
	*out = p;
	return 0;
}

void kit_pool_close(struct kit_pool *p)
{
	if (p == NULL)
		return;
	for (int i = 0; i < p->size; i++)
		kit_db_close(p->all[i]);
	pthread_mutex_destroy(&p->lock);
	free(p->reset_sql);
	free(p->all);
	free(p->free);
	free(p);
}

int kit_pool_size(const struct kit_pool *p)
{
	return p->size;
}

long kit_pool_timeouts(struct kit_pool *p)
{
	pthread_mutex_lock(&p->lock);
	long n = p->timeouts;
	pthread_mutex_unlock(&p->lock);
	return n;
}

static struct timespec deadline(int ms)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

/* Wait in line for a connection; called and returns with p->lock held. */
static struct kit_db *wait_in_line(struct kit_pool *p)
{
	struct waiter w = { .db = NULL, .next = NULL };
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cond, &attr);
	pthread_condattr_destroy(&attr);
	if (p->tail)
		p->tail->next = &w;
	else
		p->head = &w;
	p->tail = &w;

	struct timespec until = deadline(p->acquire_timeout_ms);
	int rc = 0;
	while (w.db == NULL && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&w.cond, &p->lock, &until);
	if (w.db == NULL) {               /* out of time: leave the line */
		struct waiter **pp = &p->head, *prev = NULL;
		while (*pp != &w)
			prev = *pp, pp = &(*pp)->next;
		*pp = w.next;
		if (p->tail == &w)
			p->tail = prev;
	}
	pthread_cond_destroy(&w.cond);
	return w.db;
}

int kit_pool_get(struct kit_pool *p, struct kit_db **db)
{
	*db = NULL;
	pthread_mutex_lock(&p->lock);
	struct kit_db *c = NULL;
	if (p->nfree > 0 && p->head == NULL)
		c = p->free[--p->nfree];
	else if (p->acquire_timeout_ms > 0)
		c = wait_in_line(p);
	if (c == NULL)
		p->timeouts++;
	pthread_mutex_unlock(&p->lock);
	if (c == NULL)
		return KIT_POOL_TIMEOUT;
	if (p->reset_sql && kit_db_engine(c) == KIT_DB_POSTGRES) {
		int rc = kit_db_exec(c, p->reset_sql, 0, NULL);
		if (rc != 0) {
			kit_pool_put(p, c);
			return rc;
		}
	}
	*db = c;
	return 0;
}

void kit_pool_put(struct kit_pool *p, struct kit_db *db)
{
	pthread_mutex_lock(&p->lock);
	struct waiter *w = p->head;
	if (w) {
		p->head = w->next;
		if (p->head == NULL)
			p->tail = NULL;
		w->db = db;
		pthread_cond_signal(&w->cond);
	} else {
		p->free[p->nfree++] = db;
	}
	pthread_mutex_unlock(&p->lock);
}
