/*
 * json.c: strings into JSON and XML, and cutting UTF-8 text. See json.h.
 */
#include <math.h>
#include <string.h>

#include "util/json.h"

/* U+FFFD REPLACEMENT CHARACTER, in UTF-8. */
static const char replacement[] = "\xef\xbf\xbd";

size_t util_json_utf8(const char *s, size_t n, uint32_t *cp, size_t *bad)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char c = u[0];
	uint32_t v;
	size_t need;
	unsigned char lo = 0x80, hi = 0xbf;   /* the range of the second byte */

	if (c < 0x80) {
		if (cp)
			*cp = c;
		return 1;
	}
	/* Unicode's table of well-formed byte sequences (3.9, table 3-7):
	 * the second byte's range rules out overlong forms (E0, F0),
	 * surrogates (ED) and code points above U+10FFFF (F4). */
	if (c >= 0xc2 && c <= 0xdf)
		need = 1, v = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2, v = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3, v = c & 0x07;
	else
		need = 0, v = 0;    /* a continuation byte, C0, C1 or F5..FF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;

	size_t i = 1;
	for (; need && i <= need; i++) {
		if (i >= n || u[i] < lo || u[i] > hi)
			break;
		v = (v << 6) | (u[i] & 0x3f);
		lo = 0x80, hi = 0xbf;
	}
	if (need && i == need + 1) {
		if (cp)
			*cp = v;
		return i;
	}
	if (cp)
		*cp = 0xfffd;
	if (bad)
		*bad = i;
	return 0;
}

/* The bytes of the character at s to copy, or 0 when they are ill-formed,
 * with *step the bytes the character (or the ill-formed part) takes. */
static size_t next(const char *s, size_t n, uint32_t *cp, size_t *step)
{
	size_t bad = 1;
	size_t len = util_json_utf8(s, n, cp, &bad);
	*step = len ? len : bad;
	return len;
}

static void json_bytes(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	while (n > 0) {
		uint32_t cp;
		size_t step, len = next(s, n, &cp, &step);
		if (!len)
			fputs(replacement, f);
		else if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", (char)cp);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (cp == '\r')
			fputs("\\r", f);
		else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(s, 1, len, f);
		s += step;
		n -= step;
	}
	fputc('"', f);
}

void util_json_str(FILE *f, const char *s)
{
	if (!s)
		fputs("null", f);
	else
		json_bytes(f, s, strlen(s));
}

void util_json_strn(FILE *f, const char *s, size_t n)
{
	json_bytes(f, s, n);
}

void util_json_num(FILE *f, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(f, fmt, v);
	else
		fputs("null", f);
}

void util_json_xml(FILE *f, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	while (n > 0) {
		uint32_t cp;
		size_t step, len = next(s, n, &cp, &step);
		switch (len ? cp : 0xfffd) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\r': fputs("&#13;", f); break;
		case '\n': case '\t': fputc((int)cp, f); break;
		default:
			if (!len || cp < 0x20 || cp == 0xfffe || cp == 0xffff)
				fputs(replacement, f);   /* not a character XML 1.0 allows */
			else if (cp >= 0x7f && cp <= 0x9f)
				fprintf(f, "&#x%X;", (unsigned)cp);
			else
				fwrite(s, 1, len, f);
		}
		s += step;
		n -= step;
	}
}

size_t util_json_cut(const char *s, size_t n, size_t budget)
{
	size_t at = 0;
	while (at < n) {
		size_t step;
		unsigned char lead = (unsigned char)s[at];
		if (!next(s + at, n - at, NULL, &step) && at + step == n && lead >= 0xc2 && lead <= 0xf4)
			break;   /* a character the end of the bytes cut short */
		if (at + step > budget)
			break;
		at += step;
	}
	return at;
}

size_t util_json_resync(const char *s, size_t n)
{
	size_t k = 0;
	while (k < n && k < 3 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k++;
	return k;
}

size_t util_json_copy(char *dst, size_t size, const char *src)
{
	size_t n = util_json_cut(src, strlen(src), size - 1);
	memmove(dst, src, n);
	dst[n] = '\0';
	return n;
}

size_t util_json_trim(char *s)
{
	size_t n = strlen(s);
	n = util_json_cut(s, n, n);
	s[n] = '\0';
	return n;
}
