/*
 * needle count — the number of tokens the server will see.
 *
 * Plain text is counted as-is, with no special tokens added (the server's
 * add_special_tokens=false for rendered chat prompts). With --template and
 * --messages the messages are rendered into the prompt string first and the
 * whole string is counted, generation prompt included.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "cli.h"
#include "cmd.h"
#include "config.h"
#include "base/io.h"
#include "base/mem.h"
#include "tok/tok.h"
#include "tpl/tpl.h"
#include "tpl/tpl_hub.h"
#include "tpl/tpl_model.h"
#include "tpl/tpl_setup.h"
#include "tpl/tpl_py.h"

struct count_opts {
	const char *tokenizer, *template_name, *messages, *jsonl, *kwargs, *tools;
	const char *server, *effort, *date;
	const char *revision;      /* of a --tokenizer ORG/NAME */
	int json, print_prompt, ids, special, explain;
};

/* Prints the token ids of `text` on one line (--ids). */
static enum err print_ids(const struct tok *t, const struct count_opts *o,
			  const char *text, size_t len, struct diag *d)
{
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0, i;
	enum err e = tok_encode(t, text, len, o->special, &ids, &n, &cap, d);

	for (i = 0; !e && i < n; i++)
		printf(i ? " %u" : "%u", (unsigned)ids[i]);
	if (!e)
		putchar('\n');
	mem_free(ids);
	return e;
}

static const char examples[] =
	"  needle count --tokenizer tokenizer.json notes.txt\n"
	"  cat notes.txt | needle count --tokenizer tokenizer.json -\n"
	"  needle count --tokenizer tokenizer.json --jsonl strings.jsonl\n"
	"  needle count --tokenizer tokenizer.json --template deepseek-v3 \\\n"
	"      --messages prompt.json --json\n"
	"  needle count --tokenizer tokenizer.json --template deepseek-v3.1 \\\n"
	"      --kwargs '{\"thinking\":true}' --messages prompt.json\n"
	"  needle count --tokenizer tokenizer.json --template qwen3 --server sglang \\\n"
	"      --reasoning-effort none --messages prompt.json\n"
	"  needle count --tokenizer ~/models/Qwen3-8B --messages prompt.json --explain\n"
	"  HF_HOME=/data/hf needle count --tokenizer deepseek-ai/DeepSeek-V3 notes.txt\n"
	"  needle count --tokenizer ~/models/DeepSeek-V4.1-Flash \\\n"
	"      --template deepseek-v4.1 --kwargs '{\"thinking\":true}' \\\n"
	"      --reasoning-effort max --messages prompt.json\n";

/* Reads the JSON array of `kind` ("messages", "tools") from `path` into
 * `*out` (owned), numbers as Python's json.loads reads them. */
static enum err read_array(const char *path, const char *kind, struct buf *raw,
			   cJSON **out, struct diag *d)
{
	char what[256];
	enum err e;

	buf_reset(raw);
	if ((e = io_read_file(path, raw, d)) || (e = tpl_check_nul(raw->data, raw->len, path, d)))
		return e;
	snprintf(what, sizeof what, "%s '%.200s'", kind, path);
	if ((e = tpl_py_parse(raw->data, raw->len, out, what, d)))
		return e;
	if (!cJSON_IsArray(*out))
		return diag_fail(d, ERR_INPUT, "cannot parse %s '%s': expected a JSON array of %s",
				 kind, path, kind);
	return ERR_OK;
}

/* Renders --messages through the template `t` into `out`. */
static enum err render_messages(const struct count_opts *o, const struct tpl *t,
				struct buf *out, struct diag *d)
{
	struct buf raw;
	cJSON *msgs = NULL, *kw = NULL, *tools = NULL, *eff = NULL;
	struct tpl_render_opts ro = {0};
	enum err e;

	buf_init(&raw, BUF_MAX_DEFAULT);
	e = o->server ? tpl_server_parse(o->server, &ro.server, d) : ERR_OK;
	if (e) {
		diag_prefix(d, "option '--server'");
		goto out;
	}
	if ((e = tpl_clock_pin(o->date, d)))
		goto out;
	if (o->effort) { /* the request's top-level reasoning_effort, a string */
		eff = cJSON_CreateString(o->effort);
		if (!eff) {
			e = diag_fail(d, ERR_NOMEM, "out of memory");
			goto out;
		}
		ro.reasoning_effort = eff;
	}
	if ((e = read_array(o->messages, "messages", &raw, &msgs, d)))
		goto out;
	if (o->kwargs) {
		e = tpl_py_parse(o->kwargs, strlen(o->kwargs), &kw, "option '--kwargs'", NULL);
		if (e == ERR_NOMEM)
			goto out;
		if (!kw || !cJSON_IsObject(kw)) {
			e = diag_fail(d, ERR_USAGE,
				      "option '--kwargs' wants a JSON object, got '%s'",
				      o->kwargs);
			goto out;
		}
	}
	if (o->tools && (e = read_array(o->tools, "tools", &raw, &tools, d)))
		goto out;
	e = tpl_render_ex(t, msgs, tools, kw, 1, &ro, out, d);
	if (e)
		diag_prefix(d, "%s", o->messages);
out:
	cJSON_Delete(eff);
	cJSON_Delete(msgs);
	cJSON_Delete(kw);
	cJSON_Delete(tools);
	buf_release(&raw);
	return e;
}

/* The tokenizer (a file or a model folder's) and, for --messages, the
 * template (--template, else the folder's own); warnings and --explain go
 * to standard error. */
static enum err load(const struct count_opts *o, struct tok **t, struct tpl **tp,
		     struct diag *d)
{
	struct buf warn;
	enum err e;

	buf_init(&warn, 1 << 20);
	e = tpl_setup(o->tokenizer, o->template_name, t, o->messages ? tp : NULL, &warn, d);
	if (warn.len)
		fputs(warn.data, stderr);
	if (!e && o->explain)
		fputs(*tp ? tpl_explain(*tp) : "template: none (the text is counted as it is)\n", stderr);
	buf_release(&warn);
	return e;
}

/* One count per line of a file of JSON strings. */
static enum err count_jsonl(const struct tok *t, const struct count_opts *o,
			    const char *path, struct diag *d)
{
	struct buf raw;
	size_t line = 0, pos = 0;
	enum err e;

	buf_init(&raw, BUF_MAX_DEFAULT);
	e = io_read_file(path, &raw, d);
	while (!e && pos < raw.len) {
		char *nl = memchr(raw.data + pos, '\n', raw.len - pos);
		size_t end = nl ? (size_t)(nl - raw.data) : raw.len, n = 0;
		cJSON *s;

		line++;
		/* cJSON ends strings at \u0000, so the count would be of a prefix */
		e = tpl_check_nul(raw.data + pos, end - pos, path, d);
		if (e) {
			diag_prefix(d, "line %zu", line);
			break;
		}
		s = cJSON_ParseWithLength(raw.data + pos, end - pos);
		if (!s || !cJSON_IsString(s)) {
			e = diag_fail(d, ERR_INPUT,
				      "cannot read '%s' line %zu: expected one JSON string",
				      path, line);
		} else if (o->ids) {
			e = print_ids(t, o, s->valuestring, strlen(s->valuestring), d);
			if (e)
				diag_prefix(d, "%s line %zu", path, line);
		} else {
			e = tok_count(t, s->valuestring, strlen(s->valuestring), &n, d);
			if (e)
				diag_prefix(d, "%s line %zu", path, line);
			else
				printf("%zu\n", n);
		}
		cJSON_Delete(s);
		pos = end + 1;
	}
	buf_release(&raw);
	return e;
}

static int run(const struct count_opts *o, const char *file, struct diag *d)
{
	/* What a bad-text diagnostic names. */
	const char *subject = o->messages ? o->messages
			      : strcmp(file, "-") ? file : "<stdin>";
	struct tok *t = NULL;
	struct tpl *tp = NULL;
	struct buf text;
	double t0 = io_now_ms(), t1, t2;
	size_t n = 0, len = 0;
	const char *data = NULL, *map = NULL;
	enum err e = load(o, &t, &tp, d);

	t1 = io_now_ms();
	buf_init(&text, BUF_MAX_DEFAULT);
	if (e)
		goto out;
	if (o->messages)
		e = render_messages(o, tp, &text, d);
	else if (!o->jsonl && io_map_file(file, 0, BUF_MAX_DEFAULT, &map, &len))
		data = map;
	else if (!o->jsonl)
		e = io_read_file(file, &text, d);
	if (!map) {
		data = text.data;
		len = text.len;
	}
	if (!e && o->print_prompt) {
		fwrite(data, 1, len, stdout);
		goto out;
	}
	if (!e && o->jsonl) {
		e = count_jsonl(t, o, o->jsonl, d);
		goto out;
	}
	if (!e && o->ids) {
		e = print_ids(t, o, data, len, d);
		if (e)
			diag_prefix(d, "%s", subject);
		goto out;
	}
	if (!e) {
		e = tok_count(t, data, len, &n, d);
		if (e)
			diag_prefix(d, "%s", subject);
	}
	t2 = io_now_ms();
	if (!e && o->json)
		printf("{\"count\":%zu,\"bytes\":%zu,\"ms\":%.3f,\"load_ms\":%.3f,"
		       "\"count_ms\":%.3f,\"tokenizer_sha256\":\"%s\"}\n",
		       n, len, t2 - t0, t1 - t0, t2 - t1, tok_sha256(t));
	else if (!e)
		printf("%zu\n", n);
out:
	tok_free(t);
	tpl_free(tp);
	if (map)
		io_unmap_file(map, len);
	buf_release(&text);
	return e ? cli_report("count", d) : EXIT_PASS;
}

int cmd_count(int argc, char **argv)
{
	struct count_opts o = {0};
	const struct cli_opt opts[] = {
		{"tokenizer", 't', CLI_STR, "PATH|DIR|ORG/NAME", "tokenizer.json, sentencepiece .model, a model folder, or a model id in the local Hugging Face cache (required)", &o.tokenizer},
		{"revision", 0, CLI_STR, "REV", "with --tokenizer ORG/NAME: the branch, tag or commit in the cache (default main)", &o.revision},
		{"template", 0, CLI_STR, "NAME|PATH", "chat template for --messages: a built-in name (needle templates), a .jinja file or tokenizer_config.json; default: the model folder's", &o.template_name},
		{"explain", 0, CLI_FLAG, NULL, "say on standard error which template file is used and why", &o.explain},
		{"messages", 0, CLI_STR, "FILE", "count the chat prompt rendered from a JSON messages array", &o.messages},
		{"kwargs", 0, CLI_STR, "JSON", "chat_template_kwargs for --messages, e.g. '{\"thinking\":true}'", &o.kwargs},
		{"tools", 0, CLI_STR, "FILE", "the request's tools (a JSON array) for --messages", &o.tools},
		{"server", 0, CLI_STR, "vllm|sglang", "prepare --messages as this server does (default vllm)", &o.server},
		{"reasoning-effort", 0, CLI_STR, "EFFORT", "the request's reasoning_effort: sets the server's thinking defaults", &o.effort},
		{"date", 0, CLI_STR, "YYYY-MM-DD[THH:MM:SS]", "the server's local time for a template's strftime_now (default: now)", &o.date},
		{"jsonl", 0, CLI_STR, "FILE", "one JSON string per line in, one count per line out", &o.jsonl},
		{"json", 0, CLI_FLAG, NULL, "print count, bytes, milliseconds and tokenizer SHA-256 as JSON", &o.json},
		{"print-prompt", 0, CLI_FLAG, NULL, "print the rendered prompt instead of counting it", &o.print_prompt},
		{"ids", 0, CLI_FLAG, NULL, "print the token ids (space-separated, one line per text) instead of the count", &o.ids},
		{"add-special", 0, CLI_FLAG, NULL, "with --ids: apply the post-processor template (BOS/EOS)", &o.special},
	};
	const struct cli_cmd cmd = {
		"count", "--tokenizer PATH|DIR|ORG/NAME [[--template NAME] --messages FILE | --jsonl FILE | FILE|-]",
		"Count tokens exactly as the server's tokenizer does, with no special tokens\n"
		"added. Reads FILE, or standard input for '-' or no FILE.\n"
		"A template no built-in name reproduces runs in needle's Jinja interpreter\n"
		"under fixed limits (nesting as deep as Python compiles and runs it, 50M\n"
		"steps, 16 Gi units of work in builtins, 512 MiB of values, a 256 MiB parsed\n"
		"template, 60 s; docs/chat-templates.md): past one, exit\n"
		"2 with the template line and column.",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 0, 1,
		CLI_EXIT_PASS | CLI_EXIT_USAGE};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome, st;
	char *hub = NULL;
	struct diag d;

	diag_init(&d);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (outcome == CLI_RUN && !tpl_hub_resolve(o.tokenizer, o.revision, &hub, &d)) {
		struct record_origin said;

		config_origin(&said, o.tokenizer, hub);
		if (hub)
			o.tokenizer = hub;
	}
	if (outcome == CLI_RUN && !d.code) {
		if (!o.tokenizer && !o.print_prompt) {
			diag_fail(&d, ERR_USAGE, "option '--tokenizer' is required");
		} else if (o.messages && !o.template_name && !tpl_model_is_dir(o.tokenizer)) {
			diag_fail(&d, ERR_USAGE, "option '--messages' needs '--template' or a model folder as '--tokenizer'");
		} else if ((o.messages || o.jsonl) && nargs) {
			diag_fail(&d, ERR_USAGE, "unexpected argument '%s'", args[0]);
		} else if (o.print_prompt && !o.messages) {
			diag_fail(&d, ERR_USAGE, "option '--print-prompt' needs '--messages'");
		} else if ((o.server || o.effort || o.date) && !o.messages) {
			diag_fail(&d, ERR_USAGE, "options '--server', '--reasoning-effort' and '--date' need '--messages'");
		}
	}
	if (d.code || outcome == CLI_HELP_SHOWN) {
		mem_free(hub);
		return d.code ? cli_report("count", &d) : EXIT_PASS;
	}
	st = run(&o, nargs ? args[0] : "-", &d);
	mem_free(hub);
	return st;
}
