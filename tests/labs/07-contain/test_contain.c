/*
 * test_contain.c: Lab 07's checks.
 *
 * The Space-Saving checks are pure C and run anywhere: Zipf streams from a
 * seeded generator, whose true counts the test keeps exactly. The others
 * need PostgreSQL: a known line on a row (one holder, K waiters, another
 * row held with nobody behind it) for hot_rows_now(), a held row for the
 * lock timeout, and a measured overload for the bulkhead: a naive hot row
 * driven at 4x the ceiling measured from one thread, with the login page
 * beside it, once as the naive app and once contained.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "kit/load.h"
#include "labs/07-contain/contain.h"
#include "tests/harness/beside.h"
#include "tests/harness/labtest.h"
#include "tests/harness/locks.h"
#include "tests/harness/session.h"
#include "tests/harness/sort.h"
#include "tests/harness/sql.h"
#include "tests/labs/07-contain/alloc.h"
#include "tests/labs/07-contain/contracts.h"
#include "util/clock.h"

/* ---- Zipf streams with a known truth ---- */

#define KEYS   10000             /* distinct keys in a stream */
#define STREAM 200000            /* keys per stream */

struct zipf {
	double *cdf;                 /* cdf[i]: P(rank <= i) */
	uint64_t rng;
	uint64_t *truth;             /* truth[rank]: occurrences so far */
};

static void zipf_init(struct zipf *z, double s, uint64_t seed)
{
	z->cdf = malloc(KEYS * sizeof *z->cdf);
	z->truth = calloc(KEYS, sizeof *z->truth);
	assert_non_null(z->cdf);
	assert_non_null(z->truth);
	double sum = 0;
	for (int i = 0; i < KEYS; i++)
		sum += 1 / pow(i + 1, s);
	double acc = 0;
	for (int i = 0; i < KEYS; i++)
		z->cdf[i] = (acc += 1 / pow(i + 1, s) / sum);
	z->rng = seed;
}

static void zipf_free(struct zipf *z)
{
	free(z->cdf);
	free(z->truth);
}

/* A rank's key: scattered, so neither order nor value gives it away. */
static uint64_t key_of(int rank)
{
	return ((uint64_t)rank + 1) * 0x9E3779B97F4A7C15ULL;
}

static int rank_of(uint64_t key)
{
	/* 0x9E37...15 is odd, so it has an inverse mod 2^64 */
	uint64_t inv = 0x9E3779B97F4A7C15ULL;
	for (int i = 0; i < 5; i++)
		inv *= 2 - 0x9E3779B97F4A7C15ULL * inv;
	return (int)(key * inv) - 1;
}

static uint64_t zipf_next(struct zipf *z)
{
	z->rng ^= z->rng << 13;
	z->rng ^= z->rng >> 7;
	z->rng ^= z->rng << 17;
	double u = (double)(z->rng >> 11) / 9007199254740992.0;
	int lo = 0, hi = KEYS - 1;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (z->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	z->truth[lo]++;
	return key_of(lo);
}

/* Feed a stream of n keys, Zipf with exponent s, to k counters. */
static void feed(struct hot_keys *hk, struct hot_key *c, int k, struct zipf *z, double s,
                 uint64_t seed)
{
	zipf_init(z, s, seed);
	hot_keys_init(hk, c, k);
	for (int i = 0; i < STREAM; i++)
		hot_keys_add(hk, zipf_next(z));
}

static const double EXPONENTS[] = { 0.8, 1.1, 1.5 };

static void hot_keys__reports_every_key_above_n_over_k(void **state)
{
	(void)state;
	for (size_t e = 0; e < sizeof EXPONENTS / sizeof EXPONENTS[0]; e++) {
		enum { K = 100 };
		struct hot_key c[K], top[K];
		struct hot_keys hk;
		struct zipf z;
		feed(&hk, c, K, &z, EXPONENTS[e], 42 + e);
		int m = hot_keys_topk(&hk, top, K);
		for (int r = 0; r < KEYS; r++) {
			if (z.truth[r] * K <= STREAM)
				continue;
			bool found = false;
			for (int i = 0; i < m && !found; i++)
				found = top[i].key == key_of(r);
			lt_expect(found, "guarantee", "expected every key above n/k = %d reported, got "
			          "the key of rank %d (true count %llu) missing (Zipf s = %.1f)",
			          STREAM / K, r + 1, (unsigned long long)z.truth[r], EXPONENTS[e]);
		}
		for (int i = 1; i < m; i++)
			lt_expect(top[i].count <= top[i - 1].count, "order",
			          "expected hot_keys_topk() highest count first, got %llu after %llu",
			          (unsigned long long)top[i].count, (unsigned long long)top[i - 1].count);
		zipf_free(&z);
	}
}

/* Four counters of keys 100..103, their counts then set by the check
 * (as a long stream, or a caller that halves them, leaves them): the
 * one at p small, the others big. Key 999 must take counter p (count
 * small + 1, error small) and change no other. NULL when it did, or
 * what it took instead. */
static const char *newcomer_over_set_counts(int p, uint64_t small, uint64_t big)
{
	enum { K = 4 };
	struct hot_key c[K], top[K];
	struct hot_keys hk;
	hot_keys_init(&hk, c, K);
	for (int i = 0; i < K; i++)
		hot_keys_add(&hk, 100 + (uint64_t)i);
	for (int i = 0; i < K; i++)
		c[i].count = i == p ? small : big;
	hot_keys_add(&hk, 999);
	int m = hot_keys_topk(&hk, top, K);
	bool newcomer = false, kept = true;
	for (int i = 0; i < m; i++) {
		newcomer = newcomer || (top[i].key == 999 && top[i].count == small + 1 &&
		                        top[i].error == small);
		kept = kept && (top[i].key == 999 || top[i].key == 100 + (uint64_t)p ||
		                top[i].count == big);
	}
	return newcomer && kept ? NULL : newcomer ? "it but another counter changed too" :
	       "another counter";
}

/* The newcomer takes the smallest counter wherever it sits: four
 * counters, the one at position p holding 1 and the others 3 each, then
 * a fifth key. For every p, the newcomer must inherit that counter (count
 * 2, error 1) and the three keys seen 3 times out of 10, above n/k = 2.5,
 * must still be reported. A search for the smallest that starts past a
 * position, or stops before the last, replaces a key seen 3 times. */
static void hot_keys__newcomer_takes_the_smallest_wherever_it_sits(void **state)
{
	(void)state;
	enum { K = 4 };
	for (int p = 0; p < K; p++) {
		struct hot_key c[K], top[K];
		struct hot_keys hk;
		hot_keys_init(&hk, c, K);
		for (int i = 0; i < K; i++)
			for (int r = 0; r < (i == p ? 1 : 3); r++)
				hot_keys_add(&hk, 100 + (uint64_t)i);
		hot_keys_add(&hk, 999);
		int m = hot_keys_topk(&hk, top, K);
		bool newcomer = false;
		for (int i = 0; i < m; i++)
			newcomer = newcomer || (top[i].key == 999 && top[i].count == 2 && top[i].error == 1);
		lt_expect(newcomer, "underestimate", "keys 100..103 seen 3 times each but key %d seen "
		          "once (counter %d of 4), then key 999: expected 999 to take key %d's counter "
		          "(count 2, error 1)", 100 + p, p, 100 + p);
		for (int i = 0; i < K; i++) {
			bool found = i == p;
			for (int j = 0; j < m && !found; j++)
				found = top[j].key == 100 + (uint64_t)i && top[j].count == 3;
			lt_expect(found, "guarantee", "key %d, seen 3 times out of 10 (above n/k = 2.5), "
			          "is missing or miscounted after key 999 arrived with key %d the "
			          "smallest, at counter %d of 4: was the smallest counter searched for "
			          "among all k?", 100 + i, 100 + p, p);
		}
	}

	/* The same with counts a long stream leaves (set as in
	 * hot_keys__topk_counts_past_2_31): the smallest 2^32 + 10, the others
	 * 2^33 + 5. Compared as 32-bit numbers the others look smaller (5
	 * against 10); a search that starts from a sentinel such as
	 * UINT32_MAX finds nothing below it and keeps counter 0. */
	const uint64_t small = (1ULL << 32) + 10, big = (1ULL << 33) + 5;
	for (int p = 0; p < K; p++) {
		const char *took = newcomer_over_set_counts(p, small, big);
		lt_expect(took == NULL, "underestimate", "counters of 2^33 + 5 and, at counter %d "
		          "of 4, one of 2^32 + 10: key 999 must take that one (count 2^32 + 11, error "
		          "2^32 + 10), and it took %s: is the smallest count kept in a variable narrower "
		          "than uint64_t, or looked for below a sentinel smaller than any count? (The "
		          "check set these counts in the counters directly, as a long stream leaves "
		          "them; contain.h: the smallest is looked for among the counters as they are, "
		          "not taken from an order hot_keys_add() kept, such as the last of counters "
		          "kept sorted.)", p, took);
	}

	/* A count of 0, as a caller that halves every count now and then
	 * (to let old keys fade) leaves a count of 1: the others 1, the one
	 * at p 0. Key 999 takes that one (count 1, error 0); a search that
	 * stops at the first count of 1 ("none is lower") takes another. */
	for (int p = 0; p < K; p++) {
		const char *took = newcomer_over_set_counts(p, 0, 1);
		lt_expect(took == NULL, "underestimate", "counters of 1 and, at counter %d of 4, "
		          "one of 0 (set by the check, as a caller that halves the counts now and "
		          "then leaves them): key 999 must take that one (count 1, error 0), and it "
		          "took %s: does the search for the smallest stop at a count of 1, as if none "
		          "could be lower? contain.h: the counts may be set between calls", p, took);
	}

	/* The same counter the smallest twice in a row: k = 2, key 1 ten
	 * times, then 2, 3, 4 and 1 again. 3 takes 2's counter (count 2),
	 * and 4 must take that same counter, still the smallest (count 3),
	 * not key 1's; then 1 is counted in its own, 11. A search that
	 * spares the counter the last newcomer took ("a newcomer evicted at
	 * once thrashes") takes key 1's counter, and key 1 comes back with a
	 * count below what it was seen. Then k = 3, keys 1 and 2 five and
	 * four times, then 3, 4, 5 and 1. */
	static const uint64_t runs[2][16] = {
		{ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 4, 1 },
		{ 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 4, 5, 1 },
	};
	static const int lens[2] = { 14, 13 }, ks[2] = { 2, 3 };
	for (int r = 0; r < 2; r++) {
		struct hot_key c[3], top[3];
		struct hot_keys hk;
		int seen[6] = { 0 };
		hot_keys_init(&hk, c, ks[r]);
		for (int i = 0; i < lens[r]; i++) {
			hot_keys_add(&hk, runs[r][i]);
			seen[runs[r][i]]++;
		}
		int m = hot_keys_topk(&hk, top, ks[r]);
		bool one = false;
		char got[160];
		size_t len = 0;
		got[0] = '\0';
		for (int i = 0; i < m; i++) {
			one = one || (top[i].key == 1 && top[i].count == (uint64_t)seen[1] && top[i].error == 0);
			len += (size_t)snprintf(got + len, len < sizeof got ? sizeof got - len : 0,
			                        "%s%llu: %llu (error %llu)", i ? ", " : "",
			                        (unsigned long long)top[i].key,
			                        (unsigned long long)top[i].count,
			                        (unsigned long long)top[i].error);
		}
		lt_expect(one, "underestimate", "k = %d, key 1 seen %d times, then %s, then key 1 again: "
		          "expected key 1 counted %d with error 0, got %s. Each newcomer takes the "
		          "smallest counter, even the one the last newcomer took: sparing it takes a "
		          "heavier key's counter, and that key comes back counted below what it was seen "
		          "(contain.h: a count is never below the key's true count)", ks[r],
		          seen[1] - 1, r == 0 ? "keys 2, 3 and 4 once each" : "key 2 four times and keys "
		          "3, 4 and 5 once each", seen[1], got);
	}
}

/* The smallest of all k, however many k are: a solution may switch to
 * something cheaper past some size ("sample 16 counters when k is large",
 * as Redis' LFU does), which no check with a small k sees. At k = 1,025,
 * 2,048, 4,097, 5,000, 65,536 and 2^20 (past any power of two a cut-off
 * might sit at), the counters set directly (they are the whole state):
 * every count 7 but one of 2, at the first, second and last counters,
 * the middle, a third of the way and three places a fixed generator
 * picks. The newcomer must take that one (count 3, error 2), and leave
 * every other counter as it was. Then a stream at k = 2,048 and 5,000:
 * 3k keys drawn (fixed seed) from 1.25k, so every counter is taken over
 * again and again: every count at least the key's true count. */
static uint64_t spread_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void hot_keys__smallest_of_all_k_however_many(void **state)
{
	(void)state;
	static const int ks[] = { 1025, 2048, 4097, 5000, 65536, 1 << 20 };
	enum { SMALL = 2, BIG = 7, PLACES = 9 };
	struct hot_key *c = malloc((size_t)(1 << 20) * sizeof *c);
	assert_non_null(c);
	uint64_t seed = 0x243F6A8885A308D3ULL;
	for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
		int k = ks[ki], wrong = 0, first_p = -1, took = -1;
		int places[PLACES] = { 0, 1, k - 1, k / 2, k / 3 };
		for (int i = 5; i < PLACES; i++)
			places[i] = (int)(spread_next(&seed) % (uint64_t)k);
		struct hot_keys hk;
		hot_keys_init(&hk, c, k);
		for (int i = 0; i < k; i++)
			c[i] = (struct hot_key){ .key = (uint64_t)i + 1, .count = BIG };
		hk.used = k;
		for (int r = 0; r < PLACES; r++) {
			int p = places[r];
			uint64_t newcomer = (uint64_t)k + 1000 + (uint64_t)r;
			for (int i = 0; i < k; i++)
				c[i].count = i == p ? SMALL : BIG, c[i].error = 0;
			hk.n = (uint64_t)k * BIG;
			hot_keys_add(&hk, newcomer);
			bool ok = hk.used == k && c[p].key == newcomer && c[p].count == SMALL + 1 &&
			          c[p].error == SMALL;
			int other = -1;
			for (int i = 0; i < k && other < 0; i++)
				if (i != p && (c[i].count != BIG || c[i].error != 0 || c[i].key == newcomer))
					other = i;
			if ((!ok || other >= 0) && wrong++ == 0) {
				first_p = p;
				took = other;
			}
			c[p].key = (uint64_t)p + 1;     /* the counter's own key again */
			if (other >= 0)
				c[other].key = (uint64_t)other + 1;
		}
		lt_expect(wrong == 0, "underestimate", "k = %d counters, all counted %d but one of %d "
		          "(set directly): a new key took %s in %d of %d tries, the first with the "
		          "smallest at counter %d%s%d. A newcomer takes the smallest of all k, each "
		          "time, however large k is (README §4): a cheaper search past some k (a "
		          "sample of the counters, a part of them) takes a heavier key's counter, and "
		          "that key comes back counted below its true count", k, BIG, SMALL,
		          took >= 0 ? "another counter" : "a counter other than the smallest (or "
		          "changed it wrongly)", wrong, PLACES, first_p,
		          took >= 0 ? ", and changed counter " : "", took >= 0 ? took : 0);
	}

	/* a stream: every counter taken over many times */
	static const int stream_ks[] = { 2048, 5000 };
	for (size_t ki = 0; ki < 2; ki++) {
		int k = stream_ks[ki], keys = k + k / 4, len = 3 * k;
		uint64_t *truth = calloc((size_t)keys, sizeof *truth);
		assert_non_null(truth);
		struct hot_keys hk;
		hot_keys_init(&hk, c, k);
		uint64_t s = 0x13198A2E03707344ULL + ki;
		for (int i = 0; i < len; i++) {
			uint64_t r = spread_next(&s) % (uint64_t)keys;
			truth[r]++;
			hot_keys_add(&hk, key_of((int)r));
		}
		int under = 0, worst = -1, bound = 0;
		uint64_t sum = 0;
		for (int i = 0; i < hk.used && i < k; i++) {
			int r = rank_of(c[i].key);
			lt_expect(r >= 0 && r < keys, NULL, "expected keys from the stream, got %llu",
			          (unsigned long long)c[i].key);
			sum += c[i].count;
			bound += c[i].count - c[i].error > truth[r];
			if (c[i].count < truth[r] && under++ == 0)
				worst = i;
		}
		lt_expect(under == 0, "underestimate", "k = %d counters, a stream of %d keys drawn "
		          "(fixed seed) from %d: %d counter(s) below their key's true count, the first "
		          "%llu for a key seen %llu times. The newcomer takes the smallest of all k "
		          "counters: one taken from a part of them, a sample, can be a heavier key's, "
		          "which comes back counted below what it was seen (contain.h: a count is never "
		          "below the key's true count)", k, len, keys, under,
		          worst >= 0 ? (unsigned long long)c[worst].count : 0ULL,
		          worst >= 0 ? (unsigned long long)truth[rank_of(c[worst].key)] : 0ULL);
		lt_expect(bound == 0, "error-bound", "k = %d, a stream of %d keys: %d counter(s) with "
		          "count - error above their key's true count", k, len, bound);
		lt_expect(hk.used == k && sum == (uint64_t)len, "guarantee", "k = %d, a stream of %d "
		          "keys from %d: %d counters used (expected all %d), their counts summing to "
		          "%llu (expected n = %d: every key adds one to one counter)", k, len, keys,
		          hk.used, k, (unsigned long long)sum, len);
		free(truth);
	}
	free(c);
}

/* Two detectors, each reported by a thread of its own, 5,000 times at
 * once: every report holds only its own detector's keys, in order.
 * contain.h lets threads use different detectors at the same time; a
 * scratch buffer shared between calls (a static) sorts one detector's
 * counters in the other's report. */
struct topk_thread {
	struct hot_key c[64];
	struct hot_keys hk;
	uint64_t base;
	int wrong;
};

static void *report_often(void *arg)
{
	struct topk_thread *th = arg;
	struct hot_key out[64];
	for (int r = 0; r < 5000; r++) {
		int m = hot_keys_topk(&th->hk, out, 64);
		bool ok = m == 64;
		for (int i = 0; ok && i < m; i++)
			ok = out[i].key == th->base + 64 - (uint64_t)i && out[i].count == 64 - (uint64_t)i;
		th->wrong += !ok;
	}
	return NULL;
}

/* Runs the two reporting threads: 3 when they could not start, 1 when
 * a report was not its own detector's, else 0. */
static int report_in_two_threads(struct topk_thread *th)
{
	pthread_t tid[2];
	bool started[2];
	for (int d = 0; d < 2; d++)
		started[d] = pthread_create(&tid[d], NULL, report_often, &th[d]) == 0;
	for (int d = 0; d < 2; d++)
		if (started[d])
			pthread_join(tid[d], NULL);
	return !started[0] || !started[1] ? 3 : th[0].wrong || th[1].wrong ? 1 : 0;
}

static void hot_keys__two_detectors_report_at_once(void **state)
{
	(void)state;
	static struct topk_thread th[2];
	for (int d = 0; d < 2; d++) {
		th[d].base = d ? 1000000 : 0;
		th[d].wrong = 0;
		hot_keys_init(&th[d].hk, th[d].c, 64);
		for (uint64_t key = 1; key <= 64; key++)
			for (uint64_t i = 0; i < key; i++)
				hot_keys_add(&th[d].hk, th[d].base + key);
	}
	/* in a child process: a buffer two threads free at once can take
	 * the program down, and the checks after this one must still run.
	 * ThreadSanitizer cannot start threads in a child forked from a
	 * process with threads of its own (its own among them): there the
	 * two run here, where it watches them for races besides. */
	fflush(NULL);
#ifdef __SANITIZE_THREAD__
	pid_t pid = 0;
	bool here = true;
#else
	pid_t pid = fork();
	bool here = false;
#endif
	if (here) {
		int r = report_in_two_threads(th);
		lt_expect(r != 3, NULL, "could not start two threads");
		lt_expect(th[0].wrong == 0 && th[1].wrong == 0, "memory", "two detectors, each "
		          "reported 5,000 times by a thread of its own at once: %d and %d reports were "
		          "not their own 64 keys in order (contain.h: scratch memory is the call's own)",
		          th[0].wrong, th[1].wrong);
		return;
	}
	if (pid == 0)
		_exit(report_in_two_threads(th));
	int status = 0;
	lt_expect(pid > 0 && waitpid(pid, &status, 0) == pid, NULL, "could not fork");
	lt_expect(!WIFEXITED(status) || WEXITSTATUS(status) != 3, NULL, "could not start two threads");
	lt_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "memory", "two detectors (keys "
	          "1..64 and 1,000,001..1,000,064, key i counted i times), each reported 5,000 times "
	          "by a thread of its own at once: %s. Scratch memory shared between calls (a static "
	          "buffer) sorts one detector's counters into the other's report: take the scratch "
	          "for the call, and free it before returning (contain.h)",
	          WIFSIGNALED(status) ? "the program crashed (a buffer freed twice?)" :
	          "some reports were not their own 64 keys in order");
}

static void hot_keys__never_underestimates(void **state)
{
	(void)state;
	for (size_t e = 0; e < sizeof EXPONENTS / sizeof EXPONENTS[0]; e++) {
		enum { K = 50 };
		struct hot_key c[K], top[K];
		struct hot_keys hk;
		struct zipf z;
		feed(&hk, c, K, &z, EXPONENTS[e], 7 + e);
		int m = hot_keys_topk(&hk, top, K);
		uint64_t sum = 0;
		for (int i = 0; i < m; i++) {
			int r = rank_of(top[i].key);
			lt_expect(r >= 0 && r < KEYS, NULL, "expected keys from the stream, got %llu",
			          (unsigned long long)top[i].key);
			uint64_t t = z.truth[r];
			lt_expect(top[i].count >= t, "underestimate", "expected a count of at least the "
			          "true %llu for the key of rank %d, got %llu (Zipf s = %.1f)",
			          (unsigned long long)t, r + 1, (unsigned long long)top[i].count,
			          EXPONENTS[e]);
			lt_expect(top[i].count - top[i].error <= t, "error-bound", "expected count - error "
			          "<= the true %llu, got %llu - %llu", (unsigned long long)t,
			          (unsigned long long)top[i].count, (unsigned long long)top[i].error);
			sum += top[i].count;
		}
		lt_expect_int(hk.n, STREAM, "keys seen (hk.n)");
		lt_expect_int(m, K, "counters reported once the stream has more than k keys");
		/* every key seen adds exactly one to exactly one counter */
		lt_expect_int(sum, STREAM, "the counts' sum, which Space-Saving keeps equal to n");
		zipf_free(&z);
	}
}

/* Keys at both ends of uint64_t, 0 and UINT64_MAX, are keys like any
 * other (a hash, an id of -1 cast): a free counter marked with one of
 * them ("no real key is all ones", "key 0 is empty") counts that key's
 * adds in a counter nobody owns, which the next newcomer takes over, and
 * hot_keys_topk never reports it. Eight counters, keys UINT64_MAX, 0, 1
 * and 2 added 7, 5, 3 and 1 times: four counters used, exact counts. */
static void hot_keys__keys_at_the_ends_of_uint64(void **state)
{
	enum { K = 8 };
	struct hot_key c[K], top[K];
	struct hot_keys hk;
	(void)state;
	hot_keys_init(&hk, c, K);
	static const struct { uint64_t key; uint64_t times; } adds[] = {
		{ UINT64_MAX, 7 }, { 0, 5 }, { 1, 3 }, { 2, 1 },
	};
	for (int a = 0; a < 4; a++)
		for (uint64_t i = 0; i < adds[a].times; i++)
			hot_keys_add(&hk, adds[a].key);
	lt_expect(hk.used == 4, "guarantee", "after adds of keys UINT64_MAX, 0, 1 and 2 to 8 "
	          "counters, hk.used is %d, expected 4: is UINT64_MAX or 0 the mark of a free "
	          "counter, so that key is counted where no key is?", hk.used);
	int m = hot_keys_topk(&hk, top, K);
	lt_expect_int_hint(m, 4, "keys reported after keys UINT64_MAX, 0, 1 and 2", "guarantee");
	for (int i = 0; i < m && i < 4; i++)
		lt_expect(top[i].key == adds[i].key && top[i].count == adds[i].times, "guarantee",
		          "place %d of the top keys is key %llu with count %lld, expected key %llu with "
		          "count %lld (keys UINT64_MAX, 0, 1 and 2 added 7, 5, 3 and 1 times): a key at "
		          "an end of uint64_t is a key, not the mark of a free counter", i + 1,
		          (unsigned long long)top[i].key, (long long)top[i].count,
		          (unsigned long long)adds[i].key, (long long)adds[i].times);
}

static void hot_keys__exact_while_keys_fit(void **state)
{
	enum { K = 8 };
	struct hot_key c[K], top[K];
	struct hot_keys hk;
	(void)state;
	hot_keys_init(&hk, c, K);
	for (uint64_t key = 1; key <= 5; key++)
		for (uint64_t i = 0; i < key * 10; i++)
			hot_keys_add(&hk, key);
	struct hot_key before[5];
	memcpy(before, c, sizeof before);
	lt_sort_reset();
	int m = hot_keys_topk(&hk, top, K);
	lt_expect(lt_sort_inconsistent() == 0, "order", "hot_keys_topk()'s comparator answered %d "
	          "pair(s) of counters inconsistently (cmp(a, b) and cmp(b, a) must have opposite signs, "
	          "0 both ways for equal counts): one that returns only 0 or 1, such as "
	          "x->count < y->count, sorts right under this libc's merge sort and wrong under a "
	          "quicksort", lt_sort_inconsistent());
	lt_expect(memcmp(before, c, sizeof before) == 0 && hk.c == c, "order",
	          "hot_keys_topk() changed the caller's counters (keys 1..5, as hot_keys_add() left "
	          "them just before the call): it must sort a copy, not the counters hot_keys_add() "
	          "goes on using (hk is const)");
	lt_expect(hk.used == 5, "guarantee", "after 10, 20, 30, 40 and 50 adds of keys 1 .. 5 to "
	          "8 counters, hk.used is %d: 5 distinct keys use 5 counters while there is room "
	          "(hot_keys_add takes a new counter for a key it has not seen, and only for one)",
	          hk.used);
	lt_expect_int_hint(m, 5, "keys reported after 5 distinct keys", "guarantee");
	for (int i = 0; i < m; i++) {
		lt_expect_int_hint(top[i].key, 5 - i, "key, highest count first", "order");
		lt_expect_int_hint(top[i].count, (5 - i) * 10,
		                   "count of a key that never lost its counter", "guarantee");
		lt_expect_int_hint(top[i].error, 0, "error of a key that never lost its counter",
		                   "error-bound");
	}
	/* Fewer places than counters: the two highest, wherever their counters
	 * sit (keys 5 and 4 came last), not the first two counters sorted. */
	lt_expect_int_hint(hot_keys_topk(&hk, top, 2), 2, "hot_keys_topk() with max 2", "order");
	lt_expect(top[0].key == 5 && top[1].key == 4, "order", "hot_keys_topk() with max 2 of 5 keys "
	          "(counts 10, 20, ..., 50, key 5 highest, in the last counter used): expected keys 5 "
	          "and 4, got %llu and %llu (are the first max counters copied and sorted, instead of "
	          "all of them sorted and the first max copied?)", (unsigned long long)top[0].key,
	          (unsigned long long)top[1].key);

	/* Key 0 is a key like any other: a counter holding key 0 is not free,
	 * and a free counter is not key 0's. */
	hot_keys_init(&hk, c, K);
	for (int i = 0; i < 3; i++)
		hot_keys_add(&hk, 0);
	hot_keys_add(&hk, 7);
	m = hot_keys_topk(&hk, top, K);
	lt_expect(m == 2 && top[0].key == 0 && top[0].count == 3 && top[1].key == 7 &&
	          top[1].count == 1, "guarantee", "key 0 three times, then key 7: expected key 0 "
	          "(count 3) and key 7 (count 1), got %d key(s)%s (is a counter whose key is 0 taken "
	          "as free, or key 0 looked up among the counters not in use?)", m,
	          m >= 1 && top[0].key != 0 ? ", key 0 not first" : "");

	/* Many counters: 5,000, the two highest in the last two. topk ranks
	 * every counter in use (a scratch array of a fixed size ranks the
	 * first few thousand only). */
	enum { BIG = 5000 };
	static struct hot_key big[BIG];
	hot_keys_init(&hk, big, BIG);
	for (uint64_t key = 1; key <= BIG; key++)
		hot_keys_add(&hk, key);
	for (int i = 0; i < 10; i++)
		hot_keys_add(&hk, BIG);
	for (int i = 0; i < 5; i++)
		hot_keys_add(&hk, BIG - 1);
	m = hot_keys_topk(&hk, top, 2);
	lt_expect(m == 2 && top[0].key == BIG && top[1].key == BIG - 1, "order", "5,000 counters, "
	          "keys %d (count 11) and %d (count 6) the highest, in the last two: got %d key(s), "
	          "the first %llu (does hot_keys_topk sort a scratch array of a fixed size, not one of "
	          "hk->used counters?)", BIG, BIG - 1, m, m ? (unsigned long long)top[0].key : 0ULL);

	/* A million counters in use (set directly: they are the whole state),
	 * 24 MB of them, the highest two in the middle: topk's scratch copy
	 * comes from the heap (contain.h). A copy on the stack, a
	 * variable-length array "so that no malloc can fail", overflows a
	 * thread's 8 MB stack here and the process dies with SIGSEGV. */
	enum { HUGE = 1 << 20 };
	static struct hot_key huge[HUGE];
	hot_keys_init(&hk, huge, HUGE);
	for (int i = 0; i < HUGE; i++)
		huge[i] = (struct hot_key){ .key = (uint64_t)i + 1, .count = 1 + (uint64_t)(i % 1000) };
	huge[HUGE / 2].count = 5000;
	huge[HUGE / 3].count = 4000;
	hk.used = HUGE;
	hk.n = (uint64_t)HUGE * 500;
	m = hot_keys_topk(&hk, top, 2);
	lt_expect(m == 2 && top[0].key == HUGE / 2 + 1 && top[1].key == HUGE / 3 + 1, "order",
	          "%d counters in use, keys %d (count 5000) and %d (count 4000) the highest: got %d "
	          "key(s), the first %llu", HUGE, HUGE / 2 + 1, HUGE / 3 + 1, m,
	          m ? (unsigned long long)top[0].key : 0ULL);

	/* Tied counts, keys 2^31 and 2^32 apart: a tie broken by the keys'
	 * difference cast to int ((int)(x->key - y->key)) answers INT_MIN,
	 * or 0, both ways round: a comparator that contradicts itself. */
	struct hot_key tied[4];
	hot_keys_init(&hk, tied, 4);
	static const uint64_t keys[4] = { 7, 7 + (1ULL << 31), 9, 9 + (1ULL << 32) };
	for (int i = 0; i < 4; i++)
		for (int r = 0; r < (i < 2 ? 3 : 2); r++)
			hot_keys_add(&hk, keys[i]);
	lt_sort_reset();
	m = hot_keys_topk(&hk, top, 4);
	lt_expect(m == 4 && lt_sort_inconsistent() == 0, "order", "keys 7 and 7 + 2^31 counted 3 "
	          "times each, 9 and 9 + 2^32 twice each: hot_keys_topk() returned %d, and its "
	          "comparator answered %d pair(s) inconsistently. A tie broken by the keys' "
	          "difference as an int is INT_MIN (or 0) both ways round for keys 2^31 (2^32) apart: "
	          "compare them, (x > y) - (x < y)", m, lt_sort_inconsistent());
}

/* hot_keys_topk() on counts past 2^31 (a long stream, or a counter
 * that has run for weeks), with a tie and max above the keys counted:
 * the highest first, compared as 64-bit counts. */
static void hot_keys__topk_counts_past_2_31(void **state)
{
	enum { K = 4 };
	struct hot_key c[K], top[K + 2];
	struct hot_keys hk;
	(void)state;
	hot_keys_init(&hk, c, K);
	hot_keys_add(&hk, 1);
	hot_keys_add(&hk, 2);
	hot_keys_add(&hk, 3);
	c[0].count = 3000000000ULL;            /* set as a long stream would leave them */
	c[1].count = 5;
	c[2].count = 2147483653ULL;            /* 2^31 + 5 */
	for (int i = 0; i < K + 2; i++)
		top[i] = (struct hot_key){ 0xDEAD, 0xDEAD, 0xDEAD };
	int m = hot_keys_topk(&hk, top, K + 2);
	lt_expect_int_hint(m, 3, "keys reported with max 6 and 3 keys counted", "order");
	/* it copies the keys it returns, no more: out[m .. max-1] is the
	 * caller's still (a copy of max entries from a scratch copy of the 3
	 * counters reads past that block and writes what lay beyond it) */
	int touched = 0;
	for (int i = m < 0 ? 0 : m; i < K + 2; i++)
		touched += top[i].key != 0xDEAD || top[i].count != 0xDEAD || top[i].error != 0xDEAD;
	lt_expect(touched == 0, "order", "hot_keys_topk() with max 6 and 3 keys counted returned "
	          "%d and wrote %d of the entries past out[%d]: it copies the keys it counted, "
	          "no more (is max entries copied from a scratch copy of the %d counters in use, "
	          "reading past its end?)", m, touched, m - 1, 3);
	lt_expect(m == 3 && top[0].key == 1 && top[1].key == 3 && top[2].key == 2, "order",
	          "expected keys 1, 3, 2 (counts 3,000,000,000, 2^31 + 5, 5), got %llu, %llu, %llu: "
	          "counts past 2^31 compared as int (a comparator returning a - b cut to int), or "
	          "the counters copied in an order hot_keys_add() kept (the check set these counts "
	          "directly; contain.h: topk ranks the counters as it finds them)",
	          (unsigned long long)top[0].key, (unsigned long long)top[1].key,
	          (unsigned long long)top[2].key);
	lt_expect_int_hint(hot_keys_topk(&hk, top, 0), 0, "hot_keys_topk() with max 0", "order");
	/* past 2^32: 2^32 + 1 is the largest, though its low 32 bits are 1 */
	hot_keys_add(&hk, 4);
	c[3].count = 4294967297ULL;            /* 2^32 + 1 */
	m = hot_keys_topk(&hk, top, K);
	lt_expect(m == 4 && top[0].key == 4 && top[1].key == 1 && top[2].key == 3 && top[3].key == 2,
	          "order", "expected keys 4, 1, 3, 2 (counts 2^32 + 1, 3,000,000,000, 2^31 + 5, 5), "
	          "got %d keys: %llu, %llu, %llu, %llu: is a count cut to 32 bits (a uint32_t in "
	          "the scratch copy, or in the comparator)? Counts are uint64_t", m,
	          (unsigned long long)top[0].key, (unsigned long long)top[1].key,
	          (unsigned long long)top[2].key, (unsigned long long)top[3].key);
}

static void hot_keys__memory_stays_within_k(void **state)
{
	enum { K = 16, GUARD = 16 };
	struct hot_key c[K + GUARD], top[K];
	struct hot_keys hk;
	(void)state;
	for (int i = K; i < K + GUARD; i++)
		c[i] = (struct hot_key){ 0xDEAD, 0xDEAD, 0xDEAD };
	hot_keys_init(&hk, c, K);
	for (uint64_t i = 0; i < 1000000; i++)        /* a million keys, mostly new */
		hot_keys_add(&hk, i % 3 == 0 ? 1 : i);
	for (int i = K; i < K + GUARD; i++)
		lt_expect(c[i].key == 0xDEAD && c[i].count == 0xDEAD, "memory",
		          "expected nothing written past the k = %d counters, got counter %d changed",
		          K, i);
	lt_expect(hk.used <= K, "memory", "expected at most k = %d counters used, got %d", K, hk.used);
	int m = hot_keys_topk(&hk, top, K);
	lt_expect(m >= 1 && top[0].key == 1, "guarantee", "expected key 1 (a third of the stream) "
	          "on top, got %s", m ? "another key" : "nothing");
}

/* ---- a known line on a row ---- */

#define K_WAITERS 4

struct waiter {
	const char *url;
	const char *tag;             /* the test's place, so its waits can be told apart */
	const char *table;           /* posts when NULL */
	int64_t post;
	int lock;                    /* 0: an UPDATE; 1: SELECT ... FOR UPDATE; 2: a reader,
	                                FOR SHARE (LOCK IN SHARE MODE on MariaDB) */
	const char *first;           /* a query run first in the waiter's own transaction
	                                (a monitor's look at pg_stat_activity); NULL: none,
	                                the statement alone */
	int rc;
	pthread_t th;
};

static void *queue_up(void *arg)
{
	struct waiter *w = arg;
	struct kit_db *db;
	char id[24], sql[400];
	snprintf(id, sizeof id, "%lld", (long long)w->post);
	w->rc = kit_db_open(&db, w->url);
	if (w->lock == 0)
		snprintf(sql, sizeof sql, "UPDATE %s SET likes = likes + 1 WHERE id = $1 /* %s */",
		         w->table ? w->table : "posts", w->tag);
	else
		snprintf(sql, sizeof sql, "SELECT id FROM %s WHERE id = $1 %s /* %s */",
		         w->table ? w->table : "posts", w->lock == 1 ? "FOR UPDATE" :
		         w->rc == 0 && kit_db_engine(db) == KIT_DB_MYSQL ? "LOCK IN SHARE MODE" :
		         "FOR SHARE", w->tag);
	const char *p[] = { id };
	/* On MariaDB a waiter gives up after innodb_lock_wait_timeout (50 s
	 * by default), and a line that takes long to form on a loaded
	 * machine would lose its first waiters before the call: these wait
	 * until the check lets the row go (PostgreSQL's lock_timeout is 0,
	 * for ever, already). */
	if (w->rc == 0 && kit_db_engine(db) == KIT_DB_MYSQL)
		w->rc = kit_db_set_lock_timeout(db, 3600 * 1000);
	int64_t seen;
	if (w->rc == 0 && w->first != NULL) {
		w->rc = kit_db_begin(db);
		if (w->rc == 0)
			w->rc = kit_db_query_int(db, w->first, 0, NULL, &seen);
	}
	if (w->rc == 0)
		w->rc = kit_db_exec(db, sql, 1, p);
	if (w->first != NULL && w->rc == 0)
		w->rc = kit_db_commit(db);
	else if (w->first != NULL)
		kit_db_rollback(db);
	kit_db_close(db);
	return NULL;
}

static void sleep_ms(int ms)
{
	util_sleep_ns((int64_t)ms * 1000000);
}

/* This test's backends waiting for a lock, as pg_stat_activity says
 * (other suites may share the server). */
static int64_t lock_waiters(struct labtest *t)
{
	char sql[600];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
	         "'Lock' AND query LIKE '%%/* %s */%%'", t->place);
	return labtest_int(t, sql);
}

/* The server's id of db's session: the pid hot_rows_now() reports. */
static int session_id(struct kit_db *db, int64_t *id)
{
	return kit_db_query_int(db, kit_db_engine(db) == KIT_DB_MYSQL ? "SELECT CONNECTION_ID()"
	                        : "SELECT pg_backend_pid()", 0, NULL, id);
}

/* A check of hot_rows_now() that counts lines must see only its own
 * waits, but a database's waits are everyone's: a server a class shares,
 * or another lab's suite running at the same time, puts its own lines in
 * the same database (the tests' places are schemas of one database). So
 * on PostgreSQL these checks run in a database of their own, made by
 * contain_own_db() with the check's schema in it (so its URL, search_path and
 * all, works unchanged), and dropped at teardown. Where the server refuses CREATE
 * DATABASE (a class server's students), the check runs in the shared
 * database as before. */
#define OWN_DB "hotrow_lab07_own_"

static void own_db_name(const struct labtest *t, char *name, size_t nlen)
{
	size_t pl = strlen(t->place);
	snprintf(name, nlen, OWN_DB "%s", t->place + (pl > 40 ? pl - 40 : 0));
}

/* Called first thing by such a check: on PostgreSQL, move the check's
 * URL (and so labtest_db(), labtest_connect() and every session the check
 * starts from t->url) into a database of its own. */
void contain_own_db(struct labtest *t)
{
	if (t->engine != KIT_DB_POSTGRES)
		return;
	char name[100], sql[400], url[sizeof t->url];
	own_db_name(t, name, sizeof name);
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
	struct kit_db *own = NULL;
	int n = snprintf(url, sizeof url, "%s%sdbname=%s", t->url, strchr(t->url, '?') ? "&" : " ",
	                 name);
	if (n > 0 && (size_t)n < sizeof url && kit_db_exec(labtest_db(t), sql, 0, NULL) == 0) {
		snprintf(sql, sizeof sql, "CREATE SCHEMA %s", t->place);
		if (kit_db_open(&own, url) == 0 && kit_db_exec(own, sql, 0, NULL) == 0) {
			kit_db_close(t->db);
			t->db = NULL;
			snprintf(t->url, sizeof t->url, "%s", url);
		}
	}
	kit_db_close(own);
}

/* The shared database's URL: t->url without the part contain_own_db()
 * added, if it added one. */
static void shared_url(const struct labtest *t, char *out, size_t len)
{
	snprintf(out, len, "%s", t->url);
	char *own = strstr(out, "dbname=" OWN_DB);
	if (own != NULL && own > out)
		own[-1] = 0;
}

/* The global ids of the two transactions held_by_no_session() prepares
 * (k = 0, 1): two per check's place, so teardown_own_db() can end them when
 * the check failed half-way (a prepared transaction outlives its session
 * and keeps its database from being dropped). */
static void prepared_gid(const struct labtest *t, int k, char *gid, size_t len)
{
	size_t pl = strlen(t->place);
	snprintf(gid, len, "hotrow_lab07_%s%s", t->place + (pl > 40 ? pl - 40 : 0),
	         k ? "_b" : "");
}

static int teardown_own_db(void **state)
{
	struct labtest *t = *state;
	if (t != NULL && strstr(t->url, "dbname=" OWN_DB) != NULL) {
		char name[100], sql[200], shared[sizeof t->url];
		own_db_name(t, name, sizeof name);
		shared_url(t, shared, sizeof shared);
		if (strcmp(shared, t->url) != 0) {
			kit_db_close(t->db);
			t->db = NULL;
			snprintf(t->url, sizeof t->url, "%s", shared);
			struct kit_db *admin = NULL;
			/* A transaction a check prepared and could not end keeps the
			 * database from being dropped; it is ended from inside it. */
			char gid[80], own_url[sizeof t->url + 128];
			snprintf(own_url, sizeof own_url, "%s%sdbname=%s", shared, strchr(shared, '?') ?
			         "&" : " ", name);
			if (kit_db_open(&admin, own_url) == 0) {
				for (int k = 0; k < 2; k++) {
					prepared_gid(t, k, gid, sizeof gid);
					snprintf(sql, sizeof sql, "ROLLBACK PREPARED '%s'", gid);
					kit_db_exec(admin, sql, 0, NULL);
				}
			}
			kit_db_close(admin);
			admin = NULL;
			snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
			if (kit_db_open(&admin, t->url) == 0)
				kit_db_exec(admin, sql, 0, NULL);
			kit_db_close(admin);
		}
	}
	return labtest_teardown(state);
}

/* PostgreSQL, whose check calls contain_own_db() and drops that database at
 * teardown, and MariaDB as before. */
#define OWN_DB_PG(f) { #f, f, labtest_setup_pg, teardown_own_db, NULL }
#define OWN_DB_SERVERS(f) OWN_DB_PG(f), LABTEST_MYSQL(f)

/* Wait, at most 10 s (15 s on MariaDB), until the server shows n of this
 * test's sessions waiting for a lock; the count seen last. It asserts
 * nothing, so that the caller lets its sessions go first. On MariaDB the
 * count is INNODB_TRX's, the very picture hot_rows_now() reads, renewed
 * only when nobody read it in the last 0.1 s (labtest_innodb_waiters()). */
static int64_t wait_for_waiters(struct labtest *t, int n)
{
	if (t->engine == KIT_DB_MYSQL)
		return labtest_innodb_waiters(t, n);
	int64_t seen = lock_waiters(t);
	for (int i = 0; i < 1000 && seen != n; i++) {
		sleep_ms(10);
		seen = lock_waiters(t);
	}
	return seen;
}

/* Wait, at most 10 s, until the server shows n of this test's sessions
 * waiting for the row that holder_pid's session now holds; the count seen
 * last, asserting nothing (as wait_for_waiters()). On PostgreSQL that is
 * n waits on holder_pid's transactionid in pg_locks, or on the tuple
 * lock of a session that waits on it (tuple_locked()): while the row
 * changes hands, the other waiters still wait on the old tuple lock (and
 * pg_stat_activity counts them as waiting all along) until each one runs,
 * finds the row updated and waits on the new holder instead: a few ms on
 * an idle server, as long as the scheduler leaves them unrun on a busy
 * one. MariaDB's waiters wait on the same record lock throughout, behind
 * the new holder as soon as it has the row: INNODB_TRX's count is the
 * state. */
static int64_t wait_behind(struct labtest *t, int64_t holder_pid, int n)
{
	if (t->engine == KIT_DB_MYSQL)
		return labtest_innodb_waiters(t, n);
	char sql[1400];
	snprintf(sql, sizeof sql, "WITH x AS (SELECT transactionid FROM pg_locks WHERE locktype = "
	         "'transactionid' AND granted AND pid = %lld) SELECT count(*) FROM pg_locks w JOIN "
	         "pg_stat_activity a ON a.pid = w.pid AND a.query LIKE '%%/* %s */%%' WHERE NOT "
	         "w.granted AND (w.locktype = 'transactionid' AND w.transactionid IN (SELECT * FROM "
	         "x) OR w.locktype = 'tuple' AND EXISTS (SELECT 1 FROM pg_locks g JOIN pg_locks q ON "
	         "q.pid = g.pid AND q.locktype = 'transactionid' AND NOT q.granted AND "
	         "q.transactionid IN (SELECT * FROM x) WHERE g.locktype = 'tuple' AND g.granted AND "
	         "(g.database, g.relation, g.page, g.tuple) = (w.database, w.relation, w.page, "
	         "w.tuple)))", (long long)holder_pid, t->place);
	int64_t seen = labtest_int(t, sql);
	for (int i = 0; i < 1000 && seen != n; i++) {
		sleep_ms(10);
		seen = labtest_int(t, sql);
	}
	return seen;
}

/* The tuple lock one of this test's sessions holds, if one does (page and
 * tuple -1 when none does). Once a row has changed hands its waiters
 * usually hold none: each found the newest version already taken and
 * waits on its taker's transactionid alone. One that reached the newest
 * version before the new holder locked it took that version's tuple lock
 * first, and keeps it while it waits. */
static void tuple_locked(struct labtest *t, int64_t *page, int64_t *tuple)
{
	char sql[600];
	const char *col[2] = { "page", "tuple" };
	int64_t *out[2] = { page, tuple };
	for (int i = 0; i < 2; i++) {
		snprintf(sql, sizeof sql, "SELECT coalesce(min(l.%s), -1) FROM pg_locks l JOIN "
		         "pg_stat_activity a ON a.pid = l.pid AND a.query LIKE '%%/* %s */%%' WHERE "
		         "l.locktype = 'tuple' AND l.granted", col[i], t->place);
		*out[i] = labtest_int(t, sql);
	}
}

#define LINE_FORMS "backends waiting for a lock while the line forms (as the server shows them)"

/* A line's waiters, as the server showed them, against the wanted count. */
#define expect_line(seen, want, what) \
	lt_expect((seen) == (want), NULL, "expected %lld, got %lld: %s%s%s", (long long)(want), \
	          (long long)(seen), what, t->engine == KIT_DB_MYSQL && (seen) != (want) ? \
	          "; " : "", t->engine == KIT_DB_MYSQL ? labtest_innodb_note() : "")

/* A connection of the check's own in an open transaction that updated
 * row id of table; its session's id in *pid. */
static struct kit_db *hold_row(struct labtest *t, const char *table, int64_t id, int64_t *pid)
{
	struct kit_db *db = labtest_connect(t);
	char sql[160];
	snprintf(sql, sizeof sql, "UPDATE %s SET likes = likes + 1 WHERE id = %lld", table,
	         (long long)id);
	assert_int_equal(session_id(db, pid), 0);
	assert_int_equal(kit_db_begin(db), 0);
	assert_int_equal(kit_db_exec(db, sql, 0, NULL), 0);
	return db;
}

static struct kit_db *hold(struct labtest *t, int64_t post, int64_t *pid)
{
	return hold_row(t, "posts", post, pid);
}

static void elsewhere_url(struct labtest *t, char *name, size_t nlen, char *out, size_t len);
static void upper_url(struct labtest *t, char *name, size_t nlen, char *out, size_t len);
static void upper_name(const struct labtest *t, char *name, size_t nlen);
static void place_url(const struct labtest *t, const char *name, char *out, size_t len);

#define DECOYS 4

/* MariaDB only: four sessions in two other databases of the check's,
 * two in elsewhere_url()'s and two in upper_url()'s (the check's own
 * name in capitals: another database, as the server's names are
 * case-sensitive, that the connection's collation takes for this one),
 * both dropped by teardown_elsewhere(), that each hold a row of their own
 * LOCK IN SHARE MODE in an open transaction. A transaction that has
 * written nothing shows trx_id 0 in INNODB_TRX, like every such one on
 * the server, and its locks lock_trx_id 0: a detector that takes any id-0
 * transaction as the holder of an id-0 lock on the hot record can name
 * one of these, and one that narrows them to this database's sessions
 * with PROCESSLIST.DB = DATABASE() under the connection's collation (no
 * BINARY) names one of the capitals' ones.
 * Three are connected before the check's own holders (decoys_connect:
 * theirs are the lower connection ids, as an older pool's are), the
 * fourth, in the capitals' database, after them (decoys_open: InnoDB
 * lists a newer session's transaction first), and all are begun after
 * them: neither the lowest id, nor the highest, nor the first listed is
 * the holder. */
static void decoys_connect(struct labtest *t, struct kit_db *d[DECOYS])
{
	for (int i = 0; i < DECOYS; i++)
		d[i] = NULL;
	if (t->engine != KIT_DB_MYSQL)
		return;
	for (int k = 0; k < 2; k++) {
		char name[100], url[sizeof t->url];
		if (k == 0)
			elsewhere_url(t, name, sizeof name, url, sizeof url);
		else
			upper_url(t, name, sizeof name, url, sizeof url);
		struct kit_db *admin = NULL;
		lt_expect(kit_db_open(&admin, url) == 0 &&
		          kit_db_exec(admin, "CREATE TABLE decoy (id int PRIMARY KEY);"
		                      "INSERT INTO decoy VALUES (1), (2)", 0, NULL) == 0, NULL,
		          "a table in database %s: %s", name, kit_db_errmsg(admin));
		kit_db_close(admin);
		for (int i = 2 * k; i < (k == 0 ? 2 : DECOYS - 1); i++)
			assert_int_equal(kit_db_open(&d[i], url), 0);
	}
}

/* Decoy number i begins a transaction and holds row 1 or 2 (by i's
 * parity) of its database's decoy table LOCK IN SHARE MODE: trx_id 0. */
static void decoy_hold(struct kit_db *d, int i)
{
	int64_t id;
	assert_int_equal(kit_db_begin(d), 0);
	assert_int_equal(kit_db_query_int(d, i % 2 == 0 ? "SELECT id FROM decoy WHERE id = 1 "
	                                  "LOCK IN SHARE MODE" : "SELECT id FROM decoy WHERE "
	                                  "id = 2 LOCK IN SHARE MODE", 0, NULL, &id), 0);
}

static void decoys_open(struct labtest *t, struct kit_db *d[DECOYS])
{
	if (d[0] == NULL)
		return;
	char name[100], url[sizeof t->url];
	upper_name(t, name, sizeof name);
	place_url(t, name, url, sizeof url);
	assert_int_equal(kit_db_open(&d[DECOYS - 1], url), 0);
	for (int i = 0; i < DECOYS && d[i] != NULL; i++)
		decoy_hold(d[i], i);
}

static void decoys_close(struct kit_db *d[DECOYS])
{
	for (int i = 0; i < DECOYS; i++) {
		if (d[i] != NULL)
			kit_db_commit(d[i]);
		kit_db_close(d[i]);
		d[i] = NULL;
	}
}

static void hot_rows_now__sees_the_whole_line(void **state)
{
	struct labtest *t = *state;
	struct waiter w[K_WAITERS];
	struct hot_row_now rows[8];
	int64_t pid1, pid2, lined = 0;
	int n = -1, queued = 0, rc = -1;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (2)");

	/* configure: row 1 held with K waiters behind it, row 2 held alone;
	 * the second waiter locks the row FOR UPDATE and the third is a
	 * reader (FOR SHARE): waiters of a line whatever
	 * lock they ask for (on PostgreSQL their tuple locks are
	 * AccessExclusiveLock and RowShareLock, not an UPDATE's ExclusiveLock;
	 * on MariaDB X for the first two, S for the reader). On MariaDB the
	 * fourth is a second reader, and each reader has written nothing, so
	 * it shows transaction id 0, as does every such transaction on the
	 * server, and so does its lock on the row (a line counted by distinct
	 * trx_id counts the two as one): four decoys in two other databases
	 * (decoys_open()) hold such transactions meanwhile, and the holder
	 * must still be this line's. */
	bool my = t->engine == KIT_DB_MYSQL;
	struct kit_db *decoy[DECOYS];
	decoys_connect(t, decoy);
	struct kit_db *h1 = hold(t, 1, &pid1), *h2 = hold(t, 2, &pid2);
	decoys_open(t, decoy);
	while (queued < K_WAITERS && lined == queued) {
		w[queued] = (struct waiter){ .url = t->url, .tag = t->place, .post = 1,
		                             .lock = queued == 1 ? 1 : queued == 2 || (my && queued == 3)
		                                     ? 2 : 0 };
		pthread_create(&w[queued].th, NULL, queue_up, &w[queued]);
		lined = wait_for_waiters(t, ++queued);
	}

	/* run, once the server shows the whole line */
	if (lined == K_WAITERS) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 8, &n);
	}

	/* verify, after letting the line go */
	decoys_close(decoy);
	kit_db_commit(h1);
	kit_db_commit(h2);
	for (int i = 0; i < queued; i++)
		pthread_join(w[i].th, NULL);
	kit_db_close(h1);
	kit_db_close(h2);
	expect_line(lined, queued, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", labtest_why(labtest_db(t)));
	lt_expect_int_hint(n, 1, "rows with waiters (row 2 is held, but nobody waits for it)",
	                   "signature");
	lt_expect(!strcmp(rows[0].relation, "posts"), "signature", "expected the relation posts, "
	          "got \"%s\"", rows[0].relation);
	lt_expect_int_hint(rows[0].waiting, K_WAITERS, "backends waiting for row 1: an UPDATE, a "
	                   "SELECT ... FOR UPDATE, a reader (FOR SHARE, LOCK IN SHARE MODE) and, on "
	                   "PostgreSQL, another UPDATE, on MariaDB another reader; on "
	                   "PostgreSQL the first on the holder's transactionid, the rest on the tuple "
	                   "lock (in its mode: ExclusiveLock for an UPDATE, AccessExclusiveLock for "
	                   "FOR UPDATE, RowShareLock for FOR SHARE); on MariaDB X and S record locks, "
	                   "each reader's transaction with trx_id 0. Is a lock mode filtered, or the "
	                   "line counted by distinct transaction id?", "signature");
	lt_expect_int_hint(rows[0].holder_pid, pid1, t->engine == KIT_DB_MYSQL ? "the holder's "
	                   "CONNECTION_ID() (the reader's lock on the row has lock_trx_id 0, like "
	                   "every transaction that has written nothing, four of them other "
	                   "databases' sessions: an id-0 holder is only one of this DATABASE()'s "
	                   "sessions)" : "the holder's pid (pg_blocking_pids)", "holder");
	lt_expect(rows[0].oldest_wait_ms >= 50 && rows[0].oldest_wait_ms < 60000, "oldest",
	          "expected the oldest wait between 50 ms and a minute, got %.1f ms",
	          rows[0].oldest_wait_ms);
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"),
	              1 + K_WAITERS - (my ? 3 : 2), "row 1's likes after the line drained (the FOR "
	              "UPDATE and FOR SHARE waiters only read)");
}

/* An UPDATE of row id of posts on a connection opened beforehand. */
struct queued_on {
	struct kit_db *db;
	const char *tag;
	int row;                 /* the post it updates; 0: post 1 */
	int rc;
	pthread_t th;
};

static void *update_on(void *arg)
{
	struct queued_on *q = arg;
	char sql[300];
	snprintf(sql, sizeof sql, "UPDATE posts SET likes = likes + 1 WHERE id = %d /* %s */",
	         q->row ? q->row : 1, q->tag);
	q->rc = kit_db_exec(q->db, sql, 0, NULL);
	return NULL;
}

/* The UPDATE of update_on(), then COMMIT: the waiter's own transaction,
 * begun before the holder's, ends once it has had the row. */
static void *update_then_commit(void *arg)
{
	struct queued_on *q = arg;
	update_on(q);
	int rc = kit_db_commit(q->db);
	if (q->rc == 0)
		q->rc = rc;
	return NULL;
}

/* A statement on a connection opened beforehand; its result in rc. */
struct stmt_on {
	struct kit_db *db;
	const char *sql;
	int rc;
	pthread_t th;
};

static void *exec_on(void *arg)
{
	struct stmt_on *q = arg;
	q->rc = kit_db_exec(q->db, q->sql, 0, NULL);
	return NULL;
}

/* One holder's transaction at the front of two waits: an UPDATE of row 1
 * of posts, which holds the row's tuple lock (so a lock names the row),
 * and an INSERT of a user id the holder inserted and has not committed,
 * which waits on the holder's transactionid with no tuple lock (nothing
 * names a row, as after the row changed hands, §2). A line is the
 * transaction at its front (contain.h): one line, 2 waiting, named by the
 * lock that names a row. A detector that groups by the row's name as well
 * reports two lines behind one holder, the unnamed one beside the named
 * one: which is what a line that re-formed after a commit looks like
 * when one waiter holds the new version's tuple lock and the others none. */
static void hot_rows_now__one_line_named_or_not(void **state)
{
	struct labtest *t = *state;
	struct hot_row_now rows[4];
	int64_t pid, lined = 0;
	int n = -1, rc = -1;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	struct kit_db *h = hold(t, 1, &pid);
	assert_int_equal(kit_db_exec(h, "INSERT INTO users (id, name) VALUES (50, 'held')", 0, NULL), 0);
	char upd[400], ins[400];
	snprintf(upd, sizeof upd, "UPDATE posts SET likes = likes + 1 WHERE id = 1 /* %s */", t->place);
	snprintf(ins, sizeof ins, "INSERT INTO users (id, name) VALUES (50, 'again') /* %s */",
	         t->place);
	struct stmt_on q[2] = {
		{ .db = labtest_connect(t), .sql = upd },
		{ .db = labtest_connect(t), .sql = ins },
	};
	int nq = 0;
	for (; nq < 2 && lined == nq; nq++) {
		pthread_create(&q[nq].th, NULL, exec_on, &q[nq]);
		lined = wait_for_waiters(t, nq + 1);
	}
	if (lined == 2) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 4, &n);
	}
	char why[300];
	snprintf(why, sizeof why, "%s", labtest_why(labtest_db(t)));
	kit_db_commit(h);
	kit_db_close(h);
	for (int i = 0; i < nq; i++)
		pthread_join(q[i].th, NULL);
	for (int i = 0; i < 2; i++)
		kit_db_close(q[i].db);
	expect_line(lined, 2, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	lt_expect(n == 1 && rows[0].waiting == 2 && rows[0].holder_pid == pid &&
	          strcmp(rows[0].relation, "posts") == 0, "churn", "one holder's transaction with "
	          "two waits behind it, an UPDATE of row 1 of posts (its tuple lock names the row) "
	          "and an INSERT of a key the holder inserted (no lock names a row): expected one "
	          "line, 2 waiting, behind pid %lld, named posts; got %d line(s), the first %s with "
	          "%d waiting behind %d%s", (long long)pid, n, n >= 1 && rows[0].relation[0] ?
	          rows[0].relation : "unnamed", n >= 1 ? rows[0].waiting : 0, n >= 1 ?
	          rows[0].holder_pid : 0, n == 2 ? ". Two lines behind one holder: are the waits "
	          "grouped by the row's name (relation, page, tuple) as well as by the transaction "
	          "at the front? A line is the transaction at its front, named by a lock when one "
	          "names the row, its unnamed waits included" : "");
}

/* The holder is whichever session the server happens to number: here the
 * one with the highest id of four opened beforehand, the other three
 * queueing behind it in turn. Servers hand out ids (pids, CONNECTION_ID())
 * mostly in the order sessions start, so a holder that began first also
 * has the smallest id, and a detector that takes the smallest (or the
 * first) pid pg_blocking_pids() names over the line passes the checks
 * that open the holder first; it names the first waiter here, whom the
 * tuple waiters are blocked by. Then the same line once more, each waiter
 * in a transaction that wrote another row before the holder began its
 * own: the holder is then the youngest transaction of the line (the
 * largest xid or trx_id, the latest xact_start), and a detector that
 * takes the oldest transaction in the way for the holder names a waiter. */
/* One waiter, on a connection of its own, queued behind row 1, which
 * the caller holds; once the server shows it, the lines read into rows.
 * The caller lets the holder go, then line_of_one_end() joins the waiter
 * and closes its connection; expect_line_of_one() checks what came back. */
struct one_line {
	struct queued_on q;
	bool started;
	int64_t lined;
	int n, rc;
	char why[300];
};

static void line_of_one_start(struct labtest *t, struct one_line *l, struct hot_row_now *rows,
                              int max)
{
	l->q = (struct queued_on){ .db = labtest_connect(t), .tag = t->place };
	l->n = l->rc = -1;
	l->started = pthread_create(&l->q.th, NULL, update_on, &l->q) == 0;
	if (l->started && (l->lined = wait_for_waiters(t, 1)) == 1) {
		sleep_ms(50);
		l->rc = hot_rows_now(labtest_db(t), rows, max, &l->n);
		snprintf(l->why, sizeof l->why, "%s", labtest_why(labtest_db(t)));
	}
}

static void line_of_one_end(struct one_line *l)
{
	if (l->started)
		pthread_join(l->q.th, NULL);
	kit_db_close(l->q.db);
	l->q.db = NULL;
}

static void expect_line_of_one(struct labtest *t, const struct one_line *l, const char *lines)
{
	expect_line(l->lined, 1, LINE_FORMS);
	lt_expect(l->rc == 0, NULL, "hot_rows_now(): %s", l->why);
	lt_expect_int_hint(l->n, 1, lines, "signature");
}

/* Rows held by prepared transactions (PREPARE TRANSACTION, the first
 * half of a two-phase commit) are held by no session at all: a
 * transaction outlives the session that prepared it, and pg_locks shows
 * its transactionid lock granted with no pid. Two of them, on rows 1 and
 * 2, one waiter behind each, make two lines (contain.h: one per
 * transaction at its front) whose holder_pid is 0, "none seen": not a
 * waiter, not a session that prepared one (idle now, holding nothing),
 * not the check's own, and not one line for the two because both have no
 * pid. Needs max_prepared_transactions >= 2 (scripts/pg sets 8; a server
 * with fewer refuses a PREPARE TRANSACTION, and the part is skipped). */
static void held_by_no_session(struct labtest *t)
{
	if (labtest_int(t, "SELECT current_setting('max_prepared_transactions')::int") < 2) {
		print_message("[ NOTE     ] the rows held by prepared transactions are not tried: "
		              "this server's max_prepared_transactions is below 2\n");
		return;
	}
	char gid[80], sql[160], why[300] = "";
	struct kit_db *p[2] = { labtest_connect(t), labtest_connect(t) };
	int64_t pid[2] = { -1, -1 };
	struct hot_row_now rows[3];
	struct queued_on q[2];
	int prepared = 0, k = 0, started = 0, n = -1, rc = -1;
	int64_t lined = -1;
	for (; k < 2 && prepared == 0; k++) {
		prepared_gid(t, k, gid, sizeof gid);
		snprintf(sql, sizeof sql, "UPDATE posts SET likes = likes + 1 WHERE id = %d", k + 1);
		prepared = session_id(p[k], &pid[k]);
		if (prepared == 0)
			prepared = kit_db_begin(p[k]);
		if (prepared == 0)
			prepared = kit_db_exec(p[k], sql, 0, NULL);
		snprintf(sql, sizeof sql, "PREPARE TRANSACTION '%s'", gid);
		if (prepared == 0)
			prepared = kit_db_exec(p[k], sql, 0, NULL);
		if (prepared != 0)
			snprintf(why, sizeof why, "%s", labtest_why(p[k]));
	}
	for (; prepared == 0 && started < 2; started++) {
		q[started] = (struct queued_on){ .db = labtest_connect(t), .tag = t->place,
		                                 .row = started + 1 };
		if (pthread_create(&q[started].th, NULL, update_on, &q[started]) != 0) {
			kit_db_close(q[started].db);
			break;
		}
	}
	if (started == 2 && (lined = wait_for_waiters(t, 2)) == 2) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 3, &n);
		snprintf(why, sizeof why, "%s", labtest_why(labtest_db(t)));
	}
	/* the ones prepared end, and the waiters behind them go on */
	for (int i = 0; i < k; i++) {
		prepared_gid(t, i, gid, sizeof gid);
		snprintf(sql, sizeof sql, "ROLLBACK PREPARED '%s'", gid);
		kit_db_exec(p[0], sql, 0, NULL);
	}
	for (int i = 0; i < started; i++) {
		pthread_join(q[i].th, NULL);
		kit_db_close(q[i].db);
	}
	kit_db_close(p[0]);
	kit_db_close(p[1]);
	lt_expect(prepared == 0, NULL, "BEGIN, UPDATE and PREPARE TRANSACTION: %s", why);
	expect_line(lined, 2, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	for (int i = 0; i < n && i < 2; i++)
		lt_expect(rows[i].waiting == 1 && rows[i].holder_pid == 0, "holder", "rows 1 and 2 "
		          "each held by a prepared transaction (PREPARE TRANSACTION: held by no "
		          "session, its pg_locks row has no pid) with one waiter: expected line %d to "
		          "be 1 waiting behind 0 (contain.h: 0 if none was seen), got %d behind %d%s",
		          i + 1, rows[i].waiting, rows[i].holder_pid,
		          rows[i].holder_pid == pid[0] || rows[i].holder_pid == pid[1] ? ": a session "
		          "that prepared one, idle now and holding nothing" : rows[i].holder_pid < 0 ?
		          ": contain.h's \"none seen\" is 0, not a negative" : rows[i].holder_pid != 0 ?
		          ": a session that does not hold the row" : rows[i].waiting == 2 ? ": the two "
		          "transactions' waiters in one line; both have no pid, and a line is one "
		          "transaction's, not one pid's" : "");
	lt_expect_int_hint(n, 2, "lines (rows 1 and 2, each held by a prepared transaction, one "
	                   "waiter behind each)", n == 1 ? "holder" : "signature");
	if (n == 2)
		lt_expect(rows[0].tuple != rows[1].tuple || rows[0].page != rows[1].page, NULL,
		          "two lines for rows 1 and 2: expected two places, got (%lld,%lld) twice",
		          (long long)rows[0].page, (long long)rows[0].tuple);
}

/* On MariaDB a session's default database (PROCESSLIST.DB) says nothing
 * of the rows it holds: an application that names its tables in full
 * (`shop`.`posts`), or that switched databases after its write, holds
 * this database's row from a session whose DB is another. Its line is
 * behind it all the same (contain.h: the backend whose transaction holds
 * the row); a detector that takes holders only from sessions of this
 * database reports 0. */
static void held_from_another_database(struct labtest *t)
{
	struct kit_db *h = labtest_connect(t);
	int64_t id = -1;
	struct hot_row_now rows[2];
	struct one_line l = { .why = "" };
	int holding = session_id(h, &id);
	if (holding == 0)
		holding = kit_db_begin(h);
	if (holding == 0)
		holding = kit_db_exec(h, "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0, NULL);
	if (holding == 0)
		holding = kit_db_exec(h, "USE information_schema", 0, NULL);
	if (holding != 0)
		snprintf(l.why, sizeof l.why, "%s", labtest_why(h));
	else
		line_of_one_start(t, &l, rows, 2);
	kit_db_rollback(h);
	line_of_one_end(&l);
	kit_db_close(h);
	lt_expect(holding == 0, NULL, "BEGIN, UPDATE and USE information_schema: %s", l.why);
	expect_line_of_one(t, &l, "lines (row 1 with 1 waiter, its holder's session now in another "
	                   "database)");
	lt_expect(rows[0].waiting == 1 && rows[0].holder_pid == id, "holder", "row 1 held by "
	          "session %lld, which then ran USE information_schema (its PROCESSLIST.DB is "
	          "another database now, as for an application that names its tables in full), with "
	          "one waiter: expected 1 waiting behind %lld, got %d behind %d%s", (long long)id,
	          (long long)id, rows[0].waiting, rows[0].holder_pid, rows[0].holder_pid == 0 ?
	          ": are holders taken only from sessions of this database? The row is this "
	          "database's; the session's default database is not where its locks are" : "");
}

static void hot_rows_now__holder_whatever_its_id(void **state)
{
	struct labtest *t = *state;
	struct kit_db *c[4];
	int64_t id[4], lined = 0;
	struct queued_on q[3];
	struct hot_row_now rows[4];
	int top = 0, n = -1, rc = -1, nq = 0;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	for (int i = 0; i < 4; i++) {
		c[i] = labtest_connect(t);
		assert_int_equal(session_id(c[i], &id[i]), 0);
		if (id[i] > id[top])
			top = i;
	}
	assert_int_equal(kit_db_begin(c[top]), 0);
	assert_int_equal(kit_db_exec(c[top], "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0,
	                             NULL), 0);
	for (int i = 0; i < 4 && lined == nq; i++) {
		if (i == top)
			continue;
		q[nq] = (struct queued_on){ .db = c[i], .tag = t->place };
		pthread_create(&q[nq].th, NULL, update_on, &q[nq]);
		lined = wait_for_waiters(t, ++nq);
	}
	if (lined == 3) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 4, &n);
	}
	char why[300];
	snprintf(why, sizeof why, "%s", labtest_why(labtest_db(t)));
	kit_db_commit(c[top]);
	for (int i = 0; i < nq; i++)
		pthread_join(q[i].th, NULL);
	for (int i = 0; i < 4; i++)
		kit_db_close(c[i]);
	expect_line(lined, nq, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	lt_expect_int_hint(n, 1, "lines (row 1 with 3 waiters)", "signature");
	lt_expect(rows[0].holder_pid == id[top] && rows[0].waiting == 3, "holder", "expected 3 "
	          "waiting behind the holder, session %lld (the highest id of the four), got %d "
	          "behind %d%s", (long long)id[top], rows[0].waiting, rows[0].holder_pid,
	          rows[0].holder_pid < id[top] && rows[0].holder_pid > 0 ? ": a waiter, with a "
	          "smaller id than the holder's; is the holder the smallest (or first) pid "
	          "blocking someone, rather than the session holding the transaction at the front?"
	          : "");

	/* the waiters' transactions older than the holder's */
	labtest_exec(t, "DELETE FROM users");
	for (int i = 0; i < 4; i++) {
		c[i] = labtest_connect(t);
		assert_int_equal(session_id(c[i], &id[i]), 0);
	}
	top = 3;
	for (int i = 0; i < 3; i++) {
		char sql[96];
		snprintf(sql, sizeof sql, "INSERT INTO users VALUES (%d, 'early')", 100 + i);
		assert_int_equal(kit_db_begin(c[i]), 0);
		assert_int_equal(kit_db_exec(c[i], sql, 0, NULL), 0);
	}
	/* The holder writes inside a SAVEPOINT, as an ORM's nested
	 * transaction does: on PostgreSQL the row's waiters then wait on the
	 * subtransaction's xid, which the holder holds in pg_locks, while
	 * pg_stat_activity.backend_xid names its top-level xid only. */
	assert_int_equal(kit_db_begin(c[top]), 0);
	assert_int_equal(kit_db_exec(c[top], "SAVEPOINT nested", 0, NULL), 0);
	assert_int_equal(kit_db_exec(c[top], "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0,
	                             NULL), 0);
	lined = 0, nq = 0, rc = -1, n = -1;
	for (int i = 0; i < 3 && lined == nq; i++) {
		q[nq] = (struct queued_on){ .db = c[i], .tag = t->place };
		pthread_create(&q[nq].th, NULL, update_then_commit, &q[nq]);
		lined = wait_for_waiters(t, ++nq);
	}
	if (lined == 3) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 4, &n);
	}
	snprintf(why, sizeof why, "%s", labtest_why(labtest_db(t)));
	kit_db_commit(c[top]);
	for (int i = 0; i < nq; i++)
		pthread_join(q[i].th, NULL);
	for (int i = nq; i < 3; i++)
		kit_db_rollback(c[i]);
	for (int i = 0; i < 4; i++)
		kit_db_close(c[i]);
	expect_line(lined, nq, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	lt_expect_int_hint(n, 1, "lines (row 1 with 3 waiters, each in a transaction older than "
	                   "the holder's)", "signature");
	lt_expect(rows[0].holder_pid == id[top] && rows[0].waiting == 3, "holder", "each waiter in "
	          "a transaction that wrote before the holder's began, the holder's write inside a "
	          "SAVEPOINT: expected 3 waiting behind the holder, session %lld, got %d behind %d%s",
	          (long long)id[top], rows[0].waiting,
	          rows[0].holder_pid, rows[0].holder_pid > 0 && rows[0].holder_pid != id[top] ?
	          ": a waiter, whose transaction is older than the holder's; is the holder taken "
	          "as the oldest transaction (smallest xid or trx_id, earliest xact_start) in the "
	          "way, rather than the one holding the row?" : rows[0].holder_pid == 0 ? ": no "
	          "holder found; the waiters wait on the xid of the holder's subtransaction (its "
	          "SAVEPOINT), which pg_stat_activity.backend_xid (the top-level xid) never names: "
	          "take the holder from pg_locks, the granted transactionid lock" : "");

	/* the holder waits itself: it holds row 1 and waits for row 2, which
	 * another session holds; two waiters queue behind it on row 1. Row 1's
	 * line is behind the session that holds row 1, whatever that session
	 * waits for: not the end of the chain pg_blocking_pids() leads to, and
	 * not only a session that waits for nothing. */
	labtest_exec(t, "INSERT INTO posts (id) VALUES (2)");
	for (int i = 0; i < 4; i++) {
		c[i] = labtest_connect(t);
		assert_int_equal(session_id(c[i], &id[i]), 0);
	}
	char row2[400];
	snprintf(row2, sizeof row2, "UPDATE posts SET likes = likes + 1 WHERE id = 2 /* %s */",
	         t->place);
	assert_int_equal(kit_db_begin(c[2]), 0);
	assert_int_equal(kit_db_exec(c[2], "UPDATE posts SET likes = likes + 1 WHERE id = 2", 0,
	                             NULL), 0);
	assert_int_equal(kit_db_begin(c[3]), 0);
	assert_int_equal(kit_db_exec(c[3], "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0,
	                             NULL), 0);
	struct stmt_on chained = { .db = c[3], .sql = row2 };
	pthread_create(&chained.th, NULL, exec_on, &chained);
	lined = wait_for_waiters(t, 1), nq = 0, rc = -1, n = -1;
	for (int i = 0; i < 2 && lined == nq + 1; i++) {
		q[nq] = (struct queued_on){ .db = c[i], .tag = t->place };
		pthread_create(&q[nq].th, NULL, update_on, &q[nq]);
		lined = wait_for_waiters(t, ++nq + 1);
	}
	if (lined == 3) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 4, &n);
	}
	snprintf(why, sizeof why, "%s", labtest_why(labtest_db(t)));
	kit_db_commit(c[2]);
	pthread_join(chained.th, NULL);
	kit_db_commit(c[3]);
	for (int i = 0; i < nq; i++)
		pthread_join(q[i].th, NULL);
	for (int i = 0; i < 4; i++)
		kit_db_close(c[i]);
	expect_line(lined, nq + 1, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	lt_expect_int_hint(n, 2, "lines (row 1 with 2 waiters behind its holder, row 2 with 1: "
	                   "row 1's holder, waiting for row 2)", "signature");
	if (n == 2) {
		lt_expect(rows[0].waiting == 2 && rows[0].holder_pid == id[3], "holder", "row 1's "
		          "holder, session %lld, itself waits for row 2, held by session %lld: "
		          "expected row 1's line of 2 behind %lld, got %d behind %d%s",
		          (long long)id[3], (long long)id[2], (long long)id[3], rows[0].waiting,
		          rows[0].holder_pid, rows[0].holder_pid == id[2] ? ": the holder at the end "
		          "of the chain, not the one holding row 1; is pg_blocking_pids() followed past "
		          "the transaction at the line's front?" : rows[0].holder_pid == 0 ? ": no "
		          "holder; is the holder required to wait for nothing itself (no lock not "
		          "granted, trx_state not LOCK WAIT)? A holder may be in another line" : "");
		lt_expect(rows[1].waiting == 1 && rows[1].holder_pid == id[2], "holder", "expected "
		          "row 2's line of 1 (row 1's holder) behind session %lld, got %d behind %d",
		          (long long)id[2], rows[1].waiting, rows[1].holder_pid);
	}
	if (t->engine == KIT_DB_POSTGRES)
		held_by_no_session(t);
	else
		held_from_another_database(t);
}

struct late_update {
	struct kit_db *db;
	const char *tag;
	_Atomic int64_t set_off;     /* ns, just before the UPDATE was sent */
	int rc;
	pthread_t th;
};

#define PRE_WAIT_S "1.5"
#define PRE_WAIT_MS 1500

static void *update_late(void *arg)
{
	struct late_update *u = arg;
	char sql[300];
	/* On PostgreSQL the UPDATE first sleeps 1.5 s (an initplan, run before
	 * it reaches the row), so its wait begins 1.5 s after the statement. */
	snprintf(sql, sizeof sql, "UPDATE posts SET likes = likes + 1 WHERE id = 1%s /* %s */",
	         kit_db_engine(u->db) == KIT_DB_POSTGRES
	         ? " AND (SELECT 1 FROM pg_sleep(" PRE_WAIT_S ")) = 1" : "", u->tag);
	atomic_store(&u->set_off, kit_load_now_ns());
	u->rc = kit_db_exec(u->db, sql, 0, NULL);
	return NULL;
}

/* A wait is as old as the wait, not as the waiter's transaction: the
 * waiter here began its transaction (and read the row) two seconds
 * before its UPDATE queued behind the holder. The oldest wait reported
 * can be no longer than the time since that UPDATE set off, as this
 * test's clock measures it when the call returns; a detector that
 * measures from the transaction's start (pg_stat_activity.xact_start,
 * INNODB_TRX.trx_started) reports two seconds more. On PostgreSQL the
 * UPDATE also spends 1.5 s before it reaches the row, so its wait began
 * 1.5 s after the statement did: a detector that measures from
 * pg_stat_activity.query_start reports 1.5 s more. */
static void hot_rows_now__wait_counts_from_the_wait(void **state)
{
	struct labtest *t = *state;
	struct hot_row_now rows[4];
	int64_t pid, lined = 0, begun, read;
	int n = -1, rc = -1;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	struct kit_db *h = hold(t, 1, &pid);
	struct late_update u = { .db = labtest_connect(t), .tag = t->place };
	atomic_init(&u.set_off, 0);
	assert_int_equal(kit_db_begin(u.db), 0);
	assert_int_equal(kit_db_query_int(u.db, "SELECT likes FROM posts WHERE id = 1", 0, NULL,
	                                  &read), 0);
	begun = kit_load_now_ns();
	while (kit_load_now_ns() - begun < 2000000000LL)    /* staging, not a verdict */
		sleep_ms(50);
	/* The UPDATE sets off a third of the way into a second of the wall
	 * clock (the server's, on this host), so its wait begins well inside
	 * that second: a wait measured from a start kept in whole seconds
	 * (MariaDB's INNODB_TRX.trx_wait_started) then comes out a third of
	 * a second or more too long, past the bound, not only when the
	 * second happened to be late. A server on another host with its own
	 * clock makes that likelier to slip by, never a right answer fail. */
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	long into = wall.tv_nsec / 1000000;                 /* ms into this second */
	sleep_ms((int)((into < 330 ? 330 : 1330) - into));
	pthread_create(&u.th, NULL, update_late, &u);
	lined = wait_for_waiters(t, 1);
	int64_t returned = 0;
	if (lined == 1) {
		sleep_ms(50);
		/* The call reads this program's clock a million times fast
		 * (tests/harness/locks.h): a wait worked out in C, from this
		 * host's clock against the server's waitstart, is then seconds
		 * off, as it is whenever the two hosts' clocks differ. */
		lt_clock_fast_this_thread(1000000);
		rc = hot_rows_now(labtest_db(t), rows, 4, &n);
		lt_clock_fast_this_thread(1);
		returned = kit_load_now_ns();
	}
	char why[300];
	snprintf(why, sizeof why, "%s", labtest_why(labtest_db(t)));
	kit_db_commit(h);
	pthread_join(u.th, NULL);
	kit_db_commit(u.db);
	kit_db_close(u.db);
	kit_db_close(h);
	double bound = (double)(returned - atomic_load(&u.set_off)) / 1e6;
	bool pg = kit_db_engine(labtest_db(t)) == KIT_DB_POSTGRES;
	if (pg)
		bound -= PRE_WAIT_MS;
	expect_line(lined, 1, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	lt_expect_int_hint(n, 1, "lines (row 1 with its one waiter)", "signature");
	lt_expect(rows[0].oldest_wait_ms <= bound + 1, "oldest", "expected the oldest wait at "
	          "most %.0f ms (its UPDATE set off that long before the call returned%s), got %.0f "
	          "ms%s", bound, pg ? ", less the 1.5 s it slept before reaching the row" : "",
	          rows[0].oldest_wait_ms, rows[0].oldest_wait_ms >= bound + 60000 ? ": this program's "
	          "clock ran fast during the call; is the wait worked out in C, from this host's "
	          "clock (clock_gettime, time, gettimeofday) against the server's start of the wait? "
	          "Two hosts' clocks differ: let the server work it out (clock_timestamp() - "
	          "waitstart; on MariaDB PROCESSLIST.TIME_MS)" :
	          rows[0].oldest_wait_ms >= bound + (pg ? 3000 : 1500) ?
	          ": about the age of the waiter's transaction, which began 2 s before it queued; "
	          "measure the wait from when it began (pg_locks.waitstart; on MariaDB "
	          "PROCESSLIST.TIME_MS), not from xact_start or trx_started" :
	          !pg && rows[0].oldest_wait_ms >= bound + 300 ? ": about the time since the "
	          "second in which the wait began; is the wait measured from "
	          "INNODB_TRX.trx_wait_started, which keeps whole seconds? Read "
	          "PROCESSLIST.TIME_MS (milliseconds) instead" :
	          pg && rows[0].oldest_wait_ms >= bound + 1000 ? ": about the age of the waiting "
	          "statement, which slept 1.5 s before it queued; measure the wait from "
	          "pg_locks.waitstart, not from pg_stat_activity.query_start" : "");
}

/* The oldest wait is the longest wait, not the wait of the oldest
 * transaction: a waiter whose transaction began first (it wrote row 2)
 * queues for row 1 1.5 s after another waiter whose transaction began
 * later. A detector that takes the line's oldest wait from its waiter
 * with the lowest transaction id (INNODB_TRX.trx_id, backend_xid:
 * "the oldest transaction has waited longest") reports the late
 * waiter's few ms. */
static void hot_rows_now__oldest_wait_whoever_began_first(void **state)
{
	struct labtest *t = *state;
	struct hot_row_now rows[4];
	int64_t pid, lined = 0;
	int n = -1, rc = -1;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (2)");
	struct kit_db *h = hold(t, 1, &pid);
	struct late_update u = { .db = labtest_connect(t), .tag = t->place };
	atomic_init(&u.set_off, 0);
	assert_int_equal(kit_db_begin(u.db), 0);
	assert_int_equal(kit_db_exec(u.db, "UPDATE posts SET likes = likes + 1 WHERE id = 2", 0, NULL),
	                 0);
	struct waiter w = { .url = t->url, .tag = t->place, .post = 1 };
	pthread_create(&w.th, NULL, queue_up, &w);
	lined = wait_for_waiters(t, 1);
	bool late = false;
	if (lined == 1) {
		int64_t t0 = kit_load_now_ns();
		while (kit_load_now_ns() - t0 < 1500000000LL)    /* staging, not a verdict */
			sleep_ms(50);
		pthread_create(&u.th, NULL, update_late, &u);
		late = true;
		lined = wait_for_waiters(t, 2);
	}
	if (lined == 2)
		rc = hot_rows_now(labtest_db(t), rows, 4, &n);
	char why[300];
	snprintf(why, sizeof why, "%s", labtest_why(labtest_db(t)));
	/* Either waiter may have the row next: the late one's transaction
	 * ends before the first is waited for, as the first may wait for it */
	kit_db_commit(h);
	if (late)
		pthread_join(u.th, NULL);
	kit_db_commit(u.db);
	pthread_join(w.th, NULL);
	kit_db_close(u.db);
	kit_db_close(h);
	expect_line(lined, 2, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	lt_expect_int_hint(n, 1, "lines (row 1 with its two waiters)", "signature");
	lt_expect_int_hint(rows[0].waiting, 2, "waiting (row 1)", "signature");
	lt_expect(rows[0].oldest_wait_ms >= 1400, "oldest", "expected the oldest wait at least "
	          "1400 ms (the first waiter queued 1.5 s before the second), got %.0f ms%s",
	          rows[0].oldest_wait_ms, rows[0].oldest_wait_ms < 1000 ? ": about the second "
	          "waiter's wait, whose transaction began first (it wrote row 2 before the first "
	          "waiter began). The oldest transaction is not the longest wait: take the largest "
	          "wait over every waiter of the line" : "");
}

/* The server's count of this test's tagged waits: kind "tuple" or
 * "transactionid" not granted, and the age in ms of the oldest wait of
 * that kind (kind NULL: any kind), -1 when there is none. */
static int64_t tagged_waits(struct labtest *t, const char *kind, bool age)
{
	char sql[700];
	snprintf(sql, sizeof sql, "SELECT %s FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
	         "AND a.query LIKE '%%/* %s */%%' WHERE NOT l.granted%s%s%s",
	         age ? "coalesce(max(floor(extract(epoch FROM clock_timestamp() - l.waitstart) * 1000))"
	         "::bigint, -1)" : "count(*)", t->place, kind ? " AND l.locktype = '" : "",
	         kind ? kind : "", kind ? "'" : "");
	return labtest_int(t, sql);
}

/* The oldest wait of a line is the oldest of all its waits, whichever
 * kind: the first waiter (on the holder's transactionid) is usually the
 * oldest, but not once it gave up (a contained like's lock timeout, a
 * cancelled request): the next takes the tuple lock and starts a new
 * wait on the transactionid, behind waiters on the tuple lock who have
 * waited longer. Staged: a holder, three waiters, the first cancelled
 * 500 ms after the third queued. A detector that takes the oldest wait
 * of the transactionid waits only ("the line's wait is its front's")
 * reports about 500 ms too little. */
static void hot_rows_now__oldest_wait_of_any_kind(void **state)
{
	struct labtest *t = *state;
	struct waiter w[3];
	struct hot_row_now rows[4];
	int64_t pid, lined = 0, first = -1;
	int n = -1, rc = -1, nw = 0;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	struct kit_db *h = hold(t, 1, &pid);
	while (nw < 3 && lined == nw) {
		w[nw] = (struct waiter){ .url = t->url, .tag = t->place, .post = 1 };
		pthread_create(&w[nw].th, NULL, queue_up, &w[nw]);
		lined = wait_for_waiters(t, ++nw);
		if (nw == 1 && lined == 1 && tagged_waits(t, "transactionid", false) == 1) {
			char sql[500];
			snprintf(sql, sizeof sql, "SELECT coalesce(min(l.pid), -1) FROM pg_locks l JOIN "
			         "pg_stat_activity a ON a.pid = l.pid AND a.query LIKE '%%/* %s */%%' "
			         "WHERE l.locktype = 'transactionid' AND NOT l.granted", t->place);
			first = labtest_int(t, sql);
		}
	}
	double before = -1, after = -1, front = -1;
	bool staged = false;
	if (lined == 3 && first > 0) {
		int64_t t0 = kit_load_now_ns();
		while (kit_load_now_ns() - t0 < 500000000LL)    /* staging, not a verdict */
			sleep_ms(50);
		char sql[120];
		snprintf(sql, sizeof sql, "SELECT pg_cancel_backend(%lld)::int", (long long)first);
		labtest_int(t, sql);
		/* the next waiter takes the tuple lock and waits on the holder's
		 * transactionid anew; the last still waits on the tuple lock */
		for (int i = 0; i < 500 && !staged; i++) {
			staged = tagged_waits(t, "transactionid", false) == 1 &&
			         tagged_waits(t, "tuple", false) == 1;
			if (!staged)
				sleep_ms(10);
		}
		if (staged) {
			front = (double)tagged_waits(t, "transactionid", true);
			before = (double)tagged_waits(t, NULL, true);
			rc = hot_rows_now(labtest_db(t), rows, 4, &n);
			after = (double)tagged_waits(t, NULL, true);
		}
	}
	char why[300];
	snprintf(why, sizeof why, "%s", labtest_why(labtest_db(t)));
	kit_db_commit(h);
	for (int i = 0; i < nw; i++)
		pthread_join(w[i].th, NULL);
	kit_db_close(h);
	expect_line(lined, nw, LINE_FORMS);
	lt_expect(first > 0, NULL, "the first waiter's pid could not be read");
	lt_expect(staged, NULL, "after the first waiter was cancelled, expected the server to show "
	          "one transactionid wait and one tuple wait of this test");
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	lt_expect_int_hint(n, 1, "lines (row 1, two waiters left)", "signature");
	lt_expect_int_hint(rows[0].waiting, 2, "waiting (the first waiter was cancelled)", "signature");
	lt_expect(rows[0].holder_pid == pid, "holder", "the holder reported is pid %d, the row's "
	          "holder is %lld%s", rows[0].holder_pid, (long long)pid, rows[0].holder_pid > 0 ?
	          ": a waiter. Once the first waiter gave up, the waiter on the tuple lock is "
	          "blocked by the one that took the tuple lock, and pg_blocking_pids() of a waiter "
	          "names that one: take the holder from the transactionid waits (whose "
	          "transaction they wait for), not from the longest waiter's blockers" : "");
	/* the server's readings are floored to whole ms */
	lt_expect(rows[0].oldest_wait_ms >= before - 1 && rows[0].oldest_wait_ms <= after + 1,
	          "oldest", "expected the oldest wait between %.0f and %.0f ms (the server's oldest "
	          "wait of the line just before and after the call: the waiter on the tuple lock), "
	          "got %.0f ms%s", before, after, rows[0].oldest_wait_ms,
	          rows[0].oldest_wait_ms < before - 1 && rows[0].oldest_wait_ms <= front + 100 ?
	          ": about the wait of the waiter on the transactionid, which began anew when the "
	          "first waiter gave up; take the oldest over every wait of the line, tuple waits "
	          "too" : "");
}

/* ---- a wait past a minute ---- */

/* A wait of more than a minute, as a hot row's first waiter reaches on a
 * bad day: a detector that reads the wait with extract(milliseconds FROM
 * interval) or extract(second FROM ...) keeps the seconds field only and
 * reads 61.5 s as 1.5 s, which every shorter wait cannot show. The line
 * (one holder, one waiter, in a database of its own so that no check
 * counting lines in its database sees it) is begun as the suite starts,
 * when the check is to run, and the other checks run while it ages; the
 * check then waits only for what is left of the minute, or for all of it
 * when it runs alone or the line could not be begun early. */
#define LONG_WAIT_S 61
#define LONG_DB "hotrow_lab07_long_"
#define LONG_CHECK "hot_rows_now__a_wait_past_a_minute"

static struct long_line {
	bool begun;
	char url[1200];              /* the line's database (or the check's place) */
	char admin_url[1100];        /* where to drop that database from; "" if none */
	char name[64];               /* that database */
	char tag[64];                /* in the waiter's statement */
	struct kit_db *holder;
	int64_t holder_pid;
	struct waiter w;
} long_line;

/* The long line's waiter: queue_up(), on a session whose own timeouts
 * (a role's or a class server's defaults) cannot end the wait early. */
static void *wait_long(void *arg)
{
	struct waiter *w = arg;
	struct kit_db *db;
	char id[24], sql[300];
	snprintf(id, sizeof id, "%lld", (long long)w->post);
	snprintf(sql, sizeof sql, "UPDATE posts SET likes = likes + 1 WHERE id = $1 /* %s */", w->tag);
	const char *p[] = { id };
	w->rc = kit_db_open(&db, w->url);
	if (w->rc == 0)
		w->rc = kit_db_exec(db, "SET statement_timeout = 0; SET lock_timeout = 0", 0, NULL);
	if (w->rc == 0)
		w->rc = kit_db_exec(db, sql, 1, p);
	kit_db_close(db);
	return NULL;
}

/* This host, in the long line's database name: a sweep drops only the
 * databases of this host's processes that are gone. */
static unsigned long_host(void)
{
	char host[256] = "";
	unsigned h = 2166136261u;
	gethostname(host, sizeof host - 1);
	for (const char *c = host; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	return h;
}

static int stale_long_db(void *arg, int ncols, const char *const *v)
{
	unsigned tag;
	long pid;
	if (ncols > 0 && v[0] && sscanf(v[0], LONG_DB "%x_%ld_", &tag, &pid) == 2 &&
	    tag == long_host() && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		snprintf((char *)arg, 64, "%.63s", v[0]);
	return 0;
}

/* Drop the long lines' databases that a test process which died (a
 * crash, a kill) left behind; a few at a time. */
static void long_line_sweep(struct kit_db *admin)
{
	for (int i = 0; i < 5; i++) {
		char name[64] = "", sql[200];
		kit_db_query(admin, "SELECT datname FROM pg_database WHERE datname LIKE "
		             "'hotrow\\_lab07\\_long\\_%'", 0, NULL, stale_long_db, name);
		if (name[0] == 0)
			return;
		snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %.63s WITH (FORCE)", name);
		if (kit_db_exec(admin, sql, 0, NULL) != 0)
			return;
	}
}

/* Begin the line in a database of its own made from url (the shared
 * database), or, when the server refuses CREATE DATABASE and place_url is
 * given, in that (the check's own place). */
static bool long_line_begin(const char *url, const char *place_url)
{
	struct long_line *l = &long_line;
	if (l->begun)
		return true;
	struct kit_db *admin = NULL;
	char sql[200];
	snprintf(l->name, sizeof l->name, LONG_DB "%x_%ld_%ld", long_host(), (long)getpid(),
	         (long)time(NULL));
	snprintf(l->tag, sizeof l->tag, "%.63s", l->name);
	snprintf(sql, sizeof sql, "CREATE DATABASE %.63s", l->name);
	int n = snprintf(l->url, sizeof l->url, "%s%sdbname=%s", url, strchr(url, '?') ? "&" : " ",
	                 l->name);
	l->admin_url[0] = 0;
	if (n > 0 && (size_t)n < sizeof l->url && kit_db_open(&admin, url) == 0) {
		long_line_sweep(admin);
		if (kit_db_exec(admin, sql, 0, NULL) == 0)
			snprintf(l->admin_url, sizeof l->admin_url, "%s", url);
	}
	kit_db_close(admin);
	if (l->admin_url[0] == 0) {
		if (place_url == NULL)
			return false;
		snprintf(l->url, sizeof l->url, "%s", place_url);
	}
	if (kit_db_open(&l->holder, l->url) != 0 ||
	    kit_db_exec(l->holder, "CREATE TABLE posts (id bigint PRIMARY KEY, likes bigint NOT NULL "
	                "DEFAULT 0); INSERT INTO posts (id) VALUES (1)", 0, NULL) != 0 ||
	    session_id(l->holder, &l->holder_pid) != 0 ||
	    kit_db_exec(l->holder, "SET idle_in_transaction_session_timeout = 0", 0, NULL) != 0 ||
	    kit_db_begin(l->holder) != 0 ||
	    kit_db_exec(l->holder, "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0, NULL) != 0) {
		kit_db_close(l->holder);
		l->holder = NULL;
		return false;
	}
	l->w = (struct waiter){ .url = l->url, .tag = l->tag, .post = 1 };
	pthread_create(&l->w.th, NULL, wait_long, &l->w);
	l->begun = true;
	return true;
}

/* Let the line go and drop its database. */
static void long_line_end(void)
{
	struct long_line *l = &long_line;
	if (!l->begun)
		return;
	kit_db_rollback(l->holder);
	pthread_join(l->w.th, NULL);
	kit_db_close(l->holder);
	l->holder = NULL;
	l->begun = false;
	if (l->admin_url[0]) {
		struct kit_db *admin = NULL;
		char sql[200];
		snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %.63s WITH (FORCE)", l->name);
		if (kit_db_open(&admin, l->admin_url) == 0)
			kit_db_exec(admin, sql, 0, NULL);
		kit_db_close(admin);
	}
}

/* Does the list (words apart by spaces, commas or lines) name the check? */
static bool names_check(const char *list, const char *check)
{
	size_t k = strlen(check);
	for (const char *p = list; p && *p; ) {
		p += strspn(p, " \t\n,");
		size_t n = strcspn(p, " \t\n,");
		if (n >= k && strncmp(p, check, k) == 0 && (n == k || p[k] == '/'))
			return true;
		p += n;
	}
	return false;
}

/* As the suite starts: begin the line if the check is to run on
 * PostgreSQL (what labtest_run() decides from the same variables; a
 * line begun for nothing is let go at exit, and a check whose line was
 * not begun here begins it itself). */
static void long_line_early(void)
{
	const char *url = getenv("HOTROW_PG_URL"), *only = getenv("HOTROW_LAB_ONLY");
	const char *checks = getenv("HOTROW_LAB_CHECKS"), *skip = getenv("HOTROW_LAB_SKIP");
	/* under `hotrow lab`, its list of skipped checks decides alone */
	bool off = skip ? names_check(skip, LONG_CHECK)
	                : checks && *checks && !names_check(checks, LONG_CHECK);
	if (url == NULL || *url == 0 || (only && *only && strncmp(only, "postgres", 8) != 0) || off)
		return;
	if (long_line_begin(url, NULL))
		atexit(long_line_end);
}

/* The server's age of the long line's wait, in seconds (-1 while nothing
 * waits); read on db, a connection to the line's database. */
static double long_wait_s(struct kit_db *db)
{
	char sql[500];
	int64_t ms = -1;
	snprintf(sql, sizeof sql, "SELECT coalesce(max(floor(extract(epoch FROM clock_timestamp() - "
	         "l.waitstart) * 1000))::bigint, -1) FROM pg_locks l JOIN pg_stat_activity a ON "
	         "a.pid = l.pid AND a.query LIKE '%%/* %s */%%' WHERE NOT l.granted", long_line.tag);
	if (kit_db_query_int(db, sql, 0, NULL, &ms) != 0)
		return -1;
	return ms < 0 ? -1 : (double)ms / 1000;
}

static void hot_rows_now__a_wait_past_a_minute(void **state)
{
	struct labtest *t = *state;
	struct hot_row_now rows[4];
	int n = -1, rc = -1;
	memset(rows, 0, sizeof rows);
	const char *shared = getenv("HOTROW_PG_URL");
	if (!long_line.begun && !long_line_begin(shared && *shared ? shared : t->url, t->url))
		fail_msg("could not stage the line: %s", labtest_why(labtest_db(t)));
	/* A detector that does not see the line now will not see it in a
	 * minute either: asked once first, on a connection of its own (so
	 * that the transaction below reads pg_stat_activity afresh), it
	 * fails the check at once rather than after the minute. */
	struct kit_db *early = NULL;
	int n0 = -1, rc0 = -1;
	bool waiting = false;
	if (kit_db_open(&early, long_line.url) == 0) {
		for (int i = 0; i < 200 && !(waiting = long_wait_s(early) >= 0); i++)
			sleep_ms(50);
		if (waiting)
			rc0 = hot_rows_now(early, rows, 4, &n0);
	}
	kit_db_close(early);
	if (waiting && (rc0 != 0 || n0 != 1)) {
		long_line_end();
		lt_expect(rc0 == 0 && n0 == 1, "signature", "hot_rows_now() with row 1 held and one "
		          "waiter, before its wait was a minute old, returned %d with %d line(s) "
		          "(expected 1): the check's minute was not waited", rc0, n0);
		return;
	}
	memset(rows, 0, sizeof rows);
	/* The detector runs in a transaction of the caller's, begun before the
	 * wait was a minute old: "so far" is the server's clock now, not when
	 * that transaction began (now(), statement_timestamp()). */
	struct kit_db *db = NULL;
	assert_int_equal(kit_db_open(&db, long_line.url), 0);
	assert_int_equal(kit_db_begin(db), 0);
	/* The server's own clock says when the wait is past the minute; the
	 * deadline only ends a line that never formed. */
	double before = long_wait_s(db), after = -1;
	int64_t start = kit_load_now_ns();
	while (before < LONG_WAIT_S && kit_load_now_ns() - start < (LONG_WAIT_S + 60) * 1000000000LL) {
		sleep_ms(before < 0 || before > LONG_WAIT_S - 2 ? 50 : 500);
		before = long_wait_s(db);
	}
	char why[300] = "";
	if (before >= LONG_WAIT_S) {
		rc = hot_rows_now(db, rows, 4, &n);
		snprintf(why, sizeof why, "%s", labtest_why(db));
		after = long_wait_s(db);
	}
	int64_t holder = long_line.holder_pid;
	kit_db_rollback(db);
	kit_db_close(db);
	long_line_end();
	lt_expect(before >= LONG_WAIT_S, NULL, "expected the server to show the staged waiter "
	          "waiting %d s, it showed %.1f s (-1: not waiting)", LONG_WAIT_S, before);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	lt_expect_int_hint(n, 1, "lines (row 1 with its one waiter)", "signature");
	lt_expect_int_hint(rows[0].waiting, 1, "waiting", "signature");
	lt_expect_int_hint(rows[0].holder_pid, holder, "holder pid", "holder");
	lt_expect(rows[0].oldest_wait_ms >= before * 1000 - 1 &&
	          rows[0].oldest_wait_ms <= after * 1000 + 1, "oldest", "expected the oldest wait "
	          "between %.0f and %.0f ms (the server's clock_timestamp() - pg_locks.waitstart "
	          "just before and after the call), got %.0f ms%s", before * 1000, after * 1000,
	          rows[0].oldest_wait_ms, rows[0].oldest_wait_ms < 60000 &&
	          rows[0].oldest_wait_ms >= before * 1000 - 60000 - 1 ? ": the wait less its whole "
	          "minutes, what extract(milliseconds FROM interval) or extract(second FROM "
	          "interval) keep (the seconds field only); take extract(epoch FROM interval) * "
	          "1000" : rows[0].oldest_wait_ms < before * 1000 ? ": less than the server's own "
	          "count; the call ran in a transaction begun while the wait was younger: is the "
	          "wait measured to now() or statement_timestamp() (when that transaction or "
	          "statement began), not clock_timestamp()?" : "");
}

/* Three lines, told apart by their holders: row 1 with two waiters, rows
 * 2 and 3 with one each, row 2's waiter there first, then row 3's, row
 * 1's two last. The contract's order (the most waiters first, then the
 * oldest wait) is row 1, row 2, row 3; an order by the oldest wait alone
 * gives 2, 3, 1, by the row's place 3, 2, 1, and a tie broken by the
 * holder's id puts 3 first (row 2's holder has the smaller id). Each
 * line's oldest wait lies between the time the server showed its first
 * waiter waiting and the time its first waiter set off, as this test's
 * clock measures them around the call. */
static void hot_rows_now__lines_in_order_with_their_waits(void **state)
{
	struct labtest *t = *state;
	struct waiter w[4];
	struct hot_row_now rows[8], two[2];
	struct kit_db *h[3];
	int64_t pid[3], lined = 0;
	int64_t set_off[3], shown[3];   /* per line: its first waiter, ns */
	int n = -1, queued = 0, rc = -1, n2 = -1, rc2 = -1;
	const int64_t line_of[4] = { 2, 3, 1, 1 };   /* the rows, in the order their waiters come */
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (2), (3)");

	/* configure: three holders; the one with the smaller id takes row 2 */
	h[0] = hold(t, 1, &pid[0]);
	h[1] = hold(t, 2, &pid[1]);
	h[2] = hold(t, 3, &pid[2]);
	if (pid[1] > pid[2]) {          /* swap the holders of rows 2 and 3 */
		kit_db_rollback(h[1]);
		kit_db_rollback(h[2]);
		kit_db_close(h[1]);
		kit_db_close(h[2]);
		struct kit_db *x = hold(t, 3, &pid[2]), *y = hold(t, 2, &pid[1]);
		h[1] = y;
		h[2] = x;
	}
	while (queued < 4 && lined == queued) {
		int line = (int)line_of[queued] - 1;
		int64_t t0 = util_now_ns();
		w[queued] = (struct waiter){ .url = t->url, .tag = t->place, .post = line_of[queued] };
		pthread_create(&w[queued].th, NULL, queue_up, &w[queued]);
		lined = wait_for_waiters(t, ++queued);
		if (queued == 1 || line_of[queued - 1] != line_of[queued - 2]) {
			set_off[line] = t0;
			shown[line] = util_now_ns();
		}
		sleep_ms(60);               /* the next line's waits are younger */
	}
	int64_t before = 0, after = 0;
	if (lined == 4) {
		before = util_now_ns();
		rc = hot_rows_now(labtest_db(t), rows, 8, &n);
		after = util_now_ns();
		rc2 = hot_rows_now(labtest_db(t), two, 2, &n2);   /* fewer places than lines */
	}

	/* verify, after letting the lines go */
	for (int i = 0; i < 3; i++)
		kit_db_commit(h[i]);
	for (int i = 0; i < queued; i++)
		pthread_join(w[i].th, NULL);
	for (int i = 0; i < 3; i++)
		kit_db_close(h[i]);
	expect_line(lined, queued, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", labtest_why(labtest_db(t)));
	lt_expect_int_hint(n, 3, "lines: rows 1, 2 and 3 each held with waiters", "signature");
	lt_expect(rc2 == 0 && n2 == 2 && two[0].holder_pid == pid[0] && two[1].holder_pid == pid[1],
	          "order", "with room for 2 of the 3 lines: expected 0 and the first two lines "
	          "(held by %lld and %lld), got %d, %d lines, held by %d and %d", (long long)pid[0],
	          (long long)pid[1], rc2, n2, n2 > 0 ? two[0].holder_pid : 0,
	          n2 > 1 ? two[1].holder_pid : 0);
	const char *name[3] = { "row 1 (2 waiters)", "row 2 (1 waiter, the oldest wait)",
	                        "row 3 (1 waiter)" };
	for (int i = 0; i < 3 && n == 3; i++) {
		int is = -1;
		for (int j = 0; j < 3; j++)
			if (rows[i].holder_pid == pid[j])
				is = j;
		lt_expect(is == i, "order", "line %d of 3: expected %s, held by %lld, got the line "
		          "held by %d (%s): the most waiters first, then the oldest wait", i + 1,
		          name[i], (long long)pid[i], rows[i].holder_pid, is < 0 ? "no holder of "
		          "these rows" : name[is]);
		double lo = (double)(before - shown[i]) / 1e6, hi = (double)(after - set_off[i]) / 1e6;
		lt_expect(rows[i].oldest_wait_ms >= lo - 1 && rows[i].oldest_wait_ms <= hi + 1, "oldest",
		          "%s: its oldest wait must lie between %.0f ms (the server showed it waiting "
		          "that long before the call) and %.0f ms (its waiter set off that long before "
		          "the call returned), got %.1f ms: is it read from the right column, in ms?",
		          name[i], lo, hi, rows[i].oldest_wait_ms);
	}
}

/* MariaDB: the relation is the table's whole name, dots and all. A table
 * called posts.v2 shows in INNODB_LOCKS as `db`.`posts.v2`: a name taken
 * after the last dot is "v2", another table's or none. */
static void hot_rows_now__names_a_table_with_a_dot(void **state)
{
	struct labtest *t = *state;
	struct hot_row_now rows[4];
	int64_t pid = 0;
	int n = -1;
	contain_own_db(t);
	labtest_exec(t, "CREATE TABLE `posts.v2` (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL "
	             "DEFAULT 0); INSERT INTO `posts.v2` (id) VALUES (1)");
	struct kit_db *h = hold_row(t, "`posts.v2`", 1, &pid);
	struct waiter w = { .url = t->url, .tag = t->place, .post = 1, .table = "`posts.v2`" };
	lt_expect(pthread_create(&w.th, NULL, queue_up, &w) == 0, NULL, "starting a waiter");
	int64_t lined = wait_for_waiters(t, 1);
	int rc = -1;
	if (lined == 1)
		rc = hot_rows_now(labtest_db(t), rows, 4, &n);
	kit_db_commit(h);
	pthread_join(w.th, NULL);
	kit_db_close(h);
	expect_line(lined, 1, LINE_FORMS);
	lt_expect(rc == 0 && n == 1, NULL, "hot_rows_now() with one waiter on table posts.v2: "
	          "%d, %d line(s): %s", rc, n, labtest_why(labtest_db(t)));
	lt_expect(n < 1 || (!strcmp(rows[0].relation, "posts.v2") && rows[0].holder_pid == pid),
	          "signature", "the line on table `posts.v2` was named \"%s\" behind %d (expected "
	          "\"posts.v2\" behind %lld): INNODB_LOCKS shows it as `db`.`posts.v2`, and the name "
	          "after the last dot is only a piece of it. Take what follows `DATABASE()`.` whole",
	          n < 1 ? "" : rows[0].relation, n < 1 ? 0 : rows[0].holder_pid, (long long)pid);
}

/* At the start of the detector's k-th statement the holder commits and
 * its waiter, an autocommit UPDATE, takes the row and is done: there is
 * no line any more. */
struct commit_at {
	struct kit_db *holder;
	struct waiter *w;
	int at, seen;
	bool done;
};

static void commit_holder_at(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct commit_at *c = arg;
	(void)sql, (void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || c->done || ++c->seen != c->at)
		return;
	c->done = true;
	kit_db_commit(c->holder);
	pthread_join(c->w->th, NULL);
}

/* A sample is one reading of the server's locks: the line of post 1 (one
 * waiter) while its holder commits at the start of the detector's
 * statement 1, 2, ... in turn. Each call reports the line behind the
 * holder it had, or no line; never the line behind 0 or another
 * session. A detector that reads the lines in one statement and each
 * line's holder in another reads them at two moments: the holder gone
 * in between, the line is reported behind nobody. */
static void hot_rows_now__one_reading_while_the_holder_commits(void **state)
{
	struct labtest *t = *state;
	struct hot_row_now rows[4];
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	for (int k = 1; k <= 8; k++) {
		int64_t pid = 0;
		int n = -1;
		struct kit_db *h = hold(t, 1, &pid);
		struct waiter w = { .url = t->url, .tag = t->place, .post = 1 };
		lt_expect(pthread_create(&w.th, NULL, queue_up, &w) == 0, NULL, "starting a waiter");
		int64_t lined = wait_for_waiters(t, 1);
		struct commit_at c = { .holder = h, .w = &w, .at = k };
		int rc = -1;
		if (lined == 1) {
			kit_db_set_hook(labtest_db(t), commit_holder_at, &c);
			rc = hot_rows_now(labtest_db(t), rows, 4, &n);
			kit_db_set_hook(labtest_db(t), NULL, NULL);
		}
		if (!c.done) {
			kit_db_commit(h);
			pthread_join(w.th, NULL);
		}
		kit_db_close(h);
		expect_line(lined, 1, LINE_FORMS);
		lt_expect(rc == 0, NULL, "hot_rows_now(): %s", labtest_why(labtest_db(t)));
		int stray = -1;
		for (int i = 0; i < n && stray < 0; i++)
			if (rows[i].holder_pid != pid)
				stray = i;
		lt_expect(stray < 0, "holder", "hot_rows_now(), with post 1's holder (pid %lld) "
		          "committing at the start of its statement %d, reported %d line(s), line %d "
		          "behind %d: each line is behind the holder it had when the lines were read, "
		          "or there is no line. Lines and holders read by two statements are two "
		          "readings of the locks: the holder gone between them, the line is behind "
		          "nobody. Read them in one statement", (long long)pid, k, n, stray + 1,
		          stray < 0 ? 0 : rows[stray].holder_pid);
		if (!c.done) {
			/* it sent fewer than k statements: the line stood all along */
			lt_expect(rc != 0 || (n == 1 && rows[0].holder_pid == pid && rows[0].waiting == 1),
			          "holder", "hot_rows_now(), with post 1 held by pid %lld and one waiter "
			          "throughout, reported %d line(s)%s (expected 1, 1 waiting behind %lld)",
			          (long long)pid, n, n > 0 ? ", the first not that one" : "",
			          (long long)pid);
			break;
		}
	}
}

/* Four lines of one waiter each, on records alike in all but one of the
 * things that name them: row 1 of posts and row 1 of shares (on MariaDB
 * both the first record of their table's page 3, heap number 2, in two
 * tablespaces), and rows 1 and 2 of profiles, whose 7,000-character bios
 * let InnoDB keep two rows at most to a 16 KB page: of six inserted in
 * order, ids 1 and 2 end up on two pages, each the first record there
 * (heap number 2; INNODB_LOCKS shows pages 4 and 5 on MariaDB 10.11). Each
 * row held by a session of its own. Four lines, each naming its record,
 * behind that record's holder. A holder found by heap number and page
 * without the tablespace, or by tablespace and heap number without the
 * page, is one transaction for two of these lines. */
static void hot_rows_now__each_line_behind_its_own_holder(void **state)
{
	struct labtest *t = *state;
	static const struct { const char *table; int64_t id; } rec[] = {
		{ "posts", 1 }, { "shares", 1 }, { "profiles", 1 }, { "profiles", 2 } };
	enum { RECS = sizeof rec / sizeof rec[0], WAITERS = 2 * RECS };
	struct waiter w[WAITERS];
	struct kit_db *h[RECS];
	struct hot_row_now rows[8];
	int64_t pid[RECS], page[RECS] = { 0 }, heap[RECS] = { 0 }, lined = 0;
	int n = -1, queued = 0, rc = -1;
	char sql[400];
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "CREATE TABLE shares (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0);"
	             "CREATE TABLE profiles (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0,"
	             " bio VARCHAR(7000) NOT NULL);"
	             "INSERT INTO posts (id) VALUES (1); INSERT INTO shares (id) VALUES (1)");
	/* on PostgreSQL a bio kept whole in its row (no compression, no
	 * TOAST), so that each row fills a page of its own: rows 1 and 2 are
	 * tuple 1 of pages 0 and 1, as InnoDB puts them on two pages with one
	 * heap number */
	if (t->engine == KIT_DB_POSTGRES)
		labtest_exec(t, "ALTER TABLE profiles ALTER COLUMN bio SET STORAGE PLAIN");
	for (int id = 1; id <= 6; id++) {
		snprintf(sql, sizeof sql, "INSERT INTO profiles (id, bio) VALUES (%d, repeat('x', 7000))",
		         id);
		labtest_exec(t, sql);
	}
	for (int i = 0; i < RECS && t->engine == KIT_DB_POSTGRES; i++) {
		const char *part[2] = { "0", "1" };
		int64_t *out[2] = { &page[i], &heap[i] };
		for (int k = 0; k < 2; k++) {
			snprintf(sql, sizeof sql, "SELECT (ctid::text::point)[%s]::bigint FROM %s WHERE "
			         "id = %lld", part[k], rec[i].table, (long long)rec[i].id);
			*out[k] = labtest_int(t, sql);
		}
	}

	/* configure: each record held, then one waiter behind each, then a
	 * second behind each: on PostgreSQL posts' row 1 and shares' row 1
	 * are both tuple 1 of page 0 of their tables, profiles' rows 1 and 2
	 * the same tuple number on two pages, and each second waiter waits on
	 * its own row's tuple lock */
	for (int i = 0; i < RECS; i++)
		h[i] = hold_row(t, rec[i].table, rec[i].id, &pid[i]);
	while (queued < WAITERS && lined == queued) {
		int r = queued % RECS;
		w[queued] = (struct waiter){ .url = t->url, .tag = t->place, .table = rec[r].table,
		                             .post = rec[r].id };
		pthread_create(&w[queued].th, NULL, queue_up, &w[queued]);
		lined = wait_for_waiters(t, ++queued);
	}

	/* run, once the server shows every line; on MariaDB, where each
	 * record is, as INNODB_LOCKS names it */
	if (lined == WAITERS) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 8, &n);
	}
	for (int i = 0; i < RECS && lined == WAITERS && t->engine == KIT_DB_MYSQL; i++) {
		const char *col[2] = { "lock_page", "lock_rec" };
		int64_t *out[2] = { &page[i], &heap[i] };
		for (int k = 0; k < 2; k++) {
			snprintf(sql, sizeof sql, "SELECT min(%s) FROM information_schema.INNODB_LOCKS "
			         "WHERE lock_table = CONCAT('`', DATABASE(), '`.`%s`') AND lock_data = "
			         "'%lld'", col[k], rec[i].table, (long long)rec[i].id);
			*out[k] = labtest_int(t, sql);
		}
	}

	/* verify, after letting the lines go */
	for (int i = 0; i < RECS; i++)
		kit_db_commit(h[i]);
	for (int i = 0; i < queued; i++)
		pthread_join(w[i].th, NULL);
	for (int i = 0; i < RECS; i++)
		kit_db_close(h[i]);
	expect_line(lined, queued, LINE_FORMS);
	lt_expect(page[0] == page[1] && heap[0] == heap[1] && page[2] != page[3] &&
	          heap[2] == heap[3], NULL, "this check needs posts' and shares' rows on the same "
	          "page and tuple (heap number), and profiles' rows 1 and 2 on two pages with one "
	          "tuple number; %s shows page %lld tuple %lld, %lld/%lld, %lld/%lld, %lld/%lld",
	          t->engine == KIT_DB_MYSQL ? "INNODB_LOCKS" : "ctid", (long long)page[0],
	          (long long)heap[0],
	          (long long)page[1], (long long)heap[1], (long long)page[2], (long long)heap[2],
	          (long long)page[3], (long long)heap[3]);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", labtest_why(labtest_db(t)));
	lt_expect_int_hint(n, RECS, "lines: posts' row 1, shares' row 1 and profiles' rows 1 and "
	                   "2, each held with two waiters", "signature");
	for (int i = 0; i < RECS; i++) {
		int at = -1, other = -1;
		for (int j = 0; j < n && j < 8; j++)
			if (!strcmp(rows[j].relation, rec[i].table) && rows[j].page == page[i] &&
			    rows[j].tuple == heap[i])
				at = j;
		for (int k = 0; at >= 0 && k < RECS; k++)
			if (rows[at].holder_pid == pid[k])
				other = k;
		const char *place = t->engine == KIT_DB_MYSQL ? "heap number" : "tuple";
		lt_expect(at >= 0, "signature", "expected a line naming row %lld of %s (page %lld, "
		          "%s %lld), got none", (long long)rec[i].id, rec[i].table, (long long)page[i],
		          place, (long long)heap[i]);
		char alike[300] = "";
		if (other >= 0 && other != i)
			snprintf(alike, sizeof alike, ", the holder of row %lld of %s (page %lld, %s "
			         "%lld): the holder's lock must be on the same record, so the same "
			         "table(space), page and %s", (long long)rec[other].id, rec[other].table,
			         (long long)page[other], place, (long long)heap[other], place);
		int want = 2;
		if (rows[at].waiting != want && !alike[0] && i < 2)
			snprintf(alike, sizeof alike, ": posts' and shares' rows are both at page 0, "
			         "tuple 1 of their tables, and each has a tuple waiter; is a tuple waiter "
			         "put behind the transactionid wait on the same page and tuple without "
			         "comparing the relation?");
		else if (rows[at].waiting != want && !alike[0])
			snprintf(alike, sizeof alike, ": profiles' rows 1 and 2 have the same %s number "
			         "on two pages, and each has a tuple waiter; is a tuple waiter put behind "
			         "the transactionid wait on the same table and %s without comparing the "
			         "page?", place, place);
		lt_expect(rows[at].holder_pid == pid[i] && rows[at].waiting == want, "holder", "the line "
		          "of row %lld of %s (page %lld, %s %lld): expected %d waiting behind its "
		          "holder, pid %lld, got %d waiting behind pid %d%s", (long long)rec[i].id,
		          rec[i].table, (long long)page[i], place, (long long)heap[i], want,
		          (long long)pid[i], rows[at].waiting, rows[at].holder_pid, alike);
	}
}

/* A waiter that keeps the row once it gets it, until told to commit. */
struct keeper {
	const char *url, *tag;
	int64_t pid;
	atomic_bool got, release;
	int rc;
	pthread_t th;
};

/* A reader in the line: SELECT ... FOR SHARE (LOCK IN SHARE MODE on
 * MariaDB) waits for the row like an UPDATE does. */
struct reader {
	struct waiter w;
	int engine;
};

static void *read_shared(void *arg)
{
	struct reader *r = arg;
	struct kit_db *db;
	char id[24], sql[400];
	int64_t likes;
	snprintf(id, sizeof id, "%lld", (long long)r->w.post);
	snprintf(sql, sizeof sql, "SELECT likes FROM posts WHERE id = %s %s /* %s */",
	         r->engine == KIT_DB_MYSQL ? "?" : "$1",
	         r->engine == KIT_DB_MYSQL ? "LOCK IN SHARE MODE" : "FOR SHARE", r->w.tag);
	const char *p[] = { id };
	r->w.rc = kit_db_open(&db, r->w.url);
	if (r->w.rc == 0)
		r->w.rc = kit_db_begin(db);
	if (r->w.rc == 0)
		r->w.rc = kit_db_query_int(db, sql, 1, p, &likes);
	if (r->w.rc == 0)
		r->w.rc = kit_db_commit(db);
	kit_db_close(db);
	return NULL;
}

/* Readers share a row's lock, so a line can have two backends in front
 * of a writer rather than one: on PostgreSQL two FOR SHARE readers
 * waiting behind the holder both hold the row's tuple lock (its shared
 * mode) and the writer behind them waits on that tuple lock; on MariaDB
 * two readers that already hold the record in share mode are both its
 * holders. A detector that takes "the" tuple lock's holder, or "the"
 * granted lock on the record, as one row (a scalar subquery with no
 * LIMIT 1, a join that counts the line twice) fails here: the contract
 * is still one line, every waiter in it, and a holder that holds the row. */
/* MariaDB: hot_rows_now() beside CAPITAL_DECOYS more sessions of the
 * database in this one's name in capitals, each holding a row of its own
 * LOCK IN SHARE MODE in a transaction begun for this round (trx_id 0, as
 * the two readers' are). A detector whose id-0 holder is any session of
 * this DATABASE() under the connection's collation takes the first of
 * those sessions and the readers that its query meets, and which comes
 * first the server does not promise: with many connections coming and
 * going beside the check (make test's lanes) a first round named a
 * reader in two runs of three. Each round of fresh decoys is another
 * draw with six of eight candidates wrong; five rounds leave a wrong
 * detector unseen about once in a thousand runs at worst (0.25^5),
 * where the server's order is even that fair. */
#define CAPITAL_DECOYS 6
#define CAPITAL_ROUNDS 5

static int capital_decoys_round(struct labtest *t, struct hot_row_now *rows, int max, int *n)
{
	struct kit_db *d[CAPITAL_DECOYS];
	char name[100], url[sizeof t->url];
	upper_name(t, name, sizeof name);
	place_url(t, name, url, sizeof url);
	for (int i = 0; i < CAPITAL_DECOYS; i++) {
		assert_int_equal(kit_db_open(&d[i], url), 0);
		decoy_hold(d[i], i);
	}
	sleep_ms(150);          /* past INNODB_TRX's 0.1 s cache */
	int rc = hot_rows_now(labtest_db(t), rows, max, n);
	for (int i = 0; i < CAPITAL_DECOYS; i++) {
		kit_db_commit(d[i]);
		kit_db_close(d[i]);
	}
	return rc;
}

static void hot_rows_now__readers_share_the_line(void **state)
{
	struct labtest *t = *state;
	struct reader r[2];
	struct waiter w;
	struct hot_row_now rows[8];
	int64_t pid1, pid2 = -1, lined = 0;
	int n = -1, queued = 0, rc = -1;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	const char *share = t->engine == KIT_DB_MYSQL ? "SELECT likes FROM posts WHERE id = 1 "
	                    "LOCK IN SHARE MODE" : "SELECT likes FROM posts WHERE id = 1 FOR SHARE";

	/* configure: PostgreSQL, a writer holds row 1, two readers and a
	 * writer queue behind it; MariaDB, two readers hold row 1 and a
	 * writer queues behind them */
	struct kit_db *h1 = NULL, *h2 = NULL;
	int64_t likes;
	struct kit_db *decoy[DECOYS];
	decoys_connect(t, decoy);
	if (t->engine == KIT_DB_MYSQL) {
		h1 = labtest_connect(t);
		h2 = labtest_connect(t);
		assert_int_equal(session_id(h1, &pid1), 0);
		assert_int_equal(session_id(h2, &pid2), 0);
		assert_int_equal(kit_db_begin(h1), 0);
		assert_int_equal(kit_db_begin(h2), 0);
		assert_int_equal(kit_db_query_int(h1, share, 0, NULL, &likes), 0);
		assert_int_equal(kit_db_query_int(h2, share, 0, NULL, &likes), 0);
	}
	/* MariaDB: both holders show trx_id 0, as do four decoys' transactions
	 * in two other databases, one of them this one's name in capitals,
	 * connected before them and begun after */
	decoys_open(t, decoy);
	if (t->engine != KIT_DB_MYSQL) {
		h1 = hold(t, 1, &pid1);
		for (; queued < 2 && lined == queued; queued++) {
			r[queued] = (struct reader){ { .url = t->url, .tag = t->place, .post = 1 },
			                             t->engine };
			pthread_create(&r[queued].w.th, NULL, read_shared, &r[queued]);
			lined = wait_for_waiters(t, queued + 1);
		}
	}
	int want = queued + 1;
	w = (struct waiter){ .url = t->url, .tag = t->place, .post = 1 };
	pthread_create(&w.th, NULL, queue_up, &w);
	lined = wait_for_waiters(t, want);

	/* run, once the server shows the whole line; on MariaDB again with
	 * fresh decoys while the holder named is one of the two readers */
	if (lined == want) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 8, &n);
		for (int round = 1; round < CAPITAL_ROUNDS && t->engine == KIT_DB_MYSQL && rc == 0 &&
		     n >= 1 && (rows[0].holder_pid == pid1 || rows[0].holder_pid == pid2); round++)
			rc = capital_decoys_round(t, rows, 8, &n);
	}

	/* verify, after letting the line go */
	decoys_close(decoy);
	kit_db_commit(h1);
	if (h2 != NULL)
		kit_db_commit(h2);
	pthread_join(w.th, NULL);
	for (int i = 0; i < queued; i++)
		pthread_join(r[i].w.th, NULL);
	kit_db_close(h1);
	kit_db_close(h2);
	expect_line(lined, want, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now() with readers in the line: %s (a subquery that "
	          "expects one holder of the row's lock, where readers share it?)",
	          labtest_why(labtest_db(t)));
	lt_expect_int_hint(n, 1, "lines on row 1 (one holder's line, readers and writer in it)",
	                   "signature");
	if (n >= 1) {
		lt_expect_int_hint(rows[0].waiting, want, "backends waiting for row 1, readers and "
		                   "writer alike", "signature");
		lt_expect(rows[0].holder_pid == pid1 || rows[0].holder_pid == pid2, "holder",
		          "expected the holder's id %lld%s, got %d%s", (long long)pid1,
		          h2 != NULL ? " or the other reader's" : "", rows[0].holder_pid,
		          h2 != NULL ? " (both readers' transactions show trx_id 0, as do four "
		          "sessions of two other databases holding rows of their own there, two of "
		          "them in this database's name in capitals: an id-0 holder is only one of "
		          "this DATABASE()'s sessions, its PROCESSLIST.DB compared byte for byte, "
		          "BINARY, as the server's database names are case-sensitive and the "
		          "connection's collation is not)" : "");
	}
	lt_expect(w.rc == 0, NULL, "the writer in the line: %d", w.rc);
}

static void *keep_row(void *arg)
{
	struct keeper *k = arg;
	struct kit_db *db;
	char sql[400];
	snprintf(sql, sizeof sql, "UPDATE posts SET likes = likes + 1 WHERE id = 1 /* %s */", k->tag);
	k->rc = kit_db_open(&db, k->url);
	if (k->rc == 0)
		k->rc = session_id(db, &k->pid);
	if (k->rc == 0)
		k->rc = kit_db_begin(db);
	if (k->rc == 0)
		k->rc = kit_db_exec(db, sql, 0, NULL);
	atomic_store(&k->got, true);
	while (!atomic_load(&k->release))
		sleep_ms(10);
	if (k->rc == 0)
		k->rc = kit_db_commit(db);
	kit_db_close(db);
	return NULL;
}

static void hot_rows_now__follows_the_line_past_a_commit(void **state)
{
	struct labtest *t = *state;
	struct keeper k[K_WAITERS];
	struct hot_row_now rows[8];
	int64_t pid, lined = 0, behind = -1, page = -1, tuple = -1;
	int n = -1, queued = 0, rc = -1, first = -1;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");

	/* configure: a holder, K waiters that keep the row once they get it;
	 * then the holder commits, the first waiter takes the row, and the
	 * other K - 1 now wait for it */
	struct kit_db *h = hold(t, 1, &pid);
	while (queued < K_WAITERS && lined == queued) {
		k[queued] = (struct keeper){ .url = t->url, .tag = t->place };
		atomic_init(&k[queued].got, false);
		atomic_init(&k[queued].release, false);
		pthread_create(&k[queued].th, NULL, keep_row, &k[queued]);
		lined = wait_for_waiters(t, ++queued);
	}
	kit_db_commit(h);
	kit_db_close(h);
	for (int w = 0; w < 1000 && first < 0 && lined == K_WAITERS; w++) {
		for (int i = 0; i < K_WAITERS; i++)
			if (atomic_load(&k[i].got))
				first = i;
		sleep_ms(10);
	}

	/* run, once the server shows the rest waiting for the new holder */
	if (first >= 0)
		behind = wait_behind(t, k[first].pid, K_WAITERS - 1);
	if (behind == K_WAITERS - 1) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 8, &n);
		if (t->engine == KIT_DB_POSTGRES)
			tuple_locked(t, &page, &tuple);
	}

	/* verify, after letting everyone commit */
	for (int i = 0; i < queued; i++)
		atomic_store(&k[i].release, true);
	for (int i = 0; i < queued; i++)
		pthread_join(k[i].th, NULL);
	expect_line(lined, queued, LINE_FORMS);
	lt_expect(first >= 0, NULL, "expected a waiter to get the row once the holder committed");
	lt_expect(first < 0 || behind == K_WAITERS - 1, NULL, "expected %d, got %lld: backends "
	          "waiting for the new holder (as the server shows them)%s%s", K_WAITERS - 1,
	          (long long)behind, t->engine == KIT_DB_MYSQL ? "; " : "",
	          t->engine == KIT_DB_MYSQL ? labtest_innodb_note() : "");
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", labtest_why(labtest_db(t)));
	lt_expect_int_hint(n, 1, "lines once the row changed hands (the waiters now wait on the new "
	                   "holder's transactionid, and no tuple lock names the row)", "churn");
	lt_expect_int_hint(rows[0].waiting, K_WAITERS - 1, "backends still waiting for the row",
	                   "churn");
	lt_expect_int_hint(rows[0].holder_pid, k[first].pid, "the new holder's pid", "holder");
	/* On PostgreSQL no lock names the row now, as a rule: the line is
	 * unnamed, as contain.h says (InnoDB's lock still names the record).
	 * But a waiter that came to the new version before its holder locked
	 * it waits holding that version's tuple lock (tuple_locked()), and
	 * then that lock names the line. */
	lt_expect(t->engine != KIT_DB_POSTGRES || n != 1 || ((tuple < 0 ? !strcmp(rows[0].relation,
	          "") : !strcmp(rows[0].relation, "posts")) && rows[0].page == page &&
	          rows[0].tuple == tuple), "churn", "%s: expected relation \"%s\", page %lld, tuple "
	          "%lld, got \"%s\", %lld, %lld", tuple < 0 ? "a line no lock names" :
	          "a line one waiter's tuple lock names", tuple < 0 ? "" : "posts", (long long)page,
	          (long long)tuple, rows[0].relation, (long long)rows[0].page,
	          (long long)rows[0].tuple);
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 1 + K_WAITERS,
	              "row 1's likes after everyone committed");
}

/* Another database on the same server, for waits that are not this
 * database's: one per check run, named after the check's place (a server
 * the class shares may run several of these checks at once), and dropped
 * when the check is done. On MariaDB a database is what the test's own
 * place already is (labtest_mysql.c): the other one is that name with
 * its last '_' made an 'e', on the same server and URL, so a filter that
 * matches this database's name with LIKE (where _ is any character)
 * counts the other one's lines too. */
#define ELSEWHERE "hotrow_lab07_elsewhere_"

static void elsewhere_name(const struct labtest *t, char *name, size_t nlen)
{
	size_t pl = strlen(t->place);
	if (t->engine == KIT_DB_MYSQL) {
		/* The place with its last '_' made an 'e': a name that differs
		 * from this one only where a LIKE pattern's _ matches anything
		 * (lt_..._3_41 and lt_..._3e41). */
		snprintf(name, nlen, "%.63s", t->place);
		char *u = strrchr(name, '_');
		if (u)
			*u = 'e';
		else
			snprintf(name, nlen, "%.60s_e", t->place);
	} else
		snprintf(name, nlen, ELSEWHERE "%s", t->place + (pl > 36 ? pl - 36 : 0));
}

static void elsewhere_url(struct labtest *t, char *name, size_t nlen, char *out, size_t len)
{
	elsewhere_name(t, name, nlen);
	char sql[200], shared[sizeof t->url];
	snprintf(sql, sizeof sql, t->engine == KIT_DB_MYSQL ? "CREATE DATABASE `%s`" :
	         "CREATE DATABASE %s", name);
	kit_db_exec(labtest_db(t), sql, 0, NULL);    /* the connect below says if it failed */
	if (t->engine == KIT_DB_MYSQL) {
		/* t->url is the server's URL with the place as its database */
		const char *at = strstr(t->url, t->place);
		int pre = at ? (int)(at - t->url) : 0;
		snprintf(out, len, "%.*s%s%s", pre, t->url, name,
		         at ? at + strlen(t->place) : "");
		return;
	}
	shared_url(t, shared, sizeof shared);
	snprintf(out, len, "%s%sdbname=%s", shared, strchr(shared, '?') ? "&" : " ", name);
}

/* MariaDB: the check's database's name in capitals (lt_... made LT_...),
 * created, and a URL naming it, as elsewhere_url() does. */
static void upper_name(const struct labtest *t, char *name, size_t nlen)
{
	snprintf(name, nlen, "%.63s", t->place);
	for (char *c = name; *c; c++)
		*c = (char)toupper((unsigned char)*c);
}

/* MariaDB: t->url with the database name in place of the check's. */
static void place_url(const struct labtest *t, const char *name, char *out, size_t len)
{
	const char *at = strstr(t->url, t->place);
	int pre = at ? (int)(at - t->url) : 0;
	snprintf(out, len, "%.*s%s%s", pre, t->url, name, at ? at + strlen(t->place) : "");
}

static void upper_url(struct labtest *t, char *name, size_t nlen, char *out, size_t len)
{
	char sql[200];
	upper_name(t, name, nlen);
	snprintf(sql, sizeof sql, "CREATE DATABASE `%s`", name);
	kit_db_exec(labtest_db(t), sql, 0, NULL);    /* the connect after it says if it failed */
	place_url(t, name, out, len);
}

static int add_session(void *arg, int ncols, const char *const *v)
{
	int64_t *ids = arg;
	if (ncols > 0 && v[0] != NULL && ids[0] < 16)
		ids[1 + ids[0]++] = strtoll(v[0], NULL, 10);
	return 0;
}

static void elsewhere_drop(struct labtest *t, const char *name)
{
	char sql[200];
	if (t->engine == KIT_DB_MYSQL) {
		/* a check that stopped half-way may leave sessions there, whose
		 * locks DROP DATABASE would wait for */
		int64_t ids[17] = { 0 };
		const char *params[] = { name };
		kit_db_query(labtest_db(t), "SELECT ID FROM information_schema.PROCESSLIST"
		             " WHERE BINARY DB = BINARY $1 AND ID <> CONNECTION_ID()", 1, params,
		             add_session, ids);
		for (int i = 0; i < ids[0]; i++) {
			snprintf(sql, sizeof sql, "KILL %lld", (long long)ids[1 + i]);
			kit_db_exec(labtest_db(t), sql, 0, NULL);
		}
		snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS `%s`", name);
	} else {
		snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
	}
	kit_db_exec(labtest_db(t), sql, 0, NULL);
}

/* The check's teardown: the other database goes even when the check
 * failed half-way, and so does the check's own, if it made one. */
static int teardown_elsewhere(void **state)
{
	struct labtest *t = *state;
	if (t != NULL) {
		char name[100];
		elsewhere_name(t, name, sizeof name);
		elsewhere_drop(t, name);
		if (t->engine == KIT_DB_MYSQL) {
			upper_name(t, name, sizeof name);
			elsewhere_drop(t, name);
		}
	}
	return teardown_own_db(state);
}

/* LABTEST_PG with the teardown above. */
#define PG_ELSEWHERE(f) { #f, f, labtest_setup_pg, teardown_elsewhere, NULL }
#define MY_ELSEWHERE(f) { #f "/mysql", f, labtest_setup_mysql, teardown_elsewhere, NULL }

/* MariaDB: a database whose name has a dot and a '-' in it, the place
 * with ".e-u" after it (legal, quoted: CREATE DATABASE `shop.eu`), and
 * a URL naming it. INNODB_LOCKS shows its tables as `lt_....e-u`.`posts`:
 * the text before the first dot is not the database, nor is the text
 * after it the table. */
static void dotted_name(const struct labtest *t, char *name, size_t nlen)
{
	snprintf(name, nlen, "%.50s.e-u", t->place);
}

/* The check's teardown: back to the place's URL (the check moved t->url
 * into the dotted database), then that database goes, also when the
 * check failed half-way, and the place's after it. */
static int teardown_dotted(void **state)
{
	struct labtest *t = *state;
	if (t != NULL) {
		char name[100], url[sizeof t->url];
		dotted_name(t, name, sizeof name);
		char *at = strstr(t->url, name);
		if (at != NULL) {
			snprintf(url, sizeof url, "%.*s%s%s", (int)(at - t->url), t->url, t->place,
			         at + strlen(name));
			kit_db_close(t->db);
			t->db = NULL;
			snprintf(t->url, sizeof t->url, "%s", url);
		}
		elsewhere_drop(t, name);
	}
	return labtest_teardown(state);
}

#define MY_DOTTED(f) { #f "/mysql", f, labtest_setup_mysql, teardown_dotted, NULL }

/* MariaDB: the detector connected to a database whose name has a dot
 * and a '-' in it (dotted_name()), with two lines: row 1 of posts with
 * two waiters, row 1 of a table called posts.v2 with one. INNODB_LOCKS
 * shows them on `lt_....e-u`.`posts` and `lt_....e-u`.`posts.v2`. A
 * detector that takes the database as the text before lock_table's
 * first dot finds no lock of this database and reports nothing; one that
 * takes the table as the text after the first dot names them "e-u.posts"
 * and "e-u.posts.v2". The database is DATABASE() whole, quoted, and the
 * table whatever follows it and its dot. */
static void hot_rows_now__in_a_database_with_a_dot(void **state)
{
	struct labtest *t = *state;
	char name[100], url[sizeof t->url], sql[200];
	struct hot_row_now rows[4];
	struct waiter w[3];
	int64_t pid1 = 0, pid2 = 0;
	int n = -1, rc = -1;
	dotted_name(t, name, sizeof name);
	snprintf(sql, sizeof sql, "CREATE DATABASE `%s`", name);
	labtest_exec(t, sql);
	place_url(t, name, url, sizeof url);
	kit_db_close(t->db);
	t->db = NULL;
	snprintf(t->url, sizeof t->url, "%s", url);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "CREATE TABLE `posts.v2` (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL "
	             "DEFAULT 0); INSERT INTO posts (id) VALUES (1); INSERT INTO `posts.v2` (id) "
	             "VALUES (1)");

	/* configure: row 1 of posts held with two waiters, row 1 of posts.v2
	 * with one */
	struct kit_db *h1 = hold(t, 1, &pid1), *h2 = hold_row(t, "`posts.v2`", 1, &pid2);
	for (int i = 0; i < 3; i++) {
		w[i] = (struct waiter){ .url = t->url, .tag = t->place, .post = 1,
		                        .table = i == 2 ? "`posts.v2`" : NULL };
		lt_expect(pthread_create(&w[i].th, NULL, queue_up, &w[i]) == 0, NULL,
		          "starting a waiter");
	}
	int64_t lined = wait_for_waiters(t, 3);

	/* run, once the server shows both lines */
	if (lined == 3) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 4, &n);
	}

	/* verify, after letting the lines go */
	kit_db_commit(h1);
	kit_db_commit(h2);
	for (int i = 0; i < 3; i++)
		pthread_join(w[i].th, NULL);
	kit_db_close(h1);
	kit_db_close(h2);
	expect_line(lined, 3, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now() in database `%s`: %s", name,
	          labtest_why(labtest_db(t)));
	lt_expect(n == 2, "signature", "in a database named `%s` (a dot and a '-' in its name, "
	          "legal when quoted), with row 1 of posts held and 2 waiting and row 1 of posts.v2 "
	          "held and 1 waiting: expected 2 lines, got %d. INNODB_LOCKS shows the tables as "
	          "`%s`.`posts`: the text before lock_table's first dot is `%.*s`, not the "
	          "database. Compare what precedes the table with DATABASE() whole, quoted, and "
	          "its dot", name, n, name, (int)(strchr(name, '.') - name), name);
	static const char *const want[2] = { "posts", "posts.v2" };
	int64_t pids[2] = { pid1, pid2 };
	for (int i = 0; i < n && i < 2; i++)
		lt_expect(!strcmp(rows[i].relation, want[i]) && rows[i].holder_pid == pids[i] &&
		          rows[i].waiting == 2 - i, "signature", "line %d in database `%s`: expected "
		          "\"%s\" with %d waiting behind %lld, got \"%s\" with %d waiting behind %d. "
		          "The table is what follows `DATABASE()`. in lock_table (`%s`.`%s`), whole: "
		          "a dot in lock_table may be the database's own, or the table's", i + 1, name, want[i], 2 - i, (long long)pids[i], rows[i].relation,
		          rows[i].waiting, rows[i].holder_pid, name, want[i]);
}

/* On PostgreSQL the other database's holder and waiters each read a
 * shared catalog in their transaction before their UPDATE, as a session
 * that looks at pg_stat_activity does: they then hold locks whose
 * database is 0 (pg_database, pg_authid, pg_tablespace belong to no one
 * database). A detector that counts database 0 as this database's too
 * ("shared catalogs are everyone's") reports their line as this one's;
 * each reads another of them, so one that leaves out only the catalogs
 * it thought of reports it as well. */
static const char *const shared_reads[4] = {
	"SELECT count(*) FROM pg_stat_activity", "SELECT count(*) FROM pg_database",
	"SELECT count(*) FROM pg_roles", "SELECT count(*) FROM pg_tablespace",
};

/* Two lines in this database, row 1 with three waiters and row 2 with
 * one, and a longer line (four waiters) in another database of the same
 * server: hot_rows_now() returns the two lines of this database, the
 * longest first, and with max 1 only the longest, writing nothing past
 * out[0]. A detector that reads every database's waits reports the
 * other's line first; one that sorts the wrong way round reports row 2
 * first. On MariaDB the other database's table is called posts too, as
 * the same app's would be on a shared server: only the schema tells the
 * lines apart (a query without its DATABASE() filter reports three), and
 * its waiters are sessions of this database that name that table in full
 * (a filter on the waiting session's PROCESSLIST.DB reports three too). */
static void hot_rows_now__worst_first_this_database_only(void **state)
{
	struct labtest *t = *state;
	struct waiter w[10];
	struct hot_row_now rows[4], one[2];
	int64_t pid1, pid2, pid3;
	int n = -1, n1 = -1, nw = 0;
	char other[1200], table[300], sql[800], elsewhere[100], within[100], within_url[1200];
	char upper[100], upper_url[1200];
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (2)");
	elsewhere_url(t, elsewhere, sizeof elsewhere, other, sizeof other);
	struct kit_db *o = NULL;
	if (kit_db_open(&o, other) != 0) {
		elsewhere_drop(t, elsewhere);
		lt_fail(__FILE__, __LINE__, NULL, "connecting to a second database on the same server "
		        "(%s): %s", elsewhere, kit_db_errmsg(o));
	}
	if (t->engine == KIT_DB_MYSQL)
		snprintf(table, sizeof table, "posts");
	else
		snprintf(table, sizeof table, "public.posts_%s", t->place);
	snprintf(sql, sizeof sql, "CREATE TABLE %s (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL"
	         " DEFAULT 0)", table);
	lt_expect(kit_db_exec(o, sql, 0, NULL) == 0, NULL, "a table in %s: %s", elsewhere,
	          kit_db_errmsg(o));
	snprintf(sql, sizeof sql, "INSERT INTO %s (id) VALUES (1)", table);
	lt_expect(kit_db_exec(o, sql, 0, NULL) == 0, NULL, "a row in %s: %s", elsewhere,
	          kit_db_errmsg(o));

	/* MariaDB: a third database whose name holds this one's (this one's
	 * with an x after it), with a line of one: a filter that keeps a
	 * lock whose table merely contains DATABASE() (INSTR, LIKE '%...%')
	 * reports it. */
	/* And a fourth whose name is this one's in capitals: on a server
	 * where database names are case-sensitive (lower_case_table_names
	 * 0, Linux's default) it is another database, while the connection's
	 * collation finds the two names equal: a filter that compares them
	 * without BINARY reports its line of one. */
	struct kit_db *o2 = NULL, *h4 = NULL, *o3 = NULL, *h5 = NULL;
	within[0] = upper[0] = '\0';
	if (t->engine == KIT_DB_MYSQL) {
		snprintf(within, sizeof within, "%.62sx", t->place);
		snprintf(upper, sizeof upper, "%.63s", t->place);
		for (char *c = upper; *c; c++)
			*c = (char)toupper((unsigned char)*c);
		const char *names[2] = { within, upper };
		char *urls[2] = { within_url, upper_url };
		struct kit_db **tables[2] = { &o2, &o3 }, **holders[2] = { &h4, &h5 };
		for (int d = 0; d < 2; d++) {
			snprintf(sql, sizeof sql, "CREATE DATABASE `%s`", names[d]);
			labtest_exec(t, sql);
			const char *at = strstr(t->url, t->place);
			int pre = at ? (int)(at - t->url) : 0;
			snprintf(urls[d], sizeof within_url, "%.*s%s%s", pre, t->url, names[d],
			         at ? at + strlen(t->place) : "");
			lt_expect(kit_db_open(tables[d], urls[d]) == 0 &&
			          kit_db_exec(*tables[d], "CREATE TABLE posts (id BIGINT PRIMARY KEY, likes "
			                      "BIGINT NOT NULL DEFAULT 0); INSERT INTO posts (id) VALUES (1)",
			                      0, NULL) == 0,
			          NULL, "a table in %s: %s", names[d], kit_db_errmsg(*tables[d]));
			lt_expect(kit_db_open(holders[d], urls[d]) == 0 && kit_db_begin(*holders[d]) == 0 &&
			          kit_db_exec(*holders[d], "UPDATE posts SET likes = likes + 1 WHERE id = 1",
			                      0, NULL) == 0,
			          NULL, "holding a row in %s: %s", names[d], kit_db_errmsg(*holders[d]));
		}
	}
	char qualified2[420], qualified3[420];
	snprintf(qualified2, sizeof qualified2, "`%s`.posts", within);
	snprintf(qualified3, sizeof qualified3, "`%s`.posts", upper);

	/* configure: row 1 held with 3 waiters, row 2 with 1, and elsewhere
	 * a row held with 4 */
	struct kit_db *h1 = hold(t, 1, &pid1), *h2 = hold(t, 2, &pid2);
	struct kit_db *h3 = NULL;
	int64_t seen;
	kit_db_open(&h3, other);
	snprintf(sql, sizeof sql, "UPDATE %s SET likes = likes + 1 WHERE id = 1", table);
	assert_int_equal(session_id(h3, &pid3), 0);
	assert_int_equal(kit_db_begin(h3), 0);
	if (t->engine == KIT_DB_POSTGRES)
		assert_int_equal(kit_db_query_int(h3, shared_reads[0], 0, NULL, &seen), 0);
	assert_int_equal(kit_db_exec(h3, sql, 0, NULL), 0);
	/* On MariaDB the other database's waiters are sessions of this one
	 * that name the other's table in full: the lock's table says whose
	 * line it is, not the waiting session's database (PROCESSLIST.DB) */
	static const int posts[] = { 1, 1, 1, 2 };
	char qualified[420];
	snprintf(qualified, sizeof qualified, "`%s`.%s", elsewhere, table);
	/* All eight queue at once and the check waits once for the server to
	 * show them: no order among them matters here, and on MariaDB each
	 * wait for INNODB_TRX to show one more waiter needs a renewal of its
	 * cache, which other clients' reads (a suite run beside this one)
	 * can put off for seconds: eight waits in turn made the line take
	 * long enough on a loaded machine to fail now and then. */
	for (; nw < (t->engine == KIT_DB_MYSQL ? 10 : 8); nw++) {
		if (nw == 9)
			w[nw] = (struct waiter){ .url = t->url, .tag = t->place, .post = 1,
			                         .table = qualified3 };
		else if (nw == 8)
			w[nw] = (struct waiter){ .url = t->url, .tag = t->place, .post = 1,
			                         .table = qualified2 };
		else if (nw < 4)
			w[nw] = (struct waiter){ .url = t->url, .tag = t->place, .post = posts[nw] };
		else if (t->engine == KIT_DB_MYSQL)
			w[nw] = (struct waiter){ .url = t->url, .tag = t->place, .post = 1,
			                         .table = qualified };
		else
			w[nw] = (struct waiter){ .url = other, .tag = t->place, .post = 1, .table = table,
			                         .first = shared_reads[nw - 4] };
		pthread_create(&w[nw].th, NULL, queue_up, &w[nw]);
	}
	/* pg_stat_activity is the server's; MariaDB's count is of this
	 * database's sessions, all of them here */
	int64_t lined = wait_for_waiters(t, nw);
	memset(one, 0x5a, sizeof one);
	struct hot_row_now canary = one[1];

	/* run, once the server shows every line */
	int rc = -1, rc1 = -1;
	if (lined == nw) {
		sleep_ms(50);
		rc = hot_rows_now(labtest_db(t), rows, 4, &n);
		rc1 = hot_rows_now(labtest_db(t), one, 1, &n1);
	}

	/* verify, after letting the lines go */
	kit_db_commit(h1);
	kit_db_commit(h2);
	kit_db_commit(h3);
	if (h4)
		kit_db_commit(h4);
	if (h5)
		kit_db_commit(h5);
	for (int i = 0; i < nw; i++)
		pthread_join(w[i].th, NULL);
	kit_db_close(h1);
	kit_db_close(h2);
	kit_db_close(h3);
	kit_db_close(h4);
	kit_db_close(h5);
	kit_db_close(o3);
	kit_db_close(o);
	kit_db_close(o2);
	elsewhere_drop(t, elsewhere);
	if (within[0])
		elsewhere_drop(t, within);
	if (upper[0])
		elsewhere_drop(t, upper);
	expect_line(lined, nw, LINE_FORMS);
	lt_expect(rc == 0 && rc1 == 0, NULL, "hot_rows_now(): %s", labtest_why(labtest_db(t)));
	lt_expect_int_hint(n, 2, "lines in this database (row 1 with 3 waiters, row 2 with 1; "
	                   "another database's line of 4 is not this database's, even on "
	                   "PostgreSQL where its waiters read pg_stat_activity, pg_database, "
	                   "pg_roles and pg_tablespace first and so hold locks of database 0, the "
	                   "shared catalogs every database sees (a backend is this database's "
	                   "when it holds a lock whose database is this one's oid, not 0); nor, "
	                   "on MariaDB, "
	                   "the line of 1 in a database whose name holds this one's, nor the line of 1 "
	                   "in one whose name is this one's in capitals: the lock's table is in "
	                   "DATABASE() when its database part is that name, whole, compared byte "
	                   "for byte)",
	                   "signature");
	lt_expect(rows[0].holder_pid == pid1 && rows[0].waiting == 3, "order", "expected row 1's "
	          "line first (3 waiting, holder pid %lld), got %d waiting behind pid %lld%s",
	          (long long)pid1, rows[0].waiting, (long long)rows[0].holder_pid,
	          rows[0].holder_pid == pid3 ? ": that line is in another database (on "
	          "PostgreSQL keep the waits of backends holding a lock whose database is "
	          "current_database()'s oid: its waiters hold locks of database 0 too, the shared "
	          "catalogs they read; on MariaDB, the lock's table in "
	          "DATABASE(): its waiters are sessions of this database naming the other's table "
	          "in full, so the session's PROCESSLIST.DB does not tell)" : rows[0].holder_pid == pid2 ?
	          ": the shortest line came first (most waiters first)" : "");
	lt_expect(n < 2 || (rows[1].holder_pid == pid2 && rows[1].waiting == 1), "order",
	          "expected row 2's line second (1 waiting, holder pid %lld), got %d waiting behind "
	          "pid %lld", (long long)pid2, rows[1].waiting, (long long)rows[1].holder_pid);
	lt_expect_int_hint(n1, 1, "lines returned with max 1", "order");
	lt_expect(one[0].holder_pid == pid1, "order", "expected row 1's line as the one line "
	          "returned with max 1, got the line behind pid %lld", (long long)one[0].holder_pid);
	lt_expect(memcmp(&one[1], &canary, sizeof canary) == 0, "order", "expected nothing written "
	          "past out[0] with max 1, got out[1] changed");
}

/* The server gives a wait to the microsecond (PostgreSQL's waitstart,
 * MariaDB's PROCESSLIST.TIME_MS, a DECIMAL with three places), so its
 * milliseconds have a fraction: a whole number of them in each of n >= 6
 * lines (one chance in 10^18 by accident) is a reading cut to whole
 * milliseconds (atoi, %d, a CAST to an integer in the query) where
 * contain.h has a double. */
static void expect_waits_with_a_fraction(const struct hot_row_now *rows, int n)
{
	bool fraction = false;
	for (int i = 0; i < n; i++)
		fraction = fraction || rows[i].oldest_wait_ms != (double)(int64_t)rows[i].oldest_wait_ms;
	lt_expect(n < 6 || fraction, "oldest", "the oldest waits of all %d lines are whole "
	          "milliseconds (%.3f, %.3f, ... ms), where the server gives microseconds: is the "
	          "number read with atoi() or through an int, or cast to an integer in the query "
	          "(CAST(... AS UNSIGNED), floor())? oldest_wait_ms is a double: strtod() of the "
	          "server's own figure", n, n > 0 ? rows[0].oldest_wait_ms : 0,
	          n > 1 ? rows[1].oldest_wait_ms : 0);
}

/* The order's two keys, in a database of the check's own (so that no
 * other suite's waits on a shared server add lines): row 2's line of two
 * forms first and has the oldest wait, row 1's line of three forms after
 * it; then rows 3 to 6 get one waiter each, in the order 4, 6, 3, 5.
 * Rows 7 and 8 get two waiters each, row 7's second long after the
 * others (its oldest wait older, its waits' sum smaller than row 8's).
 * Most waiters first: row 1, then rows 2, 7, 8 by their oldest wait;
 * between the four lines of one
 * waiter, the older wait first: rows 4, 6, 3, 5, an order that follows
 * neither the rows, nor their holders' pids or transaction ids (the
 * holders took rows 1 to 6 in turn). A detector that orders by the
 * oldest wait first puts row 2 first; one that breaks no tie returns the
 * four in whatever order its GROUP BY left them, right once in 24. */
static void hot_rows_now__most_waiters_then_oldest_wait(void **state)
{
	struct labtest *t = *state;
	struct waiter w[13];
	struct hot_row_now rows[8];
	char own[1200], name[100];
	int n = -1, nw = 0;
	elsewhere_url(t, name, sizeof name, own, sizeof own);
	struct kit_db *db = NULL;
	if (kit_db_open(&db, own) != 0) {
		elsewhere_drop(t, name);
		lt_fail(__FILE__, __LINE__, NULL, "connecting to a database of this check's own "
		        "(%s): %s", name, kit_db_errmsg(db));
	}
	lt_expect(kit_db_exec(db, "CREATE TABLE public.posts (id BIGINT PRIMARY KEY, likes BIGINT "
	          "NOT NULL DEFAULT 0); INSERT INTO public.posts (id) VALUES (1), (2), (3), (4), (5), (6), "
	          "(7), (8)",
	          0, NULL) == 0, NULL, "posts in %s: %s", name, kit_db_errmsg(db));

	/* configure: the four rows held, then the lines in the order above */
	struct kit_db *h[9] = { NULL };
	int64_t pid[9] = { 0 };
	for (int r = 1; r <= 8; r++) {
		char sql[96];
		snprintf(sql, sizeof sql, "UPDATE public.posts SET likes = likes + 1 WHERE id = %d", r);
		kit_db_open(&h[r], own);
		assert_int_equal(session_id(h[r], &pid[r]), 0);
		assert_int_equal(kit_db_begin(h[r]), 0);
		assert_int_equal(kit_db_exec(h[r], sql, 0, NULL), 0);
	}
	/* rows 7 and 8 get two waiters each: row 7's first before row 8's
	 * two, its second long after them, so that row 7 has the older
	 * oldest wait and row 8 the larger sum of waits (a detector that
	 * breaks the tie by the waits' sum, or their mean, puts row 8 first) */
	static const int posts[] = { 2, 2, 7, 8, 8, 1, 1, 1, 7, 4, 6, 3, 5 };
	int64_t lined = 0;
	while (nw < 13 && lined == nw) {
		w[nw] = (struct waiter){ .url = own, .tag = t->place, .post = posts[nw],
		                         .table = "public.posts" };
		pthread_create(&w[nw].th, NULL, queue_up, &w[nw]);
		lined = wait_for_waiters(t, ++nw);
		if (nw == 8)
			sleep_ms(600);            /* row 7's second waiter comes much later */
		else if (nw <= 3 || nw == 5 || nw >= 9)
			sleep_ms(30);             /* the waits that come next are younger, clearly */
	}
	/* Then with room for 1 to 5 lines: whichever order the server groups
	 * the lines in (its hash of the holder's id, or a sort of it), a
	 * detector that keeps the first max it sends and orders those after
	 * gives the worst max only if that order is the worst-first one for
	 * every max: one chance in 6! = 720 of a hash's. */
	int rc = -1, rcs[6] = { -1, -1, -1, -1, -1, -1 }, ns[6] = { -1, -1, -1, -1, -1, -1 };
	struct hot_row_now tops[6][5];
	if (lined == 13) {
		sleep_ms(50);
		rc = hot_rows_now(db, rows, 8, &n);
		for (int k = 1; k <= 5; k++)
			rcs[k] = hot_rows_now(db, tops[k], k, &ns[k]);
	}

	/* verify, after letting the lines go */
	for (int r = 1; r <= 8; r++)
		kit_db_commit(h[r]);
	for (int i = 0; i < nw; i++)
		pthread_join(w[i].th, NULL);
	for (int r = 1; r <= 8; r++)
		kit_db_close(h[r]);
	char why[300];
	snprintf(why, sizeof why, "%s", kit_db_errmsg(db));
	kit_db_close(db);
	elsewhere_drop(t, name);
	expect_line(lined, nw, LINE_FORMS);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	lt_expect_int_hint(n, 8, "lines: row 1 with 3 waiters, rows 2, 7 and 8 with 2, rows 3 to 6 "
	                   "with 1 each", "signature");
	static const int want[] = { 1, 2, 7, 8, 4, 6, 3, 5 }, waiting[] = { 3, 2, 2, 2, 1, 1, 1, 1 };
	for (int i = 0; i < 8 && i < n; i++) {
		int r = want[i];
		const char *why_order = rows[i].holder_pid == pid[2] && i == 0 ? ": row 2's line has "
			"the oldest wait but fewer waiters; order by waiters first, then by the oldest "
			"wait" : (i >= 1 && i <= 3 && rows[i].waiting == 2) ? ": of the lines of two "
			"waiters each, the one whose oldest waiter waited longest comes first (rows 2, "
			"7, 8), not the one whose waiters waited longest in all (row 8's two waited "
			"longer together than row 7's, whose second came late)" : (i >= 4 &&
			rows[i].waiting == 1) ? ": of the lines of one waiter each, the one whose "
			"waiter waited longest comes first (rows 4, 6, 3, 5)" : "";
		lt_expect(rows[i].holder_pid == pid[r] && rows[i].waiting == waiting[i], "order",
		          "line %d: expected row %d's (%d waiting behind pid %lld), got %d waiting "
		          "behind pid %d%s", i + 1, r, waiting[i], (long long)pid[r], rows[i].waiting,
		          rows[i].holder_pid, why_order);
	}
	/* With room for k lines: the worst k of all 6, in order (not the
	 * first k the server happens to group, then ordered). */
	for (int k = 1; k <= 5; k++) {
		lt_expect(rcs[k] == 0 && ns[k] == k, "order", "hot_rows_now() with room for %d "
		          "lines: %d, %d lines", k, rcs[k], ns[k]);
		for (int i = 0; i < k && i < ns[k]; i++)
			lt_expect(tops[k][i].holder_pid == pid[want[i]] &&
			          tops[k][i].waiting == waiting[i], "order",
			          "with room for %d lines, line %d: expected row %d's (%d waiting behind "
			          "pid %lld), got %d waiting behind pid %d: the worst %d of the 8 lines, in "
			          "order (are the lines cut to max as the server sends them and ordered "
			          "after? order them all, in the query, then keep max)", k, i + 1, want[i],
			          waiting[i], (long long)pid[want[i]], tops[k][i].waiting,
			          tops[k][i].holder_pid, k);
	}
	expect_waits_with_a_fraction(rows, n < 8 ? n : 8);
}

/* A session of its own running one statement; its CONNECTION_ID() is
 * published before the statement starts. */
/* MariaDB: InnoDB's lock tables list table locks too. An INSERT ...
 * SELECT takes the table's AUTO_INC lock for the whole statement
 * (innodb_autoinc_lock_mode 0 or 1; MariaDB's default is 1), and a
 * second one waits for it: a wait in INNODB_TRX whose lock in
 * INNODB_LOCKS has lock_type TABLE and no page nor record. Beside it, row
 * 1 held with two waiters: one line, row 1's. A query that keeps every
 * waited-for lock reports a second line, the table's, with page and
 * record -1 and no holder (its holder subquery matches records only). */
static void hot_rows_now__rows_only_beside_a_table_lock(void **state)
{
	struct labtest *t = *state;
	struct waiter w[2];
	struct hot_row_now rows[4];
	int64_t pid, mode = -1, lined = 0, sleeping = 0;
	int n = -1, rc = -1;
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	labtest_exec(t, "CREATE TABLE seqs (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)");
	assert_int_equal(kit_db_query_int(labtest_db(t), "SELECT @@innodb_autoinc_lock_mode", 0,
	                                  NULL, &mode), 0);
	if (mode == 2)
		lt_skip("innodb_autoinc_lock_mode is 2 on this server: no INSERT holds the table's "
		        "AUTO_INC lock, so this check cannot stage a table lock wait (MariaDB's "
		        "default is 1)");

	/* configure: the AUTO_INC lock held by an INSERT ... SELECT whose second
	 * row sleeps, an INSERT ... SELECT waiting for it, row 1 held with two
	 * waiters */
	struct lt_statement lock = { .url = t->url, .sql = "INSERT INTO seqs (v) SELECT "
	                               "IF(seq = 2, SLEEP(30), 0) FROM seq_1_to_2" };
	struct lt_statement queued = { .url = t->url, .sql = "INSERT INTO seqs (v) SELECT 1 "
	                                 "FROM seq_1_to_2" };
	atomic_init(&lock.id, 0);
	atomic_init(&queued.id, 0);
	pthread_create(&lock.th, NULL, lt_run_statement, &lock);
	char sql[200];
	for (int i = 0; i < 1000 && atomic_load(&lock.id) == 0; i++)
		sleep_ms(10);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID = "
	         "%lld AND STATE = 'User sleep'", (long long)atomic_load(&lock.id));
	for (int i = 0; i < 1000 && sleeping == 0 && atomic_load(&lock.id) > 0; i++) {
		sleeping = labtest_int(t, sql);
		if (sleeping == 0)
			sleep_ms(10);
	}
	pthread_create(&queued.th, NULL, lt_run_statement, &queued);
	struct kit_db *h = hold(t, 1, &pid);
	int nw = 0;
	while (nw < 2) {
		w[nw] = (struct waiter){ .url = t->url, .tag = t->place, .post = 1 };
		pthread_create(&w[nw].th, NULL, queue_up, &w[nw]);
		nw++;
	}
	if (sleeping == 1)
		lined = wait_for_waiters(t, 3);

	/* run, once the server shows the three waits */
	if (lined == 3)
		rc = hot_rows_now(labtest_db(t), rows, 4, &n);

	/* verify, after letting them all go */
	char why[300];
	snprintf(why, sizeof why, "%s", labtest_why(labtest_db(t)));
	kit_db_commit(h);
	snprintf(sql, sizeof sql, "KILL QUERY %lld", (long long)atomic_load(&lock.id));
	if (atomic_load(&lock.id) > 0)
		kit_db_exec(labtest_db(t), sql, 0, NULL);
	pthread_join(lock.th, NULL);
	pthread_join(queued.th, NULL);
	for (int i = 0; i < nw; i++)
		pthread_join(w[i].th, NULL);
	kit_db_close(h);
	lt_expect(sleeping == 1, NULL, "expected the INSERT ... SELECT that holds the AUTO_INC "
	          "lock to be seen in its SLEEP, got %lld sessions (%d)", (long long)sleeping,
	          lock.rc);
	expect_line(lined, 3, "sessions waiting: two for row 1, one for the table's AUTO_INC lock");
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", why);
	lt_expect_int_hint(n, 1, "lines: row 1's (a wait for the table's AUTO_INC lock is not a "
	                   "row's line: keep INNODB_LOCKS' lock_type = 'RECORD')", "signature");
	lt_expect(rows[0].waiting == 2 && rows[0].holder_pid == pid && rows[0].page >= 0,
	          "signature", "expected row 1's line first (2 waiting behind %lld, a page), got %d "
	          "waiting behind %d, page %lld", (long long)pid, rows[0].waiting,
	          rows[0].holder_pid, (long long)rows[0].page);
}

static void hot_rows_now__quiet_when_nobody_waits(void **state)
{
	struct labtest *t = *state;
	struct hot_row_now rows[8];
	int64_t pid;
	int n = -1;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	struct kit_db *h = hold(t, 1, &pid);

	int rc = hot_rows_now(labtest_db(t), rows, 8, &n);

	kit_db_commit(h);
	kit_db_close(h);
	lt_expect(rc == 0, NULL, "hot_rows_now(): %s", labtest_why(labtest_db(t)));
	lt_expect_int_hint(n, 0, "rows with waiters when a row is held but nobody waits", "signature");
}

/* Twelve lines at once, one waiter behind each of twelve held rows: with
 * room for 16, all twelve come back, each behind its own holder; with
 * room for 11, eleven. "At most max" is the caller's limit, not one of
 * the detector's own (a LIMIT 10 "since nobody reads past the ten
 * worst" drops the rest). It is a limit at its ends too: with room for
 * 0 lines none comes back and out[0] is not written, with room for 1
 * one and out[1] untouched (a row callback that writes its line first
 * and only then stops once the out array is full writes out[0] at max 0,
 * and a caller that passes max 0 to ask for nothing, with no array at
 * all, crashes). */
#define MANY_LINES 12

static void hot_rows_now__every_line_up_to_max(void **state)
{
	struct labtest *t = *state;
	struct waiter w[MANY_LINES];
	struct hot_row_now rows[16];
	struct kit_db *h[MANY_LINES];
	int64_t pid[MANY_LINES], lined = 0;
	int n = -1, n11 = -1, queued = 0, rc = -1, rc11 = -1;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	for (int r = 1; r <= MANY_LINES; r++) {
		char sql[80];
		snprintf(sql, sizeof sql, "INSERT INTO posts (id) VALUES (%d)", r);
		labtest_exec(t, sql);
	}
	for (int r = 0; r < MANY_LINES; r++)
		h[r] = hold(t, r + 1, &pid[r]);
	while (queued < MANY_LINES && lined == queued) {
		w[queued] = (struct waiter){ .url = t->url, .tag = t->place, .post = queued + 1 };
		pthread_create(&w[queued].th, NULL, queue_up, &w[queued]);
		lined = wait_for_waiters(t, ++queued);
	}
	/* out arrays of two lines, each set to a pattern first: with room for
	 * 0 both must keep it, with room for 1 the second */
	struct hot_row_now none[2], single[2], canary;
	int n0 = -1, n1 = -1, rc0 = -1, rc1 = -1;
	memset(&canary, 0x5a, sizeof canary);
	none[0] = none[1] = single[0] = single[1] = canary;
	if (lined == MANY_LINES) {
		rc = hot_rows_now(labtest_db(t), rows, 16, &n);
		struct hot_row_now few[11];
		rc11 = hot_rows_now(labtest_db(t), few, 11, &n11);
		rc0 = hot_rows_now(labtest_db(t), none, 0, &n0);
		rc1 = hot_rows_now(labtest_db(t), single, 1, &n1);
	}
	for (int r = 0; r < MANY_LINES; r++)
		kit_db_commit(h[r]);
	for (int i = 0; i < queued; i++)
		pthread_join(w[i].th, NULL);
	for (int r = 0; r < MANY_LINES; r++)
		kit_db_close(h[r]);
	expect_line(lined, queued, LINE_FORMS);
	lt_expect(rc == 0 && rc11 == 0, NULL, "hot_rows_now(): %d and %d: %s", rc, rc11,
	          labtest_why(labtest_db(t)));
	lt_expect(n == MANY_LINES, "signature", "twelve held rows with one waiter each and room for "
	          "16 lines: hot_rows_now() gave %d lines. Every line up to max: is there a LIMIT of "
	          "the detector's own in the query, or a fixed array?", n);
	int behind = 0;
	for (int i = 0; i < n && i < 16; i++)
		for (int r = 0; r < MANY_LINES; r++)
			behind += rows[i].holder_pid == pid[r] && rows[i].waiting == 1;
	lt_expect(n != MANY_LINES || behind == MANY_LINES, "holder", "of the twelve lines, %d have "
	          "one waiter behind one of the twelve holders", behind);
	lt_expect_int_hint(n11, 11, "lines with room for 11 of the twelve", "signature");
	lt_expect(rc0 == 0 && n0 == 0 && memcmp(&none[0], &canary, sizeof canary) == 0 &&
	          memcmp(&none[1], &canary, sizeof canary) == 0, "order", "twelve lines and room "
	          "for 0 (max 0): expected 0, no line and out[0] untouched, got %d, %d line(s), "
	          "out[0] %s. contain.h: at most max lines; a caller asking for none may pass no "
	          "array at all. Does the row callback write its line first and only then check "
	          "whether out is full? Check before writing", rc0, n0,
	          memcmp(&none[0], &canary, sizeof canary) ? "written" : "untouched");
	lt_expect(rc1 == 0 && n1 == 1 && memcmp(&single[1], &canary, sizeof canary) == 0,
	          "order", "twelve lines and room for 1 (max 1): expected 0, 1 line and nothing "
	          "written past out[0], got %d, %d line(s), out[1] %s", rc1, n1,
	          memcmp(&single[1], &canary, sizeof canary) ? "written" : "untouched");
	expect_waits_with_a_fraction(rows, n < 16 ? n : 16);
}

/* The detector is called on the caller's connection, maybe inside the
 * caller's transaction (a monitoring job that reads several views in one
 * snapshot): it leaves that transaction open, with what the caller wrote
 * in it, and the session's settings as they were. A detector that runs
 * BEGIN ... COMMIT of its own commits the caller's work (on MariaDB
 * START TRANSACTION alone does); one that SETs a statement timeout "so
 * it can never hang" leaves it on the caller's session. */
/* A monitor that samples inside one long transaction of its own calls
 * the detector again and again in it. PostgreSQL reads pg_stat_activity
 * once per transaction, the first time it is used, and answers from that
 * copy until the transaction ends, where pg_locks is read anew by every
 * statement: a detector that keeps "this database's" waits by
 * pg_stat_activity.datname misses, on its second call, a waiter whose
 * session connected after the first. Called once with nobody waiting,
 * then again after a new session queued behind a holder, in the same
 * transaction: the second call sees its line. The waiter is watched from
 * a connection of its own, outside that transaction. */
static void called_twice_in_one_transaction(struct labtest *t)
{
	struct kit_db *db = labtest_db(t), *h = labtest_connect(t), *watch = labtest_connect(t);
	struct kit_db *w = NULL;
	struct hot_row_now rows[8];
	int first = -1, second = -1, n1 = -1, n2 = -1;
	int64_t holder = -1, seen = 0;
	char why[300] = "", sql[600];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
	         "'Lock' AND query LIKE '%%/* %s */%%'", t->place);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1) ON CONFLICT DO NOTHING");
	struct queued_on q = { .tag = t->place };
	bool began = kit_db_begin(db) == 0, started = false;
	if (began)
		first = hot_rows_now(db, rows, 8, &n1);
	if (first == 0 && session_id(h, &holder) == 0 && kit_db_begin(h) == 0 &&
	    kit_db_exec(h, "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0, NULL) == 0) {
		q.db = w = labtest_connect(t);
		started = pthread_create(&q.th, NULL, update_on, &q) == 0;
	}
	for (int i = 0; started && i < 1000 && seen != 1; i++) {
		if (kit_db_query_int(watch, sql, 0, NULL, &seen) != 0)
			break;
		if (seen != 1)
			sleep_ms(10);
	}
	if (seen == 1) {
		sleep_ms(50);
		second = hot_rows_now(db, rows, 8, &n2);
		snprintf(why, sizeof why, "%s", labtest_why(db));
	}
	if (began)
		kit_db_rollback(db);
	kit_db_rollback(h);
	if (started)
		pthread_join(q.th, NULL);
	kit_db_close(h);
	kit_db_close(w);
	kit_db_close(watch);
	lt_expect(began && first == 0 && n1 == 0, NULL, "hot_rows_now() inside the caller's "
	          "transaction with nobody waiting: %d, %d lines", first, n1);
	expect_line(seen, 1, LINE_FORMS);
	lt_expect(second == 0, NULL, "hot_rows_now() the second time in the caller's transaction: %s",
	          why);
	lt_expect(n2 == 1 && rows[0].waiting == 1 && rows[0].holder_pid == holder, "signature",
	          "hot_rows_now() called twice in one transaction of the caller's, the second time "
	          "after a session that connected in between queued behind session %lld: expected "
	          "1 line, 1 waiting behind %lld, got %d line%s%s: PostgreSQL reads "
	          "pg_stat_activity once per transaction and answers from that copy until it ends "
	          "(pg_locks is read anew by every statement), so a wait kept by "
	          "pg_stat_activity.datname misses a session that was not there at the first call; "
	          "keep the waits whose backend holds a lock in this database (pg_locks.database)",
	          (long long)holder, (long long)holder, n2, n2 == 1 ? "" : "s",
	          n2 == 1 ? "" : " (the waiter was not seen)");
}

static void hot_rows_now__leaves_the_caller_as_it_found_it(void **state)
{
	struct labtest *t = *state;
	struct hot_row_now rows[8];
	char before[LT_SESSION_LEN];
	int n = -1;
	contain_own_db(t);
	labtest_exec(t, CONTAIN_SCHEMA);
	struct kit_db *db = labtest_db(t);
	int64_t level = 0;   /* MariaDB: the session at REPEATABLE READ, asked before the call */
	if (t->engine == KIT_DB_MYSQL) {
		labtest_exec(t, "INSERT INTO posts (id, likes) VALUES (77, 0)");
		kit_db_query_int(db, "SELECT @@tx_isolation = 'REPEATABLE-READ'", 0, NULL, &level);
	}
	lt_session(t, db, before, sizeof before);

	int rc = hot_rows_now(db, rows, 8, &n);
	lt_expect(rc == 0 && n == 0, NULL, "hot_rows_now() with nobody waiting: %d, %d lines: %s",
	          rc, n, labtest_why(db));
	lt_session_unchanged(t, db, before, "hot_rows_now()", "signature");
	if (t->engine == KIT_DB_MYSQL) {
		/* a SET TRANSACTION without SESSION sets the next transaction
		 * only, which no session variable shows: the transaction the
		 * caller begins next must run at the session's level
		 * (REPEATABLE READ here). Seen in what that transaction reads,
		 * not in INNODB_TRX, a cache that other clients' reads keep
		 * stale: post 77 changed by another connection and not
		 * committed is not seen (READ UNCOMMITTED sees it), and once
		 * committed, still not seen by the transaction that had read
		 * the post before (READ COMMITTED sees it). Nothing runs on the
		 * caller's connection in between: any statement of its own
		 * would be that next transaction. */
		int64_t first = -1, second = -1;
		struct kit_db *other = labtest_connect(t);
		if (level == 1 && kit_db_begin(other) == 0 &&
		    kit_db_exec(other, "UPDATE posts SET likes = 1 WHERE id = 77", 0, NULL) == 0 &&
		    kit_db_begin(db) == 0) {
			kit_db_query_int(db, "SELECT likes FROM posts WHERE id = 77", 0, NULL, &first);
			if (kit_db_commit(other) == 0 &&
			    kit_db_exec(other, "UPDATE posts SET likes = 2 WHERE id = 77", 0, NULL) == 0)
				kit_db_query_int(db, "SELECT likes FROM posts WHERE id = 77", 0, NULL, &second);
			kit_db_rollback(db);
		}
		kit_db_close(other);
		labtest_exec(t, "DELETE FROM posts WHERE id = 77");
		lt_expect(level != 1 || (first == 0 && second == 0), "signature", "the transaction the "
		          "caller began after hot_rows_now() read post 77 as %lld while another "
		          "connection's change to 1 was not committed, then as %lld after that change "
		          "and another to 2 were: expected 0 and 0 (REPEATABLE READ, the session's "
		          "level); %s. A SET TRANSACTION of the detector's own (without SESSION) sets the "
		          "caller's next transaction, which no session variable shows. Send the query "
		          "alone", (long long)first, (long long)second,
		          first == 1 ? "it saw an uncommitted change: READ UNCOMMITTED"
		          : second == 2 ? "it saw a change committed after its first read: READ COMMITTED"
		          : "one of the reads failed");
	}

	assert_int_equal(kit_db_begin(db), 0);
	assert_int_equal(kit_db_exec(db, "INSERT INTO posts (id) VALUES (9)", 0, NULL), 0);
	rc = hot_rows_now(db, rows, 8, &n);
	int64_t open = lt_in_transaction(t, db);
	char during[LT_SESSION_LEN];
	lt_session(t, db, during, sizeof during);
	kit_db_rollback(db);
	int64_t nine = labtest_int(t, "SELECT count(*) FROM posts WHERE id = 9");
	lt_expect(rc == 0, NULL, "hot_rows_now() inside the caller's transaction: %d: %s", rc,
	          labtest_why(db));
	lt_expect(open == 1 && nine == 0, "signature", "hot_rows_now(), called inside a transaction "
	          "of the caller's that had inserted post 9, %s, and post 9 %s after the caller's "
	          "ROLLBACK: the detector ended the caller's transaction (a BEGIN and COMMIT of its "
	          "own commit the caller's work; on MariaDB a START TRANSACTION alone commits it). "
	          "Run the query alone, in whatever transaction the caller has", open == 1 ?
	          "left it open" : "left no transaction open", nine ? "was still there" : "was gone");
	lt_expect(!strcmp(before, during), "signature", "hot_rows_now(), called inside a "
	          "transaction of the caller's, changed the session's settings for the rest of that "
	          "transaction, from %s to %s: a SET LOCAL or set_config(..., true) of the detector's "
	          "own (a statement_timeout, say) lasts until the caller's COMMIT and applies to the "
	          "caller's statements. Send the query alone", before, during);
	lt_session_unchanged(t, db, before, "hot_rows_now() inside the caller's transaction and its "
	                     "ROLLBACK", "signature");

	/* A caller whose session is not at the defaults: a statement_timeout
	 * and a work_mem of its own on PostgreSQL, a max_statement_time and
	 * READ COMMITTED on MariaDB. A detector that sets one of them and
	 * puts back the server's default (RESET, or the default's value)
	 * changes what this caller had. */
	lt_session_own_values(t, db);
	if (t->engine == KIT_DB_MYSQL)
		labtest_exec(t, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	char own[LT_SESSION_LEN];
	lt_session(t, db, own, sizeof own);
	rc = hot_rows_now(db, rows, 8, &n);
	lt_expect(rc == 0 && n == 0, NULL, "hot_rows_now() with nobody waiting, on a session with "
	          "settings of its own: %d, %d lines: %s", rc, n, labtest_why(db));
	lt_session_unchanged(t, db, own, "hot_rows_now() on a session with settings of its own "
	                     "(what it set and put back must be what the caller had, not the "
	                     "server's default)", "signature");
	if (t->engine == KIT_DB_MYSQL)
		labtest_exec(t, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
	if (t->engine == KIT_DB_POSTGRES)
		called_twice_in_one_transaction(t);
	labtest_expect_fresh(t, "hot_rows_now__leaves_the_caller_as_it_found_it", "signature",
	                     LT_KEPT_SETTING);
}

/* ---- the like endpoint gives up on a held row ---- */

struct like_call {
	struct contain_app *app;
	int rc;
	double ms;
	atomic_bool done;
	pthread_t th;
};

static void *like_once(void *arg)
{
	struct like_call *c = arg;
	int64_t t0 = kit_load_now_ns();
	c->rc = contain_like(c->app, 1);
	c->ms = (double)(kit_load_now_ns() - t0) / 1e6;
	atomic_store(&c->done, true);
	return NULL;
}

/* c's like of row 1, in its own thread, while h holds the row: it has
 * 3 s to end by itself (a lock timeout gives up); one that waits for good
 * is let go then, by committing h. */
static void like_beside_holder(struct like_call *c, struct kit_db *h)
{
	atomic_init(&c->done, false);
	pthread_create(&c->th, NULL, like_once, c);
	for (int w = 0; w < 60 && !atomic_load(&c->done); w++)
		sleep_ms(50);
	if (!atomic_load(&c->done))
		kit_db_commit(h);
	pthread_join(c->th, NULL);
}

static void contain_like__gives_up_on_a_held_row(void **state)
{
	struct labtest *t = *state;
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 2, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 5000, .lock_timeout_ms = 100,
	                              .contain = true };
	char err[512];
	int64_t pid;
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (2)");
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	lt_expect_int(contain_like(&app, 1), 0, "a like of a free row");
	struct kit_db *h = hold(t, 1, &pid);

	/* Two likes in a row, so the second checks out the connection the
	 * first used (the pool has one): what the first left on the session
	 * has been reset by then. A like that waits for good is let go after
	 * 3 s (past the 3 s it must give up within), by releasing the row. */
	/* The third first waits for its connection, longer than the lock
	 * timeout (the test keeps the pool's one connection 500 ms after the
	 * like set off): the row's wait is still lock_timeout_ms (a like that
	 * takes its time in the pool off the lock timeout, "the request's
	 * budget", comes to a timeout of 0: for PostgreSQL, wait for ever). */
	struct like_call c[3];
	for (int i = 0; i < 3; i++) {
		c[i] = (struct like_call){ .app = &app };
		atomic_init(&c[i].done, false);
		struct kit_db *kept = NULL;
		if (i == 2)
			lt_expect(kit_pool_get(app.likes, &kept) == 0, NULL, "the test could not take "
			          "the likes' pool's one connection");
		pthread_create(&c[i].th, NULL, like_once, &c[i]);
		if (kept) {
			sleep_ms(500);
			kit_pool_put(app.likes, kept);
		}
		for (int w = 0; w < 60 && !atomic_load(&c[i].done); w++)
			sleep_ms(50);
		if (!atomic_load(&c[i].done))
			kit_db_commit(h);
		pthread_join(c[i].th, NULL);
	}
	/* Eight more likes of the held row give up, then a like of post 2,
	 * whose row nobody holds, is counted: KIT_DB_BUSY says this like's
	 * row stayed locked, not that others did (a breaker of the process's
	 * own that refuses every post after a run of busy likes reports
	 * locks that never were). */
	int busy = 0;
	for (int i = 0; i < 8; i++) {
		struct like_call more = { .app = &app };
		like_beside_holder(&more, h);
		busy += more.rc == KIT_DB_BUSY;
	}
	int cold = contain_like(&app, 2);
	kit_db_commit(h);
	kit_db_close(h);
	contain_close(&app);
	lt_expect(busy < 8 || cold == 0, "lock-timeout", "after 11 likes of the held post 1 gave up "
	          "with KIT_DB_BUSY, a like of post 2, whose row nobody held, returned %d: expected 0, "
	          "counted. KIT_DB_BUSY means this like's row stayed locked past the lock timeout "
	          "(contain.h); a breaker shared by every post turns one hot row into refusals of "
	          "rows nobody holds", cold);
	for (int i = 0; i < 3; i++) {
		lt_expect(c[i].rc == KIT_DB_BUSY, i == 1 && c[i].rc == KIT_DB_ERR ? "rollback" :
		          "lock-timeout", "expected the %s like of a held "
		          "row%s to give up with KIT_DB_BUSY (%d) after the lock timeout, got %d%s%s",
		          i == 0 ? "first" : i == 1 ? "second" : "third", i == 0 ? "" : i == 1 ?
		          ", on a connection the pool has reset," : ", which first waited 500 ms for "
		          "its connection,", KIT_DB_BUSY, c[i].rc, i == 2 && c[i].rc == 0 ? " (0: it "
		          "waited for the row until the test let it go after 3 s: is the time spent "
		          "in the pool taken off the lock timeout? 100 - 500 ms left, a lock_timeout "
		          "of 0 waits for ever)" : "", c[i].rc == 0 && i != 2 ? " (0: it waited "
		          "until the test let the row go after 3 s, and then succeeded)" :
		          i == 1 && c[i].rc == KIT_DB_ERR ? " (KIT_DB_ERR: the connection could not "
		          "even be reset: the first like returned it with its failed transaction "
		          "still open; see the hint on rollback)" : "");
		lt_expect(c[i].ms < (i == 2 ? 3500 : 3000), "lock-timeout", "expected like %d to "
		          "give up within 3 s of getting its connection (lock timeout 100 ms), got "
		          "%.0f ms%s", i + 1, c[i].ms, i == 2 ? " (500 of them waiting for the "
		          "connection)" : "");
	}
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 2,
	              "likes: the free one and the holder's, none of the timed-out ones");
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 2"), cold == 0 ? 1 : 0,
	              "likes of post 2");
}

/* The like's lock timeout must end with the like's transaction. A plain
 * SET (or kit_db_set_lock_timeout()) inside it is committed with it and
 * stays on the session: this kit's pool wipes it on the next checkout,
 * but a transaction-mode pooler runs no reset, and the next client's
 * transaction on that server connection inherits it. So the connection
 * the like used is read here directly, behind the pool's back (no
 * checkout, no reset): its lock_timeout must be what the session had
 * again. The app's URL gives its sessions a lock_timeout of 7 s, as a
 * role's or a database's default would (ALTER ROLE ... SET lock_timeout):
 * the pool's reset goes back to it, and so must the like; a like that
 * puts back 0 (or RESET's idea of a default) rather than ending its own
 * setting with its transaction leaves the session with another. */
#define SESSION_LOCK_TIMEOUT "7s"

/* 300 ms before each statement a like sends inside its transaction. */
static void nap_between_statements(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)arg, (void)t_ns;
	if (ev == KIT_DB_TX_STMT_START || (ev == KIT_DB_STMT_START && (lt_sql_is(sql, "UPDATE") ||
	    lt_sql_is(sql, "SELECT"))) || ev == KIT_DB_TX_COMMIT)
		util_sleep_ns(300 * 1000000LL);
}

static void contain_like__timeout_ends_with_the_like(void **state)
{
	struct labtest *t = *state;
	struct contain_app app;
	char url[sizeof t->url + 64];
	size_t ul = strlen(t->url);
	const char *had = SESSION_LOCK_TIMEOUT;
	if (ul > 6 && strcmp(t->url + ul - 6, "%3Doff") == 0)        /* options=... last */
		snprintf(url, sizeof url, "%s%%20-clock_timeout%%3D" SESSION_LOCK_TIMEOUT, t->url);
	else if (ul > 1 && t->url[ul - 1] == '\'' && strstr(t->url, "options='") != NULL)
		snprintf(url, sizeof url, "%.*s -clock_timeout=" SESSION_LOCK_TIMEOUT "'",
		         (int)(ul - 1), t->url);
	else {
		snprintf(url, sizeof url, "%s", t->url);
		had = "0";
	}
	struct contain_config cfg = { .url = url, .pool_size = 2, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 5000, .lock_timeout_ms = 100,
	                              .contain = true };
	char err[512], differs[120];
	snprintf(differs, sizeof differs, "SELECT (current_setting('lock_timeout') <> '%s')::int",
	         had);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	/* The likes' pool has one connection: the one every like uses. */
	struct kit_db *db = NULL;
	assert_int_equal(kit_pool_get(app.likes, &db), 0);
	kit_pool_put(app.likes, db);
	int64_t before = -1;
	kit_db_query_int(db, differs, 0, NULL, &before);
	/* and every other setting the session has from its client or itself
	 * (tests/harness/session.h): a like that tags its session with a
	 * plain SET application_name, say, leaves that to the next client */
	char s_before[LT_SESSION_LEN], s_after[LT_SESSION_LEN], s_busy[LT_SESSION_LEN];
	lt_session(t, db, s_before, sizeof s_before);
	int rc = contain_like(&app, 1);
	int64_t left = -1;
	int qrc = kit_db_query_int(db, differs, 0, NULL, &left);
	lt_session(t, db, s_after, sizeof s_after);
	/* The error path too: a like that gives up on a held row. */
	int64_t pid, left_busy = -1;
	struct kit_db *h = hold(t, 1, &pid);
	struct like_call c = { .app = &app };
	like_beside_holder(&c, h);
	int busy = c.rc;
	int brc = kit_db_query_int(db, differs, 0, NULL, &left_busy);
	char why[300];
	snprintf(why, sizeof why, "%s", kit_db_errmsg(db));
	s_busy[0] = '\0';
	if (brc == 0)
		lt_session(t, db, s_busy, sizeof s_busy);
	kit_db_commit(h);
	kit_db_close(h);
	/* A like whose thread is set back between its statements (a loaded
	 * app server, a page fault, a GC pause): 300 ms idle inside its
	 * transaction, three lock timeouts. It still counts: the lock timeout
	 * bounds the wait for the row, not the app's own pace, and a setting
	 * that makes the server end an idle transaction (SET LOCAL
	 * idle_in_transaction_session_timeout) kills the pooled session. */
	int64_t likes0 = labtest_int(t, "SELECT likes FROM posts WHERE id = 1");
	kit_db_set_hook(db, nap_between_statements, NULL);
	int slow = contain_like(&app, 1);
	kit_db_set_hook(db, NULL, NULL);
	int64_t slow_added = labtest_int(t, "SELECT likes FROM posts WHERE id = 1") - likes0;
	contain_close(&app);
	lt_expect(slow == 0 && slow_added == 1, "lock-timeout", "a like of a free row whose thread "
	          "paused 300 ms before each of its statements after BEGIN (idle in its "
	          "transaction; lock timeout 100 ms) returned %d and added %lld: a pause of the app "
	          "is no lock wait. Does the like set something besides lock_timeout that ends an "
	          "idle transaction (idle_in_transaction_session_timeout)? The server then ends the "
	          "session, and the pool holds a dead connection. Or was this connection put back "
	          "by the like before it, refused as busy, with its failed transaction still open "
	          "(no ROLLBACK on that path)? Every later like on it then fails at once",
	          slow, (long long)slow_added);
	lt_expect_int(rc, 0, "a like of a free row");
	lt_expect_int(qrc, 0, "reading lock_timeout on the like's connection");
	lt_expect_int(before, 0, "a session of the app's URL with another lock_timeout than "
	              "the one its options give");
	lt_expect(left == 0, "lock-timeout", "after the like committed, its connection's "
	          "lock_timeout is no longer the session's own %s: it was set with SET (or "
	          "kit_db_set_lock_timeout()), not SET LOCAL, and then left or put back to a value "
	          "of the like's choosing, so the next transaction on that connection inherits "
	          "it wherever no reset runs (a transaction-mode pooler)", had);
	lt_expect_int_hint(busy, KIT_DB_BUSY, "a like of a held row (lock timeout 100 ms)",
	                   "lock-timeout");
	lt_expect(brc == 0, "rollback", "after a like gave up on a held row, its connection could "
	          "not run a query (%s): the like returned with its failed transaction still "
	          "open; roll it back before the connection goes back to the pool", why);
	lt_expect(brc != 0 || left_busy == 0, "lock-timeout", "after a like gave up on a held row, "
	          "its connection's lock_timeout is no longer the session's own %s: it was put "
	          "back on the success path only (SET LOCAL ends with the transaction on every "
	          "path)", had);
	lt_expect(strcmp(s_after, s_before) == 0, "lock-timeout", "after a like that committed, "
	          "its connection's session settings (read behind the pool's back) changed from\n"
	          "  %s\nto\n  %s\na setting made with a plain SET stays on the session for "
	          "whoever uses the connection next wherever no reset runs (a transaction-mode "
	          "pooler): what a like wants for itself it sets with SET LOCAL, inside its "
	          "transaction", s_before, s_after);
	lt_expect(brc != 0 || strcmp(s_busy, s_before) == 0, "lock-timeout", "after a like that "
	          "gave up on a held row, its connection's session settings changed from\n  %s\n"
	          "to\n  %s\n(SET LOCAL ends with the transaction on every path)", s_before, s_busy);
}

/* The naive app (contain false) is the baseline the bulkhead is measured
 * against: one pool and no lock timeout (contain.h), so its like waits
 * for a held row as long as it is held. Judged on the server's clock: the
 * row is let go once the server shows the like waiting for ten times the
 * configured lock timeout (or the like has returned), so a like that gave
 * up after 50 ms has returned long before. */
/* A like of a row held until the server shows it has waited 1.5 s (as
 * pg_locks.waitstart counts), then let go: the naive app (no lock
 * timeout) and a contained one whose lock timeout is ten seconds both
 * wait and then count their like. A like that gives up at once (NOWAIT, a
 * lock timeout of its own, or the config's read in the wrong unit) has
 * answered KIT_DB_BUSY before. 10,000 is the smallest timeout of five
 * digits: a SET LOCAL printed into a buffer with room for four sends
 * 1000, a second, and gives up before 1.5 s. */
static void like_waits_for_the_row(struct labtest *t, bool contain)
{
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 2, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 5000,
	                              .lock_timeout_ms = contain ? 10000 : 50, .contain = contain };
	const int wait_ms = 1500;
	char err[512], sql[400];
	int64_t pid, waited = 0;
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct kit_db *h = hold(t, 1, &pid);
	snprintf(sql, sizeof sql, "SELECT coalesce(max(extract(epoch FROM clock_timestamp() - "
	         "l.waitstart) * 1000), 0)::bigint FROM pg_locks l WHERE NOT l.granted AND l.pid IN "
	         "(SELECT a.pid FROM pg_stat_activity a WHERE %lld = ANY(pg_blocking_pids(a.pid)))",
	         (long long)pid);
	struct like_call c = { .app = &app };
	atomic_init(&c.done, false);
	pthread_create(&c.th, NULL, like_once, &c);
	for (int i = 0; i < 3000 && !atomic_load(&c.done) && waited < wait_ms; i++) {
		sleep_ms(10);
		waited = labtest_int(t, sql);
	}
	kit_db_commit(h);
	pthread_join(c.th, NULL);
	kit_db_close(h);
	contain_close(&app);
	if (contain)
		lt_expect(c.rc == 0, "lock-timeout", "expected a contained like with a lock timeout "
		          "of %d ms, of a row held until the server showed it waiting %d ms, to wait "
		          "and then succeed, got %d after %.0f ms%s", cfg.lock_timeout_ms, wait_ms,
		          c.rc, c.ms, c.rc == KIT_DB_BUSY ? " (KIT_DB_BUSY: it gave up long before its "
		          "lock timeout; is the row locked with NOWAIT, is lock_timeout set from "
		          "something other than cfg.lock_timeout_ms, in milliseconds, or is the SET "
		          "LOCAL printed into a buffer too short for five digits?)" : "");
	else
		lt_expect(c.rc == 0, "lock-timeout", "expected the naive app's like (contain false, "
		          "lock_timeout_ms %d) of a row held until the server showed it waiting %d ms "
		          "to wait and then succeed, got %d%s", cfg.lock_timeout_ms, wait_ms, c.rc,
		          c.rc == KIT_DB_BUSY ? " (KIT_DB_BUSY: it gave up on the lock timeout; the "
		          "naive app has none, set it only when cfg.contain is true)" : "");
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 2,
	              "likes: the holder's and the like's");
}

/* Reads, on the like's own connection, the lock_timeout in force as its
 * UPDATE of posts starts (pg_settings gives milliseconds): what the
 * like set inside its transaction, exactly. */
struct timeout_probe {
	struct kit_db *db;
	int64_t ms;          /* -1: no UPDATE seen */
	atomic_bool inside;
};

static int setting_ms(void *arg, int ncols, const char *const *v)
{
	if (ncols >= 1 && v[0] != NULL)
		*(int64_t *)arg = strtoll(v[0], NULL, 10);
	return 0;
}

static void probe_timeout(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct timeout_probe *p = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START || !lt_sql_is(sql, "UPDATE") || !lt_sql_names(sql, "posts") ||
	    atomic_exchange(&p->inside, true))
		return;
	p->ms = -2;
	kit_db_query(p->db, "SELECT setting FROM pg_settings WHERE name = 'lock_timeout'", 0, NULL,
	             setting_ms, &p->ms);
	atomic_store(&p->inside, false);
}

/* contain.h: lock_timeout_ms is how long the like's UPDATE may wait for
 * the row. The like's own connection is asked, as its UPDATE starts, what
 * lock_timeout is in force: exactly cfg.lock_timeout_ms, from 20 ms to
 * INT_MAX (PostgreSQL's own ceiling), not rounded to whole seconds ("lock
 * waits are configured in seconds", as MySQL's innodb_lock_wait_timeout
 * is) nor to the six significant digits of a %g (1,234,567 ms printed as
 * '1234.57s' is 1,234,570 ms on the server), raised to a floor or capped
 * at a ceiling of the app's own. Another app open beside it
 * with another lock timeout changes nothing: the setting is the app's
 * (cfg), not the process's (a static that the last contain_open wrote). */
static void contain_like__lock_timeout_is_the_configured_one(void **state)
{
	struct labtest *t = *state;
	static const int ms[] = { 20, 50, 150, 999, 1001, 2500, 7000, 10000, 60000, 3600000,
	                          1234567, 123456789, INT_MAX };
	char err[512];
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		struct contain_app app, other;
		struct contain_config cfg = { .url = t->url, .pool_size = 1, .counter_pool_size = 1,
		                              .acquire_timeout_ms = 5000, .lock_timeout_ms = ms[i],
		                              .contain = true };
		struct contain_config cfg2 = cfg;
		cfg2.lock_timeout_ms = ms[i] == 20 ? 60000 : 20;
		lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
		lt_expect(contain_open(&other, &cfg2, err, sizeof err) == 0, NULL, "contain_open() of "
		          "a second app: %s", err);
		struct timeout_probe p = { .ms = -1 };
		atomic_init(&p.inside, false);
		assert_int_equal(kit_pool_get(app.likes, &p.db), 0);
		kit_db_set_hook(p.db, probe_timeout, &p);
		kit_pool_put(app.likes, p.db);
		int rc = contain_like(&app, 1);
		kit_db_set_hook(p.db, NULL, NULL);
		contain_close(&other);
		contain_close(&app);
		lt_expect(rc == 0, NULL, "a contained like of a free row (lock timeout %d ms): %d%s",
		          ms[i], rc, rc != 0 && ms[i] > 2147483 ? ": past 2,147,483 ms the lock "
		          "timeout in microseconds no longer fits an int; is it computed as "
		          "lock_timeout_ms * 1000 in an int?" : "");
		lt_expect(p.ms >= 0, "lock-timeout", "a contained like (lock timeout %d ms) sent no "
		          "UPDATE of posts on the likes' pool's connection, or its lock_timeout could "
		          "not be read there (%lld)", ms[i], (long long)p.ms);
		lt_expect(p.ms == ms[i], "lock-timeout", "a contained like with cfg.lock_timeout_ms = "
		          "%d (another app open beside it with %d) sent its UPDATE with lock_timeout "
		          "%lld ms in force on its connection: expected exactly %d. %s", ms[i],
		          cfg2.lock_timeout_ms, (long long)p.ms, ms[i],
		          p.ms == cfg2.lock_timeout_ms ? "That is the other app's: is the lock timeout "
		          "kept where every app shares it (a static written by contain_open)? Read it "
		          "from app->cfg" : p.ms > 0 && p.ms % 1000 == 0 && ms[i] % 1000 != 0 ? "Whole "
		          "seconds: is it sent in seconds (PostgreSQL's lock_timeout is in milliseconds "
		          "when no unit is given)?" : p.ms > 0 && llabs(p.ms - ms[i]) * 100000LL <= ms[i] ?
		          "Rounded to six significant digits: is it printed with %g (of seconds, or of "
		          "milliseconds)? %g keeps six digits; print the int itself, with %d" :
		          p.ms > ms[i] ? "Longer than asked: is it raised to "
		          "a floor of the app's own?" : "Shorter than asked: is it capped, or cut?");
		labtest_exec(t, "UPDATE posts SET likes = 0");
	}
}

/* The first statement a like sent that sets a timeout other than
 * lock_timeout (a statement_timeout "of a hundred lock timeouts", an
 * idle_in_transaction_session_timeout): any identifier ending in timeout,
 * or max_statement_time, that is not lock_timeout. */
struct other_timeout {
	char first[160];
	char durability[160];    /* the first that turns COMMIT's wait for the disk down */
};

static bool names_other_timeout(const char *sql)
{
	for (const char *p = sql; *p; p++) {
		if (p != sql && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		size_t n = 0;
		while (isalnum((unsigned char)p[n]) || p[n] == '_')
			n++;
		if (n == 0)
			continue;
		bool timeout = n >= 7 && strncasecmp(p + n - 7, "timeout", 7) == 0;
		bool max_time = n == 18 && strncasecmp(p, "max_statement_time", 18) == 0;
		if ((timeout || max_time) && !(n == 12 && strncasecmp(p, "lock_timeout", 12) == 0))
			return true;
		p += n - 1;
	}
	return false;
}

static void watch_other_timeout(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct other_timeout *o = arg;
	(void)t_ns;
	if ((ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START) && sql && !o->first[0] &&
	    lt_sql_sets_timeout(sql) && names_other_timeout(sql))
		snprintf(o->first, sizeof o->first, "%s", sql);
	if ((ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START) && sql && !o->durability[0] &&
	    lt_sql_sets_durability(sql))
		snprintf(o->durability, sizeof o->durability, "%s", sql);
}

/* contain.h: the lock timeout "bounds that wait only". An UPDATE slow for
 * another reason (here a trigger that sleeps 1.5 s, thirty times the 50
 * ms lock timeout; in life a cold page, a slow disk) waits for no lock,
 * and the like must count. A like that also bounds the whole statement
 * (SET LOCAL statement_timeout, "a few lock timeouts") cancels it; one
 * whose bound is longer than this trigger's sleep ("a hundred lock
 * timeouts") is seen by what it sends: no setting of a timeout but
 * lock_timeout. */
static void contain_like__only_the_row_wait_is_bounded(void **state)
{
	struct labtest *t = *state;
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 2, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 1000, .lock_timeout_ms = 50,
	                              .contain = true };
	char err[512];
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	labtest_exec(t, "CREATE FUNCTION slow_like() RETURNS trigger LANGUAGE plpgsql AS "
	             "$$ BEGIN PERFORM pg_sleep(1.5); RETURN NEW; END $$");
	labtest_exec(t, "CREATE TRIGGER slow_like BEFORE UPDATE ON posts FOR EACH ROW "
	             "EXECUTE FUNCTION slow_like()");
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct other_timeout o = { "", "" };
	struct kit_db *c = NULL;
	if (kit_pool_get(app.likes, &c) == 0) {
		kit_db_set_hook(c, watch_other_timeout, &o);
		kit_pool_put(app.likes, c);
	}
	int64_t t0 = kit_load_now_ns();
	int rc = contain_like(&app, 1);
	double ms = (double)(kit_load_now_ns() - t0) / 1e6;
	if (c != NULL && kit_pool_get(app.likes, &c) == 0) {
		kit_db_set_hook(c, NULL, NULL);
		kit_pool_put(app.likes, c);
	}
	contain_close(&app);
	int64_t likes = labtest_int(t, "SELECT likes FROM posts WHERE id = 1");
	lt_expect(rc == 0 && likes == 1, "lock-timeout", "a contained like (lock timeout 50 ms) of a row "
	          "nobody holds, whose UPDATE took 1.5 s for another reason (a trigger that sleeps), "
	          "returned %d after %.0f ms with %lld likes counted; expected 0 and 1 like: no lock "
	          "was waited for, and the lock timeout bounds the wait for the row only "
	          "(contain.h).%s", rc, ms, (long long)likes, rc != 0 ? " Is the statement bounded "
	          "too (a statement_timeout)? That cancels a like that was never stuck behind the "
	          "row" : "");
	lt_expect(o.first[0] == 0, "lock-timeout", "a contained like sent \"%s\": a timeout "
	          "other than lock_timeout, which bounds what is not the wait for the row (an "
	          "UPDATE slow for another reason, a trigger, a cold page, is cancelled however long "
	          "the bound). contain.h: the lock timeout bounds that wait only", o.first);
	lt_expect(o.durability[0] == 0, "lock-timeout", "a contained like sent \"%s\": it no "
	          "longer waits at COMMIT for the disk, and a like it answered 0 for can vanish "
	          "in a crash. contain.h: a like that returned 0 is on disk", o.durability);
}

/* An app connects as a role of its own, no superuser. A contained like
 * that sets a parameter only a superuser may set (deadlock_timeout,
 * log_lock_waits: "see the deadlock before we give up") works where the
 * checks connect as the server's owner and fails with "permission denied"
 * in every app. So here the like runs as such a role: made when the
 * check's own user is a superuser (a solo server; it stays, for the next
 * run), the check's own user otherwise (a class server, where it is a
 * student's role already). The like of a free row counts; the like of a
 * row held past its lock timeout is KIT_DB_BUSY. */
static void contain_like__works_as_an_app_role(void **state)
{
	struct labtest *t = *state;
	char url[1200], sql[800], err[512];
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	snprintf(url, sizeof url, "%s", t->url);
	if (labtest_int(t, "SELECT count(*) FROM pg_roles WHERE rolname = current_user"
	                   " AND rolsuper") > 0) {
		labtest_exec(t, "DO $$BEGIN CREATE ROLE hotrow_app LOGIN NOSUPERUSER;"
		                " EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END$$");
		snprintf(sql, sizeof sql, "GRANT USAGE ON SCHEMA %s TO hotrow_app;"
		         " GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %s TO hotrow_app",
		         t->place, t->place);
		labtest_exec(t, sql);
		/* the same URL with user=hotrow_app */
		char *user = strstr(t->url, "user=");
		if (user) {
			const char *rest = user + strcspn(user, "&");
			snprintf(url, sizeof url, "%.*suser=hotrow_app%s", (int)(user - t->url), t->url,
			         rest);
		} else {
			snprintf(url, sizeof url, "%s%suser=hotrow_app", t->url,
			         strchr(t->url, '?') ? "&" : "?");
		}
	}
	struct contain_app app;
	struct contain_config cfg = { .url = url, .pool_size = 2, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 5000, .lock_timeout_ms = 200,
	                              .contain = true };
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open() as a role "
	          "that is no superuser: %s", err);
	int rc = contain_like(&app, 1);
	char why[300] = "";
	if (rc != 0) {
		struct kit_db *c = NULL;
		if (kit_pool_get(app.likes, &c) == 0) {
			snprintf(why, sizeof why, "%s", kit_db_errmsg(c));
			kit_pool_put(app.likes, c);
		}
	}
	int64_t pid, counted = labtest_int(t, "SELECT likes FROM posts WHERE id = 1");
	struct kit_db *h = hold(t, 1, &pid);
	/* in a thread of its own: a like that waits for good is let go
	 * after 3 s, by releasing the row */
	struct like_call c = { .app = &app };
	atomic_init(&c.done, false);
	pthread_create(&c.th, NULL, like_once, &c);
	for (int w = 0; w < 60 && !atomic_load(&c.done); w++)
		sleep_ms(50);
	kit_db_commit(h);
	pthread_join(c.th, NULL);
	int held = c.rc;
	kit_db_close(h);
	contain_close(&app);
	lt_expect(rc == 0 && counted == 1,
	          "lock-timeout", "the contained like of a free row, run as a role that is no "
	          "superuser (as an app's is), returned %d (%s): does the like set a parameter "
	          "only a superuser may set (deadlock_timeout, log_lock_waits, ...)? That works "
	          "for the server's owner and fails with \"permission denied\" in every app; "
	          "lock_timeout is the one the containment needs, and any role may set it",
	          rc, why[0] ? why : rc == 0 ? "but the count is not 1" : "no message");
	lt_expect(held == KIT_DB_BUSY, "lock-timeout", "the contained like of a row held past its "
	          "200 ms lock timeout, run as a role that is no superuser, returned %d: expected "
	          "KIT_DB_BUSY", held);
}

static void contain_like__naive_waits_for_the_row(void **state)
{
	like_waits_for_the_row(*state, false);
}

static void contain_like__waits_out_its_lock_timeout(void **state)
{
	like_waits_for_the_row(*state, true);
}

/* Whether the connection is back in the pool when one of the like's
 * statements starts (its ROLLBACK, its COMMIT, any other): the hook tries
 * to take it from the pool (whose acquire timeout is 0). While the like
 * still has it, that says KIT_POOL_TIMEOUT at once (so does the pool's
 * own reset at the like's checkout: the connection has left the pool by
 * then); once it was put back, the pool hands it out (or fails its reset,
 * the transaction still open), and another request would have had it. */
struct put_probe {
	struct kit_pool *pool;
	bool inside;
	int rollbacks, commits, in_pool;
	char first_in_pool[16];      /* the first statement sent from the pool */
};

static void probe_rollback(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct put_probe *p = arg;
	(void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || p->inside || sql == NULL)
		return;
	p->inside = true;
	p->rollbacks += lt_sql_is(sql, "ROLLBACK");
	p->commits += lt_sql_is(sql, "COMMIT") || lt_sql_is(sql, "END");
	struct kit_db *x = NULL;
	int rc = kit_pool_get(p->pool, &x);
	if (rc == 0)
		kit_pool_put(p->pool, x);
	if (rc != KIT_POOL_TIMEOUT && p->in_pool++ == 0)
		snprintf(p->first_in_pool, sizeof p->first_in_pool, "%.*s",
		         (int)strcspn(sql + strspn(sql, " \t\n"), " \t\n;"), sql + strspn(sql, " \t\n"));
	p->inside = false;
}

/* A like that gave up rolls back before it gives its connection back,
 * and one that worked commits before it does: once kit_pool_put()
 * returns, the connection is another request's, and a ROLLBACK or COMMIT
 * sent on it then races that request's statements on one session (the
 * next request's reset meets an open transaction, or its BEGIN joins the
 * like's; a COMMIT sent late commits whatever the other request did so
 * far). Caught as it happens: the likes' pool has one connection, and a
 * hook on it asks the pool for it as each statement starts, through a
 * like that gives up and then a like of the row let go. */
static void contain_like__rolled_back_before_put_back(void **state)
{
	struct labtest *t = *state;
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 2, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 0, .lock_timeout_ms = 100,
	                              .contain = true };
	char err[512];
	int64_t pid;
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct put_probe probe = { .pool = app.likes };
	struct kit_db *db = NULL;
	assert_int_equal(kit_pool_get(app.likes, &db), 0);
	kit_db_set_hook(db, probe_rollback, &probe);
	kit_pool_put(app.likes, db);
	struct kit_db *h = hold(t, 1, &pid);
	struct like_call c = { .app = &app };
	like_beside_holder(&c, h);
	kit_db_commit(h);
	kit_db_close(h);
	int gave_up_in_pool = probe.in_pool;
	char gave_up_first[sizeof probe.first_in_pool];
	memcpy(gave_up_first, probe.first_in_pool, sizeof gave_up_first);
	probe.in_pool = 0;
	int free_rc = contain_like(&app, 1);          /* the row let go: this one commits */
	struct kit_db *again = NULL;
	if (kit_pool_get(app.likes, &again) == 0) {
		kit_db_set_hook(again, NULL, NULL);
		kit_pool_put(app.likes, again);
	}
	contain_close(&app);
	lt_expect_int_hint(c.rc, KIT_DB_BUSY, "a like of a held row (lock timeout 100 ms)",
	                   "lock-timeout");
	lt_expect(probe.rollbacks >= 1, "rollback", "expected the like that gave up to roll "
	          "back on its connection, saw no ROLLBACK");
	lt_expect(gave_up_in_pool == 0, "rollback", "the like that gave up sent its %s after its "
	          "connection was back in the pool (the pool handed it out from there): call "
	          "kit_db_rollback() before kit_pool_put(); once put back, the connection is the "
	          "next request's", gave_up_first);
	lt_expect(probe.commits >= 1 || free_rc != 0, "rollback", "expected the like of the free "
	          "row to commit on its connection, saw no COMMIT");
	lt_expect(probe.in_pool == 0, "rollback", "the like of the free row sent its %s after its "
	          "connection was back in the pool (the pool handed it out from there): commit "
	          "before kit_pool_put(); once put back, the connection is the next request's, "
	          "whose statements a late COMMIT commits with the like", probe.first_in_pool);
	lt_expect_int_hint(free_rc, 0, "a like of the row once it was let go", "rollback");
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 2,
	              "likes: the holder's and the like of the free row");
}

/* Counts the like's statements that take the post's row on a connection
 * of the likes' pool: its UPDATE, or a SELECT ... FOR UPDATE (FOR NO KEY
 * UPDATE, FOR SHARE) that takes the row before it. */
static void count_updates(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)t_ns;
	if ((ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START) && lt_sql_names(sql, "posts") &&
	    (lt_sql_is(sql, "UPDATE") || (lt_sql_is(sql, "SELECT") && lt_sql_names(sql, "FOR") &&
	                                  (lt_sql_names(sql, "UPDATE") || lt_sql_names(sql, "SHARE")))))
		++*(int *)arg;
}

/* A contained like of a held row gives up after ONE wait of the lock
 * timeout, with KIT_DB_BUSY: it sends its UPDATE once. A like that tries
 * again on KIT_DB_BUSY holds its connection for several lock timeouts,
 * which is what the timeout was there to stop (the likes' pool is empty
 * meanwhile, and the caller, not the endpoint, decides about a retry).
 * The statements are counted on the pool's one connection. */
static void contain_like__gives_up_after_one_wait(void **state)
{
	struct labtest *t = *state;
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 2, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 5000, .lock_timeout_ms = 50,
	                              .contain = true };
	char err[512];
	int64_t pid;
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct kit_db *db = NULL;
	assert_int_equal(kit_pool_get(app.likes, &db), 0);
	int updates = 0;
	kit_db_set_hook(db, count_updates, &updates);
	kit_pool_put(app.likes, db);
	struct kit_db *h = hold(t, 1, &pid);

	struct like_call c = { .app = &app };
	like_beside_holder(&c, h);
	kit_db_commit(h);
	kit_db_close(h);
	kit_db_set_hook(db, NULL, NULL);
	contain_close(&app);
	lt_expect_int_hint(c.rc, KIT_DB_BUSY, "a like of a held row (lock timeout 50 ms)",
	                   "lock-timeout");
	lt_expect(updates == 1, "lock-timeout", "a like that gave up on a held row sent %d "
	          "statements that take the post's row (its UPDATE, or a SELECT ... FOR UPDATE) in "
	          "%.0f ms, lock timeout 50 ms: expected one; a contained like answers KIT_DB_BUSY "
	          "after one wait and does not try again itself", updates, c.ms);
}

/* Six likes of one held row at once, each with a connection of its own
 * (lock timeout 300 ms): each gives up after one wait of the lock
 * timeout, all at about the same time. A queue of the app's own in front
 * of the row (a mutex per post, "one like per post goes to the database
 * at a time"; an advisory lock taken before the UPDATE) makes the n-th
 * like wait out the timeouts of the likes ahead of it as well: the
 * containment's bound is gone where it matters, and every queued like
 * holds a request thread meanwhile. PostgreSQL times each lock
 * acquisition on its own, and a like behind others waits first for the
 * row's tuple lock, then for the holder's transaction: two acquisitions,
 * so a like here may wait up to twice its lock timeout (measured: the
 * slowest of six ends at about 600 ms). Each must end within 2.5 lock
 * timeouts of its start; one that waits for good is let go after 5 s. */
static void contain_like__held_row_likes_at_once_wait_once(void **state)
{
	struct labtest *t = *state;
	enum { LIKES = 6 };
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = LIKES + 1,
	                              .counter_pool_size = LIKES, .acquire_timeout_ms = 5000,
	                              .lock_timeout_ms = 300, .contain = true };
	char err[512];
	int64_t pid;
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct kit_db *warm[LIKES];           /* every connection open before the clock runs */
	int got = 0;
	for (; got < LIKES && kit_pool_get(app.likes, &warm[got]) == 0; got++)
		;
	for (int i = 0; i < got; i++)
		kit_pool_put(app.likes, warm[i]);
	struct kit_db *h = hold(t, 1, &pid);
	static struct like_call c[LIKES];
	for (int i = 0; i < LIKES; i++) {
		c[i] = (struct like_call){ .app = &app };
		atomic_init(&c[i].done, false);
		pthread_create(&c[i].th, NULL, like_once, &c[i]);
	}
	bool all = false;
	for (int w = 0; w < 100 && !all; w++) {
		sleep_ms(50);
		all = true;
		for (int i = 0; i < LIKES; i++)
			all = all && atomic_load(&c[i].done);
	}
	kit_db_commit(h);
	kit_db_close(h);
	double worst = 0;
	int busy = 0;
	for (int i = 0; i < LIKES; i++) {
		pthread_join(c[i].th, NULL);
		worst = c[i].ms > worst ? c[i].ms : worst;
		busy += c[i].rc == KIT_DB_BUSY;
	}
	contain_close(&app);
	lt_expect(got == LIKES, NULL, "the likes' pool gave %d connections of %d", got, LIKES);
	lt_expect(busy == LIKES && worst <= 750, "lock-timeout", "six likes of a held row at once, "
	          "each on a connection of its own, lock timeout 300 ms: %d answered KIT_DB_BUSY, "
	          "and the slowest took %.0f ms (expected all six, each within 750 ms: PostgreSQL "
	          "times the tuple lock and the holder's transaction as two waits, so 600 ms is "
	          "expected). A queue of the app's own in front of the row (a mutex per post, an "
	          "advisory lock before the UPDATE) makes each like wait out the timeouts of those "
	          "ahead of it too: only the row's wait is bounded", busy, worst);
}

/* Holds the first UPDATE of posts on a connection until released: its
 * call has formatted its parameters and not yet sent them. */
struct update_stop {
	struct kit_db *db;
	atomic_int arrived, released;  /* stops reached, stops let go */
	int64_t ms;                    /* lock_timeout at the UPDATE; -1: not seen */
	atomic_bool inside;
};

/* Holds the like before the first statement that sets its lock timeout,
 * and again before its UPDATE of posts, until the check lets it go; at
 * the UPDATE it first reads the lock_timeout in force. */
static void stop_first_update(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct update_stop *s = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START || atomic_load(&s->inside))
		return;
	bool update = lt_sql_is(sql, "UPDATE") && lt_sql_names(sql, "posts");
	bool timeout = !update && strcasestr(sql, "lock_timeout") != NULL;
	if (!(update || timeout) || atomic_load(&s->arrived) >= 2 || (update && s->ms != -1))
		return;
	if (timeout && atomic_load(&s->arrived) >= 1)
		return;
	if (update) {
		atomic_store(&s->inside, true);
		s->ms = -2;
		kit_db_query(s->db, "SELECT setting FROM pg_settings WHERE name = 'lock_timeout'", 0,
		             NULL, setting_ms, &s->ms);
		atomic_store(&s->inside, false);
	}
	int n = atomic_fetch_add(&s->arrived, 1) + 1;
	int64_t until = kit_load_now_ns() + 60000000000LL;   /* only so a broken run ends */
	while (atomic_load(&s->released) < n && kit_load_now_ns() < until)
		sleep_ms(1);
}

/* The endpoints are called from any threads (contain.h): a like's post id
 * and its lock timeout are its own. Post 1's like is held just before it
 * sets its lock timeout and again just before its UPDATE is sent, on the
 * likes' pool's one connection; each time another app (lock timeout 7 s,
 * this one's 5 s) likes post 2 whole in this thread; then post 1's goes
 * on. Post 1 has one like, sent with 5 s in force. A like whose id text,
 * or SET text, lives in a buffer every thread shares (a static array)
 * sends post 2's id for post 1, or the other app's lock timeout. */
/* The app's first likes, from four threads let go together: a
 * statement's text or a setting built on the first call, behind a plain
 * flag or in a buffer every thread shares, is built by all four at once
 * (the race pass of `hotrow lab check` runs each such check in a process
 * of its own, so these are the process's first likes). Each thread likes
 * its own post five times; every like counts. */
struct first_likes {
	struct contain_app *app;
	int64_t post;
	int rc;
};

static void *first_likes(void *arg)
{
	struct first_likes *f = arg;
	for (int i = 0; i < 5 && f->rc == 0; i++)
		f->rc = contain_like(f->app, f->post);
	return NULL;
}

static void contain_like__first_likes_at_once(void **state)
{
	struct labtest *t = *state;
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 4, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 5000, .lock_timeout_ms = 2000,
	                              .contain = true };
	char err[512];
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (2), (3), (4)");
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct first_likes f[4];
	for (int i = 0; i < 4; i++)
		f[i] = (struct first_likes){ &app, i + 1, 0 };
	lt_at_once(4, first_likes, f, sizeof f[0]);
	contain_close(&app);
	for (int i = 0; i < 4; i++) {
		char sql[64];
		snprintf(sql, sizeof sql, "SELECT likes FROM posts WHERE id = %d", i + 1);
		int64_t n = labtest_int(t, sql);
		lt_expect(f[i].rc == 0 && n == 5, NULL, "four threads made the app's first likes at "
		          "once, each five likes of its own post: post %d's thread got %d and the post "
		          "has %lld likes (expected 0 and 5). Is something built on the first call and "
		          "shared by every thread (a statement's text, a setting) built by two at once?",
		          i + 1, f[i].rc, (long long)n);
	}
}

static void contain_like__threads_keep_their_own_post(void **state)
{
	struct labtest *t = *state;
	struct contain_app app, app2;
	struct contain_config cfg = { .url = t->url, .pool_size = 1, .counter_pool_size = 1,
	                              .acquire_timeout_ms = 5000, .lock_timeout_ms = 5000,
	                              .contain = true };
	struct contain_config cfg2 = cfg;
	cfg2.lock_timeout_ms = 7000;
	char err[512];
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1), (2)");
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	lt_expect(contain_open(&app2, &cfg2, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct update_stop stop = { .ms = -1 };
	atomic_init(&stop.arrived, 0);
	atomic_init(&stop.released, 0);
	atomic_init(&stop.inside, false);
	struct kit_db *db = NULL;
	assert_int_equal(kit_pool_get(app.likes, &db), 0);
	stop.db = db;
	kit_db_set_hook(db, stop_first_update, &stop);
	kit_pool_put(app.likes, db);

	struct like_call c = { .app = &app };
	atomic_init(&c.done, false);
	pthread_create(&c.th, NULL, like_once, &c);
	int64_t until = kit_load_now_ns() + 60000000000LL;    /* only so a broken run ends */
	int rc2 = 0, likes2 = 0;
	while (!atomic_load(&c.done) && kit_load_now_ns() < until) {
		if (atomic_load(&stop.arrived) > atomic_load(&stop.released)) {
			int rc = contain_like(&app2, 2);
			rc2 = rc2 ? rc2 : rc;
			likes2++;
			atomic_fetch_add(&stop.released, 1);
		} else {
			sleep_ms(1);
		}
	}
	atomic_store(&stop.released, 2);
	pthread_join(c.th, NULL);
	kit_db_set_hook(db, NULL, NULL);
	contain_close(&app2);
	contain_close(&app);
	lt_expect(stop.ms != -1, NULL, "post 1's like never sent an UPDATE of posts (it returned %d)",
	          c.rc);
	lt_expect(c.rc == 0 && rc2 == 0, NULL, "the likes of posts 1 and 2 returned %d and %d",
	          c.rc, rc2);
	int64_t n1 = labtest_int(t, "SELECT likes FROM posts WHERE id = 1");
	int64_t n2 = labtest_int(t, "SELECT likes FROM posts WHERE id = 2");
	lt_expect(n1 == 1 && n2 == likes2, NULL, "post 1's like held before it set its lock timeout "
	          "and before its UPDATE was sent while another thread liked post 2 each time: post 1 "
	          "has %lld likes and post 2 %lld, expected 1 and %d (is the post id printed into a "
	          "buffer every thread shares, a static array? keep it on the stack of the call)",
	          (long long)n1, (long long)n2, likes2);
	lt_expect(stop.ms == 5000, "lock-timeout", "post 1's like (lock timeout 5000 ms), held before "
	          "it set its lock timeout while another app's like (7000 ms) ran whole in another "
	          "thread, sent its UPDATE with lock_timeout %lld ms in force%s", (long long)stop.ms,
	          stop.ms == 7000 ? ": the other app's. Is the SET LOCAL text built in a buffer every "
	          "thread shares (a static array)? Keep it on the stack of the call" : "");
}

/* A session setting one checkout of p leaves behind is gone at the next
 * (the pool's CONTAIN_RESET): every connection gets statement_timeout
 * 4321 ms and a temporary table and goes back, then each is taken again
 * and asked. Returns how many still had either: RESET ALL puts the
 * settings back but keeps temporary tables (and prepared statements,
 * advisory locks, LISTENs), which DISCARD ALL drops too. */
static int settings_left(struct kit_pool *p)
{
	struct kit_db *db[8];
	int n = kit_pool_size(p), left = 0, got = 0;
	for (; got < n && got < 8 && kit_pool_get(p, &db[got]) == 0; got++)
		kit_db_exec(db[got], "SET statement_timeout = 4321; "
		            "CREATE TEMP TABLE contain_left_behind (x int)", 0, NULL);
	for (int i = 0; i < got; i++)
		kit_pool_put(p, db[i]);
	for (got = 0; got < n && got < 8 && kit_pool_get(p, &db[got]) == 0; got++) {
		int64_t ms = 0, temp = 0;
		kit_db_query_int(db[got], "SELECT setting::bigint FROM pg_settings WHERE name = "
		                 "'statement_timeout'", 0, NULL, &ms);
		kit_db_query_int(db[got], "SELECT count(*) FROM pg_class WHERE relname = "
		                 "'contain_left_behind' AND relnamespace = pg_my_temp_schema()",
		                 0, NULL, &temp);
		left += ms == 4321 || temp != 0;
	}
	for (int i = 0; i < got; i++)
		kit_pool_put(p, db[i]);
	return left;
}

static void contain_open__gives_likes_their_own_pool(void **state)
{
	struct labtest *t = *state;
	struct contain_app app;
	struct contain_config cfg = { .url = t->url, .pool_size = 4, .counter_pool_size = 2,
	                              .acquire_timeout_ms = 100, .lock_timeout_ms = 100,
	                              .contain = true };
	char err[512];
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	bool apart = app.likes && app.login && app.likes != app.login;
	int nlikes = app.likes ? kit_pool_size(app.likes) : 0;
	int nlogin = app.login ? kit_pool_size(app.login) : 0;
	int left_likes = app.likes ? settings_left(app.likes) : 0;
	int left_login = app.login ? settings_left(app.login) : 0;
	contain_close(&app);
	lt_expect(apart, "bulkhead", "expected the like endpoint and the login page on two pools, "
	          "got one shared pool");
	lt_expect_int_hint(nlikes, 2, "connections in the likes' pool (counter_pool_size)", "bulkhead");
	lt_expect_int_hint(nlogin, 4, "connections in the login page's pool (pool_size)", "bulkhead");
	lt_expect(left_likes == 0 && left_login == 0, "bulkhead", "a statement_timeout or a "
	          "temporary table made on a checked-out connection was still there at its next "
	          "checkout on %d of the likes' and %d of the login page's connections: each pool "
	          "resets with CONTAIN_RESET (contain.h; RESET ALL keeps temporary tables, "
	          "prepared statements and advisory locks), or one request's session reaches the "
	          "next", left_likes, left_login);

	cfg.contain = false;
	lt_expect(contain_open(&app, &cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	apart = app.likes != app.login;
	int left_shared = app.login ? settings_left(app.login) : 0;
	int nshared = app.login ? kit_pool_size(app.login) : 0;
	contain_close(&app);
	lt_expect(!apart, NULL, "expected the naive app (contain false) on one shared pool");
	lt_expect_int_hint(nshared, 4, "connections in the naive app's one pool (pool_size: "
	                   "contain.h, \"the app's pool: shared by both endpoints\"; counter_pool_size "
	                   "is the contained likes' own)", "bulkhead");
	lt_expect(left_shared == 0, "bulkhead", "a statement_timeout or a temporary table made on a "
	          "checked-out connection was still there at its next checkout on %d of the naive "
	          "app's connections: its pool resets with CONTAIN_RESET too", left_shared);
}

/* ---- the overload, measured ---- */

#define POOL        8            /* the app's pool (the login's, contained) */
#define LIKE_POOL   2            /* the likes' own, contained */
#define OVERLOAD_S  10
#define LOGIN_RATE  40           /* logins per second, from 2 threads */

/* The test's URL with commits durable: the harness turns
 * synchronous_commit off to keep suites fast, but the ceiling is about
 * what a commit really costs. */
static void durable_url(char *out, size_t len, const char *url)
{
	snprintf(out, len, "%s", url);
	char *p = strstr(out, "synchronous_commit%3Doff");
	if (p)
		memcpy(p + strlen("synchronous_commit%3D"), "on ", 3);
	else if ((p = strstr(out, "synchronous_commit=off")))
		memcpy(p + strlen("synchronous_commit="), "on ", 3);
}

/* Holds of the lone thread: the row is locked from the moment the UPDATE
 * returns to the end of COMMIT (as Lab 01's driver times it; the UPDATE's
 * own trip to the server is not part of the hold, and on a busy machine
 * a round trip is milliseconds). */
struct holds { double ms[20000]; int n; };

static int naive_like(void *arg, struct kit_load_thread *th)
{
	struct holds *h = arg;
	int64_t t0 = 0;
	int rc = kit_db_begin(th->db);
	if (rc == 0)
		rc = kit_db_exec(th->db, "UPDATE posts SET likes = likes + 1 WHERE id = 1", 0, NULL);
	if (rc == 0) {
		t0 = kit_load_now_ns();
		rc = kit_db_commit(th->db);
	}
	else
		kit_db_rollback(th->db);
	if (rc == 0 && h->n < 20000)
		h->ms[h->n++] = (double)(kit_load_now_ns() - t0) / 1e6;
	return rc;
}

static double mean(const double *v, int n)
{
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += v[i];
	return n ? sum / n : 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int like_op(void *arg, struct kit_load_thread *th)
{
	(void)th;
	return contain_like(arg, 1);
}

static int login_op(void *arg, struct kit_load_thread *th)
{
	return contain_login(arg, 1 + (int64_t)(th->iter % 100));
}

struct side {
	struct kit_load_config c;
	kit_load_op_fn *op;
	void *arg;
	struct kit_load_result r;
	int rc;
	pthread_t th;
};

static void *run_side(void *arg)
{
	struct side *s = arg;
	s->rc = kit_load_run(&s->c, s->op, s->arg, &s->r);
	return NULL;
}

/* Likes at rate from like_threads threads and logins beside them, for
 * OVERLOAD_S seconds; the login page's success rate in *login_ok. */
static void overload(struct contain_config *cfg, double rate, int like_threads,
                     double *login_ok, struct kit_load_result *likes)
{
	struct contain_app app;
	char err[512];
	lt_expect(contain_open(&app, cfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct side s[2];
	for (int i = 0; i < 2; i++) {
		kit_load_config_default(&s[i].c);
		s[i].c.url = NULL;
		s[i].c.seconds = OVERLOAD_S;
		s[i].c.progress = false;
		s[i].arg = &app;
	}
	s[0].c.threads = like_threads, s[0].c.rate_per_s = rate, s[0].op = like_op;
	s[1].c.threads = 2, s[1].c.rate_per_s = LOGIN_RATE, s[1].op = login_op;
	for (int i = 0; i < 2; i++)
		pthread_create(&s[i].th, NULL, run_side, &s[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(s[i].th, NULL);
	contain_close(&app);
	lt_expect(s[0].rc == 0 && s[1].rc == 0, NULL, "load: %s%s", s[0].r.error, s[1].r.error);
	int64_t calls = s[1].r.ok + s[1].r.failed;
	*login_ok = calls ? (double)s[1].r.ok / (double)calls : 0;
	*likes = s[0].r;
}

/* The overload's inputs, from the hold of one thread alone. */
struct plan {
	struct contain_config cfg;
	double rate;                 /* likes offered per second */
	int threads;
	double predicted_ok;         /* the naive login page's share of connections */
};

static void plan(const char *url, struct plan *p)
{
	/* The ceiling, from one thread alone: UPDATE to COMMIT is the hold.
	 * The median, not the mean: on a shared machine a few commits stall
	 * for tens of milliseconds, and they say nothing about the row. And
	 * the smallest median of three half-second windows: other builds
	 * come and go, and a window they crowd says nothing about it either. */
	static struct holds h;
	struct kit_load_config c;
	struct kit_load_result one;
	kit_load_config_default(&c);
	c.url = url, c.threads = 1, c.seconds = 0.5, c.progress = false;
	double hold_ms = 0, all_mean = 0;
	int all_n = 0;
	for (int w = 0; w < 3; w++) {
		h.n = 0;
		lt_expect(kit_load_run(&c, naive_like, &h, &one) == 0, NULL, "%s", one.error);
		qsort(h.ms, (size_t)h.n, sizeof h.ms[0], by_value);
		double median = h.n ? h.ms[h.n / 2] : 1;
		if (w == 0 || median < hold_ms)
			hold_ms = median;
		all_mean += mean(h.ms, h.n) * h.n;
		all_n += h.n;
	}
	all_mean = all_n ? all_mean / all_n : 0;
	double ceiling = 1000 / hold_ms;

	/* What they predict. Without containment every pooled connection
	 * waits in the row's line, so the pool hands out connections at the
	 * row's ceiling while requests (likes and logins alike) ask at 4x
	 * that; each waits in line until the acquire timeout. Enough threads
	 * keep the line a full timeout deep, and then about ceiling / offered
	 * = 1 in 4 requests gets a connection, the login page's included. */
	int timeout_ms = (int)fmax(20, 10 * hold_ms);
	int lock_ms = (int)fmax(20, 5 * hold_ms);
	p->rate = 4 * ceiling;
	p->threads = (int)fmin(240, fmax(64, POOL + 1.5 * p->rate * timeout_ms / 1000));
	p->predicted_ok = ceiling / p->rate;
	p->cfg = (struct contain_config){ .url = url, .pool_size = POOL,
	                                  .counter_pool_size = LIKE_POOL,
	                                  .acquire_timeout_ms = timeout_ms, .lock_timeout_ms = lock_ms };
	lt_say("hold %.2f ms alone (smallest median of 3 windows, %d likes; mean %.2f), ceiling %.0f/s; likes offered at %.0f/s (4x) from %d threads "
	       "for %d s; login at %d/s; acquire timeout %d ms, lock timeout %d ms", hold_ms,
	       all_n, all_mean, ceiling, p->rate, p->threads, OVERLOAD_S, LOGIN_RATE, timeout_ms, lock_ms);
	lt_say("predicted without containment: the login page gets a connection about "
	       "ceiling / offered = %.0f%% of the time", 100 * p->predicted_ok);
}

static void contain__login_survives_a_hot_row(void **state)
{
	struct labtest *t = *state;
	char url[1100];
	durable_url(url, sizeof url, t->url);
	labtest_exec(t, CONTAIN_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1);"
	                "INSERT INTO users SELECT g, 'user ' || g FROM generate_series(1, 100) g");

	/* The containment first, on one like of a held row: a contained like
	 * that does not give up there (still a TODO) cannot keep the login
	 * page up under the overload below, which then need not run. */
	struct contain_app probe;
	struct contain_config pcfg = { .url = url, .pool_size = 2, .counter_pool_size = 1,
	                               .acquire_timeout_ms = 5000, .lock_timeout_ms = 100,
	                               .contain = true };
	char err[512];
	int64_t pid;
	lt_expect(contain_open(&probe, &pcfg, err, sizeof err) == 0, NULL, "contain_open(): %s", err);
	struct kit_db *h = hold(t, 1, &pid);
	struct like_call c = { .app = &probe };
	like_beside_holder(&c, h);
	kit_db_commit(h);
	kit_db_close(h);
	contain_close(&probe);
	lt_expect(c.rc == KIT_DB_BUSY, "bulkhead", "a contained like of a held row returned %d after "
	          "%.0f ms, not KIT_DB_BUSY within its 100 ms lock timeout: without that the likes "
	          "cannot be kept off the login page's connections, so the overload was not run "
	          "(contain_like__gives_up_on_a_held_row says more)", c.rc, c.ms);

	/* The naive app first. Its prediction rests on the hold measured
	 * alone just before; on a machine whose disk is shared, a commit can
	 * cost twice as much for a second and half as much the next, so when
	 * the baseline does not collapse the hold is measured and the
	 * baseline run once more. */
	struct plan p;
	double naive_ok = 1;
	struct kit_load_result naive_likes;
	for (int attempt = 0; attempt < 2 && naive_ok >= 0.5; attempt++) {
		if (attempt)
			lt_say("the naive login page did not collapse; measuring the hold again");
		plan(url, &p);
		struct contain_config cfg = p.cfg;
		cfg.contain = false;
		overload(&cfg, p.rate, p.threads, &naive_ok, &naive_likes);
		lt_say("naive:     login %.1f%% ok (predicted %.0f%%, ratio %.2f); likes %lld ok, "
		       "%lld failed", 100 * naive_ok, 100 * p.predicted_ok, naive_ok / p.predicted_ok,
		       (long long)naive_likes.ok, (long long)naive_likes.failed);
	}
	/* Under ThreadSanitizer every client thread runs several times slower
	 * and the likes can no longer offer 4x the ceiling: that build checks
	 * the code's races, and says the figure rather than judging it. */
#ifdef __SANITIZE_THREAD__
	if (naive_ok >= 0.5)
		lt_say("under ThreadSanitizer the likes could not offer 4x the ceiling: "
		       "the collapse is judged in the plain build");
	naive_ok = 0;
#endif
	lt_expect(naive_ok < 0.5, NULL, "expected the naive app's login page to collapse (under "
	          "50%% ok) at 4x the ceiling, got %.1f%% ok (predicted about %.0f%%)",
	          100 * naive_ok, 100 * p.predicted_ok);

	double contained_ok;
	struct kit_load_result contained_likes;
	p.cfg.contain = true;
	overload(&p.cfg, p.rate, p.threads, &contained_ok, &contained_likes);
	lt_say("contained: login %.2f%% ok; likes %lld ok, %lld failed (%lld on the lock timeout)",
	       100 * contained_ok, (long long)contained_likes.ok, (long long)contained_likes.failed,
	       (long long)contained_likes.busy);
	lt_expect(contained_ok > 0.99, "bulkhead", "expected the login page above 99%% ok with the "
	          "likes contained, got %.2f%%", 100 * contained_ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* §4, pure C: runs anywhere */
		cmocka_unit_test(hot_keys__exact_while_keys_fit),
		cmocka_unit_test(hot_keys__keys_at_the_ends_of_uint64),
		cmocka_unit_test(hot_keys__reports_every_key_above_n_over_k),
		cmocka_unit_test(hot_keys__newcomer_takes_the_smallest_wherever_it_sits),
		cmocka_unit_test(hot_keys__never_underestimates),
		cmocka_unit_test(hot_keys__smallest_of_all_k_however_many),
		cmocka_unit_test(hot_keys__memory_stays_within_k),
		cmocka_unit_test(hot_keys__topk_counts_past_2_31),
		cmocka_unit_test(hot_keys__counting_allocates_nothing),
		cmocka_unit_test(hot_keys__topk_every_allocation_can_fail),
		cmocka_unit_test(hot_keys__two_detectors_report_at_once),
		/* §2, §5, §6: PostgreSQL; the detector's first six and the
		 * this-database-only check on MariaDB too. The others stage
		 * PostgreSQL's own kinds of lock and its order of
		 * sessions, and the containment is written in PostgreSQL's SET LOCAL
		 * lock_timeout and DISCARD ALL (CONTAIN_RESET): PostgreSQL only. */
		OWN_DB_PG(hot_rows_now__sees_the_whole_line),
		MY_ELSEWHERE(hot_rows_now__sees_the_whole_line),
		OWN_DB_SERVERS(hot_rows_now__lines_in_order_with_their_waits),
		OWN_DB_SERVERS(hot_rows_now__each_line_behind_its_own_holder),
		OWN_DB_SERVERS(hot_rows_now__one_reading_while_the_holder_commits),
		LABTEST_MYSQL(hot_rows_now__names_a_table_with_a_dot),
		MY_DOTTED(hot_rows_now__in_a_database_with_a_dot),
		OWN_DB_SERVERS(hot_rows_now__follows_the_line_past_a_commit),
		OWN_DB_SERVERS(hot_rows_now__quiet_when_nobody_waits),
		OWN_DB_PG(hot_rows_now__readers_share_the_line),
		MY_ELSEWHERE(hot_rows_now__readers_share_the_line),
		OWN_DB_SERVERS(hot_rows_now__holder_whatever_its_id),
		OWN_DB_SERVERS(hot_rows_now__wait_counts_from_the_wait),
		OWN_DB_SERVERS(hot_rows_now__oldest_wait_whoever_began_first),
		OWN_DB_SERVERS(hot_rows_now__every_line_up_to_max),
		OWN_DB_SERVERS(hot_rows_now__leaves_the_caller_as_it_found_it),
		PG_ELSEWHERE(hot_rows_now__worst_first_this_database_only),
		MY_ELSEWHERE(hot_rows_now__worst_first_this_database_only),
		PG_ELSEWHERE(hot_rows_now__most_waiters_then_oldest_wait),
		OWN_DB_PG(hot_rows_now__two_lines_beside_other_locks),
		OWN_DB_PG(hot_rows_now__oldest_wait_of_any_kind),
		OWN_DB_PG(hot_rows_now__one_line_whoever_queues_first),
		OWN_DB_PG(hot_rows_now__one_line_named_or_not),
		LABTEST_SQLITE(hot_rows_now__refused_on_sqlite),
		OWN_DB_PG(hot_rows_now__query_fails),
		OWN_DB_PG(hot_rows_now__names_a_table_beyond_the_search_path),
		LABTEST_MYSQL(hot_rows_now__rows_only_beside_a_table_lock),
		LABTEST_PG(contain_open__gives_likes_their_own_pool),
		LABTEST_PG(contain_open__leaves_nothing_open),
		LABTEST_PG(contain__endpoints_say_what_happened),
		LABTEST_PG(contain_like__threads_keep_their_own_post),
		LABTEST_PG(contain_like__first_likes_at_once),
		LABTEST_PG(contain_like__every_step_can_fail),
		LABTEST_PG(contain_like__two_likes_fail_at_once),
		LABTEST_PG(contain_like__post_deleted_between_any_two_statements),
		LABTEST_PG(contain_like__a_broken_connection_goes_back),
		LABTEST_PG(contain_like__gives_up_on_a_held_row),
		LABTEST_PG(contain_like__timeout_ends_with_the_like),
		LABTEST_PG(contain_like__gives_up_after_one_wait),
		LABTEST_PG(contain_like__held_row_likes_at_once_wait_once),
		LABTEST_PG(contain_like__naive_waits_for_the_row),
		LABTEST_PG(contain_like__waits_out_its_lock_timeout),
		LABTEST_PG(contain_like__works_as_an_app_role),
		LABTEST_PG(contain_like__only_the_row_wait_is_bounded),
		LABTEST_PG(contain_like__lock_timeout_is_the_configured_one),
		LABTEST_PG(contain_like__rolled_back_before_put_back),
		LABTEST_PG(contain__login_survives_a_hot_row),
		/* last, so that the line it reads, begun as the suite starts,
		 * has aged past a minute while the others ran */
		LABTEST_PG(hot_rows_now__a_wait_past_a_minute),
	};
	long_line_early();
	return labtest_main("07-contain", tests);
}
