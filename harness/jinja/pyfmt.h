/*
 * pyfmt — Python's text forms of the jinja values (jinja_value.h), as CPython
 * 3.11 writes them: str() and repr() (None, True, 1.0, 1e+20, ['a', 1],
 * {'k': None}, (1,)), and json.dumps with ensure_ascii, indent, separators
 * and sort_keys (transformers' tojson).
 *
 * Whatever CPython would print in a way needle does not reproduce is refused
 * (ERR_UNSUPPORTED, message naming the value): reprs of generators, views and
 * macros, and repr of characters whose printability depends on the Unicode
 * version of the server's Python (astral code points outside long-stable
 * blocks). json.dumps of a value json cannot encode is ERR_INPUT with the
 * TypeError text ("Object of type Undefined is not JSON serializable").
 * Everything appends to `out`, which may hold a partial result on failure.
 */
#ifndef NEEDLE_PYFMT_H
#define NEEDLE_PYFMT_H

#include "base/buf.h"
#include "base/err.h"
#include "jinja_value.h"

struct pyfmt_json {
	int ensure_ascii;     /* escape non-ASCII as \uXXXX */
	int indent;           /* spaces per level; -1 = None (one line) */
	const char *item_sep; /* NULL: ", " (or "," with indent) */
	const char *key_sep;  /* NULL: ": " */
	int sort_keys;
};

/* float.__repr__: shortest round-trip digits, "1.0", "1e+16", "1e-05",
 * "-0.0", "inf", "nan". */
enum err pyfmt_float(double f, struct buf *out);
/* str(v): strings as they are, Undefined as "", the rest as repr. */
enum err pyfmt_str(const struct jv *v, struct buf *out, struct diag *d);
/* repr(v). */
enum err pyfmt_repr(const struct jv *v, struct buf *out, struct diag *d);
/* json.dumps of the string `s` (`n` bytes of UTF-8): the quoted literal,
 * control characters escaped, non-ASCII raw or, with `ascii`, as \uXXXX
 * (surrogate pairs above U+FFFF). ERR_NOMEM only. */
enum err pyfmt_json_string(const char *s, size_t n, int ascii, struct buf *out);
/* json.dumps(v, ...). */
enum err pyfmt_json(const struct jv *v, const struct pyfmt_json *o, struct buf *out,
		    struct diag *d);

#endif
