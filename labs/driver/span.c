/*
 * span.c: lock holds, timed between two database events.
 * See span.h for the interface.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "labs/driver/span.h"

void drv_span_init(struct drv_span *s, enum kit_db_event from, const char *verb,
                   enum kit_db_event to)
{
	s->from = from;
	s->verb = verb;
	s->to = to;
	atomic_init(&s->n, 0);
	atomic_init(&s->ns, 0);
	pthread_mutex_init(&s->lock, NULL);
	util_hist_init(&s->hist);
}

void drv_span_destroy(struct drv_span *s)
{
	pthread_mutex_destroy(&s->lock);
}

void drv_span_reset(struct drv_span *s)
{
	atomic_store(&s->n, 0);
	atomic_store(&s->ns, 0);
	pthread_mutex_lock(&s->lock);
	util_hist_reset(&s->hist);
	pthread_mutex_unlock(&s->lock);
}

static void hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct drv_span_clock *clk = arg;
	struct drv_span *s = clk->span;

	if (ev == s->from && (s->verb == NULL || strncasecmp(sql, s->verb, strlen(s->verb)) == 0)) {
		clk->since_ns = t_ns;
	} else if (ev == s->to && clk->since_ns != 0) {
		int64_t len = t_ns - clk->since_ns;
		clk->held_ns += len;
		clk->ended++;
		clk->since_ns = 0;
		atomic_fetch_add_explicit(&s->n, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->ns, len, memory_order_relaxed);
		pthread_mutex_lock(&s->lock);
		util_hist_add(&s->hist, len);
		pthread_mutex_unlock(&s->lock);
	} else if (ev == KIT_DB_TX_ROLLBACK) {
		clk->since_ns = 0;
	}
}

void drv_span_watch(struct drv_span_clock *clk, struct drv_span *s, struct kit_db *db)
{
	*clk = (struct drv_span_clock){ .span = s };
	kit_db_set_hook(db, hook, clk);
}

int drv_span_thread_init(void *span, struct kit_load_thread *th)
{
	struct drv_span_clock *clk = malloc(sizeof *clk);
	if (clk == NULL)
		return KIT_DB_ERR;
	drv_span_watch(clk, span, th->db);
	th->local = clk;
	return 0;
}

int drv_span_thread_done(void *span, struct kit_load_thread *th)
{
	(void)span;
	kit_db_set_hook(th->db, NULL, NULL);
	free(th->local);
	th->local = NULL;
	return 0;
}

double drv_span_mean_ms(struct drv_span *s)
{
	long long n = atomic_load(&s->n);
	return n > 0 ? (double)atomic_load(&s->ns) / (double)n / 1e6 : 0;
}

double drv_span_median_ms(struct drv_span *s)
{
	pthread_mutex_lock(&s->lock);
	double ns = util_hist_quantile(&s->hist, 0.5);
	pthread_mutex_unlock(&s->lock);
	return ns / 1e6;
}

long long drv_span_count(struct drv_span *s)
{
	return atomic_load(&s->n);
}
