/*
 * slides.c: parse a Markdown deck and wrap a slide to a width.
 *
 * The deck is read whole and split at "---" lines. Layout is text with a
 * style per byte: the heading loses its '#' marks, **bold** and `code`
 * lose their marks and keep their style, paragraphs and list items wrap
 * at word boundaries (continuation lines keep the item's indent, "- "
 * becomes a bullet), tables are drawn as aligned columns that wrap their
 * cells, commands fold with a trailing backslash, and <!-- --> comments
 * (notes for whoever edits the deck) are never shown.
 */
#include <errno.h>
#include <stdbool.h>
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
	char **folded;    /* after tui_deck_ascii: each slide in ASCII, owned */
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
	for (int i = 0; d->folded && i < d->nslides; i++)
		free(d->folded[i]);
	free(d->folded);
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

/* Append a line of n bytes; style (n bytes, or NULL for plain) says how
 * each byte is drawn. */
static void push(struct tui_slide_text *t, enum tui_line_kind kind, const char *s,
                 const char *style, size_t n)
{
	t->lines = xrealloc(t->lines, (t->nlines + 1) * sizeof *t->lines);
	t->styles = xrealloc(t->styles, (t->nlines + 1) * sizeof *t->styles);
	t->kinds = xrealloc(t->kinds, (t->nlines + 1) * sizeof *t->kinds);
	t->lines[t->nlines] = xstrndup(s, n);
	t->styles[t->nlines] = xmalloc(n + 1);
	if (style)
		memcpy(t->styles[t->nlines], style, n);
	else
		memset(t->styles[t->nlines], TUI_STYLE_PLAIN, n);
	t->styles[t->nlines][n] = '\0';
	t->kinds[t->nlines++] = kind;
}

/* Wrap s (its bytes styled by style, NULL for plain) at spaces into lines
 * of width columns; continuation lines start with indent spaces. A word
 * longer than a line is cut, and counted in t->cut. */
static void wrap(struct tui_slide_text *t, enum tui_line_kind kind, const char *s,
                 const char *style, int width, int indent)
{
	size_t len = strlen(s);
	int first = 1;

	while (len > 0 || first) {
		int pad = first ? 0 : indent;
		int room = width - pad > 1 ? width - pad : 1;
		size_t take = fit_bytes(s, len, room);
		if (take < len) {
			size_t cut = take;
			while (cut > 0 && s[cut] != ' ')
				cut--;
			if (cut > 0)
				take = cut;
			else if (s[take] != ' ')
				t->cut++;
			if (take == 0)     /* not even one character fits */
				take = 1;
		}
		char *buf = xmalloc((size_t)pad + take + 1), *sty = xmalloc((size_t)pad + take + 1);
		memset(buf, ' ', (size_t)pad);
		memset(sty, TUI_STYLE_PLAIN, (size_t)pad);
		memcpy(buf + pad, s, take);
		if (style)
			memcpy(sty + pad, style, take);
		else
			memset(sty + pad, TUI_STYLE_PLAIN, take);
		push(t, kind, buf, sty, (size_t)pad + take);
		free(buf);
		free(sty);
		s += take;
		if (style)
			style += take;
		len -= take;
		while (len > 0 && *s == ' ') {
			s++;
			if (style)
				style++;
			len--;
		}
		first = 0;
	}
}

/* Drop Markdown's ** and ` marks from s in place, and write into style
 * (at least strlen(s) + 1 bytes) how each remaining byte is drawn: bold
 * between ** marks, code between backquotes. */
static void strip_marks(char *s, char *style)
{
	char *o = s, *so = style;
	bool bold = false, code = false;

	for (char *p = s; *p; p++) {
		if (*p == '`') {
			code = !code;
			continue;
		}
		if (!code && p[0] == '*' && p[1] == '*') {
			bold = !bold;
			p++;
			continue;
		}
		*o++ = *p;
		*so++ = code ? TUI_STYLE_CODE : bold ? TUI_STYLE_BOLD : TUI_STYLE_PLAIN;
	}
	*o = '\0';
	*so = '\0';
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

void tui_fold_command(struct tui_slide_text *t, enum tui_line_kind kind, const char *cmd,
                      int width)
{
	struct tui_slide_text w;
	char *line = xmalloc(strlen(cmd) + 3);

	sprintf(line, "$ %s", cmd);
	memset(&w, 0, sizeof w);
	wrap(&w, kind, line, NULL, width > 24 ? width - 2 : 22, 4);
	for (int i = 0; i < w.nlines; i++) {
		if (i + 1 < w.nlines) {
			char *cont = xmalloc(strlen(w.lines[i]) + 3);
			sprintf(cont, "%s \\", w.lines[i]);
			push(t, kind, cont, NULL, strlen(cont));
			free(cont);
		} else {
			push(t, kind, w.lines[i], NULL, strlen(w.lines[i]));
		}
	}
	t->cut += w.cut;
	free(line);
	tui_slide_text_free(&w);
}

/* One cell of a table row, from p up to the next '|' (or the end):
 * trimmed, marks stripped. *p moves past the cell. */
static void cell(const char **p, char **text, char **style)
{
	const char *q = *p;
	while (*q && *q != '|')
		q++;
	const char *a = *p, *b = q;
	while (a < b && *a == ' ')
		a++;
	while (b > a && b[-1] == ' ')
		b--;
	*text = xstrndup(a, (size_t)(b - a));
	*style = xmalloc((size_t)(b - a) + 1);
	strip_marks(*text, *style);
	*p = *q ? q + 1 : q;
}

static bool is_separator(const char *cell_text)
{
	return *cell_text && strspn(cell_text, ":- ") == strlen(cell_text) && strchr(cell_text, '-');
}

#define TABLE_COLS 8

/* Lay out a Markdown table (rows: its lines, each starting with '|') to
 * width: the header bold with a rule under it, the separator row gone,
 * columns two spaces apart; when the table is too wide the widest column
 * narrows and its cells wrap. */
static void table(struct tui_slide_text *t, char **rows, int nrows, int width)
{
	char *text[64][TABLE_COLS], *style[64][TABLE_COLS];
	int ncols = 0, n = 0, colw[TABLE_COLS] = {0};
	bool head = false;

	for (int r = 0; r < nrows && n < 64; r++) {
		const char *p = rows[r] + 1;
		int c = 0;
		char *tx, *st;
		bool sep = true;
		while (*p && c < TABLE_COLS) {
			cell(&p, &tx, &st);
			if (!*p && !*tx && c > 0) {       /* after the last '|' */
				free(tx);
				free(st);
				break;
			}
			sep = sep && is_separator(tx);
			text[n][c] = tx;
			style[n][c++] = st;
		}
		if (sep && c > 0) {        /* |---|---|: the line under the header */
			for (int k = 0; k < c; k++) {
				free(text[n][k]);
				free(style[n][k]);
			}
			head = n == 1;
			continue;
		}
		for (int k = c; k < TABLE_COLS; k++) {
			text[n][k] = xstrndup("", 0);
			style[n][k] = xstrndup("", 0);
		}
		ncols = c > ncols ? c : ncols;
		n++;
	}
	for (int r = 0; r < n; r++)
		for (int c = 0; c < ncols; c++) {
			int w = tui_text_width(text[r][c]);
			colw[c] = w > colw[c] ? w : colw[c];
		}
	for (;;) {            /* narrow the widest column until the table fits */
		int total = 2 * (ncols - 1), widest = 0;
		for (int c = 0; c < ncols; c++) {
			total += colw[c];
			widest = colw[c] > colw[widest] ? c : widest;
		}
		if (total <= width || colw[widest] <= 6)
			break;
		colw[widest]--;
	}
	for (int r = 0; r < n; r++) {
		struct tui_slide_text cells[TABLE_COLS];
		int height = 1;
		for (int c = 0; c < ncols; c++) {
			memset(&cells[c], 0, sizeof cells[c]);
			if (head && r == 0)
				memset(style[r][c], TUI_STYLE_BOLD, strlen(style[r][c]));
			wrap(&cells[c], TUI_LINE_BODY, text[r][c], style[r][c], colw[c], 0);
			t->cut += cells[c].cut;
			height = cells[c].nlines > height ? cells[c].nlines : height;
		}
		for (int k = 0; k < height; k++) {
			char line[1024], sty[1024];
			size_t len = 0;
			for (int c = 0; c < ncols && len + 200 < sizeof line; c++) {
				const char *s = k < cells[c].nlines ? cells[c].lines[k] : "";
				const char *y = k < cells[c].nlines ? cells[c].styles[k] : "";
				size_t b = strlen(s);
				int pad = colw[c] - tui_text_width(s) + (c + 1 < ncols ? 2 : 0);
				if (len + b + (size_t)(pad > 0 ? pad : 0) >= sizeof line)
					break;
				memcpy(line + len, s, b);
				memcpy(sty + len, y, b);
				len += b;
				for (; pad > 0 && c + 1 < ncols; pad--) {
					line[len] = ' ';
					sty[len++] = TUI_STYLE_PLAIN;
				}
			}
			while (len > 0 && line[len - 1] == ' ')
				len--;
			push(t, TUI_LINE_BODY, line, sty, len);
		}
		for (int c = 0; c < ncols; c++)
			tui_slide_text_free(&cells[c]);
		if (head && r == 0) {     /* a rule under the header */
			int w = 2 * (ncols - 1);
			for (int c = 0; c < ncols; c++)
				w += colw[c];
			char rule[3 * 1024 + 1];
			int k = 0;
			for (; k < w && k < 1024; k++)
				memcpy(rule + 3 * k, "\xe2\x94\x80", 3);   /* U+2500 */
			push(t, TUI_LINE_BODY, rule, NULL, 3 * (size_t)k);
		}
	}
	for (int r = 0; r < n; r++)
		for (int c = 0; c < TABLE_COLS; c++) {
			free(text[r][c]);
			free(style[r][c]);
		}
}

/* A list item's marker: "- " or "* " (after any indent) becomes a bullet;
 * "1. " stays. Returns the columns a continuation line is indented by,
 * or -1 when line is no list item. The bullet is written into line. */
static int list_item(char **line, char **style, bool ascii)
{
	char *s = *line;
	size_t lead = strspn(s, " ");

	if ((s[lead] == '-' || s[lead] == '*') && s[lead + 1] == ' ') {
		char *out = xmalloc(strlen(s) + 3), *sty = xmalloc(strlen(s) + 3);
		memcpy(out, s, lead);
		const char *bullet = ascii ? "-" : "\xe2\x80\xa2";    /* U+2022 */
		size_t b = strlen(bullet);
		memcpy(out + lead, bullet, b);
		strcpy(out + lead + b, s + lead + 1);
		memset(sty, TUI_STYLE_PLAIN, lead + b);
		memcpy(sty + lead + b, *style + lead + 1, strlen(s + lead + 1) + 1);
		free(*line);
		free(*style);
		*line = out;
		*style = sty;
		return (int)lead + 2;
	}
	size_t digits = strspn(s + lead, "0123456789");
	if (digits > 0 && s[lead + digits] == '.' && s[lead + digits + 1] == ' ')
		return (int)(lead + digits) + 2;
	return -1;
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
	bool comment = false;   /* inside <!-- -->: notes for the deck's authors */
	char **rows = NULL;     /* a table's lines, until the table ends */
	int nrows = 0;
	while (*p || nrows) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, n);
		size_t l = strlen(line);
		while (l > 0 && (line[l - 1] == '\r' || line[l - 1] == ' '))
			line[--l] = '\0';
		p += n + (nl != NULL);

		if (comment || !strncmp(line, "<!--", 4)) {
			comment = strstr(line, "-->") == NULL;
			free(line);
			continue;
		}
		if (line[0] == '|' && (*p || nl)) {
			rows = xrealloc(rows, (size_t)(nrows + 1) * sizeof *rows);
			rows[nrows++] = line;
			continue;
		}
		if (nrows) {
			table(out, rows, nrows, width);
			for (int k = 0; k < nrows; k++)
				free(rows[k]);
			nrows = 0;
			blank = 0;
			if (line[0] == '|') {      /* the deck's last line was a row */
				rows = xrealloc(rows, sizeof *rows);
				rows[nrows++] = line;
				continue;
			}
		}
		char *style = xmalloc(l + 4);
		memset(style, TUI_STYLE_PLAIN, l);
		style[l] = '\0';

		if (l == 0) {
			if (!blank && (*p || nl))
				push(out, TUI_LINE_BODY, "", NULL, 0);
			blank = 1;
		} else if (line[0] == '#') {
			strip_marks(line, style);
			size_t skip = strspn(line, "#");
			skip += strspn(line + skip, " ");
			wrap(out, TUI_LINE_TITLE, line + skip, style + skip, width, 0);
			blank = 0;
		} else if (line[0] == '>') {
			if (notes) {
				size_t skip = line[1] == ' ' ? 2 : 1;
				strip_marks(line + skip, style);
				wrap(out, TUI_LINE_NOTE, line + skip, style, width, 0);
			}
			blank = notes ? 0 : blank;
		} else if (!strncmp(line, "Run: ", 5)) {
			char *cmd = unquote(line + 5);
			tui_fold_command(out, TUI_LINE_RUN, cmd, width);
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
		} else if (!strncmp(line, "Exits: ", 7)) {
			if (!out->exits)
				out->exits = unquote(line + 7);
		} else if (!strncmp(line, "Expect: ", 8)) {
			if (!out->expect)
				out->expect = unquote(line + 8);
		} else if (!strncmp(line, "    ", 4)) {      /* code, as it is */
			push(out, TUI_LINE_BODY, line, NULL, fit_bytes(line, l, width));
			out->cut += fit_bytes(line, l, width) < l;
			blank = 0;
		} else {
			strip_marks(line, style);
			int indent = list_item(&line, &style, d->folded != NULL);
			wrap(out, TUI_LINE_BODY, line, style, width, indent > 0 ? indent : 0);
			blank = 0;
		}
		free(style);
		free(line);
	}
	free(rows);
	while (out->nlines > 0 && out->lines[out->nlines - 1][0] == '\0') {
		free(out->lines[--out->nlines]);
		free(out->styles[out->nlines]);
	}
}

/* What the ASCII fallback writes for the characters decks and the
 * engine's screens use; anything else becomes '?'. */
static const struct { const char *utf8, *ascii; } folds[] = {
	{ "\xc3\x97", "x" },  { "\xce\xbb", "lambda" }, { "\xce\xbc", "mu" },
	{ "\xcf\x81", "rho" }, { "\xe2\x80\x93", "-" }, { "\xe2\x80\x94", "--" },
	{ "\xe2\x88\x92", "-" }, { "\xc2\xb7", "*" },   { "\xe2\x80\xa2", "-" },
	{ "\xe2\x94\x80", "-" }, { "\xe2\x80\xa6", "..." }, { "\xe2\x89\x88", "~" },
	{ "\xe2\x89\xa5", ">=" }, { "\xe2\x89\xa4", "<=" }, { "\xe2\x86\x92", "->" },
	{ "\xe2\x80\x9c", "\"" }, { "\xe2\x80\x9d", "\"" }, { "\xe2\x80\x98", "'" },
	{ "\xe2\x80\x99", "'" }, { "\xc2\xb5", "u" },   { "\xc2\xa0", " " },
	{ "\xc2\xb2", "^2" },
};

char *tui_text_ascii(const char *s, const char *style, char **style_out)
{
	size_t cap = strlen(s) * 2 + 16, n = 0;
	char *out = xmalloc(cap), *sty = xmalloc(cap);

	while (*s) {
		const char *rep = NULL;
		size_t used = 1;
		if ((unsigned char)*s >= 0x80) {
			for (size_t k = 0; k < sizeof folds / sizeof folds[0] && !rep; k++)
				if (!strncmp(s, folds[k].utf8, strlen(folds[k].utf8)))
					rep = folds[k].ascii, used = strlen(folds[k].utf8);
			if (!rep) {             /* skip the rest of an unknown character */
				rep = "?";
				while ((unsigned char)s[used] >= 0x80 && (unsigned char)s[used] < 0xc0)
					used++;
			}
		}
		size_t rl = rep ? strlen(rep) : 1;
		if (n + rl + 1 >= cap) {
			cap = cap * 2 + rl;
			out = xrealloc(out, cap);
			sty = xrealloc(sty, cap);
		}
		memcpy(out + n, rep ? rep : s, rl);
		memset(sty + n, style ? *style : TUI_STYLE_PLAIN, rl);
		n += rl;
		s += used;
		if (style)
			style += used;
	}
	out[n] = sty[n] = '\0';
	if (style_out)
		*style_out = sty;
	else
		free(sty);
	return out;
}

void tui_deck_ascii(struct tui_deck *d)
{
	if (d->folded)
		return;
	d->folded = xcalloc((size_t)d->nslides, sizeof *d->folded);
	for (int i = 0; i < d->nslides; i++)
		d->slides[i] = d->folded[i] = tui_text_ascii(d->slides[i], NULL, NULL);
}

void tui_slide_text_ascii(struct tui_slide_text *t)
{
	for (int i = 0; i < t->nlines; i++) {
		char *sty, *a = tui_text_ascii(t->lines[i], t->styles[i], &sty);
		free(t->lines[i]);
		free(t->styles[i]);
		t->lines[i] = a;
		t->styles[i] = sty;
	}
}

void tui_slide_text_free(struct tui_slide_text *t)
{
	for (int i = 0; i < t->nlines; i++) {
		free(t->lines[i]);
		free(t->styles[i]);
	}
	free(t->lines);
	free(t->styles);
	free(t->kinds);
	free(t->run);
	free(t->reveal);
	free(t->embed);
	free(t->expect);
	free(t->exits);
	memset(t, 0, sizeof *t);
}
