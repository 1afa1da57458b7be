/*
 * explain.h: the numbers behind the picture, in plain words.
 *
 * Turns a snapshot into a few short paragraphs an instructor could read
 * aloud: the ceiling (rows / hold time) against the arrival rate and the
 * utilisation rho (an offered load above 1), and the binding ceiling when
 * another one (the pool, the CPUs) is lower; what follows (a queue
 * growing by lambda - mu each second and the pool full after
 * P / (lambda - mu), or the wait the matching model predicts: D/D/1,
 * M/D/1, M/M/1, Kingman's G/G/1, or MVA for a closed loop); a retry storm's
 * wasted work; Little's law with the measured L, lambda and W once there
 * is a steady state; the collateral damage on other endpoints; and the
 * counts: for the fixes their lag and lost or double counts, for blind
 * retries the likes counted twice. A fix applied while the run goes on
 * is said first, with the second it came at (sim_change_text).
 *
 * With ascii set, ρ, λ and × are spelt rho, lambda and x.
 *
 * Interface:
 *   struct tui_para p[TUI_EXPLAIN_MAX];
 *   int n = tui_explain(snap, ascii, p, TUI_EXPLAIN_MAX);  paragraphs, in order
 *   tui_explain_draw(scr, rect, snap, ascii);              wrapped; the least
 *                                                    important dropped first
 */
#ifndef HOTROW_TUI_EXPLAIN_H
#define HOTROW_TUI_EXPLAIN_H

#include <stdbool.h>

#include "engine/sim.h"
#include "tui/screen.h"

#define TUI_EXPLAIN_MAX 9

struct tui_para {
	char text[320];           /* UTF-8, one paragraph */
	enum tui_style style;
	int rank;                 /* 0 = keep longest; higher goes first */
};

/* Fill p[0..max-1]; returns how many paragraphs there are. */
int tui_explain(const struct sim_snapshot *snap, bool ascii,
                struct tui_para *p, int max);
/* Draw the heading and the paragraphs wrapped to r; returns lines used. */
int tui_explain_draw(struct tui_screen *s, struct tui_rect r,
                     const struct sim_snapshot *snap, bool ascii);
/* Wrap utf8 to width w from (x, y) on at most maxl lines; returns lines. */
int tui_wrap(struct tui_screen *s, int x, int y, int w, int maxl,
             enum tui_style st, const char *utf8);
/* Lines tui_wrap would take for utf8 at width w. */
int tui_wrap_lines(int w, const char *utf8);

#endif
