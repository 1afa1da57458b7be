/*
 * sort.h: every qsort of a test binary checks the comparator it was given.
 *
 * A comparator must answer negative, 0 or positive, the same way round
 * both ways: cmp(a, b) < 0 exactly when cmp(b, a) > 0. One that answers
 * only 0 or 1 (return x > y;) happens to sort right under glibc 2.36's
 * merge sort, which only asks "is it > 0?", and sorts wrong under a
 * quicksort that asks "< 0?" (musl, other libcs, glibc's own fallback):
 * a check of the order alone cannot see it here. So the test binaries
 * link qsort to __wrap_qsort below (labs/module.mk, LABTEST_WRAP): it
 * sorts with the real qsort, then asks the comparator about each
 * neighbouring pair, and about the first and the last element, both ways,
 * and counts the pairs where the two answers disagree (or say the first
 * is the larger); and it asks about the first element against itself,
 * which must be 0 (a comparator that never answers 0, "the keys are
 * distinct anyway", tells a qsort that compares its pivot with itself
 * that the pivot is larger than itself). The ends are the pair furthest apart: a comparator that
 * takes the sign of x - y overflows there (make SAN=undefined reports it).
 *
 * Interface:
 *   lt_sort_reset();
 *   fence_handle(...);                              // calls qsort inside
 *   lt_expect(lt_sort_inconsistent() == 0, ...);
 */
#ifndef HOTROW_TESTS_SORT_H
#define HOTROW_TESTS_SORT_H

void lt_sort_reset(void);
/* Pairs (neighbours, and the two ends), since the last reset, whose comparator answers
 * disagreed (cmp(a, b) and cmp(b, a) not of opposite signs, or both 0
 * one way only) or put them out of order; and sorts whose first element
 * did not compare equal to itself. */
int lt_sort_inconsistent(void);

#endif
