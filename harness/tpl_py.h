/*
 * tpl_py — Python's printing of JSON values and strings, as the servers'
 * templates see it: json.dumps(ensure_ascii=False) (the `tojson` of
 * transformers' Jinja environment and of vLLM's tool dumps) and str.strip()
 * (Jinja's `trim`). Pure functions over borrowed input; output goes to a
 * caller's buffer.
 *
 * Known gap: cJSON keeps no number lexeme, so a float written with an
 * integral value (1.0) prints 1 here, 1.0 by Python (tpl_py_numbers_exact
 * tells such text apart).
 */
#ifndef NEEDLE_TPL_PY_H
#define NEEDLE_TPL_PY_H

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

/* Appends json.dumps(v, ensure_ascii=False) of `v`: ", " and ": "
 * separators, keys in order, non-ASCII raw, floats as Python's repr.
 * ERR_NOMEM only. */
enum err tpl_pyjson(const cJSON *v, struct buf *out);

/* Whether every number in the JSON text `s` (NUL-terminated) survives cJSON:
 * 0 when one is a float with an integral value (1.0, -0.0, 1e3), which
 * tpl_pyjson would print as an integer, or an integer of magnitude 2^53 or
 * more, which a double cannot hold. Callers that print parsed request JSON
 * (tool-call arguments) refuse such text rather than print it wrong. */
int tpl_py_numbers_exact(const char *s);

/* Appends `s` without the leading and trailing characters Python's
 * str.isspace() accepts (U+0085, U+001C..U+001F and U+3000 included, U+FEFF
 * not). `s` is assumed to be UTF-8. ERR_NOMEM only. */
enum err tpl_py_strip(const char *s, struct buf *out);

#endif
