/*
 * jinja — renders a model's own chat template (a Jinja text) byte for byte as
 * vLLM and SGLang do: Python jinja2 3.1 in transformers'
 * ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
 * extensions=[AssistantTracker, loopcontrols]) with transformers' globals
 * (utils/chat_template_utils.py):
 *   - tojson(x, ensure_ascii=False, indent=None, separators=None,
 *     sort_keys=False) is json.dumps with those arguments (no HTML escaping);
 *   - raise_exception(msg) raises (the server answers 400);
 *   - strftime_now(fmt) formats the clock the caller pinned (jinja_ctx_clock);
 *   - {% generation %}...{% endgeneration %} renders its body.
 * Values print as Python prints them (None, True, 1.0, ['a', 1], {'k': None}),
 * strings are sequences of code points, scoping is Jinja's (a for body is a
 * fresh scope each iteration, `if` is not a scope, macros are closures).
 *
 * Three outcomes, never a fourth:
 *   ERR_OK          the prompt Python would render, exactly;
 *   ERR_INPUT       Python would raise, so the server rejects the request
 *                   (message "the server would reject this request: ..."):
 *                   template syntax errors, TypeError ('a' + 1), sandbox
 *                   refusals (list.append), UndefinedError (an attribute of an
 *                   undefined value), raise_exception;
 *   ERR_UNSUPPORTED the template does something outside the implemented
 *                   subset (message names the construct); never a guess.
 * Every message ends with the template position: "(template line L, column C)".
 * Nesting past what CPython can compile or run (RecursionError, "too many
 * nested parentheses", "too many statically nested blocks", measured with
 * jinja2 3.1 on CPython 3.11: see jinja_parse.h and JV_MAX_DEPTH in
 * jinja_value.h) is ERR_UNSUPPORTED or ERR_LIMIT, with its position: never a
 * crash, never a render Python refuses. ERR_NOMEM and ERR_LIMIT (the output
 * cap of `out` and the budgets below) may also occur. CLI mapping: all of
 * these exit 2. An integer outside 64 bits computes on libcrypto's BIGNUM,
 * loaded then (jinja_bigint): when it cannot be, ERR_LOADER (io.h).
 *
 * transformers passes messages, tools and documents (None when absent, so
 * `tools is defined` is true), add_generation_prompt, the tokenizer's special
 * tokens (bos_token, eos_token, ...) and the chat_template_kwargs; the caller
 * sets each. Internals: jinja_lex (tokens), jinja_parse (syntax tree),
 * jinja_value (values, arena, JSON input), jinja_eval (scopes, statements),
 * jinja_builtin (operators, tests, methods, globals), jinja_filter, jinja_str
 * (str methods), jinja_fmt (`%` and str.format), jinja_bigint (integers
 * beyond 64 bits), pyfmt (Python's str/repr/json.dumps).
 *
 * The context holds the template's variables. Build it from JSON text, or
 * from a cJSON tree whose numbers are kept as their lexemes (tpl_py_parse's
 * cJSON_Raw items), not from plain cJSON numbers: numbers keep their lexeme
 * class as Python's json.loads sees them (1 is an int, 1.0 a float printed
 * "1.0", 12345678901234567890 stays exact), keys keep request order, a
 * duplicate key keeps its first position and last value. So a caller that
 * prepares messages as the server does (vLLM parses tool-call arguments with
 * json.loads) should splice the argument lexemes into what it passes, not
 * round-trip them through cJSON numbers.
 *
 *	struct jinja_ctx *c = jinja_ctx_new();
 *	jinja_ctx_set_json(c, "messages", msgs, msgs_len, &d);  (or _cjson)
 *	jinja_ctx_set_json(c, "tools", "null", 4, &d);   (transformers passes None)
 *	jinja_ctx_set_bool(c, "add_generation_prompt", 1, &d);
 *	jinja_ctx_set_str(c, "bos_token", "<s>", 3, &d);
 *	jinja_ctx_merge_json(c, kwargs, kwargs_len, &d);  (chat_template_kwargs)
 *	jinja_ctx_clock(c, &tm);
 *	err = jinja_render(tpl, tpl_len, c, &out, &d);
 *	jinja_ctx_free(c);
 *
 * Not thread-safe per object; distinct objects are independent.
 */
#ifndef NEEDLE_JINJA_H
#define NEEDLE_JINJA_H

#include <stddef.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"

/*
 * Budgets. Each one refuses the render with ERR_LIMIT and a message ending
 * with the template position; the CLI exits 2. All are far above what a real
 * chat template needs: a 1,000-message conversation of 1.2M tokens (4.6 MB
 * of prompt) rendered through Qwen3's, Llama 3's or Command R7B's own
 * template takes at most 50,000 steps (0.1%), 10M units of work (0.06%),
 * 14 MB of values (3%) and under 1 s.
 */
/* Evaluation steps one render may take (one per expression or statement
 * evaluated; a loop over 1M messages is far below). */
#define JINJA_MAX_STEPS 50000000
/* Units of work inside builtins one render may do: one unit per byte a
 * builtin scans, copies or writes (`in`, .count(), .replace(), .find(),
 * split, join, comparisons, sort, string repetition, indent, ...) and per
 * item it visits (JV_WORK_ITEM). 16 Gi units: seconds of work at most. */
#define JINJA_MAX_WORK ((size_t)1 << 34)
/* Wall-clock seconds one render may take (jinja_ctx_time changes it). */
#define JINJA_MAX_SECONDS 60.0
/* Nesting of statements, expressions and macro calls at run time. */
#define JINJA_MAX_DEPTH 1000
/* Macro calls under way at once: jinja2 3.1 on CPython 3.11 raises
 * RecursionError at 199 (measured with a macro calling itself). */
#define JINJA_MAX_CALLS 198
/* Bytes of values one render or one context may allocate; a builtin about
 * to make a value past what is left refuses before allocating
 * ("a" * 10**10, indent(10**9)). The output buffer has its own cap. */
#define JINJA_MAX_MEMORY ((size_t)512 << 20)
/* Bytes a parsed template may take (its syntax tree and decoded text): a
 * real chat template of 30 KB takes about 2 MB. */
#define JINJA_MAX_TEMPLATE_MEMORY ((size_t)256 << 20)

struct jinja_ctx;
struct jinja_tpl;

/* --- context ---------------------------------------------------------- */

/* A new empty context (no variables, clock 1970-01-01T00:00:00); the caller
 * owns it. NULL when out of memory. */
struct jinja_ctx *jinja_ctx_new(void);
/* Frees the context and every value it holds. Accepts NULL. */
void jinja_ctx_free(struct jinja_ctx *c);

/* Sets variable `name` (NUL-terminated, copied) to the JSON value in `json`
 * (`len` bytes, copied), read as Python's json.loads reads it. A variable set
 * twice keeps the last value. ERR_INPUT names the JSON position when the text
 * is not one JSON value or holds a lone surrogate (which Python would keep);
 * ERR_UNSUPPORTED for the NaN and Infinity tokens Python accepts. */
enum err jinja_ctx_set_json(struct jinja_ctx *c, const char *name,
			    const char *json, size_t len, struct diag *d);
/* The same from a cJSON tree `v`, borrowed: its strings are not copied, so
 * `v` must stay unchanged until the context is freed. Numbers keep their
 * lexeme class when `v` holds them as cJSON_Raw lexemes (as tpl/'s
 * tpl_py_parse reads a request); a cJSON number reads as the text cJSON
 * prints for it. The value is the one jinja_ctx_set_json would set from the
 * text cJSON prints for `v`, without printing and reading it again. */
enum err jinja_ctx_set_cjson(struct jinja_ctx *c, const char *name, const cJSON *v,
			     struct diag *d);
/* A variable can also be built in place, a list of dicts item by item,
 * without a cJSON tree in between (a request's messages as the server
 * prepares them): the handles stay valid while the context lives. Strings
 * and keys are borrowed as jinja_ctx_set_cjson borrows them (valid UTF-8
 * followed by a NUL, unchanged until the context is freed); a cJSON value is
 * read as jinja_ctx_set_cjson reads it, and borrowed the same way. */
struct jinja_list;
struct jinja_dict;
/* Sets variable `name` to a new empty list with room for `cap` items. */
enum err jinja_ctx_set_list(struct jinja_ctx *c, const char *name, size_t cap,
			    struct jinja_list **out, struct diag *d);
/* Appends a new empty dict, with room for `cap` keys, to `l`. */
enum err jinja_list_add_dict(struct jinja_ctx *c, struct jinja_list *l, size_t cap,
			     struct jinja_dict **out, struct diag *d);
/* dict[key] = the str of the `n` bytes at `s` (s[n] is the NUL). A key set
 * again keeps its position and takes the new value. */
enum err jinja_dict_set_str(struct jinja_ctx *c, struct jinja_dict *dict, const char *key,
			    const char *s, size_t n, struct diag *d);
/* dict[key] = the JSON value `v`. */
enum err jinja_dict_set_cjson(struct jinja_ctx *c, struct jinja_dict *dict, const char *key,
			      const cJSON *v, struct diag *d);
/* Sets every member of the JSON object `json` as a variable (the request's
 * chat_template_kwargs, or transformers' **kwargs). ERR_INPUT if it is not an
 * object. */
enum err jinja_ctx_merge_json(struct jinja_ctx *c, const char *json, size_t len,
			      struct diag *d);
/* Sets `name` to the string `s` (`n` bytes of UTF-8, copied; ERR_INPUT if
 * invalid UTF-8), to a bool, or to None. */
enum err jinja_ctx_set_str(struct jinja_ctx *c, const char *name, const char *s,
			   size_t n, struct diag *d);
enum err jinja_ctx_set_bool(struct jinja_ctx *c, const char *name, int v,
			    struct diag *d);
enum err jinja_ctx_set_none(struct jinja_ctx *c, const char *name, struct diag *d);
/* Pins the clock strftime_now reads: `tm` is the server's local broken-down
 * time (copied). strftime_now formats it as Python's datetime.strftime does
 * for a naive datetime in the C locale: %f gives "000000", %z and %Z "". */
void jinja_ctx_clock(struct jinja_ctx *c, const struct tm *tm);

/* Caps the bytes of values one render with this context may allocate
 * (default JINJA_MAX_MEMORY); past it a render fails with ERR_LIMIT. */
void jinja_ctx_memory(struct jinja_ctx *c, size_t max);
/* Caps the wall-clock seconds of one render with this context (default
 * JINJA_MAX_SECONDS); past it a render fails with ERR_LIMIT. */
void jinja_ctx_time(struct jinja_ctx *c, double seconds);

/* --- templates --------------------------------------------------------- */

/* Parses the template text `src` (`len` bytes, UTF-8; copied) into `*out`,
 * which the caller owns. ERR_INPUT: a syntax error Python also reports
 * (message "the server would reject this request: ..." with line and
 * column); ERR_UNSUPPORTED: a statement outside the subset (include, extends,
 * import, recursive loops, ...), named with its line. `*out` is NULL on failure. */
enum err jinja_tpl_new(const char *src, size_t len, struct jinja_tpl **out,
		       struct diag *d);
/* Frees a template. Accepts NULL. */
void jinja_tpl_free(struct jinja_tpl *t);
/* Appends the rendering of `t` with the variables of `c` to `out`. On any
 * failure `out` is restored to its length at entry. The template and the
 * context are only read, so one of each can serve many renders. */
enum err jinja_tpl_render(const struct jinja_tpl *t, const struct jinja_ctx *c,
			  struct buf *out, struct diag *d);
/* Whether the template loads the name `name` anywhere. vLLM passes a
 * chat_template_kwargs entry only when jinja2.meta.find_undeclared_variables
 * lists it; this answer is a superset of that (it also counts loads that a
 * macro parameter or an earlier `set` shadows), which renders the same: a
 * variable only ever read where it is shadowed has no effect. */
int jinja_tpl_reads(const struct jinja_tpl *t, const char *name);

/* vLLM's chat-template content-format detection (chat_utils.py
 * _detect_content_format), on this template's syntax tree: 1 ("openai":
 * the server hands each message's content as a list of parts) when some for
 * loop iterates the `content` of a message, where a message is the target of
 * a loop over `messages` or over a name `set` from it (through filters, tests
 * and slices, followed transitively); 0 ("string") otherwise, and also where
 * vLLM's own detection fails (a loop over messages with a tuple target, a
 * namespace attribute set from messages) and falls back to "string". */
int jinja_tpl_openai_content(const struct jinja_tpl *t);

/* jinja_tpl_new + jinja_tpl_render + jinja_tpl_free. */
enum err jinja_render(const char *src, size_t len, const struct jinja_ctx *c,
		      struct buf *out, struct diag *d);

#endif
