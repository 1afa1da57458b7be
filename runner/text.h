/*
 * text.h: a bounded string for what a child prints.
 *
 * A child can print without end (100 MB of output, a loop printing a
 * line); the runner keeps the first `head` bytes and the last `tail`
 * bytes and counts what it cut, so what is shown stays readable and says
 * how much is missing.
 *
 * Interface:
 *   struct runner_text t;
 *   runner_text_init(&t, 16384, 4096);
 *   runner_text_add(&t, bytes, n);      // as often as output arrives
 *   char *s = runner_text_str(&t);      // "head ... [N bytes cut] ... tail"; caller frees
 *   runner_text_free(&t);
 * On out-of-memory the text keeps what it had; nothing fails loudly.
 */
#ifndef HOTROW_RUNNER_TEXT_H
#define HOTROW_RUNNER_TEXT_H

#include <stddef.h>

struct runner_text {
	char *head;        /* the first bytes, up to head_max */
	size_t head_len, head_max;
	char *tail;        /* a ring of the last bytes, up to tail_max */
	size_t tail_len, tail_pos, tail_max;
	size_t total;      /* every byte added */
};

void runner_text_init(struct runner_text *t, size_t head_max, size_t tail_max);
void runner_text_add(struct runner_text *t, const char *bytes, size_t n);
/* Everything kept, with one line saying how many bytes were cut between
 * the head and the tail, ending in a newline unless empty. NULL when
 * nothing was added (or out of memory). The caller frees. */
char *runner_text_str(const struct runner_text *t);
void runner_text_free(struct runner_text *t);

#endif
