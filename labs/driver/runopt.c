/*
 * runopt.c: a lab driver's options through util/opt. See runopt.h.
 */
#include "labs/driver/runopt.h"

int kit_runopt_parse(const struct kit_runopt_spec *spec, int argc, char **argv)
{
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
