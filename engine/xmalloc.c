/* xmalloc.c: abort-on-failure allocation with a hook to restore the terminal. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/xmalloc.h"

static void (*oom_hook)(void);

void sim_set_oom_hook(void (*fn)(void))
{
	oom_hook = fn;
}

static void oom(size_t n)
{
	void (*fn)(void) = oom_hook;

	oom_hook = NULL;          /* a hook that itself runs out must not loop */
	if (fn)
		fn();
	fprintf(stderr, "hotrow: out of memory (asked for %zu bytes)\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p;

	if (size && n > (size_t)-1 / size)
		oom((size_t)-1);
	p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return q;
}
