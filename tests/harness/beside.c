/*
 * beside.c: one call held at its COMMIT while another runs beside it,
 * and calls let go together (beside.h).
 */
#include "tests/harness/beside.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "tests/harness/deadline.h"
#include "tests/harness/session.h"
#include "tests/harness/sql.h"
#include "util/clock.h"

struct run {
	lt_beside_call *call;
	void *arg;
	struct kit_db *db;
	int rc;
	atomic_int done;
	/* the held call's stop: guarded by mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool seen, at_commit, go;
};

static void stop_at_commit(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct run *r = arg;
	(void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || r->seen || !sql ||
	    !(lt_sql_is(sql, "COMMIT") || lt_sql_is(sql, "END")))
		return;
	r->seen = true;
	struct timespec until = lt_deadline_ms(20000);
	pthread_mutex_lock(&r->mu);
	r->at_commit = true;
	pthread_cond_broadcast(&r->cv);
	while (!r->go && pthread_cond_timedwait(&r->cv, &r->mu, &until) == 0)
		;
	pthread_mutex_unlock(&r->mu);
}

static void *run_call(void *arg)
{
	struct run *r = arg;
	r->rc = r->call(r->arg, r->db);
	pthread_mutex_lock(&r->mu);
	atomic_store(&r->done, 1);
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static void run_init(struct run *r, struct labtest *t, lt_beside_call *call, void *arg)
{
	*r = (struct run){ .call = call, .arg = arg, .db = labtest_connect(t) };
	atomic_init(&r->done, 0);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
}

static void run_free(struct run *r)
{
	kit_db_close(r->db);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
}

static void beside(struct labtest *t, lt_beside_call *held, lt_beside_call *side, void *arg,
                   int wait_ms, bool lose, struct lt_beside *out)
{
	struct kit_db *monitor = labtest_db(t);
	struct run h, s;
	run_init(&h, t, held, arg);
	run_init(&s, t, side, arg);
	/* the second may wait on after the first is gone: not for ever */
	if (lose && kit_db_set_lock_timeout(s.db, 15000) != 0)
		fail_msg("kit_db_set_lock_timeout: %s", kit_db_errmsg(s.db));
	kit_db_set_hook(h.db, stop_at_commit, &h);
	pthread_t th, ts;
	if (pthread_create(&th, NULL, run_call, &h) != 0)
		fail_msg("pthread_create");
	struct timespec until = lt_deadline_ms(wait_ms);
	pthread_mutex_lock(&h.mu);
	while (!h.at_commit && !atomic_load(&h.done) &&
	       pthread_cond_timedwait(&h.cv, &h.mu, &until) == 0)
		;
	bool at_commit = h.at_commit;
	pthread_mutex_unlock(&h.mu);
	bool ended = false, waited = false;
	if (at_commit) {
		int64_t id = lt_session_id(s.db);
		if (pthread_create(&ts, NULL, run_call, &s) != 0)
			fail_msg("pthread_create");
		int64_t start = util_now_ns();
		while (!atomic_load(&s.done) && util_now_ns() - start < (int64_t)wait_ms * 1000000) {
			if (lt_lock_waiting(monitor, id) == 1) {
				waited = true;
				break;
			}
			util_sleep_ns(lt_lock_poll_ns(monitor));
		}
		ended = atomic_load(&s.done) != 0;
	}
	bool lost = at_commit && lose && lt_end_session(t, h.db, false);
	pthread_mutex_lock(&h.mu);
	h.go = true;
	pthread_cond_broadcast(&h.cv);
	pthread_mutex_unlock(&h.mu);
	if (at_commit)
		pthread_join(ts, NULL);
	pthread_join(th, NULL);
	kit_db_set_hook(h.db, NULL, NULL);
	*out = (struct lt_beside){ at_commit, ended, waited, lost, h.rc, at_commit ? s.rc : 0, "" };
	if (ended)
		snprintf(out->what, sizeof out->what, "returned %s", s.rc ? "an error" : "0");
	else if (waited)
		snprintf(out->what, sizeof out->what, "waited for a lock");
	else
		snprintf(out->what, sizeof out->what, "had not ended after %g s", wait_ms / 1000.0);
	run_free(&h);
	run_free(&s);
}

void lt_beside_commit(struct labtest *t, lt_beside_call *held, lt_beside_call *side, void *arg,
                      int wait_ms, struct lt_beside *r)
{
	beside(t, held, side, arg, wait_ms, false, r);
}

void lt_beside_commit_lost(struct labtest *t, lt_beside_call *held, lt_beside_call *side,
                           void *arg, int wait_ms, struct lt_beside *r)
{
	beside(t, held, side, arg, wait_ms, true, r);
}

/* lt_at_once: each thread says it has started, then waits for the word.
 * Spinning with sched_yield, not a barrier: a thread that cannot be
 * started would leave a barrier's others waiting for ever. */
struct at_once {
	void *(*fn)(void *);
	atomic_int started;
	atomic_bool go;
};

struct at_once_one {
	struct at_once *all;
	void *arg;
};

static void *at_once_run(void *p)
{
	struct at_once_one *one = p;
	atomic_fetch_add(&one->all->started, 1);
	while (!atomic_load(&one->all->go))
		sched_yield();
	return one->all->fn(one->arg);
}

void lt_at_once(int n, void *(*fn)(void *), void *args, size_t size)
{
	struct at_once all = { .fn = fn };
	struct at_once_one one[LT_AT_ONCE_MAX];
	pthread_t th[LT_AT_ONCE_MAX];
	int made = 0;

	if (n < 1 || n > LT_AT_ONCE_MAX)
		fail_msg("lt_at_once: %d threads (1 to %d)", n, LT_AT_ONCE_MAX);
	atomic_init(&all.started, 0);
	atomic_init(&all.go, false);
	for (; made < n; made++) {
		one[made] = (struct at_once_one){ &all, (char *)args + (size_t)made * size };
		if (pthread_create(&th[made], NULL, at_once_run, &one[made]) != 0)
			break;
	}
	while (atomic_load(&all.started) < made)
		sched_yield();
	atomic_store(&all.go, true);
	for (int i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	if (made < n)
		fail_msg("lt_at_once: thread %d of %d could not be started", made + 1, n);
}
