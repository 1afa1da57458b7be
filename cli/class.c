/*
 * class.c: `hotrow class`, one PostgreSQL server for a whole room (the
 * work is in class/; this file parses the command line).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class/class.h"
#include "cli/cmd.h"
#include "util/file.h"
#include "util/opt.h"

static const char synopsis[] =
	"init   --db ADMIN_URL --roster FILE [--out FILE] [--host NAME]\n"
	"                           [--conn-limit N] [--statement-timeout-ms MS]\n"
	"       hotrow class status --db ADMIN_URL\n"
	"       hotrow class grade  --db ADMIN_URL --out DIR\n"
	"       hotrow class drop   --db ADMIN_URL [--roster FILE] [--yes]";

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
	"  status  one row per student, one column per lab: checks passing (recorded\n"
	"          by the student's `hotrow lab check` and `grade`), last activity\n"
	"  grade   everyone's results into DIR/results.json (Gradescope's format)\n"
	"  drop    remove the students' roles and schemas (those in --roster, or\n"
	"          all), and when none is left, everything init changed; nothing\n"
	"          else. Without --yes it only says what it would remove.\n"
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

int cmd_class(int argc, char **argv)
{
	struct class_opts o = CLASS_OPTS_DEFAULT;
	const char *roster = NULL, *out = NULL;
	bool yes = false;
	const struct opt rows[] = {
		{ .name = "db", .arg = "ADMIN_URL", .kind = OPT_STRING, .dest = &o.admin_url,
		  .accepts = "the server's URL, as its administrator",
		  .help = "the server, as its administrator (every command)" },
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
	/* the command's word first (unless --help is), then its options */
	int skip = argv[1][0] == '-' ? 0 : 1;
	int rc = opt_parse(&cmd, argc - skip, argv + skip, NULL);
	if (rc != OPT_OK)
		return rc == OPT_HELP ? 0 : 2;
	const char *sub = argv[1];
	if (strcmp(sub, "init") && strcmp(sub, "status") && strcmp(sub, "grade") && strcmp(sub, "drop"))
		return bad("unknown command (init, status, grade or drop):", sub);
	if (!o.admin_url)
		return bad("--db ADMIN_URL is required: the server, as its administrator", NULL);
	/* --out is a file for init, a directory for grade: checked before the work */
	char why[PATH_MAX + 64];
	if (out && ((!strcmp(sub, "init") && util_file_check_out(out, why, sizeof why) != 0) ||
	            (!strcmp(sub, "grade") && util_file_check_dir(out, why, sizeof why) != 0))) {
		fprintf(stderr, "hotrow class: --out %s: %s\n", out, why);
		return 2;
	}
	if (!strcmp(sub, "init")) {
		if (!roster)
			return bad("init needs --roster FILE: one student name a line", NULL);
		return class_init(&o, roster, out);
	}
	if (!strcmp(sub, "status"))
		return class_status(&o);
	if (!strcmp(sub, "grade")) {
		if (!out)
			return bad("grade needs --out DIR", NULL);
		return class_grade(&o, out);
	}
	return class_drop(&o, roster, yes);
}
