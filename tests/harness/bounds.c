/*
 * bounds.c: lt_i64 and the chi-square test of bounds.h.
 */
#include "tests/harness/bounds.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

const char *lt_i64(char *buf, int64_t v)
{
	snprintf(buf, 24, "%" PRId64, v);
	return buf;
}

bool lt_uniform(const long *counts, int bins, double *chi2)
{
	double total = 0, x = 0;
	for (int i = 0; i < bins; i++)
		total += (double)counts[i];
	double want = bins > 0 ? total / bins : 0;
	for (int i = 0; i < bins && want > 0; i++)
		x += ((double)counts[i] - want) * ((double)counts[i] - want) / want;
	if (chi2)
		*chi2 = x;
	if (bins < 2 || want <= 0)
		return false;
	/* Wilson-Hilferty: (X/k)^(1/3) is close to normal with mean
	 * 1 - 2/(9k) and variance 2/(9k); z = 6 leaves about 1e-9 above. */
	double k = bins - 1, v = 2.0 / (9.0 * k);
	double limit = k * pow(1.0 - v + 6.0 * sqrt(v), 3.0);
	return x < limit;
}
