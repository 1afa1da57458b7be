/*
 * test_hot_row.c: Lab 01's checks, on SQLite, PostgreSQL and MariaDB.
 *
 * Counts are exact. The "short hold" checks read the order of events the
 * db hook reports (statements, BEGIN, COMMIT) together with the moments the
 * app's check starts and ends, so they do not depend on how busy the
 * machine is; the one time figure compared is the fastest of several
 * counter-to-commit spans against the fastest bare UPDATE + COMMIT timed
 * in the same run. On PostgreSQL and MariaDB a second connection also
 * looks for the counter's row lock while the like is inserted.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sched.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "kit/failpoint.h"
#include "kit/load.h"
#include "labs/01-hot-row/hot_row.h"
#include "tests/harness/alloc.h"
#include "tests/harness/beside.h"
#include "tests/harness/bounds.h"
#include "tests/harness/deadline.h"
#include "tests/harness/gate.h"
#include "tests/harness/labtest.h"
#include "tests/harness/locks.h"
#include "tests/harness/session.h"
#include "tests/harness/sql.h"
#include "tests/harness/steps.h"
#include "util/clock.h"

#define THREADS 8
/* Likes per thread. Eight threads on one row contend at every like, so a
 * count read and written back loses most of them (in our runs 1,166 to
 * 1,800 of 8,000 were left at 1,000 a thread, 290 to 452 of 2,000 at 250):
 * 2,000 likes tell the same in a quarter of the time. */
#define LIKES   250
#define WORK_MS 20                 /* the slow app check in the hold checks */

static void make_post(struct labtest *t)
{
	labtest_exec(t, HOT_ROW_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");
}

static int64_t counter(struct labtest *t)
{
	return labtest_int(t, "SELECT likes FROM posts WHERE id = 1");
}

/* ---- an app check that counts its calls and can say no or take time ---- */

struct app {
	atomic_int calls;
	int answer;                    /* what check returns */
	int work_ms;                   /* how long it takes */
	struct trace *trace;           /* where to note start and end, or NULL */
	int64_t post, user;            /* what the last call was given */
	int leave_errno;               /* errno as the check leaves it, if not 0 */
};

/* ---- a trace of what happened, in order ---- */

enum what {
	BEGIN_, COMMIT_, ROLLBACK_,        /* transaction events from the db hook */
	INSERT_, UPDATE_, OTHER_,          /* a statement starts */
	TX_STMT_,                          /* BEGIN, COMMIT or ROLLBACK starts */
	STMT_END_,
	KIT_TX_,                           /* the kit's own BEGIN, COMMIT or ROLLBACK starts */
	WORK_START_, WORK_END_,            /* the app's check, noted by check() */
	YIELD_,                            /* the like gave its CPU away (sched_yield) */
	SLEEP_                             /* the like slept (nanosleep, usleep, ...) */
};

struct trace {
	int n;
	enum what what[64];
	int64_t t_ns[64];
	bool out_on;                       /* stdout and stderr are captured (struct capture) */
	int64_t out[64];                   /* ... and had this many bytes written at each event */
};

/* Bytes written to stdout and stderr while both are captured in files. */
static int64_t out_bytes(void)
{
	struct stat st;
	int64_t n = 0;
	for (int fd = 1; fd <= 2; fd++)
		if (fstat(fd, &st) == 0)
			n += (int64_t)st.st_size;
	return n;
}

static void note(struct trace *tr, enum what w, int64_t t_ns)
{
	if (tr->n < 64) {
		tr->what[tr->n] = w;
		tr->t_ns[tr->n] = t_ns;
		tr->out[tr->n] = tr->out_on ? out_bytes() : 0;
		tr->n++;
	}
}

/* sched_yield() and thrd_yield(), as the like calls them: noted in the
 * trace of the thread's like (while one is being traced), then done. A
 * yield with the lock held gives the CPU to another thread while every
 * other like of the post waits for the row: microseconds on an idle
 * machine, a whole time slice on a busy one. */
static _Thread_local struct trace *yield_trace;

int sched_yield(void)
{
	if (yield_trace)
		note(yield_trace, YIELD_, kit_load_now_ns());
	return (int)syscall(SYS_sched_yield);
}

void thrd_yield(void);
void thrd_yield(void)
{
	(void)sched_yield();
}

/* nanosleep(), usleep(), clock_nanosleep(), sleep() and thrd_sleep(), as
 * the like calls them: noted in the trace of the thread's like (while one
 * is being traced, as sched_yield is), then slept. A sleep with the lock
 * held, however short ("0.3 ms so the next likes share one flush of the
 * log"), keeps every other like of the post waiting through it. */
static void sleep_noted(void)
{
	if (yield_trace)
		note(yield_trace, SLEEP_, kit_load_now_ns());
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	sleep_noted();
	return (int)syscall(SYS_nanosleep, req, rem);
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
	sleep_noted();
	return syscall(SYS_clock_nanosleep, clock, flags, req, rem) == 0 ? 0 : errno;
}

int usleep(useconds_t us)
{
	sleep_noted();
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	return (int)syscall(SYS_nanosleep, &ts, NULL);
}

unsigned int sleep(unsigned int seconds)
{
	sleep_noted();
	struct timespec ts = { (time_t)seconds, 0 }, rem = { 0, 0 };
	if (syscall(SYS_nanosleep, &ts, &rem) == 0)
		return 0;
	return (unsigned int)rem.tv_sec + (rem.tv_nsec > 0);
}

int thrd_sleep(const struct timespec *req, struct timespec *rem);
int thrd_sleep(const struct timespec *req, struct timespec *rem)
{
	sleep_noted();
	if (syscall(SYS_nanosleep, req, rem) == 0)
		return 0;
	return errno == EINTR ? -1 : -2;
}

/* rand() and random(), as the like calls them, draw 0 every time while
 * like_post__exact_under_threads drives its likes (nothing else in this
 * program draws): a statement a like sends "one time in N" (rand() %
 * 10000 == 0: a sampled audit that reads the count back) is sent by every
 * like there, where the check counts statements, instead of by a like
 * nobody watches. Everywhere else they draw from a generator seeded by
 * the kernel, so the zeros are no sign of the test program a like could
 * choose its code by: outside that one load, such a like runs the code it
 * would run anywhere else, and the other checks see it. */
static atomic_bool rand_zero;
static _Atomic uint64_t rand_state;

static uint64_t rand_draw(void)
{
	uint64_t seed = atomic_load(&rand_state), none = 0;
	if (seed == 0) {
		if (syscall(SYS_getrandom, &seed, sizeof seed, 0) != (long)sizeof seed)
			seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15u;
		atomic_compare_exchange_strong(&rand_state, &none, seed | 1);
	}
	uint64_t z = atomic_fetch_add(&rand_state, 0x9e3779b97f4a7c15u) + 0x9e3779b97f4a7c15u;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;   /* splitmix64 */
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

int rand(void)
{
	return atomic_load(&rand_zero) ? 0 : (int)(rand_draw() >> 33);
}

long random(void)
{
	return atomic_load(&rand_zero) ? 0 : (long)(rand_draw() >> 33);
}

/* The same for every other source of random numbers an exercise may
 * call (runner/audit.c): a like that draws its "one time in N" with
 * rand_r() on a seed of its own, random_r(), the *rand48_r() family,
 * arc4random() or getrandom() sends it here too. */
int rand_r(unsigned int *seedp)
{
	uint64_t z = rand_draw();
	if (seedp)
		*seedp = (unsigned)z;
	return atomic_load(&rand_zero) ? 0 : (int)(z >> 33);
}

int random_r(struct random_data *buf, int32_t *result)
{
	(void)buf;
	*result = atomic_load(&rand_zero) ? 0 : (int32_t)(rand_draw() >> 33);
	return 0;
}

int lrand48_r(struct drand48_data *buf, long *result)
{
	(void)buf;
	*result = atomic_load(&rand_zero) ? 0 : (long)(rand_draw() >> 33);
	return 0;
}

int drand48_r(struct drand48_data *buf, double *result)
{
	(void)buf;
	*result = atomic_load(&rand_zero) ? 0.0 : (double)(rand_draw() >> 11) * 0x1.0p-53;
	return 0;
}

uint32_t arc4random(void)
{
	return atomic_load(&rand_zero) ? 0 : (uint32_t)(rand_draw() >> 32);
}

uint32_t arc4random_uniform(uint32_t upper)
{
	return atomic_load(&rand_zero) || upper == 0 ? 0 : (uint32_t)((rand_draw() >> 32) % upper);
}

ssize_t getrandom(void *buf, size_t len, unsigned flags)
{
	if (atomic_load(&rand_zero)) {
		memset(buf, 0, len);
		return (ssize_t)len;
	}
	return syscall(SYS_getrandom, buf, len, flags);
}

static enum what classify(const char *sql)
{
	if (lt_sql_is(sql, "INSERT"))
		return INSERT_;
	if (lt_sql_is(sql, "UPDATE"))
		return UPDATE_;
	if (lt_sql_is(sql, "BEGIN") || lt_sql_is(sql, "START TRANSACTION") ||
	    lt_sql_is(sql, "COMMIT") || lt_sql_is(sql, "ROLLBACK") || lt_sql_is(sql, "END"))
		return TX_STMT_;
	return OTHER_;
}

static void hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct trace *tr = arg;
	switch (ev) {
	case KIT_DB_STMT_START:  note(tr, classify(sql), t_ns); break;
	case KIT_DB_STMT_END:    note(tr, STMT_END_, t_ns); break;
	case KIT_DB_TX_BEGIN:    note(tr, BEGIN_, t_ns); break;
	case KIT_DB_TX_COMMIT:   note(tr, COMMIT_, t_ns); break;
	case KIT_DB_TX_ROLLBACK: note(tr, ROLLBACK_, t_ns); break;
	case KIT_DB_TX_STMT_START: note(tr, KIT_TX_, t_ns); break;
	default:                 break;   /* the ends of the kit's own, lock waits */
	}
}

static int check(void *arg, int64_t post_id, int64_t user_id)
{
	struct app *a = arg;
	a->post = post_id;
	a->user = user_id;
	atomic_fetch_add(&a->calls, 1);
	if (a->trace)
		note(a->trace, WORK_START_, kit_load_now_ns());
	if (a->work_ms > 0)
		util_sleep_ns((int64_t)a->work_ms * 1000000);
	if (a->trace)
		note(a->trace, WORK_END_, kit_load_now_ns());
	if (a->leave_errno)
		errno = a->leave_errno;
	return a->answer;
}

static int find(const struct trace *tr, enum what w, int from)
{
	for (int i = from; i < tr->n; i++)
		if (tr->what[i] == w)
			return i;
	return -1;
}

/* ---- the checks ---- */

static int like_as_many(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return like_post(th->db, 1, (int64_t)th->index * LIKES + th->iter + 1, NULL);
}

/* What a like's thread spends while the like holds the lock, outside
 * statements, by a measure that only grows (its CPU clock, its
 * voluntary context switches): from the end of BEGIN (SQLite, the whole
 * file's write lock) or of the counter's UPDATE (the servers) to the
 * start of COMMIT. held_window_step() follows one hook event with the
 * measure's reading now. */
struct held_window {
	bool lite, open, inside;
	int64_t mark, sum;
};

static void held_window_step(struct held_window *h, enum kit_db_event ev, const char *sql,
                             int64_t now);

/* Every like of a thread, watched through its connection's hook: a
 * statement between a counter UPDATE and the COMMIT that ends it. A check
 * that looks at a few likes misses one that does so now and then (every
 * 100th like reads the count back for a log line); 2,000 likes do not. */
struct shape {
	bool after_update;             /* an UPDATE started, its transaction not ended */
	int between;                   /* statements seen there */
	char sql[120];                 /* the first of them */
	int other;                     /* statements besides the like's own, anywhere */
	char other_sql[120];           /* the first of them */
	/* The thread's sleeps while its like holds the lock, outside
	 * statements: its voluntary context switches, which a mutex another
	 * like holds makes and a preemption does not. */
	struct held_window sleeps;
};

/* A like's own statements: its INSERT into likes, its UPDATE of posts,
 * and the words that open and end its transaction (a SAVEPOINT and its
 * RELEASE too). Anything else sent now and then (a NOTIFY, which makes
 * every commit of the database wait for one lock; a PRAGMA
 * wal_checkpoint, which waits for every reader of the file; a SELECT of
 * the count for a log) is work of the like's that the other likes pay
 * for. */
static bool like_statement(const char *sql)
{
	return (lt_sql_is(sql, "INSERT") && lt_sql_names(sql, "likes")) ||
	       (lt_sql_is(sql, "UPDATE") && lt_sql_names(sql, "posts")) ||
	       classify(sql) == TX_STMT_ || lt_sql_is(sql, "SAVEPOINT") || lt_sql_is(sql, "RELEASE");
}

static struct shape shapes[THREADS];

/* Sleeps allowed there over 2,000 likes: a page fault that reads from
 * disk or an allocator's lock met by chance may put a thread to sleep
 * once or twice; a lock the likes share does so again and again. */
#define SLEEPS_UNDER_LOCK 2

static int64_t thread_sleeps(void)
{
	struct rusage u;
	return getrusage(RUSAGE_THREAD, &u) == 0 ? u.ru_nvcsw : 0;
}

/* One hook event of s's statements: those between a counter UPDATE and
 * the COMMIT or ROLLBACK that ends it, and those besides the like's own. */
static void shape_watch(struct shape *s, enum kit_db_event ev, const char *sql)
{
	if (ev == KIT_DB_STMT_START && sql && !like_statement(sql) && s->other++ == 0)
		snprintf(s->other_sql, sizeof s->other_sql, "%s", sql);
	if (ev == KIT_DB_STMT_START && classify(sql) != TX_STMT_) {
		if (classify(sql) == UPDATE_ && !s->after_update) {
			s->after_update = true;
		} else if (s->after_update) {
			if (s->between++ == 0)
				snprintf(s->sql, sizeof s->sql, "%s", sql);
		}
	} else if (ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START ||
	           ev == KIT_DB_TX_COMMIT || ev == KIT_DB_TX_ROLLBACK) {
		s->after_update = false;   /* a COMMIT or ROLLBACK, the kit's or sent as SQL */
	}
}

static void shape_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct shape *s = arg;
	(void)t_ns;
	held_window_step(&s->sleeps, ev, sql, thread_sleeps());
	shape_watch(s, ev, sql);
}

static void like_post__counts_one_like(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	/* The check's answer is what it returns: one that says 0 after a
	 * C library call inside it failed on the way (errno left at ENOENT,
	 * as a lookup that missed leaves it) lets the like through. */
	struct app a = { .leave_errno = ENOENT };
	struct hot_row_app app = { check, &a };
	make_post(t);

	struct shape sh = { 0 };
	kit_db_set_hook(db, shape_hook, &sh);
	int rc = like_post(db, 1, 42, &app);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(sh.other == 0, "transaction", "like_post sent %d statement(s) besides the like's "
	          "own INSERT, UPDATE and the words of its transaction, the first \"%s\" "
	          "(hot_row.h: no other statement, not even at a process's first like: a table "
	          "made \"if it is not there yet\" needs rights an app's account need not have, "
	          "and is the setup's job)", sh.other, sh.other_sql);
	lt_expect(rc != HOT_ROW_REFUSED, "app-check", "the app's check answered 0 (leaving errno at "
	          "ENOENT, as a C library call inside it that failed on the way may) and like_post() "
	          "returned HOT_ROW_REFUSED: is errno read after the check? Its answer is what it "
	          "returns, nothing else");
	lt_expect_int(rc, 0, "like_post() of a new like");
	lt_expect_int(counter(t), 1, "posts.likes after one like");
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1 AND user_id = 42"), 1,
	              "rows in likes for (post 1, user 42)");
	lt_expect_int_hint(atomic_load(&a.calls), 1, "calls of the app's check per like", "app-check");
	lt_expect(a.post == 1 && a.user == 42, "app-check", "the app's check of a like of post 1 by "
	          "user 42 was given post %" PRId64 " and user %" PRId64 ": check(arg, post_id, "
	          "user_id), in that order, with app->arg", a.post, a.user);
	labtest_expect_fresh(t, "like_post__counts_one_like", "transaction",
	                     "a statement sent once, at the process's first like (a table made "
	                     "\"if not exists\", a setting, behind a static flag)");
}

/* A yes is a yes whatever errno the check leaves behind: every errno
 * value from 1 to 133 (EINTR, EAGAIN, ENOMEM, EIO, ETIMEDOUT among them),
 * each behind a 0 for a like of its own. Each like is written, returns 0
 * and asks the check once. A like that takes ENOMEM behind a yes for "its
 * yes cannot be trusted" (KIT_DB_ERR) or EINTR for "a yes cut short" (ask
 * again) reads errno, which hot_row.h says is no part of the answer. */
static void like_post__a_yes_is_a_yes_whatever_errno_says(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_post(t);
	enum { LAST_ERRNO = 133 };
	int wrong = 0, first = 0, first_rc = 0, first_calls = 0;
	for (int e = 1; e <= LAST_ERRNO; e++) {
		struct app a = { .leave_errno = e };
		struct hot_row_app app = { check, &a };
		int rc = like_post(db, 1, 1000 + e, &app);
		int calls = atomic_load(&a.calls);
		if ((rc != 0 || calls != 1) && wrong++ == 0) {
			first = e;
			first_rc = rc;
			first_calls = calls;
		}
	}
	lt_expect(wrong == 0, "app-check", "%d of %d likes whose check answered 0 and left errno "
	          "behind (1 to %d, one value a like) went wrong; the first, with errno %d (%s), "
	          "returned %d and asked the check %d time(s), expected 0 and once: is errno read "
	          "after a check that said yes (%s)? hot_row.h: its return value is its answer, "
	          "errno no part of it", wrong, LAST_ERRNO, LAST_ERRNO, first, strerror(first),
	          first_rc, first_calls, first == EINTR ? "a yes \"cut short by a signal\" asked "
	          "again" : first == ENOMEM ? "a yes \"that cannot be trusted\" after ENOMEM" :
	          "a failure taken from errno");
	lt_expect_int(counter(t), LAST_ERRNO, "posts.likes after 133 likes the check said yes to");
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1"), LAST_ERRNO,
	              "rows in likes after 133 likes the check said yes to");
}

/* A like whose connection broke before its COMMIT reached the database
 * (the kit's failpoint db-commit-conn-gone: the server rolls it back, and
 * kit_db_connected() then says 0 on the servers) returns KIT_DB_ERR, the
 * COMMIT's own code: KIT_DB_BUSY is for a lock wait that timed out, and
 * only for that (hot_row.h). A caller told "busy" for a broken
 * connection retries against a server that may be down, or a like that
 * was written. Nothing is counted; the like then works on another
 * connection. */
static void like_post__a_connection_gone_is_no_lock_wait(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	struct kit_db *conn = labtest_connect(t);
	kit_fp_clear();
	kit_fp_set("db-commit-conn-gone", KIT_FP_ONCE, 1);
	int rc = like_post(conn, 1, 42, NULL);
	int hits = kit_fp_count("db-commit-conn-gone");
	kit_fp_clear();
	kit_db_close(conn);
	lt_expect(hits >= 1, "transaction", "like_post sent no COMMIT through kit_db_commit or "
	          "kit_db_exec (it returned %d)", rc);
	lt_expect(rc == KIT_DB_ERR, "rollback", "like_post whose connection broke before its COMMIT "
	          "reached the database returned %d, expected KIT_DB_ERR (%d), the COMMIT's own "
	          "code%s", rc, KIT_DB_ERR, rc == KIT_DB_BUSY ? ": KIT_DB_BUSY is for a lock wait "
	          "that timed out, and only for that (is a connection kit_db_connected() says is "
	          "gone taken for one a retry will cure?)" : rc == 0 ? ": the like was never "
	          "written" : "");
	lt_expect_int(counter(t), 0, "posts.likes after a like whose COMMIT never arrived");
	lt_expect_int(like_post(labtest_db(t), 1, 42, NULL), 0, "the like again, on another "
	              "connection");
	lt_expect_int(counter(t), 1, "posts.likes after the like tried again");
}

/* On a machine loaded by other builds a SQLite writer can wait long for
 * the file lock (its waiters are not served in order): be patient, so a
 * failure here means a wrong count, not a slow machine. */
static int patient(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	memset(&shapes[th->index], 0, sizeof shapes[th->index]);
	shapes[th->index].sleeps.lite = kit_db_engine(th->db) == KIT_DB_SQLITE;
	kit_db_set_hook(th->db, shape_hook, &shapes[th->index]);
	/* The likers' own clocks (clock_gettime, time(), gettimeofday(),
	 * timespec_get()) run an hour a second here: a statement sent "once
	 * every 10 s" (a count read back for a metrics gauge, timed by the
	 * wall clock instead of drawn with rand()) is sent many times in
	 * these 2,000 likes, where every statement is counted. */
	lt_clock_fast_this_thread(3600);
	if (kit_db_engine(th->db) != KIT_DB_SQLITE)
		return 0;
	return kit_db_set_lock_timeout(th->db, 60000);
}

static void like_post__exact_under_threads(void **state)
{
	struct labtest *t = *state;
	struct kit_load_config c;
	struct kit_load_result r;
	make_post(t);

	labtest_load_config(t, &c, THREADS, LIKES);
	c.thread_init = patient;
	atomic_store(&rand_zero, true);
	int ran = kit_load_run(&c, like_as_many, NULL, &r);
	atomic_store(&rand_zero, false);
	lt_expect(ran == 0, NULL, "load run: %s", r.error);

	char what[700];
	snprintf(what, sizeof what, "likes that returned 0 (first error: %s)",
	         r.error[0] ? r.error : "none");
	lt_expect_int(r.ok, THREADS * LIKES, what);
	lt_expect_int_hint(counter(t), THREADS * LIKES,
	                   "posts.likes after 8 threads x 250 likes", "lost-update");
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM likes"), THREADS * LIKES,
	              "rows in likes after 8 threads x 250 likes");
	int between = 0;
	const char *first = "";
	for (int i = 0; i < THREADS; i++) {
		if (shapes[i].between && !between)
			first = shapes[i].sql;
		between += shapes[i].between;
	}
	lt_expect(between == 0, "counter-last", "over 2,000 likes, %d statement(s) ran between a "
	          "counter's UPDATE and the COMMIT that ended it, the first: \"%s\"; the row stays "
	          "locked for each of them. Is something done now and then after the UPDATE (a "
	          "count read back for a log every so many likes)? Nothing but COMMIT goes there, "
	          "on every like", between, first);
	long sleeps = 0;
	for (int i = 0; i < THREADS; i++)
		sleeps += (long)shapes[i].sleeps.sum;
	lt_say("voluntary context switches while a like held the lock, over 2,000 likes: %ld",
	       sleeps);
	lt_expect(sleeps <= SLEEPS_UNDER_LOCK, "counter-last", "over 2,000 likes in 8 threads, "
	          "their threads went to sleep %ld time(s) while a like held the lock (%s), "
	          "outside any statement (voluntary context switches, getrusage RUSAGE_THREAD): "
	          "a like waited there for something other than the row, a mutex another like "
	          "holds (a metrics table, a log, a cache), a condition, a file. Every other like "
	          "of the post waits through it (hot_row.h: nothing in it makes one like wait for "
	          "another but the counter's row lock). Take such locks before BEGIN or after "
	          "COMMIT", sleeps, t->engine == KIT_DB_SQLITE ? "SQLite: from BEGIN IMMEDIATE to "
	          "COMMIT, the whole file's write lock" : "from the counter's UPDATE to COMMIT");
	int other = 0;
	first = "";
	for (int i = 0; i < THREADS; i++) {
		if (shapes[i].other && !other)
			first = shapes[i].other_sql;
		other += shapes[i].other;
	}
	lt_expect(other == 0, "transaction", "over 2,000 likes, like_post sent %d statement(s) besides "
	          "its INSERT into likes, its UPDATE of posts and its BEGIN and COMMIT, the first: "
	          "\"%s\". Whatever else a like sends, the other likes pay for: a NOTIFY (or "
	          "pg_notify) in the transaction takes one lock of the whole database at COMMIT and "
	          "keeps it while the log is flushed, so every like of every post commits one at a "
	          "time; a PRAGMA wal_checkpoint waits for every reader and writer of the file; a "
	          "SELECT of the count for a log line is a round trip more. A like sends its two "
	          "writes in its own transaction, and nothing else, every time", other, first);
}

/* A statement sent every so many likes, by a count of the like's own
 * (every 10,000th like of the process, or of the thread, reads the count
 * back for a "post 1 reached 10,000 likes" line), or one like in so many
 * drawn by a generator of its own (a xorshift seeded from time(), which
 * neither the test program's rand() nor its clocks steer): the 2,000
 * likes of like_post__exact_under_threads, 250 a thread, never reach it.
 * Here one thread likes post 1 MANY_LIKES times on one connection, every
 * statement watched, on SQLite in memory (about 2 s; the mistake is the
 * C's, not the database's). Any count whose period is up to MANY_LIKES
 * likes, of the process, the thread or the connection, comes round at
 * least once. A draw of one like in 10,000 misses all 150,000 with
 * probability (1 - 1/10,000)^150,000 = e^-15, 3 in 10 million runs; one
 * in 1,000 with e^-150. */
#define MANY_LIKES 150000

static void watch_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)t_ns;
	shape_watch(arg, ev, sql);
}

static void like_post__no_statement_now_and_then(void **state)
{
	(void)state;
	struct kit_db *db;
	int rc = kit_db_open(&db, "sqlite::memory:");
	if (rc == 0)
		rc = kit_db_exec(db, HOT_ROW_SCHEMA, 0, NULL);
	if (rc == 0)
		rc = kit_db_exec(db, "INSERT INTO posts (id) VALUES (1)", 0, NULL);
	if (rc != 0) {
		char why[300];
		snprintf(why, sizeof why, "%s", kit_db_errmsg(db));
		kit_db_close(db);
		lt_expect(false, NULL, "an SQLite database in memory: %s", why);
	}

	struct shape sh = { 0 };
	kit_db_set_hook(db, watch_hook, &sh);
	int failed = 0, first_rc = 0;
	int64_t first_at = 0;               /* the like that sent the first statement more */
	for (int64_t i = 1; i <= MANY_LIKES; i++) {
		rc = like_post(db, 1, i, NULL);
		if (rc != 0 && failed++ == 0)
			first_rc = rc;
		if (first_at == 0 && (sh.other > 0 || sh.between > 0))
			first_at = i;
	}
	kit_db_set_hook(db, NULL, NULL);
	int64_t likes = -1;
	(void)kit_db_query_int(db, "SELECT likes FROM posts WHERE id = 1", 0, NULL, &likes);
	kit_db_close(db);

	lt_expect(failed == 0, NULL, "%d of %d likes of post 1 by new users failed, the first "
	          "with %d", failed, MANY_LIKES, first_rc);
	lt_expect_int(likes, MANY_LIKES, "posts.likes after 150,000 likes in one thread");
	lt_expect(sh.between == 0, "counter-last", "over 150,000 likes in one thread, %d "
	          "statement(s) ran between a counter's UPDATE and its COMMIT, the first at like "
	          "%" PRId64 ": \"%s\"; the row stays locked for each. Is something sent every so "
	          "many likes (a count kept in C: \"every 10,000th like logs the count\") or one "
	          "like in so many (a generator of its own)? hot_row.h: no other statement, now or "
	          "every so many likes", sh.between, first_at, sh.sql);
	lt_expect(sh.other == 0, "transaction", "over 150,000 likes in one thread, like_post sent "
	          "%d statement(s) besides its INSERT, its UPDATE and its transaction's words, the "
	          "first at like %" PRId64 ": \"%s\". Is something sent every so many likes (a "
	          "count kept in C) or one like in so many (a generator of its own)? hot_row.h: no "
	          "other statement, now or every so many likes", sh.other, first_at, sh.other_sql);
}

/* Eight likers at once, 3,000 likes each by as many users, an app check
 * that refuses the odd users after a spin that varies with the user (so
 * that the checks end at every offset of each other's). Each like must
 * act on its own check's answer: the 12,000 even users' likes are
 * written and none of the odd users'. An answer kept where every thread
 * shares it (a static "to spare the stack") is overwritten by another
 * like's between the check and its test now and then: a refused like is
 * written, or an allowed one refused. The mistake is the C's, not the
 * database's, so SQLite alone runs it (a second a run). */
#define ODD_LIKES 3000

static int check_odd_refused(void *arg, int64_t post_id, int64_t user_id)
{
	(void)arg, (void)post_id;
	for (volatile int i = 0; i < (int)(user_id % 97) * 50; i++)
		;
	return (int)(user_id & 1);
}

static int like_odd_refused(void *arg, struct kit_load_thread *th)
{
	static const struct hot_row_app app = { check_odd_refused, NULL };
	int64_t user = (int64_t)th->index * 100000 + th->iter + 1;
	int rc = like_post(th->db, 1, user, &app);
	atomic_int *wrong = arg;
	if (rc != ((user & 1) ? HOT_ROW_REFUSED : 0))
		atomic_fetch_add(wrong, 1);
	return rc == HOT_ROW_REFUSED ? 0 : rc;
}

static void like_post__refusals_under_threads(void **state)
{
	struct labtest *t = *state;
	struct kit_load_config c;
	struct kit_load_result r;
	atomic_int wrong;
	atomic_init(&wrong, 0);
	make_post(t);

	labtest_load_config(t, &c, THREADS, ODD_LIKES);
	lt_expect(kit_load_run(&c, like_odd_refused, &wrong, &r) == 0, NULL, "load run: %s",
	          r.error);
	int64_t odd = labtest_int(t, "SELECT count(*) FROM likes WHERE user_id % 2 = 1");
	int64_t rows = labtest_int(t, "SELECT count(*) FROM likes");
	int64_t likes = counter(t);
	lt_expect(odd == 0 && rows == THREADS * ODD_LIKES / 2 && likes == rows &&
	          atomic_load(&wrong) == 0, "transaction", "8 threads liked post 1 at once, 3,000 "
	          "users each, with an app check that refuses the odd users: %d like(s) returned "
	          "other than the check's answer said (0 or HOT_ROW_REFUSED), the likes table has "
	          "%lld rows, %lld of them by odd users, and the counter says %lld (expected "
	          "12,000, 0 and 12,000). Each like acts on its own check's answer: is it kept "
	          "where every thread shares it, a static or a global, and overwritten by another "
	          "like's between the check and its test? Keep it in a local variable",
	          atomic_load(&wrong), (long long)rows, (long long)odd, (long long)likes);
}

/* The two refusals the database makes, from every thread at once: each
 * iteration likes a post that does not exist, a new one each time
 * (HOT_ROW_NO_POST), then post 1 as a new user (0), then again as that
 * user (HOT_ROW_DUPLICATE). Anything the refusal paths keep where every
 * thread shares it (the last missing post in a static, "to log each
 * once"; an error text built in a buffer of the file's) is written by two
 * threads at once here: the race pass of `hotrow lab check` sees it,
 * whatever the answers. Every engine: SQLite's own mutexes, which every
 * connection of the process takes, order most such accesses for
 * ThreadSanitizer; a client library's connections share none. */
#define REFUSAL_ROUNDS 400

static int like_refused_both_ways(void *arg, struct kit_load_thread *th)
{
	atomic_int *wrong = arg;
	int64_t user = (int64_t)th->index * 100000 + th->iter + 1;
	int missing = like_post(th->db, 1000000 + user, user, NULL);
	int first = like_post(th->db, 1, user, NULL);
	int again = like_post(th->db, 1, user, NULL);
	if (missing != HOT_ROW_NO_POST || first != 0 || again != HOT_ROW_DUPLICATE)
		atomic_fetch_add(wrong, 1);
	return first;
}

static void like_post__refused_from_every_thread(void **state)
{
	struct labtest *t = *state;
	struct kit_load_result r;
	atomic_int wrong;
	atomic_init(&wrong, 0);
	make_post(t);
	struct kit_load_config c;
	labtest_load_config(t, &c, THREADS, REFUSAL_ROUNDS);
	lt_expect(kit_load_run(&c, like_refused_both_ways, &wrong, &r) == 0, NULL, "load run: %s",
	          r.error);
	int64_t rows = labtest_int(t, "SELECT count(*) FROM likes");
	lt_expect(atomic_load(&wrong) == 0 && rows == THREADS * REFUSAL_ROUNDS &&
	          counter(t) == rows, "transaction", "8 threads at once, 400 times each: a like of "
	          "a post that does not exist, then two likes of post 1 by a new user: %d "
	          "round(s) answered other than HOT_ROW_NO_POST, 0 and HOT_ROW_DUPLICATE; likes has "
	          "%lld rows and the counter says %lld (expected 3,200 and 3,200)",
	          atomic_load(&wrong), (long long)rows, (long long)counter(t));
}

static void like_post__duplicate_changes_nothing(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct app a = { 0 };
	struct hot_row_app app = { check, &a };
	make_post(t);

	lt_expect_int(like_post(db, 1, 7, &app), 0, "first like by user 7");
	struct trace tr = { 0 };
	kit_db_set_hook(db, hook, &tr);
	lt_expect_int_hint(like_post(db, 1, 7, &app), HOT_ROW_DUPLICATE,
	                   "second like by user 7 (HOT_ROW_DUPLICATE)", "duplicate");
	kit_db_set_hook(db, NULL, NULL);
	/* The INSERT is where a duplicate is found, before the counter is
	 * touched (§4): a duplicate tap that still UPDATEs the counter (by
	 * 0, "one code path": likes + the rows the INSERT added) takes the
	 * hot row's lock and queues every other like of the post behind a
	 * like that changes nothing. */
	lt_expect(find(&tr, UPDATE_, 0) < 0, "like-first", "the second like by user 7, a duplicate, "
	          "sent an UPDATE: the duplicate is known once the INSERT fails (or, with ON CONFLICT "
	          "DO NOTHING / INSERT IGNORE, adds no row), and the counter's row lock it takes after "
	          "that makes every other like of the post wait for a like that counts nothing; roll "
	          "back right there");
	/* "No other statement": the INSERT's KIT_DB_CONSTRAINT is the whole
	 * answer. A SELECT of the like after the rollback, "to be sure it was
	 * the primary key that said no", is a statement on every duplicate
	 * tap, and answers for a like another tap may still roll back. */
	int others = 0, inserts = 0;
	for (int i = 0; i < tr.n; i++) {
		others += tr.what[i] == OTHER_;
		inserts += tr.what[i] == INSERT_;
	}
	lt_expect(others == 0 && inserts == 1, "duplicate", "the second like by user 7, a duplicate, "
	          "sent %d INSERT(s) and %d statement(s) besides its transaction's words, its INSERT and "
	          "its UPDATE (expected 1 and 0: hot_row.h, no other statement). The INSERT's "
	          "KIT_DB_CONSTRAINT is the answer: is the like looked up again after it (\"was it "
	          "the primary key?\"), or the INSERT tried again?", inserts, others);
	/* "Calls app->check exactly once": for a like that turns out to be
	 * a duplicate too, and its no comes first. */
	lt_expect(atomic_load(&a.calls) == 2, "app-check", "two likes by user 7 (the second a "
	          "duplicate) called the app's check %d times, not once each: is the check skipped "
	          "for a like that is already there (looked up first)? like_post calls it exactly "
	          "once, before anything else", atomic_load(&a.calls));
	a.answer = 1;
	int rc = like_post(db, 1, 7, &app);
	lt_expect(rc == HOT_ROW_REFUSED, "app-check", "a third like by user 7, which the app's check "
	          "refuses, returned %d (expected HOT_ROW_REFUSED, %d): the check comes first, before "
	          "anything looks at the database, so its no is the answer even for a like that is "
	          "already there", rc, HOT_ROW_REFUSED);
	lt_expect_int_hint(counter(t), 1, "posts.likes after a duplicate second like", "duplicate");
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM likes"), 1, "rows in likes");
	lt_expect_int_hint(like_post(db, 1, 8, NULL), 0,
	                   "a like by user 8 on the same connection, after the duplicate",
	                   "rollback");
	lt_expect_int_hint(counter(t), 2, "posts.likes after user 8's like", "rollback");
}

static void like_post__unknown_post_changes_nothing(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_post(t);

	struct app a = { 0 };
	struct hot_row_app app = { check, &a };
	struct trace tr = { 0 };
	kit_db_set_hook(db, hook, &tr);
	lt_expect_int_hint(like_post(db, 999, 1, &app), HOT_ROW_NO_POST,
	                   "like of post 999, which does not exist (HOT_ROW_NO_POST)", "no-post");
	kit_db_set_hook(db, NULL, NULL);
	/* The UPDATE's count of 0 is the whole answer, and the ROLLBACK
	 * undoes the like's INSERT: a DELETE of the like and a COMMIT ("take
	 * our like back out") are statements besides the like's own, and
	 * commit a transaction for a like that is not there. */
	int others = 0, inserts = 0;
	for (int i = 0; i < tr.n; i++) {
		others += tr.what[i] == OTHER_;
		inserts += tr.what[i] == INSERT_;
	}
	lt_expect(others == 0 && inserts == 1 && find(&tr, COMMIT_, 0) < 0, "rollback",
	          "the like of post 999, which does not exist, sent %d INSERT(s) and %d statement(s) "
	          "besides its transaction's words, its INSERT and its UPDATE, and %s (expected 1, 0 "
	          "and a ROLLBACK: hot_row.h, no other statement). Is the like's row taken back out "
	          "with a DELETE and the transaction committed, instead of rolled back?", inserts,
	          others, find(&tr, COMMIT_, 0) < 0 ? "no COMMIT" : "a COMMIT");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM likes"), 0,
	                   "rows in likes after liking a missing post", "no-post");
	lt_expect(atomic_load(&a.calls) == 1, "app-check", "a like of post 999, which does not "
	          "exist, called the app's check %d times: it is called exactly once per like, "
	          "before anything else, a like of a missing post too (is the post looked up "
	          "first, to spare the check?)", atomic_load(&a.calls));
	a.answer = 1;
	int no = like_post(db, 998, 1, &app);
	lt_expect(no == HOT_ROW_REFUSED, "app-check", "a like of post 998, which does not exist, "
	          "that the app's check refuses: expected HOT_ROW_REFUSED (%d), got %d; the check "
	          "comes first, and its no is the answer whatever the database holds",
	          HOT_ROW_REFUSED, no);
	lt_expect_int_hint(like_post(db, 1, 1, NULL), 0,
	                   "a like of post 1 on the same connection, afterwards", "rollback");

	/* What was there can go, and what was missing can appear: every like
	 * asks the database, not what an earlier call on this connection
	 * found. */
	labtest_exec(t, "DELETE FROM posts WHERE id = 1");
	int rc = like_post(db, 1, 2, NULL);
	int64_t orphans = labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1 AND user_id = 2");
	lt_expect(rc == HOT_ROW_NO_POST && orphans == 0, "no-post",
	          "post 1 was deleted right after a like of it had counted; a like of it by user 2 on "
	          "the same connection then returned %d and wrote %lld like row(s) (expected "
	          "HOT_ROW_NO_POST, %d, and none): is a post seen once taken to exist for good, its "
	          "UPDATE's row count (kit_db_changes) no longer asked?", rc, (long long)orphans,
	          HOT_ROW_NO_POST);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (999)");
	rc = like_post(db, 999, 1, NULL);
	lt_expect(rc == 0 && labtest_int(t, "SELECT likes FROM posts WHERE id = 999") == 1, "no-post",
	          "post 999 was created after a like of it had found it missing; the same like on the "
	          "same connection then returned %d and the counter reads %lld (expected 0 and 1): "
	          "is a missing post remembered between calls?", rc,
	          (long long)labtest_int(t, "SELECT likes FROM posts WHERE id = 999"));
}

/* A check with no state of its own (its arg is NULL) that says no. */
static atomic_int stateless_calls;

static int stateless_no(void *arg, int64_t post_id, int64_t user_id)
{
	(void)arg, (void)post_id, (void)user_id;
	atomic_fetch_add(&stateless_calls, 1);
	return 1;
}

/* Every event of a connection: each statement sent shows as one or more. */
static void count_events(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)ev, (void)sql, (void)t_ns;
	++*(int *)arg;
}

static void like_post__refused_by_app_writes_nothing(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct app a = { .answer = 1 };
	struct hot_row_app app = { check, &a };
	make_post(t);

	/* A refused like sends nothing at all (hot_row.h): no ROLLBACK of a
	 * transaction it never began (which would end one the caller has
	 * open on the connection), no read of the counter "for the client" */
	int sent = 0;
	kit_db_set_hook(db, count_events, &sent);
	int refused = like_post(db, 1, 5, &app);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(sent == 0, "app-check", "a like the app's check refused sent %d statement "
	          "event(s) to the database; it must send none (hot_row.h: the check comes first, "
	          "and a refused like returns before it touches the connection). A ROLLBACK with no "
	          "transaction begun ends one the caller may have open; a read of the counter is a "
	          "round trip, and a read of the hot row, for every like a bot wave sends", sent);
	lt_expect_int_hint(refused, HOT_ROW_REFUSED,
	                   "like refused by the app's check (HOT_ROW_REFUSED)", "app-check");
	lt_expect_int_hint(atomic_load(&a.calls), 1, "calls of the app's check", "app-check");
	lt_expect_int_hint(counter(t), 0, "posts.likes after a refused like", "app-check");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM likes"), 0,
	                   "rows in likes after a refused like", "app-check");

	/* A check that needs no state has a NULL arg: it is a check all the
	 * same ("unless app or app->check is NULL"). */
	atomic_store(&stateless_calls, 0);
	struct hot_row_app bare = { stateless_no, NULL };
	int rc = like_post(db, 1, 6, &bare);
	lt_expect(rc == HOT_ROW_REFUSED && atomic_load(&stateless_calls) == 1, "app-check",
	          "an app whose check is set and whose arg is NULL, answering no: like_post() "
	          "returned %d and called the check %d times (expected HOT_ROW_REFUSED, once): "
	          "is the check skipped when app->arg is NULL? Only a NULL app or app->check "
	          "means no check", rc, atomic_load(&stateless_calls));
	lt_expect_int_hint(counter(t), 0, "posts.likes after a like refused by a check with a NULL "
	                   "arg", "app-check");
}

static void like_post__like_written_before_counter(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct trace tr = { 0 };
	make_post(t);

	kit_db_set_hook(db, hook, &tr);
	int rc = like_post(db, 1, 3, NULL);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect_int(rc, 0, "like_post()");

	int ins = find(&tr, INSERT_, 0), upd = find(&tr, UPDATE_, 0);
	lt_expect(ins >= 0 && upd >= 0, NULL, "expected an INSERT and an UPDATE, got %s%s%s",
	          ins < 0 ? "no INSERT" : "", ins < 0 && upd < 0 ? " and " : "",
	          upd < 0 ? "no UPDATE" : "");
	lt_expect(ins < upd, "like-first",
	          "expected the like's INSERT before the counter's UPDATE, got the UPDATE first");
	/* and nothing else: four statements in all, no ROLLBACK after the
	 * COMMIT (a cleanup path that rolls back on every way out sends one,
	 * and PostgreSQL answers it with a warning, for every like) */
	int starts = 0;
	for (int i = 0; i < tr.n; i++)
		starts += tr.what[i] == INSERT_ || tr.what[i] == UPDATE_ || tr.what[i] == OTHER_ ||
		          tr.what[i] == TX_STMT_ || tr.what[i] == KIT_TX_;
	lt_expect(starts == 4 && find(&tr, ROLLBACK_, 0) < 0, "rollback", "a like that committed "
	          "sent %d statements%s; expected 4: BEGIN, its INSERT, its UPDATE, COMMIT, and no "
	          "other (hot_row.h)", starts, find(&tr, ROLLBACK_, 0) >= 0 ? ", a ROLLBACK among "
	          "them: does one cleanup path roll back on every way out, after a COMMIT too?" : "");
}

/* How long the test's own UPDATE + COMMIT of another post holds its row,
 * measured the same way as a like's (UPDATE start to COMMIT end) on the
 * same connection: the baseline a like's hold is compared with. */
static int64_t bare_hold(struct kit_db *db)
{
	struct trace tr = { 0 };
	kit_db_set_hook(db, hook, &tr);
	int rc = kit_db_begin(db);
	if (rc == 0)
		rc = kit_db_exec(db, "UPDATE posts SET likes = likes + 1 WHERE id = 2", 0, NULL);
	if (rc == 0)
		rc = kit_db_commit(db);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0, NULL, "the test's own UPDATE of post 2: %s", labtest_why(db));
	int upd = find(&tr, UPDATE_, 0), commit = find(&tr, COMMIT_, 0);
	lt_expect(upd >= 0 && commit > upd, NULL, "the test's own UPDATE + COMMIT left no trace");
	return tr.t_ns[commit] - tr.t_ns[upd];
}

#define HOLD_MARGIN_MS 5           /* half of the smallest pause the check must see */
#define HOLD_ROUNDS    20          /* most likes timed; stops early once one is fast */
#define OWN_MARGIN_US  500         /* half of a 1 ms pause: the like's own time under the lock */

/* While a like holds the lock: from the event where the lock is taken
 * (SQLite: BEGIN IMMEDIATE has the file; the servers: the counter's
 * UPDATE has the row) to the one where COMMIT starts. False when the
 * trace has no such stretch. */
static bool locked_span(const struct trace *tr, enum kit_db_engine engine, int begin, int upd,
                        int commit, int *from, int *to)
{
	*from = begin;
	if (engine != KIT_DB_SQLITE)
		*from = find(tr, STMT_END_, upd);
	*to = -1;
	for (int i = commit - 1; i > upd && *to < 0; i--)
		if (tr->what[i] == KIT_TX_ || tr->what[i] == TX_STMT_)
			*to = i;
	return *from >= 0 && *to >= 0 && *from <= *to;
}

/* The like's own time while it holds the lock (the events from to to,
 * locked_span()'s), less the time spent inside statements. What is left
 * is the C code between them: a few microseconds for kit_db_changes()
 * and an if, and all of any sleep, log call or pause, however short,
 * that the UPDATE-to-COMMIT margin of 5 ms lets through. */
static int64_t own_time_locked(const struct trace *tr, int from, int to)
{
	int64_t own = 0;
	bool inside = false;
	for (int i = from; i < to; i++) {
		enum what w = tr->what[i];
		if (w == INSERT_ || w == UPDATE_ || w == OTHER_ || w == TX_STMT_ || w == KIT_TX_)
			inside = true;
		else if (w == STMT_END_)
			inside = false;
		if (!inside)
			own += tr->t_ns[i + 1] - tr->t_ns[i];
	}
	return own;
}

/* stdout and stderr, each in a file of its own while a like runs, so
 * the trace sees how much was written at each event. A write to a
 * terminal, a pipe or a log shipper waits whenever its reader does; to a
 * file it does not wait, and is seen all the same. What was captured is
 * passed on to the real stdout and stderr afterwards. Output that stdio
 * still buffers (a printf with no newline flushed) is not seen. */
struct capture {
	int saved[2], file[2];
};

static int scratch_fd(void)
{
	FILE *f = tmpfile();
	int fd = f ? dup(fileno(f)) : -1;
	if (f)
		fclose(f);
	return fd;
}

static bool capture_start(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	for (int i = 0; i < 2; i++) {
		c->file[i] = scratch_fd();
		c->saved[i] = c->file[i] < 0 ? -1 : dup(i + 1);
		if (c->saved[i] < 0 || dup2(c->file[i], i + 1) < 0) {
			if (c->saved[i] >= 0)
				close(c->saved[i]);
			if (c->file[i] >= 0)
				close(c->file[i]);
			for (int j = 0; j < i; j++) {
				dup2(c->saved[j], j + 1);
				close(c->saved[j]);
				close(c->file[j]);
			}
			return false;
		}
	}
	return true;
}

static void capture_stop(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	for (int i = 0; i < 2; i++) {
		dup2(c->saved[i], i + 1);
		close(c->saved[i]);
		char buf[4096];
		ssize_t n;
		if (lseek(c->file[i], 0, SEEK_SET) == 0)
			while ((n = read(c->file[i], buf, sizeof buf)) > 0)
				if (write(i + 1, buf, (size_t)n) != n)
					break;
		close(c->file[i]);
	}
}

/* One like that fails (a duplicate tap, a post that is not there, its
 * INSERT refused), traced with stdout and stderr captured: the bytes
 * written from its BEGIN to its ROLLBACK, -1 when the trace shows no
 * such pair (another check says what went wrong then). On SQLite the
 * whole file's write lock is held all that time; on the servers the
 * like's own key, which a second tap of the same user waits for. */
static int64_t failed_like_output(struct kit_db *db, int64_t post, int64_t user, int refuse_at)
{
	struct trace tr;
	struct app a = { .trace = NULL };
	struct hot_row_app app = { check, &a };
	memset(&tr, 0, sizeof tr);
	struct capture cap;
	tr.out_on = capture_start(&cap);
	if (!tr.out_on)
		return -1;
	kit_db_set_hook(db, hook, &tr);
	if (refuse_at > 0)
		lt_step_arm(LT_STEP_FAILS, refuse_at);
	(void)like_post(db, post, user, &app);
	if (refuse_at > 0)
		(void)lt_step_disarm();
	kit_db_set_hook(db, NULL, NULL);
	capture_stop(&cap);
	int begin = find(&tr, BEGIN_, 0), end = begin < 0 ? -1 : find(&tr, ROLLBACK_, begin);
	return end < 0 ? -1 : tr.out[end] - tr.out[begin];
}

static void like_post__counter_held_briefly(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct trace tr;
	struct app a = { .work_ms = WORK_MS, .trace = &tr };
	struct hot_row_app app = { check, &a };
	int64_t best_ns = INT64_MAX, base_ns = INT64_MAX, own_ns = INT64_MAX, wrote = 0;
	int rounds = 0, yields = 0, sleeps = 0;
	make_post(t);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (2)");

	/* Each round times the bare UPDATE + COMMIT and then a like, so both
	 * see the same load; the fastest of each is compared. */
	while (rounds < HOLD_ROUNDS) {
		int64_t base = bare_hold(db);
		if (base < base_ns)
			base_ns = base;

		memset(&tr, 0, sizeof tr);
		struct capture cap;
		tr.out_on = capture_start(&cap);
		kit_db_set_hook(db, hook, &tr);
		yield_trace = &tr;
		int rc = like_post(db, 1, ++rounds, &app);
		yield_trace = NULL;
		kit_db_set_hook(db, NULL, NULL);
		if (tr.out_on)
			capture_stop(&cap);
		lt_expect_int(rc, 0, "like_post() with a 20 ms app check");

		int begin = find(&tr, BEGIN_, 0), upd = find(&tr, UPDATE_, 0);
		int commit = find(&tr, COMMIT_, upd < 0 ? 0 : upd);
		lt_expect(begin >= 0 && commit >= 0, "transaction",
		          "expected BEGIN ... COMMIT around the writes, got %s%s%s (README §4: BEGIN or "
		          "START TRANSACTION, then COMMIT or END; a SAVEPOINT ... RELEASE is not one)",
		          begin < 0 ? "no BEGIN" : "", begin < 0 && commit < 0 ? " and " : "",
		          commit < 0 ? "no COMMIT after the UPDATE" : "");
		lt_expect(upd >= 0, NULL, "expected an UPDATE of the counter, got none");

		int work = find(&tr, WORK_START_, 0);
		lt_expect(work >= 0 && work < begin, "work-outside",
		          "expected the app's check to run before BEGIN, got it %s",
		          work < 0 ? "not called" : "inside the transaction");
		int between = 0;
		for (int i = upd + 1; i < commit; i++)
			between += tr.what[i] == INSERT_ || tr.what[i] == UPDATE_ || tr.what[i] == OTHER_;
		lt_expect(between == 0, "counter-last",
		          "expected nothing between the counter's UPDATE and COMMIT, got %d statement(s)",
		          between);

		int64_t span = tr.t_ns[commit] - tr.t_ns[upd];
		if (span < best_ns)
			best_ns = span;
		int from, to;
		bool locked = locked_span(&tr, t->engine, begin, upd, commit, &from, &to);
		lt_expect(locked, NULL, "the like's trace has no COMMIT after its UPDATE");
		int64_t own = own_time_locked(&tr, from, to);
		if (own < own_ns)
			own_ns = own;
		if (tr.out_on)
			wrote += tr.out[to] - tr.out[from];
		for (int i = from; i < to; i++) {
			yields += tr.what[i] == YIELD_;
			sleeps += tr.what[i] == SLEEP_;
		}
		if (rounds >= 5 && best_ns < base_ns + HOLD_MARGIN_MS * 1000000LL &&
		    own_ns < OWN_MARGIN_US * 1000LL)
			break;
	}
	/* The likes that fail hold their locks from BEGIN to ROLLBACK: a
	 * message written before the ROLLBACK ("ROLLBACK would overwrite
	 * kit_db_errmsg") waits for its reader with them held, on every
	 * duplicate tap of a hot post. */
	static const char *const failed[] = { "a duplicate tap", "a like of a post that is not "
	                                      "there", "a like whose INSERT was refused" };
	int64_t fail_wrote[3] = {
		failed_like_output(db, 1, 1, 0),
		failed_like_output(db, 999999, 1, 0),
		failed_like_output(db, 2, 424242, 2),
	};
	for (int i = 0; i < 3; i++)
		lt_expect(fail_wrote[i] <= 0, "counter-last", "%s wrote %lld bytes to stdout or stderr "
		          "between its BEGIN and its ROLLBACK (%s): a write waits whenever its reader "
		          "does (a full pipe, a paused terminal, a slow log shipper), and on a hot post "
		          "the next likes wait with it. Keep the message (kit_db_errmsg into a buffer of "
		          "your own) and write it after the ROLLBACK", failed[i], (long long)fail_wrote[i],
		          t->engine == KIT_DB_SQLITE ? "SQLite: the whole file's write lock" :
		          "the like's key, which the user's next tap waits for");

	/* Whatever it costs here, a write waits for its reader elsewhere. */
	lt_expect(wrote == 0, "counter-last",
	          "while a like held the lock (%s), it wrote %lld bytes to stdout or stderr in %d "
	          "likes: a write waits whenever its reader does (a full pipe, a paused terminal, a "
	          "slow log shipper), and every other like of the post waits with it. Log before "
	          "BEGIN or after COMMIT", t->engine == KIT_DB_SQLITE ? "SQLite: from BEGIN "
	          "IMMEDIATE to COMMIT" : "from the counter's UPDATE to COMMIT", (long long)wrote,
	          rounds);
	/* However short it is here, a yield on a busy machine is a time slice. */
	lt_expect(yields == 0, "counter-last",
	          "while a like held the lock (%s), it called sched_yield() %d time(s) in %d likes: "
	          "it gave its CPU to another thread while every other like of the post waited for "
	          "the row (on a busy machine, a whole time slice). Nothing waits there, not even "
	          "politely: COMMIT right after the UPDATE", t->engine == KIT_DB_SQLITE ? "SQLite: "
	          "from BEGIN IMMEDIATE to COMMIT" : "from the counter's UPDATE to COMMIT", yields,
	          rounds);
	/* However short it is, a sleep there is a pause every other like
	 * waits through; the own-time figure below can miss one of 0.3 ms. */
	lt_expect(sleeps == 0, "counter-last",
	          "while a like held the lock (%s), it slept (nanosleep, usleep, clock_nanosleep, "
	          "sleep or thrd_sleep) %d time(s) in %d likes: however short the pause (\"let the "
	          "next likes reach their COMMIT and share one flush\"), every other like of the post "
	          "waits through it with the row locked. Sleep, if at all, before BEGIN or after "
	          "COMMIT", t->engine == KIT_DB_SQLITE ? "SQLite: from BEGIN IMMEDIATE to COMMIT" :
	          "from the counter's UPDATE to COMMIT", sleeps, rounds);
	/* The fastest of up to 20: a busy machine that preempts the like
	 * between two statements now and then does not fail it; a pause that
	 * is in the code fails every try. */
	lt_expect(own_ns < OWN_MARGIN_US * 1000LL, "counter-last",
	          "while a like held the lock (%s), its own code ran for %.3f ms between the "
	          "statements (the fastest of %d likes; expected under %.1f ms): something that is "
	          "not a statement waits there, a sleep, a log call, a pause before COMMIT (\"group "
	          "commit\"). Every other like of the post waits for it too",
	          t->engine == KIT_DB_SQLITE ? "SQLite: from BEGIN IMMEDIATE to COMMIT, the "
	          "whole file's write lock" : "from the counter's UPDATE to COMMIT",
	          (double)own_ns / 1e6, rounds, OWN_MARGIN_US / 1000.0);
	/* A like's UPDATE-to-COMMIT is the same two statements as the bare
	 * one: on a loaded machine one of up to 20 tries comes within a few
	 * ms of the fastest bare one. Anything that waits in between (a
	 * sleep, a log call, the app's check) adds to every try. */
	lt_expect(best_ns < base_ns + HOLD_MARGIN_MS * 1000000LL, "counter-last",
	          "expected the counter's row lock held about as long as a bare UPDATE and COMMIT "
	          "(%.2f ms here, + %d ms margin), got %.2f ms (fastest of %d likes, UPDATE start "
	          "to COMMIT end): something waits between the UPDATE and the COMMIT",
	          (double)base_ns / 1e6, HOLD_MARGIN_MS, (double)best_ns / 1e6, rounds);
}

/* One hook event of a held_window, the measure read now: the gaps
 * between statements from the lock's start to COMMIT are added up. */
static void held_window_step(struct held_window *h, enum kit_db_event ev, const char *sql,
                             int64_t now)
{
	if (ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START) {
		if (h->open && !h->inside)
			h->sum += now - h->mark;
		h->inside = true;
		if (sql && (lt_sql_is(sql, "COMMIT") || lt_sql_is(sql, "END") ||
		            lt_sql_is(sql, "ROLLBACK")))
			h->open = false;
	} else if (ev == KIT_DB_STMT_END || ev == KIT_DB_TX_STMT_END) {
		h->inside = false;
		h->mark = now;
		if (!h->lite && ev == KIT_DB_STMT_END && sql && classify(sql) == UPDATE_)
			h->open = true;
	} else if (ev == KIT_DB_TX_BEGIN && h->lite) {
		h->open = true;
		h->mark = now;
	}
}

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The like's own CPU while it holds the lock, by the clock of its own
 * thread, which a preemption does not move. An honest like spends a few
 * microseconds there (kit_db_changes() and an if), every time. */
static void cpu_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)t_ns;
	held_window_step(arg, ev, sql, thread_cpu_ns());
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

#define CPU_LIKES 1000
#define CPU_OUTLIER_US 500      /* a like's own CPU under the lock past this */
#define CPU_MEDIAN_US 100

/* Work done under the lock now and then, or in every like, that is
 * neither a statement, a byte written nor a sleep: a gauge sorted "one
 * like in 128", a spin of 0.2 ms "so the next likes share a flush".
 * like_post__counter_held_briefly looks at the fastest of a few likes,
 * which such work never reaches. Here 1,000 likes in one thread, each
 * like's own CPU under the lock by its thread's clock: the median under
 * 0.1 ms, and no two of them over 0.5 ms (one may be an interrupt's time
 * charged to the thread). */
static void like_post__no_work_under_the_lock_now_and_then(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct app a = { 0 };
	struct hot_row_app app = { check, &a };
	static int64_t own[CPU_LIKES];
	int over = 0, failed = 0;
	int64_t worst = 0;
	make_post(t);
	for (int i = 0; i < CPU_LIKES; i++) {
		struct held_window w = { .lite = t->engine == KIT_DB_SQLITE };
		kit_db_set_hook(db, cpu_hook, &w);
		int rc = like_post(db, 1, i + 1, &app);
		kit_db_set_hook(db, NULL, NULL);
		failed += rc != 0;
		own[i] = w.sum;
		over += w.sum > CPU_OUTLIER_US * 1000LL;
		if (w.sum > worst)
			worst = w.sum;
	}
	lt_expect(failed == 0, NULL, "%d of %d likes of post 1 by new users failed (%s)", failed,
	          CPU_LIKES, labtest_why(db));
	qsort(own, CPU_LIKES, sizeof own[0], cmp_i64);
	int64_t median = own[CPU_LIKES / 2];
	lt_say("own CPU under the lock over %d likes: median %.1f us, worst %.1f us, %d over "
	       "%d us", CPU_LIKES, (double)median / 1e3, (double)worst / 1e3, over, CPU_OUTLIER_US);
	lt_expect(over < 2 && median < CPU_MEDIAN_US * 1000LL, "counter-last",
	          "while a like held the lock (%s), its own code used the CPU for %.3f ms at the "
	          "median of %d likes, and %d of them over %.1f ms (the worst %.3f ms), by its "
	          "thread's clock, which a busy machine does not move: work runs there that is no "
	          "statement, %s. Every other like of the post waits through it. Do it before BEGIN "
	          "or after COMMIT", t->engine == KIT_DB_SQLITE ? "SQLite: from BEGIN IMMEDIATE to "
	          "COMMIT, the whole file's write lock" : "from the counter's UPDATE to COMMIT",
	          (double)median / 1e6, CPU_LIKES, over, CPU_OUTLIER_US / 1000.0,
	          (double)worst / 1e6, median >= CPU_MEDIAN_US * 1000LL ? "in every like (a spin "
	          "\"so the next likes share a flush\", a gauge worked out)" : "now and then (a "
	          "gauge or a percentile sorted one like in N, a buffer compacted)");
}

/* PostgreSQL: the like finds its post through the primary key. Among
 * 20,000 posts (analyzed), a like must not read the whole table: a
 * comparison the index cannot serve (id = $1::numeric, "no int64 cut
 * short"; id + 0) makes the UPDATE scan every post, and it goes on
 * reading the rest after it has locked the counter's row, which stays
 * locked for the whole scan. The statistics' seq_scan of posts may not
 * move over three likes. */
static void like_post__finds_the_post_by_its_index(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, HOT_ROW_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) SELECT g FROM generate_series(1, 20000) g");
	labtest_exec(t, "ANALYZE posts");
	int64_t before = lt_pg_seq_scans(t, "posts");
	int rc = 0;
	for (int u = 1; u <= 3 && rc == 0; u++)
		rc = like_post(db, 777, u, NULL);
	int64_t after = lt_pg_seq_scans(t, "posts");
	lt_expect(rc == 0, NULL, "like_post() of post 777 among 20,000: %d (%s)", rc, labtest_why(db));
	lt_expect(before >= 0 && after == before, "counter-last", "three likes of post 777 among "
	          "20,000 posts scanned the whole posts table %lld time(s) (pg_stat_user_tables."
	          "seq_scan): a comparison the primary key cannot serve (id = $1::numeric, a cast "
	          "of the column, id + 0) reads every post, and the UPDATE goes on reading the rest "
	          "after it has locked the counter's row, which stays locked for the whole scan. "
	          "Compare id with the parameter as it is (id = $1)", (long long)(after - before));
}

/* ---- where the counter row is first locked (PostgreSQL) ---- */

struct probe {
	struct kit_db *other;          /* a second connection that tries the row */
	int inserts, locked_at_insert; /* INSERTs seen, and how many found the row locked */
	int updates, locked_after_update;
	int locked_at_update;          /* UPDATEs that found the row locked as they started */
	char error[300];
};

/* Can another connection lock post 1 right now? 1 if it is locked by
 * someone else, 0 if not, -1 on an error (noted in p->error). */
static int row_locked(struct probe *p)
{
	int rc = kit_db_exec(p->other, "BEGIN", 0, NULL);
	if (rc == 0)
		rc = kit_db_exec(p->other, "SELECT 1 FROM posts WHERE id = 1 FOR UPDATE NOWAIT", 0, NULL);
	if (rc != 0 && rc != KIT_DB_BUSY && !p->error[0])
		snprintf(p->error, sizeof p->error, "%s", kit_db_errmsg(p->other));
	kit_db_exec(p->other, "ROLLBACK", 0, NULL);
	return rc == KIT_DB_BUSY ? 1 : rc == 0 ? 0 : -1;
}

static void probe_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct probe *p = arg;
	(void)t_ns;
	if (ev == KIT_DB_STMT_START && classify(sql) == INSERT_) {
		p->inserts++;
		p->locked_at_insert += row_locked(p) == 1;
	} else if (ev == KIT_DB_STMT_START && classify(sql) == UPDATE_) {
		p->locked_at_update += row_locked(p) == 1;
	} else if (ev == KIT_DB_STMT_END && classify(sql) == UPDATE_) {
		p->updates++;
		p->locked_after_update += row_locked(p) == 1;
	}
}

static struct kit_db *probe_conn;  /* closed by teardown_probe, also on failure */

static int teardown_probe(void **state)
{
	kit_db_close(probe_conn);
	probe_conn = NULL;
	return labtest_teardown(state);
}

/* A check that needs a server's row lock, PostgreSQL's or MariaDB's: its
 * entries say so (the runner reads them), with the teardown above. */
#define SERVERS_ONLY(f) \
	{ #f "/postgres", f, labtest_setup_pg, teardown_probe, NULL }, \
	{ #f "/mysql", f, labtest_setup_mysql, teardown_probe, NULL }

/* A check of code that is the same on every engine, run once. */
#define SQLITE_ONLY(f) { #f "/sqlite", f, labtest_setup_sqlite, labtest_teardown, NULL }
#define PG_ONLY(f) { #f "/postgres", f, labtest_setup_pg, labtest_teardown, NULL }

/* While the like's INSERT starts, a second connection tries to lock the
 * counter row with NOWAIT: it must get it (nobody holds it yet). Right
 * after the counter's UPDATE the same try must fail, which shows the
 * probe sees the lock when it is there. */
/* On PostgreSQL and MariaDB only: on SQLite BEGIN IMMEDIATE locks the
 * whole file for the whole transaction, so there is no row lock to look
 * for. */
static void like_post__counter_unlocked_during_insert(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct probe p = { .other = probe_conn = labtest_connect(t) };
	make_post(t);

	kit_db_set_hook(db, probe_hook, &p);
	for (int user = 1; user <= 3; user++)
		lt_expect_int(like_post(db, 1, user, NULL), 0, "like_post()");
	kit_db_set_hook(db, NULL, NULL);

	lt_expect(p.error[0] == '\0', NULL, "the probe connection failed: %s", p.error);
	lt_expect(p.inserts >= 3 && p.updates >= 3, NULL,
	          "expected an INSERT and an UPDATE per like, got %d and %d in 3 likes",
	          p.inserts, p.updates);
	lt_expect(p.locked_after_update == p.updates, "transaction",
	          "expected the counter row locked from its UPDATE to the COMMIT, but another "
	          "connection could lock it right after %d of %d UPDATEs",
	          p.updates - p.locked_after_update, p.updates);
	lt_expect(p.locked_at_insert == 0, "lock-late",
	          "expected the counter row free while the like is inserted, got it locked when "
	          "%d of %d INSERTs started: something before the INSERT (a SELECT ... FOR UPDATE?) "
	          "took the counter's lock", p.locked_at_insert, p.inserts);
	lt_expect(p.locked_at_update == 0, "lock-late",
	          "expected the counter row free until its UPDATE, got it locked when %d of %d "
	          "UPDATEs started: a statement between the INSERT and the UPDATE (a SELECT ... FOR "
	          "UPDATE of the count?) locked it a round trip early", p.locked_at_update, p.updates);
}

/* ---- the mistake classes: races, failing steps, edges of the domain ---- */

static int like_as_user_7(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	(void)who;
	return like_post(db, 1, 7, NULL);
}

/* Two connections like post 1 as user 7 at once, held together before
 * every statement in turn (and one held until the other has run k - 1
 * statements): whatever the interleaving, one like counts and the other
 * is HOT_ROW_DUPLICATE. A duplicate looked up in C (SELECT, then INSERT
 * ... ON CONFLICT DO NOTHING) lets both through when both look first. */
static void like_post__same_user_twice_at_once(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	struct lt_gate *g = lt_gate_open(t, 2);

	for (int k = 1; k <= 12; k++) {
		for (int late = 0; late < 2; late++) {
			int stops[2] = { k, late ? 1 : k };   /* late: caller 1 waits at its first */
			labtest_exec(t, "DELETE FROM likes; UPDATE posts SET likes = 0");
			lt_gate_run(g, NULL, stops, like_as_user_7, NULL);
			if (!lt_gate_held(g, 0))
				goto swept;
			int a = lt_gate_rc(g, 0), b = lt_gate_rc(g, 1);
			lt_expect((a == 0 && b == HOT_ROW_DUPLICATE) || (a == HOT_ROW_DUPLICATE && b == 0),
			          "race-duplicate",
			          "user 7 liked post 1 twice at once (one caller held before its statement %d, "
			          "the other before its %d): expected one 0 and one HOT_ROW_DUPLICATE (%d), "
			          "got %d and %d", stops[0], stops[1], HOT_ROW_DUPLICATE, a, b);
			lt_expect_int_hint(counter(t), 1,
			                   "posts.likes after the same like twice at once: a duplicate "
			                   "looked up before the INSERT lets both callers count",
			                   "race-duplicate");
			lt_expect_int(labtest_int(t, "SELECT count(*) FROM likes"), 1, "rows in likes");
		}
	}
swept:
	lt_gate_close(g);
}

static int like_as_user_7_or_8(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	return like_post(db, 1, 7 + who, NULL);
}

/* Users 7 and 8 like post 1 at once, both held before each statement in
 * turn (and one held until the other has run k - 1): both likes count,
 * whatever the interleaving. A counter computed from what a statement
 * reads (SELECT count(*) FROM likes, or the count read first) instead of
 * added to in place can miss the other's like when both read before
 * either commits. */
static void like_post__two_users_at_once(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	struct lt_gate *g = lt_gate_open(t, 2);
	for (int k = 1; k <= 12; k++) {
		for (int late = 0; late < 2; late++) {
			int stops[2] = { k, late ? 1 : k };
			labtest_exec(t, "DELETE FROM likes; UPDATE posts SET likes = 0");
			lt_gate_run(g, NULL, stops, like_as_user_7_or_8, NULL);
			if (!lt_gate_held(g, 0))
				goto swept;
			int a = lt_gate_rc(g, 0), b = lt_gate_rc(g, 1);
			int64_t n = counter(t);
			lt_expect(a == 0 && b == 0 && n == 2, "lost-update", "users 7 and 8 liked post 1 at "
			          "once (one held before its statement %d, the other before its %d): "
			          "expected 0 and 0 and posts.likes 2, got %d and %d and %lld%s", stops[0],
			          stops[1], a, b, (long long)n, a == 0 && b == 0 && n == 1 ? ": one like was "
			          "lost; the counter must be added to in place (likes = likes + 1), not "
			          "set from something read before the other's like committed" : "");
		}
	}
swept:
	lt_gate_close(g);
}

/* Caller 0 likes post 1 as user 7, caller 1 post 2 as user 8. */
static int like_1_or_2(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	return like_post(db, 1 + who, 7 + who, NULL);
}

/* A like of post 1 held before each of its statements in turn while a
 * like of post 2 by another user runs whole on another connection: each
 * like lands on its own post (counters 1 and 1, rows (1, 7) and (2, 8)).
 * Anything a like keeps between calls in the process (the ids' text in
 * a static buffer, formatted once "for a hot post") is overwritten by
 * the other like while the first is under way, and the first then
 * writes the other's post or user. */
static void like_post__two_posts_interleaved(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (2)");
	struct lt_gate *g = lt_gate_open(t, 2);
	int k;
	for (k = 1; k <= 12; k++) {
		labtest_exec(t, "DELETE FROM likes; UPDATE posts SET likes = 0");
		lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, like_1_or_2, NULL);
		if (!lt_gate_held(g, 0))
			break;
		int a = lt_gate_rc(g, 0), b = lt_gate_rc(g, 1);
		int64_t p1 = labtest_int(t, "SELECT likes FROM posts WHERE id = 1");
		int64_t p2 = labtest_int(t, "SELECT likes FROM posts WHERE id = 2");
		int64_t right = labtest_int(t, "SELECT count(*) FROM likes WHERE (post_id = 1 AND "
		                               "user_id = 7) OR (post_id = 2 AND user_id = 8)");
		int64_t rows = labtest_int(t, "SELECT count(*) FROM likes");
		lt_expect(a == 0 && b == 0 && p1 == 1 && p2 == 1 && right == 2 && rows == 2,
		          "shared-state", "user 7 liked post 1 (held before its statement %d) while user 8 liked post 2 "
		          "on another connection: returned %d and %d, counters %lld and %lld, %lld like "
		          "row(s) of which %lld right (expected 0, 0, 1, 1, 2 rows, both right): does "
		          "like_post keep something between calls, shared by every thread (an id's text "
		          "in a static buffer), that the other like overwrote?", k, a, b, (long long)p1,
		          (long long)p2, (long long)rows, (long long)right);
	}
	lt_expect(k > 1, "shared-state", "a like of post 1 ran no statement: got %d",
	          lt_gate_rc(g, 0));
	lt_gate_close(g);
}

/* Caller 0 likes post 1 as user 7; caller 1 takes post 1 away (its id
 * becomes 2: gone for like_post as a DELETE would make it, but its
 * counter can still be read). */
static int like_or_move(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	if (who == 0)
		return like_post(db, 1, 7, NULL);
	return kit_db_exec(db, "UPDATE posts SET id = 2 WHERE id = 1", 0, NULL);
}

/* The post goes away while a like of it is under way: held before each of
 * its statements in turn, the like lets another connection move post 1
 * (to id 2) first, then goes on. Whenever that lands, the like and the
 * counter still move together: a like of post 1 is written exactly when
 * the counter that post 1 had went up (it now reads as post 2's), and 0
 * is returned exactly then; otherwise HOT_ROW_NO_POST and nothing. The
 * post's existence looked up with a SELECT first, and the UPDATE's row
 * count then not checked, writes a like whose counter never moved. */
static void like_post__post_gone_while_liking(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	struct lt_gate *g = lt_gate_open(t, 2);
	int k;
	for (k = 1; k <= 12; k++) {
		labtest_exec(t, "DELETE FROM likes; DELETE FROM posts; INSERT INTO posts (id) VALUES (1)");
		lt_gate_run_first(g, NULL, (int[]){ k, 1 }, 1, like_or_move, NULL);
		if (!lt_gate_held(g, 0))
			break;
		int rc = lt_gate_rc(g, 0);
		int64_t liked = labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1");
		int64_t counted = labtest_int(t, "SELECT COALESCE(SUM(likes), 0) FROM posts");
		lt_expect((rc == 0 && liked == 1 && counted == 1) ||
		          (rc == HOT_ROW_NO_POST && liked == 0 && counted == 0), "no-post",
		          "post 1 moved away while its like was held before statement %d: like_post "
		          "returned %d, %lld like(s) of post 1 written, counter at %lld (expected 0 with "
		          "1 and 1, or HOT_ROW_NO_POST (%d) with 0 and 0)%s", k, rc, (long long)liked,
		          (long long)counted, HOT_ROW_NO_POST, liked == 1 && counted == 0 ? ": the like "
		          "was written but no counter went up; ask the UPDATE how many rows it changed "
		          "(kit_db_changes), not an earlier SELECT" : "");
	}
	lt_expect(k > 1, "no-post", "a like of post 1 ran no statement: got %d", lt_gate_rc(g, 0));
	lt_gate_close(g);
}

/* Two likes of post 1 (users 7 and 8), each on its own connection, let
 * go together while the database refuses every statement from the k-th
 * sent by either of them on (with an error, or as busy), for every k: both
 * meet the failure at about the same step and run their failure paths at
 * the same moment. Each answers 0 (its like is in) or the refusal's own
 * code; the counter and the likes agree; and each like tried again then
 * answers HOT_ROW_DUPLICATE if it was in, 0 if not. Under the race pass
 * of `hotrow lab check` (ThreadSanitizer; the kit's failpoints order no
 * threads) anything the failure path keeps for every thread (a count of
 * errors, the last error's text in a static) fails it. */
struct failing_like {
	struct kit_db *db;
	int64_t user;
	int rc;
};

static void *like_failing(void *arg)
{
	struct failing_like *l = arg;
	l->rc = like_post(l->db, 1, l->user, NULL);
	return NULL;
}

static void like_post__two_likes_fail_at_once(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	struct failing_like l[2] = { { labtest_connect(t), 7, 0 }, { labtest_connect(t), 8, 0 } };
	char seen[400] = "";
	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY && !seen[0]; how++) {
		if (!lt_step_refused(how))
			continue;
		int code = how == LT_STEP_BUSY ? KIT_DB_BUSY : KIT_DB_ERR;
		for (int k = 1; !seen[0]; k++) {
			labtest_exec(t, "DELETE FROM likes; UPDATE posts SET likes = 0");
			lt_step_arm_from(how, k);
			lt_at_once(2, like_failing, l, sizeof l[0]);
			if (!lt_step_disarm())
				break;
			int64_t likes = counter(t), rows = labtest_int(t, "SELECT count(*) FROM likes");
			int in = (l[0].rc == 0) + (l[1].rc == 0);
			if ((l[0].rc != 0 && l[0].rc != code) || (l[1].rc != 0 && l[1].rc != code) ||
			    likes != rows || likes != in) {
				snprintf(seen, sizeof seen, "with every statement from the %d-th %s, the likes "
				         "of users 7 and 8 returned %d and %d; posts.likes is %lld and likes "
				         "holds %lld rows (expected 0 or %d each, and as many likes as "
				         "returned 0)", k, lt_step_what(how), l[0].rc, l[1].rc,
				         (long long)likes, (long long)rows, code);
				break;
			}
			for (int who = 0; who < 2 && !seen[0]; who++) {
				int again = like_post(l[who].db, 1, l[who].user, NULL);
				int want = l[who].rc == 0 ? HOT_ROW_DUPLICATE : 0;
				if (again != want)
					snprintf(seen, sizeof seen, "with every statement from the %d-th %s, the "
					         "like of user %lld returned %d; tried again on its connection "
					         "it returned %d, expected %d (%s)", k, lt_step_what(how),
					         (long long)l[who].user, l[who].rc, again, want,
					         labtest_why(l[who].db));
			}
		}
	}
	for (int who = 0; who < 2; who++)
		kit_db_close(l[who].db);
	lt_expect(!seen[0], "rollback", "two likes of post 1 let go together, each on its own "
	          "connection, while the database refused their statements: %s. Each like answers "
	          "the refused step's own code and leaves its connection ready for the next call; "
	          "is anything kept between calls and shared by the threads (an error count, the "
	          "last error in a static)? Keep it in the call", seen);
}

/* Four threads, each on a connection of its own, let go together, make
 * the process's first likes: of post 1, by users 1 to 4. Anything built on
 * a first call and kept where every thread shares it (the statements'
 * text behind a plain "ready" flag, "format them once") is built by all
 * four at once: the race pass of `hotrow lab check` runs each such check
 * in a process of its own, where these are the first likes. Every like
 * counts once. PostgreSQL: the mistake is the C's. */
struct first_like {
	struct kit_db *db;
	int64_t user;
	int rc;
};

static void *first_like(void *arg)
{
	struct first_like *l = arg;
	l->rc = like_post(l->db, 1, l->user, NULL);
	return NULL;
}

static void like_post__first_likes_at_once(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	struct first_like l[4];
	for (int i = 0; i < 4; i++)
		l[i] = (struct first_like){ labtest_connect(t), 1 + i, 0 };
	lt_at_once(4, first_like, l, sizeof l[0]);
	for (int i = 0; i < 4; i++)
		kit_db_close(l[i].db);
	int64_t likes = counter(t), rows = labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1");
	lt_expect(l[0].rc == 0 && l[1].rc == 0 && l[2].rc == 0 && l[3].rc == 0 && likes == 4 &&
	          rows == 4, "shared-state", "four threads made the process's first likes at once, "
	          "each on its own connection, of post 1 by users 1 to 4: they returned %d, %d, %d "
	          "and %d; posts.likes is %lld and likes holds %lld rows (expected 0 each, 4 and 4). "
	          "Is something built on the first call and shared by every thread (a statement's "
	          "text behind a \"ready\" flag) built by two at once?", l[0].rc, l[1].rc, l[2].rc,
	          l[3].rc, (long long)likes, (long long)rows);
}

/* The like fails at each of its statements in turn: refused before it
 * runs (with an error, or as busy: a lock wait that timed out), or run
 * with its answer lost. The like and the counter move together or not at
 * all; a refused statement returns an error and leaves nothing; 0 is
 * returned only for a like that is there; and the same like tried again
 * on the same connection then works. The call does not try again
 * itself: each refused or lost step answers its own code (hot_row.h), so
 * a like that starts over from BEGIN and returns 0 fails here. A COMMIT
 * refused as busy has ended the transaction (kit/db.h): a COMMIT sent
 * again finds none, and on PostgreSQL it only warns, so code that retries
 * it returns 0 for a like that is not there. */
/* Why a call that tried again itself after a refused step is wrong. */
/* lt_tx_watch_hook's watch, and the statements a like starts: the first
 * and the second, cut short. */
struct step_watch {
	struct lt_tx_watch tx;
	int starts;
	char first[48], second[48];
};

static void step_watch_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct step_watch *w = arg;
	if ((ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START) && sql) {
		if (++w->starts <= 2)
			snprintf(w->starts == 1 ? w->first : w->second, sizeof w->first, "%s", sql);
	}
	lt_tx_watch_hook(&w->tx, ev, sql, t_ns);
}

#define RETRY_IS_THE_CALLERS "hot_row.h: the first statement refused ends the call with " \
	"its code, at once; a retry is the caller's choice (it knows its deadline; each retry " \
	"inside holds it, and its connection, for a lock wait more)"

static void like_post__every_step_can_fail(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct app a = { 0 };
	struct hot_row_app app = { check, &a };
	make_post(t);

	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
		for (int k = 1; ; k++) {
			labtest_exec(t, "DELETE FROM likes; UPDATE posts SET likes = 0");
			atomic_store(&a.calls, 0);
			struct step_watch sw = { 0 };
			kit_db_set_hook(db, step_watch_hook, &sw);
			struct trace slept = { 0 };
			yield_trace = &slept;
			lt_step_arm(how, k);
			int rc = like_post(db, 1, 7, &app);
			bool reached = lt_step_disarm();
			yield_trace = NULL;
			kit_db_set_hook(db, NULL, NULL);
			if (!reached)
				break;
			lt_expect(sw.tx.outside == 0, "transaction", "statement %d of the like %s: the like "
			          "then sent %d write(s) with no transaction open, the first \"%s...\" "
			          "(returned %d): a statement whose answer was lost, or a refused COMMIT, "
			          "has ended the transaction (the connection rolled it back), so a statement "
			          "sent again after it runs on its own and commits at once, apart from the "
			          "other write. Return the error", k,
			          lt_step_what(how), sw.tx.outside, sw.tx.first, rc);
			lt_expect(k != 1 || !lt_step_refused(how) || sw.starts == 1 ||
			          !(lt_sql_is(sw.first, "BEGIN") || lt_sql_is(sw.first, "START")),
			          "commit-result", "the like's BEGIN %s: it then sent %d statement(s) more, "
			          "the first \"%s...\": a BEGIN that failed opened no transaction, so there "
			          "is nothing to end (a ROLLBACK then ends one the caller may have open); "
			          "stop when BEGIN failed, and return its code", lt_step_what(how),
			          sw.starts - 1, sw.second);
			lt_expect(atomic_load(&a.calls) == 1, "app-check", "statement %d of the like %s: "
			          "like_post() called the app's check %d times (returned %d); it is called "
			          "exactly once per like_post() call", k,
			          lt_step_what(how), atomic_load(&a.calls), rc);
			lt_expect(how != LT_STEP_BUSY || rc == KIT_DB_BUSY, "rollback",
			          "statement %d of the like refused as busy (KIT_DB_BUSY, a lock wait that "
			          "timed out): like_post() returned %d, not KIT_DB_BUSY%s", k, rc, rc == 0
			          ? ": it tried again itself and the like went in. " RETRY_IS_THE_CALLERS
			          : "; a caller retries a busy like and gives up on an error, so return the "
			          "failed call's own code");
			lt_expect(how == LT_STEP_BUSY || rc == KIT_DB_ERR, "commit-result",
			          "statement %d of the like %s (KIT_DB_ERR): like_post() returned %d, not "
			          "KIT_DB_ERR; %s", k, lt_step_what(how), rc, rc == 0
			          ? "it tried again itself. " RETRY_IS_THE_CALLERS
			          : "KIT_DB_BUSY tells the caller a lock wait timed out and a retry will do, "
			          "so a failure (a connection gone, a COMMIT whose answer was lost) answered "
			          "so is retried for as long as it lasts. Return the failed call's own code");
			int64_t likes = counter(t), rows = labtest_int(t, "SELECT count(*) FROM likes");
			lt_expect(likes == rows, "transaction",
			          "statement %d of the like %s: posts.likes is %lld but likes holds %lld "
			          "rows; the like and the counter must commit together", k,
			          lt_step_what(how), (long long)likes, (long long)rows);
			lt_expect(rc != 0 || likes == 1, "commit-result",
			          "statement %d of the like %s: like_post() returned 0, but nothing was "
			          "written (is the result of COMMIT, or of BEGIN, ignored%s?)", k,
			          lt_step_what(how), how == LT_STEP_BUSY ? ", or a refused COMMIT sent again: "
			          "a failed COMMIT has already ended the transaction" : "");
			lt_expect(how == LT_STEP_REPLY_LOST || rc == 0 || likes == 0, "transaction",
			          "statement %d of the like refused: like_post() returned %d and yet the like "
			          "was written (did writes go on outside a transaction after BEGIN failed, or "
			          "commit after a failed statement?)", k, rc);
			lt_expect(rc != HOT_ROW_DUPLICATE && rc != HOT_ROW_NO_POST && rc != HOT_ROW_REFUSED,
			          "rollback", "statement %d of a new like of an existing post %s: like_post() "
			          "returned %d (%s), which says something about the like that is not so; "
			          "return the failed call's own code", k, lt_step_what(how), rc,
			          rc == HOT_ROW_DUPLICATE ? "HOT_ROW_DUPLICATE" : rc == HOT_ROW_NO_POST
			          ? "HOT_ROW_NO_POST" : "HOT_ROW_REFUSED");
			yield_trace = &slept;
			int again = like_post(db, 1, 7, NULL);
			yield_trace = NULL;
			lt_expect(again == (likes ? HOT_ROW_DUPLICATE : 0), "rollback",
			          "statement %d of the like %s, then the same like again on the same "
			          "connection: expected %d, got %d (%s)", k, lt_step_what(how),
			          likes ? HOT_ROW_DUPLICATE : 0, again, labtest_why(db));
			/* a failed like returns at once, and the next like on the
			 * thread starts at once: a pause after a refusal (a backoff
			 * before the caller's retry) is the caller's to choose */
			int naps = 0;
			for (int i = 0; i < slept.n; i++)
				naps += slept.what[i] == SLEEP_;
			lt_expect(naps == 0, "rollback", "statement %d of the like %s, then the same like "
			          "again: the two likes slept %d time(s) (nanosleep, usleep, sleep...): "
			          "%s; a pause before the next like, after a refusal, is a backoff only the "
			          "caller can size to its deadline", k, lt_step_what(how), naps,
			          RETRY_IS_THE_CALLERS);
			lt_expect_int(counter(t), 1, "posts.likes after the like was tried again");
		}
	}

	/* A statement refused as busy, then the ROLLBACK after it refused
	 * too: the like still answers with the failed step's own code,
	 * KIT_DB_BUSY (hot_row.h: the failed call's own negative code), not
	 * the ROLLBACK's; a refused ROLLBACK has ended the transaction all
	 * the same, and the caller's retry of a busy like is what follows. */
	for (int k = 1; k <= 6; k++) {
		labtest_exec(t, "DELETE FROM likes; UPDATE posts SET likes = 0");
		if (kit_fp_set("db-stmt-busy", KIT_FP_ONCE, k) != 0 ||
		    kit_fp_set("db-stmt-fails", KIT_FP_ONCE, k + 1) != 0)
			fail_msg("cannot arm the step failpoints");
		int rc = like_post(db, 1, 7, &app);
		bool reached = kit_fp_count("db-stmt-busy") >= k;
		kit_fp_set("db-stmt-busy", KIT_FP_OFF, 1);
		kit_fp_set("db-stmt-fails", KIT_FP_OFF, 1);
		if (!reached)
			break;
		lt_expect(rc == KIT_DB_BUSY || rc == 0, "rollback", "statement %d of the like refused as "
		          "busy (KIT_DB_BUSY), then the statement after it (the ROLLBACK) refused too: "
		          "like_post() returned %d; the answer is the failed step's own code, KIT_DB_BUSY (a caller "
		          "retries a busy like), not the ROLLBACK's: is the ROLLBACK's failure returned "
		          "in its place?", k, rc);
		int64_t likes = counter(t);
		int again = like_post(db, 1, 7, NULL);
		lt_expect(again == (likes ? HOT_ROW_DUPLICATE : 0), "rollback", "statement %d of the "
		          "like refused as busy and its ROLLBACK refused, then the same like again on "
		          "the same connection: expected %d, got %d (%s)", k, likes ? HOT_ROW_DUPLICATE : 0,
		          again, labtest_why(db));
	}
}

/* A like that already knows its answer (the user liked the post before;
 * the post is not there) ends its transaction with the call's last
 * statement; when that statement fails too, refused, refused as busy or
 * its answer lost, the answer stays HOT_ROW_DUPLICATE or HOT_ROW_NO_POST
 * (hot_row.h: "A ROLLBACK after a failed step that fails too changes
 * nothing about the answer"): nothing was written either way, and a
 * caller told KIT_DB_BUSY would retry a like that can never go in. A
 * step that fails before the answer is known (the BEGIN, the INSERT) is
 * answered with its own code, never with an answer the like did not
 * get. Each path is run once for every statement k, so the last is found
 * whatever the like sends before it; the same like again then gives the
 * same answer, on the same connection. */
static void like_post__refused_rollback_keeps_the_answer(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_post(t);
	lt_expect_int(like_post(db, 1, 7, NULL), 0, "the first like of post 1 by user 7");

	static const struct { int64_t post; int want; const char *what; } paths[] = {
		{ 1, HOT_ROW_DUPLICATE, "the same like again (HOT_ROW_DUPLICATE)" },
		{ 999, HOT_ROW_NO_POST, "a like of post 999, which is not there (HOT_ROW_NO_POST)" },
	};
	for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
		for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
			int rcs[32], n = 0;
			for (int k = 1; k <= 32; k++) {
				lt_step_arm(how, k);
				int rc = like_post(db, paths[p].post, 7, NULL);
				if (!lt_step_disarm())
					break;
				rcs[n++] = rc;
				int again = like_post(db, paths[p].post, 7, NULL);
				lt_expect(again == paths[p].want, "rollback", "%s, its statement %d %s, then the "
				          "same like again on the same connection: expected %d, got %d (%s): the "
				          "failed call left the connection in a state the next like cannot use",
				          paths[p].what, k, lt_step_what(how), paths[p].want, again,
				          labtest_why(db));
			}
			lt_expect(n >= 2, NULL, "%s: the like sent %d statement(s); a transaction of its own "
			          "has at least a BEGIN and its end", paths[p].what, n);
			for (int k = 1; k < n; k++)
				lt_expect(rcs[k - 1] == (how == LT_STEP_BUSY ? KIT_DB_BUSY : KIT_DB_ERR),
				          "rollback", "%s, its statement %d of %d %s: like_post() returned %d, "
				          "expected that step's own code, %s (the like cannot know its answer "
				          "from a step that failed)", paths[p].what, k, n, lt_step_what(how),
				          rcs[k - 1], how == LT_STEP_BUSY ? "KIT_DB_BUSY" : "KIT_DB_ERR");
			if (n >= 1)
				lt_expect(rcs[n - 1] == paths[p].want, "rollback", "%s, its last statement "
				          "(%d of %d, the end of its transaction) %s: like_post() returned %d, "
				          "expected %d still: the like knew its answer before that step, and a "
				          "ROLLBACK that fails too changes nothing about it (is the ROLLBACK's "
				          "code returned in its place?)", paths[p].what, n, n, lt_step_what(how),
				          rcs[n - 1], paths[p].want);
		}
	}
	lt_expect_int(counter(t), 1, "posts.likes after every failed duplicate and missing-post like");
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM likes"), 1, "rows in likes after them");
}

/* A session the caller made read-only (default_transaction_read_only on
 * PostgreSQL, SET SESSION TRANSACTION READ ONLY on MariaDB, PRAGMA
 * query_only on SQLite) stays so for the like: it is refused (the
 * database's error, KIT_DB_ERR) and writes nothing. The like's
 * transaction is kit_db_begin's, at what the connection has: a BEGIN READ
 * WRITE (or START TRANSACTION READ WRITE) of its own overrules the
 * caller's choice, as a SET LOCAL would (hint 13). */
static void like_post__read_only_session_writes_nothing(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_post(t);
	enum kit_db_engine e = kit_db_engine(db);
	labtest_exec(t, e == KIT_DB_SQLITE ? "PRAGMA query_only = ON"
	             : e == KIT_DB_MYSQL ? "SET SESSION TRANSACTION READ ONLY"
	             : "SET default_transaction_read_only = on");
	int rc = like_post(db, 1, 7, NULL);
	labtest_exec(t, e == KIT_DB_SQLITE ? "PRAGMA query_only = OFF"
	             : e == KIT_DB_MYSQL ? "SET SESSION TRANSACTION READ WRITE"
	             : "RESET default_transaction_read_only");
	int64_t likes = counter(t), rows = labtest_int(t, "SELECT count(*) FROM likes");
	lt_expect(rc == KIT_DB_ERR && likes == 0 && rows == 0, "session", "a like on a session the "
	          "caller made read-only returned %d, and wrote %lld like(s) and a counter of %lld "
	          "(expected KIT_DB_ERR, nothing written): the like's transaction has the access "
	          "mode the connection has; is it begun READ WRITE, or is a setting changed for it?",
	          rc, (long long)rows, (long long)likes);
	lt_expect_int_hint(like_post(db, 1, 7, NULL), 0, "the like again, once the session may write",
	                   "session");
}

/* A post whose counter already stands at INT64_MAX is there all the same:
 * a like of it is never HOT_ROW_NO_POST. PostgreSQL and MariaDB refuse
 * the sum (bigint out of range: an error, nothing written); SQLite turns
 * it into a REAL and the like counts. An UPDATE that adds 1 only "while
 * likes < INT64_MAX", or any other condition in its WHERE besides the
 * id, changes no row for a post that is there, and a change count of 0
 * then names a missing post. */
static void like_post__full_counter_is_no_missing_post(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, HOT_ROW_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id, likes) VALUES (1, 9223372036854775807)");

	int rc = like_post(db, 1, 7, NULL);
	int64_t rows = labtest_int(t, "SELECT count(*) FROM likes");
	lt_expect(rc != HOT_ROW_NO_POST && rc != HOT_ROW_DUPLICATE && (rc == 0) == (rows == 1) &&
	          (t->engine == KIT_DB_SQLITE || (rc < 0 && rows == 0)), "no-post",
	          "a like of post 1, whose counter stands at INT64_MAX, returned %d (%s) and left %lld "
	          "like row(s); expected %s%s", rc, rc == 0 ? "no error" : rc == HOT_ROW_NO_POST ? "HOT_ROW_NO_POST" : labtest_why(db),
	          (long long)rows,
	          t->engine == KIT_DB_SQLITE ? "0 and one row (SQLite makes the sum a REAL), or an "
	          "error and none" : "the database's error (bigint out of range) and no row",
	          rc == HOT_ROW_NO_POST ? ": the post is there; does the UPDATE's WHERE say more than "
	          "id = $1 (likes < INT64_MAX, \"never overflow\")? Then 0 rows changed no longer "
	          "means no such post" : "");
	if (t->engine != KIT_DB_SQLITE)
		lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), INT64_MAX,
		              "posts.likes of post 1 after the refused like");

	/* Any other count is a post that is there too: one below INT64_MAX
	 * (the sum still fits), and one that went negative (a bad import, a
	 * hand-made fix). A WHERE that guards the counter ("likes >= 0",
	 * "never build on a corrupt count"; "likes + 1 < INT64_MAX") changes
	 * no row of a post that exists, and the like answers HOT_ROW_NO_POST. */
	labtest_exec(t, "INSERT INTO posts (id, likes) VALUES (2, -3), (3, 9223372036854775806)");
	int rc2 = like_post(db, 2, 7, NULL), rc3 = like_post(db, 3, 7, NULL);
	int64_t c2 = labtest_int(t, "SELECT likes FROM posts WHERE id = 2");
	int64_t c3 = labtest_int(t, "SELECT likes FROM posts WHERE id = 3");
	lt_expect(rc2 == 0 && rc3 == 0 && c2 == -2 && c3 == INT64_MAX, "no-post",
	          "likes of post 2, whose counter stands at -3, and of post 3, at INT64_MAX - 1, "
	          "returned %d and %d, the counters are then %lld and %lld (expected 0 and 0, -2 and "
	          "INT64_MAX): both posts are there, and the sum fits%s", rc2, rc3, (long long)c2,
	          (long long)c3, rc2 == HOT_ROW_NO_POST || rc3 == HOT_ROW_NO_POST ? "; does the "
	          "UPDATE's WHERE say more than id = $1 (likes >= 0, likes + 1 < INT64_MAX)? Then 0 "
	          "rows changed no longer means no such post" : "");
}

/* ---- after its own COMMIT failed, another tap of the same user ---- */

struct tap {
	struct kit_db *other;          /* the second connection, user 7's other tap */
	int commit_at;                 /* the like's statement that is its COMMIT */
	int seen;                      /* statements the like has started */
	int other_rc;                  /* what the other tap returned */
	bool other_ran;
};

static void tap_count(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct tap *tp = arg;

	(void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	tp->seen++;
	if (tp->commit_at == 0 && sql && strncasecmp(sql, "COMMIT", 6) == 0)
		tp->commit_at = tp->seen;
}

/* Once the like's COMMIT has failed (it holds no lock then: a refused
 * COMMIT has ended the transaction, a lost answer came after it
 * committed), the other tap runs whole before the like's next statement. */
static void tap_after_commit(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct tap *tp = arg;

	(void)sql, (void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	if (++tp->seen > tp->commit_at && !tp->other_ran) {
		tp->other_ran = true;
		tp->other_rc = like_post(tp->other, 1, 7, NULL);
	}
}

/* User 7 likes post 1, and that like's COMMIT is refused (with an error,
 * as busy) or runs with its answer lost; before the like runs anything
 * more, user 7's second tap likes post 1 on another connection. Then
 * exactly one like row, the counter at 1, and at most one of the two
 * calls answered 0: 0 says "this call's like is written", and one row
 * cannot be two calls' likes. A like that, after its own COMMIT failed,
 * looks the (post, user) row up and answers 0 when it is there (or
 * tries again and takes HOT_ROW_DUPLICATE for "my first COMMIT went
 * through after all") claims the other tap's like as its own whenever
 * its COMMIT did not run. */
/* The other tap sent while the like is in flight: started at the like's
 * counter UPDATE (its INSERT done, not committed), on a thread of its
 * own. Once the other tap waits behind the like's row (or has returned),
 * the like's UPDATE is refused, so the like rolls back. */
struct inflight_tap {
	struct labtest *t;
	struct kit_db *other;
	int64_t other_id;              /* the other tap's session (servers) */
	atomic_int waiting;            /* SQLite: the other tap's busy wait began */
	atomic_int done;
	int other_rc;
	bool started;
	pthread_t th;
};

static void *inflight_other(void *arg)
{
	struct inflight_tap *it = arg;
	it->other_rc = like_post(it->other, 1, 7, NULL);
	atomic_store(&it->done, 1);
	return NULL;
}

static void inflight_other_waits(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)sql, (void)t_ns;
	if (ev == KIT_DB_LOCK_WAIT)
		atomic_store(&((struct inflight_tap *)arg)->waiting, 1);
}

static void inflight_at_update(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct inflight_tap *it = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START || it->started || !sql || !lt_sql_is(sql, "UPDATE") ||
	    !lt_sql_names(sql, "posts"))
		return;
	it->started = true;
	if (pthread_create(&it->th, NULL, inflight_other, it) != 0) {
		it->started = false;
		return;
	}
	struct labtest *t = it->t;
	int64_t start = util_now_ns();
	while (!atomic_load(&it->done) && util_now_ns() - start < 3000 * 1000000LL) {
		if (t->engine == KIT_DB_SQLITE ? atomic_load(&it->waiting) != 0 :
		    lt_lock_waiting(labtest_db(t), it->other_id) == 1)
			break;
		util_sleep_ns(t->engine == KIT_DB_SQLITE ? 2000000 : lt_lock_poll_ns(labtest_db(t)));
	}
	/* The other tap's statements so far have passed the step failpoint:
	 * the next statement to pass it is this one, the like's UPDATE. */
	lt_step_arm(LT_STEP_FAILS, 1);
}

static void like_post__other_tap_after_a_failed_commit(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct kit_db *other = labtest_connect(t);
	make_post(t);

	/* Where is the like's COMMIT? A like that runs none fails elsewhere. */
	struct tap tp = { .other = other };
	kit_db_set_hook(db, tap_count, &tp);
	int rc = like_post(db, 1, 8, NULL);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0 && tp.commit_at > 0, "commit-result", "a like of post 1 by user 8 "
	          "returned %d after %d statements, %s", rc, tp.seen, tp.commit_at > 0
	          ? "not 0" : "none of them a COMMIT (kit_db_commit)");

	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
		labtest_exec(t, "DELETE FROM likes; UPDATE posts SET likes = 0");
		tp = (struct tap){ .other = other, .commit_at = tp.commit_at };
		kit_db_set_hook(db, tap_after_commit, &tp);
		lt_step_arm(how, tp.commit_at);
		rc = like_post(db, 1, 7, NULL);
		bool failed = lt_step_disarm();
		kit_db_set_hook(db, NULL, NULL);
		if (!tp.other_ran) {
			tp.other_ran = true;
			tp.other_rc = like_post(other, 1, 7, NULL);
		}
		int64_t rows = labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1 AND user_id = 7");
		int64_t likes = counter(t);
		int zeros = (rc == 0) + (tp.other_rc == 0);
		lt_expect(failed, "commit-result", "the like's COMMIT (statement %d of a like, as a "
		          "like of user 8 showed) was not reached by a like of user 7: it returned %d",
		          tp.commit_at, rc);
		lt_expect(rows == 1 && likes == 1 && zeros <= 1 &&
		          (lt_step_refused(how) ? rc != 0 && tp.other_rc == 0 : true), "commit-result",
		          "user 7's like of post 1: its COMMIT %s, and user 7's other tap liked post 1 "
		          "on another connection before that like's next statement; the like returned "
		          "%d, the other tap %d, %lld like row(s), posts.likes %lld (expected one row, the "
		          "counter at 1, and 0 from at most one of them%s)%s", lt_step_what(how), rc,
		          tp.other_rc, (long long)rows, (long long)likes,
		          lt_step_refused(how) ? ": the refused like is not there, the other tap's is" : "",
		          likes != rows ? ": the counter and the like rows disagree (was the other tap's "
		          "duplicate counted?)" : zeros > rows ? ": two calls said 0 for one like; after its own COMMIT failed, "
		          "the like took the row it found (the other tap's) for its own, by looking it "
		          "up or by trying again and taking HOT_ROW_DUPLICATE as \"my first COMMIT went "
		          "through\". Return the COMMIT's error" : "");
	}

	/* The other tap while the like is still in flight: it starts when the
	 * like reaches its UPDATE (the like's row inserted, not committed),
	 * and waits for that row, as the primary key makes it; then the
	 * like's UPDATE is refused and the like rolls back. The other tap's
	 * INSERT then goes through: 0, one row, the counter at 1. A like that
	 * answers a tap as a duplicate because the same (post, user) is in
	 * flight in this process (a set of likes in flight, "a double tap
	 * never reaches the database") says HOT_ROW_DUPLICATE for a like
	 * that then never happens: neither tap counts. */
	labtest_exec(t, "DELETE FROM likes; UPDATE posts SET likes = 0");
	struct inflight_tap it = { .t = t, .other = other };
	atomic_init(&it.waiting, 0);
	atomic_init(&it.done, 0);
	it.other_id = t->engine == KIT_DB_SQLITE ? 0 : lt_session_id(other);
	kit_db_set_hook(other, inflight_other_waits, &it);
	kit_db_set_hook(db, inflight_at_update, &it);
	rc = like_post(db, 1, 7, NULL);
	kit_db_set_hook(db, NULL, NULL);
	(void)lt_step_disarm();
	if (it.started)
		pthread_join(it.th, NULL);
	kit_db_set_hook(other, NULL, NULL);
	int64_t irows = labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1 AND user_id = 7");
	int64_t ilikes = counter(t);
	lt_expect(it.started, "like-first", "a like of post 1 by user 7 returned %d without an "
	          "UPDATE of posts", rc);
	lt_expect(!it.started || (rc != 0 && it.other_rc == 0 && irows == 1 && ilikes == 1),
	          "race-duplicate", "user 7's like of post 1 was held at its UPDATE while user 7's "
	          "other tap liked post 1 on another connection, then that UPDATE was refused: the "
	          "like returned %d, the other tap %d, %lld like row(s), posts.likes %lld (expected an "
	          "error, 0, one row, 1)%s", rc, it.other_rc, (long long)irows, (long long)ilikes,
	          it.other_rc == HOT_ROW_DUPLICATE && irows == 0 ? ": the other tap was answered "
	          "HOT_ROW_DUPLICATE for a like that was never written. Was it looked up among the "
	          "likes in flight in this process? Only the primary key, at the INSERT, knows; the "
	          "other tap's INSERT waits there for the first like's transaction to end" : "");
	kit_db_close(other);
}

/* The app's check is asked about the like's own post and user, all 64
 * bits of them: ids kept in an int on their way to the check name another
 * post and user past 2^31. */
static void expect_check_given(const struct app *a, int64_t post, int64_t user)
{
	lt_expect(a->post == post && a->user == user, "int64", "the app's check of a like of post "
	          "%" PRId64 " by user %" PRId64 " was given post %" PRId64 " and user %" PRId64
	          ": are the ids passed to it through an int (or another type narrower than "
	          "int64_t)?", post, user, a->post, a->user);
}

/* Ids are 64-bit: a post and users past 2^32 (so past what an int and an
 * unsigned hold). Two users whose ids agree in their low 32 bits are two
 * users, and the app's check is asked about exactly those ids. */
static void like_post__ids_past_2_31(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	int64_t post = LT_PAST_UINT32 + 4, user = LT_PAST_UINT32, twin = LT_PAST_UINT32 + ((int64_t)1 << 32);
	labtest_exec(t, HOT_ROW_SCHEMA);
	kit_db_exec(db, "INSERT INTO posts (id) VALUES ($1)", 1, (const char *[]){ LT_I64(post) });

	struct app a = { 0 };
	struct hot_row_app app = { check, &a };
	lt_expect_int_hint(like_post(db, post, user, &app), 0,
	                   "a like of post 2^32 + 5 by user 2^32 + 1 (are ids kept in an int?)", "int64");
	expect_check_given(&a, post, user);
	lt_expect_int_hint(like_post(db, post, twin, &app), 0,
	                   "a like by user 2^33 + 1, who is not user 2^32 + 1", "int64");
	expect_check_given(&a, post, twin);
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts"), 2, "posts.likes of post 2^32 + 5");
	char sql[160];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM likes WHERE post_id = %lld AND user_id IN (%lld, %lld)",
	         (long long)post, (long long)user, (long long)twin);
	lt_expect_int_hint(labtest_int(t, sql), 2, "rows in likes with exactly those ids", "int64");
}

/* The other edges of int64_t: ids are any int64_t values (hot_row.h), so
 * negative ones too, down to INT64_MIN, and INT64_MAX. An id printed as
 * unsigned (%llu, PRIu64) turns -5 into 18446744073709551611, which no
 * BIGINT holds. */
struct zero_like {
	struct kit_db *db;
	int64_t post;               /* liked by user 0 */
	int rc;
};

static void *like_zero(void *arg)
{
	struct zero_like *z = arg;
	z->rc = like_post(z->db, z->post, 0, NULL);
	return NULL;
}

static void like_post__ids_at_the_ends_of_int64(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, HOT_ROW_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) VALUES (-5), (9223372036854775807), (0), "
	             "(-9223372036854775807 - 1), (-922337203685477580)");

	/* the first like of a new thread: a cache of the last id formatted
	 * (per thread, "a hot post is formatted once") whose empty state is
	 * 0 sends its empty text for post 0 */
	struct zero_like z = { .db = db, .post = 0, .rc = -100 };
	pthread_t th;
	lt_expect(pthread_create(&th, NULL, like_zero, &z) == 0, NULL, "starting a thread");
	pthread_join(th, NULL);
	int zero = z.rc;
	/* and post INT64_MIN, the first like of another: its text is 20
	 * characters and a NUL (a buffer of 20 cuts it to
	 * -922337203685477580, another post), and INT64_MIN is the empty
	 * state of a cache that starts there */
	struct zero_like zm = { .db = db, .post = INT64_MIN, .rc = -100 };
	lt_expect(pthread_create(&th, NULL, like_zero, &zm) == 0, NULL, "starting a thread");
	pthread_join(th, NULL);
	int64_t min_likes = labtest_int(t, "SELECT likes FROM posts WHERE id = -9223372036854775807 - 1");
	int64_t cut_likes = labtest_int(t, "SELECT likes FROM posts WHERE id = -922337203685477580");
	lt_expect(zm.rc == 0 && min_likes == 1 && cut_likes == 0, "int64", "a like of post "
	          "INT64_MIN by user 0, the first like of a new thread, returned %d; post INT64_MIN's "
	          "counter is at %lld and post -922337203685477580's at %lld (expected 0, 1, 0)%s",
	          zm.rc, (long long)min_likes, (long long)cut_likes, cut_likes ? ": the like went "
	          "to another post, INT64_MIN cut short by one digit. \"-9223372036854775808\" is 20 "
	          "characters and its NUL: is the post id's buffer 20 bytes?" : zm.rc != 0 ? ": is a "
	          "like by user 0 refused before the app's check is asked (0 is a user id like any "
	          "other)? Or is INT64_MIN the empty state of something kept between calls, a cache "
	          "of the last id's text, so that post INT64_MIN is taken for \"already "
	          "formatted\"?" : "");
	lt_expect(zero == 0 && labtest_int(t, "SELECT likes FROM posts WHERE id = 0") == 1, "int64",
	          "a like of post 0 by user 0, the first like of a new thread, returned %d, post "
	          "0's counter at %lld: 0 is an id like any other, of a user as of a post (is a like "
	          "by user 0 refused before the app's check is asked? is 0 the empty state of "
	          "something kept between calls, a cache of the last id's text, so that post 0 is "
	          "taken for \"already formatted\"?)", zero,
	          (long long)labtest_int(t, "SELECT likes FROM posts WHERE id = 0"));
	/* both ids at their longest at once: a like of post INT64_MIN by user
	 * INT64_MIN, whose statement text (when the ids are written into it)
	 * is as long as any like's; a buffer sized for the longest text but
	 * its NUL cuts off its end */
	int longest = like_post(db, INT64_MIN, INT64_MIN, NULL);
	lt_expect(longest == 0 && labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = "
	          "-9223372036854775807 - 1 AND user_id = -9223372036854775807 - 1") == 1, "int64",
	          "a like of post INT64_MIN by user INT64_MIN returned %d (%s), expected 0 and its row "
	          "in likes: both ids are 20 characters there, the longest a like's statement gets "
	          "(is a buffer for the statement's text, or for the ids, a byte short of them and "
	          "their NUL?)", longest, labtest_why(db));
	labtest_exec(t, "DELETE FROM likes WHERE user_id = -9223372036854775807 - 1");
	labtest_exec(t, "UPDATE posts SET likes = (SELECT count(*) FROM likes WHERE post_id = "
	             "-9223372036854775807 - 1) WHERE id = -9223372036854775807 - 1");
	int64_t zero_rows = labtest_int(t, "SELECT count(*) FROM likes WHERE user_id = 0 AND "
	                                "post_id IN (0, -9223372036854775807 - 1)");
	int again = like_post(db, 0, 0, NULL);
	lt_expect(zero_rows == 2 && again == HOT_ROW_DUPLICATE, "int64", "after user 0 liked posts "
	          "0 and INT64_MIN, likes holds %lld of those two rows, and the same like again "
	          "returned %d (expected 2 rows and HOT_ROW_DUPLICATE): user 0 is a user like any "
	          "other, and the counter counts the rows of likes", (long long)zero_rows, again);
	struct app seen = { 0 };
	struct hot_row_app app = { check, &seen };
	int a = like_post(db, -5, -7, NULL);
	int b = like_post(db, INT64_MAX, INT64_MIN, &app);
	expect_check_given(&seen, INT64_MAX, INT64_MIN);
	int c = like_post(db, -5, INT64_MAX, NULL);
	lt_expect(a == 0 && b == 0 && c == 0, "int64", "likes of post -5 by user -7, of post "
	          "INT64_MAX by user INT64_MIN and of post -5 by user INT64_MAX: expected 0, 0, 0, "
	          "got %d, %d, %d (%s)%s", a, b, c, labtest_why(db), a != 0 ? ": a negative id is "
	          "an int64_t too; print it with PRId64, not as unsigned" : "");
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = -5"), 2, "posts.likes of post -5");
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 9223372036854775807"), 1,
	              "posts.likes of post INT64_MAX");
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM likes WHERE (post_id = -5 AND user_id"
	                   " IN (-7, 9223372036854775807)) OR (post_id = 9223372036854775807 AND"
	                   " user_id = -9223372036854775807 - 1)"), 3,
	                   "rows in likes with exactly those ids", "int64");
}

/* The session settings a like could be tempted to change (a COMMIT that
 * does not wait for the disk is faster), as one string. */
#define SETTINGS_LEN 2048

static int take_text(void *arg, int ncols, const char *const *values)
{
	snprintf(arg, SETTINGS_LEN, "%s", ncols > 0 && values[0] ? values[0] : "(null)");
	return 0;
}

static void settings(struct kit_db *db, char *out)
{
	/* SQLite: the pragmas a connection keeps; PostgreSQL: every setting a
	 * SET of this session changed, whatever its name; MariaDB: the
	 * session variables a like could be tempted to change. */
	const char *sql = kit_db_engine(db) == KIT_DB_SQLITE
		? "SELECT (SELECT synchronous FROM pragma_synchronous) || ' ' ||"
		  " (SELECT journal_mode FROM pragma_journal_mode) || ' ' ||"
		  " (SELECT foreign_keys FROM pragma_foreign_keys) || ' busy_timeout=' ||"
		  " (SELECT timeout FROM pragma_busy_timeout) || ' cache_size=' ||"
		  " (SELECT cache_size FROM pragma_cache_size) || ' temp_store=' ||"
		  " (SELECT temp_store FROM pragma_temp_store) || ' locking_mode=' ||"
		  " (SELECT locking_mode FROM pragma_locking_mode) || ' recursive_triggers=' ||"
		  " (SELECT recursive_triggers FROM pragma_recursive_triggers)"
		: kit_db_engine(db) == KIT_DB_MYSQL
		? "SELECT CONCAT_WS(' ', @@session.autocommit, @@session.tx_isolation,"
		  " @@session.innodb_lock_wait_timeout, @@session.lock_wait_timeout,"
		  " @@session.max_statement_time, @@session.sql_mode, @@session.foreign_key_checks,"
		  " @@session.unique_checks, @@session.wait_timeout)"
		: "SELECT current_setting('synchronous_commit') || ' ' || current_setting('search_path')"
		  " || ' ' || current_setting('lock_timeout') || ' ' || current_setting('statement_timeout')"
		  " || ' ' || current_setting('default_transaction_isolation') || ' ' ||"
		  " COALESCE((SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings"
		  " WHERE source = 'session'), '')";
	out[0] = '\0';
	lt_expect(kit_db_query(db, sql, 0, NULL, take_text, out) == 0, NULL, "reading the session "
	          "settings: %s", kit_db_errmsg(db));
}

/* What the hook watches during the likes: the first statement of a
 * like's own that sets something (SET, SET LOCAL, MariaDB's SET STATEMENT
 * ... FOR, PRAGMA; sent with kit_db_exec or by the kit for it, as
 * kit_db_set_lock_timeout sends SET lock_timeout on the servers), and the
 * connection's lock wait (kit_db_lock_timeout: SQLite's busy wait, kept
 * in C by the kit, which a like can change and put back without a
 * statement) as each statement starts. */
struct setting_watch {
	struct kit_db *db;
	int wait;                       /* the caller's lock wait, before the likes */
	char set[SETTINGS_LEN];
	char waited[200];
};

static void setting_seen(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct setting_watch *w = arg;
	(void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || sql == NULL)
		return;
	int wait = kit_db_lock_timeout(w->db);
	if (!w->waited[0] && wait != w->wait)
		snprintf(w->waited, sizeof w->waited, "%d ms at \"%.80s\"", wait, sql);
	if (w->set[0])
		return;
	if (lt_sql_is(sql, "SET") || lt_sql_is(sql, "PRAGMA"))
		snprintf(w->set, SETTINGS_LEN, "%.200s", lt_sql_verb(sql));
}

/* A like leaves its connection's settings as it found them, on every
 * path (a like, a duplicate, a missing post, a refusal), also when the
 * session did not start from the defaults (synchronous_commit =
 * remote_write on PostgreSQL, synchronous = FULL and a 60 s busy wait on
 * SQLite). And it sets nothing for its own transaction either: a SET
 * LOCAL synchronous_commit = off makes its COMMIT return before the like
 * is on disk, a SET LOCAL lock_timeout (or MariaDB's SET STATEMENT
 * innodb_lock_wait_timeout = ... FOR) overrules the caller's lock wait;
 * both end with the transaction, so no setting read afterwards shows
 * them, and a like needs no setting of its own at all. */
static void like_post__leaves_the_session_as_it_found_it(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct app a = { .answer = 1 };
	struct hot_row_app no = { check, &a };
	char before[SETTINGS_LEN], after[SETTINGS_LEN];
	static struct setting_watch w;
	memset(&w, 0, sizeof w);
	w.db = db;
	make_post(t);
	/* PostgreSQL: what the like's own transaction runs with, read at its
	 * COMMIT by a deferred trigger (a SET LOCAL, or a set_config(name,
	 * value, true) sent in a SELECT, leaves no SET in the text and is
	 * gone once the transaction ends). */
	if (t->engine == KIT_DB_POSTGRES)
		labtest_exec(t, "CREATE TABLE like_settings (name text, setting text);"
		             "CREATE FUNCTION note_like_settings() RETURNS trigger LANGUAGE plpgsql AS $f$"
		             " BEGIN INSERT INTO like_settings SELECT name, setting FROM pg_settings;"
		             " RETURN NULL; END $f$;"
		             "CREATE CONSTRAINT TRIGGER note_like_settings AFTER INSERT ON likes"
		             " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION note_like_settings()");

	for (int start = 0; start < 2; start++) {
		/* first, so that the values set next are the ones that stand */
		if (start == 1)
			lt_session_own_values(t, db); /* a RESET puts back another value */
		if (start == 1)
			labtest_exec(t, t->engine == KIT_DB_SQLITE ? "PRAGMA synchronous = FULL"
			                : t->engine == KIT_DB_MYSQL ? "SET SESSION innodb_lock_wait_timeout = 17"
			                : "SET synchronous_commit = remote_write;"
			                  " SET default_transaction_isolation = 'repeatable read'");
		if (start == 1 && t->engine == KIT_DB_SQLITE)
			lt_expect(kit_db_set_lock_timeout(db, 60000) == 0, NULL, "the test's own busy "
			          "wait of 60 s: %s", kit_db_errmsg(db));
		settings(db, before);
		/* and all else a session keeps (the harness's list: every
		 * PRAGMA, statements PREPAREd by name, cursors, LISTENs,
		 * temporary tables, locks held past the transaction) */
		char kept[LT_SESSION_LEN];
		lt_session(t, db, kept, sizeof kept);
		w.wait = kit_db_lock_timeout(db);
		kit_db_set_hook(db, setting_seen, &w);
		int rc[4] = { like_post(db, 1, 10 + start, NULL), like_post(db, 1, 10 + start, NULL),
		              like_post(db, 999, 1, NULL), like_post(db, 1, 20 + start, &no) };
		kit_db_set_hook(db, NULL, NULL);
		lt_expect(w.set[0] == '\0', "session", "like_post sent \"%s\": a like needs no setting "
		          "of its own, not even for its own transaction (SET LOCAL synchronous_commit = "
		          "off makes COMMIT return before the like is on disk; a lock wait of its own, "
		          "kit_db_set_lock_timeout's too, overrules the caller's, whose connection it "
		          "is)", w.set);
		lt_expect(w.waited[0] == '\0', "session", "the connection's lock wait was %d ms before "
		          "the likes and %s during one: like_post set a lock wait of its own "
		          "(kit_db_set_lock_timeout), which overrules the caller's, whose connection it "
		          "is, even when it puts the caller's back afterwards", w.wait, w.waited);
		lt_expect(rc[0] == 0 && rc[1] == HOT_ROW_DUPLICATE && rc[2] == HOT_ROW_NO_POST &&
		          rc[3] == HOT_ROW_REFUSED, NULL, "a like, a duplicate, a missing post, a refusal "
		          "returned %d, %d, %d, %d", rc[0], rc[1], rc[2], rc[3]);
		settings(db, after);
		lt_expect(strcmp(before, after) == 0, "session",
		          "the session's settings were \"%s\" before four likes (one of each outcome) and "
		          "\"%s\" after: like_post changed a setting of the caller's connection and left "
		          "it so (a SET or PRAGMA that outlives the call; SET LOCAL ends with the "
		          "transaction)", before, after);
		lt_session_unchanged(t, db, kept, "four likes (one of each outcome)", "session");
		if (t->engine != KIT_DB_POSTGRES)
			continue;
		char inside[SETTINGS_LEN] = "";
		lt_expect(kit_db_query(db, "SELECT COALESCE(string_agg(DISTINCT s.name || ' = ' ||"
		                       " s.setting || ' (the session''s: ' || p.setting || ')', ', '), '')"
		                       " FROM like_settings s JOIN pg_settings p USING (name)"
		                       " WHERE s.setting IS DISTINCT FROM p.setting", 0, NULL, take_text,
		                       inside) == 0, NULL, "reading the settings seen at the like's "
		          "COMMIT: %s", kit_db_errmsg(db));
		lt_expect(labtest_int(t, "SELECT count(DISTINCT name) FROM like_settings") > 0, NULL,
		          "the test's deferred trigger on likes saw no like commit");
		lt_expect(inside[0] == '\0', "session", "at the COMMIT of a like (a deferred trigger on "
		          "likes read pg_settings there) %s: like_post set it for its own transaction "
		          "(SET LOCAL, set_config(name, value, true) sent in a SELECT, or a BEGIN "
		          "ISOLATION LEVEL of its own where the session runs at another). It ends with "
		          "the transaction, but while it lasts it decides for the caller: "
		          "synchronous_commit = off makes COMMIT return before the like is on disk, a "
		          "lock_timeout makes the like give up on the hot row where the caller waits, "
		          "an isolation level overrules the one the caller chose for its connection",
		          inside);
		labtest_exec(t, "DELETE FROM like_settings");
	}
	labtest_expect_fresh(t, "like_post__leaves_the_session_as_it_found_it", "session",
	                     LT_KEPT_SETTING);
}

/* "anything else to refuse it": not only 1, and the check asked once. */
static void like_post__any_nonzero_answer_refuses(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	/* Every answer from -4095 to 4095 but 0 (every errno value, negated
	 * or not: -ETIMEDOUT or -EAGAIN taken for "the filter could not
	 * decide", or 1 for "flagged, still allowed", lets a no through),
	 * then some wider ones (256 and INT_MIN are 0 in a char). A refused
	 * like returns before it touches the database: microseconds each. */
	/* Then, past that range, every power of two with its neighbours, of
	 * either sign, and 8,000 values drawn over the whole of int (a fixed
	 * seed): a special answer of the code's own ("-10000: filter down")
	 * is met wherever it sits, with odds of 1 in 2^32 / 8,000 for one
	 * value that is neither small nor near a power of two. */
	enum { POWERS = 31 * 3 * 2, DRAWN = 8000 };
	static int wide[7 + POWERS + DRAWN];
	static const int fixed[] = { 256, 65536, 1 << 24, INT_MAX, INT_MIN, INT_MIN + 1, -65536 };
	int nw = 0;
	for (int i = 0; i < 7; i++)
		wide[nw++] = fixed[i];
	for (int b = 0; b < 31; b++)
		for (int d = -1; d <= 1; d++) {
			int64_t v = ((int64_t)1 << b) + d;
			if (v > 0 && v <= INT_MAX)
				wide[nw++] = (int)v;
			if (-v >= INT_MIN && -v < 0)
				wide[nw++] = (int)-v;
		}
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (int i = 0; i < DRAWN; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int v = (int)(uint32_t)(x >> 32);
		if (v != 0)
			wide[nw++] = v;
	}
	int n = 2 * 4095 + nw;
	int let_through = 0, first_through = 0, miscalled = 0, first_miscalled = 0, first_calls = 0;
	int first_errno = 0;
	make_post(t);

	/* A check that did I/O leaves errno as its last call did: EINTR from
	 * a read a signal woke, EAGAIN from one that would block. Its answer
	 * is its return value alone (hot_row.h), asked once. */
	static const int left[] = { 0, EINTR, EAGAIN };
	for (int i = 0; i < n; i++) {
		int answer = i < 4095 ? -(i + 1) : i < 2 * 4095 ? i - 4095 + 1 : wide[i - 2 * 4095];
		struct app a = { .answer = answer, .leave_errno = left[i % 3] };
		struct hot_row_app app = { check, &a };
		if (like_post(db, 1, 5, &app) != HOT_ROW_REFUSED && let_through++ == 0)
			first_through = answer;
		int calls = atomic_load(&a.calls);
		if (calls != 1 && miscalled++ == 0) {
			first_miscalled = answer;
			first_calls = calls;
			first_errno = left[i % 3];
		}
	}
	lt_expect(let_through == 0, "app-check",
	          "the app's check answered each of -4095 .. -1, 1 .. 4095, every power of two and "
	          "its neighbours of either sign, and 8,000 values drawn over the whole of int "
	          "(INT_MAX, INT_MIN, ...), each of which refuses the like: %d of those "
	          "likes were not answered HOT_ROW_REFUSED, the first for the answer %d. Any answer "
	          "but 0 is the check's no, negative ones included (hot_row.h): is some answer taken "
	          "for \"the filter could not decide\" (-ETIMEDOUT, -EAGAIN: fail open) or for a yes "
	          "with a flag (1), or is the answer kept in something narrower than int?",
	          let_through, first_through);
	lt_expect(miscalled == 0, "app-check",
	          "the app's check answered %d%s and was called %d time(s) for one like (%d answers "
	          "so): expected once (hot_row.h: exactly once per call). Any answer but 0 is the "
	          "check's no, negative ones included, and errno is no part of it; %s",
	          first_miscalled, first_errno == EINTR ? ", leaving errno at EINTR," :
	          first_errno == EAGAIN ? ", leaving errno at EAGAIN," : "", first_calls, miscalled,
	          first_errno ? "is a check that left EINTR or EAGAIN behind taken for one that was "
	          "interrupted, and asked again?" : "is a negative answer taken for the filter's own "
	          "error and the check asked again?");
	lt_expect_int_hint(counter(t), 0, "posts.likes after the refused likes (is the answer kept in "
	                   "something narrower than int? 256 and INT_MIN are 0 in a char)", "app-check");
}

/* "unless app or app->check is NULL": an app with no check lets it through. */
static void like_post__app_without_check_lets_through(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct hot_row_app app = { NULL, NULL };
	make_post(t);

	lt_expect_int_hint(like_post(db, 1, 5, &app), 0, "a like with an app whose check is NULL", "app-check");
	lt_expect_int(counter(t), 1, "posts.likes");
}

/* A like that finds the counter's row held by another transaction waits
 * for it, as long as its connection's own limit allows (the caller's,
 * kit_db_set_lock_timeout: SQLite's busy wait, 5 s; PostgreSQL's
 * lock_timeout, none; MariaDB's innodb_lock_wait_timeout, 50 s): a limit
 * of the like's own ("fail fast": SET LOCAL lock_timeout = '50ms')
 * turns the queue of a hot row into errors. Another transaction holds
 * the row (on SQLite, the write lock) until the like is seen waiting
 * (the server's view of its session; SQLite's busy wait through the
 * hook), then 1 s more, then commits: the like must then count. */
struct held_like {
	struct kit_db *db;
	atomic_int waiting;            /* SQLite: the hook saw a busy wait */
	atomic_int done;
	int rc;
	int64_t start_ns, end_ns;
};

static void busy_seen(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)sql, (void)t_ns;
	if (ev == KIT_DB_LOCK_WAIT)
		atomic_store(&((struct held_like *)arg)->waiting, 1);
}

#define FAST_CLOCK 3600             /* the liker's own clock: a second reads as an hour */

static void *like_behind_holder(void *arg)
{
	struct held_like *h = arg;
	h->start_ns = kit_load_now_ns();
	/* A limit the like keeps itself in C, with clock_gettime ("a like
	 * that waited over 2 s is shed"), is a limit of its own as much as a
	 * SET LOCAL lock_timeout: its clock runs an hour a second, so the
	 * second it is held here outlasts any such limit. */
	lt_clock_fast_this_thread(FAST_CLOCK);
	h->rc = like_post(h->db, 1, 7, NULL);
	lt_clock_fast_this_thread(1);
	h->end_ns = kit_load_now_ns();
	atomic_store(&h->done, 1);
	return NULL;
}

/* Whether the liker's session (id: PostgreSQL's pid, MariaDB's
 * connection id) is seen waiting for a lock. */
static bool liker_waits(struct labtest *t, struct held_like *h, int64_t id)
{
	if (t->engine == KIT_DB_SQLITE)
		return atomic_load(&h->waiting) != 0;
	if (t->engine == KIT_DB_MYSQL)
		return labtest_innodb_waiters(t, 1) == 1;
	return lt_lock_waiting(labtest_db(t), id) == 1;
}

static void like_post__waits_for_a_held_counter(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	struct kit_db *holder = labtest_connect(t);
	struct held_like h = { .db = labtest_connect(t) };
	atomic_init(&h.waiting, 0);
	atomic_init(&h.done, 0);
	int64_t id = lt_session_id(h.db);
	if (id < 0)
		fail_msg("the liker's session id: %s", kit_db_errmsg(h.db));
	if (kit_db_begin(holder) != 0 ||
	    kit_db_exec(holder, "UPDATE posts SET likes = likes WHERE id = 1", 0, NULL) != 0)
		fail_msg("the holder: %s", kit_db_errmsg(holder));
	kit_db_set_hook(h.db, busy_seen, &h);
	pthread_t th;
	if (pthread_create(&th, NULL, like_behind_holder, &h) != 0)
		fail_msg("pthread_create");

	/* At most 30 s to be seen waiting (or to have given up already). */
	bool seen = false;
	for (int i = 0; i < 3000 && !atomic_load(&h.done) && !(seen = liker_waits(t, &h, id)); i++)
		util_sleep_ns(10000000);
	int64_t seen_ns = kit_load_now_ns();
	/* Held 1 s more; the like may not end meanwhile. */
	while (seen && !atomic_load(&h.done) && kit_load_now_ns() - seen_ns < 1000000000LL)
		util_sleep_ns(10000000);
	bool ended_while_held = atomic_load(&h.done) != 0;
	kit_db_commit(holder);
	pthread_join(th, NULL);
	kit_db_set_hook(h.db, NULL, NULL);
	kit_db_close(h.db);
	kit_db_close(holder);

	lt_expect(h.rc == 0 && !ended_while_held, "lock-wait",
	          "another transaction held the counter's row (on SQLite the write lock) while a "
	          "like ran: the like %s after %.0f ms and returned %d, while the row was %s. A like "
	          "waits for a held row as long as its connection's own limit allows (the caller "
	          "sets it: kit_db_set_lock_timeout); does like_post set a shorter one of its own "
	          "(SET LOCAL lock_timeout, innodb_lock_wait_timeout, PRAGMA busy_timeout), give up "
	          "on KIT_DB_BUSY, or time the wait itself (clock_gettime, time(), gettimeofday(): "
	          "here the like's clocks ran an hour for each second it waited) and give up past a limit?", ended_while_held ? "ended" : "was let go", 
	          (double)(h.end_ns - h.start_ns) / 1e6, h.rc,
	          ended_while_held ? "still held" : "released (after it was seen waiting and 1 s more)");
	lt_expect_int(counter(t), 1, "posts.likes after the like that waited");

	/* The caller's limit, met: its connection waits 300 ms for a lock
	 * (1 s on MariaDB, whose limit is whole seconds) and the counter's
	 * row stays held longer. The like returns KIT_DB_BUSY, the lock wait
	 * that gave up, with nothing written, and the same like works once the
	 * row is free. A statement sent again after its KIT_DB_BUSY ("only the
	 * statement was undone") waits a second limit, and on MariaDB, where
	 * the kit has rolled the transaction back by then (as InnoDB does after
	 * a deadlock), it is refused: KIT_DB_ERR, which tells the caller not
	 * to retry a like that only met a busy row. */
	struct kit_db *short_wait = labtest_connect(t);
	holder = labtest_connect(t);
	assert_int_equal(kit_db_set_lock_timeout(short_wait, 300), 0);
	if (kit_db_begin(holder) != 0 ||
	    kit_db_exec(holder, "UPDATE posts SET likes = likes WHERE id = 1", 0, NULL) != 0)
		fail_msg("the holder: %s", kit_db_errmsg(holder));
	int busy = like_post(short_wait, 1, 9, NULL);
	kit_db_commit(holder);
	kit_db_close(holder);
	int64_t rows9 = labtest_int(t, "SELECT count(*) FROM likes WHERE user_id = 9");
	int again = like_post(short_wait, 1, 9, NULL);
	kit_db_close(short_wait);
	lt_expect(busy == KIT_DB_BUSY && rows9 == 0 && again == 0 && counter(t) == 2, "lock-wait",
	          "with its connection's lock wait set to 300 ms by the caller (1 s on MariaDB) and "
	          "the counter's row held longer, like_post returned %d and left %lld like row(s); "
	          "once the row was free, the same like returned %d, posts.likes %lld (expected "
	          "KIT_DB_BUSY (%d), none, then 0 and 2)%s", busy, (long long)rows9, again,
	          (long long)counter(t), KIT_DB_BUSY, busy == KIT_DB_ERR ? ": KIT_DB_ERR for a "
	          "lock wait that gave up. Is a statement sent again after its KIT_DB_BUSY? A lock "
	          "wait that timed out (or a deadlock) has ended the transaction on the servers, so "
	          "the second one is refused; return the KIT_DB_BUSY and let the caller decide" : "");
}


/* ---- two likes at once, of two posts, on two connections ---- */

#define MEET_MS 5000               /* how long one like waits for the other to come */

/* A meeting point: each comes and waits for the others, MEET_MS at most. */
struct meet {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int arrived, need;
	atomic_int met;                /* how many found all the others there */
};

static void meet(struct meet *m)
{
	struct timespec until = lt_deadline_ms(MEET_MS);
	pthread_mutex_lock(&m->mu);
	m->arrived++;
	pthread_cond_broadcast(&m->cv);
	while (m->arrived < m->need && pthread_cond_timedwait(&m->cv, &m->mu, &until) == 0)
		;
	if (m->arrived >= m->need)
		atomic_fetch_add(&m->met, 1);
	pthread_mutex_unlock(&m->mu);
}

/* An app check that waits, inside, for the other like's check. */
static int check_meets(void *arg, int64_t post_id, int64_t user_id)
{
	(void)post_id, (void)user_id;
	meet(arg);
	return 0;
}

/* A hook that waits, at one statement of the like (the first that
 * starts with word or alt), for the other like's. At COMMIT on a server;
 * on SQLite at BEGIN, before it runs: the second like's BEGIN IMMEDIATE
 * must then reach the file's lock and wait there, in the connection's busy
 * wait, not on something of the process. */
struct at_word {
	struct meet *m;
	const char *word, *alt;
	bool came;
};

static void word_meets(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct at_word *c = arg;
	(void)t_ns;
	if ((ev == KIT_DB_STMT_START || ev == KIT_DB_TX_STMT_START) && !c->came &&
	    (lt_sql_is(sql, c->word) || lt_sql_is(sql, c->alt))) {
		c->came = true;
		meet(c->m);
	}
}

struct side_like {
	struct kit_db *db;
	int64_t post, user;            /* user 0: user 7 */
	const struct hot_row_app *app;
	int rc;
};

static void *like_side(void *arg)
{
	struct side_like *l = arg;
	l->rc = like_post(l->db, l->post, l->user ? l->user : 7, l->app);
	return NULL;
}

#define CROWD 8                     /* likes at once whose checks all meet */
#define BIG_CROWD 130               /* likes at once whose checks say no after all meet */

/* A check with no state of its own (a NULL arg) that meets the others of
 * the crowd at the meeting point named here: a like that runs such
 * checks one at a time ("its state is global") makes likes wait. */
static struct meet *crowd_meet;

static int check_meets_without_arg(void *arg, int64_t post_id, int64_t user_id)
{
	(void)arg, (void)post_id, (void)user_id;
	meet(crowd_meet);
	return 0;
}

/* A check that meets the others, then says no: the like then writes
 * nothing, so a crowd of them needs no connection of its own each. */
static int check_meets_then_no(void *arg, int64_t post_id, int64_t user_id)
{
	(void)post_id, (void)user_id;
	meet(arg);
	return 1;
}

static void init_meet(struct meet *m)
{
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	m->arrived = 0;
	m->need = 2;
	atomic_init(&m->met, 0);
}

/* The side-by-side likes' second post: its id agrees with 1 in its low
 * 32 bits and modulo every number up to 16 and many more (100, 1,000,
 * 64, ...): likes that share a lock chosen by id & mask or id % n share
 * it here. */
#define POST_B (1 + ((int64_t)1 << 32) * 1126125)

/* Runs likes of posts 1 and POST_B by user 7, one per connection, at once. */
static void two_likes(struct kit_db *const dbs[2], const struct hot_row_app *app, int rc[2])
{
	struct side_like l[2];
	pthread_t th[2];
	for (int i = 0; i < 2; i++) {
		l[i] = (struct side_like){ .db = dbs[i], .post = i ? POST_B : 1, .app = app, .rc = -999 };
		if (pthread_create(&th[i], NULL, like_side, &l[i]) != 0)
			fail_msg("pthread_create");
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		rc[i] = l[i].rc;
	}
}

/* Many threads, each with its own connection, like at once (hot_row.h):
 * nothing in like_post makes one wait for another but the counter's row
 * lock. Two likes of two different posts on two connections: their app
 * checks run at the same time (each check waits, inside, for the other;
 * the header lets it be called from several threads at once), and, on
 * PostgreSQL and MariaDB, both likes are at their COMMIT at the same time
 * (each waits there for the other): two posts' counters are two rows,
 * and neither like's UPDATE may touch, or wait for, the other's row. A
 * mutex of the process around the check or the transaction, or an
 * UPDATE no index serves (WHERE id + 0 = ...: on MariaDB it locks every
 * row it reads), makes one like wait for the other: it then waits at its
 * meeting point for 5 s in vain; so does one of a few mutexes chosen by
 * the post's id (id % 16), which the second post's id, POST_B, shares
 * with post 1. (SQLite: one writer at a time, the file's lock, so the
 * likes meet at their BEGIN, before it runs: the second then waits for
 * the file in its busy wait, not for a mutex of the process.) */
static void like_post__two_likes_side_by_side(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	char sql[100];
	snprintf(sql, sizeof sql, "INSERT INTO posts (id) VALUES (%lld)", (long long)POST_B);
	labtest_exec(t, sql);
	struct kit_db *dbs[2] = { labtest_connect(t), labtest_connect(t) };
	struct meet m;
	int rc[2];

	long sems = lt_lock_sem_waits();
	init_meet(&m);
	struct hot_row_app app = { check_meets, &m };
	two_likes(dbs, &app, rc);
	int met_checks = atomic_load(&m.met);

	/* Then CROWD likes at once, each on its own connection, users 100 on,
	 * posts 1 and POST_B in turn: all their checks run together (a cap
	 * of the process on checks running at once, "protect the spam
	 * filter", makes likes queue for a check slot). */
	struct kit_db *crowd[CROWD];
	struct side_like cl[CROWD];
	pthread_t cth[CROWD];
	init_meet(&m);
	m.need = CROWD;
	crowd_meet = &m;
	struct hot_row_app bare = { check_meets_without_arg, NULL };
	for (int i = 0; i < CROWD; i++)
		crowd[i] = labtest_connect(t);
	for (int i = 0; i < CROWD; i++) {
		cl[i] = (struct side_like){ .db = crowd[i], .post = i % 2 ? POST_B : 1, .user = 100 + i,
		                            .app = i % 4 == 3 ? &bare : &app, .rc = -999 };
		if (pthread_create(&cth[i], NULL, like_side, &cl[i]) != 0)
			fail_msg("pthread_create");
	}
	int crowd_ok = 0;
	for (int i = 0; i < CROWD; i++) {
		pthread_join(cth[i], NULL);
		crowd_ok += cl[i].rc == 0;
		kit_db_close(crowd[i]);
	}
	int met_crowd = atomic_load(&m.met);
	lt_expect(crowd_ok == CROWD, NULL, "%d likes of posts 1 and %lld on %d connections at once: "
	          "%d returned 0", CROWD, (long long)POST_B, CROWD, crowd_ok);
	lt_expect(met_crowd == CROWD, "app-check", "%d likes on %d connections at once: only %d of "
	          "their app checks found all the others running (each waited %d s inside for the "
	          "rest; a quarter of them are checks whose arg is NULL): something lets only so many "
	          "checks run at once (a semaphore of the process, a pool of workers for the check, "
	          "a mutex around checks that keep no state of their own), so a like waits for other "
	          "likes' checks where nothing but the counter's row may make it wait", CROWD, CROWD,
	          met_crowd,
	          MEET_MS / 1000);
	labtest_exec(t, "DELETE FROM likes WHERE user_id >= 100");
	labtest_exec(t, "UPDATE posts SET likes = likes - 4");

	/* Then BIG_CROWD likes at once whose checks all meet and then say no
	 * (on SQLite only: the check is the same code on every engine). A
	 * refused like touches no connection, so they share this one: a cap
	 * of the process on checks in flight above the eight of the crowd
	 * (64, 100, 128 "to protect the spam filter") queues likes too. */
	int met_big = BIG_CROWD, big_refused = BIG_CROWD;
	if (t->engine == KIT_DB_SQLITE) {
		struct side_like *bl = calloc(BIG_CROWD, sizeof *bl);
		pthread_t *bth = calloc(BIG_CROWD, sizeof *bth);
		if (bl == NULL || bth == NULL)
			fail_msg("calloc");
		init_meet(&m);
		m.need = BIG_CROWD;
		struct hot_row_app no = { check_meets_then_no, &m };
		int started = 0;
		for (int i = 0; i < BIG_CROWD; i++) {
			bl[i] = (struct side_like){ .db = labtest_db(t), .post = 1, .user = 1000 + i,
			                            .app = &no, .rc = -999 };
			if (pthread_create(&bth[i], NULL, like_side, &bl[i]) != 0)
				break;
			started++;
		}
		big_refused = 0;
		for (int i = 0; i < started; i++) {
			pthread_join(bth[i], NULL);
			big_refused += bl[i].rc == HOT_ROW_REFUSED;
		}
		lt_expect(started == BIG_CROWD, NULL, "pthread_create: %d of %d threads started",
		          started, BIG_CROWD);
		met_big = atomic_load(&m.met);
		free(bl);
		free(bth);
	}
	lt_expect(big_refused == BIG_CROWD, "app-check", "%d likes whose app checks said no: %d "
	          "returned HOT_ROW_REFUSED", BIG_CROWD, big_refused);
	/* A cap above every crowd a check can start (256, 1,000) makes
	 * nobody wait here, but it is a semaphore all the same: its waits
	 * are counted, whether they had to wait or not. */
	sems = lt_lock_sem_waits() - sems;
	lt_expect(sems == 0, "app-check", "the likes of this check waited on a semaphore %ld "
	          "times (sem_wait, sem_timedwait or sem_trywait): a semaphore around the app check "
	          "is a cap of its own on checks in flight, which queues likes once more of them "
	          "run at once than it lets through, however high it is set (hot_row.h: nothing "
	          "in a like makes it wait for another but the counter's row lock)", sems);
	lt_expect(met_big == BIG_CROWD, "app-check", "%d likes at once, whose app checks each "
	          "waited (%d s at most) for all the others to be running and then said no: only %d "
	          "found them all: something lets only so many checks run at once (a semaphore of "
	          "64 or 128 \"to protect the spam filter\", a pool of workers), so a like waits for "
	          "other likes' checks where nothing but the counter's row may make it wait "
	          "(hot_row.h: no cap of its own on checks in flight)", BIG_CROWD, MEET_MS / 1000,
	          met_big);

	int met_commits = 2, rc2[2] = { 0, 0 };
	{
		labtest_exec(t, "DELETE FROM likes");
		init_meet(&m);
		bool file = t->engine == KIT_DB_SQLITE;
		struct at_word c[2];
		for (int i = 0; i < 2; i++) {
			c[i] = (struct at_word){ &m, file ? "BEGIN" : "COMMIT", file ? "START" : "END",
			                         false };
			kit_db_set_hook(dbs[i], word_meets, &c[i]);
		}
		two_likes(dbs, NULL, rc2);
		for (int i = 0; i < 2; i++)
			kit_db_set_hook(dbs[i], NULL, NULL);
		met_commits = atomic_load(&m.met);
	}
	kit_db_close(dbs[0]);
	kit_db_close(dbs[1]);

	lt_expect(rc[0] == 0 && rc[1] == 0 && rc2[0] == 0 && rc2[1] == 0, NULL, "likes of posts 1 "
	          "and %lld by user 7 on two connections at once returned %d and %d (then %d and %d)",
	          (long long)POST_B, rc[0], rc[1], rc2[0], rc2[1]);
	lt_expect(met_checks == 2, "app-check", "two likes on two connections at once: the app's "
	          "check of one never ran while the other's was running (%d of the two checks waited "
	          "%d s inside for the other, in vain): %s The header lets it run in several threads "
	          "at once, and with a slow check a lock around it makes every like of every post "
	          "wait in one line",
	          2 - met_checks, MEET_MS / 1000,
	          t->engine == KIT_DB_SQLITE
	                  ? "is the check called inside the transaction? On SQLite BEGIN IMMEDIATE "
	                    "takes the file's write lock, so the other like waits for it at its BEGIN "
	                    "(or is the check called under a lock of the process?)."
	                  : "is the check called under a lock of the process?");
	lt_expect(met_commits == 2 || t->engine != KIT_DB_SQLITE, "lock-late", "likes of posts 1 "
	          "and %lld on two connections at once: they were never both at their BEGIN at the "
	          "same time (%d of the two waited %d s there for the other, in vain), so one like "
	          "waited for the other before it sent anything: a mutex of the process around the "
	          "transaction? SQLite lets one writer in at a time already, and the second like "
	          "must wait for the file's lock in its connection's busy wait, which the caller "
	          "bounds (hot_row.h: nothing else in a like makes it wait for another)",
	          (long long)POST_B, 2 - met_commits, MEET_MS / 1000);
	lt_expect(met_commits == 2 || t->engine == KIT_DB_SQLITE, "lock-late", "likes of posts 1 and %lld on two connections at "
	          "once: they were never both at their COMMIT at the same time (%d of the two waited "
	          "%d s there for the other, in vain), so one like waited for the other although they "
	          "share no row: a mutex of the process around the transaction (one per post, or one "
	          "of a few chosen by the id: %lld %% 16 = 1 %% 16), or an UPDATE of the counter that "
	          "no index serves (WHERE id + 0 = $1, a cast of id: %s)", (long long)POST_B,
	          2 - met_commits, MEET_MS / 1000, (long long)POST_B, t->engine == KIT_DB_MYSQL ?
	          "MariaDB locks every row such an UPDATE reads, the other post's too" :
	          "it reads every post");
	snprintf(sql, sizeof sql, "SELECT likes FROM posts WHERE id = %lld", (long long)POST_B);
	lt_expect_int(labtest_int(t, sql), 2, "posts.likes of the second post");
}

/* Every statement refused from the like's first on (the database is
 * away for good): like_post returns an error after a few statements. A
 * retry without bound goes round for ever; here the refusals stop after
 * 200 statements (the hook ends them), and the count shows the loop. */
static void like_post__refused_for_good_ends(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct lt_refusals r;
	struct app a = { 0 };
	struct hot_row_app app = { check, &a };
	make_post(t);

	/* refused with an error, then with KIT_DB_BUSY (a lock wait that timed
	 * out, for ever: a loop that retries only BUSY never ends either) */
	for (int i = 0; i < LT_REFUSAL_KINDS; i++) {
		atomic_store(&a.calls, 0);
		lt_refusals_arm(db, &r, i);
		int rc = like_post(db, 1, 7, &app);
		lt_refusals_disarm(db);
		lt_expect(atomic_load(&a.calls) == 1, "app-check", "with every statement refused%s, "
		          "like_post() called the app's check %d times: it is called exactly once per "
		          "like, however often the like is tried", i ? " as busy (KIT_DB_BUSY)" : "",
		          atomic_load(&a.calls));
		lt_expect(i == 0 || rc == KIT_DB_BUSY, "rollback", "with every statement refused as "
		          "busy (KIT_DB_BUSY), like_post() returned %d: return the database's own "
		          "code, so the caller can tell a lock wait that timed out (worth a retry) "
		          "from a failure", rc);
		lt_expect(i == 1 || rc == KIT_DB_ERR, "rollback", "with every statement refused with "
		          "an error (KIT_DB_ERR, the database away for good), like_post() returned %d: "
		          "return the database's own code; KIT_DB_BUSY tells the caller to try again, "
		          "which it then does for as long as the database stays away", rc);
		lt_expect(r.stmts < 200, "rollback", "with every statement refused%s, like_post() ran "
		          "%d of them (the check stopped refusing after 200) and returned %d: a retry "
		          "without a bound never ends while the database is away or the row stays held; "
		          "give up after a few tries and return the error", i ? " as busy (KIT_DB_BUSY)" :
		          "", r.stmts, rc);
		lt_expect(rc < 0 && rc != HOT_ROW_DUPLICATE && rc != HOT_ROW_NO_POST &&
		          rc != HOT_ROW_REFUSED, "rollback", "with every statement refused%s like_post() "
		          "returned %d, not the database's error", i ? " as busy" : "", rc);
	}
	/* The database stays away a while longer: 16 more likes refused in a
	 * row (cheap: each is refused at its first statement). Then it is
	 * back, and the very next like must go to it: a "circuit breaker" of
	 * the like's own (after N failures in a row, answer KIT_DB_BUSY for a
	 * while without the database) turns the first likes after an outage
	 * into errors the database never gave, and the header gives a like
	 * the database's answer only. */
	for (int i = 0; i < 16; i++) {
		lt_refusals_arm(db, &r, i % LT_REFUSAL_KINDS);
		(void)like_post(db, 1, 7, &app);
		lt_refusals_disarm(db);
	}
	atomic_store(&a.calls, 0);
	int back = like_post(db, 1, 7, &app);
	lt_expect(back == 0 && atomic_load(&a.calls) == 1, "rollback", "the same like once the "
	          "database is back, right after 18 likes it refused in a row, returned %d and "
	          "called the app's check %d times (expected 0, once): a like that keeps failing "
	          "on its own for a while after failures (a circuit breaker: \"do not pile on a "
	          "database that is down\") answers for the database without asking it; the "
	          "caller decides how to back off", back, atomic_load(&a.calls));
	lt_expect_int(counter(t), 1, "posts.likes");

	/* PostgreSQL: a connection the server has really ended (its backend
	 * terminated, and the kit has seen it: kit_db_connected() says 0).
	 * The app's check is still called once: the header promises it per
	 * call, whatever the database answers afterwards. */
	if (t->engine != KIT_DB_POSTGRES)
		return;
	struct kit_db *gone = labtest_connect(t);
	bool dead = lt_end_session(t, gone, true);
	atomic_store(&a.calls, 0);
	int rc = dead ? like_post(gone, 1, 8, &app) : 0;
	kit_db_close(gone);
	lt_expect(dead, NULL, "the test's connection whose server process it ended still says it "
	          "is connected");
	lt_expect(atomic_load(&a.calls) == 1, "app-check", "on a connection the server had ended "
	          "(kit_db_connected() 0), like_post() called the app's check %d times and returned "
	          "%d: the check is called exactly once per call, whatever the database answers "
	          "afterwards (a like that gives up before the check when the connection looks "
	          "gone skips it)", atomic_load(&a.calls), rc);
	lt_expect(rc < 0 && rc != HOT_ROW_DUPLICATE && rc != HOT_ROW_NO_POST &&
	          rc != HOT_ROW_REFUSED, "rollback", "on a connection the server had ended, "
	          "like_post() returned %d: expected the database's error", rc);
}

/* ---- nothing but the counter's row: a like paused before its UPDATE ---- */

#define PAUSE_MS 5000              /* how long the other like may take meanwhile */

struct pause_at_update {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool seen, at_update, go;
};

/* Holds the like at its counter UPDATE until go. */
static void pause_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct pause_at_update *p = arg;
	(void)t_ns;
	if (ev != KIT_DB_STMT_START || p->seen || !lt_sql_is(sql, "UPDATE") ||
	    !lt_sql_names(sql, "posts"))
		return;
	p->seen = true;
	struct timespec until = lt_deadline_ms(4 * PAUSE_MS);
	pthread_mutex_lock(&p->mu);
	p->at_update = true;
	pthread_cond_broadcast(&p->cv);
	while (!p->go && pthread_cond_timedwait(&p->cv, &p->mu, &until) == 0)
		;
	pthread_mutex_unlock(&p->mu);
}

struct other_like {
	struct kit_db *db;
	int64_t user;
	int rc;
	atomic_int done;
};

static void *run_other_like(void *arg)
{
	struct other_like *l = arg;
	l->rc = like_post(l->db, 1, l->user, NULL);
	atomic_store(&l->done, 1);
	return NULL;
}

/* A like of post 1 by user 7 held just before its counter UPDATE (its
 * INSERT done, whatever else it sends before the UPDATE done too) while
 * a like of post 1 by user 8 runs on another connection: the counter's
 * row is not locked yet, so nothing should make the second like wait; it
 * must return 0 while the first is still held. A lock of the like's own
 * taken before the UPDATE (an advisory lock on the post, LOCK TABLE, a
 * SELECT ... FOR SHARE) queues every like of the post from that
 * statement on, as a counter locked early does, and shows here: the
 * second like is still waiting when the first is let go. PostgreSQL and
 * MariaDB: on SQLite BEGIN IMMEDIATE has the whole file. */
static void like_post__only_the_counter_makes_likes_wait(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	struct pause_at_update p = { .seen = false };
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	struct other_like first = { .db = labtest_connect(t), .user = 7 };
	struct other_like second = { .db = labtest_connect(t), .user = 8 };
	atomic_init(&first.done, 0);
	atomic_init(&second.done, 0);
	kit_db_set_hook(first.db, pause_hook, &p);
	pthread_t ta, tb;
	if (pthread_create(&ta, NULL, run_other_like, &first) != 0)
		fail_msg("pthread_create");
	/* The first like reaches its UPDATE (or ends without one). */
	struct timespec until = lt_deadline_ms(4 * PAUSE_MS);
	pthread_mutex_lock(&p.mu);
	while (!p.at_update && !atomic_load(&first.done) &&
	       pthread_cond_timedwait(&p.cv, &p.mu, &until) == 0)
		;
	bool held = p.at_update;
	pthread_mutex_unlock(&p.mu);
	bool second_ended = false;
	int64_t start_ns = kit_load_now_ns(), took_ns = 0;
	if (held) {
		if (pthread_create(&tb, NULL, run_other_like, &second) != 0)
			fail_msg("pthread_create");
		while (!atomic_load(&second.done) &&
		       kit_load_now_ns() - start_ns < (int64_t)PAUSE_MS * 1000000)
			util_sleep_ns(2000000);
		second_ended = atomic_load(&second.done) != 0;
		took_ns = kit_load_now_ns() - start_ns;
	}
	pthread_mutex_lock(&p.mu);
	p.go = true;
	pthread_cond_broadcast(&p.cv);
	pthread_mutex_unlock(&p.mu);
	if (held)
		pthread_join(tb, NULL);
	pthread_join(ta, NULL);
	kit_db_set_hook(first.db, NULL, NULL);
	kit_db_close(first.db);
	kit_db_close(second.db);
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);

	lt_expect(held, "like-first", "a like of post 1 returned %d without sending an UPDATE of "
	          "posts", first.rc);
	lt_expect(!held || (second_ended && second.rc == 0), "lock-late", "a like of post 1 by "
	          "user 8 %s while another like of post 1 (by user 7) was held just before its "
	          "counter UPDATE, the counter's row not yet locked by it: something else the "
	          "first like had taken before its UPDATE made the second wait (an advisory lock "
	          "on the post, a LOCK TABLE, a SELECT ... FOR SHARE or FOR UPDATE?). Every like "
	          "of the post queues behind that lock from the statement that takes it; only the "
	          "counter's UPDATE should make one like wait for another",
	          second_ended ? "returned an error" : "was still waiting after 5 s");
	(void)took_ns;
	lt_expect(first.rc == 0 && second.rc == 0 && counter(t) == 2, "lock-late", "the two likes "
	          "returned %d and %d, posts.likes %lld: expected 0, 0 and 2", first.rc, second.rc,
	          (long long)counter(t));
}

/* ---- the app's check answers, however long it takes ---- */

#define SLOW_CHECK_MS 2500

struct slow_no {
	atomic_int calls;
	atomic_llong end_ns;
};

static int check_slowly_no(void *arg, int64_t post_id, int64_t user_id)
{
	struct slow_no *s = arg;
	(void)post_id, (void)user_id;
	atomic_fetch_add(&s->calls, 1);
	util_sleep_ns((int64_t)SLOW_CHECK_MS * 1000000);
	atomic_store(&s->end_ns, kit_load_now_ns());
	return 1;
}

/* An app check that takes 2.5 s and says no: like_post waits for its
 * answer and returns HOT_ROW_REFUSED, writing nothing, after the check
 * has returned. A like that gives the check a deadline and lets the like
 * through past it ("fail open: the spam filter must not hang a like")
 * turns a slow no into a like the app refused; the like's own clock
 * (clock_gettime) runs an hour for each second here, so a deadline kept
 * with it passes at once. */
static void like_post__waits_for_a_slow_check(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_post(t);
	struct slow_no s;
	atomic_init(&s.calls, 0);
	atomic_init(&s.end_ns, 0);
	struct hot_row_app app = { check_slowly_no, &s };
	lt_clock_fast_this_thread(FAST_CLOCK);
	int rc = like_post(db, 1, 7, &app);
	lt_clock_fast_this_thread(1);
	int64_t returned_ns = kit_load_now_ns();
	/* A check still running on a thread of the like's own ends first. */
	for (int i = 0; i < 2 * SLOW_CHECK_MS / 10 && atomic_load(&s.end_ns) == 0; i++)
		util_sleep_ns(10000000);
	int64_t end_ns = atomic_load(&s.end_ns);
	lt_expect(rc == HOT_ROW_REFUSED && end_ns != 0 && end_ns <= returned_ns, "app-check",
	          "an app check that took %d ms and said no: like_post returned %d (expected "
	          "HOT_ROW_REFUSED, %d) %s. hot_row.h: it returns HOT_ROW_REFUSED if the check says "
	          "no, however long the check takes (does the like give the check a deadline and "
	          "go on without its answer?)", SLOW_CHECK_MS, rc, HOT_ROW_REFUSED,
	          end_ns == 0 ? "and the check never returned"
	          : end_ns <= returned_ns ? "after the check returned"
	          : "before the check had returned");
	lt_expect_int_hint(atomic_load(&s.calls), 1, "calls of the app's check", "app-check");
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM likes"), 0, "rows in likes after a refusal");
	lt_expect_int(counter(t), 0, "posts.likes after a refusal");

	/* And a check that takes 200 ms (hours on the like's own clock) and
	 * says yes: the like goes through. A like that refuses whatever
	 * answered late ("a slow filter is a degraded one: fail closed")
	 * refuses a like the app let through. */
	struct app yes = { .work_ms = 200 };
	struct hot_row_app slow_yes = { check, &yes };
	lt_clock_fast_this_thread(FAST_CLOCK);
	rc = like_post(db, 1, 8, &slow_yes);
	lt_clock_fast_this_thread(1);
	lt_expect(rc == 0 && counter(t) == 1, "app-check", "an app check that took 200 ms (hours "
	          "by the like's own clock here) and said yes: like_post returned %d, the counter "
	          "at %lld, expected 0 and 1. The answer is what the check returns, however long "
	          "it took (does the like refuse a check that answered late, \"fail closed\"?)",
	          rc, (long long)counter(t));
}

/* ---- allocations ---- */

struct alloc_like {
	struct labtest *t;
	struct kit_db *db;
	struct app a;
	struct hot_row_app app;
	int64_t user, likes_before;
	bool missing_post;             /* the other ways out: a missing post, else a duplicate */
};

static void alloc_like_setup(void *arg)
{
	struct alloc_like *l = arg;
	l->user++;
	atomic_store(&l->a.calls, 0);
	l->likes_before = counter(l->t);
}

static int alloc_like_call(void *arg)
{
	struct alloc_like *l = arg;
	return like_post(l->db, 1, l->user, &l->app);
}

static int64_t rows_of_user(struct labtest *t, int64_t user)
{
	char sql[120];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM likes WHERE post_id = 1 AND user_id = %lld",
	         (long long)user);
	return labtest_int(t, sql);
}

static void alloc_like_check(void *arg, int k, bool failed, int rc)
{
	struct alloc_like *l = arg;
	if (failed) {
		lt_expect(rc < 0 && rc != HOT_ROW_DUPLICATE && rc != HOT_ROW_NO_POST &&
		          rc != HOT_ROW_REFUSED, "alloc", "like_post with its allocation %d refused "
		          "(NULL, errno ENOMEM) returned %d: expected a failure (KIT_DB_ERR), not 0 nor "
		          "an answer about the like (HOT_ROW_DUPLICATE %d, HOT_ROW_NO_POST %d, "
		          "HOT_ROW_REFUSED %d): is a NULL from malloc or strdup passed on unchecked "
		          "(a NULL parameter is SQL NULL, and the INSERT's NOT NULL then says "
		          "KIT_DB_CONSTRAINT)?", k, rc, HOT_ROW_DUPLICATE, HOT_ROW_NO_POST,
		          HOT_ROW_REFUSED);
		/* hot_row.h: "KIT_DB_ERR, nothing written". A code of the C
		 * library's (-ENOMEM) is none of the header's, and a caller that
		 * retries KIT_DB_BUSY or reads the KIT_DB_* codes cannot tell
		 * what it means. */
		lt_expect(rc == KIT_DB_ERR, "alloc", "like_post with its "
		          "allocation %d refused returned %d: expected KIT_DB_ERR (%d), as hot_row.h "
		          "says for an allocation that fails (-ENOMEM, errno's code negated, is none of "
		          "the KIT_DB_* codes a caller reads)", k, rc, KIT_DB_ERR);
		lt_expect_int_hint(rows_of_user(l->t, l->user), 0, "rows of the like whose allocation "
		                   "was refused", "alloc");
		lt_expect_int_hint(counter(l->t), l->likes_before, "posts.likes after a like whose "
		                   "allocation was refused", "alloc");
		lt_expect(atomic_load(&l->a.calls) == 1, "app-check", "the app's check was called %d "
		          "times by one like_post whose allocation %d was refused: it is called exactly "
		          "once per call (hot_row.h), a call that then runs out of memory too; is the "
		          "ids' text allocated before the check, and a failure returned without asking "
		          "it?", atomic_load(&l->a.calls), k);
		rc = alloc_like_call(l);
		lt_expect(rc == 0, "alloc", "the same like again, nothing refused, returned %d: %s",
		          rc, labtest_why(l->db));
	} else {
		lt_expect(rc == 0, NULL, "like_post returned %d: %s", rc, labtest_why(l->db));
	}
	lt_expect_int_hint(rows_of_user(l->t, l->user), 1, "rows of the like once it worked", "alloc");
	lt_expect_int_hint(counter(l->t), l->likes_before + 1, "posts.likes once the like worked",
	                   "alloc");
}

/* The other ways out, for like_post__every_allocation_can_fail: user 7's
 * like again, or (missing_post) a like of post 404, which does not exist. */
static int alloc_other_way_call(void *arg)
{
	struct alloc_like *o = arg;
	return o->missing_post ? like_post(o->db, 404, 8, &o->app) : like_post(o->db, 1, 7, &o->app);
}

static void alloc_other_way_check(void *arg, int k, bool failed, int rc)
{
	struct alloc_like *o = arg;
	int answer = o->missing_post ? HOT_ROW_NO_POST : HOT_ROW_DUPLICATE;
	const char *what = o->missing_post ? "a like of a missing post" : "the same like again";
	lt_expect(rc == answer || (failed && rc == KIT_DB_ERR), "alloc", "%s%s returned %d, expected "
	          "%d%s", what, failed ? " with an allocation refused" : "", rc, answer,
	          failed ? " or KIT_DB_ERR" : "");
	int64_t open = lt_in_transaction(o->t, o->db);
	lt_expect(open == 0, "rollback", "%s%s left a transaction open on its connection: does "
	          "that way out return before its ROLLBACK (a copy of the message for the log, "
	          "checked and returned from at once)?", what, failed ? ", with its allocation "
	          "refused," : "");
	if (open > 0)
		kit_db_rollback(o->db);
	(void)k;
	lt_expect_int_hint(counter(o->t), o->likes_before, "posts.likes after a like that went "
	                   "another way", "alloc");
}

/* A like run once per allocation it makes (the reference solution makes
 * none), that one refused: a failure code, nothing written, no block
 * left; the same like then works. */
static void like_post__every_allocation_can_fail(void **state)
{
	struct labtest *t = *state;
	make_post(t);
	struct alloc_like l = { .t = t, .db = labtest_db(t), .user = 1000 };
	atomic_init(&l.a.calls, 0);
	l.app = (struct hot_row_app){ check, &l.a };
	struct lt_alloc_case c = { .arg = &l, .setup = alloc_like_setup, .call = alloc_like_call,
	                           .check = alloc_like_check, .what = "like_post" };
	lt_alloc_each(&c);
	/* And on the ways out that answer about the like: a duplicate and a
	 * missing post, each allocation refused in turn (a copy of the
	 * message, "for the log"): the answer or KIT_DB_ERR, nothing written,
	 * and no transaction left open behind it. */
	struct alloc_like o = { .t = t, .db = labtest_db(t) };
	atomic_init(&o.a.calls, 0);
	o.app = (struct hot_row_app){ check, &o.a };
	lt_expect_int(like_post(o.db, 1, 7, &o.app), 0, "user 7's like");
	o.likes_before = counter(t);
	struct lt_alloc_case d = { .arg = &o, .call = alloc_other_way_call,
	                           .check = alloc_other_way_check, .what = "like_post" };
	for (int way = 0; way < 2; way++) {
		o.missing_post = way == 1;
		lt_alloc_each(&d);
	}
}

/* One like on a thread of its own, which then ends. */
struct like_on_thread {
	struct kit_db *db;
	const struct hot_row_app *app;
	int64_t user;
	int rc;
};

static void *like_on_thread(void *arg)
{
	struct like_on_thread *l = arg;
	l->rc = like_post(l->db, 1, l->user, l->app);
	return NULL;
}

/* like_post on each of its ways out (a like, a duplicate, a missing
 * post, a refusal, a statement the database refused): no block left.
 * Then likes each on a new thread that ends afterwards: a block a thread
 * keeps for its later likes (a _Thread_local or static buffer malloc'd
 * at its first) is left allocated by the first, and lost with the
 * thread. Last, the check again alone in a fresh process
 * (labtest_rerun_fresh): a block the like keeps for the whole process
 * from its first call on (a table of counters calloc'd once, "for the
 * metrics page", never freed) is left after it there. */
static void like_post__nothing_left_allocated(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_post(t);
	struct app a = { 0 };
	struct hot_row_app app = { check, &a };
	size_t base = lt_alloc_live();
	lt_expect_int(like_post(db, 1, 7, &app), 0, "a like");
	lt_alloc_expect_none_left(base, "a like that returned 0");
	lt_expect_int(like_post(db, 1, 7, &app), HOT_ROW_DUPLICATE, "the same like again");
	lt_alloc_expect_none_left(base, "a like that returned HOT_ROW_DUPLICATE");
	lt_expect_int(like_post(db, 404, 7, &app), HOT_ROW_NO_POST, "a like of a missing post");
	lt_alloc_expect_none_left(base, "a like that returned HOT_ROW_NO_POST");
	a.answer = 1;
	lt_expect_int(like_post(db, 1, 8, &app), HOT_ROW_REFUSED, "a like the check refuses");
	lt_alloc_expect_none_left(base, "a like that returned HOT_ROW_REFUSED");
	a.answer = 0;
	for (int k = 1; k <= 6; k++) {
		lt_step_arm(LT_STEP_FAILS, k);
		int rc = like_post(db, 1, 20 + k, &app);
		bool reached = lt_step_disarm();
		if (!reached)
			break;
		lt_expect(rc < 0, NULL, "like_post with its statement %d refused returned %d", k, rc);
		lt_alloc_expect_none_left(base, "a like whose statement was refused");
	}
	for (int i = 0; i < 2; i++) {
		struct like_on_thread l = { .db = db, .app = &app, .user = 100 + i, .rc = -100 };
		pthread_t th;
		lt_expect(pthread_create(&th, NULL, like_on_thread, &l) == 0, NULL, "starting a thread");
		pthread_join(th, NULL);
		lt_expect_int(l.rc, 0, "a like on a thread of its own");
		size_t live = lt_alloc_live();
		lt_expect(live == base, "alloc", "%zd block(s) left allocated after a like on a thread "
		          "of its own, which has ended: a block kept for the thread's later likes (a "
		          "_Thread_local or static buffer malloc'd at its first like) is never freed, "
		          "and is lost with each thread that ends; keep the like's text on its stack",
		          (ssize_t)(live - base));
	}
	labtest_expect_fresh(t, "like_post__nothing_left_allocated", "alloc",
	                     "a block like_post allocates once for the whole process (a table "
	                     "of counters calloc'd at the first call, a buffer kept for later "
	                     "likes) is never freed either");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* In the order a student meets them: the lesson first (§3, §4),
		 * then the error cases (§5), then the crowd. */
		LABTEST_ALL(like_post__counts_one_like),
		LABTEST_ALL(like_post__a_yes_is_a_yes_whatever_errno_says),
		LABTEST_ALL(like_post__a_connection_gone_is_no_lock_wait),
		LABTEST_ALL(like_post__counter_held_briefly),
		LABTEST_ALL(like_post__no_work_under_the_lock_now_and_then),
		LABTEST_ALL(like_post__like_written_before_counter),
		SERVERS_ONLY(like_post__counter_unlocked_during_insert),
		LABTEST_ALL(like_post__duplicate_changes_nothing),
		LABTEST_ALL(like_post__unknown_post_changes_nothing),
		LABTEST_ALL(like_post__refused_by_app_writes_nothing),
		LABTEST_ALL(like_post__exact_under_threads),
		LABTEST_SQLITE(like_post__no_statement_now_and_then),
		LABTEST_SQLITE(like_post__refusals_under_threads),
		LABTEST_ALL(like_post__refused_from_every_thread),
		LABTEST_ALL(like_post__waits_for_a_held_counter),
		LABTEST_ALL(like_post__same_user_twice_at_once),
		LABTEST_ALL(like_post__post_gone_while_liking),
		LABTEST_ALL(like_post__two_posts_interleaved),
		LABTEST_ALL(like_post__two_users_at_once),
		LABTEST_ALL(like_post__every_step_can_fail),
		LABTEST_ALL(like_post__refused_rollback_keeps_the_answer),
		LABTEST_ALL(like_post__read_only_session_writes_nothing),
		LABTEST_ALL(like_post__two_likes_fail_at_once),
		PG_ONLY(like_post__first_likes_at_once),
		LABTEST_ALL(like_post__other_tap_after_a_failed_commit),
		LABTEST_ALL(like_post__ids_past_2_31),
		LABTEST_ALL(like_post__ids_at_the_ends_of_int64),
		LABTEST_ALL(like_post__full_counter_is_no_missing_post),
		LABTEST_ALL(like_post__any_nonzero_answer_refuses),
		LABTEST_ALL(like_post__app_without_check_lets_through),
		LABTEST_ALL(like_post__leaves_the_session_as_it_found_it),
		LABTEST_ALL(like_post__two_likes_side_by_side),
		LABTEST_ALL(like_post__refused_for_good_ends),
		SERVERS_ONLY(like_post__only_the_counter_makes_likes_wait),
		PG_ONLY(like_post__finds_the_post_by_its_index),
		SQLITE_ONLY(like_post__waits_for_a_slow_check),
		LABTEST_ALL(like_post__every_allocation_can_fail),
		LABTEST_ALL(like_post__nothing_left_allocated),
	};
	return labtest_main("01-hot-row", tests);
}
