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

/* A row whose kind, member, range, words and help come from the engine's
 * field table (engine/sim_field.c), by the row's name: built() fills them
 * in. OPT_USAGE is never an engine row's own kind. */
#define TABLE 0, NULL, .kind = OPT_USAGE
#define CUSTOM(f) .kind = OPT_CUSTOM, .fn = (f)

static const struct opt spec[] = {
	{ "scenario", 0, "NAME", CUSTOM(scenario), .early = true,
	  .accepts = "a scenario name (hotrow sim --list-scenarios)",
	  .help = "start from a named scenario (--list-scenarios)" },
	{ "strategy", 0, "NAME", CUSTOM(strategy),
	  .accepts = "naive, sharded, coalesce, queue, redis, append or ledger",
	  .help = "naive|sharded|coalesce|queue|redis|append|ledger" },
	{ "rows", TABLE },
	{ "slot", TABLE },
	{ "rps", TABLE },
	{ "arrivals", TABLE },
	{ "burst", TABLE },
	{ "schedule", 0, "R@S,...", CUSTOM(schedule),
	  .accepts = "RATE@SECONDS steps such as 200@0,2000@10",
	  .help = "rate R from second S, e.g. 200@0,2000@10" },
	{ "seconds", TABLE },
	{ "hold-ms", TABLE },
	{ "hold-dist", TABLE },
	{ "work-ms", TABLE },
	{ "pool", TABLE },
	{ "pool-timeout-ms", TABLE },
	{ "client-timeout-ms", TABLE },
	{ "retries", TABLE },
	{ "lock-timeout-ms", TABLE },
	{ "statement-timeout-ms", TABLE },
	{ "idempotent", TABLE },
	{ "backoff", TABLE },
	{ "backoff-ms", TABLE },
	{ "retry-budget", TABLE },
	{ "counter-pool", TABLE },
	{ "batch", TABLE },
	{ "refuse-frac", TABLE },
	{ "unrelated-rps", TABLE },
	{ "unrelated-ms", TABLE },
	{ "flush-ms", TABLE },
	{ "crash", 0, "KIND@S", CUSTOM(crash),
	  .accepts = "KIND@SECONDS with KIND app, consumer or redis",
	  .help = "inject app|consumer|redis at second S (repeatable)" },
	{ "bug", 0, "NAME", CUSTOM(bug), .accepts = "no-fence or get-then-del",
	  .help = "no-fence|get-then-del: plant a bug (repeatable)" },
	{ "clients", TABLE },
	{ "think-ms", TABLE },
	{ "think-dist", TABLE },
	{ "outside-ms", TABLE },
	{ "cores", TABLE },
	{ "run-queues", TABLE },
	{ "cpu-ms", 0, "DB[,CLIENT]", CUSTOM(cpu),
	  .accepts = "DB[,CLIENT] milliseconds such as 0.2,0.1",
	  .help = "CPU per request: DB in the hold, CLIENT outside (0,0)" },
	{ "redis-op-us", TABLE },
	{ "rtt-ms", TABLE },
	{ "trips-in-lock", TABLE },
	{ "read-rps", TABLE },
	{ "read-ms", TABLE },
	{ "snapshot-at", TABLE },
	{ "snapshot-for", TABLE },
	{ "handoff", TABLE },
	{ "wake-us", TABLE },
	{ "wake-lat-us", TABLE },
	{ "lockmgr-us", TABLE },
	{ "herd-lanes", TABLE },
	{ "herd-bias", TABLE },
	{ "cold-after-us", TABLE },
	{ "cold-us", TABLE },
	{ "cold-per-ms", TABLE },
	{ "contend-us", TABLE },
	{ "wal-flush-ms", TABLE },
	{ "wal-cpu-ms", TABLE },
	{ "wal-order", TABLE },
	{ "walk-us", TABLE },
	{ "seed", TABLE },
	{ "tick-ms", TABLE },
};
#define NROWS (sizeof spec / sizeof spec[0])
_Static_assert(NROWS <= SIMOPT_MAX_ROWS, "struct simopt_given holds a bool a row");

/* The rows as parsed: spec with the table's rows filled in. */
static struct opt rows[NROWS];
#define MAX_WORDS 8
static struct opt_choice words[NROWS][MAX_WORDS + 1];
static char helps[NROWS][320];

/* A table row's kind, member, range and help from the engine's field
 * table; the help ends with the default, "(2000)", from
 * sim_config_default. */
static void fill(struct opt *o, struct opt_choice *w, char *help, size_t len)
{
	const struct sim_field *f = sim_field_find(o->name);
	struct sim_config d;
	char v[64];
	int n = 0;

	assert(f && !strcmp(f->option, o->name) && f->help);
	sim_config_default(&d);
	sim_field_text(f, &d, v, sizeof v);
	if (f->note)
		snprintf(help, len, "%s (%s%s)", f->help, v, f->note);
	else
		snprintf(help, len, "%s", f->help);
	o->help = help;
	o->arg = f->arg;
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
				fill(&rows[i], words[i], helps[i], sizeof helps[i]);
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
