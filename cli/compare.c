/*
 * compare.c: two setups side by side (see compare.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/compare.h"
#include "cli/figure.h"
#include "cli/simconf.h"
#include "engine/sim.h"

/* What a side is, in one line: "sharded x16, 2000/s Poisson for 10 s,
 * 2 ms holds, pool 20". */
static void words(const struct sim_config *c, char *buf, size_t len)
{
	const struct sim_strategy_info *in = sim_strategy_info(c->strategy);
	int n;

	if (in->spread)
		n = snprintf(buf, len, "%s x%d", in->name, c->rows);
	else if (in->uses_rows)
		n = snprintf(buf, len, "%s, fee x%d, batch %d", in->name, c->rows,
		             sim_config_batch(c));
	else if (in->flushes)
		n = snprintf(buf, len, "%s, flush %g ms", in->name, c->flush_ms);
	else
		n = snprintf(buf, len, "%s, one row", in->name);
	if (n < 0 || (size_t)n >= len)
		return;
	if (c->clients > 0)
		n += snprintf(buf + n, len - (size_t)n, ", %d callers", c->clients);
	else
		n += snprintf(buf + n, len - (size_t)n, ", %g/s %s", c->rps,
		              c->arrivals == SIM_ARRIVE_POISSON ? "Poisson"
		              : c->arrivals == SIM_ARRIVE_BURSTY ? "bursty" : "constant");
	if ((size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " for %g s, %g ms holds", c->seconds,
		              sim_lock_ms(c));
	if ((size_t)n >= len)
		return;
	if (c->pool)
		snprintf(buf + n, len - (size_t)n, ", pool %d", c->pool);
	else
		snprintf(buf + n, len - (size_t)n, ", unbounded pool");
}

/* B / A, or "-" when A is 0 (or a figure is missing). */
static void ratio(char *buf, size_t len, double a, double b)
{
	double r = b / a;

	if (!(a > 0 && b >= 0 && isfinite(a) && isfinite(b)))
		snprintf(buf, len, "-");
	else if (r > 0 && r < 0.1)       /* 0.00067, not 0.00 */
		snprintf(buf, len, "%.2g", r);
	else if (r >= 1000)
		snprintf(buf, len, "%.0f", r);
	else
		snprintf(buf, len, "%.2f", r);
}

static void row(const char *what, double a, double b, int prec)
{
	char r[32];
	ratio(r, sizeof r, a, b);
	printf("  %-30s %14.*f %14.*f %8s\n", what, prec, a, prec, b, r);
}

/* A time that may never have come (< 0): "never", and no ratio. */
static void row_when(const char *what, double a, double b)
{
	char sa[32], sb[32], r[32];
	snprintf(sa, sizeof sa, a < 0 ? "never" : "%.4f", a);
	snprintf(sb, sizeof sb, b < 0 ? "never" : "%.4f", b);
	ratio(r, sizeof r, a < 0 ? -1 : a, b);
	printf("  %-30s %14s %14s %8s\n", what, sa, sb, r);
}

static void table(const struct compare_opts *o, const struct sim_config *ca,
                  const struct sim_config *cb, const struct sim_summary *a,
                  const struct sim_summary *b)
{
	char wa[200], wb[200];
	/* a request of a batching path (ledger) is a transaction of transfers */
	bool batches = sim_strategy_info(ca->strategy)->batches ||
	               sim_strategy_info(cb->strategy)->batches;

	words(ca, wa, sizeof wa);
	words(cb, wb, sizeof wb);
	printf("hotrow sim --compare: two setups, the same seed (%llu), so the same arrivals\n"
	       "  A  %s: %s\n  B  %s: %s\n\n", (unsigned long long)ca->seed, o->a, wa, o->b, wb);
	printf("  %-30s %14s %14s %8s\n", "", "A", "B", "B/A");
	row("likes offered", (double)a->offered, (double)b->offered, 0);
	row("completed", (double)a->completed, (double)b->completed, 0);
	row("failed (errors)", (double)a->failed, (double)b->failed, 0);
	row("abandoned (client gave up)", (double)a->abandoned, (double)b->abandoned, 0);
	row("throughput, per s", a->throughput_per_s, b->throughput_per_s, 1);
	if (batches)
		row("transfers answered, per s", a->ledger.transfers_per_s,
		    b->ledger.transfers_per_s, 1);
	row("mean latency, ms", a->latency_ms.mean, b->latency_ms.mean, 3);
	row("p50 latency, ms", a->latency_ms.p50, b->latency_ms.p50, 3);
	row("p99 latency, ms", a->latency_ms.p99, b->latency_ms.p99, 3);
	row("max latency, ms", a->latency_ms.max, b->latency_ms.max, 3);
	row("worst lock wait, ms", a->worst_wait_ms, b->worst_wait_ms, 1);
	row("row ceiling, per s", a->theory.ceiling_per_s, b->theory.ceiling_per_s, 1);
	row("pool: most in use", a->pool.max_in_use, b->pool.max_in_use, 0);
	row("pool: most waiting", a->pool.max_waiters, b->pool.max_waiters, 0);
	row_when("pool exhausted at, s", a->pool.exhausted_at_s, b->pool.exhausted_at_s);
	row("other endpoints failed", (double)a->unrelated.failed, (double)b->unrelated.failed, 0);
	row("count: true (acknowledged)", (double)a->count.true_count,
	    (double)b->count.true_count, 0);
	row("count: visible in the row", (double)a->count.visible, (double)b->count.visible, 0);
	row("count: lost", (double)a->count.lost, (double)b->count.lost, 0);
	row("count: counted twice", (double)a->count.doubled, (double)b->count.doubled, 0);
	row("visible lags true by, s", a->count.max_lag_s, b->count.max_lag_s, 3);
	row("events simulated", (double)a->events, (double)b->events, 0);
	printf("\n  B/A is B's figure over A's (- where A's is 0). Both ran on one seed, and\n"
	       "  arrivals draw from a stream of their own: at one rate they come at the\n"
	       "  same instants on both sides, so what differs is what the setups differ in.\n");
}

/* A side from its file, with the command line's --seed and --seconds. */
static int side(const char *path, const struct compare_opts *o, struct sim_config *c)
{
	char err[SIMCONF_ERR];

	if (simconf_load(path, c, err, sizeof err) < 0) {
		fprintf(stderr, "hotrow sim: --compare %s\n", err);
		return -1;
	}
	if (o->seed_given)
		c->seed = o->seed;
	if (o->seconds_given)
		c->seconds = o->seconds;
	return 0;
}

int compare_main(const struct compare_opts *o)
{
	struct sim_config ca, cb;
	struct sim_summary sa, sb;
	struct sim *a, *b;
	int rc = 0;

	if (side(o->a, o, &ca) < 0 || side(o->b, o, &cb) < 0)
		return 2;
	if (cb.seed != ca.seed)      /* the same arrivals need the same draws */
		fprintf(stderr, "hotrow sim: --compare: %s names seed %llu; both sides run on "
		        "%llu, A's, so that they see the same arrivals\n", o->b,
		        (unsigned long long)cb.seed, (unsigned long long)ca.seed);
	cb.seed = ca.seed;
	a = sim_new(&ca);
	b = sim_new(&cb);
	if (!a || !b) {              /* simconf checked both: not reached */
		sim_free(a), sim_free(b);
		fprintf(stderr, "hotrow sim: --compare: the engine refused a setup\n");
		return 2;
	}
	sim_run(a);
	sim_run(b);
	sim_summary(a, &sa);
	sim_summary(b, &sb);
	if (o->json) {
		fputs("{\"a\":", stdout);
		sim_json(stdout, a);
		fputs(",\"b\":", stdout);
		sim_json(stdout, b);
		fputs("}\n", stdout);
	} else {
		table(o, &ca, &cb, &sa, &sb);
	}
	if (o->svg)
		rc = figure_compare(o->svg, a, b, o->a, o->b);
	sim_free(a);
	sim_free(b);
	return rc;
}
