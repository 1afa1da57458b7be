/*
 * test_threads.c: the pthread_create wrapper and failpoint of
 * tests/harness (threads.h).
 *
 * Each start is counted and runs its thread; the armed start, and only
 * it, starts nothing and returns EAGAIN; a failpoint armed past the last
 * start is not reached; the kit's starts (its load generator's threads)
 * are never refused.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "kit/load.h"
#include "tests/harness/labtest.h"
#include "tests/harness/threads.h"
#include "util/clock.h"

static atomic_int ran;

static void *run(void *arg)
{
	(void)arg;
	atomic_fetch_add(&ran, 1);
	return NULL;
}

static void threads__counts_and_runs_every_start(void **state)
{
	(void)state;
	atomic_store(&ran, 0);
	long before = lt_thread_starts();
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		lt_expect_int(pthread_create(&th[i], NULL, run, NULL), 0, "pthread_create, nothing armed");
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	lt_expect_int(lt_thread_starts() - before, 3, "starts counted");
	lt_expect_int(atomic_load(&ran), 3, "threads that ran");
}

static void threads__refuses_the_armed_one_only(void **state)
{
	(void)state;
	atomic_store(&ran, 0);
	pthread_t th[3];
	int rc[3];
	lt_thread_arm(2);
	for (int i = 0; i < 3; i++)
		rc[i] = pthread_create(&th[i], NULL, run, NULL);
	bool fired = lt_thread_disarm();
	lt_expect(fired, NULL, "the armed start was not reached");
	lt_expect_int(rc[0], 0, "the first start");
	lt_expect_int(rc[1], EAGAIN, "the second (armed) start");
	lt_expect_int(rc[2], 0, "the third start");
	pthread_join(th[0], NULL);
	pthread_join(th[2], NULL);
	lt_expect_int(atomic_load(&ran), 2, "threads that ran (the refused one did not)");
	lt_expect(!lt_thread_disarm(), NULL, "a second disarm says the failpoint fired again");

	lt_thread_arm(2);
	rc[0] = pthread_create(&th[0], NULL, run, NULL);
	lt_expect(!lt_thread_disarm(), NULL, "a failpoint armed for the second start fired at the first");
	lt_expect_int(rc[0], 0, "the one start before the armed one");
	pthread_join(th[0], NULL);
	rc[0] = pthread_create(&th[0], NULL, run, NULL);
	lt_expect_int(rc[0], 0, "a start once disarmed");
	pthread_join(th[0], NULL);
}

static int nothing(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	(void)th;
	return 0;
}

static void threads__kit_starts_never_refused(void **state)
{
	(void)state;
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = NULL;
	c.threads = 2;
	c.iterations = 3;
	c.progress = false;
	struct kit_load_result r;
	long before = lt_thread_starts();
	lt_thread_arm(1);
	int rc = kit_load_run(&c, nothing, NULL, &r);
	bool fired = lt_thread_disarm();
	lt_expect_int(rc, 0, "kit_load_run with the failpoint armed");
	lt_expect(!fired, NULL, "the kit's thread start was refused");
	lt_expect_int(r.ok, 6, "calls the kit's two threads made");
	lt_expect_int(lt_thread_starts() - before, 0, "the kit's starts counted as the code under test's");
}

static pthread_mutex_t held_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cv = PTHREAD_COND_INITIALIZER;
static bool let_go;

static void *wait_to_go(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held_m);
	while (!let_go)
		pthread_cond_wait(&held_cv, &held_m);
	pthread_mutex_unlock(&held_m);
	return NULL;
}

static void *exits(void *arg)
{
	(void)arg;
	pthread_exit(NULL);
}

static void go(bool v)
{
	pthread_mutex_lock(&held_m);
	let_go = v;
	pthread_cond_broadcast(&held_cv);
	pthread_mutex_unlock(&held_m);
}

/* Joined threads are reaped; a finished thread nobody joined is not, for
 * as long as one waits; a running one is running. */
static void threads__unreaped_until_joined(void **state)
{
	(void)state;
	int base = lt_thread_unreaped(), base_running = lt_thread_running();
	pthread_t a, b;
	go(false);
	lt_expect_int(pthread_create(&a, NULL, wait_to_go, NULL), 0, "pthread_create a");
	lt_expect_int(pthread_create(&b, NULL, run, NULL), 0, "pthread_create b");
	lt_expect_int(lt_thread_unreaped() - base, 2, "unreaped: a running, b not joined");
	util_sleep_ns(50 * 1000000LL);   /* b has returned by now, unjoined */
	lt_expect_int(lt_thread_settle(100) - base, 2, "unreaped after b returned, unjoined");
	lt_expect_int(lt_thread_running() - base_running, 1, "running: a only");
	pthread_join(b, NULL);
	lt_expect_int(lt_thread_unreaped() - base, 1, "unreaped once b is joined");
	go(true);
	pthread_join(a, NULL);
	lt_expect_int(lt_thread_unreaped() - base, 0, "unreaped once both are joined");
	lt_expect_int(lt_thread_running() - base_running, 0, "running once both are joined");

	/* pthread_exit ends the start function too */
	lt_expect_int(pthread_create(&a, NULL, exits, NULL), 0, "pthread_create (pthread_exit)");
	util_sleep_ns(50 * 1000000LL);
	lt_expect_int(lt_thread_running() - base_running, 0, "running after pthread_exit");
	lt_expect_int(lt_thread_unreaped() - base, 1, "unreaped after pthread_exit, unjoined");
	pthread_join(a, NULL);
	lt_expect_int(lt_thread_unreaped() - base, 0, "unreaped once joined");
}

/* lt_thread_join_begun names the thread whose join has begun, by its
 * start's number, and no other. */
static void threads__join_begun_by_number(void **state)
{
	(void)state;
	pthread_t a, b;
	long na = lt_thread_starts();
	lt_expect_int(pthread_create(&a, NULL, run, NULL), 0, "pthread_create a");
	long nb = lt_thread_starts();
	lt_expect_int(pthread_create(&b, NULL, run, NULL), 0, "pthread_create b");
	lt_expect(!lt_thread_join_begun(na) && !lt_thread_join_begun(nb), NULL,
	          "a join reported begun before any pthread_join");
	pthread_join(a, NULL);
	lt_expect(lt_thread_join_begun(na) && !lt_thread_join_begun(nb), NULL,
	          "after joining a only: a begun %d, b begun %d (expected 1 and 0)",
	          lt_thread_join_begun(na), lt_thread_join_begun(nb));
	pthread_join(b, NULL);
	lt_expect(lt_thread_join_begun(nb), NULL, "b's join not reported once b was joined");
}

/* A detached thread is reaped when it returns, whether it was detached
 * by pthread_detach or started detached; lt_thread_settle waits for it. */
/* With a head start the new thread reads what its creator sets right
 * after pthread_create before it is set. */
struct late {
	atomic_int value;       /* set by the creator after pthread_create */
	atomic_int seen;        /* what the thread read first */
};

static void *read_late(void *arg)
{
	struct late *l = arg;
	atomic_store(&l->seen, atomic_load(&l->value));
	return NULL;
}

static void threads__head_start_runs_the_thread_first(void **state)
{
	(void)state;
	struct late l;
	atomic_init(&l.value, 0);
	atomic_init(&l.seen, -1);
	pthread_t th;
	lt_thread_head_start(20);
	int rc = pthread_create(&th, NULL, read_late, &l);
	lt_thread_head_start(0);
	assert_int_equal(rc, 0);
	atomic_store(&l.value, 7);
	pthread_join(th, NULL);
	lt_expect_int(atomic_load(&l.seen), 0, "what the thread read, let run first, of a value set "
	              "after its pthread_create");
}

static void threads__detached_reaped_when_done(void **state)
{
	(void)state;
	int base = lt_thread_unreaped();
	pthread_t a, b;
	go(false);
	lt_expect_int(pthread_create(&a, NULL, wait_to_go, NULL), 0, "pthread_create a");
	lt_expect_int(pthread_detach(a), 0, "pthread_detach a");
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	lt_expect_int(pthread_create(&b, &attr, wait_to_go, NULL), 0, "pthread_create b, detached");
	pthread_attr_destroy(&attr);
	lt_expect_int(lt_thread_settle(50) - base, 2, "unreaped: two detached threads still waiting");
	go(true);
	lt_expect_int(lt_thread_settle(5000) - base, 0, "unreaped once both detached threads returned");

	/* detached after it returned */
	lt_expect_int(pthread_create(&a, NULL, run, NULL), 0, "pthread_create c");
	util_sleep_ns(50 * 1000000LL);
	lt_expect_int(lt_thread_unreaped() - base, 1, "unreaped: c returned, not yet detached");
	lt_expect_int(pthread_detach(a), 0, "pthread_detach c");
	lt_expect_int(lt_thread_unreaped() - base, 0, "unreaped once c is detached");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LABTEST_SQLITE(threads__counts_and_runs_every_start),
		LABTEST_SQLITE(threads__refuses_the_armed_one_only),
		LABTEST_SQLITE(threads__kit_starts_never_refused),
		LABTEST_SQLITE(threads__unreaped_until_joined),
		LABTEST_SQLITE(threads__detached_reaped_when_done),
		LABTEST_SQLITE(threads__join_begun_by_number),
		LABTEST_SQLITE(threads__head_start_runs_the_thread_first),
	};
	return labtest_main("harness", tests);
}
