/*
 * room.c: `hotrow class status`, `status --watch` and `grade`: the room
 * as the instructor sees it, read from hotrow_class (see class.h). Only
 * the catalogs and hotrow_class are read, never a student's schema: a
 * student whose role or schema is missing is named as such, and the room
 * is still shown.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "class/class.h"
#include "class/class_impl.h"
#include "kit/db.h"
#include "util/file.h"
#include "util/json.h"

#define MAX_LABS 32
#define SAME_RUNS_STUCK 3      /* the same failing result this many runs in a row */

struct cell {
	int passed, total, runs, same_runs;   /* self-reported; runs 0: never */
	long age_s, progress_s;               /* since the last run, since passed went up */
	int g_passed, g_total;                /* graded; g_total < 0: never */
	char note[160];                       /* the grading's one line */
};

struct student {
	char name[CLASS_NAME_MAX + 1];
	char broken[80];        /* "" or what is missing */
	struct cell c[MAX_LABS];
};

struct room {
	struct student *s;
	size_t n, cap;
	char labs[MAX_LABS][64];     /* every lab of the kit, sorted */
	int max[MAX_LABS];
	int nlabs;
};

static int add_lab(void *arg, int ncols, const char *const *v)
{
	struct room *room = arg;
	(void)ncols;
	if (room->nlabs == MAX_LABS)
		return 0;
	snprintf(room->labs[room->nlabs], sizeof room->labs[0], "%s", v[0]);
	room->max[room->nlabs++] = atoi(v[1]);
	return 0;
}

static int add_student(void *arg, int ncols, const char *const *v)
{
	struct room *room = arg;
	(void)ncols;
	if (room->n == room->cap) {
		room->cap = room->cap ? 2 * room->cap : 32;
		void *p = realloc(room->s, room->cap * sizeof *room->s);
		if (!p)
			return 1;
		room->s = p;
	}
	struct student *s = &room->s[room->n++];
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%s", v[0]);
	if (v[1][0] != 't' || v[2][0] != 't')
		snprintf(s->broken, sizeof s->broken, "its %s %s is missing",
		         v[1][0] != 't' ? "role" : "schema", v[3]);
	for (int j = 0; j < MAX_LABS; j++)
		s->c[j].g_total = -1;
	return 0;
}

static struct cell *cell(struct room *room, const char *name, const char *lab)
{
	for (size_t i = 0; i < room->n; i++) {
		if (strcmp(room->s[i].name, name))
			continue;
		for (int j = 0; j < room->nlabs; j++)
			if (!strcmp(room->labs[j], lab))
				return &room->s[i].c[j];
	}
	return NULL;
}

static int add_result(void *arg, int ncols, const char *const *v)
{
	struct cell *c = cell(arg, v[0], v[1]);
	(void)ncols;
	if (c) {
		c->passed = atoi(v[2]), c->total = atoi(v[3]);
		c->runs = atoi(v[4]), c->same_runs = atoi(v[5]);
		c->age_s = atol(v[6]), c->progress_s = atol(v[7]);
	}
	return 0;
}

static int add_graded(void *arg, int ncols, const char *const *v)
{
	struct cell *c = cell(arg, v[0], v[1]);
	(void)ncols;
	if (c) {
		c->g_passed = atoi(v[2]), c->g_total = atoi(v[3]);
		snprintf(c->note, sizeof c->note, "%s", v[4]);
	}
	return 0;
}

/* Every student, every lab, what was reported and graded; 0, or 1 (said). */
static int read_room(struct kit_db *db, struct room *room)
{
	room->n = 0;
	room->nlabs = 0;
	if (kit_db_query(db, "SELECT name, max_score FROM hotrow_class.labs ORDER BY name",
	                 0, NULL, add_lab, room) != 0 ||
	    kit_db_query(db, "SELECT s.name, r.oid IS NOT NULL, n.oid IS NOT NULL, s.role"
	                 " FROM hotrow_class.students s"
	                 " LEFT JOIN pg_catalog.pg_roles r ON r.rolname = s.role"
	                 " LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = s.role"
	                 " ORDER BY s.name", 0, NULL, add_student, room) != 0)
		return class_fail(db, "cannot read hotrow_class (has `hotrow class init` run here?)");
	if (kit_db_query(db, "SELECT student, lab, passed, total, runs, same_runs,"
	                 " pg_catalog.date_part('epoch', pg_catalog.now() - at)::bigint,"
	                 " pg_catalog.date_part('epoch', pg_catalog.now() - progress_at)::bigint"
	                 " FROM hotrow_class.results", 0, NULL, add_result, room) != 0 ||
	    kit_db_query(db, "SELECT student, lab, passed, total, note FROM hotrow_class.graded",
	                 0, NULL, add_graded, room) != 0)
		return class_fail(db, "cannot read hotrow_class.results");
	return 0;
}

static void ago(long s, char *out, size_t len)
{
	if (s < 0)
		snprintf(out, len, "never");
	else if (s < 60)
		snprintf(out, len, "%lds ago", s);
	else if (s < 3600)
		snprintf(out, len, "%ld min ago", s / 60);
	else
		snprintf(out, len, "%ldh%02ld ago", s / 3600, s / 60 % 60);
}

/* The lab the student ran last, or -1. */
static int last_lab(const struct room *room, const struct student *s)
{
	int last = -1;
	for (int j = 0; j < room->nlabs; j++)
		if (s->c[j].runs && (last < 0 || s->c[j].age_s < s->c[last].age_s))
			last = j;
	return last;
}

/* Why the student looks stuck, into why; 0 when they do not. Stuck: the
 * lab they work on now has not gained a check for stuck_min minutes, or
 * its last runs gave the same failing result. */
static int stuck(const struct room *room, const struct student *s, int stuck_min,
                 char *why, size_t len)
{
	int j = last_lab(room, s);
	if (j < 0 || s->c[j].passed >= s->c[j].total)
		return 0;
	const struct cell *c = &s->c[j];
	if (c->same_runs >= SAME_RUNS_STUCK)
		snprintf(why, len, "stuck: %d runs of %s in a row at %d/%d", c->same_runs,
		         room->labs[j], c->passed, c->total);
	else if (c->progress_s >= (long)stuck_min * 60)
		snprintf(why, len, "stuck: no new check passing in %s for %ld min", room->labs[j],
		         c->progress_s / 60);
	else
		return 0;
	return 1;
}

/* The table, to out; hl: highlight stuck students (a terminal). */
static void print_room(FILE *out, const struct room *room, const struct class_opts *o, int hl)
{
	int w = 7;
	for (size_t i = 0; i < room->n; i++)
		if ((int)strlen(room->s[i].name) > w)
			w = (int)strlen(room->s[i].name);
	fprintf(out, "%-*s", w, "student");
	for (int j = 0; j < room->nlabs; j++)
		fprintf(out, "  %-11.11s", room->labs[j]);
	fprintf(out, "  last check\n");
	int nstuck = 0, nbroken = 0;
	for (size_t i = 0; i < room->n; i++) {
		const struct student *s = &room->s[i];
		char why[160] = "";
		int st = !s->broken[0] && stuck(room, s, o->stuck_min, why, sizeof why);
		nstuck += st;
		nbroken += s->broken[0] != 0;
		fprintf(out, "%s%-*s", st && hl ? "\033[7m" : "", w, s->name);
		long idle = -1;
		for (int j = 0; j < room->nlabs; j++) {
			const struct cell *c = &s->c[j];
			char text[40] = "-";
			if (c->runs)
				snprintf(text, sizeof text, "%d/%d", c->passed, c->total);
			if (c->g_total >= 0)
				snprintf(text + strlen(text), sizeof text - strlen(text), " g%d", c->g_passed);
			fprintf(out, "  %-11.11s", text);
			if (c->runs && (idle < 0 || c->age_s < idle))
				idle = c->age_s;
		}
		char when[32];
		ago(idle, when, sizeof when);
		fprintf(out, "  %s%s%s%s%s\n", when, s->broken[0] || why[0] ? "  " : "",
		        s->broken[0] ? "cannot be graded: " : "", s->broken[0] ? s->broken : why,
		        st && hl ? "\033[0m" : "");
	}
	fprintf(out, "%zu student(s)", room->n);
	if (nstuck)
		fprintf(out, ", %d stuck", nstuck);
	if (nbroken)
		fprintf(out, ", %d whose place is broken", nbroken);
	fprintf(out, ". A cell: P/T is what the student's own last check reported "
	        "(self-reported, not a score); gN: N checks passed when `class grade "
	        "--rebuild` checked their submission\n");
}

int class_status(const struct class_opts *o)
{
	return class_watch(o, 1);
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* The terminal as it was: cursor shown, attributes reset, line mode. */
static struct termios saved_tty;
static int tty_saved;

static void restore_tty(void)
{
	if (tty_saved) {
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
		tty_saved = 0;
		fputs("\033[0m\033[?25h", stdout);
		fflush(stdout);
	}
}

/* Wait up to ms for q on the terminal; 1 when it came. */
static int quit_key(int ms)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	if (poll(&p, 1, ms) <= 0)
		return 0;
	char c;
	return read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q' || c == 3);
}

int class_watch(const struct class_opts *o, int frames)
{
	struct kit_db *db;
	struct room room = {0};
	if (class_open_admin(o, &db) != 0)
		return 1;
	int live = frames == 0, rc = 0;
	int hl = isatty(STDOUT_FILENO) && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
	if (live) {
		if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
			fprintf(stderr, "hotrow class: --watch needs a terminal; --frames N prints N tables\n");
			kit_db_close(db);
			return 2;
		}
		struct termios raw;
		tcgetattr(STDIN_FILENO, &saved_tty);
		raw = saved_tty;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		tty_saved = 1;
		atexit(restore_tty);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
		struct sigaction sa = { .sa_handler = on_signal };
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		fputs("\033[?25l", stdout);
	}
	for (int f = 0; (live || f < frames) && !stop_signal; f++) {
		if (f > 0 && !live)
			sleep((unsigned)o->interval_s);
		if (read_room(db, &room) != 0) {
			rc = 1;
			break;
		}
		if (live)
			fputs("\033[H\033[2J", stdout);
		else if (f > 0)
			putchar('\n');
		print_room(stdout, &room, o, hl);
		if (live)
			printf("(every %d s; q quits)\n", o->interval_s);
		fflush(stdout);
		if (live && quit_key(o->interval_s * 1000))
			break;
	}
	restore_tty();
	free(room.s);
	kit_db_close(db);
	if (stop_signal) {
		signal(stop_signal, SIG_DFL);
		raise(stop_signal);
	}
	return rc;
}

int class_grade(const struct class_opts *o, const char *dir)
{
	struct kit_db *db;
	struct room room = {0};
	if (class_open_admin(o, &db) != 0)
		return 1;
	int rc = read_room(db, &room);
	kit_db_close(db);
	if (rc != 0) {
		free(room.s);
		return 1;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/results.json", dir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "hotrow class: cannot create %s: %s\n", dir, strerror(errno));
		free(room.s);
		return 1;
	}
	/* written whole or not at all: a grade that fails leaves the last one */
	struct util_file_out fo;
	char why[PATH_MAX + 64];
	if (util_file_begin(&fo, path, 0600, why, sizeof why) != 0) {
		fprintf(stderr, "hotrow class: cannot write %s: %s\n", path, why);
		free(room.s);
		return 1;
	}
	FILE *f = fo.f;
	long score = 0, max = 0;
	int graded = 0;
	fprintf(f, "{\n  \"tests\": [");
	for (size_t i = 0; i < room.n; i++) {
		const struct student *s = &room.s[i];
		for (int j = 0; j < room.nlabs; j++) {
			const struct cell *c = &s->c[j];
			int p = c->g_total >= 0 ? c->g_passed : 0;
			/* the maximum: what the graded run expected (a check the lab
			 * skips on one engine whatever the code is not counted), else
			 * the lab's checks */
			int t = c->g_total > 0 ? c->g_total : room.max[j];
			char name[200], out[600], self[160] = "no run reported";
			snprintf(name, sizeof name, "%s: %s", s->name, room.labs[j]);
			util_json_trim(name);
			if (c->runs)
				snprintf(self, sizeof self, "self-reported (not scored): %d of %d at the last "
				         "of %d run(s)", c->passed, c->total, c->runs);
			if (s->broken[0])
				snprintf(out, sizeof out, "the student's place is broken (%s); %s", s->broken, self);
			else if (c->g_total >= 0)
				snprintf(out, sizeof out, "graded: %d of the %d checks that ran passed when the submission was "
				         "built and checked%s%s; %s", c->g_passed, c->g_total,
				         c->note[0] ? ": " : "", c->note, self);
			else
				snprintf(out, sizeof out, "not graded (no submission checked); %s", self);
			fprintf(f, "%s\n    {\"name\": ", i || j ? "," : "");
			util_json_str(f, name);
			fprintf(f, ", \"score\": %d, \"max_score\": %d, \"output\": ", p, t);
			util_json_str(f, out);
			fprintf(f, "}");
			score += p;
			max += t;
			graded += c->g_total >= 0;
		}
	}
	fprintf(f, "\n  ],\n  \"score\": %ld,\n  \"max_score\": %ld\n}\n", score, max);
	rc = 0;
	if (util_file_commit(&fo, why, sizeof why) != 0) {
		fprintf(stderr, "hotrow class: cannot write %s: %s\n", path, why);
		rc = 1;
	}
	printf("wrote %s: %zu student(s), %d lab(s), %d graded, %ld of %ld checks\n",
	       path, room.n, room.nlabs, graded, score, max);
	if (graded == 0)
		printf("nothing graded yet: `hotrow class grade --rebuild` checks the submissions; "
		       "what students report themselves is never a score\n");
	free(room.s);
	return rc;
}
