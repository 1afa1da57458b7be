/*
 * parts.h: a lab split into parts a room codes one slot at a time.
 *
 * labs/NN-name/parts holds one line per part (# starts a comment):
 *   NAME  WORD...  §SECTION  MINUTES
 * where each WORD is
 *   function   a function the student writes; its checks are function__*
 *   +helper    a helper counted in the part's size, without checks of its own
 *   @prefix    checks named prefix__* belong to the part too
 * §SECTION is the handout's section (labs/NN-name/README.md, "## 3. ...")
 * and MINUTES the coding time scripts/lab-sizes measures for the part
 * (`scripts/lab-sizes --check` holds the file to the code). A lab without
 * the file has one implicit part: all of it.
 *
 * Interface:
 *   struct runner_parts ps;
 *   if (runner_parts_load(t, l, &ps) < 0) ...malformed, ps.error says where...
 *   const struct runner_part *p = runner_part_find(&ps, "increment");
 *   runner_part_has(p, "shard_read__sums_every_slot/sqlite") -> 1
 *   runner_parts_free(&ps);
 */
#ifndef HOTROW_RUNNER_PARTS_H
#define HOTROW_RUNNER_PARTS_H

#include <stdio.h>

#include "runner/tree.h"

#define RUNNER_PART_WORDS 24

struct runner_part {
	char name[32];
	char words[RUNNER_PART_WORDS][64];   /* as written, with + and @ */
	int nwords;
	char section[16];                    /* "3", from "§3" */
	int minutes;
};

struct runner_parts {
	struct runner_part *v;
	size_t n;
	char error[320];   /* why the file was refused, or "" */
};

/* Read labs/NN-name/parts. Returns the number of parts (0: no file),
 * or -1 when the file is malformed (ps->error says which line). */
int runner_parts_load(const struct runner_tree *t, const struct runner_lab *l, struct runner_parts *ps);
void runner_parts_free(struct runner_parts *ps);

const struct runner_part *runner_part_find(const struct runner_parts *ps, const char *name);

/* 1 when the check (name as in the test table, "/engine" allowed) is one
 * of the part's. */
int runner_part_has(const struct runner_part *p, const char *check);

/* The part's names, "increment, resize", into buf. */
void runner_parts_names(const struct runner_parts *ps, char *buf, size_t n);

/* `hotrow lab parts NN`: every part with its functions, minutes and
 * handout section. */
void runner_parts_print(FILE *out, const struct runner_lab *l, const struct runner_parts *ps);

#endif
