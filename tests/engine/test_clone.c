/*
 * test_clone.c: copies of a running simulation (engine/sim_clone.c).
 * A clone or a checkpoint taken mid-run and run to the end gives the same
 * JSON and CSV, byte for byte, as the run it was copied from, for every scenario,
 * every strategy, with faults, a bulkhead, CPUs, a shared log and reads;
 * the copy shares nothing with the original; a checkpoint is smaller than
 * a clone and resumes as often as asked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/sim.h"
#include "engine/sim_clone.h"
#include "tests/engine/simtest.h"

static char *print(struct sim *s, void (*out)(FILE *, const struct sim *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	out(f, s);
	fclose(f);
	return buf;
}

/* Run s to its end; return its JSON, and its CSV in *csv when csv is not
 * NULL, and the recent ticks a screen draws in *snap when not NULL (the
 * caller frees the strings); free s. */
static char *finish(struct sim *s, char **csv, struct sim_snapshot *snap)
{
	char *j;

	sim_run(s);
	j = print(s, sim_json);
	if (csv)
		*csv = print(s, sim_csv);
	if (snap)
		sim_snapshot(s, snap);
	sim_free(s);
	return j;
}

/* Copy c's run at half its time, four ways (a clone, a checkpoint
 * resumed twice, one without the CSV history), play the original on
 * first, and check that all end alike: the same JSON and CSV, and for the
 * one without history the same JSON and the same recent ticks. A fault
 * injected just before (as the TUI's key would) is part of the state. */
static void check_copies(const struct sim_config *c, const char *what)
{
	static struct sim_snapshot want, got;
	char *straight, *straight_csv, *j, *csv;
	struct sim *s = sim_new(c), *cl, *r1, *r2, *r3;
	struct sim_ckpt *k, *k3;
	int64_t half = (int64_t)(c->seconds * 5e5);

	assert_non_null(s);
	sim_advance(s, half);
	sim_inject(s, SIM_FAULT_APP);
	cl = sim_clone(s);
	k = sim_ckpt_take(s, true);
	k3 = sim_ckpt_take(s, false);
	assert_int_equal(sim_ckpt_time(k), half);
	straight = finish(s, &straight_csv, &want);   /* the original goes on first */
	r1 = sim_ckpt_resume(k);
	r2 = sim_ckpt_resume(k);
	r3 = sim_ckpt_resume(k3);
	sim_ckpt_free(k);                   /* the resumed ones are on their own */
	sim_ckpt_free(k3);
	struct sim *copies[3] = { cl, r1, r2 };
	for (int i = 0; i < 3; i++) {
		j = finish(copies[i], &csv, NULL);
		if (strcmp(j, straight) || strcmp(csv, straight_csv))
			fail_msg("%s: copy %d ends differently from the original", what, i);
		free(j);
		free(csv);
	}
	j = finish(r3, NULL, &got);
	if (strcmp(j, straight))
		fail_msg("%s: the copy without history ends differently", what);
	assert_int_equal(got.nseries, want.nseries);
	assert_memory_equal(got.series, want.series, (size_t)want.nseries * sizeof *want.series);
	free(j);
	free(straight_csv);
	free(straight);
}

static void base(struct sim_config *c, const char *scenario)
{
	assert_int_equal(sim_scenario(scenario, c), 0);
	if (c->seconds > 1 || c->seconds <= 0)
		c->seconds = 1;
	c->arrivals = SIM_ARRIVE_POISSON;
	c->crashes[0] = (struct sim_crash){ SIM_FAULT_CONSUMER, 300000 };
	c->crashes[1] = (struct sim_crash){ SIM_FAULT_REDIS, 700000 };
	c->ncrashes = 2;
}

static void sim_clone__every_scenario_ends_alike(void **state)
{
	const char *const *names = sim_scenario_names();
	struct sim_config c;

	(void)state;
	for (int i = 0; names[i]; i++) {
		base(&c, names[i]);
		if (strstr(names[i], "video"))
			c.seconds = 0.3;        /* 100,000/s: a short run says as much */
		check_copies(&c, names[i]);
	}
}

static void sim_clone__every_strategy_ends_alike(void **state)
{
	struct sim_config c;
	char what[64];

	(void)state;
	for (int st = 0; st < SIM_NSTRATEGIES; st++) {
		base(&c, "viral-post");
		c.strategy = (enum sim_strategy)st;
		c.rows = st == SIM_SHARDED || st == SIM_LEDGER ? 8 : 1;
		if (c.flush_ms <= 0)
			c.flush_ms = 100;
		snprintf(what, sizeof what, "strategy %s", sim_strategy_name(c.strategy));
		check_copies(&c, what);
	}
}

/* The parts of struct sim the scenarios leave idle: the counter pool (a
 * pointer into the struct), retries and orphans (the likes' records, the
 * slab), CPUs, the herd, the shared log, reads and the version chain. */
static void sim_clone__every_part_ends_alike(void **state)
{
	struct sim_config c;

	(void)state;
	base(&c, "retry-storm");
	c.rps = 1500;             /* three times the row, 10 ms holds: the */
	c.hold_ms = 10;           /* client gives up in the lock queue */
	c.counter_pool = 10;
	c.pool = 20;
	c.client_timeout_ms = 50;
	c.retries = 3;
	c.backoff = SIM_BACKOFF_EXP_JITTER;
	c.backoff_ms = 5;
	c.lock_timeout_ms = 200;  /* after the client's 50 ms: orphans queue */
	check_copies(&c, "bulkhead and retries");

	base(&c, "viral-post-sharded");
	c.rows = 2;               /* 1,000/s for 2,000/s: queues to wake */
	c.cores = 2;
	c.cpu_db_ms = 0.5;
	c.outside_ms = 1;
	c.cpu_client_ms = 0.2;
	c.handoff = SIM_HANDOFF_HERD;
	c.wake_us = 20;
	c.lock_timeout_ms = 5;    /* counted from the latest wake */
	c.wal_flush_ms = 1;
	c.read_rps = 200;
	c.read_ms = 1;
	c.snapshot_at_s = 0.2;
	c.snapshot_for_s = 0.5;
	c.walk_us = 1;
	check_copies(&c, "CPUs, herd, shared log and reads");
	c.cold_after_us = 50;     /* the cores' idle stack goes with the copy */
	c.cold_us = 30;
	c.cold_per_ms = 20;
	check_copies(&c, "cold cores");
	c.run_queues = SIM_RUNQ_PER_CORE;   /* each core's queue, idle stack and draws */
	check_copies(&c, "a run queue per core");

	base(&c, "viral-post");
	c.wal_flush_ms = 2;       /* one row's commits pile up behind a flush */
	c.wal_cpu_ms = 0.5;
	c.cores = 2;
	c.cpu_db_ms = 0.5;
	c.wal_order = SIM_WAL_RELEASE_FLUSH;
	check_copies(&c, "release-flush: commits wait for the log unlocked");
	c.strategy = SIM_COALESCE;
	c.flush_ms = 50;          /* the flusher lets go of the row first too */
	check_copies(&c, "release-flush with the flusher's commits");

	base(&c, "viral-post");
	c.strategy = SIM_APPEND;
	c.flush_ms = 200;
	c.unrelated_rps = 300;
	c.unrelated_ms = 5;
	c.pool = 10;
	c.pool_timeout_ms = 20;
	check_copies(&c, "inserts and other endpoints on a small pool");
}

/* Running the clone leaves the original where it was. */
static void sim_clone__shares_nothing(void **state)
{
	struct sim_config c;
	struct sim_summary a, b;
	struct sim *s, *cl;

	(void)state;
	base(&c, "viral-post");
	s = sim_new(&c);
	sim_advance(s, 400000);
	sim_summary(s, &a);
	cl = sim_clone(s);
	sim_run(cl);
	sim_free(cl);                       /* a shared buffer would be freed here */
	sim_summary(s, &b);
	assert_memory_equal(&a, &b, sizeof a);
	sim_run(s);
	sim_free(s);
}

/* A checkpoint holds what is in use, not the buffers' full room: the
 * series history alone is over a megabyte in a runnable copy. */
static void sim_ckpt__smaller_than_a_clone(void **state)
{
	struct sim_config c;
	struct sim *s;
	struct sim_ckpt *k;

	(void)state;
	base(&c, "viral-post");
	s = sim_new(&c);
	sim_advance(s, 500000);
	k = sim_ckpt_take(s, true);
	assert_true(sim_ckpt_bytes(k) < 512 * 1024);
	assert_true(sim_ckpt_bytes(k) > sizeof(struct sim_config));
	sim_ckpt_free(k);
	sim_free(s);
}

/* The record of a run: a set at 1 s, the slowest to follow at 1.5 s,
 * an app crash at 2 s, the next like to follow at 2.5 s. A checkpoint taken at 0.5 s,
 * before all of them, made to replay the record taken at 3 s, gives the
 * same run to its end, the same trace of the like followed included;
 * the replay records the calls again, and a record taken earlier replays
 * only what it holds. */
static void sim_record__a_resumed_checkpoint_replays_the_calls(void **state)
{
	struct sim_config c, fix;
	struct sim_trace ta, tb;
	struct sim_record *rec;
	struct sim_ckpt *k;
	struct sim *a, *b;
	char *ja, *jb;

	(void)state;
	base(&c, "viral-post-coalesce");
	c.seconds = 4;
	fix = c;
	fix.rps = 3000;
	a = sim_new(&c);
	sim_advance(a, 500000);
	k = sim_ckpt_take(a, true);
	sim_advance(a, 1000000);
	sim_set(a, &fix);
	sim_advance(a, 1500000);
	sim_follow_slowest(a);     /* none in flight on this path: nobody */
	sim_advance(a, 2000000);
	sim_inject(a, SIM_FAULT_APP);
	sim_advance(a, 2500000);
	sim_follow_next(a);
	sim_advance(a, 3000000);
	rec = sim_record_take(a);
	assert_int_equal(sim_record_len(rec), 4);
	assert_int_equal(sim_record_follow(a), SIM_CALL_FOLLOW_NTH);
	assert_true(sim_record_settings(a)->rps == 3000);

	b = sim_ckpt_resume(k);
	assert_int_equal(sim_record_calls(b), 0);
	for (size_t i = sim_record_calls(b); i < sim_record_len(rec); i++) {
		sim_advance(b, sim_record_at(rec, i));
		sim_record_apply(b, rec, i);
	}
	assert_int_equal(sim_record_calls(b), 4);
	sim_advance(b, 3000000);
	sim_trace_get(a, &ta);
	sim_trace_get(b, &tb);
	assert_true(ta.state == SIM_TRACE_LIVE || ta.state == SIM_TRACE_COMPLETED);
	assert_memory_equal(&ta, &tb, sizeof ta);
	ja = finish(a, NULL, NULL);
	jb = finish(b, NULL, NULL);
	assert_string_equal(ja, jb);
	assert_non_null(strstr(ja, "\"lost\""));
	free(ja);
	free(jb);
	sim_record_free(rec);
	sim_ckpt_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_clone__every_scenario_ends_alike),
		cmocka_unit_test(sim_clone__every_strategy_ends_alike),
		cmocka_unit_test(sim_clone__every_part_ends_alike),
		cmocka_unit_test(sim_clone__shares_nothing),
		cmocka_unit_test(sim_ckpt__smaller_than_a_clone),
		cmocka_unit_test(sim_record__a_resumed_checkpoint_replays_the_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
