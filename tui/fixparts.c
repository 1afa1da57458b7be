/*
 * fixparts.c: the log, the in-memory store, the app's buffer and the
 * append table, each with its flusher and the counter row.
 */
#include <stdio.h>
#include <string.h>

#include "tui/fixparts.h"
#include "tui/fmt.h"

#define LABEL_W 10    /* "consumer " */

/* What each fix calls its part and its flusher. */
struct kind {
	const char *head;       /* the panel's heading */
	const char *part;       /* the label of the part's line */
	const char *flusher;    /* the label of the flusher's line */
	int lines;              /* the part's own lines (the strip and its marker) */
};

static const struct kind *kind_of(enum sim_strategy st)
{
	static const struct kind queue = { "THE LOG", "log", "consumer", 2 };
	static const struct kind redis = { "IN-MEMORY STORE", "likes", "drain", 2 };
	static const struct kind buffer = { "APP BUFFER", "buffer", "flusher", 1 };
	static const struct kind append = { "APPEND TABLE", "rows", "rollup", 1 };

	switch (st) {
	case SIM_QUEUE:    return &queue;
	case SIM_REDIS:    return &redis;
	case SIM_COALESCE: return &buffer;
	case SIM_APPEND:   return &append;
	default:           return NULL;
	}
}

bool tui_fixparts_has(const struct sim_snapshot *snap)
{
	return kind_of(snap->config.strategy) != NULL;
}

int tui_fixparts_height(const struct sim_snapshot *snap, int w)
{
	const struct kind *k = kind_of(snap->config.strategy);
	(void)w;
	/* heading, the part, the flusher, the row, the books */
	return k ? 1 + k->lines + 3 : 0;
}

static void heading(struct tui_screen *s, struct tui_rect r, const struct sim_snapshot *snap,
                    const struct kind *k)
{
	const struct sim_config *c = &snap->config;
	char every[24], op[24], line[160];
	int x = r.x + tui_screen_text(s, r.x, r.y, r.w, TUI_HEAD, k->head);

	tui_fmt_ms(every, sizeof every, c->flush_ms);
	switch (c->strategy) {
	case SIM_QUEUE:
		snprintf(line, sizeof line, "  one partition, a batch every %s%s", every,
		         c->bug_no_fence ? ", NO FENCE" : " behind a fence");
		break;
	case SIM_REDIS:
		snprintf(op, sizeof op, "%g us", c->redis_op_us > 0 ? c->redis_op_us : 4);
		snprintf(line, sizeof line, "  one thread, %s a command; %s every %s", op,
		         c->bug_get_then_del ? "GET then DEL (the bug)" : "GETDEL", every);
		break;
	case SIM_COALESCE:
		snprintf(line, sizeof line, "  in the app's memory, +k every %s", every);
		break;
	default:
		snprintf(line, sizeof line, "  a row per like, rolled up every %s", every);
		break;
	}
	tui_screen_text(s, x, r.y, r.x + r.w - x, TUI_DIM, line);
}

static void label(struct tui_screen *s, int x, int y, const char *word)
{
	tui_screen_text(s, x, y, LABEL_W - 1, TUI_BOLD, word);
}

/*
 * The log as a strip of cells, the newest events at the right. A cell
 * stands for `per` events, chosen so the unconsumed ones fill at most
 * two thirds of the strip: the consumer's offset then sits in view, with
 * consumed events (dim) to its left. Events the fence shows applied but
 * the offset has not passed (a consumer that died before committing it)
 * are drawn as redelivered. Returns the column of the offset.
 */
static int log_strip(struct tui_screen *s, int x, int y, int w, const struct sim_fix_view *f,
                     const struct tui_glyphs *g)
{
	int64_t behind = f->log_end - f->consumer_offset;
	int64_t per = behind > 0 ? (behind * 3 + 2 * w - 1) / (2 * w) : 1;
	int at = -1;

	if (per < 1)
		per = 1;
	for (int i = 0; i < w; i++) {
		int64_t last = f->log_end - (int64_t)(w - 1 - i) * per;  /* newest in the cell */
		uint32_t ch;
		enum tui_style st;
		if (last <= 0)
			continue;                     /* before the first event */
		if (last <= f->consumer_offset) {
			ch = g->conn[SIM_CONN_IDLE], st = TUI_DIM;
		} else if (last <= f->fence) {
			ch = g->wait[1], st = TUI_WARN;  /* applied, to be delivered again */
		} else {
			ch = g->hold, st = TUI_WAIT2;
		}
		if (at < 0 && last > f->consumer_offset)
			at = i;
		tui_screen_put(s, x + i, y, ch, st);
	}
	return at < 0 ? w - 1 : at;
}

/* The part's own lines, at most room (>= 1) of them: its second line
 * (the log's marker, the server's queue) goes first. Returns how many it
 * drew. */
static int part(struct tui_screen *s, struct tui_rect r, int y, int room,
                const struct sim_snapshot *snap, const struct kind *k,
                const struct tui_glyphs *g)
{
	const struct sim_fix_view *f = &snap->fix;
	char a[24], b[24], c[24], line[200];
	int x = r.x + LABEL_W, w = r.w - LABEL_W;

	label(s, r.x, y, k->part);
	switch (snap->config.strategy) {
	case SIM_QUEUE: {
		int tail = snprintf(line, sizeof line, " end %s", tui_fmt_int(a, sizeof a, f->log_end));
		int sw = w - tail > 4 ? w - tail : 4;
		int at = log_strip(s, x, y, sw, f, g);
		tui_screen_text(s, x + sw, y, tail, TUI_DIM, line);
		if (room < 2)
			return 1;
		tui_screen_put(s, x + at, y + 1, '^', TUI_BOLD);
		tui_fmt_int(a, sizeof a, f->consumer_offset);
		tui_fmt_int(b, sizeof b, f->fence);
		tui_fmt_int(c, sizeof c, f->log_end - f->consumer_offset);
		if (snap->config.bug_no_fence)      /* no fence: nothing to show of it */
			snprintf(line, sizeof line, "offset %s, %s behind", a, c);
		else if (f->fence != f->consumer_offset || f->crash_armed)
			snprintf(line, sizeof line, "offset %s, fence %s, %s behind%s", a, b, c,
			         f->crash_armed ? "; dies before its offset commit" : "");
		else
			snprintf(line, sizeof line, "offset %s = fence, %s behind", a, c);
		/* beside the marker: right of it, else left, else right and cut */
		int len = (int)strlen(line);
		int tx = x + at + 2;
		if (tx + len > r.x + r.w && x + at - 1 - len >= x)
			tx = x + at - 1 - len;
		tui_screen_text(s, tx, y + 1, r.x + r.w - tx, f->crash_armed ? TUI_WARN : TUI_DIM, line);
		return 2;
	}
	case SIM_REDIS:
		tui_screen_textf(s, x, y, w, f->store_count ? TUI_WAIT2 : TUI_GOOD,
		                 "+%s dirty: counted in memory, not yet in the row",
		                 tui_fmt_int(a, sizeof a, f->store_count));
		if (room < 2)
			return 1;
		label(s, r.x, y + 1, "server");
		{
			int cells = w - 24 > 0 ? w - 24 : 0;
			int shown = f->store_queue < cells ? f->store_queue : cells;
			for (int i = 0; i < shown; i++)
				tui_screen_put(s, x + i, y + 1, g->wait[0], TUI_WAIT1);
			if (f->store_queue > shown && cells > 0)
				tui_screen_put(s, x + shown - 1, y + 1, g->more, TUI_WAIT3);
			tui_screen_textf(s, x + shown + (shown > 0), y + 1, w - shown - 1, TUI_DIM,
			                 "%s INCR%s queued", tui_fmt_int(a, sizeof a, f->store_queue),
			                 f->store_queue == 1 ? "" : "s");
		}
		return 2;
	case SIM_COALESCE:
		tui_screen_textf(s, x, y, w, f->buffer ? TUI_WAIT2 : TUI_GOOD,
		                 "+%s in the app's memory (an app crash loses it)",
		                 tui_fmt_int(a, sizeof a, f->buffer));
		return 1;
	default: {
		/* one cell a row up to the room, then the count */
		int tail = snprintf(line, sizeof line, " %s not rolled up",
		                    tui_fmt_int(a, sizeof a, f->buffer));
		int cells = w - tail > 0 ? w - tail : 0;
		int shown = f->buffer < cells ? (int)f->buffer : cells;
		for (int i = 0; i < shown; i++)
			tui_screen_put(s, x + i, y, g->hold, TUI_WAIT2);
		if (f->buffer > shown && shown > 0)
			tui_screen_put(s, x + shown - 1, y, g->more, TUI_WAIT3);
		tui_screen_text(s, x + shown, y, tail, TUI_DIM, line);
		return 1;
	}
	}
}

static void flusher(struct tui_screen *s, struct tui_rect r, int y, const struct sim_snapshot *snap,
                    const struct kind *k, const struct tui_glyphs *g)
{
	const struct sim_fix_view *f = &snap->fix;
	char n[24], line[160];
	uint32_t ch = g->conn[SIM_CONN_IDLE];
	enum tui_style st = TUI_DIM;

	tui_fmt_int(n, sizeof n, f->flush_k);
	switch (f->flusher) {
	case SIM_FLUSHER_IDLE:
		snprintf(line, sizeof line, "idle until its next interval");
		break;
	case SIM_FLUSHER_DRAINING:
		ch = g->wait[0], st = TUI_WARN;
		snprintf(line, sizeof line, "GET took %s; its DEL is one round trip behind", n);
		break;
	case SIM_FLUSHER_CONN_WAIT:
		ch = g->conn[SIM_CONN_LOCK_WAIT], st = TUI_WAIT2;
		snprintf(line, sizeof line, "+%s waits for a pooled connection", n);
		break;
	case SIM_FLUSHER_APPLYING:
		ch = g->conn[SIM_CONN_FLUSH], st = TUI_FLUSH;
		snprintf(line, sizeof line, "applying +%s in one transaction%s", n,
		         f->flush_aborted ? " (its app died: it rolls back)" : "");
		break;
	}
	label(s, r.x, y, k->flusher);
	tui_screen_put(s, r.x + LABEL_W - 1, y, ch, st);
	tui_screen_text(s, r.x + LABEL_W + 1, y, r.w - LABEL_W - 1, st == TUI_DIM ? TUI_DIM : TUI_NORMAL,
	                line);
}

/* The counter row, and the books: the row against what was acknowledged. */
static void row_and_books(struct tui_screen *s, struct tui_rect r, int y,
                          const struct sim_snapshot *snap, const struct tui_glyphs *g)
{
	const struct sim_fix_view *f = &snap->fix;
	const struct sim_summary *m = &snap->summary;
	bool held = snap->nlanes > 0 && snap->lanes[0].held;
	char a[24], b[24], c[24], line[200];
	int n;

	label(s, r.x, y, "row");
	tui_screen_put(s, r.x + LABEL_W - 1, y, held ? g->hold : g->free_lock,
	               held ? TUI_HOLD : TUI_DIM);
	tui_screen_textf(s, r.x + LABEL_W + 1, y, r.w - LABEL_W - 1, TUI_NORMAL,
	                 "count %s, one write a flush", tui_fmt_int(a, sizeof a, f->row_value));
	n = snprintf(line, sizeof line, "%s acked, %s on the way",
	             tui_fmt_int(a, sizeof a, m->count.true_count), tui_fmt_int(b, sizeof b, f->pending));
	if (m->count.lost && n < (int)sizeof line)
		n += snprintf(line + n, sizeof line - (size_t)n, ", %s LOST",
		              tui_fmt_int(c, sizeof c, m->count.lost));
	if (m->count.doubled && n < (int)sizeof line)
		snprintf(line + n, sizeof line - (size_t)n, ", %s COUNTED TWICE",
		         tui_fmt_int(c, sizeof c, m->count.doubled));
	tui_screen_text(s, r.x + LABEL_W + 1, y + 1, r.w - LABEL_W - 1,
	                m->count.lost || m->count.doubled ? TUI_BAD : TUI_DIM, line);
}

int tui_fixparts_draw(struct tui_screen *s, struct tui_rect r,
                      const struct sim_snapshot *snap, const struct tui_glyphs *g)
{
	const struct kind *k = kind_of(snap->config.strategy);
	int y = r.y;

	if (!k || r.h < 1 || r.w < LABEL_W + 20)
		return 0;
	/* What fits, in this order: the heading, the part, the flusher, the
	 * row and its books. */
	heading(s, r, snap, k);
	y++;
	if (y >= r.y + r.h)
		return y - r.y;
	y += part(s, r, y, r.y + r.h - y, snap, k, g);
	if (y + 1 > r.y + r.h)
		return y - r.y;
	flusher(s, r, y++, snap, k, g);
	if (y + 2 > r.y + r.h)
		return y - r.y;
	row_and_books(s, r, y, snap, g);
	return y + 2 - r.y;
}
