/*
 * lab_tree.h: where the labs live and how far the student got.
 *
 * The runner works on one kit tree: the directory holding the Makefile and
 * labs/module.mk. It is found from $HOTROW_ROOT, else the current directory
 * or one of its parents, else the directory the binary was built into
 * (build/hotrow -> its parent). A lab is a directory labs/NN-name/ whose
 * handout, labs/NN-name/README.md, opens with "# Lab NN — Title".
 * Progress (checks passing, hints revealed) lives in .hotrow/progress, one
 * line per lab: "NN-name passed=P total=T hints=H".
 *
 * Interface:
 *   struct lab_tree t;
 *   if (lab_tree_open(&t) != 0) { ...no kit here; message already printed... }
 *   const struct lab *l = lab_tree_find(&t, "1");   // "01", "1", "01-hot-row"
 *   lab_path(&t, buf, sizeof buf, "exercises/%s", l->name);
 *   lab_tree_close(&t);
 * Nothing here prints except lab_tree_open (why no tree was found) and
 * lab_tree_unknown (the one-line usage error).
 */
#ifndef HOTROW_CLI_LAB_TREE_H
#define HOTROW_CLI_LAB_TREE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

struct lab {
	char name[64];    /* directory name: "01-hot-row" */
	char num[8];      /* "01" */
	char title[160];  /* from the handout's first line, or the name */
};

struct lab_tree {
	char root[PATH_MAX];   /* absolute path of the kit */
	struct lab *labs;      /* sorted by name; owned, freed by close */
	size_t nlabs;
};

struct lab_progress {
	int passed;   /* checks passing at the last `hotrow lab check` */
	int total;    /* checks that ran then (skipped ones not counted) */
	int hints;    /* hints revealed so far */
};

/* Find the kit and list its labs. Returns 0, or -1 after printing why on
 * stderr (the tree is then empty and safe to close). */
int lab_tree_open(struct lab_tree *t);
void lab_tree_close(struct lab_tree *t);

/* The lab named by spec ("01", "1", "01-hot-row"), or NULL. */
const struct lab *lab_tree_find(const struct lab_tree *t, const char *spec);

/* Print "hotrow lab CMD: unknown lab 'spec' (labs: ...)" on stderr. */
void lab_tree_unknown(const struct lab_tree *t, const char *cmd, const char *spec);

/* Write root + "/" + the formatted relative path into buf. Returns 0, or -1
 * when it does not fit (buf then holds a truncated path). */
int lab_path(const struct lab_tree *t, char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* mkdir -p: create dir and its missing parents. Returns 0 or -1 (errno). */
int lab_mkdirs(const char *dir);

/* Create .hotrow/ and, when sub is not NULL, .hotrow/sub/ (and its parents).
 * Returns 0, or -1 with errno set. */
int lab_state_dir(const struct lab_tree *t, const char *sub);

/* Read a lab's progress; a lab never checked reads as all zeros. */
void lab_progress_get(const struct lab_tree *t, const struct lab *l, struct lab_progress *p);
/* Replace a lab's line in .hotrow/progress (written to a temporary file and
 * renamed, so a crash leaves the old file). Returns 0 or -1 with errno. */
int lab_progress_put(const struct lab_tree *t, const struct lab *l, const struct lab_progress *p);

/* "not started", "3 of 6 checks passing" or "done" into buf. */
const char *lab_progress_str(const struct lab_progress *p, char *buf, size_t n);
int lab_progress_done(const struct lab_progress *p);

/* The exercise's source files ("like.c like.h"), space separated, into buf;
 * "" when the exercise directory is empty or missing. */
void lab_exercise_files(const struct lab_tree *t, const struct lab *l, char *buf, size_t n);

/* Colours for a terminal: on when stdout is a tty, TERM is not "dumb" and
 * NO_COLOR is unset. Each returns "" when colours are off. */
const char *lab_c_ok(void);
const char *lab_c_bad(void);
const char *lab_c_dim(void);
const char *lab_c_bold(void);
const char *lab_c_off(void);

#endif
