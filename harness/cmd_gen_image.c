/* Placeholder until 'needle gen image' lands. */
#include <stdio.h>

#include "cmd.h"
#include "err.h"

int cmd_gen_image(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "error: 'needle gen image' is not implemented yet\n");
	return EXIT_USAGE;
}
