/*
 * show.c: `hotrow lab check` on the screen: each check, what it printed,
 * the hint, what to do next, and the progress it leaves. See show.h.
 */
#include <stdlib.h>
#include <string.h>

#include "runner/hint.h"
#include "runner/mutant.h"
#include "runner/show.h"
#include "class/class.h"
#include "kit/url.h"

/* cmocka's line for a check that crashed ("... Segmentation fault(11)"):
 * show_crash says it in words instead. */
#define CRASH_LINE "[  ERROR   ] --- Test failed with exception: "

/* cmocka's own lines in what a check printed: not worth showing. */
static int cmocka_chatter(const char *line, size_t n)
{
	static const char *const tags[] = {
		"[ RUN      ]", "[       OK ]", "[  FAILED  ]", "[  PASSED  ]", "[==========]",
		"[  SKIPPED ]", "[  ERROR   ] --- [   LINE   ] --- ", CRASH_LINE,
	};
	for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
		if (n >= strlen(tags[i]) && !strncmp(line, tags[i], strlen(tags[i])))
			return 1;
	/* its closing " 7 SKIPPED TEST(S)", " 2 FAILED TEST(S)", blank lines */
	size_t k = strspn(line, " 0123456789");
	if (k <= n && k > 0 && (!strncmp(line + k, "SKIPPED TEST(S)", 15) || !strncmp(line + k, "FAILED TEST(S)", 14)))
		return 1;
	return strspn(line, " \t\r") >= n;
}

/* Print text indented, without cmocka's chatter, at most max lines. */
void runner_show_output(const char *text, const char *indent, int max)
{
	int shown = 0;
	for (const char *s = text ? text : ""; *s && shown < max; ) {
		size_t n = strcspn(s, "\n");
		if (!cmocka_chatter(s, n)) {
			printf("%s%.*s\n", indent, (int)n, s);
			shown++;
		}
		s += n;
		if (*s)
			s++;
	}
}

int runner_show_has_output(const char *text)
{
	for (const char *s = text ? text : ""; *s; ) {
		size_t n = strcspn(s, "\n");
		if (n && !cmocka_chatter(s, n))
			return 1;
		s += n;
		if (*s)
			s++;
	}
	return 0;
}

/* The first crash cmocka caught in output, if any, as a line for a
 * student after lead ("          " under a check). */
static void show_crash(const char *output, const char *lead)
{
	const char *p = output ? strstr(output, CRASH_LINE) : NULL;
	if (p == NULL)
		return;
	p += strlen(CRASH_LINE);
	int n = (int)strcspn(p, "\n");
	const char *why = "";
	if (strncmp(p, "Segmentation fault", 18) == 0)
		why = " (a NULL, freed or out-of-range pointer in the code it ran?)";
	else if (strncmp(p, "Illegal instruction", 19) == 0)
		why = " (an index before or past the end of a fixed-size array in the code it ran, "
		      "a double converted to an integer type too small for it, or a pointer cast "
		      "to a type its address is not aligned for, where memcpy was needed, or a "
		      "signed sum or product past its type (test before you add): the "
		      "lab's code is built to stop there rather than go on with an undefined "
		      "result)";
	printf("%scrashed: %.*s%s\n", lead, n, p, why);
}

void runner_show_check(const struct runner_check *c)
{
	switch (c->verdict) {
	case RUNNER_PASSED:
		printf("  %sok%s    %s\n", runner_c_ok(), runner_c_off(), c->name);
		runner_show_output(c->said, "          ", 20);   /* what the check itself says */
		break;
	case RUNNER_SKIPPED:   /* a missing engine: the notice and the total say so */
		break;
	case RUNNER_FAILED:
		printf("  %sFAIL%s  %s\n", runner_c_bad(), runner_c_off(), c->name);
		runner_show_output(c->details, "          ", 40);
		runner_show_output(c->said, "          ", 20);
		show_crash(c->output, "          ");
		if (c->where[0])
			printf("          %s(%s)%s\n", runner_c_dim(), c->where, runner_c_off());
		if (runner_show_has_output(c->output)) {
			printf("          %sit printed:%s\n", runner_c_dim(), runner_c_off());
			runner_show_output(c->output, "          | ", 30);
		}
		break;
	}
	fflush(stdout);
}

/* ---- `hotrow lab check` ---- */

/* The hint for the first failing check that has one: of its tags, the one
 * whose hint comes latest in hints.md (the later, the more specific), but
 * never the last hint, the shape of the answer, which only `hotrow lab
 * hint` reveals. */
static void print_first_hint(const struct runner_tree *t, const struct runner_lab *l,
                             const struct runner_result *r, const struct runner_part *part)
{
	char path[PATH_MAX];
	struct runner_hints h;
	if (runner_path(t, path, sizeof path, "labs/%s/hints.md", l->name) != 0 ||
	    runner_hints_load(path, &h) != 0) {
		printf("\nStuck? `%s lab hint %s%s%s` reveals the next hint.\n", runner_self(), l->num,
		       part ? " --part " : "", part ? part->name : "");
		return;
	}
	const struct runner_check *first = NULL;
	char tag[64] = "";
	int k = -1;
	for (size_t i = 0; i < r->n && !first; i++) {
		const struct runner_check *c = &r->checks[i];
		if (c->verdict != RUNNER_FAILED || !c->hint[0])
			continue;
		k = runner_hints_specific(&h, c->hint, tag, sizeof tag);
		if (k >= 0)
			first = c;
	}
	if (first) {
		printf("\nHint for %s [%s]:\n", first->name, tag);
		runner_hint_print(stdout, &h, (size_t)k, "  ");
	} else {
		printf("\nStuck? `%s lab hint %s%s%s` reveals the next hint.\n", runner_self(), l->num,
		       part ? " --part " : "", part ? part->name : "");
	}
	runner_hints_free(&h);
}

/* Which engines' progress a check counts in: those its entry declares
 * (a Redis check runs on SQLite); a check of plain C counts in both, and
 * so does a MariaDB check that ran (a failure there is one of the lab's;
 * skipped for want of a server it counts in neither: MariaDB is optional). */
static int engine_of(const struct runner_check *c)
{
	int e = (c->engines & (RUNNER_ENGINE_SQLITE | RUNNER_ENGINE_PG)) ? 0 : 3;
	if (c->engines & RUNNER_ENGINE_SQLITE)
		e |= 1;
	if (c->engines & RUNNER_ENGINE_PG)
		e |= 2;
	return e;
}

/* Record what each engine showed; an engine not given this time keeps
 * what it showed before. */
void runner_check_record(const struct runner_tree *t, const struct runner_lab *l, const struct runner_result *r)
{
	struct runner_progress p;
	runner_progress_get(t, l, &p);
	int ran[2] = {0, 0}, passed[2] = {0, 0}, total[2] = {0, 0};
	for (size_t i = 0; i < r->n; i++) {
		const struct runner_check *c = &r->checks[i];
		int e = engine_of(c);
		for (int k = 0; k < 2; k++) {
			if (!(e & (1 << k)) || c->verdict == RUNNER_SKIPPED)
				continue;   /* a missing engine: nothing either way */
			total[k]++;
			passed[k] += c->verdict == RUNNER_PASSED;
		}
	}
	/* An engine the runner gave this time shows its result now (a lab
	 * whose SQLite side is checks of plain C, as Lab 07, included). */
	ran[0] = (r->available & RUNNER_ENGINE_SQLITE) != 0;
	ran[1] = (r->available & RUNNER_ENGINE_PG) != 0;
	for (int k = 0; k < 2; k++)
		if (ran[k] || !r->built) {
			p.eng_passed[k] = passed[k];
			p.eng_total[k] = r->built ? total[k] : 0;
		}
	p.passed = r->built ? r->passed : 0;
	p.total = r->built ? r->passed + r->failed : 0;
	runner_progress_put(t, l, &p);
	/* In class mode (HOTROW_PG_URL names a student's role on the room's
	 * server) the instructor's `hotrow class status` sees it too. */
	class_record(getenv("HOTROW_PG_URL"), l->name, p.passed, p.total);
}

/* A run in which the PostgreSQL checks did not run is not "done": say
 * which mistakes only they catch, and how to start a server. */
static void print_pg_missing(const struct runner_tree *t, const struct runner_lab *l, int skipped)
{
	if (!skipped)
		return;
	printf("\nNot done yet: %d PostgreSQL check%s did not run.", skipped, skipped == 1 ? "" : "s");
	char **m = NULL;
	int n = runner_pg_only_mistakes(t, l, &m);
	if (n > 0) {
		printf(" Only they catch:\n");
		for (int i = 0; i < n; i++)
			printf("  - %s\n", m[i]);
	} else {
		printf("\n");
	}
	for (int i = 0; i < n; i++)
		free(m[i]);
	free(m);
	printf("Start a throwaway PostgreSQL and check again:\n"
	       "  export HOTROW_PG_URL=$(make -s pg-up)\n"
	       "  %s lab check %s\n", runner_self(), l->num);
}

static void print_redis_missing(const struct runner_lab *l, int skipped)
{
	if (!skipped)
		return;
	printf("\nNot done yet: %d Redis check%s did not run. Start a throwaway Redis and check "
	       "again:\n  export HOTROW_REDIS_URL=$(make -s redis-up)\n  %s lab check %s\n", skipped,
	       skipped == 1 ? "" : "s", runner_self(), l->num);
}

int runner_check_cmd(const struct runner_tree *t, const struct runner_lab *l, const struct runner_opts *o)
{
	const char *side = o->solutions ? "solutions" : "exercises";
	printf("%sLab %s — %s%s%s%s: checking %s/%s/\n", runner_c_bold(), l->num, l->title,
	       o->part ? ", part " : "", o->part ? o->part->name : "", runner_c_off(), side, l->name);
	char shown[1024];
	if (o->db_from)
		printf("%sPostgreSQL: %s (from %s)%s\n", runner_c_dim(),
		       kit_url_redact(getenv("HOTROW_PG_URL"), shown, sizeof shown), o->db_from, runner_c_off());
	if (runner_engines_available() & RUNNER_ENGINE_MYSQL)
		printf("%sMariaDB: %s (from %s)%s\n", runner_c_dim(),
		       kit_url_redact(getenv("HOTROW_MYSQL_URL"), shown, sizeof shown),
		       o->only_mysql ? "--db" : "HOTROW_MYSQL_URL", runner_c_off());
	fflush(stdout);
	struct runner_opts live = *o;
	live.live = 1;
	live.on_check = runner_show_check;
	struct runner_result r;
	int rc = runner_check_run(t, l, &live, &r);

	if (r.interrupted || runner_proc_stopping()) {
		printf("\nStopped; nothing recorded.\n");
		runner_result_free(&r);
		return 130;
	}
	if (r.cancelled) {
		runner_result_free(&r);
		return 3;
	}
	if (r.refused) {
		printf("\n%sRefused, not run:%s %s\n", runner_c_bad(), runner_c_off(), r.refused);
		printf("\nThe checks run only code that stays within the lab (labs/README.md, "
		       "\"For students\": what your files may define and call): change that line, "
		       "then check again.\n");
		if (!o->solutions)
			runner_check_record(t, l, &r);
		runner_result_free(&r);
		return 1;
	}
	if (!r.built) {
		if (r.build_timed_out)
			printf("\nThe build of %s/%s/ took longer than %.0f s and was stopped. Does a file "
			       "include something that never ends (a device, itself)? make says:\n\n",
			       side, l->name, 4 * o->timeout_s);
		else
			printf("\n%s/%s/ does not compile yet; the compiler says:\n\n", side, l->name);
		runner_build_log_print(stdout, r.build_log);
		if (rc == 0)
			printf("\nFix the first error above, then check again.\n");
		else if (r.stray)
			printf("%s\n", r.stray);
		if (!o->solutions && rc == 0)
			runner_check_record(t, l, &r);
		runner_result_free(&r);
		return 1;
	}
	if (r.build_log)   /* warnings: worth seeing, they are often the bug */
		runner_build_log_print(stdout, r.build_log);
	if (rc != 0) {
		printf("\nThe checks could not run: %s\n", r.stray ? r.stray : "(no reason given)");
		runner_result_free(&r);
		return 1;
	}
	if (r.ended[0]) {
		printf("\n%sThe test process %s%s%s.\n", runner_c_bad(), r.ended,
		       r.running ? " while running " : "", r.running ? r.running : "");
		if (r.exit.timed_out)
			printf("%sThe lab's checks run in one test program with %.0f s in all (--timeout): "
			       "a check that waits for ever stops there, and so does a machine busy with "
			       "other work. If `uptime` shows a load above its cores, `%s lab check %s "
			       "--timeout %.0f` gives it more.%s\n", runner_c_off(), o->timeout_s,
			       runner_self(), l->num, 5 * o->timeout_s, runner_c_off());
	}
	if (runner_show_has_output(r.stray)) {
		printf("\nPrinted outside any check:\n");
		runner_show_output(r.stray, "  | ", 30);
	}
	show_crash(r.stray, "\nA check ");   /* its line came after the check had ended */
	/* Skipped means an engine was not given (a skip of a check whose
	 * engines were there fails: see check.h). */
	int ran = r.passed + r.failed;
	if (r.notices && strstr(r.notices, "cannot be used")) {
		printf("\n%d check%s could not run: the database %s names cannot be used.\n"
		       "Fix the URL or start the server (`make pg-up` prints a URL), then check again.\n",
		       r.failed, r.failed == 1 ? "" : "s", o->db_from ? o->db_from : "HOTROW_PG_URL");
		runner_result_free(&r);
		return 1;
	}
	if (o->part)
		printf("\n%spart %s of Lab %s: ", r.failed ? runner_c_bad() : runner_c_ok(), o->part->name, l->num);
	else
		printf("\n%s", r.failed ? runner_c_bad() : runner_c_ok());
	printf("%d of %d checks passing%s", r.passed, ran, runner_c_off());
	if (r.skipped)
		printf(" (%d skipped)", r.skipped);
	printf(".\n");
	if (!o->solutions && !o->part)   /* a part's count is not the lab's */
		runner_check_record(t, l, &r);
	int pg_skipped = 0, redis_skipped = 0, optional = runner_result_optional_skips(&r);
	int chosen = o->only_sqlite || o->only_mysql;   /* --db: one engine on purpose */
	for (size_t i = 0; i < r.n; i++) {
		pg_skipped += r.checks[i].verdict == RUNNER_SKIPPED && (r.checks[i].engines & RUNNER_ENGINE_PG);
		redis_skipped += r.checks[i].verdict == RUNNER_SKIPPED &&
				 (r.checks[i].engines & RUNNER_ENGINE_REDIS);
	}
	if (r.failed) {
		print_first_hint(t, l, &r, o->part);
		if (!o->solutions) {
			char files[256];
			runner_exercise_files(t, l, files, sizeof files);
			char sec[32] = "", again[48] = "";
			if (o->part) {
				snprintf(sec, sizeof sec, " (section %s)", o->part->section);
				snprintf(again, sizeof again, " --part %s", o->part->name);
			}
			printf("\nNext: edit exercises/%s/ (%s) with labs/%s/README.md%s at hand, then\n"
			       "`%s lab check %s%s` again, or `%s lab watch %s%s` to check on every save.\n",
			       l->name, files[0] ? files : "no files yet", l->name, sec, runner_self(), l->num,
			       again, runner_self(), l->num, again);
		}
		/* The URL once, password hidden: the screen may be projected. */
		const char *url = getenv("HOTROW_PG_URL");
		kit_url_redact(url, shown, sizeof shown);
		if (o->db_from && !strcmp(o->db_from, "--db")) {
			printf("These checks ran on PostgreSQL at %s (from --db); again:\n"
			       "  %s lab check %s --db '%s'%s\n", shown, runner_self(), l->num, shown,
			       kit_url_has_password(url) ? "   (your password where *** stands)" : "");
		} else if (o->db_from) {
			printf("The PostgreSQL checks ran at %s (from HOTROW_PG_URL); again:\n"
			       "  %s lab check %s\n", shown, runner_self(), l->num);
		}
	} else if (ran == 0) {
		printf("No check ran%s.\n", r.skipped ? ": every one was skipped" : "");
		if (r.notices)
			printf("%s", r.notices);
		int my_checks = 0;
		for (size_t i = 0; i < r.n; i++)
			my_checks += (r.checks[i].engines & RUNNER_ENGINE_MYSQL) != 0;
		if (o->only_mysql && !my_checks)
			printf("Lab %s has no MariaDB checks; without --db it checks SQLite and PostgreSQL.\n", l->num);
		else if (o->db)
			printf("The database named by --db could not be used.\n");
	} else if ((pg_skipped && !chosen) || redis_skipped) {
		/* Never "done" while a check waits for an engine the lab needs. */
		print_pg_missing(t, l, chosen ? 0 : pg_skipped);
		print_redis_missing(l, redis_skipped);
		if (pg_skipped && o->only_sqlite)
			printf("The PostgreSQL checks were not asked for (--db sqlite).\n");
	} else if (o->part) {
		printf("\npart %s done%s (the lab is done when `%s lab check %s` passes every part).\n",
		       o->part->name, r.skipped > optional ? " where its engines were given" : "", runner_self(),
		       l->num);
	} else if (pg_skipped && o->only_sqlite) {
		printf("\nEvery SQLite check passes; the PostgreSQL ones were not asked for (--db).\n");
	} else if (r.skipped > optional) {
		printf("\nEvery check that ran passes; %d did not run (their engine was not asked for).\n",
		       r.skipped);
	} else {
		/* Done: the checks skipped for want of MariaDB are optional ones. */
		if (!o->solutions)
			printf("\nLab %s done. `%s lab` shows what is next.\n", l->num, runner_self());
		if (optional)
			printf("%d MariaDB check%s did not run (optional; to run them too: "
			       "export HOTROW_MYSQL_URL=$(make -s mysql-up)).\n", optional, optional == 1 ? "" : "s");
	}
	rc = r.failed || ran == 0 ? 1 : 0;
	runner_result_free(&r);
	return rc;
}
