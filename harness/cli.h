/*
 * cli — declarative command lines. Each subcommand describes itself once, in a
 * `struct cli_cmd` with a table of `struct cli_opt`; the same table drives the
 * parser and renders `--help` (usage, options, examples, exit codes).
 *
 * Accepted forms: `--name VALUE`, `--name=VALUE`, `--flag`, `-x VALUE` where a
 * short name is given, and `--` to end options. Options and positional
 * arguments may be interleaved.
 */
#ifndef NEEDLE_CLI_H
#define NEEDLE_CLI_H

#include <stdio.h>

#include "buf.h"
#include "err.h"

enum cli_kind {
	CLI_FLAG,   /* int *: set to 1 */
	CLI_STR,    /* const char **: borrowed from argv */
	CLI_LONG,   /* long *: decimal, whole string, range-checked */
	CLI_DOUBLE  /* double *: finite, >= 0 */
};

struct cli_opt {
	const char *name;    /* long name without "--" */
	char short_name;     /* 0 for none */
	enum cli_kind kind;
	const char *metavar; /* shown in help, e.g. "PATH"; NULL for flags */
	const char *help;    /* one line */
	void *dest;          /* where the parsed value goes; see enum cli_kind */
};

struct cli_cmd {
	const char *name;     /* e.g. "count" or "gen haystack" */
	const char *usage;    /* synopsis after "needle NAME " */
	const char *summary;  /* one paragraph */
	const struct cli_opt *opts;
	size_t nopts;
	const char *examples; /* lines, may be NULL */
	int min_args, max_args; /* positional arguments; max -1 = unbounded */
};

/* Outcome of cli_parse besides an error. */
enum { CLI_RUN = 0, CLI_HELP_SHOWN = 1 };

/*
 * Parses argv[0..argc) (argv[0] is the first argument after the subcommand
 * name). Positional arguments are collected, in order, into `args` (borrowed
 * pointers into argv; room for argc entries), their number into `*nargs`.
 * `--help`/`-h` renders help into `help` and returns CLI_HELP_SHOWN through
 * `*outcome`. A usage error returns ERR_USAGE with a one-line message in `d`.
 */
enum err cli_parse(const struct cli_cmd *cmd, int argc, char **argv,
		   const char **args, int *nargs, int *outcome, struct buf *help,
		   struct diag *d);

/* Positional arguments plus options a subcommand accepts (cli_start). */
#define CLI_ARGS_MAX 64

/* The start every subcommand shares: refuses more than CLI_ARGS_MAX
 * arguments, runs cli_parse into `args` (room for CLI_ARGS_MAX, borrowed
 * from argv) and prints the help to stdout for --help. Returns CLI_RUN (go on:
 * validate and run), CLI_HELP_SHOWN (exit 0), or -1 with the usage error (or
 * ERR_NOMEM) in `d`. For the CLI layer only. */
int cli_start(const struct cli_cmd *cmd, int argc, char **argv,
	      const char **args, int *nargs, struct diag *d);

/* Renders the full help text of `cmd` into `out`. */
enum err cli_help(const struct cli_cmd *cmd, struct buf *out);

/* Prints "error: MSG" and "try 'needle NAME --help'" to stderr; returns the
 * exit status for `d->code`. For the CLI layer only. */
int cli_report(const char *cmd_name, const struct diag *d);

#endif
