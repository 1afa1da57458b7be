/*
 * screen.h: the headless cell buffer every TUI panel draws into.
 *
 * Panels never call ncurses: they write characters and a style into a
 * W x H grid of cells. The terminal gets the grid through one copy-out
 * (tui_screen_blit) per frame; tests and `hotrow tui --dump` read the same
 * grid as text (tui_screen_dump). A style names a meaning (a lock holder, a
 * failure); how it looks (a colour pair, or bold/reverse on terminals
 * without colour) is decided only at copy-out, so the shapes drawn are the
 * same with and without colour.
 *
 * Interface:
 *   struct tui_screen *s = tui_screen_new(w, h);    aborts only on OOM
 *   tui_screen_clear(s);
 *   tui_screen_put(s, x, y, ch, style);  tui_screen_text(s, x, y, maxw, style, utf8);
 *   tui_screen_dump(s, stdout);          or, on a live terminal, tui_screen_blit(s)
 *   tui_screen_free(s);
 * Writes outside the grid are clipped, never an error.
 */
#ifndef HOTROW_TUI_SCREEN_H
#define HOTROW_TUI_SCREEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What a cell means; tui_screen_blit turns it into attributes. */
enum tui_style {
	TUI_NORMAL,
	TUI_DIM,       /* axes, hints, secondary text */
	TUI_BOLD,
	TUI_TITLE,     /* the top status bar */
	TUI_HEAD,      /* section headings */
	TUI_GOOD,      /* keeping up, succeeding */
	TUI_WARN,      /* close to a limit */
	TUI_BAD,       /* failing, lost, over the ceiling */
	TUI_HOLD,      /* a connection or request holding a row lock */
	TUI_WAIT1,     /* waiting, young (under 10 ms) */
	TUI_WAIT2,     /* waiting, under a second */
	TUI_WAIT3,     /* waiting a second or more */
	TUI_UNREL,     /* serving an unrelated endpoint */
	TUI_FLUSH,     /* a flusher, consumer or rollup applying a batch */
	TUI_SERIES1,   /* first series of a chart */
	TUI_SERIES2,   /* second series of a chart */
	TUI_KEY,       /* a key name in the hint bar or help */
	TUI_NSTYLES
};

struct tui_cell {
	uint32_t ch;          /* a Unicode code point of width 1 */
	uint8_t style;        /* enum tui_style */
};

struct tui_screen {
	int w, h;
	struct tui_cell *cells;   /* h rows of w cells */
};

struct tui_rect { int x, y, w, h; };

/* A w x h screen of blanks (w, h >= 1). Free with tui_screen_free. */
struct tui_screen *tui_screen_new(int w, int h);
void tui_screen_free(struct tui_screen *s);
/* Change the size; the contents become blanks. */
void tui_screen_resize(struct tui_screen *s, int w, int h);
void tui_screen_clear(struct tui_screen *s);

/* Put one code point at (x, y); clipped to the screen. */
void tui_screen_put(struct tui_screen *s, int x, int y, uint32_t ch,
                    enum tui_style st);
/* Write UTF-8 text from (x, y), at most maxw columns (maxw < 0: to the right
 * edge). Returns the columns written. Control characters show as '?'. */
int tui_screen_text(struct tui_screen *s, int x, int y, int maxw,
                    enum tui_style st, const char *utf8);
/* printf-style tui_screen_text; the formatted text is cut at 512 bytes. */
int tui_screen_textf(struct tui_screen *s, int x, int y, int maxw,
                     enum tui_style st, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Fill a rectangle with ch. */
void tui_screen_fill(struct tui_screen *s, struct tui_rect r, uint32_t ch,
                     enum tui_style st);
/* Set the style of the cells in r, keeping their characters. */
void tui_screen_restyle(struct tui_screen *s, struct tui_rect r,
                        enum tui_style st);

/* The cell at (x, y), or NULL outside the screen. */
const struct tui_cell *tui_screen_at(const struct tui_screen *s, int x, int y);
/* Row y as UTF-8 into buf (trailing blanks dropped); returns buf. */
char *tui_screen_row(const struct tui_screen *s, int y, char *buf, size_t len);
/* Every row as UTF-8 text, trailing blanks dropped, one '\n' per row. */
void tui_screen_dump(const struct tui_screen *s, FILE *out);
/* Whether the screen holds the UTF-8 text anywhere on one row. */
bool tui_screen_has(const struct tui_screen *s, const char *utf8);

/* Encode cp as UTF-8 into out (4 bytes room); returns the bytes written. */
int tui_utf8_put(uint32_t cp, char *out);
/* Decode one code point from *p and advance *p; bad bytes give U+FFFD. */
uint32_t tui_utf8_next(const char **p);

/* ---- the terminal side (ncurses) ---- */

/* Set up colour pairs for the styles; colour false maps styles to bold,
 * reverse and dim only. Call after initscr/newterm. */
void tui_screen_colors(bool colour);
/* The ncurses attributes (colour pair included) a style gets now. */
unsigned long tui_screen_style_attr(enum tui_style st);
/* Copy the grid to stdscr (wnoutrefresh, no doupdate: the caller does one
 * doupdate per frame). The grid must match the terminal's size. */
void tui_screen_blit(const struct tui_screen *s);

#endif
