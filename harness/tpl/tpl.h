/*
 * tpl — chat templates: how a messages array becomes the exact prompt string
 * the server tokenizes (BOS, role markers, system hoisting, generation
 * prompt, thinking markers, tool calls and results). The rendered prompt is
 * tokenized whole, never per message.
 *
 * A template is a built-in descriptor or encoder (tpl_desc.h: shipped names
 * chatml, deepseek-v3, deepseek-v3.1, deepseek-v3.2, deepseek-v4,
 * deepseek-v4.1, llama3, qwen3, or a path to a descriptor JSON file), or a
 * model's own template text (a model folder, a .jinja file, a
 * tokenizer_config.json: tpl_model.h). A template text is rendered through
 * the descriptor that records its SHA-256 ("template_sha256"); any other
 * text by the Jinja interpreter (tpl_jinja.h, jinja.h). A render is three
 * stages, each a module:
 *   tpl_msg   what the server hands the template (vLLM or SGLang flavour);
 *   tpl_turns / tpl_ds / tpl_dsv4 / tpl_jinja   the renderer;
 *   tpl_py    Python's printing of values (json.dumps, str.strip).
 *
 * Thinking switches in `kwargs` (chat_template_kwargs) must be JSON booleans.
 * Both servers hand the stock DeepSeek V3.1 Jinja parsed (dict) arguments,
 * which it cannot concatenate (400); needle renders the request's argument
 * string as the Jinja would with a string (and as llama.cpp does).
 */
#ifndef NEEDLE_TPL_H
#define NEEDLE_TPL_H

#include <time.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "tpl_msg.h"
#include "tpl_py.h"

struct tpl;
struct tpl_model;

/* Loads the template a deployment renders. `template_arg` (may be NULL when
 * `m` is given) is a shipped name or descriptor JSON path, a .jinja file or
 * a tokenizer_config.json; NULL means the model folder's own templates (one
 * for requests without tools, one with: tpl_model.h). With a descriptor
 * named and a folder whose template is not a text the descriptor records, a
 * "warning: ..." line goes to `warn` (may be NULL). Returns a template the
 * caller frees with tpl_free. Errors: a malformed descriptor ERR_INPUT (file,
 * JSON path, reason); an unknown name ERR_USAGE listing the shipped names; a
 * folder or file without a template ERR_INPUT; a Jinja text with a syntax
 * error ERR_INPUT (line and column), with a construct the interpreter lacks
 * ERR_UNSUPPORTED (for the text of requests with tools, these refusals come
 * from tpl_render_ex when the request has tools). */
enum err tpl_open(const char *template_arg, const struct tpl_model *m, struct tpl **out,
		  struct buf *warn, struct diag *d);
/* tpl_open without a model folder. */
enum err tpl_load(const char *name_or_path, struct tpl **out, struct diag *d);
/* Accepts NULL. */
void tpl_free(struct tpl *t);

/* Appends the prompt for `messages` (a JSON array of OpenAI chat messages,
 * borrowed) to `out`, generation prompt included when `add_generation_prompt`.
 * `kwargs` is the request's chat_template_kwargs object (e.g. {"thinking":
 * true}, {"enable_thinking": false}) or NULL; `tools` the request's tools
 * array or NULL. ERR_INPUT for a message the template cannot render. On
 * failure `out` may hold a partial prompt. */
enum err tpl_render(const struct tpl *t, const cJSON *messages,
		    const cJSON *tools, const cJSON *kwargs,
		    int add_generation_prompt, struct buf *out, struct diag *d);

/* Options of tpl_render_ex; zero-initialise, then set what you need. */
struct tpl_render_opts {
	enum tpl_server server;
	/* The request's top-level reasoning_effort (borrowed JSON value), or
	 * NULL. It sets thinking defaults the way the server does
	 * (tpl_msg_effort_kwargs); against vLLM releases before that, put the
	 * switch into chat_template_kwargs yourself (docs/protocol.md "Release differences"). */
	const cJSON *reasoning_effort;
};

/* The server's local time that strftime_now reads in a model's Jinja
 * template, one clock per process: `date` is the --date argument
 * (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS), or NULL for the time of this call.
 * Commands call it once before rendering; until then renders read the time
 * at each render. ERR_USAGE names a malformed `date`. */
enum err tpl_clock_pin(const char *date, struct diag *d);
/* The pinned clock as "YYYY-MM-DDTHH:MM:SS" (what a manifest records), or
 * NULL when none is pinned. Borrowed, static. */
const char *tpl_clock_text(void);

/* tpl_render with the server's own message preparation (`o` may be NULL:
 * vLLM, no reasoning_effort); tpl_msg.h lists what differs per server. With
 * TPL_SERVER_SGLANG and style "deepseek-v3.2" (encoding_dsv32 as SGLang
 * runs it, docs/protocol.md "DeepSeek encoders"), thinking is read from kwargs "thinking" only
 * (default off, i.e. SGLANG_DEFAULT_THINKING unset), and drop_thinking is
 * always on; the empty system message SGLang inserts first renders as
 * nothing. */
enum err tpl_render_ex(const struct tpl *t, const cJSON *messages,
		       const cJSON *tools, const cJSON *kwargs,
		       int add_generation_prompt, const struct tpl_render_opts *o,
		       struct buf *out, struct diag *d);

/* The descriptor's name (e.g. "deepseek-v3") and the SHA-256 of its bytes;
 * for a model's Jinja text "jinja" and the text's SHA-256. Borrowed. */
const char *tpl_name(const struct tpl *t);
const char *tpl_sha256(const struct tpl *t);
/* Where the template came from: the model's template file and the SHA-256
 * of its text, or for a descriptor named directly its origin and bytes'
 * SHA-256 (what a manifest records). Borrowed. */
const char *tpl_source(const struct tpl *t);
const char *tpl_source_sha256(const struct tpl *t);
/* Whether a render can depend on the clock: a model's Jinja text (either
 * variant) that reads strftime_now. A manifest records the date only then,
 * so that the same inputs still give the same manifest. */
int tpl_reads_clock(const struct tpl *t);
/* Lines saying which file was used and why (`needle count --explain`).
 * Borrowed, "" when there is nothing to say. */
const char *tpl_explain(const struct tpl *t);
/* Appends each special-token marker of the template (<|...|>, <｜...｜>),
 * each followed by a NUL byte, to `out`. ERR_NOMEM only. */
enum err tpl_special_tokens(const struct tpl *t, struct buf *out);

/* What loading found that can make counts differ from the server's (the
 * warnings tpl_open and tpl_setup print), for the audit's hints. */
enum {
	TPL_NOTE_SHA_DIFFERS = 1, /* the folder's template is not the descriptor's checked text */
	TPL_NOTE_SPECIALS = 2     /* the tokenizer lacks special tokens of the template */
};
/* Adds `note` (TPL_NOTE_*) to `t`. */
void tpl_note(struct tpl *t, unsigned note);
/* The TPL_NOTE_* bits of `t`. */
unsigned tpl_notes(const struct tpl *t);

#endif
