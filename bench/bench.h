/*
 * bench.h: the benchmarks behind `hotrow bench`, each beside a peer
 * measured in the same run (bench/README.md).
 *
 *   bench_engine_main    the engine's CPU per simulated request (bench/engine.c);
 *                        bench/run sets it beside SimPy and a Python loop
 *   bench_db_main        one hot row through kit/load and pgbench (bench/db.c)
 *   bench_fidelity_main  the engine's prediction from one client's parts
 *                        beside kit/load and pgbench (bench/fidelity.c)
 *
 * Interface: cli/bench.c picks one by name and hands it argv with argv[0]
 * the benchmark's name; the result is the exit code (0, 1 the work
 * failed, 2 bad usage after one line on stderr), as for every subcommand.
 * Every one answers --help on stdout.
 */
#ifndef HOTROW_BENCH_H
#define HOTROW_BENCH_H

#include <stddef.h>
#include <stdint.h>

int bench_engine_main(int argc, char **argv);
int bench_db_main(int argc, char **argv);
int bench_fidelity_main(int argc, char **argv);

/* pgbench's report of one run (bench/pgbench.c). */
struct bench_pgbench {
	int64_t transactions;    /* "actually processed" */
	int64_t failed;
	double tps;              /* without the initial connection time */
	double mean_ms;          /* latency average */
};

/* Run pgbench -n -M MODE -f SCRIPT -c clients -j clients -T seconds url,
 * with script written to a temporary file, and read its report into
 * *out. mode is "simple" or "extended". Returns 0; or -1 with pgbench's
 * output (or why it could not start, such as pgbench not installed) in
 * log, loglen bytes at most. */
int bench_pgbench_run(const char *url, const char *script, const char *mode, int clients,
                      int seconds, struct bench_pgbench *out, char *log, size_t loglen);

/* Whether pgbench can be run from PATH. */
int bench_pgbench_found(void);

#endif
