/*
 * sort.c: qsort wrapped to check its comparator (sort.h).
 */
#include "tests/harness/sort.h"

#include <stdatomic.h>
#include <stddef.h>

void __real_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
void __wrap_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

static atomic_int inconsistent;

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

/* x sorted before y: cmp(x, y) is not positive, and cmp(y, x) has the
 * opposite sign. */
static int check_pair(const void *x, const void *y, int (*cmp)(const void *, const void *))
{
	int xy = sign(cmp(x, y)), yx = sign(cmp(y, x));
	return xy <= 0 && xy == -yx;
}

void __wrap_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	__real_qsort(base, n, size, cmp);
	const char *a = base;
	/* each neighbouring pair, and the two ends (the pair furthest apart,
	 * where a comparator that subtracts overflows) */
	for (size_t i = 0; i + 1 < n; i++) {
		if (!check_pair(a + i * size, a + (i + 1) * size, cmp))
			atomic_fetch_add(&inconsistent, 1);
	}
	if (n > 2 && !check_pair(a, a + (n - 1) * size, cmp))
		atomic_fetch_add(&inconsistent, 1);
	/* an element against itself is equal: a qsort may compare its pivot
	 * with itself, and one that says "greater" there can run off the end */
	if (n > 0 && cmp(a, a) != 0)
		atomic_fetch_add(&inconsistent, 1);
}

void lt_sort_reset(void)
{
	atomic_store(&inconsistent, 0);
}

int lt_sort_inconsistent(void)
{
	return atomic_load(&inconsistent);
}
