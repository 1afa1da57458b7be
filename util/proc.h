/*
 * proc.h: the end of a child and of everything it started.
 *
 * A child can leave its process group (setpgid), its session (setsid),
 * fork twice so its parent is no longer its parent, and ignore SIGTERM;
 * killing its group then misses what it left behind. A process that
 * calls util_proc_subreaper becomes the parent of every orphan among its
 * descendants (PR_SET_CHILD_SUBREAPER), so util_proc_kill_tree can find
 * them all, in /proc, and kill each with SIGKILL (which nothing ignores)
 * until none is left, reaping those that became its children.
 *
 * util_proc_spawn and util_proc_end run one program in a group of its
 * own for a caller that does its own waiting (the live screen of
 * `hotrow lab run --top`); runner/proc.h builds on the same two.
 *
 * Interface:
 *   util_proc_subreaper();                       // once, early
 *   pid_t pid = util_proc_spawn(argv, out_fd);   // -1: errno says why
 *   ... waitpid(pid, &st, WNOHANG) ...
 *   util_proc_end(pid, &st);                     // SIGTERM, SIGKILL, every descendant gone
 */
#ifndef HOTROW_UTIL_PROC_H
#define HOTROW_UTIL_PROC_H

#include <sys/types.h>

/* Make this process the reaper of its orphaned descendants. Returns 0, or
 * -1 where the system cannot (descendants that leave are then missed). */
int util_proc_subreaper(void);

/* SIGKILL every descendant of this process, whatever its group or
 * session, until none is left (at most about 10 s), reaping those that
 * are its children, except keep (and keep's own descendants) when keep
 * > 0. Returns how many were killed. */
int util_proc_kill_tree(pid_t keep);

/* Start argv[0] (a path) with argv, in a process group of its own, stdin
 * on /dev/null, stdout and stderr on out_fd (when >= 0), killed should
 * this process die (PR_SET_PDEATHSIG). Returns its pid, or -1. */
pid_t util_proc_spawn(char *const argv[], int out_fd);

/* End pid if it still runs (SIGTERM to its group, SIGKILL a second later),
 * reap it into *status (may be NULL; left alone when pid was reaped
 * already, pid <= 0), then kill every other descendant. */
void util_proc_end(pid_t pid, int *status);

#endif
