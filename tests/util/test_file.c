/*
 * test_file.c: file arguments (util/file) on real files in a scratch
 * directory: a directory, a FIFO, /dev/zero, a file over the size cap and
 * a missing directory are refused with their reason, without blocking; a
 * file written through util_file_begin replaces the old one only when
 * committed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/file.h"

/* A scratch directory with a regular file, a FIFO and a subdirectory. */
struct scratch {
	char dir[64];
	char file[128], fifo[128], sub[128], missing[128], in_missing[160];
};

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The whole of a small file, in buf. */
static const char *slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	struct scratch *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	snprintf(s->dir, sizeof s->dir, "/tmp/hotrow-test-file-XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	snprintf(s->file, sizeof s->file, "%s/roster", s->dir);
	snprintf(s->fifo, sizeof s->fifo, "%s/fifo", s->dir);
	snprintf(s->sub, sizeof s->sub, "%s/sub", s->dir);
	snprintf(s->missing, sizeof s->missing, "%s/missing", s->dir);
	snprintf(s->in_missing, sizeof s->in_missing, "%s/missing/x.csv", s->dir);
	put(s->file, "ada\nbob\n");
	if (mkfifo(s->fifo, 0600) != 0 || mkdir(s->sub, 0700) != 0)
		return -1;
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct scratch *s = *state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
	int rc = system(cmd);
	free(s);
	return rc == 0 ? 0 : -1;
}

static void check_in__regular_file_passes(void **state)
{
	struct scratch *s = *state;
	char why[256] = "";
	assert_int_equal(util_file_check_in(s->file, 0, why, sizeof why), 0);
	assert_int_equal(util_file_check_in(s->file, 8, why, sizeof why), 0);   /* 8 bytes: at the cap */
}

static void check_in__refuses_what_is_not_a_file(void **state)
{
	struct scratch *s = *state;
	char why[256];
	assert_int_equal(util_file_check_in(s->sub, 0, why, sizeof why), -1);
	assert_string_equal(why, "is a directory, not a file");
	assert_int_equal(util_file_check_in(s->fifo, 0, why, sizeof why), -1);
	assert_string_equal(why, "is a FIFO (a named pipe)");
	assert_int_equal(util_file_check_in("/dev/zero", 0, why, sizeof why), -1);
	assert_string_equal(why, "is a device (like /dev/zero), not a file");
	assert_int_equal(util_file_check_in(s->missing, 0, why, sizeof why), -1);
	assert_string_equal(why, "cannot read it: No such file or directory");
}

static void check_in__refuses_a_file_over_the_cap(void **state)
{
	struct scratch *s = *state;
	char why[256];
	assert_int_equal(util_file_check_in(s->file, 7, why, sizeof why), -1);
	assert_string_equal(why, "is 8 bytes, more than the 7 this takes");
}

/* Opening a FIFO that no one writes to would block for ever: it is refused
 * at once (the test would hang otherwise). */
static void open_in__refuses_a_fifo_without_waiting(void **state)
{
	struct scratch *s = *state;
	char why[256], buf[32];
	assert_null(util_file_open_in(s->fifo, 0, why, sizeof why));
	assert_string_equal(why, "is a FIFO (a named pipe)");
	assert_null(util_file_open_in("/dev/zero", 1 << 20, why, sizeof why));
	assert_null(util_file_open_in(s->sub, 0, why, sizeof why));
	assert_null(util_file_open_in(s->file, 7, why, sizeof why));
	FILE *f = util_file_open_in(s->file, 8, why, sizeof why);
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	assert_string_equal(buf, "ada\n");
	fclose(f);
}

static void check_out__where_a_file_can_go(void **state)
{
	struct scratch *s = *state;
	char why[256], fresh[160];
	snprintf(fresh, sizeof fresh, "%s/new.csv", s->dir);
	assert_int_equal(util_file_check_out(fresh, why, sizeof why), 0);
	assert_int_equal(util_file_check_out(s->file, why, sizeof why), 0);
	assert_int_equal(access(fresh, F_OK), -1);   /* nothing created */

	assert_int_equal(util_file_check_out(s->sub, why, sizeof why), -1);
	assert_string_equal(why, "is a directory, not a file");
	assert_int_equal(util_file_check_out(s->fifo, why, sizeof why), -1);
	assert_int_equal(util_file_check_out("/dev/zero", why, sizeof why), -1);
	assert_int_equal(util_file_check_out(s->in_missing, why, sizeof why), -1);
	char want[200];
	snprintf(want, sizeof want, "its directory %s does not exist", s->missing);
	assert_string_equal(why, want);
	snprintf(fresh, sizeof fresh, "%s/roster/x.csv", s->dir);    /* under a file */
	assert_int_equal(util_file_check_out(fresh, why, sizeof why), -1);
	snprintf(fresh, sizeof fresh, "%s/", s->sub);
	assert_int_equal(util_file_check_out(fresh, why, sizeof why), -1);
}

static void check_dir__a_directory_or_one_to_make(void **state)
{
	struct scratch *s = *state;
	char why[256];
	assert_int_equal(util_file_check_dir(s->sub, why, sizeof why), 0);
	assert_int_equal(util_file_check_dir(s->missing, why, sizeof why), 0);
	assert_int_equal(util_file_check_dir(s->file, why, sizeof why), -1);
	assert_string_equal(why, "is not a directory");
	/* made with its parents, as mkdir -p would */
	assert_int_equal(util_file_check_dir(s->in_missing, why, sizeof why), 0);
	char under_file[200];
	snprintf(under_file, sizeof under_file, "%s/a/b", s->file);
	assert_int_equal(util_file_check_dir(under_file, why, sizeof why), -1);
	char want[200];
	snprintf(want, sizeof want, "%s is not a directory", s->file);
	assert_string_equal(why, want);
	assert_int_equal(util_file_check_dir("/dev/null/x", why, sizeof why), -1);
}

static void begin__replaces_only_on_commit(void **state)
{
	struct scratch *s = *state;
	char why[256], buf[64];
	struct util_file_out o;

	assert_int_equal(util_file_begin(&o, s->file, 0644, why, sizeof why), 0);
	fputs("carol\n", o.f);
	assert_string_equal(slurp(s->file, buf, sizeof buf), "ada\nbob\n");   /* not yet */
	util_file_abandon(&o);
	assert_string_equal(slurp(s->file, buf, sizeof buf), "ada\nbob\n");

	assert_int_equal(util_file_begin(&o, s->file, 0600, why, sizeof why), 0);
	fputs("carol\n", o.f);
	assert_int_equal(util_file_commit(&o, why, sizeof why), 0);
	assert_string_equal(slurp(s->file, buf, sizeof buf), "carol\n");
	struct stat st;
	assert_int_equal(stat(s->file, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* nothing is left beside it */
	char cmd[400];
	snprintf(cmd, sizeof cmd, "test $(ls '%s' | wc -l) -eq 3", s->dir);
	assert_int_equal(system(cmd), 0);
}

static void begin__refuses_before_creating_anything(void **state)
{
	struct scratch *s = *state;
	char why[256];
	struct util_file_out o;
	assert_int_equal(util_file_begin(&o, s->sub, 0644, why, sizeof why), -1);
	assert_int_equal(util_file_begin(&o, s->in_missing, 0644, why, sizeof why), -1);
	assert_null(o.f);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "test $(ls '%s' | wc -l) -eq 3 && test -z \"$(ls '%s')\"", s->dir,
	         s->sub);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(check_in__regular_file_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(check_in__refuses_what_is_not_a_file, setup, teardown),
		cmocka_unit_test_setup_teardown(check_in__refuses_a_file_over_the_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(open_in__refuses_a_fifo_without_waiting, setup, teardown),
		cmocka_unit_test_setup_teardown(check_out__where_a_file_can_go, setup, teardown),
		cmocka_unit_test_setup_teardown(check_dir__a_directory_or_one_to_make, setup, teardown),
		cmocka_unit_test_setup_teardown(begin__replaces_only_on_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(begin__refuses_before_creating_anything, setup, teardown),
	};
	return cmocka_run_group_tests_name("util_file", tests, NULL, NULL);
}
