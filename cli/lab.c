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
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "kit/url.h"
#include "util/opt.h"
#include "runner/audit.h"
#include "runner/check.h"
#include "runner/cmds.h"
#include "runner/run.h"
#include "runner/show.h"
#include "runner/grade.h"
#include "runner/hint.h"
#include "runner/parts.h"
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
	"  hotrow lab check NN --part P only the checks of part P (a slot's worth)\n"
	"  hotrow lab parts NN          the lab's parts, their functions and minutes\n"
	"  hotrow lab hint NN           reveal the next hint (--part P: of part P)\n"
	"  hotrow lab watch [NN]        check again whenever you save (q quits)\n"
	"  hotrow lab run NN            drive your code under load: throughput and\n"
	"                               latency next to the engine's prediction\n"
	"  hotrow lab grade             every lab: a score table, JUnit XML, results.json\n"
	"  hotrow lab audit NN          what your code defines and calls: will the checks run it?\n"
	"  hotrow lab reset NN          put the skeleton back (your work is backed up)\n"
	"\n"
	"NN is 01, 1 or 01-hot-row. `hotrow lab CMD --help` lists a command's\n"
	"options. Progress and backups live in .hotrow/ in the kit.\n"
	"Exit: 0 every check passed, 1 a check or the build failed, 2 bad usage,\n"
	"130 stopped by Ctrl-C.\n";

struct args {
	const char *lab;
	const char *db, *threads, *seconds, *out, *store, *part;
	double timeout;        /* 0: not given */
	bool solutions, yes, top, no_races;
	int nextra;            /* run: what follows "--" goes to the driver */
	char **extra;
};

#define A(field) .off = offsetof(struct args, field)

/* Every option of every command, once; a command lists the ones it takes.
 * The destinations are fields of struct args (the table's base). */
static const struct opt opt_db = {
	"db", 0, "URL", OPT_STRING, A(db),
	.accepts = "sqlite, a postgres:// URL, a conninfo or a mysql:// URL",
	.help = "one database only: `sqlite` (the SQLite checks, each in\n"
	        "a file of its own), or a postgres:// URL or libpq\n"
	        "conninfo (the PostgreSQL checks, on that server; one\n"
	        "that cannot be used fails them), or a mysql:// URL (the\n"
	        "MariaDB checks, likewise). Without it the SQLite\n"
	        "checks run, the PostgreSQL ones when HOTROW_PG_URL is\n"
	        "set (`make pg-up` starts a server and prints it), and\n"
	        "the optional MariaDB ones when HOTROW_MYSQL_URL is set" };
static const struct opt opt_run_db = {
	"db", 0, "URL", OPT_STRING, A(db), .accepts = "sqlite:PATH, a postgres:// URL or a conninfo",
	.help = "the database (default: sqlite:.hotrow/labNN.db); on\n"
	        "PostgreSQL the driver works in a schema labNN of its own" };
static const struct opt opt_store = {
	"store", 0, "URL", OPT_STRING, A(store), .accepts = "mem:, unix:PATH or redis://HOST:PORT",
	.help = "Lab 04: where record_view counts, mem: (in-process, the\n"
	        "default) or a Redis, unix:PATH or redis://HOST:PORT" };
/* --threads and --seconds go to the driver as given; runner_run_check
 * holds them to the drivers' own limits before anything is built. */
static const struct opt opt_threads = {
	"threads", 0, "T", OPT_STRING, A(threads), .accepts = "a whole number from 1 to 256",
	.help = "client threads, 1-256" };
static const struct opt opt_seconds = {
	"seconds", 0, "S", OPT_STRING, A(seconds), .accepts = "a number of seconds above 0, at most 3600",
	.help = "how long to drive it, above 0, at most 3600" };
static const struct opt opt_timeout = {
	"timeout", 0, "S", OPT_DOUBLE, A(timeout), .min = 0, .max = 86400, .above_min = true,
	.accepts = "seconds above 0, at most 86400",
	.help = "stop a test program after S seconds (default 120; the\n"
	        "build gets 4 times as long); its process group is killed" };
static const struct opt opt_run_timeout = {
	"timeout", 0, "S", OPT_DOUBLE, A(timeout), .min = 0, .max = 86400, .above_min = true,
	.accepts = "seconds above 0, at most 86400",
	.help = "stop the driver after S seconds (default: no limit)" };
static const struct opt opt_out = {
	"out", 0, "DIR", OPT_DIR_OUT, A(out),
	.help = "where to write them (default: .hotrow/grade)" };
static const struct opt opt_solutions = {
	"solutions", 0, NULL, OPT_FLAG, A(solutions),
	.help = "use solutions/ instead of exercises/ (instructors;\n"
	        "a check is not recorded, a grade should be full marks)" };
static const struct opt opt_no_races = {
	"no-races", 0, NULL, OPT_FLAG, A(no_races),
	.help = "skip the race pass: once every check passes, the checks\n"
	        "that start threads run again under ThreadSanitizer\n"
	        "(several times slower), which fails one where two threads\n"
	        "use the same memory with no lock or atomic between them" };
static const struct opt opt_top = {
	"top", 0, NULL, OPT_FLAG, A(top),
	.help = "watch the PostgreSQL's lock queues live while it runs\n"
	        "(hotrow top; needs --db postgresql://... or HOTROW_PG_URL;\n"
	        "the driver's output is printed when it ends)" };
static const struct opt opt_part = {
	"part", 0, "NAME", OPT_STRING, A(part), .accepts = "a part named in labs/NN-name/parts",
	.help = "only that part (labs/NN-name/parts; `--part` alone or\n"
	        "`hotrow lab parts NN` lists them): its checks, or its hints;\n"
	        "a part passing does not mark the lab done" };
static const struct opt opt_yes = {
	"yes", 'y', NULL, OPT_FLAG, A(yes), .help = "do not ask" };

#define MAX_SUB_OPTS 8

static const struct sub {
	const char *name;
	const char *args;      /* for the usage line */
	const struct opt *opts[MAX_SUB_OPTS];   /* the options it takes, NULL-ended */
	int lab;               /* 0: no NN; 1: NN optional; 2: NN required */
	const char *help;
} subs[] = {
	{"list", "", { NULL }, 0,
	 "Every lab with its status (not started, N of M checks passing, done)\n"
	 "and the next thing to do. Same as `hotrow lab`.\n"},
	{"check", "NN [--part NAME] [--db URL] [--timeout S] [--solutions] [--no-races]",
	 { &opt_part, &opt_db, &opt_timeout, &opt_solutions, &opt_no_races, NULL }, 2,
	 "Build exercises/NN-name/ with the lab's tests (make, as CI does), run\n"
	 "them, and show each check: passed, or failed with expected vs got and\n"
	 "the hint for the first failure. A compile error shows the compiler's\n"
	 "message. Once every check passes, the ones that start threads run\n"
	 "again under ThreadSanitizer (the race pass). Records your progress in\n"
	 ".hotrow/progress. With --part, only that part's checks run, its\n"
	 "handout section is named, and nothing is recorded.\n"},
	{"parts", "NN", { NULL }, 2,
	 "The parts of a lab a room codes one slot at a time: each part's\n"
	 "functions, its minutes (measured from the solution's size) and its\n"
	 "handout section. A lab without labs/NN-name/parts is one part.\n"},
	{"hint", "NN [--part NAME]", { &opt_part, NULL }, 2,
	 "Reveal the next hint from labs/NN-name/hints.md. Early hints point the\n"
	 "way; the last one is close to the answer. With --part, the next of that\n"
	 "part's hints (the ones for the functions a slot's part asks for).\n"},
	{"watch", "[NN] [--part NAME] [--db URL] [--timeout S] [--no-races]",
	 { &opt_part, &opt_db, &opt_timeout, &opt_solutions, &opt_no_races, NULL }, 1,
	 "Check NN (default: the first lab not done), then again each time a file\n"
	 "in exercises/NN-name/ is saved, even in the middle of a check. q or\n"
	 "Ctrl-C quits at once.\n"},
	{"run", "NN [--db URL] [--store URL] [--threads T] [--seconds S] [--timeout S] [--solutions] [--top]\n"
	 "       [-- DRIVER OPTIONS]",
	 { &opt_run_db, &opt_store, &opt_threads, &opt_seconds, &opt_run_timeout, &opt_solutions,
	   &opt_top, NULL }, 2,
	 "Build the lab's driver (labs/NN-name/run.c) with your code and run it:\n"
	 "T threads call your operation for S seconds; it prints throughput and\n"
	 "latency percentiles next to what the engine predicts for the hold time\n"
	 "it measured. What follows -- goes to the lab's driver as it is, e.g.\n"
	 "`hotrow lab run 04 -- --flush-ms 50`; `-- --help` lists its options.\n"},
	{"grade", "[NN] [--out DIR] [--db URL] [--timeout S] [--solutions] [--no-races]",
	 { &opt_out, &opt_db, &opt_timeout, &opt_solutions, &opt_no_races, NULL }, 1,
	 "Check every lab (or only NN) and print a score table (one point per\n"
	 "check), then write DIR/junit.xml and DIR/results.json (Gradescope's\n"
	 "format).\n"},
	{"audit", "NN [--solutions] [-- FILE.c ...]", { &opt_solutions, NULL }, 2,
	 "Say whether the checks will run your code: build exercises/NN-name/'s\n"
	 "objects and read what they define and call (a check and a grade do the\n"
	 "same first). Only the lab's functions may be defined; only the lab's,\n"
	 "the kit's and plain libc ones called; no constructors, no assembly, no\n"
	 "writes to descriptors, no processes. After --, FILE.c ... are read with\n"
	 "their objects FILE.o beside them, built already (instructors: a mutant).\n"},
	{"reset", "NN [--yes]", { &opt_yes, NULL }, 2,
	 "Put exercises/NN-name/ back to the skeleton. Your files are copied to\n"
	 ".hotrow/backup/NN-name-TIME/ first, so nothing is lost. Asks before\n"
	 "overwriting unless --yes.\n"},
};
#define NSUBS (sizeof subs / sizeof subs[0])

/* The lab's NN, the one word a command takes. */
struct words {
	const struct sub *s;
	struct args *a;
};

static int lab_word(const char *w, void *ctx, char *err, size_t len)
{
	struct words *ws = ctx;
	if (ws->s->lab == 0 || ws->a->lab) {
		snprintf(err, len, "unexpected argument '%s' (usage: hotrow lab %s %s)", w,
		         ws->s->name, ws->s->args);
		return -1;
	}
	ws->a->lab = w;
	return 0;
}

/* Fill a from argv[1..]; returns 0, 2 after printing a usage error, or 3
 * after printing --help. */
static int parse(const struct sub *s, int argc, char **argv, struct args *a)
{
	struct opt rows[MAX_SUB_OPTS];
	size_t n = 0;
	char name[32], header[1024];
	struct words ws = { s, a };
	int rest;

	memset(a, 0, sizeof *a);
	while (s->opts[n]) {
		rows[n] = *s->opts[n];
		n++;
	}
	snprintf(name, sizeof name, "hotrow lab %s", s->name);
	snprintf(header, sizeof header, "\n%s%s", s->help, n ? "\n" : "");
	const struct opt_table table = { .rows = rows, .n = n, .base = a };
	const struct opt_cmd cmd = { .name = name, .usage = s->args, .header = header,
	                             .footer = "\nNN is 01, 1 or 01-hot-row.\n", .tables = &table,
	                             .ntables = 1, .positional = lab_word, .ctx = &ws };
	int rc = opt_parse(&cmd, argc, argv, &rest);
	if (rc != OPT_OK)
		return rc == OPT_HELP ? 3 : 2;
	if (rest < argc && strcmp(s->name, "run") && strcmp(s->name, "audit")) {
		fprintf(stderr, "%s: unexpected argument '%s' (usage: hotrow lab %s %s)\n", name,
		        argv[rest], s->name, s->args);
		return 2;
	}
	a->extra = argv + rest;
	a->nextra = argc - rest;
	if (s->lab == 2 && !a->lab) {
		fprintf(stderr, "hotrow lab %s: which lab? (usage: hotrow lab %s %s)\n",
			s->name, s->name, s->args);
		return 2;
	}
	if (a->db && strcmp(s->name, "run") && !strncmp(a->db, "sqlite:", 7) && a->db[7]) {
		fprintf(stderr, "hotrow lab %s: --db %s: the SQLite checks make files of their own; "
			"`--db sqlite` runs only them (a file is for `hotrow lab run`)\n", s->name, a->db);
		return 2;
	}
	char shown[512];
	if (a->db && runner_is_mysql_url(a->db) && !strcmp(s->name, "run")) {
		fprintf(stderr, "hotrow lab run: --db %s: the drivers run on SQLite or PostgreSQL; "
			"MariaDB is for `hotrow lab check NN --db URL`\n", kit_url_redact(a->db, shown, sizeof shown));
		return 2;
	}
	if (a->db && strcmp(a->db, "sqlite") && strncmp(a->db, "sqlite:", 7) && !runner_is_mysql_url(a->db) &&
	    strncmp(a->db, "postgres://", 11) && strncmp(a->db, "postgresql://", 13) && !strchr(a->db, '=')) {
		fprintf(stderr, "hotrow lab %s: --db takes sqlite, sqlite:PATH (run), postgres://..., "
			"a conninfo or mysql://... (not run), not '%s'\n", s->name,
			kit_url_redact(a->db, shown, sizeof shown));
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
	fprintf(stderr, "hotrow lab %s: --solutions: this kit ships without solutions (no %s); "
		"drop --solutions to use your own exercises/\n", cmd, p + strlen(t->root) + 1);
	return 1;
}

/* `hotrow lab audit`: 0 allowed, 1 refused or not built. */
static int audit(const struct runner_tree *t, const struct runner_lab *l, const struct runner_opts *o,
                 const struct args *a)
{
	char why[600];
	int rc = 0;
	for (int i = 0; i < a->nextra && rc == 0; i++) {
		char obj[PATH_MAX];
		size_t k = strlen(a->extra[i]);
		if (k < 3 || strcmp(a->extra[i] + k - 2, ".c") || k >= sizeof obj) {
			fprintf(stderr, "hotrow lab audit: %s is not a .c file\n", a->extra[i]);
			return 2;
		}
		snprintf(obj, sizeof obj, "%.*s.o", (int)k - 2, a->extra[i]);
		rc = runner_audit_file(t, l, a->extra[i], obj, why, sizeof why);
	}
	if (a->nextra == 0) {
		char *log = NULL;
		if (runner_build_objects(t, l, o, 4 * o->timeout_s, &log) != 0) {
			printf("%s/%s/ does not build; make says:\n\n", o->solutions ? "solutions" : "exercises",
			       l->name);
			runner_build_log_print(stdout, log);
			free(log);
			return 1;
		}
		free(log);
		rc = runner_audit(t, l, o->solutions ? "solutions" : "exercises", why, sizeof why);
	}
	if (rc != 0) {
		printf("Refused: %s\n", why);
		return 1;
	}
	printf("Allowed: the checks will run it.\n");
	return 0;
}

/* Load l's parts; with want, check that it names one. 0 when it does,
 * 3 after listing them (want NULL), 2 after saying which exist, 1 when the
 * file is malformed. */
static int part_of(const struct runner_lab *l, const struct runner_tree *t, struct runner_parts *ps,
                   const char *want, const char *cmd)
{
	char names[512];
	int n = runner_parts_load(t, l, ps);
	if (n < 0) {
		fprintf(stderr, "hotrow lab %s: %s\n", cmd, ps->error);
		return 1;
	}
	if (!want) {
		runner_parts_print(stdout, l, ps);
		return 3;
	}
	if (runner_part_find(ps, want))
		return 0;
	runner_parts_names(ps, names, sizeof names);
	if (n == 0)
		fprintf(stderr, "hotrow lab %s: Lab %s has no parts (no labs/%s/parts): drop --part\n", cmd,
		        l->num, l->name);
	else
		fprintf(stderr, "hotrow lab %s: Lab %s has no part '%s'; its parts: %s "
		        "(`hotrow lab parts %s` says what each holds)\n", cmd, l->num, want, names, l->num);
	return 2;
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
			fprintf(stderr, "hotrow lab: unknown command '%s' (try: list, check, parts, hint, "
				"watch, run, grade, audit, reset; hotrow lab --help)\n", argv[1]);
			return 2;
		}
		shift = 1;
	}
	/* `--part` last, without a name: list the parts instead. */
	int list_parts = !strcmp(s->name, "parts");
	if ((!strcmp(s->name, "check") || !strcmp(s->name, "watch") || !strcmp(s->name, "hint")) &&
	    argc - shift >= 2 &&
	    !strcmp(argv[argc - 1], "--part")) {
		list_parts = 1;
		argc--;
	}
	struct args a;
	int rc = parse(s, argc - shift, argv + shift, &a);
	if (rc)
		return rc == 3 ? 0 : rc;

	struct runner_tree t;
	if (runner_tree_open(&t) != 0)
		return 1;
	runner_reset_snapshot(&t);
	struct runner_run_args limits = {.threads = a.threads, .seconds = a.seconds, .store = a.store};
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
	struct runner_parts parts = {0};
	if (!l && (list_parts || a.part)) {
		fprintf(stderr, "hotrow lab %s: --part needs the lab: hotrow lab %s NN --part NAME\n", s->name,
		        s->name);
		runner_tree_close(&t);
		return 2;
	}
	if (l && (list_parts || a.part)) {
		rc = part_of(l, &t, &parts, list_parts ? NULL : a.part, s->name);
		if (rc != 0 || list_parts) {
			runner_parts_free(&parts);
			runner_tree_close(&t);
			return rc == 3 ? 0 : rc;
		}
	}
	struct runner_opts o = {.solutions = a.solutions, .live = 1, .no_races = a.no_races,
				.timeout_s = a.timeout > 0 ? a.timeout : RUNNER_TIMEOUT_S,
				.part = a.part ? runner_part_find(&parts, a.part) : NULL};
	if (strcmp(s->name, "run"))
		runner_db_env(a.db, &o);
	if (!strcmp(s->name, "list"))
		rc = runner_list(&t);
	else if (!strcmp(s->name, "check"))
		rc = runner_check_cmd(&t, l, &o);
	else if (!strcmp(s->name, "hint"))
		rc = runner_hint_cmd(&t, l, a.part);
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
			.timeout_s = a.timeout, .nextra = a.nextra,
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
	else if (!strcmp(s->name, "audit"))
		rc = audit(&t, l, &o, &a);
	else
		rc = runner_reset(&t, l, a.yes);
	runner_parts_free(&parts);
	runner_tree_close(&t);
	return rc;
}
