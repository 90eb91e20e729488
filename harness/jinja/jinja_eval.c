/* jinja_eval — see jinja_int.h. The control flow follows jinja2's
 * compiler.py: what the generated Python would do, node by node. */
#include "jinja_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jinja.h"
#include "base/mem.h"

/* Calls a macro value with evaluated arguments; `caller` is the call block's
 * caller macro or NULL. The result is a str. */
static enum err jinja_eval_call_macro(struct je *e, const struct jn *at, const struct jv *macro,
				      const struct je_args *args, const struct jv *caller, struct jv *out);

enum flow { FLOW_NORMAL, FLOW_BREAK, FLOW_CONTINUE };

/* A name bound in a frame: `name` is the template's own NUL-terminated
 * text (a node's s, in the template's arena) or a static string. */
struct binding {
	const char *name;
	size_t len;
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

static enum err eval(struct je *e, struct frame *f, const struct jn *n, struct jv *out);
static enum err exec_list(struct je *e, struct frame *f, const struct jn_list *l,
			  struct buf *out, enum flow *flow);

static enum err vfail(struct je *e, const struct jn *n, enum err code, const char *lead,
		      const char *fmt, va_list ap)
{
	char msg[DIAG_MSG_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return diag_fail(e->d, code, "%s%s (template line %u, column %u)", lead, msg,
			 n ? n->line : 0, n ? n->col : 0);
}

enum err jinja_eval_reject(struct je *e, const struct jn *n, const char *fmt, ...)
{
	va_list ap;
	enum err r;

	va_start(ap, fmt);
	r = vfail(e, n, ERR_INPUT, "the server would reject this request: ", fmt, ap);
	va_end(ap);
	return r;
}

enum err jinja_eval_limit(struct je *e, const struct jn *n, const char *fmt, ...)
{
	va_list ap;
	enum err r;

	va_start(ap, fmt);
	r = vfail(e, n, ERR_LIMIT, "", fmt, ap);
	va_end(ap);
	return r;
}

static int past_deadline(const struct je *e)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > e->deadline.tv_sec ||
	       (now.tv_sec == e->deadline.tv_sec && now.tv_nsec > e->deadline.tv_nsec);
}

static enum err over_time(struct je *e, const struct jn *n)
{
	return jinja_eval_limit(e, n, "rendering the template took longer than %g seconds",
				e->seconds);
}

/* One evaluation step: the step budget, and the clock every 4096 steps. */
static enum err step(struct je *e, const struct jn *n)
{
	if (++e->steps > JINJA_MAX_STEPS)
		return jinja_eval_limit(e, n, "rendering the template took more than %d steps",
					JINJA_MAX_STEPS);
	if (!(e->steps & 4095) && past_deadline(e))
		return over_time(e, n);
	return ERR_OK;
}

enum err jinja_eval_work(struct je *e, const struct jn *n, size_t units)
{
	size_t before = e->work;

	if (units > JINJA_MAX_WORK - e->work)
		return jinja_eval_limit(e, n, "rendering the template took more than %llu units "
					"of work in builtins", (unsigned long long)JINJA_MAX_WORK);
	e->work += units;
	if ((before >> 20) != (e->work >> 20) && past_deadline(e))
		return over_time(e, n);
	return ERR_OK;
}

static size_t units_of(const struct jv *v)
{
	if (v->k == JV_STR || v->k == JV_BIGINT)
		return v->u.s->len + 1;
	if (v->k == JV_LIST || v->k == JV_TUPLE)
		return v->u.l->n * JV_WORK_ITEM + 1;
	if (v->k == JV_DICT || v->k == JV_NS)
		return v->u.d->n * JV_WORK_ITEM + 1;
	return 1;
}

size_t jinja_eval_units(const struct jv *v, const struct je_args *a)
{
	size_t n = units_of(v), i;

	for (i = 0; a && i < a->npos; i++)
		n += units_of(&a->pos[i]);
	for (i = 0; a && i < a->nkw; i++)
		n += units_of(&a->kwv[i]);
	return n;
}

size_t jinja_eval_buf_cap(const struct je *e)
{
	return e->a->max - e->a->used;
}

enum err jinja_eval_room(struct je *e, const struct jn *n, size_t units)
{
	if (units > jinja_eval_buf_cap(e))
		return jinja_eval_limit(e, n, "the template's values would exceed the cap of %zu "
					"bytes", e->a->max);
	return ERR_OK;
}

enum err jinja_eval_refuse(struct je *e, const struct jn *n, const char *fmt, ...)
{
	va_list ap;
	enum err r;

	va_start(ap, fmt);
	r = vfail(e, n, ERR_UNSUPPORTED, "unsupported in template: ", fmt, ap);
	va_end(ap);
	return r;
}

/* An allocation or append failed: either memory is exhausted or a cap (the
 * arena's, or the output buffer's) was reached. Which one is told apart by
 * whether a small allocation still succeeds. */
enum err jinja_eval_nomem(struct je *e, const struct jn *n)
{
	void *probe = mem_alloc(64);

	mem_free(probe);
	if (probe)
		return diag_fail(e->d, ERR_LIMIT, "the template's output or values exceed the caps "
				 "(%zu bytes of output, %zu of values) (template line %u, column %u)",
				 e->out_max, e->a->max, n ? n->line : 0, n ? n->col : 0);
	return diag_fail(e->d, ERR_NOMEM, "out of memory (template line %u, column %u)",
			 n ? n->line : 0, n ? n->col : 0);
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

static struct jv *frame_get(const struct frame *f, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->b[i].name == name ||
		    (f->b[i].len == len && !memcmp(f->b[i].name, name, len)))
			return &f->b[i].v;
	return NULL;
}

/* Binds `name` (the template's text or a static string: not copied). */
static enum err frame_set(struct je *e, struct frame *f, const struct jn *at, const char *name,
			  struct jv v)
{
	size_t len = strlen(name);
	struct jv *slot = frame_get(f, name, len);
	struct binding *b;

	if (slot) {
		*slot = v;
		return ERR_OK;
	}
	if (f->n == f->cap) {
		if (!(b = jinja_value_alloc(e->a, 2 * f->cap * sizeof(*b))))
			return jinja_eval_nomem(e, at);
		memcpy(b, f->b, f->n * sizeof(*b));
		f->b = b;
		f->cap *= 2;
	}
	f->b[f->n].name = name;
	f->b[f->n].len = len;
	f->b[f->n++].v = v;
	return ERR_OK;
}

/* The value of the name `n` seen from `f`. A macro made in a loop's body
 * and called after the loop reads through that loop's ended frame, where
 * jinja2 gives `missing` (printed as such for the loop's target), an
 * undefined or the outer value by rules of its compiler: refused. */
static enum err lookup(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv *v;

	for (; f; f = f->parent) {
		if (f->ended)
			return jinja_eval_refuse(e, n, "'%s' read by a macro or call block of a "
						 "for loop's body after that loop ended (jinja2 "
						 "reads the loop's names as missing)", n->s);
		if ((v = frame_get(f, n->s, n->sn))) {
			*out = *v;
			return ERR_OK;
		}
	}
	if ((v = jinja_value_dict_get_str(e->vars, n->s, n->sn)))
		*out = *v;
	else if (!jinja_builtin_global(n->s, out))
		*out = jinja_value_undef(n->s);
	return ERR_OK;
}

/* --- expressions --- */

static enum err eval_args(struct je *e, struct frame *f, const struct jn *n, struct je_args *a)
{
	size_t i;

	memset(a, 0, sizeof(*a));
	a->npos = n->l1.n;
	a->nkw = n->l2.n;
	a->pos = jinja_value_alloc(e->a, (a->npos + 1) * sizeof(*a->pos));
	a->kwv = jinja_value_alloc(e->a, (a->nkw + 1) * sizeof(*a->kwv));
	a->kwn = jinja_value_alloc(e->a, (a->nkw + 1) * sizeof(*a->kwn));
	if (!a->pos || !a->kwv || !a->kwn)
		return jinja_eval_nomem(e, n);
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

static enum err call_value(struct je *e, const struct jn *n, const struct jv *fn,
			   const struct je_args *a, const struct jv *caller, struct jv *out)
{
	if (fn->k == JV_MACRO)
		return jinja_eval_call_macro(e, n, fn, a, caller, out);
	if (caller)
		return jinja_eval_refuse(e, n, "a call block around something other than a macro");
	if (fn->k == JV_FUNC)
		return jinja_builtin_call(e, n, fn, a, out);
	if (fn->k == JV_UNDEF)
		return jinja_eval_reject(e, n, "UndefinedError: '%s' is undefined",
					 fn->u.p ? (const char *)fn->u.p : "value");
	return jinja_eval_reject(e, n, "TypeError: '%s' object is not callable",
				 jinja_value_type_name(fn));
}

static enum err eval_call(struct je *e, struct frame *f, const struct jn *n,
			  const struct jv *caller, struct jv *out)
{
	struct jv fn;
	struct je_args a;

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

	if (!n->a)
		v = *in;
	else if (n->a->k == N_FILTER ? eval_filter(e, f, n->a, in, &v) : eval(e, f, n->a, &v))
		return e->d->code;
	if (eval_args(e, f, n, &a))
		return e->d->code;
	return jinja_filter(e, n, n->s, &v, &a, out);
}

static enum err eval_test(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv v;
	struct je_args a;
	int r;

	if (eval(e, f, n->a, &v) || eval_args(e, f, n, &a) ||
	    jinja_builtin_test(e, n, n->s, &v, &a, &r))
		return e->d->code;
	*out = jinja_value_bool(n->op ? !r : r);
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

		if (eval(e, f, o->a, &right) ||
		    jinja_builtin_compare(e, o, o->op, &left, &right, &r))
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
		return jinja_eval_nomem(e, n);
	for (i = 0; i < n->l1.n; i++) {
		if (eval(e, f, n->l1.v[i], &item))
			return e->d->code;
		if (jinja_value_seq_push(e->a, out, item))
			return jinja_eval_nomem(e, n);
	}
	return ERR_OK;
}

static enum err eval_dict(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv k, v;
	size_t i;

	if (jinja_value_dict_new(e->a, JV_DICT, out))
		return jinja_eval_nomem(e, n);
	for (i = 0; i < n->l1.n; i++) {
		if (eval(e, f, n->l1.v[i], &k) || eval(e, f, n->l2.v[i], &v))
			return e->d->code;
		if (!jinja_value_hashable(&k))
			return jinja_eval_reject(e, n, "TypeError: unhashable type: '%s'",
						 jinja_value_type_name(&k));
		if (jinja_value_dict_set(e->a, out, k, v))
			return jinja_eval_nomem(e, n);
	}
	return ERR_OK;
}

static enum err eval_logic(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	if (eval(e, f, n->a, out))
		return e->d->code;
	if (n->k == N_AND ? !jinja_value_truthy(out) : jinja_value_truthy(out))
		return ERR_OK;
	return eval(e, f, n->b, out);
}

static enum err eval_cond(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv c;

	if (eval(e, f, n->a, &c))
		return e->d->code;
	if (jinja_value_truthy(&c))
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

static enum err eval_node(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	struct jv a, b;

	switch (n->k) {
	case N_CONST:
		*out = n->v;
		return ERR_OK;
	case N_NAME:
		if (lookup(e, f, n, out))
			return e->d->code;
		if (out->k == JV_UNDEF && !strcmp(n->s, "self"))
			return jinja_eval_refuse(e, n, "'self' (jinja2's template reference, printed "
						 "\"<TemplateReference None>\")");
		return ERR_OK;
	case N_GETATTR:
		if (eval(e, f, n->a, &a))
			return e->d->code;
		return jinja_builtin_getattr(e, n, &a, n->s, out);
	case N_GETITEM:
		if (eval(e, f, n->a, &a) || eval(e, f, n->b, &b))
			return e->d->code;
		return jinja_builtin_getitem(e, n, &a, &b, out);
	case N_SLICE:
		return eval_slice(e, f, n, out);
	case N_CALL:
		return eval_call(e, f, n, NULL, out);
	case N_FILTER:
		return eval_filter(e, f, n, NULL, out);
	case N_TEST:
		return eval_test(e, f, n, out);
	case N_NEG:
	case N_POS:
		if (eval(e, f, n->a, &a))
			return e->d->code;
		return jinja_builtin_unary(e, n, n->k == N_NEG, &a, out);
	case N_NOT:
		if (eval(e, f, n->a, &a))
			return e->d->code;
		*out = jinja_value_bool(!jinja_value_truthy(&a));
		return ERR_OK;
	case N_BINOP:
		if (eval(e, f, n->a, &a) || eval(e, f, n->b, &b))
			return e->d->code;
		return jinja_builtin_binop(e, n, n->op, &a, &b, out);
	case N_AND:
	case N_OR:
		return eval_logic(e, f, n, out);
	case N_COMPARE:
		return eval_compare(e, f, n, out);
	case N_COND:
		return eval_cond(e, f, n, out);
	case N_LIST:
	case N_TUPLE:
		return eval_seq(e, f, n, out);
	case N_DICT:
		return eval_dict(e, f, n, out);
	default:
		return diag_fail(e->d, ERR_INTERNAL, "bad expression node %d", (int)n->k);
	}
}

static enum err eval(struct je *e, struct frame *f, const struct jn *n, struct jv *out)
{
	enum err r;

	if (step(e, n))
		return e->d->code;
	if (++e->depth > JINJA_MAX_DEPTH)
		return jinja_eval_refuse(e, n, "nesting deeper than %d", JINJA_MAX_DEPTH);
	r = eval_node(e, f, n, out);
	e->depth--;
	return r;
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
		return jinja_eval_reject(e, at, "UndefinedError: cannot unpack an undefined value");
	if (list.u.l->n != want)
		return jinja_eval_reject(e, at,
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
			return jinja_eval_reject(e, target,
						 "TemplateRuntimeError: cannot assign attribute on "
						 "non-namespace object");
		if (jinja_value_str_new(e->a, target->s, target->sn, &key) ||
		    jinja_value_dict_set(e->a, &ns, key, v))
			return jinja_eval_nomem(e, target);
		return ERR_OK;
	}
	items = jinja_value_alloc(e->a, (target->l1.n + 1) * sizeof(*items));
	if (!items)
		return jinja_eval_nomem(e, target);
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

	buf_init(&b, jinja_eval_buf_cap(e));
	r = exec_list(e, f, body, &b, &flow);
	if (!r && jinja_value_str_buf(e->a, &b, out))
		r = jinja_eval_nomem(e, at);
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
		return jinja_eval_nomem(e, at);
	for (i = 0; i < c->n; p += c->piece[i].u.s->len, i++)
		memcpy(p, c->piece[i].u.s->data, c->piece[i].u.s->len);
	return ERR_OK;
}

/* What eval(x) does for the '+' node `x`, into `c`. */
static enum err cat_eval(struct je *e, struct frame *f, const struct jn *x, struct cat *c)
{
	struct jv r, sum;

	if (step(e, x))
		return e->d->code;
	if (++e->depth > JINJA_MAX_DEPTH)
		return jinja_eval_refuse(e, x, "nesting deeper than %d", JINJA_MAX_DEPTH);
	if (is_cat(x->a) ? cat_eval(e, f, x->a, c) : eval(e, f, x->a, &c->piece[0]))
		return e->d->code;
	if (!is_cat(x->a)) {
		c->n = 1;
		c->plain = plain_str(&c->piece[0]);
		c->len = c->plain ? c->piece[0].u.s->len : 0;
		c->v = c->piece[0];
	}
	if (eval(e, f, x->b, &r))
		return e->d->code;
	if (c->plain && plain_str(&r)) { /* concat_str's charges, nothing made */
		if (jinja_eval_room(e, x, c->len + r.u.s->len) ||
		    jinja_eval_work(e, x, c->len + r.u.s->len))
			return e->d->code;
		if (jinja_value_arena_charge(e->a, jinja_value_str_size(c->len + r.u.s->len)))
			return jinja_eval_nomem(e, x);
		c->piece[c->n++] = r;
		c->len += r.u.s->len;
	} else {
		if ((c->plain && cat_make(e, x, c)) ||
		    jinja_builtin_binop(e, x, '+', &c->v, &r, &sum))
			return e->d->code;
		c->v = sum;
	}
	e->depth--;
	return ERR_OK;
}

static size_t cat_length(const struct jn *n)
{
	size_t k = 1;

	for (; is_cat(n); n = n->a)
		k++;
	return k;
}

static enum err exec_output(struct je *e, struct frame *f, const struct jn *n, struct buf *out)
{
	struct jv v;
	struct cat c;
	size_t i;

	if (is_cat(n->a) && cat_length(n->a) <= CAT_MAX) {
		if (cat_eval(e, f, n->a, &c))
			return e->d->code;
		if (!c.plain)
			return jinja_builtin_print(e, n, &c.v, out);
		for (i = 0; i < c.n; i++)
			if (buf_append(out, c.piece[i].u.s->data, c.piece[i].u.s->len))
				return jinja_eval_nomem(e, n);
		return ERR_OK;
	}
	if (eval(e, f, n->a, &v))
		return e->d->code;
	return jinja_builtin_print(e, n, &v, out);
}

static enum err exec_if(struct je *e, struct frame *f, const struct jn *n, struct buf *out,
			enum flow *flow)
{
	struct jv c;

	for (;;) {
		if (eval(e, f, n->a, &c))
			return e->d->code;
		if (jinja_value_truthy(&c))
			return exec_list(e, f, &n->l1, out, flow);
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
		return jinja_eval_nomem(e, n);
	for (i = 0; i < items->u.l->n; i++) {
		struct frame *it = frame_new(e, f);
		struct jv c;

		if (!it)
			return jinja_eval_nomem(e, n);
		if (assign(e, it, n->a, items->u.l->v[i]) || eval(e, it, n->c, &c))
			return e->d->code;
		if (jinja_value_truthy(&c) && jinja_value_seq_push(e->a, &kept, items->u.l->v[i]))
			return jinja_eval_nomem(e, n);
	}
	*items = kept;
	return ERR_OK;
}

static enum err exec_for(struct je *e, struct frame *f, const struct jn *n, struct buf *out)
{
	struct jv items, lv = { JV_LOOP, 0, { 0 } };
	struct loop *l = jinja_value_alloc(e->a, sizeof(*l));
	struct frame *it = NULL;
	enum flow flow = FLOW_NORMAL;

	if (!l)
		return jinja_eval_nomem(e, n);
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
			return jinja_eval_nomem(e, n);
		}
		if (step(e, n) || assign(e, it, n->a, l->items->v[l->i]) ||
		    frame_set(e, it, n, "loop", lv))
			return e->d->code;
		flow = FLOW_NORMAL;
		if (exec_list(e, it, &n->l1, out, &flow))
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
		return jinja_eval_nomem(e, n);
	m->def = n;
	m->closure = f;
	m->uses_caller = list_reads(&n->l3, "caller");
	if (list_reads(&n->l3, "varargs") || list_reads(&n->l3, "kwargs"))
		return jinja_eval_refuse(e, n, "a macro reading varargs or kwargs");
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
	return jinja_builtin_print(e, n, &v, out);
}

static enum err exec_filterblock(struct je *e, struct frame *f, const struct jn *n,
				 struct buf *out)
{
	struct jv v;

	if (render_to_str(e, f, n, &n->l1, &v) || eval_filter(e, f, n->c, &v, &v))
		return e->d->code;
	return jinja_builtin_print(e, n, &v, out);
}

static enum err exec_stmt(struct je *e, struct frame *f, const struct jn *n, struct buf *out,
			  enum flow *flow)
{
	struct jv v;

	switch (n->k) {
	case N_DATA:
		return buf_append(out, n->s, n->sn) ? jinja_eval_nomem(e, n) : ERR_OK;
	case N_OUTPUT:
		return exec_output(e, f, n, out);
	case N_IF:
		return exec_if(e, f, n, out, flow);
	case N_FOR:
		return exec_for(e, f, n, out);
	case N_SET:
		if (eval(e, f, n->b, &v))
			return e->d->code;
		return assign(e, f, n->a, v);
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
		return jinja_eval_refuse(e, l->n ? l->v[0] : NULL, "nesting deeper than %d",
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
		return jinja_eval_reject(e, at,
					 "TypeError: macro '%s' takes not more than %zu argument(s)",
					 def->s ? def->s : "caller", def->l1.n);
	for (i = 0; i < def->l1.n; i++) {
		const char *name = def->l1.v[i]->s;
		int found = i < a->npos;

		v = found ? a->pos[i] : jinja_value_undef(name);
		for (k = 0; k < a->nkw; k++)
			if (!strcmp(a->kwn[k], name)) {
				if (found)
					return jinja_eval_reject(e, at,
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
		return jinja_eval_reject(e, at, "TypeError: macro '%s' takes no keyword argument",
					 def->s ? def->s : "caller");
	return ERR_OK;
}

static enum err jinja_eval_call_macro(struct je *e, const struct jn *at, const struct jv *macro,
				      const struct je_args *args, const struct jv *caller, struct jv *out)
{
	const struct macro *m = macro->u.p;
	struct frame *f;

	if (caller && !m->uses_caller)
		return jinja_eval_refuse(e, at, "a call block whose macro does not read caller");
	if (++e->calls > JINJA_MAX_CALLS)
		return jinja_eval_refuse(e, at, "macro calls nested deeper than %d (Python raises "
					 "RecursionError)", JINJA_MAX_CALLS);
	if (!(f = frame_new(e, m->closure)))
		return jinja_eval_nomem(e, at);
	if (bind_params(e, at, m, f, args))
		return e->d->code;
	if (m->uses_caller && frame_set(e, f, at, "caller",
					caller ? *caller : jinja_value_undef("caller")))
		return e->d->code;
	if (render_to_str(e, f, at, &m->def->l3, out))
		return e->d->code;
	e->calls--;
	return ERR_OK;
}

/* --- the loop object --- */

enum err jinja_eval_loop_attr(struct je *e, const struct jn *at, const struct jv *loop,
			      const char *name, struct jv *out)
{
	const struct loop *l = loop->u.p;
	int64_t i = (int64_t)l->i, n = (int64_t)l->items->n;

	if (!strcmp(name, "index"))
		*out = jinja_value_int(i + 1);
	else if (!strcmp(name, "index0"))
		*out = jinja_value_int(i);
	else if (!strcmp(name, "revindex"))
		*out = jinja_value_int(n - i);
	else if (!strcmp(name, "revindex0"))
		*out = jinja_value_int(n - i - 1);
	else if (!strcmp(name, "first"))
		*out = jinja_value_bool(i == 0);
	else if (!strcmp(name, "last"))
		*out = jinja_value_bool(i == n - 1);
	else if (!strcmp(name, "length"))
		*out = jinja_value_int(n);
	else if (!strcmp(name, "depth"))
		*out = jinja_value_int(1);
	else if (!strcmp(name, "depth0"))
		*out = jinja_value_int(0);
	else if (!strcmp(name, "previtem"))
		*out = i > 0 ? l->items->v[i - 1] : jinja_value_undef("previtem");
	else if (!strcmp(name, "nextitem"))
		*out = i + 1 < n ? l->items->v[i + 1] : jinja_value_undef("nextitem");
	else
		return jinja_eval_refuse(e, at, "loop.%s", name);
	return ERR_OK;
}

enum err jinja_eval_render(struct je *e, const struct jn *root, struct buf *out)
{
	struct frame *f = frame_new(e, NULL);
	enum flow flow = FLOW_NORMAL;

	if (!f)
		return jinja_eval_nomem(e, root);
	return exec_list(e, f, &root->l1, out, &flow);
}
