/*
 * needle gen cases — a suite file of functional cases (strict-JSON tasks,
 * tool calls, multi-turn memory, image order) expanded from a seed by
 * generators/cases.h, ready for 'needle run'.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "generators/cases.h"
#include "cli.h"
#include "cmd.h"
#include "base/io.h"
#include "base/json.h"

struct cases_opts {
	long seed;
	const char *kind, *suite, *out;
};

static const char examples[] =
	"  needle gen cases --seed 1 --out cases        # all kinds: cases/suite.json\n"
	"  needle gen cases --seed 1 --kind json --out suites/json-tasks.json\n"
	"  needle gen cases --seed 1 --kind all --out suites/smoke.json\n"
	"  needle gen cases --seed 5 --kind tool,multiturn --suite memory --out tmp\n"
	"\n"
	"Kinds: json (12 strict-JSON tasks, 3 repeats at temperature 1.0), tool\n"
	"(single, parallel and no-call tool cases), multiturn (English and Chinese\n"
	"memory scripts), image (image-order pairs with swapped twins), all.\n"
	"An --out path ending in '.json' is the suite file itself.\n";

/* The suite name when --suite is not given. */
static const char *default_name(unsigned kinds)
{
	switch (kinds) {
	case CASES_JSON: return "json-tasks";
	case CASES_TOOL: return "tool-calls";
	case CASES_MULTITURN: return "multi-turn";
	case CASES_IMAGE: return "image-order";
	case CASES_ALL: return "smoke";
	default: return "cases";
	}
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* Creates the directory that will hold `file`, if it has one. */
static enum err make_parent(const char *file, struct diag *d)
{
	const char *slash = strrchr(file, '/');
	char dir[4096];

	if (!slash || slash == file)
		return ERR_OK;
	if ((size_t)(slash - file) >= sizeof(dir))
		return diag_fail(d, ERR_INPUT, "output path '%s' is too long", file);
	memcpy(dir, file, (size_t)(slash - file));
	dir[slash - file] = '\0';
	return io_mkdirs(dir, d);
}

static enum err run(const struct cases_opts *o, unsigned kinds, struct diag *d)
{
	char path[4096];
	struct buf desc;
	cJSON *suite = NULL;
	const char *name = o->suite ? o->suite : default_name(kinds);
	enum err e;

	buf_init(&desc, 1 << 14);
	if (ends_with(o->out, ".json"))
		e = (size_t)snprintf(path, sizeof(path), "%s", o->out) >= sizeof(path)
			    ? diag_fail(d, ERR_INPUT, "output path '%s' is too long", o->out)
			    : make_parent(path, d);
	else
		e = (size_t)snprintf(path, sizeof(path), "%s/suite.json", o->out) >= sizeof(path)
			    ? diag_fail(d, ERR_INPUT, "output path '%s' is too long", o->out)
			    : io_mkdirs(o->out, d);
	if (!e && buf_printf(&desc,
			     "Functional cases generated from seed %ld (kinds: %s). "
			     "Regenerate with: needle gen cases --seed %ld --kind %s%s%s --out %s",
			     o->seed, o->kind, o->seed, o->kind, o->suite ? " --suite " : "",
			     o->suite ? o->suite : "", o->out))
		e = diag_fail(d, ERR_NOMEM, "cannot build the suite description: out of memory");
	if (!e)
		e = cases_suite((uint64_t)o->seed, kinds, name, desc.data, &suite, d);
	if (!e)
		e = json_write_file(path, suite, JSON_PRETTY | JSON_NEWLINE, d);
	if (!e)
		printf("%d cases in %s\n", cJSON_GetArraySize(cJSON_GetObjectItem(suite, "cases")),
		       path);
	cJSON_Delete(suite);
	buf_release(&desc);
	return e;
}

int cmd_gen_cases(int argc, char **argv)
{
	struct cases_opts o = {LONG_MIN, "all", NULL, NULL};
	const struct cli_opt opts[] = {
		{"seed", 's', CLI_LONG, "S", "seed for every generated value (required, >= 0)", &o.seed},
		{"kind", 'k', CLI_STR, "KIND", "json, tool, multiturn, image, all, or a comma list (default all)", &o.kind},
		{"suite", 0, CLI_STR, "NAME", "suite name (default from the kind: json-tasks, smoke, ...)", &o.suite},
		{"out", 'o', CLI_STR, "DIR|FILE.json", "writes DIR/suite.json, or FILE.json itself (required)", &o.out},
	};
	const struct cli_cmd cmd = {
		"gen cases", "--seed S [--kind json|tool|multiturn|image|all] --out DIR",
		"Write a suite file of functional cases for 'needle run': the 12 strict-JSON\n"
		"tasks, tool calls, multi-turn memory (English and Chinese) and image order.\n"
		"The same seed and kind give the same bytes.",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 0, 0,
		CLI_EXIT_PASS | CLI_EXIT_USAGE};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome;
	unsigned kinds = 0;
	struct diag d;

	diag_init(&d);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (outcome == CLI_RUN) {
		if (o.seed == LONG_MIN)
			diag_fail(&d, ERR_USAGE, "option '--seed' is required");
		else if (o.seed < 0)
			diag_fail(&d, ERR_USAGE,
				  "option '--seed' wants a non-negative integer, got '%ld'", o.seed);
		else if (!o.out)
			diag_fail(&d, ERR_USAGE, "option '--out' is required");
		else if (!*o.out)
			diag_fail(&d, ERR_USAGE, "option '--out' wants a path, got ''");
		else
			cases_parse_kinds(o.kind, &kinds, &d);
	}
	if (d.code)
		return cli_report("gen cases", &d);
	if (outcome == CLI_HELP_SHOWN)
		return EXIT_PASS;
	if (run(&o, kinds, &d))
		return cli_report("gen cases", &d);
	return EXIT_PASS;
}
