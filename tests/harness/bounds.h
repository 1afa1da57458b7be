/*
 * bounds.h: the edges of a domain that checks should walk, and a test of
 * chance.
 *
 * A wrong type passes every check whose numbers are small: an id kept in
 * an int wraps past 2^31, a count kept in a float stops growing at 2^24,
 * a double loses integers past 2^53. Checks use these values, and
 * lt_i64() to pass them to SQL as text.
 *
 * A wrong random choice (a slot that is never picked, a modulo that
 * favours some) passes any check that looks at a few draws. lt_uniform()
 * is a chi-square test with a false-fail probability below one in a
 * billion (z = 6 in the Wilson-Hilferty approximation), so a correct
 * generator fails it about never. A bin off by a fraction s of its E
 * expected draws adds about s*s*E to chi-square, against a limit near 50
 * for 10 bins: a slot never picked fails with E = 100, one 20% off needs
 * E of a few thousand. Size the draws from that, not from a try.
 *
 * Interface:
 *   kit_db_exec(db, "INSERT INTO posts (id) VALUES ($1)", 1,
 *               (const char *[]){ LT_I64(LT_PAST_INT32) });
 *   long seen[8] = {0}; ... seen[slot]++ ... ;
 *   lt_expect(lt_uniform(seen, 8, &chi2), "hint", "slots not uniform: chi2 %.1f", chi2);
 */
#ifndef HOTROW_TESTS_BOUNDS_H
#define HOTROW_TESTS_BOUNDS_H

#include <stdbool.h>
#include <stdint.h>

#define LT_PAST_INT32   ((int64_t)INT32_MAX + 1)         /* 2^31: wraps in an int */
#define LT_PAST_UINT32  ((int64_t)UINT32_MAX + 2)        /* 2^32 + 1: wraps in an unsigned */
#define LT_PAST_FLOAT   (((int64_t)1 << 24) + 1)         /* the first integer a float rounds */
#define LT_PAST_DOUBLE  (((int64_t)1 << 53) + 1)         /* the first integer a double rounds */

/* v in decimal, in buf (at least 24 bytes); returns buf. */
const char *lt_i64(char *buf, int64_t v);
#define LT_I64(v) lt_i64((char[24]){ 0 }, (v))

/* Chi-square of counts[0..bins-1] against equal expected counts, into
 * *chi2 when not NULL; true when it is below the limit that a uniform
 * choice exceeds with probability under 1e-9. */
bool lt_uniform(const long *counts, int bins, double *chi2);

#endif
