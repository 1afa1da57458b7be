/*
 * presenter.h: what `hotrow slides` adds for a live workshop: the reveal
 * of a predict-then-reveal slide, and the presenter view that follows the
 * main screen from a second terminal.
 *
 * The main screen writes a small state file after every change (the deck,
 * the slide on screen, when the talk started, whether it was revealed);
 * `hotrow slides --presenter` reads it four times a second and shows the
 * current slide's notes, the next slide, and the elapsed time against the
 * plan. The plan is in the deck itself: a note line "> Plan: H:MM label"
 * on a slide says when, from the start, that slide should be on screen.
 *
 * Interface:
 *   char *out = presenter_reveal(cmd);          // run it, its output (free)
 *   presenter_publish(state, deck, slide, started, revealed);
 *   presenter_view(state, dump, width);         // the second terminal
 */
#ifndef HOTROW_CLI_PRESENTER_H
#define HOTROW_CLI_PRESENTER_H

#include <stdbool.h>
#include <time.h>

struct tui_deck;

#define PRESENTER_REVEAL_LINES 14   /* a reveal's output shown at most */

/* The default state file: $TMPDIR (or /tmp)/hotrow-slides-UID.state. */
void presenter_default_state(char *out, size_t len);

/* Run cmd with sh -c, stdout and stderr together; return its output, at
 * most PRESENTER_REVEAL_LINES lines, control characters made '?', with a
 * last line saying how it ended when that was not exit 0. Caller frees. */
char *presenter_reveal(const char *cmd);

/* One frame of a slide's Embed: "SECONDS OPTIONS": the engine's screen
 * (`hotrow tui --dump` with OPTIONS) at simulated time at, w x h, plain
 * text, in ASCII when ascii is set (a terminal without UTF-8). *seconds
 * gets SECONDS (how long the embed plays); *rc (when rc is not NULL) how
 * the command ended, as pclose says. Returns the frame (caller frees), or
 * NULL when the spec has no SECONDS; a bad option comes back as the
 * command's own message. */
char *presenter_embed_frame(const char *spec, double at, int w, int h, bool ascii,
                            double *seconds, int *rc);

/* Play a slide's Embed inside the slide on the terminal tui_term_start
 * opened: the title, then the engine's screen every half simulated second
 * up to SECONDS, about two frames a second; any key stops it, and the last
 * frame stays until a key. */
void presenter_play(const char *title, const char *spec, bool ascii);

/* Record what the main screen shows (written atomically). started is when
 * the talk began. Errors are ignored: the talk goes on without a view. */
void presenter_publish(const char *state, const char *deck, int slide,
                       time_t started, int revealed);

/* When the talk began, from an earlier state file for the same deck less
 * than six hours old, so restarting the main screen keeps the clock;
 * otherwise now. */
time_t presenter_started(const char *state, const char *deck);

/* The presenter view: follow the state file until q (or, with dump, print
 * it once as text, width columns, and return); ascii for a terminal
 * without UTF-8. Returns the exit code. */
int presenter_view(const char *state, int dump, int width, bool ascii);

#endif
