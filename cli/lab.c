/*
 * lab.c: `hotrow lab`, the runner for the guided labs, in the spirit of
 * rustlings: list the labs, check the student's code against a lab's
 * tests, reveal hints, watch for saves, drive a lab under load, grade every
 * lab, and put a skeleton back.
 *
 * This file only parses the command line (one table of subcommands and
 * their options, which also writes --help) and calls the runner, runner/,
 * which does the work and does not need this file: list and hint in
 * runner/cmds.c, check in runner/check.c, watch, run, grade and reset in
 * their own files there.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "kit/url.h"
#include "runner/check.h"
#include "runner/cmds.h"
#include "runner/run.h"
#include "runner/show.h"
#include "runner/grade.h"
#include "runner/hint.h"
#include "runner/reset.h"
#include "runner/tree.h"
#include "runner/watch.h"

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
	"Exit: 0 every check passed, 1 a check or the build failed, 2 bad usage,\n"
	"130 stopped by Ctrl-C.\n";

static const char usage_db[] =
	"  --db URL        one database only: `sqlite` (the SQLite checks, each in\n"
	"                  a file of its own), or a postgres:// URL or libpq\n"
	"                  conninfo (the PostgreSQL checks, on that server; one\n"
	"                  that cannot be used fails them). Without it the SQLite\n"
	"                  checks run, and the PostgreSQL ones when HOTROW_PG_URL is\n"
	"                  set (`make pg-up` starts a server and prints it)\n";

static const char usage_timeout[] =
	"  --timeout S     stop a test program after S seconds (default 120; the\n"
	"                  build gets 4 times as long); its process group is killed\n";

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
	{"check", "NN [--db URL] [--timeout S] [--solutions]", " db timeout solutions ", 2,
	 "Build exercises/NN-name/ with the lab's tests (make, as CI does), run\n"
	 "them, and show each check: passed, or failed with expected vs got and\n"
	 "the hint for the first failure. A compile error shows the compiler's\n"
	 "message. Records your progress in .hotrow/progress.\n"
	 "  --solutions     check solutions/ instead (instructors; not recorded)\n"},
	{"hint", "NN", " ", 2,
	 "Reveal the next hint from labs/NN-name/hints.md. Early hints point the\n"
	 "way; the last one is close to the answer.\n"},
	{"watch", "[NN] [--db URL] [--timeout S]", " db timeout solutions ", 1,
	 "Check NN (default: the first lab not done), then again each time a file\n"
	 "in exercises/NN-name/ is saved, even in the middle of a check. q or\n"
	 "Ctrl-C quits at once.\n"
	 "  --solutions     watch solutions/ instead\n"},
	{"run", "NN [--db URL] [--store URL] [--threads T] [--seconds S] [--timeout S] [--solutions] [--top]\n"
	 "       [-- DRIVER OPTIONS]",
	 " db store threads seconds timeout solutions top ", 2,
	 "Build the lab's driver (labs/NN-name/run.c) with your code and run it:\n"
	 "T threads call your operation for S seconds; it prints throughput and\n"
	 "latency percentiles next to what the engine predicts for the hold time\n"
	 "it measured.\n"
	 "  --db URL        the database (default: sqlite:.hotrow/labNN.db); on\n"
	 "                  PostgreSQL the driver works in a schema labNN of its own\n"
	 "  --store URL     Lab 04: where record_view counts, mem: (in-process, the\n"
	 "                  default) or a Redis, unix:PATH or redis://HOST:PORT\n"
	 "  --threads T     client threads, 1-256\n"
	 "  --seconds S     how long to drive it, above 0, at most 3600\n"
	 "  --timeout S     stop the driver after S seconds (default: no limit)\n"
	 "  --solutions     run the reference solution instead\n"
	 "  --top           watch the PostgreSQL's lock queues live while it runs\n"
	 "                  (hotrow top; needs --db postgresql://... or HOTROW_PG_URL;\n"
	 "                  the driver's output is printed when it ends)\n"
	 "  -- OPTIONS      passed to the lab's driver as they are, e.g.\n"
	 "                  `hotrow lab run 04 -- --flush-ms 50`; `-- --help` lists them\n"},
	{"grade", "[NN] [--out DIR] [--db URL] [--timeout S] [--solutions]", " out db timeout solutions ", 1,
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
	const char *db, *threads, *seconds, *out, *timeout, *store;
	int solutions, yes, top;
	int nextra;            /* run: what follows "--" goes to the driver */
	char **extra;
};

static void sub_help(const struct sub *s)
{
	printf("usage: hotrow lab %s %s\n\n%s", s->name, s->args, s->help);
	if (strstr(s->options, " db ") && !strstr(s->help, "--db"))
		fputs(usage_db, stdout);
	if (strstr(s->options, " timeout ") && !strstr(s->help, "--timeout"))
		fputs(usage_timeout, stdout);
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
	static const char *const valued[] = {"db", "threads", "seconds", "out", "timeout", "store"};
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
			const char **slot = k == 0 ? &a->db : k == 1 ? &a->threads : k == 2 ? &a->seconds :
					    k == 3 ? &a->out : k == 4 ? &a->timeout : &a->store;
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
	if (a->out && !a->out[0]) {
		fprintf(stderr, "hotrow lab %s: --out takes a directory, not ''\n", s->name);
		return 2;
	}
	if (a->timeout) {
		char *end;
		double v = strtod(a->timeout, &end);
		if (end == a->timeout || *end || !isfinite(v) || v <= 0 || v > 86400) {
			fprintf(stderr, "hotrow lab %s: --timeout takes seconds above 0, at most 86400, "
				"not '%s'\n", s->name, a->timeout);
			return 2;
		}
	}
	if (a->db && strcmp(s->name, "run") && !strncmp(a->db, "sqlite:", 7) && a->db[7]) {
		fprintf(stderr, "hotrow lab %s: --db %s: the SQLite checks make files of their own; "
			"`--db sqlite` runs only them (a file is for `hotrow lab run`)\n", s->name, a->db);
		return 2;
	}
	if (a->db && strcmp(a->db, "sqlite") && strncmp(a->db, "sqlite:", 7) &&
	    strncmp(a->db, "postgres://", 11) && strncmp(a->db, "postgresql://", 13) && !strchr(a->db, '=')) {
		char shown[512];
		fprintf(stderr, "hotrow lab %s: --db takes sqlite, sqlite:PATH (run), postgres://... "
			"or a conninfo, not '%s'\n", s->name, kit_url_redact(a->db, shown, sizeof shown));
		return 2;
	}
	return 0;
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
	struct runner_run_args limits = {.threads = a.threads, .seconds = a.seconds};
	if (!strcmp(s->name, "run") && runner_run_check(&limits) != 0) {   /* before any build */
		runner_tree_close(&t);
		return 2;
	}
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
	struct runner_opts o = {.solutions = a.solutions, .live = 1,
				.timeout_s = a.timeout ? strtod(a.timeout, NULL) : RUNNER_TIMEOUT_S};
	if (strcmp(s->name, "run"))
		runner_db_env(a.db, &o);
	if (!strcmp(s->name, "list"))
		rc = runner_list(&t);
	else if (!strcmp(s->name, "check"))
		rc = runner_check_cmd(&t, l, &o);
	else if (!strcmp(s->name, "hint"))
		rc = runner_hint_cmd(&t, l);
	else if (!strcmp(s->name, "watch")) {
		if (!l && !(l = runner_next_lab(&t)))
			l = t.nlabs ? &t.labs[0] : NULL;
		if (!l) {
			fprintf(stderr, "hotrow lab watch: no labs in %s/labs/\n", t.root);
			rc = 1;
		} else {
			rc = runner_watch(&t, l, &o);
		}
	} else if (!strcmp(s->name, "run")) {
		/* --top: the screen needs a terminal and a PostgreSQL to watch. */
		const char *top_url = a.db ? a.db : getenv("HOTROW_PG_URL");
		if (a.top && (!top_url || !*top_url || !strncmp(top_url, "sqlite:", 7))) {
			fprintf(stderr, "hotrow lab run: --top watches a PostgreSQL server: give --db "
			        "postgresql://... or export HOTROW_PG_URL=$(scripts/pg up)\n");
			runner_tree_close(&t);
			return 2;
		}
		if (a.top && !(isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))) {
			fprintf(stderr, "hotrow lab run: --top needs a terminal (or run `hotrow top --dump` "
			        "beside the run)\n");
			runner_tree_close(&t);
			return 2;
		}
		struct runner_run_args ra = {
			.db = a.db, .db_from = a.db ? "--db" : NULL, .threads = a.threads,
			.seconds = a.seconds, .store = a.store, .solutions = a.solutions,
			.timeout_s = a.timeout ? strtod(a.timeout, NULL) : 0, .nextra = a.nextra,
			.extra = a.extra,
		};
		if (a.top) {
			ra.db = top_url;
			ra.db_from = a.db ? "--db" : "HOTROW_PG_URL";
			ra.beside = cmd_top_beside;
		}
		rc = runner_run(&t, l, &ra);
	}
	else if (!strcmp(s->name, "grade"))
		rc = runner_grade(&t, l, a.out, &o);
	else
		rc = runner_reset(&t, l, a.yes);
	runner_tree_close(&t);
	return rc;
}
