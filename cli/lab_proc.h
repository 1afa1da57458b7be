/*
 * lab_proc.h: running another program for the runner (make, git, a lab's
 * test binary) and waiting for it.
 *
 * Both functions fork, run argv (found on PATH) in dir with stdin on
 * /dev/null, wait for it, and return its exit code, 128 + the signal when
 * it was killed, or -1 when it could not be started. The child does not
 * inherit a calling make's job server (MAKEFLAGS, MAKELEVEL), so the
 * runner works under `make test`.
 *
 * Interface:
 *   static void each(void *arg, char *text) { ... one line, no newline ... }
 *   int rc = lab_proc_lines(root, (char *[]){"make", "-s", target, NULL}, each, arg);
 *   int rc = lab_proc_to_fd(root, (char *[]){"git", "show", spec, NULL}, fd);
 */
#ifndef HOTROW_CLI_LAB_PROC_H
#define HOTROW_CLI_LAB_PROC_H

/* stdout and stderr on one pipe, read line by line into line(arg, text);
 * text is only valid during the call. A signal (Ctrl-C) interrupting the
 * read does not lose output: reading goes on until the child closes it. */
int lab_proc_lines(const char *dir, char *const argv[], void (*line)(void *arg, char *text),
                   void *arg);

/* stdout to out_fd, stderr discarded. */
int lab_proc_to_fd(const char *dir, char *const argv[], int out_fd);

#endif
