/* jinja_lex — see jinja_lex.h. Mirrors jinja2/lexer.py (3.1): the root rule
 * `(.*?)(?:raw|{%|{{|{#)` with OptionalLStrip, block_suffix_re "\n?", the
 * balancing stack that lets `}}` close a dict inside `{{ }}`. */
#include "jinja_lex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "tok/uni.h"

#define MAX_NEST 256

struct lx {
	struct jv_arena *a;
	const char *s; /* normalized template */
	size_t n, pos;
	struct jl_tokens *out;
	size_t cap;
	struct diag *d;
	int line_starting;
	char stack[MAX_NEST]; /* expected closers */
	size_t depth;
	size_t cur_pos;   /* line/column cursor */
	unsigned cur_line;
	size_t cur_bol;
};

int jinja_lex_isspace(uint32_t cp)
{
	return (cp >= 0x1C && cp <= 0x1F) || uni_is_space(cp);
}

static void where(struct lx *l, size_t pos, unsigned *line, unsigned *col)
{
	if (pos < l->cur_pos) {
		l->cur_pos = 0;
		l->cur_line = 1;
		l->cur_bol = 0;
	}
	for (; l->cur_pos < pos && l->cur_pos < l->n; l->cur_pos++)
		if (l->s[l->cur_pos] == '\n') {
			l->cur_line++;
			l->cur_bol = l->cur_pos + 1;
		}
	*line = l->cur_line;
	*col = (unsigned)(pos - l->cur_bol + 1);
}

static enum err fail(struct lx *l, size_t pos, enum err code, const char *what)
{
	unsigned line, col;

	where(l, pos, &line, &col);
	if (code == ERR_INPUT)
		return diag_fail(l->d, code,
				 "the server would reject this request: template syntax error: %s "
				 "(template line %u, column %u)", what, line, col);
	return diag_fail(l->d, code, "unsupported in template: %s (template line %u, column %u)",
			 what, line, col);
}

/* A failed allocation of `n` bytes at `pos`: the template's memory cap
 * (ERR_LIMIT, with the position) or exhausted memory. */
static enum err nomem(struct lx *l, size_t pos, size_t n)
{
	char what[96];

	if (!jinja_value_arena_full(l->a, n))
		return diag_fail(l->d, ERR_NOMEM, "out of memory");
	snprintf(what, sizeof(what), "the parsed template would take more than %zu bytes",
		 l->a->max);
	return fail(l, pos, ERR_LIMIT, what);
}

static enum err emit(struct lx *l, enum jl_type t, size_t pos, const char *s, size_t n,
		     struct jl_token **tok)
{
	struct jl_tokens *o = l->out;
	struct jl_token *k;

	if (o->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct jl_token *v = jinja_value_alloc(l->a, cap * sizeof(*v));

		if (!v)
			return nomem(l, pos, cap * sizeof(*v));
		if (o->n)
			memcpy(v, o->v, o->n * sizeof(*v));
		o->v = v;
		l->cap = cap;
	}
	k = &o->v[o->n++];
	memset(k, 0, sizeof(*k));
	k->t = t;
	k->s = s;
	k->n = n;
	where(l, pos, &k->line, &k->col);
	if (tok)
		*tok = k;
	return ERR_OK;
}

/* Length of the whitespace run (str.isspace) at s[i..n). */
static size_t ws_run(const char *s, size_t i, size_t n)
{
	size_t start = i, k;
	uint32_t cp;

	while (i < n) {
		if ((unsigned char)s[i] < 0x80) {
			if (!jinja_lex_isspace((unsigned char)s[i]))
				break;
			i++;
			continue;
		}
		k = utf8_decode(s + i, n - i, &cp);
		if (!jinja_lex_isspace(cp))
			break;
		i += k;
	}
	return i - start;
}

/* Length of `s[0..n)` without its trailing whitespace (str.rstrip()). */
static size_t rstrip_len(const char *s, size_t n)
{
	size_t i = 0, keep = 0, k;
	uint32_t cp;

	while (i < n) {
		k = (unsigned char)s[i] < 0x80 ? 1 : utf8_decode(s + i, n - i, &cp);
		if (k == 1)
			cp = (unsigned char)s[i];
		i += k;
		if (!jinja_lex_isspace(cp))
			keep = i;
	}
	return keep;
}

/* The text before a tag with OptionalLStrip applied; `sign` is the
 * whitespace-control character after the tag opener. */
static size_t stripped_text(struct lx *l, const char *text, size_t n, char sign, int is_var)
{
	size_t lpos, i;

	if (sign == '-')
		return rstrip_len(text, n);
	if (sign == '+' || is_var)
		return n;
	for (lpos = n; lpos > 0 && text[lpos - 1] != '\n'; lpos--)
		;
	if (!(lpos > 0 || l->line_starting) || lpos == n)
		return n;
	i = ws_run(text, lpos, n);
	return lpos + i == n ? lpos : n;
}

static int at(struct lx *l, size_t i, const char *lit)
{
	size_t k = strlen(lit);

	return i + k <= l->n && !memcmp(l->s + i, lit, k);
}

/* `{%[-+]? raw [-]?%}` at `i`: its end, or 0. */
static size_t raw_begin(struct lx *l, size_t i)
{
	if (!at(l, i, "{%"))
		return 0;
	i += 2;
	if (i < l->n && (l->s[i] == '-' || l->s[i] == '+'))
		i++;
	i += ws_run(l->s, i, l->n);
	if (!at(l, i, "raw"))
		return 0;
	i += 3;
	i += ws_run(l->s, i, l->n);
	if (at(l, i, "-%}"))
		return i + 3 + ws_run(l->s, i + 3, l->n);
	return at(l, i, "%}") ? i + 2 : 0;
}

/* End of a block-style closer ("+%}", "-%}\s*", "%}\n?") starting at `i`
 * (where `i` points at the sign or at '%'), or 0. */
static size_t close_end(struct lx *l, size_t i, char c1)
{
	char pat[4] = { c1, '}', 0, 0 };

	if (l->s[i] == '+' && at(l, i + 1, pat))
		return i + 3;
	if (l->s[i] == '-' && at(l, i + 1, pat))
		return i + 3 + ws_run(l->s, i + 3, l->n);
	if (at(l, i, pat))
		return i + 2 + (i + 2 < l->n && l->s[i + 2] == '\n');
	return 0;
}

static enum err lex_raw(struct lx *l, size_t body)
{
	size_t i, j, end = 0;
	char sign = 0;

	for (i = body; i + 1 < l->n && !end; i++) {
		if (!at(l, i, "{%"))
			continue;
		j = i + 2;
		sign = j < l->n && (l->s[j] == '-' || l->s[j] == '+') ? l->s[j++] : 0;
		j += ws_run(l->s, j, l->n);
		if (!at(l, j, "endraw"))
			continue;
		j += 6;
		j += ws_run(l->s, j, l->n);
		if (j < l->n && (end = close_end(l, j, '%')))
			break;
	}
	if (!end)
		return fail(l, body, ERR_INPUT, "missing end of raw directive");
	j = stripped_text(l, l->s + body, i - body, sign, 0);
	if (j && emit(l, JL_DATA, body, l->s + body, j, NULL))
		return l->d->code;
	l->line_starting = l->s[end - 1] == '\n';
	l->pos = end;
	return ERR_OK;
}

static enum err lex_comment(struct lx *l, size_t body)
{
	size_t i, end = 0;

	for (i = body; i + 1 < l->n; i++) {
		if (l->s[i] == '#' && l->s[i + 1] == '}') {
			if (i > body && (l->s[i - 1] == '-' || l->s[i - 1] == '+'))
				end = close_end(l, i - 1, '#');
			else
				end = close_end(l, i, '#');
			break;
		}
	}
	if (!end)
		return fail(l, body, ERR_INPUT, "missing end of comment tag");
	l->line_starting = l->s[end - 1] == '\n';
	l->pos = end;
	return ERR_OK;
}

/* One escape after a backslash at s[*i] (the char after '\'); writes UTF-8
 * to `o`, returns bytes written or -1 (bad escape) or -2 (unsupported). */
static int unescape(const char *s, size_t n, size_t *i, char *o)
{
	static const char simple[] = "\\\\''\"\"a\ab\bf\fn\nr\rt\tv\v";
	char c = s[*i];
	size_t k, digits;
	uint32_t cp = 0;
	int h;

	for (k = 0; simple[k]; k += 2)
		if (c == simple[k]) {
			(*i)++;
			*o = simple[k + 1];
			return 1;
		}
	if (c == '\n') {
		(*i)++;
		return 0;
	}
	if (c >= '0' && c <= '7') {
		for (k = 0; k < 3 && *i < n && s[*i] >= '0' && s[*i] <= '7'; k++)
			cp = cp * 8 + (uint32_t)(s[(*i)++] - '0');
		return utf8_encode(cp, o);
	}
	digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
	if (!digits) {
		if (c == 'N' || (unsigned char)c >= 0x80)
			return -2;
		o[0] = '\\';
		o[1] = c;
		(*i)++;
		return 2;
	}
	(*i)++;
	for (k = 0; k < digits; k++) {
		if (*i >= n || (h = utf8_hexval(s[*i])) < 0)
			return -1;
		cp = cp * 16 + (uint32_t)h;
		(*i)++;
	}
	if (cp > 0x10FFFF)
		return -1;
	if (cp >= 0xD800 && cp <= 0xDFFF)
		return -2;
	return utf8_encode(cp, o);
}

static enum err lex_string(struct lx *l, size_t start, size_t *end)
{
	char q = l->s[start];
	size_t i = start + 1, n = 0;
	char *o;
	struct jl_token *t;
	int w;

	while (i < l->n && l->s[i] != q)
		i += l->s[i] == '\\' ? 2 : 1;
	if (i >= l->n)
		return fail(l, start, ERR_INPUT, "unexpected char");
	*end = i + 1;
	o = jinja_value_alloc(l->a, i - start + 1);
	if (!o)
		return nomem(l, start, i - start + 1);
	for (i = start + 1; i < *end - 1;) {
		if (l->s[i] != '\\') {
			o[n++] = l->s[i++];
			continue;
		}
		i++;
		w = unescape(l->s, *end - 1, &i, o + n);
		if (w == -1)
			return fail(l, start, ERR_INPUT, "bad escape in a string literal");
		if (w == -2)
			return fail(l, start, ERR_UNSUPPORTED, "this escape in a string literal");
		n += (size_t)w;
	}
	if (emit(l, JL_STRING, start, o, n, &t))
		return l->d->code;
	return ERR_OK;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Digits with single underscores between them, from `i`; returns the end. */
static size_t digit_run(struct lx *l, size_t i)
{
	if (i >= l->n || !is_digit(l->s[i]))
		return i;
	while (i < l->n && is_digit(l->s[i])) {
		i++;
		if (i + 1 < l->n && l->s[i] == '_' && is_digit(l->s[i + 1]))
			i++;
	}
	return i;
}

static size_t float_end(struct lx *l, size_t start)
{
	size_t i = digit_run(l, start), j, e;

	if (start > 0 && l->s[start - 1] == '.')
		return 0;
	j = i;
	if (j < l->n && l->s[j] == '.' && digit_run(l, j + 1) > j + 1)
		j = digit_run(l, j + 1);
	if (j < l->n && (l->s[j] == 'e' || l->s[j] == 'E')) {
		e = j + 1;
		if (e < l->n && (l->s[e] == '+' || l->s[e] == '-'))
			e++;
		if (digit_run(l, e) > e)
			return digit_run(l, e);
	}
	return j > i ? j : 0;
}

static enum err lex_number(struct lx *l, size_t start, size_t *end)
{
	size_t f = float_end(l, start), i, n = 0, stop;
	char tmp[128];
	struct jl_token *t;

	if (l->s[start] == '0' && start + 1 < l->n && strchr("xXoObB", l->s[start + 1]))
		return fail(l, start, ERR_UNSUPPORTED, "a hex, octal or binary literal");
	stop = f ? f : digit_run(l, start);
	if (!f && l->s[start] == '0')
		for (stop = start + 1; stop + 1 < l->n && l->s[stop] == '_' &&
		     l->s[stop + 1] == '0';)
			stop += 2;
	for (i = start; i < stop; i++)
		if (l->s[i] != '_' && n + 1 < sizeof(tmp))
			tmp[n++] = l->s[i];
	tmp[n] = 0;
	if (emit(l, f ? JL_FLOAT : JL_INT, start, l->s + start, stop - start, &t))
		return l->d->code;
	if (f)
		t->f = strtod(tmp, NULL);
	else if (n > 19 || (n == 19 && strcmp(tmp, "9223372036854775807") > 0))
		t->big = 1;
	else
		t->i = strtoll(tmp, NULL, 10);
	*end = stop;
	return ERR_OK;
}

static enum err lex_op(struct lx *l, size_t i, size_t *end)
{
	static const char *const two[] = { "**", "//", "==", "!=", ">=", "<=" };
	static const char one[] = "+-/*%~[](){}><=.:|,;";
	size_t k;
	char c = l->s[i];

	for (k = 0; k < sizeof(two) / sizeof(two[0]); k++)
		if (at(l, i, two[k])) {
			*end = i + 2;
			return emit(l, JL_OP, i, l->s + i, 2, NULL);
		}
	if (!strchr(one, c) || !c)
		return fail(l, i, (unsigned char)c >= 0x80 ? ERR_UNSUPPORTED : ERR_INPUT,
			    (unsigned char)c >= 0x80 ? "a non-ASCII name" : "unexpected char");
	if (c == '(' || c == '[' || c == '{') {
		if (l->depth == MAX_NEST)
			return fail(l, i, ERR_LIMIT, "brackets nested too deeply");
		l->stack[l->depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
	} else if (c == ')' || c == ']' || c == '}') {
		if (!l->depth || l->stack[l->depth - 1] != c)
			return fail(l, i, ERR_INPUT, "unexpected closing bracket");
		l->depth--;
	}
	*end = i + 1;
	return emit(l, JL_OP, i, l->s + i, 1, NULL);
}

/* The tag closer at `i` ("%}" forms for blocks, "}}" forms for variables):
 * its end, or 0. */
static size_t tag_end(struct lx *l, size_t i, int is_var)
{
	if (l->depth)
		return 0;
	if (!is_var)
		return close_end(l, i, '%');
	if (at(l, i, "-}}"))
		return i + 3 + ws_run(l->s, i + 3, l->n);
	return at(l, i, "}}") ? i + 2 : 0;
}

static enum err lex_tag(struct lx *l, size_t i, int is_var)
{
	size_t end, w;
	char c;

	l->depth = 0;
	for (;;) {
		if (i >= l->n)
			return fail(l, i, ERR_INPUT, "unexpected end of template");
		if ((end = tag_end(l, i, is_var))) {
			if (emit(l, is_var ? JL_VAR_END : JL_BLOCK_END, i, NULL, 0, NULL))
				return l->d->code;
			l->line_starting = l->s[end - 1] == '\n';
			l->pos = end;
			return ERR_OK;
		}
		c = l->s[i];
		if ((w = ws_run(l->s, i, l->n))) {
			i += w;
			continue;
		}
		if (is_digit(c)) {
			if (lex_number(l, i, &i))
				return l->d->code;
		} else if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			end = i;
			while (end < l->n && (l->s[end] == '_' || is_digit(l->s[end]) ||
					      (l->s[end] >= 'a' && l->s[end] <= 'z') ||
					      (l->s[end] >= 'A' && l->s[end] <= 'Z')))
				end++;
			if (end < l->n && (unsigned char)l->s[end] >= 0x80)
				return fail(l, i, ERR_UNSUPPORTED, "a non-ASCII name");
			if (emit(l, JL_NAME, i, l->s + i, end - i, NULL))
				return l->d->code;
			i = end;
		} else if (c == '\'' || c == '"') {
			if (lex_string(l, i, &i))
				return l->d->code;
		} else if (lex_op(l, i, &i)) {
			return l->d->code;
		}
	}
}

/* One step of the root state at l->pos. */
static enum err lex_root(struct lx *l)
{
	size_t i, end, keep;
	char kind = 0, sign;

	for (i = l->pos; i + 1 < l->n; i++)
		if (l->s[i] == '{' && (l->s[i + 1] == '%' || l->s[i + 1] == '{' ||
				       l->s[i + 1] == '#')) {
			kind = l->s[i + 1];
			break;
		}
	if (!kind) {
		if (emit(l, JL_DATA, l->pos, l->s + l->pos, l->n - l->pos, NULL))
			return l->d->code;
		l->pos = l->n;
		return ERR_OK;
	}
	sign = i + 2 < l->n && (l->s[i + 2] == '-' || l->s[i + 2] == '+') ? l->s[i + 2] : 0;
	keep = stripped_text(l, l->s + l->pos, i - l->pos, sign, kind == '{');
	if (keep && emit(l, JL_DATA, l->pos, l->s + l->pos, keep, NULL))
		return l->d->code;
	l->line_starting = 0;
	if (kind == '%' && (end = raw_begin(l, i)))
		return lex_raw(l, end);
	end = i + 2 + (sign != 0);
	if (kind == '#')
		return lex_comment(l, end);
	if (emit(l, kind == '{' ? JL_VAR_BEGIN : JL_BLOCK_BEGIN, i, NULL, 0, NULL))
		return l->d->code;
	return lex_tag(l, end, kind == '{');
}

/* The template with newlines normalized and one trailing newline dropped. */
static char *normalize(struct jv_arena *a, const char *src, size_t len, size_t *n)
{
	char *o = jinja_value_alloc(a, len + 1);
	size_t i, k = 0;

	if (!o)
		return NULL;
	for (i = 0; i < len; i++) {
		if (src[i] == '\r') {
			o[k++] = '\n';
			if (i + 1 < len && src[i + 1] == '\n')
				i++;
		} else {
			o[k++] = src[i];
		}
	}
	if (k && o[k - 1] == '\n')
		k--;
	*n = k;
	return o;
}

enum err jinja_lex(struct jv_arena *a, const char *src, size_t len, struct jl_tokens *out,
		   struct diag *d)
{
	struct lx l;

	memset(&l, 0, sizeof(l));
	l.a = a;
	l.d = d;
	l.out = out;
	l.line_starting = 1;
	l.cur_line = 1;
	out->v = NULL;
	out->n = 0;
	l.s = normalize(a, src, len, &l.n);
	if (!l.s)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	while (l.pos < l.n)
		if (lex_root(&l))
			return d->code;
	return emit(&l, JL_EOF, l.n, NULL, 0, NULL);
}
