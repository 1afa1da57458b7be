/*
 * proc.c: finding and ending every descendant. See proc.h.
 *
 * The tree is read from /proc/PID/stat (the parent is its fourth field):
 * each pass lists the processes whose chain of parents reaches this one
 * and kills them; a pass that finds none ends it. A process forked while
 * a pass runs is found by the next one, and once this process is a
 * subreaper nothing it started can move out of its tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/proc.h"

#define MAX_PROCS 32768   /* processes read in one pass */
#define PASSES 1000       /* 10 ms apart: about 10 s */

int util_proc_subreaper(void)
{
#ifdef PR_SET_CHILD_SUBREAPER
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -1;
#else
	return -1;
#endif
}

/* The parent of pid, from /proc; -1 when it is gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], b[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t k = read(fd, b, sizeof b - 1);
	close(fd);
	if (k <= 0)
		return -1;
	b[k] = '\0';
	char *paren = strrchr(b, ')');   /* the name may hold spaces and ')' */
	char state;
	int ppid;
	if (!paren || sscanf(paren + 1, " %c %d", &state, &ppid) != 2)
		return -1;
	return (pid_t)ppid;
}

struct proc {
	pid_t pid, ppid;
};

/* Is p, by its chain of parents in v, below me and not below keep? */
static int below(const struct proc *v, size_t n, size_t i, pid_t me, pid_t keep)
{
	pid_t p = v[i].pid;
	for (int hops = 0; hops < 64; hops++) {
		if (p == keep)
			return 0;
		pid_t up = -1;
		for (size_t j = 0; j < n; j++)
			if (v[j].pid == p) {
				up = v[j].ppid;
				break;
			}
		if (up == me)
			return 1;
		if (up <= 1)
			return 0;
		p = up;
	}
	return 0;
}

int util_proc_kill_tree(pid_t keep)
{
	pid_t me = getpid();
	struct proc *v = malloc(MAX_PROCS * sizeof *v);
	int killed = 0;
	if (!v)
		return 0;
	for (int pass = 0; pass < PASSES; pass++) {
		size_t n = 0;
		DIR *d = opendir("/proc");
		struct dirent *e;
		while (d && (e = readdir(d)) && n < MAX_PROCS) {
			char *end;
			long pid = strtol(e->d_name, &end, 10);
			if (*end || pid <= 1 || pid == me)
				continue;
			pid_t pp = parent_of((pid_t)pid);
			if (pp > 0)
				v[n++] = (struct proc){(pid_t)pid, pp};
		}
		if (d)
			closedir(d);
		int found = 0;
		for (size_t i = 0; i < n; i++)
			if (below(v, n, i, me, keep)) {
				kill(v[i].pid, SIGKILL);
				found++;
			}
		/* Reap what became ours; zombies of others are their parents'. */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!found)
			break;
		killed += found;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	free(v);
	return killed;
}

pid_t util_proc_spawn(char *const argv[], int out_fd)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0) {
		if (pid > 0)
			setpgid(pid, pid);   /* also here, so a kill right away finds the group */
		return pid;
	}
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	int null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || (out_fd >= 0 && (dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)))
		_exit(127);
	signal(SIGPIPE, SIG_DFL);
	execv(argv[0], argv);
	_exit(127);
}

void util_proc_end(pid_t pid, int *status)
{
	int st = 0;
	pid_t w = pid > 0 ? waitpid(pid, &st, WNOHANG) : -1;
	if (w == 0) {   /* still running */
		kill(-pid, SIGTERM);
		for (int i = 0; i < 100 && (w = waitpid(pid, &st, WNOHANG)) == 0; i++) {
			struct timespec ts = {0, 10 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		kill(-pid, SIGKILL);
		if (w == 0) {
			kill(pid, SIGKILL);
			while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
				;
		}
	}
	if (w == pid && status)
		*status = st;
	util_proc_kill_tree(0);
}
