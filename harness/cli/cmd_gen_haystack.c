/*
 * needle gen haystack — a needle document whose rendered prompt is exactly
 * --tokens tokens for the given tokenizer and chat template, written as
 * DIR/prompt.json (the messages), DIR/document.txt and DIR/manifest.json.
 * The generator is generators/haystack.c; this file parses, writes and reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cli.h"
#include "cmd.h"
#include "generators/haystack.h"
#include "base/io.h"
#include "base/json.h"
#include "tok/tok.h"
#include "tpl/tpl.h"
#include "tpl/tpl_model.h"
#include "tpl/tpl_setup.h"

struct gh_opts {
	const char *tokenizer, *template_name, *seed, *depths, *filler, *out;
	const char *question, *kwargs, *date;
	long tokens, needles, distractors, ask;
	int json;
};

static const char examples[] =
	"  needle gen haystack --tokenizer tokenizer.json --template deepseek-v3 \\\n"
	"      --tokens 1040000 --seed 7 --out hay/1m-7\n"
	"  needle gen haystack --tokenizer tokenizer.json --template qwen3 \\\n"
	"      --tokens 131072 --seed 1 --depths 5,25,50,75,95 --filler mixed --out hay/q\n"
	"  needle gen haystack --tokenizer tokenizer.json --template llama3 \\\n"
	"      --tokens 32768 --seed 2 --needles 4 --ask 2 --distractors 6 --out hay/l\n";

/* Parses "10,50,90" into `o`. */
static enum err parse_depths(const char *s, struct haystack_opts *o,
			     struct diag *d)
{
	const char *p = s;

	o->ndepths = 0;
	for (;;) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || (*end && *end != ','))
			return diag_fail(d, ERR_USAGE,
					 "option '--depths' wants percentages like 10,50,90, got '%s'", s);
		if (o->ndepths == HAYSTACK_MAX_NEEDLES)
			return diag_fail(d, ERR_USAGE, "option '--depths' has more than %d depths",
					 HAYSTACK_MAX_NEEDLES);
		if (v < 0 || v > 100)
			return diag_fail(d, ERR_USAGE, "depth '%ld' is outside 0..100", v);
		o->depths[o->ndepths++] = (int)v;
		if (!*end)
			return ERR_OK;
		p = end + 1;
	}
}

static enum err parse_seed(const char *s, uint64_t *out, struct diag *d)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return diag_fail(d, ERR_USAGE,
				 "option '--seed' wants an integer 0..18446744073709551615, got '%s'", s);
	return ERR_OK;
}

static void needle_json(struct json_build *jb, cJSON *to, const struct haystack_needle *n,
			int distractor)
{
	cJSON *o = json_add_obj(jb, to, NULL);

	json_add_str(jb, o, "project", n->project);
	json_add_str(jb, o, "code", n->code);
	json_add_int(jb, o, "depth", n->depth);
	json_add_int(jb, o, "char_offset", (long long)n->char_offset);
	json_add_int(jb, o, "token_offset", (long long)n->token_offset);
	json_add_int(jb, o, "tokens", (long long)n->tokens);
	if (distractor)
		json_add_str(jb, o, "kind", n->near_miss ? "near_miss" : "other_project");
	else
		json_add_bool(jb, o, "asked", n->asked);
}

static void manifest_options(struct json_build *jb, cJSON *m, const struct haystack_opts *o,
			     const struct haystack *h)
{
	cJSON *opt = json_add_obj(jb, m, "options"), *a;
	int i;

	json_add_int(jb, opt, "tokens", (long long)o->tokens);
	a = json_add_arr(jb, opt, "depths");
	for (i = 0; i < h->nneedles; i++)
		json_add_int(jb, a, NULL, h->needle[i].depth);
	json_add_int(jb, opt, "needles", h->nneedles);
	json_add_str(jb, opt, "filler", o->filler ? o->filler : "prose");
	json_add_int(jb, opt, "distractors", o->distractors);
	json_add_int(jb, opt, "ask", o->ask ? o->ask : h->nneedles);
	if (o->kwargs)
		json_add_dup(jb, opt, "chat_template_kwargs", o->kwargs);
}

static void manifest_document(struct json_build *jb, cJSON *m, const struct haystack *h,
			      const char *doc_sha)
{
	cJSON *x = json_add_obj(jb, m, "document");

	json_add_str(jb, x, "sha256", doc_sha);
	json_add_int(jb, x, "bytes", (long long)h->document_len);
	json_add_int(jb, x, "tokens", (long long)h->document_tokens);
	json_add_int(jb, x, "prompt_token_offset", (long long)h->prefix_tokens);
	json_add_str(jb, x, "offsets", "char_offset counts UTF-8 bytes, token_offset "
		     "tokens, both from the start of document.txt");
}

/* The manifest: everything needed to reproduce and to grade. */
static enum err manifest(const struct gh_opts *g, const struct haystack_opts *o,
			 const struct haystack *h, const struct tok *t,
			 const struct tpl *tp, cJSON **out, struct diag *d)
{
	char doc_sha[IO_SHA256_HEX];
	struct json_build jb;
	cJSON *m, *a, *x;
	int i;

	if (io_sha256_hex(h->document, h->document_len, doc_sha, d))
		return d->code;
	json_build_init(&jb);
	m = json_new_obj(&jb);
	json_add_str(&jb, m, "generator", "needle gen haystack " NEEDLE_VERSION);
	/* cJSON prints 15 significant digits whenever they read back within its
	 * tolerance, so only a seed below 10^15 is exact as a JSON number */
	if (o->seed < UINT64_C(1000000000000000))
		json_add_int(&jb, m, "seed", (long long)o->seed);
	else
		json_add_str(&jb, m, "seed", g->seed);
	manifest_options(&jb, m, o, h);
	x = json_add_obj(&jb, m, "tokenizer");
	json_add_str(&jb, x, "sha256", tok_sha256(t));
	json_add_str(&jb, x, "kind", tok_kind(t));
	x = json_add_obj(&jb, m, "template");
	json_add_str(&jb, x, "name", tpl_name(tp));
	json_add_str(&jb, x, "sha256", tpl_sha256(tp));
	json_add_str(&jb, x, "source", tpl_source(tp));
	json_add_str(&jb, x, "source_sha256", tpl_source_sha256(tp));
	if (tpl_reads_clock(tp)) /* strftime_now's clock (tpl_clock_pin) */
		json_add_str(&jb, x, "date", tpl_clock_text());
	json_add_str(&jb, m, "prompt_sha256", h->prompt_sha256);
	json_add_int(&jb, m, "prompt_tokens", (long long)h->prompt_tokens);
	manifest_document(&jb, m, h, doc_sha);
	json_add_str(&jb, m, "question", h->question);
	a = json_add_arr(&jb, m, "needles");
	for (i = 0; i < h->nneedles; i++)
		needle_json(&jb, a, &h->needle[i], 0);
	a = json_add_arr(&jb, m, "distractors");
	for (i = 0; i < h->ndistractors; i++)
		needle_json(&jb, a, &h->distractor[i], 1);
	json_add_dup(&jb, m, "expected", h->expected);
	*out = m;
	return json_build_end(&jb, out, "the manifest", d);
}

/* Writes DIR/NAME from a cJSON value, with a final newline. */
static enum err write_json(const char *dir, const char *name, const cJSON *v,
			   struct diag *d)
{
	struct buf path;
	enum err e;

	buf_init(&path, 1 << 16);
	e = buf_printf(&path, "%s/%s", dir, name);
	if (e)
		e = diag_fail(d, ERR_NOMEM, "out of memory writing '%s/%s'", dir, name);
	if (!e)
		e = json_write_file(path.data, v, JSON_NEWLINE, d);
	buf_release(&path);
	return e;
}

static enum err write_out(const struct gh_opts *g, const struct haystack_opts *o,
			  const struct haystack *h, const struct tok *t,
			  const struct tpl *tp, struct diag *d)
{
	struct buf path;
	cJSON *m = NULL;
	enum err e = io_mkdirs(g->out, d);

	buf_init(&path, 1 << 16);
	if (!e)
		e = write_json(g->out, "prompt.json", h->messages, d);
	if (!e && buf_printf(&path, "%s/document.txt", g->out))
		e = diag_fail(d, ERR_NOMEM, "out of memory writing '%s/document.txt'", g->out);
	if (!e)
		e = io_write_file(path.data, h->document, h->document_len, d);
	if (!e)
		e = manifest(g, o, h, t, tp, &m, d);
	if (!e)
		e = write_json(g->out, "manifest.json", m, d);
	cJSON_Delete(m);
	buf_release(&path);
	return e;
}

static void report(const struct gh_opts *g, const struct haystack *h, double ms,
		   double load_ms)
{
	int i;

	if (g->json) {
		printf("{\"out\":\"%s\",\"prompt_tokens\":%zu,\"document_tokens\":%zu,"
		       "\"fit_rounds\":%d,\"ms\":%.1f,\"load_ms\":%.1f}\n",
		       g->out, h->prompt_tokens, h->document_tokens, h->fit_rounds, ms, load_ms);
		return;
	}
	printf("%s: %zu prompt tokens (document %zu), %.1f ms (tokenizer load %.1f ms)\n",
	       g->out, h->prompt_tokens, h->document_tokens, ms, load_ms);
	for (i = 0; i < h->nneedles; i++)
		printf("  %-12s %s  depth %3d%%  token %zu%s\n", h->needle[i].project,
		       h->needle[i].code, h->needle[i].depth, h->needle[i].token_offset,
		       h->needle[i].asked ? "" : "  (not asked)");
}

static enum err run(const struct gh_opts *g, struct haystack_opts *o,
		    struct diag *d)
{
	struct tok *t = NULL;
	struct tpl *tp = NULL;
	struct haystack h = {0};
	cJSON *kw = NULL;
	double t0 = io_now_ms(), t1 = t0;
	enum err e = ERR_OK;

	if (g->kwargs)
		e = json_parse(g->kwargs, strlen(g->kwargs), &kw, "option '--kwargs'", NULL);
	if (e == ERR_NOMEM)
		diag_fail(d, e, "out of memory parsing option '--kwargs'");
	else if (g->kwargs && (e || !cJSON_IsObject(kw)))
		e = diag_fail(d, ERR_USAGE, "option '--kwargs' wants a JSON object, got '%s'",
			      g->kwargs);
	if (!e) {
		struct buf warn;

		buf_init(&warn, 1 << 20);
		e = tpl_clock_pin(g->date, d);
		if (!e)
			e = tpl_setup(g->tokenizer, g->template_name, &t, &tp, &warn, d);
		fputs(warn.len ? warn.data : "", stderr);
		buf_release(&warn);
		t1 = io_now_ms();
	}
	o->tok = t;
	o->tpl = tp;
	o->kwargs = kw;
	if (!e)
		e = haystack_build(o, &h, d);
	if (!e)
		e = write_out(g, o, &h, t, tp, d);
	if (!e)
		report(g, &h, io_now_ms() - t0, t1 - t0);
	haystack_release(&h);
	tok_free(t);
	tpl_free(tp);
	cJSON_Delete(kw);
	return e;
}

/* Checks the options the table cannot, and fills the generator's options. */
static enum err check(const struct gh_opts *g, struct haystack_opts *o,
		      struct diag *d)
{
	if (!g->tokenizer || (!g->template_name && !tpl_model_is_dir(g->tokenizer)) || !g->seed ||
	    !g->out || !g->tokens)
		return diag_fail(d, ERR_USAGE, "options '--tokenizer', '--template' (unless '--tokenizer' "
				 "is a model folder), '--tokens', '--seed' and '--out' are required");
	if (g->tokens < 1 || g->tokens > 100000000L)
		return diag_fail(d, ERR_USAGE, "option '--tokens' wants 1..100000000, got %ld",
				 g->tokens);
	if (g->needles < 0 || g->needles > HAYSTACK_MAX_NEEDLES)
		return diag_fail(d, ERR_USAGE, "option '--needles' wants 1..%d, got %ld",
				 HAYSTACK_MAX_NEEDLES, g->needles);
	if (g->distractors < 0 || g->distractors > HAYSTACK_MAX_DISTRACTORS)
		return diag_fail(d, ERR_USAGE, "option '--distractors' wants 0..%d, got %ld",
				 HAYSTACK_MAX_DISTRACTORS, g->distractors);
	if (g->ask < 0 || g->ask > HAYSTACK_MAX_NEEDLES)
		return diag_fail(d, ERR_USAGE, "option '--ask' wants 1..%d, got %ld",
				 HAYSTACK_MAX_NEEDLES, g->ask);
	o->tokens = g->tokens;
	o->needles = (int)g->needles;
	o->distractors = (int)g->distractors;
	o->ask = (int)g->ask;
	o->filler = g->filler;
	o->question = g->question;
	if (g->depths && parse_depths(g->depths, o, d))
		return d->code;
	return parse_seed(g->seed, &o->seed, d);
}

int cmd_gen_haystack(int argc, char **argv)
{
	struct gh_opts g = {0};
	struct haystack_opts o = {0};
	const struct cli_opt opts[] = {
		{"tokenizer", 't', CLI_STR, "PATH|DIR", "tokenizer.json, sentencepiece .model, or a model folder (required)", &g.tokenizer},
		{"template", 0, CLI_STR, "NAME|PATH", "chat template: deepseek-v3, qwen3, llama3, ..., a .jinja file (default: the model folder's)", &g.template_name},
		{"tokens", 'n', CLI_LONG, "N", "exact tokens of the whole rendered prompt (required)", &g.tokens},
		{"seed", 's', CLI_STR, "S", "seed, 0..2^64-1 (required); same seed, same bytes", &g.seed},
		{"out", 'o', CLI_STR, "DIR", "directory for prompt.json, document.txt, manifest.json (required)", &g.out},
		{"depths", 0, CLI_STR, "LIST", "needle depths in percent of the document (default 10,50,90)", &g.depths},
		{"needles", 0, CLI_LONG, "K", "number of needles (default: one per depth)", &g.needles},
		{"filler", 0, CLI_STR, "KIND", "prose, code, zh or mixed (default prose)", &g.filler},
		{"distractors", 0, CLI_LONG, "D", "near-miss names and codes of unasked projects (default 0)", &g.distractors},
		{"ask", 0, CLI_LONG, "K", "ask for only K of the needles' projects (default all)", &g.ask},
		{"question", 0, CLI_STR, "TEXT", "replace the default question", &g.question},
		{"kwargs", 0, CLI_STR, "JSON", "chat_template_kwargs, e.g. '{\"thinking\":false}'", &g.kwargs},
		{"date", 0, CLI_STR, "YYYY-MM-DD[THH:MM:SS]", "the server's local time for a template's strftime_now (default: now; in the manifest when the template reads it)", &g.date},
		{"json", 0, CLI_FLAG, NULL, "print a one-line JSON summary", &g.json},
	};
	const struct cli_cmd cmd = {
		"gen haystack", "--tokenizer PATH --template NAME --tokens N --seed S --out DIR [OPTIONS]",
		"Write a needle document: filler text with K project/access-code sentences at\n"
		"the given token depths, and a question asking for a JSON object of the codes.\n"
		"The whole rendered prompt (template + document + question) is exactly N\n"
		"tokens, proved by a final full count. Writes DIR/prompt.json (messages),\n"
		"DIR/document.txt and DIR/manifest.json (seed, options, hashes, needles with\n"
		"char and token offsets, expected answer).",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 0, 0,
		CLI_EXIT_PASS | CLI_EXIT_USAGE};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome;
	struct diag d;

	diag_init(&d);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (outcome == CLI_RUN)
		check(&g, &o, &d);
	if (d.code)
		return cli_report("gen haystack", &d);
	if (outcome == CLI_HELP_SHOWN)
		return EXIT_PASS;
	if (run(&g, &o, &d))
		return cli_report("gen haystack", &d);
	return EXIT_PASS;
}
