/*
 * slides.c: parse a Markdown deck and wrap a slide to a width.
 *
 * The deck is read whole and split at "---" lines. Layout is plain text:
 * the heading loses its '#' marks, paragraphs and list items wrap at word
 * boundaries (continuation lines keep the item's indent), table rows and
 * code are left as they are and cut if too wide.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "engine/xmalloc.h"
#include "tui/slides.h"

struct tui_deck {
	char *text;       /* the whole file, split in place */
	int nslides;
	char **slides;    /* start of each slide inside text, NUL-terminated */
};

static char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static int is_rule(const char *line, size_t len)
{
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r'))
		len--;
	return len == 3 && !memcmp(line, "---", 3);
}

/* Make the text safe to print on a terminal, in place: carriage returns
 * go, and every other control character but tab and newline (ESC among
 * them, with C1 controls in UTF-8 and NULs) becomes '?', so a deck cannot
 * move the cursor, change colours or retitle the window. */
static void defang(char *text)
{
	unsigned char *r = (unsigned char *)text, *w = r;

	for (; *r; r++) {
		if (*r == '\r')
			continue;
		if (*r == 0xc2 && r[1] >= 0x80 && r[1] <= 0x9f) {   /* U+0080..U+009F */
			*w++ = '?';
			r++;
			continue;
		}
		*w++ = (*r < 0x20 && *r != '\t' && *r != '\n') || *r == 0x7f ? '?' : *r;
	}
	*w = '\0';
}

struct tui_deck *tui_deck_load(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	char *text = xmalloc(TUI_DECK_MAX_BYTES + 1);
	size_t len = fread(text, 1, TUI_DECK_MAX_BYTES + 1, f);
	int rerr = ferror(f);
	fclose(f);
	if (rerr || len > TUI_DECK_MAX_BYTES) {
		snprintf(err, errlen, "%s: %s", path, rerr ? "cannot be read"
		         : "too big for a deck (at most 1 MB)");
		free(text);
		return NULL;
	}
	text[len] = '\0';
	defang(text);

	struct tui_deck *d = xcalloc(1, sizeof *d);
	d->text = text;
	char *start = text;
	for (char *p = text;; ) {
		char *nl = strchr(p, '\n');
		size_t linelen = nl ? (size_t)(nl - p) : strlen(p);
		if (is_rule(p, linelen) || !nl) {
			if (!nl)
				p += linelen;
			*p = '\0';
			if (strspn(start, " \t\r\n") < strlen(start)) {
				d->slides = xrealloc(d->slides, (d->nslides + 1) * sizeof *d->slides);
				d->slides[d->nslides++] = start;
			}
			if (!nl)
				break;
			start = nl + 1;
		}
		p = nl + 1;
	}
	if (d->nslides == 0) {
		snprintf(err, errlen, "%s holds no slides (slides are separated by lines of ---)", path);
		tui_deck_free(d);
		return NULL;
	}
	return d;
}

void tui_deck_free(struct tui_deck *d)
{
	if (!d)
		return;
	free(d->slides);
	free(d->text);
	free(d);
}

int tui_deck_count(const struct tui_deck *d)
{
	return d->nslides;
}

int tui_text_width(const char *s)
{
	mbstate_t st;
	int w = 0;

	memset(&st, 0, sizeof st);
	for (size_t left = strlen(s); left > 0; ) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s, left, &st);
		if (n == (size_t)-1 || n == (size_t)-2) {  /* not UTF-8 here: count bytes */
			memset(&st, 0, sizeof st);
			n = 1;
			wc = L'?';
		}
		int cw = wcwidth(wc);
		w += cw > 0 ? cw : 0;
		s += n;
		left -= n;
	}
	return w;
}

/* Bytes of s (of length len) that fit in width columns. */
static size_t fit_bytes(const char *s, size_t len, int width)
{
	mbstate_t st;
	size_t used = 0;
	int w = 0;

	memset(&st, 0, sizeof st);
	while (used < len) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s + used, len - used, &st);
		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			memset(&st, 0, sizeof st);
			n = 1;
			wc = L'?';
		}
		int cw = wcwidth(wc);
		if (w + (cw > 0 ? cw : 0) > width)
			break;
		w += cw > 0 ? cw : 0;
		used += n;
	}
	return used;
}

static void push(struct tui_slide_text *t, enum tui_line_kind kind, const char *s, size_t n)
{
	t->lines = xrealloc(t->lines, (t->nlines + 1) * sizeof *t->lines);
	t->kinds = xrealloc(t->kinds, (t->nlines + 1) * sizeof *t->kinds);
	t->lines[t->nlines] = xstrndup(s, n);
	t->kinds[t->nlines++] = kind;
}

/* Wrap s at spaces into lines of width columns; continuation lines start
 * with indent spaces. Words longer than a line are cut. */
static void wrap(struct tui_slide_text *t, enum tui_line_kind kind, const char *s,
                 int width, int indent)
{
	size_t len = strlen(s);
	int first = 1;

	while (len > 0 || first) {
		char buf[1024];
		int pad = first ? 0 : indent;
		int room = width - pad;
		size_t take = fit_bytes(s, len, room);
		if (take < len) {
			size_t cut = take;
			while (cut > 0 && s[cut] != ' ')
				cut--;
			if (cut > 0)
				take = cut;
		}
		snprintf(buf, sizeof buf, "%*s%.*s", pad, "", (int)take, s);
		push(t, kind, buf, strlen(buf));
		s += take;
		len -= take;
		while (len > 0 && *s == ' ') {
			s++;
			len--;
		}
		first = 0;
	}
}

/* Drop Markdown's ** and ` marks in place: the screen shows plain text. */
static void strip_marks(char *s)
{
	char *o = s;

	for (char *p = s; *p; p++) {
		if (*p == '`')
			continue;
		if (p[0] == '*' && p[1] == '*') {
			p++;
			continue;
		}
		*o++ = *p;
	}
	*o = '\0';
}

/* Copy a Run: command without the Markdown backquotes. */
static char *unquote(const char *s)
{
	char *out = xmalloc(strlen(s) + 1), *o = out;

	for (; *s; s++)
		if (*s != '`')
			*o++ = *s;
	*o = '\0';
	return out;
}

void tui_deck_layout(const struct tui_deck *d, int i, int width, int notes,
                     struct tui_slide_text *out)
{
	if (i < 0)
		i = 0;
	if (i >= d->nslides)
		i = d->nslides - 1;
	if (width < 20)
		width = 20;
	memset(out, 0, sizeof *out);

	const char *p = d->slides[i];
	int blank = 1;   /* collapse runs of blank lines, drop leading ones */
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, n);
		size_t l = strlen(line);
		while (l > 0 && (line[l - 1] == '\r' || line[l - 1] == ' '))
			line[--l] = '\0';
		p += n + (nl != NULL);

		if (l == 0) {
			if (!blank)
				push(out, TUI_LINE_BODY, "", 0);
			blank = 1;
		} else if (line[0] == '#') {
			strip_marks(line);
			const char *h = line + strspn(line, "#");
			wrap(out, TUI_LINE_TITLE, h + strspn(h, " "), width, 0);
			blank = 0;
		} else if (line[0] == '>') {
			if (notes)
				wrap(out, TUI_LINE_NOTE, line[1] == ' ' ? line + 2 : line + 1, width, 0);
			blank = notes ? 0 : blank;
		} else if (!strncmp(line, "Run: ", 5)) {
			char *cmd = unquote(line + 5);
			char buf[1100];
			snprintf(buf, sizeof buf, "$ %s", cmd);
			wrap(out, TUI_LINE_RUN, buf, width, 4);
			if (!out->run)
				out->run = cmd;
			else
				free(cmd);
			blank = 0;
		} else if (!strncmp(line, "Reveal: ", 8)) {
			if (!out->reveal)
				out->reveal = unquote(line + 8);
		} else if (!strncmp(line, "Embed: ", 7)) {
			if (!out->embed)
				out->embed = unquote(line + 7);
		} else if (line[0] == '|') {
			push(out, TUI_LINE_BODY, line, fit_bytes(line, l, width));
			blank = 0;
		} else {
			strip_marks(line);
			int indent = 0;
			if (!strncmp(line, "- ", 2))
				indent = 2;
			else if (line[0] >= '0' && line[0] <= '9' && strchr(line, '.'))
				indent = (int)(strchr(line, '.') - line) + 2;
			wrap(out, TUI_LINE_BODY, line, width, indent);
			blank = 0;
		}
		free(line);
	}
	while (out->nlines > 0 && out->lines[out->nlines - 1][0] == '\0') {
		free(out->lines[--out->nlines]);
	}
}

void tui_slide_text_free(struct tui_slide_text *t)
{
	for (int i = 0; i < t->nlines; i++)
		free(t->lines[i]);
	free(t->lines);
	free(t->kinds);
	free(t->run);
	free(t->reveal);
	free(t->embed);
	memset(t, 0, sizeof *t);
}
