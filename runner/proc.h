/*
 * proc.h: running another program for the runner (make, git, a lab's test
 * binary, a lab's driver) so that nothing it does can hang the runner.
 *
 * Each child runs in a process group of its own, with stdin on /dev/null
 * and a time limit. When the limit passes, when the runner is told to stop
 * (Ctrl-C, SIGTERM, SIGHUP: runner_proc_stop), or when the child itself
 * exits, the whole group is killed (SIGTERM, then SIGKILL a second later)
 * and reaped, so a forked grandchild that sleeps forever goes too; and
 * since the runner is the reaper of its orphans (util/proc.h), every
 * other descendant is killed too, whatever its group or session, and
 * however it treats SIGTERM. Output
 * still buffered in the pipes is read for at most a second more, so a
 * grandchild that left the group cannot hold the runner either. Should
 * the runner be killed outright (SIGKILL), the child is killed too
 * (PR_SET_PDEATHSIG); SIGPIPE is ignored while a child runs.
 *
 * The child's stdout and stderr arrive through out(arg, fd, bytes, n), fd 1
 * or 2, as they come (not split into lines). With report set, the child
 * also gets a pipe of its own on fd 3 (HOTROW_REPORT_FD=3 in its
 * environment): the lab harness's verdicts, delivered line by line through
 * line(arg, text). With passthrough set the child writes straight to the
 * runner's own stdout and stderr instead (a driver's live progress).
 * A child does not inherit a calling make's job server (MAKEFLAGS,
 * MAKELEVEL), so the runner works under `make test`.
 *
 * Interface:
 *   struct runner_child c = {.argv = argv, .dir = root, .timeout_s = 120,
 *                            .out = each_chunk, .arg = &mine};
 *   struct runner_exit e;
 *   runner_proc_run(&c, &e);
 *   if (e.timed_out) ...; else if (e.stopped) ...; else runner_proc_status(&e, buf, n);
 */
#ifndef HOTROW_RUNNER_PROC_H
#define HOTROW_RUNNER_PROC_H

#include <stddef.h>

struct runner_child {
	char *const *argv;          /* argv[0] is found on PATH */
	const char *dir;            /* working directory */
	double timeout_s;           /* 0: no limit */
	int passthrough;            /* stdout and stderr are the runner's own */
	int report;                 /* a report pipe on the child's fd 3 */
	void (*out)(void *arg, int fd, const char *bytes, size_t n);   /* may be NULL */
	void (*line)(void *arg, char *text);   /* a report line, no newline */
	void *arg;
	const char *const *env;     /* "NAME=VALUE" set in the child only; NULL-ended, may be NULL */
	/* Other descriptors to watch while the child runs (-1: none): when one
	 * is readable, watched(watch_arg, fd) is called; a non-zero answer ends
	 * the child at once (`lab watch`: q pressed, a file saved). */
	int watch_fd[2];
	int (*watched)(void *watch_arg, int fd);
	void *watch_arg;
};

struct runner_exit {
	int started;     /* 0: fork or exec failed (status is then 127) */
	int status;      /* waitpid's status of the child */
	int timed_out;   /* killed at the time limit */
	int stopped;     /* killed because the runner was told to stop */
	int cancelled;   /* killed because watched() asked */
	double seconds;  /* how long it ran */
};

/* Run c to its end (see above). Returns 0 when the child ran and exited
 * with 0, 1 otherwise (e says how it ended). Installs handlers for SIGINT,
 * SIGTERM and SIGHUP for the duration of the call and restores the old
 * ones after; a signal received meanwhile is remembered (runner_proc_stop). */
int runner_proc_run(const struct runner_child *c, struct runner_exit *e);

/* How the child ended, in words: "exited with status 255", "killed by
 * signal 11 (Segmentation fault)", "timed out after 120 s", "stopped
 * (Ctrl-C)". */
const char *runner_proc_status(const struct runner_exit *e, char *buf, size_t n);

/* Make every running and later runner_proc_run end at once (what SIGINT,
 * SIGTERM and SIGHUP do; usable as a signal handler); runner_proc_stopping
 * says whether it happened, and which signal asked (0 when none did). */
void runner_proc_stop(int sig);
int runner_proc_stopping(void);

/* Run argv in dir and collect stdout and stderr into one string (bounded,
 * see runner_text) in *text (caller frees, may be NULL). Returns the exit
 * code of runner_proc_run; e may be NULL. */
int runner_proc_collect(const char *dir, char *const argv[], double timeout_s, char **text,
                        struct runner_exit *e);

/* stdout into out_fd, stderr discarded, at most timeout_s. Returns the
 * child's exit code, or -1 when it did not exit normally. */
int runner_proc_to_fd(const char *dir, char *const argv[], int out_fd, double timeout_s);

#endif
