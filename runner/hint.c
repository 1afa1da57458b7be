/*
 * hint.c: parsing hints.md into titled, tagged hints.
 * See hint.h for the format and the interface.
 */
#include <stdlib.h>
#include <string.h>

#include "runner/hint.h"
#include "runner/tree.h"

/* Split "Hint 2: Count what you changed [lost-update] [x]" into the title
 * and the tag list " lost-update x ". */
static void parse_heading(const char *s, struct runner_hint *hint)
{
	const char *colon = strchr(s, ':');
	if (!strncmp(s, "Hint", 4) && colon)
		s = colon + 1;
	while (*s == ' ')
		s++;
	snprintf(hint->title, sizeof hint->title, "%s", s);
	snprintf(hint->tags, sizeof hint->tags, " ");
	char *t = hint->title;
	size_t len = strlen(t);
	/* Peel "[tag]" groups off the end, last first. */
	while (len > 0 && t[len - 1] == ']') {
		char *open = strrchr(t, '[');
		if (!open)
			break;
		t[len - 1] = '\0';
		char tags[sizeof hint->tags];
		for (char *c = open + 1; *c; c++)   /* "[a, b]" is "[a] [b]" */
			if (*c == ',')
				*c = ' ';
		if (snprintf(tags, sizeof tags, " %s%s", open + 1, hint->tags) < (int)sizeof tags)
			memcpy(hint->tags, tags, sizeof tags);
		*open = '\0';
		len = strlen(t);
		while (len > 0 && t[len - 1] == ' ')
			t[--len] = '\0';
	}
}

/* Drop leading and trailing blank lines of a body. */
static void trim(char *s)
{
	size_t skip = strspn(s, "\n");
	memmove(s, s + skip, strlen(s + skip) + 1);
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

static int append(char **body, size_t *len, const char *line)
{
	size_t add = strlen(line);
	char *nb = realloc(*body, *len + add + 1);
	if (!nb)
		return -1;
	memcpy(nb + *len, line, add + 1);
	*body = nb;
	*len += add;
	return 0;
}

int runner_hints_load(const char *path, struct runner_hints *h)
{
	memset(h, 0, sizeof *h);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0, vcap = 0, blen = 0;
	struct runner_hint *cur = NULL;
	int rc = 0;
	while (getline(&line, &cap, f) >= 0) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!strncmp(line, "## ", 3)) {
			if (h->n == vcap) {
				vcap = vcap ? 2 * vcap : 8;
				struct runner_hint *nv = realloc(h->v, vcap * sizeof *nv);
				if (!nv) {
					rc = -1;
					break;
				}
				h->v = nv;
			}
			cur = &h->v[h->n++];
			memset(cur, 0, sizeof *cur);
			parse_heading(line + 3, cur);
			blen = 0;
			continue;
		}
		if (!cur)
			continue;   /* the "# Hints" title and any preface */
		if (append(&cur->body, &blen, line) != 0 || append(&cur->body, &blen, "\n") != 0) {
			rc = -1;
			break;
		}
	}
	free(line);
	fclose(f);
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].body)
			trim(h->v[i].body);
	if (rc != 0)
		runner_hints_free(h);
	return rc;
}

void runner_hints_free(struct runner_hints *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->v[i].body);
	free(h->v);
	h->v = NULL;
	h->n = 0;
}

int runner_hints_tagged(const struct runner_hints *h, const char *tag)
{
	char key[128];
	snprintf(key, sizeof key, " %s ", tag);
	for (size_t i = 0; i < h->n; i++)
		if (strstr(h->v[i].tags, key))
			return (int)i;
	return -1;
}

int runner_hints_first(const struct runner_hints *h, const char *tags, char *tag, size_t n)
{
	while (*tags) {
		tags += strspn(tags, " ");
		size_t len = strcspn(tags, " ");
		if (len && len < n) {
			snprintf(tag, n, "%.*s", (int)len, tags);
			int k = runner_hints_tagged(h, tag);
			if (k >= 0)
				return k;
		}
		tags += len;
	}
	return -1;
}

int runner_hints_specific(const struct runner_hints *h, const char *tags, char *tag, size_t n)
{
	int best = -1;
	char one[64];
	while (tags && *tags) {
		tags += strspn(tags, " ");
		size_t len = strcspn(tags, " ");
		if (len && len < sizeof one) {
			snprintf(one, sizeof one, "%.*s", (int)len, tags);
			for (size_t i = 0; i + 1 < h->n; i++) {
				char key[80];
				snprintf(key, sizeof key, " %s ", one);
				if (strstr(h->v[i].tags, key) && (int)i > best) {
					best = (int)i;
					snprintf(tag, n, "%s", one);
				}
			}
		}
		tags += len;
	}
	return best;
}

void runner_hint_print(FILE *out, const struct runner_hints *h, size_t k, const char *indent)
{
	const struct runner_hint *hint = &h->v[k];
	fprintf(out, "%s%sHint %zu of %zu: %s%s\n", indent, runner_c_bold(), k + 1, h->n,
		hint->title, runner_c_off());
	const char *s = hint->body ? hint->body : "";
	while (*s) {
		size_t n = strcspn(s, "\n");
		if (n)
			fprintf(out, "%s  %.*s\n", indent, (int)n, s);
		else
			fputc('\n', out);
		s += n;
		if (*s == '\n')
			s++;
	}
}
