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
 * at which second. So is every fault injected and every choice of whom
 * to follow: the record of the run (struct sim_record), which a replay
 * makes again at the same simulated times and so runs the same events,
 * since a call's effect depends only on the state, the time and what it
 * was given. The TUI's rewind replays from it.
 */
#include <assert.h>
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

/* A new entry at the end of the record, at s->now. */
static struct sim_live_set *append(struct sim *s, enum sim_call what, int64_t arg)
{
	struct sim_live_set *e;

	if (s->nsets == s->sets_cap) {
		s->sets_cap = s->sets_cap ? 2 * s->sets_cap : 8;
		s->sets = xrealloc(s->sets, s->sets_cap * sizeof *s->sets);
	}
	e = &s->sets[s->nsets++];
	memset(e, 0, sizeof *e);
	e->at_us = s->now;
	e->inflight = s->inflight;
	e->what = what;
	e->arg = arg;
	return e;
}

void sim_live_call(struct sim *s, enum sim_call what, int64_t arg)
{
	append(s, what, arg);
}

/* The number of SIM_CALL_SET entries among the first n. */
static int sets_before(const struct sim *s, size_t n)
{
	int k = 0;

	for (size_t i = 0; i < n; i++)
		k += s->sets[i].what == SIM_CALL_SET;
	return k;
}

static void record(struct sim *s, const struct sim_config *old,
                   const struct sim_config *asked)
{
	size_t n;
	const struct sim_field *f = sim_fields(&n);
	int set = sets_before(s, s->nsets);

	append(s, SIM_CALL_SET, 0)->c = *asked;
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
		ch->set = set;
		ch->field = f[i].json;
		ch->option = f[i].option;
		ch->per_attempt = f[i].per_attempt;
		sim_field_text(&f[i], old, ch->from, sizeof ch->from);
		sim_field_text(&f[i], &s->c, ch->to, sizeof ch->to);
	}
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

/* The entry of the set-th call of sim_set, NULL past the last. */
static const struct sim_live_set *nth_set(const struct sim *s, int set)
{
	for (size_t i = 0; i < s->nsets && set >= 0; i++)
		if (s->sets[i].what == SIM_CALL_SET && set-- == 0)
			return &s->sets[i];
	return NULL;
}

const struct sim_config *sim_change_config(const struct sim *s, int set, int64_t *at_us)
{
	const struct sim_live_set *e = nth_set(s, set);

	if (!e)
		return NULL;
	if (at_us)
		*at_us = e->at_us;
	return &e->c;
}

size_t sim_change_sets(const struct sim *s)
{
	return (size_t)sets_before(s, s->nsets);
}

/* ---- the record, replayed ---- */

struct sim_record {
	struct sim_live_set *call;
	size_t n;
};

struct sim_record *sim_record_take(const struct sim *s)
{
	struct sim_record *r = xmalloc(sizeof *r);

	r->n = s->nsets;
	r->call = r->n ? xmalloc(r->n * sizeof *r->call) : NULL;
	if (r->n)
		memcpy(r->call, s->sets, r->n * sizeof *r->call);
	return r;
}

void sim_record_free(struct sim_record *r)
{
	if (!r)
		return;
	free(r->call);
	free(r);
}

size_t sim_record_len(const struct sim_record *r)
{
	return r ? r->n : 0;
}

int64_t sim_record_at(const struct sim_record *r, size_t i)
{
	assert(i < r->n);
	return r->call[i].at_us;
}

void sim_record_apply(struct sim *s, const struct sim_record *r, size_t i)
{
	const struct sim_live_set *e = &r->call[i];

	assert(i < r->n);
	switch ((enum sim_call)e->what) {
	case SIM_CALL_SET:            sim_set(s, &e->c); break;
	case SIM_CALL_FAULT:          sim_inject(s, (enum sim_fault)e->arg); break;
	case SIM_CALL_FOLLOW_NTH:     sim_follow_nth(s, (uint64_t)e->arg); break;
	case SIM_CALL_FOLLOW_SLOWEST: sim_follow_slowest(s); break;
	case SIM_CALL_FOLLOW_OFF:     sim_follow_off(s); break;
	}
}

size_t sim_record_calls(const struct sim *s)
{
	return s->nsets;
}

const struct sim_config *sim_record_settings(const struct sim *s)
{
	for (size_t i = s->nsets; i > 0; i--)
		if (s->sets[i - 1].what == SIM_CALL_SET)
			return &s->sets[i - 1].c;
	return NULL;
}

enum sim_call sim_record_follow(const struct sim *s)
{
	for (size_t i = s->nsets; i > 0; i--)
		if (s->sets[i - 1].what != SIM_CALL_SET && s->sets[i - 1].what != SIM_CALL_FAULT)
			return (enum sim_call)s->sets[i - 1].what;
	return SIM_CALL_FOLLOW_OFF;
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
		timeouts |= ch[i].per_attempt;
		n += (size_t)snprintf(buf + n, len - n, "%s %s %s -> %s", i > first ? "," : "",
		                      ch[i].option, ch[i].from, ch[i].to);
	}
	if (path && n < len) {
		char k[32];
		grouped(k, sizeof k, nth_set(s, ch[first].set)->inflight);
		n += (size_t)snprintf(buf + n, len - n, ". The %s likes in flight then finish "
		                      "the way they started; new ones take the new path", k);
	}
	if (timeouts && n < len)
		snprintf(buf + n, len - n, ". Those waiting then keep the timeouts they "
		         "started with; new ones get the new");
}
