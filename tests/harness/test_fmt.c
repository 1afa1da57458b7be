/*
 * test_fmt.c: tests/harness/fmt.h formats as the C library does, and
 * holds the thread whose snprintf (or sprintf) wrote the armed text, and
 * only that one, until it is released.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "tests/harness/fmt.h"
#include "tests/harness/labtest.h"
#include "util/clock.h"

static atomic_int small;

static void fmt__formats_as_the_library_does(void **state)
{
	(void)state;
	char s[16];
	size_t cut = (size_t)(atomic_load(&small) + 8);   /* a size the compiler cannot see */
	assert_int_equal(snprintf(s, cut, "%d-%s", 42, "abcdef"), 9);
	assert_string_equal(s, "42-abcd");
	assert_int_equal(sprintf(s, "%lld", -7LL), 2);
	assert_string_equal(s, "-7");
	assert_int_equal(snprintf(NULL, 0, "%d", 12345), 5);
}

struct writer {
	char out[32];
	atomic_bool done;
};

static void *write_777777(void *arg)
{
	struct writer *w = arg;
	snprintf(w->out, sizeof w->out, "%d", 777777);
	atomic_store(&w->done, true);
	return NULL;
}

static void fmt__holds_the_thread_that_wrote_the_text(void **state)
{
	(void)state;
	char other[16];
	lt_fmt_hold_on("777777");
	/* Another text goes through. */
	snprintf(other, sizeof other, "%d", 777778);
	assert_string_equal(other, "777778");
	struct writer w = { .out = "" };
	atomic_init(&w.done, false);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, write_777777, &w), 0);
	assert_true(lt_fmt_held(5000));
	util_sleep_ns(20000000);
	assert_false(atomic_load(&w.done));
	assert_string_equal(w.out, "777777");   /* written before the hold */
	lt_fmt_release();
	pthread_join(th, NULL);
	assert_true(atomic_load(&w.done));
	/* Disarmed: the same text again goes through. */
	snprintf(other, sizeof other, "%d", 777777);
	assert_false(lt_fmt_held(10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fmt__formats_as_the_library_does),
		cmocka_unit_test(fmt__holds_the_thread_that_wrote_the_text),
	};
	return labtest_main("harness-fmt", tests);
}
