/*
 * compare.c: the setups compare mode can show, and their picker.
 */
#include <stdio.h>
#include <string.h>

#include <ncurses.h>

#include "cli/simconf.h"
#include "tui/compare.h"

void tui_compare_init(struct tui_compare *p, const char *const *files, int n)
{
	memset(p, 0, sizeof *p);
	for (int i = 0; i < n && p->nfiles < TUI_CMP_MAX_FILES; i++)
		p->files[p->nfiles++] = files[i];
	for (const char *const *s = sim_scenario_names(); *s; s++)
		p->nscenarios++;
	p->pick[0] = TUI_CMP_CURRENT;
	p->pick[1] = TUI_CMP_NAIVE;
}

int tui_compare_count(const struct tui_compare *p)
{
	return TUI_CMP_FIRST_SCENARIO + p->nscenarios + p->nfiles;
}

const char *tui_compare_name(const struct tui_compare *p, int k)
{
	if (k == TUI_CMP_CURRENT)
		return "the current setup";
	if (k == TUI_CMP_NAIVE)
		return "the current setup on one row (naive)";
	k -= TUI_CMP_FIRST_SCENARIO;
	if (k >= 0 && k < p->nscenarios)
		return sim_scenario_names()[k];
	k -= p->nscenarios;
	return k >= 0 && k < p->nfiles ? p->files[k] : "";
}

int tui_compare_find(const struct tui_compare *p, const char *word)
{
	if (!strcmp(word, "current"))
		return TUI_CMP_CURRENT;
	if (!strcmp(word, "naive"))
		return TUI_CMP_NAIVE;
	for (int k = TUI_CMP_FIRST_SCENARIO; k < tui_compare_count(p); k++)
		if (!strcmp(tui_compare_name(p, k), word))
			return k;
	return -1;
}

void tui_compare_open(struct tui_compare *p)
{
	p->open = true;
	p->column = 1;             /* B is the one to choose, A is what runs */
}

enum tui_cmp_key tui_compare_key(struct tui_compare *p, int key)
{
	int n = tui_compare_count(p);
	int *k = &p->pick[p->column];

	switch (key) {
	case KEY_LEFT: case 'h':
		p->column = 0;
		break;
	case KEY_RIGHT: case 'l':
		p->column = 1;
		break;
	case '\t':
		p->column = !p->column;
		break;
	case KEY_UP: case 'k':
		*k = *k > 0 ? *k - 1 : n - 1;
		break;
	case KEY_DOWN: case 'j':
		*k = *k + 1 < n ? *k + 1 : 0;
		break;
	case '\r': case '\n': case KEY_ENTER:
		p->open = false;
		return TUI_CMP_GO;
	case 27: case 'q': case 'c':
		p->open = false;
		return TUI_CMP_CLOSE;
	default:
		break;
	}
	return TUI_CMP_STAY;
}

/* The last part of a path: a pane's label has little room. */
static const char *base(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int tui_compare_setup(const struct tui_compare *p, int k, const struct sim_config *current,
                      struct sim_config *out, char *label, size_t labellen,
                      char *err, size_t errlen)
{
	struct sim_config c;
	char why[SIMCONF_ERR];
	int f = k - TUI_CMP_FIRST_SCENARIO - p->nscenarios;

	if (k < 0 || k >= tui_compare_count(p)) {
		snprintf(err, errlen, "no such setup");
		return -1;
	}
	if (k == TUI_CMP_CURRENT) {
		c = *current;
		snprintf(label, labellen, "current");
	} else if (k == TUI_CMP_NAIVE) {
		c = *current;
		c.strategy = SIM_NAIVE;
		c.rows = 1;
		snprintf(label, labellen, "naive");
	} else if (f < 0) {
		/* as the TUI loads a scenario: endless, random arrivals */
		const char *name = tui_compare_name(p, k);
		sim_config_default(&c);
		sim_scenario(name, &c);
		c.arrivals = SIM_ARRIVE_POISSON;
		snprintf(label, labellen, "%s", name);
	} else {
		if (simconf_load(p->files[f], &c, why, sizeof why) < 0) {
			snprintf(err, errlen, "%s", why);
			return -1;
		}
		snprintf(label, labellen, "%s", base(p->files[f]));
	}
	c.seconds = 0;               /* the screen runs until you quit */
	if (sim_config_check(&c, why, sizeof why) < 0) {
		snprintf(err, errlen, "%s: %s", tui_compare_name(p, k), why);
		return -1;
	}
	sim_config_round(&c);
	*out = c;
	return 0;
}

static void outline(struct tui_screen *s, struct tui_rect r, const struct tui_glyphs *g)
{
	tui_screen_fill(s, r, ' ', TUI_NORMAL);
	for (int x = r.x; x < r.x + r.w; x++) {
		tui_screen_put(s, x, r.y, g->hline, TUI_HEAD);
		tui_screen_put(s, x, r.y + r.h - 1, g->hline, TUI_HEAD);
	}
	for (int y = r.y; y < r.y + r.h; y++) {
		tui_screen_put(s, r.x, y, g->vline, TUI_HEAD);
		tui_screen_put(s, r.x + r.w - 1, y, g->vline, TUI_HEAD);
	}
	tui_screen_put(s, r.x, r.y, g->box[0], TUI_HEAD);
	tui_screen_put(s, r.x + r.w - 1, r.y, g->box[1], TUI_HEAD);
	tui_screen_put(s, r.x, r.y + r.h - 1, g->box[2], TUI_HEAD);
	tui_screen_put(s, r.x + r.w - 1, r.y + r.h - 1, g->box[3], TUI_HEAD);
}

void tui_compare_draw(struct tui_screen *s, const struct tui_compare *p,
                      const struct tui_glyphs *g)
{
	int n = tui_compare_count(p);
	int w = s->w - 4 < 96 ? s->w - 4 : 96;
	int h = n + 6 < s->h - 2 ? n + 6 : s->h - 2;
	struct tui_rect r = { (s->w - w) / 2, (s->h - h) / 2, w, h };
	int colw = (w - 5) / 2, rows = h - 6;

	if (w < 30 || h < 8)
		return;
	outline(s, r, g);
	tui_screen_text(s, r.x + 2, r.y, w - 4, TUI_HEAD,
	                " COMPARE  (Left/Right: side, Up/Down: setup, Enter: compare, Esc: close) ");
	for (int c = 0; c < 2; c++) {
		int x = r.x + 2 + c * (colw + 1);
		int sel = p->pick[c];
		int first = sel >= rows ? sel - rows + 1 : 0;
		tui_screen_text(s, x, r.y + 2, colw, c == p->column ? TUI_KEY : TUI_BOLD,
		                c ? "B, the right side" : "A, the left side");
		for (int k = first; k < n && k - first < rows; k++) {
			int y = r.y + 3 + k - first;
			bool on = k == sel;
			enum tui_style st = on ? (c == p->column ? TUI_KEY : TUI_BOLD) : TUI_NORMAL;
			if (on)
				tui_screen_fill(s, (struct tui_rect){x, y, colw, 1}, ' ', st);
			tui_screen_textf(s, x, y, colw, st, "%s %s", on ? ">" : " ",
			                 tui_compare_name(p, k));
		}
	}
	tui_screen_text(s, r.x + 2, r.y + h - 2, w - 4, TUI_DIM,
	                "Both sides run on one seed (the same arrivals) and share each chart's "
	                "scale; the keys then change B.");
}
