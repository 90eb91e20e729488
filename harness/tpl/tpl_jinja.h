/*
 * tpl_jinja — a model's own Jinja chat template, rendered by the interpreter
 * (jinja.h) with the context vLLM or SGLang builds for it:
 *   messages   the request's messages as the server prepares them: content
 *              null becomes "", tool-call arguments are parsed from their
 *              JSON string by the interpreter's reader, so 1.0 and big
 *              integers stay as json.loads reads them (invalid JSON gives {}), a
 *              message's reasoning is given under both "reasoning" and
 *              "reasoning_content"; content as a string (text parts joined,
 *              vLLM "\n", SGLang " ") unless the template loops over a
 *              message's content ("openai" content format, detected from
 *              the template text: for ... in X.content / X['content']),
 *              then as a list of {"type": "text", "text": ...} parts, a
 *              media part as {"type": "image"} ("audio", "video"), as both
 *              servers hand them to such a template;
 *   tools      the request's tools as the server's model_dump leaves them
 *              (tpl_msg_dump_tool), or None; when the template raises with
 *              them, SGLang renders again with each tool's function only
 *              (tpl_msg_dump_function), and so does needle;
 *   documents  None; add_generation_prompt as asked;
 *   the model folder's special tokens (bos_token, eos_token, ...);
 *   chat_template_kwargs with the server's reasoning_effort defaults
 *              (tpl_msg_effort_kwargs) and "reasoning_effort" itself; vLLM
 *              keeps only the names the template reads, SGLang all;
 *   strftime_now on the clock the caller gives (the server's local time).
 * Refused (ERR_UNSUPPORTED), as not pinned down: media content parts with
 * a string-format template (the model's placeholder text is not in the
 * folder); content parts of other types with an "openai"-format template; a template
 * that reads a special token the folder does not give.
 */
#ifndef NEEDLE_TPL_JINJA_H
#define NEEDLE_TPL_JINJA_H

#include <time.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "tpl_model.h"
#include "tpl_msg.h"

struct tpl_jinja;

/* Parses the template text `x` (its path names it in messages); `specials`
 * (borrowed, may be NULL) are the folder's special tokens, copied. A syntax
 * error is ERR_INPUT with the template's line and column, a construct the
 * interpreter does not implement ERR_UNSUPPORTED with its name and line. */
enum err tpl_jinja_new(const struct tpl_text *x, const cJSON *specials,
		       struct tpl_jinja **out, struct diag *d);
/* Accepts NULL. */
void tpl_jinja_free(struct tpl_jinja *j);

/* One request; everything borrowed. `clock` NULL means now, local time. */
struct tpl_jinja_req {
	const cJSON *messages, *tools, *kwargs, *effort;
	int gen;
	enum tpl_server server;
	const struct tm *clock;
};

/* Appends the prompt. ERR_INPUT when Python would raise (the server
 * answers 400: the message says so), ERR_UNSUPPORTED as listed above. */
enum err tpl_jinja_render(const struct tpl_jinja *j, const struct tpl_jinja_req *r,
			  struct buf *out, struct diag *d);
/* Whether the template loads the name `name` anywhere (jinja_tpl_reads). */
int tpl_jinja_reads(const struct tpl_jinja *j, const char *name);
/* The template text (for its special-token markers). Borrowed. */
const char *tpl_jinja_text(const struct tpl_jinja *j);

#endif
