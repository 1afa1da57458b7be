/*
 * test_log.c: kit/log on real files and real processes: offsets, torn
 * tails, concurrent appenders, the committed hint, and consumer groups
 * whose partitions move when a member joins, leaves or is SIGKILLed.
 *
 * Each test works in a fresh directory under $TMPDIR and removes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kit/failpoint.h"
#include "kit/log.h"
#include "util/clock.h"

struct fixture {
	char dir[256];
	struct kit_log *log;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	const char *tmp = getenv("TMPDIR");
	snprintf(f->dir, sizeof f->dir, "%s/hotrow-log-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	kit_fp_clear();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	kit_log_close(f->log);
	int rc = kit_log_remove(f->dir);
	free(f);
	return rc;
}

/* Open f->log with n partitions, failing the test with the message. */
static struct kit_log *open_log(struct fixture *f, int n)
{
	kit_log_close(f->log);
	int rc = kit_log_open(&f->log, f->dir, n);
	if (rc != 0)
		fail_msg("%s", kit_log_errmsg(f->log));
	return f->log;
}

static void append_u32(struct kit_log *log, int part, uint32_t v)
{
	struct kit_log_iov iov = { &v, sizeof v };
	if (kit_log_append(log, part, &iov, 1, NULL) != 0)
		fail_msg("%s", kit_log_errmsg(log));
}

/* kit_log_read collector: the u32 payloads, and offsets checked in order. */
struct seen {
	uint32_t v[8192];
	int n;
	int64_t next;
};

static int collect(void *arg, const struct kit_log_record *r)
{
	struct seen *s = arg;
	assert_int_equal(r->offset, s->next);
	assert_int_equal(r->len, sizeof(uint32_t));
	assert_true(s->n < (int)(sizeof s->v / sizeof s->v[0]));
	memcpy(&s->v[s->n++], r->data, sizeof(uint32_t));
	s->next++;
	return 0;
}

static struct seen *read_all(struct kit_log *log, int part)
{
	static struct seen s;
	memset(&s, 0, sizeof s);
	int rc;
	while ((rc = kit_log_read(log, part, s.next, 100, collect, &s)) > 0)
		;
	assert_int_equal(rc, 0);
	return &s;
}

static void kit_log_append__offsets_count_from_zero(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 2);
	int64_t first = -1, end = -1;
	uint32_t a = 7, b = 8, c = 9;
	struct kit_log_iov iov[] = { { &a, 4 }, { &b, 4 }, { &c, 4 } };

	assert_int_equal(kit_log_append(log, 1, iov, 1, &first), 0);
	assert_int_equal(first, 0);
	assert_int_equal(kit_log_append(log, 1, iov + 1, 2, &first), 0);
	assert_int_equal(first, 1);

	assert_int_equal(kit_log_end(log, 1, &end), 0);
	assert_int_equal(end, 3);
	assert_int_equal(kit_log_end(log, 0, &end), 0);
	assert_int_equal(end, 0);
	struct seen *s = read_all(log, 1);
	assert_int_equal(s->n, 3);
	assert_int_equal(s->v[0], 7);
	assert_int_equal(s->v[2], 9);
}

static void kit_log_read__past_the_end_is_a_range_error(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 1);
	append_u32(log, 0, 1);
	struct seen s = { .next = 1 };
	assert_int_equal(kit_log_read(log, 0, 1, 10, collect, &s), 0);
	assert_int_equal(kit_log_read(log, 0, 2, 10, collect, &s), KIT_LOG_RANGE);
	assert_int_equal(kit_log_append(log, 3, &(struct kit_log_iov){ "x", 1 }, 1, NULL),
	                 KIT_LOG_INVAL);
	assert_non_null(strstr(kit_log_errmsg(log), "partition 3"));
}

static void kit_log_open__keeps_records_and_partition_count(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 3);
	for (uint32_t i = 0; i < 500; i++)
		append_u32(log, 2, i);
	assert_int_equal(kit_log_sync(log, -1), 0);

	log = open_log(f, 3);
	struct seen *s = read_all(log, 2);
	assert_int_equal(s->n, 500);
	assert_int_equal(s->v[499], 499);

	struct kit_log *other;
	assert_int_equal(kit_log_open(&other, f->dir, 4), KIT_LOG_INVAL);
	assert_non_null(strstr(kit_log_errmsg(other), "made with 3 partitions"));
	kit_log_close(other);
}

static void kit_log_open__torn_tail_is_ignored_then_cut(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 1);
	append_u32(log, 0, 10);
	append_u32(log, 0, 11);
	kit_log_close(f->log);
	f->log = NULL;
	/* A crash in the middle of a write: a header promising 100 bytes, 3 of them written. */
	char path[300];
	snprintf(path, sizeof path, "%s/part-0.log", f->dir);
	int fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	unsigned char torn[] = { 100, 0, 0, 0, 1, 2, 3, 4, 'a', 'b', 'c' };
	assert_int_equal(write(fd, torn, sizeof torn), (ssize_t)sizeof torn);
	close(fd);

	log = open_log(f, 1);
	int64_t end, first;
	assert_int_equal(kit_log_end(log, 0, &end), 0);
	assert_int_equal(end, 2);
	uint32_t v = 12;
	assert_int_equal(kit_log_append(log, 0, &(struct kit_log_iov){ &v, 4 }, 1, &first), 0);
	assert_int_equal(first, 2);

	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 3 * (8 + 4));   /* the torn bytes are gone */
	struct seen *s = read_all(log, 0);
	assert_int_equal(s->n, 3);
	assert_int_equal(s->v[2], 12);
}

static void kit_log_open__corrupt_record_ends_the_log(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 1);
	for (uint32_t i = 0; i < 4; i++)
		append_u32(log, 0, i);
	char path[300];
	snprintf(path, sizeof path, "%s/part-0.log", f->dir);
	int fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\xff", 1, 2 * 12 + 8), 1);   /* flip record 2's payload */
	close(fd);

	log = open_log(f, 1);
	int64_t end;
	assert_int_equal(kit_log_end(log, 0, &end), 0);
	assert_int_equal(end, 2);
}

/* A header whose length is past the maximum is garbage too: the records
 * before it stay indexed once (not again at every scan), and the next
 * append cuts the garbage and lands right after them. */
static void kit_log_open__oversized_length_is_a_torn_tail(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 1);
	for (uint32_t i = 0; i < 3; i++)
		append_u32(log, 0, i);
	char path[300];
	snprintf(path, sizeof path, "%s/part-0.log", f->dir);
	int fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	unsigned char junk[8] = { 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0 };
	assert_int_equal(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
	close(fd);

	log = open_log(f, 1);
	int64_t end = -1, again = -1, first = -1;
	assert_int_equal(kit_log_end(log, 0, &end), 0);
	assert_int_equal(kit_log_end(log, 0, &again), 0);
	uint32_t v = 3;
	assert_int_equal(kit_log_append(log, 0, &(struct kit_log_iov){ &v, 4 }, 1, &first), 0);

	assert_int_equal(end, 3);
	assert_int_equal(again, 3);
	assert_int_equal(first, 3);
	log = open_log(f, 1);      /* a fresh handle reads the file from the start */
	struct seen *s = read_all(log, 0);
	assert_int_equal(s->n, 4);
	assert_int_equal(s->v[3], 3);
}

static void kit_log_append__processes_append_at_once(void **state)
{
	struct fixture *f = *state;
	open_log(f, 1);
	enum { WRITERS = 3, EACH = 2000 };
	pid_t pids[WRITERS];
	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			struct kit_log *mine;
			if (kit_log_open(&mine, f->dir, 1) != 0)
				_exit(2);
			for (uint32_t i = 0; i < EACH; i++) {
				uint32_t v = (uint32_t)w << 16 | i;
				if (kit_log_append(mine, 0, &(struct kit_log_iov){ &v, 4 }, 1, NULL) != 0)
					_exit(3);
			}
			_exit(0);
		}
	}
	for (int w = 0; w < WRITERS; w++) {
		int st;
		assert_int_equal(waitpid(pids[w], &st, 0), pids[w]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}

	struct seen *s = read_all(f->log, 0);
	assert_int_equal(s->n, WRITERS * EACH);
	uint32_t next[WRITERS] = { 0 };
	for (int i = 0; i < s->n; i++) {
		uint32_t w = s->v[i] >> 16, seq = s->v[i] & 0xffff;
		assert_true(w < WRITERS);
		assert_int_equal(seq, next[w]);    /* each writer's records in its order */
		next[w]++;
	}
}

static void kit_log_commit__hint_defaults_to_zero_and_persists(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 2);
	int64_t next = -1;
	assert_int_equal(kit_log_committed(log, "g", 1, &next), 0);
	assert_int_equal(next, 0);
	assert_int_equal(kit_log_commit(log, "g", 1, 42), 0);
	assert_int_equal(kit_log_commit(log, "g", 1, 43), 0);

	log = open_log(f, 2);
	assert_int_equal(kit_log_committed(log, "g", 1, &next), 0);
	assert_int_equal(next, 43);
	assert_int_equal(kit_log_committed(log, "other", 1, &next), 0);
	assert_int_equal(next, 0);
	assert_int_equal(kit_log_commit(log, "../x", 1, 1), KIT_LOG_INVAL);
}

/* Rebalance callbacks recorded as "+P" / "-P" per consumer. */
struct calls {
	char text[256];
};

static int on_assign(void *arg, struct kit_log_consumer *c, int part)
{
	(void)c;
	struct calls *k = arg;
	size_t n = strlen(k->text);
	snprintf(k->text + n, sizeof k->text - n, "+%d", part);
	return 0;
}

static int on_revoke(void *arg, struct kit_log_consumer *c, int part)
{
	(void)c;
	struct calls *k = arg;
	size_t n = strlen(k->text);
	snprintf(k->text + n, sizeof k->text - n, "-%d", part);
	return 0;
}

static struct kit_log_consumer *join(struct kit_log *log, const char *name, struct calls *k)
{
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { on_assign, on_revoke, k };
	if (kit_log_join(&c, log, "g", name, &cb) != 0)
		fail_msg("%s", kit_log_errmsg(log));
	return c;
}

static int owned(struct kit_log_consumer *c, int nparts)
{
	int mask = 0;
	for (int p = 0; p < nparts; p++)
		mask |= kit_log_owns(c, p) << p;
	return mask;
}

static void kit_log_rebalance__joiner_gets_partitions_after_revoke(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 4);
	struct calls ka = { "" }, kb = { "" };
	struct kit_log_consumer *a = join(log, "a", &ka);
	assert_int_equal(kit_log_rebalance(a), 0);
	assert_int_equal(owned(a, 4), 0xf);
	assert_string_equal(ka.text, "+0+1+2+3");

	struct kit_log_consumer *b = join(log, "b", &kb);
	assert_int_equal(kit_log_rebalance(b), 0);
	assert_int_equal(owned(b, 4), 0);          /* a has not let go yet */
	assert_int_equal(kit_log_rebalance(a), 0);
	assert_string_equal(ka.text, "+0+1+2+3-1-3");
	assert_int_equal(kit_log_rebalance(b), 0);
	assert_int_equal(owned(a, 4), 0x5);
	assert_int_equal(owned(b, 4), 0xa);
	assert_string_equal(kb.text, "+1+3");

	kit_log_leave(b);
	assert_int_equal(kit_log_rebalance(a), 0);
	assert_int_equal(owned(a, 4), 0xf);
	assert_string_equal(ka.text, "+0+1+2+3-1-3+1+3");
	kit_log_leave(a);
}

static void kit_log_join__live_name_is_busy(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 1);
	struct calls k = { "" };
	struct kit_log_consumer *a = join(log, "a", &k), *again = NULL;
	assert_int_equal(kit_log_join(&again, log, "g", "a", NULL), KIT_LOG_BUSY);
	assert_null(again);
	assert_int_equal(kit_log_join(&again, log, "g", "a/b", NULL), KIT_LOG_INVAL);
	kit_log_leave(a);
	assert_int_equal(kit_log_join(&again, log, "g", "a", NULL), 0);
	kit_log_leave(again);
}

/* A batch handler that sums u32 payloads into arg. */
static int sum_batch(void *arg, int part, const struct kit_log_record *recs, int n)
{
	(void)part;
	long *sum = arg;
	for (int i = 0; i < n; i++) {
		uint32_t v;
		memcpy(&v, recs[i].data, 4);
		*sum += v;
	}
	return 0;
}

static int refuse_batch(void *arg, int part, const struct kit_log_record *recs, int n)
{
	(void)arg; (void)part; (void)recs; (void)n;
	return -7;
}

static void kit_log_poll__batches_round_robin_and_commits(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 2);
	for (uint32_t i = 1; i <= 30; i++)
		append_u32(log, i % 2, i);
	struct calls k = { "" };
	struct kit_log_consumer *c = join(log, "a", &k);
	long sum = 0;

	assert_int_equal(kit_log_poll(c, 10, refuse_batch, NULL), -7);
	int64_t pos, hint;
	assert_int_equal(kit_log_position(c, 0, &pos), 0);
	assert_int_equal(pos, 0);                        /* a refused batch is not skipped */

	int total = 0, got;
	while ((got = kit_log_poll(c, 10, sum_batch, &sum)) > 0)
		total += got;
	assert_int_equal(got, 0);
	assert_int_equal(total, 30);
	assert_int_equal(sum, 30 * 31 / 2);
	assert_int_equal(kit_log_committed(log, "g", 0, &hint), 0);
	assert_int_equal(hint, 15);
	kit_log_leave(c);
}

/* Seek on assignment, the way a consumer with its own stored position does. */
static int seek_to_7(void *arg, struct kit_log_consumer *c, int part)
{
	(void)arg;
	return kit_log_seek(c, part, 7);
}

static int refuse_assign(void *arg, struct kit_log_consumer *c, int part)
{
	(void)arg; (void)c; (void)part;
	return -9;
}

static void kit_log_rebalance__assigned_callback_sets_position(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 1);
	assert_int_equal(kit_log_commit(log, "g", 0, 3), 0);
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = seek_to_7 };
	assert_int_equal(kit_log_join(&c, log, "g", "a", &cb), 0);
	assert_int_equal(kit_log_rebalance(c), 0);
	int64_t pos;
	assert_int_equal(kit_log_position(c, 0, &pos), 0);
	assert_int_equal(pos, 7);
	kit_log_leave(c);

	cb.assigned = refuse_assign;
	assert_int_equal(kit_log_join(&c, log, "g", "a", &cb), 0);
	assert_int_equal(kit_log_rebalance(c), -9);
	assert_int_equal(kit_log_owns(c, 0), 0);     /* never read from an unapproved place */
	kit_log_leave(c);
}

static void kit_log_poll__hint_follows_a_seek(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 1);
	for (uint32_t i = 0; i < 7; i++)
		append_u32(log, 0, i);
	assert_int_equal(kit_log_commit(log, "g", 0, 3), 0);
	struct kit_log_consumer *c;
	struct kit_log_callbacks cb = { .assigned = seek_to_7 };
	assert_int_equal(kit_log_join(&c, log, "g", "a", &cb), 0);

	long sum = 0;
	assert_int_equal(kit_log_poll(c, 10, sum_batch, &sum), 0);   /* nothing past 7 */

	int64_t hint;
	assert_int_equal(kit_log_committed(log, "g", 0, &hint), 0);
	assert_int_equal(hint, 7);
	assert_int_equal(sum, 0);
	kit_log_leave(c);
}

struct opener {
	const char *dir;
	int rc;
};

static void *open_once(void *arg)
{
	struct opener *o = arg;
	struct kit_log *log;
	o->rc = kit_log_open(&log, o->dir, 2);
	if (o->rc == 0)
		o->rc = kit_log_commit(log, "g", 0, 1);
	kit_log_close(log);
	return NULL;
}

static void kit_log_open__threads_create_one_log_at_once(void **state)
{
	struct fixture *f = *state;
	char dir[300];
	snprintf(dir, sizeof dir, "%s/fresh", f->dir);
	enum { N = 8 };
	pthread_t th[N];
	struct opener o[N];
	for (int i = 0; i < N; i++) {
		o[i] = (struct opener){ dir, -99 };
		assert_int_equal(pthread_create(&th[i], NULL, open_once, &o[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(o[i].rc, 0);
	}
	assert_int_equal(kit_log_remove(dir), 0);
}

static void kit_log_poll__dead_members_partitions_redelivered(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 2);
	for (uint32_t i = 0; i < 20; i++) {
		append_u32(log, 0, i);
		append_u32(log, 1, 100 + i);
	}
	/* The child handles p0 [0,10) and commits, handles p1 [0,10) and is
	 * killed before committing that. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct kit_log *mine;
		struct kit_log_consumer *c;
		long sum = 0;
		if (kit_log_open(&mine, f->dir, 2) != 0 || kit_log_join(&c, mine, "g", "a", NULL) != 0)
			_exit(2);
		kit_fp_set("log-before-commit", KIT_FP_KILL, 2);
		for (;;)
			if (kit_log_poll(c, 10, sum_batch, &sum) < 0)
				_exit(3);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	struct calls k = { "" };
	struct kit_log_consumer *b = join(log, "b", &k);
	assert_int_equal(kit_log_rebalance(b), 0);
	assert_string_equal(k.text, "+0+1");        /* the dead member left by dying */
	int64_t p0, p1;
	assert_int_equal(kit_log_position(b, 0, &p0), 0);
	assert_int_equal(kit_log_position(b, 1, &p1), 0);
	assert_int_equal(p0, 10);
	assert_int_equal(p1, 0);                     /* handled, not committed: comes again */
	kit_log_leave(b);
}

static void kit_log_rebalance__live_owner_keeps_partition_until_it_lets_go(void **state)
{
	struct fixture *f = *state;
	open_log(f, 1);
	int go[2], ready[2];
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct kit_log *mine;
		struct kit_log_consumer *c;
		char ch;
		if (kit_log_open(&mine, f->dir, 1) != 0 || kit_log_join(&c, mine, "g", "b", NULL) != 0 ||
		    kit_log_rebalance(c) != 0 || !kit_log_owns(c, 0))
			_exit(2);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &ch, 1) != 1)
			_exit(3);
		_exit(0);    /* no leave(): the process simply ends */
	}
	char ch;
	assert_int_equal(read(ready[0], &ch, 1), 1);
	struct calls k = { "" };
	struct kit_log_consumer *a = join(f->log, "a", &k);
	assert_int_equal(kit_log_rebalance(a), 0);   /* a ranks first, but b holds it */
	assert_int_equal(kit_log_owns(a, 0), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(kit_log_rebalance(a), 0);
	assert_int_equal(kit_log_owns(a, 0), 1);
	kit_log_leave(a);
	close(go[0]); close(go[1]); close(ready[0]); close(ready[1]);
}

/* With a session timeout, a member that stops polling loses its
 * partitions while its process lives: another takes them with a higher
 * generation, and the silent one, when it polls again, finds them gone
 * (revoked) and its stale batch does not move the new owner's hint. */
struct stall {
	struct kit_log_consumer *other;
	int ran;
};

static int stall_then_other_polls(void *arg, int part, const struct kit_log_record *recs, int n)
{
	struct stall *st = arg;
	(void)part, (void)recs, (void)n;
	if (st->ran++)
		return 0;
	util_sleep_ns(300 * 1000000LL);   /* silent past the timeout */
	return kit_log_rebalance(st->other) < 0 ? -1 : 0;   /* ... and the other takes over */
}

static int nothing(void *arg, int part, const struct kit_log_record *recs, int n)
{
	(void)arg, (void)part, (void)recs, (void)n;
	return 0;
}

static void kit_log_poll__silent_member_loses_its_partition_while_alive(void **state)
{
	struct fixture *f = *state;
	struct kit_log *log = open_log(f, 1);
	for (uint32_t i = 0; i < 10; i++)
		append_u32(log, 0, i);
	struct calls ka = { "" }, kb = { "" };
	struct kit_log_consumer *a = join(log, "a", &ka), *b = join(log, "b", &kb);
	kit_log_set_session_timeout(a, 100);
	kit_log_set_session_timeout(b, 100);
	assert_int_equal(kit_log_rebalance(b), 0);   /* b is second by name: owns nothing */
	assert_int_equal(kit_log_rebalance(a), 0);
	int64_t gen_a = 0, gen_b = 0, hint = -1;
	assert_int_equal(kit_log_generation(a, 0, &gen_a), 0);
	struct stall st = { b, 0 };

	int n = kit_log_poll(a, 4, stall_then_other_polls, &st);   /* a reads 0..3, stalls */

	assert_int_equal(n, 4);
	assert_int_equal(kit_log_owns(b, 0), 1);
	assert_int_equal(kit_log_generation(b, 0, &gen_b), 0);
	assert_true(gen_b > gen_a);
	assert_int_equal(kit_log_committed(log, "g", 0, &hint), 0);
	assert_int_equal(hint, 0);                    /* the zombie's batch moved no hint */
	assert_int_equal(kit_log_poll(a, 4, nothing, NULL), 0);
	assert_int_equal(kit_log_owns(a, 0), 0);      /* ... and a knows it now */
	assert_string_equal(ka.text, "+0-0");
	kit_log_leave(a);
	kit_log_leave(b);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(kit_log_append__offsets_count_from_zero),
		T(kit_log_read__past_the_end_is_a_range_error),
		T(kit_log_open__keeps_records_and_partition_count),
		T(kit_log_open__torn_tail_is_ignored_then_cut),
		T(kit_log_open__corrupt_record_ends_the_log),
		T(kit_log_open__oversized_length_is_a_torn_tail),
		T(kit_log_append__processes_append_at_once),
		T(kit_log_commit__hint_defaults_to_zero_and_persists),
		T(kit_log_rebalance__joiner_gets_partitions_after_revoke),
		T(kit_log_join__live_name_is_busy),
		T(kit_log_poll__batches_round_robin_and_commits),
		T(kit_log_rebalance__assigned_callback_sets_position),
		T(kit_log_poll__hint_follows_a_seek),
		T(kit_log_open__threads_create_one_log_at_once),
		T(kit_log_poll__dead_members_partitions_redelivered),
		T(kit_log_rebalance__live_owner_keeps_partition_until_it_lets_go),
		T(kit_log_poll__silent_member_loses_its_partition_while_alive),
	};
#undef T
	return cmocka_run_group_tests_name("kit_log", tests, NULL, NULL);
}
