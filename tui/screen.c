/*
 * screen.c: the cell grid, its text dump and its copy-out to ncurses.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <ncurses.h>

#include "tui/screen.h"
#include "engine/xmalloc.h"

struct tui_screen *tui_screen_new(int w, int h)
{
	struct tui_screen *s = xcalloc(1, sizeof *s);
	tui_screen_resize(s, w, h);
	return s;
}

void tui_screen_free(struct tui_screen *s)
{
	if (!s)
		return;
	free(s->cells);
	free(s);
}

void tui_screen_resize(struct tui_screen *s, int w, int h)
{
	assert(w >= 1 && h >= 1);
	free(s->cells);
	s->w = w;
	s->h = h;
	s->cells = xcalloc((size_t)w * (size_t)h, sizeof *s->cells);
	tui_screen_clear(s);
}

void tui_screen_clear(struct tui_screen *s)
{
	struct tui_rect all = {0, 0, s->w, s->h};
	tui_screen_fill(s, all, ' ', TUI_NORMAL);
}

void tui_screen_put(struct tui_screen *s, int x, int y, uint32_t ch,
                    enum tui_style st)
{
	if (x < 0 || y < 0 || x >= s->w || y >= s->h)
		return;
	struct tui_cell *c = &s->cells[(size_t)y * (size_t)s->w + (size_t)x];
	c->ch = ch;
	c->style = (uint8_t)st;
}

uint32_t tui_utf8_next(const char **p)
{
	const unsigned char *u = (const unsigned char *)*p;
	uint32_t cp;
	int n;

	if (u[0] < 0x80) {
		*p += 1;
		return u[0];
	}
	if ((u[0] & 0xE0) == 0xC0)
		cp = u[0] & 0x1F, n = 1;
	else if ((u[0] & 0xF0) == 0xE0)
		cp = u[0] & 0x0F, n = 2;
	else if ((u[0] & 0xF8) == 0xF0)
		cp = u[0] & 0x07, n = 3;
	else {
		*p += 1;
		return 0xFFFD;
	}
	for (int i = 1; i <= n; i++) {
		if ((u[i] & 0xC0) != 0x80) {
			*p += i;
			return 0xFFFD;
		}
		cp = (cp << 6) | (u[i] & 0x3F);
	}
	*p += n + 1;
	return cp;
}

int tui_utf8_put(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

int tui_screen_text(struct tui_screen *s, int x, int y, int maxw,
                    enum tui_style st, const char *utf8)
{
	int n = 0;

	if (maxw < 0)
		maxw = s->w - x;
	while (*utf8 && n < maxw) {
		uint32_t cp = tui_utf8_next(&utf8);
		if (cp < 0x20 || cp == 0x7F)
			cp = '?';
		tui_screen_put(s, x + n, y, cp, st);
		n++;
	}
	return n;
}

int tui_screen_textf(struct tui_screen *s, int x, int y, int maxw,
                     enum tui_style st, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return tui_screen_text(s, x, y, maxw, st, buf);
}

void tui_screen_fill(struct tui_screen *s, struct tui_rect r, uint32_t ch,
                     enum tui_style st)
{
	for (int y = r.y; y < r.y + r.h; y++)
		for (int x = r.x; x < r.x + r.w; x++)
			tui_screen_put(s, x, y, ch, st);
}

void tui_screen_restyle(struct tui_screen *s, struct tui_rect r,
                        enum tui_style st)
{
	for (int y = r.y; y < r.y + r.h; y++)
		for (int x = r.x; x < r.x + r.w; x++)
			if (x >= 0 && y >= 0 && x < s->w && y < s->h)
				s->cells[(size_t)y * (size_t)s->w + (size_t)x].style =
					(uint8_t)st;
}

const struct tui_cell *tui_screen_at(const struct tui_screen *s, int x, int y)
{
	if (x < 0 || y < 0 || x >= s->w || y >= s->h)
		return NULL;
	return &s->cells[(size_t)y * (size_t)s->w + (size_t)x];
}

char *tui_screen_row(const struct tui_screen *s, int y, char *buf, size_t len)
{
	size_t n = 0, keep = 0;

	assert(len >= 1);
	for (int x = 0; x < s->w && y >= 0 && y < s->h; x++) {
		char u[4];
		uint32_t cp = s->cells[(size_t)y * (size_t)s->w + (size_t)x].ch;
		int k = tui_utf8_put(cp, u);
		if (n + (size_t)k >= len)
			break;
		memcpy(buf + n, u, (size_t)k);
		n += (size_t)k;
		if (cp != ' ')
			keep = n;
	}
	buf[keep] = '\0';
	return buf;
}

void tui_screen_dump(const struct tui_screen *s, FILE *out)
{
	size_t len = (size_t)s->w * 4 + 1;
	char *buf = xcalloc(len, 1);

	for (int y = 0; y < s->h; y++)
		fprintf(out, "%s\n", tui_screen_row(s, y, buf, len));
	free(buf);
}

bool tui_screen_has(const struct tui_screen *s, const char *utf8)
{
	size_t len = (size_t)s->w * 4 + 1;
	char *buf = xcalloc(len, 1);
	bool found = false;

	for (int y = 0; y < s->h && !found; y++)
		found = strstr(tui_screen_row(s, y, buf, len), utf8) != NULL;
	free(buf);
	return found;
}

/* ---- ncurses ---- */

static attr_t style_attr[TUI_NSTYLES];

void tui_screen_colors(bool colour)
{
	/* Without colour, meaning rides on bold, reverse and dim; the glyphs
	 * already differ, so nothing depends on colour alone. */
	static const attr_t plain[TUI_NSTYLES] = {
		[TUI_DIM] = A_DIM,
		[TUI_BOLD] = A_BOLD,
		[TUI_TITLE] = A_REVERSE | A_BOLD,
		[TUI_HEAD] = A_BOLD | A_UNDERLINE,
		[TUI_WARN] = A_BOLD,
		[TUI_BAD] = A_BOLD | A_REVERSE,
		[TUI_HOLD] = A_BOLD,
		[TUI_WAIT3] = A_BOLD,
		[TUI_KEY] = A_REVERSE,
	};
	static const struct { short fg, bg; attr_t extra; } pairs[TUI_NSTYLES] = {
		[TUI_NORMAL] = {-1, -1, 0},
		[TUI_DIM] = {-1, -1, A_DIM},
		[TUI_BOLD] = {-1, -1, A_BOLD},
		[TUI_TITLE] = {COLOR_BLACK, COLOR_CYAN, A_BOLD},
		[TUI_HEAD] = {COLOR_CYAN, -1, A_BOLD},
		[TUI_GOOD] = {COLOR_GREEN, -1, A_BOLD},
		[TUI_WARN] = {COLOR_YELLOW, -1, A_BOLD},
		[TUI_BAD] = {COLOR_RED, -1, A_BOLD},
		[TUI_HOLD] = {COLOR_GREEN, -1, A_BOLD},
		[TUI_WAIT1] = {COLOR_YELLOW, -1, 0},
		[TUI_WAIT2] = {COLOR_MAGENTA, -1, A_BOLD},
		[TUI_WAIT3] = {COLOR_RED, -1, A_BOLD},
		[TUI_UNREL] = {COLOR_CYAN, -1, 0},
		[TUI_FLUSH] = {COLOR_BLUE, -1, A_BOLD},
		[TUI_SERIES1] = {COLOR_CYAN, -1, 0},
		[TUI_SERIES2] = {COLOR_YELLOW, -1, 0},
		[TUI_KEY] = {COLOR_BLACK, COLOR_WHITE, 0},
	};

	for (int i = 0; i < TUI_NSTYLES; i++)
		style_attr[i] = plain[i];
	if (!colour || !has_colors() || start_color() == ERR)
		return;
	use_default_colors();
	for (int i = 1; i < TUI_NSTYLES; i++) {
		if (init_pair((short)i, pairs[i].fg, pairs[i].bg) == ERR)
			continue;
		style_attr[i] = COLOR_PAIR(i) | pairs[i].extra;
	}
}

unsigned long tui_screen_style_attr(enum tui_style st)
{
	return (unsigned long)style_attr[st];
}

void tui_screen_blit(const struct tui_screen *s)
{
	int rows = s->h < LINES ? s->h : LINES;
	int cols = s->w < COLS ? s->w : COLS;

	for (int y = 0; y < rows; y++) {
		const struct tui_cell *c = &s->cells[(size_t)y * (size_t)s->w];
		for (int x = 0; x < cols; x++) {
			/* The bottom-right cell would scroll some terminals. */
			if (y == LINES - 1 && x == COLS - 1)
				break;
			attr_t a = style_attr[c[x].style];
			if (c[x].ch < 0x80) {
				mvaddch(y, x, (chtype)c[x].ch | a);
			} else {
				cchar_t cc;
				wchar_t wc[2] = {(wchar_t)c[x].ch, 0};
				setcchar(&cc, wc, a & ~A_COLOR, (short)PAIR_NUMBER(a), NULL);
				mvadd_wch(y, x, &cc);
			}
		}
	}
	wnoutrefresh(stdscr);
}
