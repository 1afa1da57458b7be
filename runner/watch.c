/*
 * runner_watch.c: inotify on the exercise directory, a check per save.
 * See runner_watch.h for the interface.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/inotify.h>
#include <termios.h>
#include <unistd.h>

#include "cli/runner_watch.h"

#define SETTLE_MS 150   /* editors save in bursts: write, rename, chmod */

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

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

/* Block until a save (1), the user quits (0), or an error (-1). */
static int wait_for_save(int fd, int keys)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = STDIN_FILENO, .events = POLLIN}};
		int r = poll(p, keys ? 2 : 1, -1);
		if (quit)
			return 0;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (keys && p[1].revents) {
			char c;
			ssize_t k = read(STDIN_FILENO, &c, 1);
			if (k == 1 && (c == 'q' || c == 'Q'))
				return 0;
			if (k <= 0)
				keys = 0;   /* stdin closed: only Ctrl-C quits now */
		}
		if (!p[0].revents)
			continue;
		int hit = drain(fd);
		if (hit < 0)
			return -1;
		if (!hit)
			continue;
		/* Let the burst settle so one save is one check. */
		while (poll(p, 1, SETTLE_MS) > 0 && !quit)
			if (drain(fd) < 0)
				return -1;
		return quit ? 0 : 1;
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
	struct termios saved;
	int tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	if (tty) {
		struct termios raw = saved;
		raw.c_lflag &= (tcflag_t)~(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term, old_hup;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	quit = 0;

	int rc = 1, clear = isatty(STDOUT_FILENO);
	for (int round = 1; ; round++) {
		if (clear)
			fputs("\033[H\033[2J", stdout);
		rc = runner_check_cmd(t, l, o);
		if (quit)
			break;
		printf("\n%s[watch %d] Watching %s/%s/: save a file to check again; %s.%s\n",
		       runner_c_dim(), round, side, l->name, tty ? "q quits" : "Ctrl-C quits", runner_c_off());
		fflush(stdout);
		int w = wait_for_save(fd, 1);
		if (w <= 0) {
			if (w < 0)
				fprintf(stderr, "hotrow lab watch: %s\n", strerror(errno));
			break;
		}
	}

	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	close(fd);
	printf("\n");
	return rc;
}
