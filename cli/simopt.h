/*
 * simopt.h: the engine's command-line options, shared by `hotrow sim` and
 * `hotrow tui` so both accept the same words with the same checks.
 *
 * Interface:
 *   struct sim_config c; sim_config_default(&c);
 *   if (simopt_scenario(argc, argv, &c, err, sizeof err) < 0) usage error;
 *   for (int i = 1; i < argc; i++) {
 *       int r = simopt_parse(argc, argv, &i, &c, err, sizeof err);
 *       if (r < 0) usage error (err holds one line);
 *       if (r > 0) continue;            an engine option, consumed
 *       ... the command's own options ...
 *   }
 *   if (simopt_finish(&c, simopt_given(argc, argv, "strategy"), err, sizeof err) < 0)
 *       usage error;
 *   simopt_help(stdout) prints the engine options for --help.
 * simopt_scenario loads --scenario NAME first, so that the other options
 * change the scenario wherever they appear; simopt_parse then skips it.
 * Options take "--name VALUE" or "--name=VALUE". Error lines name the
 * option and what it accepts, without a trailing newline.
 */
#ifndef HOTROW_CLI_SIMOPT_H
#define HOTROW_CLI_SIMOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/sim.h"

/* Load the scenario named by --scenario, if any. 0, or -1 and err. */
int simopt_scenario(int argc, char **argv, struct sim_config *c, char *err, size_t errlen);

/* If argv[*i] is an engine option, apply it (reading its value from the
 * same word after '=' or from argv[*i + 1], advancing *i) and return 1.
 * Return 0 when it is not an engine option (*i unchanged), -1 on a bad
 * or missing value (err set; *c may hold earlier options). */
int simopt_parse(int argc, char **argv, int *i, struct sim_config *c, char *err, size_t errlen);

/* Apply one option by name without the dashes ("rows", "hold-ms"), as
 * --sweep does. 0, or -1 with err for an unknown name or a bad value. */
int simopt_set(struct sim_config *c, const char *name, const char *value,
               char *err, size_t errlen);

/* Whether --name or --name=... is among argv[1..argc-1]. */
bool simopt_given(int argc, char **argv, const char *name);

/* Settle the config after all options: more than one row with the naive
 * strategy means sharded, unless --strategy was given (strategy_given):
 * rows with any strategy but sharded are an error. Then sim_config_check,
 * and times are rounded to the whole microseconds the engine uses, so the
 * config shows the values that run. 0, or -1 and err. */
int simopt_finish(struct sim_config *c, bool strategy_given, char *err, size_t errlen);

void simopt_help(FILE *out);

#endif
