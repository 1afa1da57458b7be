/*
 * simopt.h: the engine's command-line options, one util/opt table shared
 * by `hotrow sim` and `hotrow tui`, so both accept the same words with the
 * same checks and list them in --help the same way.
 *
 * Interface:
 *   struct sim_config c; sim_config_default(&c);
 *   struct simopt_given g;
 *   struct opt_table t[] = { { ...the command's own rows... },
 *                            simopt_table(&c, &g, "engine:") };
 *   opt_parse(&cmd, argc, argv, NULL) with t as cmd's tables;
 *   if (simopt_finish(&c, &g, err, sizeof err) < 0) usage error;
 * --scenario NAME is applied before every other engine option, wherever it
 * stands, so that the others change the scenario. Error lines name the
 * option and what it accepts, without a trailing newline.
 */
#ifndef HOTROW_CLI_SIMOPT_H
#define HOTROW_CLI_SIMOPT_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/sim.h"
#include "util/opt.h"

#define SIMOPT_MAX_ROWS 64

/* Which engine options a parse was given (filled by opt_parse). */
struct simopt_given {
	bool row[SIMOPT_MAX_ROWS];
};

/* The engine's table for c, headed by heading (NULL: none); g is cleared
 * and then records what is given. c and g must outlive the parse. */
struct opt_table simopt_table(struct sim_config *c, struct simopt_given *g, const char *heading);

/* Whether simopt_set takes name ("hold-ms"; not "scenario"). */
bool simopt_knows(const char *name);

/* Whether --name was given ("strategy"). */
bool simopt_was_given(const struct simopt_given *g, const char *name);

/* Apply one option by name without the dashes ("rows", "hold-ms"), as
 * --sweep does, and record it in g as given. 0, or -1 with err for an
 * unknown name or a bad value (c and g unchanged). */
int simopt_set(struct sim_config *c, struct simopt_given *g, const char *name,
               const char *value, char *err, size_t errlen);

/* Settle the config after all options: a rate (--rps, --schedule) beside
 * --clients is an error; more than one row with the naive strategy means
 * sharded, unless --strategy was given: rows with any strategy but sharded
 * or ledger are an error. Then sim_config_check, and times are rounded to
 * the whole microseconds the engine uses, so the config shows the values
 * that run. 0, or -1 and err. */
int simopt_finish(struct sim_config *c, const struct simopt_given *g, char *err, size_t errlen);

#endif
