/*
 * sim_field.c: the table of config fields (sim_field.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/sim_field.h"

static const char *const arrivals_words[] = { "constant", "poisson", "bursty", NULL };
static const char *const dist_words[] = { "const", "exp", NULL };
static const char *const slot_words[] = { "random", "round-robin", NULL };
static const char *const backoff_words[] = { "none", "exp", "exp-jitter", NULL };
static const char *const handoff_words[] = { "fifo", "herd", NULL };
static const char *const wal_order_words[] = { "flush-release", "release-flush", NULL };
static const char *const run_queues_words[] = { "shared", "per-core", NULL };

/* The enums the table names are int-sized; it reads them as int. */
_Static_assert(sizeof(enum sim_slot) == sizeof(int) && sizeof(enum sim_arrivals) == sizeof(int) &&
               sizeof(enum sim_dist) == sizeof(int) && sizeof(enum sim_backoff) == sizeof(int) &&
               sizeof(enum sim_strategy) == sizeof(int) && sizeof(enum sim_handoff) == sizeof(int) &&
               sizeof(enum sim_wal_order) == sizeof(int) &&
               sizeof(enum sim_run_queues) == sizeof(int), "the field table reads enums as int");

#define AT(m) offsetof(struct sim_config, m)
/* json, option, member, range, live, then for --help: the value's word,
 * the note after the default (NULL: no default shown) and the text */
#define INT(j, o, m, lo, hi, l, a, n, h) \
	{ j, o, SIM_FIELD_INT, AT(m), lo, hi, NULL, l, a, h, n, NULL, 0, false }
#define DBL(j, o, m, lo, hi, l, a, n, h) \
	{ j, o, SIM_FIELD_DOUBLE, AT(m), lo, hi, NULL, l, a, h, n, NULL, 0, false }
/* ... and with what 0 means (z), and for a double where values above 0
 * start (least) */
#define INTZ(j, o, m, lo, hi, z, l, a, n, h) \
	{ j, o, SIM_FIELD_INT, AT(m), lo, hi, NULL, l, a, h, n, z, 0, false }
#define DBLZ(j, o, m, lo, hi, z, least, l, a, n, h) \
	{ j, o, SIM_FIELD_DOUBLE, AT(m), lo, hi, NULL, l, a, h, n, z, least, false }
/* ... and a timeout an attempt keeps from its start (per_attempt) */
#define TMO(j, o, m, z, a, n, h) \
	{ j, o, SIM_FIELD_DOUBLE, AT(m), 0, 1e9, NULL, true, a, h, n, z, 0.001, true }
#define BOOL(j, o, m, l, a, n, h) \
	{ j, o, SIM_FIELD_BOOL, AT(m), 0, 1, NULL, l, a, h, n, NULL, 0, false }
#define ENUM(j, o, m, w, l, a, n, h) \
	{ j, o, SIM_FIELD_ENUM, AT(m), 0, 0, w, l, a, h, n, NULL, 0, false }
#define KIND(j, o, k, m, l, a, n, h)      { j, o, k, AT(m), 0, 0, NULL, l, a, h, n, NULL, 0, false }

static const struct sim_field fields[] = {
	KIND("scenario", "scenario", SIM_FIELD_SCENARIO, scenario, true, NULL, NULL, NULL),
	KIND("strategy", "strategy", SIM_FIELD_STRATEGY, strategy, true, NULL, NULL, NULL),
	INT("rows", "rows", rows, 1, 65536, true,
	    "N", "",
	    "counter slots for sharded, fee rows for ledger; N > 1 alone\n"
	    "picks sharded"),
	ENUM("slot", "slot", slot, slot_words, true,
	    "HOW", "",
	    "random|round-robin"),
	DBLZ("rps", "rps", rps, 0, 1e7, "off", SIM_MIN_RATE, true,
	    "R", "",
	    "likes per second"),
	ENUM("arrivals", "arrivals", arrivals, arrivals_words, false,
	    "HOW", "",
	    "constant|poisson|bursty"),
	KIND("schedule", "schedule", SIM_FIELD_SCHEDULE, phases, false, NULL, NULL, NULL),
	/* 0, endless, is for the screens: the command line refuses it */
	DBLZ("seconds", "seconds", seconds, 0.000001, 1e7, "endless", 0, false,
	    "S", "",
	    "arrivals stop at S s, then queues drain"),
	DBL("hold_ms", "hold-ms", hold_ms, 0.001, 1e6, true,
	    "MS", "",
	    "lock hold per update, commit included"),
	ENUM("hold_dist", "hold-dist", hold_dist, dist_words, true,
	    "D", "",
	    "const|exp hold times"),
	DBL("work_ms", "work-ms", work_ms, 0, 1e6, true,
	    "MS", "",
	    "app work inside the transaction"),
	INTZ("pool", "pool", pool, 0, 1000000, "unbounded", true,
	    "P", "",
	    "pooled connections, 0 = unbounded"),
	TMO("pool_timeout_ms", "pool-timeout-ms", pool_timeout_ms, "wait forever",
	    "MS", "",
	    "connection acquire timeout, 0 = forever"),
	DBLZ("client_timeout_ms", "client-timeout-ms", client_timeout_ms, 0, 1e9, "never", 0.001,
	     true,
	    "MS", "",
	    "client gives up (the server runs on), 0 = never"),
	INT("retries", "retries", retries, 0, 100, true,
	    "N", "",
	    "retries after a timeout or error"),
	DBLZ("unrelated_rps", "unrelated-rps", unrelated_rps, 0, 1e7, "off", SIM_MIN_RATE, true,
	    "R", "",
	    "other endpoints' calls/s needing a connection"),
	DBL("unrelated_ms", "unrelated-ms", unrelated_ms, 0.001, 1e6, true,
	    "MS", "",
	    "how long they hold it"),
	DBL("flush_ms", "flush-ms", flush_ms, 0.001, 1e9, true,
	    "MS", "",
	    "flush/consume/drain/rollup interval"),
	KIND("crashes", "crash", SIM_FIELD_CRASHES, crashes, false, NULL, NULL, NULL),
	BOOL("bug_no_fence", "bug", bug_no_fence, true, NULL, NULL, NULL),
	BOOL("bug_get_then_del", "bug", bug_get_then_del, true, NULL, NULL, NULL),
	{ "seed", "seed", SIM_FIELD_U64, AT(seed), 0, 0, NULL, false,
	  "N", "same seed, same output", "", NULL, 0, false },
	DBL("tick_ms", "tick-ms", tick_ms, 1, 1e6, false,
	    "MS", "",
	    "time-series resolution"),
	INTZ("clients", "clients", clients, 0, SIM_MAX_CLIENTS, "open loop", false,
	    "N", "",
	    "closed loop: N callers, each waits, thinks, sends"),
	DBL("think_ms", "think-ms", think_ms, 0, 1e6, true,
	    "MS", "",
	    "a caller's think time between requests"),
	ENUM("think_dist", "think-dist", think_dist, dist_words, true,
	    "D", "",
	    "const|exp think times"),
	DBL("outside_ms", "outside-ms", outside_ms, 0, 1e6, true,
	    "MS", "",
	    "on the connection, outside the lock: round trips"),
	INTZ("cores", "cores", cores, 0, 4096, "no limit", false,
	    "C", "",
	    "CPUs shared by holds and outside work, 0 = no limit"),
	ENUM("run_queues", "run-queues", run_queues, run_queues_words, false,
	    "HOW", "",
	    "with --cores: shared: a CPU job starts on any free core;\n"
	    "per-core: on a core drawn at random, waiting there while\n"
	    "another core idles (a herd's woken: on the least busy)"),
	DBL("cpu_db_ms", "cpu-ms", cpu_db_ms, 0, 1e6, true, NULL, NULL, NULL),
	DBL("cpu_client_ms", "cpu-ms", cpu_client_ms, 0, 1e6, true, NULL, NULL, NULL),
	INT("burst", "burst", burst, 1, 100000, false,
	    "K", "",
	    "bursty arrivals come in clumps of K"),
	TMO("lock_timeout_ms", "lock-timeout-ms", lock_timeout_ms, "never",
	    "MS", "",
	    "server cancels a wait this long for one acquisition; a herd\n"
	    "wake starts it again, 0 = never"),
	BOOL("idempotent", "idempotent", idempotent, true,
	    NULL, NULL,
	    "a retried like is applied once, not twice"),
	ENUM("backoff", "backoff", backoff, backoff_words, true,
	    "HOW", "",
	    "none|exp|exp-jitter pause before a retry"),
	DBL("backoff_ms", "backoff-ms", backoff_ms, 0, 1e7, true,
	    "MS", "",
	    "the first retry's pause, doubling after"),
	DBLZ("retry_budget", "retry-budget", retry_budget, 0, 1, "no budget", 0, true,
	    "F", "",
	    "retries at most F of requests, 0 = no budget"),
	INTZ("counter_pool", "counter-pool", counter_pool, 0, 1000000, "share --pool", false,
	    "P2", "",
	    "bulkhead: the counter's own pool, 0 = share"),
	DBL("rtt_ms", "rtt-ms", rtt_ms, 0, 1e6, true,
	    "MS", "",
	    "one app-database round trip"),
	DBL("redis_op_us", "redis-op-us", redis_op_us, 0.01, 1e6, false,
	    "US", "; lab run 04 --store measures it",
	    "redis: one command on the server, us"),
	INTZ("trips_in_lock", "trips-in-lock", trips_in_lock, 0, 100, "one statement", true,
	    "K", "",
	    "round trips while the lock is held: 0 one statement"),
	DBLZ("read_rps", "read-rps", read_rps, 0, 1e7, "off", SIM_MIN_RATE, true,
	    "R", "",
	    "reads of the count/s, no row lock"),
	DBL("read_ms", "read-ms", read_ms, 0.001, 1e6, true,
	    "MS", "",
	    "a read touching 2 buffers; ms/2 a buffer"),
	DBL("snapshot_at_s", "snapshot-at", snapshot_at_s, 0, 1e7, true,
	    "S", "",
	    "an old snapshot opens at second S"),
	DBLZ("snapshot_for_s", "snapshot-for", snapshot_for_s, 0, 1e7, "no old snapshot", 0, true,
	    "D", "",
	    "and stays open D s: versions pile up, 0 = none"),
	{ "batch", "batch", SIM_FIELD_BATCH, AT(batch), 1, 10000, NULL, false,
	  "B", "ledger: transfers per transaction, one hold each", "", NULL, 0, false },
	DBL("refuse_frac", "refuse-frac", refuse_frac, 0, 0.9999, false,
	    "F", "",
	    "ledger: the fraction refused, insufficient funds"),
	ENUM("handoff", "handoff", handoff, handoff_words, true,
	    "HOW", "",
	    "fifo: the oldest waiter gets the row; herd: a commit wakes\n"
	    "every waiter and one at random wins, as PostgreSQL"),
	DBL("wake_us", "wake-us", wake_us, 0, 1e6, true,
	    "US", "",
	    "herd: CPU per waiter woken, us, on --cores"),
	DBL("wake_lat_us", "wake-lat-us", wake_lat_us, 0, 1e6, true,
	    "US", "",
	    "herd: the time a woken process takes to reach a core, us,\n"
	    "before its wake's CPU: the hand-off's winner and the log's\n"
	    "next leader"),
	DBL("lockmgr_us", "lockmgr-us", lockmgr_us, 0, 1e4, true,
	    "US", "",
	    "herd: the winner's wake starts US later for each other\n"
	    "waiter woken with it (the lock manager's partition lock,\n"
	    "which every woken waiter takes in turn)"),
	INTZ("herd_lanes", "herd-lanes", herd_lanes, 0, 4096, "as the cores free", false,
	    "N", "",
	    "herd on --cores: N of a commit's woken losers run at once,\n"
	    "the others asleep on the lock manager's partition lock (out\n"
	    "of the run queue, so not ahead of the log's next leader); the\n"
	    "winner waits for half of those woken with it to pass,\n"
	    "--wake-us each"),
	DBL("herd_bias", "herd-bias", herd_bias, 0, 20, true,
	    "B", "",
	    "herd: the draw favours the waiters who queued last, the one\n"
	    "r places from the newest with weight 1 + B 2^-r; 0 draws\n"
	    "uniformly (PostgreSQL 15 here: about 2)"),
	DBLZ("cold_after_us", "cold-after-us", cold_after_us, 0, 1e7, "never", 1, false,
	    "US", "",
	    "with --cores: a CPU job that starts on a core idle at least\n"
	    "US us pays --cold-us more work (a halted vCPU woken by its\n"
	    "host, a deep power state); the core idled last goes first"),
	DBL("cold_us", "cold-us", cold_us, 0, 1e5, false,
	    "US", "",
	    "the work a cold core adds at --cold-after-us of idle, us"),
	DBL("cold_per_ms", "cold-per-ms", cold_per_ms, 0, 1e5, false,
	    "US", "",
	    "... and how many us more for each further ms it idled"),
	DBL("contend_us", "contend-us", contend_us, 0, 1e5, true,
	    "US", "",
	    "CPU a request spends once when its row is locked as it\n"
	    "comes (going to sleep on the lock), us, on --cores beside\n"
	    "the holder"),
	DBLZ("wal_flush_ms", "wal-flush-ms", wal_flush_ms, 0, 1e6, "no shared log", 0.001, true,
	    "MS", "",
	    "one shared log flush, one at a time, taking every commit\n"
	    "waiting (group commit); --hold-ms is then the hold before it;\n"
	    "0 = the flush is in --hold-ms"),
	DBL("wal_cpu_ms", "wal-cpu-ms", wal_cpu_ms, 0, 1e6, true,
	    "MS", "",
	    "the CPU part of one flush, its start, on --cores; the rest\n"
	    "is the device's; with --handoff herd each commit the flush\n"
	    "carried pays it too, at its wake"),
	ENUM("wal_order", "wal-order", wal_order, wal_order_words, true,
	    "HOW", "",
	    "flush-release: flush, then release the row, as PostgreSQL;\n"
	    "release-flush: release, then the client waits for the flush,\n"
	    "as InnoDB with the binary log off"),
	TMO("statement_timeout_ms", "statement-timeout-ms", statement_timeout_ms, "never",
	    "MS", "",
	    "server cancels a statement waiting this long in all, 0 = never"),
	DBL("walk_us", "walk-us", walk_us, 0, 1e6, true,
	    "US", "; PostgreSQL ~16",
	    "an update walks the chain an old snapshot keeps: US a heap\n"
	    "page past the first, 0 = it does not"),
};
#define NFIELDS (sizeof fields / sizeof fields[0])

const struct sim_field *sim_fields(size_t *n)
{
	*n = NFIELDS;
	return fields;
}

const struct sim_field *sim_field_find(const char *name)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (!strcmp(fields[i].option, name) || !strcmp(fields[i].json, name))
			return &fields[i];
	return NULL;
}

static const void *at(const struct sim_field *f, const struct sim_config *c)
{
	return (const char *)c + f->off;
}

static int int_at(const struct sim_field *f, const struct sim_config *c)
{
	int v;

	memcpy(&v, at(f, c), sizeof v);
	return v;
}

/* A bound as people write it: "1000000", "0.001", "0.9999", never "1e+06". */
static const char *bound(double v, char *buf, size_t len)
{
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	snprintf(buf, len, "%.6f", v);
	for (size_t n = strlen(buf); n > 0 && buf[n - 1] == '0'; n--)
		buf[n - 1] = '\0';
	return buf;
}

/* "fifo or herd", "a, b or c": the words of an ENUM or the strategies. */
static void word_list(const struct sim_field *f, char *buf, size_t len)
{
	const char *w[SIM_NSTRATEGIES + 8];
	int n = 0;

	if (f->kind == SIM_FIELD_STRATEGY)
		for (; n < SIM_NSTRATEGIES; n++)
			w[n] = sim_strategy_name((enum sim_strategy)n);
	else
		for (; f->words[n] && n < (int)(sizeof w / sizeof w[0]); n++)
			w[n] = f->words[n];
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		                         i == 0 ? "" : i == n - 1 ? " or " : ", ", w[i]);
}

/* The value's unit, from the word --help gives it ("MS": milliseconds);
 * after is what follows the range ("per second"). */
static const char *unit(const struct sim_field *f, const char **after)
{
	static const struct { const char *arg, *unit, *after; } units[] = {
		{ "MS", "milliseconds", "" }, { "US", "microseconds", "" },
		{ "S", "seconds", "" }, { "D", "seconds", "" },
		{ "R", "a rate", " per second" }, { "F", "a fraction", "" },
	};

	*after = "";
	if (f->kind != SIM_FIELD_DOUBLE)
		return "an integer";
	for (size_t i = 0; f->arg && i < sizeof units / sizeof units[0]; i++)
		if (!strcmp(f->arg, units[i].arg)) {
			*after = units[i].after;
			return units[i].unit;
		}
	return "a number";
}

bool sim_field_takes(const struct sim_field *f, double v)
{
	double lo = f->least > f->min ? f->least : f->min;

	return isfinite(v) && ((v == 0 && (f->zero || f->min <= 0)) || (v >= lo && v <= f->max));
}

int sim_field_check(const struct sim_field *f, const struct sim_config *c, char *err,
                    size_t len)
{
	double v, lo = f->least > f->min ? f->least : f->min;
	int nwords = 0;
	char a[32], b[32], words[160];
	const char *after, *u;

	switch (f->kind) {
	case SIM_FIELD_INT:
	case SIM_FIELD_BATCH:
		v = int_at(f, c);
		break;
	case SIM_FIELD_DOUBLE:
		v = *(const double *)at(f, c);
		break;
	case SIM_FIELD_ENUM:
	case SIM_FIELD_STRATEGY:
		if (f->kind == SIM_FIELD_STRATEGY)
			nwords = SIM_NSTRATEGIES;
		else
			while (f->words[nwords])
				nwords++;
		if ((unsigned)int_at(f, c) < (unsigned)nwords)
			return 0;
		word_list(f, words, sizeof words);
		snprintf(err, len, "--%s: expected %s", f->option, words);
		return -1;
	default:
		return 0;
	}
	if (sim_field_takes(f, v))
		return 0;
	u = unit(f, &after);
	bound(lo, a, sizeof a);
	bound(f->max, b, sizeof b);
	if (f->zero && lo > 0)
		snprintf(err, len, "--%s: expected 0 (%s) or %s from %s to %s%s", f->option, f->zero, u,
		         a, b, after);
	else if (f->zero)
		snprintf(err, len, "--%s: expected %s from 0 (%s) to %s%s", f->option, u, f->zero, b,
		         after);
	else
		snprintf(err, len, "--%s: expected %s from %s to %s%s", f->option, u, a, b, after);
	return -1;
}

bool sim_field_equal(const struct sim_field *f, const struct sim_config *a,
                     const struct sim_config *b)
{
	switch (f->kind) {
	case SIM_FIELD_DOUBLE:
		return *(const double *)at(f, a) == *(const double *)at(f, b);
	case SIM_FIELD_BOOL:
		return *(const bool *)at(f, a) == *(const bool *)at(f, b);
	case SIM_FIELD_U64:
		return *(const uint64_t *)at(f, a) == *(const uint64_t *)at(f, b);
	case SIM_FIELD_SCENARIO:
		return !strcmp(a->scenario, b->scenario);
	case SIM_FIELD_SCHEDULE:
		return a->nphases == b->nphases &&
		       !memcmp(a->phases, b->phases, (size_t)a->nphases * sizeof a->phases[0]);
	case SIM_FIELD_CRASHES:
		return a->ncrashes == b->ncrashes &&
		       !memcmp(a->crashes, b->crashes, (size_t)a->ncrashes * sizeof a->crashes[0]);
	default:
		return int_at(f, a) == int_at(f, b);
	}
}

void sim_field_text(const struct sim_field *f, const struct sim_config *c,
                    char *buf, size_t len)
{
	size_t n = 0;
	int v;

	buf[0] = '\0';
	switch (f->kind) {
	case SIM_FIELD_INT:
	case SIM_FIELD_BATCH:
		snprintf(buf, len, "%d", int_at(f, c));
		break;
	case SIM_FIELD_DOUBLE:
		snprintf(buf, len, "%.10g", *(const double *)at(f, c));
		break;
	case SIM_FIELD_BOOL:
		snprintf(buf, len, "%s", *(const bool *)at(f, c) ? "on" : "off");
		break;
	case SIM_FIELD_U64:
		snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)at(f, c));
		break;
	case SIM_FIELD_ENUM:
		v = int_at(f, c);
		for (int i = 0; f->words[i]; i++)
			if (i == v)
				snprintf(buf, len, "%s", f->words[i]);
		break;
	case SIM_FIELD_STRATEGY:
		snprintf(buf, len, "%s", sim_strategy_name(c->strategy));
		break;
	case SIM_FIELD_SCENARIO:
		snprintf(buf, len, "%s", c->scenario);
		break;
	case SIM_FIELD_SCHEDULE:
		for (int i = 0; i < c->nphases && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%g@%g", i ? "," : "",
			                      c->phases[i].rps, (double)c->phases[i].at_us / 1e6);
		break;
	case SIM_FIELD_CRASHES:
		for (int i = 0; i < c->ncrashes && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s@%g", i ? "," : "",
			                      sim_fault_name(c->crashes[i].kind),
			                      (double)c->crashes[i].at_us / 1e6);
		break;
	}
}
