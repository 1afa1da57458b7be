/*
 * test_predict.c: the drivers' prediction uses inputs only.
 *
 * The probe splits a request into its lock hold and the rest (on a real
 * SQLite file, with pauses of known length inside and outside the lock);
 * the prediction refuses parts that no probe measured and matches the
 * closed-loop arithmetic for known parts; a prediction made after its run
 * began is refused when compared.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "labs/driver/predict.h"
#include "labs/driver/probe.h"
#include "tests/harness/labtest.h"
#include "util/clock.h"

#define INSIDE_MS 1.0          /* the pause inside the lock */
#define OUTSIDE_MS 0.5         /* the pause outside it */

static void pause_ms(double ms)
{
	util_sleep_ns((int64_t)(ms * 1e6));
}

/* BEGIN IMMEDIATE (the lock), a pause, COMMIT; then a pause outside. */
static int op(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	int rc = kit_db_begin(th->db);
	if (rc == 0) {
		pause_ms(INSIDE_MS);
		rc = kit_db_commit(th->db);
	}
	pause_ms(OUTSIDE_MS);
	return rc;
}

static int nothing(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	(void)th;
	return 0;
}

/* Parts that came from a probe (of nothing), then set to known values. */
static void known_parts(struct drv_parts *a, double hold_ms, double outside_ms)
{
	struct drv_probe p;
	drv_probe_default(&p);
	p.warmup_seconds = 0;
	p.min_seconds = 0.01;
	p.min_requests = 10;
	assert_int_equal(drv_probe_run(&p, nothing, NULL, a), 0);
	a->hold_ms = a->hold_median_ms = hold_ms;
	a->outside_ms = a->outside_median_ms = outside_ms;
	a->request_ms = hold_ms + outside_ms;
	a->cpu_client_ms = a->cpu_db_ms = 0;
}

static void drv_probe_run__splits_hold_and_outside(void **state)
{
	(void)state;
	char path[] = "/tmp/hotrow-test-probe-XXXXXX", url[64];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	snprintf(url, sizeof url, "sqlite:%s", path);
	struct drv_span hold;
	drv_span_init(&hold, KIT_DB_TX_BEGIN, NULL, KIT_DB_TX_COMMIT);
	struct drv_probe p;
	drv_probe_default(&p);
	p.url = url;
	p.hold = &hold;
	p.warmup_seconds = 0.05;
	p.min_seconds = 0.2;
	p.min_requests = 100;
	struct drv_parts a;

	int rc = drv_probe_run(&p, op, NULL, &a);

	drv_span_destroy(&hold);
	unlink(path);
	assert_int_equal(rc, 0);
	assert_true(a.requests >= 100 && a.seconds >= 0.2);
	assert_true(a.stamp != 0);
	/* A pause lasts at least what was asked; the rest is noise, which only
	 * adds (a median comes from a log-bucket histogram, within 1 % of its
	 * value, hence the 0.98). Inside and outside must not be mixed up. */
	assert_true(a.hold_median_ms >= 0.98 * INSIDE_MS && a.hold_median_ms < INSIDE_MS + 50);
	assert_true(a.outside_median_ms >= 0.98 * OUTSIDE_MS && a.outside_median_ms < OUTSIDE_MS + 50);
	assert_true(a.hold_median_ms > a.outside_median_ms);
	assert_true(a.in_process);
	assert_int_equal(a.calls >= a.requests, 1);
}

/* A thread_init of the caller's own: th->local stays the caller's. */
static int mark_local(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	th->local = (void *)&mark_local;
	return 0;
}

static int op_checks_local(void *arg, struct kit_load_thread *th)
{
	if (th->local != (void *)&mark_local)
		return KIT_DB_ERR;
	return op(arg, th);
}

static void drv_run_load__times_every_threads_holds(void **state)
{
	(void)state;
	char path[] = "/tmp/hotrow-test-run-XXXXXX", url[64];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	snprintf(url, sizeof url, "sqlite:%s", path);
	static struct drv_span hold;
	drv_span_init(&hold, KIT_DB_TX_BEGIN, NULL, KIT_DB_TX_COMMIT);
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = url;
	c.threads = 4;
	c.seconds = 0.3;
	c.progress = false;
	c.thread_init = mark_local;
	struct drv_run m;

	int rc = drv_run_load(&c, &hold, op_checks_local, NULL, &m);

	long long spans = drv_span_count(&hold);
	drv_span_destroy(&hold);
	unlink(path);
	if (rc != 0)
		print_message("drv_run_load: %s\n", m.r.error);
	assert_int_equal(rc, 0);
	assert_true(m.r.ok > 0);
	assert_int_equal(m.r.failed, 0);
	assert_int_equal(spans, m.r.ok);
	assert_true(m.hold_ms >= INSIDE_MS);
	assert_true(m.started_ns > 0);
}

static void drv_predict__refuses_parts_no_probe_measured(void **state)
{
	(void)state;
	struct drv_parts forged = { .hold_ms = 2, .outside_ms = 1, .request_ms = 3 };
	struct drv_inputs in;
	drv_inputs_init(&in, SIM_NAIVE, 4, &forged);
	struct drv_prediction p;

	assert_int_equal(drv_predict(&in, &p, "test"), -1);
	assert_true(p.throughput_per_s == 0 && p.made_ns == 0);
}

static void drv_predict__closed_loop_from_the_parts(void **state)
{
	(void)state;
	struct drv_parts a;
	known_parts(&a, 2.0, 0.5);
	struct drv_inputs in;
	struct drv_prediction one, many;

	drv_inputs_init(&in, SIM_NAIVE, 1, &a);
	in.cores = 0;
	assert_int_equal(drv_predict(&in, &one, "test"), 0);
	in.threads = 16;
	assert_int_equal(drv_predict(&in, &many, "test"), 0);

	/* One client: one like per 2.5 ms. Sixteen: the row's 1 / 2 ms. */
	assert_float_equal(one.throughput_per_s, 400, 400 * 0.02);
	assert_float_equal(many.throughput_per_s, 500, 500 * 0.02);
	assert_float_equal(many.ceiling_per_s, 500, 0.01);
	assert_float_equal(many.mva_per_s, 500, 500 * 0.02);
}

/* PostgreSQL's parts: the flush leaves the hold for the shared log, and
 * one hot row then gets one flush per commit: 16 clients take 1 / (0.5 +
 * 1.5) ms at most, and the herd's wakes (here without cores) add 30 us a
 * hand-off, after the 20 us its winner takes to reach a core and 2.5 us
 * for each of the 14 others woken with it (35 us). Every request waits
 * once, which costs the server 40 us of CPU more (no cores here, so no
 * time). sim_args names all of it, and no --clients. */
static void drv_predict__herd_and_shared_log_from_the_server_parts(void **state)
{
	(void)state;
	struct drv_parts a;
	known_parts(&a, 2.0, 0.5);
	struct drv_inputs in;
	struct drv_prediction p;
	char args[512];

	drv_inputs_init(&in, SIM_NAIVE, 16, &a);
	in.cores = 0;
	in.handoff = SIM_HANDOFF_HERD;
	in.wake_us = 30;
	in.wake_lat_us = 20;
	in.lockmgr_us = 2.5;
	in.herd_bias = 1.3;
	in.wal_flush_ms = 1.5;
	assert_int_equal(drv_predict(&in, &p, "test"), 0);
	assert_float_equal(p.config.hold_ms, 0.5, 1e-9);
	assert_float_equal(p.wal_per_commit, 1.0, 1e-9);
	assert_float_equal(p.throughput_per_s, 1000 / (2.0 + 0.085), 1000 / 2.085 * 0.005);
	assert_true(p.mva_per_s < 0);
	double cpu = p.server_cpu_ms;
	in.contend_us = 40;
	assert_int_equal(drv_predict(&in, &p, "test"), 0);
	assert_float_equal(p.throughput_per_s, 1000 / (2.0 + 0.085), 1000 / 2.085 * 0.005);
	assert_float_equal(p.server_cpu_ms - cpu, 0.040, 0.0005);
	drv_sim_args(&p, args, sizeof args);
	assert_non_null(strstr(args, "--hold-ms 0.500 "));
	assert_non_null(strstr(args, "--handoff herd --wake-us 30 --wake-lat-us 20 "
	                              "--lockmgr-us 2.5 --herd-bias 1.30 --contend-us 40 "
	                              "--wal-flush-ms 1.500 "
	                              "--wal-cpu-ms 0.000"));
	assert_null(strstr(args, "--clients"));
}

/* 4 clients on 16 rows, 2 cores, a shared log whose flush takes 1.5 ms. */
static void shared_log_inputs(struct drv_inputs *in, const struct drv_parts *a)
{
	drv_inputs_init(in, SIM_SHARDED, 4, a);
	in->rows = 16;
	in->cores = 2;
	in->handoff = SIM_HANDOFF_HERD;
	in->wal_flush_ms = 1.5;
	in->seconds = 1;
}

/* The probe's CPU (0.3 ms here + 1.2 in the server) fills the hold before
 * the flush (0.5 ms) and the time outside (0.5): the 0.5 ms left over was
 * spent in the flush, the one part of a request the engine did not count
 * as CPU. More than the flush is left: the flush is all CPU. */
static void drv_predict__cpu_the_hold_and_outside_cannot_hold_is_the_flushs(void **state)
{
	(void)state;
	struct drv_parts a;
	known_parts(&a, 2.0, 0.5);
	a.cpu_client_ms = 0.3;
	a.cpu_db_ms = 1.2;
	struct drv_inputs in;
	struct drv_prediction p;
	char args[512];

	shared_log_inputs(&in, &a);
	assert_int_equal(drv_predict(&in, &p, "test"), 0);
	assert_float_equal(p.config.cpu_db_ms, 0.5, 1e-9);
	assert_float_equal(p.config.cpu_client_ms, 0.5, 1e-9);
	assert_float_equal(p.config.wal_cpu_ms, 0.5, 1e-9);
	drv_sim_args(&p, args, sizeof args);
	assert_non_null(strstr(args, "--wal-flush-ms 1.500 --wal-cpu-ms 0.500"));
	a.cpu_db_ms = 3.0;
	shared_log_inputs(&in, &a);
	assert_int_equal(drv_predict(&in, &p, "test"), 0);
	assert_float_equal(p.config.wal_cpu_ms, 1.5, 1e-9);
	/* on PostgreSQL's log the leader's wake from its sync (100 us) is a
	 * wake of its own in the engine: the flush keeps the rest */
	a.cpu_db_ms = 1.2;
	shared_log_inputs(&in, &a);
	in.wake_us = 100;
	assert_int_equal(drv_predict(&in, &p, "test"), 0);
	assert_float_equal(p.config.wal_cpu_ms, 0.4, 1e-9);
	/* without a shared log there is no flush to put it in */
	in.wal_flush_ms = 0;
	assert_int_equal(drv_predict(&in, &p, "test"), 0);
	assert_float_equal(p.config.wal_cpu_ms, 0, 1e-9);
}

/* The numbers reach the engine only with cores, and sim_args names them. */
static void drv_predict__cold_cores_in_the_config_and_sim_args(void **state)
{
	struct drv_parts a;
	struct drv_inputs in;
	struct drv_prediction p;
	char args[640];

	(void)state;
	known_parts(&a, 0.2, 0.1);
	a.cpu_client_ms = 0.05;
	a.cpu_db_ms = 0.1;
	drv_inputs_init(&in, SIM_NAIVE, 1, &a);
	in.cores = 2;
	in.think_ms = 1;
	in.seconds = 2;
	in.cold_after_us = 500;
	in.cold_us = 20;
	in.cold_per_ms = 10;
	assert_int_equal(drv_predict(&in, &p, "test"), 0);
	assert_float_equal(p.config.cold_after_us, 500, 1e-9);
	assert_float_equal(p.config.cold_us, 20, 1e-9);
	assert_float_equal(p.config.cold_per_ms, 10, 1e-9);
	drv_sim_args(&p, args, sizeof args);
	assert_non_null(strstr(args, " --cold-after-us 500 --cold-us 20.0 --cold-per-ms 10.0"));
	double cold = p.throughput_per_s;
	in.cold_after_us = 0;
	assert_int_equal(drv_predict(&in, &p, "test"), 0);
	assert_true(cold < p.throughput_per_s);
	drv_sim_args(&p, args, sizeof args);
	assert_null(strstr(args, "--cold"));
	in.cold_after_us = 500;
	in.cores = 0;                             /* no cores, no cold ones */
	assert_int_equal(drv_predict(&in, &p, "test"), 0);
	assert_float_equal(p.config.cold_after_us, 0, 1e-9);
}

static void drv_compare__refuses_a_prediction_made_after_its_run_began(void **state)
{
	(void)state;
	struct drv_parts a;
	known_parts(&a, 1.0, 0.5);
	struct drv_inputs in;
	drv_inputs_init(&in, SIM_NAIVE, 2, &a);
	struct drv_run m;
	memset(&m, 0, sizeof m);
	m.started_ns = kit_load_now_ns();        /* the run began ... */
	m.r.threads = 2;
	m.r.throughput_per_s = 1000;
	struct drv_prediction p;
	assert_int_equal(drv_predict(&in, &p, "test"), 0);   /* ... before this */

	assert_int_equal(drv_compare(&p, &m, "likes"), -1);
	m.started_ns = p.made_ns + 1;
	assert_int_equal(drv_compare(&p, &m, "likes"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drv_probe_run__splits_hold_and_outside),
		cmocka_unit_test(drv_run_load__times_every_threads_holds),
		cmocka_unit_test(drv_predict__refuses_parts_no_probe_measured),
		cmocka_unit_test(drv_predict__closed_loop_from_the_parts),
		cmocka_unit_test(drv_predict__herd_and_shared_log_from_the_server_parts),
		cmocka_unit_test(drv_predict__cpu_the_hold_and_outside_cannot_hold_is_the_flushs),
		cmocka_unit_test(drv_predict__cold_cores_in_the_config_and_sim_args),
		cmocka_unit_test(drv_compare__refuses_a_prediction_made_after_its_run_began),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
