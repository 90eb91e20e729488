/* Placeholder until 'needle gen haystack' lands. */
#include <stdio.h>

#include "cmd.h"
#include "err.h"

int cmd_gen_haystack(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "error: 'needle gen haystack' is not implemented yet\n");
	return EXIT_USAGE;
}
