/* Placeholder until the 'gen' subcommand lands. */
#include <stdio.h>

#include "cmd.h"
#include "err.h"

int cmd_gen(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "error: 'needle gen' is not implemented yet\n");
	return EXIT_USAGE;
}
