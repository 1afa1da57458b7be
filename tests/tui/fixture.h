/*
 * fixture.h: a hand-made snapshot of the viral post three seconds into
 * its collapse, so panel tests know every number they should see.
 *
 * Interface: struct sim_snapshot *s = fx_viral(); ... free(s);
 * fx_row(scr, y) returns row y as text (a static buffer).
 */
#ifndef HOTROW_TESTS_TUI_FIXTURE_H
#define HOTROW_TESTS_TUI_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "engine/sim.h"
#include "tui/screen.h"

/* naive, one row held, 19 lock waiters (5 older than a second, 10 of
 * 50 ms, 4 of 1 ms), a full pool of 20 (1 holder, 18 lock waits, 1 login),
 * 2,107 waiting for a connection, the login page failing 60/s. */
static inline struct sim_snapshot *fx_viral(void)
{
	struct sim_snapshot *s = calloc(1, sizeof *s);
	struct sim_config *c = &s->config;

	sim_config_default(c);
	c->strategy = SIM_NAIVE;
	c->rows = 1;
	c->rps = 2000;
	c->hold_ms = 2;
	c->work_ms = 0;
	c->pool = 20;
	c->unrelated_rps = 100;
	c->tick_ms = 100;
	strcpy(c->scenario, "viral-post");

	s->now_us = 3000000;
	s->nrows = s->nlanes = 1;
	s->lanes[0].held = true;
	s->lanes[0].holder_age_us = 1000;
	s->lanes[0].queue_len = 19;
	s->lanes[0].nwaiters = 19;
	for (int i = 0; i < 19; i++)
		s->lanes[0].waiter_age_us[i] = i < 5 ? 2000000 : i < 15 ? 50000 : 1000;

	s->pool_size = s->npool = 20;
	s->pool_cells[0] = SIM_CONN_LOCK_HOLD;
	for (int i = 1; i < 19; i++)
		s->pool_cells[i] = SIM_CONN_LOCK_WAIT;
	s->pool_cells[19] = SIM_CONN_UNRELATED;
	s->pool_in_use = 20;
	s->pool_waiters = 2107;

	s->nseries = 30;
	for (int i = 0; i < s->nseries; i++) {
		struct sim_tick *t = &s->series[i];
		t->t_s = i * 0.1;
		t->offered_per_s = 2000;
		t->completed_per_s = 500;
		t->p50_ms = 1000;
		t->p99_ms = 1040;
		t->queue_len = 19;
		t->pool_in_use = 20;
		t->pool_waiters = 2107;
		t->unrelated_failed_per_s = 60;
	}

	struct sim_summary *m = &s->summary;
	m->offered = 6000;
	m->completed = 1500;
	m->unrelated.offered = 600;
	m->unrelated.failed = 490;
	m->latency_ms.p50 = 1000;
	m->latency_ms.p99 = 1040;
	m->theory.ceiling_per_s = 500;
	m->theory.binding_per_s = 500;       /* the rows bind */
	m->theory.rho = 4;
	m->theory.mm1_mean_ms = m->theory.md1_mean_ms = -1;
	m->theory.growth_per_s = 1500;
	m->theory.pool_full_s = 20.0 / 1500;
	m->theory.little_L = 1866;
	m->theory.little_lambda = 2020;
	m->theory.little_W_ms = 986;
	m->pool.exhausted_at_s = 0.0125;
	return s;
}

static inline const char *fx_row(const struct tui_screen *scr, int y)
{
	static char buf[4096];
	return tui_screen_row(scr, y, buf, sizeof buf);
}

/* The first row holding text, or -1. */
static inline int fx_find(const struct tui_screen *scr, const char *text)
{
	for (int y = 0; y < scr->h; y++)
		if (strstr(fx_row(scr, y), text))
			return y;
	return -1;
}

/* Column (in cells) where text starts on row y, or -1. */
static inline int fx_col(const struct tui_screen *scr, int y, const char *text)
{
	const char *row = fx_row(scr, y), *hit = strstr(row, text);
	int col = 0;
	if (!hit)
		return -1;
	for (const char *p = row; p < hit; col++)
		tui_utf8_next(&p);
	return col;
}

/* How many cells of row y hold code point cp. */
static inline int fx_count(const struct tui_screen *scr, int y, uint32_t cp)
{
	int n = 0;
	for (int x = 0; x < scr->w; x++)
		n += tui_screen_at(scr, x, y)->ch == cp;
	return n;
}

#endif
