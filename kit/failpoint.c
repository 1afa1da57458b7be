/*
 * failpoint.c: a small table of armed failpoints behind one mutex.
 *
 * The table is tiny (a test arms a handful of names), so a linear scan is
 * the clearest lookup. An atomic count of armed entries lets an unarmed
 * kit_fp_hit() return without taking the lock: production paths pay one
 * load. Under ThreadSanitizer an armed hit is kept out of sight
 * (util/unseen.h): its lock would order every thread of a check whose
 * statements pass the failpoint, and hide a race between them in the
 * code under test. See failpoint.h for the contract.
 */
#include "kit/failpoint.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/unseen.h"

#define FP_MAX 32
#define FP_NAME 64

struct fp {
	char name[FP_NAME];        /* "" for a free slot */
	enum kit_fp_action action;
	long nth;                  /* fires on this hit */
	long hits;                 /* hits since armed */
};

/* Guarded by fp_lock: the table itself. */
static pthread_mutex_t fp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fp fp_table[FP_MAX];
/* Entries in use; read without the lock by the fast path. */
static atomic_int fp_armed;

static pthread_once_t fp_env_once = PTHREAD_ONCE_INIT;

/* Find the slot called name; NULL when absent. Caller holds fp_lock. */
static struct fp *fp_find(const char *name)
{
	for (int i = 0; i < FP_MAX; i++)
		if (fp_table[i].name[0] && strcmp(fp_table[i].name, name) == 0)
			return &fp_table[i];
	return NULL;
}

/* Arm or disarm one entry; caller holds fp_lock and has validated. */
static int fp_store(const char *name, size_t len, enum kit_fp_action action, long nth)
{
	char key[FP_NAME];
	memcpy(key, name, len);
	key[len] = '\0';

	struct fp *f = fp_find(key);
	if (action == KIT_FP_OFF) {
		if (f) {
			f->name[0] = '\0';
			atomic_fetch_sub(&fp_armed, 1);
		}
		return 0;
	}
	if (!f) {
		for (int i = 0; i < FP_MAX && !f; i++)
			if (!fp_table[i].name[0])
				f = &fp_table[i];
		if (!f)
			return -1;
		memcpy(f->name, key, len + 1);
		atomic_fetch_add(&fp_armed, 1);
	}
	f->action = action;
	f->nth = nth;
	f->hits = 0;
	return 0;
}

/* Free slots in the table; caller holds fp_lock. */
static int fp_free_slots(void)
{
	int n = 0;
	for (int i = 0; i < FP_MAX; i++)
		n += fp_table[i].name[0] == '\0';
	return n;
}

/* Parse one "NAME=ACTION[@N]" item of length len. Returns 0 and fills the
 * outputs, or -1 when it is malformed. */
static int fp_parse_item(const char *s, size_t len, size_t *namelen,
                         enum kit_fp_action *action, long *nth)
{
	const char *eq = memchr(s, '=', len);
	if (!eq || eq == s || (size_t)(eq - s) >= FP_NAME)
		return -1;
	*namelen = (size_t)(eq - s);
	const char *act = eq + 1, *end = s + len;
	const char *at = memchr(act, '@', (size_t)(end - act));
	size_t actlen = (size_t)((at ? at : end) - act);
	if (actlen == 4 && memcmp(act, "kill", 4) == 0)
		*action = KIT_FP_KILL;
	else if (actlen == 5 && memcmp(act, "error", 5) == 0)
		*action = KIT_FP_ERROR;
	else if (actlen == 4 && memcmp(act, "once", 4) == 0)
		*action = KIT_FP_ONCE;
	else if (actlen == 4 && memcmp(act, "stop", 4) == 0)
		*action = KIT_FP_STOP;
	else if (actlen == 3 && memcmp(act, "off", 3) == 0)
		*action = KIT_FP_OFF;
	else
		return -1;
	*nth = 1;
	if (at) {
		char num[24];
		size_t nlen = (size_t)(end - at - 1);
		if (nlen == 0 || nlen >= sizeof num)
			return -1;
		memcpy(num, at + 1, nlen);
		num[nlen] = '\0';
		char *stop;
		long v = strtol(num, &stop, 10);
		if (*stop || v < 1)
			return -1;
		*nth = v;
	}
	return 0;
}

/* Validate the whole spec, then (apply != 0) arm it. Caller holds fp_lock. */
static int fp_parse_locked(const char *spec, int apply)
{
	int fresh = 0;
	const char *s = spec;
	while (*s) {
		size_t len = strcspn(s, ",");
		if (len > 0) {
			size_t namelen;
			enum kit_fp_action action;
			long nth;
			if (fp_parse_item(s, len, &namelen, &action, &nth) != 0)
				return -1;
			if (apply) {
				if (fp_store(s, namelen, action, nth) != 0)
					return -1;
			} else {
				fresh++;
			}
		}
		s += len;
		if (*s == ',')
			s++;
	}
	if (!apply && fresh > fp_free_slots())
		return -1;
	return 0;
}

static void fp_load_env(void)
{
	const char *spec = getenv(KIT_FP_ENV);
	if (!spec || !*spec)
		return;
	pthread_mutex_lock(&fp_lock);
	int rc = fp_parse_locked(spec, 0);
	if (rc == 0)
		rc = fp_parse_locked(spec, 1);
	pthread_mutex_unlock(&fp_lock);
	if (rc != 0)
		fprintf(stderr, "failpoint: %s=\"%s\" is malformed; expected "
		        "NAME=kill|error|once|stop|off[@N],...; nothing armed\n", KIT_FP_ENV, spec);
}

int kit_fp_set(const char *name, enum kit_fp_action action, int nth)
{
	pthread_once(&fp_env_once, fp_load_env);
	size_t len = name ? strlen(name) : 0;
	if (len == 0 || len >= FP_NAME || nth < 1 || strchr(name, ','))
		return -1;
	pthread_mutex_lock(&fp_lock);
	int rc = fp_store(name, len, action, nth);
	pthread_mutex_unlock(&fp_lock);
	return rc;
}

int kit_fp_parse(const char *spec)
{
	pthread_once(&fp_env_once, fp_load_env);
	if (!spec)
		return -1;
	pthread_mutex_lock(&fp_lock);
	int rc = fp_parse_locked(spec, 0);
	if (rc == 0)
		rc = fp_parse_locked(spec, 1);
	pthread_mutex_unlock(&fp_lock);
	return rc;
}

void kit_fp_clear(void)
{
	pthread_once(&fp_env_once, fp_load_env);
	pthread_mutex_lock(&fp_lock);
	memset(fp_table, 0, sizeof fp_table);
	atomic_store(&fp_armed, 0);
	pthread_mutex_unlock(&fp_lock);
}

int kit_fp_hit(const char *name)
{
	pthread_once(&fp_env_once, fp_load_env);
	if (atomic_load_explicit(&fp_armed, memory_order_relaxed) == 0)
		return 0;

	enum kit_fp_action fire = KIT_FP_OFF;
	UTIL_UNSEEN_BEGIN();   /* util/unseen.h: the lock orders no threads */
	pthread_mutex_lock(&fp_lock);
	struct fp *f = fp_find(name);
	if (f && ++f->hits >= f->nth)
		fire = f->action;
	if ((fire == KIT_FP_STOP || fire == KIT_FP_ONCE) && f->hits != f->nth)
		fire = KIT_FP_OFF;   /* one stall or one refusal, not one per hit */
	pthread_mutex_unlock(&fp_lock);
	UTIL_UNSEEN_END();

	if (fire == KIT_FP_STOP) {
		raise(SIGSTOP);
		return 0;            /* continued */
	}
	if (fire == KIT_FP_KILL) {
		raise(SIGKILL);
		abort();   /* not reached: SIGKILL cannot be caught */
	}
	return fire == KIT_FP_ERROR || fire == KIT_FP_ONCE ? -1 : 0;
}

long kit_fp_count(const char *name)
{
	pthread_once(&fp_env_once, fp_load_env);
	pthread_mutex_lock(&fp_lock);
	struct fp *f = name ? fp_find(name) : NULL;
	long n = f ? f->hits : 0;
	pthread_mutex_unlock(&fp_lock);
	return n;
}
