/*
 * tpl — chat-template descriptors: how a messages array becomes the exact
 * prompt string the server tokenizes (BOS, role markers, system hoisting,
 * generation prompt, thinking markers, tool calls and results).
 *
 * A descriptor is a small JSON file; the shipped ones live in
 * fixtures/templates/NAME.json and are compiled into the binary (embed.h), so
 * `--template NAME` works anywhere; a path to a JSON file works too. Names:
 * deepseek-v3, deepseek-v3.1, deepseek-v3.2, qwen3, llama3, chatml.
 *
 * The rendered prompt is tokenized whole, never per message.
 */
#ifndef NEEDLE_TPL_H
#define NEEDLE_TPL_H

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

struct tpl;

/* Loads the template called `name_or_path` (an embedded name, else a file).
 * Returns a template the caller frees with tpl_free. ERR_INPUT names the file,
 * the JSON path and the reason for a malformed descriptor. */
enum err tpl_load(const char *name_or_path, struct tpl **out, struct diag *d);
/* Accepts NULL. */
void tpl_free(struct tpl *t);

/* Appends the prompt for `messages` (a JSON array of OpenAI chat messages,
 * borrowed) to `out`, generation prompt included when `add_generation_prompt`.
 * `kwargs` is the request's chat_template_kwargs object (e.g. {"thinking":
 * true}, {"enable_thinking": false}) or NULL; `tools` the request's tools
 * array or NULL. ERR_INPUT for a message the template cannot render. */
enum err tpl_render(const struct tpl *t, const cJSON *messages,
		    const cJSON *tools, const cJSON *kwargs,
		    int add_generation_prompt, struct buf *out, struct diag *d);

/* The descriptor's name (e.g. "deepseek-v3") and the SHA-256 of its bytes.
 * Borrowed. */
const char *tpl_name(const struct tpl *t);
const char *tpl_sha256(const struct tpl *t);

#endif
