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
 *
 * What the renderer sees is what vLLM's chat_utils.py hands the template
 * (parse_chat_messages), not the raw request:
 *   - content null or absent becomes ""; an array of parts becomes its text
 *     parts ("text", "input_text", "output_text", "refusal", "thinking", or a
 *     bare string) joined with "\n"; an image/audio/video part is refused
 *     (ERR_UNSUPPORTED: its tokens come from a multimodal processor);
 *   - assistant "reasoning" (or the deprecated "reasoning_content") is kept;
 *     an empty tool_calls list is dropped;
 *   - tool-call arguments are parsed from their JSON string into an object
 *     (invalid JSON or null gives {}), so templates that print them with
 *     tojson print Python's json.dumps(ensure_ascii=False): ", " and ": "
 *     separators, keys in order, non-ASCII raw. Known gap: a float written
 *     with an integral value (1.0) is printed 1 here, 1.0 by Python.
 *   - tools are the request's tools after pydantic's model_dump: {"type",
 *     "function": {"name", "description" (null if absent), "parameters" (null
 *     if absent), other keys}, other keys}.
 * Thinking switches in `kwargs` (chat_template_kwargs) must be JSON booleans.
 * SGLang differs from vLLM here (serving_chat.py _apply_jinja_template): it
 * joins text parts with " ", rejects tool-call arguments that are not a JSON
 * object (400), and, unless continue_final_message, renders a trailing
 * assistant message as a user message. tpl_render follows vLLM;
 * tpl_render_ex with server TPL_SERVER_SGLANG applies the SGLang preparation
 * listed there (the last two points are not reproduced: the first is a 400,
 * not a count).
 * Both servers hand the stock DeepSeek V3.1 Jinja parsed (dict) arguments,
 * which it cannot concatenate (400); needle renders the request's argument
 * string as the Jinja would with a string (and as llama.cpp does).
 *
 * Descriptor format (every key not listed for the style is an error):
 *
 *   "name"        string, required: the template's name.
 *   "style"       string, required: which renderer reads the markers below.
 *                 "turns" is the data-driven one (ChatML, Qwen3, Llama 3);
 *                 "deepseek-v3", "deepseek-v3.1" and "deepseek-v3.2" select C
 *                 code for the logic a descriptor cannot express (global
 *                 tool-output state, the V3.2 DSML encoder), with every
 *                 literal marker still taken from the descriptor.
 *   "description" string: where the format comes from (free text).
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
 *                 one, "header", "item_prefix" + tojson(tool) per tool,
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
 *   "developer_prefix". Tools are refused (ERR_UNSUPPORTED): the
 *   TOOLS_SYSTEM_TEMPLATE text differs between the copies needle could check.
 */
#ifndef NEEDLE_TPL_H
#define NEEDLE_TPL_H

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

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

/* Which server's request handling a render reproduces. The zero value is
 * vLLM, so a zeroed struct tpl_render_opts renders as tpl_render does. */
enum tpl_server { TPL_SERVER_VLLM = 0, TPL_SERVER_SGLANG = 1 };

/* Options of tpl_render_ex; zero-initialise, then set what you need. */
struct tpl_render_opts {
	enum tpl_server server;
	/* The request's top-level reasoning_effort (borrowed JSON value), or
	 * NULL. It sets thinking defaults the way the server does (PROTOCOL.md
	 * §3), never overriding a key `kwargs` already has:
	 *   SGLang (ChatCompletionRequest.normalize_reasoning_inputs): "thinking"
	 *   and "enable_thinking" = (effort != "none");
	 *   vLLM: "enable_thinking" = (effort != "none"), as vLLM main does;
	 *   older releases (v0.11.2) do not, and the release that added it is
	 *   not pinned down (PROTOCOL.md §8): against those, put the switch into
	 *   chat_template_kwargs yourself. */
	const cJSON *reasoning_effort;
};

/* tpl_render with the server's own message preparation (`o` may be NULL:
 * vLLM, no reasoning_effort). With TPL_SERVER_SGLANG:
 *   - content parts: only "text" parts count, joined with " "; every other
 *     part (images included) is dropped, not refused (PROTOCOL.md §4,
 *     process_content_for_template_format);
 *   - style "deepseek-v3.2" (encoding_dsv32 as SGLang runs it, PROTOCOL.md
 *     §7): thinking is read from kwargs "thinking" only (default off, i.e.
 *     SGLANG_DEFAULT_THINKING unset), and drop_thinking is always on. The
 *     empty system message SGLang inserts first renders as nothing.
 * Everything else as tpl_render. */
enum err tpl_render_ex(const struct tpl *t, const cJSON *messages,
		       const cJSON *tools, const cJSON *kwargs,
		       int add_generation_prompt, const struct tpl_render_opts *o,
		       struct buf *out, struct diag *d);

/* "vllm" or "sglang". */
const char *tpl_server_name(enum tpl_server s);
/* Parses "vllm" or "sglang"; ERR_USAGE names the accepted values. */
enum err tpl_server_parse(const char *name, enum tpl_server *out,
			  struct diag *d);

/* The descriptor's name (e.g. "deepseek-v3") and the SHA-256 of its bytes.
 * Borrowed. */
const char *tpl_name(const struct tpl *t);
const char *tpl_sha256(const struct tpl *t);

/* Checks raw JSON text (a messages or tools file, a request body) for a
 * string escape \u0000: cJSON ends strings there, so such a prompt would be
 * rendered and counted silently truncated. ERR_UNSUPPORTED with the byte
 * offset; `what` names the input in the message. */
enum err tpl_check_nul(const char *json, size_t len, const char *what,
		       struct diag *d);

/* Appends Python's json.dumps(v, ensure_ascii=False) of `v` to `out` (the
 * `tojson` the servers' Jinja uses). See the float caveat above. */
enum err tpl_pyjson(const cJSON *v, struct buf *out);

#endif
