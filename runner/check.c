/*
 * runner_check.c: building a lab, running its cmocka suite, reading verdicts.
 * See runner_check.h for the output format read and the interface.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/runner_check.h"
#include "cli/runner_hint.h"
#include "cli/runner_proc.h"

/* A growing string; on out-of-memory it keeps what it had. */
struct buf {
	char *s;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (b->len + n + 1 > cap)
			cap *= 2;
		char *ns = realloc(b->s, cap);
		if (!ns)
			return;
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void buf_line(struct buf *b, const char *line)
{
	buf_add(b, line, strlen(line));
	buf_add(b, "\n", 1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int runner_db_env(const char *url)
{
	if (!url)
		return 0;
	if (!strncmp(url, "sqlite:", 7) && url[7]) {
		setenv("HOTROW_LAB_ONLY", "sqlite", 1);
		return 0;
	}
	if (!strncmp(url, "postgres://", 11) || !strncmp(url, "postgresql://", 13) ||
	    strchr(url, '=')) {
		setenv("HOTROW_LAB_ONLY", "postgres", 1);
		setenv("HOTROW_PG_URL", url, 1);
		return 0;
	}
	return -1;
}

static void collect(void *arg, char *text)
{
	buf_line(arg, text);
}

int runner_build(const struct runner_tree *t, const char *target, char **log)
{
	struct buf b = {0};
	/* The runner's targets live in the plain build/: a SAN=... that a make
	 * above us exported into the environment must not move them. */
	char *argv[] = {"make", "-s", "--no-print-directory", "-j2", "SAN=", (char *)target, NULL};
	int rc = runner_proc_lines(t->root, argv, collect, &b);
	*log = b.s;
	return rc == 0 ? 0 : rc > 128 ? -2 : -1;
}

void runner_build_log_print(FILE *out, const char *log)
{
	const char *s = log ? log : "";
	while (*s) {
		size_t n = strcspn(s, "\n");
		if (strncmp(s, "make: ", 6) && strncmp(s, "make[", 5))
			fprintf(out, "%.*s\n", (int)n, s);
		s += n;
		if (*s)
			s++;
	}
}

/* The parser's state while a suite's output streams by. */
struct parse {
	struct runner_result *r;
	struct runner_check *cur;     /* the check between RUN and its verdict */
	struct buf details, notices, stray;
	int summary;               /* past "[==========] N test(s) run." */
	double started;
	int live;
};

static const char *tag_of(const char *text, const char *tag)
{
	size_t n = strlen(tag);
	return strncmp(text, tag, n) ? NULL : text + n;
}

static void print_check(const struct runner_check *c)
{
	switch (c->verdict) {
	case RUNNER_PASSED:
		printf("  %sok%s    %s\n", runner_c_ok(), runner_c_off(), c->name);
		break;
	case RUNNER_SKIPPED:   /* the NOTICE and the total say why; one line each is noise */
		break;
	case RUNNER_FAILED:
		printf("  %sFAIL%s  %s\n", runner_c_bad(), runner_c_off(), c->name);
		for (const char *s = c->details ? c->details : ""; *s; ) {
			size_t n = strcspn(s, "\n");
			printf("          %.*s\n", (int)n, s);
			s += n;
			if (*s)
				s++;
		}
		if (c->where[0])
			printf("          %s(%s)%s\n", runner_c_dim(), c->where, runner_c_off());
		break;
	}
	fflush(stdout);
}

static void start_check(struct parse *p, const char *name)
{
	struct runner_result *r = p->r;
	struct runner_check *nc = realloc(r->checks, (r->n + 1) * sizeof *nc);
	if (!nc) {
		p->cur = NULL;
		return;
	}
	r->checks = nc;
	p->cur = &r->checks[r->n++];
	memset(p->cur, 0, sizeof *p->cur);
	snprintf(p->cur->name, sizeof p->cur->name, "%s", name);
	p->cur->verdict = RUNNER_FAILED;
	p->details.len = 0;
	p->started = now();
}

static void end_check(struct parse *p, enum runner_verdict v)
{
	struct runner_check *c = p->cur;
	c->verdict = v;
	c->seconds = now() - p->started;
	if (p->details.len) {
		c->details = strdup(p->details.s);
		p->details.len = 0;
	}
	if (v == RUNNER_PASSED)
		p->r->passed++;
	else if (v == RUNNER_SKIPPED)
		p->r->skipped++;
	else
		p->r->failed++;
	if (p->live)
		print_check(c);
	p->cur = NULL;
}

/* cmocka's "[  ERROR   ] --- msg" and "[   LINE   ] --- file:line: error: ..."
 * (1.1.5 prints both on one line for fail()). */
static void error_detail(struct parse *p, const char *msg)
{
	const char *line = strstr(msg, "[   LINE   ] --- ");
	size_t n = line ? (size_t)(line - msg) : strlen(msg);
	while (n > 0 && msg[n - 1] == ' ')
		n--;
	if (n) {
		buf_add(&p->details, msg, n);
		buf_add(&p->details, "\n", 1);
	}
	if (line && p->cur) {
		line += strlen("[   LINE   ] --- ");
		size_t w = strcspn(line, " ");
		if (w > 0 && line[w - 1] == ':')
			w--;
		snprintf(p->cur->where, sizeof p->cur->where, "%.*s", (int)w, line);
	}
}

/* The harness starts a failure with "file.c:42: "; keep that apart. */
static const char *strip_where(struct runner_check *c, const char *text)
{
	size_t file = strcspn(text, ": ");
	if (file < 3 || strncmp(text + file - 2, ".c", 2) || text[file] != ':')
		return text;
	size_t digits = strspn(text + file + 1, "0123456789");
	if (!digits || strncmp(text + file + 1 + digits, ": ", 2))
		return text;
	if (!c->where[0])
		snprintf(c->where, sizeof c->where, "%.*s", (int)(file + 1 + digits), text);
	return text + file + 1 + digits + 2;
}

static void parse_line(void *arg, char *text)
{
	struct parse *p = arg;
	const char *v;
	if (!strncmp(text, "NOTICE", 6)) {
		buf_line(&p->notices, text);
		if (p->live)
			printf("%s%s%s\n", runner_c_dim(), text, runner_c_off());
		return;
	}
	if (p->summary)
		return;
	if (tag_of(text, "[==========] ") && strstr(text, "run.")) {
		p->summary = 1;
		return;
	}
	if ((v = tag_of(text, "[ RUN      ] "))) {
		start_check(p, v);
		return;
	}
	if (!p->cur) {
		if (text[0] != '[' && text[0])
			buf_line(&p->stray, text);
		return;
	}
	if ((v = tag_of(text, "[       OK ] ")) && !strcmp(v, p->cur->name))
		end_check(p, RUNNER_PASSED);
	else if ((v = tag_of(text, "[  SKIPPED ] ")) && !strcmp(v, p->cur->name))
		end_check(p, RUNNER_SKIPPED);
	else if (((v = tag_of(text, "[  FAILED  ] ")) || (v = tag_of(text, "[  ERROR   ] "))) &&
		 !strcmp(v, p->cur->name))
		end_check(p, RUNNER_FAILED);
	else if ((v = tag_of(text, "[  ERROR   ] --- ")))
		error_detail(p, v);
	else if ((v = tag_of(text, "[   LINE   ] --- ")))
		error_detail(p, text);
	else if ((v = tag_of(text, "HINT: "))) {
		size_t used = strlen(p->cur->hint);
		snprintf(p->cur->hint + used, sizeof p->cur->hint - used, "%s%s", used ? " " : "", v);
	} else if (text[0])
		buf_line(&p->details, strip_where(p->cur, text));
}

void runner_result_parse(struct runner_result *r, const char *output)
{
	struct parse p = {.r = r};
	memset(r, 0, sizeof *r);
	r->built = 1;
	while (*output) {
		size_t n = strcspn(output, "\n");
		char *line = strndup(output, n);
		if (line)
			parse_line(&p, line);
		free(line);
		output += n;
		if (*output)
			output++;
	}
	if (p.cur) {
		buf_line(&p.details, "the output ended inside this check");
		end_check(&p, RUNNER_FAILED);
	}
	free(p.details.s);
	r->notices = p.notices.s;
	r->stray = p.stray.s;
}

int runner_check_run(const struct runner_tree *t, const struct runner_lab *l, const struct runner_opts *o,
                  struct runner_result *r)
{
	char target[PATH_MAX];
	memset(r, 0, sizeof *r);
	snprintf(target, sizeof target, "build/labs/%s/test-%s", l->name,
		 o->solutions ? "solution" : "exercise");
	/* The first build compiles the kit too: say so on a terminal, then
	 * erase the line. */
	int status_line = o->live && isatty(STDOUT_FILENO);
	if (status_line) {
		printf("  %smake %s ...%s\r", runner_c_dim(), target, runner_c_off());
		fflush(stdout);
	}
	int built = runner_build(t, target, &r->build_log);
	if (status_line) {
		printf("\033[K");
		fflush(stdout);
	}
	if (built != 0) {
		r->interrupted = built == -2;
		return 0;
	}
	r->built = 1;

	char bin[PATH_MAX];
	if (runner_path(t, bin, sizeof bin, "%s", target) != 0)
		return -1;
	struct parse p = {.r = r, .live = o->live};
	char *argv[] = {bin, NULL};
	r->status = runner_proc_lines(t->root, argv, parse_line, &p);
	if (p.cur) {   /* died inside a check */
		char why[96];
		if (r->status > 128)
			snprintf(why, sizeof why, "the test process died (%s)", strsignal(r->status - 128));
		else
			snprintf(why, sizeof why, "the test process ended inside this check (exit %d)", r->status);
		buf_line(&p.details, why);
		end_check(&p, RUNNER_FAILED);
	}
	free(p.details.s);
	r->notices = p.notices.s;
	r->stray = p.stray.s;
	if (r->status < 0) {
		free(r->stray);
		r->stray = strdup("could not start the test binary");
		return -1;
	}
	return 0;
}

void runner_result_free(struct runner_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->checks[i].details);
	free(r->checks);
	free(r->build_log);
	free(r->notices);
	free(r->stray);
	memset(r, 0, sizeof *r);
}

/* The hint for the first failing check that names one, or a pointer to
 * `hotrow lab hint` when none does. */
static void print_first_hint(const struct runner_tree *t, const struct runner_lab *l, const struct runner_result *r)
{
	const struct runner_check *first = NULL;
	for (size_t i = 0; i < r->n && !first; i++)
		if (r->checks[i].verdict == RUNNER_FAILED && r->checks[i].hint[0])
			first = &r->checks[i];
	if (!first) {
		printf("\nStuck? `hotrow lab hint %s` reveals the next hint.\n", l->num);
		return;
	}
	char path[PATH_MAX], tag[64] = "";
	struct runner_hints h;
	int k = -1;
	if (runner_path(t, path, sizeof path, "labs/%s/hints.md", l->name) == 0 &&
	    runner_hints_load(path, &h) == 0) {
		k = runner_hints_first(&h, first->hint, tag, sizeof tag);
		if (k >= 0) {
			printf("\nHint for %s [%s]:\n", first->name, tag);
			runner_hint_print(stdout, &h, (size_t)k, "  ");
		}
		runner_hints_free(&h);
	}
	if (k < 0)
		printf("\n%s failed with hint tag [%s], which labs/%s/hints.md does not have;\n"
		       "`hotrow lab hint %s` reveals the hints in order.\n",
		       first->name, first->hint, l->name, l->num);
}

int runner_check_cmd(const struct runner_tree *t, const struct runner_lab *l, const struct runner_opts *o)
{
	const char *side = o->solutions ? "solutions" : "exercises";
	printf("%sLab %s — %s%s: checking %s/%s/\n", runner_c_bold(), l->num, l->title,
	       runner_c_off(), side, l->name);
	fflush(stdout);
	struct runner_opts live = *o;
	live.live = 1;
	struct runner_result r;
	int rc = runner_check_run(t, l, &live, &r);
	struct runner_progress pg;
	runner_progress_get(t, l, &pg);

	if (r.interrupted) {
		printf("\nInterrupted while building.\n");
		runner_result_free(&r);
		return 1;
	}
	if (!r.built) {
		printf("\n%s/%s/ does not compile yet; the compiler says:\n\n", side, l->name);
		runner_build_log_print(stdout, r.build_log);
		printf("\nFix the first error above, then check again.\n");
		if (!o->solutions) {
			pg.passed = 0;
			runner_progress_put(t, l, &pg);
		}
		runner_result_free(&r);
		return 1;
	}
	if (r.build_log)   /* warnings: worth seeing, they are often the bug */
		runner_build_log_print(stdout, r.build_log);
	if (rc != 0 || (r.n == 0 && r.status != 0) || (r.failed == 0 && r.status != 0)) {
		printf("\nThe test program failed outside any check (exit %d):\n%s", r.status,
		       r.stray ? r.stray : "(no output)\n");
		runner_result_free(&r);
		return 1;
	}
	int ran = r.passed + r.failed;
	printf("\n%s%d of %d checks passing%s", r.failed ? runner_c_bad() : runner_c_ok(),
	       r.passed, ran, runner_c_off());
	if (r.skipped)
		printf(" (%d skipped)", r.skipped);
	printf(".\n");
	if (!o->solutions) {
		pg.passed = r.passed;
		pg.total = ran;
		runner_progress_put(t, l, &pg);
	}
	if (r.failed) {
		print_first_hint(t, l, &r);
		if (!o->solutions) {
			char files[256];
			runner_exercise_files(t, l, files, sizeof files);
			printf("\nNext: edit exercises/%s/ (%s) with labs/%s/README.md at hand, then\n"
			       "`hotrow lab check %s` again, or `hotrow lab watch %s` to check on every save.\n",
			       l->name, files[0] ? files : "no files yet", l->name, l->num, l->num);
		}
	} else if (ran == 0) {
		printf("No check ran%s.\n", r.skipped ? ": every one was skipped" : "");
	} else if (!o->solutions) {
		printf("\nLab %s done. `hotrow lab` shows what is next.\n", l->num);
	}
	rc = r.failed || ran == 0 ? 1 : 0;
	runner_result_free(&r);
	return rc;
}
