/*
 * test_order.c: the order labtest_run() runs a suite's checks in.
 *
 * HOTROW_LAB_ORDER names checks that run first, in its order, then the
 * rest follow in suite order; HOTROW_LAB_CHECKS names the only ones that
 * run, however long the list. Each check runs here as a probe in a child
 * (this binary again, with HOTROW_ORDER_LOG set) that logs its setup, its
 * body and its teardown, one line each: the log shows the order and that
 * each setup still pairs with its own teardown.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/harness/labtest.h"

/* ---- the child: probes that log what runs ---- */

static void probe_log(const char *what, void *name)
{
	FILE *f = fopen(getenv("HOTROW_ORDER_LOG"), "a");
	if (f != NULL) {
		fprintf(f, "%s %s\n", what, (const char *)name);
		fclose(f);
	}
}

static int probe_setup(void **state)
{
	probe_log("setup", *state);
	return 0;
}

static void probe(void **state)
{
	probe_log("test", *state);
}

static int probe_teardown(void **state)
{
	probe_log("teardown", *state);
	return 0;
}

#define PROBE(name) { name, probe, probe_setup, probe_teardown, name }

static int run_probes(void)
{
	const struct CMUnitTest probes[] = {
		PROBE("probe_a/one"),
		PROBE("probe_a/two"),
		PROBE("probe_b/one"),
		PROBE("probe_c/one"),
		PROBE("probe_d/one"),
	};
	return labtest_main("harness-order-probes", probes);
}

/* ---- the parent: run the probes, read the log ---- */

static char self[1024];

/* The entries that ran, in order, each "name" once its setup, body and
 * teardown came in that order ("!name" when they did not); what the child
 * printed goes to out. Fails the check if the child did not run. */
static void probes_ran(const char *order, const char *checks, char *ran, size_t len,
                       char *out, size_t outlen)
{
	char log[300], printed[300];
	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(log, sizeof log, "%s/hotrow-order-%ld.log", tmp, (long)getpid());
	snprintf(printed, sizeof printed, "%s/hotrow-order-%ld.out", tmp, (long)getpid());
	unlink(log);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(printed, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("HOTROW_ORDER_LOG", log, 1);
		if (order)
			setenv("HOTROW_LAB_ORDER", order, 1);
		else
			unsetenv("HOTROW_LAB_ORDER");
		if (checks)
			setenv("HOTROW_LAB_CHECKS", checks, 1);
		else
			unsetenv("HOTROW_LAB_CHECKS");
		unsetenv("HOTROW_LAB_SKIP");
		unsetenv("HOTROW_LAB_ONLY");
		unsetenv("HOTROW_PG_URL");
		unsetenv("HOTROW_REDIS_URL");
		unsetenv("HOTROW_MYSQL_URL");
		unsetenv("CMOCKA_MESSAGE_OUTPUT");
		execl(self, self, (char *)NULL);
		_exit(127);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	lt_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, NULL,
	          "the probes' run ended with status %d", status);

	ran[0] = '\0';
	FILE *f = fopen(log, "r");
	lt_expect(f != NULL, NULL, "no probe ran (no log at %s)", log);
	char what[32], name[64], line[128], want[64] = "";
	int step = 0;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%31s %63s", what, name) != 2)
			continue;
		static const char *const steps[] = { "setup", "test", "teardown" };
		if (step == 0)
			snprintf(want, sizeof want, "%s", name);
		bool paired = strcmp(what, steps[step]) == 0 && strcmp(name, want) == 0;
		if (!paired || step == 2) {
			snprintf(ran + strlen(ran), len - strlen(ran), "%s%s%s", ran[0] ? " " : "",
			         paired ? "" : "!", want);
			step = 0;
		} else {
			step++;
		}
	}
	fclose(f);
	unlink(log);

	out[0] = '\0';
	f = fopen(printed, "r");
	if (f != NULL) {
		size_t n = fread(out, 1, outlen - 1, f);
		out[n] = '\0';
		fclose(f);
	}
	unlink(printed);
}

#define expect_ran(ran, want) \
	lt_expect(strcmp(ran, want) == 0, NULL, "ran \"%s\", expected \"%s\"", ran, want)

static void order__named_first_then_suite_order(void **state)
{
	(void)state;
	char ran[512], out[4096];
	probes_ran("probe_c probe_a", NULL, ran, sizeof ran, out, sizeof out);
	expect_ran(ran, "probe_c/one probe_a/one probe_a/two probe_b/one probe_d/one");
}

static void order__one_entry_by_its_full_name(void **state)
{
	(void)state;
	char ran[512], out[4096];
	/* commas work as blanks do; a second mention changes nothing */
	probes_ran("probe_a/two,probe_d probe_a/two", NULL, ran, sizeof ran, out, sizeof out);
	expect_ran(ran, "probe_a/two probe_d/one probe_a/one probe_b/one probe_c/one");
}

static void order__none_is_suite_order(void **state)
{
	(void)state;
	char ran[512], out[4096];
	probes_ran("", NULL, ran, sizeof ran, out, sizeof out);
	expect_ran(ran, "probe_a/one probe_a/two probe_b/one probe_c/one probe_d/one");
}

static void order__with_checks_only_those_run(void **state)
{
	(void)state;
	char ran[512], out[4096];
	probes_ran("probe_d probe_a", "probe_b probe_d", ran, sizeof ran, out, sizeof out);
	expect_ran(ran, "probe_d/one probe_b/one");
}

static void order__an_unknown_name_is_said(void **state)
{
	(void)state;
	char ran[512], out[4096];
	probes_ran("no_such_check probe_b", NULL, ran, sizeof ran, out, sizeof out);
	expect_ran(ran, "probe_b/one probe_a/one probe_a/two probe_c/one probe_d/one");
	lt_expect(strstr(out, "NOTICE: HOTROW_LAB_ORDER names no_such_check") != NULL, NULL,
	          "no notice names the unknown check; the run printed:\n%s", out);
}

/* A list longer than any fixed buffer (a sweep passes every entry of a
 * suite): the names at its end still count. */
static void order__long_lists_are_read_whole(void **state)
{
	(void)state;
	size_t len = 20000;
	char *checks = malloc(len), *order = malloc(len);
	char ran[512], out[4096];
	assert_non_null(checks);
	assert_non_null(order);
	checks[0] = order[0] = '\0';
	while (strlen(checks) < len - 100)
		strcat(checks, "probe_padding_that_names_no_check ");
	strcpy(order, checks);
	strcat(checks, "probe_c");
	strcat(order, "probe_a/two");
	probes_ran(NULL, checks, ran, sizeof ran, out, sizeof out);
	expect_ran(ran, "probe_c/one");
	probes_ran(order, NULL, ran, sizeof ran, out, sizeof out);
	expect_ran(ran, "probe_a/two probe_a/one probe_b/one probe_c/one probe_d/one");
	lt_expect(strstr(out, "NOTICE: HOTROW_LAB_ORDER names probe_padding_that_names_no_check "
	                 "and ") != NULL, NULL,
	          "the unknown words are not said in one notice; the run printed:\n%s", out);
	free(checks);
	free(order);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (getenv("HOTROW_ORDER_LOG"))
		return run_probes();
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		snprintf(self, sizeof self, "%s", argv[0]);
	else
		self[n] = '\0';
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(order__none_is_suite_order),
		cmocka_unit_test(order__named_first_then_suite_order),
		cmocka_unit_test(order__one_entry_by_its_full_name),
		cmocka_unit_test(order__with_checks_only_those_run),
		cmocka_unit_test(order__an_unknown_name_is_said),
		cmocka_unit_test(order__long_lists_are_read_whole),
	};
	return labtest_main("harness-order", tests);
}
