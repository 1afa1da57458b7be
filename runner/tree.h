/*
 * tree.h: where the labs live and how far the student got.
 *
 * The runner works on one kit tree: the directory holding the Makefile and
 * labs/module.mk. It is found from $HOTROW_ROOT, else the current directory
 * or one of its parents, else the directory the binary was built into
 * (build/hotrow -> its parent). A lab is a directory labs/NN-name/ whose
 * handout, labs/NN-name/README.md, opens with "# Lab NN — Title".
 * Progress (checks passing, hints revealed) lives in .hotrow/progress, one
 * line per lab: "NN-name passed=P total=T hints=H sqlite=P/T postgres=P/T",
 * the last two keeping what each engine showed at its last check (a run
 * on one engine leaves the other's as it was).
 *
 * Interface:
 *   struct runner_tree t;
 *   if (runner_tree_open(&t) != 0) { ...no kit here; message already printed... }
 *   const struct runner_lab *l = runner_tree_find(&t, "1");   // "01", "1", "01-hot-row"
 *   runner_path(&t, buf, sizeof buf, "exercises/%s", l->name);
 *   runner_tree_close(&t);
 * Nothing here prints except runner_tree_open (why no tree was found) and
 * runner_tree_unknown (the one-line usage error).
 */
#ifndef HOTROW_RUNNER_TREE_H
#define HOTROW_RUNNER_TREE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

struct runner_lab {
	char name[64];    /* directory name: "01-hot-row" */
	char num[8];      /* "01" */
	char title[160];  /* from the handout's first line, or the name */
};

struct runner_tree {
	char root[PATH_MAX];   /* absolute path of the kit */
	struct runner_lab *labs;      /* sorted by name; owned, freed by close */
	size_t nlabs;
};

struct runner_progress {
	int passed;   /* checks passing at the last `hotrow lab check` */
	int total;    /* checks that ran then (skipped ones not counted) */
	int hints;    /* hints revealed so far (the lab's order) */
	unsigned long long seen;   /* bit k: hint k+1 was shown (with or
	                              without --part); 0 in an old file */
	int eng_passed[2], eng_total[2];   /* [0] SQLite, [1] PostgreSQL: last seen */
};

/* Find the kit and list its labs. Returns 0, or -1 after printing why on
 * stderr (the tree is then empty and safe to close). */
int runner_tree_open(struct runner_tree *t);

/* The command as the student typed it (argv[0]: "build/hotrow", or
 * "hotrow" when found on PATH), so that the commands the runner suggests
 * work when pasted. runner_self() is "hotrow" until it is set. */
void runner_set_self(const char *argv0);
const char *runner_self(void);
void runner_tree_close(struct runner_tree *t);

/* The lab named by spec ("01", "1", "01-hot-row"), or NULL. */
const struct runner_lab *runner_tree_find(const struct runner_tree *t, const char *spec);

/* Print "hotrow lab CMD: unknown lab 'spec' (labs: ...)" on stderr. */
void runner_tree_unknown(const struct runner_tree *t, const char *cmd, const char *spec);

/* Write root + "/" + the formatted relative path into buf. Returns 0, or -1
 * when it does not fit (buf then holds a truncated path). */
int runner_path(const struct runner_tree *t, char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* mkdir -p: create dir and its missing parents. Returns 0 or -1 (errno). */
int runner_mkdirs(const char *dir);

/* Create .hotrow/ and, when sub is not NULL, .hotrow/sub/ (and its parents).
 * Returns 0, or -1 with errno set. */
int runner_state_dir(const struct runner_tree *t, const char *sub);

/* Read a lab's progress; a lab never checked reads as all zeros. */
void runner_progress_get(const struct runner_tree *t, const struct runner_lab *l, struct runner_progress *p);
/* Replace a lab's line in .hotrow/progress (written to a temporary file and
 * renamed, so a crash leaves the old file). Returns 0 or -1 with errno. */
int runner_progress_put(const struct runner_tree *t, const struct runner_lab *l, const struct runner_progress *p);

/* "not started", "3 of 6 checks passing", "SQLite done, PostgreSQL not
 * checked" or "done" (every check passing on both engines) into buf. */
const char *runner_progress_str(const struct runner_progress *p, char *buf, size_t n);
int runner_progress_done(const struct runner_progress *p);

/* The exercise's source files ("like.c like.h"), space separated, into buf;
 * "" when the exercise directory is empty or missing. */
void runner_exercise_files(const struct runner_tree *t, const struct runner_lab *l, char *buf, size_t n);

/* Colours for a terminal: on when stdout is a tty, TERM is not "dumb" and
 * NO_COLOR is unset. Each returns "" when colours are off. */
const char *runner_c_ok(void);
const char *runner_c_bad(void);
const char *runner_c_dim(void);
const char *runner_c_bold(void);
const char *runner_c_off(void);

#endif
