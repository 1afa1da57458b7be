/*
 * simconf.h: setup files (.conf), a whole engine configuration written
 * down to be run again or compared: `hotrow sim --compare A.conf B.conf`
 * and the TUI's compare picker (`hotrow tui --setup FILE`) read them.
 *
 * The format is the command line's, one option a line:
 *
 *   # payday, eight fee rows
 *   scenario = viral-post        applied first, wherever it stands
 *   strategy = ledger
 *   rows     = 8                 any `hotrow sim` engine option, no dashes
 *   idempotent = on              a flag takes on or off
 *   crash    = app@3             a repeatable option may come again
 *
 * `#` starts a comment anywhere on a line; blank lines are skipped. What
 * a file leaves out keeps `hotrow sim`'s default (sim_config_default, not
 * the TUI's viral post), so a file means the same in every front end.
 * Each value goes through the option table of cli/simopt.h, the same
 * words, ranges and checks as `hotrow sim --NAME VALUE`, and the whole
 * through simopt_finish.
 *
 * Interface:
 *   struct sim_config c;
 *   char err[SIMCONF_ERR];
 *   if (simconf_load("a.conf", &c, err, sizeof err) < 0)
 *       fprintf(stderr, "hotrow sim: %s\n", err);    "a.conf:3: --rows accepts ..."
 *   simconf_parse(text, "name", &c, err, sizeof err) does the same on text.
 */
#ifndef HOTROW_CLI_SIMCONF_H
#define HOTROW_CLI_SIMCONF_H

#include <stddef.h>

#include "engine/sim.h"

#define SIMCONF_MAX_BYTES (64 * 1024)   /* a setup file is a page, not a log */
#define SIMCONF_ERR 512                 /* room for a path, a line and why */

/* Fill *c from text (NUL-terminated), a file's contents; name is what
 * the errors call it. 0, or -1 with one line in err, "NAME:LINE: why"
 * (or "NAME: why" for a fault of the whole, such as rows without a
 * strategy that has them, with the line of the option it names when
 * there is one); *c is then unspecified. */
int simconf_parse(const char *text, const char *name, struct sim_config *c,
                  char *err, size_t errlen);

/* simconf_parse on the file at path, read whole (a regular file of at
 * most SIMCONF_MAX_BYTES). 0, or -1 with err ("PATH: is a directory"). */
int simconf_load(const char *path, struct sim_config *c, char *err, size_t errlen);

#endif
