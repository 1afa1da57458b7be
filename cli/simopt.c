/*
 * simopt.c: one table of engine options (util/opt rows over a struct
 * sim_config); parsing, range checks and help all come from it. Each
 * option's kind, member and range come from the engine's field table
 * (engine/sim_field.h); this file adds the words of --help and the
 * options with their own syntax (--scenario, --schedule, --crash, ...).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/simopt.h"
#include "engine/sim_field.h"

/* A number in [min, max], the whole word. */
static int number(const char *v, double min, double max, double *out)
{
	char *end;
	double d = strtod(v, &end);
	if (end == v || *end || !isfinite(d) || d < min || d > max)
		return -1;
	*out = d;
	return 0;
}

/* The custom rows: each gets the whole config (its row's off is 0). */

static int scenario(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	(void)ctx, (void)why, (void)len;
	return sim_scenario(v, dest) ? -1 : 0;
}

static int strategy(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	struct sim_config *c = dest;
	(void)ctx, (void)why, (void)len;
	return sim_strategy_parse(v, &c->strategy) ? -1 : 0;
}

/* "DB" or "DB,CLIENT", milliseconds of CPU per request. */
static int cpu(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	struct sim_config *c = dest;
	const char *comma = strchr(v, ',');
	char db[32];
	double d, cl = 0;
	size_t n = comma ? (size_t)(comma - v) : strlen(v);
	(void)ctx, (void)why, (void)len;
	if (n == 0 || n >= sizeof db)
		return -1;
	memcpy(db, v, n);
	db[n] = 0;
	if (number(db, 0, 1e6, &d) || (comma && number(comma + 1, 0, 1e6, &cl)))
		return -1;
	c->cpu_db_ms = d;
	c->cpu_client_ms = cl;
	return 0;
}

static int bug(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	struct sim_config *c = dest;
	(void)ctx, (void)why, (void)len;
	if (!strcmp(v, "no-fence"))
		c->bug_no_fence = true;
	else if (!strcmp(v, "get-then-del"))
		c->bug_get_then_del = true;
	else
		return -1;
	return 0;
}

/* "KIND@SECONDS", repeatable: each adds a fault. */
static int crash(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	struct sim_config *c = dest;
	const char *at = strchr(v, '@');
	char kind[16];
	enum sim_fault f;
	double d;
	size_t n = at ? (size_t)(at - v) : 0;
	(void)ctx;
	if (!at || n == 0 || n >= sizeof kind)
		return -1;
	memcpy(kind, v, n);
	kind[n] = 0;
	if (sim_fault_parse(kind, &f) || number(at + 1, 0, 1e7, &d))
		return -1;
	if (c->ncrashes >= SIM_MAX_CRASHES) {
		snprintf(why, len, "at most %d faults a run", SIM_MAX_CRASHES);
		return -1;
	}
	c->crashes[c->ncrashes].kind = f;
	c->crashes[c->ncrashes].at_us = llround(d * 1e6);
	c->ncrashes++;
	return 0;
}

/* "R@S,R@S,...": a step at S = 0 sets the starting rate. */
static int schedule(void *dest, const char *v, void *ctx, char *why, size_t len)
{
	struct sim_config *c = dest, t = *c;
	const char *q = v;
	(void)ctx;
	t.nphases = 0;
	while (*q) {
		char item[64], *at;
		size_t n = strcspn(q, ",");
		double r, s;
		if (n == 0 || n >= sizeof item || t.nphases >= SIM_MAX_PHASES) {
			snprintf(why, len, "up to %d RATE@SECONDS steps, comma-separated", SIM_MAX_PHASES);
			return -1;
		}
		memcpy(item, q, n);
		item[n] = 0;
		at = strchr(item, '@');
		if (!at)
			return -1;
		*at = 0;
		if (number(item, 0, 1e7, &r) || number(at + 1, 0, 1e7, &s))
			return -1;
		if (r > 0 && r < SIM_MIN_RATE) {
			snprintf(why, len, "rates of 0 or from 0.001 to 10000000 per second");
			return -1;
		}
		if (t.nphases && llround(s * 1e6) <= t.phases[t.nphases - 1].at_us) {
			snprintf(why, len, "steps in increasing time order");
			return -1;
		}
		t.phases[t.nphases].rps = r;
		t.phases[t.nphases].at_us = llround(s * 1e6);
		t.nphases++;
		q += n;
		if (*q == ',')
			q++;
	}
	if (!t.nphases)
		return -1;
	if (t.phases[0].at_us == 0)
		t.rps = t.phases[0].rps;
	*c = t;
	return 0;
}

/* A row whose kind, member, range and words come from the engine's
 * field table (engine/sim_field.c), by the row's name: built() fills them
 * in. OPT_USAGE is never an engine row's own kind. */
#define TABLE .kind = OPT_USAGE
#define CUSTOM(f) .kind = OPT_CUSTOM, .fn = (f)

static const struct opt spec[] = {
	{ "scenario", 0, "NAME", CUSTOM(scenario), .early = true,
	  .accepts = "a scenario name (hotrow sim --list-scenarios)",
	  .help = "start from a named scenario (--list-scenarios)" },
	{ "strategy", 0, "NAME", CUSTOM(strategy),
	  .accepts = "naive, sharded, coalesce, queue, redis, append or ledger",
	  .help = "naive|sharded|coalesce|queue|redis|append|ledger" },
	{ "rows", 0, "N", TABLE,
	  .help = "counter slots for sharded, fee rows for ledger; N > 1 alone\n"
	          "picks sharded (1)" },
	{ "slot", 0, "HOW", TABLE, .help = "random|round-robin (random)" },
	{ "rps", 0, "R", TABLE, .help = "likes per second (2000)" },
	{ "arrivals", 0, "HOW", TABLE, .help = "constant|poisson|bursty (constant)" },
	{ "burst", 0, "K", TABLE, .help = "bursty arrivals come in clumps of K (8)" },
	{ "schedule", 0, "R@S,...", CUSTOM(schedule),
	  .accepts = "RATE@SECONDS steps such as 200@0,2000@10",
	  .help = "rate R from second S, e.g. 200@0,2000@10" },
	{ "seconds", 0, "S", TABLE,
	  .help = "arrivals stop at S s, then queues drain (10)" },
	{ "hold-ms", 0, "MS", TABLE, .help = "lock hold per update, commit included (2)" },
	{ "hold-dist", 0, "D", TABLE, .help = "const|exp hold times (const)" },
	{ "work-ms", 0, "MS", TABLE, .help = "app work inside the transaction (0)" },
	{ "pool", 0, "P", TABLE, .help = "pooled connections, 0 = unbounded (20)" },
	{ "pool-timeout-ms", 0, "MS", TABLE,
	  .help = "connection acquire timeout, 0 = forever (1000)" },
	{ "client-timeout-ms", 0, "MS", TABLE,
	  .help = "client gives up (the server runs on), 0 = never (0)" },
	{ "retries", 0, "N", TABLE, .help = "retries after a timeout or error (0)" },
	{ "lock-timeout-ms", 0, "MS", TABLE,
	  .help = "server cancels a wait this long for one acquisition; a herd\n"
	          "wake starts it again, 0 = never (0)" },
	{ "statement-timeout-ms", 0, "MS", TABLE,
	  .help = "server cancels a statement waiting this long in all, 0 = never (0)" },
	{ "idempotent", 0, NULL, TABLE,
	  .help = "a retried like is applied once, not twice" },
	{ "backoff", 0, "HOW", TABLE,
	  .help = "none|exp|exp-jitter pause before a retry (none)" },
	{ "backoff-ms", 0, "MS", TABLE,
	  .help = "the first retry's pause, doubling after (100)" },
	{ "retry-budget", 0, "F", TABLE,
	  .help = "retries at most F of requests, 0 = no budget (0)" },
	{ "counter-pool", 0, "P2", TABLE,
	  .help = "bulkhead: the counter's own pool, 0 = share (0)" },
	{ "batch", 0, "B", TABLE,
	  .help = "ledger: transfers per transaction, one hold each (1)" },
	{ "refuse-frac", 0, "F", TABLE,
	  .help = "ledger: the fraction refused, insufficient funds (0)" },
	{ "unrelated-rps", 0, "R", TABLE,
	  .help = "other endpoints' calls/s needing a connection (0)" },
	{ "unrelated-ms", 0, "MS", TABLE, .help = "how long they hold it (5)" },
	{ "flush-ms", 0, "MS", TABLE,
	  .help = "flush/consume/drain/rollup interval (1000)" },
	{ "crash", 0, "KIND@S", CUSTOM(crash),
	  .accepts = "KIND@SECONDS with KIND app, consumer or redis",
	  .help = "inject app|consumer|redis at second S (repeatable)" },
	{ "bug", 0, "NAME", CUSTOM(bug), .accepts = "no-fence or get-then-del",
	  .help = "no-fence|get-then-del: plant a bug (repeatable)" },
	{ "clients", 0, "N", TABLE,
	  .help = "closed loop: N callers, each waits, thinks, sends (0)" },
	{ "think-ms", 0, "MS", TABLE, .help = "a caller's think time between requests (0)" },
	{ "think-dist", 0, "D", TABLE, .help = "const|exp think times (const)" },
	{ "outside-ms", 0, "MS", TABLE,
	  .help = "on the connection, outside the lock: round trips (0)" },
	{ "cores", 0, "C", TABLE, .help = "CPUs shared by holds and outside work, 0 = no limit (0)" },
	{ "cpu-ms", 0, "DB[,CLIENT]", CUSTOM(cpu),
	  .accepts = "DB[,CLIENT] milliseconds such as 0.2,0.1",
	  .help = "CPU per request: DB in the hold, CLIENT outside (0,0)" },
	{ "redis-op-us", 0, "US", TABLE,
	  .help = "redis: one command on the server, us (4; lab run 04 --store measures it)" },
	{ "rtt-ms", 0, "MS", TABLE, .help = "one app-database round trip (0)" },
	{ "trips-in-lock", 0, "K", TABLE,
	  .help = "round trips while the lock is held: 0 one statement (0)" },
	{ "read-rps", 0, "R", TABLE, .help = "reads of the count/s, no row lock (0)" },
	{ "read-ms", 0, "MS", TABLE,
	  .help = "a read touching 2 buffers; ms/2 a buffer (0.1)" },
	{ "snapshot-at", 0, "S", TABLE, .help = "an old snapshot opens at second S (0)" },
	{ "snapshot-for", 0, "D", TABLE,
	  .help = "and stays open D s: versions pile up, 0 = none (0)" },
	{ "handoff", 0, "HOW", TABLE,
	  .help = "fifo: the oldest waiter gets the row; herd: a commit wakes\n"
	          "every waiter and one at random wins, as PostgreSQL (fifo)" },
	{ "wake-us", 0, "US", TABLE,
	  .help = "herd: CPU per waiter woken, us, on --cores (20)" },
	{ "wal-flush-ms", 0, "MS", TABLE,
	  .help = "one shared log flush, one at a time, taking every commit\n"
	          "waiting (group commit); --hold-ms is then the hold before it;\n"
	          "0 = the flush is in --hold-ms (0)" },
	{ "wal-order", 0, "HOW", TABLE,
	  .help = "flush, then release the row, as PostgreSQL (flush-release)" },
	{ "walk-us", 0, "US", TABLE,
	  .help = "an update walks the chain an old snapshot keeps: US a heap\n"
	          "page past the first, 0 = it does not (0; PostgreSQL ~16)" },
	{ "seed", 0, "N", TABLE, .help = "same seed, same output (1)" },
	{ "tick-ms", 0, "MS", TABLE, .help = "time-series resolution (100)" },
};
#define NROWS (sizeof spec / sizeof spec[0])
_Static_assert(NROWS <= SIMOPT_MAX_ROWS, "struct simopt_given holds a bool a row");

/* The rows as parsed: spec with the table's rows filled in. */
static struct opt rows[NROWS];
#define MAX_WORDS 8
static struct opt_choice words[NROWS][MAX_WORDS + 1];

/* A table row's kind, member and range from the engine's field table. */
static void fill(struct opt *o, struct opt_choice *w)
{
	const struct sim_field *f = sim_field_find(o->name);
	int n = 0;

	assert(f && !strcmp(f->option, o->name));
	o->off = f->off;
	o->min = f->min;
	o->max = f->max;
	switch (f->kind) {
	case SIM_FIELD_INT:
	case SIM_FIELD_BATCH:
		o->kind = OPT_INT;
		break;
	case SIM_FIELD_DOUBLE:
		o->kind = OPT_DOUBLE;
		break;
	case SIM_FIELD_BOOL:
		o->kind = OPT_FLAG;
		break;
	case SIM_FIELD_U64:
		o->kind = OPT_U64;
		break;
	case SIM_FIELD_ENUM:
		for (; f->words[n]; n++) {
			assert(n < MAX_WORDS);
			w[n] = (struct opt_choice){ f->words[n], n };
		}
		w[n] = (struct opt_choice){ NULL, 0 };
		o->kind = OPT_CHOICE;
		o->choices = w;
		break;
	default:
		assert(!"a table row of a kind with no option of its own");
	}
}

static const struct opt *built(void)
{
	static bool done;

	if (!done) {
		for (size_t i = 0; i < NROWS; i++) {
			rows[i] = spec[i];
			if (spec[i].kind == OPT_USAGE)
				fill(&rows[i], words[i]);
		}
		done = true;
	}
	return rows;
}

struct opt_table simopt_table(struct sim_config *c, struct simopt_given *g, const char *heading)
{
	memset(g, 0, sizeof *g);
	return (struct opt_table){ .heading = heading, .rows = built(), .n = NROWS, .base = c,
	                           .seen = g->row };
}

bool simopt_knows(const char *name)
{
	built();
	for (size_t i = 0; i < NROWS; i++)
		if (!strcmp(rows[i].name, name) && !rows[i].early)
			return true;
	return false;
}

bool simopt_was_given(const struct simopt_given *g, const char *name)
{
	built();
	for (size_t i = 0; i < NROWS; i++)
		if (!strcmp(rows[i].name, name))
			return g->row[i];
	return false;
}

int simopt_set(struct sim_config *c, struct simopt_given *g, const char *name,
               const char *value, char *err, size_t errlen)
{
	built();
	for (size_t i = 0; i < NROWS; i++) {
		if (strcmp(rows[i].name, name) || rows[i].early)
			continue;
		const struct opt_table t = { .rows = &rows[i], .n = 1, .base = c };
		if (opt_set(&t, name, value, err, errlen) < 0)
			return -1;
		g->row[i] = true;
		return 0;
	}
	snprintf(err, errlen, "--sweep: '%s' is not an engine option "
	         "(try rows, rps, hold-ms, pool, flush-ms, ...)", name);
	return -1;
}

int simopt_finish(struct sim_config *c, const struct simopt_given *g, char *err, size_t errlen)
{
	const char *rate = simopt_was_given(g, "rps") ? "rps"
	                 : simopt_was_given(g, "schedule") ? "schedule" : NULL;

	/* A closed loop's rate comes out of the loop: asking for both is a
	 * contradiction, not a choice to make silently. */
	if (rate && simopt_was_given(g, "clients")) {
		snprintf(err, errlen, "--clients: a closed loop sets its own rate; "
		         "drop --%s (or --clients for an open loop)", rate);
		return -1;
	}
	if (c->rows > 1 && !sim_strategy_info(c->strategy)->uses_rows) {
		if (c->strategy != SIM_NAIVE || simopt_was_given(g, "strategy")) {
			snprintf(err, errlen, "--rows: %d rows need --strategy sharded or ledger "
			         "(%s has one counter row)", c->rows, sim_strategy_name(c->strategy));
			return -1;
		}
		c->strategy = SIM_SHARDED;
	}
	if (sim_config_check(c, err, errlen) < 0)
		return -1;
	sim_config_round(c);
	return 0;
}
