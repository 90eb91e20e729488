/*
 * tpl_dsv4 — the DeepSeek V4 and V4.1 encoders (encoding_dsv4.py,
 * encoding_dsv41.py) with each server's preparation in front of them (vLLM's
 * deepseek_v4 / deepseek_v41 tokenizer modes, SGLang's dsv4 / dsv41 paths).
 * Descriptor styles "deepseek-v4" and "deepseek-v4.1" give every literal
 * (tpl_desc.h); the logic is here.
 *
 * The encoders, as read:
 *   - BOS once; tool messages become <tool_result> blocks of a user turn,
 *     and consecutive user and tool messages share one user turn (blocks
 *     joined with "\n\n"; a user message after a turn with a task starts a
 *     new one); tool results are put in the order of the calls they answer
 *     (by tool_call_id; an unknown id sorts first, stably);
 *   - system: its content, then "\n\n" + the tools block when tools are
 *     attached (tpl_ds_tools_block); V4.1 writes the system token before a
 *     system message and before the effort text at the very start;
 *   - developer: user token + content (+ tools); content must not be empty;
 *   - user: user token + blocks;
 *   - assistant: [reasoning + "</think>"] + content + DSML calls + EOS, the
 *     reasoning part only in thinking mode and (when reasoning is dropped)
 *     only after the last user turn;
 *   - after a user or developer turn (V4.1: or a system message that is not
 *     the first) that ends the conversation or is followed by an assistant
 *     turn: assistant token + "<think>" (thinking, at or after the last user
 *     turn) or "</think>"; a message with a "task" gets that task's token
 *     instead ("action": assistant token + think tag + token);
 *   - reasoning is dropped in thinking mode unless some message carries
 *     tools: before the last user turn assistant reasoning goes and
 *     developer messages disappear;
 *   - effort: V4 adds the "max" text at the start in thinking mode (the
 *     preview encoder: "high" adds nothing, anything else is rejected);
 *     V4.1 adds "Reasoning Effort: N ..." at the start in thinking mode, N
 *     from low/high/xhigh/max = 25/50/75/100 or an integer 1..100, default
 *     high; anything else is rejected, in chat mode too.
 *   - V4.1 content parts: text parts and image placeholders joined with
 *     "\n\n"; the placeholder in text is rejected.
 *
 * The servers, as read:
 *   vLLM   thinking = kwargs thinking or enable_thinking, on when neither is
 *          given; effort "none" means chat mode. Tools go to the first
 *          message when it is a system or developer message (V4.1: the first
 *          system message anywhere), else to a new first system message.
 *          V4 effort: low/minimal/medium become "low" (which the preview
 *          encoder rejects), max stays, anything else is "high".
 *   SGLang thinking = kwargs thinking (off by default; reasoning_effort sets
 *          it first, tpl_msg_effort_kwargs). V4: an empty system message is
 *          put first when the first message is not one, and tools go to it;
 *          V4.1: tools go to the first message when it is a system message,
 *          else to a new first one. V4: only effort "max" adds text.
 * V4 tool-call history: vLLM hands its copy of the encoder the arguments its
 * message preparation parsed (tpl_msg.h), which it prints as DSML parameters
 * (string values raw, others json.dumps); arguments that are no object are
 * rejected. For SGLang it is refused (ERR_UNSUPPORTED): its releases differ in
 * how the V4 encoder prints parsed arguments (an older encoder wraps them
 * into one "arguments" parameter, a newer one prints the parameters).
 *
 * The end of the prompt, and vLLM's releases. The encoders as DeepSeek ship
 * them take no add_generation_prompt: the assistant token and think tag
 * follow the last message only when it is a user, developer or (V4.1) later
 * system message, or carries a task; after a final assistant message (or a
 * V4.1 conversation of one system message) nothing follows. SGLang's copy
 * (encoding_dsv41.py, as stored at commits 0e43c224 and 85f8105f) is that
 * encoder, and vLLM's deepseek_v41_encoding.py was until PR 57882 ("Honor
 * generation controls in the DeepSeek V4.1 tokenizer", opened 2026-09-21
 * against main at 8ec00ec2; the version stored at 6394ab4d has not got it).
 * vLLM's version stored at 21f4c25c has it: with add_generation_prompt the
 * assistant token and think tag also follow a final assistant or system
 * message (`is_last and role in ["system", "assistant"]`), and without it
 * nothing follows the last message. The PR came after v0.26.0 (release
 * notes of early September 2026), so no release up to that one has it; no
 * release notes or tags were found to say which release first ships it, and
 * the renderer is not told the server's version, so on vLLM a V4.1 request whose prompt the two differ
 * on (one ending with an assistant message or a lone system message, or
 * sent without a generation prompt where one would follow) is refused
 * (ERR_UNSUPPORTED naming both); everything else renders, the two agreeing.
 * SGLang ignores add_generation_prompt, as its encoder does. (vLLM's V4
 * encoder has the same open question, PR 46257; it renders as before.)
 *
 * Outcomes: ERR_OK; ERR_INPUT when the server would reject the request (the
 * message says so); ERR_UNSUPPORTED for what needle does not reproduce.
 */
#ifndef NEEDLE_TPL_DSV4_H
#define NEEDLE_TPL_DSV4_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "tpl_desc.h"
#include "tpl_msg.h"

/* One request as the encoder path sees it; everything borrowed. */
struct tpl_dsv4_req {
	const struct tpl_conv *conv;  /* the prepared messages (roles, reasoning, calls) */
	const cJSON *messages;        /* the request's messages (parts, ids, tasks) */
	const cJSON *tools;           /* the request's tools, or NULL */
	const cJSON *kwargs;          /* chat_template_kwargs after tpl_msg_effort_kwargs, or NULL */
	const cJSON *effort;          /* the request's reasoning_effort, or NULL */
	enum tpl_server server;
	int gen;                      /* add_generation_prompt */
};

/* Appends the prompt of `r` under descriptor `t` (style deepseek-v4 or
 * deepseek-v4.1). On failure `out` may hold a partial prompt. */
enum err tpl_dsv4_render(const struct tpl_desc *t, const struct tpl_dsv4_req *r,
			 struct buf *out, struct diag *d);

#endif
