/*
 * baseline.c: one hot row, updated in autocommit, measured and predicted.
 * See baseline.h for the interface.
 */
#include <stdio.h>

#include "kit/baseline.h"
#include "kit/predict.h"
#include "kit/span.h"

/* What the threads of one run share: the statement and its timings. */
struct naive {
	const char *sql;
	struct kit_span hold;
};

static int update(void *arg, struct kit_load_thread *th)
{
	const struct naive *n = arg;
	return kit_db_exec(th->db, n->sql, 0, NULL);
}

static int watch(void *arg, struct kit_load_thread *th)
{
	struct naive *n = arg;
	return kit_span_thread_init(&n->hold, th);
}

/* threads threads of n->sql for seconds, every statement timed. */
static int measure(struct naive *n, const char *cmd, const char *url, int threads,
                   double seconds, struct kit_load_result *res)
{
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = url;
	c.threads = threads;
	c.seconds = seconds;
	c.label = "naive UPDATE";
	c.thread_init = watch;
	c.thread_done = kit_span_thread_done;
	kit_span_init(&n->hold, KIT_DB_STMT_START, NULL, KIT_DB_STMT_END);
	int rc = kit_load_run(&c, update, n, res);
	if (rc != 0)
		fprintf(stderr, "%s: naive run: %s\n", cmd, res->error);
	return rc;
}

int kit_baseline_run(struct kit_baseline *b, const char *cmd, const char *url,
                     const char *sql, int threads, double seconds)
{
	struct naive n = { .sql = sql };
	*b = (struct kit_baseline){ .hold_ms = 0 };
	if (measure(&n, cmd, url, 1, seconds < 1 ? seconds : 1, &b->one) != 0)
		return KIT_DB_ERR;
	b->hold_ms = kit_span_mean_ms(&n.hold);
	if (measure(&n, cmd, url, threads, seconds, &b->many) != 0)
		return KIT_DB_ERR;
	return 0;
}

void kit_baseline_print(const struct kit_baseline *b, const char *cmd, const char *shown,
                        const char *unit)
{
	const struct kit_load_result *m = &b->many;
	char hold[64], units[32];
	snprintf(hold, sizeof hold, "hold per %s, 1 thread", unit);
	snprintf(units, sizeof units, "%ss", unit);
	printf("1. naive: %s, one row, autocommit\n", shown);
	printf("  %-30s%8.3f ms (the statement with its commit)\n", hold, b->hold_ms);
	printf("  %-30s%8lld ok, %lld failed\n", units, (long long)m->ok, (long long)m->failed);
	printf("  throughput                    %8.0f %ss/s\n", m->throughput_per_s, unit);
	kit_predict_latency(m, 3);
	if (b->hold_ms <= 0)
		return;
	struct sim_config c;
	struct sim_summary p;
	kit_predict_config(&c, SIM_NAIVE, m->throughput_per_s, b->hold_ms, 0);
	c.seconds = 5;
	if (kit_predict_run(&c, &p, cmd) != 0)
		return;
	printf("  predicted ceiling, 1 / hold   %8.0f %ss/s (you reached %.0f%%)\n",
	       1000.0 / b->hold_ms, unit, 100.0 * m->throughput_per_s * b->hold_ms / 1000.0);
	printf("  engine, Poisson at %.0f/s: rho %.2f, p50 %.2f ms, p99 %.2f ms\n",
	       m->throughput_per_s, p.theory.rho, p.latency_ms.p50, p.latency_ms.p99);
}
