/*
 * predict.c: the engine's prediction for a measured hold, and the lines
 * that print it beside the measurement. See predict.h for the interface.
 */
#include <stdio.h>
#include <string.h>

#include "kit/predict.h"

void kit_predict_config(struct sim_config *c, enum sim_strategy s, double rps, double hold_ms,
                        int clients)
{
	sim_config_default(c);
	c->strategy = s;
	c->rows = 1;
	c->rps = rps;
	c->hold_ms = hold_ms;
	c->hold_dist = SIM_DIST_CONST;
	c->work_ms = 0;
	c->unrelated_rps = 0;
	if (clients == 0) {
		c->arrivals = SIM_ARRIVE_POISSON;
		c->pool = 0;
	} else {
		c->arrivals = SIM_ARRIVE_CONSTANT;
		c->pool = clients;
		c->pool_timeout_ms = 0;
		c->client_timeout_ms = 0;
	}
}

int kit_predict_run(const struct sim_config *c, struct sim_summary *out, const char *cmd)
{
	char err[200];
	memset(out, 0, sizeof *out);
	if (sim_config_check(c, err, sizeof err) != 0) {
		fprintf(stderr, "%s: engine: %s\n", cmd, err);
		return -1;
	}
	struct sim *s = sim_new(c);
	sim_run(s);
	sim_summary(s, out);
	sim_free(s);
	return 0;
}

void kit_predict_table_header(void)
{
	printf("  %-24s %11s %9s %9s %9s %8s\n", "", "throughput", "p50 ms", "p99 ms", "mean ms",
	       "failed");
}

void kit_predict_table_measured(const char *name, const struct kit_load_result *m)
{
	printf("  %-24s %9.0f/s %9.2f %9.2f %9.2f %8lld\n", name, m->throughput_per_s,
	       m->latency_ms.p50, m->latency_ms.p99, m->latency_ms.mean, (long long)m->failed);
}

void kit_predict_table_predicted(const char *name, const struct sim_summary *p, int threads,
                                 bool show_ceiling)
{
	/* Closed loop: each client always has one write in flight, so by
	 * Little's law its mean latency is threads / throughput. */
	double mean = p->throughput_per_s > 0 ? threads * 1000.0 / p->throughput_per_s : 0;
	printf("  %-24s %9.0f/s %9s %9s %9.2f", name, p->throughput_per_s, "", "", mean);
	if (show_ceiling)
		printf(" %8s   ceiling %.0f/s", "", p->theory.ceiling_per_s);
	putchar('\n');
}

void kit_predict_latency(const struct kit_load_result *r, int digits)
{
	printf("  latency ms                    mean %.*f  p50 %.*f  p95 %.*f  p99 %.*f  max %.2f\n",
	       digits, r->latency_ms.mean, digits, r->latency_ms.p50, digits, r->latency_ms.p95,
	       digits, r->latency_ms.p99, r->latency_ms.max);
}
