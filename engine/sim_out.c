/*
 * sim_out.c: what comes out of a simulation: the summary, the snapshot the
 * TUI draws, JSON and CSV. Read-only over struct sim.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim_field.h"
#include "engine/sim_impl.h"
#include "engine/xmalloc.h"
#include "util/json.h"

static double now_s(const struct sim *s)
{
	return (double)s->now / 1e6;
}

void sim_summary(const struct sim *s, struct sim_summary *o)
{
	double t = now_s(s);
	int64_t pending;

	memset(o, 0, sizeof *o);
	o->offered = s->offered;
	o->completed = s->completed;
	o->failed = s->failed;
	o->abandoned = s->abandoned;
	o->retried = s->retried;
	o->refused = s->refused;
	o->duration_s = t;
	o->in_flight = (uint64_t)s->inflight;
	o->throughput_per_s = t > 0 ? (double)s->completed / t : 0;
	o->worst_wait_ms = (double)s->worst_wait / 1000.0;
	o->mean_wait_ms = s->nwaits ? s->sum_wait / (double)s->nwaits / 1000.0 : 0;
	/* The run's latencies: up to the last tick, and the tick's so far.
	 * (The sums are of whole microseconds: merged, they stay exact.) */
	const struct util_hist *lat = &s->lat;
	struct util_hist *all = NULL;
	if (s->acc.lat.count) {
		all = xmalloc(sizeof *all);
		*all = s->lat;
		util_hist_merge(all, &s->acc.lat);
		lat = all;
	}
	o->latency_ms.mean = util_hist_mean(lat) / 1000.0;
	o->latency_ms.p50 = util_hist_quantile(lat, 0.50) / 1000.0;
	o->latency_ms.p95 = util_hist_quantile(lat, 0.95) / 1000.0;
	o->latency_ms.p99 = util_hist_quantile(lat, 0.99) / 1000.0;
	o->latency_ms.max = (double)lat->max / 1000.0;
	free(all);
	o->pool.max_in_use = s->pool[POOL_MAIN].max_in_use;
	o->pool.max_waiters = s->pool[POOL_MAIN].max_waiters;
	o->pool.exhausted_at_s = s->pool[POOL_MAIN].exhausted_at >= 0
	                         ? (double)s->pool[POOL_MAIN].exhausted_at / 1e6 : -1;
	o->unrelated.offered = s->unrel_offered;
	o->unrelated.failed = s->unrel_failed;
	o->count.true_count = s->acked;
	o->count.visible = s->visible;
	o->count.buffered = sim_fix_buffered(s);
	o->count.lost = s->lost;
	o->count.doubled = s->doubled;
	o->count.unacked = s->unacked;
	o->orphaned = s->orphaned;
	o->orphans_run = s->orphans_run;
	o->lock_timeouts = s->lock_timeouts;
	o->statement_timeouts = s->statement_timeouts;
	o->wakes = s->wakes;
	o->contended = s->contended;
	o->wal.wakes = s->wal.wakes;
	o->wal.flushes = s->wal.flushes;
	o->wal.commits = s->wal.commits;
	o->wal.flushes_per_commit = s->wal.commits ? (double)s->wal.flushes / (double)s->wal.commits : -1;
	o->retries_denied = s->retries_denied;
	o->counter_pool.max_in_use = s->pool[POOL_COUNTER].max_in_use;
	o->counter_pool.max_waiters = s->pool[POOL_COUNTER].max_waiters;
	o->counter_pool.exhausted_at_s = s->pool[POOL_COUNTER].exhausted_at >= 0
	                         ? (double)s->pool[POOL_COUNTER].exhausted_at / 1e6 : -1;
	/* The lag so far includes what is still waiting to be flushed. */
	pending = s->flush_busy ? s->flush_oldest : s->buf_oldest;
	o->count.max_lag_s = (double)s->max_lag / 1e6;
	if (o->count.buffered > 0 && pending >= 0 && (double)(s->now - pending) / 1e6 > o->count.max_lag_s)
		o->count.max_lag_s = (double)(s->now - pending) / 1e6;
	sim_theory(s, s->like.rate, o);
	if (t > 0) {
		double area = s->area + (double)s->inflight * (double)(s->now - s->area_t);
		o->theory.little_L = area / (double)s->now;
		o->theory.little_lambda = (double)s->offered / t;
		o->theory.little_W_ms = s->sojourn_n ? s->sojourn_sum / (double)s->sojourn_n / 1000.0 : 0;
	}
	o->events = s->events;
	memcpy(o->faults, s->faults, sizeof o->faults);
	sim_chain_summary(s, o);
	if (sim_strategy_info(s->c.strategy)->batches) {
		o->ledger.transfers = s->transfers;
		o->ledger.refused = s->ledger_refused;
		o->ledger.transfers_per_s = t > 0 ? (double)s->transfers / t : 0;
		o->ledger.ceiling_transfers_per_s = o->theory.ceiling_per_s * sim_config_batch(&s->c);
	}
}

/* ---- the snapshot ---- */

void sim_snapshot(const struct sim *s, struct sim_snapshot *out)
{
	int cells = 0;

	out->now_us = s->now;
	out->config = s->c;
	out->nrows = sim_live_rows(s);
	out->nlanes = out->nrows < SIM_SNAP_ROWS ? out->nrows : SIM_SNAP_ROWS;
	for (int i = 0; i < out->nlanes; i++) {
		const struct sim_row *row = &s->rows[i];
		struct sim_lane *l = &out->lanes[i];
		l->held = row->holder != HOLD_NONE;
		l->holder_age_us = l->held ? s->now - row->got_us : 0;
		l->queue_len = (int)row->q.n;
		l->nwaiters = row->q.n < SIM_SNAP_WAITERS ? (int)row->q.n : SIM_SNAP_WAITERS;
		for (int k = 0; k < l->nwaiters; k++)
			l->waiter_age_us[k] = s->now - sim_queue_at(&row->q, (size_t)k)->enq_us;
		l->completed = row->completed;
	}
	/* With a bulkhead the cells show both pools together. */
	out->pool_size = s->c.pool == 0 ? 0 : s->c.pool + (s->counter_pool != &s->pool[POOL_MAIN]
	                                                  ? s->c.counter_pool : 0);
	out->pool_in_use = sim_pools_in_use(s);
	out->pool_waiters = sim_pools_waiting(s);
	if (s->counter_pool != &s->pool[POOL_MAIN]) {
		out->counter_pool_size = s->c.counter_pool;
		out->counter_in_use = s->counter_pool->in_use;
		out->counter_waiters = (int)s->counter_pool->waiters.n +
		                       s->counter_pool->flusher_waiting;
	} else {
		out->counter_pool_size = out->counter_in_use = out->counter_waiters = 0;
	}
	/* Cells grouped by state: busy ones first, then the idle rest. */
	{
		const struct { int n; enum sim_conn_state st; } g[] = {
			{ s->conn_hold, SIM_CONN_LOCK_HOLD }, { s->conn_flush, SIM_CONN_FLUSH },
			{ s->conn_wait, SIM_CONN_LOCK_WAIT }, { s->conn_outside, SIM_CONN_OUTSIDE },
			{ s->conn_unrel, SIM_CONN_UNRELATED },
			{ out->pool_size > out->pool_in_use ? out->pool_size - out->pool_in_use : 0,
			  SIM_CONN_IDLE },
		};
		for (size_t k = 0; k < sizeof g / sizeof g[0]; k++)
			for (int j = 0; j < g[k].n && cells < SIM_SNAP_POOL; j++)
				out->pool_cells[cells++] = g[k].st;
	}
	out->npool = cells;
	out->nseries = sim_series_recent(&s->series, out->series, SIM_SNAP_SERIES);
	sim_summary(s, &out->summary);
	sim_trace_get(s, &out->trace);
	sim_fix_view(s, &out->fix);
	sim_change_text(s, out->change, sizeof out->change);
}

/* ---- JSON ---- */

/* Numbers print with %.10g: the same bits give the same text everywhere. */
static void num(FILE *f, const char *key, double v)
{
	if (!isfinite(v))
		fprintf(f, "\"%s\":null", key);
	else
		fprintf(f, "\"%s\":%.10g", key, v);
}

static void num_or_null(FILE *f, const char *key, double v)
{
	if (v < 0)
		fprintf(f, "\"%s\":null", key);
	else
		num(f, key, v);
}

/* "key":"v", v escaped; NULL writes null. */
static void str(FILE *f, const char *key, const char *v)
{
	fprintf(f, "\"%s\":", key);
	util_json_str(f, v);
}

/* One field of "config", as the field table (sim_field.c) has it. */
static void config_field_json(FILE *f, const struct sim_config *c, const struct sim_field *fd)
{
	const void *p = (const char *)c + fd->off;
	char text[64];

	switch (fd->kind) {
	case SIM_FIELD_INT:
		fprintf(f, "\"%s\":%d", fd->json, *(const int *)p);
		break;
	case SIM_FIELD_DOUBLE:
		num(f, fd->json, *(const double *)p);
		break;
	case SIM_FIELD_BOOL:
		fprintf(f, "\"%s\":%s", fd->json, *(const bool *)p ? "true" : "false");
		break;
	case SIM_FIELD_U64:
		fprintf(f, "\"%s\":%llu", fd->json, (unsigned long long)*(const uint64_t *)p);
		break;
	case SIM_FIELD_ENUM:
	case SIM_FIELD_STRATEGY:
		sim_field_text(fd, c, text, sizeof text);
		str(f, fd->json, text);
		break;
	case SIM_FIELD_SCENARIO:
		str(f, fd->json, c->scenario[0] ? c->scenario : NULL);
		break;
	case SIM_FIELD_SCHEDULE:
		fprintf(f, "\"%s\":[", fd->json);
		for (int i = 0; i < c->nphases; i++) {
			fputs(i ? ",{" : "{", f);
			num(f, "at_s", (double)c->phases[i].at_us / 1e6);
			fputc(',', f);
			num(f, "rps", c->phases[i].rps);
			fputc('}', f);
		}
		fputc(']', f);
		break;
	case SIM_FIELD_CRASHES:
		fprintf(f, "\"%s\":[", fd->json);
		for (int i = 0; i < c->ncrashes; i++) {
			fputs(i ? ",{" : "{", f);
			str(f, "kind", sim_fault_name(c->crashes[i].kind));
			fputc(',', f);
			num(f, "at_s", (double)c->crashes[i].at_us / 1e6);
			fputc('}', f);
		}
		fputc(']', f);
		break;
	case SIM_FIELD_BATCH:
		fprintf(f, "\"%s\":%d", fd->json, sim_config_batch(c));
		break;
	}
}

static void config_json(FILE *f, const struct sim_config *c)
{
	size_t n;
	const struct sim_field *fields = sim_fields(&n);

	fputc('{', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		config_field_json(f, c, &fields[i]);
	}
	fputc('}', f);
}

/* ,"schedule":{...} in theory: the fluid view the theory follows. Only
 * runs with a schedule print it, so other runs' JSON stays as it was. */
static void schedule_json(FILE *f, const struct sim_schedule *v)
{
	const double peak = v->step[v->peak].rps;

	fputs(",\"schedule\":{", f);
	num(f, "peak_rps", peak);
	fputc(',', f);
	num(f, "peak_load", v->mu > 0 ? peak / v->mu : 0);
	fputc(',', f);
	num_or_null(f, "over_from_s", v->over_from_s);
	fputc(',', f);
	num(f, "line_max", v->line_max);
	fputc(',', f);
	num_or_null(f, "line_max_at_s", v->line_max_at_s);
	fputc(',', f);
	num_or_null(f, "drained_at_s", v->drained_at_s);
	fputc(',', f);
	num(f, "arrivals", v->arrivals);
	fputc(',', f);
	num(f, "end_s", v->end_s);
	fputc(',', f);
	num(f, "throughput_per_s", v->throughput_per_s);
	fputc('}', f);
}

static void summary_json(FILE *f, const struct sim_summary *o)
{
	fprintf(f, "{\"offered\":%llu,\"completed\":%llu,\"failed\":%llu,\"abandoned\":%llu,"
	        "\"retried\":%llu,\"refused\":%llu,",
	        (unsigned long long)o->offered, (unsigned long long)o->completed,
	        (unsigned long long)o->failed, (unsigned long long)o->abandoned,
	        (unsigned long long)o->retried, (unsigned long long)o->refused);
	num(f, "duration_s", o->duration_s);
	fputc(',', f);
	num(f, "throughput_per_s", o->throughput_per_s);
	fputc(',', f);
	num(f, "worst_wait_ms", o->worst_wait_ms);
	fputc(',', f);
	num(f, "mean_wait_ms", o->mean_wait_ms);
	fputs(",\"latency_ms\":{", f);
	num(f, "mean", o->latency_ms.mean);
	fputc(',', f);
	num(f, "p50", o->latency_ms.p50);
	fputc(',', f);
	num(f, "p95", o->latency_ms.p95);
	fputc(',', f);
	num(f, "p99", o->latency_ms.p99);
	fputc(',', f);
	num(f, "max", o->latency_ms.max);
	fprintf(f, "},\"pool\":{\"max_in_use\":%d,\"max_waiters\":%d,",
	        o->pool.max_in_use, o->pool.max_waiters);
	num_or_null(f, "exhausted_at_s", o->pool.exhausted_at_s);
	fprintf(f, "},\"unrelated\":{\"offered\":%llu,\"failed\":%llu},",
	        (unsigned long long)o->unrelated.offered, (unsigned long long)o->unrelated.failed);
	fprintf(f, "\"count\":{\"true\":%lld,\"visible\":%lld,\"buffered\":%lld,"
	        "\"lost\":%lld,\"double\":%lld,\"unacked\":%lld,",
	        (long long)o->count.true_count, (long long)o->count.visible,
	        (long long)o->count.buffered, (long long)o->count.lost,
	        (long long)o->count.doubled, (long long)o->count.unacked);
	num(f, "max_lag_s", o->count.max_lag_s);
	fprintf(f, "},\"retries\":{\"orphaned\":%llu,\"orphans_run\":%llu,"
	        "\"lock_timeouts\":%llu,\"denied\":%llu},\"counter_pool\":{\"max_in_use\":%d,"
	        "\"max_waiters\":%d,",
	        (unsigned long long)o->orphaned, (unsigned long long)o->orphans_run,
	        (unsigned long long)o->lock_timeouts, (unsigned long long)o->retries_denied,
	        o->counter_pool.max_in_use, o->counter_pool.max_waiters);
	num_or_null(f, "exhausted_at_s", o->counter_pool.exhausted_at_s);
	fprintf(f, "},\"ledger\":{\"transfers\":%llu,\"refused\":%llu,",
	        (unsigned long long)o->ledger.transfers, (unsigned long long)o->ledger.refused);
	num(f, "transfers_per_s", o->ledger.transfers_per_s);
	fputc(',', f);
	num(f, "ceiling_transfers_per_s", o->ledger.ceiling_transfers_per_s);
	fputs("},\"faults\":{", f);
	for (int i = 0; i < SIM_NFAULTS; i++) {
		fputs(i ? "," : "", f);
		util_json_str(f, sim_fault_name((enum sim_fault)i));
		fprintf(f, ":%llu", (unsigned long long)o->faults[i]);
	}
	fputs("},\"theory\":{", f);
	num(f, "ceiling_per_s", o->theory.ceiling_per_s);
	fputc(',', f);
	num(f, "rho", o->theory.rho);
	fputc(',', f);
	num_or_null(f, "mm1_mean_ms", o->theory.mm1_mean_ms);
	fputc(',', f);
	num_or_null(f, "md1_mean_ms", o->theory.md1_mean_ms);
	fputc(',', f);
	num(f, "growth_per_s", o->theory.growth_per_s);
	fputc(',', f);
	num_or_null(f, "pool_full_s", o->theory.pool_full_s);
	fputc(',', f);
	num_or_null(f, "closed_throughput_per_s", o->theory.closed_throughput_per_s);
	fputc(',', f);
	num_or_null(f, "closed_mean_ms", o->theory.closed_mean_ms);
	fputc(',', f);
	num_or_null(f, "pool_ceiling_per_s", o->theory.pool_ceiling_per_s);
	fputc(',', f);
	num(f, "distinct_rows", o->theory.distinct_rows);
	fputc(',', f);
	num_or_null(f, "cpu_ceiling_per_s", o->theory.cpu_ceiling_per_s);
	fputc(',', f);
	num_or_null(f, "callers_ceiling_per_s", o->theory.callers_ceiling_per_s);
	fputc(',', f);
	str(f, "binding", sim_ceiling_name(o->theory.binding));
	fputc(',', f);
	num(f, "binding_per_s", o->theory.binding_per_s);
	fputc(',', f);
	str(f, "model", sim_model_name(o->theory.model));
	fputc(',', f);
	num_or_null(f, "model_mean_ms", o->theory.model_mean_ms);
	fprintf(f, ",\"steady\":%s", o->theory.steady ? "true" : "false");
	fputs(",\"little\":{", f);
	num(f, "L", o->theory.little_L);
	fputc(',', f);
	num(f, "lambda", o->theory.little_lambda);
	fputc(',', f);
	num(f, "W_ms", o->theory.little_W_ms);
	fputc('}', f);
	if (o->schedule.nsteps > 0)
		schedule_json(f, &o->schedule);
	fprintf(f, "},\"events\":%llu,", (unsigned long long)o->events);
	fprintf(f, "\"reads\":{\"offered\":%llu,\"completed\":%llu,\"failed\":%llu,"
	        "\"latency_ms\":{", (unsigned long long)o->reads.offered,
	        (unsigned long long)o->reads.completed, (unsigned long long)o->reads.failed);
	num(f, "mean", o->reads.latency_ms.mean);
	fputc(',', f);
	num(f, "p50", o->reads.latency_ms.p50);
	fputc(',', f);
	num(f, "p99", o->reads.latency_ms.p99);
	fputc(',', f);
	num(f, "max", o->reads.latency_ms.max);
	fputs("},", f);
	num(f, "last_ms", o->reads.last_ms);
	fprintf(f, ",\"versions\":%lld,\"versions_max\":%lld,\"buffers\":%lld,"
	        "\"buffers_max\":%lld,\"heap_pages\":%lld,\"snapshot_open\":%s}",
	        (long long)o->reads.versions, (long long)o->reads.versions_max,
	        (long long)o->reads.buffers, (long long)o->reads.buffers_max,
	        (long long)o->reads.heap_pages, o->reads.snapshot_open ? "true" : "false");
	fprintf(f, ",\"statement_timeouts\":%llu,\"wakes\":%llu,\"contended\":%llu,"
	        "\"wal\":{\"flushes\":%llu,"
	        "\"commits\":%llu,\"wakes\":%llu,", (unsigned long long)o->statement_timeouts,
	        (unsigned long long)o->wakes, (unsigned long long)o->contended,
	        (unsigned long long)o->wal.flushes,
	        (unsigned long long)o->wal.commits, (unsigned long long)o->wal.wakes);
	num_or_null(f, "flushes_per_commit", o->wal.flushes_per_commit);
	fputs("}}", f);
}

void sim_json(FILE *f, const struct sim *s)
{
	struct sim_summary o;
	struct sim_config given = s->c;

	/* A schedule's steps move c.rps as they come: print the rate set. */
	given.rps = s->set_rps;
	sim_summary(s, &o);
	fputs("{\"config\":", f);
	config_json(f, &given);
	fputs(",\"summary\":", f);
	summary_json(f, &o);
	if (s->follow.t.state != SIM_TRACE_NONE) {
		struct sim_trace t;
		sim_trace_get(s, &t);
		fputs(",\"trace\":", f);
		sim_trace_json(f, &t);
	}
	fputc('}', f);
}

/* ---- CSV ---- */

void sim_csv(FILE *f, const struct sim *s)
{
	fputs("t_s,offered_per_s,completed_per_s,failed_per_s,p50_ms,p99_ms,"
	      "queue_len,pool_in_use,pool_waiters,unrelated_failed_per_s,true_count,visible\n", f);
	for (size_t i = 0; i < sim_series_len(&s->series); i++) {
		struct sim_tick tk, *t = &tk;
		sim_series_at(&s->series, i, t);
		fprintf(f, "%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%d,%d,%d,%.10g,%lld,%lld\n",
		        t->t_s, t->offered_per_s, t->completed_per_s, t->failed_per_s,
		        t->p50_ms, t->p99_ms, t->queue_len, t->pool_in_use, t->pool_waiters,
		        t->unrelated_failed_per_s, (long long)t->true_count, (long long)t->visible);
	}
}
