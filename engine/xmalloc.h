/*
 * xmalloc.h: allocation that never returns NULL, for the engine and the TUI.
 *
 * The simulator has no sensible way to carry on without memory, so these
 * wrappers abort on failure instead of returning an error every caller
 * would have to pass up. Before aborting they call the hook installed with
 * sim_set_oom_hook(), which is how the TUI puts the terminal back first.
 *
 * Interface:
 *   p = xmalloc(n); p = xcalloc(n, size); p = xrealloc(p, n); free(p);
 *   sim_set_oom_hook(fn);   fn runs once, just before abort(); NULL clears it.
 * Lab and kit code must not use these: they return errors instead.
 */
#ifndef HOTROW_XMALLOC_H
#define HOTROW_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);               /* n == 0 is treated as 1 */
void *xcalloc(size_t n, size_t size);  /* zeroed; checks n * size for overflow */
void *xrealloc(void *p, size_t n);     /* like realloc, p may be NULL */

/* Install fn to run before an out-of-memory abort (one hook; last one wins). */
void sim_set_oom_hook(void (*fn)(void));

#endif
