/*
 * simopt.c: one table of engine options; parsing, range checks and help
 * all come from it.
 */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/simopt.h"

enum kind { K_INT, K_DOUBLE, K_U64, K_STRATEGY, K_SLOT, K_ARRIVALS, K_DIST,
            K_CRASH, K_BUG, K_SCHEDULE, K_SCENARIO, K_CPU, K_BACKOFF, K_FLAG };

struct opt {
	const char *name;          /* without the dashes */
	enum kind kind;
	size_t off;                /* field in struct sim_config */
	double min, max;           /* for numbers */
	const char *arg, *help;
};

#define F(field) offsetof(struct sim_config, field)

static const struct opt opts[] = {
	{ "scenario", K_SCENARIO, 0, 0, 0, "NAME", "start from a named scenario (--list-scenarios)" },
	{ "strategy", K_STRATEGY, F(strategy), 0, 0, "NAME",
	  "naive|sharded|coalesce|queue|redis|append|ledger" },
	{ "rows", K_INT, F(rows), 1, 65536, "N", "counter slots for sharded, fee rows for ledger (N > 1 alone picks sharded)" },
	{ "slot", K_SLOT, F(slot), 0, 0, "HOW", "random|round-robin (random)" },
	{ "rps", K_DOUBLE, F(rps), 0, 1e7, "R", "likes per second (2000)" },
	{ "arrivals", K_ARRIVALS, F(arrivals), 0, 0, "HOW",
	  "constant|poisson|bursty (constant)" },
	{ "burst", K_INT, F(burst), 1, 100000, "K", "bursty arrivals come in clumps of K (8)" },
	{ "schedule", K_SCHEDULE, 0, 0, 0, "R@S,...", "rate R from second S, e.g. 200@0,2000@10" },
	{ "seconds", K_DOUBLE, F(seconds), 0.000001, 1e7, "S",
	  "arrivals stop at S s, then queues drain (10)" },
	{ "hold-ms", K_DOUBLE, F(hold_ms), 0.001, 1e6, "MS", "lock hold per update, commit included (2)" },
	{ "hold-dist", K_DIST, F(hold_dist), 0, 0, "D", "const|exp hold times (const)" },
	{ "work-ms", K_DOUBLE, F(work_ms), 0, 1e6, "MS", "app work inside the transaction (0)" },
	{ "pool", K_INT, F(pool), 0, 1000000, "P", "pooled connections, 0 = unbounded (20)" },
	{ "pool-timeout-ms", K_DOUBLE, F(pool_timeout_ms), 0, 1e9, "MS",
	  "connection acquire timeout, 0 = forever (1000)" },
	{ "client-timeout-ms", K_DOUBLE, F(client_timeout_ms), 0, 1e9, "MS",
	  "client gives up (the server runs on), 0 = never" },
	{ "retries", K_INT, F(retries), 0, 100, "N", "retries after a timeout or error (0)" },
	{ "lock-timeout-ms", K_DOUBLE, F(lock_timeout_ms), 0, 1e9, "MS",
	  "server cancels lock waits this long, 0 = never (0)" },
	{ "idempotent", K_FLAG, F(idempotent), 0, 0, "",
	  "a retried like is applied once, not twice" },
	{ "backoff", K_BACKOFF, F(backoff), 0, 0, "HOW", "none|exp|exp-jitter pause before a retry (none)" },
	{ "backoff-ms", K_DOUBLE, F(backoff_ms), 0, 1e7, "MS", "the first retry's pause, doubling after (100)" },
	{ "retry-budget", K_DOUBLE, F(retry_budget), 0, 1, "F",
	  "retries at most F of requests, 0 = no budget (0)" },
	{ "counter-pool", K_INT, F(counter_pool), 0, 1000000, "P2",
	  "bulkhead: the counter's own pool, 0 = share (0)" },
	{ "batch", K_INT, F(batch), 1, 10000, "B",
	  "ledger: transfers per transaction, one hold each (1)" },
	{ "refuse-frac", K_DOUBLE, F(refuse_frac), 0, 0.9999, "F",
	  "ledger: the fraction refused, insufficient funds (0)" },
	{ "unrelated-rps", K_DOUBLE, F(unrelated_rps), 0, 1e7, "R",
	  "other endpoints' calls/s needing a connection (0)" },
	{ "unrelated-ms", K_DOUBLE, F(unrelated_ms), 0.001, 1e6, "MS", "how long they hold it (5)" },
	{ "flush-ms", K_DOUBLE, F(flush_ms), 0.001, 1e9, "MS",
	  "flush/consume/drain/rollup interval (1000)" },
	{ "crash", K_CRASH, 0, 0, 0, "KIND@S", "inject app|consumer|redis at second S (repeatable)" },
	{ "bug", K_BUG, 0, 0, 0, "NAME", "no-fence|get-then-del: plant a bug (repeatable)" },
	{ "clients", K_INT, F(clients), 0, SIM_MAX_CLIENTS, "N",
	  "closed loop: N callers, each waits, thinks, sends (0)" },
	{ "think-ms", K_DOUBLE, F(think_ms), 0, 1e6, "MS", "a caller's think time between requests (0)" },
	{ "think-dist", K_DIST, F(think_dist), 0, 0, "D", "const|exp think times (const)" },
	{ "outside-ms", K_DOUBLE, F(outside_ms), 0, 1e6, "MS",
	  "on the connection, outside the lock: round trips (0)" },
	{ "cores", K_INT, F(cores), 0, 4096, "C", "CPUs shared by holds and outside work, 0 = no limit" },
	{ "cpu-ms", K_CPU, 0, 0, 0, "DB[,CLIENT]",
	  "CPU per request: DB in the hold, CLIENT outside (0,0)" },
	{ "redis-op-us", K_DOUBLE, F(redis_op_us), 0.01, 1e6, "US",
	  "redis: one command on the server, us (4; lab run 04 --store measures it)" },
	{ "rtt-ms", K_DOUBLE, F(rtt_ms), 0, 1e6, "MS", "one app-database round trip (0)" },
	{ "trips-in-lock", K_INT, F(trips_in_lock), 0, 100, "K",
	  "round trips while the lock is held: 0 one statement (0)" },
	{ "read-rps", K_DOUBLE, F(read_rps), 0, 1e7, "R", "reads of the count/s, no row lock (0)" },
	{ "read-ms", K_DOUBLE, F(read_ms), 0.001, 1e6, "MS",
	  "a read touching 2 buffers; ms/2 a buffer (0.1)" },
	{ "snapshot-at", K_DOUBLE, F(snapshot_at_s), 0, 1e7, "S", "an old snapshot opens at second S (0)" },
	{ "snapshot-for", K_DOUBLE, F(snapshot_for_s), 0, 1e7, "D",
	  "and stays open D s: versions pile up, 0 = none (0)" },
	{ "seed", K_U64, F(seed), 0, 0, "N", "same seed, same output (1)" },
	{ "tick-ms", K_DOUBLE, F(tick_ms), 1, 1e6, "MS", "time-series resolution (100)" },
};
#define NOPTS (sizeof opts / sizeof opts[0])

static const struct opt *find(const char *name, size_t len)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len))
			return &opts[i];
	return NULL;
}

static int bad(char *err, size_t errlen, const struct opt *o, const char *what, const char *v)
{
	snprintf(err, errlen, "--%s: expected %s, got '%s'", o->name, what, v);
	return -1;
}

/* Parse a number in [min, max]; the whole word must be the number. */
static int number(const char *v, double min, double max, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(d) || d < min || d > max)
		return -1;
	*out = d;
	return 0;
}

static int range_text(char *buf, size_t len, const struct opt *o)
{
	if (o->kind == K_INT)
		return snprintf(buf, len, "an integer from %.0f to %.0f", o->min, o->max);
	return snprintf(buf, len, "a number from %g to %g", o->min, o->max);
}

static int apply(struct sim_config *c, const struct opt *o, const char *v,
                 char *err, size_t errlen)
{
	char *p = (char *)c + o->off;
	char what[96];
	double d;

	switch (o->kind) {
	case K_INT:
		range_text(what, sizeof what, o);
		if (number(v, o->min, o->max, &d) || d != floor(d))
			return bad(err, errlen, o, what, v);
		*(int *)(void *)p = (int)d;
		return 0;
	case K_DOUBLE:
		range_text(what, sizeof what, o);
		if (number(v, o->min, o->max, &d))
			return bad(err, errlen, o, what, v);
		*(double *)(void *)p = d;
		return 0;
	case K_U64: {
		char *end;
		unsigned long long u;
		errno = 0;
		u = strtoull(v, &end, 10);
		if (end == v || *end || errno || *v == '-')
			return bad(err, errlen, o, "a non-negative integer", v);
		*(uint64_t *)(void *)p = u;
		return 0;
	}
	case K_STRATEGY:
		if (sim_strategy_parse(v, &c->strategy))
			return bad(err, errlen, o, "naive, sharded, coalesce, queue, redis, append or ledger", v);
		return 0;
	case K_SLOT:
		if (!strcmp(v, "random"))
			c->slot = SIM_SLOT_RANDOM;
		else if (!strcmp(v, "round-robin"))
			c->slot = SIM_SLOT_ROUND_ROBIN;
		else
			return bad(err, errlen, o, "random or round-robin", v);
		return 0;
	case K_ARRIVALS:
		if (!strcmp(v, "constant"))
			c->arrivals = SIM_ARRIVE_CONSTANT;
		else if (!strcmp(v, "poisson"))
			c->arrivals = SIM_ARRIVE_POISSON;
		else if (!strcmp(v, "bursty"))
			c->arrivals = SIM_ARRIVE_BURSTY;
		else
			return bad(err, errlen, o, "constant, poisson or bursty", v);
		return 0;
	case K_DIST:
		if (!strcmp(v, "const"))
			*(enum sim_dist *)(void *)p = SIM_DIST_CONST;
		else if (!strcmp(v, "exp"))
			*(enum sim_dist *)(void *)p = SIM_DIST_EXP;
		else
			return bad(err, errlen, o, "const or exp", v);
		return 0;
	case K_BACKOFF:
		if (!strcmp(v, "none"))
			c->backoff = SIM_BACKOFF_NONE;
		else if (!strcmp(v, "exp"))
			c->backoff = SIM_BACKOFF_EXP;
		else if (!strcmp(v, "exp-jitter"))
			c->backoff = SIM_BACKOFF_EXP_JITTER;
		else
			return bad(err, errlen, o, "none, exp or exp-jitter", v);
		return 0;
	case K_FLAG:
		if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "true"))
			*(bool *)(void *)p = true;
		else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false"))
			*(bool *)(void *)p = false;
		else
			return bad(err, errlen, o, "on or off", v);
		return 0;
	case K_CPU: {
		/* "DB" or "DB,CLIENT", milliseconds of CPU per request */
		const char *comma = strchr(v, ',');
		char db[32];
		double cl = 0;
		size_t n = comma ? (size_t)(comma - v) : strlen(v);
		if (n == 0 || n >= sizeof db)
			return bad(err, errlen, o, "DB[,CLIENT] milliseconds such as 0.2,0.1", v);
		memcpy(db, v, n);
		db[n] = 0;
		if (number(db, 0, 1e6, &d) || (comma && number(comma + 1, 0, 1e6, &cl)))
			return bad(err, errlen, o, "DB[,CLIENT] milliseconds such as 0.2,0.1", v);
		c->cpu_db_ms = d;
		c->cpu_client_ms = cl;
		return 0;
	}
	case K_BUG:
		if (!strcmp(v, "no-fence"))
			c->bug_no_fence = true;
		else if (!strcmp(v, "get-then-del"))
			c->bug_get_then_del = true;
		else
			return bad(err, errlen, o, "no-fence or get-then-del", v);
		return 0;
	case K_CRASH: {
		const char *at = strchr(v, '@');
		char kind[16];
		enum sim_fault f;
		size_t n = at ? (size_t)(at - v) : 0;
		if (!at || n == 0 || n >= sizeof kind)
			return bad(err, errlen, o, "KIND@SECONDS with KIND app, consumer or redis", v);
		memcpy(kind, v, n);
		kind[n] = 0;
		if (sim_fault_parse(kind, &f) || number(at + 1, 0, 1e7, &d))
			return bad(err, errlen, o, "KIND@SECONDS with KIND app, consumer or redis", v);
		if (c->ncrashes >= SIM_MAX_CRASHES) {
			snprintf(err, errlen, "--crash: at most %d faults per run", SIM_MAX_CRASHES);
			return -1;
		}
		c->crashes[c->ncrashes].kind = f;
		c->crashes[c->ncrashes].at_us = llround(d * 1e6);
		c->ncrashes++;
		return 0;
	}
	case K_SCHEDULE: {
		/* "R@S,R@S,...": a step at S = 0 sets the starting rate. */
		struct sim_config t = *c;
		const char *q = v;
		t.nphases = 0;
		while (*q) {
			char item[64], *at;
			size_t n = strcspn(q, ",");
			double r, s;
			if (n == 0 || n >= sizeof item || t.nphases >= SIM_MAX_PHASES)
				return bad(err, errlen, o, "up to 8 RATE@SECONDS steps, comma-separated", v);
			memcpy(item, q, n);
			item[n] = 0;
			at = strchr(item, '@');
			if (!at)
				return bad(err, errlen, o, "RATE@SECONDS steps such as 200@0,2000@10", v);
			*at = 0;
			if (number(item, 0, 1e7, &r) || number(at + 1, 0, 1e7, &s))
				return bad(err, errlen, o, "RATE@SECONDS steps such as 200@0,2000@10", v);
			if (r > 0 && r < SIM_MIN_RATE)
				return bad(err, errlen, o, "rates of 0 or from 0.001 to 10000000 per second", v);
			if (t.nphases && llround(s * 1e6) <= t.phases[t.nphases - 1].at_us)
				return bad(err, errlen, o, "steps in increasing time order", v);
			t.phases[t.nphases].rps = r;
			t.phases[t.nphases].at_us = llround(s * 1e6);
			t.nphases++;
			q += n;
			if (*q == ',')
				q++;
		}
		if (!t.nphases)
			return bad(err, errlen, o, "RATE@SECONDS steps such as 200@0,2000@10", v);
		if (t.phases[0].at_us == 0)
			t.rps = t.phases[0].rps;
		*c = t;
		return 0;
	}
	case K_SCENARIO:
		if (sim_scenario(v, c))
			return bad(err, errlen, o, "a scenario name (hotrow sim --list-scenarios)", v);
		return 0;
	}
	return -1;
}

int simopt_set(struct sim_config *c, const char *name, const char *value,
               char *err, size_t errlen)
{
	const struct opt *o = find(name, strlen(name));

	if (!o || o->kind == K_SCENARIO) {
		snprintf(err, errlen, "--sweep: '%s' is not an engine option "
		         "(try rows, rps, hold-ms, pool, flush-ms, ...)", name);
		return -1;
	}
	return apply(c, o, value, err, errlen);
}

/* Split "--name=value" or "--name value"; NULL name if not an option. */
static const struct opt *word(int argc, char **argv, int *i, const char **value,
                              char *err, size_t errlen, int *rc)
{
	const char *a = argv[*i], *eq;
	const struct opt *o;

	*rc = 0;
	if (strncmp(a, "--", 2))
		return NULL;
	a += 2;
	eq = strchr(a, '=');
	o = find(a, eq ? (size_t)(eq - a) : strlen(a));
	if (!o)
		return NULL;
	if (eq) {
		*value = eq + 1;
	} else if (o->kind == K_FLAG) {
		*value = "on";              /* a switch: --idempotent */
	} else if (*i + 1 < argc) {
		*value = argv[++*i];
	} else {
		snprintf(err, errlen, "--%s: expected a value (%s)", o->name, o->arg);
		*rc = -1;
		return NULL;
	}
	*rc = 1;
	return o;
}

int simopt_scenario(int argc, char **argv, struct sim_config *c, char *err, size_t errlen)
{
	const char *rate = NULL;
	bool clients = false;

	for (int i = 1; i < argc; i++) {
		const char *v;
		int rc;
		const struct opt *o = word(argc, argv, &i, &v, err, errlen, &rc);
		if (rc < 0)
			return -1;
		if (o && o->kind == K_SCENARIO && apply(c, o, v, err, errlen))
			return -1;
		if (o && (!strcmp(o->name, "rps") || !strcmp(o->name, "schedule")))
			rate = o->name;
		if (o && !strcmp(o->name, "clients"))
			clients = true;
	}
	/* A closed loop's rate comes out of the loop: asking for both is a
	 * contradiction, not a choice to make silently. */
	if (rate && clients) {
		snprintf(err, errlen, "--clients: a closed loop sets its own rate; "
		         "drop --%s (or --clients for an open loop)", rate);
		return -1;
	}
	return 0;
}

int simopt_parse(int argc, char **argv, int *i, struct sim_config *c, char *err, size_t errlen)
{
	const char *v;
	int rc, start = *i;
	const struct opt *o = word(argc, argv, i, &v, err, errlen, &rc);

	if (rc <= 0) {
		*i = start;
		return rc;
	}
	if (o->kind == K_SCENARIO)
		return 1;               /* simopt_scenario loaded it */
	return apply(c, o, v, err, errlen) ? -1 : 1;
}

bool simopt_given(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--", 2) && !strncmp(argv[i] + 2, name, n) &&
		    (argv[i][2 + n] == '\0' || argv[i][2 + n] == '='))
			return true;
	return false;
}

int simopt_finish(struct sim_config *c, bool strategy_given, char *err, size_t errlen)
{
	if (c->rows > 1 && c->strategy != SIM_SHARDED && c->strategy != SIM_LEDGER) {
		if (c->strategy != SIM_NAIVE || strategy_given) {
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

void simopt_help(FILE *out)
{
	for (size_t i = 0; i < NOPTS; i++) {
		char left[40];
		snprintf(left, sizeof left, "--%s%s%s", opts[i].name, *opts[i].arg ? " " : "",
		         opts[i].arg);
		fprintf(out, "  %-24s %s\n", left, opts[i].help);
	}
}
