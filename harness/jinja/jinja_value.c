/* jinja_value — see jinja_value.h. */
#include "jinja_value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jscan.h"
#include "base/mem.h"

#define BLOCK_MIN ((size_t)64 << 10)

struct jv_block {
	struct jv_block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

void jinja_value_arena_init(struct jv_arena *a, size_t max)
{
	a->head = NULL;
	a->used = 0;
	a->max = max;
}

void jinja_value_arena_release(struct jv_arena *a)
{
	struct jv_block *b, *next;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		mem_free(b);
	}
	jinja_value_arena_init(a, a->max);
}

int jinja_value_arena_full(const struct jv_arena *a, size_t n)
{
	return n > a->max - a->used || ((n + 15) & ~(size_t)15) > a->max - a->used;
}

enum err jinja_value_arena_charge(struct jv_arena *a, size_t n)
{
	size_t need = (n + 15) & ~(size_t)15;

	if (need < n || need > a->max - a->used)
		return ERR_NOMEM;
	a->used += need;
	return ERR_OK;
}

void jinja_value_arena_refund(struct jv_arena *a, size_t n)
{
	a->used -= (n + 15) & ~(size_t)15;
}

size_t jinja_value_str_size(size_t n)
{
	return sizeof(struct jv_str) + n + 1;
}

/* `n` bytes, 16-aligned, not zeroed; NULL when out of memory or past the cap. */
static void *arena_take(struct jv_arena *a, size_t n)
{
	struct jv_block *b = a->head;
	size_t need = (n + 15) & ~(size_t)15, cap;
	void *p;

	if (need < n || need > a->max - a->used)
		return NULL;
	if (!b || b->cap - b->used < need) {
		cap = need > BLOCK_MIN ? need : BLOCK_MIN;
		b = mem_alloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += need;
	a->used += need;
	return p;
}

void *jinja_value_alloc(struct jv_arena *a, size_t n)
{
	void *p = arena_take(a, n);

	if (p)
		memset(p, 0, n);
	return p;
}

static size_t count_cp(const char *s, size_t n)
{
	size_t i = 0, cont = 0;
	uint64_t w;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		w = (w & ~(w << 1) & 0x8080808080808080ULL) >> 7;
		cont += (size_t)((w * 0x0101010101010101ULL) >> 56);
	}
	for (; i < n; i++)
		cont += ((unsigned char)s[i] & 0xC0) == 0x80;
	return n - cont;
}

size_t jinja_value_str_ncp(const struct jv_str *s)
{
	if (s->ncp == JV_NCP_UNKNOWN)
		((struct jv_str *)s)->ncp = count_cp(s->data, s->len);
	return s->ncp;
}

static void str_set(struct jv_str *p, const char *data, size_t n, struct jv *out)
{
	p->len = n;
	p->ncp = JV_NCP_UNKNOWN;
	p->data = data;
	out->k = JV_STR;
	out->flags = 0;
	out->u.s = p;
}

enum err jinja_value_str_room(struct jv_arena *a, size_t n, char **bytes, struct jv *out)
{
	struct jv_str *p;

	if (n > SIZE_MAX - sizeof(*p) - 1 || !(p = arena_take(a, jinja_value_str_size(n))))
		return ERR_NOMEM;
	*bytes = (char *)(p + 1);
	(*bytes)[n] = 0;
	str_set(p, *bytes, n, out);
	return ERR_OK;
}

enum err jinja_value_str_new(struct jv_arena *a, const char *s, size_t n, struct jv *out)
{
	char *bytes;

	if (jinja_value_str_room(a, n, &bytes, out))
		return ERR_NOMEM;
	if (n)
		memcpy(bytes, s, n);
	return ERR_OK;
}

enum err jinja_value_str_view(struct jv_arena *a, const char *s, size_t n, struct jv *out)
{
	struct jv_str *p = arena_take(a, sizeof(*p));

	if (!p)
		return ERR_NOMEM;
	str_set(p, s, n, out);
	return ERR_OK;
}

enum err jinja_value_str_buf(struct jv_arena *a, const struct buf *b, struct jv *out)
{
	return jinja_value_str_new(a, b->data, b->len, out);
}

enum err jinja_value_seq_new(struct jv_arena *a, enum jv_kind k, size_t cap, struct jv *out)
{
	struct jv_seq *l = jinja_value_alloc(a, sizeof(*l));

	if (!l)
		return ERR_NOMEM;
	if (cap) {
		l->v = jinja_value_alloc(a, cap * sizeof(struct jv));
		if (!l->v || cap > SIZE_MAX / sizeof(struct jv))
			return ERR_NOMEM;
		l->cap = cap;
	}
	out->k = k;
	out->flags = 0;
	out->u.l = l;
	return ERR_OK;
}

enum err jinja_value_seq_push(struct jv_arena *a, struct jv *seq, struct jv item)
{
	struct jv_seq *l = seq->u.l;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct jv *v = jinja_value_alloc(a, cap * sizeof(*v));

		if (!v)
			return ERR_NOMEM;
		if (l->n)
			memcpy(v, l->v, l->n * sizeof(*v));
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = item;
	return ERR_OK;
}

enum err jinja_value_dict_new(struct jv_arena *a, enum jv_kind k, struct jv *out)
{
	struct jv_dict *d = jinja_value_alloc(a, sizeof(*d));

	if (!d)
		return ERR_NOMEM;
	out->k = k;
	out->flags = 0;
	out->u.d = d;
	return ERR_OK;
}

/* Python ==. Returns 1/0; -1 when needle cannot decide (a big integer against
 * a number), which callers refuse; JV_EQ_DEEP when the walk would go deeper
 * than JV_MAX_DEPTH containers (Python raises RecursionError). The same
 * container object equals itself at once, as in CPython. */
static int jinja_value_eq(const struct jv *a, const struct jv *b);

struct jv *jinja_value_dict_get(const struct jv *dict, struct jv key)
{
	struct jv_dict *d = dict->u.d;
	size_t i;

	for (i = 0; i < d->n; i++)
		if (jinja_value_eq(&d->keys[i], &key) == 1)
			return &d->vals[i];
	return NULL;
}

struct jv *jinja_value_dict_get_str(const struct jv *dict, const char *s, size_t n)
{
	struct jv_dict *d = dict->u.d;
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->keys[i].k == JV_STR && d->keys[i].u.s->len == n &&
		    !memcmp(d->keys[i].u.s->data, s, n))
			return &d->vals[i];
	return NULL;
}

enum err jinja_value_dict_set(struct jv_arena *a, struct jv *dict, struct jv key, struct jv val)
{
	struct jv_dict *d = dict->u.d;
	struct jv *slot = jinja_value_dict_get(dict, key);

	if (slot) {
		*slot = val;
		return ERR_OK;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 4;
		struct jv *k = jinja_value_alloc(a, cap * sizeof(*k));
		struct jv *v = jinja_value_alloc(a, cap * sizeof(*v));

		if (!k || !v)
			return ERR_NOMEM;
		if (d->n) {
			memcpy(k, d->keys, d->n * sizeof(*k));
			memcpy(v, d->vals, d->n * sizeof(*v));
		}
		d->keys = k;
		d->vals = v;
		d->cap = cap;
	}
	d->keys[d->n] = key;
	d->vals[d->n++] = val;
	return ERR_OK;
}

int jinja_value_truthy(const struct jv *v)
{
	switch (v->k) {
	case JV_UNDEF:
	case JV_NONE:
		return 0;
	case JV_BOOL:
	case JV_INT:
		return v->u.i != 0;
	case JV_BIGINT:
		return 1;
	case JV_FLOAT:
		return v->u.f != 0.0;
	case JV_STR:
		return v->u.s->len != 0;
	case JV_LIST:
	case JV_TUPLE:
		return (v->flags & JV_F_GEN) || v->u.l->n != 0;
	case JV_DICT:
		return v->u.d->n != 0;
	default:
		return 1;
	}
}

int jinja_value_is_num(const struct jv *v)
{
	return v->k == JV_INT || v->k == JV_BOOL || v->k == JV_FLOAT;
}

int jinja_value_is_seq(const struct jv *v)
{
	return v->k == JV_LIST || v->k == JV_TUPLE;
}

static double num_of(const struct jv *v)
{
	return v->k == JV_FLOAT ? v->u.f : (double)v->u.i;
}

static int num_eq(const struct jv *a, const struct jv *b)
{
	if (a->k != JV_FLOAT && b->k != JV_FLOAT)
		return a->u.i == b->u.i;
	if (a->k == JV_FLOAT && b->k == JV_FLOAT)
		return a->u.f == b->u.f;
	/* int against float: exact, as Python compares them */
	{
		const struct jv *i = a->k == JV_FLOAT ? b : a;
		double f = num_of(a->k == JV_FLOAT ? a : b);

		if (!(f == f) || f != floor(f) || fabs(f) >= 9223372036854775808.0)
			return 0;
		return (int64_t)f == i->u.i;
	}
}

static int eq_at(const struct jv *a, const struct jv *b, int depth, size_t *work);

static int seq_eq(const struct jv_seq *a, const struct jv_seq *b, int depth, size_t *work)
{
	size_t i;
	int r;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if ((r = eq_at(&a->v[i], &b->v[i], depth, work)) != 1)
			return r;
	return 1;
}

static int dict_eq(const struct jv *a, const struct jv *b, int depth, size_t *work)
{
	size_t i;
	int r;

	if (a->u.d->n != b->u.d->n)
		return 0;
	for (i = 0; i < a->u.d->n; i++) {
		struct jv *o = jinja_value_dict_get(b, a->u.d->keys[i]);

		*work += b->u.d->n * JV_WORK_ITEM;
		if (!o)
			return 0;
		if ((r = eq_at(&a->u.d->vals[i], o, depth, work)) != 1)
			return r;
	}
	return 1;
}

/* Containers recurse; the same container object is equal to itself without a
 * look inside (CPython's PyObject_RichCompareBool tests identity first). */
static int eq_at(const struct jv *a, const struct jv *b, int depth, size_t *work)
{
	*work += JV_WORK_ITEM;
	if (jinja_value_is_num(a) && jinja_value_is_num(b))
		return num_eq(a, b);
	if (a->k == JV_BIGINT || b->k == JV_BIGINT) {
		if (a->k == JV_BIGINT && b->k == JV_BIGINT)
			return !strcmp(a->u.s->data, b->u.s->data);
		if (!jinja_value_is_num(a) && !jinja_value_is_num(b))
			return 0;
		return a->k == JV_FLOAT || b->k == JV_FLOAT ? -1 : 0;
	}
	if (a->k != b->k)
		return 0;
	switch (a->k) {
	case JV_UNDEF:
	case JV_NONE:
		return 1;
	case JV_STR:
		*work += a->u.s->len;
		return a->u.s->len == b->u.s->len &&
		       !memcmp(a->u.s->data, b->u.s->data, a->u.s->len);
	case JV_LIST:
	case JV_TUPLE:
		if (a->u.l == b->u.l && a->flags == b->flags)
			return 1;
		if ((a->flags | b->flags) & (JV_F_GEN | JV_F_VIEW | JV_F_RANGE))
			return -1;
		if (depth >= JV_MAX_DEPTH)
			return JV_EQ_DEEP;
		return seq_eq(a->u.l, b->u.l, depth + 1, work);
	case JV_DICT:
		if (a->u.d == b->u.d)
			return 1;
		if (depth >= JV_MAX_DEPTH)
			return JV_EQ_DEEP;
		return dict_eq(a, b, depth + 1, work);
	default:
		return a->u.p == b->u.p;
	}
}

static int jinja_value_eq(const struct jv *a, const struct jv *b)
{
	size_t work = 0;

	return eq_at(a, b, 0, &work);
}

int jinja_value_eq_work(const struct jv *a, const struct jv *b, size_t *work)
{
	return eq_at(a, b, 0, work);
}

static int hashable_at(const struct jv *v, int depth)
{
	size_t i;

	switch (v->k) {
	case JV_NONE:
	case JV_BOOL:
	case JV_INT:
	case JV_BIGINT:
	case JV_FLOAT:
	case JV_STR:
		return 1;
	case JV_TUPLE:
		if (depth >= JV_MAX_DEPTH)
			return 0;
		for (i = 0; i < v->u.l->n; i++)
			if (!hashable_at(&v->u.l->v[i], depth + 1))
				return 0;
		return 1;
	default:
		return 0;
	}
}

int jinja_value_hashable(const struct jv *v)
{
	return hashable_at(v, 0);
}

const char *jinja_value_type_name(const struct jv *v)
{
	switch (v->k) {
	case JV_UNDEF: return "Undefined";
	case JV_NONE: return "NoneType";
	case JV_BOOL: return "bool";
	case JV_INT:
	case JV_BIGINT: return "int";
	case JV_FLOAT: return "float";
	case JV_STR: return "str";
	case JV_LIST:
		if (v->flags & JV_F_GEN)
			return "generator";
		if (v->flags & JV_F_RANGE)
			return "range";
		return v->flags & JV_F_VIEW ? "dict view" : "list";
	case JV_TUPLE: return "tuple";
	case JV_DICT: return "dict";
	case JV_NS: return "Namespace";
	case JV_MACRO: return "Macro";
	case JV_FUNC: return "function";
	case JV_LOOP: return "LoopContext";
	}
	return "object";
}

/* --- JSON --- */

struct jreader {
	struct jscan j;
	char *copy;   /* the text, copied into `a`: strings are views into it */
	struct jv_arena *a;
	struct buf scratch;
	struct diag *d;
};

static enum err read_value(struct jreader *r, int depth, struct jv *out);

static enum err read_number(struct jreader *r, struct jv *out)
{
	size_t start, n, i;
	const char *s;
	int is_float = 0;
	char tmp[64];

	if (jscan_skip(&r->j, &start, r->d))
		return r->d->code;
	s = r->j.s + start;
	n = r->j.pos - start;
	for (i = 0; i < n; i++)
		is_float |= s[i] == '.' || s[i] == 'e' || s[i] == 'E';
	if (is_float) {
		char *copy = jinja_value_alloc(r->a, n + 1);

		if (!copy)
			return diag_fail(r->d, ERR_NOMEM, "out of memory");
		memcpy(copy, s, n);
		*out = jinja_value_float(strtod(copy, NULL));
		return ERR_OK;
	}
	if (n < 19 || (n == 19 && s[0] != '-' && memcmp(s, "9223372036854775807", 19) <= 0) ||
	    (n == 20 && s[0] == '-' && memcmp(s + 1, "9223372036854775808", 19) <= 0)) {
		memcpy(tmp, s, n);
		tmp[n] = 0;
		*out = jinja_value_int(strtoll(tmp, NULL, 10));
		return ERR_OK;
	}
	if (n - (s[0] == '-') > JV_BIGINT_MAX_DIGITS)
		return diag_fail(r->d, ERR_UNSUPPORTED, "'%s': an integer of more than %d digits "
				 "(Python's json.loads raises ValueError)", r->j.name,
				 JV_BIGINT_MAX_DIGITS);
	if (jinja_value_str_new(r->a, s, n, out))
		return diag_fail(r->d, ERR_NOMEM, "out of memory");
	out->k = JV_BIGINT;
	return ERR_OK;
}

static enum err read_string(struct jreader *r, struct jv *out)
{
	const char *s;
	size_t n;

	if (jscan_string(&r->j, &r->scratch, &s, &n, r->d))
		return r->d->code;
	if (s >= r->j.s && s < r->j.s + r->j.len) { /* no escapes: s[n] is the quote */
		char *view = r->copy + (s - r->j.s);

		view[n] = 0;
		if (jinja_value_str_view(r->a, view, n, out))
			return diag_fail(r->d, ERR_NOMEM, "out of memory");
		return ERR_OK;
	}
	if (jinja_value_str_new(r->a, s, n, out))
		return diag_fail(r->d, ERR_NOMEM, "out of memory");
	return ERR_OK;
}

static enum err read_array(struct jreader *r, int depth, struct jv *out)
{
	struct jv item;
	int more;

	if (jinja_value_seq_new(r->a, JV_LIST, 0, out))
		return diag_fail(r->d, ERR_NOMEM, "out of memory");
	more = jscan_open(&r->j, '[', r->d);
	while (more == 1) {
		if (read_value(r, depth + 1, &item))
			return r->d->code;
		if (jinja_value_seq_push(r->a, out, item))
			return diag_fail(r->d, ERR_NOMEM, "out of memory");
		more = jscan_next(&r->j, ']', r->d);
	}
	return more < 0 ? r->d->code : ERR_OK;
}

static enum err read_object(struct jreader *r, int depth, struct jv *out)
{
	struct jv key, val;
	int more;

	if (jinja_value_dict_new(r->a, JV_DICT, out))
		return diag_fail(r->d, ERR_NOMEM, "out of memory");
	more = jscan_open(&r->j, '{', r->d);
	while (more == 1) {
		if (read_string(r, &key) || jscan_expect(&r->j, ':', r->d) ||
		    read_value(r, depth + 1, &val))
			return r->d->code;
		if (jinja_value_dict_set(r->a, out, key, val))
			return diag_fail(r->d, ERR_NOMEM, "out of memory");
		more = jscan_next(&r->j, '}', r->d);
	}
	return more < 0 ? r->d->code : ERR_OK;
}

static enum err read_word(struct jreader *r, struct jv *out)
{
	size_t start;
	const char *s;

	if (jscan_skip(&r->j, &start, r->d))
		return r->d->code;
	s = r->j.s + start;
	if (*s == 'n')
		*out = jinja_value_none();
	else
		*out = jinja_value_bool(*s == 't');
	return ERR_OK;
}

static enum err read_value(struct jreader *r, int depth, struct jv *out)
{
	int c = jscan_peek(&r->j);

	if (depth >= JSCAN_MAX_DEPTH)
		return jscan_fail(&r->j, r->d, "nested too deeply");
	switch (c) {
	case '{':
		return read_object(r, depth, out);
	case '[':
		return read_array(r, depth, out);
	case '"':
		return read_string(r, out);
	case 't':
	case 'f':
	case 'n':
		return read_word(r, out);
	case 'N':
	case 'I':
		return diag_fail(r->d, ERR_UNSUPPORTED, "'%s': NaN and Infinity are not supported",
				 r->j.name);
	default:
		if (c == '-' && r->j.pos + 1 < r->j.len && r->j.s[r->j.pos + 1] == 'I')
			return diag_fail(r->d, ERR_UNSUPPORTED,
					 "'%s': NaN and Infinity are not supported", r->j.name);
		return read_number(r, out);
	}
}

enum err jinja_value_from_json(struct jv_arena *a, const char *s, size_t len,
			       const char *name, struct jv *out, struct diag *d)
{
	struct jreader r;
	enum err e;

	jscan_init(&r.j, s, len, name);
	r.copy = len < SIZE_MAX ? arena_take(a, len + 1) : NULL;
	if (!r.copy)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	memcpy(r.copy, s, len);
	r.copy[len] = 0;
	r.a = a;
	r.d = d;
	buf_init(&r.scratch, BUF_MAX_DEFAULT);
	e = read_value(&r, 0, out);
	if (!e && jscan_peek(&r.j) != -1)
		e = jscan_fail(&r.j, d, "trailing characters after the value");
	buf_release(&r.scratch);
	return e;
}

static enum err cjson_value(struct jv_arena *a, const cJSON *v, int depth, const char *name,
			    struct jv *out, struct diag *d);

static enum err cjson_container(struct jv_arena *a, const cJSON *v, int depth, const char *name,
				struct jv *out, struct diag *d)
{
	const cJSON *c;
	struct jv key, val;
	int obj = cJSON_IsObject(v);

	if (obj ? jinja_value_dict_new(a, JV_DICT, out)
		: jinja_value_seq_new(a, JV_LIST, (size_t)cJSON_GetArraySize(v), out))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (c = v->child; c; c = c->next) {
		if (cjson_value(a, c, depth + 1, name, &val, d))
			return d->code;
		if (obj ? jinja_value_str_view(a, c->string, strlen(c->string), &key) ||
			  jinja_value_dict_set(a, out, key, val)
			: jinja_value_seq_push(a, out, val))
			return diag_fail(d, ERR_NOMEM, "out of memory");
	}
	return ERR_OK;
}

/* A number: the JSON text it stands for, read as jinja_value_from_json reads it. */
static enum err cjson_number(struct jv_arena *a, const cJSON *v, const char *name,
			     struct jv *out, struct diag *d)
{
	char *text = cJSON_IsRaw(v) ? v->valuestring : cJSON_PrintUnformatted(v);
	enum err e;

	if (!text)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	e = jinja_value_from_json(a, text, strlen(text), name, out, d);
	if (text != v->valuestring)
		cJSON_free(text);
	return e;
}

static enum err cjson_value(struct jv_arena *a, const cJSON *v, int depth, const char *name,
			    struct jv *out, struct diag *d)
{
	if (depth >= JSCAN_MAX_DEPTH)
		return diag_fail(d, ERR_INPUT, "cannot parse '%s': nested too deeply (more than %d "
				 "levels)", name, JSCAN_MAX_DEPTH);
	if (cJSON_IsNull(v)) {
		*out = jinja_value_none();
	} else if (cJSON_IsBool(v)) {
		*out = jinja_value_bool(cJSON_IsTrue(v));
	} else if (cJSON_IsString(v)) {
		if (jinja_value_str_view(a, v->valuestring, strlen(v->valuestring), out))
			return diag_fail(d, ERR_NOMEM, "out of memory");
	} else if (cJSON_IsNumber(v) || cJSON_IsRaw(v)) {
		return cjson_number(a, v, name, out, d);
	} else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
		return cjson_container(a, v, depth, name, out, d);
	} else {
		return diag_fail(d, ERR_INTERNAL, "'%s': a cJSON item of no JSON type", name);
	}
	return ERR_OK;
}

enum err jinja_value_from_cjson(struct jv_arena *a, const cJSON *v, const char *name,
				struct jv *out, struct diag *d)
{
	return cjson_value(a, v, 0, name, out, d);
}
