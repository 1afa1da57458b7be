/*
 * explain.c: plain-words paragraphs from a snapshot.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tui/explain.h"
#include "tui/fmt.h"
#include "tui/pool.h"

#define B 32   /* room for one formatted number */

static void add(struct tui_para *p, int *n, int max, enum tui_style st,
                int rank, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void add(struct tui_para *p, int *n, int max, enum tui_style st,
                int rank, const char *fmt, ...)
{
	va_list ap;

	if (*n >= max)
		return;
	va_start(ap, fmt);
	vsnprintf(p[*n].text, sizeof p[*n].text, fmt, ap);
	va_end(ap);
	p[*n].style = st;
	p[*n].rank = rank;
	(*n)++;
}

/* What the write path does, one sentence per strategy. */
static void intro(const struct sim_config *c, struct tui_para *p, int *n, int max)
{
	char f[B];
	tui_fmt_ms(f, sizeof f, c->flush_ms);

	switch (c->strategy) {
	case SIM_NAIVE:
		add(p, n, max, TUI_NORMAL, 5, "Naive: every like runs UPDATE ... "
		    "SET likes = likes + 1 on the same row and keeps its lock until commit.");
		break;
	case SIM_SHARDED:
		add(p, n, max, TUI_NORMAL, 5, "Sharded: %d slot rows per post; each like "
		    "adds 1 to one slot (%s), a read sums the slots.", c->rows,
		    c->slot == SIM_SLOT_RANDOM ? "picked at random" : "in turn");
		break;
	case SIM_COALESCE:
		add(p, n, max, TUI_NORMAL, 5, "Coalescing: the app adds likes up in "
		    "memory and writes one UPDATE +k every %s; a crash loses what was "
		    "not flushed.", f);
		break;
	case SIM_QUEUE:
		if (c->bug_no_fence)
			add(p, n, max, TUI_BAD, 5, "Queue: likes are appended to a log; a "
			    "consumer applies one batch every %s. BUG ON: no offset fence, "
			    "so a redelivered batch counts twice.", f);
		else
			add(p, n, max, TUI_NORMAL, 5, "Queue: likes are appended to a log; a "
			    "consumer applies one batch every %s and stores its offset in "
			    "the same transaction, so a redelivered batch is skipped.", f);
		break;
	case SIM_REDIS:
		add(p, n, max, TUI_NORMAL, 5, "In-memory counter: INCR in Redis, "
		    "drained every %s with one atomic GETDEL and added to the row%s.", f,
		    c->bug_get_then_del ? " (BUG ON: GET then DEL, increments in "
		    "between are lost)" : "");
		break;
	case SIM_APPEND:
		add(p, n, max, TUI_NORMAL, 5, "Append: each like inserts its own row, "
		    "so no two likes share a lock; a rollup adds them to the counter "
		    "every %s.", f);
		break;
	case SIM_LEDGER:
		add(p, n, max, TUI_NORMAL, 5, "Ledger: each request is one transaction of "
		    "%d transfer%s crediting the fee account (%d sub-account%s), one lock "
		    "hold each; %.0f%% are refused at the buyer's balance and never reach "
		    "the fee row.", sim_config_batch(c), sim_config_batch(c) == 1 ? "" : "s",
		    c->rows, c->rows == 1 ? "" : "s", c->refuse_frac * 100);
		break;
	default:
		break;
	}
}

static bool batched(enum sim_strategy st)
{
	return !sim_strategy_direct(st);
}

/* Spell the Greek and the times sign out for --ascii terminals. */
static void ascii_fold(char *t, size_t len)
{
	static const char *const from[] = {"ρ", "λ", "×"};
	static const char *const to[] = {"rho", "lambda", "x"};
	char out[sizeof ((struct tui_para *)0)->text];
	size_t k = 0;

	for (const char *q = t; *q && k + 8 < sizeof out;) {
		size_t i;
		for (i = 0; i < 3; i++)
			if (!strncmp(q, from[i], strlen(from[i])))
				break;
		if (i < 3) {
			k += (size_t)snprintf(out + k, sizeof out - k, "%s", to[i]);
			q += strlen(from[i]);
		} else {
			out[k++] = *q++;
		}
	}
	out[k] = '\0';
	snprintf(t, len, "%s", out);
}

int tui_explain(const struct sim_snapshot *snap, bool ascii,
                struct tui_para *p, int max)
{
	const struct sim_config *c = &snap->config;
	const struct sim_summary *sum = &snap->summary;
	char a[B], b[B], d[B], e[B], f[B], g[B];
	int n = 0;
	int rows = snap->nrows > 0 ? snap->nrows : 1;
	double hold = sim_lock_ms(c);
	double rps = c->rps;
	double rho = sum->theory.rho;

	intro(c, p, &n, max);
	if (snap->change[0])      /* a fix applied while it ran: what, and when */
		add(p, &n, max, TUI_BOLD, 0, "Changed %s.", snap->change);

	/* The ceiling against the arrivals. */
	if (batched(c->strategy)) {
		add(p, &n, max, TUI_NORMAL, 0, "Arrivals %s, but the row sees one "
		    "write every %s (%s), far under its ceiling of %s: ρ = %s.",
		    tui_fmt_rate(a, sizeof a, rps), tui_fmt_ms(b, sizeof b, c->flush_ms),
		    tui_fmt_rate(d, sizeof d, c->flush_ms > 0 ? 1000 / c->flush_ms : 0),
		    tui_fmt_rate(e, sizeof e, sum->theory.ceiling_per_s),
		    tui_fmt_ratio(f, sizeof f, rho));
	} else {
		/* rho above 1 is not a utilisation (no row is busier than
		 * always): it is the load offered, as a multiple of the ceiling. */
		if (c->clients > 0)
			add(p, &n, max, TUI_NORMAL, 0,
			    "Ceiling %s (%d %s%s / %s hold); %d callers in a closed loop: "
			    "MVA predicts %s at ρ = %s.",
			    tui_fmt_rate(a, sizeof a, sum->theory.ceiling_per_s), rows,
			    sim_strategy_info(c->strategy)->row_noun,
			    rows == 1 ? "" : "s", tui_fmt_ms(b, sizeof b, hold), c->clients,
			    tui_fmt_rate(d, sizeof d, sum->theory.closed_throughput_per_s),
			    tui_fmt_ratio(e, sizeof e, rho));
		else
			add(p, &n, max, rho >= 1 ? TUI_BAD : TUI_GOOD, 0,
			    "Ceiling %s (%d %s%s / %s hold), arrivals %s: %s = %s%s.",
			    tui_fmt_rate(a, sizeof a, sum->theory.ceiling_per_s), rows,
			    sim_strategy_info(c->strategy)->row_noun,
			    rows == 1 ? "" : "s", tui_fmt_ms(b, sizeof b, hold),
			    tui_fmt_rate(d, sizeof d, rps),
			    rho > 1 ? "offered load ρ" : "ρ", tui_fmt_ratio(e, sizeof e, rho),
			    rho == 1 ? ", at the ceiling" : "");
		/* The ledger counts in sales: B to a transaction, and the
		 * transactions wholly refused never reach the fee row. */
		if (sim_strategy_info(c->strategy)->batches)
			add(p, &n, max, TUI_NORMAL, 0, "In sales: the fee row%s appl%s at most "
			    "%s (%d × %d / %s); %s%% of the transactions reach %s, so %s "
			    "sales can be answered. So far %s applied, %s refused.",
			    rows == 1 ? "" : "s", rows == 1 ? "ies" : "y",
			    tui_fmt_rate(a, sizeof a, rows * sim_config_batch(c) * 1000.0 / hold),
			    rows, sim_config_batch(c), tui_fmt_ms(b, sizeof b, hold),
			    tui_fmt_int(d, sizeof d, (int64_t)(sim_lock_visits(c) * 100 + 0.5)),
			    rows == 1 ? "it" : "them",
			    tui_fmt_rate(e, sizeof e, sum->ledger.ceiling_transfers_per_s),
			    tui_fmt_int(f, sizeof f, sum->count.visible),
			    tui_fmt_int(g, sizeof g, (int64_t)sum->ledger.refused));
		/* A lower ceiling than the rows' binds first: name it. */
		if (sum->theory.binding != SIM_CEIL_ROWS &&
		    sum->theory.binding_per_s < sum->theory.ceiling_per_s) {
			char why[200];
			sim_binding_text(c, sum, why, sizeof why);
			add(p, &n, max, c->clients == 0 && rps > sum->theory.binding_per_s
			    ? TUI_BAD : TUI_WARN, 0, "The binding ceiling is %s.", why);
		}
	}

	/* The round trips inside the lock, and what one statement would do. */
	if (!batched(c->strategy) && c->trips_in_lock > 0 && c->rtt_ms > 0) {
		double trips = c->trips_in_lock * c->rtt_ms;
		add(p, &n, max, TUI_WARN, 2, "Of each %s hold, %s %s %d round trip%s "
		    "made while the lock is held; as one statement the ceiling "
		    "would be %s.", tui_fmt_ms(a, sizeof a, hold),
		    tui_fmt_ms(b, sizeof b, trips), c->trips_in_lock == 1 ? "is" : "are",
		    c->trips_in_lock, c->trips_in_lock == 1 ? "" : "s",
		    tui_fmt_rate(d, sizeof d, rows * 1000.0 / (hold - trips)));
	}

	/* The chain an old snapshot keeps, and what it does to reads. */
	if (sum->reads.versions_max > 1)
		add(p, &n, max, sum->reads.snapshot_open ? TUI_BAD : TUI_NORMAL, 2,
		    sum->reads.snapshot_open
		    ? "An old snapshot is open: the row keeps %s versions and a read "
		      "of the count touches %s buffers, not 2 (the last took %s)."
		    : "The old snapshot kept up to %s versions (a read touched up to "
		      "%s buffers); it has ended and the chain is pruned (the last "
		      "read took %s).",
		    tui_fmt_int(a, sizeof a, sum->reads.snapshot_open ? sum->reads.versions
		                                                       : sum->reads.versions_max),
		    tui_fmt_int(b, sizeof b, sum->reads.snapshot_open ? sum->reads.buffers
		                                                       : sum->reads.buffers_max),
		    tui_fmt_ms(d, sizeof d, sum->reads.last_ms));

	/* Work the server did for clients that had already left. */
	if (sum->orphans_run > 0 && !batched(c->strategy))
		add(p, &n, max, TUI_BAD, 0, "Retry storm: %s statements ran after their "
		    "clients gave up, and %s retries came back for more; the load on "
		    "the row is more than the likes arriving.%s",
		    tui_fmt_int(a, sizeof a, (int64_t)sum->orphans_run),
		    tui_fmt_int(b, sizeof b, (int64_t)sum->retried),
		    c->lock_timeout_ms > 0 ? "" : " lock_timeout would let the server give up too.");

	/* What follows from rho. */
	if (rho >= 1 && sum->theory.growth_per_s > 0) {
		if (c->pool > 0 && sum->theory.pool_full_s >= 0)
			add(p, &n, max, TUI_BAD, 1, "The lock queue grows by %s requests "
			    "each second; the pool of %d is full in %s.",
			    tui_fmt_int(a, sizeof a, (int64_t)(sum->theory.growth_per_s + 0.5)),
			    c->pool, tui_fmt_s(b, sizeof b, sum->theory.pool_full_s));
		else
			add(p, &n, max, TUI_BAD, 1, "The lock queue grows by %s requests "
			    "each second, and every waiter holds a connection.",
			    tui_fmt_int(a, sizeof a, (int64_t)(sum->theory.growth_per_s + 0.5)));
	} else if (!batched(c->strategy) && c->clients == 0 && sum->orphans_run == 0) {
		/* The model that matches what is simulated, by name. */
		double th = sum->theory.model_mean_ms;
		if (th >= 0 && rps <= sum->theory.binding_per_s)
			add(p, &n, max, TUI_GOOD, 1, "Under the ceiling: each row is busy "
			    "%.0f%% of the time; %s predicts %s in the system per update%s.",
			    rho * 100, sim_model_name(sum->theory.model),
			    tui_fmt_ms(a, sizeof a, th),
			    sum->theory.model == SIM_MODEL_DD1 ? " (evenly spaced: no queue)" : "");
	}

	/* Little's law with what was measured, once there is a steady state
	 * to describe; L keeps its decimals when it is small. */
	if (sum->theory.little_lambda > 0 && sum->theory.little_W_ms >= 0.01) {
		if (sum->theory.little_L < 10)
			snprintf(a, sizeof a, "%.2f", sum->theory.little_L);
		else
			tui_fmt_int(a, sizeof a, (int64_t)(sum->theory.little_L + 0.5));
		if (sum->theory.steady)
			add(p, &n, max, TUI_NORMAL, 3, "Little's law, measured: L = λ × W: "
			    "%s in the system = %s × %s.", a,
			    tui_fmt_rate(b, sizeof b, sum->theory.little_lambda),
			    tui_fmt_ms(d, sizeof d, sum->theory.little_W_ms));
		else
			add(p, &n, max, TUI_NORMAL, 3, "Little's law (L = λ × W) describes a "
			    "steady state; %s: %s in the system so far.",
			    sum->theory.growth_per_s > 0 || rps > sum->theory.binding_per_s
			    ? "this queue is still growing"
			    : sum->orphans_run > 0 ? "abandoned statements and retries leave none here"
			    : "still filling", a);
	}

	/* The collateral damage. */
	double failing = tui_pool_unrelated_failing(snap);
	if (failing > 0)
		add(p, &n, max, TUI_BAD, 2, "Collateral damage: the login page fails "
		    "%s (%s so far) because every connection is parked behind the "
		    "row lock.", tui_fmt_rate(a, sizeof a, failing),
		    tui_fmt_int(b, sizeof b, (int64_t)sum->unrelated.failed));
	else if (snap->pool_waiters > 0 && c->unrelated_rps > 0)
		add(p, &n, max, TUI_WARN, 2, "Collateral damage: the login page queues "
		    "behind %s requests for a connection%s%s.",
		    tui_fmt_int(a, sizeof a, snap->pool_waiters),
		    c->pool_timeout_ms > 0 ? "; it fails once a wait passes the acquire "
		    "timeout of " : "", c->pool_timeout_ms > 0
		    ? tui_fmt_ms(b, sizeof b, c->pool_timeout_ms) : "");
	else if (sum->completed > 0)
		add(p, &n, max, TUI_NORMAL, 4, "Latency p50 %s, p99 %s; %s done, "
		    "%s failed.", tui_fmt_ms(a, sizeof a, sum->latency_ms.p50),
		    tui_fmt_ms(b, sizeof b, sum->latency_ms.p99),
		    tui_fmt_int(d, sizeof d, (int64_t)sum->completed),
		    tui_fmt_int(e, sizeof e, (int64_t)(sum->failed + sum->abandoned)));

	/* The count, for the fixes that defer it, and wherever retries that
	 * could not know whether the first try landed counted a like twice. */
	if (!batched(c->strategy) && (sum->count.doubled > 0 || sum->count.unacked > 0))
		add(p, &n, max, TUI_BAD, 1, "Count: visible %s, acknowledged %s: %s likes "
		    "counted twice by blind retries%s, %s applied though the client saw "
		    "a timeout.", tui_fmt_int(a, sizeof a, sum->count.visible),
		    tui_fmt_int(b, sizeof b, sum->count.true_count),
		    tui_fmt_int(d, sizeof d, sum->count.doubled),
		    c->idempotent ? "" : " (an idempotent write would count them once)",
		    tui_fmt_int(e, sizeof e, sum->count.unacked));
	if (batched(c->strategy)) {
		bool wrong = sum->count.lost > 0 || sum->count.doubled > 0;
		add(p, &n, max, wrong ? TUI_BAD : TUI_NORMAL, wrong ? 1 : 2,
		    "Count: true %s, visible %s (lag up to %s); lost %s, double %s.",
		    tui_fmt_int(a, sizeof a, sum->count.true_count),
		    tui_fmt_int(b, sizeof b, sum->count.visible),
		    tui_fmt_s(d, sizeof d, sum->count.max_lag_s),
		    tui_fmt_int(e, sizeof e, sum->count.lost),
		    tui_fmt_int(f, sizeof f, sum->count.doubled));
	}
	for (int i = 0; ascii && i < n; i++)
		ascii_fold(p[i].text, sizeof p[i].text);
	return n;
}

int tui_wrap(struct tui_screen *s, int x, int y, int w, int maxl,
             enum tui_style st, const char *utf8)
{
	int line = 0;
	const char *p = utf8;

	while (*p && line < maxl && w > 0) {
		/* Take as many whole words as fit in w columns. */
		const char *q = p, *cut = NULL;
		int cols = 0;
		while (*q && cols < w) {
			if (*q == ' ')
				cut = q;
			tui_utf8_next(&q);
			cols++;
		}
		if (!*q || *q == ' ')
			cut = q;
		else if (!cut)
			cut = q;     /* one word longer than the line: break it */
		char buf[512];
		size_t len = (size_t)(cut - p) < sizeof buf - 1 ? (size_t)(cut - p) : sizeof buf - 1;
		memcpy(buf, p, len);
		buf[len] = '\0';
		if (s)
			tui_screen_text(s, x, y + line, w, st, buf);
		line++;
		p = cut;
		while (*p == ' ')
			p++;
	}
	return line;
}

int tui_wrap_lines(int w, const char *utf8)
{
	return tui_wrap(NULL, 0, 0, w, 1 << 20, TUI_NORMAL, utf8);
}

int tui_explain_draw(struct tui_screen *s, struct tui_rect r,
                     const struct sim_snapshot *snap, bool ascii)
{
	struct tui_para p[TUI_EXPLAIN_MAX];
	bool keep[TUI_EXPLAIN_MAX];
	int n = tui_explain(snap, ascii, p, TUI_EXPLAIN_MAX);
	int room = r.h - 1, need = 0;

	if (r.h < 1)
		return 0;
	tui_screen_text(s, r.x, r.y, r.w, TUI_HEAD, "WHAT IS HAPPENING");
	for (int i = 0; i < n; i++) {
		keep[i] = true;
		need += tui_wrap_lines(r.w, p[i].text);
	}
	/* Drop the least important paragraphs until the rest fit. */
	for (int rank = 5; rank > 0 && need > room; rank--)
		for (int i = n - 1; i >= 0 && need > room; i--)
			if (keep[i] && p[i].rank == rank) {
				keep[i] = false;
				need -= tui_wrap_lines(r.w, p[i].text);
			}
	int y = r.y + 1;
	for (int i = 0; i < n && y < r.y + r.h; i++)
		if (keep[i])
			y += tui_wrap(s, r.x, y, r.w, r.y + r.h - y, p[i].style, p[i].text);
	return y - r.y;
}
