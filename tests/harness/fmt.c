/*
 * fmt.c: the formatting wrappers and their hold (fmt.h).
 */
#include "tests/harness/fmt.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "tests/harness/deadline.h"

int __real_vsnprintf(char *s, size_t n, const char *fmt, va_list ap);
int __real_vsprintf(char *s, const char *fmt, va_list ap);
int __wrap_vsnprintf(char *s, size_t n, const char *fmt, va_list ap);
int __wrap_vsprintf(char *s, const char *fmt, va_list ap);
int __wrap_snprintf(char *s, size_t n, const char *fmt, ...);
int __wrap_sprintf(char *s, const char *fmt, ...);

static pthread_mutex_t hold_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static atomic_bool hold_armed;
static bool holding, released;
static char hold_text[64];

static void hold_if(const char *s)
{
	if (!atomic_load(&hold_armed) || s == NULL)
		return;
	pthread_mutex_lock(&hold_m);
	if (!atomic_load(&hold_armed) || strcmp(s, hold_text) != 0) {
		pthread_mutex_unlock(&hold_m);
		return;
	}
	atomic_store(&hold_armed, false);
	holding = true;
	pthread_cond_broadcast(&hold_cv);
	while (!released)
		pthread_cond_wait(&hold_cv, &hold_m);
	holding = false;
	pthread_cond_broadcast(&hold_cv);
	pthread_mutex_unlock(&hold_m);
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
	pthread_mutex_lock(&hold_m);
	size_t n = strlen(text);
	if (n >= sizeof hold_text)
		n = sizeof hold_text - 1;
	memcpy(hold_text, text, n);
	hold_text[n] = '\0';
	released = false;
	atomic_store(&hold_armed, true);
	pthread_mutex_unlock(&hold_m);
}

bool lt_fmt_held(int ms)
{
	struct timespec until = lt_deadline_ms(ms);
	pthread_mutex_lock(&hold_m);
	while (!holding && pthread_cond_timedwait(&hold_cv, &hold_m, &until) == 0)
		;
	bool h = holding;
	pthread_mutex_unlock(&hold_m);
	return h;
}

void lt_fmt_release(void)
{
	pthread_mutex_lock(&hold_m);
	atomic_store(&hold_armed, false);
	released = true;
	pthread_cond_broadcast(&hold_cv);
	while (holding)
		pthread_cond_wait(&hold_cv, &hold_m);
	pthread_mutex_unlock(&hold_m);
}
