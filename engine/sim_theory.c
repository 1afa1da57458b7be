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
 */
#include "engine/sim_impl.h"

void sim_theory(const struct sim_config *c, double rps, struct sim_summary *out)
{
	double s_ms = c->hold_ms + c->work_ms;
	int n = c->strategy == SIM_SHARDED ? c->rows : 1;
	double lam, rho;

	out->theory.mm1_mean_ms = out->theory.md1_mean_ms = -1;
	out->theory.growth_per_s = 0;
	out->theory.pool_full_s = -1;
	if (c->strategy != SIM_NAIVE && c->strategy != SIM_SHARDED) {
		out->theory.ceiling_per_s = 1000.0 / c->hold_ms;
		out->theory.rho = c->flush_ms > 0 ? c->hold_ms / c->flush_ms : 0;
		return;
	}
	out->theory.ceiling_per_s = s_ms > 0 ? n * 1000.0 / s_ms : 0;
	lam = rps;
	rho = out->theory.ceiling_per_s > 0 ? lam / out->theory.ceiling_per_s : 0;
	out->theory.rho = rho;
	if (rho < 1) {
		out->theory.mm1_mean_ms = s_ms / (1 - rho);
		out->theory.md1_mean_ms = s_ms + rho * s_ms / (2 * (1 - rho));
	} else if (lam > out->theory.ceiling_per_s) {
		out->theory.growth_per_s = lam - out->theory.ceiling_per_s;
		if (c->pool > 0)
			out->theory.pool_full_s = c->pool / out->theory.growth_per_s;
	}
}
