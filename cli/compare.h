/*
 * compare.h: `hotrow sim --compare A.conf B.conf`, two setups run on the
 * same seed and printed side by side, with B / A for every figure.
 *
 * Each side's configuration comes whole from its setup file
 * (cli/simconf.h); the command line may set --seed and --seconds for
 * both. B runs on A's seed (or the command line's), so both see the
 * same arrival stream; a different seed in B's file is said and not
 * used.
 *
 * Interface:
 *   struct compare_opts o = { .a = "a.conf", .b = "b.conf", .json = false };
 *   return compare_main(&o);       the exit code: 0, 1 (a file not
 *                                  written) or 2 (a setup file refused)
 */
#ifndef HOTROW_CLI_COMPARE_H
#define HOTROW_CLI_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

struct compare_opts {
	const char *a, *b;        /* the setup files */
	bool seed_given;          /* --seed: both sides run on seed */
	uint64_t seed;
	bool seconds_given;       /* --seconds: both sides run seconds */
	double seconds;
	bool json;                /* {"a": run, "b": run} instead of the table */
	const char *svg;          /* both on one figure; NULL none */
};

int compare_main(const struct compare_opts *o);

#endif
