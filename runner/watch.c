/*
 * watch.c: inotify on the exercise directory, a check per save.
 * See watch.h for the interface.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/inotify.h>
#include <termios.h>
#include <unistd.h>

#include "runner/proc.h"
#include "runner/watch.h"
#include "runner/show.h"

#define SETTLE_MS 150   /* editors save in bursts: write, rename, chmod */

/* The terminal as it was, put back on every way out, crashes included. */
static struct termios saved;
static volatile sig_atomic_t tty;

static void restore_tty(void)
{
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
}

/* A crash (SEGV, QUIT, ABRT, ...): the terminal first, then the default
 * action of the signal, which the handler was reset to. */
static void on_crash(int sig)
{
	restore_tty();
	raise(sig);
}

/* What the watcher saw while a check ran. */
struct seen {
	int inotify;
	int keys;       /* stdin is still worth reading */
	int quit;       /* q pressed */
	int saved;      /* a source file changed */
};

/* Did this batch of events touch a source file (not a swap or backup)? */
static int touched_source(const char *buf, ssize_t len)
{
	int hit = 0;
	for (const char *p = buf; p < buf + len; ) {
		const struct inotify_event *e = (const struct inotify_event *)p;
		if (e->len) {
			size_t n = strlen(e->name);
			if (e->name[0] != '.' && n > 2 && e->name[n - 2] == '.' &&
			    (e->name[n - 1] == 'c' || e->name[n - 1] == 'h'))
				hit = 1;
		}
		p += sizeof *e + e->len;
	}
	return hit;
}

/* Read what is queued; 1 if a source file changed, 0 if not, -1 on error. */
static int drain(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int hit = 0;
	for (;;) {
		ssize_t len = read(fd, buf, sizeof buf);
		if (len < 0)
			return errno == EAGAIN || errno == EINTR ? hit : -1;
		if (len == 0)
			return hit;
		hit |= touched_source(buf, len);
	}
}

/* A key on stdin: 1 for q, 0 otherwise (stdin closed: stop reading it). */
static int read_key(struct seen *w)
{
	char c;
	ssize_t k = read(STDIN_FILENO, &c, 1);
	if (k <= 0 && !(k < 0 && (errno == EINTR || errno == EAGAIN)))
		w->keys = 0;   /* stdin closed: only Ctrl-C quits now */
	return k == 1 && (c == 'q' || c == 'Q');
}

/* While a check runs: q or a save stops it (the runner kills its group). */
static int watched(void *arg, int fd)
{
	struct seen *w = arg;
	if (fd == STDIN_FILENO) {
		if (w->keys && read_key(w))
			return w->quit = 1;
		return 0;
	}
	int hit = drain(fd);
	if (hit > 0)
		w->saved = 1;
	return hit > 0;
}

/* Block until a save (1), the user quits (0), or an error (-1). */
static int wait_for_save(struct seen *w)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = w->inotify, .events = POLLIN},
				      {.fd = w->keys ? STDIN_FILENO : -1, .events = POLLIN}};
		int r = poll(p, 2, 200);
		if (runner_proc_stopping())
			return 0;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[1].revents && read_key(w))
			return 0;
		if (!p[0].revents)
			continue;
		int hit = drain(w->inotify);
		if (hit < 0)
			return -1;
		if (!hit)
			continue;
		/* Let the burst settle so one save is one check. */
		while (poll(p, 1, SETTLE_MS) > 0 && !runner_proc_stopping())
			if (drain(w->inotify) < 0)
				return -1;
		return runner_proc_stopping() ? 0 : 1;
	}
}

int runner_watch(const struct runner_tree *t, const struct runner_lab *l, const struct runner_opts *o)
{
	const char *side = o->solutions ? "solutions" : "exercises";
	char dir[PATH_MAX];
	if (runner_path(t, dir, sizeof dir, "%s/%s", side, l->name) != 0)
		return 1;
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE |
					IN_DELETE | IN_MOVED_FROM) < 0) {
		fprintf(stderr, "hotrow lab watch: cannot watch %s/%s/: %s\n", side, l->name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}

	/* Keys without Enter and without echo; put back on every way out. */
	tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	if (tty) {
		struct termios raw = saved;
		raw.c_lflag &= (tcflag_t)~(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	static const int crashes[] = {SIGSEGV, SIGQUIT, SIGABRT, SIGBUS, SIGFPE, SIGILL};
	struct sigaction crash = {.sa_handler = on_crash, .sa_flags = SA_RESETHAND};
	sigemptyset(&crash.sa_mask);
	for (size_t i = 0; i < sizeof crashes / sizeof crashes[0]; i++)
		sigaction(crashes[i], &crash, NULL);
	struct sigaction sa = {.sa_handler = runner_proc_stop}, old_int, old_term, old_hup;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);

	struct seen w = {.inotify = fd, .keys = 1};
	struct runner_opts mine = *o;
	mine.watch_fd[0] = STDIN_FILENO;
	mine.watch_fd[1] = fd;
	mine.watched = watched;
	mine.watch_arg = &w;
	int rc = 1, clear = isatty(STDOUT_FILENO);
	for (int round = 1; ; round++) {
		if (clear)
			fputs("\033[H\033[2J", stdout);
		w.saved = 0;
		if (!w.keys)
			mine.watch_fd[0] = -1;
		rc = runner_check_cmd(t, l, &mine);
		if (w.quit || runner_proc_stopping())
			break;
		if (w.saved) {
			/* Saved while checking: let the burst settle, then again. */
			struct pollfd p = {.fd = fd, .events = POLLIN};
			while (poll(&p, 1, SETTLE_MS) > 0 && drain(fd) >= 0)
				;
			continue;
		}
		printf("\n%s[watch %d] Watching %s/%s/: save a file to check again; %s.%s\n",
		       runner_c_dim(), round, side, l->name, tty ? "q quits" : "Ctrl-C quits", runner_c_off());
		fflush(stdout);
		int k = wait_for_save(&w);
		if (k <= 0) {
			if (k < 0)
				fprintf(stderr, "hotrow lab watch: %s\n", strerror(errno));
			break;
		}
	}

	restore_tty();
	tty = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	close(fd);
	printf("\n");
	if (runner_proc_stopping())
		return 130;
	return rc == 3 ? 0 : rc;
}
