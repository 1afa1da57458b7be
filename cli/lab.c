/*
 * lab.c: `hotrow lab`, the runner for the guided labs, in the spirit of
 * rustlings: list the labs, check the student's code against a lab's
 * tests, reveal hints, watch for saves, drive a lab under load, grade every
 * lab, and put a skeleton back.
 *
 * This file parses the command line and holds the small subcommands (list,
 * hint, run); the others live in runner_check.c, runner_watch.c, runner_grade.c and
 * runner_reset.c, the kit, the labs and the progress file in runner_tree.c,
 * hints.md in runner_hint.c, and starting make and git in runner_proc.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/runner_check.h"
#include "cli/runner_grade.h"
#include "cli/runner_hint.h"
#include "cli/runner_reset.h"
#include "cli/runner_tree.h"
#include "cli/runner_watch.h"

static const char usage_all[] =
	"usage: hotrow lab [CMD] [NN] [options]\n"
	"\n"
	"The guided labs: you write a fix for a hot row in C, against SQLite and\n"
	"PostgreSQL, and each lab's checks tell you how far you got.\n"
	"\n"
	"  hotrow lab                   every lab, its status, and what to do next\n"
	"  hotrow lab check NN          build your exercise with the lab's tests and\n"
	"                               show each check; the hint for the first failure\n"
	"  hotrow lab hint NN           reveal the next hint\n"
	"  hotrow lab watch [NN]        check again whenever you save (q quits)\n"
	"  hotrow lab run NN            drive your code under load: throughput and\n"
	"                               latency next to the engine's prediction\n"
	"  hotrow lab grade             every lab: a score table, JUnit XML, results.json\n"
	"  hotrow lab reset NN          put the skeleton back (your work is backed up)\n"
	"\n"
	"NN is 01, 1 or 01-hot-row. `hotrow lab CMD --help` lists a command's\n"
	"options. Progress and backups live in .hotrow/ in the kit.\n"
	"Exit: 0 every check passed, 1 a check or the build failed, 2 bad usage.\n";

static const char usage_db[] =
	"  --db URL        one database only: sqlite:PATH, sqlite::memory:, a\n"
	"                  postgres:// URL or a libpq conninfo. Without it the SQLite\n"
	"                  checks run, and the PostgreSQL ones when HOTROW_PG_URL is\n"
	"                  set (`make pg-up` starts a server and prints it)\n";

static const struct sub {
	const char *name;
	const char *args;      /* for the usage line */
	const char *options;   /* the long options it takes, space separated */
	int lab;               /* 0: no NN; 1: NN optional; 2: NN required */
	const char *help;
} subs[] = {
	{"list", "", " ", 0,
	 "Every lab with its status (not started, N of M checks passing, done)\n"
	 "and the next thing to do. Same as `hotrow lab`.\n"},
	{"check", "NN [--db URL] [--solutions]", " db solutions ", 2,
	 "Build exercises/NN-name/ with the lab's tests (make, as CI does), run\n"
	 "them, and show each check: passed, or failed with expected vs got and\n"
	 "the hint for the first failure. A compile error shows the compiler's\n"
	 "message. Records your progress in .hotrow/progress.\n"
	 "  --solutions     check solutions/ instead (instructors; not recorded)\n"},
	{"hint", "NN", " ", 2,
	 "Reveal the next hint from labs/NN-name/hints.md. Early hints point the\n"
	 "way; the last one is close to the answer.\n"},
	{"watch", "[NN] [--db URL]", " db solutions ", 1,
	 "Check NN (default: the first lab not done), then again each time a file\n"
	 "in exercises/NN-name/ is saved. q or Ctrl-C quits.\n"
	 "  --solutions     watch solutions/ instead\n"},
	{"run", "NN [--db URL] [--threads T] [--seconds S] [--solutions] [-- DRIVER OPTIONS]",
	 " db threads seconds solutions ", 2,
	 "Build the lab's driver (labs/NN-name/run.c) with your code and run it:\n"
	 "T threads call your operation for S seconds; it prints throughput and\n"
	 "latency percentiles next to what the engine predicts for the hold time\n"
	 "it measured.\n"
	 "  --db URL        the database (default: an SQLite file under .hotrow/)\n"
	 "  --threads T     client threads, 1-1024\n"
	 "  --seconds S     how long to drive it, 0.1-3600\n"
	 "  --solutions     run the reference solution instead\n"
	 "  -- OPTIONS      passed to the lab's driver as they are, e.g.\n"
	 "                  `hotrow lab run 04 -- --flush-ms 50`; `-- --help` lists them\n"},
	{"grade", "[NN] [--out DIR] [--db URL] [--solutions]", " out db solutions ", 1,
	 "Check every lab (or only NN) and print a score table (one point per\n"
	 "check), then write DIR/junit.xml and DIR/results.json (Gradescope's\n"
	 "format).\n"
	 "  --out DIR       where to write them (default: .hotrow/grade)\n"
	 "  --solutions     grade solutions/ (instructors: should be full marks)\n"},
	{"reset", "NN [--yes]", " yes ", 2,
	 "Put exercises/NN-name/ back to the skeleton. Your files are copied to\n"
	 ".hotrow/backup/NN-name-TIME/ first, so nothing is lost. Asks before\n"
	 "overwriting unless --yes.\n"
	 "  --yes           do not ask\n"},
};
#define NSUBS (sizeof subs / sizeof subs[0])

struct args {
	const char *lab;
	const char *db, *threads, *seconds, *out;
	int solutions, yes;
	int nextra;            /* run: what follows "--" goes to the driver */
	char **extra;
};

static void sub_help(const struct sub *s)
{
	printf("usage: hotrow lab %s %s\n\n%s", s->name, s->args, s->help);
	if (strstr(s->options, " db ") && !strstr(s->help, "--db"))
		fputs(usage_db, stdout);
	printf("\nNN is 01, 1 or 01-hot-row.\n");
}

/* Take "--name VALUE" or "--name=VALUE" at argv[*i]; NULL if absent. */
static const char *value(const char *s, const char *name, int argc, char **argv, int *i, int *bad)
{
	size_t n = strlen(name);
	if (strncmp(s, name, n))
		return NULL;
	if (s[n] == '=')
		return s + n + 1;
	if (s[n])
		return NULL;
	if (*i + 1 >= argc) {
		*bad = 1;
		return NULL;
	}
	return argv[++*i];
}

static int allows(const struct sub *s, const char *opt)
{
	char key[32];
	snprintf(key, sizeof key, " %s ", opt);
	return strstr(s->options, key) != NULL;
}

/* Fill a from argv[1..]; returns 0, 2 after printing a usage error, or 3
 * after printing --help. */
static int parse(const struct sub *s, int argc, char **argv, struct args *a)
{
	static const char *const valued[] = {"db", "threads", "seconds", "out"};
	memset(a, 0, sizeof *a);
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			sub_help(s);
			return 3;
		}
		if (!strcmp(arg, "--") && !strcmp(s->name, "run")) {
			a->extra = argv + i + 1;
			a->nextra = argc - i - 1;
			break;
		}
		if (arg[0] != '-' || !arg[1]) {
			if (s->lab == 0 || a->lab) {
				fprintf(stderr, "hotrow lab %s: unexpected argument '%s' (usage: hotrow lab %s %s)\n",
					s->name, arg, s->name, s->args);
				return 2;
			}
			a->lab = arg;
			continue;
		}
		const char *opt = arg + (arg[1] == '-' ? 2 : 1);
		int matched = 0, bad = 0;
		for (size_t k = 0; k < sizeof valued / sizeof valued[0] && !matched; k++) {
			char name[32];
			snprintf(name, sizeof name, "--%s", valued[k]);
			const char *v = value(arg, name, argc, argv, &i, &bad);
			if (!v && !bad)
				continue;
			if (!allows(s, valued[k]))
				break;
			if (bad) {
				fprintf(stderr, "hotrow lab %s: %s needs a value\n", s->name, name);
				return 2;
			}
			const char **slot = k == 0 ? &a->db : k == 1 ? &a->threads : k == 2 ? &a->seconds : &a->out;
			*slot = v;
			matched = 1;
		}
		if (!matched && !strcmp(opt, "solutions") && allows(s, "solutions"))
			a->solutions = matched = 1;
		if (!matched && (!strcmp(opt, "yes") || !strcmp(arg, "-y")) && allows(s, "yes"))
			a->yes = matched = 1;
		if (!matched) {
			fprintf(stderr, "hotrow lab %s: unknown option '%s' (usage: hotrow lab %s %s)\n",
				s->name, arg, s->name, s->args);
			return 2;
		}
	}
	if (s->lab == 2 && !a->lab) {
		fprintf(stderr, "hotrow lab %s: which lab? (usage: hotrow lab %s %s)\n",
			s->name, s->name, s->args);
		return 2;
	}
	if (a->db && runner_db_env(a->db) != 0) {
		fprintf(stderr, "hotrow lab %s: --db takes sqlite:PATH, sqlite::memory:, "
			"postgres://... or a conninfo, not '%s'\n", s->name, a->db);
		return 2;
	}
	return 0;
}

/* The first lab not done, or NULL when all are. */
static const struct runner_lab *next_lab(const struct runner_tree *t)
{
	for (size_t i = 0; i < t->nlabs; i++) {
		struct runner_progress p;
		runner_progress_get(t, &t->labs[i], &p);
		if (!runner_progress_done(&p))
			return &t->labs[i];
	}
	return NULL;
}

static int cmd_list(const struct runner_tree *t)
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
	}
	const struct runner_lab *l = next_lab(t);
	if (!l) {
		printf("\nEvery lab is done. `hotrow lab grade` prints your score.\n");
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
	printf("  check    hotrow lab check %s     (or `hotrow lab watch %s` to check on every save)\n",
	       l->num, l->num);
	printf("  stuck?   hotrow lab hint %s\n", l->num);
	return 0;
}

static int cmd_hint(const struct runner_tree *t, const struct runner_lab *l)
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
	size_t k = p.hints < 0 ? 0 : (size_t)p.hints;
	if (k >= h.n)
		k = h.n - 1;
	for (size_t i = 0; i < k; i++)
		printf("%sHint %zu of %zu: %s (shown before)%s\n", runner_c_dim(), i + 1, h.n,
		       h.v[i].title, runner_c_off());
	runner_hint_print(stdout, &h, k, "");
	if (k + 1 < h.n)
		printf("\n`hotrow lab hint %s` again reveals hint %zu.\n", l->num, k + 2);
	else
		printf("\nThat was the last hint; the handout labs/%s/README.md has the rest.\n", l->name);
	if ((int)k + 1 > p.hints) {
		p.hints = (int)k + 1;
		if (runner_progress_put(t, l, &p) != 0)
			fprintf(stderr, "hotrow lab hint: cannot record progress in .hotrow/: %s\n", strerror(errno));
	}
	runner_hints_free(&h);
	return 0;
}

static int check_number(const char *cmd, const char *opt, const char *v, double lo, double hi, int integer)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || d < lo || d > hi || (integer && d != (double)(long)d)) {
		fprintf(stderr, "hotrow lab %s: %s takes %s from %g to %g, not '%s'\n", cmd, opt,
			integer ? "a whole number" : "a number", lo, hi, v);
		return -1;
	}
	return 0;
}

static int cmd_run(const struct runner_tree *t, const struct runner_lab *l, const struct args *a)
{
	if ((a->threads && check_number("run", "--threads", a->threads, 1, 1024, 1)) ||
	    (a->seconds && check_number("run", "--seconds", a->seconds, 0.1, 3600, 0)))
		return 2;
	char path[PATH_MAX], target[PATH_MAX];
	if (runner_path(t, path, sizeof path, "labs/%s/run.c", l->name) != 0 || access(path, R_OK) != 0) {
		fprintf(stderr, "hotrow lab run: lab %s has no driver (labs/%s/run.c)\n", l->num, l->name);
		return 1;
	}
	snprintf(target, sizeof target, "build/labs/%s/run-%s", l->name, a->solutions ? "solution" : "exercise");
	printf("building %s ...\n", target);
	fflush(stdout);
	char *log = NULL;
	if (runner_build(t, target, &log) != 0) {
		printf("\n%s/%s/ does not compile yet; the compiler says:\n\n",
		       a->solutions ? "solutions" : "exercises", l->name);
		runner_build_log_print(stdout, log);
		free(log);
		return 1;
	}
	runner_build_log_print(stdout, log);
	free(log);

	/* The driver runs from the kit root (its default database lives under
	 * .hotrow/), so a relative sqlite: path is made absolute first. */
	char db[PATH_MAX + 16], cwd[PATH_MAX];
	const char *url = a->db;
	if (url && !strncmp(url, "sqlite:", 7) && url[7] != '/' && url[7] != ':' && getcwd(cwd, sizeof cwd)) {
		snprintf(db, sizeof db, "sqlite:%s/%s", cwd, url + 7);
		url = db;
	}
	if (runner_path(t, path, sizeof path, "%s", target) != 0)
		return 1;
	if (chdir(t->root) != 0 || runner_state_dir(t, NULL) != 0) {
		fprintf(stderr, "hotrow lab run: cannot use %s/.hotrow: %s\n", t->root, strerror(errno));
		return 1;
	}
	char **argv = calloc((size_t)a->nextra + 8, sizeof *argv);
	int n = 0;
	if (!argv) {
		fprintf(stderr, "hotrow lab run: out of memory\n");
		return 1;
	}
	argv[n++] = path;
	if (url) {
		argv[n++] = "--db";
		argv[n++] = (char *)url;
	}
	if (a->threads) {
		argv[n++] = "--threads";
		argv[n++] = (char *)a->threads;
	}
	if (a->seconds) {
		argv[n++] = "--seconds";
		argv[n++] = (char *)a->seconds;
	}
	for (int k = 0; k < a->nextra; k++)
		argv[n++] = a->extra[k];
	argv[n] = NULL;
	fflush(stdout);
	execv(path, argv);
	fprintf(stderr, "hotrow lab run: cannot run %s: %s\n", path, strerror(errno));
	free(argv);
	return 1;
}

/* --solutions in a kit without them (the student kit): say so. */
static int lacks_solutions(const struct runner_tree *t, const struct runner_lab *l, const char *cmd)
{
	char p[PATH_MAX];
	if (runner_path(t, p, sizeof p, "solutions/%s", l ? l->name : "") != 0 || access(p, F_OK) == 0)
		return 0;
	fprintf(stderr, "hotrow lab %s: --solutions: this kit has no %s (the student kit leaves "
		"them out)\n", cmd, p + strlen(t->root) + 1);
	return 1;
}

int cmd_lab(int argc, char **argv)
{
	const struct sub *s = &subs[0];
	int shift = 0;
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
		fputs(usage_all, stdout);
		return 0;
	}
	if (argc >= 2 && argv[1][0] != '-') {
		s = NULL;
		for (size_t i = 0; i < NSUBS; i++)
			if (!strcmp(argv[1], subs[i].name))
				s = &subs[i];
		if (!s) {
			fprintf(stderr, "hotrow lab: unknown command '%s' (try: list, check, hint, "
				"watch, run, grade, reset; hotrow lab --help)\n", argv[1]);
			return 2;
		}
		shift = 1;
	}
	struct args a;
	int rc = parse(s, argc - shift, argv + shift, &a);
	if (rc)
		return rc == 3 ? 0 : rc;

	struct runner_tree t;
	if (runner_tree_open(&t) != 0)
		return 1;
	runner_reset_snapshot(&t);
	const struct runner_lab *l = NULL;
	if (a.lab && !(l = runner_tree_find(&t, a.lab))) {
		runner_tree_unknown(&t, s->name, a.lab);
		runner_tree_close(&t);
		return 2;
	}
	if (a.solutions && lacks_solutions(&t, l, s->name)) {
		runner_tree_close(&t);
		return 2;
	}
	struct runner_opts o = {.solutions = a.solutions, .live = 1};
	if (!strcmp(s->name, "list"))
		rc = cmd_list(&t);
	else if (!strcmp(s->name, "check"))
		rc = runner_check_cmd(&t, l, &o);
	else if (!strcmp(s->name, "hint"))
		rc = cmd_hint(&t, l);
	else if (!strcmp(s->name, "watch")) {
		if (!l && !(l = next_lab(&t)))
			l = t.nlabs ? &t.labs[0] : NULL;
		if (!l) {
			fprintf(stderr, "hotrow lab watch: no labs in %s/labs/\n", t.root);
			rc = 1;
		} else {
			rc = runner_watch(&t, l, &o);
		}
	} else if (!strcmp(s->name, "run"))
		rc = cmd_run(&t, l, &a);
	else if (!strcmp(s->name, "grade"))
		rc = runner_grade(&t, l, a.out, &o);
	else
		rc = runner_reset(&t, l, a.yes);
	runner_tree_close(&t);
	return rc;
}
