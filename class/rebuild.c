/*
 * rebuild.c: `hotrow class grade --rebuild` (see class.h): each student's
 * submission built and checked afresh by the instructor's runner, as the
 * student.
 *
 * Per submission: a fresh copy of the instructor's kit tree (sources and
 * the kit's own objects; not .git, not .hotrow, not that lab's build),
 * the lab's exercise files replaced by the submitted ones, then
 * `SELF lab grade LAB --out DIR` run in it with HOTROW_PG_URL naming the
 * student's role (so the PostgreSQL checks run with a student's rights,
 * in schemas of the student's, never as the administrator) and its score
 * read from DIR/results.json, which the runner writes after every check
 * has ended. The copy is removed afterwards.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "class/class.h"
#include "class/class_impl.h"
#include "kit/db.h"

/* Run argv (with extra environment env, NULL-ended, or NULL) in dir, its
 * output to log (or inherited when log < 0); the exit code, or -1. */
static int run(char *const argv[], char *const env[], const char *dir, int log)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (log >= 0 && (dup2(log, 1) < 0 || dup2(log, 2) < 0))
			_exit(127);
		if (dir && chdir(dir) != 0)
			_exit(127);
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Every entry of dir into copy with cp -a, but those skip() refuses;
 * 0 or -1. */
static int copy_entries(const char *dir, const char *copy, int (*skip)(const char *name))
{
	DIR *d = opendir(dir);
	if (!d || (mkdir(copy, 0700) != 0 && errno != EEXIST)) {
		if (d)
			closedir(d);
		return -1;
	}
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || skip(e->d_name))
			continue;
		char src[4400];
		snprintf(src, sizeof src, "%s/%s", dir, e->d_name);
		char *argv[] = { "cp", "-a", "--", src, (char *)copy, NULL };
		rc = run(argv, NULL, NULL, -1) == 0 ? 0 : -1;
	}
	closedir(d);
	return rc;
}

/* Not copied: the repository, the instructor's own state (.hotrow holds
 * a throwaway server's data), the build (copied on its own). */
static int skip_top(const char *name)
{
	return !strcmp(name, ".git") || !strcmp(name, ".hotrow") || !strcmp(name, "build");
}

/* Of the build, the kit's objects are reused; the labs' test binaries,
 * the sanitizer builds, and what only the kit's own tests made (its test
 * programs, the mutants, the mutation sweep's and the benches' files, a
 * student kit: tens of megabytes that a grade never reads) are not. */
static int skip_build(const char *name)
{
	static const char *const skipped[] = {
		"labs", "mutants", "tests", "bench", "mutate", "student-kit",
	};
	for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++)
		if (!strcmp(name, skipped[i]))
			return 1;
	return !strncmp(name, "san-", 4);
}

/* The kit at root into copy, without the lab's own build and without the
 * shipped exercise's sources, so nothing of a previous build of that lab
 * is reused and only the submitted files are there. 0 or -1. */
static int copy_kit(const char *root, const char *copy, const char *lab)
{
	char build[4400], to[4400], objs[4400], ex[4400];
	if (snprintf(build, sizeof build, "%s/build", root) >= (int)sizeof build ||
	    snprintf(to, sizeof to, "%s/build", copy) >= (int)sizeof to ||
	    snprintf(objs, sizeof objs, "%s/build/obj/exercises/%s", copy, lab) >= (int)sizeof objs ||
	    snprintf(ex, sizeof ex, "%s/exercises/%s", copy, lab) >= (int)sizeof ex)
		return -1;
	struct stat st;
	if (copy_entries(root, copy, skip_top) != 0 ||
	    (stat(build, &st) == 0 && copy_entries(build, to, skip_build) != 0))
		return -1;
	char *rm[] = { "rm", "-rf", "--", objs, NULL };
	DIR *x = run(rm, NULL, NULL, -1) == 0 ? opendir(ex) : NULL;
	if (!x)
		return -1;
	struct dirent *e;
	while ((e = readdir(x)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n > 2 && e->d_name[n - 2] == '.' && (e->d_name[n - 1] == 'c' || e->d_name[n - 1] == 'h')) {
			char f[4400];
			if (snprintf(f, sizeof f, "%s/%s", ex, e->d_name) < (int)sizeof f)
				unlink(f);
		}
	}
	closedir(x);
	return 0;
}

struct dest { const char *dir; int rc; };

static int unhex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One submitted file (name, hex) into the exercise directory. The name
 * was checked when it was stored (a .c or .h, no '/'); checked again. */
static int write_file(void *arg, int ncols, const char *const *v)
{
	struct dest *d = arg;
	(void)ncols;
	if (strchr(v[0], '/') || v[0][0] == '.') {
		d->rc = -1;
		return 1;
	}
	char path[4400];
	snprintf(path, sizeof path, "%s/%s", d->dir, v[0]);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		d->rc = -1;
		return 1;
	}
	for (const char *p = v[1]; p[0] && p[1]; p += 2)
		fputc(unhex(p[0]) << 4 | unhex(p[1]), f);
	if (fclose(f) != 0)
		d->rc = -1;
	return 0;
}

/* "score" and "max_score" from the runner's results.json; 0 or -1. */
static int read_score(const char *path, int *score, int *max)
{
	FILE *f = fopen(path, "r");
	char buf[512];
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *s = strstr(buf, "\"score\":"), *m = strstr(buf, "\"max_score\":");
	if (!s || !m)
		return -1;
	*score = atoi(s + 8);
	*max = atoi(m + 12);
	return *score >= 0 && *score <= *max ? 0 : -1;
}

struct sub { char student[CLASS_NAME_MAX + 1], lab[64], role[64], pw[32]; };
struct subs { struct sub *v; size_t n, cap; };

static int add_sub(void *arg, int ncols, const char *const *v)
{
	struct subs *s = arg;
	(void)ncols;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 32;
		void *p = realloc(s->v, s->cap * sizeof *s->v);
		if (!p)
			return 1;
		s->v = p;
	}
	struct sub *x = &s->v[s->n++];
	snprintf(x->student, sizeof x->student, "%s", v[0]);
	snprintf(x->lab, sizeof x->lab, "%s", v[1]);
	snprintf(x->role, sizeof x->role, "%s", v[2]);
	snprintf(x->pw, sizeof x->pw, "%s", v[3]);
	return 0;
}

/* Build and check one submission; its score into *score of *max, and a
 * line saying what happened into note. 0, or -1 (note says why). */
static int grade_one(const struct class_opts *o, struct kit_db *db, const char *fmt,
                     const struct sub *s, int *score, int *max, char *note, size_t len)
{
	char copy[] = "/tmp/hotrow-rebuild-XXXXXX";
	if (!mkdtemp(copy)) {
		snprintf(note, len, "cannot make a directory in /tmp: %s", strerror(errno));
		return -1;
	}
	char ex[4200], out[4200], log[4200], results[4400], url[1024];
	snprintf(ex, sizeof ex, "%s/exercises/%s", copy, s->lab);
	snprintf(out, sizeof out, "%s/.hotrow/rebuild", copy);
	snprintf(log, sizeof log, "%s.log", copy);
	snprintf(results, sizeof results, "%s/results.json", out);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(url, sizeof url, fmt, s->role, s->pw);
#pragma GCC diagnostic pop
	int rc = -1;
	struct dest d = { ex, 0 };
	if (copy_kit(o->kit_root, copy, s->lab) != 0) {
		snprintf(note, len, "cannot copy the kit from %s", o->kit_root);
	} else if (kit_db_query(db, "SELECT file, pg_catalog.encode(body, 'hex')"
	                        " FROM hotrow_class.submissions WHERE student = $1 AND lab = $2"
	                        " ORDER BY file", 2, (const char *[]){s->student, s->lab},
	                        write_file, &d) != 0 || d.rc != 0) {
		snprintf(note, len, "cannot write the submitted files");
	} else {
		char e_root[4200], e_url[1100];
		snprintf(e_root, sizeof e_root, "HOTROW_ROOT=%s", copy);
		snprintf(e_url, sizeof e_url, "HOTROW_PG_URL=%s", url);
		char *env[] = { e_root, e_url, "HOTROW_REQUIRE_PG=1", "HOTROW_CLASS_NO_RECORD=1", NULL };
		char *argv[] = { (char *)o->self, "lab", "grade", (char *)s->lab, "--out", out, NULL };
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int code = fd >= 0 ? run(argv, env, copy, fd) : -1;
		if (fd >= 0)
			close(fd);
		if (code < 0 || read_score(results, score, max) != 0)
			snprintf(note, len, "the grade did not finish (exit %d)", code);
		else {
			snprintf(note, len, "%s", code == 0 ? "full marks" : "");
			rc = 0;
		}
	}
	char *rm[] = { "rm", "-rf", "--", copy, log, NULL };
	run(rm, NULL, NULL, -1);
	return rc;
}

int class_rebuild(const struct class_opts *o)
{
	struct kit_db *db;
	char fmt[600];
	if (!o->kit_root || !o->self) {
		fprintf(stderr, "hotrow class: --rebuild needs the kit tree and the hotrow binary\n");
		return 1;
	}
	if (class_open_admin(o, &db) != 0)
		return 1;
	if (class_url_format(o, fmt, sizeof fmt) != 0) {
		kit_db_close(db);
		return 1;
	}
	struct subs subs = {0};
	int rc = 0;
	if (kit_db_query(db, "SELECT DISTINCT s.name, u.lab, s.role, s.password"
	                 " FROM hotrow_class.submissions u JOIN hotrow_class.students s ON s.name = u.student"
	                 " ORDER BY 1, 2", 0, NULL, add_sub, &subs) != 0) {
		free(subs.v);
		rc = class_fail(db, "cannot read hotrow_class.submissions");
		kit_db_close(db);
		return rc;
	}
	for (size_t i = 0; i < subs.n; i++) {
		const struct sub *s = &subs.v[i];
		int score = 0, max = 0;
		char note[160], p[16], t[16];
		if (grade_one(o, db, fmt, s, &score, &max, note, sizeof note) != 0) {
			printf("%s %s: not graded: %s\n", s->student, s->lab, note);
			rc = 1;
			continue;
		}
		snprintf(p, sizeof p, "%d", score);
		snprintf(t, sizeof t, "%d", max);
		if (kit_db_exec(db, "INSERT INTO hotrow_class.graded (student, lab, passed, total, note)"
		                " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (student, lab) DO UPDATE SET"
		                " passed = EXCLUDED.passed, total = EXCLUDED.total, note = EXCLUDED.note,"
		                " at = pg_catalog.now()", 5,
		                (const char *[]){s->student, s->lab, p, t, note}) != 0) {
			rc = class_fail(db, "cannot write hotrow_class.graded");
			break;
		}
		printf("%s %s: %d of %d checks\n", s->student, s->lab, score, max);
	}
	if (subs.n == 0)
		printf("no submission to grade: students send theirs with `hotrow class submit LAB`\n");
	free(subs.v);
	kit_db_close(db);
	return rc;
}
