/*
 * needle — recall, smoke tests and revision diffs for OpenAI-compatible LLM
 * servers. main only dispatches to a subcommand (git style).
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "base/err.h"
#include "base/json.h"
#include "base/version.h"

#ifndef NEEDLE_VERSION
#define NEEDLE_VERSION "0.0.0-dev"
#endif

static const struct cmd_entry commands[] = {
	{"count", cmd_count, "count tokens exactly as the server does"},
	{"gen", cmd_gen, "generate needle documents, images and cases"},
	{"run", cmd_run, "run a suite against an OpenAI-compatible endpoint"},
	{"report", cmd_report, "summarise a run folder (Markdown, JSON, CSV, heatmap)"},
	{"diff", cmd_diff, "compare two runs like for like; gates set the exit status"},
	{"merge", cmd_merge, "join the folders of a sharded run into one"},
	{"suites", cmd_suites, "list the suites that ship with needle"},
	{"templates", cmd_templates, "list the built-in chat templates and encoders"},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: needle COMMAND [OPTIONS] [ARGS]\n"
		"       needle help [COMMAND] | --version\n\nCommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"  %-10s %s\n  %-10s %s\n  %-10s %s\n", "help", "show a command's help",
		"man", "print the manual page, needle(1)", "completion",
		"print shell completion for bash or zsh");
	fprintf(out,
		"\nRun 'needle help COMMAND' (or 'needle COMMAND --help') for its options\n"
		"and examples; 'needle --version' prints the version and the commit it was\n"
		"built from (git describe); 'needle help topics' lists the pages of the\n"
		"manual (docs/), 'needle help TOPIC' prints one.\n"
		"\nExit status:\n"
		"  0  all passed\n"
		"  1  something failed a check or a gate\n"
		"  2  usage or input error\n"
		"  3  the endpoint could not be used at all\n");
}

int main(int argc, char **argv)
{
	const char *a = argc > 1 ? argv[1] : NULL;

	json_init(); /* before any cJSON call: NEEDLE_FAIL_ALLOC covers cJSON too */
	if (!a) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(a, "--help") || !strcmp(a, "-h") ||
	    (!strcmp(a, "help") && argc == 2)) {
		usage(stdout);
		return EXIT_PASS;
	}
	if (!strcmp(a, "--help=words")) {
		for (size_t i = 0; i < NCOMMANDS; i++)
			printf("%s\n", commands[i].name);
		printf("help\nman\ncompletion\n");
		return EXIT_PASS;
	}
	if (!strcmp(a, "--version")) {
		if (strcmp(version_describe, NEEDLE_VERSION))
			printf("needle %s (%s)\n", NEEDLE_VERSION, version_describe);
		else
			printf("needle %s\n", NEEDLE_VERSION);
		return EXIT_PASS;
	}
	if (!strcmp(a, "help"))
		return cmd_help(commands, NCOMMANDS, argc - 2, argv + 2);
	if (!strcmp(a, "man"))
		return cmd_man(commands, NCOMMANDS, argc - 2, argv + 2);
	if (!strcmp(a, "completion"))
		return cmd_completion(argc - 2, argv + 2);
	return cmd_dispatch(commands, NCOMMANDS, "command", "needle --help", a,
			    argc - 2, argv + 2);
}
