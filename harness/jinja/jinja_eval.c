/* jinja_eval — see jinja_int.h. The control flow follows jinja2's
 * compiler.py: what the generated Python would do, node by node. */
#include "jinja_int.h"

#include <limits.h>
#include <string.h>

#include "jinja.h"
#include "base/mem.h"

/* Calls a macro value with evaluated arguments; `caller` is the call block's
 * caller macro or NULL. The result is a str. */
static enum err jinja_eval_call_macro(struct je *e, const struct jn *at, const struct jv *macro,
				      const struct je_args *args, const struct jv *caller, struct jv *out);

enum flow { FLOW_NORMAL, FLOW_BREAK, FLOW_CONTINUE };

#define NOINLINE __attribute__((noinline))

/* A name bound in a frame: `name` is the template's one copy of it
 * (jinja_parse_names: a node's s, jinja_parse_loop or jinja_parse_caller),
 * so equal names are equal pointers. */
struct binding {
	const char *name;
	struct jv v;
};

#define FRAME_INLINE 4 /* a loop body binds its target and `loop`, often a set or two */

struct frame {
	struct frame *parent;
	struct binding *b; /* `inl`, or arena once more names are bound */
	size_t n, cap;
	int ended;         /* a loop's frame whose loop is over: jinja2 has set
			    * its names to its `missing` marker, which a macro
			    * kept from the body then reads */
	struct binding inl[FRAME_INLINE];
};

struct macro {
	const struct jn *def;   /* N_MACRO or N_CALLBLOCK */
	struct frame *closure;
	int uses_caller;        /* the body reads `caller` */
};

struct loop {
	const struct jv_seq *items;
	size_t i;
};

static enum err eval_slow(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
	__attribute__((noinline));
static enum err eval_tw(struct je *e, struct frame *f, const struct jn *n, struct jv *out);
static enum err exec_list(struct je *e, struct frame *f, const struct jn_list *l,
			  struct buf *out, enum flow *flow);

/* One evaluation step. */
static inline enum err step(struct je *e, const struct jn *n)
{
	if (__builtin_expect(++e->steps >= e->check_at, 0))
		return jinja_util_steps(e, n);
	return ERR_OK;
}

/* jinja_util_work inline, for the evaluator's own charges. */
static inline enum err work(struct je *e, const struct jn *n, size_t units)
{
	if (__builtin_expect(units <= JINJA_MAX_WORK - e->work &&
			     ((e->work + units) >> 20) == (e->work >> 20), 1)) {
		e->work += units;
		return ERR_OK;
	}
	return jinja_util_work(e, n, units);
}

/* --- names --- */

static struct frame *frame_new(struct je *e, struct frame *parent)
{
	struct frame *f = jinja_value_alloc(e->a, sizeof(*f));

	if (!f)
		return NULL;
	f->parent = parent;
	f->b = f->inl;
	f->cap = FRAME_INLINE;
	return f;
}

static inline struct jv *frame_get(const struct frame *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->b[i].name == name)
			return &f->b[i].v;
	return NULL;
}

/* Binds `name` (the template's one copy of it: not copied). */
static enum err frame_set(struct je *e, struct frame *f, const struct jn *at, const char *name,
			  struct jv v)
{
	struct jv *slot = frame_get(f, name);
	struct binding *b;

	if (slot) {
		*slot = v;
		return ERR_OK;
	}
	if (f->n == f->cap) {
		if (!(b = jinja_value_alloc(e->a, 2 * f->cap * sizeof(*b))))
			return jinja_util_nomem(e, at);
		memcpy(b, f->b, f->n * sizeof(*b));
		f->b = b;
		f->cap *= 2;
	}
	f->b[f->n].name = name;
	f->b[f->n++].v = v;
	return ERR_OK;
}

/* The value of the name `n` seen from `f`. A macro made in a loop's body
 * and called after the loop reads through that loop's ended frame, where
 * jinja2 gives `missing` (printed as such for the loop's target), an
 * undefined or the outer value by rules of its compiler: refused. */
static void resolve_name(struct je *e, const struct jn *n);

static enum err lookup(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv *v;
	size_t id = (size_t)n->id;

	for (; f; f = f->parent) {
		if (f->ended)
			return jinja_util_refuse(e, n, "'%s' read by a macro or call block of a "
						 "for loop's body after that loop ended (jinja2 "
						 "reads the loop's names as missing)", n->s);
		if ((v = frame_get(f, n->s))) {
			*out = *v;
			return ERR_OK;
		}
	}
	if (!e->named[id])
		resolve_name(e, n);
	*out = e->namev[id];
	return ERR_OK;
}

/* The context and the globals do not change during a render: each name is
 * looked up there once. */
static void resolve_name(struct je *e, const struct jn *n)
{
	struct jv *v;
	size_t id = (size_t)n->id;

	if ((v = jinja_value_dict_get_str(e->vars, n->s, n->sn)))
		e->namev[id] = *v;
	else if (!jinja_builtin_global(n->s, &e->namev[id]))
		e->namev[id] = jinja_value_undef(n->s);
	e->named[id] = 1;
}

/* --- expressions --- */

static enum err too_deep(struct je *e, const struct jn *n)
{
	return jinja_util_refuse(e, n, "nesting deeper than %d", JINJA_MAX_DEPTH);
}

/* What eval() counts for a leaf: a step, and the nesting it would enter
 * and leave. */
static inline enum err leaf(struct je *e, const struct jn *n)
{
	if (step(e, n))
		return e->d->code;
	if (__builtin_expect(e->depth >= JINJA_MAX_DEPTH, 0))
		return too_deep(e, n);
	return ERR_OK;
}

static enum err undefined_self(struct je *e, const struct jn *n)
{
	return jinja_util_refuse(e, n, "'self' (jinja2's template reference, printed "
				 "\"<TemplateReference None>\")");
}

/* The value of the name `n` seen from `f` (lookup(), the frames scanned
 * here and the rest looked up once per render). */
static inline enum err name_value(struct je *e, struct frame *f, const struct jn *n,
				  struct jv *out)
{
	const struct frame *g;
	size_t i;

	for (g = f; g; g = g->parent) {
		if (__builtin_expect(g->ended, 0))
			return lookup(e, f, n, out);
		for (i = 0; i < g->n; i++)
			if (g->b[i].name == n->s) {
				*out = g->b[i].v;
				return ERR_OK;
			}
	}
	if (__builtin_expect(!e->named[n->id], 0))
		resolve_name(e, n);
	*out = e->namev[n->id];
	if (__builtin_expect(out->k == JV_UNDEF, 0) && n->sn == 4 && !memcmp(n->s, "self", 4))
		return undefined_self(e, n);
	return ERR_OK;
}

/* Evaluates the expression `n` into `out`: constants and names here, the
 * rest in eval_slow. */
static inline __attribute__((always_inline)) enum err eval(struct je *e, struct frame *f,
							    const struct jn *n, struct jv *out)
{
	switch (n->k) {
	case N_CONST:
		if (leaf(e, n))
			return e->d->code;
		*out = n->v;
		return ERR_OK;
	case N_NAME:
		if (leaf(e, n))
			return e->d->code;
		return name_value(e, f, n, out);
	default:
		return eval_slow(e, f, n, out);
	}
}

/* Python truthiness (jinja_value_truthy), the common kinds inline. */
static inline int truthy(const struct jv *v)
{
	switch (v->k) {
	case JV_UNDEF:
	case JV_NONE:
		return 0;
	case JV_BOOL:
	case JV_INT:
		return v->u.i != 0;
	case JV_STR:
		return v->u.s->len != 0;
	case JV_DICT:
		return v->u.d->n != 0;
	default:
		return jinja_value_truthy(v);
	}
}

/* Room for the arguments of a call whose callee keeps none of them (a str
 * method, a test, |length): on the stack. */
#define ARGS_SMALL 4

struct small_args {
	struct jv pos[ARGS_SMALL], kwv[ARGS_SMALL];
	const char *kwn[ARGS_SMALL];
};

static enum err eval_args_in(struct je *e, struct frame *f, const struct jn *n, struct je_args *a,
			     struct small_args *room)
{
	size_t i;

	memset(a, 0, sizeof(*a));
	a->npos = n->l1.n;
	a->nkw = n->l2.n;
	if (room && a->npos <= ARGS_SMALL && a->nkw <= ARGS_SMALL) {
		a->pos = room->pos;
		a->kwv = room->kwv;
		a->kwn = room->kwn;
	} else {
		a->pos = jinja_value_alloc(e->a, (a->npos + 1) * sizeof(*a->pos));
		a->kwv = jinja_value_alloc(e->a, (a->nkw + 1) * sizeof(*a->kwv));
		a->kwn = jinja_value_alloc(e->a, (a->nkw + 1) * sizeof(*a->kwn));
		if (!a->pos || !a->kwv || !a->kwn)
			return jinja_util_nomem(e, n);
	}
	for (i = 0; i < a->npos; i++)
		if (eval(e, f, n->l1.v[i], &a->pos[i]))
			return e->d->code;
	for (i = 0; i < a->nkw; i++) {
		a->kwn[i] = n->l2.v[i]->s;
		if (eval(e, f, n->l2.v[i]->a, &a->kwv[i]))
			return e->d->code;
	}
	return ERR_OK;
}

static enum err eval_args(struct je *e, struct frame *f, const struct jn *n, struct je_args *a)
{
	return eval_args_in(e, f, n, a, NULL);
}

/* What eval() counts for entering the node `n` (a step, a level of
 * nesting); leave() undoes the nesting. */
static inline enum err enter(struct je *e, const struct jn *n)
{
	if (step(e, n))
		return e->d->code;
	if (__builtin_expect(++e->depth > JINJA_MAX_DEPTH, 0))
		return jinja_util_refuse(e, n, "nesting deeper than %d", JINJA_MAX_DEPTH);
	return ERR_OK;
}

static inline void leave(struct je *e)
{
	e->depth--;
}

/* The position of the str key `s` (`n` bytes) in the dict `d`, or -1. */
static long dict_find(const struct jv_dict *d, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct jv *k = &d->keys[i];

		if (k->k == JV_STR && k->u.s->len == n && !memcmp(k->u.s->data, s, n))
			return (long)i;
	}
	return -1;
}

/* The value under the attribute node `n`'s name in the dict (or namespace)
 * `obj`, or NULL: where the node found it last (its hint), else searched. */
static inline struct jv *dict_attr(struct je *e, const struct jn *n, const struct jv *obj)
{
	const struct jv_dict *d = obj->u.d;
	struct je_hint *h = &e->hint[n->slot];
	long i;

	if (h->i < d->n && d->keys[h->i].u.s == h->key && d->keys[h->i].k == JV_STR)
		return &d->vals[h->i];
	if ((i = dict_find(d, n->s, n->sn)) < 0)
		return NULL;
	h->key = d->keys[i].u.s;
	h->i = (size_t)i;
	return &d->vals[i];
}

/* obj.name for the N_GETATTR `n`: what jinja_builtin_getattr gives, with
 * the name's meaning known (jn.af, jn.id) for a dict, a namespace and the
 * loop object. */
static inline __attribute__((always_inline)) enum err getattr(struct je *e, const struct jn *n,
							      const struct jv *obj, struct jv *out)
{
	struct jv *v;

	if (!(n->af & JN_A_UNDER)) {
		if (obj->k == JV_DICT && !(n->af & JN_A_DICT)) {
			v = dict_attr(e, n, obj);
			*out = v ? *v : jinja_value_undef(n->s);
			return ERR_OK;
		}
		if (obj->k == JV_NS && (v = dict_attr(e, n, obj))) {
			*out = *v;
			return ERR_OK;
		}
		if (obj->k == JV_LOOP && JN_LOOP_OF(n->id))
			return jinja_eval_loop_id(e, n, obj, JN_LOOP_OF(n->id), out);
	}
	return jinja_builtin_getattr(e, n, obj, n->s, out);
}

static enum err call_value(struct je *e, const struct jn *n, const struct jv *fn,
			   const struct je_args *a, const struct jv *caller, struct jv *out)
{
	if (fn->k == JV_MACRO)
		return jinja_eval_call_macro(e, n, fn, a, caller, out);
	if (caller)
		return jinja_util_refuse(e, n, "a call block around something other than a macro");
	if (fn->k == JV_FUNC)
		return jinja_builtin_call(e, n, fn, a, out);
	if (fn->k == JV_UNDEF)
		return jinja_util_reject(e, n, "UndefinedError: '%s' is undefined",
					 fn->u.p ? (const char *)fn->u.p : "value");
	return jinja_util_reject(e, n, "TypeError: '%s' object is not callable",
				 jinja_value_type_name(fn));
}

/* obj.method(...) with a str method (jn.id): the method called on the str
 * at once, as the bound method jinja_builtin_getattr would make would call
 * it, steps and nesting counted for the attribute node all the same. */
static enum err eval_method(struct je *e, struct frame *f, const struct jn *n,
			    const struct jv *caller, struct jv *out)
{
	const struct jn *g = n->a;
	struct jv obj, fn;
	struct je_args a;
	struct small_args room;

	if (enter(e, g) || eval(e, f, g->a, &obj))
		return e->d->code;
	if (obj.k != JV_STR) {
		if (getattr(e, g, &obj, &fn))
			return e->d->code;
		leave(e);
		if (eval_args(e, f, n, &a))
			return e->d->code;
		return call_value(e, n, &fn, &a, caller, out);
	}
	leave(e);
	if (caller)
		return jinja_util_refuse(e, n, "a call block around something other than a macro");
	if (eval_args_in(e, f, n, &a, &room))
		return e->d->code;
	return jinja_str_call(e, n, &obj, JN_STR_OF(g->id), g->s, &a, out);
}

static enum err eval_call(struct je *e, struct frame *f, const struct jn *n,
			  const struct jv *caller, struct jv *out)
{
	struct jv fn;
	struct je_args a;

	if (n->a->k == N_GETATTR && JN_STR_OF(n->a->id) && !(n->a->af & JN_A_UNDER))
		return eval_method(e, f, n, caller, out);
	if (eval(e, f, n->a, &fn) || eval_args(e, f, n, &a))
		return e->d->code;
	return call_value(e, n, &fn, &a, caller, out);
}

/* A filter chain node: `in` is the value flowing in where the chain's
 * innermost input is NULL (filter blocks, set blocks). */
static enum err eval_filter(struct je *e, struct frame *f, const struct jn *n,
			    const struct jv *in, struct jv *out)
{
	struct jv v;
	struct je_args a;

	struct small_args room;

	if (!n->a)
		v = *in;
	else if (n->a->k == N_FILTER ? eval_filter(e, f, n->a, in, &v) : eval(e, f, n->a, &v))
		return e->d->code;
	if (eval_args_in(e, f, n, &a, n->id == JN_F_LENGTH ? &room : NULL))
		return e->d->code;
	return jinja_filter(e, n, n->s, &v, &a, out);
}

static enum err eval_test(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv v;
	struct je_args a;
	struct small_args room;
	int r;

	if (n->id && !n->l1.n && !n->l2.n) {
		if (eval(e, f, n->a, &v))
			return e->d->code;
		r = jinja_builtin_test_id(n->id, &v);
		*out = jinja_value_bool(n->op ? !r : r);
		return ERR_OK;
	}
	if (eval(e, f, n->a, &v) || eval_args_in(e, f, n, &a, &room) ||
	    jinja_builtin_test(e, n, n->s, &v, &a, &r))
		return e->d->code;
	*out = jinja_value_bool(n->op ? !r : r);
	return ERR_OK;
}

/* left o->op right into *r: jinja_builtin_compare, strs and ints inline. */
static inline __attribute__((always_inline)) enum err compare(struct je *e, const struct jn *o,
							      const struct jv *left,
							      const struct jv *right, int *r)
{
	if ((o->op == 'e' || o->op == 'n') && left->k == JV_STR && right->k == JV_STR) {
		/* jinja_value_eq_work's units: one item, and the bytes compared
		 * when the types agree */
		if (work(e, o, JV_WORK_ITEM + left->u.s->len))
			return e->d->code;
		*r = left->u.s->len == right->u.s->len &&
		     !memcmp(left->u.s->data, right->u.s->data, left->u.s->len);
		*r = o->op == 'e' ? *r : !*r;
	} else if (left->k == JV_INT && right->k == JV_INT && o->op != 'i' && o->op != 'I') {
		int64_t x = left->u.i, y = right->u.i;

		if (work(e, o, JV_WORK_ITEM))
			return e->d->code;
		switch (o->op) {
		case 'e': *r = x == y; break;
		case 'n': *r = x != y; break;
		case '<': *r = x < y; break;
		case '>': *r = x > y; break;
		case 'l': *r = x <= y; break;
		default: *r = x >= y; break;
		}
	} else if ((o->op == 'i' || o->op == 'I') && left->k == JV_STR && right->k == JV_STR) {
		*r = jinja_str_find(right->u.s, left->u.s, 0) >= 0;
		if (work(e, o, right->u.s->len))
			return e->d->code;
		*r = o->op == 'i' ? *r : !*r;
	} else if (jinja_builtin_compare(e, o, o->op, left, right, r)) {
		return e->d->code;
	}
	return ERR_OK;
}

static enum err eval_compare(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv left, right;
	size_t i;
	int r = 1;

	if (eval(e, f, n->a, &left))
		return e->d->code;
	for (i = 0; i < n->l1.n && r; i++) {
		const struct jn *o = n->l1.v[i];

		if (eval(e, f, o->a, &right) || compare(e, o, &left, &right, &r))
			return e->d->code;
		left = right;
	}
	*out = jinja_value_bool(r);
	return ERR_OK;
}

static enum err eval_seq(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv item;
	size_t i;

	if (jinja_value_seq_new(e->a, n->k == N_LIST ? JV_LIST : JV_TUPLE, n->l1.n, out))
		return jinja_util_nomem(e, n);
	for (i = 0; i < n->l1.n; i++) {
		if (eval(e, f, n->l1.v[i], &item))
			return e->d->code;
		if (jinja_value_seq_push(e->a, out, item))
			return jinja_util_nomem(e, n);
	}
	return ERR_OK;
}

static enum err eval_dict(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv k, v;
	size_t i;

	if (jinja_value_dict_new(e->a, JV_DICT, out))
		return jinja_util_nomem(e, n);
	for (i = 0; i < n->l1.n; i++) {
		if (eval(e, f, n->l1.v[i], &k) || eval(e, f, n->l2.v[i], &v))
			return e->d->code;
		if (!jinja_value_hashable(&k))
			return jinja_util_reject(e, n, "TypeError: unhashable type: '%s'",
						 jinja_value_type_name(&k));
		if (jinja_value_dict_set(e->a, out, k, v))
			return jinja_util_nomem(e, n);
	}
	return ERR_OK;
}

static enum err eval_cond(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv c;

	if (eval(e, f, n->a, &c))
		return e->d->code;
	if (truthy(&c))
		return eval(e, f, n->b, out);
	if (n->c)
		return eval(e, f, n->c, out);
	*out = jinja_value_undef(NULL);
	return ERR_OK;
}

static enum err eval_slice(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv obj, v[3];
	const struct jn *parts[3] = { n->b, n->c, n->d };
	int i;

	if (eval(e, f, n->a, &obj))
		return e->d->code;
	for (i = 0; i < 3; i++)
		if (parts[i] && eval(e, f, parts[i], &v[i]))
			return e->d->code;
	return jinja_builtin_slice(e, n, &obj, n->b ? &v[0] : NULL, n->c ? &v[1] : NULL,
				   n->d ? &v[2] : NULL, out);
}

/*
 * eval_slow: one function per kind of node, each entering and leaving the
 * node as eval() does (a step, a level of nesting), reached by a tail call
 * from the dispatch so that each has only the stack frame it needs.
 */
static NOINLINE enum err ev_getattr(struct je *e, struct frame *f, const struct jn *n,
				    struct jv *out)
{
	struct jv a;
	enum err r;

	if (enter(e, n))
		return e->d->code;
	r = eval(e, f, n->a, &a);
	if (!r)
		r = getattr(e, n, &a, out);
	leave(e);
	return r;
}

static NOINLINE enum err ev_getitem(struct je *e, struct frame *f, const struct jn *n,
				    struct jv *out)
{
	struct jv a, b;
	enum err r;

	if (enter(e, n))
		return e->d->code;
	r = eval(e, f, n->a, &a);
	if (!r)
		r = eval(e, f, n->b, &b);
	if (!r)
		r = jinja_builtin_getitem(e, n, &a, &b, out);
	leave(e);
	return r;
}

static NOINLINE enum err ev_slice(struct je *e, struct frame *f, const struct jn *n,
				  struct jv *out)
{
	enum err r;

	if (enter(e, n))
		return e->d->code;
	r = eval_slice(e, f, n, out);
	leave(e);
	return r;
}

static NOINLINE enum err ev_call(struct je *e, struct frame *f, const struct jn *n,
				 struct jv *out)
{
	enum err r;

	if (enter(e, n))
		return e->d->code;
	r = eval_call(e, f, n, NULL, out);
	leave(e);
	return r;
}

static NOINLINE enum err ev_filter(struct je *e, struct frame *f, const struct jn *n,
				   struct jv *out)
{
	struct jv v;
	enum err r;

	if (enter(e, n))
		return e->d->code;
	if (n->id == JN_F_LENGTH && n->a && !n->l1.n && !n->l2.n) {
		/* |length of a list or dict: what jinja_filter charges (none
		 * for a container, one unit for the int made) */
		r = n->a->k == N_FILTER ? eval_filter(e, f, n->a, NULL, &v) : eval(e, f, n->a, &v);
		if (!r && ((v.k == JV_LIST && !(v.flags & JV_F_GEN)) || v.k == JV_DICT)) {
			*out = jinja_value_int((int64_t)(v.k == JV_LIST ? v.u.l->n : v.u.d->n));
			r = work(e, n, 1);
		} else if (!r) {
			struct je_args a = { NULL, 0, NULL, NULL, 0 };

			r = jinja_filter(e, n, n->s, &v, &a, out);
		}
	} else {
		r = eval_filter(e, f, n, NULL, out);
	}
	leave(e);
	return r;
}

static NOINLINE enum err ev_test(struct je *e, struct frame *f, const struct jn *n,
				 struct jv *out)
{
	enum err r;

	if (enter(e, n))
		return e->d->code;
	r = eval_test(e, f, n, out);
	leave(e);
	return r;
}

static NOINLINE enum err ev_unary(struct je *e, struct frame *f, const struct jn *n,
				  struct jv *out)
{
	struct jv a;
	enum err r;

	if (enter(e, n))
		return e->d->code;
	r = eval(e, f, n->a, &a);
	if (!r && n->k == N_NOT)
		*out = jinja_value_bool(!truthy(&a));
	else if (!r)
		r = jinja_builtin_unary(e, n, n->k == N_NEG, &a, out);
	leave(e);
	return r;
}

static NOINLINE enum err ev_binop(struct je *e, struct frame *f, const struct jn *n,
				  struct jv *out)
{
	struct jv a, b;
	int64_t x;
	enum err r;

	if (enter(e, n))
		return e->d->code;
	r = eval(e, f, n->a, &a);
	if (!r)
		r = eval(e, f, n->b, &b);
	if (!r) {
		if (a.k == JV_INT && b.k == JV_INT && (n->op == '+' || n->op == '-') &&
		    !(n->op == '+' ? __builtin_add_overflow(a.u.i, b.u.i, &x)
				   : __builtin_sub_overflow(a.u.i, b.u.i, &x)))
			*out = jinja_value_int(x);
		else
			r = jinja_builtin_binop(e, n, n->op, &a, &b, out);
	}
	leave(e);
	return r;
}

static NOINLINE enum err ev_logic(struct je *e, struct frame *f, const struct jn *n,
				  struct jv *out)
{
	enum err r;

	if (enter(e, n))
		return e->d->code;
	r = eval(e, f, n->a, out);
	if (!r && (n->k == N_AND ? truthy(out) : !truthy(out)))
		r = eval(e, f, n->b, out);
	leave(e);
	return r;
}

static NOINLINE enum err ev_compare(struct je *e, struct frame *f, const struct jn *n,
				    struct jv *out)
{
	enum err r;

	if (enter(e, n))
		return e->d->code;
	r = eval_compare(e, f, n, out);
	leave(e);
	return r;
}

static NOINLINE enum err ev_other(struct je *e, struct frame *f, const struct jn *n,
				  struct jv *out)
{
	enum err r;

	if (enter(e, n))
		return e->d->code;
	switch (n->k) {
	case N_COND:
		r = eval_cond(e, f, n, out);
		break;
	case N_LIST:
	case N_TUPLE:
		r = eval_seq(e, f, n, out);
		break;
	case N_DICT:
		r = eval_dict(e, f, n, out);
		break;
	case N_CONST:
		*out = n->v;
		r = ERR_OK;
		break;
	case N_NAME:
		r = name_value(e, f, n, out);
		break;
	default:
		r = diag_fail(e->d, ERR_INTERNAL, "bad expression node %d", (int)n->k);
	}
	leave(e);
	return r;
}

/* The tree walk: eval() of a node that is no leaf. */
static enum err eval_tw(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	switch (n->k) {
	case N_GETATTR:
		return ev_getattr(e, f, n, out);
	case N_GETITEM:
		return ev_getitem(e, f, n, out);
	case N_SLICE:
		return ev_slice(e, f, n, out);
	case N_CALL:
		return ev_call(e, f, n, out);
	case N_FILTER:
		return ev_filter(e, f, n, out);
	case N_TEST:
		return ev_test(e, f, n, out);
	case N_NEG:
	case N_POS:
	case N_NOT:
		return ev_unary(e, f, n, out);
	case N_BINOP:
		return ev_binop(e, f, n, out);
	case N_AND:
	case N_OR:
		return ev_logic(e, f, n, out);
	case N_COMPARE:
		return ev_compare(e, f, n, out);
	default:
		return ev_other(e, f, n, out);
	}
}

/* --- assignment --- */

static enum err unpack(struct je *e, const struct jn *at, const struct jv *v, size_t want,
		       struct jv *items)
{
	struct jv list;
	size_t i;

	if (jinja_builtin_iterate(e, at, v, &list))
		return e->d->code;
	if (v->k == JV_UNDEF)
		return jinja_util_reject(e, at, "UndefinedError: cannot unpack an undefined value");
	if (list.u.l->n != want)
		return jinja_util_reject(e, at,
					 "ValueError: %s values to unpack (expected %zu, got %zu)",
					 list.u.l->n > want ? "too many" : "not enough", want, list.u.l->n);
	for (i = 0; i < want; i++)
		items[i] = list.u.l->v[i];
	return ERR_OK;
}

static enum err assign(struct je *e, struct frame *f, const struct jn *target, struct jv v)
{
	struct jv *items, ns, key;
	size_t i;

	if (target->k == N_NAME)
		return frame_set(e, f, target, target->s, v);
	if (target->k == N_GETATTR) {
		if (lookup(e, f, target->a, &ns))
			return e->d->code;
		if (ns.k != JV_NS)
			return jinja_util_reject(e, target,
						 "TemplateRuntimeError: cannot assign attribute on "
						 "non-namespace object");
		if (jinja_value_str_new(e->a, target->s, target->sn, &key) ||
		    jinja_value_dict_set(e->a, &ns, key, v))
			return jinja_util_nomem(e, target);
		return ERR_OK;
	}
	items = jinja_value_alloc(e->a, (target->l1.n + 1) * sizeof(*items));
	if (!items)
		return jinja_util_nomem(e, target);
	if (unpack(e, target, &v, target->l1.n, items))
		return e->d->code;
	for (i = 0; i < target->l1.n; i++)
		if (frame_set(e, f, target->l1.v[i], target->l1.v[i]->s, items[i]))
			return e->d->code;
	return ERR_OK;
}

/* --- statements --- */

static enum err render_to_str(struct je *e, struct frame *f, const struct jn *at,
			      const struct jn_list *body, struct jv *out)
{
	struct buf b;
	enum flow flow = FLOW_NORMAL;
	enum err r;

	buf_init(&b, jinja_util_buf_cap(e));
	r = exec_list(e, f, body, &b, &flow);
	if (!r && jinja_value_str_buf(e->a, &b, out))
		r = jinja_util_nomem(e, at);
	buf_release(&b);
	return r;
}

/*
 * {{ a + b + ... }}: while every operand is a plain str (no Markup), the
 * sum is printed operand by operand instead of made, each operand read
 * once. Every step, nesting level, unit of work, value-room check and byte
 * of value memory that making the partial sums takes is charged all the
 * same, in the same order (jinja_value_arena_charge), so budgets and caps
 * end where they would; the first other operand makes the sum so far (its
 * charge refunded, then allocated) and the rest is evaluated as usual.
 */
#define CAT_MAX 16 /* operands of a chain printed piece by piece */

struct cat {
	struct jv piece[CAT_MAX]; /* the operands so far, while `plain` */
	size_t n;                 /* of them */
	size_t len;               /* their bytes */
	int plain;                /* the sum so far is the pieces, not made */
	struct jv v;              /* the sum so far, once !plain */
};

static int is_cat(const struct jn *n)
{
	return n->k == N_BINOP && n->op == '+';
}

static int plain_str(const struct jv *v)
{
	return v->k == JV_STR && !(v->flags & JV_F_MARKUP);
}

/* The sum of the pieces as a value; the last partial sum's charge becomes
 * its allocation. */
static enum err cat_make(struct je *e, const struct jn *at, struct cat *c)
{
	char *p;
	size_t i;

	c->plain = 0;
	if (c->n == 1) {
		c->v = c->piece[0];
		return ERR_OK;
	}
	jinja_value_arena_refund(e->a, jinja_value_str_size(c->len));
	if (jinja_value_str_room(e->a, c->len, &p, &c->v))
		return jinja_util_nomem(e, at);
	for (i = 0; i < c->n; p += c->piece[i].u.s->len, i++)
		memcpy(p, c->piece[i].u.s->data, c->piece[i].u.s->len);
	return ERR_OK;
}

/* jinja_util_room, jinja_util_work and jinja_value_arena_charge of the
 * str a + b of `len` bytes that concat_str would make, inline. */
static inline enum err cat_charge(struct je *e, const struct jn *x, size_t len)
{
	size_t need = (jinja_value_str_size(len) + 15) & ~(size_t)15;

	if (len > e->a->max - e->a->used)
		return jinja_util_room(e, x, len);
	if (work(e, x, len))
		return e->d->code;
	if (need < len || need > e->a->max - e->a->used)
		return jinja_util_nomem(e, x);
	e->a->used += need;
	return ERR_OK;
}

/* What eval(x) does for the '+' node `x` (a chain of at most CAT_MAX - 1
 * '+' nodes down its left operands), into `c`: each node entered from the
 * top down, the innermost left operand evaluated, then each right operand
 * from the bottom up, each node left after its own. */
static enum err cat_eval(struct je *e, struct frame *f, const struct jn *x, struct cat *c)
{
	const struct jn *chain[CAT_MAX];
	struct jv r, sum;
	size_t k = 0;

	for (; is_cat(x); x = x->a) {
		if (enter(e, x))
			return e->d->code;
		chain[k++] = x;
	}
	if (eval(e, f, x, &c->piece[0]))
		return e->d->code;
	c->n = 1;
	c->plain = plain_str(&c->piece[0]);
	c->len = c->plain ? c->piece[0].u.s->len : 0;
	c->v = c->piece[0];
	while (k--) {
		x = chain[k];
		if (eval(e, f, x->b, &r))
			return e->d->code;
		if (c->plain && plain_str(&r)) { /* concat_str's charges, nothing made */
			if (cat_charge(e, x, c->len + r.u.s->len))
				return e->d->code;
			c->piece[c->n++] = r;
			c->len += r.u.s->len;
		} else {
			if ((c->plain && cat_make(e, x, c)) ||
			    jinja_builtin_binop(e, x, '+', &c->v, &r, &sum))
				return e->d->code;
			c->v = sum;
		}
		leave(e);
	}
	return ERR_OK;
}

/* buf_append, its common case inline. */
static inline enum err put(struct buf *b, const char *p, size_t n)
{
	if (n < b->cap - b->len) { /* room for it and the NUL (buf.c) */
		memcpy(b->data + b->len, p, n);
		b->len += n;
		b->data[b->len] = '\0';
		return ERR_OK;
	}
	return buf_append(b, p, n);
}

static size_t cat_length(const struct jn *n)
{
	size_t k = 1;

	for (; is_cat(n); n = n->a)
		k++;
	return k;
}

/*
 * The compiled form of what the tree walk would evaluate: an expression a
 * statement evaluates (jn.code), and the body of a for loop (jn.body), its
 * statements and their expressions in one program. Expression nodes come
 * in the order the tree walk finishes them, each one operation on a stack
 * of values; statements in order, if and else as jumps. An operation does
 * what the tree walk does at its node, with the same builtins in the same
 * order, so values, output, errors and the charges to the budgets are the
 * same; what it saves is a C call, a dispatch and a stack frame per node.
 * A node's step is counted when its operation runs (an expression node's
 * after its operands, where the tree walk counts it before them: the count
 * is the same). What is compiled otherwise (a call of a macro, a list, a
 * filter with arguments, a nested loop, ...) is one operation that walks
 * that subtree (VM_TREE, ST_TREE).
 *
 * Nesting is checked once: every operation's node has a fixed level (the
 * statements of the body being 1, an expression's root one more than its
 * statement, a list one more than its if), at which the tree walk would
 * enter it at depth base + level; when base + the deepest level is within
 * JINJA_MAX_DEPTH no node can pass it, and otherwise the tree walk runs (and
 * refuses where it does).
 */
enum {
	VM_CONST, VM_NAME, VM_NATTR, VM_ATTR, VM_ITEM, VM_SLICE, VM_UNARY, VM_NOT, VM_BINOP,
	VM_CMP, VM_CMPC, VM_AND, VM_OR, VM_CONDJ, VM_JMP, VM_UNDEF, VM_TEST, VM_FLEN, VM_MPRE,
	VM_MCALL, VM_TREE, VM_END,
	ST_STEP, ST_DATA, ST_PRINT, ST_SET, ST_JF, ST_TREE, ST_CATIN, ST_CAT1, ST_CATADD,
	ST_CATOUT, VM_NOPS
};

#define VM_STACK 16

struct vop {
	unsigned char op;
	unsigned char mask;   /* VM_SLICE: which of b, c, d are there; ST_CATIN: nodes */
	unsigned short level; /* of its node (see above) */
	unsigned arg;         /* a jump's target */
	const struct jn *n;
};

struct jvm {
	struct jvm *next;     /* the template's compiled forms, a list */
	unsigned nops, maxlevel;
	struct vop op[];
};

/* The receiver's stack slot of a method call (VM_MCALL `n`). */
static inline unsigned mcall_args(const struct jn *n)
{
	return (unsigned)(n->l1.n + n->l2.n);
}

static enum err exec_stmt(struct je *e, struct frame *f, const struct jn *n, struct buf *out,
			  enum flow *flow);

/* A running compiled form: its stack, the output of a body, the sum an
 * output statement is printing (cat_eval's), and the operation at hand. */
struct vm {
	struct je *e;
	struct frame *f;
	const struct jvm *c;
	struct buf *out;
	const struct vop *o;
	int base;             /* the depth the form was entered at */
	unsigned sp;
	struct jv st[VM_STACK];
	struct cat cat;
};

#define VM_INLINE static inline __attribute__((always_inline)) enum err

/* Counts the step of node `n` (step()). */
VM_INLINE vm_step(struct vm *m, const struct jn *n)
{
	return step(m->e, n);
}

/* Goes on at operation `to`. */
static inline void vm_jump(struct vm *m, unsigned to)
{
	m->o = &m->c->op[to] - 1;
}

VM_INLINE vm_nattr(struct vm *m, const struct jn *n)
{
	struct jv v;

	if (vm_step(m, n->a) || name_value(m->e, m->f, n->a, &v) || vm_step(m, n))
		return m->e->d->code;
	return getattr(m->e, n, &v, &m->st[m->sp++]);
}

VM_INLINE vm_item(struct vm *m, const struct jn *n)
{
	struct jv key = m->st[m->sp - 1], v = m->st[m->sp - 2];

	if (vm_step(m, n) || jinja_builtin_getitem(m->e, n, &v, &key, &m->st[m->sp - 2]))
		return m->e->d->code;
	m->sp--;
	return ERR_OK;
}

VM_INLINE vm_slice(struct vm *m, const struct jn *n)
{
	unsigned mask = m->o->mask, k = (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1), at = 0;
	const struct jv *part[3];
	struct jv *top = &m->st[m->sp - k], v = top[-1];

	part[0] = mask & 1 ? &top[at++] : NULL;
	part[1] = mask & 2 ? &top[at++] : NULL;
	part[2] = mask & 4 ? &top[at++] : NULL;
	if (vm_step(m, n) || jinja_builtin_slice(m->e, n, &v, part[0], part[1], part[2], &top[-1]))
		return m->e->d->code;
	m->sp -= k;
	return ERR_OK;
}

VM_INLINE vm_binop(struct vm *m, const struct jn *n)
{
	struct jv v = m->st[m->sp - 2], *b = &m->st[m->sp - 1];
	int64_t x;

	if (vm_step(m, n))
		return m->e->d->code;
	m->sp--;
	if (v.k == JV_INT && b->k == JV_INT && (n->op == '+' || n->op == '-') &&
	    !(n->op == '+' ? __builtin_add_overflow(v.u.i, b->u.i, &x)
			   : __builtin_sub_overflow(v.u.i, b->u.i, &x))) {
		m->st[m->sp - 1] = jinja_value_int(x);
		return ERR_OK;
	}
	return jinja_builtin_binop(m->e, n, n->op, &v, b, &m->st[m->sp - 1]);
}

/* A compare; `c`: the right operand is the constant of the node. */
VM_INLINE vm_cmp(struct vm *m, const struct jn *n, int c)
{
	const struct jn *o = n->l1.v[0];
	int r;

	if ((c && vm_step(m, o->a)) || vm_step(m, n) ||
	    compare(m->e, o, &m->st[m->sp - 2 + c], c ? &o->a->v : &m->st[m->sp - 1], &r))
		return m->e->d->code;
	m->sp -= 1 - c;
	m->st[m->sp - 1] = jinja_value_bool(r);
	return ERR_OK;
}

/* and / or (`and`), and a conditional's test (`cond`: the value popped). */
VM_INLINE vm_branch(struct vm *m, const struct jn *n, int and, int cond)
{
	if (vm_step(m, n))
		return m->e->d->code;
	if (cond ? !truthy(&m->st[--m->sp]) : and != truthy(&m->st[m->sp - 1]))
		vm_jump(m, m->o->arg); /* and / or: the left operand is the value */
	else if (!cond)
		m->sp--;
	return ERR_OK;
}

VM_INLINE vm_test(struct vm *m, const struct jn *n)
{
	int r;

	if (vm_step(m, n))
		return m->e->d->code;
	r = jinja_builtin_test_id(n->id, &m->st[m->sp - 1]);
	m->st[m->sp - 1] = jinja_value_bool(n->op ? !r : r);
	return ERR_OK;
}

/* ev_filter's |length. */
VM_INLINE vm_flen(struct vm *m, const struct jn *n)
{
	struct jv v = m->st[m->sp - 1];
	struct je_args a = { NULL, 0, NULL, NULL, 0 };

	if (vm_step(m, n))
		return m->e->d->code;
	if ((v.k == JV_LIST && !(v.flags & JV_F_GEN)) || v.k == JV_DICT) {
		m->st[m->sp - 1] = jinja_value_int((int64_t)(v.k == JV_LIST ? v.u.l->n : v.u.d->n));
		return work(m->e, n, 1);
	}
	m->e->depth = m->base + m->o->level;
	return jinja_filter(m->e, n, n->s, &v, &a, &m->st[m->sp - 1]);
}

/* eval_method's attribute node `n` (the call is its parent): on a str the
 * arguments follow; on anything else the attribute, the arguments and the
 * call as the tree walk does them, the call's own operation skipped. */
VM_INLINE vm_mpre(struct vm *m, const struct jn *n)
{
	const struct jn *call = m->c->op[m->o->arg - 1].n;
	struct je *e = m->e;
	struct jv v = m->st[m->sp - 1], fn;
	struct je_args a;

	if (vm_step(m, n))
		return e->d->code;
	if (v.k == JV_STR)
		return ERR_OK;
	e->depth = m->base + m->o->level;
	if (getattr(e, n, &v, &fn))
		return e->d->code;
	e->depth = m->base + m->o->level - 1;
	if (vm_step(m, call) || eval_args(e, m->f, call, &a) ||
	    call_value(e, call, &fn, &a, NULL, &m->st[m->sp - 1]))
		return e->d->code;
	vm_jump(m, m->o->arg);
	return ERR_OK;
}

/* eval_method on a str, its arguments on the stack. */
VM_INLINE vm_mcall(struct vm *m, const struct jn *n)
{
	unsigned na = mcall_args(n), i;
	const char *kwn[ARGS_SMALL];
	struct je_args a;
	struct jv v = m->st[m->sp - na - 1];

	if (vm_step(m, n))
		return m->e->d->code;
	for (i = 0; i < n->l2.n; i++)
		kwn[i] = n->l2.v[i]->s;
	a.pos = &m->st[m->sp - na];
	a.npos = n->l1.n;
	a.kwv = &m->st[m->sp - na + n->l1.n];
	a.kwn = kwn;
	a.nkw = n->l2.n;
	m->e->depth = m->base + m->o->level;
	if (jinja_str_call(m->e, n, &v, JN_STR_OF(n->a->id), n->a->s, &a, &m->st[m->sp - na - 1]))
		return m->e->d->code;
	m->sp -= na;
	return ERR_OK;
}

/* The value of node `n` (VM_TREE) or statement `n` run (ST_TREE) by the
 * tree walk. */
VM_INLINE vm_tree_op(struct vm *m, const struct jn *n, int stmt)
{
	enum flow flow = FLOW_NORMAL;

	m->e->depth = m->base + m->o->level - !stmt;
	if (stmt)
		return exec_stmt(m->e, m->f, n, m->out, &flow);
	if (eval_tw(m->e, m->f, n, &m->st[m->sp]))
		return m->e->d->code;
	m->sp++;
	return ERR_OK;
}

/* exec_output of a value. */
VM_INLINE vm_print(struct vm *m, const struct jn *n)
{
	const struct jv *p = &m->st[--m->sp];

	if (p->k != JV_STR) /* pyfmt_str: a str's bytes, Markup or not */
		return jinja_print(m->e, n, p, m->out);
	return put(m->out, p->u.s->data, p->u.s->len) ? jinja_util_nomem(m->e, n) : ERR_OK;
}

/* {% set name = ... %} (exec_set). */
VM_INLINE vm_set(struct vm *m, const struct jn *n)
{
	struct frame *f = m->f;
	struct jv v = m->st[--m->sp];
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->b[i].name == n->a->s) {
			f->b[i].v = v;
			return ERR_OK;
		}
	if (f->n == f->cap)
		return frame_set(m->e, f, n->a, n->a->s, v);
	f->b[f->n].name = n->a->s;
	f->b[f->n++].v = v;
	return ERR_OK;
}

/* cat_eval: the chain's '+' nodes entered from the top `n` down. */
VM_INLINE vm_catin(struct vm *m, const struct jn *n)
{
	unsigned i;

	for (i = 0; i < m->o->mask; i++, n = n->a)
		if (vm_step(m, n))
			return m->e->d->code;
	return ERR_OK;
}

/* cat_eval: its innermost left operand. */
static inline void vm_cat1(struct vm *m)
{
	struct cat *c = &m->cat;

	c->piece[0] = m->st[--m->sp];
	c->n = 1;
	c->plain = plain_str(&c->piece[0]);
	c->len = c->plain ? c->piece[0].u.s->len : 0;
	c->v = c->piece[0];
}

/* cat_eval: the right operand of the '+' node `n`. */
VM_INLINE vm_catadd(struct vm *m, const struct jn *n)
{
	struct cat *c = &m->cat;
	struct jv *p = &m->st[--m->sp], v;

	if (c->plain && plain_str(p)) { /* concat_str's charges, nothing made */
		if (cat_charge(m->e, n, c->len + p->u.s->len))
			return m->e->d->code;
		c->piece[c->n++] = *p;
		c->len += p->u.s->len;
		return ERR_OK;
	}
	if ((c->plain && cat_make(m->e, n, c)) || jinja_builtin_binop(m->e, n, '+', &c->v, p, &v))
		return m->e->d->code;
	c->v = v;
	return ERR_OK;
}

/* exec_output of the sum. */
VM_INLINE vm_catout(struct vm *m, const struct jn *n)
{
	size_t i;

	if (!m->cat.plain)
		return jinja_print(m->e, n, &m->cat.v, m->out);
	for (i = 0; i < m->cat.n; i++)
		if (put(m->out, m->cat.piece[i].u.s->data, m->cat.piece[i].u.s->len))
			return jinja_util_nomem(m->e, n);
	return ERR_OK;
}

VM_INLINE vm_const(struct vm *m, const struct jn *n)
{
	if (vm_step(m, n))
		return m->e->d->code;
	m->st[m->sp++] = n->v;
	return ERR_OK;
}

VM_INLINE vm_name(struct vm *m, const struct jn *n)
{
	if (vm_step(m, n) || name_value(m->e, m->f, n, &m->st[m->sp]))
		return m->e->d->code;
	m->sp++;
	return ERR_OK;
}

VM_INLINE vm_attr(struct vm *m, const struct jn *n)
{
	struct jv v = m->st[m->sp - 1];

	return vm_step(m, n) ? m->e->d->code : getattr(m->e, n, &v, &m->st[m->sp - 1]);
}

VM_INLINE vm_unary(struct vm *m, const struct jn *n)
{
	struct jv v = m->st[m->sp - 1];

	if (vm_step(m, n))
		return m->e->d->code;
	if (n->k == N_NOT) {
		m->st[m->sp - 1] = jinja_value_bool(!truthy(&v));
		return ERR_OK;
	}
	return jinja_builtin_unary(m->e, n, n->k == N_NEG, &v, &m->st[m->sp - 1]);
}

VM_INLINE vm_jf(struct vm *m)
{
	if (!truthy(&m->st[--m->sp]))
		vm_jump(m, m->o->arg);
	return ERR_OK;
}

VM_INLINE vm_misc(struct vm *m, const struct jn *n)
{
	if (m->o->op == VM_JMP)
		vm_jump(m, m->o->arg);
	else if (m->o->op == VM_UNDEF)
		m->st[m->sp++] = jinja_value_undef(NULL);
	else if (m->o->op == ST_CAT1)
		vm_cat1(m);
	else if (m->o->op == ST_DATA)
		return put(m->out, n->s, n->sn) ? jinja_util_nomem(m->e, n) : ERR_OK;
	return ERR_OK;
}

/* Runs `c`: an expression's value into *res, or a body's output into `out`
 * (threaded: each operation jumps to the next one's code). */
static enum err vm_exec(struct je *e, struct frame *f, const struct jvm *c, struct buf *out,
			struct jv *res)
{
	static const void *const go[VM_NOPS] = {
		&&op_const, &&op_name, &&op_nattr, &&op_attr, &&op_item, &&op_slice, &&op_unary,
		&&op_unary, &&op_binop, &&op_cmp, &&op_cmpc, &&op_and, &&op_or, &&op_condj,
		&&op_misc, &&op_misc, &&op_test, &&op_flen, &&op_mpre, &&op_mcall, &&op_tree,
		&&op_end, &&st_step, &&op_misc, &&st_print, &&st_set, &&st_jf, &&st_tree,
		&&st_catin, &&op_misc, &&st_catadd, &&st_catout
	};
	struct vm m;
	const struct jn *n;

	m.e = e;
	m.f = f;
	m.c = c;
	m.out = out;
	m.base = e->depth;
	m.sp = 0;
	m.o = c->op;
	n = m.o->n;
	goto *go[m.o->op];
#define OP(label, call) label: if (call) goto fail; m.o++; n = m.o->n; goto *go[m.o->op]
	OP(op_const, vm_const(&m, n));
	OP(op_name, vm_name(&m, n));
	OP(op_nattr, vm_nattr(&m, n));
	OP(op_attr, vm_attr(&m, n));
	OP(op_item, vm_item(&m, n));
	OP(op_slice, vm_slice(&m, n));
	OP(op_unary, vm_unary(&m, n));
	OP(op_binop, vm_binop(&m, n));
	OP(op_cmp, vm_cmp(&m, n, 0));
	OP(op_cmpc, vm_cmp(&m, n, 1));
	OP(op_and, vm_branch(&m, n, 1, 0));
	OP(op_or, vm_branch(&m, n, 0, 0));
	OP(op_condj, vm_branch(&m, n, 0, 1));
	OP(op_test, vm_test(&m, n));
	OP(op_flen, vm_flen(&m, n));
	OP(op_mpre, vm_mpre(&m, n));
	OP(op_mcall, vm_mcall(&m, n));
	OP(op_tree, vm_tree_op(&m, n, 0));
	OP(op_misc, vm_misc(&m, n));
	OP(st_step, vm_step(&m, n)); /* exec_list's, of the next statement */
	OP(st_print, vm_print(&m, n));
	OP(st_set, vm_set(&m, n));
	OP(st_jf, vm_jf(&m));
	OP(st_tree, vm_tree_op(&m, n, 1));
	OP(st_catin, vm_catin(&m, n));
	OP(st_catadd, vm_catadd(&m, n));
	OP(st_catout, vm_catout(&m, n));
#undef OP
op_end:
	if (res)
		*res = m.st[0];
	e->depth = m.base;
	return ERR_OK;
fail:
	e->depth = m.base;
	return e->d->code;
}

static enum err vm_run(struct je *e, struct frame *f, const struct jn *root, struct jv *out)
{
	if (e->depth + (int)root->code->maxlevel > JINJA_MAX_DEPTH)
		return eval_tw(e, f, root, out);
	return vm_exec(e, f, root->code, NULL, out);
}

/* exec_list of the body `l` whose compiled form is `code`. */
static enum err vm_body(struct je *e, struct frame *f, const struct jvm *code,
			const struct jn_list *l, struct buf *out, enum flow *flow)
{
	if (e->depth + (int)code->maxlevel > JINJA_MAX_DEPTH)
		return exec_list(e, f, l, out, flow);
	return vm_exec(e, f, code, out, NULL);
}

static enum err eval_slow(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	return n->code ? vm_run(e, f, n, out) : eval_tw(e, f, n, out);
}

/* --- compiling --- */

struct vmc {
	struct vop *op;
	unsigned n, cap, sp, maxlevel;
	int failed;        /* out of memory: the expression stays uncompiled */
	struct jvm **list; /* where compiled forms are chained */
};

static unsigned vm_emit(struct vmc *c, int op, const struct jn *n, unsigned level)
{
	if (c->n == c->cap) {
		unsigned cap = c->cap ? 2 * c->cap : 32;
		struct vop *v = mem_realloc(c->op, cap * sizeof(*v));

		if (!v) {
			c->failed = 1;
			return c->n;
		}
		c->op = v;
		c->cap = cap;
	}
	memset(&c->op[c->n], 0, sizeof(c->op[0]));
	c->op[c->n].op = (unsigned char)op;
	c->op[c->n].level = (unsigned short)level;
	c->op[c->n].n = n;
	if (level > c->maxlevel)
		c->maxlevel = level;
	return c->n++;
}

/* Sets the jump target of operation `at` to the next one. */
static void vm_land(struct vmc *c, unsigned at)
{
	if (!c->failed)
		c->op[at].arg = c->n;
}

static void compile_roots(struct vmc *c, struct jn *n);

/* Pushes one value: what the tree walk would evaluate the whole node to. */
static void vm_tree(struct vmc *c, struct jn *n, unsigned level)
{
	vm_emit(c, VM_TREE, n, level);
	c->sp++;
}

static void vm_expr(struct vmc *c, struct jn *n, unsigned level);

/* `b if a else c`. */
static void vm_cond(struct vmc *c, struct jn *n, unsigned level)
{
	unsigned jf, jend;

	vm_expr(c, n->a, level + 1);
	jf = vm_emit(c, VM_CONDJ, n, level);
	c->sp--;
	vm_expr(c, n->b, level + 1);
	jend = vm_emit(c, VM_JMP, n, level);
	c->sp--;
	vm_land(c, jf);
	if (n->c) {
		vm_expr(c, n->c, level + 1);
	} else {
		vm_emit(c, VM_UNDEF, n, level);
		c->sp++;
	}
	vm_land(c, jend);
}

/* A str method call (eval_method), or 0 when `n` is no call vm_expr
 * compiles. */
static int vm_method(struct vmc *c, struct jn *n, unsigned level)
{
	unsigned at, i, sp = c->sp;

	if (n->a->k != N_GETATTR || !JN_STR_OF(n->a->id) || (n->a->af & JN_A_UNDER) ||
	    n->l1.n > ARGS_SMALL || n->l2.n > ARGS_SMALL ||
	    sp + 1 + n->l1.n + n->l2.n + 4 > VM_STACK)
		return 0;
	vm_expr(c, n->a->a, level + 2);
	at = vm_emit(c, VM_MPRE, n->a, level + 1);
	for (i = 0; i < n->l1.n; i++)
		vm_expr(c, n->l1.v[i], level + 1);
	for (i = 0; i < n->l2.n; i++)
		vm_expr(c, n->l2.v[i]->a, level + 1);
	vm_emit(c, VM_MCALL, n, level);
	vm_land(c, at); /* the operation after the call's */
	c->sp = sp + 1;
	return 1;
}

/* obj[a:b:c]. */
static void vm_slice_of(struct vmc *c, struct jn *n, unsigned level)
{
	unsigned at, sp = c->sp;

	vm_expr(c, n->a, level + 1);
	if (n->b)
		vm_expr(c, n->b, level + 1);
	if (n->c)
		vm_expr(c, n->c, level + 1);
	if (n->d)
		vm_expr(c, n->d, level + 1);
	at = vm_emit(c, VM_SLICE, n, level);
	if (!c->failed)
		c->op[at].mask = (unsigned char)((n->b ? 1 : 0) | (n->c ? 2 : 0) | (n->d ? 4 : 0));
	c->sp = sp + 1;
}

/* A node whose operands are `a` (and `b` when `two`), then `op`. */
static void vm_simple(struct vmc *c, struct jn *n, unsigned level, int op, int two)
{
	vm_expr(c, n->a, level + 1);
	if (two)
		vm_expr(c, n->b, level + 1);
	vm_emit(c, op, n, level);
	c->sp -= (unsigned)two;
}

/* The operations of expression node `n`, `level` deep; pushes its value. */
static void vm_expr(struct vmc *c, struct jn *n, unsigned level)
{
	unsigned at;

	if (level > 60000 || c->sp + 4 > VM_STACK) {
		vm_tree(c, n, level);
		return;
	}
	switch (n->k) {
	case N_CONST:
	case N_NAME:
		vm_emit(c, n->k == N_CONST ? VM_CONST : VM_NAME, n, level);
		c->sp++;
		return;
	case N_GETATTR:
		if (n->a->k != N_NAME) {
			vm_simple(c, n, level, VM_ATTR, 0);
			return;
		}
		vm_emit(c, VM_NATTR, n, level + 1);
		c->sp++;
		return;
	case N_GETITEM:
	case N_BINOP:
		vm_simple(c, n, level, n->k == N_BINOP ? VM_BINOP : VM_ITEM, 1);
		return;
	case N_SLICE:
		vm_slice_of(c, n, level);
		return;
	case N_NEG:
	case N_POS:
	case N_NOT:
		vm_simple(c, n, level, n->k == N_NOT ? VM_NOT : VM_UNARY, 0);
		return;
	case N_AND:
	case N_OR:
		vm_expr(c, n->a, level + 1);
		at = vm_emit(c, n->k == N_AND ? VM_AND : VM_OR, n, level);
		c->sp--;
		vm_expr(c, n->b, level + 1);
		vm_land(c, at);
		return;
	case N_COMPARE:
		if (n->l1.n != 1)
			break;
		vm_expr(c, n->a, level + 1);
		if (n->l1.v[0]->a->k == N_CONST) {
			vm_emit(c, VM_CMPC, n, level + 1);
			return;
		}
		vm_expr(c, n->l1.v[0]->a, level + 1);
		vm_emit(c, VM_CMP, n, level);
		c->sp--;
		return;
	case N_COND:
		vm_cond(c, n, level);
		return;
	case N_TEST:
		if (!n->id || n->l1.n || n->l2.n)
			break;
		vm_simple(c, n, level, VM_TEST, 0);
		return;
	case N_FILTER:
		if (n->id != JN_F_LENGTH || !n->a || n->a->k == N_FILTER || n->l1.n || n->l2.n)
			break;
		vm_simple(c, n, level, VM_FLEN, 0);
		return;
	case N_CALL:
		if (vm_method(c, n, level))
			return;
		break;
	default:
		break;
	}
	vm_tree(c, n, level);
	compile_roots(c, n); /* what that walk evaluates may be compiled */
}

/* The chained form `c` as a new compiled form, or NULL. */
static struct jvm *vm_done(struct vmc *c)
{
	struct jvm *code = NULL;

	if (!c->failed && c->maxlevel < 60000 &&
	    (code = mem_alloc(sizeof(*code) + c->n * sizeof(c->op[0])))) {
		code->nops = c->n;
		code->maxlevel = c->maxlevel;
		memcpy(code->op, c->op, c->n * sizeof(c->op[0]));
		code->next = *c->list;
		*c->list = code;
	}
	mem_free(c->op);
	return code;
}

/* Compiles the expression `n` on its own (jn.code), unless it is a leaf. */
static void compile_root(struct vmc *outer, struct jn *n)
{
	struct vmc c;

	if (!n || n->k == N_CONST || n->k == N_NAME || n->code)
		return;
	memset(&c, 0, sizeof(c));
	c.list = outer->list;
	vm_expr(&c, n, 1);
	vm_emit(&c, VM_END, n, 1);
	n->code = vm_done(&c);
}

static int has_flow(const struct jn *n);

static int list_flow(const struct jn_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (has_flow(l->v[i]))
			return 1;
	return 0;
}

/* Whether a break or continue of the enclosing loop is under `n`. */
static int has_flow(const struct jn *n)
{
	if (n->k == N_BREAK || n->k == N_CONTINUE)
		return 1;
	if (n->k != N_IF)
		return 0; /* loops, macros and blocks have their own */
	return list_flow(&n->l1) || list_flow(&n->l2);
}

static void vm_stmts(struct vmc *c, const struct jn_list *l, unsigned level);

/* {{ a + b + ... }} at `level` (exec_output's cat_eval): chain[0], the top
 * '+' node, entered at level + 1, down to the innermost operand at
 * level + k + 1. */
static void vm_cat(struct vmc *c, struct jn *s, unsigned level)
{
	unsigned k = (unsigned)cat_length(s->a) - 1, at, j;
	struct jn *x;

	at = vm_emit(c, ST_CATIN, s->a, level + k);
	if (!c->failed)
		c->op[at].mask = (unsigned char)k;
	for (x = s->a; is_cat(x); x = x->a)
		;
	vm_expr(c, x, level + k + 1);
	vm_emit(c, ST_CAT1, s, level);
	for (; k > 0; k--) {
		for (x = s->a, j = 1; j < k; j++)
			x = x->a; /* chain[k - 1] */
		c->sp = 0;
		vm_expr(c, x->b, level + k + 1);
		vm_emit(c, ST_CATADD, x, level + k);
	}
	vm_emit(c, ST_CATOUT, s, level);
}

/* exec_if at `level`: each condition at level + 1, the branches
 * exec_list'ed at level + 1; the jumps out of the branches are chained
 * through their targets until the end is known. */
static void vm_if(struct vmc *c, struct jn *s, unsigned level)
{
	unsigned pending = UINT_MAX, next, at, end;
	struct jn *x;

	for (x = s;; x = x->l2.v[0]) {
		c->sp = 0;
		vm_expr(c, x->a, level + 1);
		at = vm_emit(c, ST_JF, x, level);
		vm_stmts(c, &x->l1, level + 1);
		end = vm_emit(c, VM_JMP, x, level);
		if (!c->failed)
			c->op[end].arg = pending;
		pending = end;
		vm_land(c, at);
		if (x->l2.n != 1 || x->l2.v[0]->op != 'e')
			break;
	}
	vm_stmts(c, &x->l2, level + 1);
	while (!c->failed && pending != UINT_MAX) {
		next = c->op[pending].arg;
		c->op[pending].arg = c->n;
		pending = next;
	}
}

/* The statements of `l` (exec_list: each at `level`). */
static void vm_stmts(struct vmc *c, const struct jn_list *l, unsigned level)
{
	struct jn *s;
	size_t i;

	if (level > c->maxlevel)
		c->maxlevel = level; /* an empty list is entered too */
	for (i = 0; i < l->n; i++) {
		s = l->v[i];
		c->sp = 0;
		vm_emit(c, ST_STEP, s, level);
		if (s->k == N_DATA) {
			vm_emit(c, ST_DATA, s, level);
		} else if (s->k == N_OUTPUT && is_cat(s->a) && cat_length(s->a) <= CAT_MAX) {
			vm_cat(c, s, level);
		} else if (s->k == N_OUTPUT) {
			vm_expr(c, s->a, level + 1);
			vm_emit(c, ST_PRINT, s, level);
		} else if (s->k == N_SET && s->a->k == N_NAME) {
			vm_expr(c, s->b, level + 1);
			vm_emit(c, ST_SET, s, level);
		} else if (s->k == N_IF) {
			vm_if(c, s, level);
		} else {
			vm_emit(c, ST_TREE, s, level);
		}
	}
}

/* Compiles the body of the for loop `n` (jn.body) when it can be: no break
 * or continue of this loop in it. */
static void compile_body(struct vmc *outer, struct jn *n)
{
	struct vmc c;

	if (n->body || list_flow(&n->l1))
		return;
	memset(&c, 0, sizeof(c));
	c.list = outer->list;
	vm_stmts(&c, &n->l1, 1);
	vm_emit(&c, VM_END, n, 1);
	n->body = vm_done(&c);
}

static void compile_list(struct vmc *c, const struct jn_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		compile_roots(c, l->v[i]);
}

/* The expressions the tree walk evaluates under `n` with eval(): those of
 * statements, and the operands of a node compiled as VM_TREE. */
static void compile_roots(struct vmc *c, struct jn *n)
{
	struct jn *x;
	size_t i;

	if (!n)
		return;
	switch (n->k) {
	case N_OUTPUT:
		if (is_cat(n->a) && cat_length(n->a) <= CAT_MAX) { /* cat_eval's operands */
			for (x = n->a; is_cat(x); x = x->a)
				compile_root(c, x->b);
			compile_root(c, x);
		} else {
			compile_root(c, n->a);
		}
		return;
	case N_IF:
	case N_SET:
	case N_FOR:
		if (n->k == N_FOR)
			compile_body(c, n);
		compile_root(c, n->k == N_IF ? n->a : n->b);
		if (n->k == N_FOR)
			compile_root(c, n->c);
		compile_list(c, &n->l1);
		compile_list(c, &n->l2);
		return;
	case N_SETBLOCK:
	case N_FILTERBLOCK:
		compile_list(c, &n->l1);
		for (x = n->c; x && x->k == N_FILTER; x = x->a)
			compile_roots(c, x);
		return;
	case N_MACRO:
	case N_CALLBLOCK:
		if (n->k == N_CALLBLOCK)
			compile_roots(c, n->a);
		for (i = 0; i < n->l2.n; i++)
			compile_root(c, n->l2.v[i]);
		compile_list(c, &n->l3);
		return;
	case N_BODY:
		compile_list(c, &n->l1);
		return;
	case N_CALL:
	case N_FILTER:
	case N_TEST:
		/* evaluated by eval_call / eval_filter / eval_test: the callee or
		 * input and the arguments */
		if (n->k != N_FILTER || !n->a || n->a->k != N_FILTER)
			compile_root(c, n->a);
		else
			compile_roots(c, n->a);
		for (i = 0; i < n->l1.n; i++)
			compile_root(c, n->l1.v[i]);
		for (i = 0; i < n->l2.n; i++)
			compile_root(c, n->l2.v[i]->a);
		return;
	default:
		/* other expressions: their operands */
		if (n->k >= N_DATA)
			return;
		compile_root(c, n->a);
		compile_root(c, n->b);
		compile_root(c, n->c);
		compile_root(c, n->d);
		for (i = 0; i < n->l1.n; i++)
			compile_root(c, n->l1.v[i]->k == N_CMPOP ? n->l1.v[i]->a : n->l1.v[i]);
		for (i = 0; i < n->l2.n; i++)
			compile_root(c, n->l2.v[i]);
		return;
	}
}

void jinja_eval_compile(struct jn *root, struct jvm **list)
{
	struct vmc c;

	memset(&c, 0, sizeof(c));
	c.list = list;
	compile_roots(&c, root);
}

void jinja_eval_uncompile(struct jvm *list)
{
	struct jvm *next;

	for (; list; list = next) {
		next = list->next;
		mem_free(list);
	}
}

static NOINLINE enum err exec_output(struct je *e, struct frame *f, const struct jn *n,
				     struct buf *out)
{
	struct jv v;
	struct cat c;
	size_t i;

	if (is_cat(n->a) && cat_length(n->a) <= CAT_MAX) {
		if (cat_eval(e, f, n->a, &c))
			return e->d->code;
		if (!c.plain)
			return jinja_print(e, n, &c.v, out);
		for (i = 0; i < c.n; i++)
			if (put(out, c.piece[i].u.s->data, c.piece[i].u.s->len))
				return jinja_util_nomem(e, n);
		return ERR_OK;
	}
	if (eval(e, f, n->a, &v))
		return e->d->code;
	if (v.k == JV_STR) /* pyfmt_str: a str's bytes, Markup or not */
		return put(out, v.u.s->data, v.u.s->len) ? jinja_util_nomem(e, n) : ERR_OK;
	return jinja_print(e, n, &v, out);
}

static NOINLINE enum err exec_if(struct je *e, struct frame *f, const struct jn *n,
				 struct buf *out, enum flow *flow)
{
	struct jv c;

	for (;;) {
		if (eval(e, f, n->a, &c))
			return e->d->code;
		if (truthy(&c))
			return exec_list(e, f, &n->l1, out, flow);
		if (!n->l2.n) /* exec_list of nothing: a level entered and left */
			return e->depth >= JINJA_MAX_DEPTH ? too_deep(e, NULL) : ERR_OK;
		if (n->l2.n != 1 || n->l2.v[0]->op != 'e')
			return exec_list(e, f, &n->l2, out, flow);
		n = n->l2.v[0]; /* an elif: no deeper than its if */
	}
}

/* The items a loop visits: the iterable, filtered by the loop's `if`. */
static enum err loop_items(struct je *e, struct frame *f, const struct jn *n, struct jv *items)
{
	struct jv src, kept;
	size_t i;

	if (eval(e, f, n->b, &src) || jinja_builtin_iterate(e, n, &src, items))
		return e->d->code;
	if (!n->c)
		return ERR_OK;
	if (jinja_value_seq_new(e->a, JV_LIST, 0, &kept))
		return jinja_util_nomem(e, n);
	for (i = 0; i < items->u.l->n; i++) {
		struct frame *it = frame_new(e, f);
		struct jv c;

		if (!it)
			return jinja_util_nomem(e, n);
		if (assign(e, it, n->a, items->u.l->v[i]) || eval(e, it, n->c, &c))
			return e->d->code;
		if (truthy(&c) && jinja_value_seq_push(e->a, &kept, items->u.l->v[i]))
			return jinja_util_nomem(e, n);
	}
	*items = kept;
	return ERR_OK;
}

static NOINLINE enum err exec_for(struct je *e, struct frame *f, const struct jn *n,
				  struct buf *out)
{
	struct jv items, lv = { JV_LOOP, 0, { 0 } };
	struct loop *l = jinja_value_alloc(e->a, sizeof(*l));
	struct frame *it = NULL;
	enum flow flow = FLOW_NORMAL;

	if (!l)
		return jinja_util_nomem(e, n);
	if (loop_items(e, f, n, &items))
		return e->d->code;
	l->items = items.u.l;
	lv.u.p = l;
	for (l->i = 0; l->i < l->items->n; l->i++) {
		/* one frame for every iteration, as jinja2's loop variables are
		 * one Python local: a macro made in an earlier iteration reads
		 * the current one's names. Each starts from no bindings. */
		if (it) {
			it->n = 0;
			it->b = it->inl;
			it->cap = FRAME_INLINE;
		} else if (!(it = frame_new(e, f))) {
			return jinja_util_nomem(e, n);
		}
		if (step(e, n))
			return e->d->code;
		if (n->a->k == N_NAME) { /* the frame is empty; the target is never "loop" */
			it->b[0].name = n->a->s;
			it->b[0].v = l->items->v[l->i];
			it->b[1].name = jinja_parse_loop;
			it->b[1].v = lv;
			it->n = 2;
		} else if (assign(e, it, n->a, l->items->v[l->i]) ||
			   frame_set(e, it, n, jinja_parse_loop, lv)) {
			return e->d->code;
		}
		flow = FLOW_NORMAL;
		if (n->body ? vm_body(e, it, n->body, &n->l1, out, &flow)
			    : exec_list(e, it, &n->l1, out, &flow))
			return e->d->code;
		if (flow == FLOW_BREAK)
			break;
	}
	if (it)
		it->ended = 1;
	if (l->i == l->items->n && l->i)
		l->i--; /* a loop object kept past its loop stays on the last item */
	if (!l->items->n && n->l2.n)
		return exec_list(e, f, &n->l2, out, &flow);
	return ERR_OK;
}

static enum err exec_setblock(struct je *e, struct frame *f, const struct jn *n)
{
	struct jv v;

	if (render_to_str(e, f, n, &n->l1, &v))
		return e->d->code;
	if (n->c && eval_filter(e, f, n->c, &v, &v))
		return e->d->code;
	return assign(e, f, n->a, v);
}

static int reads_name(const struct jn *n, const char *name);

static int list_reads(const struct jn_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (reads_name(l->v[i], name))
			return 1;
	return 0;
}

/* Whether `name` is loaded anywhere under `n` (conservative: nested macros
 * count too). */
static int reads_name(const struct jn *n, const char *name)
{
	if (!n)
		return 0;
	if (n->k == N_NAME && !strcmp(n->s, name))
		return 1;
	return reads_name(n->a, name) || reads_name(n->b, name) || reads_name(n->c, name) ||
	       reads_name(n->d, name) || list_reads(&n->l1, name) || list_reads(&n->l2, name) ||
	       list_reads(&n->l3, name);
}

static enum err make_macro(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct macro *m = jinja_value_alloc(e->a, sizeof(*m));

	if (!m)
		return jinja_util_nomem(e, n);
	m->def = n;
	m->closure = f;
	m->uses_caller = list_reads(&n->l3, "caller");
	if (list_reads(&n->l3, "varargs") || list_reads(&n->l3, "kwargs"))
		return jinja_util_refuse(e, n, "a macro reading varargs or kwargs");
	out->k = JV_MACRO;
	out->flags = 0;
	out->u.p = m;
	return ERR_OK;
}

static enum err exec_callblock(struct je *e, struct frame *f, const struct jn *n,
			       struct buf *out)
{
	struct jv caller, v;

	if (make_macro(e, f, n, &caller) || eval_call(e, f, n->a, &caller, &v))
		return e->d->code;
	return jinja_print(e, n, &v, out);
}

static enum err exec_filterblock(struct je *e, struct frame *f, const struct jn *n,
				 struct buf *out)
{
	struct jv v;

	if (render_to_str(e, f, n, &n->l1, &v) || eval_filter(e, f, n->c, &v, &v))
		return e->d->code;
	return jinja_print(e, n, &v, out);
}

/* {% set name = x %} and the other targets. */
static NOINLINE enum err exec_set(struct je *e, struct frame *f, const struct jn *n)
{
	struct jv v;
	size_t i;

	if (eval(e, f, n->b, &v))
		return e->d->code;
	if (n->a->k != N_NAME)
		return assign(e, f, n->a, v);
	for (i = 0; i < f->n; i++) /* frame_set inline */
		if (f->b[i].name == n->a->s) {
			f->b[i].v = v;
			return ERR_OK;
		}
	if (f->n == f->cap)
		return frame_set(e, f, n->a, n->a->s, v);
	f->b[f->n].name = n->a->s;
	f->b[f->n++].v = v;
	return ERR_OK;
}

static NOINLINE enum err exec_stmt(struct je *e, struct frame *f, const struct jn *n,
				   struct buf *out, enum flow *flow)
{
	struct jv v;

	switch (n->k) {
	case N_DATA:
		return put(out, n->s, n->sn) ? jinja_util_nomem(e, n) : ERR_OK;
	case N_OUTPUT:
		return exec_output(e, f, n, out);
	case N_IF:
		return exec_if(e, f, n, out, flow);
	case N_FOR:
		return exec_for(e, f, n, out);
	case N_SET:
		return exec_set(e, f, n);
	case N_SETBLOCK:
		return exec_setblock(e, f, n);
	case N_MACRO:
		if (make_macro(e, f, n, &v))
			return e->d->code;
		return frame_set(e, f, n, n->s, v);
	case N_CALLBLOCK:
		return exec_callblock(e, f, n, out);
	case N_FILTERBLOCK:
		return exec_filterblock(e, f, n, out);
	case N_BREAK:
		*flow = FLOW_BREAK;
		return ERR_OK;
	case N_CONTINUE:
		*flow = FLOW_CONTINUE;
		return ERR_OK;
	case N_BODY:
		return exec_list(e, f, &n->l1, out, flow);
	default:
		return diag_fail(e->d, ERR_INTERNAL, "bad statement node %d", (int)n->k);
	}
}

static enum err exec_list(struct je *e, struct frame *f, const struct jn_list *l,
			  struct buf *out, enum flow *flow)
{
	size_t i;

	if (++e->depth > JINJA_MAX_DEPTH)
		return jinja_util_refuse(e, l->n ? l->v[0] : NULL, "nesting deeper than %d",
					 JINJA_MAX_DEPTH);
	for (i = 0; i < l->n && *flow == FLOW_NORMAL; i++) {
		if (step(e, l->v[i]))
			return e->d->code;
		if (exec_stmt(e, f, l->v[i], out, flow))
			return e->d->code;
	}
	e->depth--;
	return ERR_OK;
}

/* --- macros --- */

static enum err bind_params(struct je *e, const struct jn *at, const struct macro *m,
			    struct frame *f, const struct je_args *a)
{
	const struct jn *def = m->def;
	size_t i, k, used = 0;
	struct jv v;

	if (a->npos > def->l1.n)
		return jinja_util_reject(e, at,
					 "TypeError: macro '%s' takes not more than %zu argument(s)",
					 def->s ? def->s : "caller", def->l1.n);
	for (i = 0; i < def->l1.n; i++) {
		const char *name = def->l1.v[i]->s;
		int found = i < a->npos;

		v = found ? a->pos[i] : jinja_value_undef(name);
		for (k = 0; k < a->nkw; k++)
			if (!strcmp(a->kwn[k], name)) {
				if (found)
					return jinja_util_reject(e, at,
								 "TypeError: macro '%s' got multiple "
								 "values for argument '%s'", def->s, name);
				v = a->kwv[k];
				found = 1;
				used++;
			}
		if (!found && def->l2.v[i] && eval(e, f, def->l2.v[i], &v))
			return e->d->code;
		if (frame_set(e, f, at, name, v))
			return e->d->code;
	}
	if (used < a->nkw)
		return jinja_util_reject(e, at, "TypeError: macro '%s' takes no keyword argument",
					 def->s ? def->s : "caller");
	return ERR_OK;
}

static enum err jinja_eval_call_macro(struct je *e, const struct jn *at, const struct jv *macro,
				      const struct je_args *args, const struct jv *caller, struct jv *out)
{
	const struct macro *m = macro->u.p;
	struct frame *f;

	if (caller && !m->uses_caller)
		return jinja_util_refuse(e, at, "a call block whose macro does not read caller");
	if (++e->calls > JINJA_MAX_CALLS)
		return jinja_util_refuse(e, at, "macro calls nested deeper than %d (Python raises "
					 "RecursionError)", JINJA_MAX_CALLS);
	if (!(f = frame_new(e, m->closure)))
		return jinja_util_nomem(e, at);
	if (bind_params(e, at, m, f, args))
		return e->d->code;
	if (m->uses_caller && frame_set(e, f, at, jinja_parse_caller,
					caller ? *caller : jinja_value_undef("caller")))
		return e->d->code;
	if (render_to_str(e, f, at, &m->def->l3, out))
		return e->d->code;
	e->calls--;
	return ERR_OK;
}

/* --- the loop object --- */

enum err jinja_eval_loop_id(struct je *e, const struct jn *at, const struct jv *loop, int id,
			    struct jv *out)
{
	const struct loop *l = loop->u.p;
	int64_t i = (int64_t)l->i, n = (int64_t)l->items->n;

	(void)e;
	(void)at;
	switch (id) {
	case JN_LOOP_INDEX: *out = jinja_value_int(i + 1); break;
	case JN_LOOP_INDEX0: *out = jinja_value_int(i); break;
	case JN_LOOP_REVINDEX: *out = jinja_value_int(n - i); break;
	case JN_LOOP_REVINDEX0: *out = jinja_value_int(n - i - 1); break;
	case JN_LOOP_FIRST: *out = jinja_value_bool(i == 0); break;
	case JN_LOOP_LAST: *out = jinja_value_bool(i == n - 1); break;
	case JN_LOOP_LENGTH: *out = jinja_value_int(n); break;
	case JN_LOOP_DEPTH: *out = jinja_value_int(1); break;
	case JN_LOOP_DEPTH0: *out = jinja_value_int(0); break;
	case JN_LOOP_PREVITEM:
		*out = i > 0 ? l->items->v[i - 1] : jinja_value_undef("previtem");
		break;
	default: /* JN_LOOP_NEXTITEM */
		*out = i + 1 < n ? l->items->v[i + 1] : jinja_value_undef("nextitem");
		break;
	}
	return ERR_OK;
}

enum err jinja_eval_loop_attr(struct je *e, const struct jn *at, const struct jv *loop,
			      const char *name, struct jv *out)
{
	static const char *const names[] = { "index", "index0", "revindex", "revindex0", "first",
					     "last", "length", "depth", "depth0", "previtem",
					     "nextitem", NULL }; /* JN_LOOP_* order */
	int k;

	for (k = 0; names[k]; k++)
		if (!strcmp(names[k], name))
			return jinja_eval_loop_id(e, at, loop, k + 1, out);
	return jinja_util_refuse(e, at, "loop.%s", name);
}

enum err jinja_eval_render(struct je *e, const struct jn *root, struct buf *out)
{
	struct frame *f = frame_new(e, NULL);
	enum flow flow = FLOW_NORMAL;
	size_t n = e->names->n + 1;
	enum err r;

	if (!f)
		return jinja_util_nomem(e, root);
	/* bookkeeping, not values: outside the value memory's cap */
	e->namev = mem_alloc(n * sizeof(*e->namev));
	e->named = mem_calloc(n, 1);
	e->hint = mem_calloc((size_t)e->nslots + 1, sizeof(*e->hint));
	if (!e->namev || !e->named || !e->hint)
		r = diag_fail(e->d, ERR_NOMEM, "out of memory");
	else
		r = exec_list(e, f, &root->l1, out, &flow);
	mem_free(e->namev);
	mem_free(e->named);
	mem_free(e->hint);
	e->namev = NULL;
	e->named = NULL;
	e->hint = NULL;
	return r;
}
