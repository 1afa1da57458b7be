/*
 * sleeps.c: the sleep calls of Lab 08's test program, noted and bounded
 * on a watched thread (sleeps.h). Each sleeps through the kernel's
 * clock_nanosleep directly, as the C library does.
 */
#include "tests/labs/08-engine/sleeps.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "tests/harness/sql.h"

static _Thread_local struct lt_sleeps *watch;

/* What clock_gettime() last told the watched thread, per clock, since
 * the last attempt began: an absolute deadline (TIMER_ABSTIME) is that
 * reading plus the wait the code drew, so the wait is measured from it,
 * not from the moment clock_nanosleep() is called, a few microseconds
 * (under load, more) later. */
#define READ_CLOCKS 16
static _Thread_local double read_ms[READ_CLOCKS];
static _Thread_local bool read_ok[READ_CLOCKS];

void lt_sleeps_watch(struct lt_sleeps *s, double max_ms, double budget_ms)
{
	memset(s, 0, sizeof *s);
	s->max_ms = max_ms;
	s->budget_ms = budget_ms;
	s->first_sec = -1;
	watch = s;
}

/* The watchdog of one watched call at a time (lt_sleeps_deadline). */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t done;
	pthread_t th;
	bool armed, over;
	double seconds;
	const char *what;
	const struct lt_sleeps *s;
} dog = { .mu = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER };

static void *bark(void *arg)
{
	(void)arg;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)dog.seconds;
	pthread_mutex_lock(&dog.mu);
	while (!dog.over)
		if (pthread_cond_timedwait(&dog.done, &dog.mu, &until) == ETIMEDOUT && !dog.over) {
			const struct lt_sleeps *s = dog.s;
			fprintf(stderr, "%s: the call has not returned after %.0f s: %d attempts began, "
			        "and it made %d sleep calls this program sees (the longest asked %.1f "
			        "ms); a wait it cannot see or cut (a condition variable's timed wait, "
			        "select(), poll(), a busy loop) never ended: is the wait capped, and "
			        "slept with nanosleep, usleep, sleep or clock_nanosleep (inside.h)? The "
			        "checks stop here.\n", dog.what,
			        dog.seconds, s->attempts, s->calls, s->longest_ms);
			_exit(1);
		}
	pthread_mutex_unlock(&dog.mu);
	return NULL;
}

void lt_sleeps_deadline(double seconds, const char *what)
{
	if (!watch || dog.armed)
		return;
	dog.over = false;
	dog.seconds = seconds;
	dog.what = what;
	dog.s = watch;
	dog.armed = pthread_create(&dog.th, NULL, bark, NULL) == 0;
}

void lt_sleeps_unwatch(void)
{
	watch = NULL;
	if (!dog.armed)
		return;
	pthread_mutex_lock(&dog.mu);
	dog.over = true;
	pthread_cond_signal(&dog.done);
	pthread_mutex_unlock(&dog.mu);
	pthread_join(dog.th, NULL);
	dog.armed = false;
}

void lt_sleeps_note_attempt(void)
{
	if (watch) {
		watch->attempts++;
		watch->interrupted = false;
	}
	memset(read_ok, 0, sizeof read_ok);
}

double lt_sleeps_take(void)
{
	if (!watch)
		return 0;
	double ms = watch->pending_ms;
	watch->pending_ms = 0;
	return ms;
}

/* The test program's clock_gettime(): on a watched thread, a clock that
 * counts in microseconds (tv_nsec a multiple of 1,000), as the clocks
 * of many machines do; elsewhere the kernel's, to the nanosecond. A
 * backoff that takes its "random" part from the clock's last digits
 * (tv_nsec % 1000) draws the same number every time on such a clock. The
 * kernel is asked by the system call itself, without the C library's
 * vDSO shortcut: a few hundred nanoseconds more a call. */
int clock_gettime(clockid_t clock, struct timespec *ts)
{
	if (syscall(SYS_clock_gettime, clock, ts) != 0)
		return -1;
	if (watch && watch->frozen && watch->calls == 0) {
		switch (clock) {
		case CLOCK_REALTIME:
		case CLOCK_REALTIME_COARSE:
		case CLOCK_TAI:
			*ts = watch->frozen_realtime;
			break;
		case CLOCK_MONOTONIC:
		case CLOCK_MONOTONIC_RAW:
		case CLOCK_MONOTONIC_COARSE:
		case CLOCK_BOOTTIME:
			if (watch->frozen_mono)
				*ts = watch->frozen_monotonic;
			break;
		default:                /* CPU time: each thread's own */
			break;
		}
	}
	if (watch && watch->advanced_ms > 0 && clock != CLOCK_PROCESS_CPUTIME_ID &&
	    clock != CLOCK_THREAD_CPUTIME_ID) {
		/* the time the cut requests would have slept (advance_clock) */
		int64_t ns = (int64_t)ts->tv_nsec + (int64_t)(watch->advanced_ms * 1e6);
		ts->tv_sec += (time_t)(ns / 1000000000);
		ts->tv_nsec = (long)(ns % 1000000000);
	}
	if (watch) {
		ts->tv_nsec -= ts->tv_nsec % 1000;
		if (clock >= 0 && clock < READ_CLOCKS) {
			read_ms[clock] = (double)ts->tv_sec * 1e3 + (double)ts->tv_nsec / 1e6;
			read_ok[clock] = true;
		}
	}
	return 0;
}

/* gettimeofday() reads the clock above on a watched thread (the C
 * library's would read the kernel's through the vDSO). */
int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	if (!watch)
		return (int)syscall(SYS_gettimeofday, tv, tz);
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	{
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
	}
	return 0;
}

void lt_sleeps_freeze_clock(const struct timespec *realtime, const struct timespec *monotonic)
{
	if (!watch)
		return;
	watch->frozen = true;
	watch->frozen_realtime = *realtime;
	watch->frozen_mono = monotonic != NULL;
	if (monotonic)
		watch->frozen_monotonic = *monotonic;
}

static double ms_of(const struct timespec *ts)
{
	return (double)ts->tv_sec * 1e3 + (double)ts->tv_nsec / 1e6;
}

/* The clock as the kernel reads it, not through the stand-in above
 * (which notes what it tells the code under test). */
static double now_ms(clockid_t clock)
{
	struct timespec ts = { 0, 0 };
	syscall(SYS_clock_gettime, clock, &ts);
	return ms_of(&ts);
}

/* Notes a request of ms on the watched thread; true when it is cut. */
static bool cut(double ms)
{
	struct lt_sleeps *s = watch;
	if (!s)
		return false;
	s->calls++;
	s->pending_ms += ms;
	if (s->first_sec < 0)
		s->first_sec = (int64_t)time(NULL);
	if (ms > s->longest_ms) {
		s->longest_ms = ms;
		s->longest_after = s->attempts;
	}
	bool too_long = ms > s->max_ms + 1e-6, spent = s->asleep_ms >= s->budget_ms;
	if (!too_long && !spent)
		return false;
	if (s->advance_clock && ms > 0)
		s->advanced_ms += ms;
	if (!s->cut) {
		s->first_cut_ms = ms;
		s->first_cut_after = s->attempts;
		s->over_budget = !too_long;
	}
	s->cut = true;
	return true;
}

/* Notes a request the kernel refuses (EINVAL: no sleep at all) on the
 * watched thread; true when req is one. */
static bool malformed(const struct timespec *req)
{
	struct lt_sleeps *s = watch;
	if (!s || (req->tv_nsec >= 0 && req->tv_nsec < 1000000000L && req->tv_sec >= 0))
		return false;
	if (s->malformed++ == 0) {
		s->first_malformed_sec = (long long)req->tv_sec;
		s->first_malformed_nsec = (long long)req->tv_nsec;
	}
	s->calls++;
	return true;
}

/* The kernel's sleep, its time asleep added to the watch. Returns 0 or
 * an error number. */
static int kernel_sleep(clockid_t clock, int flags, const struct timespec *req,
                        struct timespec *rem)
{
	double t0 = watch ? now_ms(CLOCK_MONOTONIC) : 0;
	long r = syscall(SYS_clock_nanosleep, clock, flags, req, rem);
	int err = r == 0 ? 0 : errno;
	if (watch)
		watch->asleep_ms += now_ms(CLOCK_MONOTONIC) - t0;
	return err;
}

/* As the C library's: the error number is returned and errno is left as
 * it was (POSIX; glibc makes the system call without touching errno).
 * The raw syscall() below sets errno to EINTR when a signal ends the
 * sleep, so it is put back: code that loops on errno == EINTR after
 * clock_nanosleep (as after nanosleep) must see what the C library
 * would leave it, not a value this stand-in made up. */
int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
                    struct timespec *rem)
{
	int saved = errno, err;
	if (watch)
		watch->clock_calls++;
	if (req == NULL)            /* the kernel says EFAULT, as the C library's would */
		err = kernel_sleep(clock, flags, req, rem);
	else if (malformed(req))
		err = EINVAL;
	else {
		double ms = ms_of(req);
		if (flags & TIMER_ABSTIME) {
			/* the clock as the code read it: moved on by the waits cut
			 * so far (advance_clock), which the kernel's is not */
			double now = now_ms(clock) + (watch && clock != CLOCK_PROCESS_CPUTIME_ID &&
			                              clock != CLOCK_THREAD_CPUTIME_ID ?
			                              watch->advanced_ms : 0);
			bool read = watch && clock >= 0 && clock < READ_CLOCKS && read_ok[clock] &&
			            read_ms[clock] <= now;
			ms -= read ? read_ms[clock] : now;
		}
		if (cut(ms > 0 ? ms : 0))
			err = 0;
		else if ((flags & TIMER_ABSTIME) && watch && watch->advanced_ms > 0) {
			/* a deadline on the moved-on clock: sleep what is left of it */
			struct timespec left = { (time_t)(ms > 0 ? ms / 1000 : 0),
			                         (long)(ms > 0 ? ((int64_t)(ms * 1e6)) % 1000000000 : 0) };
			err = kernel_sleep(clock, 0, &left, NULL);
		} else
			err = kernel_sleep(clock, flags, req, rem);
	}
	errno = saved;
	return err;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (req != NULL && malformed(req)) {
		errno = EINVAL;
		return -1;
	}
	if (req != NULL && cut(ms_of(req))) {
		errno = 0;
		return 0;
	}
	int err = kernel_sleep(CLOCK_REALTIME, 0, req, rem);
	if (err == 0)
		return 0;
	errno = err;
	return -1;
}

int usleep(useconds_t us)
{
	if (watch)
		watch->usleep_calls++;
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	return nanosleep(&ts, NULL);
}

unsigned int sleep(unsigned int s)
{
	if (watch && watch->interrupt_sleep && !watch->interrupted && s > 0) {
		watch->interrupted = true;      /* a signal came first: nothing slept */
		watch->sleeps_interrupted++;
		return s;
	}
	struct timespec ts = { (time_t)s, 0 }, rem = { 0, 0 };
	if (nanosleep(&ts, &rem) == 0)
		return 0;
	return (unsigned int)rem.tv_sec + (rem.tv_nsec > 0);
}

bool lt_sql_begins(const char *sql)
{
	return lt_sql_is(sql, "BEGIN") || lt_sql_is(sql, "START TRANSACTION");
}

void lt_time_gap(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct lt_gap *g = arg;
	if (ev == KIT_DB_STMT_END || ev == KIT_DB_TX_STMT_END || ev == KIT_DB_TX_ROLLBACK) {
		g->last_end = t_ns;
		return;
	}
	/* kit_db_exec("BEGIN ...") or kit_db_begin() (a TX_ statement) */
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || !lt_sql_begins(sql))
		return;
	double asked = lt_sleeps_take();
	lt_sleeps_note_attempt();
	if (++g->begins == 2) {
		g->ms = (double)(t_ns - g->last_end) / 1e6;
		g->asked = asked;
	}
}
