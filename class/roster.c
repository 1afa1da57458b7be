/*
 * roster.c: a roster file into student names (see class_impl.h), and
 * the one folding every part of class mode uses (class_name in class.h).
 * No database here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class/class.h"
#include "class/class_impl.h"
#include "util/file.h"

int class_name(const char *line, char *out)
{
	size_t n = 0;
	for (const char *p = line; *p; p++) {
		char c = *p;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		else if (c == '-' || c == '.' || c == ' ')
			c = '_';
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return -1;
		if (n == CLASS_NAME_MAX)
			return -1;
		out[n++] = c;
	}
	out[n] = '\0';
	return n > 0 && out[0] >= 'a' && out[0] <= 'z' ? 0 : -1;
}

/* The text of a roster line, trimmed and without its comment, in place. */
static char *trim(char *line)
{
	line[strcspn(line, "#\r\n")] = '\0';
	char *s = line, *e = line + strlen(line);
	while (*s == ' ' || *s == '\t')
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* Room for one more in *v; 0 or -1. */
static int grow(struct class_student **v, size_t n, size_t *cap)
{
	if (n < *cap)
		return 0;
	size_t want = *cap ? 2 * *cap : 32;
	void *p = realloc(*v, want * sizeof **v);
	if (!p)
		return -1;
	*v = p;
	*cap = want;
	return 0;
}

int class_roster_read(const char *path, struct class_student **out, size_t *n)
{
	char why[PATH_MAX + 64];
	FILE *f = util_file_open_in(path, 1 << 20, why, sizeof why);   /* not a FIFO, not endless */
	if (!f) {
		fprintf(stderr, "hotrow class: cannot read the roster %s: %s\n", path, why);
		return 1;
	}
	char line[256];
	size_t cap = 0, lineno = 0;
	int rc = 0;
	*out = NULL;
	*n = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		char *s = trim(line);
		if (*s == '\0')
			continue;
		struct class_student st = { .line = lineno };
		size_t k = strnlen(s, sizeof st.spelled - 1);   /* a longer name is refused below */
		memcpy(st.spelled, s, k);
		st.spelled[k] = '\0';
		for (char *c = st.spelled; *c; c++)   /* said on a terminal below */
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		if (class_name(s, st.name) != 0 || strlen(st.name) > CLASS_NAME_MAX - 4) {
			fprintf(stderr, "hotrow class: %s:%zu: '%s' is not a name (1-%d letters, digits, "
			        "_, -, . or spaces, starting with a letter)\n", path, lineno, st.spelled,
			        CLASS_NAME_MAX - 4);
			rc = 2;
			continue;
		}
		/* Two people, or one person twice: either way, not for us to
		 * guess. Merging them would give two students one password. */
		const struct class_student *same = NULL;
		for (size_t i = 0; i < *n && !same; i++)
			if (!strcmp((*out)[i].name, st.name))
				same = &(*out)[i];
		if (same) {
			fprintf(stderr, "hotrow class: %s:%zu: '%s' and line %zu's '%s' are both the "
			        "student %s; give each student a name of their own\n",
			        path, lineno, st.spelled, same->line, same->spelled, st.name);
			rc = 2;
			continue;
		}
		if (grow(out, *n, &cap) != 0) {
			fprintf(stderr, "hotrow class: out of memory reading %s\n", path);
			rc = 1;
			break;
		}
		(*out)[(*n)++] = st;
	}
	fclose(f);
	if (rc == 0 && *n == 0) {
		fprintf(stderr, "hotrow class: the roster %s names nobody\n", path);
		rc = 2;
	}
	if (rc != 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}
