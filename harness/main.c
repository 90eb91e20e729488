/*
 * needle — recall, smoke tests and revision diffs for OpenAI-compatible LLM
 * servers. main only dispatches to a subcommand (git style).
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "err.h"

#ifndef NEEDLE_VERSION
#define NEEDLE_VERSION "0.0.0-dev"
#endif

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"count", cmd_count, "count tokens exactly as the server does"},
	{"gen", cmd_gen, "generate needle documents, images and cases"},
	{"run", cmd_run, "run a suite against an OpenAI-compatible endpoint"},
	{"report", cmd_report, "summarise a run folder (Markdown, JSON, CSV, heatmap)"},
	{"diff", cmd_diff, "compare two runs like for like; gates set the exit status"},
	{"templates", cmd_templates, "list the built-in chat templates and encoders"},
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: needle COMMAND [OPTIONS] [ARGS]\n\nCommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\nRun 'needle COMMAND --help' for a command's options and examples.\n"
		"\nExit status:\n"
		"  0  all passed\n"
		"  1  something failed a check or a gate\n"
		"  2  usage or input error\n"
		"  3  the endpoint could not be used at all\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_PASS;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("needle %s\n", NEEDLE_VERSION);
		return EXIT_PASS;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "error: unknown command '%s'\ntry 'needle --help'\n",
		argv[1]);
	return EXIT_USAGE;
}
