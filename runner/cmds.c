/*
 * cmds.c: `hotrow lab` (the list) and `hotrow lab hint`. See cmds.h.
 */
#include <errno.h>
#include <string.h>

#include "runner/cmds.h"
#include "runner/hint.h"
#include "runner/parts.h"

/* The first lab not done, or NULL when all are. */
const struct runner_lab *runner_next_lab(const struct runner_tree *t)
{
	for (size_t i = 0; i < t->nlabs; i++) {
		struct runner_progress p;
		runner_progress_get(t, &t->labs[i], &p);
		if (!runner_progress_done(&p))
			return &t->labs[i];
	}
	return NULL;
}

int runner_list(const struct runner_tree *t)
{
	if (t->nlabs == 0) {
		printf("No labs in %s/labs/ yet.\n", t->root);
		return 0;
	}
	int width = 0;
	for (size_t i = 0; i < t->nlabs; i++) {
		int w = (int)strlen(t->labs[i].title);
		width = w > width ? w : width;
	}
	printf("%sThe labs%s (in %s)\n\n", runner_c_bold(), runner_c_off(), t->root);
	for (size_t i = 0; i < t->nlabs; i++) {
		struct runner_progress p;
		char st[64];
		runner_progress_get(t, &t->labs[i], &p);
		const char *c = runner_progress_done(&p) ? runner_c_ok() : p.total ? runner_c_bad() : runner_c_dim();
		printf("  %s  %-*s  %s%s%s\n", t->labs[i].num, width, t->labs[i].title, c,
		       runner_progress_str(&p, st, sizeof st), runner_c_off());
		struct runner_parts ps;
		if (runner_parts_load(t, &t->labs[i], &ps) > 0) {
			printf("      %sparts:", runner_c_dim());
			for (size_t k = 0; k < ps.n; k++)
				printf("%s %s (%d min)", k ? "," : "", ps.v[k].name, ps.v[k].minutes);
			printf("  (--part NAME)%s\n", runner_c_off());
		}
		runner_parts_free(&ps);
	}
	const struct runner_lab *l = runner_next_lab(t);
	if (!l) {
		printf("\nEvery lab is done. `%s lab grade` prints your score.\n", runner_self());
		return 0;
	}
	struct runner_progress p;
	char files[256];
	runner_progress_get(t, l, &p);
	runner_exercise_files(t, l, files, sizeof files);
	printf("\nNext: Lab %s, %s.\n", l->num, l->title);
	if (p.total == 0)
		printf("  read     labs/%s/README.md (the handout)\n"
		       "  edit     exercises/%s/ (%s), following its TODOs\n",
		       l->name, l->name, files[0] ? files : "no files yet");
	printf("  check    %s lab check %s     (or `%s lab watch %s` to check on every save)\n",
	       runner_self(), l->num, runner_self(), l->num);
	printf("  stuck?   %s lab hint %s\n", runner_self(), l->num);
	return 0;
}

/* Whether hint k is one of part's: it carries the tag "part:NAME", or no
 * "part:" tag at all (a hint for the whole lab). */
static int in_part(const struct runner_hint *hint, const char *part)
{
	char key[64];
	if (!part || !strstr(hint->tags, " part:"))
		return 1;
	snprintf(key, sizeof key, " part:%s ", part);
	return strstr(hint->tags, key) != NULL;
}

int runner_hint_cmd(const struct runner_tree *t, const struct runner_lab *l, const char *part)
{
	char path[PATH_MAX];
	struct runner_hints h;
	if (runner_path(t, path, sizeof path, "labs/%s/hints.md", l->name) != 0 ||
	    runner_hints_load(path, &h) != 0) {
		fprintf(stderr, "hotrow lab hint: cannot read labs/%s/hints.md: %s\n", l->name, strerror(errno));
		return 1;
	}
	if (h.n == 0) {
		printf("Lab %s has no hints yet.\n", l->num);
		runner_hints_free(&h);
		return 0;
	}
	struct runner_progress p;
	runner_progress_get(t, l, &p);
	/* A progress file from before the set was kept: the first p.hints. */
	for (int i = 0; i < p.hints && i < 64; i++)
		p.seen |= 1ULL << i;
	/* Without a part the lab's order: the first not shown yet. With one,
	 * the first of the part's not shown yet; once all are, its last. */
	size_t k = h.n, last = h.n, mine = 0;
	for (size_t i = 0; i < h.n; i++) {
		if (!in_part(&h.v[i], part))
			continue;
		mine++;
		last = i;
		if (k == h.n && (i >= 64 || !(p.seen & (1ULL << i))))
			k = i;
	}
	if (k == h.n)
		k = last;
	if (part)
		printf("Part %s of Lab %s: %zu of the lab's %zu hints.\n\n", part, l->num, mine, h.n);
	for (size_t i = 0; i < k; i++)
		if (in_part(&h.v[i], part) && i < 64 && (p.seen & (1ULL << i)))
			printf("%sHint %zu of %zu: %s (shown before)%s\n", runner_c_dim(), i + 1, h.n,
			       h.v[i].title, runner_c_off());
	runner_hint_print(stdout, &h, k, "");
	size_t next = h.n;
	for (size_t i = k + 1; i < h.n && next == h.n; i++)
		if (in_part(&h.v[i], part) && (i >= 64 || !(p.seen & (1ULL << i))))
			next = i;
	if (next < h.n)
		printf("\n`%s lab hint %s%s%s` again reveals hint %zu.\n", runner_self(), l->num,
		       part ? " --part " : "", part ? part : "", next + 1);
	else if (part)
		printf("\nThat was the last hint of part %s; labs/%s/README.md has the rest.\n", part, l->name);
	else
		printf("\nThat was the last hint; the handout labs/%s/README.md has the rest.\n", l->name);
	if (k < 64)
		p.seen |= 1ULL << k;
	if (!part && (int)k + 1 > p.hints)
		p.hints = (int)k + 1;
	if (runner_progress_put(t, l, &p) != 0)
		fprintf(stderr, "hotrow lab hint: cannot record progress in .hotrow/: %s\n", strerror(errno));
	runner_hints_free(&h);
	return 0;
}

