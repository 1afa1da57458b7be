/*
 * class.c: `hotrow class`, one PostgreSQL server for a whole room (the
 * work is in class/; this file parses the command line).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class/class.h"
#include "cli/cmd.h"

static const char usage[] =
	"usage: hotrow class init   --db ADMIN_URL --roster FILE [--out FILE] [--host NAME]\n"
	"                           [--conn-limit N] [--statement-timeout-ms MS]\n"
	"       hotrow class status --db ADMIN_URL\n"
	"       hotrow class grade  --db ADMIN_URL --out DIR\n"
	"       hotrow class drop   --db ADMIN_URL [--roster FILE] [--yes]\n"
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
	"    --out FILE                the same lines into FILE, readable by you only\n"
	"    --host NAME               the server's name as students reach it\n"
	"                              (default: the host in ADMIN_URL)\n"
	"    --conn-limit N            connections per student (default 20)\n"
	"    --statement-timeout-ms MS cancel a student's statement after MS\n"
	"                              (default 60000)\n"
	"  status  one row per student, one column per lab: checks passing (recorded\n"
	"          by the student's `hotrow lab check` and `grade`), last activity\n"
	"  grade   everyone's results into DIR/results.json (Gradescope's format)\n"
	"  drop    remove the students' roles and schemas (those in --roster, or\n"
	"          all), and when none is left, everything init changed; nothing\n"
	"          else. Without --yes it only says what it would remove.\n"
	"\n"
	"Exit: 0 done, 1 the work failed, 2 bad usage.\n";

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "hotrow class: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
	return 2;
}

static int number(const char *s, int lo, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < lo || v > 100000000)
		return -1;
	*out = (int)v;
	return 0;
}

int cmd_class(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "init") && strcmp(sub, "status") && strcmp(sub, "grade") && strcmp(sub, "drop"))
		return bad("unknown command (init, status, grade or drop):", sub);
	struct class_opts o = CLASS_OPTS_DEFAULT;
	const char *roster = NULL, *out = NULL;
	int yes = 0;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--yes")) {
			yes = 1;
			continue;
		}
		if (!v)
			return bad("this option needs a value:", a);
		if (!strcmp(a, "--db"))
			o.admin_url = v;
		else if (!strcmp(a, "--roster"))
			roster = v;
		else if (!strcmp(a, "--out"))
			out = v;
		else if (!strcmp(a, "--host"))
			o.host = v;
		else if (!strcmp(a, "--conn-limit")) {
			if (number(v, 1, &o.conn_limit) != 0)
				return bad("--conn-limit takes a whole number of connections, 1 or more, not", v);
		} else if (!strcmp(a, "--statement-timeout-ms")) {
			if (number(v, 1, &o.statement_timeout_ms) != 0)
				return bad("--statement-timeout-ms takes milliseconds, 1 or more, not", v);
		} else
			return bad("unknown option (see hotrow class --help):", a);
		i++;
	}
	if (!o.admin_url)
		return bad("--db ADMIN_URL is required: the server, as its administrator", NULL);
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
