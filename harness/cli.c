#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char exit_codes[] =
	"Exit status:\n"
	"  0  all passed\n"
	"  1  something failed a check or a gate\n"
	"  2  usage or input error (bad flag, bad file, unreadable tokenizer)\n"
	"  3  the endpoint could not be used at all\n";

static const struct cli_opt *find_long(const struct cli_cmd *cmd,
				       const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < cmd->nopts; i++)
		if (strlen(cmd->opts[i].name) == n &&
		    memcmp(cmd->opts[i].name, name, n) == 0)
			return &cmd->opts[i];
	return NULL;
}

static const struct cli_opt *find_short(const struct cli_cmd *cmd, char c)
{
	size_t i;

	for (i = 0; i < cmd->nopts; i++)
		if (cmd->opts[i].short_name == c)
			return &cmd->opts[i];
	return NULL;
}

static enum err set_value(const struct cli_opt *o, const char *v,
			  struct diag *d)
{
	char *end;

	switch (o->kind) {
	case CLI_FLAG:
		*(int *)o->dest = 1;
		return ERR_OK;
	case CLI_STR:
		*(const char **)o->dest = v;
		return ERR_OK;
	case CLI_LONG: {
		long x;

		errno = 0;
		x = strtol(v, &end, 10);
		if (errno || end == v || *end)
			return diag_fail(d, ERR_USAGE,
					 "option '--%s' wants an integer, got '%s'",
					 o->name, v);
		*(long *)o->dest = x;
		return ERR_OK;
	}
	case CLI_DOUBLE: {
		double x;

		errno = 0;
		x = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(x) || x < 0)
			return diag_fail(d, ERR_USAGE,
					 "option '--%s' wants a non-negative number, got '%s'",
					 o->name, v);
		*(double *)o->dest = x;
		return ERR_OK;
	}
	}
	return ERR_INTERNAL;
}

/* Handles argv[*i], an option; may consume argv[*i + 1] as its value. */
static enum err parse_opt(const struct cli_cmd *cmd, int argc, char **argv,
			  int *i, struct diag *d)
{
	const char *a = argv[*i], *eq = NULL, *v;
	const struct cli_opt *o;

	if (a[1] == '-') {
		eq = strchr(a + 2, '=');
		o = find_long(cmd, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
	} else {
		o = a[2] ? NULL : find_short(cmd, a[1]);
	}
	if (!o)
		return diag_fail(d, ERR_USAGE, "unknown option '%s'", a);
	if (o->kind == CLI_FLAG) {
		if (eq)
			return diag_fail(d, ERR_USAGE,
					 "option '--%s' takes no value", o->name);
		return set_value(o, NULL, d);
	}
	if (eq) {
		v = eq + 1;
	} else {
		if (*i + 1 >= argc)
			return diag_fail(d, ERR_USAGE, "option '--%s' needs a value",
					 o->name);
		v = argv[++*i];
	}
	return set_value(o, v, d);
}

enum err cli_parse(const struct cli_cmd *cmd, int argc, char **argv,
		   const char **args, int *nargs, int *outcome, struct buf *help,
		   struct diag *d)
{
	int i, only_args = 0;
	enum err e;

	*nargs = 0;
	*outcome = CLI_RUN;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!only_args && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			*outcome = CLI_HELP_SHOWN;
			return cli_help(cmd, help);
		}
		if (!only_args && !strcmp(a, "--")) {
			only_args = 1;
		} else if (!only_args && a[0] == '-' && a[1] != '\0') {
			e = parse_opt(cmd, argc, argv, &i, d);
			if (e)
				return e;
		} else {
			args[(*nargs)++] = a;
		}
	}
	if (*nargs < cmd->min_args)
		return diag_fail(d, ERR_USAGE, "missing argument: usage: needle %s %s",
				 cmd->name, cmd->usage);
	if (cmd->max_args >= 0 && *nargs > cmd->max_args)
		return diag_fail(d, ERR_USAGE, "unexpected argument '%s'",
				 args[cmd->max_args]);
	return ERR_OK;
}

int cli_start(const struct cli_cmd *cmd, int argc, char **argv,
	      const char **args, int *nargs, struct diag *d)
{
	struct buf help;
	int outcome = CLI_RUN;
	enum err e;

	*nargs = 0;
	if (argc > CLI_ARGS_MAX) {
		diag_fail(d, ERR_USAGE, "too many arguments");
		return -1;
	}
	buf_init(&help, 1 << 16);
	e = cli_parse(cmd, argc, argv, args, nargs, &outcome, &help, d);
	if (e && outcome == CLI_HELP_SHOWN)
		diag_fail(d, e, "cannot render the help: out of memory");
	else if (!e && outcome == CLI_HELP_SHOWN)
		fputs(help.data, stdout);
	buf_release(&help);
	return e ? -1 : outcome;
}

enum err cli_help(const struct cli_cmd *cmd, struct buf *out)
{
	enum err e = ERR_OK;
	size_t i;

	e = buf_printf(out, "usage: needle %s %s\n\n%s\n\nOptions:\n", cmd->name,
		       cmd->usage, cmd->summary);
	for (i = 0; !e && i < cmd->nopts; i++) {
		const struct cli_opt *o = &cmd->opts[i];
		char left[64];

		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name,
				 o->name, o->metavar ? " " : "",
				 o->metavar ? o->metavar : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
				 o->metavar ? " " : "", o->metavar ? o->metavar : "");
		e = buf_printf(out, "  %-28s %s\n", left, o->help);
	}
	if (!e)
		e = buf_printf(out, "  %-28s %s\n", "-h, --help", "show this help");
	if (!e && cmd->examples)
		e = buf_printf(out, "\nExamples:\n%s", cmd->examples);
	if (!e)
		e = buf_printf(out, "\n%s", exit_codes);
	return e;
}

int cli_report(const char *cmd_name, const struct diag *d)
{
	fprintf(stderr, "error: %s\n", d->msg[0] ? d->msg : err_name(d->code));
	if (d->code == ERR_USAGE && cmd_name)
		fprintf(stderr, "try 'needle %s --help'\n", cmd_name);
	return err_exit_status(d->code);
}
