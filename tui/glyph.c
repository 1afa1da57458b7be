/*
 * glyph.c: the two glyph sets.
 */
#include "tui/glyph.h"

static const struct tui_glyphs utf8 = {
	.ascii = false,
	.hold = 0x25A0,                           /* ■ */
	.free_lock = 0x25A1,                      /* □ */
	.wait = {0x2219, 0x25CB, 0x25CF},         /* ∙ ○ ● */
	.more = 0x2026,                           /* … */
	.conn = {
		[SIM_CONN_IDLE] = 0x00B7,         /* · */
		[SIM_CONN_LOCK_WAIT] = 0x25CB,    /* ○ */
		[SIM_CONN_LOCK_HOLD] = 0x25A0,    /* ■ */
		[SIM_CONN_UNRELATED] = 0x25C6,    /* ◆ */
		[SIM_CONN_FLUSH] = 0x25B2,        /* ▲ */
		[SIM_CONN_OUTSIDE] = 0x25C7,      /* ◇ */
	},
	.ok = 0x2714, .slow = 0x25D4, .fail = 0x2716,   /* ✔ ◔ ✖ */
	.hline = 0x2500, .vline = 0x2502, .corner = 0x2514,   /* ─ │ └ */
	.box = {0x250C, 0x2510, 0x2514, 0x2518},  /* ┌ ┐ └ ┘ */
	.ref = 0x2508,                            /* ┈ */
	.series = {0x2812, 0x2802},               /* ⠒ solid, ⠂ dotted */
	.sep = 0x00B7,                            /* · */
};

static const struct tui_glyphs ascii = {
	.ascii = true,
	.hold = '#',
	.free_lock = '-',
	.wait = {'.', 'o', '@'},
	.more = '>',
	.conn = {
		[SIM_CONN_IDLE] = '.',
		[SIM_CONN_LOCK_WAIT] = 'w',
		[SIM_CONN_LOCK_HOLD] = 'H',
		[SIM_CONN_UNRELATED] = 'u',
		[SIM_CONN_FLUSH] = 'F',
		[SIM_CONN_OUTSIDE] = 'r',
	},
	.ok = '+', .slow = '~', .fail = 'X',
	.hline = '-', .vline = '|', .corner = '+',
	.box = {'+', '+', '+', '+'},
	.ref = '-',
	.series = {'*', 'o'},
	.sep = '|',
};

const struct tui_glyphs *tui_glyphs(bool want_ascii)
{
	return want_ascii ? &ascii : &utf8;
}

int tui_glyph_age(int64_t age_us)
{
	if (age_us < 10000)
		return 0;
	if (age_us < 1000000)
		return 1;
	return 2;
}
