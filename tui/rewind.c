/*
 * rewind.c: checkpoints of one run and its record (see rewind.h).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim_clone.h"
#include "engine/xmalloc.h"
#include "tui/glyph.h"
#include "tui/rewind.h"

struct mark {
	struct sim_ckpt *k;       /* its record is the run's up to it */
};

struct tui_rewind {
	struct mark m[TUI_REWIND_MAX];   /* oldest first; m[0] is t = 0 */
	int n;
	size_t bytes;             /* held by m[] */
	int64_t every_us;         /* spacing of new checkpoints */
	struct sim_record *rec;   /* the engine's record as of the latest
	                             call: the whole run's, its future too */
	int64_t end_us;
	struct sim_config first;  /* the settings the run was built with */
};

static int64_t mark_t(const struct mark *m)
{
	return sim_ckpt_time(m->k);
}

static void drop(struct tui_rewind *r, int i)
{
	r->bytes -= sim_ckpt_bytes(r->m[i].k);
	sim_ckpt_free(r->m[i].k);
}

/* Keep m[0] and every other one after it; the spacing doubles. */
static void thin(struct tui_rewind *r)
{
	int kept = 1;

	for (int i = 1; i < r->n; i++)
		if (i % 2 == 0)
			r->m[kept++] = r->m[i];
		else
			drop(r, i);
	r->n = kept;
	r->every_us *= 2;
}

static void take(struct tui_rewind *r, const struct sim *s)
{
	while (r->n > 1 && (r->n == TUI_REWIND_MAX || r->bytes > TUI_REWIND_BYTES))
		thin(r);
	r->m[r->n].k = sim_ckpt_take(s, false);   /* a screen prints no CSV */
	r->bytes += sim_ckpt_bytes(r->m[r->n].k);
	r->n++;
}

struct tui_rewind *tui_rewind_new(const struct sim *s)
{
	struct tui_rewind *r = xcalloc(1, sizeof *r);

	assert(sim_now(s) == 0);
	r->every_us = TUI_REWIND_EVERY;
	r->first = *sim_config(s);
	take(r, s);
	return r;
}

void tui_rewind_free(struct tui_rewind *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++)
		drop(r, i);
	sim_record_free(r->rec);
	free(r);
}

void tui_rewind_play(struct tui_rewind *r, struct sim *s, int64_t t_us)
{
	for (;;) {
		/* The calls of the record s has not made yet (it counts those
		 * it has), due at this moment, in the order they were made. */
		size_t i = sim_record_calls(s), len = sim_record_len(r->rec);
		while (i < len && sim_record_at(r->rec, i) <= sim_now(s))
			sim_record_apply(s, r->rec, i++);
		if (sim_now(s) >= t_us)
			break;
		int64_t next = t_us;
		int64_t due = mark_t(&r->m[r->n - 1]) + r->every_us;
		if (i < len && sim_record_at(r->rec, i) < next)
			next = sim_record_at(r->rec, i);
		if (due > sim_now(s) && due < next)
			next = due;
		sim_advance(s, next);
		/* Checkpoints only past the last one: a replay of the past finds
		 * its own already kept. */
		if (sim_now(s) >= mark_t(&r->m[r->n - 1]) + r->every_us)
			take(r, s);
	}
	if (t_us > r->end_us)
		r->end_us = t_us;
}

void tui_rewind_mark(struct tui_rewind *r, const struct sim *s)
{
	int64_t now = sim_now(s);

	/* What was kept after now belongs to another future. */
	while (r->n > 1 && mark_t(&r->m[r->n - 1]) > now)
		drop(r, --r->n);
	r->end_us = now;
	sim_record_free(r->rec);
	r->rec = sim_record_take(s);
}

void tui_rewind_set(struct tui_rewind *r, struct sim *s, const struct sim_config *c)
{
	sim_set(s, c);
	tui_rewind_mark(r, s);
}

void tui_rewind_inject(struct tui_rewind *r, struct sim *s, enum sim_fault f)
{
	sim_inject(s, f);
	tui_rewind_mark(r, s);
}

/* The newest checkpoint at or before t_us. */
static int before(const struct tui_rewind *r, int64_t t_us)
{
	int i = r->n - 1;

	while (i > 0 && mark_t(&r->m[i]) > t_us)
		i--;
	return i;
}

int64_t tui_rewind_before(const struct tui_rewind *r, int64_t t_us)
{
	return mark_t(&r->m[before(r, t_us)]);
}

struct sim *tui_rewind_to(struct tui_rewind *r, int64_t t_us)
{
	int i = before(r, t_us);
	struct sim *s;

	s = sim_ckpt_resume(r->m[i].k);
	tui_rewind_play(r, s, t_us);
	return s;
}

const struct sim_config *tui_rewind_settings(const struct tui_rewind *r, const struct sim *s)
{
	const struct sim_config *c = sim_record_settings(s);

	return c ? c : &r->first;
}

int64_t tui_rewind_end(const struct tui_rewind *r)
{
	return r->end_us;
}

int tui_rewind_count(const struct tui_rewind *r)
{
	return r->n;
}

size_t tui_rewind_bytes(const struct tui_rewind *r)
{
	return r->bytes;
}

void tui_rewind_bar(struct tui_screen *scr, int x, int y, int w, const struct tui_view *v)
{
	static const char keys[] = "< > step  Home End  Space plays on";
	const struct tui_glyphs *g = tui_glyphs(v->ascii);
	char label[64];
	int x0 = x, lw, bw, at;

	tui_screen_fill(scr, (struct tui_rect){x, y, w, 1}, ' ', TUI_NORMAL);
	lw = snprintf(label, sizeof label, " %.1f / %.1f s ", v->scrub_s, v->scrub_end_s);
	x += tui_screen_text(scr, x, y, w, TUI_KEY, "REWIND");
	x += tui_screen_text(scr, x, y, w, TUI_BOLD, label);
	bw = w - 6 - lw - (int)strlen(keys) - 2;
	if (bw >= 10) {
		at = v->scrub_end_s > 0 ? (int)((bw - 1) * v->scrub_s / v->scrub_end_s + 0.5) : bw - 1;
		for (int i = 0; i < bw; i++)
			tui_screen_put(scr, x + i, y, i == at ? g->hold : g->hline,
			               i <= at ? TUI_BOLD : TUI_DIM);
		x += bw + 1;
	}
	tui_screen_text(scr, x, y, w - (x - x0), TUI_DIM, keys);
}
