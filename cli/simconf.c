/*
 * simconf.c: reading setup files (see simconf.h) through the command
 * line's option table.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/simconf.h"
#include "cli/simopt.h"
#include "util/file.h"

#define LINE_MAX_CHARS 1024
#define NAME_CHARS 64

/* One line cut into name and value, blanks and the comment gone. */
struct entry {
	char name[NAME_CHARS];
	char value[LINE_MAX_CHARS];
};

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* Cut line (changed in place) into e: 1 for an entry, 0 for a blank or a
 * comment, -1 with why for anything else. */
static int cut(char *line, struct entry *e, char *why, size_t len)
{
	char *hash = strchr(line, '#'), *eq, *name, *value;

	if (hash)
		*hash = '\0';
	line = trim(line);
	if (!*line)
		return 0;
	if (!(eq = strchr(line, '='))) {
		snprintf(why, len, "expected NAME = VALUE, not '%.60s'", line);
		return -1;
	}
	*eq = '\0';
	name = trim(line);
	value = trim(eq + 1);
	if (!strncmp(name, "--", 2)) {
		snprintf(why, len, "write the name without its dashes: %.40s = ...", name + 2);
		return -1;
	}
	if (!*name || strlen(name) >= sizeof e->name) {
		snprintf(why, len, "expected NAME = VALUE, the name an engine option of hotrow sim");
		return -1;
	}
	if (!*value) {
		snprintf(why, len, "%s needs a value after the =", name);
		return -1;
	}
	snprintf(e->name, sizeof e->name, "%s", name);
	snprintf(e->value, sizeof e->value, "%s", value);
	return 1;
}

/* The engine's messages name an option as "--rows"; a file has no dashes. */
static const char *undash(const char *msg)
{
	return strncmp(msg, "--", 2) ? msg : msg + 2;
}

/* The line that set the option a whole-config message names ("--rows:
 * ..."), or 0. */
static int line_of(const char *msg, char (*names)[NAME_CHARS], const int *lines, int n)
{
	size_t len;

	if (strncmp(msg, "--", 2))
		return 0;
	msg += 2;
	len = strcspn(msg, ": ");
	for (int i = n - 1; i >= 0; i--)
		if (strlen(names[i]) == len && !strncmp(names[i], msg, len))
			return lines[i];
	return 0;
}

/* Every line, in order, into fn; the first failure stops it. */
struct pass {
	const char *name;
	struct sim_config *c;
	struct simopt_given *given;
	char (*names)[NAME_CHARS];      /* the options set, for line_of */
	int *lines;
	int n, cap;
	int scenario_line;              /* 0: none yet */
	bool early;                     /* this pass applies the scenario only */
};

static int apply(struct pass *p, const struct entry *e, int ln, char *err, size_t errlen)
{
	char why[300];
	bool scenario = !strcmp(e->name, "scenario");

	if (p->early != scenario)
		return 0;
	if (scenario) {
		if (p->scenario_line) {
			snprintf(err, errlen, "%s:%d: scenario given twice (first on line %d): "
			         "a file starts from one", p->name, ln, p->scenario_line);
			return -1;
		}
		if (sim_scenario(e->value, p->c) < 0) {
			snprintf(err, errlen, "%s:%d: scenario '%.40s' is not one of hotrow sim "
			         "--list-scenarios", p->name, ln, e->value);
			return -1;
		}
		p->scenario_line = ln;
		return 0;
	}
	if (!simopt_knows(e->name)) {
		snprintf(err, errlen, "%s:%d: '%s' is not an engine option (the names are hotrow "
		         "sim's options without the dashes: rows, rps, hold-ms, pool, ...)",
		         p->name, ln, e->name);
		return -1;
	}
	if (simopt_set(p->c, p->given, e->name, e->value, why, sizeof why) < 0) {
		snprintf(err, errlen, "%s:%d: %s", p->name, ln, undash(why));
		return -1;
	}
	if (p->n < p->cap) {
		snprintf(p->names[p->n], NAME_CHARS, "%s", e->name);
		p->lines[p->n++] = ln;
	}
	return 0;
}

static int run_pass(struct pass *p, const char *text, char *err, size_t errlen)
{
	const char *q = text;
	int ln = 0;

	while (*q) {
		char line[LINE_MAX_CHARS + 2], why[300];
		struct entry e;
		size_t n = strcspn(q, "\n");
		int k;

		ln++;
		if (n > LINE_MAX_CHARS) {
			snprintf(err, errlen, "%s:%d: a line of more than %d characters", p->name, ln,
			         LINE_MAX_CHARS);
			return -1;
		}
		memcpy(line, q, n);
		line[n] = '\0';
		q += n + (q[n] == '\n');
		if (n && line[n - 1] == '\r')      /* written on Windows */
			line[n - 1] = '\0';
		if ((k = cut(line, &e, why, sizeof why)) < 0) {
			snprintf(err, errlen, "%s:%d: %s", p->name, ln, why);
			return -1;
		}
		if (k && apply(p, &e, ln, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int simconf_parse(const char *text, const char *name, struct sim_config *c,
                  char *err, size_t errlen)
{
	struct simopt_given given;
	char names[SIMOPT_MAX_ROWS * 4][NAME_CHARS], why[300];
	int lines[SIMOPT_MAX_ROWS * 4];
	struct pass p = { .name = name, .c = c, .given = &given, .names = names,
	                  .lines = lines, .cap = SIMOPT_MAX_ROWS * 4, .early = true };

	memset(&given, 0, sizeof given);
	sim_config_default(c);
	/* The scenario first, wherever it stands: the other lines change it,
	 * as --scenario on the command line. */
	if (run_pass(&p, text, err, errlen) < 0)
		return -1;
	p.early = false;
	if (run_pass(&p, text, err, errlen) < 0)
		return -1;
	if (simopt_finish(c, &given, why, sizeof why) < 0) {
		int ln = line_of(why, names, lines, p.n);
		if (ln)
			snprintf(err, errlen, "%s:%d: %s", name, ln, undash(why));
		else
			snprintf(err, errlen, "%s: %s", name, undash(why));
		return -1;
	}
	return 0;
}

int simconf_load(const char *path, struct sim_config *c, char *err, size_t errlen)
{
	char why[PATH_MAX + 64];
	FILE *f = util_file_open_in(path, SIMCONF_MAX_BYTES, why, sizeof why);
	char *text;
	size_t n;
	int rc;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	text = malloc(SIMCONF_MAX_BYTES + 1);
	if (!text) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	n = fread(text, 1, SIMCONF_MAX_BYTES, f);
	if (ferror(f)) {
		fclose(f);
		free(text);
		snprintf(err, errlen, "%s: cannot be read", path);
		return -1;
	}
	fclose(f);
	text[n] = '\0';
	if (memchr(text, '\0', n)) {
		free(text);
		snprintf(err, errlen, "%s: not a text file (a NUL byte)", path);
		return -1;
	}
	rc = simconf_parse(text, path, c, err, errlen);
	free(text);
	return rc;
}
