/*
 * frame.h: one whole screen, laid out from one snapshot (or two, side by
 * side, in compare mode) and the view state.
 *
 * The frame is the title bar, the lock lanes and the pool on the left, the
 * charts on the right, the explanation below and the key hints at the
 * bottom; a tour adds its narration under the title, and the ? overlay
 * sits on top. Narrow screens stack the panels; a screen under the minimum
 * gets only "terminal too small (need WxH)". The frame only draws: it
 * never touches the engine beyond the snapshots it is given.
 *
 * Interface:
 *   struct tui_view v = {0}; v.speed = 1; ...
 *   tui_frame_draw(scr, &v, snap, NULL);        or (scr, &v, naive, fix)
 */
#ifndef HOTROW_TUI_FRAME_H
#define HOTROW_TUI_FRAME_H

#include <stdbool.h>

#include "engine/sim.h"
#include "tui/screen.h"

struct tui_compare;

#define TUI_MIN_W 80
#define TUI_MIN_H 24
#define TUI_MIN_COMPARE_W 100

enum tui_latency { TUI_LAT_BOTH, TUI_LAT_P99, TUI_LAT_P50 };

struct tui_view {
	bool ascii;
	bool paused;
	bool help;                 /* the ? overlay */
	int picker;                /* the scenario picker: 0 closed, else
	                              1 + the highlighted scenario */
	double speed;              /* simulated seconds per real second */
	double speed_reached;      /* when the simulation cannot keep up with
	                              speed: the factor it reaches; else 0 */
	enum tui_latency latency;
	const char *message;       /* a short note in the title bar, or NULL */
	int follow;                /* enum tui_follow_mode, the f key's last choice */
	const char *label[2];      /* compare mode's panes: "A viral-post", ...;
	                              NULL: BEFORE and AFTER */
	const struct tui_compare *compare;   /* the compare picker, when open */

	/* a tour, when one plays (tour_title NULL otherwise) */
	const char *tour_title;
	const char *step_title;
	const char *narration;
	int step, nsteps;          /* 0-based step */
	bool step_done;            /* the step ran its time: waiting for Enter */
	/* the step's question, when it asks one (question NULL otherwise) */
	const char *question;
	const char *const *choices;   /* nchoices of them, A) first */
	int nchoices;
	int chosen;                /* the viewer's answer, 0 = A; -1 none yet */
	int right;                 /* the engine's answer */
	bool asking;               /* waiting for a letter before it plays */
	const char *reveal;        /* the engine's answer and why, once revealed */

	/* rewound into the past (tui/rewind.h): the moment shown and the
	 * furthest the run has gone, in simulated seconds */
	bool scrubbing;
	double scrub_s, scrub_end_s;
};

/* The smallest screen for one snapshot or for compare mode. */
void tui_frame_min(bool compare, int *w, int *h);
/* Clear scr and draw the frame. b is NULL except in compare mode, where a
 * is drawn on the left (the naive row) and b on the right (the fix). */
void tui_frame_draw(struct tui_screen *scr, const struct tui_view *v,
                    const struct sim_snapshot *a, const struct sim_snapshot *b);

#endif
