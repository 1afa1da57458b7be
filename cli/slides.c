/*
 * slides.c: `hotrow slides`, a terminal presenter for the workshop decks.
 *
 * Shows one slide at a time, centred, with its "Run:" command highlighted;
 * x runs that command in the plain terminal and comes back after a key, so
 * the deck and the live demo are one flow. --dump prints slides as text
 * (for handouts and tests) without a terminal.
 */
#include <langinfo.h>
#include <locale.h>
#include <ncurses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/presenter.h"
#include "cli/slides.h"
#include "engine/xmalloc.h"
#include "runner/tree.h"
#include "tui/screen.h"
#include "tui/slides.h"
#include "tui/term.h"
#include "util/file.h"
#include "util/opt.h"

static const char synopsis[] =
	"[DECK.md] [--notes] [--dump [N]] [--reveal] [--size WxH] [--ascii]\n"
	"       hotrow slides [DECK.md] --check [--size WxH] [--quick] [--timeout S]\n"
	"       hotrow slides [DECK.md] --html [--no-answers] [--quick] > FILE.html\n"
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
	"\n"
	"Before the room: `hotrow slides --check --size 160x45` runs every\n"
	"command of the deck as x would, at that screen size and with this\n"
	"shell's environment (HOTROW_PG_URL, LANG), and lists what fails, what\n"
	"is cut off, and what an Expect: line names that the output lacks.\n"
	"A terminal without UTF-8 (LANG=C) gets the deck in plain ASCII.\n"
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

static void print_slide(const struct tui_deck *d, int i, int width, int notes, int reveal,
                        bool ascii)
{
	struct tui_slide_text t;

	tui_deck_layout(d, i, width, notes, &t);
	if (ascii)
		tui_slide_text_ascii(&t);
	printf("--- slide %d of %d ---\n", i + 1, tui_deck_count(d));
	for (int k = 0; k < t.nlines; k++)
		printf("%s%s\n", t.kinds[k] == TUI_LINE_NOTE ? "| " : "", t.lines[k]);
	if (reveal && t.reveal) {
		char *answer = presenter_reveal(t.reveal);
		printf("\nThe engine says:\n$ %s\n%s", t.reveal, answer);
		free(answer);
	}
	double secs;
	char *frame = reveal && t.embed ? presenter_embed_frame(t.embed, 0, width, 24, ascii,
	                                                         &secs, NULL) : NULL;
	if (frame) {   /* the embed's last frame */
		free(frame);
		frame = presenter_embed_frame(t.embed, secs, width, 24, ascii, &secs, NULL);
		printf("\nThe engine, live (at %g simulated s):\n%s", secs, frame);
		free(frame);
	}
	tui_slide_text_free(&t);
}

void slides_screen_free(struct slides_screen *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->rows[i].text);
		free(s->rows[i].style);
	}
	free(s->rows);
	memset(s, 0, sizeof *s);
}

static void put(struct slides_screen *s, int y, int x, enum tui_line_kind kind,
                const char *text, const char *style)
{
	s->rows = xrealloc(s->rows, (size_t)(s->n + 1) * sizeof *s->rows);
	struct slides_row *r = &s->rows[s->n++];
	r->y = y;
	r->x = x;
	r->kind = kind;
	r->text = strdup(text);
	r->style = style ? strdup(style) : NULL;
	if (!r->text || (style && !r->style))
		tui_fatal("out of memory");
}

void slides_compose(const struct tui_deck *d, int i, int w, int h, int notes,
                    const char *answer, bool ascii, struct slides_screen *s)
{
	struct tui_slide_text t, cmd = {0};
	int width = w > 84 ? 76 : w - 4;

	memset(s, 0, sizeof *s);
	tui_deck_layout(d, i, width, notes, &t);
	if (ascii)
		tui_slide_text_ascii(&t);
	s->cut = t.cut;
	s->run = t.run != NULL;
	s->reveal = t.reveal != NULL;
	s->embed = t.embed != NULL;

	/* The answer's lines: the command, folded, then its output. */
	char **out = NULL;
	int nout = 0, outw = 0;
	if (answer) {
		if (t.reveal)
			tui_fold_command(&cmd, TUI_LINE_RUN, t.reveal, w - 4);
		s->cut += cmd.cut;
		for (const char *p = answer; *p; ) {
			size_t n = strcspn(p, "\n");
			out = xrealloc(out, (size_t)(nout + 1) * sizeof *out);
			char *line = xmalloc(n + 1);
			memcpy(line, p, n);
			line[n] = '\0';
			if (ascii) {
				char *a = tui_text_ascii(line, NULL, NULL);
				free(line);
				line = a;
			}
			int lw = tui_text_width(line);
			outw = lw > outw ? lw : outw;
			out[nout++] = line;
			p += n + (p[n] == '\n');
		}
	}
	int need = t.nlines + (answer ? 2 + cmd.nlines + nout : 0);
	int top = need + 2 < h ? (h - need - 2) / 3 : 0;
	int left = (w - width) / 2;
	int y = top;
	for (int k = 0; k < t.nlines; k++, y++) {
		if (y < h - 1)
			put(s, y, left, t.kinds[k], t.lines[k], t.styles[k]);
		else
			s->dropped++;
	}
	if (answer) {
		/* Output wider than the slide moves left, as far as the screen. */
		int ax = left + outw > w - 1 ? w - 1 - outw : left;
		ax = ax < 1 ? 1 : ax;
		y++;
		if (y < h - 1)
			put(s, y++, left, TUI_LINE_TITLE, "The engine says:", NULL);
		else
			s->dropped++;
		for (int k = 0; k < cmd.nlines; k++, y++) {
			if (y < h - 1)
				put(s, y, left, TUI_LINE_RUN, cmd.lines[k], NULL);
			else
				s->dropped++;
		}
		for (int k = 0; k < nout; k++, y++) {
			if (tui_text_width(out[k]) > w - ax)
				s->cut++;
			if (y < h - 1)
				put(s, y, ax, TUI_LINE_BODY, out[k], NULL);
			else
				s->dropped++;
			free(out[k]);
		}
	}
	free(out);
	tui_slide_text_free(&cmd);
	tui_slide_text_free(&t);
}

/* One row of the screen, its styles as attributes. */
static void draw_row(const struct slides_row *r, int w)
{
	attr_t base = r->kind == TUI_LINE_TITLE ? A_BOLD : r->kind == TUI_LINE_RUN ? A_REVERSE :
	              r->kind == TUI_LINE_NOTE ? A_DIM : A_NORMAL;
	const char *p = r->text, *st = r->style;
	int x = r->x;
	while (*p && x < w) {
		size_t n = 1;
		while (p[n] && (!st || st[n] == st[0]))
			n++;
		attr_t a = base;
		if (st && st[0] == TUI_STYLE_BOLD)
			a |= (attr_t)tui_screen_style_attr(TUI_BOLD);
		else if (st && st[0] == TUI_STYLE_CODE)
			a |= (attr_t)tui_screen_style_attr(TUI_HEAD);
		char *seg = strndup(p, n);
		if (!seg)
			tui_fatal("out of memory");
		attron(a);
		mvaddnstr(r->y, x, seg, (int)n);
		attroff(a);
		x += tui_text_width(seg);
		free(seg);
		p += n;
		if (st)
			st += n;
	}
}

static void draw(const struct tui_deck *d, int i, int notes, const char *answer, bool ascii)
{
	int w, h;
	struct slides_screen s;

	tui_term_size(&w, &h);
	slides_compose(d, i, w, h, notes, answer, ascii, &s);
	erase();
	for (int k = 0; k < s.n; k++)
		draw_row(&s.rows[k], w);
	char status[160];
	snprintf(status, sizeof status, " %d / %d   %s  n notes  q quit ", i + 1,
		 tui_deck_count(d), s.reveal && !answer ? "x reveal" : s.embed ? "x play  " :
		 s.run ? "x run   " : "");
	attron(A_DIM);
	mvaddstr(h - 1, w > tui_text_width(status) ? w - tui_text_width(status) : 0, status);
	attroff(A_DIM);
	slides_screen_free(&s);
	refresh();
}

/* Leave the screen, run cmd in the plain terminal, wait for Enter. */
static void run_live(const char *cmd)
{
	tui_term_stop();
	printf("$ %s\n", cmd);
	fflush(stdout);
	int rc = system(cmd);
	char how[64], left[200];
	if (slides_reap_orphans(left, sizeof left) > 0)   /* the slide is over */
		printf("\n[stopped what it left running: %s]", left);
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

static int present(const struct tui_deck *d, int notes, const char *deck, const char *state,
                   bool ascii)
{
	if (tui_term_start(getenv("NO_COLOR") == NULL) < 0) {
		fprintf(stderr, "hotrow slides: cannot present here (%s); use --dump to "
		        "print the slides\n", isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) ?
		        "this terminal cannot move the cursor" : "not a terminal");
		return 2;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);    /* what a Run: leaves running comes back here */
	int i = 0, n = tui_deck_count(d);
	char **answers = xcalloc((size_t)n, sizeof *answers);   /* revealed, per slide */
	time_t started = presenter_started(state, deck);
	draw(d, i, notes, NULL, ascii);
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
				presenter_play(t.nlines ? t.lines[0] : "", t.embed, ascii);
			else if (t.run)
				run_live(t.run);
			tui_slide_text_free(&t);
			break;
		}
		default:
			break;
		}
		draw(d, i, notes, answers[i], ascii);
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
	bool notes = false, reveal = false, presenter = false, check = false, quick = false;
	bool ascii = false, html = false, no_answers = false;
	int timeout_s = 300;
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
		{ .name = "check", .kind = OPT_FLAG, .dest = &check,
		  .help = "the preflight: run every Run:, Reveal: and Embed: headless\n"
		          "at --size (the room's screen), report failures, cut lines\n"
		          "and Expect: text missing; exit 1 when there is any" },
		{ .name = "quick", .kind = OPT_FLAG, .dest = &quick,
		  .help = "with --check or --html: run the engine's Run: lines only\n"
		          "(sim, tui, demo); Reveal: and Embed: always run" },
		{ .name = "timeout", .arg = "S", .kind = OPT_INT, .dest = &timeout_s, .min = 1,
		  .max = 3600, .help = "with --check: stop a command after S seconds (300)" },
		{ .name = "html", .kind = OPT_FLAG, .dest = &html,
		  .help = "print the deck as one HTML page for a handout: the slides,\n"
		          "what each Run: prints (run now), the figures, the answers" },
		{ .name = "no-answers", .kind = OPT_FLAG, .dest = &no_answers,
		  .help = "with --html: leave the Reveal: answers out (a copy for\n"
		          "before the session)" },
		{ .name = "ascii", .kind = OPT_FLAG, .dest = &ascii,
		  .help = "plain ASCII (the default where the locale is not UTF-8)" },
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

	/* Greek letters, the times sign and braille charts need the user's
	 * UTF-8 locale; a terminal without one is shown the deck in ASCII.
	 * --dump writes files: UTF-8 unless --ascii asks. */
	setlocale(LC_ALL, "");
	bool screen_ascii = ascii || strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
	if (presenter)
		return presenter_view(state, dump, width, dump ? ascii : screen_ascii);
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
	if (dump ? ascii : screen_ascii)
		tui_deck_ascii(d);
	if (html) {
		struct slides_html_opts ho = { !no_answers, quick, timeout_s };
		tui_deck_free(d);
		return slides_html(deck, stdout, &ho);
	}
	if (check) {
		struct slides_check_opts co = { size.w, size.h, screen_ascii, quick, timeout_s };
		tui_deck_free(d);
		return slides_check(deck, &co);
	}
	if (dump) {
		if (only > tui_deck_count(d)) {
			fprintf(stderr, "hotrow slides: --dump %d, but the deck has %d slides\n",
				only, tui_deck_count(d));
			rc = 2;
		} else {
			for (int i = 0; i < tui_deck_count(d); i++)
				if (!only || only == i + 1)
					print_slide(d, i, width, notes, reveal, ascii);
		}
	} else {
		rc = present(d, notes, deck, state, screen_ascii);
	}
	tui_deck_free(d);
	tui_term_exit_signalled();      /* SIGTERM or SIGHUP: die of it, now clean */
	return rc;
}
