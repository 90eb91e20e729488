/*
 * tpl_desc — chat-template descriptors: the small JSON files that say, marker
 * by marker, how one family of chat templates lays out a conversation. The
 * shipped ones live in fixtures/templates/NAME.json and are compiled into the
 * binary (embed.h), so a NAME works anywhere; a path to a JSON file works too.
 * Loading validates a descriptor completely (every key known for its style,
 * every type, every placeholder), so a renderer only reads what is there.
 *
 * Descriptor format (every key not listed for the style is an error):
 *
 *   "name"        string, required: the template's name.
 *   "style"       string, required: which renderer reads the markers below.
 *                 "turns" is the data-driven one (ChatML, Qwen3, Llama 3);
 *                 "deepseek-v3", "deepseek-v3.1", "deepseek-v3.2",
 *                 "deepseek-v4" and "deepseek-v4.1" select C code for the
 *                 logic a descriptor cannot express (global tool-output
 *                 state, the DSML encoders), with every literal marker still
 *                 taken from the descriptor.
 *   "description" string: where the format comes from (free text).
 *   "template_sha256" array of strings: SHA-256 (hex) of each model
 *                 template text this descriptor was checked to render
 *                 exactly (a model folder whose template has one of them
 *                 uses this descriptor; tpl_model.h). Absent for encoders
 *                 that have no template text (V3.2, V4, V4.1).
 *   "bos"         string: emitted once before the first message.
 *   "eos"         string: ends assistant turns (deepseek styles).
 *   "generation_prompt" string: appended when add_generation_prompt is set
 *                 (and the style's own condition holds; see below).
 *   "thinking"    object: how kwargs switch thinking on or off:
 *       "kwargs"   array of kwarg names, e.g. ["thinking", "enable_thinking"];
 *       "combine"  "first" (the first name present decides, as llama.cpp's
 *                  V3.1 copy reads `thinking` then `enable_thinking`) or
 *                  "any" (on if any present name is true: vLLM's V3.2
 *                  renderer). Only names the server's template reads belong
 *                  here: vLLM drops kwargs a template does not reference;
 *       "default"  boolean when no listed kwarg is present;
 *       "on", "off" strings appended after "generation_prompt" in that mode
 *                  (Qwen3: off = "<think>\n\n</think>\n\n").
 *
 *   style "turns" (every message is PREFIX + content + SUFFIX):
 *   "turn_prefix", "turn_suffix" strings, required; "{{role}}" is replaced by
 *                 the message's role.
 *   "roles"       array of role names rendered; others are skipped, as a
 *                 template with no branch for them does. Absent: all roles.
 *   "trim_content" boolean: strip surrounding whitespace from content
 *                 (Python str.strip, as Jinja's `trim` filter on the server).
 *   "generation_prompt_always" boolean: emit the generation prompt even
 *                 without add_generation_prompt (Llama 3's template does).
 *   "tools"       object: the tools block replacing a leading system turn
 *                 when the request has tools: "prefix", then the first
 *                 system message's content + "system_separator" if there is
 *                 one, "header", "item_prefix" + tojson(tool) per tool (the
 *                 tool as the server dumps it, tpl_msg_dump_tool),
 *                 "footer". Absent: tools are ignored (the template has none).
 *   "tool_calls"  object: assistant tool calls after the content: "lead"
 *                 before the first call when the content is not empty,
 *                 "separator" between calls, each call "call" with
 *                 "{{name}}" and "{{arguments}}" (tojson) replaced. Absent:
 *                 tool calls are not rendered.
 *   "tool_results" object: consecutive tool messages share one turn: "open"
 *                 before the first, "item_prefix" + content + "item_suffix"
 *                 each, "close" after the last. Absent: ordinary turns.
 *   "reasoning"   object, Qwen3's rule: an assistant turn's reasoning (its
 *                 "reasoning" field, else the text between "start_tag" and
 *                 "end_tag" in its content) is shown as "open" + reasoning +
 *                 "close" before the content only for turns after the last
 *                 real user query (a user message not wrapped in
 *                 "query_skip_open"/"query_skip_close"), and only when it is
 *                 the last message or has reasoning; the tags are removed
 *                 from the content everywhere.
 *
 *   style "deepseek-v3" (HF tokenizer_config.json of DeepSeek-V3): strings
 *   "user", "assistant", "system_separator", "tool_outputs_begin",
 *   "tool_output_begin", "tool_output_end", "tool_outputs_end",
 *   "tool_output_separator".
 *   style "deepseek-v3.1" (HF Jinja of DeepSeek-V3.1): strings "user",
 *   "assistant", "system_separator", "think_open", "think_close",
 *   "tool_calls_begin", "tool_call_begin", "tool_sep", "tool_call_end",
 *   "tool_calls_end", "tool_output_begin", "tool_output_end".
 *   style "deepseek-v3.2" (encoding_dsv32.py as vLLM runs it): strings
 *   "user", "assistant", "think_open", "think_close", "dsml",
 *   "developer_prefix", "tools_template" (TOOLS_SYSTEM_TEMPLATE with
 *   "{{tool_schemas}}" where the tools' JSON goes).
 *   styles "deepseek-v4" and "deepseek-v4.1" (encoding_dsv4.py and
 *   encoding_dsv41.py; tpl_dsv4.h): strings "user", "assistant",
 *   "think_open", "think_close", "dsml", "calls_tag", "invoke_tag",
 *   "parameter_tag" (the DSML tag names after "dsml"), "tool_result_open",
 *   "tool_result_close", "tools_template" ("{{tool_schemas}}"),
 *   "effort_template" (V4: the text "max" effort adds; V4.1: with
 *   "{{budget}}"), and object "tasks" (task name -> its special token);
 *   V4.1 also "system" (the system token) and "image" (the image
 *   placeholder). Their thinking switch is the server's, not the
 *   descriptor's (no "thinking" key).
 */
#ifndef NEEDLE_TPL_DESC_H
#define NEEDLE_TPL_DESC_H

#include <cjson/cJSON.h>

#include "base/err.h"
#include "base/io.h"

/* Which renderer reads a descriptor's markers (its "style"). */
enum tpl_style {
	TPL_STYLE_TURNS, TPL_STYLE_DSV3, TPL_STYLE_DSV31, TPL_STYLE_DSV32, TPL_STYLE_DSV4,
	TPL_STYLE_DSV41
};

/* A loaded descriptor. Every member is owned and valid until
 * tpl_desc_release; `root` has passed the schema of `style`. */
struct tpl_desc {
	char *name;                /* the descriptor's "name" */
	char *origin;              /* the path, or "templates/NAME.json" */
	char sha[IO_SHA256_HEX];   /* SHA-256 of the descriptor's bytes */
	cJSON *root;
	enum tpl_style style;
};

/* Loads and validates the descriptor `name_or_path` (a shipped name, else a
 * file) into `t` (zeroed first). ERR_INPUT names the file, the JSON path and
 * the reason; a name that is neither shipped nor a file is ERR_USAGE and
 * lists the shipped names. On failure `t` holds nothing to release. */
enum err tpl_desc_load(struct tpl_desc *t, const char *name_or_path, struct diag *d);
/* Frees what `t` holds and zeroes it; accepts a zeroed one. */
void tpl_desc_release(struct tpl_desc *t);
/* Loads into `t` the shipped descriptor whose "template_sha256" holds `sha`
 * and sets *found; *found 0 (and `t` empty) when none does. */
enum err tpl_desc_find_sha(struct tpl_desc *t, const char *sha, int *found, struct diag *d);
/* Whether `name` is a shipped descriptor (fixtures/templates/NAME.json). */
int tpl_desc_shipped(const char *name);

/* Typed reads of a validated descriptor object `o` (NULL allowed): the
 * string at `key` or "" when absent; whether `key` is true; the object at
 * `key` or NULL. Borrowed. */
const char *tpl_desc_str(const cJSON *o, const char *key);
int tpl_desc_true(const cJSON *o, const char *key);
const cJSON *tpl_desc_obj(const cJSON *o, const char *key);

#endif
