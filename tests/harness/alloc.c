/*
 * alloc.c: the allocation wrappers and failpoint of alloc.h.
 *
 * The linker sends each call of malloc, calloc, ... in the binary's own
 * code to __wrap_NAME here, and __real_NAME to the allocator that would
 * have been called (glibc's, or the sanitizer's, which intercepts it).
 * The kit's calls come as lt_kit_NAME (the archive the tests link has
 * them renamed: tests/harness/alloc.syms): counted the same, refused only
 * when lt_alloc_arm_any() armed the failpoint.
 * Every block handed out is kept in a table of its own, guarded by one
 * mutex: free() of a block the wrappers never saw (one that libc or a
 * shared library allocated) passes straight through and changes no count.
 *
 * Without a sanitizer each block also gets GUARD bytes past its end, set
 * to a pattern: a write past the end of what was asked for (a string's
 * terminator one byte too far, an array indexed one past its last) changes
 * them, and is seen when the block is freed or reallocated, or when the
 * check ends (lt_alloc_overrun). Under ASan the sanitizer sees every such
 * write itself, and reads too.
 *
 * A refused asprintf or vasprintf returns -1 and leaves in its pointer
 * the address of a page mapped with no access (not NULL): see
 * lt_alloc_undefined() in alloc.h.
 */
#include "tests/harness/alloc.h"
#include "util/unseen.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tests/harness/hold.h"
#include "tests/harness/labtest.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_posix_memalign(void **out, size_t align, size_t n);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_reallocarray(void *p, size_t n, size_t size);
void __wrap_free(void *p);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_vasprintf(char **out, const char *fmt, va_list ap);
int __wrap_asprintf(char **out, const char *fmt, ...);
void *__wrap_aligned_alloc(size_t align, size_t n);
int __wrap_posix_memalign(void **out, size_t align, size_t n);
void *lt_kit_malloc(size_t n);
void *lt_kit_calloc(size_t n, size_t size);
void *lt_kit_realloc(void *p, size_t n);
void *lt_kit_reallocarray(void *p, size_t n, size_t size);
void lt_kit_free(void *p);
char *lt_kit_strdup(const char *s);
char *lt_kit_strndup(const char *s, size_t n);
int lt_kit_vasprintf(char **out, const char *fmt, va_list ap);
int lt_kit_asprintf(char **out, const char *fmt, ...);
void *lt_kit_aligned_alloc(size_t align, size_t n);
int lt_kit_posix_memalign(void **out, size_t align, size_t n);

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GUARD 0
#else
#define GUARD 32
#endif
#define GUARD_BYTE 0xa5

static atomic_size_t live, live_bytes, made;
static atomic_long countdown;   /* > 0: the allocation that takes it to 0 fails */
static atomic_bool fired;
static atomic_bool any;         /* the kit's allocations may fail too */

/* The table of live blocks: open addressing, linear probing. A slot holds
 * 0 (never used), GONE (freed) or a block's address, hidden (xor HIDE,
 * which no address equals: it is not canonical on x86-64 or arm64), so
 * that LeakSanitizer, which scans memory for pointers, does not take the
 * table for a reference and still reports a block the code leaked. */
#define GONE ((uintptr_t)1)
#define HIDE ((uintptr_t)0x5a5a5a5a5a5a5a5aULL)
struct slot {
	uintptr_t p;
	size_t n;
};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *table;

/* Whether m is this file's lock (locks.c leaves it out of a record). */
bool lt_alloc_own_lock(const void *m);
bool lt_alloc_own_lock(const void *m)
{
	return m == (const void *)&lock;
}
static size_t cap, used;        /* used counts blocks and GONE slots */

/* The first block found written past its end since lt_alloc_overrun_reset
 * (under lock): its size, the first changed byte past it, and where. */
static bool overran;
static size_t overran_n, overran_at;
static const char *overran_when = "";

#if GUARD > 0
static void guard_set(void *p, size_t n)
{
	memset((unsigned char *)p + n, GUARD_BYTE, GUARD);
}

/* Under lock: note p's guard when a byte of it changed. */
static void guard_look(const void *p, size_t n, const char *when)
{
	if (overran)
		return;
	const unsigned char *g = (const unsigned char *)p + n;
	for (size_t i = 0; i < GUARD; i++)
		if (g[i] != GUARD_BYTE) {
			overran = true;
			overran_n = n;
			overran_at = i;
			overran_when = when;
			return;
		}
}
#else
static void guard_set(void *p, size_t n) { (void)p; (void)n; }
static void guard_look(const void *p, size_t n, const char *when)
{
	(void)p;
	(void)n;
	(void)when;
}
#endif

static size_t hash(uintptr_t p)
{
	p ^= p >> 33;
	p *= 0xff51afd7ed558ccdULL;
	p ^= p >> 33;
	return (size_t)p;
}

/* Under lock. Returns false when the table cannot grow (the block is then
 * not counted: the real allocator ran out, not the failpoint). */
static bool grow(void)
{
	size_t ncap = cap ? 2 * cap : 1024;
	struct slot *t = __real_calloc(ncap, sizeof *t);
	if (t == NULL)
		return false;
	for (size_t i = 0; i < cap; i++) {
		if (table[i].p <= GONE)
			continue;
		size_t j = hash(table[i].p) & (ncap - 1);
		while (t[j].p != 0)
			j = (j + 1) & (ncap - 1);
		t[j] = table[i];
	}
	__real_free(table);
	table = t;
	cap = ncap;
	used = (size_t)atomic_load(&live);
	return true;
}

/* Keep p, a block of n bytes handed out, and set its guard. */
static void remember(void *p, size_t n)
{
	if (p == NULL)
		return;
	UTIL_UNSEEN_BEGIN();
	guard_set(p, n);
	pthread_mutex_lock(&lock);
	if ((used + 1) * 2 <= cap || grow()) {
		uintptr_t key = (uintptr_t)p ^ HIDE;
		size_t j = hash(key) & (cap - 1), free_j = SIZE_MAX;
		/* The address may be in the table already, when the block it was
		 * went back to the allocator by a way the wrappers do not see (a
		 * library's own realloc or free): that entry is this block now. */
		for (; table[j].p != 0; j = (j + 1) & (cap - 1)) {
			if (table[j].p == key) {
				atomic_fetch_sub(&live, 1);
				atomic_fetch_sub(&live_bytes, table[j].n);
				free_j = j;
				break;
			}
			if (table[j].p == GONE && free_j == SIZE_MAX)
				free_j = j;
		}
		if (free_j == SIZE_MAX) {
			free_j = j;
			used++;
		}
		table[free_j] = (struct slot){ key, n };
		atomic_fetch_add(&live, 1);
		atomic_fetch_add(&live_bytes, n);
	}
	pthread_mutex_unlock(&lock);
	UTIL_UNSEEN_END();
}

/* Forget p; true when it was one of ours (*n gets its size). Its guard
 * is looked at first, when what is "freed" or "reallocated". */
static bool forget(void *p, size_t *n, const char *when)
{
	bool ours = false;
	UTIL_UNSEEN_BEGIN();
	pthread_mutex_lock(&lock);
	if (cap > 0) {
		uintptr_t key = (uintptr_t)p ^ HIDE;
		size_t j = hash(key) & (cap - 1);
		while (table[j].p != 0) {
			if (table[j].p == key) {
				*n = table[j].n;
				guard_look(p, *n, when);
				table[j].p = GONE;
				atomic_fetch_sub(&live, 1);
				atomic_fetch_sub(&live_bytes, *n);
				ours = true;
				break;
			}
			j = (j + 1) & (cap - 1);
		}
	}
	pthread_mutex_unlock(&lock);
	UTIL_UNSEEN_END();
	return ours;
}

/* What a refused asprintf or vasprintf leaves in its pointer: a page
 * nobody may read or write (alloc_init maps it), or, if it could not be
 * mapped, a few bytes of this file's that are no block either. */
static char *undefined_page;
static size_t undefined_len;
static char undefined_bytes[16];
static atomic_bool undefined_freed;   /* free() was given it since the last reset */

/* A fork() from another thread must not leave the child with the table
 * locked. */
static void before_fork(void) { pthread_mutex_lock(&lock); }
static void after_fork(void) { pthread_mutex_unlock(&lock); }
__attribute__((constructor)) static void alloc_init(void)
{
	pthread_atfork(before_fork, after_fork, after_fork);
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, page > 0 ? (size_t)page : 4096, PROT_NONE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		undefined_page = p;
		undefined_len = page > 0 ? (size_t)page : 4096;
	} else {
		undefined_page = undefined_bytes;
		undefined_len = sizeof undefined_bytes;
	}
}

bool lt_alloc_undefined(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, start = (uintptr_t)undefined_page;
	return undefined_page != NULL && a >= start && a - start < undefined_len;
}

/* The hold of lt_alloc_hold_next(): the next allocation of the code under
 * test (not the kit's) waits there until lt_alloc_release(). Its own
 * mutex (hold.h), not the table's: the held thread owns nothing of ours. */
static struct lt_hold hold = LT_HOLD_INIT;

static void hold_here(bool kit)
{
	if (!kit)
		lt_hold_here(&hold, NULL, NULL);
}

static _Thread_local bool never_refused;   /* lt_alloc_not_this_thread() */

/* Every allocation asks first: false when it is the one to fail. The
 * kit's are counted among the armed ones only when lt_alloc_arm_any()
 * armed the failpoint. */
static bool may_allocate(bool kit)
{
	hold_here(kit);
	UTIL_UNSEEN_BEGIN();
	atomic_fetch_add(&made, 1);
	bool may = never_refused || atomic_load(&countdown) <= 0 || (kit && !atomic_load(&any)) ||
	           atomic_fetch_sub(&countdown, 1) != 1;
	if (!may)
		atomic_store(&fired, true);
	UTIL_UNSEEN_END();
	if (!may)
		errno = ENOMEM;
	return may;
}

static void free_as(void *p);

/* n * size into *total: false (errno ENOMEM) when it does not fit a size_t */
static bool product(size_t n, size_t size, size_t *total)
{
	if (size != 0 && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return false;
	}
	*total = n * size;
	return true;
}

/* n bytes and the guard past them: false when that does not fit a size_t */
static bool with_guard(size_t n, size_t *total)
{
	if (GUARD > 0 && n > SIZE_MAX - GUARD) {
		errno = ENOMEM;
		return false;
	}
	*total = n + GUARD;
	return true;
}

static void *malloc_as(bool kit, size_t n)
{
	size_t total;
	if (!may_allocate(kit) || !with_guard(n, &total))
		return NULL;
	void *p = __real_malloc(total);
	remember(p, n);
	return p;
}

static void *calloc_as(bool kit, size_t n, size_t size)
{
	size_t bytes, total;
	if (!may_allocate(kit) || !product(n, size, &bytes) || !with_guard(bytes, &total))
		return NULL;
	void *p = __real_calloc(1, total);
	remember(p, bytes);
	return p;
}

static void *realloc_as(bool kit, void *p, size_t n)
{
	if (p == NULL)
		return malloc_as(kit, n);
	if (n == 0) {            /* glibc frees and returns NULL */
		free_as(p);
		return NULL;
	}
	size_t total;
	if (!may_allocate(kit) || !with_guard(n, &total))
		return NULL;         /* p stays as it was */
	size_t old = 0;
	bool ours = forget(p, &old, "reallocated");
	void *q = __real_realloc(p, total);
	if (q == NULL) {
		if (ours)
			remember(p, old);
		return NULL;
	}
	remember(q, n);
	return q;
}

static void *reallocarray_as(bool kit, void *p, size_t n, size_t size)
{
	size_t bytes;
	return product(n, size, &bytes) ? realloc_as(kit, p, bytes) : NULL;
}

static void free_as(void *p)
{
	size_t n;
	if (p != NULL && lt_alloc_undefined(p)) {
		atomic_store(&undefined_freed, true);   /* the allocator would abort */
		return;
	}
	if (p != NULL)
		(void)forget(p, &n, "freed");
	__real_free(p);
}

static void *aligned_alloc_as(bool kit, size_t align, size_t n)
{
	size_t total;
	if (!may_allocate(kit) || !with_guard(n, &total))
		return NULL;
	void *p = __real_aligned_alloc(align, total);
	remember(p, n);
	return p;
}

/* Like the others, an error code and nothing in *out when refused. */
static int posix_memalign_as(bool kit, void **out, size_t align, size_t n)
{
	size_t total;
	if (!may_allocate(kit) || !with_guard(n, &total))
		return ENOMEM;
	int rc = __real_posix_memalign(out, align, total);
	if (rc == 0)
		remember(*out, n);
	return rc;
}

static char *strdup_as(bool kit, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc_as(kit, n);
	if (d != NULL)
		memcpy(d, s, n);
	return d;
}

static char *strndup_as(bool kit, const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = malloc_as(kit, len + 1);
	if (d != NULL) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

static int vasprintf_as(bool kit, char **out, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int len = vsnprintf(NULL, 0, fmt, ap);
	char *s = len < 0 ? NULL : malloc_as(kit, (size_t)len + 1);
	if (s != NULL)
		vsnprintf(s, (size_t)len + 1, fmt, again);
	va_end(again);
	*out = s != NULL ? s : undefined_page;
	return s != NULL ? len : -1;
}

/* The code under test's calls (-Wl,--wrap) and the kit's (renamed to
 * lt_kit_* in the archive the tests link: tests/harness/alloc.syms). */
#define BOTH_NAMES(ret, name, params, ...) \
	ret __wrap_##name params { return name##_as(false, __VA_ARGS__); } \
	ret lt_kit_##name params { return name##_as(true, __VA_ARGS__); }
BOTH_NAMES(void *, malloc, (size_t n), n)
BOTH_NAMES(void *, calloc, (size_t n, size_t size), n, size)
BOTH_NAMES(void *, realloc, (void *p, size_t n), p, n)
BOTH_NAMES(void *, reallocarray, (void *p, size_t n, size_t size), p, n, size)
BOTH_NAMES(char *, strdup, (const char *s), s)
BOTH_NAMES(char *, strndup, (const char *s, size_t n), s, n)
BOTH_NAMES(int, vasprintf, (char **out, const char *fmt, va_list ap), out, fmt, ap)
BOTH_NAMES(void *, aligned_alloc, (size_t align, size_t n), align, n)
BOTH_NAMES(int, posix_memalign, (void **out, size_t align, size_t n), out, align, n)

void __wrap_free(void *p) { free_as(p); }
void lt_kit_free(void *p) { free_as(p); }

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int len = vasprintf_as(false, out, fmt, ap);
	va_end(ap);
	return len;
}

int lt_kit_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int len = vasprintf_as(true, out, fmt, ap);
	va_end(ap);
	return len;
}

bool lt_alloc_overrun(char *why, size_t len)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < cap && !overran; i++)
		if (table[i].p > GONE)
			guard_look((const void *)(table[i].p ^ HIDE), table[i].n, "still allocated");
	bool o = overran;
	if (o && why != NULL && len > 0)
		snprintf(why, len, "a block of %zu byte(s) was written past its end (byte %zu "
		         "after it changed; seen when it was %s): a buffer smaller than what was put "
		         "in it (a string's terminating NUL counts), or an index one past the last",
		         overran_n, overran_at + 1, overran_when);
	pthread_mutex_unlock(&lock);
	if (!o && atomic_load(&undefined_freed)) {
		o = true;
		if (why != NULL && len > 0)
			snprintf(why, len, "free() was given the pointer a refused asprintf (or "
			         "vasprintf) left behind: when asprintf fails it returns -1 and the "
			         "pointer's contents are undefined (glibc leaves it as it was, not NULL), "
			         "so the pointer tells nothing; test what asprintf returns");
	}
	return o;
}

void lt_alloc_overrun_reset(void)
{
	atomic_store(&undefined_freed, false);
	pthread_mutex_lock(&lock);
	overran = false;
	pthread_mutex_unlock(&lock);
}

size_t lt_alloc_live(void) { return atomic_load(&live); }
size_t lt_alloc_live_bytes(void) { return atomic_load(&live_bytes); }
size_t lt_alloc_made(void) { return atomic_load(&made); }

void lt_alloc_arm(int k)
{
	lt_alloc_disarm();
	atomic_store(&fired, false);
	atomic_store(&any, false);
	atomic_store(&countdown, k > 0 ? k : 1);
}

void lt_alloc_arm_any(int k)
{
	lt_alloc_arm(k);
	atomic_store(&any, true);
}

bool lt_alloc_disarm(void)
{
	atomic_store(&countdown, 0);
	return atomic_exchange(&fired, false);
}

void lt_alloc_not_this_thread(void)
{
	never_refused = true;
}

void lt_alloc_hold_next(void)
{
	lt_hold_arm(&hold);
}

bool lt_alloc_held(int ms)
{
	return lt_hold_held(&hold, ms);
}

bool lt_alloc_hold_taken(void)
{
	return !lt_hold_armed(&hold);
}

void lt_alloc_release(void)
{
	lt_hold_release(&hold);
}

int lt_alloc_each(const struct lt_alloc_case *c)
{
	for (int k = 1; k <= 10000; k++) {
		size_t base = lt_alloc_live(), base_bytes = lt_alloc_live_bytes();
		if (c->setup)
			c->setup(c->arg);
		size_t before = lt_alloc_made();
		lt_alloc_arm(k);
		int rc = c->call(c->arg);
		bool failed = lt_alloc_disarm();
		size_t n = lt_alloc_made() - before;
		c->check(c->arg, k, failed, rc);
		if (c->teardown)
			c->teardown(c->arg);
		size_t left = lt_alloc_live();
		if (left != base)
			lt_fail(__FILE__, __LINE__, NULL,
			        "%s, round %d (%s): %zd block(s) of %zd byte(s) still allocated after the call, "
			        "the check's retry and the free: a path that returns without free(), "
			        "or a free function that misses a part",
			        c->what, k, failed ? "that allocation refused" : "none refused",
			        (ssize_t)(left - base), (ssize_t)(lt_alloc_live_bytes() - base_bytes));
		if (!failed)
			return (int)n;
	}
	lt_fail(__FILE__, __LINE__, NULL, "%s: still allocating after 10000 refused allocations", c->what);
	return -1;
}
