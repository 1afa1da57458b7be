/*
 * slidehtml.c: `hotrow slides --html`, the deck as one HTML page for a
 * handout (see slides.h).
 *
 * Each slide is laid out by the same code as the screen (tui/slides.c) at
 * 80 columns and written as preformatted text, so the handout reads as the
 * room saw it; bold and code keep their style. What the commands print is
 * run here, now, with this shell's environment: the handout shows the
 * engine's real output, not a copy that could drift.
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "cli/presenter.h"
#include "cli/slides.h"
#include "engine/xmalloc.h"

#define WIDTH 80
#define FIGURES 16

/* s as HTML text: &, <, > and quotes escaped, control characters gone. */
static void esc(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '&')
			fputs("&amp;", out);
		else if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (c >= 0x20 || c == '\n' || c == '\t')
			fputc(c, out);
	}
}

/* One laid-out line with its styles: <b> for bold, <code> for code. */
static void styled(FILE *out, const char *text, const char *style)
{
	size_t n = strlen(text);
	for (size_t i = 0; i < n; ) {
		size_t j = i + 1;
		while (j < n && style[j] == style[i])
			j++;
		const char *tag = style[i] == TUI_STYLE_BOLD ? "b" : style[i] == TUI_STYLE_CODE
		                  ? "code" : NULL;
		if (tag)
			fprintf(out, "<%s>", tag);
		esc(out, text + i, j - i);
		if (tag)
			fprintf(out, "</%s>", tag);
		i = j;
	}
	fputc('\n', out);
}

static void output(FILE *out, const char *cls, const char *cmd, const struct slides_outcome *r)
{
	fprintf(out, "<pre class=\"%s\">$ ", cls);
	esc(out, cmd, strlen(cmd));
	fputc('\n', out);
	esc(out, r->out, strlen(r->out));
	if (r->timed_out)
		fputs("(stopped: it ran too long for the handout)\n", out);
	else if (r->status != 0 && WIFEXITED(r->status))
		fprintf(out, "(exit %d)\n", WEXITSTATUS(r->status));
	fputs("</pre>\n", out);
}

/* The figure docs/figures/NAME.svg, inline (its XML declaration dropped). */
static void figure(FILE *out, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "docs/figures/%s", name);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(out, "<p class=\"missing\">(figure %s: not in this tree)</p>\n", name);
		return;
	}
	fputs("<figure>\n", out);
	char buf[4096];
	size_t n;
	bool first = true;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		char *p = buf;
		if (first && n > 5 && !memcmp(buf, "<?xml", 5)) {   /* the declaration */
			char *end = memchr(buf, '>', n);
			if (end) {
				n -= (size_t)(end + 1 - buf);
				p = end + 1;
			}
		}
		first = false;
		fwrite(p, 1, n, out);
	}
	fclose(f);
	fprintf(out, "<figcaption>%s</figcaption></figure>\n", name);
}

/* The figures a slide names (docs/figures/NAME.svg, notes included),
 * each once in the whole handout: into names, their count returned. */
static int figures_of(const struct tui_deck *d, int i, char names[][64], int max,
                      char shown[][64], int *nshown)
{
	struct tui_slide_text t;
	int n = 0;
	tui_deck_layout(d, i, 1000, 1, &t);
	for (int k = 0; k < t.nlines; k++)
		for (const char *p = t.lines[k]; (p = strstr(p, "docs/figures/")); ) {
			p += 13;
			size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-");
			if (len == 0 || strncmp(p + len, ".svg", 4) || len + 5 > 64)
				continue;
			char name[64];
			snprintf(name, sizeof name, "%.*s.svg", (int)len, p);
			bool seen = false;
			for (int s = 0; s < *nshown && !seen; s++)
				seen = !strcmp(shown[s], name);
			if (!seen && n < max && *nshown < FIGURES * 4) {
				snprintf(names[n++], 64, "%s", name);
				snprintf(shown[(*nshown)++], 64, "%s", name);
			}
		}
	tui_slide_text_free(&t);
	return n;
}

int slides_html(const char *path, FILE *out, const struct slides_html_opts *o)
{
	char err[PATH_MAX + 128], shown[FIGURES * 4][64];
	int nshown = 0;
	struct tui_deck *d = tui_deck_load(path, err, sizeof err);

	if (!d) {
		fprintf(stderr, "hotrow slides: %s\n", err);
		return 1;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	struct tui_slide_text first;
	tui_deck_layout(d, 0, WIDTH, 0, &first);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", out);
	esc(out, first.nlines ? first.lines[0] : "hotrow", SIZE_MAX);
	fputs(o->answers ? "" : " (before the session)", out);
	fputs("</title>\n<style>\n"
	      "body { font-family: sans-serif; max-width: 60em; margin: 2em auto; }\n"
	      "section { border-top: 1px solid #999; padding: 0.5em 0; break-inside: avoid; }\n"
	      "pre { font-size: 0.85em; white-space: pre-wrap; }\n"
	      "pre.cmd, pre.out, pre.answer { background: #f3f3f3; padding: 0.5em; }\n"
	      "pre.answer { border-left: 4px solid #2a7; }\n"
	      "code { color: #036; }\n figure svg { max-width: 100%; height: auto; }\n"
	      "</style></head><body>\n", out);
	tui_slide_text_free(&first);
	if (!o->answers)
		fputs("<p><i>This copy is for before the session: the predict slides ask, and "
		      "their answers come in the room.</i></p>\n", out);
	for (int i = 0; i < tui_deck_count(d); i++) {
		struct tui_slide_text t;
		tui_deck_layout(d, i, WIDTH, 0, &t);
		fprintf(out, "<section id=\"slide-%d\">\n", i + 1);
		int k = 0;
		if (t.nlines && t.kinds[0] == TUI_LINE_TITLE) {
			fprintf(out, "<h2>%d. ", i + 1);
			esc(out, t.lines[0], SIZE_MAX);
			fputs("</h2>\n", out);
			for (k = 1; k < t.nlines && t.kinds[k] == TUI_LINE_TITLE; k++)
				;
		}
		fputs("<pre>", out);
		for (; k < t.nlines; k++)
			if (t.kinds[k] != TUI_LINE_RUN)
				styled(out, t.lines[k], t.styles[k]);
		fputs("</pre>\n", out);
		if (t.run) {
			struct slides_outcome r;
			if (o->quick && !slides_engine_only(t.run)) {
				fputs("<pre class=\"cmd\">$ ", out);
				esc(out, t.run, SIZE_MAX);
				fputs("</pre>\n", out);
			} else {
				char *cmd = slides_headless(t.run, 100, 30);
				slides_run(cmd, o->timeout_s, &r);
				output(out, "out", t.run, &r);
				free(r.out);
				free(cmd);
			}
		}
		if (t.embed) {
			double secs;
			char *frame = presenter_embed_frame(t.embed, 0, 100, 30, false, &secs, NULL);
			if (frame) {
				free(frame);
				frame = presenter_embed_frame(t.embed, secs, 100, 30, false, &secs, NULL);
				fprintf(out, "<p>The engine after %g simulated seconds:</p>\n<pre class=\"out\">",
				        secs);
				esc(out, frame, SIZE_MAX);
				fputs("</pre>\n", out);
				free(frame);
			}
		}
		if (t.reveal && o->answers) {
			struct slides_outcome r;
			slides_run(t.reveal, o->timeout_s, &r);
			fputs("<p><b>The engine's answer:</b></p>\n", out);
			output(out, "answer", t.reveal, &r);
			free(r.out);
		} else if (t.reveal) {
			fputs("<p><i>Predict, then check in the room (or run the slide's command "
			      "after the session).</i></p>\n", out);
		}
		char names[4][64];
		int nf = figures_of(d, i, names, 4, shown, &nshown);
		for (int f = 0; f < nf; f++)
			figure(out, names[f]);
		fputs("</section>\n", out);
		tui_slide_text_free(&t);
	}
	fputs("</body></html>\n", out);
	tui_deck_free(d);
	return ferror(out) ? 1 : 0;
}
