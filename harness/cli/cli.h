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

#include "base/buf.h"
#include "base/err.h"

enum cli_kind {
	CLI_FLAG,   /* int *: set to 1 */
	CLI_STR,    /* const char **: borrowed from argv */
	CLI_LONG,   /* long *: decimal, whole string, range-checked */
	CLI_DOUBLE, /* double *: finite, >= 0 */
	CLI_LIST    /* struct cli_list *: repeatable, values borrowed from argv */
};

#define CLI_LIST_MAX 32
/* Options one subcommand may declare (for "did you mean"). */
#define CLI_OPTS_MAX 64

/* The values of a repeatable option, in the order given. */
struct cli_list {
	const char *v[CLI_LIST_MAX];
	int n;
};

struct cli_opt {
	const char *name;    /* long name without "--" */
	char short_name;     /* 0 for none */
	enum cli_kind kind;
	const char *metavar; /* shown in help, e.g. "PATH"; NULL for flags, and
				for a CLI_STR with choices (they are shown) */
	const char *help;    /* one line */
	void *dest;          /* where the parsed value goes; see enum cli_kind */
	const char *const *choices; /* CLI_STR: the only values accepted
				       (NULL-terminated), or NULL for any */
};

/* Exit statuses a subcommand can return, for its help (struct cli_cmd.exits). */
enum {
	CLI_EXIT_PASS = 1 << 0,     /* 0: all passed */
	CLI_EXIT_FAIL = 1 << 1,     /* 1: a check or a gate failed */
	CLI_EXIT_USAGE = 1 << 2,    /* 2: usage or input error */
	CLI_EXIT_ENDPOINT = 1 << 3, /* 3: the endpoint could not be used */
	CLI_EXIT_UNDERPOWERED = 1 << 4, /* 4: nothing failed, a gate underpowered */
	CLI_EXIT_INTERRUPTED = 1 << 5  /* 5: a run stopped by SIGINT/SIGTERM */
};

/* Help is rendered to fit this many columns (long option text wraps). */
#define CLI_HELP_WIDTH 80

struct cli_cmd {
	const char *name;     /* e.g. "count" or "gen haystack" */
	const char *usage;    /* synopsis after "needle NAME " */
	const char *summary;  /* one paragraph */
	const struct cli_opt *opts;
	size_t nopts;
	const char *examples; /* lines, may be NULL */
	int min_args, max_args; /* positional arguments; max -1 = unbounded */
	unsigned exits;       /* CLI_EXIT_* it can return; 0 = all four */
};

/* Outcome of cli_parse besides an error. */
enum { CLI_RUN = 0, CLI_HELP_SHOWN = 1 };

/* What `--help=FORMAT` renders (plain `--help` and `-h` are CLI_HELP_TEXT). */
enum cli_help_format {
	CLI_HELP_TEXT,  /* the help a person reads */
	CLI_HELP_MAN,   /* the command's section of needle(1), in man(7) troff */
	CLI_HELP_WORDS, /* its option names, one per line, for shell completion */
	CLI_HELP_VALUES /* "--OPTION VALUE" for each value an option with
			   choices accepts, one per line, for shell completion */
};

/*
 * Parses argv[0..argc) (argv[0] is the first argument after the subcommand
 * name). Positional arguments are collected, in order, into `args` (borrowed
 * pointers into argv; room for argc entries), their number into `*nargs`.
 * `--help`, `-h` or `--help=text|man|words` renders help into `help` and
 * returns CLI_HELP_SHOWN through `*outcome`. A usage error returns ERR_USAGE
 * with a one-line message in `d` (an unknown option close to a known one says
 * "did you mean").
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

/* Appends the words of `text` from column `col`, wrapping before column
 * `width` onto new lines that start at column `indent`, then a line feed. A
 * word longer than a line stands alone on its own. ERR_NOMEM, ERR_LIMIT. */
enum err cli_wrap(struct buf *out, const char *text, size_t col, size_t indent,
		  size_t width);

/* Prints "error: MSG" ("needle: MSG" for ERR_LOADER; "error: config 'FILE':
 * key 'NAME' ..." for an "option '--NAME' ..." whose value the config file
 * gave, config.h) and, for ERR_USAGE, "try 'needle NAME --help'" to stderr; returns the exit status for `d->code`
 * (err_exit_status: 127 for ERR_LOADER). For the CLI layer only. */
int cli_report(const char *cmd_name, const struct diag *d);

/* Prints `s` to `f` with its control characters escaped (base/ctl.h): for
 * any text a server, a record or a file chose. */
void cli_quote(FILE *f, const char *s);

/* Prints " ARG" to stderr, single-quoted for a POSIX shell when it holds
 * anything but [A-Za-z0-9_./:=@%+,-] (a command line to copy and run). */
void cli_shell_arg(const char *a);

#endif
