/* jinja — see jinja.h. Ties the lexer, parser and evaluator together and
 * owns the context. */
#include "jinja.h"

#include <string.h>

#include "jinja_int.h"
#include "jinja_lex.h"
#include "jinja_parse.h"
#include "jinja_value.h"
#include "base/mem.h"
#include "base/utf8.h"

#define KEYS_KEPT 8

struct jinja_ctx {
	struct jv_arena a;
	struct jv vars; /* dict: name -> value */
	struct tm clock;
	size_t mem_max; /* cap of one render's arena */
	double seconds; /* wall-clock cap of one render */
	struct jv keys[KEYS_KEPT]; /* the keys of built dicts made last, shared by the
				    * next dicts that use them (message after message) */
	size_t nkeys;
	struct jv_str *spare;      /* str headers made with the dict built last, for its
				    * strs (jinja_list_add_dict), and how many are left */
	size_t nspare;
};

struct jinja_tpl {
	struct jv_arena a;
	struct jn *root;
	struct jn_names names;
	unsigned nslots; /* N_GETATTR nodes (jn.slot) */
	struct jvm *code; /* the compiled expressions (jinja_eval_compile) */
};

struct jinja_ctx *jinja_ctx_new(void)
{
	struct jinja_ctx *c = mem_calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	jinja_value_arena_init(&c->a, JINJA_MAX_MEMORY);
	if (jinja_value_dict_new(&c->a, JV_DICT, &c->vars)) {
		mem_free(c);
		return NULL;
	}
	c->clock.tm_year = 70;
	c->clock.tm_mday = 1;
	c->clock.tm_wday = 4;
	c->mem_max = JINJA_MAX_MEMORY;
	c->seconds = JINJA_MAX_SECONDS;
	return c;
}

void jinja_ctx_free(struct jinja_ctx *c)
{
	if (!c)
		return;
	jinja_value_arena_release(&c->a);
	mem_free(c);
}

static enum err set_var(struct jinja_ctx *c, const char *name, size_t n, struct jv v,
			struct diag *d)
{
	struct jv key;

	if (jinja_value_str_new(&c->a, name, n, &key) ||
	    jinja_value_dict_set(&c->a, &c->vars, key, v))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	return ERR_OK;
}

enum err jinja_ctx_set_json(struct jinja_ctx *c, const char *name, const char *json,
			    size_t len, struct diag *d)
{
	struct jv v;

	if (jinja_value_from_json(&c->a, json, len, name, &v, d))
		return d->code;
	return set_var(c, name, strlen(name), v, d);
}

enum err jinja_ctx_set_cjson(struct jinja_ctx *c, const char *name, const cJSON *v,
			     struct diag *d)
{
	struct jv val;

	if (jinja_value_from_cjson(&c->a, v, name, &val, d))
		return d->code;
	return set_var(c, name, strlen(name), val, d);
}

/* --- variables built in place --- */

struct jinja_list {
	struct jv_seq seq;
};

struct jinja_dict {
	struct jv_dict dict;
};

enum err jinja_ctx_set_list(struct jinja_ctx *c, const char *name, size_t cap,
			    struct jinja_list **out, struct diag *d)
{
	struct jv v;

	*out = NULL;
	if (jinja_value_seq_new(&c->a, JV_LIST, cap, &v))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if (set_var(c, name, strlen(name), v, d))
		return d->code;
	*out = (struct jinja_list *)v.u.l;
	return ERR_OK;
}

enum err jinja_list_add_dict(struct jinja_ctx *c, struct jinja_list *l, size_t cap,
			     struct jinja_dict **out, struct diag *d)
{
	struct jv seq = { JV_LIST, 0, { .l = &l->seq } }, v = { JV_DICT, 0, { 0 } };
	struct jv_dict *x;
	size_t head = (sizeof(*x) + 15) & ~(size_t)15;
	unsigned char *p;

	*out = NULL;
	c->nspare = 0;
	/* one allocation: the dict, its keys and values, and a str header
	 * for each value (jinja_dict_set_str) */
	if (cap > (SIZE_MAX / 4 - head) / (2 * sizeof(struct jv) + sizeof(struct jv_str)) ||
	    !(p = jinja_value_alloc(&c->a, head + cap * (2 * sizeof(struct jv) +
							 sizeof(struct jv_str)))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	x = (struct jv_dict *)p;
	x->keys = (struct jv *)(p + head);
	x->vals = x->keys + cap;
	x->cap = cap;
	c->spare = (struct jv_str *)(x->vals + cap);
	c->nspare = cap;
	v.u.d = x;
	if (jinja_value_seq_push(&c->a, &seq, v))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	*out = (struct jinja_dict *)x;
	return ERR_OK;
}

/* The str `key` (borrowed), shared with an earlier built dict's equal key. */
static enum err built_key(struct jinja_ctx *c, const char *key, struct jv *out)
{
	size_t n, i;

	for (i = 0; i < c->nkeys; i++)
		if (c->keys[i].u.s->data == key) {
			*out = c->keys[i];
			return ERR_OK;
		}
	n = strlen(key);
	for (i = 0; i < c->nkeys; i++)
		if (c->keys[i].u.s->len == n && c->keys[i].u.s->data[0] == key[0] &&
		    !memcmp(c->keys[i].u.s->data, key, n)) {
			*out = c->keys[i];
			return ERR_OK;
		}
	if (jinja_value_str_view(&c->a, key, n, out))
		return ERR_NOMEM;
	if (c->nkeys < KEYS_KEPT)
		c->keys[c->nkeys++] = *out;
	return ERR_OK;
}

static enum err dict_put(struct jinja_ctx *c, struct jinja_dict *dict, const char *key,
			 struct jv v, struct diag *d)
{
	struct jv k, x = { JV_DICT, 0, { .d = &dict->dict } };
	struct jv_dict *t = &dict->dict;
	size_t i;

	if (built_key(c, key, &k))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (i = 0; i < t->n; i++)
		if (t->keys[i].u.s == k.u.s ||
		    (t->keys[i].u.s->len == k.u.s->len &&
		     !memcmp(t->keys[i].u.s->data, k.u.s->data, k.u.s->len))) {
			t->vals[i] = v;
			return ERR_OK;
		}
	if (t->n < t->cap) {
		t->keys[t->n] = k;
		t->vals[t->n++] = v;
		return ERR_OK;
	}
	return jinja_value_dict_set(&c->a, &x, k, v) ? diag_fail(d, ERR_NOMEM, "out of memory")
						     : ERR_OK;
}

enum err jinja_dict_set_str(struct jinja_ctx *c, struct jinja_dict *dict, const char *key,
			    const char *s, size_t n, struct diag *d)
{
	struct jv v = { JV_STR, 0, { 0 } };

	if (c->nspare) { /* a header made with the dict */
		v.u.s = c->spare++;
		c->nspare--;
		v.u.s->len = n;
		v.u.s->ncp = JV_NCP_UNKNOWN;
		v.u.s->data = s;
	} else if (jinja_value_str_view(&c->a, s, n, &v)) {
		return diag_fail(d, ERR_NOMEM, "out of memory");
	}
	return dict_put(c, dict, key, v, d);
}

enum err jinja_dict_set_cjson(struct jinja_ctx *c, struct jinja_dict *dict, const char *key,
			      const cJSON *v, struct diag *d)
{
	struct jv val;

	if (jinja_value_from_cjson(&c->a, v, key, &val, d))
		return d->code;
	return dict_put(c, dict, key, val, d);
}

enum err jinja_ctx_merge_json(struct jinja_ctx *c, const char *json, size_t len,
			      struct diag *d)
{
	struct jv v;
	size_t i;

	if (jinja_value_from_json(&c->a, json, len, "kwargs", &v, d))
		return d->code;
	if (v.k != JV_DICT)
		return diag_fail(d, ERR_INPUT, "template kwargs must be a JSON object");
	for (i = 0; i < v.u.d->n; i++)
		if (jinja_value_dict_set(&c->a, &c->vars, v.u.d->keys[i], v.u.d->vals[i]))
			return diag_fail(d, ERR_NOMEM, "out of memory");
	return ERR_OK;
}

enum err jinja_ctx_set_str(struct jinja_ctx *c, const char *name, const char *s, size_t n,
			   struct diag *d)
{
	struct jv v;

	if (!utf8_valid(s, n))
		return diag_fail(d, ERR_INPUT, "template variable '%s' is not valid UTF-8", name);
	if (jinja_value_str_new(&c->a, s, n, &v))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	return set_var(c, name, strlen(name), v, d);
}

enum err jinja_ctx_set_bool(struct jinja_ctx *c, const char *name, int v, struct diag *d)
{
	return set_var(c, name, strlen(name), jinja_value_bool(v), d);
}

enum err jinja_ctx_set_none(struct jinja_ctx *c, const char *name, struct diag *d)
{
	return set_var(c, name, strlen(name), jinja_value_none(), d);
}

void jinja_ctx_clock(struct jinja_ctx *c, const struct tm *tm)
{
	c->clock = *tm;
}

void jinja_ctx_memory(struct jinja_ctx *c, size_t max)
{
	c->mem_max = max;
}

void jinja_ctx_time(struct jinja_ctx *c, double seconds)
{
	c->seconds = seconds;
}

enum err jinja_tpl_new(const char *src, size_t len, struct jinja_tpl **out, struct diag *d)
{
	struct jinja_tpl *t;
	struct jl_tokens toks;

	*out = NULL;
	if (!utf8_valid(src, len))
		return diag_fail(d, ERR_INPUT, "the template is not valid UTF-8");
	if (!(t = mem_calloc(1, sizeof(*t))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	jinja_value_arena_init(&t->a, JINJA_MAX_TEMPLATE_MEMORY);
	if (jinja_lex(&t->a, src, len, &toks, d) || jinja_parse(&t->a, &toks, &t->root, d) ||
	    jinja_parse_names(&t->a, t->root, &t->names, d)) {
		jinja_tpl_free(t);
		return d->code;
	}
	jinja_builtin_annotate(t->root, &t->nslots);
	jinja_eval_compile(t->root, &t->code);
	*out = t;
	return ERR_OK;
}

void jinja_tpl_free(struct jinja_tpl *t)
{
	if (!t)
		return;
	jinja_eval_uncompile(t->code);
	mem_free(t->names.v);
	mem_free(t->names.loaded);
	jinja_value_arena_release(&t->a);
	mem_free(t);
}

enum err jinja_tpl_render(const struct jinja_tpl *t, const struct jinja_ctx *c,
			  struct buf *out, struct diag *d)
{
	struct jv_arena a;
	struct je e;
	size_t start = out->len;
	enum err r;

	jinja_value_arena_init(&a, c->mem_max);
	memset(&e, 0, sizeof(e));
	e.a = &a;
	e.vars = &c->vars;
	e.names = &t->names;
	e.nslots = t->nslots;
	e.clock = c->clock;
	e.d = d;
	e.out_max = out->max;
	e.seconds = c->seconds;
	clock_gettime(CLOCK_MONOTONIC, &e.deadline);
	e.deadline.tv_sec += (time_t)c->seconds;
	e.deadline.tv_nsec += (long)((c->seconds - (double)(time_t)c->seconds) * 1e9);
	if (e.deadline.tv_nsec >= 1000000000L) {
		e.deadline.tv_sec++;
		e.deadline.tv_nsec -= 1000000000L;
	}
	r = jinja_eval_render(&e, t->root, out);
	if (r)
		buf_truncate(out, start);
	jinja_value_arena_release(&a);
	return r;
}

/* Names the template loads, minus those it binds before (a conservative
 * reading of jinja2.meta.find_undeclared_variables: any load counts): the
 * names an N_NAME loads (jinja_parse_names). */
int jinja_tpl_reads(const struct jinja_tpl *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->names.n; i++)
		if (t->names.loaded[i] && !strcmp(t->names.v[i], name))
			return 1;
	return 0;
}

/* --- content format (vLLM chat_utils.py) --- */

#define MAX_NAMES 64

struct names {
	const char *v[MAX_NAMES];
	size_t n;
	int failed; /* vLLM's detection would raise: answer "string" */
};

static int has_name(const struct names *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return 1;
	return 0;
}

static void add_name(struct names *s, const char *name)
{
	if (has_name(s, name))
		return;
	if (s->n == MAX_NAMES)
		s->failed = 1;
	else
		s->v[s->n++] = name;
}

/* _is_var_or_elems_access: `var` (or var[key] / var.key), possibly under
 * filters, tests and slices. */
static int accesses(const struct jn *n, const char *var, const char *key)
{
	if (!n)
		return 0;
	if (n->k == N_FILTER || n->k == N_TEST || n->k == N_SLICE)
		return accesses(n->a, var, key);
	if (!key)
		return n->k == N_NAME && !strcmp(n->s, var);
	if (n->k == N_GETATTR)
		return !strcmp(n->s, key) && n->a->k == N_NAME && !strcmp(n->a->s, var);
	return n->k == N_GETITEM && n->b->k == N_CONST && n->b->v.k == JV_STR &&
	       !strcmp(n->b->v.u.s->data, key) && n->a->k == N_NAME && !strcmp(n->a->s, var);
}

typedef void (*visit_fn)(const struct jn *n, struct names *in, struct names *out);

/* Calls `fn` on every node under `n` (find_all). */
static void walk(const struct jn *n, visit_fn fn, struct names *in, struct names *out)
{
	const struct jn_list *lists[3];
	size_t i, k;

	if (!n)
		return;
	fn(n, in, out);
	walk(n->a, fn, in, out);
	walk(n->b, fn, in, out);
	walk(n->c, fn, in, out);
	walk(n->d, fn, in, out);
	lists[0] = &n->l1;
	lists[1] = &n->l2;
	lists[2] = &n->l3;
	for (k = 0; k < 3; k++)
		for (i = 0; i < lists[k]->n; i++)
			walk(lists[k]->v[i], fn, in, out);
}

/* A node of kind `kind` whose source reads one of the first `count` names
 * of `in` adds its target name to `out` (a target that is no plain name
 * makes the analysis fail). */
static void follow(const struct jn *n, enum jn_kind kind, size_t count, const struct names *in,
		   struct names *out)
{
	size_t i;

	if (n->k != kind)
		return;
	for (i = 0; i < count; i++)
		if (accesses(n->b, in->v[i], NULL)) {
			if (n->a->k != N_NAME)
				out->failed = 1;
			else
				add_name(out, n->a->s);
			return;
		}
}

/* Assignments from a messages name add their target (in == out: only the
 * names known before this node count). */
static void visit_assign(const struct jn *n, struct names *in, struct names *out)
{
	follow(n, N_SET, in->n, in, out);
}

/* Loops over a messages name give message names. */
static void visit_message_loop(const struct jn *n, struct names *in, struct names *out)
{
	follow(n, N_FOR, in->n, in, out);
}

/* A loop over a message's content: `out->n` counts them. */
static void visit_content_loop(const struct jn *n, struct names *in, struct names *out)
{
	size_t i;

	if (n->k != N_FOR)
		return;
	for (i = 0; i < in->n; i++)
		if (accesses(n->b, in->v[i], "content")) {
			if (n->a->k != N_NAME)
				out->failed = 1;
			else
				add_name(out, n->a->s);
			return;
		}
}

int jinja_tpl_openai_content(const struct jinja_tpl *t)
{
	struct names msgs = { { "messages" }, 1, 0 }, message = { { 0 }, 0, 0 };
	struct names content = { { 0 }, 0, 0 };
	size_t before;

	do {
		before = msgs.n;
		walk(t->root, visit_assign, &msgs, &msgs);
	} while (msgs.n != before && !msgs.failed);
	walk(t->root, visit_message_loop, &msgs, &message);
	walk(t->root, visit_content_loop, &message, &content);
	if (msgs.failed || message.failed || content.failed)
		return 0;
	return content.n > 0;
}

enum err jinja_render(const char *src, size_t len, const struct jinja_ctx *c,
		      struct buf *out, struct diag *d)
{
	struct jinja_tpl *t;
	enum err r = jinja_tpl_new(src, len, &t, d);

	if (r)
		return r;
	r = jinja_tpl_render(t, c, out, d);
	jinja_tpl_free(t);
	return r;
}
