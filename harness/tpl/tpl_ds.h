/*
 * tpl_ds — the renderers of the DeepSeek descriptor styles: C code for the
 * logic a descriptor cannot express, with every literal marker still taken
 * from the descriptor (tpl_desc.h lists the keys of each style).
 *   "deepseek-v3"   the HF tokenizer_config.json chat_template of V3;
 *   "deepseek-v3.1" the HF Jinja of V3.1 (llama.cpp's copy);
 *   "deepseek-v3.2" encoding_dsv32.py as vLLM and SGLang run it.
 */
#ifndef NEEDLE_TPL_DS_H
#define NEEDLE_TPL_DS_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "tpl_desc.h"
#include "tpl_msg.h"

/* Each appends the prompt of conversation `c` under descriptor `t` of its
 * style; `gen` is add_generation_prompt, `thinking` the resolved thinking
 * switch. On failure `out` may hold a partial prompt. */

/* V3: system messages hoisted; the tool-outputs block opened only by the
 * first tool result of the conversation (the Jinja never resets it). */
enum err tpl_dsv3_render(const struct tpl_desc *t, const struct tpl_conv *c,
			 int gen, struct buf *out);
/* V3.1: tool-call arguments as the request's string. */
enum err tpl_dsv31_render(const struct tpl_desc *t, const struct tpl_conv *c,
			  int gen, int thinking, struct buf *out);
/* V3.2: DSML tool calls and results, developer turns, drop_thinking
 * (vLLM: when the last message is a user turn; SGLang: always), and the
 * tools block (tpl_ds_tools_block) where each server puts it: vLLM in a new
 * first system message, so before the user's system text; SGLang after the
 * first system message's text. ERR_INPUT for a conversation the encoder
 * rejects (a tool result without a call, a thinking-mode assistant turn with
 * neither reasoning nor calls). The generation prompt is always added. */
enum err tpl_dsv32_render(const struct tpl_desc *t, const struct tpl_conv *c,
			  const cJSON *tools, int thinking, enum tpl_server server,
			  struct buf *out, struct diag *d);

/* Appends "\n\n" + the descriptor's "tools_template" with "{{tool_schemas}}"
 * replaced by each tool's function object (tpl_msg_dump_function for
 * `server`) joined with "\n": render_tools of the DeepSeek encoders.
 * ERR_INPUT names a malformed tool. */
enum err tpl_ds_tools_block(const struct tpl_desc *t, const cJSON *tools,
			    enum tpl_server server, struct buf *out, struct diag *d);

#endif
