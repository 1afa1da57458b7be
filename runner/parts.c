/*
 * parts.c: reading labs/NN-name/parts. See parts.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner/parts.h"

static int parse_line(char *line, struct runner_part *p, char *why, size_t n)
{
	char *save = NULL;
	memset(p, 0, sizeof *p);
	char *w = strtok_r(line, " \t", &save);
	if (!w || strlen(w) >= sizeof p->name) {
		snprintf(why, n, "a part's name is missing or longer than %zu characters", sizeof p->name - 1);
		return -1;
	}
	snprintf(p->name, sizeof p->name, "%s", w);
	p->minutes = -1;
	while ((w = strtok_r(NULL, " \t", &save))) {
		if (!strncmp(w, "\xc2\xa7", 2)) {   /* § */
			snprintf(p->section, sizeof p->section, "%s", w + 2);
		} else if (w[0] >= '0' && w[0] <= '9') {
			char *end;
			long m = strtol(w, &end, 10);
			if (*end || m <= 0 || m > 10000) {
				snprintf(why, n, "'%s' is not a number of minutes", w);
				return -1;
			}
			p->minutes = (int)m;
		} else if (p->nwords < RUNNER_PART_WORDS && strlen(w) < sizeof p->words[0]) {
			snprintf(p->words[p->nwords++], sizeof p->words[0], "%s", w);
		} else {
			snprintf(why, n, "part %s: too many functions or one too long", p->name);
			return -1;
		}
	}
	if (p->nwords == 0 || !p->section[0] || p->minutes < 0) {
		snprintf(why, n, "part %s needs its functions, a §SECTION and its minutes", p->name);
		return -1;
	}
	return 0;
}

int runner_parts_load(const struct runner_tree *t, const struct runner_lab *l, struct runner_parts *ps)
{
	char path[PATH_MAX], line[1024];
	memset(ps, 0, sizeof *ps);
	if (runner_path(t, path, sizeof path, "labs/%s/parts", l->name) != 0)
		return 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int no = 0, rc = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		no++;
		line[strcspn(line, "#\n")] = '\0';
		if (strspn(line, " \t") == strlen(line))
			continue;
		struct runner_part p, *nv;
		char why[160];
		if (parse_line(line, &p, why, sizeof why) != 0) {
			snprintf(ps->error, sizeof ps->error, "labs/%s/parts:%d: %s", l->name, no, why);
			rc = -1;
		} else if (runner_part_find(ps, p.name)) {
			snprintf(ps->error, sizeof ps->error, "labs/%s/parts:%d: part %s twice", l->name, no, p.name);
			rc = -1;
		} else if (!(nv = realloc(ps->v, (ps->n + 1) * sizeof *nv))) {
			snprintf(ps->error, sizeof ps->error, "out of memory");
			rc = -1;
		} else {
			ps->v = nv;
			ps->v[ps->n++] = p;
		}
	}
	fclose(f);
	return rc < 0 ? -1 : (int)ps->n;
}

void runner_parts_free(struct runner_parts *ps)
{
	free(ps->v);
	memset(ps, 0, sizeof *ps);
}

const struct runner_part *runner_part_find(const struct runner_parts *ps, const char *name)
{
	for (size_t i = 0; i < ps->n; i++)
		if (!strcmp(ps->v[i].name, name))
			return &ps->v[i];
	return NULL;
}

int runner_part_has(const struct runner_part *p, const char *check)
{
	const char *sep = strstr(check, "__");
	if (!sep)
		return 0;
	size_t k = (size_t)(sep - check);
	for (int i = 0; i < p->nwords; i++) {
		const char *w = p->words[i] + (p->words[i][0] == '@');
		if (p->words[i][0] != '+' && strlen(w) == k && !strncmp(w, check, k))
			return 1;
	}
	return 0;
}

void runner_parts_names(const struct runner_parts *ps, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < ps->n && used < n; i++) {
		int w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", ps->v[i].name);
		used += w > 0 ? (size_t)w : 0;
	}
}

void runner_parts_print(FILE *out, const struct runner_lab *l, const struct runner_parts *ps)
{
	if (ps->n == 0) {
		fprintf(out, "Lab %s has one part: all of it (no labs/%s/parts).\n", l->num, l->name);
		return;
	}
	fprintf(out, "Lab %s, %s, in %zu parts (`hotrow lab check %s --part NAME`):\n", l->num, l->title,
		ps->n, l->num);
	for (size_t i = 0; i < ps->n; i++) {
		const struct runner_part *p = &ps->v[i];
		fprintf(out, "  %-12s %3d min  handout §%-3s ", p->name, p->minutes, p->section);
		for (int k = 0; k < p->nwords; k++)
			if (p->words[k][0] != '+' && p->words[k][0] != '@')
				fprintf(out, " %s", p->words[k]);
		fputc('\n', out);
	}
}
