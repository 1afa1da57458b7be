/*
 * slides.h: a Markdown deck, split into slides and laid out as text lines.
 *
 * A deck is a Markdown file whose slides are separated by lines holding
 * only "---". In a slide, lines starting with "> " are speaker notes and a
 * line starting with "Run: " names a command to run live (backquotes are
 * dropped). Layout wraps the body to a width, so the same code draws the
 * presenter screen and the headless `hotrow slides --dump`. A line
 * starting with "Reveal: " names a command whose output answers the
 * slide's question (predict, then reveal): it is not shown with the slide,
 * only kept in t.reveal for the presenter to run. A line "Embed: SECONDS
 * OPTIONS" plays the engine (`hotrow tui` with OPTIONS) live inside the
 * slide for SECONDS simulated seconds; it is kept in t.embed. A line
 * "Expect: WORDS" (never shown) names text the output of the slide's
 * Reveal: (or else its Run:) must hold, e.g. the number its notes quote;
 * `hotrow slides --check` verifies it; "Exits: 0 1" names the exit codes
 * its Run: may end with (default 0). Text between <!-- and --> is for
 * the deck's authors and never shown.
 *
 * Interface:
 *   struct tui_deck *d = tui_deck_load(path, err, sizeof err);  NULL + err on failure
 *   int n = tui_deck_count(d);
 *   struct tui_slide_text t; tui_deck_layout(d, i, width, notes, &t);
 *   ... t.lines[0 .. t.nlines-1], t.run (may be NULL) ...
 *   tui_slide_text_free(&t); tui_deck_free(d);
 */
#ifndef HOTROW_TUI_SLIDES_H
#define HOTROW_TUI_SLIDES_H

#include <stddef.h>

struct tui_deck;

#define TUI_DECK_MAX_BYTES (1024 * 1024)   /* a deck file; slides/hot-rows.md is ~7 KB */

enum tui_line_kind {
	TUI_LINE_TITLE,   /* the slide's heading */
	TUI_LINE_BODY,
	TUI_LINE_RUN,     /* a command to run live */
	TUI_LINE_NOTE     /* speaker notes (only when asked for) */
};

/* How a byte of a line is drawn (its byte in styles[]). */
#define TUI_STYLE_PLAIN ' '
#define TUI_STYLE_BOLD  'b'    /* **bold** */
#define TUI_STYLE_CODE  'c'    /* `code` */

struct tui_slide_text {
	int nlines;
	char **lines;              /* UTF-8, each fits the width; owned */
	char **styles;             /* per line, a TUI_STYLE_ byte per byte of it */
	enum tui_line_kind *kinds;
	int cut;                   /* lines cut short: a word or a code line too wide */
	char *run;                 /* the slide's first Run: command, or NULL */
	char *reveal;              /* the slide's Reveal: command, or NULL */
	char *embed;               /* the slide's Embed: SECONDS OPTIONS, or NULL */
	char *expect;              /* the slide's Expect: words, or NULL */
	char *exits;               /* the slide's Exits: codes for its Run:, or NULL */
};

/* Read the deck at path (at most TUI_DECK_MAX_BYTES). Control characters
 * (ESC and the like) become '?', carriage returns go. Returns NULL and
 * writes one line into err when the file cannot be read, is too big or
 * holds no slide. The caller frees with tui_deck_free. */
struct tui_deck *tui_deck_load(const char *path, char *err, size_t errlen);
void tui_deck_free(struct tui_deck *d);
int tui_deck_count(const struct tui_deck *d);

/* Lay out slide i (0-based, clamped) wrapped to width columns (at least
 * 20), with the speaker notes when notes is nonzero. The result is owned by
 * *out until tui_slide_text_free. */
void tui_deck_layout(const struct tui_deck *d, int i, int width, int notes,
                     struct tui_slide_text *out);
void tui_slide_text_free(struct tui_slide_text *t);

/* Display width of a UTF-8 string in terminal columns. */
int tui_text_width(const char *s);

/* Append "$ cmd" to t as lines of kind, folded at spaces to width columns:
 * every line but the last ends in " \" (so the folded command still pastes
 * into a shell) and the next is indented by four. */
void tui_fold_command(struct tui_slide_text *t, enum tui_line_kind kind, const char *cmd,
                      int width);

/* s in plain ASCII for a terminal without UTF-8: the Greek letters, x for
 * the times sign, - for dashes and bullets, ? for anything unknown. With
 * style (one byte per byte of s, or NULL), *style_out gets the styles of
 * the result (caller frees), when style_out is not NULL. Caller frees. */
char *tui_text_ascii(const char *s, const char *style, char **style_out);
/* The whole deck in ASCII from now on, before it is wrapped (a folded
 * letter may take more columns than the original). */
void tui_deck_ascii(struct tui_deck *d);
/* Every line of t in ASCII (tui_text_ascii), in place. */
void tui_slide_text_ascii(struct tui_slide_text *t);

#endif
