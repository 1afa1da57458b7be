/*
 * test_explain_trips.c: the plain-words panel and the lock lanes' heading
 * show the hold split into server work and round trips, and the chain an
 * old snapshot keeps, with the engine's numbers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/sim.h"
#include "tui/explain.h"

/* A snapshot of a run at t_s (the caller frees it). */
static struct sim_snapshot *snap_at(const struct sim_config *c, double t_s)
{
	struct sim_snapshot *snap = malloc(sizeof *snap);
	struct sim *s = sim_new(c);

	assert_non_null(snap);
	assert_non_null(s);
	sim_advance(s, (int64_t)(t_s * 1e6));
	sim_snapshot(s, snap);
	sim_free(s);
	return snap;
}

static const char *all_text(const struct sim_snapshot *snap)
{
	static char buf[4096];
	struct tui_para p[TUI_EXPLAIN_MAX];
	int n = tui_explain(snap, true, p, TUI_EXPLAIN_MAX);

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		strcat(buf, p[i].text);
		strcat(buf, "\n");
	}
	return buf;
}

static void trips_config(struct sim_config *c, int k)
{
	sim_config_default(c);
	c->seconds = 0;
	c->rps = 800;
	c->hold_ms = 0.5;
	c->rtt_ms = 0.5;
	c->trips_in_lock = k;
}

static void tui_explain__the_hold_split_and_one_statement(void **state)
{
	struct sim_config c;
	struct sim_snapshot *snap;
	const char *t;

	(void)state;
	trips_config(&c, 3);
	snap = snap_at(&c, 1);
	t = all_text(snap);
	assert_non_null(strstr(t, "Ceiling 500/s (1 row / 2 ms hold)"));
	assert_non_null(strstr(t, "Of each 2 ms hold, 1.5 ms are 3 round trips made while "
	                          "the lock is held; as one statement the ceiling would be 2,000/s."));
	free(snap);

	trips_config(&c, 1);
	snap = snap_at(&c, 1);
	t = all_text(snap);
	assert_non_null(strstr(t, "Of each 1 ms hold, 0.5 ms is 1 round trip"));
	free(snap);

	/* One statement: nothing to split. */
	trips_config(&c, 0);
	snap = snap_at(&c, 1);
	t = all_text(snap);
	assert_null(strstr(t, "round trip"));
	free(snap);
}

static void tui_explain__the_chain_an_old_snapshot_keeps(void **state)
{
	struct sim_config c;
	struct sim_snapshot *snap;
	const char *t;

	(void)state;
	sim_config_default(&c);
	c.seconds = 0;
	c.rps = 2000;
	c.hold_ms = 0.4;
	c.pool = 0;
	c.read_rps = 10;
	c.snapshot_at_s = 0;
	c.snapshot_for_s = 5;
	snap = snap_at(&c, 4.9995);
	t = all_text(snap);
	assert_non_null(strstr(t, "An old snapshot is open: the row keeps 10,000 versions"));
	free(snap);
	snap = snap_at(&c, 8);
	t = all_text(snap);
	assert_non_null(strstr(t, "The old snapshot kept up to 10,001 versions (a read "
	                          "touched up to 56 buffers)"));
	free(snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tui_explain__the_hold_split_and_one_statement),
		cmocka_unit_test(tui_explain__the_chain_an_old_snapshot_keeps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
