/*
 * compare.h: what compare mode may put side by side, and the picker that
 * chooses it.
 *
 * A side is a setup: the current one (what the keys have set), the
 * current one on the naive row, a named scenario (as `hotrow tui` loads
 * it: endless, random arrivals), or a setup file (cli/simconf.h, the
 * format `hotrow sim --compare` reads; given with `hotrow tui --setup`).
 * tui_compare_setup builds a side's whole config with the same parser
 * the command line uses; the app then gives both sides one seed, so they
 * see the same arrivals, and the frame one scale per quantity.
 *
 * The picker is an overlay with two columns, A (left) and B (right),
 * each listing every setup; Left/Right choose the column, Up/Down the
 * setup, Enter compares, Esc closes.
 *
 * Interface:
 *   struct tui_compare p; tui_compare_init(&p, files, nfiles);  (files kept, not copied)
 *   tui_compare_open(&p);                    A: the current setup, B: the naive row
 *   switch (tui_compare_key(&p, key)) { case TUI_CMP_GO: ...; }
 *   tui_compare_setup(&p, p.pick[0], &current, &cfg, label, sizeof label, err, sizeof err);
 *   tui_compare_draw(scr, &p, glyphs);       while p.open
 *   tui_compare_find(&p, "viral-post")       a word to its choice, for --left/--right
 */
#ifndef HOTROW_TUI_COMPARE_H
#define HOTROW_TUI_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/sim.h"
#include "tui/glyph.h"
#include "tui/screen.h"

#define TUI_CMP_MAX_FILES 16

/* The first choices; the scenarios follow, then the files. */
enum { TUI_CMP_CURRENT, TUI_CMP_NAIVE, TUI_CMP_FIRST_SCENARIO };

struct tui_compare {
	const char *files[TUI_CMP_MAX_FILES];   /* setup files, the caller's strings */
	int nfiles;
	int nscenarios;
	bool open;                              /* the picker shows */
	int column;                             /* 0: A (left), 1: B (right) */
	int pick[2];                            /* each column's choice */
};

enum tui_cmp_key { TUI_CMP_STAY, TUI_CMP_CLOSE, TUI_CMP_GO };

/* Set p up with n setup files (at most TUI_CMP_MAX_FILES are kept). */
void tui_compare_init(struct tui_compare *p, const char *const *files, int n);
/* Every choice: current, naive, the scenarios, the files. */
int tui_compare_count(const struct tui_compare *p);
/* Choice k's name as the picker shows it ("the current setup", a
 * scenario's name, a file's path). */
const char *tui_compare_name(const struct tui_compare *p, int k);
/* The choice a word names: "current", "naive", a scenario, or one of the
 * files (its path as given); -1 when none. */
int tui_compare_find(const struct tui_compare *p, const char *word);
/* Open the picker on A = the current setup, B = the naive row (or where
 * it was left). */
void tui_compare_open(struct tui_compare *p);
/* A key while the picker is open. */
enum tui_cmp_key tui_compare_key(struct tui_compare *p, int key);
/* Build choice k's whole config into *out from current (the setup the
 * keys have made) and a short label for its pane into label. 0, or -1
 * with err (a setup file that no longer reads: its file and line) and
 * *out unchanged. The config is endless (seconds 0); its seed is the
 * caller's to set. */
int tui_compare_setup(const struct tui_compare *p, int k, const struct sim_config *current,
                      struct sim_config *out, char *label, size_t labellen,
                      char *err, size_t errlen);
/* The overlay, centred on the screen. */
void tui_compare_draw(struct tui_screen *s, const struct tui_compare *p,
                      const struct tui_glyphs *g);

#endif
