/*
 * grade.c: the score table, JUnit XML and Gradescope's results.json.
 * See grade.h for the scoring and the interface.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runner/grade.h"
#include "runner/hint.h"
#include "runner/show.h"
#include "util/file.h"
#include "util/json.h"

/* One lab's verdicts, kept until the reports are written. */
struct graded {
	const struct runner_lab *lab;
	struct runner_result r;
	int score, max;
};

static char *failure_text_of(const char *d, const struct runner_check *c, const char *hint);

/* The text a grader shows for a failed check: what went wrong, where, and
 * the title of the hint its tag points at. Caller frees. */
static char *failure_text(const struct runner_tree *t, const struct runner_lab *l, const struct runner_check *c)
{
	char hint[400] = "";
	if (c->hint[0]) {
		char path[PATH_MAX];
		struct runner_hints h;
		snprintf(hint, sizeof hint, "HINT: %s\n", c->hint);
		if (runner_path(t, path, sizeof path, "labs/%s/hints.md", l->name) == 0 &&
		    runner_hints_load(path, &h) == 0) {
			char tag[64];
			int k = runner_hints_first(&h, c->hint, tag, sizeof tag);
			if (k >= 0 && snprintf(hint, sizeof hint, "HINT: %s (hint %d: %s)\n", tag,
					       k + 1, h.v[k].title) >= (int)sizeof hint)
				util_json_trim(hint);
			runner_hints_free(&h);
		}
	}
	const char *d = c->details && *c->details ? c->details : "failed\n";
	if (c->output && *c->output) {   /* what it printed, after what failed */
		size_t dn = strlen(d), on = strlen(c->output);
		char *both = malloc(dn + on + 16);
		if (both) {
			snprintf(both, dn + on + 16, "%s%sit printed:\n%s", d, d[dn - 1] == '\n' ? "" : "\n", c->output);
			char *s = failure_text_of(both, c, hint);
			free(both);
			return s;
		}
	}
	return failure_text_of(d, c, hint);
}

static char *failure_text_of(const char *d, const struct runner_check *c, const char *hint)
{
	size_t n = strlen(d) + strlen(c->where) + strlen(hint) + 16;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s%s%s%s", d, d[strlen(d) - 1] == '\n' ? "" : "\n",
			 c->where[0] ? "at " : "", c->where, c->where[0] ? "\n" : "");
	if (s)
		strncat(s, hint, n - strlen(s) - 1);
	return s;
}

/* The first line of s into dst (n bytes); one too long for it ends at a
 * word, with "...", never mid-word nor inside a character. */
static void first_line(char *dst, size_t n, const char *s)
{
	size_t len = strcspn(s, "\n");
	if (len >= n) {
		len = util_json_cut(s, len, n - 4);
		const char *sp = memrchr(s, ' ', len);
		if (sp && sp - s > (ptrdiff_t)(n / 2))
			len = (size_t)(sp - s);
	}
	snprintf(dst, n, "%.*s%s", (int)len, s, len < strcspn(s, "\n") ? "..." : "");
}

static int write_junit(const char *path, const struct runner_tree *t, const struct graded *g, size_t n)
{
	struct util_file_out out;   /* in place of path only once whole */
	char why[PATH_MAX + 64];
	if (util_file_begin(&out, path, 0666, why, sizeof why) != 0)
		return -1;
	FILE *f = out.f;
	int tests = 0, failures = 0, skipped = 0;
	for (size_t i = 0; i < n; i++) {
		tests += g[i].r.n ? (int)g[i].r.n : 1;
		failures += g[i].r.n ? g[i].r.failed : 1;
		skipped += g[i].r.skipped;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites name=\"hotrow labs\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
		tests, failures, skipped);
	for (size_t i = 0; i < n; i++) {
		const struct runner_result *r = &g[i].r;
		const char *name = g[i].lab->name;
		double secs = 0;
		for (size_t k = 0; k < r->n; k++)
			secs += r->checks[k].seconds;
		fputs("  <testsuite name=\"", f);
		util_json_xml(f, name);
		fprintf(f, "\" tests=\"%d\" failures=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
			r->n ? (int)r->n : 1, r->n ? r->failed : 1, r->skipped, secs);
		if (!r->n) {
			fputs("    <testcase classname=\"", f);
			util_json_xml(f, name);
			fputs("\" name=\"build\">\n      <failure message=\"does not compile\">", f);
			util_json_xml(f, r->build_log);
			fprintf(f, "</failure>\n    </testcase>\n");
		}
		for (size_t k = 0; k < r->n; k++) {
			const struct runner_check *c = &r->checks[k];
			fputs("    <testcase classname=\"", f);
			util_json_xml(f, name);
			fputs("\" name=\"", f);
			util_json_xml(f, c->name);
			fprintf(f, "\" time=\"%.3f\"", c->seconds);
			if (c->verdict == RUNNER_PASSED) {
				fprintf(f, "/>\n");
				continue;
			}
			if (c->verdict == RUNNER_SKIPPED) {
				fprintf(f, ">\n      <skipped/>\n    </testcase>\n");
				continue;
			}
			char *text = failure_text(t, g[i].lab, c);
			char first[300];
			first_line(first, sizeof first, text ? text : "failed");
			fprintf(f, ">\n      <failure message=\"");
			util_json_xml(f, first);
			fprintf(f, "\">");
			util_json_xml(f, text);
			fprintf(f, "</failure>\n    </testcase>\n");
			free(text);
		}
		fprintf(f, "  </testsuite>\n");
	}
	fprintf(f, "</testsuites>\n");
	return util_file_commit(&out, why, sizeof why);
}

static void json_test(FILE *f, int *first, const char *lab, const char *check, int score, int max,
                      const char *output)
{
	char name[256];
	snprintf(name, sizeof name, "%s: %s", lab, check);
	util_json_trim(name);
	fprintf(f, "%s\n    {\"name\": ", *first ? "" : ",");
	util_json_str(f, name);
	fprintf(f, ", \"score\": %d, \"max_score\": %d, \"status\": \"%s\", \"output\": ",
		score, max, score == max ? "passed" : "failed");
	util_json_str(f, output);
	fputc('}', f);
	*first = 0;
}

/* Left out of the maximum: a skip on purpose (--db) or for want of an
 * optional engine (MariaDB) the runner did not give. */
static int left_out(const struct runner_result *r, const struct runner_check *c)
{
	return c->verdict == RUNNER_SKIPPED &&
	       (getenv("HOTROW_LAB_ONLY") || (c->engines & RUNNER_ENGINES_OPTIONAL & ~r->available));
}

static int write_json(const char *path, const struct runner_tree *t, const struct graded *g, size_t n,
                      int score, int max, int skipped, unsigned ran_on)
{
	struct util_file_out out;   /* in place of path only once whole */
	char why[PATH_MAX + 64];
	if (util_file_begin(&out, path, 0666, why, sizeof why) != 0)
		return -1;
	FILE *f = out.f;
	char summary[320];
	snprintf(summary, sizeof summary, "%d of %d checks pass, on %s.%s", score, max, runner_engines_str(ran_on),
		 skipped ? " Some checks did not run for want of their engine (PostgreSQL ones need "
			   "HOTROW_PG_URL) and earn nothing." : "");
	fprintf(f, "{\n  \"score\": %d,\n  \"max_score\": %d,\n  \"output\": ", score, max);
	util_json_str(f, summary);
	fprintf(f, ",\n  \"tests\": [");
	int first = 1;
	for (size_t i = 0; i < n; i++) {
		const struct runner_result *r = &g[i].r;
		if (!r->n)
			json_test(f, &first, g[i].lab->name, "build", 0, 1, r->build_log ? r->build_log : "");
		for (size_t k = 0; k < r->n; k++) {
			const struct runner_check *c = &r->checks[k];
			if (left_out(r, c))
				continue;   /* not in the maximum */
			char *text = c->verdict == RUNNER_FAILED ? failure_text(t, g[i].lab, c) : NULL;
			json_test(f, &first, g[i].lab->name, c->name, c->verdict == RUNNER_PASSED, 1,
				  text ? text : c->verdict == RUNNER_SKIPPED ?
				  "not run: its database engine was not set up" : "");
			free(text);
		}
	}
	fprintf(f, "\n  ]\n}\n");
	return util_file_commit(&out, why, sizeof why);
}

static void print_lab(const struct graded *g)
{
	const struct runner_result *r = &g->r;
	printf("%sLab %s — %s%s\n", runner_c_bold(), g->lab->num, g->lab->title, runner_c_off());
	if (r->refused)
		printf("  %srefused, not run: %s%s\n", runner_c_bad(), r->refused, runner_c_off());
	else if (!r->built)
		printf("  %-52s %sdoes not compile%s%s\n", "build", runner_c_bad(), runner_c_off(),
		       r->n ? "" : "  0/1");
	if (r->ended[0])
		printf("  %sthe test process %s%s%s%s\n", runner_c_bad(), r->ended,
		       r->running ? " in " : "", r->running ? r->running : "", runner_c_off());
	for (size_t k = 0; k < r->n; k++) {
		const struct runner_check *c = &r->checks[k];
		if (c->verdict == RUNNER_SKIPPED)
			printf("  %-52s %sskipped%s%s\n", c->name, runner_c_dim(),
			       left_out(r, c) ? ", not counted" : "", runner_c_off());
		else
			printf("  %-52s %s%-4s%s  %d/1  (%.1fs)\n", c->name,
			       c->verdict == RUNNER_PASSED ? runner_c_ok() : runner_c_bad(),
			       c->verdict == RUNNER_PASSED ? "OK" : "FAIL", runner_c_off(),
			       c->verdict == RUNNER_PASSED, c->seconds);
	}
	printf("  %-52s %d/%d\n\n", "subtotal", g->score, g->max);
}

int runner_grade(const struct runner_tree *t, const struct runner_lab *only, const char *out,
              const struct runner_opts *o)
{
	char dir[PATH_MAX];
	if (out)
		snprintf(dir, sizeof dir, "%s", out);
	else if (runner_path(t, dir, sizeof dir, ".hotrow/grade") != 0)
		return 1;
	if (runner_mkdirs(dir) != 0) {
		fprintf(stderr, "hotrow lab grade: cannot create %s: %s\n", dir, strerror(errno));
		return 1;
	}
	struct graded *g = calloc(t->nlabs ? t->nlabs : 1, sizeof *g);
	if (!g) {
		fprintf(stderr, "hotrow lab grade: out of memory\n");
		return 1;
	}
	printf("Grading %s/ of %s: one point per check.\n\n", o->solutions ? "solutions" : "exercises",
	       only ? only->name : "every lab");
	fflush(stdout);
	int score = 0, max = 0, skipped = 0, optional = 0, broken = 0;
	unsigned ran_on = 0;
	int chosen = getenv("HOTROW_LAB_ONLY") != NULL;   /* --db: one engine on purpose */
	struct runner_opts quiet = *o;
	quiet.live = 0;
	size_t n = 0;
	for (size_t j = 0; j < t->nlabs; j++) {
		if (only && only != &t->labs[j])
			continue;
		size_t i = n++;
		g[i].lab = &t->labs[j];
		if (runner_check_run(t, g[i].lab, &quiet, &g[i].r) != 0)
			broken = 1;
		struct runner_result *r = &g[i].r;
		if (r->interrupted || runner_proc_stopping()) {
			printf("Stopped; no reports written.\n");
			for (size_t k = 0; k <= i; k++)
				runner_result_free(&g[k].r);
			free(g);
			return 130;
		}
		/* Every expected check counts, whether it ran or the process died
		 * first: the maximum is fixed before anything runs. A check
		 * skipped for an engine that was not set up is a point not
		 * earned; only one left out on purpose (--db) or for want of an
		 * optional engine (MariaDB) is out of it. A skip of a check whose
		 * engines were there already failed. */
		int opt = chosen ? 0 : runner_result_optional_skips(r);
		g[i].score = r->passed;
		g[i].max = r->n ? (int)r->n - (chosen ? r->skipped : opt) : 1;
		score += g[i].score;
		max += g[i].max;
		skipped += r->skipped - opt;
		optional += opt;
		ran_on |= r->available;
		print_lab(&g[i]);
		if (!o->solutions && r->built)
			runner_check_record(t, g[i].lab, r);
	}
	printf("%sScore: %d/%d%s", score == max && max ? runner_c_ok() : runner_c_bad(), score, max, runner_c_off());
	if (skipped && chosen)
		printf("  (%d skipped: their engine was left out with --db)", skipped);
	else if (skipped)
		printf("  (%d not run, 0 points: PostgreSQL checks need HOTROW_PG_URL, `make pg-up` "
		       "prints it; Redis ones HOTROW_REDIS_URL, `make redis-up`)", skipped);
	printf("\nRan on %s.", runner_engines_str(ran_on));
	if (optional)
		printf(" %d MariaDB check%s did not run: optional, not in the maximum "
		       "(HOTROW_MYSQL_URL, `make mysql-up`, runs them).", optional, optional == 1 ? "" : "s");
	printf("\n");

	char junit[PATH_MAX + 16], json[PATH_MAX + 16];
	snprintf(junit, sizeof junit, "%s/junit.xml", dir);
	snprintf(json, sizeof json, "%s/results.json", dir);
	int rc = score == max && max > 0 && !broken ? 0 : 1;
	if (write_junit(junit, t, g, n) != 0 || write_json(json, t, g, n, score, max, skipped, ran_on) != 0) {
		fprintf(stderr, "hotrow lab grade: cannot write the reports in %s: %s\n", dir, strerror(errno));
		rc = 1;
	} else {
		printf("Wrote %s and %s\n", junit, json);
	}
	for (size_t i = 0; i < n; i++)
		runner_result_free(&g[i].r);
	free(g);
	return rc;
}
