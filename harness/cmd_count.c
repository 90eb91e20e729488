/* Placeholder until the 'count' subcommand lands. */
#include <stdio.h>

#include "cmd.h"
#include "err.h"

int cmd_count(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "error: 'needle count' is not implemented yet\n");
	return EXIT_USAGE;
}
