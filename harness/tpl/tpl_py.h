/*
 * tpl_py — Python's printing of JSON values and strings, as the servers'
 * templates see it: json.dumps(ensure_ascii=False) (the `tojson` of
 * transformers' Jinja environment and of vLLM's tool dumps) and str.strip()
 * (Jinja's `trim`). Pure functions over borrowed input; output goes to a
 * caller's buffer.
 *
 * Request JSON as the server's json.loads reads it: cJSON keeps no number
 * lexeme (1.0, 1e5, -0.0 and 12345678901234567890 would all print as some
 * other text), so tpl_py_parse keeps each number's text in a raw item, which
 * json_print prints as written and tpl_pyjson prints as Python does.
 */
#ifndef NEEDLE_TPL_PY_H
#define NEEDLE_TPL_PY_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"

/* Appends json.dumps(v, ensure_ascii=False) of `v`: ", " and ": "
 * separators, keys in order, non-ASCII raw, floats as Python's repr; a
 * number lexeme kept by tpl_py_parse as json.loads then json.dumps leave it
 * (1.50 -> 1.5, 1E+5 -> 100000.0, -0 -> 0, big integers exact). ERR_NOMEM
 * only. */
enum err tpl_pyjson(const cJSON *v, struct buf *out);

/* json_parse (json.h) that reads `len` bytes of `text` as json.loads does:
 * every number becomes a cJSON_Raw item whose valuestring is its lexeme
 * (valuedouble keeps its value), and a repeated key keeps its first position
 * and its last value. ERR_INPUT also for a number cJSON takes and Python
 * refuses ("01", "1."). The caller owns *out (NULL on failure). */
enum err tpl_py_parse(const char *text, size_t len, cJSON **out, const char *what,
		      struct diag *d);

/* The request value `v` as the server reads it from the JSON text cJSON
 * prints for it (the request body needle sends): *owned is a tpl_py_parse
 * reading of that text the caller deletes, or NULL when `v` already reads
 * the same (no cJSON number, no repeated key). ERR_NOMEM only. */
enum err tpl_py_as_sent(const cJSON *v, cJSON **owned, const char *what, struct diag *d);

/* Whether `v` is a number (a cJSON number or a lexeme kept by
 * tpl_py_parse); its value goes to *x. */
int tpl_py_number(const cJSON *v, double *x);

/* Appends `s` without the leading and trailing characters Python's
 * str.isspace() accepts (U+0085, U+001C..U+001F and U+3000 included, U+FEFF
 * not). `s` is assumed to be UTF-8. ERR_NOMEM only. */
enum err tpl_py_strip(const char *s, struct buf *out);

#endif
