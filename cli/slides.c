/*
 * slides.c: `hotrow slides`, a terminal presenter for the workshop decks.
 *
 * Shows one slide at a time, centred, with its "Run:" command highlighted;
 * x runs that command in the plain terminal and comes back after a key, so
 * the deck and the live demo are one flow. --dump prints slides as text
 * (for handouts and tests) without a terminal.
 */
#include <ncurses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/presenter.h"
#include "engine/xmalloc.h"
#include "runner/tree.h"
#include "tui/slides.h"
#include "tui/term.h"
#include "util/file.h"
#include "util/opt.h"

static const char synopsis[] =
	"[DECK.md] [--notes] [--dump [N]] [--reveal] [--size WxH]\n"
	"       hotrow slides --presenter [--dump] [--state FILE]";

static const char header[] =
	"\n"
	"Present a Markdown deck (default: slides/hot-rows.md). Slides are\n"
	"separated by lines of ---; '> ' lines are speaker notes; a 'Run: CMD'\n"
	"line is a command to run live; a 'Reveal: CMD' line answers the slide's\n"
	"question: x runs it and the slide shows its output; an 'Embed: SECONDS\n"
	"OPTIONS' line plays the engine (hotrow tui OPTIONS) inside the slide.\n"
	"\n"
	"keys: right, space, PgDn next   left, PgUp, backspace previous\n"
	"      Home/End first/last   n notes on/off   x run the slide's command\n"
	"      (or reveal its answer)   t restart the clock   q quit\n"
	"\n";

/* The words that are not options: the deck, and the slide number that
 * may follow --dump. */
struct words {
	const char *deck;
	bool dump;
	int only;                  /* --dump N: slide N alone; 0 every slide */
};

static int slides_word(const char *w, void *ctx, char *err, size_t len)
{
	struct words *ws = ctx;
	if (ws->dump && !ws->only && w[0] >= '0' && w[0] <= '9') {
		char *end;
		long v = strtol(w, &end, 10);
		if (*end || v < 1 || v > 1000000) {
			snprintf(err, len, "--dump accepts a slide number from 1, not '%s'", w);
			return -1;
		}
		ws->only = (int)v;
		return 0;
	}
	if (ws->deck) {
		snprintf(err, len, "one deck at a time, got '%s' and '%s'", ws->deck, w);
		return -1;
	}
	char why[PATH_MAX + 64];
	if (util_file_check_in(w, TUI_DECK_MAX_BYTES, why, sizeof why) != 0) {
		snprintf(err, len, "the deck %s: %s", w, why);
		return -1;
	}
	ws->deck = w;
	return 0;
}

static void print_slide(const struct tui_deck *d, int i, int width, int notes, int reveal)
{
	struct tui_slide_text t;

	tui_deck_layout(d, i, width, notes, &t);
	printf("--- slide %d of %d ---\n", i + 1, tui_deck_count(d));
	for (int k = 0; k < t.nlines; k++)
		printf("%s%s\n", t.kinds[k] == TUI_LINE_NOTE ? "| " : "", t.lines[k]);
	if (reveal && t.reveal) {
		char *answer = presenter_reveal(t.reveal);
		printf("\nThe engine says:\n$ %s\n%s", t.reveal, answer);
		free(answer);
	}
	double secs;
	char *frame = reveal && t.embed ? presenter_embed_frame(t.embed, 0, width, 24, &secs) : NULL;
	if (frame) {   /* the embed's last frame */
		free(frame);
		frame = presenter_embed_frame(t.embed, secs, width, 24, &secs);
		printf("\nThe engine, live (at %g simulated s):\n%s", secs, frame);
		free(frame);
	}
	tui_slide_text_free(&t);
}

static void draw(const struct tui_deck *d, int i, int notes, const char *answer)
{
	int w, h;
	struct tui_slide_text t;

	tui_term_size(&w, &h);
	int width = w > 84 ? 76 : w - 4;
	tui_deck_layout(d, i, width, notes, &t);
	erase();
	int top = t.nlines + 2 < h ? (h - t.nlines - 2) / 3 : 0;
	int left = (w - width) / 2;
	for (int k = 0; k < t.nlines && top + k < h - 1; k++) {
		int attr = t.kinds[k] == TUI_LINE_TITLE ? A_BOLD :
			t.kinds[k] == TUI_LINE_RUN ? A_REVERSE :
			t.kinds[k] == TUI_LINE_NOTE ? A_DIM : A_NORMAL;
		attron(attr);
		mvaddstr(top + k, left, t.lines[k]);
		attroff(attr);
	}
	if (answer) {   /* the revealed answer, under the slide */
		int y = top + t.nlines + 1;
		attron(A_BOLD);
		if (y < h - 1)
			mvaddstr(y++, left, "The engine says:");
		attroff(A_BOLD);
		attron(A_REVERSE);
		if (y < h - 1 && t.reveal)
			mvaddnstr(y++, left, t.reveal, w - left - 2);
		attroff(A_REVERSE);
		for (const char *p = answer; *p && y < h - 1; y++) {
			size_t n = strcspn(p, "\n");
			mvaddnstr(y, left, p, (int)n < w - left ? (int)n : w - left);
			p += n + (p[n] == '\n');
		}
	}
	char status[160];
	snprintf(status, sizeof status, " %d / %d   %s  n notes  q quit ", i + 1,
		 tui_deck_count(d), t.reveal && !answer ? "x reveal" : t.embed ? "x play  " :
		 t.run ? "x run   " : "");
	attron(A_DIM);
	mvaddstr(h - 1, w > tui_text_width(status) ? w - tui_text_width(status) : 0, status);
	attroff(A_DIM);
	tui_slide_text_free(&t);
	refresh();
}

/* Leave the screen, run cmd in the plain terminal, wait for Enter. */
static void run_live(const char *cmd)
{
	tui_term_stop();
	printf("$ %s\n", cmd);
	fflush(stdout);
	int rc = system(cmd);
	char how[64];
	if (rc == -1)
		snprintf(how, sizeof how, "could not start a shell");
	else if (WIFSIGNALED(rc))
		snprintf(how, sizeof how, "killed by SIG%s", sigabbrev_np(WTERMSIG(rc)) ?
		         sigabbrev_np(WTERMSIG(rc)) : "?");
	else
		snprintf(how, sizeof how, "exit %d", WEXITSTATUS(rc));
	printf("\n[%s] press Enter to return to the slides ", how);
	fflush(stdout);
	for (int c = getchar(); c != '\n' && c != EOF; c = getchar())
		;
	tui_term_start(getenv("NO_COLOR") == NULL);
}

static int present(const struct tui_deck *d, int notes, const char *deck, const char *state)
{
	if (tui_term_start(getenv("NO_COLOR") == NULL) < 0) {
		fprintf(stderr, "hotrow slides: cannot present here (%s); use --dump to "
		        "print the slides\n", isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) ?
		        "this terminal cannot move the cursor" : "not a terminal");
		return 2;
	}
	int i = 0, n = tui_deck_count(d);
	char **answers = xcalloc((size_t)n, sizeof *answers);   /* revealed, per slide */
	time_t started = presenter_started(state, deck);
	draw(d, i, notes, NULL);
	presenter_publish(state, deck, i, started, 0);
	while (!tui_term_quit_requested()) {
		int c = tui_term_key(250);
		switch (c) {
		case -1:
			continue;
		case 'q': case 'Q': case 27:
			goto out;
		case KEY_RIGHT: case ' ': case KEY_NPAGE: case KEY_DOWN: case 'l': case 'j':
			i = i + 1 < n ? i + 1 : i;
			break;
		case KEY_LEFT: case KEY_PPAGE: case KEY_UP: case KEY_BACKSPACE: case 'h': case 'k':
			i = i > 0 ? i - 1 : 0;
			break;
		case KEY_HOME: case 'g':
			i = 0;
			break;
		case KEY_END: case 'G':
			i = n - 1;
			break;
		case 'n':
			notes = !notes;
			break;
		case 't':
			started = time(NULL);
			break;
		case 'x': {
			struct tui_slide_text t;
			tui_deck_layout(d, i, 80, 0, &t);
			if (t.reveal && !answers[i])
				answers[i] = presenter_reveal(t.reveal);
			else if (t.embed)
				presenter_play(t.nlines ? t.lines[0] : "", t.embed);
			else if (t.run)
				run_live(t.run);
			tui_slide_text_free(&t);
			break;
		}
		default:
			break;
		}
		draw(d, i, notes, answers[i]);
		presenter_publish(state, deck, i, started, answers[i] != NULL);
	}
out:
	tui_term_stop();
	for (int k = 0; k < n; k++)
		free(answers[k]);
	free(answers);
	return 0;
}

int cmd_slides(int argc, char **argv)
{
	struct words ws = { 0 };
	bool notes = false, reveal = false, presenter = false;
	struct cli_size size = { 80, 24, 20, 1 };
	const char *state_file = NULL;
	char state[PATH_MAX];
	presenter_default_state(state, sizeof state);

	const struct opt rows[] = {
		{ .name = "notes", .kind = OPT_FLAG, .dest = &notes, .help = "show speaker notes" },
		{ .name = "dump", .kind = OPT_FLAG, .dest = &ws.dump,
		  .help = "print slide N (1-based, the next word), or every slide,\n"
		          "as text and exit" },
		{ .name = "size", .arg = "WxH", .kind = OPT_CUSTOM, .dest = &size, .fn = cli_size_opt,
		  .accepts = "WxH with W at least 20, e.g. 80x24",
		  .help = "the width (and height) --dump lays out for; default 80x24" },
		{ .name = "reveal", .kind = OPT_FLAG, .dest = &reveal,
		  .help = "with --dump: run each Reveal: command and print its answer,\n"
		          "and each Embed: as the engine's screen at its end" },
		{ .name = "presenter", .kind = OPT_FLAG, .dest = &presenter,
		  .help = "in a second terminal: the current slide's notes, the next\n"
		          "slide, the time against the deck's plan (\"> Plan: H:MM\"),\n"
		          "following the main screen" },
		{ .name = "state", .arg = "FILE", .kind = OPT_FILE_OUT, .dest = &state_file,
		  .help = "where the main screen says what it shows (default\n"
		          "$TMPDIR/hotrow-slides-UID.state)" },
	};
	const struct opt_table table = { .rows = rows, .n = sizeof rows / sizeof rows[0] };
	const struct opt_cmd cmd = { .name = "hotrow slides", .usage = synopsis, .header = header,
	                             .tables = &table, .ntables = 1, .positional = slides_word,
	                             .ctx = &ws };
	int parsed = opt_parse(&cmd, argc, argv, NULL);
	if (parsed != OPT_OK)
		return parsed == OPT_HELP ? 0 : 2;
	if (state_file)
		snprintf(state, sizeof state, "%s", state_file);
	const char *deck = ws.deck;
	int dump = ws.dump, only = ws.only, width = size.w;

	if (presenter)
		return presenter_view(state, dump, width);
	char path[PATH_MAX + 32], err[PATH_MAX + 128];
	if (!deck) {
		struct runner_tree t;
		if (runner_tree_open(&t) != 0)
			return 1;
		snprintf(path, sizeof path, "%s/slides/hot-rows.md", t.root);
		runner_tree_close(&t);
		deck = path;
	}
	struct tui_deck *d = tui_deck_load(deck, err, sizeof err);
	if (!d) {
		fprintf(stderr, "hotrow slides: %s\n", err);
		return 1;
	}
	int rc = 0;
	if (dump) {
		if (only > tui_deck_count(d)) {
			fprintf(stderr, "hotrow slides: --dump %d, but the deck has %d slides\n",
				only, tui_deck_count(d));
			rc = 2;
		} else {
			for (int i = 0; i < tui_deck_count(d); i++)
				if (!only || only == i + 1)
					print_slide(d, i, width, notes, reveal);
		}
	} else {
		rc = present(d, notes, deck, state);
	}
	tui_deck_free(d);
	tui_term_exit_signalled();      /* SIGTERM or SIGHUP: die of it, now clean */
	return rc;
}
