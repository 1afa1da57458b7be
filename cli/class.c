/*
 * class.c: `hotrow class`, one PostgreSQL server for a whole room (the
 * work is in class/; this file parses the command line and tells class/
 * what it needs of the kit: its labs with their checks, its tree and the
 * binary that grades).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "class/class.h"
#include "cli/cmd.h"
#include "runner/check.h"
#include "runner/tree.h"
#include "util/file.h"
#include "util/opt.h"

static const char synopsis[] =
	"init   --db ADMIN_URL --roster FILE [--out FILE] [--host NAME]\n"
	"                           [--conn-limit N] [--statement-timeout-ms MS]\n"
	"       hotrow class status --db ADMIN_URL [--watch | --frames N] [--interval S]\n"
	"                           [--stuck-min M]\n"
	"       hotrow class grade  --db ADMIN_URL --out DIR [--rebuild]\n"
	"       hotrow class drop   --db ADMIN_URL [--roster FILE] [--yes]\n"
	"       hotrow class submit LAB   (a student: sends exercises/LAB, as $HOTROW_PG_URL)";

static const char header[] =
	"\n"
	"Class mode: one PostgreSQL server for the room, a private place on it for\n"
	"each student. ADMIN_URL names the server as its administrator.\n"
	"\n"
	"  init    per student in the roster (one name a line): a login role hr_NAME\n"
	"          with a generated password, a connection limit and a statement\n"
	"          timeout, and a schema hr_NAME only that role can use. Prints one\n"
	"          line per student, `NAME URL`: the URL is their HOTROW_PG_URL\n"
	"          (on a terminal, or with --out, the password shows as ***).\n"
	"          Running it again adds new names and changes nothing else.\n"
	"  status  one row per student, one column per lab: the checks passing that\n"
	"          the student's own `hotrow lab check` reported (self-reported),\n"
	"          the graded score once there is one, last activity; --watch\n"
	"          redraws it live and highlights who looks stuck\n"
	"  grade   everyone's scores into DIR/results.json (Gradescope's format);\n"
	"          with --rebuild, first build and check every submission afresh\n"
	"          (the only way a score is made)\n"
	"  drop    remove the students' roles and schemas (those in --roster, or\n"
	"          all), and when none is left, everything init changed; nothing\n"
	"          else. Without --yes it only says what it would remove.\n"
	"  submit  (students) send your exercise files of LAB to the class server\n"
	"\n"
	"options:\n";

static const char footer[] =
	"\n"
	"Exit: 0 done, 1 the work failed, 2 bad usage.\n";

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "hotrow class: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
	return 2;
}

/* The kit's labs with their checks (counted in each lab's checks.i, built
 * if needed), into labs[] (names owned by t). Returns how many, or -1
 * (said). */
static int kit_labs(const struct runner_tree *t, struct class_lab *labs, int max)
{
	/* make is started once per six labs (runner_build takes six targets):
	 * reading the kit's makefiles is most of its time */
	for (size_t i = 0; i < t->nlabs; i += 6) {
		char targets[6 * 96] = "", *log = NULL;
		for (size_t k = i; k < t->nlabs && k < i + 6; k++)
			snprintf(targets + strlen(targets), sizeof targets - strlen(targets),
			         "%sbuild/labs/%.64s/checks.i", k > i ? " " : "", t->labs[k].name);
		runner_build(t, targets, 300, NULL, &log);
		free(log);
	}
	int n = 0;
	for (size_t i = 0; i < t->nlabs && n < max; i++) {
		char target[200], path[PATH_MAX];
		snprintf(target, sizeof target, "build/labs/%s/checks.i", t->labs[i].name);
		FILE *f = runner_path(t, path, sizeof path, "%s", target) == 0 ? fopen(path, "r") : NULL;
		char *src = NULL;
		size_t len = 0;
		if (f) {
			FILE *m = open_memstream(&src, &len);
			char chunk[8192];
			size_t k;
			while (m && (k = fread(chunk, 1, sizeof chunk, f)) > 0)
				fwrite(chunk, 1, k, m);
			if (m)
				fclose(m);
			fclose(f);
		}
		char **names = NULL;
		int count = src ? runner_checks_parse(src, &names, NULL) : -1;
		free(src);
		for (int k = 0; k < count; k++)
			free(names[k]);
		free(names);
		if (count <= 0) {
			fprintf(stderr, "hotrow class: cannot count the checks of %s (make %s failed)\n",
			        t->labs[i].name, target);
			return -1;
		}
		labs[n++] = (struct class_lab){ t->labs[i].name, count };
	}
	return n;
}

/* A student's `class submit LAB`: exercises/LAB of the kit they work in. */
static int submit(const char *spec)
{
	if (!spec)
		return bad("submit needs the lab: hotrow class submit NN", NULL);
	const char *url = getenv("HOTROW_PG_URL");
	if (!url || !*url)
		return bad("submit sends to $HOTROW_PG_URL, which is not set (your instructor gave you "
		           "the URL)", NULL);
	struct runner_tree t;
	if (runner_tree_open(&t) != 0)
		return 1;
	const struct runner_lab *l = runner_tree_find(&t, spec);
	char dir[PATH_MAX];
	int rc;
	if (!l) {
		runner_tree_unknown(&t, "class submit", spec);
		rc = 2;
	} else if (runner_path(&t, dir, sizeof dir, "exercises/%s", l->name) != 0) {
		rc = bad("the kit's path is too long:", t.root);
	} else {
		rc = class_submit(url, l->name, dir);
	}
	runner_tree_close(&t);
	return rc;
}

int cmd_class(int argc, char **argv)
{
	struct class_opts o = CLASS_OPTS_DEFAULT;
	const char *roster = NULL, *out = NULL;
	bool yes = false, rebuild = false, watch = false;
	int frames = 0;
	const struct opt rows[] = {
		{ .name = "db", .arg = "ADMIN_URL", .kind = OPT_STRING, .dest = &o.admin_url,
		  .accepts = "the server's URL, as its administrator",
		  .help = "the server, as its administrator (every command\nbut submit)" },
		{ .name = "roster", .arg = "FILE", .kind = OPT_FILE_IN, .dest = &roster,
		  .max = 1 << 20, .help = "the students, one name a line (at most 1 MB)" },
		{ .name = "out", .arg = "FILE", .kind = OPT_STRING, .dest = &out,
		  .accepts = "a file or directory name",
		  .help = "init: the same lines into FILE, readable by you only;\n"
		          "grade: the directory DIR" },
		{ .name = "host", .arg = "NAME", .kind = OPT_STRING, .dest = &o.host,
		  .accepts = "a host name",
		  .help = "init: the server's name as students reach it\n"
		          "(default: the host in ADMIN_URL)" },
		{ .name = "conn-limit", .arg = "N", .kind = OPT_INT, .dest = &o.conn_limit,
		  .min = 1, .max = 100000000, .accepts = "a whole number of connections, 1 or more",
		  .help = "init: connections per student (default 20)" },
		{ .name = "statement-timeout-ms", .arg = "MS", .kind = OPT_INT,
		  .dest = &o.statement_timeout_ms, .min = 1, .max = 100000000,
		  .accepts = "milliseconds, 1 or more",
		  .help = "init: cancel a student's statement after MS\n(default 60000)" },
		{ .name = "watch", .kind = OPT_FLAG, .dest = &watch,
		  .help = "status: a live table until q" },
		{ .name = "frames", .arg = "N", .kind = OPT_INT, .dest = &frames, .min = 1, .max = 100000,
		  .accepts = "a whole number of tables, 1 or more",
		  .help = "status: print N tables, --interval apart, as text" },
		{ .name = "interval", .arg = "S", .kind = OPT_INT, .dest = &o.interval_s, .min = 1,
		  .max = 3600, .accepts = "seconds from 1 to 3600",
		  .help = "status: seconds between tables (default 5)" },
		{ .name = "stuck-min", .arg = "M", .kind = OPT_INT, .dest = &o.stuck_min, .min = 1,
		  .max = 1440, .accepts = "minutes from 1 to 1440",
		  .help = "status: no new check passing for M minutes is\nstuck (default 10)" },
		{ .name = "rebuild", .kind = OPT_FLAG, .dest = &rebuild,
		  .help = "grade: build and check every submission first" },
		{ .name = "yes", .kind = OPT_FLAG, .dest = &yes,
		  .help = "drop: remove, not only say what it would remove" },
	};
	const struct opt_table table = { .rows = rows, .n = sizeof rows / sizeof rows[0] };
	const struct opt_cmd cmd = { .name = "hotrow class", .usage = synopsis, .header = header,
	                             .footer = footer, .tables = &table, .ntables = 1 };

	if (argc < 2) {
		opt_usage(&cmd, stderr);
		return 2;
	}
	/* the command's word first (unless --help is), submit's lab, then the options */
	const char *sub = argv[1], *lab = NULL;
	int skip = sub[0] == '-' ? 0 : 1;
	if (!strcmp(sub, "submit") && argc > 2 && argv[2][0] != '-')
		lab = argv[2], skip = 2;
	int rc = opt_parse(&cmd, argc - skip, argv + skip, NULL);
	if (rc != OPT_OK)
		return rc == OPT_HELP ? 0 : 2;
	if (strcmp(sub, "init") && strcmp(sub, "status") && strcmp(sub, "grade") &&
	    strcmp(sub, "drop") && strcmp(sub, "submit"))
		return bad("unknown command (init, status, grade, drop or submit):", sub);
	if (!strcmp(sub, "submit"))
		return submit(lab);
	if (!o.admin_url)
		return bad("--db ADMIN_URL is required: the server, as its administrator", NULL);
	/* --out is a file for init, a directory for grade: checked before the work */
	char why[PATH_MAX + 64];
	if (out && ((!strcmp(sub, "init") && util_file_check_out(out, why, sizeof why) != 0) ||
	            (!strcmp(sub, "grade") && util_file_check_dir(out, why, sizeof why) != 0))) {
		fprintf(stderr, "hotrow class: --out %s: %s\n", out, why);
		return 2;
	}
	if (!strcmp(sub, "status")) {
		if (watch && frames)
			return bad("status takes --watch or --frames N, not both", NULL);
		return watch ? class_watch(&o, 0) : class_watch(&o, frames ? frames : 1);
	}
	if (!strcmp(sub, "drop"))
		return class_drop(&o, roster, yes);
	if (!strcmp(sub, "grade") && !out)
		return bad("grade needs --out DIR", NULL);
	if (!strcmp(sub, "init") && !roster)
		return bad("init needs --roster FILE: one student name a line", NULL);

	/* init records the kit's labs; grade --rebuild grades in copies of it */
	struct runner_tree t;
	struct class_lab labs[64];
	char self[PATH_MAX];
	if (runner_tree_open(&t) != 0)
		return 1;
	if (!strcmp(sub, "init")) {
		o.nlabs = kit_labs(&t, labs, 64);
		o.labs = labs;
		rc = o.nlabs < 0 ? 1 : class_init(&o, roster, out);
	} else {
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		self[n > 0 ? n : 0] = '\0';
		o.self = self;
		o.kit_root = t.root;
		rc = rebuild ? class_rebuild(&o) : 0;
		int g = class_grade(&o, out);
		rc = rc ? rc : g;
	}
	runner_tree_close(&t);
	return rc;
}
