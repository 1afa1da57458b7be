/*
 * values.c: in Lab 07's test programs, the detector's row callback gets
 * each value kit_db_query hands it in a mapping of its own, the value's
 * NUL the last byte before a page nobody may read.
 *
 * libpq and the MariaDB client pack a result's values side by side in
 * blocks of their own, so a callback that reads past a value's end (the
 * relation copied with memcpy(r->relation, v[0], 63) from "posts", six
 * bytes with its NUL) reads the next value's bytes, and no check could
 * see it: it crashes only when a value happens to end at a page. Here it
 * always does. The test program is linked with the wraps
 * tests/labs/07-contain/wrap.syms lists (labs/module.mk): the tests'
 * calls of hot_rows_now() come to __wrap_hot_rows_now(), which marks
 * the thread for the call, and every kit_db_query() of the lab's code
 * and the tests' to __wrap_kit_db_query(), which, on a marked thread,
 * copies each row's values that way before the callback sees them. A
 * read past a value's NUL faults there and then: one line says which
 * value was read past, and the check running fails with the
 * Segmentation fault. A value a page long or longer, and a row of more
 * than 64 values, are handed over as the kit has them.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kit/db.h"
#include "labs/07-contain/contain.h"

int __real_hot_rows_now(struct kit_db *db, struct hot_row_now *out, int max, int *n);
int __wrap_hot_rows_now(struct kit_db *db, struct hot_row_now *out, int max, int *n);
int __real_kit_db_query(struct kit_db *db, const char *sql, int nparams,
                        const char *const *params, kit_db_row_fn *row, void *arg);
int __wrap_kit_db_query(struct kit_db *db, const char *sql, int nparams,
                        const char *const *params, kit_db_row_fn *row, void *arg);

#define GUARDED_COLS 64

static _Thread_local int in_detector;     /* hot_rows_now() calls under way */

/* The mapping of the row the callback is reading, for the fault handler
 * (a fault is delivered to the thread that faulted). */
static _Thread_local char *row_map;
static _Thread_local size_t row_len;

/* The handler is the process's: set while any thread's callback reads a
 * guarded row, and the one that was there before it put back after the
 * last. */
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static int readers;
static struct sigaction before;

int __wrap_hot_rows_now(struct kit_db *db, struct hot_row_now *out, int max, int *n)
{
	in_detector++;
	int rc = __real_hot_rows_now(db, out, max, n);
	in_detector--;
	return rc;
}

static void say(const char *s)
{
	if (write(STDERR_FILENO, s, strlen(s)) < 0) {
		/* nothing more can be said */
	}
}

/* A fault in the row's guard pages is the callback reading past a value:
 * said once, then the handler that was there before takes the same
 * fault again (the read runs again when this returns), and the check
 * fails as a crash. Any other fault goes to it unsaid. */
static void past_a_value(int sig, siginfo_t *info, void *ctx)
{
	(void)sig, (void)ctx;
	char *at = info->si_addr;
	if (row_map == NULL || at < row_map || at >= row_map + row_len) {
		sigaction(SIGSEGV, &before, NULL);
		return;
	}
	/* The check fails here and leaves the call: nothing of it is left
	 * to undo (the row's mapping stays, a page or two) */
	row_map = NULL;
	in_detector = 0;
	readers = 0;
	say("\nhot_rows_now(): its row callback read past the end of a value kit_db_query "
	    "handed it (a value ends at its NUL: \"posts\" is 6 bytes with it, and the bytes "
	    "after it are not the value's). A memcpy of a field's full size from a value, or a "
	    "read of v[i][k] past its length, reads them; copy a text value with "
	    "snprintf(dst, sizeof dst, \"%s\", v[i]), which stops at its NUL\n");
	sigaction(SIGSEGV, &before, NULL);
}

struct guarded {
	kit_db_row_fn *row;
	void *arg;
};

static int guarded_row(void *arg, int ncols, const char *const *v)
{
	struct guarded *g = arg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len[GUARDED_COLS], total = 0;
	if (ncols < 0 || ncols > GUARDED_COLS)
		return g->row(g->arg, ncols, v);
	for (int i = 0; i < ncols; i++) {
		len[i] = v[i] ? strlen(v[i]) + 1 : 0;
		if (len[i] > page)
			return g->row(g->arg, ncols, v);
		total += v[i] ? 2 * page : 0;
	}
	char *map = total ? mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                         -1, 0) : NULL;
	if (map == MAP_FAILED)
		return g->row(g->arg, ncols, v);
	const char *copy[GUARDED_COLS + 1];
	char *p = map;
	for (int i = 0; i < ncols; i++) {
		copy[i] = NULL;
		if (v[i] == NULL)
			continue;
		memcpy(p + page - len[i], v[i], len[i]);
		mprotect(p + page, page, PROT_NONE);
		copy[i] = p + page - len[i];
		p += 2 * page;
	}
	copy[ncols] = NULL;
	struct sigaction mine = { .sa_sigaction = past_a_value, .sa_flags = SA_SIGINFO };
	sigemptyset(&mine.sa_mask);
	row_map = map;
	row_len = total;
	pthread_mutex_lock(&handler_lock);
	if (readers++ == 0)
		sigaction(SIGSEGV, &mine, &before);
	pthread_mutex_unlock(&handler_lock);
	int rc = g->row(g->arg, ncols, copy);
	pthread_mutex_lock(&handler_lock);
	if (readers > 0 && --readers == 0)
		sigaction(SIGSEGV, &before, NULL);
	pthread_mutex_unlock(&handler_lock);
	row_map = NULL;
	if (map != NULL)
		munmap(map, total);
	return rc;
}

int __wrap_kit_db_query(struct kit_db *db, const char *sql, int nparams,
                        const char *const *params, kit_db_row_fn *row, void *arg)
{
	if (in_detector == 0 || row == NULL)
		return __real_kit_db_query(db, sql, nparams, params, row, arg);
	struct guarded g = { row, arg };
	return __real_kit_db_query(db, sql, nparams, params, guarded_row, &g);
}
