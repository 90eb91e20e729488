/*
 * jinja_lex — splits a template into tokens exactly as jinja2 3.1's lexer
 * (lexer.py) does with trim_blocks and lstrip_blocks on (internal to the
 * jinja modules; see jinja.h):
 *   - every "\r\n", "\r" and "\n" of the template becomes "\n", and one
 *     trailing newline is dropped (keep_trailing_newline=False);
 *   - `{%-`/`{{-`/`{#-` strip all whitespace before the tag, `-%}`/`-}}`/`-#}`
 *     all whitespace after it; `%}` and `#}` eat one following newline;
 *     whitespace between a line start and `{%` or `{#` (not `{{`) is dropped
 *     unless the tag is `{%+`;
 *   - `{% raw %}...{% endraw %}` is data; comments vanish;
 *   - string literals are decoded as Python's unicode-escape does.
 * Tokens borrow the template text or the arena given to jinja_lex.
 */
#ifndef NEEDLE_JINJA_LEX_H
#define NEEDLE_JINJA_LEX_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "jinja_value.h"

enum jl_type {
	JL_EOF,
	JL_DATA,        /* s/n: output text */
	JL_VAR_BEGIN,   /* {{ */
	JL_VAR_END,     /* }} */
	JL_BLOCK_BEGIN, /* {% */
	JL_BLOCK_END,   /* %} */
	JL_NAME,        /* s/n: identifier */
	JL_STRING,      /* s/n: decoded value (adjacent literals stay apart) */
	JL_INT,         /* i */
	JL_FLOAT,       /* f */
	JL_OP           /* s/n: operator text ("**", "(", ...) */
};

struct jl_token {
	enum jl_type t;
	const char *s;
	size_t n;
	int64_t i;
	double f;
	int big;            /* JL_INT beyond 64 bits: `i` unset, the value is the text */
	unsigned line, col; /* 1-based, in the template */
};

struct jl_tokens {
	struct jl_token *v; /* arena */
	size_t n;           /* the last one is JL_EOF */
};

/* Tokenizes `len` bytes of `src` into `out` (arena `a`; the normalized copy
 * of the text lives there too). ERR_INPUT for what jinja2 reports as a
 * syntax error, ERR_UNSUPPORTED for a literal needle does not decode
 * (\N{...}, a lone surrogate, non-ASCII names). */
enum err jinja_lex(struct jv_arena *a, const char *src, size_t len, struct jl_tokens *out,
		   struct diag *d);

/* Python's str.isspace for one code point. */
int jinja_lex_isspace(uint32_t cp);

#endif
