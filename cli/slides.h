/*
 * slides.h: the main screen of `hotrow slides` as rows of text, so the
 * presenter draws it and `hotrow slides --check` measures it from the
 * same layout.
 *
 * Interface:
 *   struct slides_screen s;
 *   slides_compose(deck, i, w, h, notes, answer, ascii, &s);
 *   ... s.rows[0 .. s.n-1], s.cut, s.dropped ...
 *   slides_screen_free(&s);
 *   slides_check(deck, &opts);     the preflight, see slides_check's comment
 */
#ifndef HOTROW_CLI_SLIDES_H
#define HOTROW_CLI_SLIDES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tui/slides.h"

struct slides_row {
	int y, x;
	enum tui_line_kind kind;
	char *text;            /* UTF-8, or ASCII when composed for ASCII */
	char *style;           /* TUI_STYLE_ byte per byte of text, or NULL */
};

struct slides_screen {
	int n;
	struct slides_row *rows;
	int cut;               /* lines cut short at the right edge */
	int dropped;           /* lines that fell below the screen's last row */
	bool run, reveal, embed;
};

/* Lay out slide i (0-based) on a w x h screen as the presenter shows it:
 * the slide centred, and with answer (a Reveal:'s output, or NULL) the
 * folded command and the output under it; the last row stays free for
 * the status line. ascii folds every line to ASCII. Free with
 * slides_screen_free. */
void slides_compose(const struct tui_deck *d, int i, int w, int h, int notes,
                    const char *answer, bool ascii, struct slides_screen *s);
void slides_screen_free(struct slides_screen *s);

struct slides_check_opts {
	int w, h;              /* the room's screen */
	bool ascii;            /* the terminal has no UTF-8 */
	bool quick;            /* run the engine's commands only */
	int timeout_s;         /* a command's limit */
};

/* Run every Run:, Reveal: and Embed: of the deck at path headless, as the
 * presenter would at the room's screen size, and print one line per
 * problem: a command that fails or outlives its slide, a line cut or
 * dropped, text an Expect: line names that the output no longer holds.
 * Returns 0 when there is none, 1 otherwise (2 when the deck cannot be
 * read). */
int slides_check(const char *path, const struct slides_check_opts *o);

/* How a command ran (slides_run). */
struct slides_outcome {
	int status;               /* as waitpid says; -1 when it could not start */
	bool timed_out;
	char *out;                /* stdout and stderr together; owned */
	char left[200];           /* what it left running, by name; "" none */
};

/* Run cmd with sh -c as the presenter's x does, from this directory with
 * this environment, stdin from /dev/null, in a process group of its own,
 * for at most timeout_s seconds; the group is killed when it ends, and
 * what it left running elsewhere is stopped and named in o->left (when
 * this process is a child subreaper). The caller frees o->out. */
void slides_run(const char *cmd, int timeout_s, struct slides_outcome *o);
/* cmd as it runs headless: the screens (`hotrow tui`, `hotrow demo`) as
 * one frame of w x h, everything else as it is. Caller frees. */
char *slides_headless(const char *cmd, int w, int h);
/* Whether cmd runs the engine only (sim, tui, demo): fast, no lab. */
bool slides_engine_only(const char *cmd);

struct slides_html_opts {
	bool answers;          /* each Reveal:'s answer; false: the version before the session */
	bool quick;            /* run the engine's Run: lines only */
	int timeout_s;         /* a command's limit */
};

/* The deck at path as one HTML page on out: every slide as the room sees
 * it (80 columns), each Run:'s command and what it printed, each Embed:
 * as the engine's screen at its end, each figure it names (docs/figures)
 * drawn in place, and with o->answers each Reveal:'s answer. Speaker
 * notes and authoring comments are left out. Returns 0, or 1 when the
 * deck cannot be read or out cannot be written. */
int slides_html(const char *path, FILE *out, const struct slides_html_opts *o);

/* Stop the processes this one adopted as a child subreaper (what a
 * command left running when it ended): SIGTERM, SIGKILL after 3 s. Their
 * names go into names (may be NULL). Returns how many there were. */
int slides_reap_orphans(char *names, size_t len);

#endif
