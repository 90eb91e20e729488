/* Placeholder until 'needle gen cases' lands. */
#include <stdio.h>

#include "cmd.h"
#include "err.h"

int cmd_gen_cases(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "error: 'needle gen cases' is not implemented yet\n");
	return EXIT_USAGE;
}
