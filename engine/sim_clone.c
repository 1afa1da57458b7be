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
 * Whoever adds a member to struct sim must handle it in copy(): the
 * assertion below on the size of struct sim fails the build until they
 * have looked (then update the size beside it).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/sim_clone.h"
#include "engine/sim_impl.h"
#include "engine/xmalloc.h"

#if defined(__x86_64__) && defined(__LP64__)
_Static_assert(sizeof(struct sim) == 180888,
               "struct sim changed: copy the new member in copy() of "
               "engine/sim_clone.c, then update this size");
#endif

struct sim_ckpt {
	struct sim *s;            /* compact: never advanced */
	size_t bytes;
};

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

static size_t pow2_at_least(size_t n)
{
	size_t c = 16;

	while (c < n)
		c *= 2;
	return c;
}

/* The ring's requests, oldest at index 0. */
static void ring_copy(struct sim_ring *d, const struct sim_ring *q, bool compact,
                      size_t *bytes)
{
	size_t cap = compact ? (q->n ? pow2_at_least(q->n) : 0) : q->cap;

	d->r = cap ? xmalloc(cap * sizeof *d->r) : NULL;
	for (size_t i = 0; i < q->n; i++)
		d->r[i] = *sim_ring_at(q, i);
	d->head = 0;
	d->n = q->n;
	d->cap = cap;
	*bytes += cap * sizeof *d->r;
}

static struct sim *copy(const struct sim *s, bool compact, size_t *bytes)
{
	struct sim *d = xmalloc(sizeof *d);
	size_t nrows = (size_t)s->nrows, cap;

	*d = *s;     /* every plain member: config, clocks, counters, rng, hists */
	*bytes += sizeof *d;

	cap = compact ? s->heap.n : s->heap.cap;
	d->heap.ev = dup(s->heap.ev, s->heap.n, cap, sizeof *s->heap.ev, bytes);
	d->heap.cap = cap;

	cap = compact ? s->cpu.n : s->cpu.cap;
	d->cpu.jobs = dup(s->cpu.jobs, s->cpu.n, cap, sizeof *s->cpu.jobs, bytes);
	d->cpu.cap = cap;

	d->rows = dup(s->rows, nrows, nrows, sizeof *s->rows, bytes);
	for (size_t i = 0; i < nrows; i++)
		ring_copy(&d->rows[i].q, &s->rows[i].q, compact, bytes);
	for (int i = 0; i < 2; i++)
		ring_copy(&d->pool[i].waiters, &s->pool[i].waiters, compact, bytes);
	d->counter_pool = &d->pool[s->counter_pool - s->pool];
	ring_copy(&d->redis_q, &s->redis_q, compact, bytes);

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
	d->series.hist = dup(s->series.hist, s->series.nhist, cap, sizeof *s->series.hist, bytes);

	d->versions = dup(s->versions, nrows, nrows, sizeof *s->versions, bytes);
	d->pages_hi = dup(s->pages_hi, nrows, nrows, sizeof *s->pages_hi, bytes);
	d->wal.cur = dup(s->wal.cur, nrows, nrows, sizeof *s->wal.cur, bytes);
	d->wal.next = dup(s->wal.next, nrows, nrows, sizeof *s->wal.next, bytes);

	/* path and host point at the engine's constant tables: shared. */
	return d;
}

struct sim *sim_clone(const struct sim *s)
{
	size_t bytes = 0;

	return copy(s, false, &bytes);
}

struct sim_ckpt *sim_ckpt_take(const struct sim *s)
{
	struct sim_ckpt *k = xmalloc(sizeof *k);

	k->bytes = sizeof *k;
	k->s = copy(s, true, &k->bytes);
	return k;
}

struct sim *sim_ckpt_resume(const struct sim_ckpt *k)
{
	return sim_clone(k->s);
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
	free(k);
}
