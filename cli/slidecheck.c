/*
 * slidecheck.c: `hotrow slides --check`, the preflight an instructor runs
 * before the room arrives (see slides.h).
 *
 * Every command a deck would run on x runs here the same way: with this
 * shell's environment, from this directory, in a process group of its
 * own, under a time limit. The check is a child subreaper, so whatever a
 * command leaves running in the background (a server it started and never
 * stopped) comes back to it when the command ends: that is reported as a
 * problem and stopped, as the presenter stops it after a live run.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/presenter.h"
#include "cli/slides.h"
#include "engine/xmalloc.h"

#define OUTPUT_MAX (256 * 1024)   /* of a command's output, kept */


static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int slides_reap_orphans(char *names, size_t len)
{
	pid_t self = getpid(), pids[64];
	int n = 0;
	DIR *dir = opendir("/proc");

	if (names && len)
		names[0] = '\0';
	for (struct dirent *e; dir && (e = readdir(dir)) && n < 64; ) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char path[300], stat[512], comm[64] = "?";
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t got = fread(stat, 1, sizeof stat - 1, f);
		fclose(f);
		stat[got] = '\0';
		char *open = strchr(stat, '('), *close = strrchr(stat, ')');
		int ppid = 0;
		if (!open || !close || sscanf(close + 2, "%*c %d", &ppid) != 1 || ppid != self)
			continue;
		snprintf(comm, sizeof comm, "%.*s", (int)(close - open - 1), open + 1);
		pids[n++] = (pid_t)atoi(e->d_name);
		if (names && strlen(names) + strlen(comm) + 3 < len)
			snprintf(names + strlen(names), len - strlen(names), "%s%s",
			         names[0] ? ", " : "", comm);
	}
	if (dir)
		closedir(dir);
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	for (double end = now_s() + 3; n > 0; ) {    /* a server shuts down cleanly */
		int gone = 0;
		for (int i = 0; i < n; i++)
			gone += waitpid(pids[i], NULL, WNOHANG) != 0;
		if (gone == n)
			break;
		if (now_s() > end) {
			for (int i = 0; i < n; i++)
				if (kill(pids[i], SIGKILL) == 0)
					waitpid(pids[i], NULL, 0);
			break;
		}
		usleep(50 * 1000);
	}
	return n;
}

void slides_run(const char *cmd, int timeout_s, struct slides_outcome *o)
{
	int fd[2];
	memset(o, 0, sizeof *o);
	o->out = xcalloc(1, 1);
	o->status = -1;
	if (pipe(fd) < 0)
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return;
	}
	if (pid == 0) {
		setpgid(0, 0);
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(fd[1]);
	fcntl(fd[0], F_SETFL, O_NONBLOCK);
	size_t len = 0;
	double end = now_s() + timeout_s, drain = 0;
	bool exited = false;
	for (;;) {
		struct pollfd p = { fd[0], POLLIN, 0 };
		poll(&p, 1, 100);
		char buf[4096];
		ssize_t r;
		while ((r = read(fd[0], buf, sizeof buf)) > 0) {
			if (len + (size_t)r <= OUTPUT_MAX) {
				o->out = xrealloc(o->out, len + (size_t)r + 1);
				memcpy(o->out + len, buf, (size_t)r);
				len += (size_t)r;
				o->out[len] = '\0';
			}
		}
		if (r == 0)
			break;                 /* every writer closed the pipe */
		if (!exited && waitpid(pid, &o->status, WNOHANG) == pid) {
			exited = true;         /* a background child may hold the pipe */
			drain = now_s() + 0.5;
		}
		if (exited && now_s() > drain)
			break;
		if (!exited && now_s() > end) {
			o->timed_out = true;
			kill(-pid, SIGKILL);
			waitpid(pid, &o->status, 0);
			exited = true;
			break;
		}
	}
	close(fd[0]);
	if (!exited)
		waitpid(pid, &o->status, 0);
	kill(-pid, SIGKILL);          /* the rest of its group: the slide is over */
	slides_reap_orphans(o->left, sizeof o->left);
}

/* Does status match the exits the slide allows ("0" by default, or an
 * Exits: line's numbers)? */
static bool exit_ok(int status, const char *exits)
{
	if (status == -1 || !WIFEXITED(status))
		return false;
	if (!exits)
		return WEXITSTATUS(status) == 0;
	for (const char *p = exits; *p; p++)
		if (isdigit((unsigned char)*p) && (p == exits || !isdigit((unsigned char)p[-1])) &&
		    atoi(p) == WEXITSTATUS(status))
			return true;
	return false;
}

static void how(const struct slides_outcome *o, int timeout_s, char *out, size_t len)
{
	if (o->timed_out)
		snprintf(out, len, "did not finish in %d s (--timeout)", timeout_s);
	else if (o->status == -1)
		snprintf(out, len, "could not start a shell");
	else if (WIFSIGNALED(o->status))
		snprintf(out, len, "killed by SIG%s", sigabbrev_np(WTERMSIG(o->status)) ?
		         sigabbrev_np(WTERMSIG(o->status)) : "?");
	else
		snprintf(out, len, "exit %d", WEXITSTATUS(o->status));
}

/* The last non-blank line of out, for a report. */
static void last_line(const char *out, char *line, size_t len)
{
	const char *end = out + strlen(out);
	while (end > out && isspace((unsigned char)end[-1]))
		end--;
	const char *start = end;
	while (start > out && start[-1] != '\n')
		start--;
	snprintf(line, len, "%.*s", (int)(end - start), start);
}

struct tally {
	int problems, commands, skipped;
};

static void problem(struct tally *t, int slide, const char *title, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void problem(struct tally *t, int slide, const char *title, const char *fmt, ...)
{
	va_list ap;
	printf("slide %d (%s): ", slide, title);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	t->problems++;
}

/* Each ';'-separated piece of an Expect: line is an extended regular
 * expression that must match a line of out. */
static void expect(struct tally *t, int slide, const char *title, const char *words,
                   const char *out, const char *what)
{
	for (const char *p = words; p && *p; ) {
		size_t n = strcspn(p, ";");
		char piece[200];
		const char *a = p;
		while (a < p + n && *a == ' ')
			a++;
		size_t m = (size_t)(p + n - a);
		while (m > 0 && a[m - 1] == ' ')
			m--;
		snprintf(piece, sizeof piece, "%.*s", (int)m, a);
		p += n + (p[n] == ';');
		if (!*piece)
			continue;
		regex_t re;
		if (regcomp(&re, piece, REG_EXTENDED | REG_NEWLINE | REG_NOSUB) != 0) {
			problem(t, slide, title, "Expect: \"%s\" is not a regular expression", piece);
			continue;
		}
		if (regexec(&re, out, 0, NULL, 0) != 0)
			problem(t, slide, title, "the %s no longer prints /%s/ (Expect:)", what, piece);
		regfree(&re);
	}
}

char *slides_headless(const char *cmd, int w, int h)
{
	size_t len = strlen(cmd) + 64;
	char *full = xmalloc(len);
	if ((strstr(cmd, "hotrow tui") || strstr(cmd, "hotrow demo")) && !strpbrk(cmd, "|;&"))
		snprintf(full, len, "%s --dump --size %dx%d", cmd, w, h);
	else
		snprintf(full, len, "%s", cmd);
	return full;
}

bool slides_engine_only(const char *cmd)
{
	return (strstr(cmd, "hotrow sim") || strstr(cmd, "hotrow tui") ||
	        strstr(cmd, "hotrow demo")) && !strstr(cmd, "lab ");
}

/* What the presenter shows of a reveal's output: its first
 * PRESENTER_REVEAL_LINES lines. Caller frees. */
static char *clip(const char *out)
{
	const char *p = out;
	for (int lines = 0; *p && lines < PRESENTER_REVEAL_LINES; lines++)
		p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n');
	char *c = xmalloc((size_t)(p - out) + 1);
	memcpy(c, out, (size_t)(p - out));
	c[p - out] = '\0';
	return c;
}

static void check_embed(struct tally *t, int i, const char *title, const char *spec,
                        const struct slides_check_opts *o)
{
	double secs;
	int rc = 0, fw = o->w - 2, fh = o->h - 3;
	char *frame = presenter_embed_frame(spec, 0, fw, fh, o->ascii, &secs, &rc);
	if (!frame) {
		problem(t, i + 1, title, "Embed: %s has no SECONDS first", spec);
		return;
	}
	free(frame);
	frame = presenter_embed_frame(spec, secs, fw, fh, o->ascii, &secs, &rc);
	t->commands++;
	if (rc != 0) {
		char line[200];
		last_line(frame, line, sizeof line);
		problem(t, i + 1, title, "Embed: %s fails: %s", spec, line);
	}
	int rows = 0, wide = 0, high = 0;
	for (const char *p = frame; *p; rows++) {
		size_t n = strcspn(p, "\n");
		char *line = xmalloc(n + 1);
		memcpy(line, p, n);
		line[n] = '\0';
		wide += tui_text_width(line) > (fw < 80 ? 80 : fw);
		for (const char *c = line; o->ascii && *c; c++)
			high += (unsigned char)*c >= 0x80;
		free(line);
		p += n + (p[n] == '\n');
	}
	if (rows > o->h - 2)
		problem(t, i + 1, title, "Embed: %d of its %d lines fall below a %d-line screen",
		        rows - (o->h - 2), rows, o->h);
	if (wide)
		problem(t, i + 1, title, "Embed: %d lines wider than the screen's %d columns "
		        "(the engine's screen needs 80)", wide, o->w);
	if (high)
		problem(t, i + 1, title, "Embed: %d bytes that are not ASCII on a terminal "
		        "without UTF-8", high);
	free(frame);
}

static void check_layout(struct tally *t, int i, const char *title, const struct tui_deck *d,
                         const char *answer, const struct slides_check_opts *o)
{
	struct slides_screen s;
	slides_compose(d, i, o->w, o->h, 0, answer, o->ascii, &s);
	if (s.cut)
		problem(t, i + 1, title, "%d line%s cut at the right edge%s", s.cut,
		        s.cut == 1 ? "" : "s", answer ? " with the answer shown" : "");
	if (s.dropped)
		problem(t, i + 1, title, "%d line%s below the screen's last row%s", s.dropped,
		        s.dropped == 1 ? "" : "s", answer ? " with the answer shown" : "");
	slides_screen_free(&s);
}

int slides_check(const char *path, const struct slides_check_opts *o)
{
	char err[PATH_MAX + 128];
	struct tui_deck *d = tui_deck_load(path, err, sizeof err);
	struct tally t = {0};

	if (!d) {
		fprintf(stderr, "hotrow slides: %s\n", err);
		return 2;
	}
	if (o->ascii)
		tui_deck_ascii(d);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	printf("checking %s: %d slides at %dx%d, %s, %s\n", path, tui_deck_count(d), o->w, o->h,
	       o->ascii ? "ASCII (no UTF-8 locale)" : "UTF-8",
	       getenv("HOTROW_PG_URL") && *getenv("HOTROW_PG_URL") ? "with HOTROW_PG_URL"
	       : "without PostgreSQL (HOTROW_PG_URL unset)");
	for (int i = 0; i < tui_deck_count(d); i++) {
		struct tui_slide_text s;
		char title[80], line[240], ended[80];
		tui_deck_layout(d, i, 1000, 0, &s);
		snprintf(title, sizeof title, "%s", s.nlines ? s.lines[0] : "");
		check_layout(&t, i, title, d, NULL, o);
		if (s.reveal) {
			struct slides_outcome r;
			slides_run(s.reveal, o->timeout_s, &r);
			t.commands++;
			if (!exit_ok(r.status, NULL)) {
				how(&r, o->timeout_s, ended, sizeof ended);
				last_line(r.out, line, sizeof line);
				problem(&t, i + 1, title, "Reveal: %s: %s", ended, line);
			} else if (!*r.out) {
				problem(&t, i + 1, title, "Reveal: printed nothing (a grep that no "
				        "longer matches?)");
			}
			if (r.left[0])
				problem(&t, i + 1, title, "Reveal: left running: %s (stopped)", r.left);
			char *shown = clip(r.out);
			check_layout(&t, i, title, d, shown, o);
			free(shown);
			if (s.expect)
				expect(&t, i + 1, title, s.expect, r.out, "Reveal:");
			free(r.out);
		}
		if (s.embed)
			check_embed(&t, i, title, s.embed, o);
		if (s.run) {
			const char *exits = s.exits;
			if (o->quick && !slides_engine_only(s.run)) {
				t.skipped++;
			} else {
				struct slides_outcome r;
				char *cmd = slides_headless(s.run, o->w, o->h);
				slides_run(cmd, o->timeout_s, &r);
				t.commands++;
				if (!exit_ok(r.status, exits)) {
					how(&r, o->timeout_s, ended, sizeof ended);
					last_line(r.out, line, sizeof line);
					problem(&t, i + 1, title, "Run: %s: %s", ended, line);
				}
				if (r.left[0])
					problem(&t, i + 1, title, "Run: left running: %s (stopped)", r.left);
				if (strstr(r.out, "needs PostgreSQL: skipped"))
					printf("slide %d (%s): Run: needs PostgreSQL: skipped\n", i + 1, title);
				if (s.expect && !s.reveal)
					expect(&t, i + 1, title, s.expect, r.out, "Run:");
				free(r.out);
				free(cmd);
			}
		}
		tui_slide_text_free(&s);
	}
	printf("%d commands run; %d problem%s\n", t.commands, t.problems,
	       t.problems == 1 ? "" : "s");
	if (t.skipped)
		printf("(--quick: %d Run: lines that are not the engine's were not run)\n", t.skipped);
	tui_deck_free(d);
	return t.problems ? 1 : 0;
}
