/*
 * span.c: lock holds, timed between two database events.
 * See span.h for the interface.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kit/span.h"

void kit_span_init(struct kit_span *s, enum kit_db_event from, const char *verb,
                   enum kit_db_event to)
{
	s->from = from;
	s->verb = verb;
	s->to = to;
	atomic_init(&s->n, 0);
	atomic_init(&s->ns, 0);
}

void kit_span_reset(struct kit_span *s)
{
	atomic_store(&s->n, 0);
	atomic_store(&s->ns, 0);
}

static void hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct kit_span_clock *clk = arg;
	struct kit_span *s = clk->span;

	if (ev == s->from && (s->verb == NULL || strncasecmp(sql, s->verb, strlen(s->verb)) == 0)) {
		clk->since_ns = t_ns;
	} else if (ev == s->to && clk->since_ns != 0) {
		atomic_fetch_add_explicit(&s->n, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->ns, t_ns - clk->since_ns, memory_order_relaxed);
		clk->since_ns = 0;
	} else if (ev == KIT_DB_TX_ROLLBACK) {
		clk->since_ns = 0;
	}
}

void kit_span_watch(struct kit_span_clock *clk, struct kit_span *s, struct kit_db *db)
{
	clk->span = s;
	clk->since_ns = 0;
	kit_db_set_hook(db, hook, clk);
}

int kit_span_thread_init(void *span, struct kit_load_thread *th)
{
	struct kit_span_clock *clk = malloc(sizeof *clk);
	if (clk == NULL)
		return KIT_DB_ERR;
	kit_span_watch(clk, span, th->db);
	th->local = clk;
	return 0;
}

int kit_span_thread_done(void *span, struct kit_load_thread *th)
{
	(void)span;
	kit_db_set_hook(th->db, NULL, NULL);
	free(th->local);
	th->local = NULL;
	return 0;
}

double kit_span_mean_ms(const struct kit_span *s)
{
	long long n = atomic_load(&s->n);
	return n > 0 ? (double)atomic_load(&s->ns) / (double)n / 1e6 : 0;
}
