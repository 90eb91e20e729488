/*
 * cmd — the subcommands. Each takes the arguments after its own name (argv[0]
 * is the first of them) and returns the process exit status. The cmd_* files
 * are the CLI layer: they, and main, are the only code that prints or decides
 * an exit status.
 */
#ifndef NEEDLE_CMD_H
#define NEEDLE_CMD_H

#include <stddef.h>

/* One entry of a command table (main's top level, gen's kinds). */
struct cmd_entry {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary; /* one line */
};

int cmd_count(int argc, char **argv);
int cmd_suites(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_templates(int argc, char **argv);

/* The 'gen' subcommands, dispatched by cmd_gen. */
int cmd_gen_haystack(int argc, char **argv);
int cmd_gen_image(int argc, char **argv);
int cmd_gen_cases(int argc, char **argv);

/* The top level's own commands (cmd_help.c), given its table of `n`
 * commands: `needle help [CMD]`, `needle man` (needle(1) in troff, every
 * command's section rendered from its option table) and `needle completion
 * bash|zsh` (a script that asks `needle CMD --help=words` as you type). */
int cmd_help(const struct cmd_entry *cmds, size_t n, int argc, char **argv);
int cmd_man(const struct cmd_entry *cmds, size_t n, int argc, char **argv);
int cmd_completion(int argc, char **argv);

/* Runs the entry of `cmds` named `name` with the rest of the arguments, or
 * says "unknown WHAT" (with "did you mean") and returns EXIT_USAGE.
 * `try` is the help to point at, e.g. "needle gen --help". */
int cmd_dispatch(const struct cmd_entry *cmds, size_t n, const char *what,
		 const char *try, const char *name, int argc, char **argv);

#endif
