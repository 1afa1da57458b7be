/*
 * sim_live.c: a fix applied while the simulation runs.
 *
 * sim_set may change the strategy and the rows of a running simulation.
 * Nothing already in it moves: a request carries the write path it
 * arrived under (struct sim_req's path), so the requests waiting for a
 * connection or queued on a row when the change comes drain by the rules
 * they started with, while new arrivals take the new path. Rows only
 * grow: a row the new config no longer picks keeps its queue until it
 * has drained. A store of a fix (the app's buffer, the log, the
 * in-memory count, the inserted rows) keeps being flushed after the
 * strategy moves on, until it is empty.
 *
 * Timeouts too: each attempt keeps the pool timeout, lock_timeout and
 * statement_timeout it started under (struct sim_req's gen, an index
 * into s->tmo, which gets a new generation when a call changes them), so
 * a shorter timeout fails only the new arrivals, however far back in the
 * line, and a longer one spares only them. A queue keeps a run per
 * generation (sim_ring.h), so the first deadline is found among the runs'
 * heads. A pool's new size applies as connections come back: a smaller
 * pool takes none from the requests holding one, a bigger one admits
 * waiters at once.
 *
 * Every call of sim_set is recorded (its time and the config it was
 * given), with a line per field that changed: the TUI says what changed
 * at which second, and a replay that makes the same calls at the same
 * simulated times runs the same events, since a call's effect depends
 * only on the state, the time and the config.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim_field.h"
#include "engine/sim_impl.h"
#include "engine/xmalloc.h"

/* More rows for new arrivals to pick from: the rows, and the per-row
 * arrays of the chain (sim_chain.c). */
static void grow(struct sim *s, int n)
{
	int old = s->nrows;

	s->rows = xrealloc(s->rows, (size_t)n * sizeof *s->rows);
	memset(&s->rows[old], 0, (size_t)(n - old) * sizeof *s->rows);
	s->versions = xrealloc(s->versions, (size_t)n * sizeof *s->versions);
	s->pages_hi = xrealloc(s->pages_hi, (size_t)n * sizeof *s->pages_hi);
	for (int i = old; i < n; i++) {
		sim_queue_init(&s->rows[i].q);
		s->rows[i].sweep_at = -1;
		s->versions[i] = s->pages_hi[i] = 1;
	}
	s->nrows = n;
}

static void record(struct sim *s, const struct sim_config *old,
                   const struct sim_config *asked)
{
	size_t n;
	const struct sim_field *f = sim_fields(&n);

	if (s->nsets == s->sets_cap) {
		s->sets_cap = s->sets_cap ? 2 * s->sets_cap : 8;
		s->sets = xrealloc(s->sets, s->sets_cap * sizeof *s->sets);
	}
	s->sets[s->nsets].at_us = s->now;
	s->sets[s->nsets].inflight = s->inflight;
	s->sets[s->nsets].c = *asked;
	for (size_t i = 0; i < n; i++) {
		struct sim_change *ch;
		if (sim_field_equal(&f[i], old, &s->c))
			continue;
		if (s->nchanges == s->changes_cap) {
			s->changes_cap = s->changes_cap ? 2 * s->changes_cap : 16;
			s->changes = xrealloc(s->changes, s->changes_cap * sizeof *s->changes);
		}
		ch = &s->changes[s->nchanges++];
		ch->at_us = s->now;
		ch->set = (int)s->nsets;
		ch->field = f[i].json;
		ch->option = f[i].option;
		sim_field_text(&f[i], old, ch->from, sizeof ch->from);
		sim_field_text(&f[i], &s->c, ch->to, sizeof ch->to);
	}
	s->nsets++;
}

void sim_live_apply(struct sim *s, const struct sim_config *old,
                    const struct sim_config *asked)
{
	int rows = sim_config_rows(&s->c);

	if (rows > s->nrows)
		grow(s, rows);
	if (s->c.strategy != old->strategy) {
		s->path = sim_path_of(s->c.strategy);
		s->paths_used |= 1u << s->c.strategy;
		if (s->path->flushes && !s->flush_armed) {
			sim_push(s, s->now + s->flush_us, EV_FLUSH, 0);
			s->flush_armed = true;
		}
	}
	sim_live_timeouts(s);
	record(s, old, asked);
}

void sim_live_timeouts(struct sim *s)
{
	struct sim_timeouts t = { s->pool_timeout_us, s->lock_timeout_us, s->statement_timeout_us };

	if (s->ntmo && !memcmp(&s->tmo[s->ntmo - 1], &t, sizeof t))
		return;
	s->tmo_lock |= t.lock_us > 0 || t.stmt_us > 0;
	if (s->ntmo == SIM_MAX_GENS) {
		/* No generation left: the newest take these (their runs'
		 * deadlines all move alike, so each run stays in order). */
		s->tmo[s->ntmo - 1] = t;
		return;
	}
	if (s->ntmo == s->tmo_cap) {
		s->tmo_cap = s->tmo_cap ? 2 * s->tmo_cap : 4;
		s->tmo = xrealloc(s->tmo, s->tmo_cap * sizeof *s->tmo);
	}
	s->tmo[s->ntmo++] = t;
}

void sim_live_free(struct sim *s)
{
	free(s->changes);
	free(s->sets);
	free(s->tmo);
}

int sim_live_rows(const struct sim *s)
{
	int n = sim_config_rows(&s->c);

	for (int i = s->nrows - 1; i >= n; i--)
		if (s->rows[i].holder != HOLD_NONE || s->rows[i].q.n)
			return i + 1;
	return n < s->nrows ? n : s->nrows;
}

const struct sim_change *sim_changes(const struct sim *s, size_t *n)
{
	*n = s->nchanges;
	return s->changes;
}

const struct sim_config *sim_change_config(const struct sim *s, int set, int64_t *at_us)
{
	if (set < 0 || (size_t)set >= s->nsets)
		return NULL;
	if (at_us)
		*at_us = s->sets[set].at_us;
	return &s->sets[set].c;
}

size_t sim_change_sets(const struct sim *s)
{
	return s->nsets;
}

/* n with thousands separators: 10010 -> "10,010". */
static void grouped(char *out, size_t len, int64_t n)
{
	char d[24];
	int k = snprintf(d, sizeof d, "%lld", (long long)n), j = 0;

	for (int i = 0; i < k && (size_t)j + 2 < len; i++) {
		if (i > 0 && (k - i) % 3 == 0)
			out[j++] = ',';
		out[j++] = d[i];
	}
	out[j] = '\0';
}

void sim_change_text(const struct sim *s, char *buf, size_t len)
{
	const struct sim_change *ch = s->changes;
	size_t i, first, n = 0;
	bool path = false, timeouts = false;

	buf[0] = '\0';
	if (!s->nchanges || len < 2)
		return;
	for (first = s->nchanges - 1; first > 0 && ch[first - 1].set == ch[first].set; first--)
		;
	n = (size_t)snprintf(buf, len, "at %.1f s:", (double)ch[first].at_us / 1e6);
	for (i = first; i < s->nchanges && n < len; i++) {
		path |= !strcmp(ch[i].field, "strategy");
		timeouts |= !strcmp(ch[i].field, "pool_timeout_ms") ||
		            !strcmp(ch[i].field, "lock_timeout_ms") ||
		            !strcmp(ch[i].field, "statement_timeout_ms");
		n += (size_t)snprintf(buf + n, len - n, "%s %s %s -> %s", i > first ? "," : "",
		                      ch[i].option, ch[i].from, ch[i].to);
	}
	if (path && n < len) {
		char k[32];
		grouped(k, sizeof k, s->sets[ch[first].set].inflight);
		n += (size_t)snprintf(buf + n, len - n, ". The %s likes in flight then finish "
		                      "the way they started; new ones take the new path", k);
	}
	if (timeouts && n < len)
		snprintf(buf + n, len - n, ". Those waiting then keep the timeouts they "
		         "started with; new ones get the new");
}
