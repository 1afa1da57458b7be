/*
 * files.c: the files of one directory, compared, copied and removed.
 * See files.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/files.h"

/* The regular, non-hidden files of dir, sorted; *n of them. The caller
 * frees each name and the array. NULL with *n == 0 when dir is missing. */
char **runner_files_of(const char *dir, size_t *n)
{
	struct dirent **e;
	*n = 0;
	int k = scandir(dir, &e, NULL, alphasort);
	if (k < 0)
		return NULL;
	char **names = calloc((size_t)k + 1, sizeof *names);
	for (int i = 0; i < k; i++) {
		char p[PATH_MAX + 260];
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", dir, e[i]->d_name);
		if (names && e[i]->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode))
			names[(*n)++] = strdup(e[i]->d_name);
		free(e[i]);
	}
	free(e);
	return names;
}

void runner_files_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int copy_file(const char *src, const char *dst)
{
	FILE *in = fopen(src, "rb");
	if (!in)
		return -1;
	FILE *out = fopen(dst, "wb");
	if (!out) {
		fclose(in);
		return -1;
	}
	char b[8192];
	size_t k;
	int rc = 0;
	while ((k = fread(b, 1, sizeof b, in)) > 0)
		if (fwrite(b, 1, k, out) != k)
			rc = -1;
	if (ferror(in))
		rc = -1;
	fclose(in);
	if (fclose(out) != 0)
		rc = -1;
	return rc;
}

static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb;
	while (same) {
		int ca = getc(fa), cb = getc(fb);
		if (ca != cb)
			same = 0;
		if (ca == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/* Copy every file of src into dst (created). Returns the count, or -1. */
int runner_files_copy(const char *src, const char *dst)
{
	size_t n;
	char **names = runner_files_of(src, &n);
	if (mkdir(dst, 0777) != 0 && errno != EEXIST) {
		runner_files_free(names, n);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char a[PATH_MAX + 260], b[PATH_MAX + 260];
		snprintf(a, sizeof a, "%s/%s", src, names[i]);
		snprintf(b, sizeof b, "%s/%s", dst, names[i]);
		rc = copy_file(a, b);
	}
	runner_files_free(names, n);
	return rc == 0 ? (int)n : -1;
}

void runner_files_clear(const char *dir)
{
	size_t n;
	char **names = runner_files_of(dir, &n);
	for (size_t i = 0; i < n; i++) {
		char p[PATH_MAX + 260];
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	runner_files_free(names, n);
}

void runner_files_remove(const char *dir)
{
	runner_files_clear(dir);
	rmdir(dir);
}

int runner_files_differ(const char *ex, const char *src)
{
	size_t ne, ns;
	char **a = runner_files_of(ex, &ne), **b = runner_files_of(src, &ns);
	int diff = ne != ns;
	for (size_t i = 0; i < ne && !diff; i++) {
		char pa[PATH_MAX + 260], pb[PATH_MAX + 260];
		snprintf(pa, sizeof pa, "%s/%s", ex, a[i]);
		snprintf(pb, sizeof pb, "%s/%s", src, b[i]);
		diff = strcmp(a[i], b[i]) || !same_file(pa, pb);
	}
	runner_files_free(a, ne);
	runner_files_free(b, ns);
	return diff;
}


/* Remove dir and everything under it (the objects of one side of a lab). */
static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[PATH_MAX + 260];
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(p);
		else
			unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Is an object in dir newer than the stamp (made by another build than
 * the runner's, which stamps after it builds)? */
static int built_since(const char *dir, const char *stamp)
{
	struct stat st, o;
	if (stat(stamp, &st) != 0)
		return 1;
	size_t n;
	char **names = runner_files_of(dir, &n);
	int newer = 0;
	for (size_t i = 0; i < n && !newer; i++) {
		char p[PATH_MAX + 260];
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		newer = stat(p, &o) == 0 && (o.st_mtim.tv_sec > st.st_mtim.tv_sec ||
					     (o.st_mtim.tv_sec == st.st_mtim.tv_sec &&
					      o.st_mtim.tv_nsec > st.st_mtim.tv_nsec));
	}
	runner_files_free(names, n);
	return newer;
}

void runner_files_built(const struct runner_tree *t, const struct runner_lab *l, const char *side)
{
	char stamp[PATH_MAX];
	if (runner_path(t, stamp, sizeof stamp, "build/labs/%s/built-%s.stamp", l->name, side) != 0)
		return;
	FILE *f = fopen(stamp, "w");
	if (f)
		fclose(f);
}

int runner_files_fresh(const struct runner_tree *t, const struct runner_lab *l, const char *side)
{
	char src[PATH_MAX], kept[PATH_MAX], obj[PATH_MAX], prog[PATH_MAX], stamp[PATH_MAX];
	const char *one = strcmp(side, "solutions") ? "exercise" : "solution";
	if (runner_path(t, src, sizeof src, "%s/%s", side, l->name) != 0 ||
	    runner_path(t, kept, sizeof kept, "build/labs/%s/built-%s", l->name, side) != 0 ||
	    runner_path(t, stamp, sizeof stamp, "build/labs/%s/built-%s.stamp", l->name, side) != 0 ||
	    runner_path(t, obj, sizeof obj, "build/obj/%s/%s", side, l->name) != 0)
		return -1;
	if (!runner_files_differ(src, kept) && !built_since(obj, stamp))
		return 0;
	unlink(stamp);
	remove_tree(obj);
	static const char *const progs[] = {"test", "run"};
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
		if (runner_path(t, prog, sizeof prog, "build/labs/%s/%s-%s", l->name, progs[i], one) == 0)
			unlink(prog);
	remove_tree(kept);
	if (runner_path(t, prog, sizeof prog, "build/labs/%s", l->name) != 0 || runner_mkdirs(prog) != 0)
		return -1;
	if (runner_files_copy(src, kept) < 0) {
		remove_tree(kept);   /* half a copy would pass for the build's files */
		return -1;
	}
	return 0;
}
