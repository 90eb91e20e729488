/*
 * tpl_turns — the renderer of descriptor style "turns" (ChatML, Qwen3,
 * Llama 3): every message is PREFIX + content + SUFFIX, with the optional
 * tools block, tool calls, grouped tool results and Qwen3's reasoning rule
 * as tpl_desc.h describes them.
 */
#ifndef NEEDLE_TPL_TURNS_H
#define NEEDLE_TPL_TURNS_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "tpl_desc.h"
#include "tpl_msg.h"

/* Appends the prompt of conversation `c` under descriptor `t` (style
 * "turns"): `tools` the request's tools or NULL, dumped as `server` hands
 * them to the model's template (tpl_msg_dump_tool: SGLang's model_dump puts
 * "description" first and adds "strict" and "defer_loading"), `gen`
 * add_generation_prompt, `thinking` the resolved thinking switch. ERR_INPUT
 * for a malformed tool; on failure `out` may hold a partial prompt. */
enum err tpl_turns_render(const struct tpl_desc *t, const struct tpl_conv *c,
			  const cJSON *tools, enum tpl_server server, int gen, int thinking,
			  struct buf *out, struct diag *d);

#endif
