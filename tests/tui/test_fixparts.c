/*
 * test_fixparts.c: each fix drawn as its own parts (tui/fixparts.h), from
 * hand-made views whose every number is known and from the engine's own
 * runs: the log with its offset and fence, the in-memory store with its
 * dirty count and queued INCRs, the app buffer, the append table, the
 * flusher, the row and its books; and the ledger's sub-accounts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tui/fixparts.h"
#include "tui/frame.h"
#include "tests/tui/fixture.h"

static struct sim_snapshot *fix_snap(enum sim_strategy st)
{
	struct sim_snapshot *s = fx_viral();
	s->config.strategy = st;
	s->config.flush_ms = 1000;
	s->nrows = s->nlanes = 1;
	s->lanes[0] = (struct sim_lane){ .held = false };
	return s;
}

static struct tui_screen *draw(const struct sim_snapshot *snap, bool ascii, int w)
{
	struct tui_screen *s = tui_screen_new(w, 8);
	tui_fixparts_draw(s, (struct tui_rect){0, 0, w, 8}, snap, tui_glyphs(ascii));
	return s;
}

static void tui_fixparts_draw__queue_shows_the_log_offset_and_fence(void **state)
{
	(void)state;
	struct sim_snapshot *snap = fix_snap(SIM_QUEUE);
	snap->fix = (struct sim_fix_view){ .log_end = 1000, .consumer_offset = 700, .fence = 900,
	                                   .crash_armed = false, .pending = 100,
	                                   .flusher = SIM_FLUSHER_IDLE, .row_value = 900 };
	snap->summary.count.true_count = 1000;
	struct tui_screen *s = draw(snap, false, 70);

	assert_true(tui_fixparts_has(snap));
	assert_true(fx_find(s, "THE LOG  one partition, a batch every 1 s behind a fence") == 0);
	assert_true(fx_find(s, "end 1,000") == 1);
	assert_true(fx_find(s, "offset 700, fence 900, 300 behind") == 2);
	/* the strip: consumed, redelivered (applied, offset not committed),
	 * then the events still to apply */
	int consumed = fx_count(s, 1, 0x00B7), again = fx_count(s, 1, 0x25CB),
	    ahead = fx_count(s, 1, 0x25A0);
	assert_true(consumed > 0 && again > 0 && ahead > 0);
	/* 300 of 1,000 behind in 50 cells, 9 events a cell: the 12 newest
	 * cells reach past the fence (900), the 22 before them past the
	 * offset (700) */
	assert_int_equal(again, 22);
	assert_int_equal(ahead, 12);
	/* the offset's marker sits under the first event not consumed */
	int strip = fx_col(s, 1, "\u00b7");
	assert_int_equal(fx_col(s, 2, "^"), strip + consumed);
	assert_true(fx_find(s, "consumer · idle until its next interval") == 3);
	assert_true(fx_find(s, "row      □ count 900") == 4);
	assert_true(fx_find(s, "1,000 acked, 100 on the way") == 5);
	tui_screen_free(s);
	free(snap);
}

static void tui_fixparts_draw__redis_shows_the_dirty_count_and_its_queue(void **state)
{
	(void)state;
	struct sim_snapshot *snap = fix_snap(SIM_REDIS);
	snap->fix = (struct sim_fix_view){ .store_count = 1234, .store_queue = 12, .pending = 1300,
	                                   .flusher = SIM_FLUSHER_APPLYING, .flush_k = 66 };
	snap->lanes[0].held = true;
	struct tui_screen *s = draw(snap, false, 70);

	assert_true(fx_find(s, "IN-MEMORY STORE  one thread, 4 us a command; GETDEL every 1 s") == 0);
	assert_true(fx_find(s, "likes     +1,234 dirty") == 1);
	assert_true(fx_find(s, "12 INCRs queued") == 2);
	assert_int_equal(fx_count(s, 2, 0x2219), 12);          /* one ∙ an INCR */
	assert_true(fx_find(s, "drain    ▲ applying +66 in one transaction") == 3);
	assert_true(fx_find(s, "row      ■ count 0") == 4);   /* the flusher holds it */
	assert_false(tui_screen_has(s, "THE LOG"));
	tui_screen_free(s);
	free(snap);
}

static void tui_fixparts_draw__append_and_coalesce_are_their_own(void **state)
{
	(void)state;
	struct sim_snapshot *snap = fix_snap(SIM_APPEND);
	snap->fix = (struct sim_fix_view){ .buffer = 7, .pending = 7,
	                                   .flusher = SIM_FLUSHER_CONN_WAIT, .flush_k = 40 };
	struct tui_screen *s = draw(snap, false, 70);
	assert_true(fx_find(s, "APPEND TABLE  a row per like, rolled up every 1 s") == 0);
	assert_true(fx_find(s, "7 not rolled up") == 1);
	assert_int_equal(fx_count(s, 1, 0x25A0), 7);          /* a ■ a row */
	assert_true(fx_find(s, "rollup   ○ +40 waits for a pooled connection") == 2);
	tui_screen_free(s);

	snap->config.strategy = SIM_COALESCE;
	snap->fix = (struct sim_fix_view){ .buffer = 91, .pending = 91 };
	snap->summary.count.lost = 5;
	s = draw(snap, false, 70);
	assert_true(fx_find(s, "APP BUFFER") == 0);
	assert_true(fx_find(s, "+91 in the app's memory (an app crash loses it)") == 1);
	assert_true(fx_find(s, "91 on the way, 5 LOST") == 4);
	tui_screen_free(s);

	/* the direct paths keep their lanes */
	snap->config.strategy = SIM_SHARDED;
	assert_false(tui_fixparts_has(snap));
	snap->config.strategy = SIM_LEDGER;
	assert_false(tui_fixparts_has(snap));
	free(snap);
}

/* A small split screen leaves two lines: the heading and the part's
 * first line, not the heading alone. */
static void tui_fixparts_draw__fits_what_it_can(void **state)
{
	(void)state;
	struct sim_snapshot *snap = fix_snap(SIM_QUEUE);
	snap->fix = (struct sim_fix_view){ .log_end = 50, .consumer_offset = 20, .fence = 20 };
	struct tui_screen *s = tui_screen_new(60, 8);
	assert_int_equal(tui_fixparts_draw(s, (struct tui_rect){0, 0, 60, 2}, snap,
	                                   tui_glyphs(false)), 2);
	assert_true(fx_find(s, "THE LOG") == 0);
	assert_true(fx_find(s, "end 50") == 1);
	assert_int_equal(fx_find(s, "offset"), -1);
	tui_screen_clear(s);
	assert_int_equal(tui_fixparts_draw(s, (struct tui_rect){0, 0, 60, 4}, snap,
	                                   tui_glyphs(false)), 4);
	assert_true(fx_find(s, "consumer") == 3);
	assert_int_equal(tui_fixparts_height(snap, 60), 6);
	tui_screen_free(s);
	free(snap);
}

static void tui_fixparts_draw__ascii_is_pure_ascii(void **state)
{
	(void)state;
	const enum sim_strategy all[] = { SIM_QUEUE, SIM_REDIS, SIM_COALESCE, SIM_APPEND };
	for (size_t k = 0; k < 4; k++) {
		struct sim_snapshot *snap = fix_snap(all[k]);
		snap->fix = (struct sim_fix_view){ .log_end = 500, .consumer_offset = 100,
			.fence = 300, .store_count = 9, .store_queue = 3, .buffer = 4,
			.flusher = SIM_FLUSHER_APPLYING, .flush_k = 2 };
		struct tui_screen *s = draw(snap, true, 70);
		for (int y = 0; y < s->h; y++)
			for (int x = 0; x < s->w; x++)
				if (tui_screen_at(s, x, y)->ch >= 0x80)
					fail_msg("%s: U+%04X at %d,%d", sim_strategy_name(all[k]),
					         tui_screen_at(s, x, y)->ch, x, y);
		tui_screen_free(s);
		free(snap);
	}
}

/* The engine's own run: what the panel shows is what the engine holds. */
static struct sim_snapshot *run(enum sim_strategy st, double hold_ms, double until_s,
                                const char *crash)
{
	struct sim_config c;
	sim_config_default(&c);
	sim_scenario("viral-post", &c);
	c.strategy = st;
	c.seconds = 0;
	c.flush_ms = 1000;
	c.hold_ms = hold_ms;
	if (crash) {
		sim_fault_parse(crash, &c.crashes[0].kind);
		c.crashes[0].at_us = 2500000;
		c.ncrashes = 1;
	}
	struct sim *s = sim_new(&c);
	assert_non_null(s);
	sim_advance(s, (int64_t)(until_s * 1e6));
	struct sim_snapshot *snap = malloc(sizeof *snap);
	sim_snapshot(s, snap);
	sim_free(s);
	return snap;
}

static void sim_fix_view__matches_the_books(void **state)
{
	(void)state;
	/* a 400 ms hold: at 3.2 s the flush of 3 s still holds the row */
	struct sim_snapshot *q = run(SIM_QUEUE, 400, 3.2, "consumer");
	const struct sim_fix_view *f = &q->fix;
	assert_int_equal(f->log_end, q->summary.count.true_count);  /* each like, one event */
	assert_int_equal(f->row_value, q->summary.count.visible);
	assert_int_equal(f->pending, q->summary.count.buffered);
	assert_int_equal(f->flusher, SIM_FLUSHER_APPLYING);
	assert_true(q->lanes[0].held);
	assert_true(f->flush_k > 0);
	/* the consumer crash of 2.5 s waits for this batch's commit */
	assert_true(f->crash_armed);
	struct tui_screen *s = tui_screen_new(120, 40);
	struct tui_view v = { .speed = 1 };
	tui_frame_draw(s, &v, q, NULL);
	assert_true(tui_screen_has(s, "THE LOG"));
	assert_false(tui_screen_has(s, "LOCK LANES"));
	assert_true(tui_screen_has(s, "consumer ▲ applying +"));
	tui_screen_free(s);
	free(q);
	/* at 3.5 s it has died after the batch committed, before its offset
	 * did: the fence is ahead of the offset, the batch to come again */
	q = run(SIM_QUEUE, 400, 3.5, "consumer");
	assert_false(q->fix.crash_armed);
	assert_true(q->fix.fence > q->fix.consumer_offset);
	assert_int_equal(q->fix.flusher, SIM_FLUSHER_IDLE);
	free(q);

	struct sim_snapshot *r = run(SIM_REDIS, 2, 3.5, NULL);
	assert_int_equal(r->fix.store_count + r->fix.flush_k, r->summary.count.buffered);
	assert_true(r->fix.store_count > 0);
	assert_int_equal(r->fix.log_end, 0);
	free(r);

	struct sim_snapshot *d = run(SIM_NAIVE, 2, 1, NULL);
	assert_int_equal(d->fix.flusher, SIM_FLUSHER_IDLE);
	assert_int_equal(d->fix.pending + d->fix.row_value + d->fix.buffer, 0);
	free(d);
}

/* Queue, in-memory counter and append no longer look alike: their
 * panels differ line by line, and none is a lock lane. */
static void tui_frame_draw__the_fixes_look_different(void **state)
{
	(void)state;
	const enum sim_strategy all[] = { SIM_QUEUE, SIM_REDIS, SIM_APPEND, SIM_COALESCE };
	char rows[4][3][4096];
	for (int k = 0; k < 4; k++) {
		struct sim_snapshot *snap = run(all[k], 2, 2.5, NULL);
		struct tui_screen *s = tui_screen_new(120, 40);
		struct tui_view v = { .speed = 1 };
		tui_frame_draw(s, &v, snap, NULL);
		assert_false(tui_screen_has(s, "LOCK LANES"));
		for (int y = 0; y < 3; y++)
			tui_screen_row(s, 1 + y, rows[k][y], sizeof rows[k][y]);
		tui_screen_free(s);
		free(snap);
	}
	for (int a = 0; a < 4; a++)
		for (int b = a + 1; b < 4; b++)
			for (int y = 0; y < 2; y++)
				if (!strcmp(rows[a][y], rows[b][y]))
					fail_msg("%s and %s draw line %d alike", sim_strategy_name(all[a]),
					         sim_strategy_name(all[b]), y + 1);
}

static void tui_lanes_draw__ledger_sums_its_sub_accounts(void **state)
{
	(void)state;
	struct sim_snapshot *snap = fx_viral();
	snap->config.strategy = SIM_LEDGER;
	snap->config.rows = 8;
	snap->nrows = snap->nlanes = 8;
	for (int i = 0; i < 8; i++)
		snap->lanes[i] = (struct sim_lane){ .held = i == 2 };
	snap->summary.count.visible = 6413;
	struct tui_screen *s = tui_screen_new(120, 40);
	struct tui_view v = { .speed = 1 };
	tui_frame_draw(s, &v, snap, NULL);
	assert_true(tui_screen_has(s, "fee 7"));
	assert_true(tui_screen_has(s, "fee balance = the sum of 8 sub-accounts: 6,413 sales credited"));
	tui_screen_free(s);
	free(snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tui_fixparts_draw__queue_shows_the_log_offset_and_fence),
		cmocka_unit_test(tui_fixparts_draw__redis_shows_the_dirty_count_and_its_queue),
		cmocka_unit_test(tui_fixparts_draw__append_and_coalesce_are_their_own),
		cmocka_unit_test(tui_fixparts_draw__fits_what_it_can),
		cmocka_unit_test(tui_fixparts_draw__ascii_is_pure_ascii),
		cmocka_unit_test(sim_fix_view__matches_the_books),
		cmocka_unit_test(tui_frame_draw__the_fixes_look_different),
		cmocka_unit_test(tui_lanes_draw__ledger_sums_its_sub_accounts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
