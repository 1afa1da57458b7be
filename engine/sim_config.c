/*
 * sim_config.c: defaults, validation, names, and the named scenarios.
 *
 * The scenarios come from the reference texts: a like counter taking
 * 2,000 likes/s for twenty minutes with ~2 ms lock holds (viral-post), and
 * a view counter taking 100,000 views/s with ~1 ms holds behind a pool of
 * 100 connections (viral-video); each has a variant per fix. "seed-table"
 * is the first text's small experiment, meant for --sweep rows=1,4,16.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/sim.h"
#include "engine/sim_field.h"

static const struct sim_strategy_info strategies[SIM_NSTRATEGIES] = {
	[SIM_NAIVE] = { "naive", false, false, "row", false, false,
	                "every like updates the one counter row" },
	[SIM_SHARDED] = { "sharded", true, true, "slot", false, false,
	                  "N slot rows, one picked per like; a read sums them" },
	[SIM_COALESCE] = { "coalesce", false, false, "row", true, true,
	                   "the app buffers likes, one UPDATE +k every flush", false, true },
	[SIM_QUEUE] = { "queue", false, false, "row", true, true,
	                "likes go to a log; a consumer applies batches behind a fence", false, true },
	[SIM_REDIS] = { "redis", false, false, "row", true, true,
	                "INCR in memory, drained into the row every flush" },
	[SIM_APPEND] = { "append", false, false, "row", false, true,
	                 "an inserted row per like, rolled up every flush" },
	[SIM_LEDGER] = { "ledger", true, false, "fee row", false, false,
	                 "money: transfers that credit a fee account of N sub-accounts", true, false },
};

const struct sim_strategy_info *sim_strategy_info(enum sim_strategy s)
{
	return (unsigned)s < SIM_NSTRATEGIES ? &strategies[s] : NULL;
}
static const char *const fault_names[SIM_NFAULTS] = { "app", "consumer", "redis" };

const char *sim_strategy_name(enum sim_strategy s)
{
	return (unsigned)s < SIM_NSTRATEGIES ? strategies[s].name : "?";
}

const char *sim_handoff_name(enum sim_handoff h)
{
	return h == SIM_HANDOFF_HERD ? "herd" : h == SIM_HANDOFF_FIFO ? "fifo" : "?";
}

const char *sim_wal_order_name(enum sim_wal_order o)
{
	return o == SIM_WAL_FLUSH_RELEASE ? "flush-release" :
	       o == SIM_WAL_RELEASE_FLUSH ? "release-flush" : "?";
}

const char *sim_run_queues_name(enum sim_run_queues r)
{
	return r == SIM_RUNQ_SHARED ? "shared" : r == SIM_RUNQ_PER_CORE ? "per-core" : "?";
}

/* The index of name in names[0..n-1], or -1. */
static int name_index(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

int sim_strategy_parse(const char *name, enum sim_strategy *out)
{
	for (int i = 0; i < SIM_NSTRATEGIES; i++)
		if (!strcmp(name, strategies[i].name)) {
			*out = (enum sim_strategy)i;
			return 0;
		}
	return -1;
}

const char *sim_fault_name(enum sim_fault f)
{
	return (unsigned)f < SIM_NFAULTS ? fault_names[f] : "?";
}

int sim_fault_parse(const char *name, enum sim_fault *out)
{
	int i = name_index(fault_names, SIM_NFAULTS, name);
	if (i < 0)
		return -1;
	*out = (enum sim_fault)i;
	return 0;
}

void sim_config_default(struct sim_config *c)
{
	memset(c, 0, sizeof *c);
	c->strategy = SIM_NAIVE;
	c->rows = 1;
	c->slot = SIM_SLOT_RANDOM;
	c->rps = 2000;
	c->arrivals = SIM_ARRIVE_CONSTANT;
	c->seconds = 10;
	c->unrelated_rps = 0;
	c->unrelated_ms = 5;
	c->hold_ms = 2;
	c->hold_dist = SIM_DIST_CONST;
	c->work_ms = 0;
	c->pool = 20;
	c->pool_timeout_ms = 1000;
	c->client_timeout_ms = 0;
	c->retries = 0;
	c->flush_ms = 1000;
	c->redis_op_us = 4;        /* SIM_REDIS_OP_US */
	c->seed = 1;
	c->tick_ms = 100;
	c->burst = 8;
	c->backoff = SIM_BACKOFF_NONE;
	c->backoff_ms = 100;
	c->read_ms = 0.1;
	c->batch = 1;
	c->handoff = SIM_HANDOFF_FIFO;
	c->wake_us = 20;           /* PostgreSQL 15 here: 19-24 us a waiter a commit */
	c->wal_flush_ms = 0;
	c->wal_cpu_ms = 0;
	c->wal_order = SIM_WAL_FLUSH_RELEASE;
	c->run_queues = SIM_RUNQ_SHARED;
}

/* The fields a running simulation is built on are the table's rows that
 * are not live (sim_field.c): sim_set keeps them, and a change of one
 * needs sim_new. One list for both questions. */
void sim_config_keep(struct sim_config *c, const struct sim_config *old)
{
	size_t n;
	const struct sim_field *f = sim_fields(&n);

	for (size_t i = 0; i < n; i++) {
		if (f[i].live)
			continue;
		switch (f[i].kind) {
		case SIM_FIELD_SCHEDULE:
			c->nphases = old->nphases;
			memcpy(c->phases, old->phases, sizeof c->phases);
			break;
		case SIM_FIELD_CRASHES:
			c->ncrashes = old->ncrashes;
			memcpy(c->crashes, old->crashes, sizeof c->crashes);
			break;
		case SIM_FIELD_SCENARIO:
			memcpy(c->scenario, old->scenario, sizeof c->scenario);
			break;
		case SIM_FIELD_DOUBLE:
			*(double *)((char *)c + f[i].off) = *(const double *)((const char *)old + f[i].off);
			break;
		case SIM_FIELD_U64:
			*(uint64_t *)((char *)c + f[i].off) = *(const uint64_t *)((const char *)old + f[i].off);
			break;
		case SIM_FIELD_BOOL:
			*(bool *)((char *)c + f[i].off) = *(const bool *)((const char *)old + f[i].off);
			break;
		default:
			memcpy((char *)c + f[i].off, (const char *)old + f[i].off, sizeof(int));
			break;
		}
	}
}

bool sim_config_restarts(const struct sim_config *old, const struct sim_config *c)
{
	size_t n;
	const struct sim_field *f = sim_fields(&n);

	for (size_t i = 0; i < n; i++)
		if (!f[i].live && !sim_field_equal(&f[i], old, c))
			return true;
	return false;
}

/* ---- scenarios ----
 *
 * A scenario is a family's load (the rates, holds and pool the reference
 * texts describe) and a write path. Every field is in the tables: the
 * families first, then one row per scenario naming its family. */

struct family {
	double rps, seconds, hold_ms;
	enum sim_arrivals arrivals;
	enum sim_slot slot;
	int pool;
	double pool_timeout_ms, client_timeout_ms;
	int retries;
	double unrelated_rps;
	int nphases;
	struct sim_phase phases[3];
};

enum { F_POST, F_VIDEO, F_SEED, F_STORM };

static const struct family families[] = {
	/* 2,000 likes/s for 20 min; likes slow to seconds before failing */
	[F_POST] = { 2000, 1200, 2, SIM_ARRIVE_CONSTANT, SIM_SLOT_RANDOM, 20, 5000, 0, 0, 100,
	             0, { { 0, 0 } } },
	[F_VIDEO] = { 100000, 10, 1, SIM_ARRIVE_CONSTANT, SIM_SLOT_RANDOM, 100, 1000, 0, 0, 200,
	              0, { { 0, 0 } } },
	[F_SEED] = { 2000, 1, 2, SIM_ARRIVE_CONSTANT, SIM_SLOT_ROUND_ROBIN, 0, 1000, 0, 0, 0,
	             0, { { 0, 0 } } },
	/* 350/s on a 500/s row, a 5 s spike to 1,000/s; clients give up
	 * after 1 s and retry three times at once */
	[F_STORM] = { 350, 60, 2, SIM_ARRIVE_POISSON, SIM_SLOT_RANDOM, 500, 5000, 1000, 3, 100,
	              2, { { 5000000, 1000 }, { 10000000, 350 } } },
};

struct scenario {
	const char *name;
	const char *blurb;
	int family;
	enum sim_strategy strategy;
	int rows;                 /* 0: 1 */
	double flush_ms;          /* 0: the default */
};

static const struct scenario scenarios[] = {
	{ "viral-post", "2,000 likes/s on one row for 20 min, 2 ms holds: "
	  "the row caps at 500/s and the pool of 20 fills in ~13 ms", F_POST, SIM_NAIVE, 0, 0 },
	{ "viral-post-sharded", "the viral post on 16 counter slots: "
	  "ceiling 8,000/s, exact and transactional", F_POST, SIM_SHARDED, 16, 0 },
	{ "viral-post-coalesce", "the viral post, buffered in the app and "
	  "flushed as one +k per second (a crash loses the buffer)", F_POST, SIM_COALESCE, 0, 1000 },
	{ "viral-post-queue", "the viral post through a log; a consumer applies "
	  "one batch per second behind an offset fence", F_POST, SIM_QUEUE, 0, 1000 },
	{ "viral-post-redis", "the viral post as INCR in memory, drained with "
	  "GETDEL into the row every second", F_POST, SIM_REDIS, 0, 1000 },
	{ "viral-post-append", "the viral post as one inserted row per like, "
	  "rolled up into the counter every 10 s", F_POST, SIM_APPEND, 0, 10000 },
	{ "viral-video", "100,000 views/s on one row, 1 ms holds, pool of 100: "
	  "the ceiling is 1,000/s and the pool is gone in ~1 ms", F_VIDEO, SIM_NAIVE, 0, 0 },
	{ "viral-video-sharded", "the viral video on 128 slots (16 would give "
	  "only 16,000/s): the rows take 128,000/s, the pool ~65,000/s",
	  F_VIDEO, SIM_SHARDED, 128, 0 },
	{ "viral-video-coalesce", "the viral video, buffered in the app, one "
	  "+k per second", F_VIDEO, SIM_COALESCE, 0, 1000 },
	{ "viral-video-queue", "the viral video through a log, one fenced "
	  "batch per second", F_VIDEO, SIM_QUEUE, 0, 1000 },
	{ "viral-video-redis", "the viral video as INCR, drained every second",
	  F_VIDEO, SIM_REDIS, 0, 1000 },
	{ "viral-video-append", "the viral video as inserts: no hot row, but "
	  "100,000 inserts/s keep all 100 connections busy", F_VIDEO, SIM_APPEND, 0, 1000 },
	{ "seed-table", "the first text's experiment: 2,000/s for 1 s, 2 ms holds, "
	  "round-robin slots, no pool; try --sweep rows=1,4,16", F_SEED, SIM_SHARDED, 1, 0 },
	{ "retry-storm", "350 likes/s on a 500/s row, a 5 s spike to 1,000/s: "
	  "timeouts and blind retries keep goodput near zero after it ends "
	  "(try --lock-timeout-ms 300, --retry-budget 0.1, --counter-pool 400)",
	  F_STORM, SIM_NAIVE, 0, 0 },
};
#define NSCENARIOS (sizeof scenarios / sizeof scenarios[0])

const char *const *sim_scenario_names(void)
{
	static const char *names[NSCENARIOS + 1];

	if (!names[0])
		for (size_t i = 0; i < NSCENARIOS; i++)
			names[i] = scenarios[i].name;
	return names;
}

static const struct scenario *find(const char *name)
{
	for (size_t i = 0; i < NSCENARIOS; i++)
		if (!strcmp(name, scenarios[i].name))
			return &scenarios[i];
	return NULL;
}

const char *sim_scenario_blurb(const char *name)
{
	const struct scenario *sc = find(name);

	return sc ? sc->blurb : NULL;
}

int sim_scenario(const char *name, struct sim_config *c)
{
	const struct scenario *sc = find(name);
	const struct family *f;

	if (!sc)
		return -1;
	f = &families[sc->family];
	sim_config_default(c);
	c->rps = f->rps;
	c->seconds = f->seconds;
	c->hold_ms = f->hold_ms;
	c->arrivals = f->arrivals;
	c->slot = f->slot;
	c->pool = f->pool;
	c->pool_timeout_ms = f->pool_timeout_ms;
	c->client_timeout_ms = f->client_timeout_ms;
	c->retries = f->retries;
	c->unrelated_rps = f->unrelated_rps;
	c->nphases = f->nphases;
	memcpy(c->phases, f->phases, sizeof f->phases);
	c->strategy = sc->strategy;
	c->rows = sc->rows ? sc->rows : 1;
	if (sc->flush_ms > 0)
		c->flush_ms = sc->flush_ms;
	snprintf(c->scenario, sizeof c->scenario, "%s", name);
	return 0;
}

/* ---- validation ---- */

static void whole_us(double *ms)
{
	*ms = floor(*ms * 1000.0 + 0.5) / 1000.0;
}

void sim_config_round(struct sim_config *c)
{
	double *const ms[] = {
		&c->hold_ms, &c->work_ms, &c->unrelated_ms, &c->flush_ms,
		&c->pool_timeout_ms, &c->client_timeout_ms, &c->lock_timeout_ms,
		&c->backoff_ms, &c->tick_ms, &c->think_ms, &c->outside_ms,
		&c->cpu_db_ms, &c->cpu_client_ms, &c->rtt_ms, &c->read_ms,
		&c->statement_timeout_ms, &c->wal_flush_ms, &c->wal_cpu_ms,
	};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
		whole_us(ms[i]);
	c->wake_us = floor(c->wake_us + 0.5);
	c->wake_lat_us = floor(c->wake_lat_us + 0.5);
	c->lockmgr_us = floor(c->lockmgr_us * 10 + 0.5) / 10;
	c->herd_bias = floor(c->herd_bias * 100 + 0.5) / 100;
	c->contend_us = floor(c->contend_us + 0.5);
	c->cold_after_us = floor(c->cold_after_us + 0.5);
	c->cold_us = floor(c->cold_us * 10 + 0.5) / 10;
	c->cold_per_ms = floor(c->cold_per_ms * 10 + 0.5) / 10;
}

#define CHECK(cond, ...) do { if (!(cond)) { snprintf(err, errlen, __VA_ARGS__); return -1; } } while (0)

/* Each field's own range comes from the field table (sim_field_check);
 * here are the rules a row cannot hold: a schedule's and a crash list's
 * syntax, and the ties between fields. */
int sim_config_check(const struct sim_config *c, char *err, size_t errlen)
{
	size_t n;
	const struct sim_field *f = sim_fields(&n);

	for (size_t i = 0; i < n; i++)
		if (sim_field_check(&f[i], c, err, errlen) < 0)
			return -1;
	CHECK(c->nphases >= 0 && c->nphases <= SIM_MAX_PHASES,
	      "--schedule: expected at most %d steps", SIM_MAX_PHASES);
	/* a step's rate is an --rps */
	const struct sim_field *rps = sim_field_find("rps");
	for (int i = 0; i < c->nphases; i++) {
		CHECK(c->phases[i].at_us >= 0 && sim_field_takes(rps, c->phases[i].rps),
		      "--schedule: expected RATE@SECONDS steps with rates 0 or from %g to %.0f",
		      rps->least, rps->max);
		CHECK(i == 0 || c->phases[i].at_us > c->phases[i - 1].at_us,
		      "--schedule: expected steps in increasing time order");
	}
	CHECK(c->ncrashes >= 0 && c->ncrashes <= SIM_MAX_CRASHES,
	      "--crash: expected at most %d faults", SIM_MAX_CRASHES);
	for (int i = 0; i < c->ncrashes; i++)
		CHECK((unsigned)c->crashes[i].kind < SIM_NFAULTS && c->crashes[i].at_us >= 0,
		      "--crash: expected KIND@SECONDS with KIND app, consumer or redis");
	CHECK(c->cpu_db_ms <= c->hold_ms,
	      "--cpu-ms: the server's CPU (%g ms) is part of the hold: give at most --hold-ms (%g)",
	      c->cpu_db_ms, c->hold_ms);
	CHECK(c->cpu_client_ms <= c->outside_ms,
	      "--cpu-ms: the client's CPU (%g ms) is part of the time outside: give at most "
	      "--outside-ms (%g)", c->cpu_client_ms, c->outside_ms);
	CHECK(c->clients == 0 || c->think_ms > 0 || c->outside_ms > 0 ||
	      !sim_strategy_info(c->strategy)->instant,
	      "--clients: a caller of the %s path would never wait; give --think-ms or --outside-ms",
	      sim_strategy_name(c->strategy));
	CHECK(c->wal_cpu_ms <= c->wal_flush_ms,
	      "--wal-cpu-ms: the flush's CPU (%g ms) is part of the flush: give at most "
	      "--wal-flush-ms (%g)", c->wal_cpu_ms, c->wal_flush_ms);
	return 0;
}
