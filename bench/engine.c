/*
 * engine.c: `hotrow bench engine`, the hotrow side of the side-by-side benchmarks.
 *
 * `hotrow bench engine` runs fixed engine workloads in this process and
 * reports how much CPU each took (getrusage, user + system, best of a few
 * runs) next to the numbers the run produced, so that bench/run can set
 * them beside the same models written in SimPy and in plain Python:
 *
 *   mm1         one row, Poisson arrivals, exponential holds, rho = 0.8,
 *               2 million requests by default: an M/M/1 queue, whose mean
 *               time in system must come out near 1/(mu - lambda);
 *   seed        the first seed text's constant-rate model: 2,000/s for
 *               1,200 s on one row with 2 ms holds (worst wait 3,599,998.5 ms);
 *   viral-post  the viral-post scenario as `hotrow sim --scenario` runs it.
 *
 * The engine keeps every metric (histograms, time series, theory) on all
 * the time; the timed span is sim_new + sim_run + sim_summary, so the cost
 * of summarising is counted too.
 *
 * Interface: bench_engine_main() from cli/bench.c, see bench/bench.h.
 * `hotrow bench db` (bench/db.c) runs real databases instead.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "bench/bench.h"
#include "engine/sim.h"
#include "util/json.h"
#include "util/opt.h"

enum workload { W_MM1, W_SEED, W_VIRAL, W_N };

static const char *const workload_names[W_N] = {"mm1", "seed", "viral-post"};

struct bench_opts {
	bool want[W_N];       /* which workloads to run */
	long long requests;   /* mm1: arrivals to simulate (in expectation) */
	int repeat;           /* best of this many runs */
	bool json;
};

/* One workload's outcome: the best run's CPU time and that run's summary. */
struct bench_result {
	struct sim_config config;
	double cpu_s;          /* best of the runs */
	long max_rss_kb;       /* peak resident set of the process so far */
	struct sim_summary sum;
};

/* The M/M/1 model: rate and hold chosen so rho = 0.8 and 1/(mu-lambda) = 10 ms. */
#define MM1_RPS     400.0
#define MM1_HOLD_MS 2.0

static const char help_header[] =
	"\n"
	"Time hotrow's engine on the workloads `make bench` compares with other\n"
	"simulators (bench/run sets them side by side; see bench/README.md).\n"
	"CPU time is user + system from getrusage, best of K runs.\n"
	"\n"
	"workloads:\n"
	"  mm1         one row, Poisson arrivals at 400/s, exponential 2 ms holds\n"
	"              (rho = 0.8): mean time in system vs 1/(mu - lambda) = 10 ms\n"
	"  seed        the seed's model: 2,000/s constant for 1,200 s, one row,\n"
	"              2 ms holds; the worst lock wait is the last request's\n"
	"  viral-post  the viral-post scenario (20 simulated minutes)\n"
	"\n"
	"options:\n";

/* --workload: one of them, or all (W_N). */
static const struct opt_choice workloads[] = {
	{ "all", W_N }, { "mm1", W_MM1 }, { "seed", W_SEED }, { "viral-post", W_VIRAL },
	{ NULL, 0 } };
_Static_assert(W_N == 3, "one choice a workload");

/* Fill *o from argv; on bad usage print one line to stderr and return -1.
 * Returns 1 when --help was answered. */
static int parse_engine_opts(int argc, char **argv, struct bench_opts *o)
{
	int workload = W_N, requests = 2000000;

	memset(o, 0, sizeof *o);
	o->repeat = 3;
	const struct opt rows[] = {
		{ .name = "workload", .arg = "NAME", .kind = OPT_CHOICE, .dest = &workload,
		  .choices = workloads, .help = "all (default), mm1, seed or viral-post" },
		{ .name = "requests", .arg = "N", .kind = OPT_INT, .dest = &requests, .min = 1000,
		  .max = 1000000000, .help = "requests in the mm1 workload, 1000..1000000000\n"
		                              "(default 2000000)" },
		{ .name = "repeat", .arg = "K", .kind = OPT_INT, .dest = &o->repeat, .min = 1,
		  .max = 100, .help = "runs per workload, the fastest counts, 1..100 (default 3)" },
		{ .name = "json", .kind = OPT_FLAG, .dest = &o->json,
		  .help = "one JSON object instead of the table" },
		{ .name = "help", .short_name = 'h', .kind = OPT_USAGE, .help = "this text" },
	};
	const struct opt_table table = { .rows = rows, .n = sizeof rows / sizeof rows[0] };
	const struct opt_cmd cmd = {
		.name = "hotrow bench engine", .header = help_header,
		.footer = "\n`hotrow bench db` is the other benchmark: the load driver against pgbench.\n",
		.tables = &table, .ntables = 1 };
	int rc = opt_parse(&cmd, argc, argv, NULL);
	if (rc != OPT_OK)
		return rc == OPT_HELP ? 1 : -1;
	for (int w = 0; w < W_N; w++)
		o->want[w] = workload == W_N || workload == w;
	o->requests = requests;
	return 0;
}

/* The engine config for workload w; -1 if the engine refuses it (a message
 * naming the field is then in err). */
static int workload_config(enum workload w, const struct bench_opts *o,
                           struct sim_config *c, char *err, size_t errlen)
{
	if (w == W_VIRAL) {
		if (sim_scenario("viral-post", c) != 0) {
			snprintf(err, errlen, "the engine has no viral-post scenario");
			return -1;
		}
		return sim_config_check(c, err, errlen);
	}
	sim_config_default(c);
	c->strategy = SIM_NAIVE;
	c->rows = 1;
	c->slot = SIM_SLOT_ROUND_ROBIN;
	c->nphases = 0;
	c->unrelated_rps = 0;
	c->work_ms = 0;
	c->pool = 0;                 /* unbounded: only the row lock queues */
	c->pool_timeout_ms = 0;
	c->client_timeout_ms = 0;
	c->retries = 0;
	c->ncrashes = 0;
	c->seed = 1;
	if (w == W_MM1) {
		c->arrivals = SIM_ARRIVE_POISSON;
		c->hold_dist = SIM_DIST_EXP;
		c->rps = MM1_RPS;
		c->hold_ms = MM1_HOLD_MS;
		c->seconds = (double)o->requests / MM1_RPS;
	} else {
		c->arrivals = SIM_ARRIVE_CONSTANT;
		c->hold_dist = SIM_DIST_CONST;
		c->rps = 2000;
		c->hold_ms = 2;
		c->seconds = 1200;
	}
	return sim_config_check(c, err, errlen);
}

/* CPU seconds (user + system) this process has used so far. */
static double cpu_now(long *max_rss_kb)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	if (max_rss_kb)
		*max_rss_kb = ru.ru_maxrss;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* Run config c `repeat` times and keep the fastest run in *r. 0, or -1
 * when the engine refuses the config (err says why). */
static int measure(const struct sim_config *c, int repeat, struct bench_result *r,
                   char *err, size_t errlen)
{
	r->config = *c;
	r->cpu_s = -1;
	if (sim_config_check(c, err, errlen) != 0)
		return -1;
	for (int k = 0; k < repeat; k++) {
		struct sim_summary sum;
		double t0 = cpu_now(NULL);
		struct sim *s = sim_new(c);
		if (!s)
			return snprintf(err, errlen, "the engine refused the config"), -1;
		sim_run(s);
		sim_summary(s, &sum);
		double t = cpu_now(&r->max_rss_kb) - t0;
		sim_free(s);
		if (r->cpu_s < 0 || t < r->cpu_s) {
			r->cpu_s = t;
			r->sum = sum;
		}
	}
	return 0;
}

/* Requests per CPU second; 0 when the clock saw no time at all. */
static double rate(double n, double cpu_s)
{
	return cpu_s > 0 ? n / cpu_s : 0;
}

static double mm1_theory_ms(const struct sim_config *c)
{
	double mu = 1000.0 / c->hold_ms;
	return mu > c->rps ? 1000.0 / (mu - c->rps) : -1;
}

static void print_json_num(FILE *f, double v)
{
	if (v < 0)
		fputs("null", f);
	else
		fprintf(f, "%.6f", v);
}

static void print_json(FILE *f, const struct bench_opts *o, const struct bench_result *res)
{
	fprintf(f, "{\"peer\":\"hotrow\",\"repeat\":%d,\"clock\":\"getrusage user+sys\"", o->repeat);
	for (int w = 0; w < W_N; w++) {
		const struct bench_result *r = &res[w];
		if (!o->want[w])
			continue;
		fputc(',', f);
		util_json_str(f, workload_names[w]);
		fprintf(f, ":{\"requests\":%llu,\"completed\":%llu,\"events\":%llu,"
			"\"simulated_s\":%.3f,\"cpu_s\":%.6f,\"requests_per_cpu_s\":%.1f,"
			"\"events_per_cpu_s\":%.1f,\"max_rss_kb\":%ld,"
			"\"mean_system_ms\":%.6f,\"mean_wait_ms\":%.6f,\"worst_wait_ms\":%.3f,"
			"\"mm1_mean_ms\":",
			(unsigned long long)r->sum.offered, (unsigned long long)r->sum.completed,
			(unsigned long long)r->sum.events, r->config.seconds, r->cpu_s,
			rate((double)r->sum.offered, r->cpu_s), rate((double)r->sum.events, r->cpu_s),
			r->max_rss_kb, r->sum.latency_ms.mean, r->sum.mean_wait_ms,
			r->sum.worst_wait_ms);
		print_json_num(f, w == W_MM1 ? mm1_theory_ms(&r->config) : -1);
		fputs(",\"engine_mm1_mean_ms\":", f);
		print_json_num(f, r->sum.theory.mm1_mean_ms);
		fprintf(f, ",\"rho\":%.6f}", r->sum.theory.rho);
	}
	fputs("}\n", f);
}

static void print_table(FILE *f, const struct bench_opts *o, const struct bench_result *res)
{
	fprintf(f, "hotrow engine, best of %d run(s), CPU = user + system (getrusage)\n\n",
		o->repeat);
	fprintf(f, "%-11s %11s %10s %9s %14s %14s\n", "workload", "requests", "sim time",
		"CPU s", "requests/CPU s", "events/CPU s");
	for (int w = 0; w < W_N; w++) {
		const struct bench_result *r = &res[w];
		if (!o->want[w])
			continue;
		fprintf(f, "%-11s %11llu %9.0fs %9.4f %14.0f %14.0f\n", workload_names[w],
			(unsigned long long)r->sum.offered, r->config.seconds, r->cpu_s,
			rate((double)r->sum.offered, r->cpu_s),
			rate((double)r->sum.events, r->cpu_s));
	}
	fputc('\n', f);
	if (o->want[W_MM1]) {
		const struct bench_result *r = &res[W_MM1];
		fprintf(f, "mm1: rho %.2f, mean time in system %.3f ms, M/M/1 predicts "
			"1/(mu - lambda) = %.3f ms\n", r->sum.theory.rho,
			r->sum.latency_ms.mean, mm1_theory_ms(&r->config));
	}
	if (o->want[W_SEED])
		fprintf(f, "seed: worst lock wait %.1f ms (the last of %llu requests)\n",
			res[W_SEED].sum.worst_wait_ms,
			(unsigned long long)res[W_SEED].sum.offered);
	if (o->want[W_VIRAL])
		fprintf(f, "viral-post: %.4f CPU s for %.0f simulated s (target < 0.1 s)\n",
			res[W_VIRAL].cpu_s, res[W_VIRAL].config.seconds);
}

int bench_engine_main(int argc, char **argv)
{
	struct bench_opts o;
	struct bench_result res[W_N];
	char err[256];
	int rc = parse_engine_opts(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : 2;
	memset(res, 0, sizeof res);
	for (int w = 0; w < W_N; w++) {
		struct sim_config c;
		if (!o.want[w])
			continue;
		if (workload_config(w, &o, &c, err, sizeof err) != 0) {
			fprintf(stderr, "hotrow bench: workload %s: %s\n", workload_names[w], err);
			return 1;
		}
		if (measure(&c, o.repeat, &res[w], err, sizeof err) != 0) {
			fprintf(stderr, "hotrow bench: workload %s: %s\n", workload_names[w], err);
			return 1;
		}
	}
	if (o.json)
		print_json(stdout, &o, res);
	else
		print_table(stdout, &o, res);
	return 0;
}
