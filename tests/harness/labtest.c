/*
 * labtest.c: tests/harness/labtest.h, the harness the lab suites share.
 *
 * Skipping is decided once, in labtest_run(), before cmocka starts: the
 * entries whose engine is not available get a body that calls skip(), so
 * cmocka counts them as skipped (a skip() inside a setup would count as an
 * error). Everything else is plain cmocka: setup makes the place (a file
 * or a schema), the test fills it, teardown removes it.
 */
#include "tests/harness/labtest.h"
#include "kit/failpoint.h"
#include "kit/load.h"
#include "tests/harness/locks.h"
#include "tests/harness/threads.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/wait.h>

#include "util/hash.h"
#include "tests/harness/alloc.h"
#include "util/clock.h"

/* alloc.o is in a lab's test binary, not in every binary that uses the
 * harness (tests/kit, tests/driver): without it these stay NULL. */
#pragma weak lt_alloc_overrun
#pragma weak lt_alloc_overrun_reset
#pragma weak lt_alloc_live
#pragma weak lt_alloc_undefined
#pragma weak lt_thread_starts_all   /* threads.o: likewise */

static const char *pg_url;          /* HOTROW_PG_URL, when usable */
static int place_seq;               /* numbers this process's places */

/* ---- the report channel (see labtest.h) ---- */

static int report_fd = -1;          /* HOTROW_REPORT_FD, or -1: plain cmocka */
static char report_token[80];       /* HOTROW_REPORT_TOKEN: starts every line */

/* One line "KIND TEXT" per line of text, each in one write() so lines
 * from forked processes never interleave within a line. */
static void report(const char *kind, const char *text)
{
	if (report_fd < 0)
		return;
	while (*text) {
		size_t n = strcspn(text, "\n"), len = n;
		char line[1024];
		if (len > sizeof line - 64) {   /* too long for one line: cut at a word */
			len = sizeof line - 64;
			while (len > 0 && text[len] != ' ')
				len--;
			if (len == 0)
				len = sizeof line - 64;
		}
		int k = snprintf(line, sizeof line, "%s%s%s %.*s%s\n", report_token, report_token[0] ? " " : "",
		                 kind, (int)len, text, len < n ? " ..." : "");
		if (k > 0) {
			ssize_t ignored = write(report_fd, line, (size_t)k);
			(void)ignored;
		}
		text += n;
		if (*text)
			text++;
	}
}

/* Each entry cmocka runs is wrapped, so the harness sees when a check
 * starts and how it ends: cmocka runs the teardown after the body whether
 * the body returned, failed, skipped or caught a signal. */
struct wrap {
	struct CMUnitTest orig;
	int returned;                   /* the body ran to its end */
	int skipped;                    /* the body called skip() */
	int ended;                      /* its "end" line is written */
	size_t live;                    /* blocks allocated before its setup */
	long threads;                   /* lt_thread_starts_all() before its setup */
};

static struct wrap *current;        /* the check cmocka is running */
static struct wrap *pending;        /* ended, its "end" line not yet written */
static const char *pending_verdict;
static long pending_threads;        /* the threads it started, the kit's too */

/* A check's "end" is written when the next one starts (or the group
 * ends): cmocka prints its own lines about a check after the teardown, and
 * those belong to the check, before its end. */
static void flush_end(void)
{
	if (pending) {
		char line[300];
		snprintf(line, sizeof line, "%s %s", pending->orig.name, pending_verdict);
		fflush(stdout);
		if (pending_threads > 0) {
			char n[32];
			snprintf(n, sizeof n, "%ld", pending_threads);
			report("threads", n);
		}
		report("end", line);
		pending = NULL;
	}
}

static void report_end(struct wrap *w, const char *verdict)
{
	w->ended = 1;
	pending = w;
	pending_verdict = verdict;
	pending_threads = lt_thread_starts_all ? lt_thread_starts_all() - w->threads : 0;
}

static void crash_handled(void);

static int wrap_setup(void **state)
{
	struct wrap *w = *state;
	crash_handled();
	flush_end();
	current = w;
	if (lt_alloc_overrun_reset)
		lt_alloc_overrun_reset();    /* what an earlier check's teardown wrote */
	report("start", w->orig.name);
	w->live = lt_alloc_live ? lt_alloc_live() : 0;
	w->threads = lt_thread_starts_all ? lt_thread_starts_all() : 0;
	*state = (void *)w->orig.initial_state;
	int rc = w->orig.setup_func ? w->orig.setup_func(state) : 0;
	if (rc != 0) {
		report("detail", "the check's setup failed (see its output)");
		report_end(w, "fail");
	}
	return rc;
}

/* A crash in a check: cmocka's handler reports it and goes on with the
 * next check, but it formats its message with calloc, and a crash inside
 * the allocator (a heap the code under test corrupted, from another
 * thread) leaves malloc's lock held: the handler would wait on it for
 * ever, and the suite with it. So the handler is given 10 s; past them
 * the process dies of the signal it crashed with (the runner counts the
 * checks it did not report as failed, and names the signal). */
static const int crash_signals[] = { SIGFPE, SIGILL, SIGSEGV, SIGBUS, SIGSYS };
#define NCRASH (sizeof crash_signals / sizeof crash_signals[0])
static struct sigaction cmocka_on_crash[NCRASH];
static volatile sig_atomic_t crashed_with;

/* Write s to stderr, past its FILE lock (async-signal-safe). */
static void say_raw(const char *s)
{
	if (write(STDERR_FILENO, s, strlen(s)) < 0) {
		/* nothing more can be said */
	}
}

static void crash_stuck(int sig)
{
	static const char *const names[] = {
		"Floating point exception(8)", "Illegal instruction(4)", "Segmentation fault(11)",
		"Bus error(7)", "Bad system call(31)",
	};
	_Static_assert(sizeof names / sizeof names[0] == NCRASH, "a name for each signal");
	int s = crashed_with ? crashed_with : SIGABRT;
	(void)sig;
	/* the line cmocka would have printed, which the runner reads */
	for (size_t i = 0; i < NCRASH; i++)
		if (crash_signals[i] == s) {
			say_raw("\n[  ERROR   ] --- Test failed with exception: ");
			say_raw(names[i]);
			say_raw("\n");
		}
	say_raw("the report of that crash was stuck for 10 s (a crash inside malloc, or while "
	        "another thread printed, leaves their lock held): the test program ends here\n");
	signal(s, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, s);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(s);
	_exit(128 + s);
}

/* A crash at the address a refused asprintf leaves in its pointer
 * (alloc.h): one line that says so, before cmocka's report, as a detail
 * of the check on the report channel, or on stderr without one. Built
 * by hand: a signal handler may not format. */
static void say_undefined_read(void)
{
	static const char text[] = "the crash is a read or a write of the pointer a refused "
		"asprintf (or vasprintf) left behind: when asprintf fails it returns -1 and the "
		"pointer's contents are undefined (glibc leaves it as it was, not NULL), so a "
		"pointer that is not NULL tells nothing; test what asprintf returns\n";
	if (report_fd < 0) {
		say_raw(text);
		return;
	}
	static char line[1024];
	size_t n = 0, t = strlen(report_token);
	memcpy(line, report_token, t);
	n += t;
	if (t > 0)
		line[n++] = ' ';
	memcpy(line + n, "detail ", 7);
	n += 7;
	memcpy(line + n, text, sizeof text - 1);
	n += sizeof text - 1;
	ssize_t ignored = write(report_fd, line, n);
	(void)ignored;
}

static void crash_seen(int sig, siginfo_t *info, void *ctx)
{
	crashed_with = sig;
	signal(SIGALRM, crash_stuck);
	alarm(10);
	if ((sig == SIGSEGV || sig == SIGBUS) && info != NULL && lt_alloc_undefined &&
	    lt_alloc_undefined(info->si_addr))
		say_undefined_read();
	for (size_t i = 0; i < NCRASH; i++) {
		if (crash_signals[i] != sig)
			continue;
		if (cmocka_on_crash[i].sa_flags & SA_SIGINFO)
			cmocka_on_crash[i].sa_sigaction(sig, info, ctx);
		else
			cmocka_on_crash[i].sa_handler(sig);
	}
}

/* Put crash_seen before the handlers cmocka set for this check (it sets
 * them again for each one). */
static void watch_crashes(void)
{
	for (size_t i = 0; i < NCRASH; i++) {
		struct sigaction mine;
		if (sigaction(crash_signals[i], NULL, &cmocka_on_crash[i]) != 0 ||
		    (!(cmocka_on_crash[i].sa_flags & SA_SIGINFO) &&
		     (cmocka_on_crash[i].sa_handler == SIG_DFL ||
		      cmocka_on_crash[i].sa_handler == SIG_IGN)))
			continue;
		mine = cmocka_on_crash[i];
		mine.sa_flags |= SA_SIGINFO;
		mine.sa_sigaction = crash_seen;
		sigaction(crash_signals[i], &mine, NULL);
	}
}

/* The last check's crash was reported (cmocka prints it after the
 * check's teardown): no alarm is left for the next one. */
static void crash_handled(void)
{
	if (crashed_with) {
		alarm(0);
		signal(SIGALRM, SIG_DFL);
		crashed_with = 0;
	}
}

static void wrap_test(void **state)
{
	struct wrap *w = current;
	watch_crashes();
	w->orig.test_func(state);
	/* a block written past its end, in the check or by a thread it left */
	char why[400];
	if (lt_alloc_overrun && lt_alloc_overrun(why, sizeof why))
		lt_fail(__FILE__, __LINE__, NULL, "%s", why);
	w->returned = 1;
}

static int wrap_teardown(void **state)
{
	struct wrap *w = current;
	int rc = w->orig.teardown_func ? w->orig.teardown_func(state) : 0;
	/* Every block the check's calls made is freed once its teardown has
	 * freed the check's own: the headers say no call leaves one, on any
	 * way out. Judged only for a check that passed (one that failed
	 * half-way may leave its own behind). */
	size_t live = lt_alloc_live ? lt_alloc_live() : 0;
	if (rc == 0 && w->returned && !w->skipped && live > w->live) {
		char why[400];
		snprintf(why, sizeof why, "%zu block(s) allocated while this check ran are still "
		         "allocated after it ended: a call that returns without freeing what it "
		         "allocated (on a way out the check took: a statement refused, an input "
		         "refused, a connection that failed) leaks that much each time; no call "
		         "leaves a block allocated", live - w->live);
		report("detail", why);
		/* in the form a failure's first line has, so a fresh run's
		 * failure is quoted (labtest_expect_fresh) */
		print_error("%s:%d: %s\n", __FILE__, __LINE__, why);
		rc = -1;
	}
	if (!w->ended)
		report_end(w, w->skipped ? "skip" : w->returned && rc == 0 ? "pass" : "fail");
	return rc;
}

/* A line on the report channel as kind, or, without one, on stdout after
 * prefix. */
static void say(const char *kind, const char *prefix, const char *text)
{
	if (report_fd >= 0) {
		report(kind, text);
	} else {
		printf("%s%s\n", prefix, text);
		fflush(stdout);
	}
}

void lt_say(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	say("say", "", msg);
}

void labtest_say_why_skipped(const char *why)
{
	say("detail", "SKIP: ", why);
}

void labtest_skip(const char *file, int line)
{
	if (current)
		current->skipped = 1;
	_skip(file, line);
}

/* Say something to the student outside any check: on the report channel
 * when there is one, else on stdout as a NOTICE line. */
static void notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void notice(const char *fmt, ...)
{
	char msg[1300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	say("notice", "NOTICE: ", msg);
}

/*
 * Places are named after the process that made them (and, for schemas,
 * the machine), so a run can remove what an earlier run left behind when
 * it crashed before its teardown: a place whose process is gone.
 */
static unsigned host_tag(void)
{
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	return util_fnv1a(UTIL_FNV1A_INIT, host, strlen(host)) & 0xffffff;
}

static bool process_gone(long pid)
{
	return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static const char *tmp_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	return tmp && *tmp ? tmp : "/tmp";
}

static void remove_sqlite(const char *path);

static void sweep_sqlite(void)
{
	DIR *d = opendir(tmp_dir());
	struct dirent *e;
	long pid;
	char path[600];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (sscanf(e->d_name, "hotrow-test-%ld-", &pid) == 1 && process_gone(pid)) {
			snprintf(path, sizeof path, "%s/%s/lab.db", tmp_dir(), e->d_name);
			remove_sqlite(path);
		}
	}
	closedir(d);
}

static int stale_schema(void *arg, int ncols, const char *const *values)
{
	unsigned tag;
	long pid;
	(void)ncols;
	if (sscanf(values[0], "lt_%x_%ld_", &tag, &pid) == 2 && tag == host_tag() && process_gone(pid))
		snprintf((char *)arg, 256, "%s", values[0]);   /* one per call is enough */
	return 0;
}

static void sweep_pg(void)
{
	struct kit_db *admin;
	if (kit_db_open(&admin, pg_url) == 0 && kit_db_set_lock_timeout(admin, 2000) == 0) {
		for (int i = 0; i < 50; i++) {
			char name[256] = "", sql[300];
			kit_db_query(admin, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lt\\_%'",
			             0, NULL, stale_schema, name);
			if (name[0] == '\0')
				break;
			snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s CASCADE", name);
			if (kit_db_exec(admin, sql, 0, NULL) != 0)
				break;
		}
	}
	kit_db_close(admin);
}

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);
	return v != NULL && strcmp(v, value) == 0;
}

/* Does the word w (len characters) name the entry name? A word names a
 * check function ("f": every entry of f, whatever its engine) or one
 * entry ("f/postgres"). */
static bool word_names(const char *w, size_t len, const char *name)
{
	size_t base = strcspn(name, "/");
	return (len == base || len == strlen(name)) && strncmp(w, name, len) == 0;
}

#define WORD_GAP " \t\n,"          /* what may separate the words of a list */

/* Does a word of list name the entry name? The list is read in place, so
 * it may be as long as the environment allows. */
static bool named_in(const char *list, const char *name)
{
	for (const char *p = list ? list : ""; *p; ) {
		p += strspn(p, WORD_GAP);
		size_t n = strcspn(p, WORD_GAP);
		if (n > 0 && word_names(p, n, name))
			return true;
		p += n;
	}
	return false;
}

/* The order the entries run in, as indexes into tests: first those each
 * word of order names (word by word; a word's own entries in suite order),
 * then the rest in suite order. Words that name no entry are said in one
 * notice. Returns NULL when out of memory. */
static size_t *run_order(const char *order, const struct CMUnitTest *tests, size_t n)
{
	size_t *perm = calloc(n ? n : 1, sizeof *perm);
	bool *placed = calloc(n ? n : 1, sizeof *placed);
	size_t k = 0, unknown = 0, first_len = 0;
	const char *first_unknown = NULL;
	if (perm == NULL || placed == NULL) {
		free(perm);
		free(placed);
		return NULL;
	}
	for (const char *p = order ? order : ""; *p; ) {
		p += strspn(p, WORD_GAP);
		size_t len = strcspn(p, WORD_GAP);
		if (len == 0)
			break;
		bool found = false;
		for (size_t i = 0; i < n; i++) {
			if (word_names(p, len, tests[i].name)) {
				found = true;
				if (!placed[i]) {
					placed[i] = true;
					perm[k++] = i;
				}
			}
		}
		if (!found && unknown++ == 0) {
			first_unknown = p;
			first_len = len;
		}
		p += len;
	}
	if (unknown == 1)
		notice("HOTROW_LAB_ORDER names %.*s, which is no check of this suite",
		       (int)first_len, first_unknown);
	else if (unknown > 1)
		notice("HOTROW_LAB_ORDER names %.*s and %zu more words that are no checks of this suite",
		       (int)first_len, first_unknown, unknown - 1);
	for (size_t i = 0; i < n; i++)
		if (!placed[i])
			perm[k++] = i;
	free(placed);
	return perm;
}

/* Is name one of the lines of list? */
static bool listed_in(const char *list, const char *name)
{
	size_t k = strlen(name);
	for (const char *p = list; *p; ) {
		size_t n = strcspn(p, "\n");
		if (n == k && !strncmp(p, name, k))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

static void test_skipped(void **state)
{
	(void)state;
	skip();
}

static struct labtest *new_labtest(enum kit_db_engine engine)
{
	struct labtest *t = calloc(1, sizeof *t);
	assert_non_null(t);
	t->engine = engine;
	return t;
}

int labtest_setup_sqlite(void **state)
{
	struct labtest *t = new_labtest(KIT_DB_SQLITE);
	char dir[200];

	snprintf(dir, sizeof dir, "%s/hotrow-test-%ld-XXXXXX", tmp_dir(), (long)getpid());
	if (mkdtemp(dir) == NULL) {
		print_error("cannot make a directory under %s\n", tmp_dir());
		free(t);
		return -1;
	}
	snprintf(t->place, sizeof t->place, "%s/lab.db", dir);
	snprintf(t->url, sizeof t->url, "sqlite:%s", t->place);
	*state = t;
	return 0;
}

/* Append the search_path option to a URL or a conninfo string. Tests also
 * commit without waiting for the disk (synchronous_commit off): they check
 * what is counted, not what survives a power cut, and an fsync per commit
 * would make the thread checks take many seconds. */
static void with_schema(char *out, size_t len, const char *base, const char *schema)
{
	if (strstr(base, "://") != NULL)
		snprintf(out, len, "%s%soptions=-csearch_path%%3D%s%%20-csynchronous_commit%%3Doff",
		         base, strchr(base, '?') ? "&" : "?", schema);
	else
		snprintf(out, len, "%s options='-csearch_path=%s -csynchronous_commit=off'", base, schema);
}

static int take_place(void *arg, int ncols, const char *const *v)
{
	struct labtest *t = arg;
	if (ncols < 1 || !v[0])
		return 0;
	snprintf(t->place, sizeof t->place, "%s", v[0]);
	return 1;
}

int labtest_setup_pg(void **state)
{
	if (pg_url == NULL) {
		/* Reached only when PostgreSQL is required or named but unreachable. */
		print_error("PostgreSQL is required (HOTROW_REQUIRE_PG=1 or %s set) but %s is unset "
		            "or does not answer; start one with `make pg-up`\n",
		            getenv("HOTROW_PG_FROM") ? getenv("HOTROW_PG_FROM") : "HOTROW_PG_URL",
		            getenv("HOTROW_PG_FROM") ? getenv("HOTROW_PG_FROM") : "HOTROW_PG_URL");
		report("detail", "PostgreSQL is required here but the server cannot be used (see the notice above)");
		return -1;
	}
	struct labtest *t = new_labtest(KIT_DB_POSTGRES);
	snprintf(t->place, sizeof t->place, "lt_%06x_%ld_%d_%ld", host_tag(), (long)getpid(),
	         ++place_seq, (long)(time(NULL) % 100000));

	struct kit_db *admin;
	char sql[300];
	snprintf(sql, sizeof sql, "CREATE SCHEMA %s", t->place);
	int made = kit_db_open(&admin, pg_url) == 0 && kit_db_exec(admin, sql, 0, NULL) == 0;
	/* A class server's students may not create schemas; the class gives
	 * each a function that makes one of theirs (see class/class.h). */
	char why[512];
	snprintf(why, sizeof why, "%s", kit_db_errmsg(admin));
	if (!made && kit_db_connected(admin) &&
	    kit_db_query(admin, "SELECT hotrow_class.new_schema()", 0, NULL, take_place, t) == 1)
		made = 1;
	if (!made) {
		print_error("%s\n", why);
		kit_db_close(admin);
		free(t);
		return -1;
	}
	kit_db_close(admin);
	with_schema(t->url, sizeof t->url, pg_url, t->place);
	*state = t;
	return 0;
}

/* MariaDB: labtest_setup_mysql and its helpers. */
#include "tests/harness/labtest_mysql.c"

void *lt_run_statement(void *arg)
{
	struct lt_statement *c = arg;
	struct kit_db *db = NULL;
	int64_t id = 0;
	c->rc = kit_db_open(&db, c->url);
	if (c->rc == 0 && kit_db_engine(db) != KIT_DB_SQLITE)
		c->rc = kit_db_query_int(db, kit_db_engine(db) == KIT_DB_MYSQL ? "SELECT CONNECTION_ID()"
		                         : "SELECT pg_backend_pid()", 0, NULL, &id);
	atomic_store(&c->id, c->rc == 0 ? id : -1);
	if (c->rc == 0)
		c->rc = kit_db_exec(db, c->sql, 0, NULL);
	kit_db_close(db);
	return NULL;
}

static void remove_sqlite(const char *path)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	char f[300];

	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		snprintf(f, sizeof f, "%s%s", path, suffixes[i]);
		unlink(f);
	}
	snprintf(f, sizeof f, "%s", path);
	char *slash = strrchr(f, '/');
	if (slash) {
		*slash = '\0';
		rmdir(f);   /* fails, harmlessly, if the test left other files */
	}
}

/* ---- a real Redis as the store ---- */

static const char *redis_url;   /* set by labtest_run when it answers */

int labtest_setup_redis(void **state)
{
	static int seq;
	if (redis_url == NULL) {
		/* Reached only when Redis is required or named but unreachable. */
		print_error("Redis is required (HOTROW_REQUIRE_REDIS=1 or HOTROW_REDIS_URL set) but "
		            "it is unset or does not answer; start one with `make redis-up`\n");
		return -1;
	}
	int rc = labtest_setup_sqlite(state);
	if (rc != 0)
		return rc;
	struct labtest *t = *state;
	snprintf(t->store_url, sizeof t->store_url, "%s?ns=lt-%ld-%d", redis_url, (long)getpid(), ++seq);
	return 0;
}

struct kit_store *labtest_store(struct labtest *t)
{
	struct kit_store *st;
	if (kit_store_open(&st, t->store_url[0] ? t->store_url : "mem:") != 0) {
		char msg[700];
		snprintf(msg, sizeof msg, "%s", kit_store_errmsg(st));
		kit_store_free(st);
		fail_msg("cannot open the store: %s", msg);
	}
	return st;
}

/* Empty the test's namespace on the server. */
static int drop_redis_ns(struct labtest *t)
{
	struct kit_store *st;
	int rc = kit_store_open(&st, t->store_url);
	int64_t left = 0;
	if (rc == 0) {
		kit_store_restart(st);
		rc = kit_store_dbsize(st, &left);
	}
	if (rc != 0 || left != 0)
		print_error("teardown: %s\n", kit_store_errmsg(st));
	kit_store_free(st);
	return rc == 0 && left == 0 ? 0 : -1;
}

int labtest_teardown(void **state)
{
	struct labtest *t = *state;
	int rc = 0;

	if (t == NULL)
		return 0;
	/* A check that failed between arming a failpoint and disarming it
	 * (lt_refusals_arm, lt_step_arm...) must not leave it to the next
	 * checks, nor to this teardown's own statements. */
	kit_fp_clear();
	if (t->store_url[0] && strncmp(t->store_url, "mem:", 4) != 0)
		rc = drop_redis_ns(t);
	kit_db_close(t->db);
	if (t->engine == KIT_DB_SQLITE) {
		remove_sqlite(t->place);
	} else if (t->engine == KIT_DB_MYSQL) {
		if (my_teardown(t) != 0)
			rc = -1;
	} else {
		struct kit_db *admin;
		char sql[300];
		snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS %s CASCADE", t->place);
		/* A connection the test leaked, still in a transaction, would make
		 * the DROP wait forever: give up after 10 s and say so instead. */
		if (kit_db_open(&admin, pg_url) != 0 || kit_db_set_lock_timeout(admin, 10000) != 0 ||
		    kit_db_exec(admin, sql, 0, NULL) != 0) {
			print_error("teardown: %s\n", kit_db_errmsg(admin));
			rc = -1;
		}
		kit_db_close(admin);
	}
	free(t);
	*state = NULL;
	return rc;
}

void labtest_load_config(struct labtest *t, struct kit_load_config *c, int threads, int iterations)
{
	kit_load_config_default(c);
	c->url = t->url;
	c->threads = threads;
	c->iterations = iterations;
	c->progress = false;
}

struct kit_db *labtest_connect(struct labtest *t)
{
	struct kit_db *db;
	if (kit_db_open(&db, t->url) != 0) {
		char msg[1100];
		snprintf(msg, sizeof msg, "%s", kit_db_errmsg(db));
		kit_db_close(db);
		fail_msg("cannot open the test database: %s", msg);
	}
	return db;
}

struct kit_db *labtest_connect_as_served(struct labtest *t)
{
	static const char *const speed[] = { "%20-csynchronous_commit%3Doff",
	                                     " -csynchronous_commit=off" };
	struct labtest plain = *t;
	for (size_t i = 0; i < sizeof speed / sizeof speed[0]; i++) {
		char *at = strstr(plain.url, speed[i]);
		if (at)
			memmove(at, at + strlen(speed[i]), strlen(at + strlen(speed[i])) + 1);
	}
	return labtest_connect(&plain);
}

struct kit_db *labtest_db(struct labtest *t)
{
	if (t->db == NULL)
		t->db = labtest_connect(t);
	return t->db;
}

void labtest_exec(struct labtest *t, const char *sql)
{
	struct kit_db *db = labtest_db(t);
	if (kit_db_exec(db, sql, 0, NULL) != 0)
		fail_msg("%s", kit_db_errmsg(db));
}

int64_t labtest_int(struct labtest *t, const char *sql)
{
	struct kit_db *db = labtest_db(t);
	int64_t v = 0;
	if (kit_db_query_int(db, sql, 0, NULL, &v) != 0)
		fail_msg("%s", kit_db_errmsg(db));
	return v;
}

void labtest_insert_order_watch(struct labtest *t, const char *table, const char *column)
{
	char sql[400];
	if (t->engine != KIT_DB_MYSQL)
		return;
	labtest_exec(t, "CREATE TABLE lt_row_order (seq BIGINT AUTO_INCREMENT PRIMARY KEY, "
	                "k BIGINT NOT NULL)");
	snprintf(sql, sizeof sql, "CREATE TRIGGER lt_row_order_watch BEFORE INSERT ON %s FOR EACH "
	         "ROW INSERT INTO lt_row_order (k) VALUES (NEW.%s)", table, column);
	labtest_exec(t, sql);
}

int64_t labtest_insert_rank(struct labtest *t, const char *table, const char *column,
                            int64_t key)
{
	char sql[400];
	if (t->engine == KIT_DB_MYSQL) {
		snprintf(sql, sizeof sql, "SELECT count(DISTINCT k) FROM lt_row_order WHERE seq < "
		         "(SELECT MIN(seq) FROM lt_row_order WHERE k = %lld)", (long long)key);
		return labtest_int(t, sql);
	}
	const char *at = t->engine == KIT_DB_SQLITE ? "rowid" : "ctid";
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE %s < (SELECT %s FROM %s WHERE "
	         "%s = %lld)", table, at, at, table, column, (long long)key);
	return labtest_int(t, sql);
}

/* locks.h: the test's thread locks a mutex it holds already. */
void lt_lock_relocked(const void *m)
{
	lt_fail(__FILE__, __LINE__, NULL, "pthread_mutex_lock of a mutex (%p) that this thread "
	        "already holds: it would never return (the thread waits for itself). Did an "
	        "earlier call return, on an error path, with the mutex still locked? Every "
	        "return after pthread_mutex_lock unlocks it first", m);
}

void lt_fail(const char *file, int line, const char *hint, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char where[1100];
	snprintf(where, sizeof where, "%s:%d: %s", file, line, msg);
	if (report_fd >= 0)
		report("detail", where);
	else
		print_error("%s\n", where);
	/* "a b,c" gives three HINT lines, one tag each. */
	if (hint != NULL) {
		char tags[256];
		snprintf(tags, sizeof tags, "%s", hint);
		for (char *save = NULL, *tag = strtok_r(tags, " ,", &save); tag;
		     tag = strtok_r(NULL, " ,", &save)) {
			if (report_fd >= 0)
				report("hint", tag);
			else
				print_error("HINT: %s\n", tag);
		}
	}
	_fail(file, line);
}

/* Can we reach the server? Decides whether PostgreSQL tests run. */
static bool pg_reachable(const char *url, char *why, size_t len)
{
	struct kit_db *db;
	int rc = kit_db_open(&db, url);
	if (rc != 0)
		snprintf(why, len, "%s", kit_db_errmsg(db));
	kit_db_close(db);
	return rc == 0;
}

/* Take the report descriptor from the environment, out of reach of what
 * the tests exec (close-on-exec, variable removed). */
static void open_report(void)
{
	const char *fd = getenv("HOTROW_REPORT_FD");
	char *end;
	long v = fd ? strtol(fd, &end, 10) : -1;
	if (!fd || *end || v < 0 || fcntl((int)v, F_GETFD) < 0)
		return;
	report_fd = fcntl((int)v, F_DUPFD_CLOEXEC, 100);
	close((int)v);
	unsetenv("HOTROW_REPORT_FD");
	/* The runner's secret for this run: every line carries it, so bytes
	 * that reach the descriptor any other way (the code under test
	 * pointing stdout at it) are not verdicts. Kept here only: the
	 * environment's copy is wiped before any check runs. */
	char *token = getenv("HOTROW_REPORT_TOKEN");
	if (token && strlen(token) < sizeof report_token) {
		snprintf(report_token, sizeof report_token, "%s", token);
		memset(token, 'x', strlen(token));
	}
	unsetenv("HOTROW_REPORT_TOKEN");
	/* What the code under test prints goes to the runner as it happens,
	 * so it is shown beside the check that printed it. */
	setvbuf(stdout, NULL, _IOLBF, 0);
}

int labtest_run(const char *lab, const struct CMUnitTest *tests, size_t n)
{
	open_report();
	bool only_sqlite = env_is("HOTROW_LAB_ONLY", "sqlite");
	bool only_pg = env_is("HOTROW_LAB_ONLY", "postgres") || env_is("HOTROW_LAB_ONLY", "postgresql");
	bool only_my = env_is("HOTROW_LAB_ONLY", "mysql") || env_is("HOTROW_LAB_ONLY", "mariadb");
	bool require = env_is("HOTROW_REQUIRE_PG", "1");
	const char *url = getenv("HOTROW_PG_URL");
	const char *from = getenv("HOTROW_PG_FROM") ? getenv("HOTROW_PG_FROM") : "HOTROW_PG_URL";
	bool pg_ok = false;
	char why[1100] = "";

	if (!only_sqlite && !only_my) {
		if (url && *url)
			pg_ok = pg_reachable(url, why, sizeof why);
		if (pg_ok) {
			pg_url = url;
			sweep_pg();
		}
		else if (url && *url)
			notice("PostgreSQL checks fail: %s is set but %s", from, why);
		else if (!require)
			notice("PostgreSQL checks skipped: set HOTROW_PG_URL "
			       "(export HOTROW_PG_URL=$(scripts/pg up)) to run them");
	}

	if (!only_pg && !only_my)
		sweep_sqlite();
	bool wants_my = false;
	for (size_t i = 0; i < n; i++)
		wants_my |= tests[i].setup_func == labtest_setup_mysql;
	my_prepare(wants_my && !only_sqlite && !only_pg);

	/* Redis, for the tests that ask for it (LABTEST_STORES). */
	const char *rurl = getenv("HOTROW_REDIS_URL");
	bool rrequire = env_is("HOTROW_REQUIRE_REDIS", "1") || (rurl && *rurl);
	bool wants_redis = false;
	for (size_t i = 0; i < n; i++)
		wants_redis |= tests[i].setup_func == labtest_setup_redis;
	if (wants_redis && !only_pg) {
		struct kit_store *st;
		if (rurl && *rurl && kit_store_open(&st, rurl) == 0)
			redis_url = rurl;
		else if (rurl && *rurl)
			notice("Redis checks fail: HOTROW_REDIS_URL is set but %s", kit_store_errmsg(st));
		else if (rrequire)
			notice("Redis is required (HOTROW_REQUIRE_REDIS=1) but HOTROW_REDIS_URL is unset");
		else
			notice("Redis checks skipped: set HOTROW_REDIS_URL "
			       "(export HOTROW_REDIS_URL=$(scripts/redis up)) to run them");
		if (rurl && *rurl)
			kit_store_free(st);
		fflush(stdout);
	}

	/* HOTROW_LAB_ORDER="f g": the checks of those functions run first, in
	 * that order, then the rest in suite order (scripts/mutate puts the
	 * checks likeliest to fail a mutant first). Each entry keeps its own
	 * setup and teardown, so they still pair up. */
	struct CMUnitTest *run = calloc(n ? n : 1, sizeof *run);
	struct wrap *wraps = calloc(n ? n : 1, sizeof *wraps);
	size_t *order = run_order(getenv("HOTROW_LAB_ORDER"), tests, n);
	if (run == NULL || wraps == NULL || order == NULL) {
		free(run);
		free(wraps);
		free(order);
		return 1;
	}
	/* HOTROW_LAB_CHECKS="f g": only the checks of those functions run
	 * (make test runs a mutant's named checks only); the others skip. */
	const char *only = getenv("HOTROW_LAB_CHECKS");
	/* Under `hotrow lab`, HOTROW_LAB_SKIP lists (one a line) the checks
	 * whose engines the runner did not give, and only those skip. */
	const char *runner_skips = getenv("HOTROW_LAB_SKIP");
	/* HOTROW_LAB_LEAVE_OUT=1 (the runner's race pass): the checks that
	 * would skip are left out, not run as skips (under ThreadSanitizer,
	 * each skip's longjmp leaves frames on its record of the stack). */
	const char *leave = getenv("HOTROW_LAB_LEAVE_OUT");
	bool leave_out = leave && !strcmp(leave, "1");
	size_t m = 0;
	for (size_t k = 0; k < n; k++) {
		size_t i = order[k];
		run[m] = tests[i];
		bool unlisted = only && *only && !named_in(only, tests[i].name);
		bool is_pg = tests[i].setup_func == labtest_setup_pg;
		bool is_lite = tests[i].setup_func == labtest_setup_sqlite;
		bool is_redis = tests[i].setup_func == labtest_setup_redis;
		bool is_my = tests[i].setup_func == labtest_setup_mysql;
		/* A URL that was given but does not answer is an error, not a skip. */
		bool named = url && *url;
		bool off = (is_pg && (only_sqlite || only_my || (!pg_ok && !require && !named))) ||
		           ((is_lite || is_redis) && (only_pg || only_my)) ||
		           (is_my && (only_sqlite || only_pg || my_off())) ||
		           (is_redis && !redis_url && !rrequire) || unlisted;
		if (runner_skips)   /* the runner decided, from each check's entry */
			off = listed_in(runner_skips, tests[i].name);
		if (off && leave_out)
			continue;
		if (off) {
			run[m].test_func = test_skipped;
			run[m].setup_func = NULL;
			run[m].teardown_func = NULL;
		}
		m++;
	}
	free(order);
	n = m;
	/* Wrapped with or without the runner's channel (report() writes only
	 * with one): every check ends with the look for a block written past
	 * its end (wrap_test). */
	for (size_t i = 0; i < n; i++) {
		wraps[i].orig = run[i];
		run[i].test_func = wrap_test;
		run[i].setup_func = wrap_setup;
		run[i].teardown_func = wrap_teardown;
		run[i].initial_state = &wraps[i];
	}
	int failed = _cmocka_run_group_tests(lab, run, n, NULL, NULL);
	crash_handled();
	flush_end();
	free(run);
	free(wraps);
	return failed;
}

const char *labtest_engine_word(const struct labtest *t)
{
	if (!t)                       /* a check with no database: any engine runs it */
		return "sqlite";
	return t->engine == KIT_DB_SQLITE ? "sqlite" : t->engine == KIT_DB_MYSQL ? "mysql" : "postgres";
}

bool labtest_fresh_run(void)
{
	return getenv("HOTROW_LAB_FRESH") != NULL;
}

/* labtest_rerun_fresh, keeping what that run printed in out (when not
 * NULL) for the first failure line it finds there. */
static int rerun_fresh(const struct labtest *t, const char *check, FILE *out)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int to = out ? fileno(out) : open("/dev/null", O_WRONLY);
		if (to >= 0) {
			dup2(to, 1);
			dup2(to, 2);
		}
		unsetenv("HOTROW_LAB_SKIP");
		unsetenv("HOTROW_LAB_ORDER");
		setenv("HOTROW_LAB_CHECKS", check, 1);
		setenv("HOTROW_LAB_ONLY", labtest_engine_word(t), 1);
		setenv("HOTROW_LAB_FRESH", "1", 1);
		execl("/proc/self/exe", "test-fresh", (char *)NULL);
		_exit(127);
	}
	int status = 0;
	int64_t start = util_now_ns();
	pid_t got;
	while ((got = waitpid(pid, &status, WNOHANG)) == 0 &&
	       util_now_ns() - start < 60 * 1000000000LL)
		util_sleep_ns(5000000);
	if (got == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 0;
	}
	if (got < 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 127))
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int labtest_rerun_fresh(const struct labtest *t, const char *check)
{
	return rerun_fresh(t, check, NULL);
}

/* The first line of a failure a check printed: "file.c:LINE: what". */
static void first_failure(FILE *out, char *said, size_t len)
{
	char line[2048];
	said[0] = '\0';
	rewind(out);
	while (fgets(line, sizeof line, out)) {
		char *c = strstr(line, ".c:");
		char *colon = c ? strchr(c + 3, ':') : NULL;
		if (!c || !colon || colon == c + 3 || colon[1] != ' ')
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(said, len, "%s", colon + 2);
		return;
	}
}

void labtest_expect_fresh_at(const char *file, int line, const struct labtest *t,
                             const char *check, const char *hint, const char *kept)
{
	if (labtest_fresh_run())
		return;
	FILE *out = tmpfile();
	int fresh = rerun_fresh(t, check, out);
	char said[1200] = "";
	if (out) {
		first_failure(out, said, sizeof said);
		fclose(out);
	}
	if (fresh < 0) {
		print_message("note: %s could not start a fresh copy of the test program, so "
		              "what a process keeps from its first call on was not looked for\n", check);
		return;
	}
	if (fresh == 0)
		lt_fail(file, line, hint, "this check passed here, but run again alone in a fresh "
		        "process, where its calls are the process's first, it %s%s. What differs "
		        "there: %s. Replay: HOTROW_LAB_CHECKS=%s HOTROW_LAB_ONLY=%s and this test program",
		        said[0] ? "failed: " : "crashed or ran past 60 s", said, kept, check,
		        labtest_engine_word(t));
}

const char *labtest_why(struct kit_db *db)
{
	const char *m = kit_db_errmsg(db);
	return m && m[0] ? m : "no database error (is it still a TODO?)";
}
