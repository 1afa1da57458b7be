/*
 * hint.h: a lab's progressive hints, read from labs/NN-name/hints.md.
 *
 * The file opens with "# Hints — Lab NN"; each hint is a level-2 heading
 * "## Hint K: short title" that may end with tags in brackets
 * ("## Hint 2: Count what you changed [lost-update]"; several tags in one
 * bracket are separated by commas), followed by its text
 * up to the next level-2 heading. A failing check prints "HINT: <tag>";
 * a tag "part:NAME" puts the hint in that part of labs/NN-name/parts
 * (`hotrow lab hint NN --part NAME`; a hint with none is the whole lab's).
 * runner_hints_tagged() finds the first hint carrying that tag.
 *
 * Interface:
 *   struct runner_hints h;
 *   if (runner_hints_load(path, &h) == 0) {
 *       runner_hint_print(stdout, &h, 0, "  ");
 *       runner_hints_free(&h);
 *   }
 */
#ifndef HOTROW_RUNNER_HINT_H
#define HOTROW_RUNNER_HINT_H

#include <stddef.h>
#include <stdio.h>

struct runner_hint {
	char title[200];   /* "Count what you changed" (no "Hint K:", no tags) */
	char tags[200];    /* " lost-update other " : each tag between spaces */
	char *body;        /* the text under the heading, trimmed; owned */
};

struct runner_hints {
	struct runner_hint *v;   /* in file order; owned */
	size_t n;
};

/* Read every hint of the file. Returns 0, or -1 when the file cannot be
 * read or memory runs out (h is then empty and safe to free). A file
 * without hints loads as n == 0. */
int runner_hints_load(const char *path, struct runner_hints *h);
void runner_hints_free(struct runner_hints *h);

/* Index of the first hint tagged tag, or -1. */
int runner_hints_tagged(const struct runner_hints *h, const char *tag);

/* Index of the first hint carrying one of tags ("a b c", tried in that
 * order), or -1; the tag that matched is copied into tag. */
int runner_hints_first(const struct runner_hints *h, const char *tags, char *tag, size_t n);

/* Of the hints carrying one of tags ("a b c"), the latest in the file
 * (the most specific), never the last hint of all (the shape of the
 * answer, shown only when asked for); -1 when none. The tag that matched
 * is copied into tag. */
int runner_hints_specific(const struct runner_hints *h, const char *tags, char *tag, size_t n);

/* Print "Hint K of N: title" and the body, each body line after indent. */
void runner_hint_print(FILE *out, const struct runner_hints *h, size_t k, const char *indent);

#endif
