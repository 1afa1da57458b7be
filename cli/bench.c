/*
 * bench.c: `hotrow bench`, a thin front over the benchmarks in bench/.
 *
 * Interface: cmd_bench(argc, argv) with argv[0] == "bench", from cli/main.c;
 * exit 0, 1 (the work failed) or 2 (bad usage), like every subcommand.
 */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "cli/cmd.h"

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *what;
} benches[] = {
	{ "engine", bench_engine_main,
	  "time the simulator on the M/M/1 model, the seed's model and\n"
	  "           the viral-post scenario (the peers are SimPy and a Python loop)" },
	{ "db", bench_db_main,
	  "one hot row on SQLite and PostgreSQL through the load driver\n"
	  "           (kit/load.h), and through pgbench on the same server" },
	{ "fidelity", bench_fidelity_main,
	  "the engine's prediction from one client's measured parts beside\n"
	  "           kit/load and pgbench: 1 row, 16 and 128 slots, 1 to 32 clients" },
};
#define NBENCHES (sizeof benches / sizeof benches[0])

static void usage_top(FILE *out)
{
	fprintf(out,
		"usage: hotrow bench SUBCOMMAND [options]\n"
		"\n"
		"Benchmarks that set hotrow beside a peer measured in the same run.\n"
		"`make bench` runs the engine one with its peers and prints the ratios;\n"
		"`make bench-db` and `make bench-fidelity` run the database ones\n"
		"(bench/README.md).\n"
		"\n"
		"subcommands:\n");
	for (size_t i = 0; i < NBENCHES; i++)
		fprintf(out, "  %-8s %s\n", benches[i].name, benches[i].what);
	fprintf(out, "\n`hotrow bench SUBCOMMAND --help` lists its options.\n");
}

int cmd_bench(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "hotrow bench: needs a subcommand, engine, db or fidelity "
			"(hotrow bench --help)\n");
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage_top(stdout);
		return 0;
	}
	for (size_t i = 0; i < NBENCHES; i++)
		if (!strcmp(argv[1], benches[i].name))
			return benches[i].main(argc - 1, argv + 1);
	fprintf(stderr, "hotrow bench: unknown subcommand '%s' (accepts engine, db or fidelity; "
		"hotrow bench --help says what each does)\n",
		argv[1]);
	return 2;
}
