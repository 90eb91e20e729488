/*
 * needle templates — the built-in chat templates: each descriptor (a format
 * written as markers) and encoder (a server that runs Python, not Jinja),
 * what it covers, and the template texts it was checked against, which a
 * model folder's template is matched with (tpl.h).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "progress.h"
#include "base/embed.h"
#include "tpl/tpl_desc.h"

/* Encoder styles stand for a server's Python encoder; the others for a
 * Jinja template the descriptor reproduces. */
static const char *kind_of(const struct tpl_desc *t)
{
	return t->style == TPL_STYLE_DSV32 || t->style == TPL_STYLE_DSV4 ||
	       t->style == TPL_STYLE_DSV41 ? "encoder" : "descriptor";
}

static void print_one(const struct tpl_desc *t, int json, int first)
{
	const cJSON *shas = cJSON_GetObjectItemCaseSensitive(t->root, "template_sha256"), *s;
	struct buf line;

	if (json) {
		printf("%s{\"name\":\"%s\",\"kind\":\"%s\",\"style\":\"%s\",\"template_sha256\":[",
		       first ? "" : ",", t->name, kind_of(t),
		       tpl_desc_str(t->root, "style"));
		cJSON_ArrayForEach(s, shas)
			printf("%s\"%s\"", s == shas->child ? "" : ",", s->valuestring);
		printf("]}");
		return;
	}
	buf_init(&line, 1 << 16);
	if (!buf_printf(&line, "%-14s %-10s ", t->name, kind_of(t)))
		cli_wrap(&line, tpl_desc_str(t->root, "description"), 26, 26,
			 (size_t)progress_columns(STDOUT_FILENO) - 1);
	fputs(line.data, stdout);
	buf_release(&line);
	if (shas && shas->child)
		printf("  checked against the template texts of\n");
	cJSON_ArrayForEach(s, shas)
		printf("  sha256 %s\n", s->valuestring);
}

static enum err list(int json, struct diag *d)
{
	size_t n, i, len, shown = 0;
	const struct embed_file *f = embed_all(&n);
	enum err e = ERR_OK;

	if (json)
		printf("[");
	for (i = 0; !e && i < n; i++) {
		struct tpl_desc t;
		char name[256];

		len = strlen(f[i].name);
		if (strncmp(f[i].name, "templates/", 10) || len < 15 || len - 15 >= sizeof name ||
		    strcmp(f[i].name + len - 5, ".json"))
			continue;
		memcpy(name, f[i].name + 10, len - 15);
		name[len - 15] = '\0';
		e = tpl_desc_load(&t, name, d);
		if (!e)
			print_one(&t, json, !shown++);
		tpl_desc_release(&t);
	}
	if (json)
		printf("]\n");
	return e;
}

static const char examples[] =
	"  needle templates\n"
	"  needle templates --json\n"
	"  needle count --tokenizer ~/models/Qwen3-8B --messages m.json --explain\n";

int cmd_templates(int argc, char **argv)
{
	int json = 0;
	const struct cli_opt opts[] = {
		{"json", 0, CLI_FLAG, NULL, "print the list as JSON", &json},
	};
	const struct cli_cmd cmd = {
		"templates", "[--json]",
		"List the built-in chat templates: descriptors (a chat template written as its\n"
		"markers, checked byte for byte against the real template) and encoders (the\n"
		"Python prompt encoders vLLM and SGLang run for DeepSeek V3.2, V4 and V4.1),\n"
		"with what each covers. A model folder's own template is rendered through the\n"
		"descriptor checked against its exact text (its SHA-256 is listed here).",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 0, 0, CLI_EXIT_PASS | CLI_EXIT_USAGE};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome;
	struct diag d;

	diag_init(&d);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (d.code)
		return cli_report("templates", &d);
	if (outcome == CLI_HELP_SHOWN)
		return EXIT_PASS;
	return list(json, &d) ? cli_report("templates", &d) : EXIT_PASS;
}
