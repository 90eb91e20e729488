/*
 * audit — the token audit (docs/runs.md "Verdicts and the usage audit"): count locally what the server will
 * tokenize and compare it with the usage.prompt_tokens the server reported.
 *
 * The local count is of the prompt the server builds: chat messages rendered
 * through the chat template as the server prepares them (tpl_render_ex;
 * add_special_tokens=false, docs/protocol.md "Prompt token accounting"), or a raw /v1/completions prompt
 * encoded with add_special_tokens=true (plus the BOS transformers' Llama-style
 * fast tokenizers add themselves, audit_bos_id).
 *
 * Image cases are counted on their text only: the delta is then the image
 * tokens, recorded but never judged.
 */
#ifndef NEEDLE_AUDIT_H
#define NEEDLE_AUDIT_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "net/stream.h"
#include "suite.h"
#include "tok/tok.h"
#include "tpl/tpl.h"

/* What the audit counts with (all borrowed). No tokenizer or no template
 * means no audit. */
struct audit_ctx {
	const struct tok *tok;
	const struct tpl *tpl;
	enum tpl_server server;  /* whose message preparation to render */
	long long bos_id;        /* from audit_bos_id, or -1 */
};

/* The local count of one request, with what it saw that can explain a
 * mismatch (audit_judge's hint). */
struct audit_count {
	long long local_tokens;  /* -1 when not counted */
	int skipped;             /* images: the count has the text only */
	unsigned notes;          /* the template's TPL_NOTE_* (tpl.h) */
	int tools;               /* the request has tools */
	int parts;               /* a message's content has two or more text parts */
};

/* The audit's judgement of one response. */
struct audit_result {
	int enabled;             /* counted and not skipped */
	int skipped;
	int ok;                  /* 1 when disabled or |delta| <= tolerance */
	long long local_tokens;  /* -1 when not counted */
	long long server_tokens; /* -1 when the server reported none */
	int have_delta;
	long long delta;         /* server - local when have_delta */
	long tolerance;
	const char *hint;        /* static: the likely cause when the delta fails, else NULL */
};

/* Renders `messages` (with the request's `tools`, chat_template_kwargs
 * `kwargs` and top-level `reasoning_effort`, each borrowed or NULL) into the
 * prompt string `server` builds: reasoning_effort is passed into the template
 * as a kwarg unless `kwargs` has one, as vLLM and SGLang do (docs/protocol.md "Thinking switches"),
 * generation prompt included. Appends to `out`. */
enum err audit_render(const struct tpl *t, enum tpl_server server,
		      const cJSON *messages, const cJSON *tools,
		      const cJSON *kwargs, const cJSON *reasoning_effort,
		      struct buf *out, struct diag *d);

/* Counts what the server will tokenize for case `c` sent with `messages`
 * (borrowed: the case's own or round 2's): its rendered chat prompt, or its
 * raw "prompt". Leaves out->local_tokens -1 without a tokenizer and template.
 * A render failure of an image case is not an error (the count is
 * informative only). */
enum err audit_count_case(const struct audit_ctx *a, const struct suite_case *c,
			  const cJSON *messages, struct audit_count *out,
			  struct diag *d);

/* The BOS id a raw /v1/completions prompt starts with when the
 * tokenizer_config.json next to `tokenizer_path` sets add_bos_token
 * (transformers adds it although tokenizer.json's post-processor does not);
 * -1 when it does not, or the config is missing or unreadable. */
long long audit_bos_id(const struct tok *t, const char *tokenizer_path);

/* Judges `count` against the server's `usage` with `tolerance`; `counted` is
 * 0 when there was no audit. A delta outside the tolerance gets a hint, the
 * first that applies: the tokenizer lacks the template's special tokens; the
 * deployment's template is not the descriptor's checked text; content parts
 * (joined with "\n" by vLLM, " " by SGLang); off by one (a BOS written by the
 * template and added again, or not); tools (the server's tool dump);
 * else the tokenizer, template or --server differ. */
void audit_judge(const struct audit_count *count, int counted,
		 const struct stream_usage *usage, long tolerance,
		 struct audit_result *out);

#endif
