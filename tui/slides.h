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
 * slide for SECONDS simulated seconds; it is kept in t.embed.
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

struct tui_slide_text {
	int nlines;
	char **lines;              /* UTF-8, each fits the width; owned */
	enum tui_line_kind *kinds;
	char *run;                 /* the slide's first Run: command, or NULL */
	char *reveal;              /* the slide's Reveal: command, or NULL */
	char *embed;               /* the slide's Embed: SECONDS OPTIONS, or NULL */
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

#endif
