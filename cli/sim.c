/*
 * sim.c: `hotrow sim`, the engine run headless.
 *
 * One run prints measured figures beside what theory predicts, then the
 * same in sentences an instructor can read out; --sweep NAME=v1,v2,...
 * runs once per value and prints one table line each; --json prints one
 * object (an array for --sweep); --csv FILE writes the time series.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/compare.h"
#include "cli/simconf.h"
#include "cli/simopt.h"
#include "cli/figure.h"
#include "engine/sim.h"
#include "engine/xmalloc.h"
#include "util/file.h"

#define MAX_SWEEP 64
#define SWEEP_BUF 1024

static const char help_header[] =
	"\n"
	"Run the hot-row simulator without a screen: arrivals queue for a\n"
	"pooled connection and a row lock; the fixes change the write path.\n"
	"Prints measured figures beside the theory, in plain words.\n"
	"Defaults are in parentheses.\n"
	"\n";

static const char help_footer[] =
	"\n"
	"One row against 4 and 16 slots at 2,000 likes/s (worst waits 2998.5, 0, 0 ms):\n"
	"  hotrow sim --sweep rows=1,4,16 --rps 2000 --seconds 1 --hold-ms 2 \\\n"
	"             --arrivals constant --slot round-robin --pool 0\n"
	"Three round trips inside the lock against one statement (ceilings 500/s, 2,000/s):\n"
	"  hotrow sim --sweep trips-in-lock=3,0 --rps 800 --hold-ms 0.5 --rtt-ms 0.5\n"
	"An old snapshot open for 5 s under 2,000 updates/s (Lab 08: 56 buffers a read):\n"
	"  hotrow sim --rps 2000 --hold-ms 0.4 --seconds 8 --read-rps 10 \\\n"
	"             --snapshot-at 0 --snapshot-for 5\n"
	"Two setups on the same seed, side by side with B/A (and both on one --svg):\n"
	"  hotrow sim --compare naive.conf sharded.conf --svg both.svg\n"
	"\n"
	"A setup file (.conf) holds one engine option a line, NAME = VALUE, the\n"
	"names above without their dashes; # starts a comment; a flag takes on or\n"
	"off; scenario = NAME is applied first, wherever it stands; what the file\n"
	"leaves out keeps the default in parentheses. For example:\n"
	"  # the viral post on 16 slots\n"
	"  scenario = viral-post\n"
	"  strategy = sharded\n"
	"  rows     = 16\n"
	"A bad line is refused with the file and the line: \"b.conf:3: rows accepts a\n"
	"whole number from 1 to 65536, not 'x'\". With --compare only --seed and\n"
	"--seconds may be given beside the files: they apply to both sides.\n"
	"Exit status: 0 done, 1 a file could not be written, 2 bad usage.\n";

/* --sweep NAME=V1,V2,...: one sweep a run, kept in the buffer ctx. */
static int sweep_opt(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	char *buf = ctx, **name = dest;
	if (*name) {
		snprintf(why, len, "one sweep a run (give the values as NAME=V1,V2,...)");
		return -1;
	}
	if (strlen(v) >= SWEEP_BUF || !strchr(v, '=') || v[0] == '=')
		return -1;
	strcpy(buf, v);
	*name = buf;
	return 0;
}

/* --trace N or --trace slowest: *dest is N, or TRACE_SLOWEST. */
#define TRACE_SLOWEST UINT64_MAX

static int trace_opt(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	uint64_t *n = dest;
	char *end;
	unsigned long long x;

	(void)ctx;
	(void)why;
	(void)len;
	if (!strcmp(v, "slowest")) {
		*n = TRACE_SLOWEST;
		return 0;
	}
	if (v[0] < '0' || v[0] > '9')
		return -1;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (*end || errno || x == 0 || x >= TRACE_SLOWEST)
		return -1;
	*n = x;
	return 0;
}

static int usage_error(const char *msg)
{
	fprintf(stderr, "hotrow sim: %s\n", msg);
	return 2;
}

static void list_scenarios(void)
{
	for (const char *const *n = sim_scenario_names(); *n; n++)
		printf("%-22s %s\n", *n, sim_scenario_blurb(*n));
}

/* ---- the readable report ---- */

static void describe(const struct sim_config *c)
{
	printf("hotrow sim: %s", sim_strategy_name(c->strategy));
	if (c->scenario[0])
		printf(" (scenario %s)", c->scenario);
	if (sim_strategy_info(c->strategy)->spread)
		printf(", %d rows (%s slot)", c->rows,
		       c->slot == SIM_SLOT_RANDOM ? "random" : "round-robin");
	if (sim_strategy_info(c->strategy)->batches)
		printf(", the fee account as %d sub-account%s, %d transfer%s a transaction, "
		       "%g refused", c->rows, c->rows == 1 ? "" : "s", sim_config_batch(c),
		       sim_config_batch(c) == 1 ? "" : "s", c->refuse_frac);
	if (c->clients > 0) {
		printf(", %d callers in a closed loop", c->clients);
		if (c->think_ms > 0)
			printf(" thinking %g ms (%s)", c->think_ms,
			       c->think_dist == SIM_DIST_EXP ? "exponential" : "constant");
		printf(" for %g s", c->seconds);
	} else {
		printf(", %g likes/s", c->rps);
		for (int i = 0; i < c->nphases; i++)
			if (c->phases[i].at_us > 0)
				printf(" then %g/s from %g s", c->phases[i].rps,
				       (double)c->phases[i].at_us / 1e6);
		printf(" %s for %g s", c->arrivals == SIM_ARRIVE_POISSON ? "Poisson" : "constant",
		       c->seconds);
	}
	printf(", %g ms %s holds", c->hold_ms,
	       c->hold_dist == SIM_DIST_EXP ? "exponential" : "constant");
	if (c->work_ms > 0)
		printf(" + %g ms app work", c->work_ms);
	if (c->trips_in_lock > 0 && c->rtt_ms > 0)
		printf(" + %d round trip%s of %g ms in the lock", c->trips_in_lock,
		       c->trips_in_lock == 1 ? "" : "s", c->rtt_ms);
	if (c->read_rps > 0)
		printf(", %g reads/s", c->read_rps);
	if (c->snapshot_for_s > 0)
		printf(", an old snapshot open from %g s for %g s", c->snapshot_at_s,
		       c->snapshot_for_s);
	if (c->outside_ms > 0)
		printf(", %g ms outside the lock", c->outside_ms);
	if (c->cores > 0)
		printf(", %d cores%s (CPU %g ms in the hold, %g ms outside)", c->cores,
		       c->run_queues == SIM_RUNQ_PER_CORE && c->cores > 1 ? " with a run queue each" : "",
		       c->cpu_db_ms, c->cpu_client_ms);
	if (c->handoff == SIM_HANDOFF_HERD && c->wake_lat_us > 0)
		printf(", a commit wakes every waiter (%g us of CPU each, the winner "
		       "reaching a core %g us after its wake)", c->wake_us, c->wake_lat_us);
	else if (c->handoff == SIM_HANDOFF_HERD)
		printf(", a commit wakes every waiter (%g us of CPU each)", c->wake_us);
	if (c->handoff == SIM_HANDOFF_HERD && c->lockmgr_us > 0)
		printf(", its winner waiting %g us for each other one woken", c->lockmgr_us);
	if (c->handoff == SIM_HANDOFF_HERD && c->herd_lanes > 0 && c->cores > 0)
		printf(", its losers %d at a time, the rest asleep on the lock manager's lock",
		       c->herd_lanes);
	if (c->handoff == SIM_HANDOFF_HERD && c->herd_bias > 0)
		printf(", the draw favouring the waiters who queued last (bias %g)", c->herd_bias);
	if (c->contend_us > 0)
		printf(", %g us of CPU for each request that finds its row locked", c->contend_us);
	if (c->wal_flush_ms > 0)
		printf(", one shared log flushing in %g ms after the hold (%g ms of it CPU, %s)",
		       c->wal_flush_ms, c->wal_cpu_ms, sim_wal_order_name(c->wal_order));
	if (c->pool)
		printf(", pool %d", c->pool);
	else
		printf(", unbounded pool");
	if (!sim_strategy_direct(c->strategy))
		printf(", flush every %g ms", c->flush_ms);
	printf(", seed %llu\n\n", (unsigned long long)c->seed);
}

/* " x1.00": measured / predicted, or "" when there is nothing to divide. */
static const char *ratio(char *buf, size_t n, double measured, double predicted)
{
	if (predicted > 0 && measured >= 0)
		snprintf(buf, n, "; measured/predicted %.2f", measured / predicted);
	else
		snprintf(buf, n, "%s", "");
	return buf;
}

static void row_d(const char *what, double measured, const char *predicted)
{
	printf("  %-30s %14.1f   %s\n", what, measured, predicted);
}

/* L with the precision a small number needs: 0.07 is not "0". */
static void print_little(const struct sim_config *c, const struct sim_summary *o)
{
	char p[96];

	if (!o->theory.steady) {
		printf("  %-30s %14.2f   %s\n", "mean likes in the system, L", o->theory.little_L,
		       o->theory.growth_per_s > 0 ||
		       (c->clients == 0 && c->rps > o->theory.binding_per_s)
		       ? "(no steady state: the queue grew; Little's law does not describe it)"
		       : o->orphans_run > 0
		       ? "(no steady state: abandoned statements and retries)"
		       : "(still filling: too early for Little's law)");
		return;
	}
	snprintf(p, sizeof p, "lambda W = %.*f (Little's law)",
	         o->theory.little_L < 10 ? 3 : 1,
	         o->theory.little_lambda * o->theory.little_W_ms / 1000.0);
	printf("  %-30s %14.*f   %s\n", "mean likes in the system, L",
	       o->theory.little_L < 10 ? 3 : 1, o->theory.little_L, p);
}

/* Print text wrapped to 76 columns under a two-space indent. */
static void say(const char *text)
{
	const char *p = text;
	while (*p) {
		size_t n = strlen(p);
		if (n > 74) {
			n = 74;
			while (n > 0 && p[n] != ' ')
				n--;
			if (n == 0)
				n = strcspn(p, " ");
		}
		printf("  %.*s\n", (int)n, p);
		p += n;
		p += strspn(p, " ");
	}
}

/* The fluid view's mean latency against the measured one, and when to
 * read it as rough: a peak near the ceiling with random arrivals or holds
 * (there the random queue, which builds over time, is as long as the
 * line), or timeouts that end waits the fluid line lets go on. */
static void schedule_latency_words(const struct sim_config *c, const struct sim_summary *o,
                                   const struct sim_schedule *v)
{
	const double load = v->step[v->peak].rps / v->mu;
	const double longest_ms = v->line_max / v->mu * 1000;
	double limit = 0;
	char t[600];

	if (v->mean_ms <= 0)
		return;
	if (v->line_max > 0)
		snprintf(t, sizeof t, "Averaged over the likes, each waits for the line ahead of it "
		         "to be served at %.0f a second, then holds the lock for %g ms%s: the fluid "
		         "line predicts %.3f ms a like; the engine measured %.3f ms (%.2f times "
		         "that).", v->mu, sim_lock_ms(c),
		         c->outside_ms > 0 ? " (and spends its time outside it)" : "",
		         v->mean_ms, o->latency_ms.mean, o->latency_ms.mean / v->mean_ms);
	else
		snprintf(t, sizeof t, "With no line, a like waits only in the random queue of its "
		         "step (Kingman's formula; none for evenly spaced likes and constant holds) "
		         "and holds the lock for %g ms: %.3f ms a like predicted, %.3f ms "
		         "measured (%.2f times that).", sim_lock_ms(c), v->mean_ms,
		         o->latency_ms.mean, o->latency_ms.mean / v->mean_ms);
	say(t);
	if (load >= 0.8 && load <= 1.2 && o->theory.ca2 + o->theory.cs2 > 0) {
		snprintf(t, sizeof t, "Note: the peak is %.2f times the ceiling, within 20%% of it. "
		         "There the random queue is as long as the fluid line or longer and takes "
		         "its time to build, which neither the line nor the steady-state formula "
		         "follows: read the mean-latency prediction as rough.", load);
		say(t);
	}
#define TIGHTER(ms) do { if ((ms) > 0 && (limit <= 0 || (ms) < limit)) limit = (ms); } while (0)
	TIGHTER(c->client_timeout_ms);
	TIGHTER(c->lock_timeout_ms);
	if (c->pool > 0 && v->line_max > c->pool)
		TIGHTER(c->pool_timeout_ms);
#undef TIGHTER
	if (limit > 0 && longest_ms > limit) {
		snprintf(t, sizeof t, "Note: the longest wait in the fluid line, about %.0f ms, is "
		         "past a timeout of %g ms: likes there fail or give up instead of waiting, "
		         "which the fluid line leaves out, and only the likes that finished count in "
		         "the measured mean.", longest_ms, limit);
		say(t);
	}
}

/* "In words" for a rate schedule: its steps, the peak against the
 * binding ceiling, and the line the fluid reading (sim_schedule_view)
 * predicts, then what the engine measured. */
static void schedule_words(const struct sim_config *c, const struct sim_summary *o,
                           const struct sim_schedule *v)
{
	double mu = o->theory.binding_per_s;
	const double peak = v->step[v->peak].rps;
	char t[1024], until[64];
	int n = 0;

	if (v->step[0].rps > 0)
		n += snprintf(t + n, sizeof t - n, "Likes arrive at %g a second", v->step[0].rps);
	else
		n += snprintf(t + n, sizeof t - n, "No likes arrive at first");
	for (int i = 1; i < v->nsteps && n < (int)sizeof t; i++) {
		if (v->step[i].rps > 0)
			n += snprintf(t + n, sizeof t - n, ", then %g a second from %g s",
			              v->step[i].rps, v->step[i].from_s);
		else
			n += snprintf(t + n, sizeof t - n, ", then none from %g s", v->step[i].from_s);
	}
	snprintf(t + n, sizeof t - n, ", until %g s.", c->seconds);
	say(t);

	if (v->peak_until_s < c->seconds)
		snprintf(until, sizeof until, "from %g s to %g s", v->step[v->peak].from_s, v->peak_until_s);
	else
		snprintf(until, sizeof until, "from %g s on", v->step[v->peak].from_s);
	if (v->over_from_s < 0) {
		snprintf(t, sizeof t, "The peak, %g a second %s, is %.2f times the binding ceiling "
		         "of %.0f/s: every step stays under it, so no line builds beyond the "
		         "usual queueing. The engine measured %.0f a second and %.3f ms a like.",
		         peak, until, peak / mu, mu, o->throughput_per_s, o->latency_ms.mean);
		say(t);
		schedule_latency_words(c, o, v);
		return;
	}
	n = snprintf(t, sizeof t, "The peak, %g a second %s, is %.2f times the binding ceiling "
	             "of %.0f/s. From %g s the arrivals outrun it and the line grows (by about "
	             "%.0f a second at the peak), to about %.0f requests at %g s",
	             peak, until, peak / mu, mu, v->over_from_s, peak - mu, v->line_max,
	             v->line_max_at_s);
	if (v->drained_at_s >= 0 && v->drained_at_s <= c->seconds)
		snprintf(t + n, sizeof t - n, "; the slower steps after it drain it by about %.1f s.",
		         v->drained_at_s);
	else if (v->drained_at_s >= 0)
		snprintf(t + n, sizeof t - n, ", and it drains only after the arrivals stop at %g s, "
		         "by about %.1f s.", c->seconds, v->drained_at_s);
	else
		snprintf(t + n, sizeof t - n, ".");
	say(t);
	if (c->pool > 0 && v->pool_full_at_s >= 0) {
		char m[48] = "they never were";
		if (o->pool.exhausted_at_s >= 0)
			snprintf(m, sizeof m, "they were gone at %.4f s", o->pool.exhausted_at_s);
		snprintf(t, sizeof t, "Each waiter holds a pooled connection: the %d connections should "
		         "be gone at about %.4f s; here %s.", c->pool, v->pool_full_at_s, m);
		say(t);
	}
	schedule_latency_words(c, o, v);
	snprintf(t, sizeof t, "Measured: %.1f updates a second got through; %llu of %llu likes "
	         "failed or were given up, and the worst wait for the lock was %.1f ms.",
	         o->throughput_per_s, (unsigned long long)(o->failed + o->abandoned),
	         (unsigned long long)o->offered, o->worst_wait_ms);
	say(t);
}

/* Likes that arrived a second while they were arriving, as measured: the
 * mean of the time series' ticks over the schedule's peak step, or over
 * the whole run (not the drain after it) without a schedule. */
static double offered_per_s(const struct sim *s, const struct sim_config *c,
                            const struct sim_summary *o)
{
	struct sim_snapshot *snap = xmalloc(sizeof *snap);
	const struct sim_schedule *sched = &o->schedule;
	double from_s = 0, to_s = c->seconds > 0 ? c->seconds : o->duration_s, sum = 0;
	int n = 0;
	if (sched->nsteps > 0) {
		from_s = sched->step[sched->peak].from_s;
		to_s = sched->peak_until_s;
	}
	sim_snapshot(s, snap);
	for (int i = 0; i < snap->nseries; i++)
		if (snap->series[i].t_s > from_s && snap->series[i].t_s <= to_s + 1e-9) {
			sum += snap->series[i].offered_per_s;
			n++;
		}
	free(snap);
	if (n)
		return sum / n;
	return to_s > from_s ? (double)o->offered / (to_s - from_s) : 0;
}

/* peak_per_s: offered_per_s(), the arrivals measured. */
static void report(const struct sim_config *c, const struct sim_summary *o, double peak_per_s)
{
	bool direct = sim_strategy_direct(c->strategy);
	bool closed = c->clients > 0;
	int n = sim_config_rows(c);
	double s_ms = sim_lock_ms(c);
	double rho = o->theory.rho;
	char p[200], why[200], r[48];
	const struct sim_schedule *sched = &o->schedule;
	bool scheduled = direct && sched->nsteps > 0;     /* theory follows it */

	describe(c);
	sim_binding_text(c, o, why, sizeof why);
	printf("  %-30s %14s   %s\n", "", "measured", "predicted");
	printf("  %-30s %14llu\n", "likes offered", (unsigned long long)o->offered);
	printf("  %-30s %14llu\n", "completed", (unsigned long long)o->completed);
	printf("  %-30s %14llu\n", "failed (errors)", (unsigned long long)o->failed);
	if (o->refused)
		printf("  %-30s %14llu   (%d in the system at once at most)\n",
		       "refused (counted as failed)", (unsigned long long)o->refused, SIM_MAX_INFLIGHT);
	printf("  %-30s %14llu\n", "abandoned (client gave up)", (unsigned long long)o->abandoned);
	if (direct && closed && o->theory.closed_throughput_per_s < 0) {
		snprintf(p, sizeof p, "-  (no MVA: herd wakes, a shared log, chain walks are not "
		         "in it; binding ceiling %.1f)", o->theory.binding_per_s);
		row_d("throughput, per s", o->throughput_per_s, p);
		printf("  %-30s %14.3f\n", "mean latency, ms", o->latency_ms.mean);
	} else if (direct && closed) {
		snprintf(p, sizeof p, "%.1f  (MVA; binding ceiling %.1f%s)",
		         o->theory.closed_throughput_per_s, o->theory.binding_per_s,
		         ratio(r, sizeof r, o->throughput_per_s, o->theory.closed_throughput_per_s));
		row_d("throughput, per s", o->throughput_per_s, p);
		snprintf(p, sizeof p, "%.3f  (MVA, think excluded%s)", o->theory.closed_mean_ms,
		         ratio(r, sizeof r, o->latency_ms.mean, o->theory.closed_mean_ms));
		printf("  %-30s %14.3f   %s\n", "mean latency, ms", o->latency_ms.mean, p);
	} else if (direct && scheduled) {
		double lam = sched->throughput_per_s;
		snprintf(p, sizeof p, "%.1f  (%.0f likes done by %.1f s if none fails%s)", lam,
		         sched->arrivals, sched->end_s, ratio(r, sizeof r, o->throughput_per_s, lam));
		row_d("throughput, per s", o->throughput_per_s, p);
		snprintf(p, sizeof p, "%.3f  (the peak, %g/s)", sched->step[sched->peak].rps /
		         o->theory.binding_per_s, sched->step[sched->peak].rps);
		printf("  %-30s %14.3f   %s\n", "offered load (arrivals/ceiling)",
		       peak_per_s / o->theory.binding_per_s, p);
		if (sched->mean_ms >= 0)
			snprintf(p, sizeof p, "%.3f  (%s%s)", sched->mean_ms,
			         sim_model_name(o->theory.model),
			         ratio(r, sizeof r, o->latency_ms.mean, sched->mean_ms));
		else
			snprintf(p, sizeof p, "(no likes arrive)");
		printf("  %-30s %14.3f   %s\n", "mean latency, ms", o->latency_ms.mean, p);
	} else if (direct) {
		double lam = c->rps < o->theory.binding_per_s ? c->rps : o->theory.binding_per_s;
		snprintf(p, sizeof p, "%.1f  (binding ceiling: %s%s)", lam,
		         sim_ceiling_name(o->theory.binding), ratio(r, sizeof r, o->throughput_per_s, lam));
		row_d("throughput, per s", o->throughput_per_s, p);
		/* Arrivals over the rows' ceiling (rho, which may pass 1), and
		 * the share of the time each row's lock is held (at most 1). */
		double ceiling = o->theory.ceiling_per_s;
		snprintf(p, sizeof p, "%.3f", rho);
		printf("  %-30s %14.3f   %s\n", "offered load (arrivals/ceiling)",
		       ceiling > 0 ? peak_per_s / ceiling : 0, p);
		snprintf(p, sizeof p, "%.3f  (the lock's busy share)", ceiling > 0 ? lam / ceiling : 0);
		printf("  %-30s %14.3f   %s\n", "row utilisation",
		       ceiling > 0 ? o->throughput_per_s / ceiling : 0, p);
		if (o->theory.model_mean_ms >= 0 && c->rps <= o->theory.binding_per_s)
			snprintf(p, sizeof p, "%.3f  (%s%s)", o->theory.model_mean_ms,
			         sim_model_name(o->theory.model),
			         ratio(r, sizeof r, o->latency_ms.mean, o->theory.model_mean_ms));
		else if (o->theory.model_mean_ms >= 0)
			snprintf(p, sizeof p, "grows: arrivals over the %s ceiling",
			         sim_ceiling_name(o->theory.binding));
		else
			snprintf(p, sizeof p, "grows without bound");
		printf("  %-30s %14.3f   %s\n", "mean latency, ms", o->latency_ms.mean, p);
	} else {
		row_d("throughput, per s", o->throughput_per_s, "(no row lock on the request path)");
		printf("  %-30s %14.3f\n", "mean latency, ms", o->latency_ms.mean);
	}
	printf("  %-30s %14.3f\n", "p99 latency, ms", o->latency_ms.p99);
	printf("  %-30s %14.1f\n", "worst lock wait, ms", o->worst_wait_ms);
	printf("  %-30s %14d\n", "pool: most in use", o->pool.max_in_use);
	printf("  %-30s %14d\n", "pool: most waiting", o->pool.max_waiters);
	if (o->pool.exhausted_at_s >= 0 || o->theory.pool_full_s >= 0) {
		char m[32];
		if (o->pool.exhausted_at_s >= 0)
			snprintf(m, sizeof m, "%.4f", o->pool.exhausted_at_s);
		else
			snprintf(m, sizeof m, "never");
		if (!direct)
			snprintf(p, sizeof p, "(no lock queue on the request path)");
		else if (scheduled && sched->pool_full_at_s >= 0)
			snprintf(p, sizeof p, "%.4f  (a line of %d, growing %.0f per s then)",
			         sched->pool_full_at_s, c->pool, sched->pool_growth_per_s);
		else if (scheduled)
			snprintf(p, sizeof p, "never");
		else if (o->theory.pool_full_s >= 0)
			snprintf(p, sizeof p, "%.4f  (%d / %.0f per s)", o->theory.pool_full_s,
			         c->pool, o->theory.growth_per_s);
		else if (closed)
			snprintf(p, sizeof p, "(a closed loop: %d callers)", c->clients);
		else
			snprintf(p, sizeof p, "never");
		printf("  %-30s %14s   %s\n", "pool full after, s", m, p);
	}
	if (o->unrelated.offered)
		printf("  %-30s %14llu   of %llu\n", "other endpoints failed",
		       (unsigned long long)o->unrelated.failed,
		       (unsigned long long)o->unrelated.offered);
	if (sim_strategy_info(c->strategy)->batches) {
		snprintf(p, sizeof p, "%.1f  (ceiling: %d x %d / (%g ms x %.4f))",
		         o->ledger.ceiling_transfers_per_s, n, sim_config_batch(c), s_ms,
		         sim_lock_visits(c));
		row_d("transfers answered, per s", o->ledger.transfers_per_s, p);
		printf("  %-30s %14llu   of %llu\n", "transfers refused",
		       (unsigned long long)o->ledger.refused, (unsigned long long)o->ledger.transfers);
	}
	printf("  %-30s %14lld\n", "count: true (acknowledged)", (long long)o->count.true_count);
	printf("  %-30s %14lld\n", "count: visible in the row", (long long)o->count.visible);
	if (!direct) {
		printf("  %-30s %14lld\n", "count: still buffered", (long long)o->count.buffered);
		printf("  %-30s %14lld\n", "count: lost", (long long)o->count.lost);
	}
	if (!direct || o->count.doubled)
		printf("  %-30s %14lld\n", "count: counted twice", (long long)o->count.doubled);
	if (o->orphaned) {
		printf("  %-30s %14lld\n", "count: applied, client gave up", (long long)o->count.unacked);
		printf("  %-30s %14llu\n", "statements left by clients", (unsigned long long)o->orphaned);
		printf("  %-30s %14llu\n", "  of which the server ran", (unsigned long long)o->orphans_run);
	}
	if (o->retried)
		printf("  %-30s %14llu\n", "retries", (unsigned long long)o->retried);
	if (o->retries_denied)
		printf("  %-30s %14llu\n", "retries the budget refused", (unsigned long long)o->retries_denied);
	if (o->lock_timeouts)
		printf("  %-30s %14llu\n", "cancelled by lock_timeout", (unsigned long long)o->lock_timeouts);
	if (o->statement_timeouts)
		printf("  %-30s %14llu\n", "cancelled by statement_timeout",
		       (unsigned long long)o->statement_timeouts);
	if (c->handoff == SIM_HANDOFF_HERD)
		printf("  %-30s %14.2f   (the waiters each commit wakes)\n", "wakes per update",
		       (double)o->wakes / (double)(o->completed ? o->completed : 1));
	if (o->wal.flushes_per_commit >= 0)
		printf("  %-30s %14.2f   (%llu flushes for %llu commits; 1.00: none shared)\n",
		       "WAL flushes per commit", o->wal.flushes_per_commit,
		       (unsigned long long)o->wal.flushes, (unsigned long long)o->wal.commits);
	if (c->counter_pool > 0)
		printf("  %-30s %14d   of %d\n", "counter pool: most in use", o->counter_pool.max_in_use,
		       c->counter_pool);
	if (!direct) {
		snprintf(p, sizeof p, "%.3f (one flush + hold; more if it waits)",
		         (c->flush_ms + c->hold_ms) / 1000.0);
		printf("  %-30s %14.3f   %s\n", "visible lags true by, s", o->count.max_lag_s, p);
	}
	if (o->reads.offered) {
		printf("  %-30s %14llu   of %llu (%llu failed)\n", "reads of the count",
		       (unsigned long long)o->reads.completed, (unsigned long long)o->reads.offered,
		       (unsigned long long)o->reads.failed);
		snprintf(p, sizeof p, "p99 %.3f ms", o->reads.latency_ms.p99);
		printf("  %-30s %14.3f   %s\n", "read latency, ms", o->reads.latency_ms.mean, p);
	}
	if (o->reads.offered || c->snapshot_for_s > 0) {
		printf("  %-30s %14lld   now %lld\n", "versions in the chain, most",
		       (long long)o->reads.versions_max, (long long)o->reads.versions);
		printf("  %-30s %14lld   2 with a short chain\n", "buffers per read, most",
		       (long long)o->reads.buffers_max);
		printf("  %-30s %14lld\n", "heap pages (never shrink)", (long long)o->reads.heap_pages);
	}
	print_little(c, o);

	printf("\nIn words:\n");
	if (direct) {
		const char *colon = strchr(why, ':');
		if (colon)
			printf("  The binding ceiling is %.*s:\n   %s.\n", (int)(colon - why), why,
			       colon + 1);
		else
			printf("  The binding ceiling is %s.\n", why);
		if (o->theory.binding != SIM_CEIL_ROWS)
			printf("  (The row lock%s alone would take %.0f/s: %d / %g ms.)\n",
			       n == 1 ? "" : "s", o->theory.ceiling_per_s, n, s_ms);
	}
	if (direct && closed && o->theory.closed_throughput_per_s < 0) {
		printf("  %d callers each wait for their answer before they think and send again,\n"
		       "  so the load adjusts itself; the engine measured %.0f a second and %.3f ms\n"
		       "  a request.\n", c->clients, o->throughput_per_s, o->latency_ms.mean);
	} else if (direct && closed) {
		printf("  %d callers each wait for their answer before they think and send again,\n"
		       "  so the load adjusts itself: Mean Value Analysis of the same loop predicts\n"
		       "  %.0f a second and %.3f ms a request; the engine measured %.0f and %.3f ms.\n",
		       c->clients, o->theory.closed_throughput_per_s, o->theory.closed_mean_ms,
		       o->throughput_per_s, o->latency_ms.mean);
	} else if (scheduled) {
		schedule_words(c, o, sched);
	} else if (direct) {
		if (o->theory.growth_per_s > 0) {
			printf("  Likes arrive at %g a second, an offered load of %.2f times the row\n"
			       "  ceiling, so the line for the lock grows by about %.0f requests every\n"
			       "  second and never drains while it lasts.\n",
			       c->rps, rho, o->theory.growth_per_s);
			if (c->pool > 0 && o->pool.exhausted_at_s >= 0)
				printf("  Each waiter holds a pooled connection: the %d connections should be gone\n"
				       "  after about %.4f s (%d / %.0f); here they were gone at %.4f s.\n",
				       c->pool, o->theory.pool_full_s, c->pool, o->theory.growth_per_s,
				       o->pool.exhausted_at_s);
			printf("  Measured: %.1f updates a second got through; %llu of %llu likes failed\n"
			       "  or were given up, and the worst wait for the lock was %.1f ms.\n",
			       o->throughput_per_s, (unsigned long long)(o->failed + o->abandoned),
			       (unsigned long long)o->offered, o->worst_wait_ms);
		} else if (c->rps > o->theory.binding_per_s) {
			printf("  Likes arrive at %g a second: the rows could keep up (an offered load of\n"
			       "  %.2f on them), but the %s ceiling is lower, so requests queue for it.\n"
			       "  The engine measured %.0f a second and %.2f ms a like.\n",
			       c->rps, rho, sim_ceiling_name(o->theory.binding),
			       o->throughput_per_s, o->latency_ms.mean);
		} else if (o->orphans_run > 0) {
			printf("  Likes arrive at %g a second, a utilisation of %.2f, yet only %.1f a second\n"
			       "  got through: the row was busy with statements whose clients had left,\n"
			       "  and with the retries those clients sent instead.\n",
			       c->rps, rho, o->throughput_per_s);
		} else if (o->theory.model_mean_ms < 0) {
			printf("  Likes arrive at %g a second, exactly the ceiling (a utilisation of %.2f).\n"
			       "  With random arrivals or holds the line has no steady state there: it\n"
			       "  wanders and keeps growing the longer the run (the mean was %.3f ms\n"
			       "  over these %g s), so no mean time applies; stay below the ceiling.\n",
			       c->rps, rho, o->latency_ms.mean, c->seconds);
		} else {
			printf("  Likes arrive at %g a second, a utilisation of %.2f: the row keeps up,\n"
			       "  and a like spends %.3f ms on average (%s predicts %.3f ms).\n",
			       c->rps, rho, o->latency_ms.mean, sim_model_name(o->theory.model),
			       o->theory.model_mean_ms);
		}
	} else {
		printf("  Each like finishes at the cheap step; the counter row takes one +k every\n"
		       "  %g ms, so its lock is busy %.2f%% of the time. The visible count trails\n"
		       "  the true one by at most %.2f s here.\n",
		       c->flush_ms, 100 * o->theory.rho, o->count.max_lag_s);
		if (o->pool.exhausted_at_s >= 0)
			printf("  The pool still ran out (at %.4f s): here the cheap step needs a\n"
			       "  connection too, and %d connections were not enough.\n",
			       o->pool.exhausted_at_s, c->pool);
		if (o->count.lost || o->count.doubled)
			printf("  The faults cost %lld lost and %lld double-counted likes.\n",
			       (long long)o->count.lost, (long long)o->count.doubled);
	}
	if (direct && c->trips_in_lock > 0 && c->rtt_ms > 0)
		printf("  Of each %g ms hold, %g ms %s %d round trip%s made while the lock is\n"
		       "  held; as one statement the row%s would take %.0f a second, not %.0f.\n",
		       s_ms, c->trips_in_lock * c->rtt_ms, c->trips_in_lock == 1 ? "is" : "are",
		       c->trips_in_lock, c->trips_in_lock == 1 ? "" : "s", n == 1 ? "" : "s",
		       n * 1000.0 / (s_ms - c->trips_in_lock * c->rtt_ms), o->theory.ceiling_per_s);
	if (o->reads.versions_max > 1)
		printf("  An old snapshot kept %lld versions of the row: a read walked up to %lld\n"
		       "  buffers instead of 2%s.\n", (long long)o->reads.versions_max,
		       (long long)o->reads.buffers_max,
		       o->reads.snapshot_open ? "" : "; once it closed, the next read left the chain short");
	if (o->orphans_run)
		printf("  Clients gave up on %llu statements that the server still ran (%llu of them\n"
		       "  committed): work nobody waited for.%s\n",
		       (unsigned long long)o->orphaned, (unsigned long long)o->orphans_run,
		       c->lock_timeout_ms > 0 ? "" : " --lock-timeout-ms lets the server give up too.");
	if (o->count.doubled)
		printf("  Retries that could not know whether the first try landed counted %lld likes\n"
		       "  twice%s.\n", (long long)o->count.doubled,
		       c->idempotent ? "" : " (--idempotent: an idempotency key would count them once)");
	if (o->unrelated.failed)
		printf("  Other endpoints lost %llu of %llu requests: they could not get a connection.\n",
		       (unsigned long long)o->unrelated.failed, (unsigned long long)o->unrelated.offered);
	printf("  (%llu events simulated.)\n", (unsigned long long)o->events);
}

/* The ledger's columns count transfers (a request carries --batch of
 * them); every other path's, requests. */
static void sweep_header(const char *name, bool ledger)
{
	printf("%10s  %12s  %16s  %14s  %12s  %10s\n", name, "ceiling/s", "worst lock wait",
	       "mean latency", ledger ? "transfers/s" : "throughput/s", "failed");
}

static void sweep_line(const char *value, const struct sim_summary *o, bool ledger)
{
	printf("%10s  %12.0f  %13.1f ms  %11.1f ms  %12.1f  %10llu\n", value,
	       ledger ? o->ledger.ceiling_transfers_per_s : o->theory.ceiling_per_s,
	       o->worst_wait_ms, o->latency_ms.mean,
	       ledger ? o->ledger.transfers_per_s : o->throughput_per_s,
	       (unsigned long long)(o->failed + o->abandoned));
}

/* ---- one request followed ---- */

/* "12.345 ms" or "1.234 s" */
static const char *span(char *buf, size_t len, int64_t us)
{
	if (us >= 10000000)
		snprintf(buf, len, "%.3f s", (double)us / 1e6);
	else
		snprintf(buf, len, "%.3f ms", (double)us / 1000.0);
	return buf;
}

/* The followed like's timeline, then where its time went. */
static void print_trace(const struct sim_trace *t, int64_t slowest_us)
{
	char line[160], a[32];
	int64_t total = t->end_us >= 0 ? t->end_us - t->first_us : 0;

	printf("\nRequest #%" PRIu64 "%s, %s", t->n,
	       slowest_us >= 0 ? " (the slowest that completed)" : "",
	       sim_trace_state_name((enum sim_trace_state)t->state));
	if (t->end_us >= 0)
		printf(" after %s", span(a, sizeof a, total));
	printf(":\n");
	for (int i = 0; i < t->nevents; i++) {
		sim_trace_line(t, i, line, sizeof line);
		printf("  %12.3f ms  %s\n", (double)t->ev[i].t_us / 1000.0, line);
		if (i + 1 < t->nevents && t->ev[i + 1].kind == SIM_TR_LOCKED && t->wakes > 0)
			printf("  %15s  (woken %" PRIu64 " time%s by other commits)\n", "",
			       t->wakes, t->wakes == 1 ? "" : "s");
	}
	if (t->dropped)
		printf("  (%u more steps not kept)\n", t->dropped);
	if (total <= 0)
		return;
	printf("  where its time went:\n");
	for (int w = 0; w < SIM_AT_N; w++) {
		double pc = 100.0 * (double)t->spent_us[w] / (double)total;
		if (t->spent_us[w] > 0)
			printf("  %14s  %-16s %s%.0f%%\n", span(a, sizeof a, t->spent_us[w]),
			       sim_trace_where_name((enum sim_trace_where)w),
			       pc < 0.5 ? "<" : "", pc < 0.5 ? 1.0 : pc);
	}
}

/* Run c once to find the slowest like that completed: its ordinal, 0 if
 * none completed. */
static uint64_t find_slowest(const struct sim_config *c, int64_t *lat_us)
{
	struct sim *s = sim_new(c);
	uint64_t n;

	sim_follow_search(s);
	sim_run(s);
	n = sim_follow_found(s, lat_us);
	sim_free(s);
	return n;
}

/* ---- main ---- */

/* A word that is not an option: the second setup file of --compare. */
static int setup_word(const char *w, void *ctx, char *err, size_t len)
{
	const char **b = ctx;
	char why[PATH_MAX + 64];
	if (*b) {
		snprintf(err, len, "unexpected argument '%s' (--compare takes two setup files)", w);
		return -1;
	}
	if (util_file_check_in(w, SIMCONF_MAX_BYTES, why, sizeof why) != 0) {
		snprintf(err, len, "--compare %s: %s", w, why);
		return -1;
	}
	*b = w;
	return 0;
}

/* --compare A.conf B.conf: the files hold each side whole; only --seed
 * and --seconds may be set beside them, for both. */
static int compare(const char *a, const char *b, const struct sim_config *base,
                   const struct simopt_given *given, bool json, const char *svg,
                   const char *csv, const char *sweep)
{
	char err[PATH_MAX + 100];

	if (!a) {
		snprintf(err, sizeof err, "unexpected argument '%s' (words are for --compare "
		         "A.conf B.conf only)", b);
		return usage_error(err);
	}
	if (!b)
		return usage_error("--compare needs two setup files: --compare A.conf B.conf");
	if (sweep || csv)
		return usage_error(sweep ? "--sweep: not with --compare (each side is one run)"
		                         : "--csv: not with --compare (use --json or --svg)");
	/* Any engine option given but --seed and --seconds, one row at a time. */
	for (size_t i = 0; i < SIMOPT_MAX_ROWS; i++) {
		struct simopt_given one = { .row = { false } };
		one.row[i] = given->row[i];
		if (one.row[i] && !simopt_was_given(&one, "seed") &&
		    !simopt_was_given(&one, "seconds"))
			return usage_error("--compare: engine options go in the setup files; "
			                   "only --seed and --seconds apply to both sides");
	}
	const struct compare_opts o = {
		.a = a, .b = b, .json = json, .svg = svg,
		.seed_given = simopt_was_given(given, "seed"), .seed = base->seed,
		.seconds_given = simopt_was_given(given, "seconds"), .seconds = base->seconds,
	};
	return compare_main(&o);
}

int cmd_sim(int argc, char **argv)
{
	struct sim_config base, runs[MAX_SWEEP];
	struct simopt_given given;
	char err[200], *values[MAX_SWEEP], sweep_buf[SWEEP_BUF], *sweep_name = NULL;
	const char *csv = NULL, *svg = NULL, *cmp_a = NULL, *cmp_b = NULL;
	bool json = false, list = false;
	uint64_t trace = 0;
	int64_t slowest_us = -1;
	int nruns = 1, rc = 0;
	struct sim_summary sums[MAX_SWEEP];

	sim_config_default(&base);
	const struct opt own[] = {
		{ .name = "json", .kind = OPT_FLAG, .dest = &json,
		  .help = "one JSON object (an array with --sweep)" },
		{ .name = "csv", .arg = "FILE", .kind = OPT_FILE_OUT, .dest = &csv,
		  .help = "the time series, one line per tick (a run\n"
		          "past 16384 ticks merges neighbouring ticks)" },
		{ .name = "sweep", .arg = "NAME=V1,V2,...", .kind = OPT_CUSTOM, .dest = &sweep_name,
		  .fn = sweep_opt, .ctx = sweep_buf,
		  .accepts = "NAME=V1,V2,... such as rows=1,4,16",
		  .help = "one run per value of an engine option,\n"
		          "e.g. rows=1,4,16 or rps=400,450,500" },
		{ .name = "trace", .arg = "N|slowest", .kind = OPT_CUSTOM, .dest = &trace,
		  .fn = trace_opt, .accepts = "a request number from 1, or slowest",
		  .help = "follow one like: the N-th to arrive, or the\n"
		          "slowest that completed (the run twice); its\n"
		          "timeline and where its time went follow the\n"
		          "table (JSON: under trace)" },
		{ .name = "compare", .arg = "A.conf B.conf", .kind = OPT_FILE_IN, .dest = &cmp_a,
		  .max = SIMCONF_MAX_BYTES,
		  .help = "two setup files (below) on one seed, side by side\n"
		          "with B/A; --svg draws both on one figure" },
		{ .name = "list-scenarios", .kind = OPT_FLAG, .dest = &list,
		  .help = "the named scenarios, one a line" },
		{ .name = "svg", .arg = "FILE", .kind = OPT_FILE_OUT, .dest = &svg,
		  .help = "a chart: a sweep of rps draws latency against\n"
		          "load (the hockey stick), another sweep draws\n"
		          "throughput, one run the pool filling up" },
		{ .name = "help", .short_name = 'h', .kind = OPT_USAGE, .help = "this text" },
	};
	const struct opt_table tables[] = {
		{ .heading = "output:", .rows = own, .n = sizeof own / sizeof own[0] },
		simopt_table(&base, &given, "\nengine:"),
	};
	const struct opt_cmd cmd = { .name = "hotrow sim", .usage = "[options]",
	                             .header = help_header, .footer = help_footer,
	                             .tables = tables, .ntables = 2,
	                             .positional = setup_word, .ctx = &cmp_b };
	int parsed = opt_parse(&cmd, argc, argv, NULL);
	if (parsed != OPT_OK)
		return parsed == OPT_HELP ? 0 : 2;

	if (list) {
		list_scenarios();
		return 0;
	}
	if (cmp_a || cmp_b)
		return compare(cmp_a, cmp_b, &base, &given, json, svg, csv, sweep_name);
	/* Build every run's config first, so a bad value stops before any run;
	 * the swept option counts as given. */
	struct simopt_given swept = given;
	if (sweep_name) {
		char *tok = strchr(sweep_name, '=');
		*tok++ = 0;
		nruns = 0;
		for (;;) {           /* every value between commas, empty ones too */
			char *comma = strchr(tok, ',');
			if (comma)
				*comma = 0;
			if (!*tok)
				return usage_error("--sweep: expected NAME=V1,V2,... with no empty value");
			if (nruns == MAX_SWEEP)
				return usage_error("--sweep: expected at most 64 values");
			runs[nruns] = base;
			if (simopt_set(&runs[nruns], &swept, sweep_name, tok, err, sizeof err))
				return usage_error(err);
			values[nruns++] = tok;
			if (!comma)
				break;
			tok = comma + 1;
		}
		if (csv)
			return usage_error("--csv: one run only, not with --sweep");
		if (trace)
			return usage_error("--trace: one run only, not with --sweep");
	} else {
		runs[0] = base;
	}
	/* A swept rate and a closed loop contradict each other too. */
	if (sweep_name && (!strcmp(sweep_name, "rps") || !strcmp(sweep_name, "schedule")))
		for (int k = 0; k < nruns; k++)
			if (runs[k].clients > 0)
				return usage_error("--clients: a closed loop sets its own rate; "
				                   "sweep clients, not the rate");
	if (sweep_name && !strcmp(sweep_name, "clients"))
		if (simopt_was_given(&given, "rps") || simopt_was_given(&given, "schedule"))
			return usage_error("--clients: a closed loop sets its own rate; "
			                   "drop --rps (or --schedule)");
	for (int k = 0; k < nruns; k++)
		if (simopt_finish(&runs[k], &swept, err, sizeof err))
			return usage_error(err);

	if (json && sweep_name)
		putchar('[');
	else if (sweep_name)
		sweep_header(sweep_name, sim_strategy_info(runs[0].strategy)->batches);
	for (int k = 0; k < nruns; k++) {
		struct sim *s = sim_new(&runs[k]);
		struct sim_summary o;
		if (!s) {                  /* simopt_finish checked it: not reached */
			sim_config_check(&runs[k], err, sizeof err);
			return usage_error(err);
		}
		if (trace == TRACE_SLOWEST) {
			trace = find_slowest(&runs[k], &slowest_us);
			if (!trace) {
				sim_free(s);
				return usage_error("--trace slowest: no like completed in this run");
			}
		}
		if (trace)
			sim_follow_nth(s, trace);
		sim_run(s);
		sim_summary(s, &o);
		if (trace) {
			struct sim_trace t;
			sim_trace_get(s, &t);
			if (t.state == SIM_TRACE_WAITING) {
				snprintf(err, sizeof err, "--trace %" PRIu64 ": request %" PRIu64
				         " never arrived (the run offered %" PRIu64 "); give 1 to %"
				         PRIu64, trace, trace, o.offered, o.offered);
				sim_free(s);
				return usage_error(err);
			}
		}
		if (json) {
			if (k)
				putchar(',');
			sim_json(stdout, s);
		} else if (sweep_name) {
			sweep_line(values[k], &o, sim_strategy_info(runs[0].strategy)->batches);
		} else {
			report(&runs[k], &o, offered_per_s(s, &runs[k], &o));
			if (trace) {
				struct sim_trace t;
				sim_trace_get(s, &t);
				print_trace(&t, slowest_us);
			}
		}
		sums[k] = o;
		if (svg && !sweep_name)
			rc |= figure_run(svg, s, &runs[k]);
		if (csv) {   /* a new file, in place of csv only once it is whole */
			struct util_file_out out;
			char why[PATH_MAX + 64];
			if (util_file_begin(&out, csv, 0666, why, sizeof why) != 0 ||
			    (sim_csv(out.f, s), util_file_commit(&out, why, sizeof why) != 0)) {
				fprintf(stderr, "hotrow sim: --csv %s: %s\n", csv, why);
				rc = 1;
			}
		}
		sim_free(s);
	}
	if (json)
		printf("%s\n", sweep_name ? "]" : "");
	if (svg && sweep_name)
		rc |= figure_sweep(svg, sweep_name, values, runs, sums, nruns);
	return rc;
}
