/*
 * simtest.h: small helpers shared by the engine's model tests.
 *
 * Interface: simtest_config(&c) gives a quick deterministic base config
 * (naive, 2000/s constant, 2 ms holds, unbounded pool, 1 s, seed 1);
 * simtest_run(&c, &sum) runs it to the end and fills the summary;
 * simtest_json(&c) returns the run's JSON in a malloc'd string (free it).
 */
#ifndef HOTROW_TESTS_SIMTEST_H
#define HOTROW_TESTS_SIMTEST_H

#include <stdio.h>
#include <stdlib.h>

#include "engine/sim.h"

static inline void simtest_config(struct sim_config *c)
{
	sim_config_default(c);
	c->pool = 0;
	c->pool_timeout_ms = 0;
	c->seconds = 1;
	c->seed = 1;
}

static inline void simtest_run(const struct sim_config *c, struct sim_summary *out)
{
	struct sim *s = sim_new(c);

	sim_run(s);
	sim_summary(s, out);
	sim_free(s);
}

static inline char *simtest_json(const struct sim_config *c)
{
	struct sim *s = sim_new(c);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	sim_run(s);
	sim_json(f, s);
	fclose(f);
	sim_free(s);
	return buf;
}

#endif
