/*
 * bench_db.h: `hotrow bench db`, the load driver against pgbench.
 *
 * Interface: cmd_bench() in cli/bench.c hands "db" and its options here,
 * argv[0] == "db"; the result is the exit code (0, 1 the work failed, 2 bad
 * usage), as for every subcommand.
 */
#ifndef HOTROW_CLI_BENCH_DB_H
#define HOTROW_CLI_BENCH_DB_H

int cmd_bench_db(int argc, char **argv);

#endif
