/*
 * sim_trace.c: following one like through the model, as it happens.
 *
 * The like followed carries a record (struct sim_like), as a like whose
 * outcome became unclear does; its copies (a retry) keep it, so the
 * record names the like across its attempts, and sim_followed() tells
 * its live attempt from an orphan left in a queue. A record changes
 * nothing in what a like does: only that lets the engine follow it with
 * a comparison at each of its steps and nothing else.
 *
 * sim.c calls in at the like's steps; each entry of the timeline also
 * moves its clock to a new place (enum sim_trace_where), so the places'
 * times add up, by construction, to its latency. Its position in a
 * queue only falls (the queues take from the head; a herd takes from
 * anywhere, but always ahead of or at it), so the index last seen bounds
 * the search for it: each position costs the requests that left ahead
 * of it since, never a walk of the whole queue.
 *
 * Interface: sim.h (sim_follow_*, sim_trace_*); the hooks in sim_impl.h.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim_impl.h"
#include "engine/xmalloc.h"
#include "util/json.h"

/* Timeline entries kept back for the end of the story (the cause, the
 * retry or the end), once the rest of the timeline is full. */
#define ENDING_ROOM 4

static bool ending(enum sim_trace_kind k)
{
	switch (k) {
	case SIM_TR_COMMITTED: case SIM_TR_ACKED: case SIM_TR_POOL_TIMEOUT:
	case SIM_TR_CLIENT_TIMEOUT: case SIM_TR_LOCK_TIMEOUT: case SIM_TR_STMT_TIMEOUT:
	case SIM_TR_ERROR: case SIM_TR_GAVE_UP: case SIM_TR_REFUSED:
		return true;
	default:
		return false;
	}
}

static void record_at(struct sim *s, int64_t when, enum sim_trace_kind kind, int row,
                      int64_t arg)
{
	struct sim_trace *t = &s->follow.t;
	int room = SIM_TRACE_EVENTS - (ending(kind) ? 0 : ENDING_ROOM);

	if (t->nevents >= room) {
		t->dropped++;
		return;
	}
	t->ev[t->nevents].t_us = when;
	t->ev[t->nevents].arg = arg;
	t->ev[t->nevents].row = row;
	t->ev[t->nevents].kind = (uint8_t)kind;
	t->nevents++;
}

static void record(struct sim *s, enum sim_trace_kind kind, int row, int64_t arg)
{
	record_at(s, s->now, kind, row, arg);
}

/* Close the time spent at the current place; from now on it is where. */
static void move(struct sim *s, enum sim_trace_where where, int row)
{
	struct sim_trace *t = &s->follow.t;

	t->spent_us[t->where] += s->now - t->since_us;
	t->since_us = s->now;
	t->where = (int)where;
	t->row = row;
}

static void start(struct sim *s, uint64_t n, int64_t first_us)
{
	struct sim_trace *t = &s->follow.t;

	memset(t, 0, sizeof *t);
	t->state = SIM_TRACE_LIVE;
	t->n = n;
	t->where = SIM_AT_OTHER;
	t->row = -1;
	t->first_us = first_us;
	t->since_us = first_us;
	t->end_us = -1;
	t->tries = 1;
	s->follow.want = 0;
	s->follow.hint = 0;
	s->follow.milestone = 0;
}

/* The queue the followed like waits in, or NULL. */
static const struct sim_queue *queue_of(const struct sim *s)
{
	const struct sim_trace *t = &s->follow.t;

	if (t->state != SIM_TRACE_LIVE)
		return NULL;
	if (t->where == SIM_AT_POOL)
		return &s->counter_pool->waiters;
	if (t->where == SIM_AT_LOCK_WAIT && s->rows[t->row].holder != HOLD_WAKING)
		return &s->rows[t->row].q;
	if (t->where == SIM_AT_LOCK_WAIT && !sim_followed(s, &s->rows[t->row].req))
		return &s->rows[t->row].q;
	return NULL;        /* drawn by a herd: waking up to take the lock */
}

/* Its index in q, searched down from hint; q->n when it is not there. */
static size_t index_in(const struct sim *s, const struct sim_queue *q, size_t hint)
{
	size_t i = hint < q->n ? hint + 1 : q->n;

	while (i-- > 0)
		if (sim_followed(s, sim_queue_at(q, i)))
			return i;
	return q->n;
}

/* Its position now (1 = next), 0 outside a queue; the hint follows it. */
static int64_t position(struct sim *s)
{
	const struct sim_queue *q = queue_of(s);
	size_t i;

	if (!q)
		return 0;
	i = index_in(s, q, s->follow.hint);
	assert(i < q->n);
	s->follow.hint = i;
	return (int64_t)i + 1;
}

/* A position entry each time the position halves, so that a wait in a
 * queue of a million takes some twenty entries. */
static void milestone(struct sim *s)
{
	int64_t p = position(s);

	if (p > 0 && p <= s->follow.milestone) {
		record(s, SIM_TR_POSITION, s->follow.t.row, p);
		s->follow.milestone = p / 2;
	}
}

/* ---- the hooks sim.c calls ---- */

void sim_trace_arrive(struct sim *s, struct sim_req *r)
{
	if (s->follow.search) {
		r->like = sim_like_new(s);
		s->likes[r->like].n = s->offered;
		s->follow.want = s->offered + 1;
		return;
	}
	r->like = sim_like_new(s);
	s->follow.like = r->like;
	start(s, s->offered, s->now);
	record(s, SIM_TR_ARRIVED, -1, 0);
}

void sim_trace_refused(struct sim *s)
{
	struct sim_trace *t = &s->follow.t;

	if (s->follow.search) {
		s->follow.want = s->offered + 1;
		return;
	}
	start(s, s->offered, s->now);
	record(s, SIM_TR_ARRIVED, -1, 0);
	record(s, SIM_TR_REFUSED, -1, SIM_MAX_INFLIGHT);
	t->state = SIM_TRACE_FAILED;
	t->end_us = s->now;
}

void sim_trace_note(struct sim *s, enum sim_trace_kind kind, enum sim_trace_where where,
                    int row, int64_t arg)
{
	struct sim_trace *t = &s->follow.t;

	/* The wait that just ended, when the entry tells it. */
	if (kind == SIM_TR_CONNECTED)
		arg = t->where == SIM_AT_POOL ? s->now - t->since_us : 0;
	if (kind == SIM_TR_RETRY)
		t->tries = (int)arg;
	record(s, kind, row, arg);
	move(s, where, row);
	if (kind == SIM_TR_POOL_QUEUE || kind == SIM_TR_LOCK_QUEUE) {
		s->follow.hint = (size_t)arg - 1;
		s->follow.milestone = arg / 2;
	}
}

/* Why the attempt ended badly, told from where it was. */
void sim_trace_fail(struct sim *s, const struct sim_req *r, bool abandoned)
{
	const struct sim_trace *t = &s->follow.t;
	enum sim_trace_kind k = SIM_TR_ERROR;

	if (abandoned) {
		k = SIM_TR_CLIENT_TIMEOUT;
	} else if (t->where == SIM_AT_POOL) {
		k = SIM_TR_POOL_TIMEOUT;
	} else if (t->where == SIM_AT_LOCK_WAIT) {
		/* as cancel_at in sim.c decided: the earlier deadline,
		 * statement_timeout on a tie */
		const struct sim_timeouts *to = &s->tmo[r->gen];
		int64_t st = to->stmt_us > 0 ? r->enq_us + to->stmt_us : INT64_MAX;
		bool by_lock = to->lock_us > 0 && r->slept_us + to->lock_us < st;
		k = by_lock ? SIM_TR_LOCK_TIMEOUT : SIM_TR_STMT_TIMEOUT;
	}
	/* Its client gave up in the lock queue: the statement stays there. */
	record(s, k, t->where == SIM_AT_LOCK_WAIT ? t->row : -1,
	       abandoned && t->where == SIM_AT_LOCK_WAIT);
	move(s, SIM_AT_OTHER, -1);
}

void sim_trace_end(struct sim *s, enum sim_trace_state how)
{
	struct sim_trace *t = &s->follow.t;

	if (how == SIM_TRACE_COMPLETED)
		record(s, t->where == SIM_AT_HOLD || t->where == SIM_AT_FLUSH
		          ? SIM_TR_COMMITTED : SIM_TR_ACKED, t->row, 0);
	else
		record(s, SIM_TR_GAVE_UP, -1, t->tries);
	move(s, SIM_AT_OTHER, -1);
	t->state = how;
	t->end_us = s->now;
	/* The record may be freed and reused by another like from here. */
	s->follow.like = 0;
}

void sim_trace_herd(struct sim *s, int row, size_t woken)
{
	struct sim_trace *t = &s->follow.t;

	if (sim_followed(s, &s->rows[row].req)) {
		t->wakes++;
		record(s, SIM_TR_WON, row, (int64_t)t->wakes);
		return;
	}
	if (t->where != SIM_AT_LOCK_WAIT || t->row != row)
		return;
	/* The first woken - 1 of the queue lost the draw (one was taken out). */
	if (position(s) < (int64_t)woken) {
		t->wakes++;
		if (t->wakes == 1)
			record(s, SIM_TR_WOKEN, row, 1);
	}
	milestone(s);
}

void sim_trace_tick(struct sim *s)
{
	milestone(s);
}

void sim_trace_found(struct sim *s, const struct sim_req *r, int64_t lat_us)
{
	if (lat_us > s->follow.best_lat) {
		s->follow.best_lat = lat_us;
		s->follow.best_n = s->likes[r->like].n;
	}
}

/* ---- what front ends call ---- */

/* Follow nobody, not recorded: the public calls record themselves. */
static void follow_clear(struct sim *s)
{
	s->follow.want = 0;
	s->follow.like = 0;
	s->follow.search = false;
	memset(&s->follow.t, 0, sizeof s->follow.t);
}

int sim_follow_nth(struct sim *s, uint64_t n)
{
	follow_clear(s);
	sim_live_call(s, SIM_CALL_FOLLOW_NTH, (int64_t)n);
	if (n <= s->offered)
		return -1;
	s->follow.want = n;
	s->follow.t.state = SIM_TRACE_WAITING;
	s->follow.t.n = n;
	return 0;
}

void sim_follow_next(struct sim *s)
{
	sim_follow_nth(s, s->offered + 1);
}

void sim_follow_off(struct sim *s)
{
	follow_clear(s);
	sim_live_call(s, SIM_CALL_FOLLOW_OFF, 0);
}

void sim_follow_search(struct sim *s)
{
	follow_clear(s);
	s->follow.search = true;
	s->follow.best_n = 0;
	s->follow.best_lat = -1;
	s->follow.want = s->offered + 1;
}

uint64_t sim_follow_found(const struct sim *s, int64_t *lat_us)
{
	if (lat_us)
		*lat_us = s->follow.best_lat;
	return s->follow.best_n;
}

/* The oldest of q's likes that is not an orphan: its index, or q->n. */
static size_t oldest_in(const struct sim_queue *q, int64_t *first)
{
	size_t best = q->n;

	for (size_t i = 0; i < q->n; i++) {
		const struct sim_req *r = sim_queue_at(q, i);
		if (r->kind == SIM_REQ_COUNTER && !r->orphan && r->first_us < *first) {
			*first = r->first_us;
			best = i;
		}
	}
	return best;
}

/* Where the slowest was found: a queue, a holder, or a slot of the slab. */
struct found {
	struct sim_req *r;
	enum sim_trace_where where;
	int row;
	int64_t since;        /* in where since (a holder: in the lock queue since) */
	int64_t locked;       /* a holder: when it got the lock; -1 */
	size_t index;         /* in its queue */
};

static void consider_queue(struct sim *s, struct sim_queue *q, enum sim_trace_where where,
                           int row, int64_t *first, struct found *f)
{
	size_t i = oldest_in(q, first);

	if (i < q->n) {
		f->r = sim_queue_at_mut(q, i);
		f->where = where;
		f->row = row;
		f->since = f->r->enq_us;
		f->locked = -1;
		f->index = i;
	}
	(void)s;
}

/* What a like picked in flight went through before, as far as its
 * record tells: up to f->since its time is SIM_AT_BEFORE, unless it is
 * in (or holds) a lock, where its attempt began at attempt_us, took a
 * connection after its pool wait, spent exactly outside_us outside the
 * lock (true unless CPUs stretch it) and joined the queue at f->since. */
static void past(struct sim *s, const struct found *f)
{
	struct sim_trace *t = &s->follow.t;
	int64_t att = f->r->attempt_us, pool = f->since - att - s->outside_us;
	bool exact = s->c.cores == 0 || s->cpu_client_us == 0;

	t->spent_us[SIM_AT_BEFORE] = f->since - f->r->first_us;
	if (f->where != SIM_AT_LOCK_WAIT && f->where != SIM_AT_HOLD)
		return;
	if (exact && pool >= 0) {
		t->spent_us[SIM_AT_BEFORE] = att - f->r->first_us;   /* earlier attempts */
		if (f->r->tries > 1)
			record_at(s, att, SIM_TR_RETRY, -1, f->r->tries);
		t->spent_us[SIM_AT_POOL] = pool;
		record_at(s, att + pool, SIM_TR_CONNECTED, -1, pool);
		if (s->outside_us > 0) {
			t->spent_us[SIM_AT_OUTSIDE] = s->outside_us;
			record_at(s, att + pool, SIM_TR_OUTSIDE, -1, 0);
		}
	}
	record_at(s, f->since, SIM_TR_LOCK_QUEUE, f->row, 0);   /* position: not known */
	if (f->locked >= 0) {
		t->spent_us[SIM_AT_LOCK_WAIT] = f->locked - f->since;
		record_at(s, f->locked, SIM_TR_LOCKED, f->row, f->locked - f->since);
	}
}

int sim_follow_slowest(struct sim *s)
{
	struct found f = { NULL, SIM_AT_BEFORE, -1, 0, -1, 0 };
	int64_t first = INT64_MAX;
	bool *free_slot;

	follow_clear(s);
	sim_live_call(s, SIM_CALL_FOLLOW_SLOWEST, 0);
	consider_queue(s, &s->pool[POOL_MAIN].waiters, SIM_AT_POOL, -1, &first, &f);
	if (s->counter_pool != &s->pool[POOL_MAIN])
		consider_queue(s, &s->pool[POOL_COUNTER].waiters, SIM_AT_POOL, -1, &first, &f);
	/* the INCRs in flight, a plain ring: seen as a queue of one run */
	struct sim_run incrs = { s->redis_q, 0 };
	consider_queue(s, &(struct sim_queue){ s->redis_q.n, &incrs, 1, 1 }, SIM_AT_OTHER, -1,
	               &first, &f);
	for (int i = 0; i < s->nrows; i++) {
		struct sim_row *row = &s->rows[i];
		consider_queue(s, &row->q, SIM_AT_LOCK_WAIT, i, &first, &f);
		if ((row->holder == HOLD_REQ || row->holder == HOLD_WAKING) &&
		    !row->req.orphan && row->req.first_us < first) {
			first = row->req.first_us;
			f.r = &row->req;
			f.where = row->holder == HOLD_WAKING ? SIM_AT_LOCK_WAIT : SIM_AT_HOLD;
			f.row = i;
			f.since = row->req.enq_us;   /* its lock wait began then */
			f.locked = row->holder == HOLD_REQ ? row->got_us : -1;
		}
	}
	/* The slab's slots in use: work outside the lock, a backoff, an insert. */
	free_slot = xcalloc(s->slab_cap ? s->slab_cap : 1, sizeof *free_slot);
	for (uint32_t k = 0; k < s->slab_nfree; k++)
		free_slot[s->slab_free[k]] = true;
	for (uint32_t k = 0; k < s->slab_cap; k++) {
		struct sim_req *r = &s->slab[k];
		if (!free_slot[k] && r->kind == SIM_REQ_COUNTER && !r->orphan && r->first_us < first) {
			first = r->first_us;
			f.r = r;
			f.where = SIM_AT_BEFORE;   /* which of them, the slab does not say */
			f.row = -1;
			f.since = r->first_us;
			f.locked = -1;
		}
	}
	free(free_slot);
	if (!f.r)
		return -1;
	if (!f.r->like)
		f.r->like = sim_like_new(s);
	s->follow.like = f.r->like;
	start(s, 0, f.r->first_us);
	s->follow.t.tries = f.r->tries;
	record_at(s, f.r->first_us, SIM_TR_ARRIVED, -1, 0);
	past(s, &f);
	s->follow.t.where = f.where;
	s->follow.t.row = f.row;
	s->follow.t.since_us = f.since;
	if (f.locked >= 0)
		s->follow.t.since_us = f.locked;
	s->follow.hint = f.index;
	record(s, SIM_TR_PICKED, f.row, position(s));
	s->follow.milestone = position(s) / 2;
	return 0;
}

void sim_trace_get(const struct sim *s, struct sim_trace *out)
{
	const struct sim_queue *q;

	*out = s->follow.t;
	if (out->state != SIM_TRACE_LIVE)
		return;
	out->spent_us[out->where] += s->now - out->since_us;
	out->since_us = s->now;
	q = queue_of(s);
	out->position = q ? (int64_t)index_in(s, q, s->follow.hint) + 1 : 0;
}

/* ---- in words ---- */

static const char *const where_names[SIM_AT_N] = {
	[SIM_AT_BEFORE] = "before followed",
	[SIM_AT_POOL] = "pool wait",
	[SIM_AT_OUTSIDE] = "outside",
	[SIM_AT_LOCK_WAIT] = "lock wait",
	[SIM_AT_HOLD] = "hold",
	[SIM_AT_FLUSH] = "flush",
	[SIM_AT_BACKOFF] = "backoff",
	[SIM_AT_OTHER] = "other",
};

const char *sim_trace_where_name(enum sim_trace_where w)
{
	return (unsigned)w < SIM_AT_N ? where_names[w] : "?";
}

const char *sim_trace_state_name(enum sim_trace_state st)
{
	static const char *const names[] = {
		"none", "waiting", "live", "completed", "failed", "abandoned"
	};
	return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : "?";
}

/* "row 3" for a sharded path, "the row" for one row */
static const char *row_words(char *buf, size_t len, int row)
{
	snprintf(buf, len, "row %d", row);
	return buf;
}

void sim_trace_line(const struct sim_trace *t, int i, char *buf, size_t len)
{
	const struct sim_trace_event *e;
	char rw[24];
	double ms;

	if (i < 0 || i >= t->nevents) {
		snprintf(buf, len, "%s", "");
		return;
	}
	e = &t->ev[i];
	ms = (double)e->arg / 1000.0;
	row_words(rw, sizeof rw, e->row);
	switch ((enum sim_trace_kind)e->kind) {
	case SIM_TR_ARRIVED:
		if (t->n)
			snprintf(buf, len, "arrived (like #%" PRIu64 ")", t->n);
		else
			snprintf(buf, len, "arrived");
		break;
	case SIM_TR_PICKED:
		if (e->arg > 0)
			snprintf(buf, len, "followed from here (the oldest in flight), "
			         "position %" PRId64, e->arg);
		else
			snprintf(buf, len, "followed from here (the oldest in flight)");
		break;
	case SIM_TR_POOL_QUEUE:
		snprintf(buf, len, "no free connection: waits in the pool at position %" PRId64, e->arg);
		break;
	case SIM_TR_CONNECTED:
		if (e->arg > 0)
			snprintf(buf, len, "got a connection after %.3f ms", ms);
		else
			snprintf(buf, len, "got a connection at once");
		break;
	case SIM_TR_OUTSIDE:
		snprintf(buf, len, "works outside the lock (round trips, app)");
		break;
	case SIM_TR_LOCK_QUEUE:
		if (e->arg > 0)
			snprintf(buf, len, "joined %s's lock queue at position %" PRId64, rw, e->arg);
		else
			snprintf(buf, len, "joined %s's lock queue", rw);
		break;
	case SIM_TR_POSITION:
		if (e->row >= 0)
			snprintf(buf, len, "position %" PRId64 " in %s's lock queue", e->arg, rw);
		else
			snprintf(buf, len, "position %" PRId64 " in the pool's queue", e->arg);
		break;
	case SIM_TR_WOKEN:
		snprintf(buf, len, "woken by a commit, lost the draw, sleeps again");
		break;
	case SIM_TR_WON:
		snprintf(buf, len, "woken by a commit (wake %" PRId64 "), drawn to go next", e->arg);
		break;
	case SIM_TR_LOCKED:
		if (e->arg > 0)
			snprintf(buf, len, "got %s's lock after %.3f ms", rw, ms);
		else
			snprintf(buf, len, "got %s's lock at once", rw);
		break;
	case SIM_TR_FLUSH_WAIT:
		snprintf(buf, len, "commit waits for the log's flush (lock still held)");
		break;
	case SIM_TR_COMMITTED:
		snprintf(buf, len, "committed, released %s", rw);
		break;
	case SIM_TR_ACKED:
		snprintf(buf, len, "done without taking the row lock");
		break;
	case SIM_TR_POOL_TIMEOUT:
		snprintf(buf, len, "pool timeout: no connection in time");
		break;
	case SIM_TR_CLIENT_TIMEOUT:
		snprintf(buf, len, e->arg ? "client timeout: gave up; the statement stays queued"
		                          : "client timeout: gave up");
		break;
	case SIM_TR_LOCK_TIMEOUT:
		snprintf(buf, len, "lock_timeout: the server cancelled it");
		break;
	case SIM_TR_STMT_TIMEOUT:
		snprintf(buf, len, "statement_timeout: the server cancelled it");
		break;
	case SIM_TR_ERROR:
		snprintf(buf, len, "the attempt failed");
		break;
	case SIM_TR_RETRY:
		snprintf(buf, len, "retries: attempt %" PRId64, e->arg);
		break;
	case SIM_TR_GAVE_UP:
		snprintf(buf, len, "no retry left after %" PRId64 " attempt%s", e->arg,
		         e->arg == 1 ? "" : "s");
		break;
	case SIM_TR_REFUSED:
		snprintf(buf, len, "refused: %" PRId64 " already in the system", e->arg);
		break;
	case SIM_TR_NKINDS:
		snprintf(buf, len, "?");
		break;
	}
}

static const char *const kind_keys[SIM_TR_NKINDS] = {
	"arrived", "picked", "pool_queue", "connected", "outside", "lock_queue",
	"position", "woken", "won", "locked", "flush_wait", "committed", "acked",
	"pool_timeout", "client_timeout", "lock_timeout", "statement_timeout", "error",
	"retry", "gave_up", "refused"
};

void sim_trace_json(FILE *f, const struct sim_trace *t)
{
	static const char *const where_keys[SIM_AT_N] = {
		"before", "pool_wait", "outside", "lock_wait", "hold", "flush", "backoff", "other"
	};
	char line[160];

	if (t->state == SIM_TRACE_NONE) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"request\":%" PRIu64 ",\"state\":\"%s\",\"arrived_ms\":%.3f,",
	        t->n, sim_trace_state_name((enum sim_trace_state)t->state),
	        (double)t->first_us / 1000.0);
	if (t->end_us >= 0)
		fprintf(f, "\"latency_ms\":%.3f,", (double)(t->end_us - t->first_us) / 1000.0);
	else
		fputs("\"latency_ms\":null,", f);
	fprintf(f, "\"tries\":%d,\"wakes\":%" PRIu64 ",\"spent_ms\":{", t->tries, t->wakes);
	for (int w = 0; w < SIM_AT_N; w++)
		fprintf(f, "%s\"%s\":%.3f", w ? "," : "", where_keys[w],
		        (double)t->spent_us[w] / 1000.0);
	fprintf(f, "},\"dropped\":%u,\"events\":[", t->dropped);
	for (int i = 0; i < t->nevents; i++) {
		const struct sim_trace_event *e = &t->ev[i];
		sim_trace_line(t, i, line, sizeof line);
		fprintf(f, "%s{\"t_ms\":%.3f,\"kind\":\"%s\",", i ? "," : "",
		        (double)e->t_us / 1000.0,
		        e->kind < SIM_TR_NKINDS ? kind_keys[e->kind] : "?");
		if (e->row >= 0)
			fprintf(f, "\"row\":%d,", e->row);
		fprintf(f, "\"arg\":%" PRId64 ",\"text\":", e->arg);
		util_json_str(f, line);
		fputc('}', f);
	}
	fputs("]}", f);
}
