/* jinja_filter — see jinja_int.h. Each filter follows the function of the
 * same name in jinja2/filters.py (3.1); generators (map, select, items, ...)
 * are lists flagged JV_F_GEN so that len() and printing fail as in Python. */
#include "jinja_int.h"

#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "pyfmt.h"

#define NOMEM(e, at) jinja_util_nomem(e, at)

static enum err as_list(struct je *e, const struct jn *at, const struct jv *in, struct jv *out)
{
	struct jv it;
	size_t i;

	if (jinja_builtin_iterate(e, at, in, &it) ||
	    jinja_value_seq_new(e->a, JV_LIST, it.u.l->n, out))
		return e->d->code ? e->d->code : NOMEM(e, at);
	for (i = 0; i < it.u.l->n; i++)
		out->u.l->v[i] = it.u.l->v[i];
	out->u.l->n = it.u.l->n;
	return ERR_OK;
}

/* What map and select give for a false input (filters.py: `if value:`). */
static enum err empty_gen(struct je *e, const struct jn *at, struct jv *out)
{
	if (jinja_value_seq_new(e->a, JV_LIST, 0, out))
		return NOMEM(e, at);
	out->flags = JV_F_GEN;
	return ERR_OK;
}

static enum err f_tojson(struct je *e, const struct jn *at, const struct jv *in,
			 const struct je_args *a, struct jv *out)
{
	static const char *const names[] = { "ensure_ascii", "indent", "separators", "sort_keys", NULL };
	const struct jv *ea = jinja_util_arg(a, 0, names[0]);
	const struct jv *ind = jinja_util_arg(a, 1, names[1]);
	const struct jv *sep = jinja_util_arg(a, 2, names[2]);
	const struct jv *sk = jinja_util_arg(a, 3, names[3]);
	struct pyfmt_json o = { 0, -1, NULL, NULL, 0 };

	if (jinja_util_check_args(e, at, "tojson", a, 4, names))
		return e->d->code;
	o.ensure_ascii = ea && jinja_value_truthy(ea);
	o.sort_keys = sk && jinja_value_truthy(sk);
	if (ind && ind->k != JV_NONE) {
		if (ind->k != JV_INT)
			return jinja_util_refuse(e, at, "tojson indent of type %s",
						 jinja_value_type_name(ind));
		o.indent = ind->u.i < 0 ? 0 : ind->u.i > 64 ? -2 : (int)ind->u.i;
		if (o.indent == -2)
			return jinja_util_refuse(e, at, "tojson indent above 64");
	}
	if (sep && sep->k != JV_NONE) {
		if (!jinja_value_is_seq(sep) || sep->u.l->n != 2 || sep->u.l->v[0].k != JV_STR ||
		    sep->u.l->v[1].k != JV_STR)
			return jinja_util_refuse(e, at, "tojson separators other than two strings");
		o.item_sep = sep->u.l->v[0].u.s->data;
		o.key_sep = sep->u.l->v[1].u.s->data;
	}
	return jinja_print_json(e, at, in, &o, out);
}

static enum err f_length(struct je *e, const struct jn *at, const struct jv *in, struct jv *out)
{
	switch (in->k) {
	case JV_UNDEF:
		*out = jinja_value_int(0);
		return ERR_OK;
	case JV_STR:
		*out = jinja_value_int((int64_t)jinja_value_str_ncp(in->u.s));
		return ERR_OK;
	case JV_LIST:
	case JV_TUPLE:
		if (!(in->flags & JV_F_GEN)) {
			*out = jinja_value_int((int64_t)in->u.l->n);
			return ERR_OK;
		}
		break;
	case JV_DICT:
	case JV_NS:
		if (in->k == JV_DICT) {
			*out = jinja_value_int((int64_t)in->u.d->n);
			return ERR_OK;
		}
		break;
	default:
		break;
	}
	return jinja_util_reject(e, at, "TypeError: object of type '%s' has no len()",
				 jinja_value_type_name(in));
}

/* soft_str: a str stays as it is (Markup too), anything else becomes str(x). */
static enum err f_string(struct je *e, const struct jn *at, const struct jv *in, struct jv *out)
{
	return jinja_print_str(e, at, in, out);
}

static enum err attr_get(struct je *e, const struct jn *at, const struct jv *item,
			 const struct jv *attr, struct jv *out)
{
	const char *s, *dot;
	struct jv cur = *item, key;

	if (attr->k != JV_STR)
		return jinja_builtin_getitem(e, at, item, attr, out);
	for (s = attr->u.s->data;; s = dot + 1) {
		dot = strchr(s, '.');
		size_t n = dot ? (size_t)(dot - s) : strlen(s), i;
		int digits = n > 0;

		for (i = 0; i < n; i++)
			digits &= s[i] >= '0' && s[i] <= '9';
		if (digits && n < 18)
			key = jinja_value_int(strtoll(s, NULL, 10));
		else if (jinja_value_str_new(e->a, s, n, &key))
			return NOMEM(e, at);
		if (jinja_builtin_getitem(e, at, &cur, &key, &cur))
			return e->d->code;
		if (!dot)
			break;
	}
	*out = cur;
	return ERR_OK;
}

static enum err f_join(struct je *e, const struct jn *at, const struct jv *in,
		       const struct je_args *a, struct jv *out)
{
	static const char *const names[] = { "d", "attribute", NULL };
	const struct jv *sep = jinja_util_arg(a, 0, "d"), *attr = jinja_util_arg(a, 1, "attribute");
	struct jv items, sepstr, v;
	struct buf o;
	size_t i;
	enum err r = ERR_OK;

	if (jinja_util_check_args(e, at, "join", a, 2, names) ||
	    jinja_builtin_iterate(e, at, in, &items))
		return e->d->code;
	if (!sep)
		r = jinja_value_str_new(e->a, "", 0, &sepstr);
	else
		r = jinja_print_str(e, at, sep, &sepstr);
	if (r)
		return e->d->code ? e->d->code : NOMEM(e, at);
	buf_init(&o, jinja_util_buf_cap(e));
	for (i = 0; i < items.u.l->n && !r; i++) {
		v = items.u.l->v[i];
		if (attr && attr_get(e, at, &items.u.l->v[i], attr, &v))
			r = e->d->code;
		else if (i && buf_append(&o, sepstr.u.s->data, sepstr.u.s->len))
			r = NOMEM(e, at);
		else
			r = jinja_print(e, at, &v, &o);
	}
	if (!r && jinja_value_str_buf(e->a, &o, out))
		r = NOMEM(e, at);
	buf_release(&o);
	return r;
}

static enum err f_items(struct je *e, const struct jn *at, const struct jv *in, struct jv *out)
{
	struct jv fn;
	struct je_args none = { NULL, 0, NULL, NULL, 0 };

	if (in->k == JV_UNDEF) {
		if (jinja_value_seq_new(e->a, JV_LIST, 0, out))
			return NOMEM(e, at);
		out->flags = JV_F_GEN;
		return ERR_OK;
	}
	if (in->k != JV_DICT)
		return jinja_util_reject(e, at,
					 "TypeError: Can only get item pairs from a mapping.");
	if (jinja_builtin_getattr(e, at, in, "items", &fn) ||
	    jinja_builtin_call(e, at, &fn, &none, out))
		return e->d->code;
	out->flags = JV_F_GEN;
	return ERR_OK;
}

static enum err f_default(struct je *e, const struct jn *at, const struct jv *in,
			  const struct je_args *a, struct jv *out)
{
	static const char *const names[] = { "default_value", "boolean", NULL };
	const struct jv *dv = jinja_util_arg(a, 0, names[0]);
	const struct jv *b = jinja_util_arg(a, 1, names[1]);

	if (jinja_util_check_args(e, at, "default", a, 2, names))
		return e->d->code;
	if (in->k == JV_UNDEF || (b && jinja_value_truthy(b) && !jinja_value_truthy(in))) {
		if (dv)
			*out = *dv;
		else if (jinja_value_str_new(e->a, "", 0, out))
			return NOMEM(e, at);
		return ERR_OK;
	}
	*out = *in;
	return ERR_OK;
}

static enum err f_first_last(struct je *e, const struct jn *at, const struct jv *in, int last,
			     struct jv *out)
{
	struct jv items;

	if (last && (in->flags & JV_F_GEN))
		return jinja_util_reject(e, at, "TypeError: '%s' object is not reversible",
					 jinja_value_type_name(in));
	if (!last && (in->flags & JV_F_GEN) && in->u.l->taken < in->u.l->n) {
		*out = in->u.l->v[in->u.l->taken++]; /* next() takes one item */
		return ERR_OK;
	}
	if (jinja_builtin_iterate(e, at, in, &items))
		return e->d->code;
	if (!items.u.l->n) {
		*out = jinja_value_undef(NULL);
		return ERR_OK;
	}
	*out = items.u.l->v[last ? items.u.l->n - 1 : 0];
	return ERR_OK;
}

/* The arguments after the first `skip` positional ones. */
static struct je_args rest_args(const struct je_args *a, size_t skip)
{
	struct je_args r = *a;

	r.pos += skip;
	r.npos -= skip;
	return r;
}

static enum err f_map(struct je *e, const struct jn *at, const struct jv *in,
		      const struct je_args *a, struct jv *out)
{
	const struct jv *attr = jinja_util_arg(a, 99, "attribute"),
			*def = jinja_util_arg(a, 99, "default");
	struct jv items, v;
	struct je_args rest;
	size_t i;

	if (!jinja_value_truthy(in))
		return empty_gen(e, at, out);
	if (jinja_builtin_iterate(e, at, in, &items) ||
	    jinja_value_seq_new(e->a, JV_LIST, items.u.l->n, out))
		return e->d->code ? e->d->code : NOMEM(e, at);
	if (!attr && (!a->npos || a->pos[0].k != JV_STR))
		return jinja_util_refuse(e, at, "map without a filter name or attribute");
	if (attr && (a->npos || a->nkw > 1 + (def != NULL)))
		return jinja_util_refuse(e, at, "map(attribute=) with other arguments");
	rest = rest_args(a, 1);
	for (i = 0; i < items.u.l->n; i++) {
		if (attr) {
			if (attr_get(e, at, &items.u.l->v[i], attr, &v))
				return e->d->code;
			if (v.k == JV_UNDEF && def)
				v = *def;
		} else if (jinja_filter(e, at, a->pos[0].u.s->data, &items.u.l->v[i], &rest, &v)) {
			return e->d->code;
		}
		out->u.l->v[i] = v;
	}
	out->u.l->n = items.u.l->n;
	out->flags = JV_F_GEN;
	return ERR_OK;
}

/* select / reject / selectattr / rejectattr. */
static enum err f_select(struct je *e, const struct jn *at, const struct jv *in,
			 const struct je_args *a, int keep, int by_attr, struct jv *out)
{
	struct jv items, v;
	struct je_args rest;
	size_t i, skip = by_attr ? 1 : 0;
	int r;

	if (a->nkw || (by_attr && !a->npos))
		return jinja_util_refuse(e, at, "select/reject with these arguments");
	if (a->npos > skip && a->pos[skip].k != JV_STR)
		return jinja_util_refuse(e, at, "select/reject with a test that is not a name");
	if (!jinja_value_truthy(in))
		return empty_gen(e, at, out);
	if (jinja_builtin_iterate(e, at, in, &items) || jinja_value_seq_new(e->a, JV_LIST, 0, out))
		return e->d->code ? e->d->code : NOMEM(e, at);
	rest = rest_args(a, a->npos > skip ? skip + 1 : skip);
	for (i = 0; i < items.u.l->n; i++) {
		v = items.u.l->v[i];
		if (by_attr && attr_get(e, at, &items.u.l->v[i], &a->pos[0], &v))
			return e->d->code;
		if (a->npos > skip) {
			if (jinja_builtin_test(e, at, a->pos[skip].u.s->data, &v, &rest, &r))
				return e->d->code;
		} else {
			r = jinja_value_truthy(&v);
		}
		if (r == keep && jinja_value_seq_push(e->a, out, items.u.l->v[i]))
			return NOMEM(e, at);
	}
	out->flags = JV_F_GEN;
	return ERR_OK;
}

/* The key a sort or unique compares: the attribute, lower-cased strings
 * unless case_sensitive. */
static enum err sort_key(struct je *e, const struct jn *at, const struct jv *item,
			 const struct jv *attr, int case_sensitive, struct jv *out)
{
	*out = *item;
	if (attr && attr_get(e, at, item, attr, out))
		return e->d->code;
	if (!case_sensitive && out->k == JV_STR)
		return jinja_str_case(e, at, out, 'l', out);
	return ERR_OK;
}

struct keyed {
	struct jv key, item;
};

/* A stable insertion sort (templates sort a handful of items). */
static enum err sort_keyed(struct je *e, const struct jn *at, struct keyed *v, size_t n,
			   int reverse)
{
	size_t i, j;
	int c;

	for (i = 1; i < n; i++) {
		struct keyed x = v[i];

		for (j = i; j > 0; j--) {
			if (jinja_builtin_order(e, at, &v[j - 1].key, &x.key, &c))
				return e->d->code;
			if (reverse ? c >= 0 : c <= 0)
				break;
			v[j] = v[j - 1];
		}
		v[j] = x;
	}
	return ERR_OK;
}

static enum err f_sort(struct je *e, const struct jn *at, const struct jv *in,
		       const struct je_args *a, int dictsort, struct jv *out)
{
	static const char *const names[] = { "reverse", "case_sensitive", "attribute", NULL };
	static const char *const dnames[] = { "case_sensitive", "by", "reverse", NULL };
	const struct jv *rev = jinja_util_arg(a, dictsort ? 2 : 0, "reverse");
	const struct jv *cs = jinja_util_arg(a, dictsort ? 0 : 1, "case_sensitive");
	const struct jv *attr = dictsort ? NULL : jinja_util_arg(a, 2, "attribute");
	const struct jv *by = dictsort ? jinja_util_arg(a, 1, "by") : NULL;
	struct jv items, *src;
	struct keyed *k;
	size_t i, n;

	if (jinja_util_check_args(e, at, dictsort ? "dictsort" : "sort", a, 3,
				  dictsort ? dnames : names))
		return e->d->code;
	if (by && (by->k != JV_STR || strcmp(by->u.s->data, "key")))
		return jinja_util_refuse(e, at, "dictsort by value");
	if (dictsort) {
		struct jv fn;
		struct je_args none = { NULL, 0, NULL, NULL, 0 };

		if (in->k != JV_DICT)
			return jinja_util_reject(e, at,
						 "TypeError: You can only sort by either \"key\" or \"value\"");
		if (jinja_builtin_getattr(e, at, in, "items", &fn) ||
		    jinja_builtin_call(e, at, &fn, &none, &items))
			return e->d->code;
	} else if (jinja_builtin_iterate(e, at, in, &items)) {
		return e->d->code;
	}
	n = items.u.l->n;
	if (!(k = jinja_value_alloc(e->a, (n + 1) * sizeof(*k))) ||
	    jinja_value_seq_new(e->a, JV_LIST, n, out))
		return NOMEM(e, at);
	for (i = 0; i < n; i++) {
		src = &items.u.l->v[i];
		k[i].item = *src;
		if (sort_key(e, at, dictsort ? &src->u.l->v[0] : src, attr, cs &&
			     jinja_value_truthy(cs),
			     &k[i].key))
			return e->d->code;
	}
	if (sort_keyed(e, at, k, n, rev && jinja_value_truthy(rev)))
		return e->d->code;
	for (i = 0; i < n; i++)
		out->u.l->v[i] = k[i].item;
	out->u.l->n = n;
	return ERR_OK;
}

/* jinja2's do_min / do_max: the first smallest (largest) item by key, as
 * Python's min and max keep it; an empty sequence gives Undefined. */
static enum err f_minmax(struct je *e, const struct jn *at, const struct jv *in,
			 const struct je_args *a, int max, struct jv *out)
{
	static const char *const names[] = { "case_sensitive", "attribute", NULL };
	const struct jv *cs = jinja_util_arg(a, 0, names[0]);
	const struct jv *attr = jinja_util_arg(a, 1, names[1]);
	struct jv items, best = { JV_UNDEF, 0, { 0 } }, key;
	size_t i;
	int c = 0;

	if (jinja_util_check_args(e, at, max ? "max" : "min", a, 2, names) ||
	    jinja_builtin_iterate(e, at, in, &items))
		return e->d->code;
	*out = jinja_value_undef(NULL);
	for (i = 0; i < items.u.l->n; i++) {
		if (sort_key(e, at, &items.u.l->v[i], attr, cs && jinja_value_truthy(cs), &key) ||
		    (i && jinja_builtin_order(e, at, &key, &best, &c)))
			return e->d->code;
		if (!i || (max ? c > 0 : c < 0)) {
			best = key;
			*out = items.u.l->v[i];
		}
	}
	return ERR_OK;
}

static enum err f_unique(struct je *e, const struct jn *at, const struct jv *in,
			 const struct je_args *a, struct jv *out)
{
	static const char *const names[] = { "case_sensitive", "attribute", NULL };
	const struct jv *cs = jinja_util_arg(a, 0, names[0]);
	const struct jv *attr = jinja_util_arg(a, 1, names[1]);
	struct jv items, keys, key;
	size_t i;
	int seen;

	if (jinja_util_check_args(e, at, "unique", a, 2, names) ||
	    jinja_builtin_iterate(e, at, in, &items))
		return e->d->code;
	if (jinja_value_seq_new(e->a, JV_LIST, 0, out) ||
	    jinja_value_seq_new(e->a, JV_LIST, 0, &keys))
		return NOMEM(e, at);
	for (i = 0; i < items.u.l->n; i++) {
		if (sort_key(e, at, &items.u.l->v[i], attr, cs && jinja_value_truthy(cs), &key))
			return e->d->code;
		if (!jinja_value_hashable(&key))
			return jinja_util_reject(e, at, "TypeError: unhashable type: '%s'",
						 jinja_value_type_name(&key));
		if (jinja_builtin_contains(e, at, &key, &keys, &seen))
			return e->d->code;
		if (!seen && (jinja_value_seq_push(e->a, &keys, key) ||
			      jinja_value_seq_push(e->a, out, items.u.l->v[i])))
			return NOMEM(e, at);
	}
	out->flags = JV_F_GEN;
	return ERR_OK;
}

static enum err f_reverse(struct je *e, const struct jn *at, const struct jv *in, struct jv *out)
{
	struct jv items;
	size_t i, n;

	if (in->k == JV_STR)
		return jinja_str_slice(e, at, in, (int64_t)jinja_value_str_ncp(in->u.s) - 1, -1, -1, out);
	if (jinja_builtin_iterate(e, at, in, &items))
		return e->d->code;
	n = items.u.l->n;
	if (jinja_value_seq_new(e->a, JV_LIST, n, out))
		return NOMEM(e, at);
	for (i = 0; i < n; i++)
		out->u.l->v[i] = items.u.l->v[n - 1 - i];
	out->u.l->n = n;
	out->flags = (in->flags & JV_F_GEN) ? 0 : JV_F_GEN;
	return ERR_OK;
}

/* Python's int(s) on an ASCII string: whitespace, a sign, digits with single
 * underscores between them. 1 parsed, 0 ValueError, -1 beyond 64 bits. */
static int py_int_text(const char *s, int64_t *v)
{
	const char *p = s;
	int neg = 0, digits = 0;
	uint64_t x = 0;

	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	for (; (*p >= '0' && *p <= '9') || (*p == '_' && digits && p[1] >= '0' &&
					    p[1] <= '9'); p++) {
		if (*p == '_')
			continue;
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
		digits++;
	}
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (!digits || *p)
		return 0;
	if (x > (uint64_t)INT64_MAX + neg)
		return -1;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 1;
}

/* Python's float(s) on an ASCII string without underscores: 1 parsed, 0
 * ValueError, -1 a form needle leaves alone (underscores). */
static int py_float_text(const char *s, double *v)
{
	const char *p = s, *q;
	char *end;
	size_t i;

	if (strchr(s, '_'))
		return -1;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	q = p + (*p == '+' || *p == '-');
	for (i = 0; q[i] && ((q[i] >= '0' && q[i] <= '9') || q[i] == '.'); i++)
		;
	if (!i && strncasecmp(q, "inf", 3) && strncasecmp(q, "nan", 3))
		return 0;
	if (!strncasecmp(q, "0x", 2))
		return 0;
	*v = strtod(p, &end);
	if (end == p)
		return 0;
	while (*end == ' ' || (*end >= '\t' && *end <= '\r'))
		end++;
	return !*end;
}

/* int(x) / float(x) as do_int and do_float: strings, then numbers; what
 * fails with TypeError or ValueError gives the default. */
static enum err f_int(struct je *e, const struct jn *at, const struct jv *in,
		      const struct je_args *a, int to_float, struct jv *out)
{
	static const char *const names[] = { "default", "base", NULL };
	const struct jv *def = jinja_util_arg(a, 0, "default");
	double f = 0;
	int64_t i = 0;
	int ok = 0;
	size_t k;

	if (jinja_util_check_args(e, at, to_float ? "float" : "int", a, 1, names) ||
	    (jinja_util_arg(a, 1, "base") && (to_float || jinja_util_arg(a, 1, "base")->k != JV_INT ||
					      jinja_util_arg(a, 1, "base")->u.i != 10)))
		return e->d->code ? e->d->code : jinja_util_refuse(e, at, "int with a base");
	if (in->k == JV_UNDEF)
		return jinja_util_reject(e, at, "UndefinedError: '%s' is undefined",
					 in->u.p ? (const char *)in->u.p : "value");
	if (in->k == JV_INT || in->k == JV_BOOL) {
		*out = to_float ? jinja_value_float((double)in->u.i) : jinja_value_int(in->u.i);
		return ERR_OK;
	}
	if (in->k == JV_BIGINT && !to_float) {
		*out = *in;
		return ERR_OK;
	}
	if (in->k == JV_BIGINT) {
		*out = jinja_value_float(strtod(in->u.s->data, NULL));
		return isinf(out->u.f) ? jinja_util_reject(e, at, "OverflowError: int too large to "
							   "convert to float") : ERR_OK;
	}
	if (in->k == JV_FLOAT) {
		f = in->u.f;
		ok = 2;
	} else if (in->k == JV_STR) {
		for (k = 0; k < in->u.s->len; k++)
			if ((unsigned char)in->u.s->data[k] >= 0x80 || !in->u.s->data[k])
				return jinja_util_refuse(e, at, "int or float of non-ASCII text");
		ok = to_float ? 0 : py_int_text(in->u.s->data, &i);
		if (ok < 0 && (jinja_bigint_parse(e, at, in->u.s->data, out, &ok) || ok))
			return e->d->code;
		if (!ok)
			ok = py_float_text(in->u.s->data, &f) == 1 ? 2 : ok;
		if (ok < 0)
			return jinja_util_refuse(e, at, "int or float of this string");
	}
	if (ok == 1) {
		*out = to_float ? jinja_value_float((double)i) : jinja_value_int(i);
	} else if (ok == 2 && to_float) {
		*out = jinja_value_float(f);
	} else if (ok == 2) {
		if (isinf(f))
			return jinja_util_reject(e, at,
						 "OverflowError: cannot convert float infinity to integer");
		if (isnan(f))
			*out = def ? *def : jinja_value_int(0);
		else if (!(fabs(f) < 9e18))
			return jinja_util_refuse(e, at, "int of a float this large");
		else
			*out = jinja_value_int((int64_t)f);
	} else {
		*out = def ? *def : to_float ? jinja_value_float(0.0) : jinja_value_int(0);
	}
	return ERR_OK;
}

static enum err f_indent(struct je *e, const struct jn *at, const struct jv *in,
			 const struct je_args *a, struct jv *out)
{
	static const char *const names[] = { "width", "first", "blank", NULL };
	const struct jv *w = jinja_util_arg(a, 0, names[0]);
	const struct jv *first = jinja_util_arg(a, 1, names[1]);
	const struct jv *blank = jinja_util_arg(a, 2, names[2]);
	struct jv s, lines, nl, args_v;
	struct buf o;
	size_t i, width = 4;
	enum err r = ERR_OK;

	if (jinja_util_check_args(e, at, "indent", a, 3, names))
		return e->d->code;
	/* do_indent appends "\n" to its input as it is: only a str survives */
	if (in->k == JV_UNDEF)
		return jinja_util_reject(e, at, "UndefinedError: '%s' is undefined",
					 in->u.p ? (const char *)in->u.p : "value");
	if (in->k != JV_STR)
		return jinja_util_reject(e, at, "TypeError: unsupported operand type(s) for +=: "
					 "'%s' and 'str'", jinja_value_type_name(in));
	s = *in;
	if (w && w->k != JV_INT)
		return jinja_util_refuse(e, at, "indent with a width of type %s",
					 jinja_value_type_name(w));
	if (w)
		width = w->u.i < 0 ? 0 : (size_t)w->u.i;
	if ((s.flags & JV_F_MARKUP) || (blank && jinja_value_truthy(blank)))
		return jinja_util_refuse(e, at, "indent of Markup or with blank=True");
	if (jinja_value_str_new(e->a, "\n", 1, &nl) || jinja_builtin_binop(e, at, '+', &s, &nl, &s))
		return e->d->code ? e->d->code : NOMEM(e, at);
	args_v = jinja_value_none();
	{
		struct je_args none = { &args_v, 0, NULL, NULL, 0 };

		if (jinja_str_method(e, at, &s, "splitlines", &none, &lines))
			return e->d->code;
	}
	if (width > (SIZE_MAX - s.u.s->len) / (lines.u.l->n + 1))
		return jinja_util_room(e, at, SIZE_MAX);
	if (jinja_util_room(e, at, width * (lines.u.l->n + 1) + s.u.s->len))
		return e->d->code;
	buf_init(&o, jinja_util_buf_cap(e));
	for (i = 0; i < width && first && jinja_value_truthy(first); i++)
		r = buf_putc(&o, ' ') ? NOMEM(e, at) : ERR_OK;
	for (i = 0; i < lines.u.l->n && !r; i++) {
		const struct jv_str *l = lines.u.l->v[i].u.s;
		size_t k;

		if (i && buf_putc(&o, '\n'))
			r = NOMEM(e, at);
		for (k = 0; i && l->len && k < width && !r; k++)
			r = buf_putc(&o, ' ') ? NOMEM(e, at) : ERR_OK;
		if (!r && buf_append(&o, l->data, l->len))
			r = NOMEM(e, at);
	}
	if (!r && jinja_value_str_buf(e->a, &o, out))
		r = NOMEM(e, at);
	buf_release(&o);
	return r;
}

static enum err f_round(struct je *e, const struct jn *at, const struct jv *in,
			const struct je_args *a, struct jv *out)
{
	const struct jv *prec = jinja_util_arg(a, 0, "precision"),
			*method = jinja_util_arg(a, 1, "method");

	if ((prec && (prec->k != JV_INT || prec->u.i != 0)) || method)
		return jinja_util_refuse(e, at, "round with a precision or method");
	if (!jinja_value_is_num(in))
		return jinja_util_reject(e, at,
					 "TypeError: type %s doesn't define __round__ method",
					 jinja_value_type_name(in));
	if (in->k == JV_FLOAT)
		*out = jinja_value_float(nearbyint(in->u.f));
	else
		*out = jinja_value_int(in->u.i);
	return ERR_OK;
}

static enum err f_replace(struct je *e, const struct jn *at, const struct jv *in,
			  const struct je_args *a, struct jv *out)
{
	struct jv s;

	if (jinja_print_str(e, at, in, &s))
		return e->d->code;
	if (s.flags & JV_F_MARKUP)
		return jinja_util_refuse(e, at, "replace on Markup");
	if (a->nkw)
		return jinja_util_refuse(e, at, "replace with keyword arguments");
	return jinja_str_method(e, at, &s, "replace", a, out);
}

static enum err f_text(struct je *e, const struct jn *at, const char *name, const struct jv *in,
		       const struct je_args *a, struct jv *out)
{
	struct jv s;

	if (!strcmp(name, "trim")) {
		const struct jv *chars = jinja_util_arg(a, 0, "chars");

		if (jinja_print_str(e, at, in, &s))
			return e->d->code;
		return jinja_str_strip(e, at, &s, 'b', chars, out);
	}
	if (a->npos || a->nkw)
		return jinja_util_refuse(e, at, "the filter '%s' with arguments", name);
	if (jinja_print_str(e, at, in, &s))
		return e->d->code;
	if (!strcmp(name, "safe")) {
		*out = s;
		out->flags = JV_F_MARKUP;
		return ERR_OK;
	}
	if (!strcmp(name, "e") || !strcmp(name, "escape"))
		return jinja_str_escape(e, at, in, out);
	return jinja_str_case(e, at, &s, !strcmp(name, "upper") ? 'u' : !strcmp(name, "lower") ? 'l'
			      : !strcmp(name, "capitalize") ? 'c' : 't', out);
}

static enum err f_abs(struct je *e, const struct jn *at, const struct jv *in, struct jv *out)
{
	if (in->k == JV_FLOAT) {
		*out = jinja_value_float(fabs(in->u.f));
		return ERR_OK;
	}
	if (in->k == JV_INT || in->k == JV_BOOL)
		return jinja_builtin_unary(e, at, in->u.i < 0, in, out);
	if (in->k == JV_BIGINT)
		return jinja_builtin_unary(e, at, in->u.s->data[0] == '-', in, out);
	return jinja_util_reject(e, at, "TypeError: bad operand type for abs(): '%s'",
				 jinja_value_type_name(in));
}

/* The generator filters run their body at the first next(), not when called
 * (filters.py: map, select_or_reject, do_unique, do_items are generator
 * functions): a failure while computing them is kept in the generator and
 * raised where it is consumed, so that an unconsumed one renders as in Python. */
static enum err lazily(struct je *e, const struct jn *at, struct jv *out, enum err r)
{
	char *msg;
	size_t n;

	if (r != ERR_INPUT && r != ERR_UNSUPPORTED)
		return r;
	if (out->k != JV_LIST && jinja_value_seq_new(e->a, JV_LIST, 0, out))
		return NOMEM(e, at);
	n = strlen(e->d->msg);
	if (!(msg = jinja_value_alloc(e->a, n + 1)))
		return NOMEM(e, at);
	memcpy(msg, e->d->msg, n);
	out->u.l->err = r;
	out->u.l->err_msg = msg;
	out->flags = JV_F_GEN;
	diag_init(e->d);
	return ERR_OK;
}

static int is_text_filter(const char *name)
{
	static const char *const names[] = { "trim", "safe", "e", "escape", "upper", "lower",
					     "capitalize", "title", NULL };
	size_t k;

	for (k = 0; names[k]; k++)
		if (!strcmp(names[k], name))
			return 1;
	return 0;
}

/* The generator filters; 1 if `name` is one (its result in *r). */
static int gen_filter(struct je *e, const struct jn *at, const char *name, const struct jv *in,
		      const struct je_args *a, struct jv *out, enum err *r)
{
	if (!strcmp(name, "items"))
		*r = f_items(e, at, in, out);
	else if (!strcmp(name, "map"))
		*r = f_map(e, at, in, a, out);
	else if (!strcmp(name, "select") || !strcmp(name, "reject"))
		*r = f_select(e, at, in, a, name[0] == 's', 0, out);
	else if (!strcmp(name, "selectattr") || !strcmp(name, "rejectattr"))
		*r = f_select(e, at, in, a, name[0] == 's', 1, out);
	else if (!strcmp(name, "unique"))
		*r = f_unique(e, at, in, a, out);
	else
		return 0;
	return 1;
}

/* jinja2's do_format: soft_str(value) % (kwargs or args), the keywords as a
 * dict. */
static enum err f_format(struct je *e, const struct jn *at, const struct jv *in,
			 const struct je_args *a, struct jv *out)
{
	struct jv s, args, key;
	size_t i;

	if (a->npos && a->nkw)
		return jinja_util_reject(e, at, "FilterArgumentError: can't handle positional and "
					 "keyword arguments at the same time");
	if (jinja_print_str(e, at, in, &s))
		return e->d->code;
	if (a->nkw ? jinja_value_dict_new(e->a, JV_DICT, &args)
	    : jinja_value_seq_new(e->a, JV_TUPLE, a->npos, &args))
		return jinja_util_nomem(e, at);
	for (i = 0; i < a->nkw; i++)
		if (jinja_value_str_new(e->a, a->kwn[i], strlen(a->kwn[i]), &key) ||
		    jinja_value_dict_set(e->a, &args, key, a->kwv[i]))
			return jinja_util_nomem(e, at);
	for (i = 0; i < a->npos; i++)
		if (jinja_value_seq_push(e->a, &args, a->pos[i]))
			return jinja_util_nomem(e, at);
	return jinja_fmt_percent(e, at, &s, &args, out);
}

static enum err dispatch(struct je *e, const struct jn *at, const char *name, const struct jv *in,
			 const struct je_args *a, struct jv *out)
{
	struct jv res = { JV_UNDEF, 0, { 0 } };
	enum err r;

	if (at->k == N_FILTER && at->s == name && at->id == JN_F_LENGTH)
		return f_length(e, at, in, out);
	if (gen_filter(e, at, name, in, a, &res, &r)) {
		r = lazily(e, at, &res, r);
		if (!r)
			*out = res;
		return r;
	}
	if (!strcmp(name, "tojson"))
		return f_tojson(e, at, in, a, out);
	if (!strcmp(name, "length") || !strcmp(name, "count"))
		return f_length(e, at, in, out);
	if (is_text_filter(name))
		return f_text(e, at, name, in, a, out);
	if (!strcmp(name, "string"))
		return f_string(e, at, in, out);
	if (!strcmp(name, "join"))
		return f_join(e, at, in, a, out);
	if (!strcmp(name, "default") || !strcmp(name, "d"))
		return f_default(e, at, in, a, out);
	if (!strcmp(name, "list"))
		return as_list(e, at, in, out);
	if (!strcmp(name, "first") || !strcmp(name, "last"))
		return f_first_last(e, at, in, name[0] == 'l', out);
	if (!strcmp(name, "sort") || !strcmp(name, "dictsort"))
		return f_sort(e, at, in, a, name[0] == 'd', out);
	if (!strcmp(name, "reverse"))
		return f_reverse(e, at, in, out);
	if (!strcmp(name, "min") || !strcmp(name, "max"))
		return f_minmax(e, at, in, a, name[1] == 'a', out);
	if (!strcmp(name, "int") || !strcmp(name, "float"))
		return f_int(e, at, in, a, name[0] == 'f', out);
	if (!strcmp(name, "indent"))
		return f_indent(e, at, in, a, out);
	if (!strcmp(name, "round"))
		return f_round(e, at, in, a, out);
	if (!strcmp(name, "replace"))
		return f_replace(e, at, in, a, out);
	if (!strcmp(name, "abs"))
		return f_abs(e, at, in, out);
	if (!strcmp(name, "format"))
		return f_format(e, at, in, a, out);
	return jinja_util_refuse(e, at, "the filter '%s'", name);
}

int jinja_filter_id(const char *name)
{
	return !strcmp(name, "length") || !strcmp(name, "count") ? JN_F_LENGTH : 0;
}

/* Charges the str a filter scans before it runs and what it made after (a
 * container's items are charged as they are compared or copied: |length of
 * a list is free, as in Python). */
enum err jinja_filter(struct je *e, const struct jn *at, const char *name, const struct jv *in,
		      const struct je_args *a, struct jv *out)
{
	if (jinja_util_work(e, at, in->k == JV_STR ? in->u.s->len : 0) ||
	    dispatch(e, at, name, in, a, out))
		return e->d->code;
	return jinja_util_work(e, at, jinja_util_units(out, NULL));
}
