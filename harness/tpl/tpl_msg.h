/*
 * tpl_msg — what the server hands a chat template, not the raw request:
 * vLLM's parse_chat_messages / _postprocess_messages and SGLang's
 * _apply_jinja_template, applied to an OpenAI messages array. Renderers
 * (tpl_turns, tpl_ds) read only the prepared conversation.
 *
 * vLLM (TPL_SERVER_VLLM):
 *   - content null or absent becomes ""; an array of parts becomes its text
 *     parts ("text", "input_text", "output_text", "refusal", "thinking", or a
 *     bare string) joined with "\n"; an image/audio/video part is refused
 *     (ERR_UNSUPPORTED: its tokens come from a multimodal processor);
 *   - assistant "reasoning" (or the deprecated "reasoning_content") is kept;
 *     an empty tool_calls list is dropped;
 *   - tool-call arguments are parsed from their JSON string into an object
 *     (invalid JSON or null gives {}), so templates that print them with
 *     tojson print Python's json.dumps (tpl_py.h);
 *   - tools are the request's tools after pydantic's model_dump: {"type",
 *     "function": {"name", "description" (null if absent), "parameters" (null
 *     if absent), other keys}, other keys} (tpl_msg_dump_tool).
 * SGLang (TPL_SERVER_SGLANG) joins only "text" parts, with " ", and drops
 * every other part (images included) instead of refusing it
 * (process_content_for_template_format, docs/protocol.md "Message content"). It also rejects
 * tool-call arguments that are not a JSON object (400) and, unless
 * continue_final_message, renders a trailing assistant message as a user
 * message; neither is reproduced (the first is a 400, not a count).
 */
#ifndef NEEDLE_TPL_MSG_H
#define NEEDLE_TPL_MSG_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "tpl_server.h"

/* One message as the server leaves it. */
struct tpl_msg {
	const char *role;          /* borrowed from the request */
	const char *content;       /* flattened text ("" for none): borrowed from the
				    * request when it is one string, else `owned` */
	char *owned;               /* owned joined text of parts, or NULL */
	const char *reasoning;     /* borrowed, or NULL */
	const cJSON *tool_calls;   /* borrowed non-empty array, or NULL */
	cJSON *args;               /* owned array: parsed arguments per call */
};

/* A prepared conversation: `n` >= 1 messages, owned. */
struct tpl_conv {
	struct tpl_msg *m;
	size_t n;
	cJSON *source;             /* owned messages the `m` borrow from, or NULL
				    * (tpl_conv_release deletes it) */
};

/* Prepares `messages` (a borrowed JSON array, which must outlive `c`: the
 * messages borrow its strings; or one the caller hands to c->source) as
 * `server` does into `c`.
 * ERR_INPUT names the message (and part or call) that is malformed;
 * ERR_UNSUPPORTED a media part vLLM would hand a processor. `c` must be
 * released with tpl_conv_release even on failure. */
enum err tpl_conv_prepare(struct tpl_conv *c, const cJSON *messages,
			  enum tpl_server server, struct diag *d);
/* Frees what `c` holds and zeroes it; accepts a zeroed one. */
void tpl_conv_release(struct tpl_conv *c);
/* Whether message `m` has role `role`. */
int tpl_msg_is(const struct tpl_msg *m, const char *role);

/* Appends tools[i] as the server's Tool.model_dump leaves it, printed with
 * json.dumps (tpl_py.h): vLLM {"type", "function": {"name", "description",
 * "parameters", other keys}, other keys}; SGLang (serving_chat hands a Jinja
 * template item.model_dump(), protocol.py's Tool and Function) {"type",
 * "function": {"description", "name", "parameters", "strict"},
 * "defer_loading": null}. ERR_INPUT for a tool that is not {"type":
 * "function", "function": {"name": ...}}; ERR_UNSUPPORTED for a
 * "defer_loading" on SGLang (it moves between the two objects). */
enum err tpl_msg_dump_tool(const cJSON *tool, size_t i, enum tpl_server server,
			   struct buf *out, struct diag *d);

/* Appends the `function` object of tools[i] as the server's model leaves
 * it, printed with json.dumps: vLLM {"name", "description", "parameters",
 * other keys} (null for an absent description or parameters); SGLang
 * {"description", "name", "parameters", "strict"} (strict false when absent,
 * other keys dropped). What the DeepSeek encoders print per tool. */
enum err tpl_msg_dump_function(const cJSON *tool, size_t i, enum tpl_server server,
			       struct buf *out, struct diag *d);

/* The chat_template_kwargs the template sees once `server` has applied the
 * request's top-level `reasoning_effort` (borrowed, may be NULL), never
 * overriding a key `kwargs` already has:
 *   SGLang (ChatCompletionRequest.normalize_reasoning_inputs): "thinking"
 *   and "enable_thinking" = (effort != "none");
 *   vLLM: "enable_thinking" = (effort != "none"), as vLLM main does; older
 *   releases (v0.11.2) do not (docs/protocol.md "Thinking switches").
 * *owned is a new object the caller deletes, or NULL when `kwargs` is to be
 * used as is. ERR_NOMEM only. */
enum err tpl_msg_effort_kwargs(const cJSON *kwargs, enum tpl_server server,
			       const cJSON *reasoning_effort, cJSON **owned,
			       struct diag *d);

/* Checks raw JSON text (a messages or tools file, a request body) for a
 * string escape \u0000: cJSON ends strings there, so such a prompt would be
 * rendered and counted silently truncated. ERR_UNSUPPORTED with the byte
 * offset; `what` names the input in the message. */
enum err tpl_check_nul(const char *json, size_t len, const char *what,
		       struct diag *d);

#endif
