/*
 * mutant.h: what a lab's mutants say about themselves.
 *
 * A mutant (tests/mutants/NN-name/M.patch) is a plausible student mistake
 * planted in the solution. Its header, before the diff, names it:
 *   Mistake: one line, in the handout's words
 *   Caught-By: check_name_1 check_name_2
 *   Engine: sqlite postgres
 * The runner reads them to say, after a run without PostgreSQL, which
 * mistakes only the PostgreSQL checks could have caught.
 *
 * Interface:
 *   struct runner_mutant m;
 *   if (runner_mutant_read("tests/mutants/01-hot-row/x.patch", &m) == 0) ...
 *   char **list; int n = runner_pg_only_mistakes(&tree, lab, &list);
 */
#ifndef HOTROW_RUNNER_MUTANT_H
#define HOTROW_RUNNER_MUTANT_H

#include "runner/tree.h"

struct runner_mutant {
	char mistake[256];     /* "" when the header has none */
	char caught_by[512];   /* " name name " : each between spaces */
	char engine[64];       /* " sqlite postgres " */
};

/* Read the header of one patch. Returns 0, or -1 when the file cannot be
 * read. Missing lines leave their fields "". */
int runner_mutant_read(const char *path, struct runner_mutant *m);

/* The mistakes of lab l's mutants whose Engine is postgres alone, into
 * *list (caller frees each and the array). Returns how many. The student
 * kit ships no mutants, only those mistakes, in .hotrow/pg-only/NN-name. */
int runner_pg_only_mistakes(const struct runner_tree *t, const struct runner_lab *l, char ***list);

#endif
