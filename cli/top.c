/*
 * cli/top.c: `hotrow top`, a real PostgreSQL's or MariaDB's lock queues, live.
 *
 * Samples the server every --interval-ms (top/sample.h) and draws each
 * sample in the TUI's look (top/draw.h). --dump samples for --after
 * seconds and prints the last frame as text instead of taking the
 * terminal. The terminal is the TUI's (tui/term.h): restored on q, on
 * Ctrl-C, on a crash and at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ncurses.h>

#include "cli/cmd.h"
#include "top/draw.h"
#include "top/sample.h"
#include "tui/screen.h"
#include "tui/term.h"
#include "util/clock.h"
#include "util/opt.h"
#include "util/proc.h"

struct opts {
	const char *url;
	int interval_ms;
	bool dump, ascii, colour;
	double after_s;
	struct cli_size size;       /* --dump: the frame's */
};

static const char help_header[] =
	"\n"
	"Watch a real PostgreSQL's row locks, live: one lane per row that has\n"
	"waiters (its holder, the line behind it in queue order), the client\n"
	"connections by state, commits and lock waits per second, the statements\n"
	"that take the most time (pg_stat_statements), and what the watching\n"
	"itself costs the server. q quits, Space pauses, + and - change the\n"
	"sampling interval. When the server restarts, top says it is gone and\n"
	"connects again once a second. Its own queries run in one read-only\n"
	"transaction, so they do not count as commits. Run it as a role with\n"
	"pg_monitor, not as a superuser: it never needs more.\n"
	"\n"
	"On MariaDB (--db mysql://...) the lanes come from InnoDB's own tables,\n"
	"information_schema.INNODB_TRX, INNODB_LOCKS and INNODB_LOCK_WAITS, read\n"
	"as the URL's user (it needs the PROCESS privilege), a row named by its\n"
	"index and key; the rates are Handler_commit and Handler_rollback, and\n"
	"there is no statement list. InnoDB renews those tables at most every\n"
	"0.1 s, so sampling faster than that shows the same picture again.\n"
	"\n";

static int bad(const char *opt, const char *accepts)
{
	fprintf(stderr, "hotrow top: %s accepts %s\n", opt, accepts);
	return 2;
}

/* Returns -1 to go on, else the exit code. */
static int parse(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof *o);
	o->url = getenv("HOTROW_PG_URL");
	o->interval_ms = 200;
	o->after_s = 1.2;
	o->size = (struct cli_size){ 120, 40, 40, 10 };
	bool no_colour = false;
	const struct opt rows[] = {
		{ .name = "db", .arg = "URL", .kind = OPT_STRING, .dest = &o->url,
		  .accepts = "a PostgreSQL or MariaDB URL, e.g. \"$(scripts/pg up)\"",
		  .help = "the server (default: $HOTROW_PG_URL); a libpq URL\n"
		          "or conninfo, e.g. \"$(scripts/pg up)\", or a mysql://\n"
		          "URL, e.g. \"$(scripts/mysql up)\"" },
		{ .name = "interval-ms", .arg = "N", .kind = OPT_INT, .dest = &o->interval_ms,
		  .min = 20, .max = 10000, .accepts = "milliseconds from 20 to 10000",
		  .help = "sample every N ms, 20 to 10000 (200)" },
		{ .name = "dump", .kind = OPT_FLAG, .dest = &o->dump,
		  .help = "print one frame as text instead (no terminal)" },
		{ .name = "after", .arg = "SECONDS", .kind = OPT_DOUBLE, .dest = &o->after_s,
		  .min = 0, .max = 600, .accepts = "seconds from 0 to 600",
		  .help = "with --dump: sample this long first, so the rates\n"
		          "cover a second; 0 takes one sample (1.2); the server\n"
		          "going and coming back meanwhile is said on stderr" },
		{ .name = "size", .arg = "WxH", .kind = OPT_CUSTOM, .dest = &o->size,
		  .fn = cli_size_opt, .accepts = "WxH, e.g. 120x40 (40 to 1000 wide, 10 to 1000 high)",
		  .help = "with --dump: the frame's size (120x40)" },
		CLI_SCREEN_ROWS(&o->ascii, &no_colour),
	};
	const struct opt_table table = { .rows = rows, .n = sizeof rows / sizeof rows[0] };
	const struct opt_cmd cmd = { .name = "hotrow top", .usage = "[--db URL] [options]",
	                             .header = help_header, .tables = &table, .ntables = 1 };
	int rc = opt_parse(&cmd, argc, argv, NULL);
	if (rc != OPT_OK)
		return rc == OPT_HELP ? 0 : 2;
	o->colour = cli_colour(no_colour);
	if (o->url && !strncmp(o->url, "sqlite:", 7))
		return bad("--db", "a PostgreSQL or MariaDB URL: SQLite has no lock queues to watch");
	if (o->url == NULL || !*o->url)
		return bad("--db", "a PostgreSQL or MariaDB URL; none given and HOTROW_PG_URL is not set "
		           "(try: export HOTROW_PG_URL=$(scripts/pg up))");
	return -1;
}

static void sleep_ms(double ms)
{
	util_sleep(ms / 1000);
}

static double now_ms(void)
{
	return util_now() * 1000;
}

static int dump(struct top_sampler *ts, const struct opts *o)
{
	struct top_sample *s = malloc(sizeof *s);
	if (!s) {
		fprintf(stderr, "hotrow top: out of memory\n");
		return 1;
	}
	double end = now_ms() + o->after_s * 1000;
	int rc;
	bool gone = false;
	for (;;) {
		double t = now_ms();
		rc = top_sampler_take(ts, s);
		/* the server going and coming back, said as it happens */
		if (s->gone_s >= 0 && !gone)
			fprintf(stderr, "hotrow top: %s\n", top_sampler_error(ts));
		else if (s->gone_s < 0 && gone)
			fprintf(stderr, "hotrow top: the server is back (connected again)\n");
		gone = s->gone_s >= 0;
		if (t + o->interval_ms > end)
			break;
		sleep_ms(o->interval_ms - (now_ms() - t));
	}
	struct top_view v = { .interval_ms = o->interval_ms, .ascii = o->ascii,
	                      .error = rc ? top_sampler_error(ts) : NULL };
	struct tui_screen *scr = tui_screen_new(o->size.w, o->size.h);
	top_draw(scr, &v, s);
	tui_screen_dump(scr, stdout);
	tui_screen_free(scr);
	free(s);
	if (rc)
		fprintf(stderr, "hotrow top: %s\n", top_sampler_error(ts));
	return rc ? 1 : 0;
}

/* Whether the driver beside the screen (child > 0) has exited; its exit
 * code goes to *status. */
static bool child_done(pid_t child, int *status)
{
	int st;
	if (child <= 0 || waitpid(child, &st, WNOHANG) != child)
		return false;
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return true;
}

/* The live screen until q, a signal, or (child > 0) the child's exit.
 * Returns 0, or the child's exit code when there is one. */
static int live(struct top_sampler *ts, struct opts *o, pid_t child)
{
	struct top_sample *s = malloc(sizeof *s);
	if (!s || tui_term_start(o->colour) < 0) {
		free(s);
		fprintf(stderr, "hotrow top: cannot set up the terminal (TERM=%s)%s\n",
		        getenv("TERM") ? getenv("TERM") : "unset", child > 0 ? "; the driver is stopped" : "");
		return 1;
	}
	int w, h;
	tui_term_size(&w, &h);
	struct tui_screen *scr = tui_screen_new(w > 0 ? w : 1, h > 0 ? h : 1);
	struct top_view v = { .interval_ms = o->interval_ms, .ascii = o->ascii };
	char err[512] = "";
	bool quit = false, have = false;
	int status = 0;

	while (!quit && !tui_term_quit_requested()) {
		if (child_done(child, &status)) {
			child = 0;
			break;
		}
		double t0 = now_ms();
		if (!v.paused || !have) {
			int rc = top_sampler_take(ts, s);
			snprintf(err, sizeof err, "%s", rc ? top_sampler_error(ts) : "");
			have = true;
		}
		v.error = err[0] ? err : NULL;
		tui_term_size(&w, &h);
		if (w > 0 && h > 0 && (w != scr->w || h != scr->h)) {
			tui_screen_resize(scr, w, h);
			clearok(curscr, TRUE);
		}
		top_draw(scr, &v, s);
		tui_screen_blit(scr);
		doupdate();
		for (;;) {
			int left = (int)(v.interval_ms - (now_ms() - t0));
			int k = tui_term_key(left > 0 ? left : 0);
			if (k < 0)
				break;
			if (k == 'q' || k == 'Q' || k == 27)
				quit = true;
			else if (k == ' ')
				v.paused = !v.paused;
			else if ((k == '+' || k == '=') && v.interval_ms < 10000)
				v.interval_ms = v.interval_ms * 2 > 10000 ? 10000 : v.interval_ms * 2;
			else if (k == '-' && v.interval_ms > 20)
				v.interval_ms = v.interval_ms / 2 < 20 ? 20 : v.interval_ms / 2;
			if (quit || k != KEY_RESIZE)
				break;
		}
	}
	tui_screen_free(scr);
	tui_term_stop();
	free(s);
	if (child > 0) {                  /* quit before the driver finished */
		util_proc_end(child, NULL);
		status = 130;
	}
	return status;
}

int cmd_top(int argc, char **argv)
{
	struct opts o;
	char err[1024];
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (!o.dump && !(isatty(STDOUT_FILENO) && isatty(STDIN_FILENO))) {
		fprintf(stderr, "hotrow top: stdout is not a terminal; use --dump for one frame as text\n");
		return 2;
	}
	setlocale(LC_ALL, "");
	if (!o.dump && strcmp(nl_langinfo(CODESET), "UTF-8"))
		o.ascii = true;
	struct top_sampler *ts;
	if (top_sampler_open(&ts, o.url, err, sizeof err) != 0) {
		fprintf(stderr, "hotrow top: %s\n", err);
		return 1;
	}
	rc = o.dump ? dump(ts, &o) : live(ts, &o, 0);
	top_sampler_close(ts);
	return rc;
}

int cmd_top_beside(char *const *argv, const char *url, const char *log_path)
{
	struct opts o = { .url = url, .interval_ms = 200, .size = { 120, 40, 40, 10 } };
	char err[1024];
	struct top_sampler *ts;

	o.colour = getenv("NO_COLOR") == NULL || !*getenv("NO_COLOR");
	setlocale(LC_ALL, "");
	o.ascii = strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
	if (top_sampler_open(&ts, url, err, sizeof err) != 0) {
		fprintf(stderr, "hotrow lab run --top: %s\n", err);
		return 1;
	}
	fflush(stdout);
	/* The driver: its own group, output to the log; it and everything it
	 * starts end with this screen, however the screen ends. */
	int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	util_proc_subreaper();
	pid_t child = fd < 0 ? -1 : util_proc_spawn(argv, fd);
	if (fd >= 0)
		close(fd);
	if (child < 0) {
		fprintf(stderr, "hotrow lab run --top: cannot start the driver: %s\n", strerror(errno));
		top_sampler_close(ts);
		return 1;
	}
	int rc = live(ts, &o, child);
	util_proc_end(child, NULL);   /* the screen could not start, or it ended first */
	top_sampler_close(ts);
	FILE *f = fopen(log_path, "r");
	if (f) {
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof buf, f)) > 0)
			fwrite(buf, 1, n, stdout);
		fclose(f);
	}
	printf("\n(the driver's output, also in %s)\n", log_path);
	return rc;
}
