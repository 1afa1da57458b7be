/*
 * fmt.c: the formatting wrappers and their hold (fmt.h).
 */
#include "tests/harness/fmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tests/harness/hold.h"

int __real_vsnprintf(char *s, size_t n, const char *fmt, va_list ap);
int __real_vsprintf(char *s, const char *fmt, va_list ap);
int __wrap_vsnprintf(char *s, size_t n, const char *fmt, va_list ap);
int __wrap_vsprintf(char *s, const char *fmt, va_list ap);
int __wrap_snprintf(char *s, size_t n, const char *fmt, ...);
int __wrap_sprintf(char *s, const char *fmt, ...);

/* The armed text is written before lt_hold_arm() and read only by a pass
 * that found the hold armed, under its lock. */
static struct lt_hold hold = LT_HOLD_INIT;
static char hold_text[64];

static bool is_hold_text(const void *s)
{
	return strcmp(s, hold_text) == 0;
}

static void hold_if(const char *s)
{
	if (s != NULL)
		lt_hold_here(&hold, is_hold_text, s);
}

int __wrap_vsnprintf(char *s, size_t n, const char *fmt, va_list ap)
{
	int r = __real_vsnprintf(s, n, fmt, ap);
	if (n > 0)
		hold_if(s);
	return r;
}

int __wrap_vsprintf(char *s, const char *fmt, va_list ap)
{
	int r = __real_vsprintf(s, fmt, ap);
	hold_if(s);
	return r;
}

int __wrap_snprintf(char *s, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = __real_vsnprintf(s, n, fmt, ap);
	va_end(ap);
	if (n > 0)
		hold_if(s);
	return r;
}

int __wrap_sprintf(char *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = __real_vsprintf(s, fmt, ap);
	va_end(ap);
	hold_if(s);
	return r;
}

void lt_fmt_hold_on(const char *text)
{
	size_t n = strlen(text);
	if (n >= sizeof hold_text)
		n = sizeof hold_text - 1;
	memcpy(hold_text, text, n);
	hold_text[n] = '\0';
	lt_hold_arm(&hold);
}

bool lt_fmt_held(int ms)
{
	return lt_hold_held(&hold, ms);
}

void lt_fmt_release(void)
{
	lt_hold_release(&hold);
}
