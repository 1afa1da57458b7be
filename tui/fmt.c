/*
 * fmt.c: readable numbers for panels and the explanation.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/fmt.h"

char *tui_fmt_int(char *buf, size_t len, int64_t n)
{
	char digits[32], out[48];
	uint64_t u = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
	int nd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)u);
	size_t k = 0;

	if (n < 0)
		out[k++] = '-';
	for (int i = 0; i < nd; i++) {
		if (i > 0 && (nd - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = digits[i];
	}
	out[k] = '\0';
	snprintf(buf, len, "%s", out);
	return buf;
}

char *tui_fmt_short(char *buf, size_t len, double n)
{
	double a = fabs(n);

	if (a < 10000)
		return tui_fmt_int(buf, len, (int64_t)llround(n));
	/* One decimal only when it says something: "12k", "12.5k". */
	if (a < 1e6)
		snprintf(buf, len, "%.*fk", a < 1e5 && fmod(a, 1e3) >= 50 ? 1 : 0, n / 1e3);
	else if (a < 1e9)
		snprintf(buf, len, "%.*fM", a < 1e8 && fmod(a, 1e6) >= 5e4 ? 1 : 0, n / 1e6);
	else
		snprintf(buf, len, "%.1fG", n / 1e9);
	return buf;
}

char *tui_fmt_rate(char *buf, size_t len, double per_s)
{
	char num[32];

	if (per_s > 0 && per_s < 10 && per_s != floor(per_s))
		snprintf(num, sizeof num, "%.1f", per_s);
	else
		tui_fmt_int(num, sizeof num, (int64_t)llround(per_s));
	snprintf(buf, len, "%s/s", num);
	return buf;
}

/* Drop a trailing ".0" so "2.0 ms" reads "2 ms". */
static void trim_zero(char *s)
{
	char *dot = strchr(s, '.');
	if (!dot)
		return;
	char *end = dot + strlen(dot) - 1;
	while (end > dot && *end == '0')
		*end-- = '\0';
	if (end == dot)
		*dot = '\0';
}

char *tui_fmt_ms(char *buf, size_t len, double ms)
{
	char num[32];
	const char *unit = "ms";

	if (ms < 0)
		ms = 0;
	if (ms < 1)
		snprintf(num, sizeof num, "%.2f", ms);
	else if (ms < 10)
		snprintf(num, sizeof num, "%.1f", ms);
	else if (ms < 1000)
		snprintf(num, sizeof num, "%.0f", ms);
	else if (ms < 60000)
		snprintf(num, sizeof num, "%.*f", ms < 10000 ? 2 : 1, ms / 1000), unit = "s";
	else
		snprintf(num, sizeof num, "%.1f", ms / 60000), unit = "min";
	trim_zero(num);
	snprintf(buf, len, "%s %s", num, unit);
	return buf;
}

char *tui_fmt_s(char *buf, size_t len, double s)
{
	char num[32];

	if (s < 0)
		s = 0;
	if (s < 0.1)
		snprintf(num, sizeof num, "%.3f", s);
	else if (s < 100)
		snprintf(num, sizeof num, "%.1f", s);
	else if (s < 600)
		snprintf(num, sizeof num, "%.0f", s);
	else {
		snprintf(num, sizeof num, "%.1f", s / 60);
		trim_zero(num);
		snprintf(buf, len, "%s min", num);
		return buf;
	}
	if (s >= 0.1)
		trim_zero(num);
	snprintf(buf, len, "%s s", num);
	return buf;
}

char *tui_fmt_ratio(char *buf, size_t len, double x)
{
	if (x > 0 && x < 0.01)
		snprintf(buf, len, "%.3f", x);
	else if (x < 1)
		snprintf(buf, len, "%.2f", x);
	else if (x < 100)
		snprintf(buf, len, "%.1f", x);
	else
		snprintf(buf, len, "%.0f", x);
	return buf;
}
