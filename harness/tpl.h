/*
 * tpl — chat templates: how a messages array becomes the exact prompt string
 * the server tokenizes (BOS, role markers, system hoisting, generation
 * prompt, thinking markers, tool calls and results). The rendered prompt is
 * tokenized whole, never per message.
 *
 * A template is today a descriptor (tpl_desc.h: shipped names deepseek-v3,
 * deepseek-v3.1, deepseek-v3.2, qwen3, llama3, chatml, or a path to a JSON
 * file). A render is three stages, each a module of its own:
 *   tpl_msg   what the server hands the template (vLLM or SGLang flavour);
 *   tpl_turns / tpl_ds   the renderer the descriptor's style selects;
 *   tpl_py    Python's printing of values (json.dumps, str.strip).
 *
 * Thinking switches in `kwargs` (chat_template_kwargs) must be JSON booleans.
 * Both servers hand the stock DeepSeek V3.1 Jinja parsed (dict) arguments,
 * which it cannot concatenate (400); needle renders the request's argument
 * string as the Jinja would with a string (and as llama.cpp does).
 */
#ifndef NEEDLE_TPL_H
#define NEEDLE_TPL_H

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"
#include "tpl_msg.h"
#include "tpl_py.h"

struct tpl;

/* Loads the template called `name_or_path` (an embedded name, else a file).
 * Returns a template the caller frees with tpl_free. ERR_INPUT names the file,
 * the JSON path and the reason for a malformed descriptor; an unknown name
 * that is not a file either is ERR_USAGE and lists the shipped names. */
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
	 * switch into chat_template_kwargs yourself (PROTOCOL.md §8). */
	const cJSON *reasoning_effort;
};

/* tpl_render with the server's own message preparation (`o` may be NULL:
 * vLLM, no reasoning_effort); tpl_msg.h lists what differs per server. With
 * TPL_SERVER_SGLANG and style "deepseek-v3.2" (encoding_dsv32 as SGLang
 * runs it, PROTOCOL.md §7), thinking is read from kwargs "thinking" only
 * (default off, i.e. SGLANG_DEFAULT_THINKING unset), and drop_thinking is
 * always on; the empty system message SGLang inserts first renders as
 * nothing. */
enum err tpl_render_ex(const struct tpl *t, const cJSON *messages,
		       const cJSON *tools, const cJSON *kwargs,
		       int add_generation_prompt, const struct tpl_render_opts *o,
		       struct buf *out, struct diag *d);

/* The descriptor's name (e.g. "deepseek-v3") and the SHA-256 of its bytes.
 * Borrowed. */
const char *tpl_name(const struct tpl *t);
const char *tpl_sha256(const struct tpl *t);

#endif
