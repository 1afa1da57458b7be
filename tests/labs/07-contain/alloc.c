/*
 * alloc.c: Lab 07's allocation checks (alloc.h).
 *
 * The test binary counts every block allocated by the code linked into it
 * and can refuse the k-th one the student's code makes
 * (tests/harness/alloc.h). contain.h promises that counting keys never
 * allocates (the caller's k counters are all the memory used): a million
 * hot_keys_add() calls must make no allocation at all. hot_keys_topk()
 * may use scratch memory: each of its allocations is refused in turn, and
 * then it must copy nothing and return 0 (not crash, not report keys it
 * did not sort); in every case it frees what it took before returning.
 */
#include <stdint.h>

#include "labs/07-contain/contain.h"
#include "tests/harness/alloc.h"
#include "tests/harness/labtest.h"
#include "tests/labs/07-contain/alloc.h"

enum { K = 8 };

void hot_keys__counting_allocates_nothing(void **state)
{
	struct hot_key c[K];
	struct hot_keys hk;
	(void)state;
	size_t made = lt_alloc_made(), base = lt_alloc_live();
	hot_keys_init(&hk, c, K);
	for (uint64_t i = 0; i < 1000000; i++)
		hot_keys_add(&hk, i % 4 == 0 ? 7 : i);
	lt_expect(lt_alloc_made() == made, "memory", "hot_keys_init and a million hot_keys_add calls "
	          "made %zu allocation(s): contain.h promises none (the caller's k counters are all "
	          "the memory used)", lt_alloc_made() - made);
	lt_expect(lt_alloc_live() == base, "memory", "blocks left allocated by counting");
}

struct topk_case {
	struct hot_keys hk;
	struct hot_key c[K], out[K];
};

static int topk_call(void *arg)
{
	struct topk_case *t = arg;
	for (int i = 0; i < K; i++)
		t->out[i] = (struct hot_key){ 0, 0, 0 };
	return hot_keys_topk(&t->hk, t->out, K);
}

static void topk_check(void *arg, int k, bool failed, int rc)
{
	struct topk_case *t = arg;
	if (failed) {
		lt_expect(rc == 0, "order", "hot_keys_topk with allocation %d refused returned %d: "
		          "keys it could not sort must not be reported (contain.h: it copies nothing, 0)",
		          k, rc);
		return;
	}
	lt_expect_int_hint(rc, 5, "keys reported with 5 counted", "order");
	for (int i = 0; i < 5; i++)
		lt_expect(t->out[i].key == (uint64_t)(5 - i), "order",
		          "key %d of the top: expected %d (the counts are 5, 4, 3, 2, 1), got %llu", i + 1,
		          5 - i, (unsigned long long)t->out[i].key);
}

void hot_keys__topk_every_allocation_can_fail(void **state)
{
	static struct topk_case t;
	(void)state;
	hot_keys_init(&t.hk, t.c, K);
	for (uint64_t key = 1; key <= 5; key++)
		for (uint64_t i = 0; i < key; i++)
			hot_keys_add(&t.hk, key);
	struct lt_alloc_case c = { .arg = &t, .call = topk_call, .check = topk_check,
	                           .what = "hot_keys_topk" };
	lt_alloc_each(&c);
	/* Then alone in a fresh copy of the test program, where this is the
	 * first hot_keys_topk: a scratch buffer kept from one call to the
	 * next ("reuse it between reports") is big enough already after an
	 * earlier check's million counters, so here it would make no
	 * allocation to refuse and leave no new block. */
	labtest_expect_fresh(NULL, "hot_keys__topk_every_allocation_can_fail", "memory",
	                     "a scratch buffer kept between calls (a static grown with realloc) "
	                     "is a block left allocated, and two detectors reporting at once sort "
	                     "in the same buffer (contain.h: the scratch is freed before it "
	                     "returns)");
}
