/*
 * sim_theory.c: what queueing theory predicts for a config, to print
 * beside what the simulation measured.
 *
 * A row's lock is a single server whose service time S is the hold (commit
 * included) plus any app work done inside the transaction. With N rows
 * sharing the load evenly, each row sees lambda / N:
 *   ceiling     N / S                       updates per second, any hardware
 *   rho         lambda S / N                 utilisation of each row
 *   D/D/1       W = S                        constant arrivals and holds: no queue
 *   M/D/1       W = S + rho S / (2 (1 - rho))   constant holds (Pollaczek-Khinchine)
 *   M/M/1       W = S / (1 - rho)            Poisson arrivals, exponential holds
 *   G/G/1       W = S + S rho / (1 - rho) (ca2 + cs2) / 2   anything else
 *               (Kingman; exact for the two above, ca2 and cs2 the squared
 *               coefficients of variation of the gaps and of the holds)
 *   growth      lambda - N / S               waiters added per second, overloaded
 *   pool full   P / growth                   seconds until P connections wait
 *   fluid       a rate schedule: a line q(t) grows at lambda - mu while
 *               arrivals outrun the ceiling and drains at mu - lambda
 *               after; a like arriving at t waits q(t) / mu, then holds,
 *               so the mean wait is sum over steps of lambda / mu times
 *               the integral of q, over all arrivals (Kingman's queue
 *               stands in where a step has no line)
 * W is the mean time in system (lock wait + hold). The label says which
 * model matches the config; rho above 1 is an offered load, not a
 * utilisation. In the fixes the counter row takes one update per flush,
 * so rho is 1 / flush over the row's ceiling. On the ledger path a
 * request is a transaction of B transfers, and only the fraction
 * 1 - f^B with a transfer not refused visits the lock: the ceiling is
 * N / (S (1 - f^B)) transactions, B times that in transfers.
 *
 * Other ceilings can bind before the rows do, and the lowest one is named:
 *   pool        P / (hold + outside), and with random slots the P busy
 *               connections sit on only n (1 - (1 - 1/n)^P) distinct rows
 *   cpu         cores / CPU time per request
 *   callers     N / (hold + outside + think), a closed loop's own limit
 *
 * A closed loop (N callers, each waiting for its answer) has no arrival
 * rate to put into those formulas: its throughput comes out of the loop
 * itself. Mean Value Analysis (Reiser and Lavenberg) computes it exactly
 * for a network of stations, one population at a time:
 *   R_k(n) = D_k (1 + Q_k(n - 1))   a queueing station (a row's lock)
 *   R_k(n) = D_k                    a delay station (think, outside time)
 *   X(n)   = n / (Z + sum R_k(n)),  Q_k(n) = X(n) R_k(n)
 * A pool of P < N connections is a server of its own: the stations behind
 * it are solved for 1..P callers, and that throughput curve becomes one
 * load-dependent station beside the think time (a flow-equivalent server).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim_impl.h"
#include "engine/xmalloc.h"

/* The stations behind the pool, for k = 1..kmax callers (z: think time
 * when everyone has a connection): xin[k] their throughput per ms.
 * With cores, the CPU parts of the hold and of the outside time stretch
 * by the slowdown processor sharing gives at the mean number of jobs on
 * the CPUs (an approximation: the holder keeps the lock while it waits
 * for a core, which no product-form network has); without cores this is
 * exact MVA. */
static void mva_inner(const struct sim_config *c, int kmax, double *xin, double z)
{
	int nrows = sim_config_rows(c);
	double v = sim_lock_visits(c);     /* a refused transfer skips the lock */
	double s_lock = v * sim_lock_ms(c);
	double cpu_db = c->cores > 0 ? v * c->cpu_db_ms : 0;
	double cpu_cl = c->cores > 0 ? (c->cpu_client_ms < c->outside_ms ? c->cpu_client_ms
	                                                                : c->outside_ms) : 0;
	double d_cpu = cpu_db + cpu_cl;
	double q_row = 0, q_cpu = 0;       /* queue lengths at n - 1 */

	for (int n = 1; n <= kmax; n++) {
		double stretch = 1, r_lock, r, x;
		/* Processor sharing: a job that finds k others at the CPUs runs
		 * at min(1, C / (k + 1)); k is taken at its mean (the arrival
		 * theorem: what n - 1 callers leave there). With a run queue
		 * per core, a job finds the k / C of its own core and runs at
		 * 1 / (k / C + 1). */
		if (c->cores > 0 && d_cpu > 0 && c->run_queues == SIM_RUNQ_PER_CORE)
			stretch = 1 + q_cpu / c->cores;   /* one core's queue: 1 / C of them */
		else if (c->cores > 0 && d_cpu > 0 && (1 + q_cpu) > c->cores)
			stretch = (1 + q_cpu) / c->cores;
		/* Each of nrows identical rows is visited 1 / nrows of the time:
		 * the sum over rows of D/nrows (1 + Q_row) is S (1 + Q_row). */
		r_lock = (s_lock - cpu_db + cpu_db * stretch) * (1 + q_row);
		r = r_lock + (c->outside_ms - cpu_cl) + cpu_cl * stretch;
		x = n / (z + r);
		q_row = x * r_lock / nrows;
		q_cpu = x * d_cpu * stretch;
		xin[n] = x;
	}
}

int sim_mva(const struct sim_config *c, double *x_per_s, double *r_ms)
{
	int n = c->clients, p;
	double z = c->think_ms, x, *xin;

	*x_per_s = *r_ms = -1;
	/* The herd's wakes, the shared log's batches and holds that grow
	 * with an old snapshot's chain are not in it. */
	if (n <= 0 || !sim_strategy_direct(c->strategy) || c->handoff == SIM_HANDOFF_HERD ||
	    c->wal_flush_ms > 0 || (c->walk_us > 0 && c->snapshot_for_s > 0))
		return -1;
	p = c->pool > 0 && c->pool < n ? c->pool : n;
	xin = xmalloc((size_t)(p + 1) * sizeof *xin);
	if (p == n) {
		/* Everyone has a connection: the think time is one more delay. */
		mva_inner(c, n, xin, z);
		x = xin[n];
	} else if (z <= 0) {
		/* Callers never leave the pool's queue: P of them are always in. */
		mva_inner(c, p, xin, 0);
		x = xin[p];
	} else {
		/* Load-dependent MVA: the pool and what is behind it serve at
		 * xin[min(j, P)] with j callers there; pj[j] is P(j there). */
		double *pj = xcalloc((size_t)n + 1, sizeof *pj);
		mva_inner(c, p, xin, 0);
		pj[0] = 1;
		x = 0;
		for (int k = 1; k <= n; k++) {
			double r = 0, sum = 0;
			for (int j = 1; j <= k; j++)
				r += j / xin[j < p ? j : p] * pj[j - 1];
			x = k / (z + r);
			for (int j = k; j >= 1; j--) {
				pj[j] = x / xin[j < p ? j : p] * pj[j - 1];
				sum += pj[j];
			}
			pj[0] = sum < 1 ? 1 - sum : 0;
		}
		free(pj);
	}
	free(xin);
	*x_per_s = x * 1000.0;
	*r_ms = n / x - z;
	return 0;
}

const char *sim_ceiling_name(enum sim_ceiling c)
{
	static const char *const names[] = { "rows", "pool", "cpu", "callers", "flush" };
	return (unsigned)c <= SIM_CEIL_FLUSH ? names[c] : "?";
}

const char *sim_model_name(enum sim_model m)
{
	static const char *const names[] = {
		"D/D/1", "M/D/1", "M/M/1", "G/G/1 (Kingman)", "MVA", "none", "fluid schedule"
	};
	return (unsigned)m <= SIM_MODEL_FLUID ? names[m] : "?";
}

/* Expected distinct rows that k requests land on, each on one of n rows
 * at random: n (1 - (1 - 1/n)^k). With round-robin slots, min(k, n). */
static double distinct_rows(const struct sim_config *c, int n, double k)
{
	if (n <= 1)
		return 1;
	if (c->slot == SIM_SLOT_ROUND_ROBIN)
		return k < n ? k : n;
	return n * (1 - pow(1 - 1.0 / n, k));
}

/* The squared coefficient of variation of the gaps between arrivals at
 * one of n rows. The stream: constant 0, Poisson 1, clumps of K (gaps of
 * 0 inside a clump, exponential between clumps) 2K - 1. Picking a row at
 * random thins it (p c^2 + 1 - p, p = 1/n); taking rows in turn adds n
 * gaps together (c^2 / n). */
static double arrival_cv2(const struct sim_config *c, int n)
{
	double c2 = c->arrivals == SIM_ARRIVE_CONSTANT ? 0
	          : c->arrivals == SIM_ARRIVE_POISSON ? 1
	          : 2.0 * (c->burst > 1 ? c->burst : 1) - 1;
	if (n <= 1)
		return c2;
	if (c->slot == SIM_SLOT_ROUND_ROBIN)
		return c2 / n;
	return c2 / n + 1 - 1.0 / n;
}

/* Release-flush: the least a request waits for the log after it let go
 * of its row, on its connection; 0 under flush-release (in the lock). */
static double flush_after_ms(const struct sim_config *c)
{
	return c->wal_order == SIM_WAL_RELEASE_FLUSH ? c->wal_flush_ms : 0;
}

/* The ceilings in turn, the lowest binding. */
static void ceilings(const struct sim *s, struct sim_summary *out)
{
	const struct sim_config *c = &s->c;
	struct sim_summary *o = out;
	int n = sim_config_rows(c);
	/* the lock's demand per request: a refused transfer never takes it */
	double s_ms = sim_lock_ms(c) * sim_lock_visits(c);
	double conn_ms = s_ms + flush_after_ms(c) + c->outside_ms;  /* a request's time on a connection */
	double cpu_ms = c->cpu_db_ms * sim_lock_visits(c) +
	                (c->cpu_client_ms < c->outside_ms ? c->cpu_client_ms : c->outside_ms);

	o->theory.pool_ceiling_per_s = -1;
	o->theory.cpu_ceiling_per_s = -1;
	o->theory.callers_ceiling_per_s = -1;
	o->theory.distinct_rows = n;
	o->theory.binding = SIM_CEIL_ROWS;
	o->theory.binding_per_s = o->theory.ceiling_per_s;
#define LOWER(v, which) do { if ((v) >= 0 && (v) < o->theory.binding_per_s) { \
		o->theory.binding_per_s = (v); o->theory.binding = (which); } } while (0)
	if (c->pool > 0) {
		/* When every connection is busy, each serves one request per
		 * (hold + outside) at best, and the P of them sit on fewer than P
		 * distinct rows: the rows they share serve one at a time. */
		double d = distinct_rows(c, n, c->pool);
		double by_conn = c->pool * 1000.0 / conn_ms, by_rows = d * 1000.0 / s_ms;
		o->theory.distinct_rows = d;
		o->theory.pool_ceiling_per_s = by_conn < by_rows ? by_conn : by_rows;
		LOWER(o->theory.pool_ceiling_per_s, SIM_CEIL_POOL);
	}
	if (c->cores > 0 && cpu_ms > 0) {
		o->theory.cpu_ceiling_per_s = c->cores * 1000.0 / cpu_ms;
		LOWER(o->theory.cpu_ceiling_per_s, SIM_CEIL_CPU);
	}
	if (c->clients > 0) {
		o->theory.callers_ceiling_per_s = c->clients * 1000.0 / (conn_ms + c->think_ms);
		LOWER(o->theory.callers_ceiling_per_s, SIM_CEIL_CALLERS);
	}
#undef LOWER
}

/* Walk one step of the fluid line: rate lam for dt seconds from t0.
 * Adds the line's integral over the step (line-seconds) to *area and
 * returns the part of the step with no line at all. */
static double fluid_step(struct sim_schedule *v, double *q, double t0, double dt,
                         double lam, double mu, int pool, double *area)
{
	double d = lam - mu;
	if (d > 0) {
		if (pool > 0 && v->pool_full_at_s < 0 && *q + d * dt >= pool) {
			v->pool_full_at_s = t0 + (pool - *q) / d;
			v->pool_growth_per_s = d;
		}
		*area += *q * dt + d * dt * dt / 2;
		*q += d * dt;
		if (*q > v->line_max) {
			v->line_max = *q;
			v->line_max_at_s = t0 + dt;
			v->drained_at_s = -1;
		}
		return 0;
	}
	if (*q <= 0)
		return dt;
	double gone = d < 0 ? *q / -d : dt + 1;
	if (gone <= dt) {
		*area += *q * gone / 2;
		*q = 0;
		if (v->drained_at_s < 0)
			v->drained_at_s = t0 + gone;
		return dt - gone;
	}
	*area += *q * dt + d * dt * dt / 2;
	*q += d * dt;
	return 0;
}

int sim_schedule_view(const struct sim_config *c, double mu, struct sim_schedule *v)
{
	memset(v, 0, sizeof *v);
	v->over_from_s = v->drained_at_s = v->pool_full_at_s = v->line_max_at_s = -1;
	v->mean_ms = -1;
	v->mu = mu;
	double end = c->seconds > 0 ? c->seconds : 1e300;
	v->step[0].rps = c->rps;
	v->nsteps = 1;
	for (int i = 0; i < c->nphases; i++) {
		double at = c->phases[i].at_us / 1e6;
		if (at <= 0)
			v->step[0].rps = c->phases[i].rps;
		else if (at < end) {
			v->step[v->nsteps].from_s = at;
			v->step[v->nsteps++].rps = c->phases[i].rps;
		}
	}
	/* What a like costs besides the line: the lock's demand (a refused
	 * ledger transaction skips it), and the random queue of a step with
	 * no line, W_q = S rho / (1 - rho) (ca2 + cs2) / 2 at one row. */
	int n = sim_config_rows(c);
	double visits = sim_lock_visits(c), s_ms = sim_lock_ms(c);
	double row_ceiling = s_ms > 0 ? n * 1000.0 / (s_ms * visits) : 0;
	double cv2 = (arrival_cv2(c, n) + (c->hold_dist == SIM_DIST_EXP ? 1 : 0)) / 2;
	double q = 0, wait_s = 0, queue_ms = 0;   /* summed over the arrivals */
	for (int i = 0; i < v->nsteps; i++) {
		double from = v->step[i].from_s, lam = v->step[i].rps;
		double to = i + 1 < v->nsteps ? v->step[i + 1].from_s : end;
		if (lam > v->step[v->peak].rps)
			v->peak = i;
		if (lam > mu && v->over_from_s < 0)
			v->over_from_s = from;
		if (to < 1e300) {
			double area = 0, rho = row_ceiling > 0 ? lam / row_ceiling : 0;
			double free_s = fluid_step(v, &q, from, to - from, lam, mu, c->pool, &area);
			/* arrivals at lam wait line / mu each: lam / mu times the area */
			wait_s += lam * area / mu;
			if (free_s > 0 && rho < 1)
				queue_ms += lam * free_s * s_ms * rho / (1 - rho) * cv2;
			v->arrivals += lam * (to - from);
		}
	}
	v->peak_until_s = v->peak + 1 < v->nsteps ? v->step[v->peak + 1].from_s : end;
	if (q > 0 && v->drained_at_s < 0 && end < 1e300)
		v->drained_at_s = end + q / mu;   /* no arrivals: the line drains at mu */
	v->end_s = q > 0 ? end + q / mu : end;
	if (end < 1e300 && v->end_s > 0)
		v->throughput_per_s = v->arrivals / v->end_s;
	if (v->arrivals > 0)
		v->mean_ms = visits * (s_ms + (1000 * wait_s + queue_ms) / v->arrivals) + c->outside_ms;
	return v->nsteps > 1;
}

/* A run with an end and a rate schedule: theory follows the fluid view
 * at the binding ceiling, not the last rate (sim.h, struct sim_summary).
 * An endless run (the TUI) keeps describing the rate now. The schedule's
 * steps move s->c.rps as they come; the rate before them is the one set. */
static void schedule_theory(const struct sim *s, struct sim_summary *out)
{
	struct sim_config given = s->c, *c = &given;
	struct sim_schedule v;
	double mu = out->theory.binding_per_s, peak;

	given.rps = s->set_rps;
	if (c->seconds <= 0 || mu <= 0 || !sim_schedule_view(c, mu, &v))
		return;
	peak = v.step[v.peak].rps;
	out->schedule = v;
	out->theory.model = SIM_MODEL_FLUID;
	out->theory.rho = out->theory.ceiling_per_s > 0 ? peak / out->theory.ceiling_per_s : 0;
	out->theory.growth_per_s = peak > mu ? peak - mu : 0;
	out->theory.pool_full_s = v.pool_full_at_s;
	out->theory.mm1_mean_ms = out->theory.md1_mean_ms = -1;
	out->theory.model_mean_ms = v.mean_ms;
}

void sim_theory(const struct sim *s, double rps, struct sim_summary *out)
{
	const struct sim_config *c = &s->c;
	double s_ms = sim_lock_ms(c);
	int n = sim_config_rows(c);
	double lam, rho, ca2, cs2;

	out->theory.mm1_mean_ms = out->theory.md1_mean_ms = -1;
	out->theory.model_mean_ms = -1;
	out->theory.growth_per_s = 0;
	out->theory.pool_full_s = -1;
	out->theory.closed_throughput_per_s = s->mva_x;
	out->theory.closed_mean_ms = s->mva_r;
	out->theory.pool_ceiling_per_s = out->theory.cpu_ceiling_per_s = -1;
	out->theory.callers_ceiling_per_s = -1;
	if (!sim_strategy_direct(c->strategy)) {
		out->theory.ceiling_per_s = 1000.0 / c->hold_ms;
		out->theory.rho = c->flush_ms > 0 ? c->hold_ms / c->flush_ms : 0;
		out->theory.binding = SIM_CEIL_FLUSH;
		out->theory.binding_per_s = out->theory.ceiling_per_s;
		out->theory.distinct_rows = 1;
		out->theory.model = SIM_MODEL_NONE;
		out->theory.steady = true;
		return;
	}
	out->theory.ceiling_per_s = s_ms > 0 ? n * 1000.0 / (s_ms * sim_lock_visits(c)) : 0;
	ceilings(s, out);
	cs2 = c->hold_dist == SIM_DIST_EXP ? 1 : 0;
	ca2 = arrival_cv2(c, n);
	out->theory.cs2 = cs2;
	out->theory.ca2 = ca2;
	lam = c->clients > 0 ? (s->mva_x > 0 ? s->mva_x : 0) : rps;
	rho = out->theory.ceiling_per_s > 0 ? lam / out->theory.ceiling_per_s : 0;
	out->theory.rho = rho;
	if (c->clients > 0) {
		/* The open-loop formulas do not apply: the loop sets its rate. */
		out->theory.model = SIM_MODEL_MVA;
		out->theory.model_mean_ms = s->mva_r;
		out->theory.steady = s->now >= 1000000;
		return;
	}
	if (rho < 1) {
		/* W = S + S rho / (1 - rho) (ca2 + cs2) / 2: Kingman's formula, which
		 * is exact for M/M/1 and M/D/1 (Pollaczek-Khinchine) and gives
		 * no queue at all for D/D/1. The time outside the lock adds on. */
		double wq = s_ms * rho / (1 - rho) * (ca2 + cs2) / 2;
		out->theory.mm1_mean_ms = s_ms / (1 - rho);
		out->theory.md1_mean_ms = s_ms + rho * s_ms / (2 * (1 - rho));
		out->theory.model_mean_ms = s_ms + wq + c->outside_ms;
	} else if (rho == 1 && ca2 == 0 && cs2 == 0) {
		/* D/D/1 exactly at its ceiling: each like arrives as the last one
		 * leaves, so nobody waits. With any randomness at rho = 1 the line
		 * has no steady state (its length wanders like a random walk and
		 * its mean keeps growing), so no mean is given. */
		out->theory.model_mean_ms = s_ms + c->outside_ms;
	} else if (lam > out->theory.ceiling_per_s) {
		out->theory.growth_per_s = lam - out->theory.ceiling_per_s;
		if (c->pool > 0)
			out->theory.pool_full_s = c->pool / out->theory.growth_per_s;
	}
	if (ca2 == 0 && cs2 == 0)
		out->theory.model = SIM_MODEL_DD1;
	else if (ca2 == 1 && cs2 == 0 && c->arrivals == SIM_ARRIVE_POISSON)
		out->theory.model = SIM_MODEL_MD1;
	else if (ca2 == 1 && cs2 == 1 && c->arrivals == SIM_ARRIVE_POISSON)
		out->theory.model = SIM_MODEL_MM1;
	else
		out->theory.model = SIM_MODEL_GG1;
	/* Steady once the queue has had time to settle: not while it grows,
	 * and not in the first second or the first 50 mean times in system. */
	/* Orphaned statements (their clients left, the server runs them) make
	 * the row's load more than the arrivals: not the system modelled. */
	out->theory.steady = rho < 1 && lam <= out->theory.binding_per_s &&
	        s->orphaned == 0 &&
	        (double)s->now >= 1e6 &&
	        (double)s->now >= 50 * 1000 * out->theory.model_mean_ms;
	schedule_theory(s, out);
}

void sim_binding_text(const struct sim_config *c, const struct sim_summary *o,
                      char *buf, size_t len)
{
	int n = sim_config_rows(c);
	double s_ms = sim_lock_ms(c);
	double cpu_cl = c->cpu_client_ms < c->outside_ms ? c->cpu_client_ms : c->outside_ms;
	double out_ms = flush_after_ms(c) + c->outside_ms;   /* on the connection, unlocked */
	char flush[48] = "";

	if (flush_after_ms(c) > 0)
		snprintf(flush, sizeof flush, " + %g flush after it", flush_after_ms(c));

	switch (o->theory.binding) {
	case SIM_CEIL_ROWS:
		if (sim_lock_visits(c) < 1)      /* the ledger: refused ones skip it */
			snprintf(buf, len, "the row lock%s: %d row%s / (%g ms x %.2f of requests "
			         "that lock) = %.0f/s", n == 1 ? "" : "s", n, n == 1 ? "" : "s",
			         s_ms, sim_lock_visits(c), o->theory.ceiling_per_s);
		else
			snprintf(buf, len, "the row lock%s: %d row%s / %g ms = %.0f/s",
			         n == 1 ? "" : "s", n, n == 1 ? "" : "s", s_ms, o->theory.ceiling_per_s);
		break;
	case SIM_CEIL_POOL:
		s_ms *= sim_lock_visits(c);      /* the lock's demand per request */
		if (o->theory.pool_ceiling_per_s * (s_ms + out_ms) < c->pool * 1000.0 - 1e-6)
			snprintf(buf, len, "the pool: %d connections land on %.1f distinct "
			         "rows of %d (%s slots), %.1f / %g ms = %.0f/s",
			         c->pool, o->theory.distinct_rows, n,
			         c->slot == SIM_SLOT_RANDOM ? "random" : "round-robin",
			         o->theory.distinct_rows, s_ms, o->theory.pool_ceiling_per_s);
		else
			snprintf(buf, len, "the pool: %d connections / %g ms a request "
			         "(%g in the lock%s + %g outside) = %.0f/s", c->pool,
			         s_ms + out_ms, s_ms, flush, c->outside_ms,
			         o->theory.pool_ceiling_per_s);
		break;
	case SIM_CEIL_CPU:
		snprintf(buf, len, "the CPUs: %d core%s / %g ms of CPU a request = %.0f/s",
		         c->cores, c->cores == 1 ? "" : "s", c->cpu_db_ms + cpu_cl,
		         o->theory.cpu_ceiling_per_s);
		break;
	case SIM_CEIL_CALLERS:
		snprintf(buf, len, "the callers: %d / %g ms a cycle (%g lock%s + %g outside "
		         "+ %g think) = %.0f/s", c->clients, s_ms + out_ms + c->think_ms,
		         s_ms, flush, c->outside_ms, c->think_ms, o->theory.callers_ceiling_per_s);
		break;
	case SIM_CEIL_FLUSH:
		snprintf(buf, len, "no lock on the request path: the row takes one +k "
		         "every %g ms", c->flush_ms);
		break;
	}
}
