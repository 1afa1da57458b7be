/*
 * tree.c: finding the kit, listing its labs, and the progress file.
 * See tree.h for the interface.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/tree.h"

/* A kit is a directory with the Makefile and the labs' make rules. */
static int is_kit(const char *dir)
{
	char p[PATH_MAX + 32];
	snprintf(p, sizeof p, "%s/Makefile", dir);
	if (access(p, R_OK) != 0)
		return 0;
	snprintf(p, sizeof p, "%s/labs/module.mk", dir);
	return access(p, R_OK) == 0;
}

/* Walk up from dir (modified in place) until a kit is found. */
static int find_up(char *dir)
{
	for (;;) {
		if (is_kit(dir))
			return 0;
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return -1;
		*slash = '\0';
	}
}

static int find_root(char *root)
{
	const char *env = getenv("HOTROW_ROOT");
	if (env && *env) {
		if (!realpath(env, root) || !is_kit(root)) {
			fprintf(stderr, "hotrow lab: HOTROW_ROOT=%s is not a hotrow kit "
				"(no Makefile and labs/module.mk there)\n", env);
			return -1;
		}
		return 0;
	}
	if (getcwd(root, PATH_MAX) && find_up(root) == 0)
		return 0;
	ssize_t n = readlink("/proc/self/exe", root, PATH_MAX - 1);
	if (n > 0) {
		root[n] = '\0';
		char *slash = strrchr(root, '/');
		if (slash)
			*slash = '\0';
		if (find_up(root) == 0)
			return 0;
	}
	fprintf(stderr, "hotrow lab: no hotrow kit here: run it from the kit's "
		"directory (the one with the Makefile and labs/), or set HOTROW_ROOT\n");
	return -1;
}

/* The title after "# Lab NN — " (or "-"/":"), else the whole heading. */
static void read_title(const char *root, struct runner_lab *l)
{
	char p[PATH_MAX + 128], line[512];
	snprintf(l->title, sizeof l->title, "%s", l->name);
	snprintf(p, sizeof p, "%s/labs/%s/README.md", root, l->name);
	FILE *f = fopen(p, "r");
	if (!f)
		return;
	if (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		char *s = line;
		while (*s == '#' || *s == ' ')
			s++;
		if (!strncmp(s, "Lab ", 4)) {
			s += 4;
			while (*s >= '0' && *s <= '9')
				s++;
			while (*s == ' ')
				s++;
			if (!strncmp(s, "\xe2\x80\x94", 3))   /* em dash */
				s += 3;
			else if (*s == '-' || *s == ':')
				s++;
			while (*s == ' ')
				s++;
		}
		if (*s)
			snprintf(l->title, sizeof l->title, "%.*s", (int)sizeof l->title - 1, s);
	}
	fclose(f);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct runner_lab *)a)->name, ((const struct runner_lab *)b)->name);
}

static int is_lab_name(const char *s)
{
	return s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == '-' && s[3];
}

static char self[PATH_MAX] = "hotrow";

void runner_set_self(const char *argv0)
{
	char cwd[PATH_MAX];
	size_t n;

	if (!argv0 || !*argv0 || !strchr(argv0, '/')) {
		snprintf(self, sizeof self, "hotrow");
		return;
	}
	/* An absolute path under the working directory is shown from it. */
	if (argv0[0] == '/' && getcwd(cwd, sizeof cwd) && (n = strlen(cwd)) > 1 &&
	    !strncmp(argv0, cwd, n) && argv0[n] == '/')
		argv0 += n + 1;
	snprintf(self, sizeof self, "%s", argv0);
}

const char *runner_self(void)
{
	return self;
}

int runner_tree_open(struct runner_tree *t)
{
	memset(t, 0, sizeof *t);
	if (find_root(t->root) != 0)
		return -1;
	char p[PATH_MAX + 8];
	snprintf(p, sizeof p, "%s/labs", t->root);
	DIR *d = opendir(p);
	if (!d)
		return 0;
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!is_lab_name(e->d_name) || strlen(e->d_name) >= sizeof t->labs[0].name)
			continue;
		char dir[PATH_MAX + 80];
		struct stat st;
		if (snprintf(dir, sizeof dir, "%s/%s", p, e->d_name) >= (int)sizeof dir ||
		    stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		if (t->nlabs == cap) {
			cap = cap ? 2 * cap : 8;
			struct runner_lab *nl = realloc(t->labs, cap * sizeof *nl);
			if (!nl) {
				closedir(d);
				fprintf(stderr, "hotrow lab: out of memory listing labs\n");
				return -1;
			}
			t->labs = nl;
		}
		struct runner_lab *l = &t->labs[t->nlabs++];
		memset(l, 0, sizeof *l);
		memcpy(l->name, e->d_name, strlen(e->d_name) + 1);   /* length checked above */
		memcpy(l->num, e->d_name, 2);
		read_title(t->root, l);
	}
	closedir(d);
	if (t->nlabs)
		qsort(t->labs, t->nlabs, sizeof *t->labs, by_name);
	return 0;
}

void runner_tree_close(struct runner_tree *t)
{
	free(t->labs);
	t->labs = NULL;
	t->nlabs = 0;
}

const struct runner_lab *runner_tree_find(const struct runner_tree *t, const char *spec)
{
	char num[8];
	size_t len = strlen(spec);
	if (len == 1 && spec[0] >= '0' && spec[0] <= '9')
		snprintf(num, sizeof num, "0%c", spec[0]);
	else
		snprintf(num, sizeof num, "%.2s", spec);
	for (size_t i = 0; i < t->nlabs; i++) {
		const struct runner_lab *l = &t->labs[i];
		if (!strcmp(spec, l->name))
			return l;
		if (len <= 2 && !strcmp(num, l->num))
			return l;
	}
	return NULL;
}

void runner_tree_unknown(const struct runner_tree *t, const char *cmd, const char *spec)
{
	fprintf(stderr, "hotrow lab %s: unknown lab '%s' (labs:", cmd, spec);
	for (size_t i = 0; i < t->nlabs; i++)
		fprintf(stderr, "%s %s", i ? "," : "", t->labs[i].name);
	fprintf(stderr, "%s)\n", t->nlabs ? "" : " none yet");
}

int runner_path(const struct runner_tree *t, char *buf, size_t n, const char *fmt, ...)
{
	int k = snprintf(buf, n, "%s/", t->root);
	if (k < 0 || (size_t)k >= n)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + k, n - (size_t)k, fmt, ap);
	va_end(ap);
	return m < 0 || (size_t)m >= n - (size_t)k ? -1 : 0;
}

int runner_mkdirs(const char *dir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		int r = mkdir(path, 0777);
		*s = '/';
		if (r != 0 && errno != EEXIST)
			return -1;
	}
	return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

int runner_state_dir(const struct runner_tree *t, const char *sub)
{
	char p[PATH_MAX];
	if (runner_path(t, p, sizeof p, ".hotrow%s%s", sub ? "/" : "", sub ? sub : "") != 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return runner_mkdirs(p);
}

/* Parse "NAME passed=P total=T hints=H"; unknown keys are ignored so a
 * later runner can add some. Returns 1 when the line is for name. */
static int parse_line(const char *line, const char *name, struct runner_progress *p)
{
	size_t n = strlen(name);
	if (strncmp(line, name, n) || (line[n] != ' ' && line[n] != '\n' && line[n]))
		return 0;
	const char *s = line + n;
	while (*s) {
		while (*s == ' ')
			s++;
		int v;
		if (sscanf(s, "passed=%d", &v) == 1)
			p->passed = v;
		else if (sscanf(s, "total=%d", &v) == 1)
			p->total = v;
		else if (sscanf(s, "hints=%d", &v) == 1)
			p->hints = v;
		else if (!strncmp(s, "seen=", 5))
			p->seen = strtoull(s + 5, NULL, 16);
		else if (!strncmp(s, "sqlite=", 7))
			sscanf(s, "sqlite=%d/%d", &p->eng_passed[0], &p->eng_total[0]);
		else if (!strncmp(s, "postgres=", 9))
			sscanf(s, "postgres=%d/%d", &p->eng_passed[1], &p->eng_total[1]);
		s += strcspn(s, " \n");
		if (*s == '\n')
			break;
	}
	return 1;
}

void runner_progress_get(const struct runner_tree *t, const struct runner_lab *l, struct runner_progress *p)
{
	char path[PATH_MAX], line[512];
	memset(p, 0, sizeof *p);
	if (runner_path(t, path, sizeof path, ".hotrow/progress") != 0)
		return;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		parse_line(line, l->name, p);
	fclose(f);
}

int runner_progress_put(const struct runner_tree *t, const struct runner_lab *l, const struct runner_progress *p)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], line[512];
	if (runner_state_dir(t, NULL) != 0 || runner_path(t, path, sizeof path, ".hotrow/progress") != 0)
		return -1;
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *out = fopen(tmp, "w");
	if (!out)
		return -1;
	fprintf(out, "%s passed=%d total=%d hints=%d seen=%llx sqlite=%d/%d postgres=%d/%d\n", l->name,
		p->passed, p->total, p->hints, p->seen, p->eng_passed[0], p->eng_total[0], p->eng_passed[1],
		p->eng_total[1]);
	FILE *in = fopen(path, "r");
	if (in) {
		struct runner_progress ignored;
		while (fgets(line, sizeof line, in))
			if (!parse_line(line, l->name, &ignored))
				fputs(line, out);
		fclose(in);
	}
	if (fclose(out) != 0 || rename(tmp, path) != 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

static int engine_done(const struct runner_progress *p, int k)
{
	return p->eng_total[k] > 0 && p->eng_passed[k] == p->eng_total[k];
}

int runner_progress_done(const struct runner_progress *p)
{
	return engine_done(p, 0) && engine_done(p, 1);
}

const char *runner_progress_str(const struct runner_progress *p, char *buf, size_t n)
{
	if (p->total <= 0)
		snprintf(buf, n, "not started");
	else if (runner_progress_done(p))
		snprintf(buf, n, "done");
	else if (p->passed == p->total && engine_done(p, 0) && !p->eng_total[1])
		snprintf(buf, n, "SQLite done, PostgreSQL not checked");
	else if (p->passed == p->total && engine_done(p, 1) && !p->eng_total[0])
		snprintf(buf, n, "PostgreSQL done, SQLite not checked");
	else
		snprintf(buf, n, "%d of %d checks passing", p->passed, p->total);
	return buf;
}

static int is_source(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

void runner_exercise_files(const struct runner_tree *t, const struct runner_lab *l, char *buf, size_t n)
{
	char p[PATH_MAX];
	buf[0] = '\0';
	if (runner_path(t, p, sizeof p, "exercises/%s", l->name) != 0)
		return;
	struct dirent **names;
	int k = scandir(p, &names, NULL, alphasort);
	if (k < 0)
		return;
	size_t used = 0;
	for (int i = 0; i < k; i++) {
		if (is_source(names[i]->d_name) && used < n) {
			int w = snprintf(buf + used, n - used, "%s%s", used ? " " : "", names[i]->d_name);
			if (w > 0)
				used += (size_t)w;
		}
		free(names[i]);
	}
	free(names);
}

static int colour(void)
{
	static int on = -1;
	if (on < 0) {
		const char *term = getenv("TERM");
		on = isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && term && strcmp(term, "dumb");
	}
	return on;
}

const char *runner_c_ok(void) { return colour() ? "\033[32m" : ""; }
const char *runner_c_bad(void) { return colour() ? "\033[31m" : ""; }
const char *runner_c_dim(void) { return colour() ? "\033[2m" : ""; }
const char *runner_c_bold(void) { return colour() ? "\033[1m" : ""; }
const char *runner_c_off(void) { return colour() ? "\033[0m" : ""; }
