/*
 * lab.c: `hotrow lab`, the runner for the guided labs, in the spirit of
 * rustlings: list the labs, check the student's code against a lab's
 * tests, reveal hints, watch for saves, drive a lab under load, grade every
 * lab, and put a skeleton back.
 *
 * This file parses the command line and holds the small subcommands (list,
 * hint, run); the others live in lab_check.c, lab_watch.c, lab_grade.c and
 * lab_reset.c, the kit, the labs and the progress file in lab_tree.c,
 * hints.md in lab_hint.c, and starting make and git in lab_proc.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/lab_check.h"
#include "cli/lab_grade.h"
#include "cli/lab_hint.h"
#include "cli/lab_reset.h"
#include "cli/lab_tree.h"
#include "cli/lab_watch.h"

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
	{"run", "NN [--db URL] [--threads T] [--seconds S] [--solutions] [--top] [-- DRIVER OPTIONS]",
	 " db threads seconds solutions top ", 2,
	 "Build the lab's driver (labs/NN-name/run.c) with your code and run it:\n"
	 "T threads call your operation for S seconds; it prints throughput and\n"
	 "latency percentiles next to what the engine predicts for the hold time\n"
	 "it measured.\n"
	 "  --db URL        the database (default: an SQLite file under .hotrow/)\n"
	 "  --threads T     client threads, 1-1024\n"
	 "  --seconds S     how long to drive it, 0.1-3600\n"
	 "  --solutions     run the reference solution instead\n"
	 "  --top           watch the PostgreSQL's lock queues live while it runs\n"
	 "                  (hotrow top; needs --db postgresql://... or HOTROW_PG_URL;\n"
	 "                  the driver's output is printed when it ends)\n"
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
	int solutions, yes, top;
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
		if (!matched && !strcmp(opt, "top") && allows(s, "top"))
			a->top = matched = 1;
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
	if (a->db && lab_db_env(a->db) != 0) {
		fprintf(stderr, "hotrow lab %s: --db takes sqlite:PATH, sqlite::memory:, "
			"postgres://... or a conninfo, not '%s'\n", s->name, a->db);
		return 2;
	}
	return 0;
}

/* The first lab not done, or NULL when all are. */
static const struct lab *next_lab(const struct lab_tree *t)
{
	for (size_t i = 0; i < t->nlabs; i++) {
		struct lab_progress p;
		lab_progress_get(t, &t->labs[i], &p);
		if (!lab_progress_done(&p))
			return &t->labs[i];
	}
	return NULL;
}

static int cmd_list(const struct lab_tree *t)
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
	printf("%sThe labs%s (in %s)\n\n", lab_c_bold(), lab_c_off(), t->root);
	for (size_t i = 0; i < t->nlabs; i++) {
		struct lab_progress p;
		char st[64];
		lab_progress_get(t, &t->labs[i], &p);
		const char *c = lab_progress_done(&p) ? lab_c_ok() : p.total ? lab_c_bad() : lab_c_dim();
		printf("  %s  %-*s  %s%s%s\n", t->labs[i].num, width, t->labs[i].title, c,
		       lab_progress_str(&p, st, sizeof st), lab_c_off());
	}
	const struct lab *l = next_lab(t);
	if (!l) {
		printf("\nEvery lab is done. `hotrow lab grade` prints your score.\n");
		return 0;
	}
	struct lab_progress p;
	char files[256];
	lab_progress_get(t, l, &p);
	lab_exercise_files(t, l, files, sizeof files);
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

static int cmd_hint(const struct lab_tree *t, const struct lab *l)
{
	char path[PATH_MAX];
	struct lab_hints h;
	if (lab_path(t, path, sizeof path, "labs/%s/hints.md", l->name) != 0 ||
	    lab_hints_load(path, &h) != 0) {
		fprintf(stderr, "hotrow lab hint: cannot read labs/%s/hints.md: %s\n", l->name, strerror(errno));
		return 1;
	}
	if (h.n == 0) {
		printf("Lab %s has no hints yet.\n", l->num);
		lab_hints_free(&h);
		return 0;
	}
	struct lab_progress p;
	lab_progress_get(t, l, &p);
	size_t k = p.hints < 0 ? 0 : (size_t)p.hints;
	if (k >= h.n)
		k = h.n - 1;
	for (size_t i = 0; i < k; i++)
		printf("%sHint %zu of %zu: %s (shown before)%s\n", lab_c_dim(), i + 1, h.n,
		       h.v[i].title, lab_c_off());
	lab_hint_print(stdout, &h, k, "");
	if (k + 1 < h.n)
		printf("\n`hotrow lab hint %s` again reveals hint %zu.\n", l->num, k + 2);
	else
		printf("\nThat was the last hint; the handout labs/%s/README.md has the rest.\n", l->name);
	if ((int)k + 1 > p.hints) {
		p.hints = (int)k + 1;
		if (lab_progress_put(t, l, &p) != 0)
			fprintf(stderr, "hotrow lab hint: cannot record progress in .hotrow/: %s\n", strerror(errno));
	}
	lab_hints_free(&h);
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

static int cmd_run(const struct lab_tree *t, const struct lab *l, const struct args *a)
{
	if ((a->threads && check_number("run", "--threads", a->threads, 1, 1024, 1)) ||
	    (a->seconds && check_number("run", "--seconds", a->seconds, 0.1, 3600, 0)))
		return 2;
	/* --top: the screen needs a terminal and a PostgreSQL to watch. */
	const char *top_url = a->db ? a->db : getenv("HOTROW_PG_URL");
	if (a->top && (!top_url || !*top_url || !strncmp(top_url, "sqlite:", 7))) {
		fprintf(stderr, "hotrow lab run: --top watches a PostgreSQL server: give --db "
		        "postgresql://... or export HOTROW_PG_URL=$(scripts/pg up)\n");
		return 2;
	}
	if (a->top && !(isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))) {
		fprintf(stderr, "hotrow lab run: --top needs a terminal (or run `hotrow top --dump` "
		        "beside the run)\n");
		return 2;
	}
	char path[PATH_MAX], target[PATH_MAX];
	if (lab_path(t, path, sizeof path, "labs/%s/run.c", l->name) != 0 || access(path, R_OK) != 0) {
		fprintf(stderr, "hotrow lab run: lab %s has no driver (labs/%s/run.c)\n", l->num, l->name);
		return 1;
	}
	snprintf(target, sizeof target, "build/labs/%s/run-%s", l->name, a->solutions ? "solution" : "exercise");
	printf("building %s ...\n", target);
	fflush(stdout);
	char *log = NULL;
	if (lab_build(t, target, &log) != 0) {
		printf("\n%s/%s/ does not compile yet; the compiler says:\n\n",
		       a->solutions ? "solutions" : "exercises", l->name);
		lab_build_log_print(stdout, log);
		free(log);
		return 1;
	}
	lab_build_log_print(stdout, log);
	free(log);

	/* The driver runs from the kit root (its default database lives under
	 * .hotrow/), so a relative sqlite: path is made absolute first. */
	char db[PATH_MAX + 16], cwd[PATH_MAX];
	const char *url = a->db;
	if (a->top && !url)
		url = top_url;
	if (url && !strncmp(url, "sqlite:", 7) && url[7] != '/' && url[7] != ':' && getcwd(cwd, sizeof cwd)) {
		snprintf(db, sizeof db, "sqlite:%s/%s", cwd, url + 7);
		url = db;
	}
	if (lab_path(t, path, sizeof path, "%s", target) != 0)
		return 1;
	if (chdir(t->root) != 0 || lab_state_dir(t, NULL) != 0) {
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
	if (a->top) {
		char logpath[PATH_MAX];
		snprintf(logpath, sizeof logpath, ".hotrow/run-%s.log", l->num);
		int rc = cmd_top_beside(argv, url, logpath);
		free(argv);
		return rc;
	}
	execv(path, argv);
	fprintf(stderr, "hotrow lab run: cannot run %s: %s\n", path, strerror(errno));
	free(argv);
	return 1;
}

/* --solutions in a kit without them (the student kit): say so. */
static int lacks_solutions(const struct lab_tree *t, const struct lab *l, const char *cmd)
{
	char p[PATH_MAX];
	if (lab_path(t, p, sizeof p, "solutions/%s", l ? l->name : "") != 0 || access(p, F_OK) == 0)
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

	struct lab_tree t;
	if (lab_tree_open(&t) != 0)
		return 1;
	lab_reset_snapshot(&t);
	const struct lab *l = NULL;
	if (a.lab && !(l = lab_tree_find(&t, a.lab))) {
		lab_tree_unknown(&t, s->name, a.lab);
		lab_tree_close(&t);
		return 2;
	}
	if (a.solutions && lacks_solutions(&t, l, s->name)) {
		lab_tree_close(&t);
		return 2;
	}
	struct lab_opts o = {.solutions = a.solutions, .live = 1};
	if (!strcmp(s->name, "list"))
		rc = cmd_list(&t);
	else if (!strcmp(s->name, "check"))
		rc = lab_check_cmd(&t, l, &o);
	else if (!strcmp(s->name, "hint"))
		rc = cmd_hint(&t, l);
	else if (!strcmp(s->name, "watch")) {
		if (!l && !(l = next_lab(&t)))
			l = t.nlabs ? &t.labs[0] : NULL;
		if (!l) {
			fprintf(stderr, "hotrow lab watch: no labs in %s/labs/\n", t.root);
			rc = 1;
		} else {
			rc = lab_watch(&t, l, &o);
		}
	} else if (!strcmp(s->name, "run"))
		rc = cmd_run(&t, l, &a);
	else if (!strcmp(s->name, "grade"))
		rc = lab_grade(&t, l, a.out, &o);
	else
		rc = lab_reset(&t, l, a.yes);
	lab_tree_close(&t);
	return rc;
}
