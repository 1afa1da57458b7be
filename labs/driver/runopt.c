/*
 * runopt.c: a lab driver's options through util/opt. See runopt.h.
 */
#include <stdlib.h>
#include <string.h>

#include "labs/driver/runopt.h"

int kit_runopt_parse(const struct kit_runopt_spec *spec, int argc, char **argv)
{
	/* `hotrow lab run` hands the database over in the environment, where
	 * a password is not on every process listing as argv is; --db still
	 * wins. Read once, then gone from what this driver starts. */
	static char db[4096];
	const char *env = getenv("HOTROW_RUN_DB");
	if (env && *env && strlen(env) < sizeof db) {
		strcpy(db, env);
		for (size_t i = 0; i < spec->n; i++)
			if (!strcmp(spec->opts[i].name, "db") && spec->opts[i].kind == OPT_STRING)
				*(const char **)spec->opts[i].dest = db;
	}
	unsetenv("HOTROW_RUN_DB");
	const struct opt_table table = { .rows = spec->opts, .n = spec->n };
	const struct opt_cmd cmd = { .name = spec->cmd, .footer = spec->footer,
	                             .tables = &table, .ntables = 1,
	                             .out = spec->out, .err = spec->err };
	int rest, rc = opt_parse(&cmd, argc, argv, &rest);

	if (rc == OPT_OK && rest < argc) {
		fprintf(spec->err ? spec->err : stderr, "%s: unexpected argument '%s'\n",
		        spec->cmd, argv[rest]);
		return KIT_RUNOPT_BAD;
	}
	return rc;
}
