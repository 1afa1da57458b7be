/*
 * room.c: `hotrow class status` and `grade`, the room as the instructor
 * sees it, read from each student's hotrow_results table (see class.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "class/class.h"
#include "class/class_impl.h"
#include "kit/db.h"
#include "util/json.h"

#define MAX_LABS 32

struct text { char *out; size_t len; int got; };

static int first_text(void *arg, int ncols, const char *const *v)
{
	struct text *t = arg;
	(void)ncols;
	snprintf(t->out, t->len, "%s", v[0] ? v[0] : "");
	t->got = 1;
	return 1;
}

int class_query_text(struct kit_db *db, const char *sql, char *out, size_t len)
{
	struct text t = { out, len, 0 };
	int rc = kit_db_query(db, sql, 0, NULL, first_text, &t);
	return t.got || rc == 0 ? (t.got ? 0 : -1) : -1;
}

struct result {
	char lab[64];
	int passed, total, runs;
};

struct student {
	char name[CLASS_NAME_MAX + 1];
	struct result r[MAX_LABS];
	int n;
	long idle_s;      /* seconds since the last record, -1: never */
};

struct room {
	struct student *s;
	size_t n, cap;
	char labs[MAX_LABS][64];   /* every lab anyone recorded, sorted */
	int nlabs;
};

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
	s->idle_s = -1;
	return 0;
}

static void note_lab(struct room *room, const char *lab)
{
	int i = 0;
	while (i < room->nlabs && strcmp(room->labs[i], lab) < 0)
		i++;
	if ((i < room->nlabs && !strcmp(room->labs[i], lab)) || room->nlabs == MAX_LABS)
		return;
	memmove(room->labs[i + 1], room->labs[i], (size_t)(room->nlabs - i) * sizeof room->labs[0]);
	snprintf(room->labs[i], sizeof room->labs[i], "%s", lab);
	room->nlabs++;
}

struct reading { struct room *room; struct student *s; };

static int add_result(void *arg, int ncols, const char *const *v)
{
	struct reading *rd = arg;
	struct student *s = rd->s;
	(void)ncols;
	if (s->n == MAX_LABS)
		return 0;
	struct result *r = &s->r[s->n++];
	snprintf(r->lab, sizeof r->lab, "%s", v[0]);
	r->passed = atoi(v[1]);
	r->total = atoi(v[2]);
	r->runs = atoi(v[3]);
	long idle = atol(v[4]);
	if (s->idle_s < 0 || idle < s->idle_s)
		s->idle_s = idle;
	note_lab(rd->room, r->lab);
	return 0;
}

/* Every student and what they recorded; 0, or 1 (said). */
static int read_room(const struct class_opts *o, struct room *room)
{
	struct kit_db *db;
	memset(room, 0, sizeof *room);
	if (class_open_admin(o, &db) != 0)
		return 1;
	int rc = 0;
	if (kit_db_query(db, "SELECT name FROM hotrow_class.students ORDER BY name",
	                 0, NULL, add_student, room) != 0) {
		rc = class_fail(db, "cannot read hotrow_class.students (has `hotrow class init` run here?)");
	}
	for (size_t i = 0; i < room->n && rc == 0; i++) {
		char sql[300];
		snprintf(sql, sizeof sql,
		         "SELECT lab, passed, total, runs, extract(epoch FROM now() - at)::bigint"
		         " FROM hr_%s.hotrow_results ORDER BY lab", room->s[i].name);
		struct reading rd = { room, &room->s[i] };
		if (kit_db_query(db, sql, 0, NULL, add_result, &rd) != 0)
			rc = class_fail(db, "cannot read a student's results");
	}
	kit_db_close(db);
	return rc;
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

int class_status(const struct class_opts *o)
{
	struct room room;
	if (read_room(o, &room) != 0) {
		free(room.s);
		return 1;
	}
	int w = 7;
	for (size_t i = 0; i < room.n; i++)
		if ((int)strlen(room.s[i].name) > w)
			w = (int)strlen(room.s[i].name);
	printf("%-*s", w, "student");
	for (int j = 0; j < room.nlabs; j++)
		printf("  %*s", (int)strlen(room.labs[j]) > 5 ? (int)strlen(room.labs[j]) : 5, room.labs[j]);
	printf("  last check\n");
	for (size_t i = 0; i < room.n; i++) {
		struct student *s = &room.s[i];
		printf("%-*s", w, s->name);
		for (int j = 0; j < room.nlabs; j++) {
			char cell[32] = "-";
			for (int k = 0; k < s->n; k++)
				if (!strcmp(s->r[k].lab, room.labs[j]))
					snprintf(cell, sizeof cell, "%d/%d", s->r[k].passed, s->r[k].total);
			printf("  %*s", (int)strlen(room.labs[j]) > 5 ? (int)strlen(room.labs[j]) : 5, cell);
		}
		char when[32];
		ago(s->idle_s, when, sizeof when);
		printf("  %s\n", when);
	}
	printf("%zu student(s); a cell is checks passing / checks run at the student's last "
	       "`hotrow lab check` or `grade` of that lab\n", room.n);
	free(room.s);
	return 0;
}

static void json_str(FILE *f, const char *s)
{
	util_json_str(f, s);   /* escapes, and replaces what is not UTF-8 */
}

int class_grade(const struct class_opts *o, const char *dir)
{
	struct room room;
	if (read_room(o, &room) != 0) {
		free(room.s);
		return 1;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/results.json", dir);
	if ((mkdir(dir, 0700) != 0 && errno != EEXIST)) {
		fprintf(stderr, "hotrow class: cannot create %s: %s\n", dir, strerror(errno));
		free(room.s);
		return 1;
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "hotrow class: cannot write %s: %s\n", path, strerror(errno));
		free(room.s);
		return 1;
	}
	long score = 0, max = 0;
	fprintf(f, "{\n  \"tests\": [");
	int first = 1;
	for (size_t i = 0; i < room.n; i++) {
		struct student *s = &room.s[i];
		for (int j = 0; j < room.nlabs; j++) {
			int p = 0, t = 0, runs = 0;
			for (int k = 0; k < s->n; k++)
				if (!strcmp(s->r[k].lab, room.labs[j]))
					p = s->r[k].passed, t = s->r[k].total, runs = s->r[k].runs;
			char name[200], out[200];
			snprintf(name, sizeof name, "%s: %s", s->name, room.labs[j]);
			util_json_trim(name);
			snprintf(out, sizeof out, runs ? "%d of %d checks passed at the last of %d runs" :
			         "no run recorded", p, t, runs);
			fprintf(f, "%s\n    {\"name\": ", first ? "" : ",");
			json_str(f, name);
			fprintf(f, ", \"score\": %d, \"max_score\": %d, \"output\": ", p, t);
			json_str(f, out);
			fprintf(f, "}");
			first = 0;
			score += p;
			max += t;
		}
	}
	fprintf(f, "\n  ],\n  \"score\": %ld,\n  \"max_score\": %ld\n}\n", score, max);
	int rc = fclose(f) == 0 ? 0 : 1;
	printf("wrote %s: %zu student(s), %d lab(s), %ld of %ld checks\n", path, room.n, room.nlabs, score, max);
	free(room.s);
	return rc;
}
