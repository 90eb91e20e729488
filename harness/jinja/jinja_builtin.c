/* jinja_builtin — see jinja_int.h. Operators follow CPython 3.11
 * (Objects/abstract.c, longobject.c, floatobject.c), attribute and item
 * access jinja2/environment.py getattr/getitem under sandbox.py, tests
 * jinja2/tests.py, globals jinja2/defaults.py and transformers. */
#include "jinja_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NOMEM(e, at) jinja_util_nomem(e, at)

static enum err undefined_error(struct je *e, const struct jn *at, const struct jv *v)
{
	return jinja_util_reject(e, at, "UndefinedError: '%s' is undefined",
				 v->u.p ? (const char *)v->u.p : "value");
}

/* --- arithmetic --- */

static int is_intlike(const struct jv *v)
{
	return v->k == JV_INT || v->k == JV_BOOL;
}

static enum err type_error2(struct je *e, const struct jn *at, const char *op,
			    const struct jv *a, const struct jv *b)
{
	if (a->k == JV_UNDEF)
		return undefined_error(e, at, a);
	if (b->k == JV_UNDEF)
		return undefined_error(e, at, b);
	if (a->k == JV_BIGINT || b->k == JV_BIGINT)
		return jinja_util_refuse(e, at, "arithmetic on an integer beyond 64 bits");
	if (!strcmp(op, "+") && (a->k == JV_STR || a->k == JV_LIST || a->k == JV_TUPLE))
		return jinja_util_reject(e, at,
					 "TypeError: can only concatenate %s (not \"%s\") to %s",
					 jinja_value_type_name(a), jinja_value_type_name(b), jinja_value_type_name(a));
	return jinja_util_reject(e, at,
				 "TypeError: unsupported operand type(s) for %s: '%s' and '%s'",
				 op, jinja_value_type_name(a), jinja_value_type_name(b));
}

static enum err concat_seq(struct je *e, const struct jn *at, const struct jv *a,
			   const struct jv *b, struct jv *out)
{
	size_t i;

	if ((a->flags | b->flags) & (JV_F_GEN | JV_F_VIEW | JV_F_RANGE))
		return type_error2(e, at, "+", a, b);
	if (jinja_util_work(e, at, (a->u.l->n + b->u.l->n) * JV_WORK_ITEM))
		return e->d->code;
	if (jinja_value_seq_new(e->a, a->k, a->u.l->n + b->u.l->n, out))
		return NOMEM(e, at);
	for (i = 0; i < a->u.l->n; i++)
		out->u.l->v[i] = a->u.l->v[i];
	for (i = 0; i < b->u.l->n; i++)
		out->u.l->v[a->u.l->n + i] = b->u.l->v[i];
	out->u.l->n = a->u.l->n + b->u.l->n;
	return ERR_OK;
}

/* str + str, with markupsafe's rule: Markup + str escapes the str. */
static enum err concat_str(struct je *e, const struct jn *at, const struct jv *a,
			   const struct jv *b, struct jv *out)
{
	struct jv x = *a, y = *b;
	char *bytes;
	unsigned markup = (a->flags | b->flags) & JV_F_MARKUP;

	if (markup && !(a->flags & JV_F_MARKUP) && jinja_str_escape(e, at, a, &x))
		return e->d->code;
	if (markup && !(b->flags & JV_F_MARKUP) && jinja_str_escape(e, at, b, &y))
		return e->d->code;
	if (jinja_util_room(e, at, x.u.s->len + y.u.s->len) ||
	    jinja_util_work(e, at, x.u.s->len + y.u.s->len))
		return e->d->code;
	if (jinja_value_str_room(e->a, x.u.s->len + y.u.s->len, &bytes, out))
		return NOMEM(e, at);
	memcpy(bytes, x.u.s->data, x.u.s->len);
	memcpy(bytes + x.u.s->len, y.u.s->data, y.u.s->len);
	out->flags = markup;
	return ERR_OK;
}

/* The bytes a str or sequence value takes (a sequence: its item slots). */
static size_t seq_bytes(const struct jv *v)
{
	return v->k == JV_STR ? v->u.s->len : v->u.l->n * sizeof(struct jv);
}

/* str * n, copying what is already made (log2(n) copies). */
static enum err repeat_str(struct je *e, const struct jn *at, const struct jv *str, size_t n,
			   struct jv *out)
{
	size_t len = str->u.s->len, total = len * n, done, more;
	struct buf s;
	enum err r = ERR_OK;

	buf_init(&s, jinja_util_buf_cap(e));
	if (total && buf_reserve(&s, total)) {
		r = NOMEM(e, at);
	} else if (total) {
		memcpy(s.data, str->u.s->data, len);
		for (done = len; done < total; done += more) {
			more = done < total - done ? done : total - done;
			memcpy(s.data + done, s.data, more);
		}
		buf_commit(&s, total);
	}
	if (!r && jinja_value_str_buf(e->a, &s, out))
		r = NOMEM(e, at);
	buf_release(&s);
	out->flags = str->flags & JV_F_MARKUP;
	return r;
}

static enum err repeat(struct je *e, const struct jn *at, const struct jv *seq, int64_t n,
		       struct jv *out)
{
	size_t i, items;

	if (n < 0)
		n = 0;
	if (n && seq_bytes(seq) > SIZE_MAX / (uint64_t)n)
		return jinja_util_room(e, at, SIZE_MAX);
	if (jinja_util_room(e, at, seq_bytes(seq) * (size_t)n) ||
	    jinja_util_work(e, at, seq_bytes(seq) * (size_t)n))
		return e->d->code;
	if (seq->k == JV_STR)
		return repeat_str(e, at, seq, (size_t)n, out);
	if (seq->flags & (JV_F_GEN | JV_F_VIEW | JV_F_RANGE))
		return jinja_util_reject(e, at, "TypeError: unsupported operand type(s) for *");
	items = seq->u.l->n * (size_t)n;
	if (jinja_value_seq_new(e->a, seq->k, items, out))
		return NOMEM(e, at);
	for (i = 0; i < items; i++)
		out->u.l->v[i] = seq->u.l->v[i % seq->u.l->n];
	out->u.l->n = items;
	return ERR_OK;
}

static double as_double(const struct jv *v)
{
	return v->k == JV_FLOAT ? v->u.f : (double)v->u.i;
}

/* x ** y for y >= 0 by squaring (1 ** 10**18 at once, as in Python): 1 when
 * the result leaves int64 (a square that overflows with bits of y left
 * means the result does, |x| being at least 2 then). */
static int pow_i64(int64_t x, int64_t y, int64_t *r)
{
	int64_t acc = 1, base = x;

	for (; y; y >>= 1) {
		if ((y & 1) && __builtin_mul_overflow(acc, base, &acc))
			return 1;
		if (y > 1 && __builtin_mul_overflow(base, base, &base))
			return 1;
	}
	*r = acc;
	return 0;
}

static enum err int_arith(struct je *e, const struct jn *at, int op, int64_t x, int64_t y,
			  struct jv *out)
{
	int64_t r = 0, m, y0 = y;
	int ovf = 0;

	switch (op) {
	case '+': ovf = __builtin_add_overflow(x, y, &r); break;
	case '-': ovf = __builtin_sub_overflow(x, y, &r); break;
	case '*': ovf = __builtin_mul_overflow(x, y, &r); break;
	case 'f':
	case '%':
		if (!y)
			return jinja_util_reject(e, at,
						 "ZeroDivisionError: integer division or modulo by zero");
		if (x == INT64_MIN && y == -1) {
			ovf = 1;
			break;
		}
		r = x / y;
		m = x % y;
		if (m && ((m < 0) != (y < 0))) {
			r--;
			m += y;
		}
		if (op == '%')
			r = m;
		break;
	case 'p':
		if (y < 0) {
			if (!x)
				return jinja_util_reject(e, at,
							 "ZeroDivisionError: 0.0 cannot be raised to a negative power");
			*out = jinja_value_float(pow((double)x, (double)y));
			return ERR_OK;
		}
		ovf = pow_i64(x, y, &r);
		break;
	}
	if (ovf) {
		struct jv a = jinja_value_int(x), b = jinja_value_int(y0);

		return jinja_bigint_arith(e, at, op, &a, &b, out);
	}
	*out = jinja_value_int(r);
	return ERR_OK;
}

static double py_fmod(double x, double y)
{
	double m = fmod(x, y);

	if (m != 0.0) {
		if ((y < 0) != (m < 0))
			m += y;
	} else {
		m = copysign(0.0, y);
	}
	return m;
}

static double py_floordiv(double x, double y)
{
	double m = fmod(x, y), div = (x - m) / y, fd;

	if (m != 0.0 && (y < 0) != (m < 0))
		div -= 1.0;
	if (div == 0.0)
		return copysign(0.0, x / y);
	fd = floor(div);
	return div - fd > 0.5 ? fd + 1.0 : fd;
}

static enum err float_arith(struct je *e, const struct jn *at, int op, double x, double y,
			    struct jv *out)
{
	double r = 0;

	if ((op == '/' || op == 'f' || op == '%') && y == 0.0)
		return jinja_util_reject(e, at, "ZeroDivisionError: float division by zero");
	switch (op) {
	case '+': r = x + y; break;
	case '-': r = x - y; break;
	case '*': r = x * y; break;
	case '/': r = x / y; break;
	case 'f': r = py_floordiv(x, y); break;
	case '%': r = py_fmod(x, y); break;
	case 'p':
		if (x == 0.0 && y < 0)
			return jinja_util_reject(e, at,
						 "ZeroDivisionError: 0.0 cannot be raised to a negative power");
		if (x < 0 && y != floor(y))
			return jinja_util_refuse(e, at, "a complex power");
		r = pow(x, y);
		if (isinf(r) && !isinf(x) && !isinf(y))
			return jinja_util_reject(e, at,
						 "OverflowError: (34, 'Numerical result out of range')");
		break;
	}
	*out = jinja_value_float(r);
	return ERR_OK;
}

static enum err num_arith(struct je *e, const struct jn *at, int op, const struct jv *a,
			  const struct jv *b, struct jv *out)
{
	const double exact = 9007199254740992.0;

	if (is_intlike(a) && is_intlike(b)) {
		if (op != '/')
			return int_arith(e, at, op, a->u.i, b->u.i, out);
		if (!b->u.i)
			return jinja_util_reject(e, at, "ZeroDivisionError: division by zero");
		if (fabs((double)a->u.i) > exact || fabs((double)b->u.i) > exact)
			return jinja_bigint_arith(e, at, '/', a, b, out);
		*out = jinja_value_float((double)a->u.i / (double)b->u.i);
		return ERR_OK;
	}
	if ((is_intlike(a) && fabs((double)a->u.i) > exact) ||
	    (is_intlike(b) && fabs((double)b->u.i) > exact))
		return jinja_util_refuse(e, at, "mixing floats with integers beyond 2**53");
	return float_arith(e, at, op, as_double(a), as_double(b), out);
}

static const char *op_text(int op)
{
	switch (op) {
	case 'f': return "//";
	case 'p': return "** or pow()";
	case '+': return "+";
	case '-': return "-";
	case '*': return "*";
	case '/': return "/";
	default: return "%";
	}
}

static enum err concat_tilde(struct je *e, const struct jn *at, const struct jv *a,
			     const struct jv *b, struct jv *out)
{
	struct buf s;
	enum err r;

	buf_init(&s, jinja_util_buf_cap(e));
	r = jinja_print(e, at, a, &s);
	if (!r)
		r = jinja_print(e, at, b, &s);
	if (!r)
		r = jinja_util_work(e, at, s.len);
	if (!r && jinja_value_str_buf(e->a, &s, out))
		r = NOMEM(e, at);
	buf_release(&s);
	return r;
}

enum err jinja_builtin_binop(struct je *e, const struct jn *at, int op, const struct jv *a,
			     const struct jv *b, struct jv *out)
{
	if (op == '~')
		return concat_tilde(e, at, a, b, out);
	if ((a->k == JV_BIGINT || b->k == JV_BIGINT) && (is_intlike(a) || a->k == JV_BIGINT) &&
	    (is_intlike(b) || b->k == JV_BIGINT))
		return jinja_bigint_arith(e, at, op, a, b, out);
	if (jinja_value_is_num(a) && jinja_value_is_num(b))
		return num_arith(e, at, op, a, b, out);
	if (op == '+' && a->k == JV_STR && b->k == JV_STR)
		return concat_str(e, at, a, b, out);
	if (op == '+' && jinja_value_is_seq(a) && a->k == b->k)
		return concat_seq(e, at, a, b, out);
	if (op == '*' && is_intlike(b) && (a->k == JV_STR || jinja_value_is_seq(a)))
		return repeat(e, at, a, b->u.i, out);
	if (op == '*' && is_intlike(a) && (b->k == JV_STR || jinja_value_is_seq(b)))
		return repeat(e, at, b, a->u.i, out);
	if (op == '%' && a->k == JV_STR)
		return jinja_fmt_percent(e, at, a, b, out);
	return type_error2(e, at, op_text(op), a, b);
}

enum err jinja_builtin_unary(struct je *e, const struct jn *at, int neg, const struct jv *a,
			     struct jv *out)
{
	if (is_intlike(a) || a->k == JV_BIGINT) {
		if (neg)
			return jinja_bigint_neg(e, at, a, out);
		*out = a->k == JV_BIGINT ? *a : jinja_value_int(a->u.i);
		return ERR_OK;
	}
	if (a->k == JV_FLOAT) {
		*out = jinja_value_float(neg ? -a->u.f : a->u.f);
		return ERR_OK;
	}
	if (a->k == JV_UNDEF)
		return undefined_error(e, at, a);
	return jinja_util_reject(e, at, "TypeError: bad operand type for unary %c: '%s'",
				 neg ? '-' : '+',
				 jinja_value_type_name(a));
}

/* --- comparisons --- */

static int str_cmp(const struct jv_str *a, const struct jv_str *b)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->data, b->data, n);

	if (c)
		return c < 0 ? -1 : 1;
	return (a->len > b->len) - (a->len < b->len);
}

/* a == b into *r, its work charged; refused when needle cannot decide or
 * the values nest past JV_MAX_DEPTH. */
static enum err value_eq(struct je *e, const struct jn *at, const struct jv *a,
			 const struct jv *b, int *r)
{
	size_t work = 0;

	*r = jinja_value_eq_work(a, b, &work);
	if (jinja_util_work(e, at, work))
		return e->d->code;
	if (*r == JV_EQ_DEEP)
		return jinja_util_refuse(e, at, "comparing values nested deeper than %d (Python "
					 "raises RecursionError)", JV_MAX_DEPTH);
	if (*r < 0)
		return jinja_util_refuse(e, at, "comparing these values");
	return ERR_OK;
}

static enum err order_at(struct je *e, const struct jn *at, const struct jv *a,
			 const struct jv *b, int *c, int depth);

/* Lists and tuples: the first items that differ decide, else the lengths. */
static enum err order_seq(struct je *e, const struct jn *at, const struct jv *a,
			  const struct jv *b, int *c, int depth)
{
	size_t i;
	int eq;

	if (depth >= JV_MAX_DEPTH)
		return jinja_util_refuse(e, at, "comparing values nested deeper than %d (Python "
					 "raises RecursionError)", JV_MAX_DEPTH);
	for (i = 0; i < a->u.l->n && i < b->u.l->n; i++) {
		if (value_eq(e, at, &a->u.l->v[i], &b->u.l->v[i], &eq))
			return e->d->code;
		if (!eq)
			return order_at(e, at, &a->u.l->v[i], &b->u.l->v[i], c, depth + 1);
	}
	*c = (a->u.l->n > b->u.l->n) - (a->u.l->n < b->u.l->n);
	return ERR_OK;
}

/* Python's ordering of a and b into *c (-1, 0, 1); ERR_* when unorderable. */
static enum err order_at(struct je *e, const struct jn *at, const struct jv *a,
			 const struct jv *b, int *c, int depth)
{
	if (a->k == JV_UNDEF || b->k == JV_UNDEF)
		return undefined_error(e, at, a->k == JV_UNDEF ? a : b);
	if ((a->k == JV_BIGINT || b->k == JV_BIGINT) && (is_intlike(a) || a->k == JV_BIGINT) &&
	    (is_intlike(b) || b->k == JV_BIGINT)) {
		*c = jinja_bigint_cmp(a, b);
		return ERR_OK;
	}
	if (jinja_value_is_num(a) && jinja_value_is_num(b)) {
		if (is_intlike(a) && is_intlike(b))
			*c = (a->u.i > b->u.i) - (a->u.i < b->u.i);
		else if (isnan(as_double(a)) || isnan(as_double(b)))
			return jinja_util_refuse(e, at, "ordering NaN");
		else if (fabs(as_double(a)) > 9007199254740992.0 ||
			 fabs(as_double(b)) > 9007199254740992.0)
			return jinja_util_refuse(e, at, "ordering numbers beyond 2**53");
		else
			*c = (as_double(a) > as_double(b)) - (as_double(a) < as_double(b));
		return ERR_OK;
	}
	if (a->k == JV_STR && b->k == JV_STR) {
		*c = str_cmp(a->u.s, b->u.s);
		return jinja_util_work(e, at, a->u.s->len < b->u.s->len ? a->u.s->len : b->u.s->len);
	}
	if (jinja_value_is_seq(a) && a->k == b->k &&
	    !((a->flags | b->flags) & (JV_F_GEN | JV_F_VIEW)))
		return order_seq(e, at, a, b, c, depth);
	if (a->k == JV_BIGINT || b->k == JV_BIGINT)
		return jinja_util_refuse(e, at, "comparing an integer beyond 64 bits");
	return jinja_util_reject(e, at,
				 "TypeError: '<' not supported between instances of '%s' and '%s'",
				 jinja_value_type_name(a), jinja_value_type_name(b));
}

enum err jinja_builtin_order(struct je *e, const struct jn *at, const struct jv *a,
			     const struct jv *b, int *c)
{
	if (jinja_util_work(e, at, JV_WORK_ITEM))
		return e->d->code;
	return order_at(e, at, a, b, c, 0);
}

enum err jinja_builtin_contains(struct je *e, const struct jn *at, const struct jv *item,
				const struct jv *container, int *r)
{
	size_t i;
	int eq;

	*r = 0;
	if (container->k == JV_STR) {
		if (item->k != JV_STR)
			return jinja_util_reject(e, at,
						 "TypeError: 'in <string>' requires string as left "
						 "operand, not %s", jinja_value_type_name(item));
		*r = jinja_str_find(container->u.s, item->u.s, 0) >= 0;
		return jinja_util_work(e, at, container->u.s->len);
	}
	if (container->k == JV_DICT || container->k == JV_NS) {
		if (container->k == JV_NS)
			return jinja_util_reject(e, at,
						 "TypeError: argument of type 'Namespace' is not iterable");
		if (!jinja_value_hashable(item))
			return jinja_util_reject(e, at, "TypeError: unhashable type: '%s'",
						 jinja_value_type_name(item));
		*r = jinja_value_dict_get(container, *item) != NULL;
		return jinja_util_work(e, at, container->u.d->n);
	}
	if (container->k == JV_UNDEF)
		return ERR_OK;
	if (!jinja_value_is_seq(container))
		return jinja_util_reject(e, at, "TypeError: argument of type '%s' is not iterable",
					 jinja_value_type_name(container));
	if (container->flags & (JV_F_GEN | JV_F_VIEW))
		return jinja_util_refuse(e, at, "'in' on a %s", jinja_value_type_name(container));
	for (i = 0; i < container->u.l->n && !*r; i++) {
		if (value_eq(e, at, item, &container->u.l->v[i], &eq))
			return e->d->code;
		*r = eq;
	}
	return ERR_OK;
}

enum err jinja_builtin_compare(struct je *e, const struct jn *at, int op, const struct jv *a,
			       const struct jv *b, int *result)
{
	int c;

	switch (op) {
	case 'e':
	case 'n':
		if (value_eq(e, at, a, b, &c))
			return e->d->code;
		*result = op == 'e' ? c : !c;
		return ERR_OK;
	case 'i':
	case 'I':
		if (jinja_builtin_contains(e, at, a, b, &c))
			return e->d->code;
		*result = op == 'i' ? c : !c;
		return ERR_OK;
	}
	if (jinja_builtin_order(e, at, a, b, &c))
		return e->d->code;
	*result = op == '<' ? c < 0 : op == '>' ? c > 0 : op == 'l' ? c <= 0 : c >= 0;
	return ERR_OK;
}

/* --- attributes and items --- */

static const char *const str_methods[] = {
	"capitalize", "casefold", "center", "count", "encode", "endswith", "expandtabs", "find",
	"format", "format_map", "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit",
	"isidentifier", "islower", "isnumeric", "isprintable", "isspace", "istitle", "isupper",
	"join", "ljust", "lower", "lstrip", "maketrans", "partition", "removeprefix",
	"removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition", "rsplit", "rstrip",
	"split", "splitlines", "startswith", "strip", "swapcase", "title", "translate", "upper",
	"zfill", NULL
};
static const char *const dict_methods[] = { "clear", "copy", "fromkeys", "get", "items", "keys",
					    "pop", "popitem", "setdefault", "update", "values", NULL };
static const char *const list_methods[] = { "append", "clear", "copy", "count", "extend",
					    "index", "insert", "pop", "remove", "reverse", "sort",
					    NULL };
static const char *const num_attrs[] = { "real", "imag", "numerator", "denominator",
					 "conjugate", "bit_length", "bit_count", "to_bytes",
					 "from_bytes", "as_integer_ratio", "is_integer", "hex",
					 "fromhex", NULL };

/* Attributes generators, dict views and ranges do have. */
static const char *const iter_attrs[] = { "send", "throw", "close", "gi_code", "gi_frame",
					  "gi_running", "gi_yieldfrom", "mapping", "isdisjoint",
					  "start", "stop", "step", "count", "index", NULL };

/* Whether `s` is in the NULL-terminated list `l` (the first byte compared
 * inline: obj.attr on a message asks the method lists at every access). */
static int in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (**l == *s && !strcmp(*l, s))
			return 1;
	return 0;
}

static enum err bind(struct je *e, const struct jn *at, const struct jv *self, const char *name,
		     struct jv *out)
{
	struct jv_fn *fn = jinja_value_alloc(e->a, sizeof(*fn));
	struct jv *s = jinja_value_alloc(e->a, sizeof(*s));

	if (!fn || !s)
		return NOMEM(e, at);
	*s = *self;
	fn->id = 1;
	fn->name = name;
	fn->self = s;
	out->k = JV_FUNC;
	out->flags = 0;
	out->u.fn = fn;
	return ERR_OK;
}

/* getattr(obj, name) as Python sees it: 1 found (into *out), 0 no such
 * attribute. */
static int py_attr(struct je *e, const struct jn *at, const struct jv *obj, const char *name,
		   struct jv *out, enum err *r)
{
	const char *const *methods = NULL;
	struct jv *v;

	*r = ERR_OK;
	if (obj->k == JV_STR)
		methods = str_methods;
	else if (obj->k == JV_DICT)
		methods = dict_methods;
	else if (obj->k == JV_LIST && !(obj->flags & (JV_F_GEN | JV_F_VIEW | JV_F_RANGE)))
		methods = list_methods;
	else if (obj->k == JV_TUPLE && (!strcmp(name, "count") || !strcmp(name, "index")))
		methods = list_methods;
	if (methods && in_list(methods, name)) {
		*r = bind(e, at, obj, name, out);
		return 1;
	}
	if (obj->k == JV_NS && (v = jinja_value_dict_get_str(obj, name, strlen(name)))) {
		*out = *v;
		return 1;
	}
	if (obj->k == JV_LOOP) {
		*r = !strcmp(name, "cycle") ? bind(e, at, obj, name, out)
					     : jinja_eval_loop_attr(e, at, obj, name, out);
		return 1;
	}
	if ((jinja_value_is_num(obj) || obj->k == JV_BIGINT) && in_list(num_attrs, name)) {
		*r = jinja_util_refuse(e, at, "the attribute '%s' of a number", name);
		return 1;
	}
	if ((obj->flags & (JV_F_GEN | JV_F_VIEW | JV_F_RANGE)) && !in_list(iter_attrs, name))
		return 0;
	if (obj->k == JV_MACRO || obj->k == JV_FUNC ||
	    (obj->flags & (JV_F_GEN | JV_F_VIEW | JV_F_RANGE))) {
		*r = jinja_util_refuse(e, at, "the attribute '%s' of a %s", name, jinja_value_type_name(obj));
		return 1;
	}
	return 0;
}

/* obj[key] as Python sees it: 1 found, 0 a LookupError/TypeError. */
static int py_item(struct je *e, const struct jn *at, const struct jv *obj, const struct jv *key,
		   struct jv *out, enum err *r)
{
	struct jv *v;
	int64_t i, n;

	*r = ERR_OK;
	if (obj->k == JV_DICT) {
		if (!jinja_value_hashable(key) || !(v = jinja_value_dict_get(obj, *key)))
			return 0;
		*out = *v;
		return 1;
	}
	if ((obj->k == JV_STR || jinja_value_is_seq(obj)) && is_intlike(key) &&
	    !(obj->flags & (JV_F_GEN | JV_F_VIEW))) {
		n = obj->k == JV_STR ? (int64_t)jinja_value_str_ncp(obj->u.s) : (int64_t)obj->u.l->n;
		i = key->u.i < 0 ? key->u.i + n : key->u.i;
		if (i < 0 || i >= n)
			return 0;
		if (obj->k == JV_STR) {
			*r = jinja_str_char_at(e, at, obj, (size_t)i, out);
			out->flags = obj->flags & JV_F_MARKUP;
		}
		else
			*out = obj->u.l->v[i];
		return 1;
	}
	if (key->k == JV_BIGINT && (obj->k == JV_STR || jinja_value_is_seq(obj))) {
		*r = jinja_util_refuse(e, at, "an index beyond 64 bits");
		return 1;
	}
	return 0;
}

static enum err check_safe_name(struct je *e, const struct jn *at, const struct jv *obj,
				const char *name)
{
	if (obj->k == JV_UNDEF)
		return undefined_error(e, at, obj);
	if (name[0] == '_')
		return jinja_util_refuse(e, at, "the attribute '%s' (the sandbox hides it)", name);
	return ERR_OK;
}

enum err jinja_builtin_getattr(struct je *e, const struct jn *at, const struct jv *obj,
			       const char *name,
			       struct jv *out)
{
	struct jv *v;
	enum err r;

	if (check_safe_name(e, at, obj, name))
		return e->d->code;
	if (py_attr(e, at, obj, name, out, &r))
		return r;
	/* obj[name]: only a dict has an item under a str key (py_item) */
	if (obj->k == JV_DICT && (v = jinja_value_dict_get_str(obj, name, strlen(name)))) {
		*out = *v;
		return ERR_OK;
	}
	*out = jinja_value_undef(name);
	return ERR_OK;
}

enum err jinja_builtin_getitem(struct je *e, const struct jn *at, const struct jv *obj,
			       const struct jv *key, struct jv *out)
{
	enum err r;

	if (obj->k == JV_UNDEF)
		return undefined_error(e, at, obj);
	if (obj->k == JV_LOOP || obj->k == JV_MACRO || obj->k == JV_FUNC)
		return jinja_util_refuse(e, at, "subscripting a %s", jinja_value_type_name(obj));
	if (py_item(e, at, obj, key, out, &r))
		return r;
	if (key->k == JV_STR) {
		if (key->u.s->data[0] == '_')
			return jinja_util_refuse(e, at, "the attribute '%s' (the sandbox hides it)",
						 key->u.s->data);
		if (py_attr(e, at, obj, key->u.s->data, out, &r))
			return r;
	}
	*out = jinja_value_undef(key->k == JV_STR ? key->u.s->data : NULL);
	return ERR_OK;
}

/* slice.indices for a sequence of n items. */
static enum err slice_bound(struct je *e, const struct jn *at, const struct jv *v, int64_t n,
			    int64_t step, int is_start, int64_t *out)
{
	int64_t x;

	if (!v || v->k == JV_NONE) {
		*out = step < 0 ? (is_start ? n - 1 : -1) : (is_start ? 0 : n);
		return ERR_OK;
	}
	if (!is_intlike(v))
		return jinja_util_refuse(e, at, "a slice index of type %s",
					 jinja_value_type_name(v));
	x = v->u.i;
	if (x < 0) {
		x += n;
		if (x < 0)
			x = step < 0 ? -1 : 0;
	} else if (x >= n) {
		x = step < 0 ? n - 1 : n;
	}
	*out = x;
	return ERR_OK;
}

enum err jinja_builtin_slice(struct je *e, const struct jn *at, const struct jv *obj,
			     const struct jv *start, const struct jv *stop, const struct jv *step,
			     struct jv *out)
{
	int64_t n, st = 1, a, b, i, cnt;

	if (obj->k == JV_UNDEF)
		return undefined_error(e, at, obj);
	if (obj->k != JV_STR && (!jinja_value_is_seq(obj) || (obj->flags & (JV_F_GEN | JV_F_VIEW))))
		return jinja_util_refuse(e, at, "slicing a %s", jinja_value_type_name(obj));
	if (step && step->k != JV_NONE) {
		if (!is_intlike(step))
			return jinja_util_refuse(e, at, "a slice step of type %s",
						 jinja_value_type_name(step));
		if (!(st = step->u.i))
			return jinja_util_reject(e, at, "ValueError: slice step cannot be zero");
	}
	n = obj->k == JV_STR ? (int64_t)jinja_value_str_ncp(obj->u.s) : (int64_t)obj->u.l->n;
	if (slice_bound(e, at, start, n, st, 1, &a) || slice_bound(e, at, stop, n, st, 0, &b))
		return e->d->code;
	if (obj->k == JV_STR) {
		if (jinja_str_slice(e, at, obj, a, b, st, out))
			return e->d->code;
		out->flags = obj->flags & JV_F_MARKUP; /* Markup.__getitem__ keeps Markup */
		return ERR_OK;
	}
	/* made at its size: messages[::-1] of a long conversation would
	 * otherwise grow by doubling, each copy left in the arena. Counted in
	 * unsigned steps, so that no step (up to +-2^63) overflows: the items
	 * are a + i * st for i < cnt, each an index of the list */
	if (st > 0)
		cnt = b > a ? 1 + (int64_t)((uint64_t)(b - a - 1) / (uint64_t)st) : 0;
	else
		cnt = a > b ? 1 + (int64_t)((uint64_t)(a - b - 1) / ((uint64_t)-(st + 1) + 1)) : 0;
	if (jinja_value_seq_new(e->a, obj->k, (size_t)cnt, out))
		return NOMEM(e, at);
	for (i = 0; i < cnt; i++)
		out->u.l->v[i] = obj->u.l->v[a + i * st];
	out->u.l->n = (size_t)cnt;
	return ERR_OK;
}

/* What iterating a generator gives: the items not yet consumed (none once
 * exhausted), or its pending failure. */
static enum err iterate_gen(struct je *e, const struct jn *at, const struct jv *v, struct jv *out)
{
	struct jv_seq *l = v->u.l;
	size_t from = l->taken, i;

	l->taken = l->n;
	if (l->err && !l->raised) {
		l->raised = 1;
		return diag_fail(e->d, l->err, "%s", l->err_msg);
	}
	if (jinja_value_seq_new(e->a, JV_LIST, l->n - from, out))
		return NOMEM(e, at);
	for (i = from; i < l->n; i++)
		out->u.l->v[i - from] = l->v[i];
	out->u.l->n = l->n - from;
	return ERR_OK;
}

enum err jinja_builtin_iterate(struct je *e, const struct jn *at, const struct jv *v,
			       struct jv *out)
{
	size_t i;

	if (jinja_value_is_seq(v)) {
		if (v->flags & JV_F_GEN)
			return iterate_gen(e, at, v, out);
		*out = *v;
		out->k = JV_LIST;
		return ERR_OK;
	}
	if (v->k == JV_UNDEF || v->k == JV_DICT) {
		size_t n = v->k == JV_DICT ? v->u.d->n : 0;

		if (jinja_value_seq_new(e->a, JV_LIST, n, out))
			return NOMEM(e, at);
		for (i = 0; i < n; i++)
			out->u.l->v[i] = v->u.d->keys[i];
		out->u.l->n = n;
		return ERR_OK;
	}
	if (v->k == JV_STR)
		return jinja_str_chars(e, at, v, out);
	if (v->k == JV_LOOP)
		return jinja_util_refuse(e, at, "iterating the loop object");
	return jinja_util_reject(e, at, "TypeError: '%s' object is not iterable",
				 jinja_value_type_name(v));
}

/* --- globals --- */

enum { FN_METHOD = 1, FN_NAMESPACE, FN_RANGE, FN_DICT, FN_RAISE, FN_STRFTIME, FN_OTHER };

static struct jv_fn globals[] = {
	{ FN_NAMESPACE, "namespace", NULL }, { FN_RANGE, "range", NULL },
	{ FN_DICT, "dict", NULL },           { FN_RAISE, "raise_exception", NULL },
	{ FN_STRFTIME, "strftime_now", NULL }, { FN_OTHER, "lipsum", NULL },
	{ FN_OTHER, "cycler", NULL },        { FN_OTHER, "joiner", NULL },
};

int jinja_builtin_global(const char *name, struct jv *out)
{
	size_t k;

	for (k = 0; k < sizeof(globals) / sizeof(globals[0]); k++)
		if (!strcmp(globals[k].name, name)) {
			out->k = JV_FUNC;
			out->flags = 0;
			out->u.fn = &globals[k];
			return 1;
		}
	return 0;
}

/* dict(*args, **kwargs) into `out` (a dict or namespace of kind `k`). */
static enum err build_dict(struct je *e, const struct jn *at, enum jv_kind k,
			   const struct je_args *a, struct jv *out)
{
	struct jv key, pairs;
	size_t i;

	if (jinja_value_dict_new(e->a, k, out))
		return NOMEM(e, at);
	if (a->npos > 1)
		return jinja_util_reject(e, at, "TypeError: dict expected at most 1 argument");
	if (a->npos && a->pos[0].k == JV_DICT) {
		for (i = 0; i < a->pos[0].u.d->n; i++)
			if (jinja_value_dict_set(e->a, out, a->pos[0].u.d->keys[i],
						 a->pos[0].u.d->vals[i]))
				return NOMEM(e, at);
	} else if (a->npos) {
		if (jinja_builtin_iterate(e, at, &a->pos[0], &pairs))
			return e->d->code;
		for (i = 0; i < pairs.u.l->n; i++) {
			const struct jv *p = &pairs.u.l->v[i];

			if (!jinja_value_is_seq(p) || p->u.l->n != 2 ||
			    !jinja_value_hashable(&p->u.l->v[0]))
				return jinja_util_reject(e, at,
							 "ValueError: dictionary update sequence element "
							 "#%zu has the wrong length", i);
			if (jinja_value_dict_set(e->a, out, p->u.l->v[0], p->u.l->v[1]))
				return NOMEM(e, at);
		}
	}
	for (i = 0; i < a->nkw; i++)
		if (jinja_value_str_new(e->a, a->kwn[i], strlen(a->kwn[i]), &key) ||
		    jinja_value_dict_set(e->a, out, key, a->kwv[i]))
			return NOMEM(e, at);
	return ERR_OK;
}

/* range() with the sandbox's MAX_RANGE (100000 items). */
static enum err call_range(struct je *e, const struct jn *at, const struct je_args *a,
			   struct jv *out)
{
	int64_t v[3] = { 0, 0, 1 }, i, n;
	size_t k;

	if (a->nkw || a->npos < 1 || a->npos > 3)
		return jinja_util_reject(e, at,
					 "TypeError: range expected 1 to 3 integer arguments");
	for (k = 0; k < a->npos; k++)
		if (!is_intlike(&a->pos[k]))
			return jinja_util_reject(e, at,
						 "TypeError: '%s' object cannot be interpreted as an integer",
						 jinja_value_type_name(&a->pos[k]));
	if (a->npos == 1)
		v[1] = a->pos[0].u.i;
	for (k = 0; a->npos > 1 && k < a->npos; k++)
		v[k] = a->pos[k].u.i;
	if (!v[2])
		return jinja_util_reject(e, at, "ValueError: range() arg 3 must not be zero");
	if (v[0] < -(1LL << 40) || v[0] > (1LL << 40) || v[1] < -(1LL << 40) || v[1] > (1LL << 40))
		return jinja_util_refuse(e, at, "range() with bounds this large");
	n = v[2] > 0 ? (v[1] - v[0] + v[2] - 1) / v[2] : (v[0] - v[1] - v[2] - 1) / -v[2];
	if (n > 100000)
		return jinja_util_reject(e, at,
					 "OverflowError: Range too big. The sandbox blocks ranges "
					 "larger than MAX_RANGE (100000).");
	if (jinja_value_seq_new(e->a, JV_LIST, n > 0 ? (size_t)n : 0, out))
		return NOMEM(e, at);
	for (i = 0; i < n; i++)
		out->u.l->v[i] = jinja_value_int(v[0] + i * v[2]);
	out->u.l->n = n > 0 ? (size_t)n : 0;
	out->flags = JV_F_RANGE;
	return ERR_OK;
}

/* datetime.strftime on the pinned clock: %f, %z, %Z as for a naive datetime;
 * the rest is the C library's strftime, which CPython calls on Linux (glibc
 * flags such as %-d included), in the C locale. %s (epoch seconds, time-zone
 * dependent) and unknown directives are refused. */
static enum err call_strftime(struct je *e, const struct jn *at, const struct je_args *a,
			      struct jv *out)
{
	struct buf f;
	char res[1024];
	size_t i, n;
	enum err r = ERR_OK;
	const struct jv_str *s;

	if (a->npos != 1 || a->nkw || a->pos[0].k != JV_STR)
		return jinja_util_reject(e, at, "TypeError: strftime_now() takes one str argument");
	s = a->pos[0].u.s;
	buf_init(&f, 4096);
	for (i = 0; i < s->len && !r; i++) {
		if (s->data[i] == '%' && i + 1 < s->len && strchr("fzZ", s->data[i + 1])) {
			if (buf_puts(&f, s->data[++i] == 'f' ? "000000" : ""))
				r = NOMEM(e, at);
		} else if (s->data[i] == '%' && i + 1 < s->len) {
			size_t flag = strchr("-_0^#", s->data[i + 1]) && i + 2 < s->len;
			char c = s->data[i + 1 + flag];

			if (!c || !strchr("aAbBcCdDeFgGhHIjklmMnprRStTuUVwWxXyY%", c))
				r = jinja_util_refuse(e, at, "the strftime directive %%%c",
						      c ? c : ' ');
			else if (buf_append(&f, s->data + i, 2 + flag))
				r = NOMEM(e, at);
			i += 1 + flag;
		} else if (buf_putc(&f, s->data[i])) {
			r = NOMEM(e, at);
		}
	}
	if (!r) {
		res[0] = 0;
		n = f.len ? strftime(res, sizeof(res), f.data, &e->clock) : 0;
		if (f.len && !n && res[0])
			r = jinja_util_refuse(e, at, "a strftime result this long");
		else if (jinja_value_str_new(e->a, res, n, out))
			r = NOMEM(e, at);
	}
	buf_release(&f);
	return r;
}

static enum err call_global(struct je *e, const struct jn *at, const struct jv_fn *fn,
			    const struct je_args *a, struct jv *out)
{
	switch (fn->id) {
	case FN_NAMESPACE:
		return build_dict(e, at, JV_NS, a, out);
	case FN_DICT:
		return build_dict(e, at, JV_DICT, a, out);
	case FN_RANGE:
		return call_range(e, at, a, out);
	case FN_RAISE:
		if (a->npos >= 1 && a->pos[0].k == JV_STR)
			return jinja_util_reject(e, at, "TemplateError: %s", a->pos[0].u.s->data);
		return jinja_util_reject(e, at, "TemplateError raised by the template");
	case FN_STRFTIME:
		return call_strftime(e, at, a, out);
	default:
		return jinja_util_refuse(e, at, "the global '%s'", fn->name);
	}
}

/* --- methods --- */

static enum err dict_method(struct je *e, const struct jn *at, const struct jv *self,
			    const char *name, const struct je_args *a, struct jv *out)
{
	static const char *const unsafe[] = { "clear", "pop", "popitem", "setdefault", "update", NULL };
	const struct jv *key, *def;
	struct jv *v;
	size_t i, n = self->u.d->n;

	if (in_list(unsafe, name))
		return jinja_util_reject(e, at,
					 "SecurityError: access to attribute '%s' of 'dict' object is unsafe",
					 name);
	if (!strcmp(name, "get")) {
		if (a->nkw || a->npos < 1 || a->npos > 2)
			return jinja_util_reject(e, at, "TypeError: get expected 1 or 2 arguments");
		key = &a->pos[0];
		def = a->npos > 1 ? &a->pos[1] : NULL;
		if (!jinja_value_hashable(key))
			return jinja_util_reject(e, at, "TypeError: unhashable type: '%s'",
						 jinja_value_type_name(key));
		v = jinja_value_dict_get(self, *key);
		*out = v ? *v : def ? *def : jinja_value_none();
		return ERR_OK;
	}
	if (a->npos || a->nkw)
		return jinja_util_reject(e, at, "TypeError: dict.%s() takes no arguments", name);
	if (!strcmp(name, "copy")) {
		struct je_args one = { (struct jv *)self, 1, NULL, NULL, 0 };

		return build_dict(e, at, JV_DICT, &one, out);
	}
	if (strcmp(name, "items") && strcmp(name, "keys") && strcmp(name, "values"))
		return jinja_util_refuse(e, at, "the dict method '%s'", name);
	if (jinja_value_seq_new(e->a, JV_LIST, n, out))
		return NOMEM(e, at);
	for (i = 0; i < n; i++) {
		if (name[0] == 'k') {
			out->u.l->v[i] = self->u.d->keys[i];
		} else if (name[0] == 'v') {
			out->u.l->v[i] = self->u.d->vals[i];
		} else {
			struct jv pair;

			if (jinja_value_seq_new(e->a, JV_TUPLE, 2, &pair))
				return NOMEM(e, at);
			pair.u.l->v[0] = self->u.d->keys[i];
			pair.u.l->v[1] = self->u.d->vals[i];
			pair.u.l->n = 2;
			out->u.l->v[i] = pair;
		}
	}
	out->u.l->n = n;
	out->flags = JV_F_VIEW | (name[0] == 'k' ? JV_F_KEYS : name[0] == 'v' ? JV_F_VALUES : JV_F_ITEMS);
	return ERR_OK;
}

static enum err list_method(struct je *e, const struct jn *at, const struct jv *self,
			    const char *name, const struct je_args *a, struct jv *out)
{
	static const char *const unsafe[] = { "append", "reverse", "insert", "sort", "extend",
					      "remove", NULL };
	size_t i, n = 0;
	int eq;

	if (in_list(unsafe, name))
		return jinja_util_reject(e, at,
					 "SecurityError: access to attribute '%s' of '%s' object is unsafe",
					 name, jinja_value_type_name(self));
	if (!strcmp(name, "count") || !strcmp(name, "index")) {
		if (a->npos != 1 || a->nkw)
			return jinja_util_refuse(e, at, "list.%s with these arguments", name);
		for (i = 0; i < self->u.l->n; i++) {
			if (value_eq(e, at, &self->u.l->v[i], &a->pos[0], &eq))
				return e->d->code;
			if (eq && name[0] == 'i') {
				*out = jinja_value_int((int64_t)i);
				return ERR_OK;
			}
			n += (size_t)eq;
		}
		if (name[0] == 'i')
			return jinja_util_reject(e, at, "ValueError: value is not in list");
		*out = jinja_value_int((int64_t)n);
		return ERR_OK;
	}
	if (!strcmp(name, "copy") && !a->npos && !a->nkw)
		return concat_seq(e, at, self, &(struct jv){ JV_LIST, 0,
				  { .l = &(struct jv_seq){ 0 } } },
				  out);
	return jinja_util_refuse(e, at, "the list method '%s' (it mutates the list)", name);
}

static enum err loop_cycle(struct je *e, const struct jn *at, const struct jv *loop,
			   const struct je_args *a, struct jv *out)
{
	struct jv idx;

	if (!a->npos || a->nkw)
		return jinja_util_reject(e, at, "TypeError: no items for cycling given");
	if (jinja_eval_loop_attr(e, at, loop, "index0", &idx))
		return e->d->code;
	*out = a->pos[(size_t)idx.u.i % a->npos];
	return ERR_OK;
}

enum err jinja_builtin_call(struct je *e, const struct jn *at, const struct jv *fn,
			    const struct je_args *a, struct jv *out)
{
	const struct jv_fn *f = fn->u.fn;

	if (f->id != FN_METHOD)
		return call_global(e, at, f, a, out);
	switch (f->self->k) {
	case JV_STR:
		return jinja_str_method(e, at, f->self, f->name, a, out);
	case JV_DICT:
		return dict_method(e, at, f->self, f->name, a, out);
	case JV_LIST:
	case JV_TUPLE:
		return list_method(e, at, f->self, f->name, a, out);
	case JV_LOOP:
		return loop_cycle(e, at, f->self, a, out);
	default:
		return jinja_util_refuse(e, at, "calling '%s'", f->name);
	}
}

/* --- tests --- */

static int is_iterable(const struct jv *v)
{
	return jinja_value_is_seq(v) || v->k == JV_STR || v->k == JV_DICT || v->k == JV_UNDEF ||
	       v->k == JV_LOOP;
}

static int is_sequence(const struct jv *v)
{
	if (jinja_value_is_seq(v))
		return !(v->flags & (JV_F_GEN | JV_F_VIEW));
	return v->k == JV_STR || v->k == JV_DICT || v->k == JV_UNDEF;
}

/* Tests comparing with one argument (eq, ne, lt, ..., in). */
static int cmp_test(const char *name)
{
	static const char *const names[] = { "eq", "equalto", "==", "ne", "!=", "lt", "lessthan",
					     "<", "le", "<=", "gt", "greaterthan", ">", "ge", ">=",
					     "in", NULL };
	static const char ops[] = "eeenn<<<ll>>>ggi";
	size_t k;

	for (k = 0; names[k]; k++)
		if (!strcmp(names[k], name))
			return ops[k];
	return 0;
}

static enum err test_case(struct je *e, const struct jn *at, const char *name,
			  const struct jv *in, int *r)
{
	struct jv args = { 0 }, res;
	struct je_args none = { &args, 0, NULL, NULL, 0 };

	if (in->k != JV_STR) {
		*r = 0;
		return jinja_util_refuse(e, at, "the test '%s' on a %s", name,
					 jinja_value_type_name(in));
	}
	if (jinja_str_method(e, at, in, name, &none, &res))
		return e->d->code;
	*r = (int)res.u.i;
	return ERR_OK;
}

static enum err test_num(struct je *e, const struct jn *at, const char *name,
			 const struct jv *in, const struct je_args *a, int *r)
{
	struct jv m, two = jinja_value_int(2);
	const struct jv *div = !strcmp(name, "divisibleby") ? jinja_util_arg(a, 0, "num") : &two;

	if (!div)
		return jinja_util_reject(e, at, "TypeError: divisibleby() missing an argument");
	if (jinja_builtin_binop(e, at, '%', in, div, &m))
		return e->d->code;
	*r = !strcmp(name, "odd") ? jinja_value_truthy(&m) : !jinja_value_truthy(&m);
	return ERR_OK;
}

enum err jinja_builtin_test(struct je *e, const struct jn *at, const char *name,
			    const struct jv *in,
			    const struct je_args *a, int *result)
{
	int op = cmp_test(name);
	const struct jv *arg = jinja_util_arg(a, 0, NULL);
	int *r = result;

	if (op) {
		if (!arg || a->npos != 1)
			return jinja_util_reject(e, at,
						 "TypeError: the test '%s' takes one argument", name);
		return jinja_builtin_compare(e, at, op, in, arg, r);
	}
	if (a->npos || a->nkw) {
		if (!strcmp(name, "divisibleby"))
			return test_num(e, at, name, in, a, r);
		if (!strcmp(name, "sameas") && arg && (arg->k == JV_NONE || arg->k == JV_BOOL) ) {
			*r = in->k == arg->k && (in->k == JV_NONE || in->u.i == arg->u.i);
			return ERR_OK;
		}
		return jinja_util_refuse(e, at, "the test '%s' with arguments", name);
	}
	if (!strcmp(name, "defined") || !strcmp(name, "undefined"))
		*r = (in->k != JV_UNDEF) == (name[0] == 'd');
	else if (!strcmp(name, "none"))
		*r = in->k == JV_NONE;
	else if (!strcmp(name, "boolean"))
		*r = in->k == JV_BOOL;
	else if (!strcmp(name, "true") || !strcmp(name, "false"))
		*r = in->k == JV_BOOL && in->u.i == (name[0] == 't');
	else if (!strcmp(name, "integer"))
		*r = in->k == JV_INT || in->k == JV_BIGINT;
	else if (!strcmp(name, "float"))
		*r = in->k == JV_FLOAT;
	else if (!strcmp(name, "number"))
		*r = jinja_value_is_num(in) || in->k == JV_BIGINT;
	else if (!strcmp(name, "string"))
		*r = in->k == JV_STR;
	else if (!strcmp(name, "mapping"))
		*r = in->k == JV_DICT;
	else if (!strcmp(name, "iterable"))
		*r = is_iterable(in);
	else if (!strcmp(name, "sequence"))
		*r = is_sequence(in);
	else if (!strcmp(name, "callable") && in->k != JV_UNDEF)
		*r = in->k == JV_MACRO || in->k == JV_FUNC;
	else if (!strcmp(name, "escaped"))
		*r = in->k == JV_STR && (in->flags & JV_F_MARKUP);
	else if (!strcmp(name, "odd") || !strcmp(name, "even"))
		return test_num(e, at, name, in, a, r);
	else if (!strcmp(name, "lower") || !strcmp(name, "upper"))
		return test_case(e, at, !strcmp(name, "lower") ? "islower" : "isupper", in, r);
	else
		return jinja_util_refuse(e, at, "the test '%s'", name);
	return ERR_OK;
}

/* --- what a name means, once (jinja_builtin_annotate) --- */

static int loop_attr_id(const char *name)
{
	static const char *const names[] = { "index", "index0", "revindex", "revindex0", "first",
					     "last", "length", "depth", "depth0", "previtem",
					     "nextitem", NULL }; /* JN_LOOP_* order */
	size_t k;

	for (k = 0; names[k]; k++)
		if (!strcmp(names[k], name))
			return (int)k + 1;
	return 0;
}

static unsigned attr_class(const char *name)
{
	return (in_list(str_methods, name) ? JN_A_STR : 0) |
	       (in_list(dict_methods, name) ? JN_A_DICT : 0) |
	       (in_list(list_methods, name) ? JN_A_LIST : 0) |
	       (!strcmp(name, "count") || !strcmp(name, "index") ? JN_A_TUPLE : 0) |
	       (in_list(num_attrs, name) ? JN_A_NUM : 0) |
	       (in_list(iter_attrs, name) ? JN_A_ITER : 0) |
	       (name[0] == '_' ? JN_A_UNDER : 0);
}

static int test_id(const char *name)
{
	static const char *const names[] = { "defined", "undefined", "none", "boolean", "true",
					     "false", "integer", "float", "number", "string",
					     "mapping", NULL }; /* JN_T_* order */
	size_t k;

	for (k = 0; names[k]; k++)
		if (!strcmp(names[k], name))
			return (int)k + 1;
	return 0;
}

int jinja_builtin_test_id(int id, const struct jv *in)
{
	switch (id) {
	case JN_T_DEFINED: return in->k != JV_UNDEF;
	case JN_T_UNDEFINED: return in->k == JV_UNDEF;
	case JN_T_NONE: return in->k == JV_NONE;
	case JN_T_BOOLEAN: return in->k == JV_BOOL;
	case JN_T_TRUE: return in->k == JV_BOOL && in->u.i == 1;
	case JN_T_FALSE: return in->k == JV_BOOL && in->u.i == 0;
	case JN_T_INTEGER: return in->k == JV_INT || in->k == JV_BIGINT;
	case JN_T_FLOAT: return in->k == JV_FLOAT;
	case JN_T_NUMBER: return jinja_value_is_num(in) || in->k == JV_BIGINT;
	case JN_T_STRING: return in->k == JV_STR;
	default: return in->k == JV_DICT; /* JN_T_MAPPING */
	}
}

static void annotate_list(const struct jn_list *l, unsigned *slots)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		jinja_builtin_annotate(l->v[i], slots);
}

void jinja_builtin_annotate(struct jn *n, unsigned *slots)
{
	if (!n)
		return;
	if (n->k == N_GETATTR) {
		n->af = attr_class(n->s);
		n->id = loop_attr_id(n->s) | (n->af & JN_A_STR ? jinja_str_method_id(n->s) << 8 : 0);
		n->slot = (*slots)++;
	} else if (n->k == N_FILTER) {
		n->id = jinja_filter_id(n->s);
	} else if (n->k == N_TEST) {
		n->id = test_id(n->s);
	}
	jinja_builtin_annotate(n->a, slots);
	jinja_builtin_annotate(n->b, slots);
	jinja_builtin_annotate(n->c, slots);
	jinja_builtin_annotate(n->d, slots);
	annotate_list(&n->l1, slots);
	annotate_list(&n->l2, slots);
	annotate_list(&n->l3, slots);
}
