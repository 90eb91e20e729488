#include "cli.h"
#include "config.h"

#include "base/ctl.h"
#include "base/hint.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Renders the help of `cmd` into `out` in `format`. */
static enum err cli_help(const struct cli_cmd *cmd, enum cli_help_format format,
			 struct buf *out);

/* Every command's --config (config.h takes it out of argv). */
static const char config_help[] =
	"read default options from this JSON file (default: ./needle.json, else the XDG one); a named file may also set the endpoint, key and TLS options (docs/security.md)";

static const struct {
	unsigned bit;
	const char *line;
} exit_lines[] = {
	{CLI_EXIT_PASS, "  0  all passed\n"},
	{CLI_EXIT_FAIL, "  1  something failed a check or a gate\n"},
	{CLI_EXIT_USAGE, "  2  usage or input error (bad flag, bad file, unreadable tokenizer)\n"},
	{CLI_EXIT_ENDPOINT, "  3  the endpoint could not be used at all\n"},
	{CLI_EXIT_UNDERPOWERED, "  4  nothing failed, but a gate was underpowered: the runs were too\n"
				"     noisy or too small to tell a regression of its size from noise\n"},
	{CLI_EXIT_INTERRUPTED, "  5  interrupted by SIGINT or SIGTERM before the end: what finished is\n"
			       "     kept; the same command with --resume finishes it (retry on 5)\n"},
};

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

static int is_choice(const char *const *choices, const char *v)
{
	for (; *choices; choices++)
		if (!strcmp(*choices, v))
			return 1;
	return 0;
}

/* "option '--format' wants md, json or csv, got 'x'". */
static enum err wrong_choice(const struct cli_opt *o, const char *v, struct diag *d)
{
	char list[512];
	size_t n = 0, i;

	list[0] = '\0';
	for (i = 0; o->choices[i] && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", !i ? "" : o->choices[i + 1] ? ", " : " or ",
				      o->choices[i]);
	return diag_fail(d, ERR_USAGE, "option '--%s' wants %s, got '%s'", o->name, list, v);
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
		if (o->choices && !is_choice(o->choices, v))
			return wrong_choice(o, v, d);
		*(const char **)o->dest = v;
		return ERR_OK;
	case CLI_LONG: {
		long x;

		errno = 0;
		x = strtol(v, &end, 10);
		if (errno || end == v || *end || x == LONG_MIN) /* LONG_MIN: "not given" */
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
	case CLI_LIST: {
		struct cli_list *l = o->dest;

		if (l->n == CLI_LIST_MAX)
			return diag_fail(d, ERR_USAGE, "option '--%s' given more than %d times",
					 o->name, CLI_LIST_MAX);
		l->v[l->n++] = v;
		return ERR_OK;
	}
	}
	return ERR_INTERNAL;
}

/* "unknown option", with the closest long name when it looks like a typo. */
static enum err unknown_opt(const struct cli_cmd *cmd, const char *a,
			    const char *eq, struct diag *d)
{
	const char *names[CLI_OPTS_MAX + 1], *near = NULL;
	char typed[HINT_NAME_MAX + 1];
	size_t i, n = 0, len;

	if (a[1] == '-' && cmd->nopts <= CLI_OPTS_MAX) {
		len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (len <= HINT_NAME_MAX) {
			memcpy(typed, a + 2, len);
			typed[len] = '\0';
			for (i = 0; i < cmd->nopts; i++)
				names[n++] = cmd->opts[i].name;
			names[n] = NULL;
			near = hint_closest(typed, names);
		}
	}
	if (near)
		return diag_fail(d, ERR_USAGE,
				 "unknown option '%s' (did you mean '--%s'?)", a, near);
	return diag_fail(d, ERR_USAGE, "unknown option '%s'", a);
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
		return unknown_opt(cmd, a, eq, d);
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

/* Whether `a` asks for help, and in which format. */
static int help_format(const char *a, enum cli_help_format *format)
{
	static const struct {
		const char *arg;
		enum cli_help_format format;
	} forms[] = {
		{"--help", CLI_HELP_TEXT},       {"-h", CLI_HELP_TEXT},
		{"--help=text", CLI_HELP_TEXT},  {"--help=man", CLI_HELP_MAN},
		{"--help=words", CLI_HELP_WORDS}, {"--help=values", CLI_HELP_VALUES},
	};
	size_t i;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		if (!strcmp(a, forms[i].arg)) {
			*format = forms[i].format;
			return 1;
		}
	return 0;
}

enum err cli_parse(const struct cli_cmd *cmd, int argc, char **argv,
		   const char **args, int *nargs, int *outcome, struct buf *help,
		   struct diag *d)
{
	enum cli_help_format format;
	int i, only_args = 0;
	enum err e;

	*nargs = 0;
	*outcome = CLI_RUN;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!only_args && help_format(a, &format)) {
			*outcome = CLI_HELP_SHOWN;
			return cli_help(cmd, format, help);
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
	if (config_args(cmd, &argc, &argv, d))
		return -1;
	config_say();
	buf_init(&help, 1 << 16);
	e = cli_parse(cmd, argc, argv, args, nargs, &outcome, &help, d);
	if (e && outcome == CLI_HELP_SHOWN)
		diag_fail(d, e, "cannot render the help: out of memory");
	else if (!e && outcome == CLI_HELP_SHOWN)
		fputs(help.data, stdout);
	buf_release(&help);
	return e ? -1 : outcome;
}

enum err cli_wrap(struct buf *out, const char *text, size_t col, size_t indent,
		  size_t width)
{
	enum err e = ERR_OK;
	const char *p = text;

	while (!e && *p) {
		size_t n = strcspn(p, " ");

		if (col > indent && col + 1 + n > width) {
			e = buf_printf(out, "\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			e = buf_putc(out, ' ');
			col++;
		}
		if (!e)
			e = buf_append(out, p, n);
		col += n;
		p += n;
		while (*p == ' ')
			p++;
	}
	return e ? e : buf_putc(out, '\n');
}

/* An option's metavar: its own, or its choices joined by '|', in
 * out[cap]. */
static const char *metavar(const struct cli_opt *o, char *out, size_t cap)
{
	size_t n = 0, i;

	if (!o->choices)
		return o->metavar;
	out[0] = '\0';
	for (i = 0; o->choices[i] && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? "|" : "", o->choices[i]);
	return out;
}

/* The left column of an option's help line: "-x, --name METAVAR". */
static void opt_left(const struct cli_opt *o, char *left, size_t cap)
{
	char mv[256];
	const char *m = metavar(o, mv, sizeof(mv));

	snprintf(left, cap, "%c%c%c --%s%s%s", o->short_name ? '-' : ' ',
		 o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ',
		 o->name, m ? " " : "", m ? m : "");
}

/* One option line; help text past the left column wraps under itself. */
static enum err help_opt(struct buf *out, const char *left, const char *help)
{
	enum {
		LEFT = 28, HELP_COL = 2 + LEFT + 1
	};
	enum err e;

	if (strlen(left) > LEFT) {
		e = buf_printf(out, "  %s\n%*s", left, HELP_COL, "");
	} else {
		e = buf_printf(out, "  %-*s ", LEFT, left);
	}
	return e ? e : cli_wrap(out, help, HELP_COL, HELP_COL, CLI_HELP_WIDTH);
}

static unsigned exits_of(const struct cli_cmd *cmd)
{
	return cmd->exits ? cmd->exits : CLI_EXIT_PASS | CLI_EXIT_FAIL |
						 CLI_EXIT_USAGE | CLI_EXIT_ENDPOINT;
}

static enum err help_text(const struct cli_cmd *cmd, struct buf *out)
{
	char left[96];
	size_t i, usage_col = strlen("usage: needle  ") + strlen(cmd->name);
	enum err e;

	e = buf_printf(out, "usage: needle %s ", cmd->name);
	if (!e)
		e = cli_wrap(out, cmd->usage, usage_col, usage_col, CLI_HELP_WIDTH);
	if (!e)
		e = buf_printf(out, "\n%s\n\nOptions:\n", cmd->summary);
	for (i = 0; !e && i < cmd->nopts; i++) {
		opt_left(&cmd->opts[i], left, sizeof(left));
		e = help_opt(out, left, cmd->opts[i].help);
	}
	if (!e)
		e = help_opt(out, "    --config FILE", config_help);
	if (!e)
		e = help_opt(out, "-h, --help", "show this help");
	if (!e && cmd->examples)
		e = buf_printf(out, "\nExamples:\n%s", cmd->examples);
	if (!e)
		e = buf_puts(out, "\nExit status:\n");
	for (i = 0; !e && i < sizeof(exit_lines) / sizeof(exit_lines[0]); i++)
		if (exits_of(cmd) & exit_lines[i].bit)
			e = buf_puts(out, exit_lines[i].line);
	return e;
}

/* Appends `n` bytes of `text` as man(7) text: backslashes and hyphens
 * escaped, a control character at a line's start defused. */
static enum err man_escape(struct buf *out, const char *text, size_t n)
{
	enum err e = ERR_OK;
	size_t i;

	for (i = 0; !e && i < n; i++) {
		if ((i == 0 || text[i - 1] == '\n') &&
		    (text[i] == '.' || text[i] == '\''))
			e = buf_puts(out, "\\&");
		if (e)
			break;
		if (text[i] == '\\')
			e = buf_puts(out, "\\e");
		else if (text[i] == '-')
			e = buf_puts(out, "\\-");
		else
			e = buf_putc(out, text[i]);
	}
	return e;
}

static enum err man_line(struct buf *out, const char *before,
			 const char *text, const char *after)
{
	enum err e = buf_puts(out, before);

	if (!e)
		e = man_escape(out, text, strlen(text));
	return e ? e : buf_puts(out, after);
}

static enum err help_man(const struct cli_cmd *cmd, struct buf *out)
{
	enum err e;
	size_t i;

	e = man_line(out, ".SS \"needle ", cmd->name, "\"\n");
	if (!e)
		e = man_line(out, ".B needle ", cmd->name, "\n");
	if (!e)
		e = man_line(out, "", cmd->usage, "\n.PP\n");
	if (!e)
		e = man_line(out, "", cmd->summary, "\n");
	for (i = 0; !e && i < cmd->nopts; i++) {
		const struct cli_opt *o = &cmd->opts[i];
		char left[96];

		opt_left(o, left, sizeof(left));
		e = man_line(out, ".TP\n.B ", left + 4 * !o->short_name, "\n");
		if (!e)
			e = man_line(out, "", o->help, "\n");
	}
	if (!e)
		e = man_line(out, ".TP\n.B ", "--config FILE", "\n");
	if (!e)
		e = man_line(out, "", config_help, "\n");
	if (!e && cmd->examples)
		e = man_line(out, ".PP\nExamples:\n.nf\n.RS\n", cmd->examples,
			     ".RE\n.fi\n");
	return e;
}

static enum err help_words(const struct cli_cmd *cmd, struct buf *out)
{
	enum err e = buf_puts(out, "--help\n--config\n");
	size_t i;

	for (i = 0; !e && i < cmd->nopts; i++)
		e = buf_printf(out, "--%s\n", cmd->opts[i].name);
	return e;
}

static enum err help_values(const struct cli_cmd *cmd, struct buf *out)
{
	enum err e = ERR_OK;
	size_t i, k;

	for (i = 0; !e && i < cmd->nopts; i++)
		for (k = 0; !e && cmd->opts[i].choices && cmd->opts[i].choices[k]; k++)
			e = buf_printf(out, "--%s %s\n", cmd->opts[i].name, cmd->opts[i].choices[k]);
	return e;
}

static enum err cli_help(const struct cli_cmd *cmd, enum cli_help_format format,
			 struct buf *out)
{
	switch (format) {
	case CLI_HELP_VALUES:
		return help_values(cmd, out);
	case CLI_HELP_MAN:
		return help_man(cmd, out);
	case CLI_HELP_WORDS:
		return help_words(cmd, out);
	case CLI_HELP_TEXT:
		break;
	}
	return help_text(cmd, out);
}

int cli_report(const char *cmd_name, const struct diag *d)
{
	/* a missing library reads as the dynamic loader's complaint would */
	const char *m = d->msg, *file = NULL;
	size_t n = 0;

	/* "option '--NAME' ..." of a value the config file gave: its file and key */
	if (!strncmp(m, "option '--", 10)) {
		n = strcspn(m + 10, "'");
		file = m[10 + n] ? config_blame(m + 10, n) : NULL;
	}
	if (file)
		fprintf(stderr, "error: config '%s': key '%.*s'", file, (int)n, m + 10);
	else
		fprintf(stderr, "%s: ", d->code == ERR_LOADER ? "needle" : "error");
	cli_quote(stderr, file ? m + 11 + n : m[0] ? m : err_name(d->code));
	fputc('\n', stderr);
	if (d->code == ERR_USAGE && cmd_name)
		fprintf(stderr, "try 'needle %s --help'\n", cmd_name);
	return err_exit_status(d->code);
}

void cli_quote(FILE *f, const char *s)
{
	struct buf b;

	buf_init(&b, BUF_MAX_DEFAULT);
	if (ctl_escape(&b, s, strlen(s)))
		fputs("(text not shown: out of memory)", f);
	else
		fwrite(b.data, 1, b.len, f);
	buf_release(&b);
}

void cli_shell_arg(const char *a)
{
	const char *p;

	if (*a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=@%+,-") ==
		      strlen(a)) {
		fprintf(stderr, " %s", a);
		return;
	}
	fputs(" '", stderr);
	for (p = a; *p; p++)
		fputs(*p == '\'' ? "'\\''" : (char[2]){*p, 0}, stderr);
	fputc('\'', stderr);
}
