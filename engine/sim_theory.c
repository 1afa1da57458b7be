/*
 * sim_theory.c: what queueing theory predicts for a config, to print
 * beside what the simulation measured.
 *
 * A row's lock is a single server whose service time S is the hold (commit
 * included) plus any app work done inside the transaction. With N rows
 * sharing the load evenly, each row sees lambda / N:
 *   ceiling     N / S                       updates per second, any hardware
 *   rho         lambda S / N                 utilisation of each row
 *   M/M/1       W = S / (1 - rho)            Poisson arrivals, exponential holds
 *   M/D/1       W = S + rho S / (2 (1 - rho))   constant holds (Pollaczek-Khinchine)
 *   growth      lambda - N / S               waiters added per second, overloaded
 *   pool full   P / growth                   seconds until P connections wait
 * W is the mean time in system (lock wait + hold). In the fixes the counter
 * row takes one update per flush, so rho is 1 / flush over the row's ceiling.
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
#include <stdlib.h>

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
	int nrows = c->strategy == SIM_SHARDED ? c->rows : 1;
	double s_lock = c->hold_ms + c->work_ms;
	double cpu_db = c->cores > 0 ? c->cpu_db_ms : 0;
	double cpu_cl = c->cores > 0 ? (c->cpu_client_ms < c->outside_ms ? c->cpu_client_ms
	                                                                : c->outside_ms) : 0;
	double d_cpu = cpu_db + cpu_cl;
	double q_row = 0, q_cpu = 0;       /* queue lengths at n - 1 */

	for (int n = 1; n <= kmax; n++) {
		double stretch = 1, r_lock, r, x;
		/* Processor sharing: a job that finds k others at the CPUs runs
		 * at min(1, C / (k + 1)); k is taken at its mean (the arrival
		 * theorem: what n - 1 callers leave there). */
		if (c->cores > 0 && d_cpu > 0 && (1 + q_cpu) > c->cores)
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
	if (n <= 0 || (c->strategy != SIM_NAIVE && c->strategy != SIM_SHARDED))
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

void sim_theory(const struct sim *s, double rps, struct sim_summary *out)
{
	const struct sim_config *c = &s->c;
	double s_ms = c->hold_ms + c->work_ms;
	int n = c->strategy == SIM_SHARDED ? c->rows : 1;
	double lam, rho;

	out->theory.mm1_mean_ms = out->theory.md1_mean_ms = -1;
	out->theory.growth_per_s = 0;
	out->theory.pool_full_s = -1;
	out->theory.closed_throughput_per_s = s->mva_x;
	out->theory.closed_mean_ms = s->mva_r;
	if (c->strategy != SIM_NAIVE && c->strategy != SIM_SHARDED) {
		out->theory.ceiling_per_s = 1000.0 / c->hold_ms;
		out->theory.rho = c->flush_ms > 0 ? c->hold_ms / c->flush_ms : 0;
		return;
	}
	out->theory.ceiling_per_s = s_ms > 0 ? n * 1000.0 / s_ms : 0;
	lam = c->clients > 0 ? (s->mva_x > 0 ? s->mva_x : 0) : rps;
	rho = out->theory.ceiling_per_s > 0 ? lam / out->theory.ceiling_per_s : 0;
	out->theory.rho = rho;
	if (c->clients > 0)
		return;                   /* the open-loop formulas do not apply */
	if (rho < 1) {
		out->theory.mm1_mean_ms = s_ms / (1 - rho);
		out->theory.md1_mean_ms = s_ms + rho * s_ms / (2 * (1 - rho));
	} else if (lam > out->theory.ceiling_per_s) {
		out->theory.growth_per_s = lam - out->theory.ceiling_per_s;
		if (c->pool > 0)
			out->theory.pool_full_s = c->pool / out->theory.growth_per_s;
	}
}
