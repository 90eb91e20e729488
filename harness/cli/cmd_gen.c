/* needle gen — dispatches to the generators' subcommands. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "base/err.h"

static const struct cmd_entry gens[] = {
	{"haystack", cmd_gen_haystack, "a needle document of exactly N prompt tokens"},
	{"image", cmd_gen_image, "deterministic PNG images of shapes and colours"},
	{"cases", cmd_gen_cases, "tool-call, multi-turn and strict-JSON cases"},
};
#define NGENS (sizeof(gens) / sizeof(gens[0]))

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: needle gen KIND [OPTIONS]\n\nKinds:\n");
	for (i = 0; i < NGENS; i++)
		fprintf(out, "  %-9s %s\n", gens[i].name, gens[i].summary);
	fprintf(out, "\nRun 'needle gen KIND --help' for its options.\n"
		"\nExit status:\n  0  all passed\n  2  usage or input error\n");
}

/* `needle gen --help=man`: every kind's section; `--help=words`: the kinds. */
static int help_all(const char *format)
{
	char arg[16];
	char *args[2] = {arg, NULL};
	size_t i;
	int st = EXIT_PASS;

	if (!strcmp(format, "--help=words")) {
		for (i = 0; i < NGENS; i++)
			printf("%s\n", gens[i].name);
		return EXIT_PASS;
	}
	snprintf(arg, sizeof(arg), "%s", format);
	for (i = 0; i < NGENS && st == EXIT_PASS; i++) {
		fflush(stdout);
		st = gens[i].fn(1, args);
	}
	return st;
}

int cmd_gen(int argc, char **argv)
{
	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
		usage(stdout);
		return EXIT_PASS;
	}
	if (!strcmp(argv[0], "--help=man") || !strcmp(argv[0], "--help=words"))
		return help_all(argv[0]);
	return cmd_dispatch(gens, NGENS, "kind", "needle gen --help", argv[0],
			    argc - 1, argv + 1);
}
