/*
 * alloc.h: count what the code under test allocates, and fail the k-th
 * allocation, for every k.
 *
 * A lab's test binary is linked with -Wl,--wrap for malloc, calloc,
 * realloc, reallocarray, aligned_alloc, posix_memalign, free, strdup,
 * strndup, asprintf and vasprintf (LABTEST_WRAP in labs/module.mk): every
 * such call made by code linked into the binary (the student's, the
 * harness's) goes through alloc.c, which keeps a table of the blocks it
 * handed out. The kit's calls go there too, under other names (its archive
 * is linked with them renamed, tests/harness/alloc.syms): they are
 * counted, so a block the kit hands over (an id from kit_store_spop) that
 * the student never frees is seen, but they are refused only by
 * lt_alloc_arm_any(): the kit's own failure paths are tests/kit's to
 * check, and a lab's check fails what the student wrote. Calls made inside
 * shared libraries (libpq, libsqlite3, libc itself) are not seen: the
 * database's own memory is not the student's to free. Under ASan or TSan
 * the wrappers hand every call on to the sanitizer's allocator, so its
 * checks still see each block (and LeakSanitizer each leak).

 * Like the step failpoints (steps.h), a check arms the failpoint for the
 * k-th allocation from now, makes the call, and disarms; the armed
 * allocation returns NULL with errno ENOMEM, once (an armed asprintf or
 * vasprintf returns -1, and its pointer is no NULL: lt_alloc_undefined). It repeats for k = 1,
 * 2, ... until the call made fewer than k allocations.
 *
 * Interface:
 *   size_t base = lt_alloc_live();
 *   for (int k = 1; ; k++) {
 *       ...put the state back...
 *       lt_alloc_arm(k);
 *       int64_t r = flush_views(st, db, 100);
 *       if (!lt_alloc_disarm())
 *           break;                     // the call made fewer than k allocations
 *       ...the error returned, nothing lost, nothing doubled, a retry works...
 *   }
 *   lt_expect_int(lt_alloc_live(), base, "blocks left allocated");
 * or the same loop with the leak check built in, lt_alloc_each(). Count
 * over the whole process: arm just before the call, disarm just after,
 * and start nothing else in between (threads the call starts count). A
 * thread the check itself starts meanwhile (another caller, racing the
 * call) calls lt_alloc_not_this_thread() first: what it allocates is
 * counted as live, never refused, so a refusal is always the call's.
 */
#ifndef HOTROW_TESTS_ALLOC_H
#define HOTROW_TESTS_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether a block handed out by the wrappers was written past its end
 * since the last reset (its guard bytes changed: seen when it was freed
 * or reallocated, or now, among those still allocated), or free() was
 * given the pointer a refused asprintf left (below); why gets a line
 * that says so. The guard bytes are there without a sanitizer only:
 * under ASan the write itself stops the process. Every check ends with
 * this look (labtest.c). */
bool lt_alloc_overrun(char *why, size_t len);
void lt_alloc_overrun_reset(void);

/* When asprintf or vasprintf fails, glibc returns -1 and leaves the
 * pointer as it was ("the contents of strp are undefined"): code that
 * tests the pointer for NULL instead of the -1 sees a NULL only where the
 * pointer held one already. A refused one here leaves in it, not NULL,
 * the address of a page mapped with no access: a read or a write of it
 * stops the check at once (SIGSEGV; labtest.c says whose address it
 * was), and free() of it, which the allocator would abort on, is noted
 * and fails the check as it ends (lt_alloc_overrun). True when addr lies
 * in that page. */
bool lt_alloc_undefined(const void *addr);

/* Blocks allocated through the wrappers and not freed yet, and their bytes. */
size_t lt_alloc_live(void);
size_t lt_alloc_live_bytes(void);
/* Allocations made through the wrappers since the process started (failed
 * ones included): the difference around a call is how many it made. */
size_t lt_alloc_made(void);

/* Fail the running check when more blocks are live than base, the count
 * taken before: "N block(s) left allocated after WHAT" (hint tag alloc). */
#define lt_alloc_expect_none_left(base, what) do { \
	size_t live_ = lt_alloc_live(), base_ = (base); \
	if (live_ != base_) \
		lt_fail(__FILE__, __LINE__, "alloc", "%zd block(s) left allocated after %s", \
		        (ssize_t)(live_ - base_), what); \
} while (0)

/* Fail the k-th allocation (k >= 1) from now, once, counting those made
 * by the code under test (not the kit's). */
void lt_alloc_arm(int k);
/* The same, counting the kit's allocations too. */
void lt_alloc_arm_any(int k);

/* The calling thread's allocations are never refused from now on (they
 * are still counted, and held by lt_alloc_hold_next()): for a thread a
 * check starts beside the call under test. */
void lt_alloc_not_this_thread(void);

/* Disarm; true when the armed allocation was reached (it failed), false
 * when fewer than k were made. */
bool lt_alloc_disarm(void);

/* Hold the next allocation the code under test makes (not the kit's),
 * in whichever thread makes it, inside the wrapper (before it allocates)
 * until lt_alloc_release(): a thread stopped in the middle of the code
 * that allocates, with whatever locks that code holds at that point, so
 * a check can see what another thread can or cannot do meanwhile.
 *   lt_alloc_hold_next();                 // then, in thread A: an add that allocates
 *   if (lt_alloc_held(2000)) {            // A is inside its allocation now
 *       ...thread B's add must not finish while A is held...
 *   }
 *   lt_alloc_release();                   // lets A go on (or disarms)
 * lt_alloc_held(ms) waits up to ms milliseconds for a thread to be held;
 * lt_alloc_hold_taken() is true once an allocation has taken the hold (or
 * it was released). Allocate nothing else between hold and release. */
void lt_alloc_hold_next(void);
bool lt_alloc_held(int ms);
bool lt_alloc_hold_taken(void);
void lt_alloc_release(void);

/* One operation run once for every k by lt_alloc_each(). */
struct lt_alloc_case {
	void *arg;
	/* Make the state the operation starts from (may allocate: it is not
	 * armed). Optional. */
	void (*setup)(void *arg);
	/* The operation; its result goes to check. */
	int (*call)(void *arg);
	/* Assert the invariant. failed: the k-th allocation was refused inside
	 * the call (false on the last round, when the call made fewer than k:
	 * then it must have succeeded). A retry, if the check wants one, is
	 * made here, unarmed. */
	void (*check)(void *arg, int k, bool failed, int rc);
	/* Free what setup made. Optional. After it, every block allocated
	 * since the round began must be freed again. */
	void (*teardown)(void *arg);
	const char *what;   /* the operation, for messages: "views_flush" */
};

/* Run c for k = 1, 2, ... until the call makes fewer than k allocations
 * (at most 10,000 rounds); fail the check when a round leaves a block
 * allocated after teardown. Returns how many allocations the call made
 * when none failed. */
int lt_alloc_each(const struct lt_alloc_case *c);

#endif
