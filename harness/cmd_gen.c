/* needle gen — dispatches to the generators' subcommands. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "err.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} gens[] = {
	{"haystack", cmd_gen_haystack, "a needle document of exactly N prompt tokens"},
	{"image", cmd_gen_image, "deterministic PNG images of shapes and colours"},
	{"cases", cmd_gen_cases, "tool-call, multi-turn and strict-JSON cases"},
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: needle gen KIND [OPTIONS]\n\nKinds:\n");
	for (i = 0; i < sizeof(gens) / sizeof(gens[0]); i++)
		fprintf(out, "  %-9s %s\n", gens[i].name, gens[i].summary);
	fprintf(out, "\nRun 'needle gen KIND --help' for its options.\n");
}

int cmd_gen(int argc, char **argv)
{
	size_t i;

	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
		usage(stdout);
		return EXIT_PASS;
	}
	for (i = 0; i < sizeof(gens) / sizeof(gens[0]); i++)
		if (!strcmp(argv[0], gens[i].name))
			return gens[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "error: unknown kind 'gen %s'\ntry 'needle gen --help'\n",
		argv[0]);
	return EXIT_USAGE;
}
