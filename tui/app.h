/*
 * app.h: the TUI's state and main loop: simulations, view, keys, tours.
 *
 * The app owns the simulation (two in compare mode: the naive row and the
 * chosen fix, built from the same config and seed so the arrivals match),
 * the view state and an optional tour. Time flows by tui_app_advance(real
 * seconds) times the speed; keys go through the key table (tui/help.h).
 * tui_app_render draws into any screen, so the same app serves the live
 * terminal (tui_app_run) and `--dump` (tui_app_render + tui_screen_dump).
 *
 * Interface:
 *   struct tui_app *a = tui_app_new(&config, tour_or_NULL, ascii);  takes the tour
 *   tui_app_play(a, seconds);             simulated seconds (dumps, tests)
 *   tui_app_seek(a, seconds);             back (or on) to a moment, paused
 *   tui_app_key(a, key);                  false once the user quits
 *   tui_app_render(a, scr);
 *   int rc = tui_app_run(a, colour);      the live loop; 0, or 1 on failure
 *   tui_app_free(a);
 */
#ifndef HOTROW_TUI_APP_H
#define HOTROW_TUI_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/sim.h"
#include "tui/frame.h"
#include "tui/screen.h"
#include "tui/tour.h"

struct tui_app;

/* A new app at t = 0 from c (which must pass sim_config_check). With a
 * tour, the app takes ownership of it and starts at its first step (c is
 * then ignored and may be NULL: the tour names its own scenario). NULL
 * when the engine refuses the settings (the tour is freed then). Later
 * settings it refuses (a key, a tour step) leave the simulation running
 * as it was and show the reason on the status line. */
struct tui_app *tui_app_new(const struct sim_config *c, struct tui_tour *tour,
                            bool ascii);
void tui_app_free(struct tui_app *a);

/* Let real_s seconds of wall time pass: simulated time moves by real_s
 * times the speed, unless paused; a tour moves on through its steps. */
void tui_app_advance(struct tui_app *a, double real_s);
/* Play sim_s simulated seconds regardless of pause and speed (and, in a
 * tour, of its steps). */
void tui_app_play(struct tui_app *a, double sim_s);
/* Go back (or on) to simulated second sim_s of the run: the screen as it
 * was then, rebuilt from checkpoints (tui/rewind.h), paused there; playing
 * on replays the changes made on the way. In a tour, not before the
 * current step began. */
void tui_app_seek(struct tui_app *a, double sim_s);
/* The furthest simulated second the run has been played to. */
double tui_app_end(const struct tui_app *a);
/* The checkpoints the rewind keeps, and their bytes. */
void tui_app_rewind_use(const struct tui_app *a, int *checkpoints, size_t *bytes);
/* Handle one key; returns false when it asks to quit. */
bool tui_app_key(struct tui_app *a, int key);
/* Snapshot the simulation(s) and draw the whole frame into scr. */
void tui_app_render(struct tui_app *a, struct tui_screen *scr);
/* Play at x simulated seconds per real second (any x > 0; the < and >
 * keys then step along 0.01x ... 100x from there). */
void tui_app_set_speed(struct tui_app *a, double x);
/* The frame loop played sim_s simulated seconds in wall_s seconds: when
 * that falls short of the speed asked for, the title says the factor
 * reached (tui_view.speed_reached), else it says nothing more. */
void tui_app_reach(struct tui_view *v, double wall_s, double sim_s);
/* Start compare mode (or stop it): the current setup on the naive row
 * (left, following the keys' settings) beside the current setup. */
void tui_app_compare(struct tui_app *a, bool on);
/* The setup files (cli/simconf.h) the compare picker offers besides the
 * current setup and the scenarios; the strings must outlive the app. */
void tui_app_setup_files(struct tui_app *a, const char *const *files, int n);
/* Compare any two setups, each named by a word: "current", "naive", a
 * scenario, or a setup file given to tui_app_setup_files. Both sides are
 * built whole (a file by the command line's parser) and run from t = 0
 * on one seed, the right side's, so they see the same arrivals; the
 * keys then change the right side, the left keeps its setup. 0, or -1
 * with err (an unknown word, a file that does not read: its file and
 * line) and the screen as it was. */
int tui_app_compare_setups(struct tui_app *a, const char *left, const char *right,
                           char *err, size_t errlen);
/* The same by the picker's choices (tui/compare.h). */
int tui_app_compare_picks(struct tui_app *a, int left, int right, char *err, size_t errlen);
/* Play the tour unattended: a step that waits (its time is up, or its
 * question is asked) goes on after seconds of real time as if Enter were
 * pressed, a question closing unanswered; with loop the last step leads
 * back to the first. A key restarts the wait. seconds 0 turns it off. */
void tui_app_autoplay(struct tui_app *a, double seconds, bool loop);
/* Jump to tour step k (0-based, clamped): replays the steps before it. */
void tui_app_tour_goto(struct tui_app *a, int k);
/* Play the current tour step to its end, as if its time had passed. */
void tui_app_tour_finish_step(struct tui_app *a);
/* Answer the current step's question with a letter (a to d, or A to D):
 * the choice is marked and the step plays; when its time is up the
 * engine's answer is revealed. false when no question waits or the
 * letter is not one of its choices. */
bool tui_app_tour_answer(struct tui_app *a, int letter);
/* The snapshot the last tui_app_render drew (the fix, in compare mode). */
const struct sim_snapshot *tui_app_snapshot(const struct tui_app *a);
/* Compare mode's left side as the last tui_app_render drew it; NULL
 * outside compare mode. */
const struct sim_snapshot *tui_app_snapshot_left(const struct tui_app *a);
/* Simulated seconds since the simulation(s) started. */
double tui_app_now(const struct tui_app *a);
/* The view, for options such as the latency mode or the help overlay. */
struct tui_view *tui_app_view(struct tui_app *a);

/* Run full screen until quit, SIGINT or SIGTERM; restores the terminal.
 * Returns 0, or 1 when the terminal could not be set up. */
int tui_app_run(struct tui_app *a, bool colour);

#endif
