/*
 * test_xmalloc.c: allocations succeed and zero where promised; running out
 * of memory calls the hook once and then aborts (checked in a child).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/xmalloc.h"

static void xcalloc__zeroes(void **state)
{
	unsigned char *p = xcalloc(1000, 3);

	(void)state;
	for (int i = 0; i < 3000; i++)
		assert_int_equal(p[i], 0);
	p = xrealloc(p, 10000);
	p[9999] = 1;
	free(p);
	free(xmalloc(0));             /* 0 bytes still gives a pointer */
}

static int hook_fd = -1;

static void hook(void)
{
	if (write(hook_fd, "h", 1) != 1)
		_exit(3);
}

static void xmalloc__oom_runs_hook_then_aborts(void **state)
{
	int fds[2], status;
	char buf[8];
	pid_t pid;

	/* The size overflows, so xcalloc gives up before asking calloc:
	 * nothing for a sanitizer's allocator to intercept, and the check
	 * runs in every build. */
	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		setrlimit(RLIMIT_CORE, &none);    /* no core file in the tree */
		close(fds[0]);
		hook_fd = fds[1];
		sim_set_oom_hook(hook);
		signal(SIGABRT, SIG_DFL);
		(void)xcalloc(SIZE_MAX / 4, 8);   /* overflows: must not return */
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_int_equal(read(fds[0], buf, sizeof buf), 1);
	assert_int_equal(buf[0], 'h');
	close(fds[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xcalloc__zeroes),
		cmocka_unit_test(xmalloc__oom_runs_hook_then_aborts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
