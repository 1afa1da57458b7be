/*
 * proc.c: children in their own process groups, with time limits.
 * See proc.h for the interface.
 *
 * One loop polls the child's pipes and a self-pipe that the signal
 * handlers write to, waking at least every 50 ms to reap the child; so a
 * signal, the time limit and the child's end are each noticed at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/proc.h"
#include "runner/text.h"
#include "util/clock.h"
#include "util/proc.h"

#define REPORT_FD 3        /* the harness's report pipe, in the child */
#define GRACE_S 1.0        /* SIGTERM, then this long, then SIGKILL */
#define DRAIN_S 1.0        /* reading what is left after the group is gone */
#define GONE_S 10.0        /* the most to wait for a killed group to exit */

static volatile sig_atomic_t stop_sig;
static int wake[2] = {-1, -1};   /* the self-pipe: handlers write a byte */

static void on_signal(int sig)
{
	int e = errno;
	stop_sig = sig;
	if (wake[1] >= 0) {
		ssize_t ignored = write(wake[1], "x", 1);
		(void)ignored;
	}
	errno = e;
}

void runner_proc_stop(int sig)
{
	on_signal(sig ? sig : SIGTERM);
}

int runner_proc_stopping(void)
{
	return stop_sig;
}

/* Move fd above the three standard ones and the report slot, close-on-exec. */
static int high(int fd)
{
	if (fd < 0)
		return -1;
	int h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	close(fd);
	return h;
}

static int make_pipe(int p[2])
{
	int raw[2];
	if (pipe(raw) != 0)
		return -1;
	p[0] = high(raw[0]);
	p[1] = high(raw[1]);
	if (p[0] < 0 || p[1] < 0) {
		if (p[0] >= 0)
			close(p[0]);
		if (p[1] >= 0)
			close(p[1]);
		return -1;
	}
	return 0;
}

static void close_pipe(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0) {
			close(p[i]);
			p[i] = -1;
		}
}

/* In the child, after fork: never returns. */
static void child(const struct runner_child *c, int out[2], int err[2], int rep[2], pid_t parent)
{
	setpgid(0, 0);
	/* Should the runner itself be killed outright (SIGKILL leaves it no
	 * time to kill the group), the child goes with it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	sigaction(SIGHUP, &dfl, NULL);
	sigaction(SIGPIPE, &dfl, NULL);
	int in = open("/dev/null", O_RDONLY);
	if (in >= 0 && in != STDIN_FILENO) {
		dup2(in, STDIN_FILENO);
		close(in);
	}
	if (!c->passthrough) {
		dup2(out[1], STDOUT_FILENO);
		dup2(err[1], STDERR_FILENO);
	}
	if (c->report) {
		dup2(rep[1], REPORT_FD);
		setenv("HOTROW_REPORT_FD", "3", 1);
	} else {
		unsetenv("HOTROW_REPORT_FD");
	}
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	for (const char *const *e = c->env; e && *e; e++)
		putenv((char *)*e);
	if (c->dir && chdir(c->dir) != 0) {
		fprintf(stderr, "cannot enter %s: %s\n", c->dir, strerror(errno));
		_exit(127);
	}
	execvp(c->argv[0], c->argv);
	fprintf(stderr, "cannot run %s: %s\n", c->argv[0], strerror(errno));
	_exit(127);
}

/* The report channel arrives in pieces; hand it on line by line. */
struct lines {
	char buf[4096];
	size_t len;
};

static void feed_lines(struct lines *l, const char *s, size_t n, const struct runner_child *c, int flush)
{
	while (n > 0 || flush) {
		size_t k = sizeof l->buf - 1 - l->len < n ? sizeof l->buf - 1 - l->len : n;
		memcpy(l->buf + l->len, s, k);
		l->len += k;
		s += k;
		n -= k;
		char *start = l->buf, *nl;
		while ((nl = memchr(start, '\n', l->len - (size_t)(start - l->buf)))) {
			*nl = '\0';
			if (c->line)
				c->line(c->arg, start);
			start = nl + 1;
		}
		size_t left = l->len - (size_t)(start - l->buf);
		memmove(l->buf, start, left);
		l->len = left;
		if (l->len == sizeof l->buf - 1 || (flush && n == 0 && l->len)) {
			l->buf[l->len] = '\0';   /* an overlong or unfinished line */
			if (c->line)
				c->line(c->arg, l->buf);
			l->len = 0;
		}
		if (flush && n == 0)
			break;
	}
}

/* Read what one pipe has; 0 at its end (fd closed), 1 otherwise. */
static int pump(int *fd, int which, struct lines *rl, const struct runner_child *c)
{
	char b[65536];
	ssize_t k = read(*fd, b, sizeof b);
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (k <= 0) {
		close(*fd);
		*fd = -1;
		if (which == REPORT_FD)
			feed_lines(rl, "", 0, c, 1);
		return 0;
	}
	if (which == REPORT_FD)
		feed_lines(rl, b, (size_t)k, c, 0);
	else if (c->out)
		c->out(c->arg, which, b, (size_t)k);
	return 1;
}

/* Hand on the output the child has already written, before report
 * lines read just now: a report read can hold lines the child wrote after
 * that output (cmocka's crash line on stderr, then the check's end and the
 * next one's start), and the output belongs to the check that printed it.
 * A bounded number of reads, so a flood cannot hold up the report. */
static void drain_output(int *out, int *err, struct lines *rl, const struct runner_child *c)
{
	for (int round = 0; round < 16; round++) {
		struct pollfd p[2] = { {.fd = *out, .events = POLLIN}, {.fd = *err, .events = POLLIN} };
		if (poll(p, 2, 0) <= 0)
			return;
		if (p[0].revents)
			pump(out, 1, rl, c);
		if (p[1].revents)
			pump(err, 2, rl, c);
	}
}

/* Read the report channel, the output written before it first. */
static int pump_report(int *rep, int *out, int *err, struct lines *rl, const struct runner_child *c)
{
	char b[65536];
	ssize_t k = read(*rep, b, sizeof b);
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	drain_output(out, err, rl, c);
	if (k <= 0) {
		close(*rep);
		*rep = -1;
		feed_lines(rl, "", 0, c, 1);
		return 0;
	}
	feed_lines(rl, b, (size_t)k, c, 0);
	return 1;
}

/* Wait until no process of the killed group pid is left (at most
 * GONE_S): a process killed while it holds gigabytes (a compiler reading
 * /dev/zero) takes a while to exit, and the next check must not start
 * beside it. Members reparented to init as zombies end the wait too,
 * through the bound, when nothing reaps them. */
static void wait_gone(pid_t pid)
{
	double until = util_now() + GONE_S;
	while (kill(-pid, 0) == 0 && util_now() < until)
		util_sleep(0.01);
}

/* Kill the group: SIGTERM, then SIGKILL after GRACE_S unless the leader
 * is gone by then. Reaps the leader into *st when it was not yet, then
 * waits for the rest of the group to exit. */
static void kill_group(pid_t pid, int *reaped, int *st)
{
	kill(-pid, SIGTERM);
	double until = util_now() + GRACE_S;
	while (!*reaped && util_now() < until) {
		if (waitpid(pid, st, WNOHANG) == pid)
			*reaped = 1;
		else
			util_sleep(0.01);
	}
	kill(-pid, SIGKILL);
	if (!*reaped) {
		while (waitpid(pid, st, 0) < 0 && errno == EINTR)
			;
		*reaped = 1;
	}
	wait_gone(pid);
	util_proc_kill_tree(0);   /* what left the group: another session, a double fork */
}

int runner_proc_run(const struct runner_child *c, struct runner_exit *e)
{
	memset(e, 0, sizeof *e);
	e->status = 127 << 8;
	int out[2] = {-1, -1}, err[2] = {-1, -1}, rep[2] = {-1, -1};
	if ((!c->passthrough && (make_pipe(out) != 0 || make_pipe(err) != 0)) ||
	    (c->report && make_pipe(rep) != 0) || (wake[0] < 0 && make_pipe(wake) != 0)) {
		close_pipe(out);
		close_pipe(err);
		close_pipe(rep);
		return 1;
	}
	fcntl(wake[0], F_SETFL, O_NONBLOCK);
	fcntl(wake[1], F_SETFL, O_NONBLOCK);

	struct sigaction sa = {.sa_handler = on_signal}, old[3], ign = {.sa_handler = SIG_IGN}, old_pipe;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&ign.sa_mask);
	static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	/* A reader of our output that goes away (`| head`) must not kill the
	 * runner before it has killed its child. */
	sigaction(SIGPIPE, &ign, &old_pipe);

	/* Orphans among the child's descendants become ours, so that none
	 * outlives it (util/proc.h). */
	static int reaper;
	if (!reaper++)
		util_proc_subreaper();
	fflush(stdout);
	fflush(stderr);
	double t0 = util_now();
	pid_t parent = getpid();
	pid_t pid = stop_sig ? -1 : fork();
	if (pid == 0)
		child(c, out, err, rep, parent);
	if (pid > 0)
		setpgid(pid, pid);   /* also here, so a kill right away finds the group */
	close(out[1]);
	close(err[1]);
	close(rep[1]);
	out[1] = err[1] = rep[1] = -1;

	int st = 127 << 8, reaped = pid < 0;
	struct lines rl = {.len = 0};
	double drain_until = 0;
	e->started = pid > 0;
	while (pid > 0) {
		int w0 = c->watched && !reaped ? c->watch_fd[0] : -1;
		int w1 = c->watched && !reaped ? c->watch_fd[1] : -1;
		struct pollfd p[6] = {
			{.fd = out[0], .events = POLLIN}, {.fd = err[0], .events = POLLIN},
			{.fd = rep[0], .events = POLLIN}, {.fd = wake[0], .events = POLLIN},
			{.fd = w0, .events = POLLIN}, {.fd = w1, .events = POLLIN},
		};
		if (out[0] < 0 && err[0] < 0 && rep[0] < 0 && reaped)
			break;
		double now = util_now();
		if (reaped && drain_until && now > drain_until)
			break;   /* something outside the group holds a pipe */
		int r = poll(p, 6, 50);
		if (r > 0) {
			if (p[3].revents) {
				char junk[64];
				while (read(wake[0], junk, sizeof junk) > 0)
					;
			}
			if (p[0].revents)
				pump(&out[0], 1, &rl, c);
			if (p[1].revents)
				pump(&err[0], 2, &rl, c);
			if (p[2].revents)
				pump_report(&rep[0], &out[0], &err[0], &rl, c);
			for (int k = 4; k < 6 && !reaped; k++)
				if (p[k].fd >= 0 && p[k].revents && c->watched(c->watch_arg, p[k].fd)) {
					e->cancelled = 1;
					kill_group(pid, &reaped, &st);
					drain_until = util_now() + DRAIN_S;
					break;
				}
		}
		if (!reaped && waitpid(pid, &st, WNOHANG) == pid) {
			reaped = 1;
			kill(-pid, SIGKILL);   /* what it forked goes with it */
			util_proc_kill_tree(0);   /* and what left its group */
			drain_until = util_now() + DRAIN_S;
			continue;
		}
		if (reaped)
			continue;
		if (stop_sig) {
			e->stopped = 1;
			kill_group(pid, &reaped, &st);
			drain_until = util_now() + DRAIN_S;
		} else if (c->timeout_s > 0 && util_now() - t0 > c->timeout_s) {
			e->timed_out = 1;
			kill_group(pid, &reaped, &st);
			drain_until = util_now() + DRAIN_S;
		}
	}
	close_pipe(out);
	close_pipe(err);
	if (rep[0] >= 0)
		feed_lines(&rl, "", 0, c, 1);
	close_pipe(rep);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	e->seconds = util_now() - t0;
	e->status = st;
	if (stop_sig && !e->timed_out && e->started)
		e->stopped = 1;
	return e->started && !e->timed_out && !e->stopped && !e->cancelled && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0 ? 0 : 1;
}

const char *runner_proc_status(const struct runner_exit *e, char *buf, size_t n)
{
	if (!e->started)
		snprintf(buf, n, "could not be started");
	else if (e->timed_out)
		snprintf(buf, n, "timed out after %.0f s and was killed", e->seconds);
	else if (e->cancelled)
		snprintf(buf, n, "was stopped to start again");
	else if (e->stopped)
		snprintf(buf, n, "stopped (%s)", stop_sig == SIGINT ? "Ctrl-C" : strsignal(stop_sig));
	else if (WIFSIGNALED(e->status))
		snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(e->status), strsignal(WTERMSIG(e->status)));
	else
		snprintf(buf, n, "exited with status %d", WEXITSTATUS(e->status));
	return buf;
}

static void collect(void *arg, int fd, const char *bytes, size_t n)
{
	(void)fd;
	runner_text_add(arg, bytes, n);
}

int runner_proc_collect(const char *dir, char *const argv[], double timeout_s, char **text,
                        struct runner_exit *e)
{
	struct runner_text t;
	struct runner_exit mine;
	runner_text_init(&t, 48 * 1024, 16 * 1024);
	struct runner_child c = {.argv = argv, .dir = dir, .timeout_s = timeout_s, .out = collect, .arg = &t};
	int rc = runner_proc_run(&c, e ? e : &mine);
	*text = runner_text_str(&t);
	runner_text_free(&t);
	return rc;
}

struct to_fd {
	int fd;
};

static void to_fd(void *arg, int fd, const char *bytes, size_t n)
{
	struct to_fd *t = arg;
	if (fd != 1)
		return;
	while (n > 0) {
		ssize_t k = write(t->fd, bytes, n);
		if (k <= 0)
			return;
		bytes += k;
		n -= (size_t)k;
	}
}

int runner_proc_to_fd(const char *dir, char *const argv[], int out_fd, double timeout_s)
{
	struct to_fd t = {out_fd};
	struct runner_exit e;
	struct runner_child c = {.argv = argv, .dir = dir, .timeout_s = timeout_s, .out = to_fd, .arg = &t};
	runner_proc_run(&c, &e);
	return e.started && !e.timed_out && !e.stopped && WIFEXITED(e.status) ? WEXITSTATUS(e.status) : -1;
}
