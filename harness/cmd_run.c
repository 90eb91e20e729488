/* Placeholder until the 'run' subcommand lands. */
#include <stdio.h>

#include "cmd.h"
#include "err.h"

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "error: 'needle run' is not implemented yet\n");
	return EXIT_USAGE;
}
