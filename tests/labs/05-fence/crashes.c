/*
 * crashes.c: run Lab 05's consumers in child processes and kill them.
 *
 * The parent writes the events, then plays coordinator: it forks the
 * consumers, waits for SIGCHLD, restarts whoever died or left, and checks
 * the database once the group is done. The children are ordinary
 * consumers built on kit/log and the student's four functions; what kills
 * them is kit/failpoint, armed in the child right after fork():
 *   log-mid-batch, log-before-handler, log-before-commit   inside kit_log_poll
 *   after-upsert   a kit/db hook: the end of the statement that writes video_views
 *   after-db-commit  a kit/db hook: the database's COMMIT has returned
 * The slow part of a consumer's start is its connection, so one spare
 * process is always connected and waiting for a number on a pipe; a
 * restart hands it the next number and forks the next spare.
 * A child decides it is done when the log's committed hint of every
 * partition has reached the partition's end (a hint is written only after
 * a batch is in the database, applied now or before).
 */
#include "tests/labs/05-fence/crashes.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kit/failpoint.h"
#include "kit/log.h"
#include "labs/05-fence/fence.h"
#include "tests/harness/sql.h"
#include "util/clock.h"
#include "util/hash.h"

#define MAX_INCARNATIONS 64
#define EXIT_LEFT 10          /* a child that left the group on purpose */
#define EXIT_BROKEN 3         /* a child that could not go on */
#define RUN_SECONDS 60        /* a schedule that takes longer is a failure */

static const char *const kind_name[CRASH_KINDS] = {
	"run to the end", "killed before the transaction", "killed mid-batch",
	"killed after the upsert, before the commit",
	"killed after the commit, before the log's offset commit",
	"killed the moment the database's COMMIT returns", "leaves the group",
};
static const char *const kind_fp[CRASH_KINDS] = {
	NULL, "log-before-handler", "log-mid-batch", "after-upsert", "log-before-commit",
	"after-db-commit", NULL,
};

uint64_t crash_seed(int k)
{
	uint64_t s = 0x05fe0ce5eed00000ull + (uint64_t)k;
	return util_splitmix64(&s);
}

void crash_plan_make(struct crash_plan *pl, uint64_t seed, int events, int bmin, int bmax)
{
	uint64_t s = seed;
	memset(pl, 0, sizeof *pl);
	pl->seed = seed;
	pl->events = events;
	pl->bmin = bmin;
	pl->bmax = bmax;
	/* Dense schedules: many fates each, since a schedule's fixed cost
	 * (a fresh log, forks, connections) is most of its time. */
	pl->nsteps = CRASH_MAX_STEPS / 2 + (int)(util_splitmix64(&s) % (CRASH_MAX_STEPS / 2 + 1));
	for (int i = 0; i < pl->nsteps; i++) {
		struct crash_step *st = &pl->steps[i];
		int k = (int)(util_splitmix64(&s) % CRASH_KINDS);
		st->kind = k == 0 ? CRASH_NONE : (enum crash_kind)k;
		st->nth = 1 + (int)(util_splitmix64(&s) % 4);
		st->batch = bmin + (int)(util_splitmix64(&s) % (uint64_t)(bmax - bmin + 1));
	}
}

/* Incarnation inc's step: from the plan, or a plain run to the end. */
static struct crash_step step_of(const struct crash_plan *pl, int inc)
{
	if (inc < pl->nsteps)
		return pl->steps[inc];
	uint64_t s = pl->seed ^ (uint64_t)inc * 0x2545f4914f6cdd1dull;
	return (struct crash_step){ CRASH_NONE, 0,
		pl->bmin + (int)(util_splitmix64(&s) % (uint64_t)(pl->bmax - pl->bmin + 1)) };
}

void crash_plan_print(const struct crash_plan *pl, FILE *out)
{
	fprintf(out, "plan 0x%016llx: %d events, %d partitions, %d consumers\n",
	        (unsigned long long)pl->seed, pl->events, CRASH_PARTITIONS, CRASH_CONSUMERS);
	for (int i = 0; i < pl->nsteps; i++) {
		const struct crash_step *st = &pl->steps[i];
		fprintf(out, "  consumer m%03d: batches of up to %d, %s", i, st->batch, kind_name[st->kind]);
		if (st->kind != CRASH_NONE)
			fprintf(out, st->kind == CRASH_LEAVE ? " after %d batch(es)" : " on pass %d", st->nth);
		fputc('\n', out);
	}
	fprintf(out, "  later consumers run to the end\n");
}

/* ---- the child: one consumer ---- */

static void after_upsert_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)arg;
	(void)t_ns;
	if (ev == KIT_DB_STMT_END && lt_sql_names(sql, "video_views") && !lt_sql_is(sql, "SELECT"))
		kit_fp_hit("after-upsert");
	if (ev == KIT_DB_TX_COMMIT)
		kit_fp_hit("after-db-commit");
}

__attribute__((noreturn))
static void child_exit(int code, const char *who, const char *what, const char *msg)
{
	if (msg)
		fprintf(stderr, "consumer %s: %s: %s\n", who, what, msg);
	fflush(stderr);
	_exit(code);
}

/* Every partition's hint has reached its end: the group is done. */
static int all_done(struct kit_log *log, const int64_t *ends)
{
	for (int p = 0; p < CRASH_PARTITIONS; p++) {
		int64_t next;
		if (kit_log_committed(log, FENCE_GROUP, p, &next) != 0 || next < ends[p])
			return 0;
	}
	return 1;
}

static void nap_us(long us)
{
	util_sleep_ns((int64_t)us * 1000);
}

/* A consumer process. It connects first, since that is the slow part,
 * then reads its incarnation number from fd (end of file: not needed after
 * all) and only then learns its batch size and its fate. */
__attribute__((noreturn))
static void child_main(struct labtest *t, const struct crash_plan *pl, int fd,
                       const char *dir, const int64_t *ends)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	struct kit_db *db;
	if (kit_db_open(&db, t->url) != 0)
		child_exit(EXIT_BROKEN, "(starting)", "open database", kit_db_errmsg(db));
	/* The processes that crash here are consumers, never the server: a
	 * commit need not wait for the disk to be atomic, only to survive a
	 * power cut, which these tests do not stage. */
	if (kit_db_engine(db) == KIT_DB_POSTGRES &&
	    kit_db_exec(db, "SET synchronous_commit = off", 0, NULL) != 0)
		child_exit(EXIT_BROKEN, "(starting)", "set synchronous_commit", kit_db_errmsg(db));

	int inc;
	ssize_t got;
	do
		got = read(fd, &inc, sizeof inc);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof inc)
		_exit(0);
	close(fd);

	char who[16];
	snprintf(who, sizeof who, "m%03d", inc);
	struct crash_step st = step_of(pl, inc);
	kit_fp_clear();
	if (kind_fp[st.kind])
		kit_fp_set(kind_fp[st.kind], KIT_FP_KILL, st.nth);
	kit_db_set_hook(db, after_upsert_hook, NULL);
	struct kit_log *log;
	if (kit_log_open(&log, dir, CRASH_PARTITIONS) != 0)
		child_exit(EXIT_BROKEN, who, "open log", kit_log_errmsg(log));
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = fence_on_assign, .arg = db };
	if (kit_log_join(&c, log, FENCE_GROUP, who, &cb) != 0)
		child_exit(EXIT_BROKEN, who, "join", kit_log_errmsg(log));

	int batches = 0, errors = 0;
	long idle_us = 100;      /* idle naps grow while nothing happens */
	for (;;) {
		int n = kit_log_poll(c, st.batch, fence_handle, db);
		if (n < 0) {
			/* A busy database or a deadlock victim may succeed next time;
			 * an error that keeps coming back means the code is broken. */
			if (++errors == 50) {
				char msg[1200];
				snprintf(msg, sizeof msg, "code %d; database: %s; log: %s", n,
				         kit_db_errmsg(db), kit_log_errmsg(log));
				child_exit(EXIT_BROKEN, who, "50 failed polls in a row, the last", msg);
			}
			nap_us(2000);
			continue;
		}
		errors = 0;
		if (n > 0) {
			idle_us = 100;
			if (st.kind == CRASH_LEAVE && ++batches >= st.nth) {
				kit_log_leave(c);
				child_exit(EXIT_LEFT, who, "left", NULL);
			}
			continue;
		}
		if (all_done(log, ends)) {
			kit_log_leave(c);
			child_exit(0, who, "done", NULL);
		}
		nap_us(idle_us);
		if (idle_us < 4000)
			idle_us *= 2;
	}
}

/* ---- the parent: events, coordinator, verdict ---- */

/* Write pl's events into a fresh log in dir; fill the true counts. */
static int produce(const struct crash_plan *pl, const char *dir, int64_t *views,
                   int64_t *ends, char *why, size_t whylen)
{
	struct kit_log *log;
	if (kit_log_open(&log, dir, CRASH_PARTITIONS) != 0) {
		snprintf(why, whylen, "%s", kit_log_errmsg(log));
		kit_log_close(log);
		return -1;
	}
	enum { CHUNK = 1024 };
	static struct fence_event ev[CRASH_PARTITIONS][CHUNK];
	static struct kit_log_iov iov[CRASH_PARTITIONS][CHUNK];
	int fill[CRASH_PARTITIONS] = { 0 }, rc = 0;
	uint64_t s = pl->seed ^ 0xe7e7e7e7e7e7e7e7ull;
	for (int i = 0; i <= pl->events && rc == 0; i++) {
		for (int p = 0; p < CRASH_PARTITIONS && rc == 0; p++) {
			if (fill[p] == 0 || (fill[p] < CHUNK && i < pl->events))
				continue;
			rc = kit_log_append(log, p, iov[p], fill[p], NULL);
			fill[p] = 0;
		}
		if (i == pl->events)
			break;
		uint64_t r = util_splitmix64(&s);
		/* A hot video takes three views in four; the rest spread out. */
		int64_t video = r % 4 ? 0 : 1 + (int64_t)((r >> 8) % (CRASH_VIDEOS - 1));
		int p = (int)(video % CRASH_PARTITIONS);   /* keyed by video, as a producer would */
		ev[p][fill[p]].video_id = video;
		iov[p][fill[p]] = (struct kit_log_iov){ &ev[p][fill[p]], sizeof ev[p][0] };
		fill[p]++;
		views[video]++;
		ends[p]++;
	}
	if (rc != 0)
		snprintf(why, whylen, "%s", kit_log_errmsg(log));
	kit_log_close(log);
	return rc;
}

static double now_s(void)
{
	return util_now();
}

static double started;   /* when the current schedule's consumers started */

/* The next consumer, already started and connecting, waiting for its
 * number: a restart then costs a write, not a new connection. */
struct spare {
	pid_t pid;        /* 0: none */
	int fd;           /* where its number goes */
};

static void fork_spare(struct labtest *t, const struct crash_plan *pl, const char *dir,
                       const int64_t *ends, struct spare *sp)
{
	int fds[2];
	sp->pid = 0;
	if (pipe(fds) != 0)
		return;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[1]);
		child_main(t, pl, fds[0], dir, ends);
	}
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		return;
	}
	sp->pid = pid;
	sp->fd = fds[1];
}

/* Start incarnation inc: hand its number to the spare, make a new spare. */
static pid_t spawn(struct labtest *t, const struct crash_plan *pl, int inc,
                   const char *dir, const int64_t *ends, int verbose, struct spare *sp)
{
	if (verbose) {
		struct crash_step st = step_of(pl, inc);
		printf("  %7.1f ms  start m%03d: batches of up to %d, %s\n", (now_s() - started) * 1e3,
		       inc, st.batch, kind_name[st.kind]);
		fflush(stdout);
	}
	if (sp->pid == 0)
		fork_spare(t, pl, dir, ends, sp);
	if (sp->pid == 0)
		return -1;
	pid_t pid = sp->pid;
	ssize_t put = write(sp->fd, &inc, sizeof inc);
	close(sp->fd);
	fork_spare(t, pl, dir, ends, sp);
	return put == (ssize_t)sizeof inc ? pid : -1;
}

/* Run the group to the end. 0, or -1 with why filled. */
static int coordinate(struct labtest *t, const struct crash_plan *pl, const char *dir,
                      const int64_t *ends, int verbose, struct crash_stats *stats,
                      char *why, size_t whylen)
{
	pid_t live[CRASH_CONSUMERS];
	int who[CRASH_CONSUMERS];
	int inc = 0, running = 0, rc = 0;
	struct spare sp = { 0, -1 };
	started = now_s();
	for (int k = 0; k < CRASH_CONSUMERS; k++) {
		who[k] = inc;
		live[k] = spawn(t, pl, inc++, dir, ends, verbose, &sp);
		if (live[k] < 0) {
			snprintf(why, whylen, "fork: %s", strerror(errno));
			rc = -1;
			break;
		}
		running++;
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	double deadline = now_s() + RUN_SECONDS;

	while (running > 0) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid == 0) {
			if (rc == 0 && now_s() > deadline) {
				snprintf(why, whylen, "the consumers did not finish in %d s", RUN_SECONDS);
				rc = -1;
			}
			if (rc != 0) {
				for (int k = 0; k < CRASH_CONSUMERS; k++)
					if (live[k] > 0)
						kill(live[k], SIGKILL);
				if (sp.pid > 0)
					kill(sp.pid, SIGKILL);
			}
			struct timespec tick = { 0, 50 * 1000 * 1000 };
			sigtimedwait(&chld, NULL, &tick);
			continue;
		}
		if (pid < 0)
			break;
		if (pid == sp.pid) {             /* the spare died before it had work */
			close(sp.fd);
			sp.pid = 0;
			if (rc == 0) {
				snprintf(why, whylen, "a consumer could not start (its message is above)");
				rc = -1;
			}
			continue;
		}
		int k = 0;
		while (k < CRASH_CONSUMERS && live[k] != pid)
			k++;
		if (k == CRASH_CONSUMERS)
			continue;
		live[k] = 0;
		running--;
		int killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		int left = WIFEXITED(st) && WEXITSTATUS(st) == EXIT_LEFT;
		stats->killed += killed && rc == 0;
		stats->left += left;
		if (verbose)
			printf("  %7.1f ms  end   m%03d: %s\n", (now_s() - started) * 1e3, who[k],
			       killed ? "killed (SIGKILL)" : left ? "left the group"
			       : WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "done" : "broken");
		if (rc != 0 || (WIFEXITED(st) && WEXITSTATUS(st) == 0))
			continue;
		if (!killed && !left) {
			snprintf(why, whylen, "consumer m%03d %s %d (its message is above)", who[k],
			         WIFSIGNALED(st) ? "died of signal" : "exited with code",
			         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			rc = -1;
			continue;
		}
		if (inc == MAX_INCARNATIONS) {
			snprintf(why, whylen, "more than %d consumers started", MAX_INCARNATIONS);
			rc = -1;
			continue;
		}
		who[k] = inc;
		live[k] = spawn(t, pl, inc++, dir, ends, verbose, &sp);
		if (live[k] < 0) {
			snprintf(why, whylen, "fork: %s", strerror(errno));
			live[k] = 0;
			rc = -1;
			continue;
		}
		running++;
	}
	if (sp.pid > 0) {                    /* not needed: end of file tells it so */
		close(sp.fd);
		waitpid(sp.pid, NULL, 0);
	}
	stats->started += inc;
	return rc;
}

/* Compare the database with the truth; the first difference goes to why. */
static int verdict(struct labtest *t, const int64_t *views, const int64_t *ends,
                   char *why, size_t whylen)
{
	char sql[160];
	for (int v = 0; v < CRASH_VIDEOS; v++) {
		snprintf(sql, sizeof sql, "SELECT COALESCE(SUM(views), 0) FROM video_views "
		         "WHERE video_id = %d", v);
		int64_t got = labtest_int(t, sql);
		if (got != views[v]) {
			snprintf(why, whylen, "expected %lld, got %lld: views of video %d (%s)",
			         (long long)views[v], (long long)got, v,
			         got > views[v] ? "some batch counted twice" : "some views lost");
			return -1;
		}
	}
	for (int p = 0; p < CRASH_PARTITIONS; p++) {
		snprintf(sql, sizeof sql, "SELECT last_offset FROM log_progress WHERE part = %d", p);
		int64_t got = labtest_int(t, sql);
		if (got != ends[p] - 1) {
			snprintf(why, whylen, "expected %lld, got %lld: stored last_offset of partition %d",
			         (long long)(ends[p] - 1), (long long)got, p);
			return -1;
		}
	}
	return 0;
}

int crash_run(struct labtest *t, const struct crash_plan *pl, int verbose,
              struct crash_stats *stats, char *why, size_t whylen)
{
	struct crash_stats scratch = { 0, 0, 0 };
	if (!stats)
		stats = &scratch;
	labtest_exec(t, "DELETE FROM video_views");
	labtest_exec(t, "UPDATE log_progress SET last_offset = -1");

	char dir[512];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/hotrow-fence-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(why, whylen, "mkdtemp %s: %s", dir, strerror(errno));
		return -1;
	}
	int64_t views[CRASH_VIDEOS] = { 0 }, ends[CRASH_PARTITIONS] = { 0 };
	int rc = produce(pl, dir, views, ends, why, whylen);

	if (rc == 0) {
		/* No database handle of ours may cross fork(): SQLite's locks and
		 * libpq's socket belong to one process. Reopened by labtest_db(). */
		kit_db_close(t->db);
		t->db = NULL;
		sigset_t chld, old;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_BLOCK, &chld, &old);
		/* a spare that died cannot take its number: an error, not SIGPIPE */
		void (*pipe_was)(int) = signal(SIGPIPE, SIG_IGN);
		rc = coordinate(t, pl, dir, ends, verbose, stats, why, whylen);
		signal(SIGPIPE, pipe_was);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	if (rc == 0)
		rc = verdict(t, views, ends, why, whylen);
	kit_log_remove(dir);
	return rc;
}
