/*
 * mutant.c: reading the headers of mutant patches. See mutant.h.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "runner/mutant.h"

/* " a b " from "a b": each word between spaces, for strstr(" w "). */
static void spaced(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, " %.*s ", (int)(n > 3 ? n - 3 : 0), src);
	for (char *s = dst; *s; s++)
		if (*s == '\t' || *s == ',')
			*s = ' ';
}

int runner_mutant_read(const char *path, struct runner_mutant *m)
{
	memset(m, 0, sizeof *m);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!strncmp(line, "--- ", 4) || !strncmp(line, "diff ", 5))
			break;   /* the diff begins: the header is over */
		if (!strncmp(line, "Mistake: ", 9))
			snprintf(m->mistake, sizeof m->mistake, "%.*s", (int)sizeof m->mistake - 1, line + 9);
		else if (!strncmp(line, "Caught-By: ", 11))
			spaced(m->caught_by, sizeof m->caught_by, line + 11);
		else if (!strncmp(line, "Engine: ", 8))
			spaced(m->engine, sizeof m->engine, line + 8);
	}
	fclose(f);
	return 0;
}

/* The student kit ships no mutants, only their PostgreSQL-only mistakes,
 * one a line, in .hotrow/pg-only/NAME (scripts/student-kit). */
static int shipped(const struct runner_tree *t, const struct runner_lab *l, char ***list)
{
	char p[PATH_MAX], line[512];
	int n = 0;
	if (runner_path(t, p, sizeof p, ".hotrow/pg-only/%s", l->name) != 0)
		return 0;
	FILE *f = fopen(p, "r");
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char **nl = line[0] ? realloc(*list, (size_t)(n + 1) * sizeof *nl) : NULL;
		if (nl) {
			*list = nl;
			nl[n++] = strdup(line);
		}
	}
	if (f)
		fclose(f);
	return n;
}

int runner_pg_only_mistakes(const struct runner_tree *t, const struct runner_lab *l, char ***list)
{
	char dir[PATH_MAX];
	int n = 0;
	*list = NULL;
	if (runner_path(t, dir, sizeof dir, "tests/mutants/%s", l->name) != 0)
		return 0;
	struct dirent **e;
	int k = scandir(dir, &e, NULL, alphasort);
	if (k < 0)
		return shipped(t, l, list);
	for (int i = 0; i < k; i++) {
		size_t len = strlen(e[i]->d_name);
		char path[PATH_MAX + 260];
		struct runner_mutant m;
		snprintf(path, sizeof path, "%s/%s", dir, e[i]->d_name);
		if (len > 6 && !strcmp(e[i]->d_name + len - 6, ".patch") && runner_mutant_read(path, &m) == 0 &&
		    m.mistake[0] && strstr(m.engine, " postgres ") && !strstr(m.engine, " sqlite ")) {
			char **nl = realloc(*list, (size_t)(n + 1) * sizeof *nl);
			if (nl) {
				*list = nl;
				nl[n++] = strdup(m.mistake);
			}
		}
		free(e[i]);
	}
	if (k >= 0)
		free(e);
	return n;
}
