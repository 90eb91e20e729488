/*
 * cmd — the subcommands. Each takes the arguments after its own name (argv[0]
 * is the first of them) and returns the process exit status. The cmd_* files
 * are the CLI layer: they, and main, are the only code that prints or decides
 * an exit status.
 */
#ifndef NEEDLE_CMD_H
#define NEEDLE_CMD_H

int cmd_count(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_templates(int argc, char **argv);

/* The 'gen' subcommands, dispatched by cmd_gen. */
int cmd_gen_haystack(int argc, char **argv);
int cmd_gen_image(int argc, char **argv);
int cmd_gen_cases(int argc, char **argv);

#endif
