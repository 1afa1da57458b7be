/*
 * sim_field.c: the table of config fields (sim_field.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/sim_field.h"

static const char *const arrivals_words[] = { "constant", "poisson", "bursty", NULL };
static const char *const dist_words[] = { "const", "exp", NULL };
static const char *const slot_words[] = { "random", "round-robin", NULL };
static const char *const backoff_words[] = { "none", "exp", "exp-jitter", NULL };
static const char *const handoff_words[] = { "fifo", "herd", NULL };
static const char *const wal_order_words[] = { "flush-release", NULL };

/* The enums the table names are int-sized; it reads them as int. */
_Static_assert(sizeof(enum sim_slot) == sizeof(int) && sizeof(enum sim_arrivals) == sizeof(int) &&
               sizeof(enum sim_dist) == sizeof(int) && sizeof(enum sim_backoff) == sizeof(int) &&
               sizeof(enum sim_strategy) == sizeof(int) && sizeof(enum sim_handoff) == sizeof(int) &&
               sizeof(enum sim_wal_order) == sizeof(int), "the field table reads enums as int");

#define AT(m) offsetof(struct sim_config, m)
/* json, option, member, range, live */
#define INT(j, o, m, lo, hi, l)  { j, o, SIM_FIELD_INT, AT(m), lo, hi, NULL, l }
#define DBL(j, o, m, lo, hi, l)  { j, o, SIM_FIELD_DOUBLE, AT(m), lo, hi, NULL, l }
#define BOOL(j, o, m, l)         { j, o, SIM_FIELD_BOOL, AT(m), 0, 1, NULL, l }
#define ENUM(j, o, m, w, l)      { j, o, SIM_FIELD_ENUM, AT(m), 0, 0, w, l }
#define KIND(j, o, k, m, l)      { j, o, k, AT(m), 0, 0, NULL, l }

static const struct sim_field fields[] = {
	KIND("scenario", "scenario", SIM_FIELD_SCENARIO, scenario, true),
	KIND("strategy", "strategy", SIM_FIELD_STRATEGY, strategy, true),
	INT("rows", "rows", rows, 1, 65536, true),
	ENUM("slot", "slot", slot, slot_words, true),
	DBL("rps", "rps", rps, 0, 1e7, true),
	ENUM("arrivals", "arrivals", arrivals, arrivals_words, false),
	KIND("schedule", "schedule", SIM_FIELD_SCHEDULE, phases, false),
	DBL("seconds", "seconds", seconds, 0.000001, 1e7, false),
	DBL("hold_ms", "hold-ms", hold_ms, 0.001, 1e6, true),
	ENUM("hold_dist", "hold-dist", hold_dist, dist_words, true),
	DBL("work_ms", "work-ms", work_ms, 0, 1e6, true),
	INT("pool", "pool", pool, 0, 1000000, true),
	DBL("pool_timeout_ms", "pool-timeout-ms", pool_timeout_ms, 0, 1e9, true),
	DBL("client_timeout_ms", "client-timeout-ms", client_timeout_ms, 0, 1e9, true),
	INT("retries", "retries", retries, 0, 100, true),
	DBL("unrelated_rps", "unrelated-rps", unrelated_rps, 0, 1e7, true),
	DBL("unrelated_ms", "unrelated-ms", unrelated_ms, 0.001, 1e6, true),
	DBL("flush_ms", "flush-ms", flush_ms, 0.001, 1e9, true),
	KIND("crashes", "crash", SIM_FIELD_CRASHES, crashes, false),
	BOOL("bug_no_fence", "bug", bug_no_fence, true),
	BOOL("bug_get_then_del", "bug", bug_get_then_del, true),
	{ "seed", "seed", SIM_FIELD_U64, AT(seed), 0, 0, NULL, false },
	DBL("tick_ms", "tick-ms", tick_ms, 1, 1e6, false),
	INT("clients", "clients", clients, 0, SIM_MAX_CLIENTS, false),
	DBL("think_ms", "think-ms", think_ms, 0, 1e6, true),
	ENUM("think_dist", "think-dist", think_dist, dist_words, true),
	DBL("outside_ms", "outside-ms", outside_ms, 0, 1e6, true),
	INT("cores", "cores", cores, 0, 4096, false),
	DBL("cpu_db_ms", "cpu-ms", cpu_db_ms, 0, 1e6, true),
	DBL("cpu_client_ms", "cpu-ms", cpu_client_ms, 0, 1e6, true),
	INT("burst", "burst", burst, 1, 100000, false),
	DBL("lock_timeout_ms", "lock-timeout-ms", lock_timeout_ms, 0, 1e9, true),
	BOOL("idempotent", "idempotent", idempotent, true),
	ENUM("backoff", "backoff", backoff, backoff_words, true),
	DBL("backoff_ms", "backoff-ms", backoff_ms, 0, 1e7, true),
	DBL("retry_budget", "retry-budget", retry_budget, 0, 1, true),
	INT("counter_pool", "counter-pool", counter_pool, 0, 1000000, false),
	DBL("rtt_ms", "rtt-ms", rtt_ms, 0, 1e6, true),
	DBL("redis_op_us", "redis-op-us", redis_op_us, 0.01, 1e6, false),
	INT("trips_in_lock", "trips-in-lock", trips_in_lock, 0, 100, true),
	DBL("read_rps", "read-rps", read_rps, 0, 1e7, true),
	DBL("read_ms", "read-ms", read_ms, 0.001, 1e6, true),
	DBL("snapshot_at_s", "snapshot-at", snapshot_at_s, 0, 1e7, true),
	DBL("snapshot_for_s", "snapshot-for", snapshot_for_s, 0, 1e7, true),
	{ "batch", "batch", SIM_FIELD_BATCH, AT(batch), 1, 10000, NULL, false },
	DBL("refuse_frac", "refuse-frac", refuse_frac, 0, 0.9999, false),
	ENUM("handoff", "handoff", handoff, handoff_words, true),
	DBL("wake_us", "wake-us", wake_us, 0, 1e6, true),
	DBL("wal_flush_ms", "wal-flush-ms", wal_flush_ms, 0, 1e6, true),
	ENUM("wal_order", "wal-order", wal_order, wal_order_words, true),
	DBL("statement_timeout_ms", "statement-timeout-ms", statement_timeout_ms, 0, 1e9, true),
	DBL("walk_us", "walk-us", walk_us, 0, 1e6, true),
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
