/*
 * test_alloc.c: the allocation wrappers and failpoint of tests/harness.
 *
 * Each wrapped call is counted and given back; the armed allocation, and
 * only it, fails with ENOMEM; blocks from libc's own allocations pass
 * through free() uncounted; the counts hold with four threads allocating
 * at once (run under make SAN=thread); the kit's queries fail cleanly
 * when one of their allocations does (armed with lt_alloc_arm_any, and
 * only then), on SQLite and PostgreSQL, and the database libraries' own
 * allocations are not counted; a thread the check starts beside the call
 * can be kept out of the failpoint; a refused asprintf leaves its pointer
 * at a page no code may touch, not NULL.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/harness/alloc.h"
#include "tests/harness/labtest.h"
#include "util/clock.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

static void alloc__counts_every_wrapped_call(void **state)
{
	(void)state;
	size_t base = lt_alloc_live(), bytes = lt_alloc_live_bytes(), made = lt_alloc_made();
	char *m = malloc(10);
	int *c = calloc(4, sizeof *c);
	char *s = strdup("hot row");
	char *sn = strndup("hot row", 3);
	char *a = NULL;
	int len = asprintf(&a, "%d likes", 1000);
	long *r = reallocarray(NULL, 2, sizeof *r);
	void *al = aligned_alloc(64, 128), *pm = NULL;
	lt_expect_int(posix_memalign(&pm, 64, 64), 0, "posix_memalign");
	lt_expect(m && c && s && sn && a && r && al && pm, NULL, "an allocation failed with nothing armed");
	lt_expect_int(lt_alloc_live() - base, 8, "blocks live after eight allocations");
	free(al);
	free(pm);
	lt_expect_int(len, 10, "asprintf's length");
	assert_string_equal(a, "1000 likes");
	assert_string_equal(sn, "hot");
	lt_expect_int(lt_alloc_live() - base, 6, "blocks live after six allocations");
	lt_expect_int(lt_alloc_live_bytes() - bytes, 10 + 4 * sizeof *c + 8 + 4 + 11 + 2 * sizeof *r,
	              "bytes live after six allocations");
	m = realloc(m, 100);
	lt_expect_int(lt_alloc_live() - base, 6, "a realloc moves a block, it adds none");
	lt_expect_int(lt_alloc_live_bytes() - bytes, 100 + 4 * sizeof *c + 8 + 4 + 11 + 2 * sizeof *r,
	              "bytes after the realloc");
	free(m);
	free(c);
	free(s);
	free(sn);
	free(a);
	r = realloc(r, 0);        /* frees it */
	lt_expect(r == NULL, NULL, "realloc(p, 0) should free p and return NULL");
	lt_expect_int(lt_alloc_live(), base, "blocks live after every one was freed");
	lt_expect_int(lt_alloc_live_bytes(), bytes, "bytes live after every one was freed");
	lt_expect_int(lt_alloc_made() - made, 9, "allocations made (realloc counts, realloc to 0 does not)");
	free(NULL);
	lt_expect_int(lt_alloc_live(), base, "free(NULL) changes nothing");
}

/* The compiler may drop an allocation whose block is never used; one
 * stored here is used. */
static void *volatile sink;

static void alloc__fails_the_armed_one_only(void **state)
{
	(void)state;
	size_t base = lt_alloc_live();
	void *p[5];
	lt_alloc_arm(3);
	for (int i = 0; i < 5; i++) {
		errno = 0;
		p[i] = i % 2 ? calloc(1, 8) : malloc(8);
		if (i == 2)
			lt_expect_int(errno, ENOMEM, "errno of the refused allocation");
	}
	lt_expect(lt_alloc_disarm(), NULL, "the third allocation was armed and made");
	void *al = NULL;
	lt_alloc_arm(1);
	int pm = posix_memalign(&al, 64, 64);
	lt_expect(lt_alloc_disarm() && pm == ENOMEM && al == NULL, NULL,
	          "an armed posix_memalign should return ENOMEM and leave *out alone");
	for (int i = 0; i < 5; i++)
		lt_expect((p[i] == NULL) == (i == 2), NULL, "allocation %d: %s", i + 1,
		          p[i] ? "made" : "refused");
	for (int i = 0; i < 5; i++)
		free(p[i]);

	char *grown = strdup("x");
	lt_alloc_arm(1);
	char *same = realloc(grown, 4096);
	if (same != NULL)
		grown = same;
	lt_expect(lt_alloc_disarm() && same == NULL, NULL, "an armed realloc should return NULL");
	lt_expect_int(lt_alloc_live(), base + 1, "a refused realloc keeps the old block");
	assert_string_equal(grown, "x");
	char *dup = NULL;
	lt_alloc_arm(1);
	sink = strdup("y");    /* kept where the compiler cannot drop the call */
	lt_expect(sink == NULL && asprintf(&dup, "%s", "z") == 1 && lt_alloc_disarm(), NULL,
	          "strdup should take the armed failure, asprintf the next one");
	free(dup);
	free(grown);

	lt_alloc_arm(2);
	sink = malloc(1);
	free(sink);
	lt_expect(!lt_alloc_disarm(), NULL, "one allocation with the second armed: nothing failed");
	sink = malloc(1);
	lt_expect(sink != NULL, NULL, "disarmed, an allocation must succeed");
	free(sink);
	lt_expect_int(lt_alloc_live(), base, "blocks left");
}

static void alloc__libc_blocks_pass_through_uncounted(void **state)
{
	(void)state;
	size_t base = lt_alloc_live(), made = lt_alloc_made();
	char *path = realpath(".", NULL);     /* malloc'd inside libc */
	lt_expect(path != NULL, NULL, "realpath failed");
	lt_expect_int(lt_alloc_made(), made, "an allocation inside libc is not seen");
	free(path);
	lt_expect_int(lt_alloc_live(), base, "freeing a block libc made changes no count");
}

struct three {
	int calls, failed_rounds, clean_rounds;
	char *kept;
};

/* Three allocations; any refused one is an error with nothing kept. */
static int three_call(void *arg)
{
	struct three *s = arg;
	s->calls++;
	char *a = malloc(4), *b = strdup("two"), *c = calloc(1, 3);
	if (!a || !b || !c) {
		free(a);
		free(b);
		free(c);
		return -1;
	}
	free(a);
	free(c);
	s->kept = b;
	return 0;
}

static void three_check(void *arg, int k, bool failed, int rc)
{
	struct three *s = arg;
	lt_expect_int(rc, failed ? -1 : 0, "the call's result");
	lt_expect(failed == (k <= 3), NULL, "round %d: failed %d", k, failed);
	if (failed)
		s->failed_rounds++;
	else
		s->clean_rounds++;
}

static void three_teardown(void *arg)
{
	struct three *s = arg;
	free(s->kept);
	s->kept = NULL;
}

static void alloc__each_runs_every_k_until_none_fails(void **state)
{
	(void)state;
	struct three s = { 0 };
	struct lt_alloc_case c = { .arg = &s, .call = three_call, .check = three_check,
	                           .teardown = three_teardown, .what = "three" };
	lt_expect_int(lt_alloc_each(&c), 3, "allocations made by a call that made three");
	lt_expect_int(s.calls, 4, "rounds");
	lt_expect_int(s.failed_rounds, 3, "rounds with a refused allocation");
	lt_expect_int(s.clean_rounds, 1, "rounds without one");
}

/* A leak is seen: the same call without its teardown leaves one block. */
static void alloc__a_block_kept_is_counted_live(void **state)
{
	(void)state;
	struct three s = { 0 };
	size_t base = lt_alloc_live(), bytes = lt_alloc_live_bytes();
	lt_expect_int(three_call(&s), 0, "the call");
	lt_expect_int(lt_alloc_live() - base, 1, "blocks kept by the call");
	lt_expect_int(lt_alloc_live_bytes() - bytes, 4, "bytes kept by the call");
	three_teardown(&s);
	lt_expect_int(lt_alloc_live(), base, "after its free");
}

enum { THREADS = 4, ROUNDS = 20000 };

static void *churn(void *arg)
{
	(void)arg;
	void *held[8] = { 0 };
	for (int i = 0; i < ROUNDS; i++) {
		free(held[i % 8]);
		held[i % 8] = i % 3 ? malloc((size_t)(i % 64) + 1) : calloc(1, 16);
	}
	for (int i = 0; i < 8; i++)
		free(held[i]);
	return NULL;
}

static void alloc__threads_keep_the_counts(void **state)
{
	(void)state;
	size_t base = lt_alloc_live(), bytes = lt_alloc_live_bytes(), made = lt_alloc_made();
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		lt_expect_int(pthread_create(&th[i], NULL, churn, NULL), 0, "pthread_create");
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	lt_expect_int(lt_alloc_made() - made, THREADS * ROUNDS, "allocations made by the threads");
	lt_expect_int(lt_alloc_live(), base, "blocks live after the threads freed theirs");
	lt_expect_int(lt_alloc_live_bytes(), bytes, "bytes live after the threads freed theirs");
}

/* The kit's calls fail cleanly at each of their allocations, and the
 * database library's own allocations are not counted (libpq and SQLite
 * allocate many times per query; the kit once or twice). */
static void alloc__kit_queries_fail_cleanly(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, "DROP TABLE IF EXISTS c; CREATE TABLE c (id INTEGER PRIMARY KEY, v BIGINT NOT NULL);"
	                "INSERT INTO c VALUES (1, 41)");
	size_t base = lt_alloc_live(), made = lt_alloc_made();
	int64_t v = 0;
	lt_expect_int(kit_db_query_int(db, "SELECT v + 1 FROM c WHERE id = 1", 0, NULL, &v), 0, "query");
	lt_expect_int(v, 42, "its answer");
	size_t n = lt_alloc_made() - made;
	lt_expect(n >= 1 && n <= 4, NULL, "the kit's query made %zu allocation(s) seen here: "
	          "the database library's own should not be seen", n);
	lt_alloc_arm(1);
	lt_expect_int(kit_db_query_int(db, "SELECT v + 1 FROM c WHERE id = 1", 0, NULL, &v), 0,
	              "the query with the failpoint armed for the code under test only");
	lt_expect(!lt_alloc_disarm(), NULL, "lt_alloc_arm refused an allocation of the kit's");
	int k;
	for (k = 1; ; k++) {
		lt_alloc_arm_any(k);
		int rc = kit_db_query_int(db, "SELECT v + 1 FROM c WHERE id = 1", 0, NULL, &v);
		if (!lt_alloc_disarm())
			break;
		lt_expect(rc != 0, NULL, "allocation %d refused, yet the query returned 0", k);
		lt_expect_int(lt_alloc_live(), base, "blocks left by the failed query");
	}
	lt_expect_int(k - 1, n, "rounds with a refused allocation");
	lt_expect_int(lt_alloc_live(), base, "blocks left");
}

/* Under make SAN=address the wrappers hand every call to ASan's allocator
 * and their table hides the addresses it keeps, so LeakSanitizer still
 * reports what the code leaks. 64 blocks are dropped (a few addresses may
 * stay in registers; not all 64), the leak check must find some, and then
 * they are freed through the copies kept hidden here. */
#if defined(__SANITIZE_ADDRESS__)
#define MASK ((uintptr_t)0x3c3c3c3c3c3c3c3cULL)
static __attribute__((noinline)) void drop_blocks(uintptr_t *hidden, int n)
{
	for (int i = 0; i < n; i++)
		hidden[i] = (uintptr_t)malloc(48) ^ MASK;
}
#endif

static void alloc__leaksanitizer_still_sees_leaks(void **state)
{
	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	uintptr_t hidden[64];
	drop_blocks(hidden, 64);
	fprintf(stderr, "NOTICE: a leak report of 64 blocks of 48 bytes follows, on purpose\n");
	int found = __lsan_do_recoverable_leak_check();
	for (int i = 0; i < 64; i++)
		free((void *)(hidden[i] ^ MASK));
	lt_expect(found != 0, NULL, "LeakSanitizer found none of 64 dropped blocks: "
	          "the wrappers' table keeps them reachable");
#else
	lt_skip("LeakSanitizer runs only under make SAN=address");
#endif
}

/* Without a sanitizer, a write one byte past a block is seen: when the
 * block is freed, when it is reallocated, or while it is still allocated
 * (the look every check ends with); writes inside it never are. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
static __attribute__((noinline)) void put(char *p, size_t i, char c)
{
	p[i] = c;      /* out of the compiler's sight: the index is the test's */
}
#endif

static void alloc__a_write_past_the_end_is_seen(void **state)
{
	(void)state;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	lt_skip("the guard bytes are there only without a sanitizer (ASan sees the write itself)");
#else
	char why[400];
	lt_alloc_overrun_reset();
	char *a = malloc(10), *c = calloc(3, 4), *r = realloc(NULL, 5), *s = strdup("hot");
	lt_expect(a && c && r && s, NULL, "an allocation failed with nothing armed");
	for (size_t i = 0; i < 10; i++)
		put(a, i, 'x');
	for (size_t i = 0; i < 12; i++)
		lt_expect_int(c[i], 0, "calloc's bytes are zero");
	r = realloc(r, 40);
	put(r, 39, 'x');
	lt_expect(!lt_alloc_overrun(why, sizeof why), NULL, "writes inside the blocks were taken "
	          "for a write past one: %s", why);
	put(s, 4, '\0');                          /* "hot" has 4 bytes: one too far */
	lt_expect(lt_alloc_overrun(why, sizeof why), NULL,
	          "a NUL one past a strdup'd string, still allocated, was not seen");
	lt_expect(strstr(why, "block of 4 byte(s)") && strstr(why, "byte 1 after") &&
	          strstr(why, "still allocated"), NULL, "the message: %s", why);
	free(s);
	lt_alloc_overrun_reset();
	put(a, 11, 'x');                          /* byte 2 past its end */
	free(a);
	lt_expect(lt_alloc_overrun(why, sizeof why) && strstr(why, "byte 2 after") &&
	          strstr(why, "freed"), NULL, "a write past a block, freed: %s", why);
	lt_alloc_overrun_reset();
	put(c, 12, 'x');
	c = realloc(c, 100);
	lt_expect(lt_alloc_overrun(why, sizeof why) && strstr(why, "reallocated"), NULL,
	          "a write past a block, reallocated: %s", why);
	lt_alloc_overrun_reset();
	free(c);
	free(r);
	lt_expect(!lt_alloc_overrun(why, sizeof why), NULL, "after the reset: %s", why);
#endif
}

/* A refused asprintf returns -1 and leaves its pointer neither NULL nor
 * a block (glibc leaves it as it was); a free() of it is taken, not
 * passed to the allocator, and seen as the check ends; a read of it
 * stops a child process with SIGSEGV. */
static void alloc__a_refused_asprintf_leaves_no_null(void **state)
{
	(void)state;
	char why[400];
	char *text = NULL;
	size_t base = lt_alloc_live();
	lt_alloc_overrun_reset();
	lt_alloc_arm(1);
	int len = asprintf(&text, "%d likes", 7);
	lt_expect(lt_alloc_disarm(), NULL, "the armed asprintf was not refused");
	lt_expect_int(len, -1, "a refused asprintf's answer");
	lt_expect(text != NULL && lt_alloc_undefined(text), NULL, "a refused asprintf left its "
	          "pointer at %p, not at the page no code may touch", (void *)text);
	lt_expect_int(lt_alloc_live(), base, "blocks live after a refused asprintf");
	lt_expect(!lt_alloc_overrun(why, sizeof why), NULL, "before any free: %s", why);
	free(text);
	lt_expect(lt_alloc_overrun(why, sizeof why) && strstr(why, "refused asprintf"), NULL,
	          "free() of the pointer a refused asprintf left was not seen: \"%s\"", why);
	lt_alloc_overrun_reset();
	lt_expect(!lt_alloc_overrun(why, sizeof why), NULL, "after the reset: %s", why);
	lt_expect(!lt_alloc_undefined(NULL) && !lt_alloc_undefined(why), NULL,
	          "NULL or a buffer taken for the page a refused asprintf leaves");
#ifndef __SANITIZE_THREAD__   /* no fork from a process with threads under TSan */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		_exit(text[0] == 'x' ? 3 : 4);   /* the read must not come back */
	}
	int status = 0;
	lt_expect(pid > 0 && waitpid(pid, &status, 0) == pid, NULL, "fork or waitpid failed");
	bool stopped = WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
#if defined(__SANITIZE_ADDRESS__)
	/* ASan may keep its own handler: it reports the SEGV and exits */
	stopped = stopped || (WIFEXITED(status) && WEXITSTATUS(status) != 3 &&
	                      WEXITSTATUS(status) != 4);
#endif
	lt_expect(stopped, NULL, "a read of the pointer "
	          "a refused asprintf left did not stop the process with SIGSEGV (status %d)",
	          status);
#endif
}

struct holder {
	pthread_mutex_t *m;         /* held around the allocation, when not NULL */
	void *p;
	atomic_bool done;
};

static void *allocate_once(void *arg)
{
	struct holder *h = arg;
	if (h->m)
		pthread_mutex_lock(h->m);
	h->p = malloc(32);
	if (h->m)
		pthread_mutex_unlock(h->m);
	atomic_store(&h->done, true);
	return NULL;
}

/* The held allocation waits, with the lock its caller holds, until the
 * release; an allocation made while nothing is armed never waits; a
 * release with nothing held only disarms. */
static void alloc__hold_stops_the_next_allocation(void **state)
{
	(void)state;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct holder a = { .m = &m }, b = { .m = &m };
	pthread_t ta, tb;
	lt_alloc_hold_next();
	lt_expect(!lt_alloc_hold_taken(), NULL, "the hold taken before anything allocated");
	lt_expect_int(pthread_create(&ta, NULL, allocate_once, &a), 0, "pthread_create a");
	lt_expect(lt_alloc_held(5000), NULL, "no allocation was held");
	lt_expect(lt_alloc_hold_taken(), NULL, "the hold not taken by the held allocation");
	lt_expect_int(pthread_create(&tb, NULL, allocate_once, &b), 0, "pthread_create b");
	util_sleep_ns(100 * 1000000LL);
	lt_expect(!atomic_load(&a.done), NULL, "the held allocation returned before the release");
	lt_expect(!atomic_load(&b.done), NULL, "b got the mutex a holds around its held allocation");
	lt_alloc_release();
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	lt_expect(a.p != NULL && b.p != NULL, NULL, "an allocation failed after the release");
	free(a.p);
	free(b.p);

	/* nothing armed: no wait */
	struct holder c = { .m = NULL };
	lt_expect(!lt_alloc_held(10), NULL, "held with nothing armed");
	allocate_once(&c);
	lt_expect(atomic_load(&c.done) && c.p != NULL, NULL, "an unarmed allocation");
	free(c.p);

	/* armed, then released before any allocation: disarmed */
	lt_alloc_hold_next();
	lt_alloc_release();
	lt_expect(lt_alloc_hold_taken(), NULL, "the hold still armed after a release");
	c.p = NULL;
	allocate_once(&c);
	lt_expect(c.p != NULL, NULL, "an allocation after the release");
	free(c.p);
}

static void *allocate_unrefused(void *arg)
{
	struct holder *h = arg;
	lt_alloc_not_this_thread();
	h->p = malloc(32);
	atomic_store(&h->done, true);
	return NULL;
}

/* A thread that said lt_alloc_not_this_thread() allocates while the
 * failpoint is armed: its allocation is counted live, not refused, and
 * the armed one is still the next of another thread. */
static void alloc__a_thread_of_the_check_is_never_refused(void **state)
{
	(void)state;
	struct holder h = { .m = NULL };
	pthread_t t;
	size_t base = lt_alloc_live();
	lt_alloc_arm(1);
	lt_expect_int(pthread_create(&t, NULL, allocate_unrefused, &h), 0, "pthread_create");
	pthread_join(t, NULL);
	lt_expect(h.p != NULL, NULL, "the exempt thread's allocation was refused");
	lt_expect_int((long long)(lt_alloc_live() - base), 1, "blocks live after the exempt allocation");
	sink = malloc(8);
	bool fired = lt_alloc_disarm();
	lt_expect(fired && sink == NULL, NULL,
	          "the armed allocation, the next after the exempt thread's, was not refused");
	free(sink);
	free(h.p);
}

/* The look after every check's teardown: a block allocated while a check
 * ran and still allocated after it fails the check, however it passed.
 * In a child process, which runs a group of its own: one check that
 * keeps a block, one that frees its own. */
static void *kept_block;

static void keeps_a_block(void **state)
{
	(void)state;
	kept_block = malloc(24);
}

static void frees_its_block(void **state)
{
	(void)state;
	free(malloc(24));
}

static int run_group(bool leak)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		for (int fd = 100; fd < 1024; fd++)
			close(fd);          /* the runner's report channel is the parent's */
		unsetenv("HOTROW_LAB_CHECKS");
		const struct CMUnitTest one[] = {
			cmocka_unit_test(keeps_a_block), cmocka_unit_test(frees_its_block),
		};
		int failed = labtest_run("leak-look", leak ? one : one + 1, leak ? 2 : 1);
		free(kept_block);
		_exit(failed > 100 ? 100 : failed);
	}
	int status = -1;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void alloc__a_block_left_after_a_check_fails_it(void **state)
{
	(void)state;
#ifdef __SANITIZE_THREAD__
	skip();   /* no threads may start in a child forked from a process with threads */
#endif
	lt_expect_int(run_group(false), 0, "failed checks in a group whose check frees its block");
	lt_expect_int(run_group(true), 1, "failed checks in a group where one check keeps a block");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LABTEST_SQLITE(alloc__counts_every_wrapped_call),
		LABTEST_SQLITE(alloc__fails_the_armed_one_only),
		LABTEST_SQLITE(alloc__libc_blocks_pass_through_uncounted),
		LABTEST_SQLITE(alloc__each_runs_every_k_until_none_fails),
		LABTEST_SQLITE(alloc__a_block_kept_is_counted_live),
		LABTEST_SQLITE(alloc__threads_keep_the_counts),
		LABTEST_SQLITE(alloc__hold_stops_the_next_allocation),
		LABTEST_SQLITE(alloc__a_thread_of_the_check_is_never_refused),
		LABTEST_SQLITE(alloc__leaksanitizer_still_sees_leaks),
		LABTEST_SQLITE(alloc__a_write_past_the_end_is_seen),
		LABTEST_SQLITE(alloc__a_refused_asprintf_leaves_no_null),
		cmocka_unit_test(alloc__a_block_left_after_a_check_fails_it),
		LABTEST_BOTH(alloc__kit_queries_fail_cleanly),
	};
	return labtest_main("harness", tests);
}
