/*
 * baseline.c: one hot row, updated in autocommit, measured and predicted.
 * See baseline.h for the interface.
 */
#include <stdio.h>

#include "labs/driver/baseline.h"

static int update(void *arg, struct kit_load_thread *th)
{
	return kit_db_exec(th->db, arg, 0, NULL);
}

int drv_baseline_run(struct drv_baseline *b, const char *cmd, const char *url,
                     const char *sql, int threads, double seconds)
{
	*b = (struct drv_baseline){ .have_prediction = false };
	struct drv_probe p;
	drv_probe_default(&p);
	p.url = url;
	p.bare_sql = "SELECT 1";
	p.label = "naive UPDATE";
	int rc = drv_probe_run(&p, update, (void *)sql, &b->alone);
	if (rc != 0) {
		fprintf(stderr, "%s: naive run: %s\n", cmd, b->alone.error);
		return rc;
	}
	b->writes = b->alone.calls;
	struct drv_inputs in;
	drv_inputs_init(&in, SIM_NAIVE, threads, &b->alone);
	in.seconds = seconds;
	b->have_prediction = drv_predict(&in, &b->predicted, cmd) == 0;

	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = url;
	c.threads = threads;
	c.seconds = seconds;
	c.label = "naive UPDATE";
	rc = drv_run_load(&c, NULL, update, (void *)sql, &b->many);
	b->writes += b->many.r.ok;
	if (rc != 0)
		fprintf(stderr, "%s: naive run: %s\n", cmd, b->many.r.error);
	return rc;
}

void drv_baseline_print(const struct drv_baseline *b, const char *shown, const char *unit)
{
	const struct kit_load_result *m = &b->many.r;
	printf("1. naive: %s, one row, autocommit\n", shown);
	drv_print_parts("the statement", &b->alone);
	printf("  %d threads, measured          %8lld %s ok, %lld failed\n", m->threads,
	       (long long)m->ok, unit, (long long)m->failed);
	drv_print_latency(m, 3);
	if (b->have_prediction) {
		printf("  engine, closed loop of %d clients, from the parts alone "
		       "(ceiling 1 / hold = %.0f/s):\n", m->threads, b->predicted.ceiling_per_s);
		drv_compare(&b->predicted, &b->many, unit);
	}
}
