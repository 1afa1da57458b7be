/*
 * tour.h: scripted walks through a scenario, for `hotrow demo`.
 *
 * A tour is a small text file (tui/tours/README.md has the format): a
 * title, a starting scenario, then steps. Each step changes some settings
 * on entry, may inject faults, narrates in a sentence or two, plays for a
 * number of simulated seconds and then either goes on by itself or waits
 * for the presenter. The tours in tui/tours/ are compiled into the binary;
 * a path to any other file works too.
 *
 * Interface:
 *   char err[200];
 *   struct tui_tour *t = tui_tour_load("viral-post", err, sizeof err);  NULL + err
 *   struct sim_config c; tui_tour_base(t, &c);
 *   for each step i: tui_tour_apply(&t->steps[i], &c, &restart); ...
 *   tui_tour_free(t);
 */
#ifndef HOTROW_TUI_TOUR_H
#define HOTROW_TUI_TOUR_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/sim.h"

#define TUI_TOUR_SETS   16
#define TUI_TOUR_FAULTS 4
#define TUI_TOUR_MAX_BYTES (64 * 1024)   /* a tour file; the built-in ones are ~4 KB */

struct tui_tour_set {
	char key[24];
	char value[40];
	bool live;                 /* a `fix` line: applied to the running
	                              simulation, never from t = 0 */
};

struct tui_tour_step {
	char title[96];
	char say[640];             /* narration, the step's `say` lines joined */
	double run_s;              /* simulated seconds to play */
	bool pause;                /* then wait for the presenter */
	int compare;               /* -1 unchanged, 0 off, 1 on, 2 the two setups
	                              named in compare_with */
	char compare_with[2][32];  /* left and right: current, naive or a
	                              scenario (tui/compare.h) */
	int follow;                /* `follow`: -1 unchanged, else an enum
	                              tui_follow_mode (tui/follow.h) */
	double speed;              /* 0: unchanged */
	int nsets;
	struct tui_tour_set sets[TUI_TOUR_SETS];
	int nfaults;
	struct tui_tour_fault {
		enum sim_fault kind;
		double at_s;           /* seconds into the step (0: on entry) */
	} faults[TUI_TOUR_FAULTS];    /* by time, earliest first */
	int line;                  /* where the step starts in the file */
	/* a question (`ask`): asked before the step plays, answered with a
	 * key, revealed when the step's time is up (an ask step waits then) */
	char ask[320];             /* the question, its `ask` lines joined */
	int nchoices;              /* 0: no question; else 2 to 4 */
	char choices[4][120];      /* `A) ...` to `D) ...`, without the letter */
	int answer;                /* 0 = A ... 3 = D; -1 when none */
	char why[400];             /* the reveal; {placeholders} are the engine's */
};

struct tui_tour {
	char title[96];
	char scenario[32];
	int nsteps;
	struct tui_tour_step *steps;
};

/* Parse tour text. On error return NULL and write "LINE: what is wrong"
 * into err; text is not kept. Free with tui_tour_free. */
struct tui_tour *tui_tour_parse(const char *text, char *err, size_t errlen);
/* A built-in tour by name, else a file by path (at most TUI_TOUR_MAX_BYTES
 * of text). NULL + err on failure. */
struct tui_tour *tui_tour_load(const char *name_or_path, char *err, size_t errlen);
void tui_tour_free(struct tui_tour *t);
/* The built-in tours' names, NULL-terminated. */
const char *const *tui_tour_names(void);

/* The starting config: the scenario's, or the defaults; endless either
 * way (seconds 0), since a tour plays for as long as its steps say. */
void tui_tour_base(const struct tui_tour *t, struct sim_config *c);
/* Apply a step's settings to c. *restart is set when they change something
 * a running simulation cannot (arrivals, seed: sim_config_restarts), and
 * when a `set` line changes the write path (strategy, rows): a tour's
 * `set` starts a new setup from t = 0, as its narration was written for,
 * while a `fix` line applies the same words live (the backlog drains).
 * Returns 0, or -1 with err filled when a value does not parse (the tour
 * parser already checks them, so a loaded tour always applies). */
int tui_tour_apply(const struct tui_tour_step *st, struct sim_config *c,
                   bool *restart, char *err, size_t errlen);
/* Set one setting by name, the same names `set` takes in a tour. Numbers
 * have the engine's limits (sim_config_check), as on the command line;
 * on error c is unchanged. */
int tui_tour_set(struct sim_config *c, const char *key, const char *value,
                 bool *restart, char *err, size_t errlen);

/* The reveal of an ask step: its `why` with each {placeholder} replaced
 * by the engine's number. from is the summary as the step started (after
 * its settings), to as it ended. Placeholders: {done/s} (likes done a
 * second over the step), {ceiling/s} (one row's), {binding/s} (the lowest
 * ceiling), {binds} (what it is: rows, pool, cpu, callers), {rows-busy}
 * (distinct rows the pool's connections sit on), {pool-max} (connections
 * in use at most), {lost}, {doubled}, {waiters} (most waiting for the
 * pool). Returns 0, or -1 on an unknown placeholder (named in out). */
int tui_tour_reveal(const struct tui_tour_step *st, const struct sim_summary *from,
                    const struct sim_summary *to, char *out, size_t len);

/* Tours compiled in: names and texts, NULL-terminated (tours_gen.c). */
extern const char *const tui_tour_builtin_names[];
extern const char *const tui_tour_builtin_texts[];

#endif
