/*
 * test_pool.c: kit/pool, the FIFO connection pool that resets on checkout.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kit/load.h"
#include "kit/pool.h"
#include "tests/harness/labtest.h"
#include "util/clock.h"

static void sleep_ms(int ms)
{
	util_sleep_ns((int64_t)ms * 1000000);
}

static void pool__times_out_when_all_are_taken(void **state)
{
	struct labtest *t = *state;
	struct kit_pool *p;
	struct kit_db *a, *b;
	char err[256];
	assert_int_equal(kit_pool_open(&p, t->url, 1, 50, NULL, err, sizeof err), 0);
	assert_int_equal(kit_pool_get(p, &a), 0);
	assert_int_equal(kit_pool_timeouts(p), 0);

	int64_t t0 = kit_load_now_ns();
	int rc = kit_pool_get(p, &b);
	double ms = (double)(kit_load_now_ns() - t0) / 1e6;

	kit_pool_put(p, a);
	assert_int_equal(rc, KIT_POOL_TIMEOUT);
	assert_null(b);
	assert_true(ms >= 45);
	assert_int_equal(kit_pool_timeouts(p), 1);    /* each timeout counted once */
	assert_int_equal(kit_pool_get(p, &b), 0);     /* free again once put back */
	kit_pool_put(p, b);
	assert_int_equal(kit_pool_timeouts(p), 1);
	kit_pool_close(p);
}

struct taker {
	struct kit_pool *p;
	atomic_int *order;      /* the next place in line to hand out */
	int place;              /* when this one got its connection */
	int rc;
	pthread_t th;
};

static void *take(void *arg)
{
	struct taker *k = arg;
	struct kit_db *db;
	k->rc = kit_pool_get(k->p, &db);
	k->place = atomic_fetch_add(k->order, 1);
	if (k->rc == 0) {
		sleep_ms(10);
		kit_pool_put(k->p, db);
	}
	return NULL;
}

static void pool__serves_waiters_first_come_first_served(void **state)
{
	struct labtest *t = *state;
	struct kit_pool *p;
	struct kit_db *held;
	struct taker k[4];
	atomic_int order;
	char err[256];
	atomic_init(&order, 0);
	assert_int_equal(kit_pool_open(&p, t->url, 1, 5000, NULL, err, sizeof err), 0);
	assert_int_equal(kit_pool_get(p, &held), 0);
	for (int i = 0; i < 4; i++) {
		k[i] = (struct taker){ .p = p, .order = &order };
		pthread_create(&k[i].th, NULL, take, &k[i]);
		sleep_ms(100);                         /* so they queue in index order */
	}

	kit_pool_put(p, held);
	for (int i = 0; i < 4; i++)
		pthread_join(k[i].th, NULL);

	for (int i = 0; i < 4; i++) {
		lt_expect_int(k[i].rc, 0, "kit_pool_get() of a waiter");
		lt_expect_int(k[i].place, i, "the order waiters got the connection in");
	}
	kit_pool_close(p);
}

static void pool__checkout_resets_the_session(void **state)
{
	struct labtest *t = *state;
	struct kit_pool *p;
	struct kit_db *db;
	char err[256];
	int64_t ms = -1;
	assert_int_equal(kit_pool_open(&p, t->url, 1, 100, "DISCARD ALL", err, sizeof err), 0);
	assert_int_equal(kit_pool_get(p, &db), 0);
	assert_int_equal(kit_db_exec(db, "SET lock_timeout = 1234", 0, NULL), 0);
	kit_pool_put(p, db);

	assert_int_equal(kit_pool_get(p, &db), 0);
	int rc = kit_db_query_int(db, "SELECT setting::bigint FROM pg_settings WHERE name = 'lock_timeout'",
	                          0, NULL, &ms);
	kit_pool_put(p, db);
	kit_pool_close(p);
	assert_int_equal(rc, 0);
	lt_expect_int(ms, 0, "lock_timeout after the next checkout (DISCARD ALL)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LABTEST_BOTH(pool__times_out_when_all_are_taken),
		LABTEST_SQLITE(pool__serves_waiters_first_come_first_served),
		LABTEST_PG(pool__checkout_resets_the_session),
	};
	return labtest_main("kit/pool", tests);
}
