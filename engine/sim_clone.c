/*
 * sim_clone.c: deep copies of struct sim (see sim_clone.h).
 *
 * One function, copy(), walks every member of struct sim: the plain ones
 * come with the struct assignment, every pointer gets a buffer of its own
 * here, and the one pointer into the struct itself (counter_pool) is aimed
 * at the copy's pool. A compact copy (a checkpoint) gives each growable
 * buffer only the room its contents take; growth later starts from there,
 * which changes no outcome: the heaps keep their order, the rings their
 * FIFO order, the slab its indices and free list.
 *
 * A checkpoint packs its queues, which can hold a hundred thousand
 * waiters (the viral video's pool): each request takes a flag byte, its
 * write path's byte and the varint gap from the one before it, a few
 * bytes instead of 40, since most fields of a waiting request equal its
 * arrival time or their first value; its generation (the timeouts it
 * started under) follows only where it differs from the one before.
 * Resuming unpacks them in the same order, into runs as they were.
 *
 * Whoever adds a member to struct sim must handle it in copy(): the
 * assertion below on the size of struct sim fails the build until they
 * have looked (then update the size beside it).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim_clone.h"
#include "engine/sim_impl.h"
#include "engine/xmalloc.h"

#if defined(__x86_64__) && defined(__LP64__)
_Static_assert(sizeof(struct sim) == 182672,
               "struct sim changed: copy the new member in copy() of "
               "engine/sim_clone.c, then update this size");
#endif

struct sim_ckpt {
	struct sim *s;            /* compact, its rings packed: never advanced */
	uint8_t *q;               /* the packed requests */
	size_t bytes;
};

/* How copy() goes: a runnable copy, or a checkpoint (compact, its rings
 * packed into q); from a checkpoint, its rings are read back from q. */
struct how {
	bool compact;
	bool history;             /* the series' long history too (for --csv) */
	size_t bytes;             /* allocated so far */
	uint8_t *q;               /* packed requests */
	size_t n, cap;            /* written, room */
	size_t rd;                /* read so far */
};

static void put(struct how *h, uint8_t b)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 4096;
		h->q = xrealloc(h->q, h->cap);
	}
	h->q[h->n++] = b;
}

/* v as LEB128: 7 bits a byte, the high bit set on all but the last. */
static void put_var(struct how *h, uint64_t v)
{
	while (v >= 0x80) {
		put(h, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put(h, (uint8_t)v);
}

static uint64_t get_var(struct how *h)
{
	uint64_t v = 0;

	for (int sh = 0;; sh += 7) {
		uint8_t b = h->q[h->rd++];
		v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return v;
	}
}

/* Signed gaps, small either way: 0, -1, 1, -2 ... -> 0, 1, 2, 3 ... */
static uint64_t zig(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t zag(uint64_t u)
{
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

enum { P_ATTEMPT = 1, P_ENQ = 2, P_SLEPT = 4, P_LIKE = 8, P_TRIES = 16, P_ORPHAN = 32 };

/* One request: a flag byte saying which fields differ from their usual
 * value (the field before it, like 0, tries 1, not orphaned) and its
 * kind, then the arrival's gap from the previous request's, then the
 * fields that differ. */
static void pack(struct how *h, const struct sim_req *r, int64_t *prev, unsigned *gen)
{
	unsigned f = (r->attempt_us != r->first_us ? P_ATTEMPT : 0) |
	             (r->enq_us != r->attempt_us ? P_ENQ : 0) |
	             (r->slept_us != r->enq_us ? P_SLEPT : 0) |
	             (r->like ? P_LIKE : 0) | (r->tries != 1 ? P_TRIES : 0) |
	             (r->orphan ? P_ORPHAN : 0);

	assert(r->kind < 4);
	put(h, (uint8_t)(f | (unsigned)r->kind << 6));
	/* the write path it arrived under; the high bit: a new generation */
	put(h, (uint8_t)(r->path | (r->gen != *gen ? 0x80 : 0)));
	if (r->gen != *gen)
		put_var(h, *gen = r->gen);
	put_var(h, zig(r->first_us - *prev));
	*prev = r->first_us;
	if (f & P_ATTEMPT)
		put_var(h, zig(r->attempt_us - r->first_us));
	if (f & P_ENQ)
		put_var(h, zig(r->enq_us - r->attempt_us));
	if (f & P_SLEPT)
		put_var(h, zig(r->slept_us - r->enq_us));
	if (f & P_LIKE)
		put_var(h, r->like);
	if (f & P_TRIES)
		put_var(h, r->tries);
	if (f & P_ORPHAN)
		put_var(h, r->orphan);
}

static void unpack(struct how *h, struct sim_req *r, int64_t *prev, unsigned *gen)
{
	unsigned f = h->q[h->rd++], p = h->q[h->rd++];

	r->kind = (uint8_t)(f >> 6) & 3;
	r->path = p & 0x1f;
	if (p & 0x80)
		*gen = (unsigned)get_var(h);
	r->gen = (uint16_t)*gen;
	r->first_us = *prev = *prev + zag(get_var(h));
	r->attempt_us = f & P_ATTEMPT ? r->first_us + zag(get_var(h)) : r->first_us;
	r->enq_us = f & P_ENQ ? r->attempt_us + zag(get_var(h)) : r->attempt_us;
	r->slept_us = f & P_SLEPT ? r->enq_us + zag(get_var(h)) : r->enq_us;
	r->like = f & P_LIKE ? (uint32_t)get_var(h) : 0;
	r->tries = f & P_TRIES ? (uint8_t)get_var(h) : 1;
	r->orphan = f & P_ORPHAN ? (uint8_t)get_var(h) & 1 : 0;
}

/* n of cap elements of size each from src into a new buffer of cap
 * (NULL when cap is 0); adds the bytes to *bytes. */
static void *dup(const void *src, size_t n, size_t cap, size_t size, size_t *bytes)
{
	void *d;

	if (cap == 0)
		return NULL;
	d = xmalloc(cap * size);
	if (n)
		memcpy(d, src, n * size);
	*bytes += cap * size;
	return d;
}

/* A runnable copy of ring q, oldest at index 0, with q's room. */
static void ring_dup(struct sim_ring *d, const struct sim_ring *q, size_t *bytes)
{
	d->head = 0;
	d->n = q->n;
	d->cap = q->cap;
	d->r = q->cap ? xmalloc(q->cap * sizeof *d->r) : NULL;
	*bytes += q->cap * sizeof *d->r;
	for (size_t i = 0; i < q->n; i++)
		d->r[i] = *sim_ring_at(q, i);
}

/* A copy of FIFO l, oldest first; a compact one has no spare room. */
static void fifo_dup(struct sim_fifo *d, const struct sim_fifo *l, bool compact, size_t *bytes)
{
	d->head = 0;
	d->n = l->n;
	d->cap = compact ? l->n : l->cap;
	d->ev = d->cap ? xmalloc(d->cap * sizeof *d->ev) : NULL;
	*bytes += d->cap * sizeof *d->ev;
	for (uint32_t k = 0, i = l->head; k < l->n; k++) {
		d->ev[k] = l->ev[i];
		if (++i == l->cap)
			i = 0;
	}
}

/* The in-memory store's INCRs in flight, a plain ring: packed for a
 * checkpoint (d->r NULL, n kept), unpacked from one, copied otherwise. */
static void redis_copy(struct sim_ring *d, const struct sim_ring *q, struct how *h)
{
	int64_t prev = 0;
	unsigned gen = 0;

	if (h->compact) {
		for (size_t i = 0; i < q->n; i++)
			pack(h, sim_ring_at(q, i), &prev, &gen);
		d->r = NULL;
		d->head = d->cap = 0;
		d->n = q->n;
		return;
	}
	if (q->r || !q->n) {
		ring_dup(d, q, &h->bytes);
		return;
	}
	sim_ring_init(d);
	for (size_t i = 0; i < q->n; i++) {
		struct sim_req r;
		unpack(h, &r, &prev, &gen);
		sim_ring_push(d, &r);
	}
	h->bytes += d->cap * sizeof *d->r;
}

/* The queue's requests in order: packed into h->q for a checkpoint (its
 * runs left out), unpacked from it when q is a checkpoint's (no runs,
 * n > 0), copied run by run otherwise. */
static void queue_copy(struct sim_queue *d, const struct sim_queue *q, struct how *h)
{
	int64_t prev = 0;
	unsigned gen = 0;

	sim_queue_init(d);
	if (h->compact) {
		for (size_t k = 0; k < q->nrun; k++)
			for (size_t i = 0; i < q->run[k].r.n; i++)
				pack(h, sim_ring_at(&q->run[k].r, i), &prev, &gen);
		d->n = q->n;
		return;
	}
	if (!q->nrun) {
		for (size_t i = 0; i < q->n; i++) {
			struct sim_req r;
			unpack(h, &r, &prev, &gen);
			sim_queue_push(d, &r);
		}
		for (size_t k = 0; k < d->nrun; k++)
			h->bytes += d->run[k].r.cap * sizeof(struct sim_req);
		h->bytes += d->cap * sizeof *d->run;
		return;
	}
	d->run = dup(q->run, q->nrun, q->cap, sizeof *q->run, &h->bytes);
	d->nrun = q->nrun;
	d->cap = q->cap;
	d->n = q->n;
	for (size_t k = 0; k < q->nrun; k++)
		ring_dup(&d->run[k].r, &q->run[k].r, &h->bytes);
}

static struct sim *copy(const struct sim *s, struct how *h)
{
	struct sim *d = xmalloc(sizeof *d);
	size_t nrows = (size_t)s->nrows, cap, *bytes = &h->bytes;
	bool compact = h->compact;

	*d = *s;     /* every plain member: config, clocks, counters, rng, hists */
	*bytes += sizeof *d;

	cap = compact ? s->heap.n : s->heap.cap;
	d->heap.ev = dup(s->heap.ev, s->heap.n, cap, sizeof *s->heap.ev, bytes);
	d->heap.cap = cap;
	for (int i = 0; i < SIM_NFIFOS; i++)
		fifo_dup(&d->fifos[i], &s->fifos[i], compact, bytes);

	d->cpu.q = dup(s->cpu.q, (size_t)s->cpu.nq, (size_t)s->cpu.nq, sizeof *s->cpu.q, bytes);
	for (int i = 0; i < s->cpu.nq; i++) {
		const struct sim_cpu_q *q = &s->cpu.q[i];
		struct sim_cpu_q *dq = &d->cpu.q[i];
		cap = compact ? q->n : q->cap;
		dq->jobs = dup(q->jobs, q->n, cap, sizeof *q->jobs, bytes);
		dq->cap = cap;
		dq->idle_at = q->idle_at ? dup(q->idle_at, (size_t)q->cores, (size_t)q->cores,
		                               sizeof *q->idle_at, bytes) : NULL;
	}

	d->rows = dup(s->rows, nrows, nrows, sizeof *s->rows, bytes);
	for (size_t i = 0; i < nrows; i++)
		queue_copy(&d->rows[i].q, &s->rows[i].q, h);
	for (int i = 0; i < 2; i++)
		queue_copy(&d->pool[i].waiters, &s->pool[i].waiters, h);
	d->counter_pool = &d->pool[s->counter_pool - s->pool];
	redis_copy(&d->redis_q, &s->redis_q, h);

	/* The slab keeps its size: its free list holds indices into it. */
	d->slab = dup(s->slab, s->slab_cap, s->slab_cap, sizeof *s->slab, bytes);
	d->slab_free = dup(s->slab_free, s->slab_nfree, s->slab_cap, sizeof *s->slab_free, bytes);

	cap = compact ? s->likes_n : s->likes_cap;
	d->likes = dup(s->likes, s->likes_n, cap, sizeof *s->likes, bytes);
	d->likes_cap = (uint32_t)cap;

	/* The series adds without allocating: a runnable copy gets its full
	 * history buffer back. */
	d->series.recent = dup(s->series.recent, SIM_SNAP_SERIES, SIM_SNAP_SERIES,
	                       sizeof *s->series.recent, bytes);
	cap = compact ? s->series.nhist : SIM_SERIES_MAX;
	if (!h->history) {        /* the history starts over from here */
		cap = compact ? 0 : SIM_SERIES_MAX;
		d->series.nhist = 0;
		d->series.stride = 1;
		d->series.npend = 0;
		memset(&d->series.pend, 0, sizeof d->series.pend);
	}
	d->series.hist = dup(s->series.hist, d->series.nhist, cap, sizeof *s->series.hist, bytes);

	d->versions = dup(s->versions, nrows, nrows, sizeof *s->versions, bytes);
	d->pages_hi = dup(s->pages_hi, nrows, nrows, sizeof *s->pages_hi, bytes);
	/* The log's two lists share one room: a checkpoint's has the longer. */
	cap = !compact ? (size_t)s->wal.cap : (size_t)(s->wal.ncur > s->wal.nnext ? s->wal.ncur : s->wal.nnext);
	d->wal.cur = dup(s->wal.cur, (size_t)s->wal.ncur, cap, sizeof *s->wal.cur, bytes);
	d->wal.next = dup(s->wal.next, (size_t)s->wal.nnext, cap, sizeof *s->wal.next, bytes);
	d->wal.cap = (int)cap;

	/* What sim_set was given and what it changed: a replay from here
	 * goes on recording after them. */
	cap = compact ? s->nsets : s->sets_cap;
	d->sets = dup(s->sets, s->nsets, cap, sizeof *s->sets, bytes);
	d->sets_cap = cap;
	cap = compact ? s->nchanges : s->changes_cap;
	d->changes = dup(s->changes, s->nchanges, cap, sizeof *s->changes, bytes);
	d->changes_cap = cap;
	cap = compact ? s->ntmo : s->tmo_cap;
	d->tmo = dup(s->tmo, s->ntmo, cap, sizeof *s->tmo, bytes);
	d->tmo_cap = cap;

	/* path and host point at the engine's constant tables: shared, as
	 * are the changes' field and option names. */
	return d;
}

struct sim *sim_clone(const struct sim *s)
{
	struct how h = { .compact = false, .history = true };

	return copy(s, &h);
}

struct sim_ckpt *sim_ckpt_take(const struct sim *s, bool history)
{
	struct sim_ckpt *k = xmalloc(sizeof *k);
	struct how h = { .compact = true, .history = history };

	k->s = copy(s, &h);
	k->q = h.n ? xrealloc(h.q, h.n) : NULL;   /* no spare room kept */
	if (!h.n)
		free(h.q);
	k->bytes = sizeof *k + h.bytes + h.n;
	return k;
}

struct sim *sim_ckpt_resume(const struct sim_ckpt *k)
{
	struct how h = { .compact = false, .history = true, .q = k->q };

	return copy(k->s, &h);
}

int64_t sim_ckpt_time(const struct sim_ckpt *k)
{
	return k->s->now;
}

size_t sim_ckpt_bytes(const struct sim_ckpt *k)
{
	return k->bytes;
}

void sim_ckpt_free(struct sim_ckpt *k)
{
	if (!k)
		return;
	sim_free(k->s);
	free(k->q);
	free(k);
}
