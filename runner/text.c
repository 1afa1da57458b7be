/*
 * text.c: a string that keeps its head and tail. See text.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/text.h"
#include "util/json.h"

void runner_text_init(struct runner_text *t, size_t head_max, size_t tail_max)
{
	memset(t, 0, sizeof *t);
	t->head_max = head_max;
	t->tail_max = tail_max;
}

void runner_text_add(struct runner_text *t, const char *bytes, size_t n)
{
	t->total += n;
	if (t->head_len < t->head_max) {
		if (!t->head && !(t->head = malloc(t->head_max)))
			return;
		size_t k = t->head_max - t->head_len < n ? t->head_max - t->head_len : n;
		memcpy(t->head + t->head_len, bytes, k);
		t->head_len += k;
		bytes += k;
		n -= k;
	}
	if (n == 0 || t->tail_max == 0)
		return;
	if (!t->tail && !(t->tail = malloc(t->tail_max)))
		return;
	if (n > t->tail_max) {   /* only the last tail_max bytes can stay */
		bytes += n - t->tail_max;
		n = t->tail_max;
	}
	while (n > 0) {
		size_t k = t->tail_max - t->tail_pos < n ? t->tail_max - t->tail_pos : n;
		memcpy(t->tail + t->tail_pos, bytes, k);
		t->tail_pos = (t->tail_pos + k) % t->tail_max;
		t->tail_len = t->tail_len + k > t->tail_max ? t->tail_max : t->tail_len + k;
		bytes += k;
		n -= k;
	}
}

char *runner_text_str(const struct runner_text *t)
{
	if (t->total == 0)
		return NULL;
	size_t cut = t->total - t->head_len - t->tail_len;
	char *tail = malloc(t->tail_len + 1);
	if (!tail)
		return NULL;
	size_t tail_len = t->tail_len;
	if (tail_len) {
		/* The ring's oldest byte sits at tail_pos once it has wrapped. */
		size_t start = t->tail_len == t->tail_max ? t->tail_pos : 0;
		size_t first = t->tail_max - start < t->tail_len ? t->tail_max - start : t->tail_len;
		memcpy(tail, t->tail + start, first);
		memcpy(tail + first, t->tail, t->tail_len - first);
	}
	/* Where bytes were cut, the head ends and the tail starts on a
	 * character boundary: what is shown is never half a character. */
	size_t head_len = t->head_len, skip = 0;
	if (cut) {
		head_len = util_json_cut(t->head, t->head_len, t->head_len);
		skip = util_json_resync(tail, tail_len);
		cut += t->head_len - head_len + skip;
	}
	char note[96] = "";
	if (cut)
		snprintf(note, sizeof note, "%s[... %zu bytes cut here ...]\n",
			 head_len && t->head[head_len - 1] != '\n' ? "\n" : "", cut);
	size_t n = head_len + strlen(note) + tail_len - skip;
	char *s = malloc(n + 2);
	if (!s) {
		free(tail);
		return NULL;
	}
	memcpy(s, t->head, head_len);
	size_t k = head_len;
	memcpy(s + k, note, strlen(note));
	k += strlen(note);
	memcpy(s + k, tail + skip, tail_len - skip);
	k += tail_len - skip;
	free(tail);
	if (k && s[k - 1] != '\n')
		s[k++] = '\n';
	s[k] = '\0';
	return s;
}

void runner_text_free(struct runner_text *t)
{
	free(t->head);
	free(t->tail);
	memset(t, 0, sizeof *t);
}
