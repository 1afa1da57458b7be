/* cli/bench.c: placeholder until this subcommand lands. */
#include <stdio.h>
#include "cli/cmd.h"
int cmd_bench(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "hotrow %s: not built yet\n", argv[0]);
	return 1;
}
