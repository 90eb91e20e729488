/*
 * needle help / man / completion, and the dispatch every command table
 * shares. Each command renders its own section from its option table
 * (`CMD --help=man`, `CMD --help=words`), so the manual and the completion
 * never drift from the parser.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "topics.h"
#include "base/err.h"
#include "base/hint.h"

#ifndef NEEDLE_VERSION
#define NEEDLE_VERSION "0.0.0-dev"
#endif

/* Most entries a command table may have (for "did you mean"). */
#define CMD_TABLE_MAX 32

int cmd_dispatch(const struct cmd_entry *cmds, size_t n, const char *what,
		 const char *try, const char *name, int argc, char **argv)
{
	const char *names[CMD_TABLE_MAX + 1], *near;
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, cmds[i].name))
			return cmds[i].fn(argc, argv);
	for (i = 0; i < n && i < CMD_TABLE_MAX; i++)
		names[i] = cmds[i].name;
	names[i] = NULL;
	near = hint_closest(name, names);
	if (near)
		fprintf(stderr, "error: unknown %s '%s' (did you mean '%s'?)\n", what,
			name, near);
	else
		fprintf(stderr, "error: unknown %s '%s'\n", what, name);
	fprintf(stderr, "try '%s'\n", try);
	return EXIT_USAGE;
}

int cmd_help(const struct cmd_entry *cmds, size_t n, int argc, char **argv)
{
	char help[] = "--help";
	char *args[3] = {NULL, help, NULL};

	size_t i;

	if (argc == 0 || argc > 2) {
		fprintf(stderr, "error: usage: needle help [COMMAND [KIND] | TOPIC]\n");
		return EXIT_USAGE;
	}
	if (argc == 1 && !strcmp(argv[0], "topics")) {
		printf("Topics of 'needle help TOPIC' (the pages of the documentation, docs/):\n\n");
		topics_list(stdout);
		return EXIT_PASS;
	}
	/* A name that is no command may be a topic (topics.h). */
	for (i = 0; i < n && strcmp(argv[0], cmds[i].name); i++)
		;
	if (argc == 1 && i == n && !topics_print(argv[0], stdout))
		return EXIT_PASS;
	if (argc == 1 && !strcmp(argv[0], "man")) {
		printf("usage: needle man\n\nPrint the manual page, needle(1), rendered from the commands' own\n"
		       "option tables (read it with: needle man | man -l -).\n");
		return EXIT_PASS;
	}
	if (argc == 1 && !strcmp(argv[0], "completion")) {
		printf("usage: needle completion bash|zsh\n\nPrint shell completion for bash or zsh, rendered from the commands'\n"
		       "option tables (e.g. needle completion bash > /etc/bash_completion.d/needle).\n");
		return EXIT_PASS;
	}
	if (argc == 1)
		return cmd_dispatch(cmds, n, "command", "needle --help", argv[0], 1,
				    args + 1);
	/* needle help gen haystack == needle gen haystack --help */
	args[0] = argv[1];
	return cmd_dispatch(cmds, n, "command", "needle --help", argv[0], 2, args);
}

static const char man_head[] =
	".TH NEEDLE 1 \"\" \"needle " NEEDLE_VERSION "\" \"User Commands\"\n"
	".SH NAME\n"
	"needle \\- recall, smoke and load checks for vLLM and SGLang deployments\n"
	".SH SYNOPSIS\n"
	".B needle\n"
	".I COMMAND\n"
	"[\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n"
	".SH DESCRIPTION\n"
	"needle decides whether a served model can take traffic: it checks recall\n"
	"from prompts of an exact token length, functional smoke tests and the\n"
	"server's token accounting against the deployment's own tokenizer and chat\n"
	"template, and diffs runs with gates that set the exit status. Every\n"
	"request goes through the OpenAI\\-compatible streaming endpoints; HTTP 200\n"
	"alone is never success.\n"
	".SH COMMANDS\n";

static const char man_tail[] =
	".SH ENVIRONMENT\n"
	".TP\n.B OPENAI_BASE_URL\nthe endpoint when \\-\\-base\\-url is not given\n"
	".TP\n.B OPENAI_API_KEY\nthe API key, sent as a bearer token and never written\n"
	".TP\n.B NEEDLE_SUITES_DIR\nwhere the shipped suites are (default: next to the binary)\n"
	".TP\n.B NEEDLE_CONFIG\\fR, \\fBXDG_CONFIG_HOME\nthe config file of default options: \\-\\-config FILE, else NEEDLE_CONFIG, else ./needle.json,\n"
	"else XDG_CONFIG_HOME/needle/config.json, else ~/.config/needle/config.json (the command line\n"
	"wins); a file found, not named, may not set base\\-url, endpoints, api\\-key\\-env, cacert or insecure\n"
	".TP\n.B CURL_CA_BUNDLE\\fR, \\fBSSL_CERT_FILE\nthe CA file for https when \\-\\-cacert is not given, in that order\n"
	".TP\n.B HF_HUB_CACHE\\fR, \\fBHF_HOME\nthe Hugging Face cache a \\-\\-tokenizer ORG/NAME is read from (HF_HUB_CACHE, else\n"
	"HF_HOME/hub, else XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub); offline\n"
	".TP\n.B XDG_CACHE_HOME\\fR, \\fBHOME\nthe tokenizer cache is XDG_CACHE_HOME/needle (else ~/.cache/needle)\n"
	".TP\n.B NEEDLE_NO_CACHE\nset (not 0): do not read or write the tokenizer cache\n"
	".TP\n.B NEEDLE_PROGRESS_SECONDS\nthe interval of the run's progress line when standard error is not a\n"
	"terminal (default 30)\n"
	".TP\n.B SLURM_ARRAY_TASK_ID\\fR, \\fBSLURM_ARRAY_TASK_COUNT\\fR, \\fBSLURM_ARRAY_TASK_MIN\\fR, \\fBSLURM_ARRAY_TASK_STEP\n"
	"the shard of a Slurm job array when \\-\\-shard is not given\n"
	".TP\n.B JOB_COMPLETION_INDEX\\fR, \\fBNEEDLE_SHARDS\nthe shard of a Kubernetes Indexed Job and the shard count\n"
	".TP\n.B COLUMNS\nthe width of the progress line when the terminal does not say\n"
	".TP\n.B NEEDLE_NO_SCAN\nset: count with PCRE2 pre-tokenizer patterns, not the hand-written scanners (for comparison)\n"
	".TP\n.B NEEDLE_FAIL_ALLOC\nN: fail the Nth allocation (the tests' out-of-memory mode)\n";

static const char man_see_also[] =
	".SH SEE ALSO\n"
	"\\fBneedle help topics\\fR lists the pages of the documentation (docs/ in the\n"
	"source); \\fBneedle help TOPIC\\fR prints one.\n";

int cmd_man(const struct cmd_entry *cmds, size_t n, int argc, char **argv)
{
	char man[] = "--help=man";
	char *args[2] = {man, NULL};
	size_t i;
	int st = EXIT_PASS;

	(void)argv;
	if (argc) {
		fprintf(stderr, "error: usage: needle man\n");
		return EXIT_USAGE;
	}
	fputs(man_head, stdout);
	for (i = 0; i < n && st == EXIT_PASS; i++) {
		fflush(stdout);
		st = cmds[i].fn(1, args);
	}
	fputs(man_tail, stdout);
	/* Rendered from docs/cutover.md "Exit statuses", as `needle help
	 * exit-status` prints it. */
	fputs(".SH EXIT STATUS\n", stdout);
	if (topics_man_exit_status(stdout)) {
		fprintf(stderr, "error: the embedded docs/cutover.md has no exit statuses\n");
		return EXIT_USAGE;
	}
	fputs(man_see_also, stdout);
	return fflush(stdout) ? EXIT_USAGE : st;
}

static const char bash_completion[] =
	"# bash completion for needle (from 'needle completion bash')\n"
	"_needle() {\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} bin=${COMP_WORDS[0]} words\n"
	"\tif [ \"$COMP_CWORD\" -gt 2 ] && [ \"${prev#--}\" != \"$prev\" ] &&\n"
	"\t\twords=$(\"$bin\" \"${COMP_WORDS[1]}\" --help=values 2>/dev/null | awk -v o=\"$prev\" '$1 == o { print $2 }') &&\n"
	"\t\t[ -n \"$words\" ]; then\n"
	"\t\t:\n"
	"\telif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	"\t\twords=$(\"$bin\" --help=words 2>/dev/null)\n"
	"\telif [ \"${COMP_WORDS[1]}\" = gen ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
	"\t\twords=$(\"$bin\" gen --help=words 2>/dev/null)\n"
	"\telif [ \"${COMP_WORDS[1]}\" = help ]; then\n"
	"\t\twords=$(\"$bin\" --help=words 2>/dev/null)\n"
	"\telif [ \"${cur#-}\" != \"$cur\" ]; then\n"
	"\t\tif [ \"${COMP_WORDS[1]}\" = gen ]; then\n"
	"\t\t\twords=$(\"$bin\" gen \"${COMP_WORDS[2]}\" --help=words 2>/dev/null)\n"
	"\t\telse\n"
	"\t\t\twords=$(\"$bin\" \"${COMP_WORDS[1]}\" --help=words 2>/dev/null)\n"
	"\t\tfi\n"
	"\telse\n"
	"\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
	"}\n"
	"complete -o filenames -F _needle needle\n";

static const char zsh_completion[] =
	"#compdef needle\n"
	"# zsh completion for needle (from 'needle completion zsh')\n"
	"_needle() {\n"
	"\tlocal -a cands\n"
	"\tif (( CURRENT > 3 )) && [[ $words[CURRENT-1] == --* ]] &&\n"
	"\t\tcands=(${(f)\"$($words[1] $words[2] --help=values 2>/dev/null | awk -v o=$words[CURRENT-1] '$1 == o { print $2 }')\"}) &&\n"
	"\t\t(( ${#cands} )); then\n"
	"\t\t:\n"
	"\telif (( CURRENT == 2 )); then\n"
	"\t\tcands=(${(f)\"$($words[1] --help=words 2>/dev/null)\"})\n"
	"\telif [[ $words[2] == gen ]] && (( CURRENT == 3 )); then\n"
	"\t\tcands=(${(f)\"$($words[1] gen --help=words 2>/dev/null)\"})\n"
	"\telif [[ $PREFIX == -* && $words[2] == gen ]]; then\n"
	"\t\tcands=(${(f)\"$($words[1] gen $words[3] --help=words 2>/dev/null)\"})\n"
	"\telif [[ $PREFIX == -* ]]; then\n"
	"\t\tcands=(${(f)\"$($words[1] $words[2] --help=words 2>/dev/null)\"})\n"
	"\telse\n"
	"\t\t_files\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tcompadd -a cands\n"
	"}\n"
	"_needle \"$@\"\n";

int cmd_completion(int argc, char **argv)
{
	if (argc == 1 && !strcmp(argv[0], "bash")) {
		fputs(bash_completion, stdout);
		return EXIT_PASS;
	}
	if (argc == 1 && !strcmp(argv[0], "zsh")) {
		fputs(zsh_completion, stdout);
		return EXIT_PASS;
	}
	fprintf(stderr, "error: usage: needle completion bash|zsh\n");
	return EXIT_USAGE;
}
