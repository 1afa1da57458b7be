/*
 * run.c: building and running a lab's driver. See run.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kit/db.h"
#include "kit/load.h"
#include "kit/url.h"
#include "runner/check.h"
#include "runner/files.h"
#include "runner/run.h"

/* v against one of the limits every run shares with the drivers. */
static int check_limit(int which, const char *v)
{
	const struct kit_load_limit *l = &kit_load_limits[which];
	char *end;
	errno = 0;
	/* a whole number is read as the driver reads it: digits, no point */
	double d = l->integer ? (double)strtol(v, &end, 10) : strtod(v, &end);
	if (errno || end == v || *end || !kit_load_limit_ok(l, d)) {
		fprintf(stderr, "hotrow lab run: %s accepts %s, not '%s'\n", l->name, l->accepts, v);
		return -1;
	}
	return 0;
}

int runner_run_check(const struct runner_run_args *a)
{
	if ((a->threads && check_limit(KIT_LOAD_LIMIT_THREADS, a->threads)) ||
	    (a->seconds && check_limit(KIT_LOAD_LIMIT_SECONDS, a->seconds)))
		return 2;
	const char *st = a->store;
	if (st && strcmp(st, "mem:") && !(strncmp(st, "unix:", 5) == 0 && st[5]) &&
	    !(strncmp(st, "redis://", 8) == 0 && st[8])) {
		char shown[512];
		fprintf(stderr, "hotrow lab run: --store accepts mem:, unix:PATH or redis://HOST:PORT, "
			"not '%s'\n", kit_url_redact(st, shown, sizeof shown));
		return 2;
	}
	return 0;
}

/* url with search_path set to schema, as the test harness does. */
static void with_schema(char *out, size_t len, const char *base, const char *schema)
{
	if (strstr(base, "://"))
		snprintf(out, len, "%s%soptions=-csearch_path%%3D%s", base, strchr(base, '?') ? "&" : "?", schema);
	else
		snprintf(out, len, "%s options='-csearch_path=%s'", base, schema);
}

/* Make schema labNN on the server of url; *why gets the reason on failure. */
static int make_schema(const char *url, const char *schema, char *why, size_t n)
{
	struct kit_db *db;
	char sql[128];
	snprintf(sql, sizeof sql, "CREATE SCHEMA IF NOT EXISTS %s", schema);
	int rc = kit_db_open(&db, url);
	if (rc == 0)
		rc = kit_db_exec(db, sql, 0, NULL);
	if (rc != 0)
		snprintf(why, n, "%s", kit_db_errmsg(db));
	kit_db_close(db);
	return rc;
}

int runner_run(const struct runner_tree *t, const struct runner_lab *l, const struct runner_run_args *a)
{
	char path[PATH_MAX], target[PATH_MAX];
	if (runner_path(t, path, sizeof path, "labs/%s/run.c", l->name) != 0 || access(path, R_OK) != 0) {
		/* Such a lab measures inside its checks, which say their
		 * predictions beside their results. */
		fprintf(stderr, "hotrow lab run: Lab %s has no load driver: its measurements run in its "
			"checks; `%s lab check %s` prints each prediction beside its result\n", l->num,
			runner_self(), l->num);
		return 2;   /* nothing to run: a request this lab cannot take, as --store below */
	}
	if (a->store && strcmp(l->num, "04")) {
		fprintf(stderr, "hotrow lab run: --store is Lab 04's (the store record_view counts in); "
			"lab %s has none\n", l->num);
		return 2;
	}
	snprintf(target, sizeof target, "build/labs/%s/run-%s", l->name, a->solutions ? "solution" : "exercise");
	printf("building %s ...\n", target);
	fflush(stdout);
	char *log = NULL;
	const char *side = a->solutions ? "solutions" : "exercises";
	runner_files_fresh(t, l, side);   /* built from the files as they are */
	int b = runner_build(t, target, a->timeout_s > 0 ? 4 * a->timeout_s : 0, NULL, &log);
	if (b == 0)
		runner_files_built(t, l, side);
	if (b == -2) {
		free(log);
		return 130;
	}
	if (b != 0) {
		printf("\n%s/%s/ does not %s; make says:\n\n", a->solutions ? "solutions" : "exercises",
		       l->name, b == -3 ? "finish building in time" : "compile yet");
		runner_build_log_print(stdout, log);
		free(log);
		return 1;
	}
	runner_build_log_print(stdout, log);
	free(log);

	/* The driver runs from the kit root (its default database lives under
	 * .hotrow/), so a relative sqlite: path is made absolute first. */
	char db[PATH_MAX + 64], cwd[PATH_MAX];
	const char *url = a->db;
	if (url && (!strcmp(url, "sqlite") || !strcmp(url, "sqlite:")))
		url = NULL;   /* as `lab check --db sqlite`: SQLite, in the driver's own file */
	if (url && !strncmp(url, "sqlite:", 7) && url[7] != '/' && url[7] != ':' && getcwd(cwd, sizeof cwd)) {
		snprintf(db, sizeof db, "sqlite:%s/%s", cwd, url + 7);
		url = db;
	} else if (url && strncmp(url, "sqlite:", 7)) {
		char schema[16], why[1024], shown[1024];
		kit_url_redact(url, shown, sizeof shown);
		snprintf(schema, sizeof schema, "lab%s", l->num);
		if (make_schema(url, schema, why, sizeof why) != 0) {
			fprintf(stderr, "hotrow lab run: cannot use the database %s (from %s): %s\n", shown,
				a->db_from ? a->db_from : "--db", why);
			return 1;
		}
		with_schema(db, sizeof db, url, schema);
		printf("PostgreSQL: %s (from %s), schema %s\n", shown, a->db_from ? a->db_from : "--db", schema);
		url = db;
	}
	if (runner_path(t, path, sizeof path, "%s", target) != 0 || runner_state_dir(t, NULL) != 0) {
		fprintf(stderr, "hotrow lab run: cannot use %s/.hotrow: %s\n", t->root, strerror(errno));
		return 1;
	}
	char **argv = calloc((size_t)a->nextra + 12, sizeof *argv);
	int n = 0;
	if (!argv) {
		fprintf(stderr, "hotrow lab run: out of memory\n");
		return 1;
	}
	argv[n++] = path;
	/* The database goes in the environment, never in argv: a process
	 * listing shows argv to everyone, and a class URL has a password. */
	char *dbenv = NULL;
	if (url && (dbenv = malloc(strlen(url) + 16)) != NULL)
		sprintf(dbenv, "HOTROW_RUN_DB=%s", url);
	const char *env[] = {dbenv, NULL};
	if (a->threads) {
		argv[n++] = "--threads";
		argv[n++] = (char *)a->threads;
	}
	if (a->seconds) {
		argv[n++] = "--seconds";
		argv[n++] = (char *)a->seconds;
	}
	if (a->store) {
		argv[n++] = "--store";
		argv[n++] = (char *)a->store;
	}
	for (int k = 0; k < a->nextra; k++)
		argv[n++] = a->extra[k];
	argv[n] = NULL;

	if (a->beside) {
		char logpath[PATH_MAX + 32];
		snprintf(logpath, sizeof logpath, "%s/.hotrow/run-%s.log", t->root, l->num);
		if (url)
			setenv("HOTROW_RUN_DB", url, 1);   /* the driver it starts inherits it */
		int brc = a->beside(argv, url, logpath);
		unsetenv("HOTROW_RUN_DB");
		free(argv);
		free(dbenv);
		return brc;
	}
	struct runner_exit e;
	struct runner_child c = {.argv = argv, .dir = t->root, .timeout_s = a->timeout_s,
				 .passthrough = 1, .watch_fd = {-1, -1}, .env = dbenv ? env : NULL};
	runner_proc_run(&c, &e);
	free(argv);
	free(dbenv);
	char how[160];
	runner_proc_status(&e, how, sizeof how);
	if (e.stopped) {
		fprintf(stderr, "\nhotrow lab run: %s; the driver and what it started are gone.\n", how);
		return 130;
	}
	if (!e.started) {
		fprintf(stderr, "hotrow lab run: cannot run %s\n", target);
		return 1;
	}
	if (e.timed_out || WIFSIGNALED(e.status)) {
		int sig = WIFSIGNALED(e.status) ? WTERMSIG(e.status) : 0;
		fprintf(stderr, "\nhotrow lab run: the driver %s%s.\n", how,
			sig == SIGPIPE ? ": it wrote to a connection whose other end had gone "
			"(a server it used stopped?)" : sig && sig != SIGKILL ?
			": a crash in the code it drives (run the lab's checks for details)" : "");
		return 1;
	}
	int rc = WEXITSTATUS(e.status);
	if (rc == 2)
		return 2;   /* a usage error in the driver's own options: it said which */
	if (rc != 0) {
		fprintf(stderr, "\nhotrow lab run: the driver failed (%s); its first error is above.\n", how);
		return 1;
	}
	return 0;
}
