/*
 * lab_proc.c: running make, git and the test binaries for the runner.
 * See lab_proc.h for the interface.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/lab_proc.h"

/* A make that runs the runner (make test) hands its job server down in
 * MAKEFLAGS; the makes the runner starts must not try to join it. */
static void child_env(void)
{
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
}

int lab_proc_lines(const char *dir, char *const argv[], void (*line)(void *arg, char *text),
                   void *arg)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		if (in >= 0)
			dup2(in, STDIN_FILENO);
		dup2(fd[1], STDOUT_FILENO);
		dup2(fd[1], STDERR_FILENO);
		close(fd[0]);
		close(fd[1]);
		child_env();
		if (chdir(dir) != 0) {
			fprintf(stderr, "cannot enter %s: %s\n", dir, strerror(errno));
			_exit(127);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	FILE *f = fdopen(fd[0], "r");
	if (f) {
		char *text = NULL;
		size_t cap = 0;
		ssize_t n;
		for (;;) {
			errno = 0;
			n = getline(&text, &cap, f);
			if (n < 0) {
				if (errno == EINTR) {   /* Ctrl-C in watch: the child got it too */
					clearerr(f);
					continue;
				}
				break;
			}
			if (n > 0 && text[n - 1] == '\n')
				text[n - 1] = '\0';
			line(arg, text);
		}
		free(text);
		fclose(f);
	} else {
		close(fd[0]);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int lab_proc_to_fd(const char *dir, char *const argv[], int out_fd)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, STDIN_FILENO);
		dup2(out_fd, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		child_env();
		if (chdir(dir) == 0)
			execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
