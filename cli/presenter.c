/*
 * presenter.c: predict-then-reveal and the presenter view of `hotrow
 * slides` (see presenter.h).
 */
#include <errno.h>
#include <limits.h>
#include <ncurses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/presenter.h"
#include "engine/xmalloc.h"
#include "tui/slides.h"
#include "tui/term.h"

static char *xstrdup(const char *s)
{
	char *p = xmalloc(strlen(s) + 1);
	return strcpy(p, s);
}

void presenter_default_state(char *out, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(out, len, "%s/hotrow-slides-%ld.state", tmp && *tmp ? tmp : "/tmp", (long)getuid());
}

char *presenter_reveal(const char *cmd)
{
	char *full = xmalloc(strlen(cmd) + 16);
	sprintf(full, "(%s) 2>&1", cmd);
	FILE *p = popen(full, "r");
	free(full);
	size_t cap = 4096, len = 0;
	char *out = xmalloc(cap);
	out[0] = '\0';
	if (!p) {
		snprintf(out, cap, "(could not start a shell: %s)\n", strerror(errno));
		return out;
	}
	int lines = 0, c;
	while ((c = fgetc(p)) != EOF) {
		if (lines >= PRESENTER_REVEAL_LINES)
			continue;          /* read to the end, so the command is not cut off */
		if (len + 2 >= cap)
			out = xrealloc(out, cap *= 2);
		if (c == '\n')
			lines++;
		else if ((c < 0x20 && c != '\t') || c == 0x7f)
			c = '?';
		out[len++] = (char)c;
	}
	out[len] = '\0';
	int rc = pclose(p);
	if (rc != 0) {
		char how[64];
		if (rc == -1)
			snprintf(how, sizeof how, "\n(it did not finish normally)\n");
		else if (WIFSIGNALED(rc))
			snprintf(how, sizeof how, "\n(killed by signal %d)\n", WTERMSIG(rc));
		else
			snprintf(how, sizeof how, "\n(exit %d)\n", WEXITSTATUS(rc));
		out = xrealloc(out, len + strlen(how) + 1);
		strcpy(out + len, how);
	}
	return out;
}

char *presenter_embed_frame(const char *spec, double at, int w, int h, bool ascii,
                            double *seconds, int *rc)
{
	char *end;
	*seconds = strtod(spec, &end);
	if (end == spec || *seconds <= 0)
		return NULL;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		snprintf(self, sizeof self, "hotrow");
	else
		self[n] = '\0';
	size_t len = strlen(self) + strlen(end) + 128;
	char *cmd = xmalloc(len);
	snprintf(cmd, len, "'%s' tui --dump --no-color%s --at %.2f --size %dx%d %s 2>&1", self,
	         ascii ? " --ascii" : "", at, w < 80 ? 80 : w, h < 24 ? 24 : h, end);
	FILE *p = popen(cmd, "r");
	free(cmd);
	size_t cap = 8192, got = 0;
	char *out = xmalloc(cap);
	if (p) {
		size_t r;
		while ((r = fread(out + got, 1, cap - got - 1, p)) > 0)
			if ((got += r) + 1 >= cap)
				out = xrealloc(out, cap *= 2);
		int status = pclose(p);
		if (rc)
			*rc = status;
	} else if (rc) {
		*rc = -1;
	}
	out[got] = '\0';
	return out;
}

void presenter_play(const char *title, const char *spec, bool ascii)
{
	double secs, at = 0.5;
	int key = -1;
	for (;;) {
		int w, h;
		tui_term_size(&w, &h);
		char *frame = presenter_embed_frame(spec, at, w - 2, h - 3, ascii, &secs, NULL);
		if (!frame)
			return;
		erase();
		attron(A_BOLD);
		mvaddnstr(0, 1, title, w - 2);
		attroff(A_BOLD);
		int y = 1;
		for (const char *p = frame; *p && y < h - 1; y++) {
			size_t n = strcspn(p, "\n");
			char *line = xmalloc(n + 1);
			memcpy(line, p, n);
			line[n] = '\0';
			mvaddstr(y, 1, line);
			free(line);
			p += n + (p[n] == '\n');
		}
		free(frame);
		char status[96];
		snprintf(status, sizeof status, at < secs ? " live: %.1f of %.0f simulated s; any key stops " :
		         " %.1f simulated s; any key returns to the slide ", at, secs);
		attron(A_REVERSE);
		mvaddstr(h - 1, 1, status);
		attroff(A_REVERSE);
		refresh();
		if (at >= secs || key >= 0)
			break;
		key = tui_term_key(400);
		at += 0.5;
		if (at > secs)
			at = secs;
	}
	while (tui_term_key(250) < 0 && !tui_term_quit_requested())
		;
}

void presenter_publish(const char *state, const char *deck, int slide, time_t started, int revealed)
{
	char tmp[PATH_MAX + 16], real[PATH_MAX];
	const char *abs = realpath(deck, real) ? real : deck;
	snprintf(tmp, sizeof tmp, "%s.%ld", state, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "hotrow-slides 1\ndeck=%s\nslide=%d\nstarted=%lld\nrevealed=%d\n",
	        abs, slide, (long long)started, revealed);
	if (fclose(f) != 0 || rename(tmp, state) != 0)
		unlink(tmp);
}

struct state {
	char deck[PATH_MAX];
	int slide;
	long long started;
	int revealed;
};

static int read_state(const char *path, struct state *st)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[PATH_MAX + 16];
	int got = 0;
	memset(st, 0, sizeof *st);
	if (!fgets(line, sizeof line, f) || strcmp(line, "hotrow-slides 1\n") != 0) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "deck=", 5) && strlen(line + 5) < sizeof st->deck) {
			memcpy(st->deck, line + 5, strlen(line + 5) + 1);
			got |= 1;
		}
		else if (sscanf(line, "slide=%d", &st->slide) == 1)
			got |= 2;
		else if (sscanf(line, "started=%lld", &st->started) == 1)
			got |= 4;
		else
			sscanf(line, "revealed=%d", &st->revealed);
	}
	fclose(f);
	return got == 7 ? 0 : -1;
}

time_t presenter_started(const char *state, const char *deck)
{
	struct state st;
	char real[PATH_MAX];
	const char *abs = realpath(deck, real) ? real : deck;
	time_t now = time(NULL);
	if (read_state(state, &st) == 0 && !strcmp(st.deck, abs) &&
	    st.started <= now && now - st.started < 6 * 3600)
		return (time_t)st.started;
	return now;
}

/* The plan mark of slide i ("Plan: H:MM label" in its notes): minutes
 * from the start, or -1; the label into label. */
static int plan_of(const struct tui_deck *d, int i, char *label, size_t len)
{
	struct tui_slide_text t;
	int at = -1;
	tui_deck_layout(d, i, 1000, 1, &t);
	for (int k = 0; k < t.nlines && at < 0; k++) {
		int h, m, n = 0;
		if (t.kinds[k] == TUI_LINE_NOTE && sscanf(t.lines[k], "Plan: %d:%d%n", &h, &m, &n) == 2) {
			at = h * 60 + m;
			snprintf(label, len, "%s", t.lines[k] + n + strspn(t.lines[k] + n, " "));
		}
	}
	tui_slide_text_free(&t);
	return at;
}

struct view {
	char **lines;
	int *attr;           /* 0 plain, 1 bold, 2 dim, 3 reverse */
	int n;
};

static void add(struct view *v, int attr, const char *s)
{
	v->lines = xrealloc(v->lines, (v->n + 1) * sizeof *v->lines);
	v->attr = xrealloc(v->attr, (v->n + 1) * sizeof *v->attr);
	v->lines[v->n] = xstrdup(s);
	v->attr[v->n++] = attr;
}

static void view_free(struct view *v)
{
	for (int i = 0; i < v->n; i++)
		free(v->lines[i]);
	free(v->lines);
	free(v->attr);
	memset(v, 0, sizeof *v);
}

static void clock_text(char *out, size_t len, long s)
{
	snprintf(out, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

/* Whether any slide of d has a speaker note: the student kit's decks
 * have none (scripts/student-kit strips them). */
static int has_notes(const struct tui_deck *d)
{
	int found = 0;
	for (int i = 0; i < tui_deck_count(d) && !found; i++) {
		struct tui_slide_text t;
		tui_deck_layout(d, i, 1000, 1, &t);
		for (int k = 0; k < t.nlines && !found; k++)
			found = t.kinds[k] == TUI_LINE_NOTE;
		tui_slide_text_free(&t);
	}
	return found;
}

/* Where the talk stands against the plan, in one line. A deck without
 * any notes (a student's copy) gets a line for its reader instead. */
static void plan_line(const struct tui_deck *d, int cur, long elapsed, char *out, size_t len)
{
	if (!has_notes(d)) {
		snprintf(out, len, "this copy of the deck has no speaker notes");
		return;
	}
	char label[200] = "", next_label[200] = "";
	int from = -1, to = -1, k;
	for (k = cur; k >= 0 && from < 0; k--)
		from = plan_of(d, k, label, sizeof label);
	for (k = cur + 1; k < tui_deck_count(d) && to < 0; k++)
		to = plan_of(d, k, next_label, sizeof next_label);
	if (from < 0 && to < 0) {
		snprintf(out, len, "no plan in this deck (add \"> Plan: H:MM label\" notes)");
		return;
	}
	long m = elapsed / 60;
	char where[300];
	if (to >= 0 && m > to)
		snprintf(where, sizeof where, "%ld min behind: \"%s\" was due at %d:%02d", m - to,
		         next_label, to / 60, to % 60);
	else if (from >= 0 && m < from)
		snprintf(where, sizeof where, "%ld min ahead", from - m);
	else if (to >= 0)
		snprintf(where, sizeof where, "on time, %ld min left before \"%s\"", to - m, next_label);
	else
		snprintf(where, sizeof where, "on time, last part");
	if (from >= 0)
		snprintf(out, len, "plan: \"%s\" from %d:%02d; %s", label, from / 60, from % 60, where);
	else
		snprintf(out, len, "plan: %s", where);
}

/* A line of the presenter's view: plain text (the styles are the main
 * screen's), in ASCII when the terminal has no UTF-8. */
static void add_text(struct view *v, int attr, const char *s, bool ascii)
{
	if (!ascii) {
		add(v, attr, s);
		return;
	}
	char *a = tui_text_ascii(s, NULL, NULL);
	add(v, attr, a);
	free(a);
}

static void build(struct view *v, const struct state *st, const struct tui_deck *d, int width,
                  time_t now, bool ascii)
{
	char line[800], clock[32];
	int n = tui_deck_count(d), cur = st->slide < n ? st->slide : n - 1;
	long elapsed = now > st->started ? (long)(now - st->started) : 0;
	clock_text(clock, sizeof clock, elapsed);
	snprintf(line, sizeof line, "slide %d of %d   elapsed %s%s", cur + 1, n, clock,
	         st->revealed ? "   (answer revealed)" : "");
	add_text(v, 3, line, ascii);
	int stripped = !has_notes(d);
	plan_line(d, cur, elapsed, line, sizeof line);
	add_text(v, 1, line, ascii);
	add_text(v, 0, "", ascii);

	struct tui_slide_text t;
	tui_deck_layout(d, cur, width, 1, &t);
	snprintf(line, sizeof line, "NOW: %s", t.nlines ? t.lines[0] : "");
	add_text(v, 1, line, ascii);
	int notes = 0;
	for (int k = 0; k < t.nlines; k++)
		if (t.kinds[k] == TUI_LINE_NOTE) {
			add_text(v, 0, t.lines[k], ascii);
			notes++;
		}
	if (!notes && !stripped)
		add_text(v, 2, "(no notes on this slide)", ascii);
	if (t.reveal) {          /* folded, never cut: the whole command */
		struct tui_slide_text f = {0};
		add_text(v, 2, "x reveals:", ascii);
		tui_fold_command(&f, TUI_LINE_RUN, t.reveal, width);
		for (int k = 0; k < f.nlines; k++)
			add_text(v, 2, f.lines[k], ascii);
		tui_slide_text_free(&f);
	}
	tui_slide_text_free(&t);
	add_text(v, 0, "", ascii);
	if (cur + 1 < n) {
		tui_deck_layout(d, cur + 1, width, 0, &t);
		snprintf(line, sizeof line, "NEXT: %s", t.nlines ? t.lines[0] : "");
		add_text(v, 1, line, ascii);
		for (int k = 1; k < t.nlines && k <= 6; k++)
			add_text(v, 2, t.lines[k], ascii);
		tui_slide_text_free(&t);
	} else {
		add_text(v, 1, "NEXT: (the end of the deck)", ascii);
	}
}

static void draw(const struct view *v)
{
	int w, h;
	tui_term_size(&w, &h);
	erase();
	for (int i = 0; i < v->n && i < h - 1; i++) {
		int a = v->attr[i] == 1 ? A_BOLD : v->attr[i] == 2 ? A_DIM : v->attr[i] == 3 ? A_REVERSE : A_NORMAL;
		attron(a);
		mvaddnstr(i, 1, v->lines[i], w - 2);
		attroff(a);
	}
	attron(A_DIM);
	mvaddstr(h - 1, 1, "presenter view: follows `hotrow slides` on the main screen;  q quits");
	attroff(A_DIM);
	refresh();
}

int presenter_view(const char *state, int dump, int width, bool ascii)
{
	struct state st, last = { "", -1, 0, 0 };
	struct tui_deck *d = NULL;
	char err[PATH_MAX + 128];
	if (dump) {
		if (read_state(state, &st) != 0) {
			fprintf(stderr, "hotrow slides: no main screen to follow: %s is missing or "
			        "not a state file (start `hotrow slides` first)\n", state);
			return 1;
		}
		if (!(d = tui_deck_load(st.deck, err, sizeof err))) {
			fprintf(stderr, "hotrow slides: %s\n", err);
			return 1;
		}
		if (ascii)
			tui_deck_ascii(d);
		struct view v = {0};
		build(&v, &st, d, width, time(NULL), ascii);
		for (int i = 0; i < v.n; i++)
			printf("%s\n", v.lines[i]);
		view_free(&v);
		tui_deck_free(d);
		return 0;
	}
	if (tui_term_start(getenv("NO_COLOR") == NULL) < 0) {
		fprintf(stderr, "hotrow slides: --presenter needs a terminal; --presenter --dump prints it\n");
		return 2;
	}
	time_t shown = 0;
	while (!tui_term_quit_requested()) {
		int c = tui_term_key(250);
		if (c == 'q' || c == 'Q' || c == 27)
			break;
		time_t now = time(NULL);
		if (read_state(state, &st) != 0) {
			erase();
			mvprintw(1, 1, "Waiting for the main screen: start `hotrow slides` in another terminal.");
			mvprintw(2, 1, "(state file: %s)", state);
			refresh();
			continue;
		}
		if (!d || strcmp(st.deck, last.deck) != 0) {
			tui_deck_free(d);
			if (!(d = tui_deck_load(st.deck, err, sizeof err))) {
				erase();
				mvprintw(1, 1, "%s", err);
				refresh();
				last.deck[0] = '\0';
				continue;
			}
			if (ascii)
				tui_deck_ascii(d);
		}
		if (now == shown && !memcmp(&st, &last, sizeof st) && c < 0)
			continue;
		int w, h;
		tui_term_size(&w, &h);
		struct view v = {0};
		build(&v, &st, d, w - 2 > 20 ? w - 2 : 20, now, ascii);
		draw(&v);
		view_free(&v);
		last = st;
		shown = now;
	}
	tui_term_stop();
	tui_deck_free(d);
	return 0;
}
