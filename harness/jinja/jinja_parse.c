/* jinja_parse — see jinja_parse.h. A recursive-descent parser that follows
 * jinja2/parser.py (3.1) function by function, so that precedence and the
 * accepted forms are the same. */
#include "jinja_parse.h"

#include <stdio.h>
#include <string.h>

#include "base/mem.h"

/* jinja2's parser.py recurses about 14 Python frames deep per parenthesis
 * and 13 per list or dict bracket, 5 per nested block and 1 per unary
 * operator; past about 975 frames CPython 3.11 raises RecursionError (a
 * template with 70 nested parentheses, or 75 nested lists, fails; 69 and 74
 * render). The parser charges the same weights against this cap. */
#define MAX_PARSE_FRAMES 975

struct ps {
	struct jv_arena *a;
	const struct jl_token *t; /* tokens; the last is JL_EOF */
	size_t n, i;
	struct diag *d;
	int loops; /* enclosing for loops in the current macro */
	int depth; /* parser.py frames of the nesting so far, against MAX_PARSE_FRAMES */
};

static struct jn *parse_expr(struct ps *p, int condexpr);
static struct jn *parse_tuple(struct ps *p, int simplified, int condexpr,
			      const char *end_name, int explicit_parens);
static struct jn *parse_unary(struct ps *p, int with_filter);
static struct jn *parse_primary(struct ps *p);
static struct jn *parse_postfix(struct ps *p, struct jn *node);
static int parse_body(struct ps *p, const char *const *ends, struct jn_list *body);

static const struct jl_token *cur(struct ps *p)
{
	return &p->t[p->i];
}

static const struct jl_token *peek2(struct ps *p)
{
	return p->i + 1 < p->n ? &p->t[p->i + 1] : &p->t[p->n - 1];
}

static void next(struct ps *p)
{
	if (p->i + 1 < p->n)
		p->i++;
}

static struct jn *fail_at(struct ps *p, const struct jl_token *t, enum err code, const char *what,
			  const char *name)
{
	if (p->d->code)
		return NULL;
	if (code == ERR_INPUT)
		diag_fail(p->d, code,
			  "the server would reject this request: template syntax error: "
			  "%s%s%s (template line %u, column %u)", what, name ? " " : "",
			  name ? name : "", t->line, t->col);
	else
		diag_fail(p->d, code,
			  "unsupported in template: %s%s%s (template line %u, column %u)",
			  what, name ? " " : "", name ? name : "", t->line, t->col);
	return NULL;
}

static struct jn *syntax(struct ps *p, const char *what)
{
	return fail_at(p, cur(p), ERR_INPUT, what, NULL);
}

/* Enters a construct that costs `frames` of parser.py recursion at `t`;
 * `what` names it in the refusal. */
static int enter(struct ps *p, const struct jl_token *t, int frames, const char *what)
{
	p->depth += frames;
	if (p->depth <= MAX_PARSE_FRAMES)
		return 0;
	fail_at(p, t, ERR_LIMIT, what, "(Python raises RecursionError)");
	return -1;
}

/* A failed allocation of `n` bytes at the current token: the template's
 * memory cap (ERR_LIMIT, with the position) or exhausted memory. */
static void nomem(struct ps *p, size_t n)
{
	if (p->d->code)
		return;
	char what[96];

	if (!jinja_value_arena_full(p->a, n)) {
		diag_fail(p->d, ERR_NOMEM, "out of memory");
		return;
	}
	snprintf(what, sizeof(what), "the parsed template would take more than %zu bytes",
		 p->a->max);
	fail_at(p, cur(p), ERR_LIMIT, what, NULL);
}

static struct jn *node(struct ps *p, enum jn_kind k, const struct jl_token *at)
{
	struct jn *n = jinja_value_alloc(p->a, sizeof(*n));

	if (!n) {
		nomem(p, sizeof(*n));
		return NULL;
	}
	n->k = k;
	n->line = at->line;
	n->col = at->col;
	return n;
}

static int push(struct ps *p, struct jn_list *l, struct jn *x)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct jn **v = jinja_value_alloc(p->a, cap * sizeof(*v));

		if (!v) {
			nomem(p, cap * sizeof(*v));
			return -1;
		}
		if (l->n)
			memcpy(v, l->v, l->n * sizeof(*v));
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = x;
	return 0;
}

static int is_op(const struct jl_token *t, const char *op)
{
	return t->t == JL_OP && t->n == strlen(op) && !memcmp(t->s, op, t->n);
}

static int is_name(const struct jl_token *t, const char *name)
{
	return t->t == JL_NAME && t->n == strlen(name) && !memcmp(t->s, name, t->n);
}

static int skip_op(struct ps *p, const char *op)
{
	if (!is_op(cur(p), op))
		return 0;
	next(p);
	return 1;
}

static int skip_name(struct ps *p, const char *name)
{
	if (!is_name(cur(p), name))
		return 0;
	next(p);
	return 1;
}

static int expect_op(struct ps *p, const char *op)
{
	char msg[64];

	if (skip_op(p, op))
		return 0;
	snprintf(msg, sizeof(msg), "expected '%s'", op);
	syntax(p, msg);
	return -1;
}

static int expect_type(struct ps *p, enum jl_type t, const char *what)
{
	if (cur(p)->t == t) {
		next(p);
		return 0;
	}
	syntax(p, what);
	return -1;
}

/* A NUL-terminated copy of the token's text. */
static const char *tok_str(struct ps *p, const struct jl_token *t)
{
	char *s = jinja_value_alloc(p->a, t->n + 1);

	if (!s) {
		nomem(p, t->n + 1);
		return NULL;
	}
	memcpy(s, t->s, t->n);
	return s;
}

/* --- expressions --- */

static int parse_call_args(struct ps *p, struct jn *call)
{
	const struct jl_token *t;
	struct jn *x, *kw;

	if (expect_op(p, "("))
		return -1;
	while (!is_op(cur(p), ")")) {
		if ((call->l1.n || call->l2.n) && expect_op(p, ","))
			return -1;
		if (is_op(cur(p), ")"))
			break;
		t = cur(p);
		if (is_op(t, "*") || is_op(t, "**")) {
			fail_at(p, t, ERR_UNSUPPORTED, "*args or **kwargs in a call", NULL);
			return -1;
		}
		if (t->t == JL_NAME && is_op(peek2(p), "=")) {
			next(p);
			next(p);
			if (!(kw = node(p, N_KWARG, t)) || !(kw->s = tok_str(p, t)) ||
			    !(kw->a = parse_expr(p, 1)) || push(p, &call->l2, kw))
				return -1;
			continue;
		}
		if (call->l2.n) {
			syntax(p, "invalid syntax for function call expression");
			return -1;
		}
		if (!(x = parse_expr(p, 1)) || push(p, &call->l1, x))
			return -1;
	}
	next(p);
	return 0;
}

/* name(.name)* as used by filters and tests. */
static const char *dotted_name(struct ps *p)
{
	const struct jl_token *t = cur(p);

	if (t->t != JL_NAME) {
		syntax(p, "expected a filter or test name");
		return NULL;
	}
	next(p);
	if (is_op(cur(p), ".")) {
		fail_at(p, t, ERR_UNSUPPORTED, "a dotted filter or test name", NULL);
		return NULL;
	}
	return tok_str(p, t);
}

static struct jn *parse_filter(struct ps *p, struct jn *input, int start_inline)
{
	while (start_inline || is_op(cur(p), "|")) {
		const struct jl_token *t;
		struct jn *f;

		if (!start_inline)
			next(p);
		start_inline = 0;
		t = cur(p);
		if (!(f = node(p, N_FILTER, t)) || !(f->s = dotted_name(p)))
			return NULL;
		f->a = input;
		if (is_op(cur(p), "(") && parse_call_args(p, f))
			return NULL;
		input = f;
	}
	return input;
}

static int test_arg_start(const struct jl_token *t)
{
	if (t->t == JL_NAME)
		return !is_name(t, "else") && !is_name(t, "or") && !is_name(t, "and");
	return t->t == JL_STRING || t->t == JL_INT || t->t == JL_FLOAT || is_op(t, "(") ||
	       is_op(t, "[") || is_op(t, "{");
}

static struct jn *parse_test(struct ps *p, struct jn *input)
{
	const struct jl_token *t = cur(p);
	struct jn *n, *arg;

	next(p); /* is */
	if (!(n = node(p, N_TEST, t)))
		return NULL;
	n->op = skip_name(p, "not");
	if (!(n->s = dotted_name(p)))
		return NULL;
	n->a = input;
	if (is_op(cur(p), "(")) {
		if (parse_call_args(p, n))
			return NULL;
	} else if (test_arg_start(cur(p))) {
		if (is_name(cur(p), "is"))
			return syntax(p, "you cannot chain multiple tests with is");
		if (!(arg = parse_primary(p)) || !(arg = parse_postfix(p, arg)) ||
		    push(p, &n->l1, arg))
			return NULL;
	}
	return n;
}

/* `callee(...)`: a call node over `callee`, the arguments parsed. */
static struct jn *parse_call(struct ps *p, struct jn *callee)
{
	struct jn *c = node(p, N_CALL, cur(p));

	if (!c || parse_call_args(p, c))
		return NULL;
	c->a = callee;
	return c;
}

static struct jn *parse_filter_expr(struct ps *p, struct jn *n)
{
	while (n) {
		if (is_op(cur(p), "|")) {
			n = parse_filter(p, n, 0);
		} else if (is_name(cur(p), "is")) {
			n = parse_test(p, n);
		} else if (is_op(cur(p), "(")) {
			n = parse_call(p, n);
		} else {
			break;
		}
	}
	return n;
}

static struct jn *parse_subscribed(struct ps *p)
{
	const struct jl_token *t = cur(p);
	struct jn *s, *first = NULL;

	if (!is_op(t, ":")) {
		if (!(first = parse_expr(p, 1)))
			return NULL;
		if (!is_op(cur(p), ":"))
			return first;
	}
	next(p);
	if (!(s = node(p, N_SLICE, t)))
		return NULL;
	s->b = first;
	if (!is_op(cur(p), "]") && !is_op(cur(p), ",") && !is_op(cur(p), ":") &&
	    !(s->c = parse_expr(p, 1)))
		return NULL;
	if (skip_op(p, ":") && !is_op(cur(p), "]") && !is_op(cur(p), ",") &&
	    !(s->d = parse_expr(p, 1)))
		return NULL;
	return s;
}

static struct jn *parse_subscript(struct ps *p, struct jn *obj)
{
	const struct jl_token *t = cur(p);
	struct jn *n, *idx;

	next(p);
	if (is_op(t, ".")) {
		const struct jl_token *a = cur(p);

		if (a->t == JL_NAME) {
			next(p);
			if (!(n = node(p, N_GETATTR, t)) || !(n->s = tok_str(p, a)))
				return NULL;
			n->sn = a->n;
			n->a = obj;
			return n;
		}
		if (a->t != JL_INT)
			return syntax(p, "expected name or number");
		next(p);
		if (!(n = node(p, N_GETITEM, t)) || !(idx = node(p, N_CONST, a)))
			return NULL;
		idx->v = jinja_value_int(a->i);
		n->a = obj;
		n->b = idx;
		return n;
	}
	if (!(idx = parse_subscribed(p)))
		return NULL;
	if (is_op(cur(p), ","))
		return fail_at(p, cur(p), ERR_UNSUPPORTED, "a tuple subscript", NULL);
	if (expect_op(p, "]"))
		return NULL;
	if (idx->k == N_SLICE) {
		idx->a = obj;
		return idx;
	}
	if (!(n = node(p, N_GETITEM, t)))
		return NULL;
	n->a = obj;
	n->b = idx;
	return n;
}

static struct jn *parse_postfix(struct ps *p, struct jn *n)
{
	while (n) {
		if (is_op(cur(p), ".") || is_op(cur(p), "[")) {
			n = parse_subscript(p, n);
		} else if (is_op(cur(p), "(")) {
			n = parse_call(p, n);
		} else {
			break;
		}
	}
	return n;
}

static struct jn *parse_string(struct ps *p, const struct jl_token *t)
{
	struct buf b;
	struct jn *n = node(p, N_CONST, t);

	buf_init(&b, BUF_MAX_DEFAULT);
	while (n && cur(p)->t == JL_STRING) {
		if (buf_append(&b, cur(p)->s, cur(p)->n)) {
			diag_fail(p->d, ERR_NOMEM, "out of memory");
			n = NULL;
		}
		next(p);
	}
	if (n && jinja_value_str_buf(p->a, &b, &n->v)) {
		nomem(p, b.len + 1);
		n = NULL;
	}
	buf_release(&b);
	return n;
}

/* An integer literal beyond 64 bits: a JV_BIGINT of its digits (jinja2's
 * lexer allows no leading zero before other digits). */
static struct jn *parse_big(struct ps *p, const struct jl_token *t)
{
	struct buf b;
	struct jn *n = node(p, N_CONST, t);
	size_t i;

	buf_init(&b, BUF_MAX_DEFAULT);
	for (i = 0; n && i < t->n; i++)
		if (t->s[i] != '_' && buf_putc(&b, t->s[i])) {
			diag_fail(p->d, ERR_NOMEM, "out of memory");
			n = NULL;
		}
	if (n && b.len > JV_BIGINT_MAX_DIGITS)
		n = fail_at(p, t, ERR_UNSUPPORTED, "an integer literal of more than 4300 digits (Python raises ValueError)",
			    NULL);
	if (n && jinja_value_str_buf(p->a, &b, &n->v)) {
		nomem(p, b.len + 1);
		n = NULL;
	}
	if (n)
		n->v.k = JV_BIGINT;
	buf_release(&b);
	return n;
}

static struct jn *parse_const_name(struct ps *p, const struct jl_token *t)
{
	struct jn *n;

	next(p);
	if (is_name(t, "true") || is_name(t, "True") || is_name(t, "false") ||
	    is_name(t, "False")) {
		if ((n = node(p, N_CONST, t)))
			n->v = jinja_value_bool(t->s[0] == 't' || t->s[0] == 'T');
		return n;
	}
	if (is_name(t, "none") || is_name(t, "None")) {
		if ((n = node(p, N_CONST, t)))
			n->v = jinja_value_none();
		return n;
	}
	if (!(n = node(p, N_NAME, t)) || !(n->s = tok_str(p, t)))
		return NULL;
	n->sn = t->n;
	return n;
}

static struct jn *parse_list_or_dict(struct ps *p, int dict)
{
	const struct jl_token *t = cur(p);
	struct jn *n = node(p, dict ? N_DICT : N_LIST, t), *x;

	next(p);
	while (n && !is_op(cur(p), dict ? "}" : "]")) {
		if (n->l1.n && expect_op(p, ","))
			return NULL;
		if (is_op(cur(p), dict ? "}" : "]"))
			break;
		if (!(x = parse_expr(p, 1)) || push(p, &n->l1, x))
			return NULL;
		if (dict && (expect_op(p, ":") || !(x = parse_expr(p, 1)) || push(p, &n->l2, x)))
			return NULL;
	}
	if (n)
		next(p);
	return n;
}

static struct jn *parse_primary(struct ps *p)
{
	const struct jl_token *t = cur(p);
	int frames = is_op(t, "(") ? 14 : is_op(t, "[") || is_op(t, "{") ? 13 : 0;
	struct jn *n;

	if (enter(p, t, frames, "expression nested too deeply"))
		return NULL;
	switch (t->t) {
	case JL_NAME:
		n = parse_const_name(p, t);
		break;
	case JL_STRING:
		n = parse_string(p, t);
		break;
	case JL_INT:
	case JL_FLOAT:
		next(p);
		if (t->big)
			n = parse_big(p, t);
		else if ((n = node(p, N_CONST, t)))
			n->v = t->t == JL_INT ? jinja_value_int(t->i) : jinja_value_float(t->f);
		break;
	default:
		if (is_op(t, "(")) {
			next(p);
			n = parse_tuple(p, 0, 1, NULL, 1);
			if (n && expect_op(p, ")"))
				n = NULL;
		} else if (is_op(t, "[") || is_op(t, "{")) {
			n = parse_list_or_dict(p, is_op(t, "{"));
		} else {
			n = syntax(p,
				   t->t == JL_EOF ? "unexpected end of template" : "unexpected token");
		}
	}
	p->depth -= frames;
	return n;
}

static struct jn *parse_unary(struct ps *p, int with_filter)
{
	const struct jl_token *t = cur(p);
	struct jn *n;

	if (is_op(t, "-") || is_op(t, "+")) {
		next(p);
		if (enter(p, t, 1, "expression nested too deeply"))
			return NULL;
		if (!(n = node(p, is_op(t, "-") ? N_NEG : N_POS, t)) || !(n->a = parse_unary(p, 0)))
			return NULL;
		p->depth--;
	} else if (!(n = parse_primary(p))) {
		return NULL;
	}
	n = parse_postfix(p, n);
	return with_filter ? parse_filter_expr(p, n) : n;
}

static struct jn *binop(struct ps *p, const struct jl_token *t, int op, struct jn *a,
			struct jn *b)
{
	struct jn *n;

	if (!a || !b || !(n = node(p, N_BINOP, t)))
		return NULL;
	n->op = op;
	n->a = a;
	n->b = b;
	return n;
}

static struct jn *parse_pow(struct ps *p)
{
	struct jn *l = parse_unary(p, 1);

	while (l && is_op(cur(p), "**")) {
		const struct jl_token *t = cur(p);

		next(p);
		l = binop(p, t, 'p', l, parse_unary(p, 1));
	}
	return l;
}

static struct jn *parse_math2(struct ps *p)
{
	struct jn *l = parse_pow(p);

	for (;;) {
		const struct jl_token *t = cur(p);
		int op = is_op(t, "*") ? '*' : is_op(t, "/") ? '/' : is_op(t, "//") ? 'f'
			 : is_op(t, "%") ? '%' : 0;

		if (!l || !op)
			return l;
		next(p);
		l = binop(p, t, op, l, parse_pow(p));
	}
}

/* Operands lo..hi-1 of a `~` chain joined as a balanced tree: jinja2's
 * Concat is one flat node (a chain of 20,000 compiles), and `~` is
 * associative, so the tree stays log2(n) deep. ops->v[i] is the `~` node
 * between operands i and i+1, already made. */
static struct jn *concat_tree(const struct jn_list *args, const struct jn_list *ops, size_t lo,
			      size_t hi)
{
	size_t mid = lo + (hi - lo) / 2;
	struct jn *n;

	if (hi - lo == 1)
		return args->v[lo];
	n = ops->v[mid - 1];
	n->a = concat_tree(args, ops, lo, mid);
	n->b = concat_tree(args, ops, mid, hi);
	return n;
}

static struct jn *parse_concat(struct ps *p)
{
	struct jn_list args = { NULL, 0, 0 }, ops = { NULL, 0, 0 };
	struct jn *x = parse_math2(p), *op;

	if (!x || !is_op(cur(p), "~"))
		return x;
	if (push(p, &args, x))
		return NULL;
	while (is_op(cur(p), "~")) {
		if (!(op = node(p, N_BINOP, cur(p))))
			return NULL;
		op->op = '~';
		next(p);
		if (!(x = parse_math2(p)) || push(p, &ops, op) || push(p, &args, x))
			return NULL;
	}
	return concat_tree(&args, &ops, 0, args.n);
}

static struct jn *parse_math1(struct ps *p)
{
	struct jn *l = parse_concat(p);

	for (;;) {
		const struct jl_token *t = cur(p);
		int op = is_op(t, "+") ? '+' : is_op(t, "-") ? '-' : 0;

		if (!l || !op)
			return l;
		next(p);
		l = binop(p, t, op, l, parse_concat(p));
	}
}

static int cmp_op(struct ps *p)
{
	static const char *const ops[] = { "==", "!=", "<", ">", "<=", ">=" };
	static const char codes[] = "en<>lg";
	size_t k;

	for (k = 0; k < 6; k++)
		if (is_op(cur(p), ops[k])) {
			next(p);
			return codes[k];
		}
	if (skip_name(p, "in"))
		return 'i';
	if (is_name(cur(p), "not") && is_name(peek2(p), "in")) {
		next(p);
		next(p);
		return 'I';
	}
	return 0;
}

static struct jn *parse_compare(struct ps *p)
{
	const struct jl_token *t = cur(p);
	struct jn *first = parse_math1(p), *n = NULL, *o;
	int op;

	while (first && (op = cmp_op(p))) {
		if (!n) {
			if (!(n = node(p, N_COMPARE, t)))
				return NULL;
			n->a = first;
		}
		if (!(o = node(p, N_CMPOP, t)) || !(o->a = parse_math1(p)) || push(p, &n->l1, o))
			return NULL;
		o->op = op;
	}
	return n ? n : first;
}

static struct jn *parse_not(struct ps *p)
{
	const struct jl_token *t = cur(p);
	struct jn *n;

	if (!is_name(t, "not"))
		return parse_compare(p);
	next(p);
	if (enter(p, t, 1, "expression nested too deeply"))
		return NULL;
	if (!(n = node(p, N_NOT, t)) || !(n->a = parse_not(p)))
		return NULL;
	p->depth--;
	return n;
}

static struct jn *parse_andor(struct ps *p, int is_or)
{
	struct jn *l = is_or ? parse_andor(p, 0) : parse_not(p), *n;

	while (l && is_name(cur(p), is_or ? "or" : "and")) {
		const struct jl_token *t = cur(p);

		next(p);
		if (!(n = node(p, is_or ? N_OR : N_AND, t)))
			return NULL;
		n->a = l;
		if (!(n->b = is_or ? parse_andor(p, 0) : parse_not(p)))
			return NULL;
		l = n;
	}
	return l;
}

static struct jn *parse_condexpr(struct ps *p)
{
	struct jn *e1 = parse_andor(p, 1), *n;

	while (e1 && is_name(cur(p), "if")) {
		const struct jl_token *t = cur(p);

		next(p);
		if (!(n = node(p, N_COND, t)) || !(n->a = parse_andor(p, 1)))
			return NULL;
		n->b = e1;
		if (skip_name(p, "else") && !(n->c = parse_condexpr(p)))
			return NULL;
		e1 = n;
	}
	return e1;
}

static struct jn *parse_expr(struct ps *p, int condexpr)
{
	return condexpr ? parse_condexpr(p) : parse_andor(p, 1);
}

static int tuple_end(struct ps *p, const char *end_name)
{
	const struct jl_token *t = cur(p);

	return t->t == JL_VAR_END || t->t == JL_BLOCK_END || t->t == JL_EOF || is_op(t, ")") ||
	       (end_name && is_name(t, end_name));
}

static struct jn *parse_tuple(struct ps *p, int simplified, int condexpr,
			      const char *end_name, int explicit_parens)
{
	const struct jl_token *t = cur(p);
	struct jn *tup, *x;
	int is_tuple = 0;

	if (!(tup = node(p, N_TUPLE, t)))
		return NULL;
	for (;;) {
		if (tup->l1.n && expect_op(p, ","))
			return NULL;
		if (tuple_end(p, end_name))
			break;
		x = simplified ? parse_primary(p) : parse_expr(p, condexpr);
		if (!x || push(p, &tup->l1, x))
			return NULL;
		if (is_op(cur(p), ","))
			is_tuple = 1;
		else
			break;
	}
	if (!is_tuple) {
		if (tup->l1.n)
			return tup->l1.v[0];
		if (!explicit_parens)
			return syntax(p, "expected an expression");
	}
	return tup;
}

/* --- statements --- */

static int can_assign(const struct jn *t)
{
	size_t i;

	if (t->k == N_NAME)
		return 1;
	if (t->k != N_TUPLE)
		return 0;
	for (i = 0; i < t->l1.n; i++)
		if (t->l1.v[i]->k != N_NAME)
			return 0;
	return 1;
}

static struct jn *assign_target(struct ps *p, const char *end_name, int with_ns, int name_only)
{
	const struct jl_token *t = cur(p);
	struct jn *target;

	if (with_ns && t->t == JL_NAME && is_op(peek2(p), ".")) {
		struct jn *ns;

		next(p);
		next(p);
		if (cur(p)->t != JL_NAME)
			return syntax(p, "expected name");
		if (!(ns = node(p, N_NAME, t)) || !(ns->s = tok_str(p, t)) ||
		    !(target = node(p, N_GETATTR, t)) || !(target->s = tok_str(p, cur(p))))
			return NULL;
		ns->sn = t->n;
		target->sn = cur(p)->n;
		target->a = ns;
		next(p);
		return target;
	}
	if (name_only) {
		if (t->t != JL_NAME)
			return syntax(p, "expected name");
		return parse_const_name(p, t);
	}
	if (!(target = parse_tuple(p, 1, 1, end_name, 0)))
		return NULL;
	if (!can_assign(target))
		return fail_at(p, t, ERR_INPUT, "can't assign to this target", NULL);
	return target;
}

static int block_end(struct ps *p)
{
	return expect_type(p, JL_BLOCK_END, "expected end of statement block");
}

/* parse_statements: the header's block end, then the body up to one of
 * `ends` (left as the current token). */
static int statements(struct ps *p, const char *const *ends, struct jn_list *body)
{
	if (block_end(p))
		return -1;
	return parse_body(p, ends, body);
}

static int reads_loop(const struct jn *target)
{
	size_t i;

	if (target->k == N_NAME)
		return !strcmp(target->s, "loop");
	for (i = 0; i < target->l1.n; i++)
		if (reads_loop(target->l1.v[i]))
			return 1;
	return 0;
}

static struct jn *parse_for(struct ps *p, const struct jl_token *t)
{
	static const char *const ends[] = { "endfor", "else", NULL };
	static const char *const end_else[] = { "endfor", NULL };
	struct jn *n = node(p, N_FOR, t);

	if (!n || !(n->a = assign_target(p, "in", 0, 0)))
		return NULL;
	if (reads_loop(n->a))
		return fail_at(p, t, ERR_INPUT,
			       "can't assign to special loop variable in for-loop target",
			       NULL);
	if (!skip_name(p, "in"))
		return syntax(p, "expected 'in'");
	if (!(n->b = parse_tuple(p, 0, 0, "recursive", 0)))
		return NULL;
	if (skip_name(p, "if") && !(n->c = parse_expr(p, 1)))
		return NULL;
	if (is_name(cur(p), "recursive"))
		return fail_at(p, cur(p), ERR_UNSUPPORTED, "recursive for loops", NULL);
	p->loops++;
	if (statements(p, ends, &n->l1))
		return NULL;
	p->loops--;
	if (skip_name(p, "else") && statements(p, end_else, &n->l2))
		return NULL;
	next(p); /* endfor */
	return n;
}

static struct jn *parse_if(struct ps *p, const struct jl_token *t)
{
	static const char *const ends[] = { "elif", "else", "endif", NULL };
	static const char *const end_if[] = { "endif", NULL };
	struct jn *top = NULL, *n, *prev = NULL;

	for (;;) {
		if (!(n = node(p, N_IF, t)) || !(n->a = parse_tuple(p, 0, 0, NULL, 0)))
			return NULL;
		n->op = prev ? 'e' : 0;
		if (prev && push(p, &prev->l2, n))
			return NULL;
		if (!top)
			top = n;
		if (statements(p, ends, &n->l1))
			return NULL;
		t = cur(p);
		if (skip_name(p, "elif")) {
			prev = n;
			continue;
		}
		if (skip_name(p, "else") && statements(p, end_if, &n->l2))
			return NULL;
		next(p); /* endif */
		return top;
	}
}

static struct jn *parse_set(struct ps *p, const struct jl_token *t)
{
	static const char *const ends[] = { "endset", NULL };
	struct jn *target = assign_target(p, NULL, 1, 0), *n;

	if (!target)
		return NULL;
	if (skip_op(p, "=")) {
		if (!(n = node(p, N_SET, t)) || !(n->b = parse_tuple(p, 0, 1, NULL, 0)))
			return NULL;
		n->a = target;
		return n;
	}
	if (!(n = node(p, N_SETBLOCK, t)))
		return NULL;
	n->a = target;
	if (is_op(cur(p), "|") && !(n->c = parse_filter(p, NULL, 0)))
		return NULL;
	if (statements(p, ends, &n->l1))
		return NULL;
	next(p);
	return n;
}

static int parse_signature(struct ps *p, struct jn *n)
{
	struct jn *arg, *def;

	if (expect_op(p, "("))
		return -1;
	while (!is_op(cur(p), ")")) {
		if (n->l1.n && expect_op(p, ","))
			return -1;
		if (!(arg = assign_target(p, NULL, 0, 1)))
			return -1;
		if (arg->k != N_NAME) {
			fail_at(p, cur(p), ERR_INPUT, "can't assign to this target", NULL);
			return -1;
		}
		def = NULL;
		if (skip_op(p, "=")) {
			if (!(def = parse_expr(p, 1)))
				return -1;
		} else if (n->l2.n && n->l2.v[n->l2.n - 1]) {
			syntax(p, "non-default argument follows default argument");
			return -1;
		}
		if (push(p, &n->l1, arg) || push(p, &n->l2, def))
			return -1;
	}
	next(p);
	return 0;
}

static struct jn *parse_macro_like(struct ps *p, const struct jl_token *t, int is_call)
{
	static const char *const end_macro[] = { "endmacro", NULL };
	static const char *const end_call[] = { "endcall", NULL };
	struct jn *n = node(p, is_call ? N_CALLBLOCK : N_MACRO, t), *name;
	int loops = p->loops;

	if (!n)
		return NULL;
	if (is_call) {
		if (is_op(cur(p), "(") && parse_signature(p, n))
			return NULL;
		if (!(n->a = parse_expr(p, 1)))
			return NULL;
		if (n->a->k != N_CALL)
			return fail_at(p, t, ERR_INPUT, "expected call", NULL);
	} else {
		if (!(name = assign_target(p, NULL, 0, 1)) || name->k != N_NAME)
			return p->d->code ? NULL : syntax(p, "expected a macro name");
		n->s = name->s;
		if (parse_signature(p, n))
			return NULL;
	}
	p->loops = 0;
	if (statements(p, is_call ? end_call : end_macro, &n->l3))
		return NULL;
	p->loops = loops;
	next(p);
	return n;
}

static struct jn *parse_simple_block(struct ps *p, const struct jl_token *t, int is_filter)
{
	static const char *const end_filter[] = { "endfilter", NULL };
	static const char *const end_gen[] = { "endgeneration", NULL };
	struct jn *n = node(p, is_filter ? N_FILTERBLOCK : N_BODY, t);

	if (!n)
		return NULL;
	if (is_filter && !(n->c = parse_filter(p, NULL, 1)))
		return NULL;
	if (statements(p, is_filter ? end_filter : end_gen, &n->l1))
		return NULL;
	next(p);
	return n;
}

static struct jn *parse_statement(struct ps *p)
{
	static const char *const unsupported[] = { "include", "extends", "import", "from",
						   "block", "with", "autoescape", NULL };
	const struct jl_token *t = cur(p);
	struct jn *n;
	size_t k;

	if (t->t != JL_NAME)
		return syntax(p, "tag name expected");
	next(p);
	if (is_name(t, "for"))
		return parse_for(p, t);
	if (is_name(t, "if"))
		return parse_if(p, t);
	if (is_name(t, "set"))
		return parse_set(p, t);
	if (is_name(t, "macro") || is_name(t, "call"))
		return parse_macro_like(p, t, is_name(t, "call"));
	if (is_name(t, "filter") || is_name(t, "generation"))
		return parse_simple_block(p, t, is_name(t, "filter"));
	if (is_name(t, "print")) {
		if (!(n = node(p, N_OUTPUT, t)) || !(n->a = parse_tuple(p, 0, 1, NULL, 0)))
			return NULL;
		return n;
	}
	if (is_name(t, "break") || is_name(t, "continue")) {
		if (!p->loops)
			return fail_at(p, t, ERR_INPUT, "'break' or 'continue' outside a loop",
				       NULL);
		return node(p, is_name(t, "break") ? N_BREAK : N_CONTINUE, t);
	}
	for (k = 0; unsupported[k]; k++)
		if (is_name(t, unsupported[k]))
			return fail_at(p, t, ERR_UNSUPPORTED, "the statement", unsupported[k]);
	return fail_at(p, t, ERR_INPUT, "encountered an unknown tag", tok_str(p, t));
}

static int is_end(struct ps *p, const char *const *ends)
{
	size_t k;

	for (k = 0; ends && ends[k]; k++)
		if (is_name(cur(p), ends[k]))
			return 1;
	return 0;
}

static int parse_output(struct ps *p, struct jn_list *body)
{
	const struct jl_token *t = cur(p);
	struct jn *n;

	next(p);
	if (!(n = node(p, N_OUTPUT, t)) || !(n->a = parse_tuple(p, 0, 1, NULL, 0)) ||
	    expect_type(p, JL_VAR_END, "expected end of print statement"))
		return -1;
	return push(p, body, n);
}

/* subparse: data, prints and statements until a block starting with one of
 * `ends` (NULL: until the end of the template). */
static int parse_body(struct ps *p, const char *const *ends, struct jn_list *body)
{
	struct jn *n;

	if (enter(p, cur(p), 5, "blocks nested too deeply"))
		return -1;
	for (;;) {
		const struct jl_token *t = cur(p);

		if (t->t == JL_EOF) {
			if (ends) {
				syntax(p, "unexpected end of template");
				return -1;
			}
			break;
		}
		if (t->t == JL_DATA) {
			if (!(n = node(p, N_DATA, t)))
				return -1;
			n->s = t->s;
			n->sn = t->n;
			next(p);
			if (push(p, body, n))
				return -1;
		} else if (t->t == JL_VAR_BEGIN) {
			if (parse_output(p, body))
				return -1;
		} else if (t->t == JL_BLOCK_BEGIN) {
			next(p);
			if (is_end(p, ends))
				break;
			if (!(n = parse_statement(p)) || push(p, body, n) || block_end(p))
				return -1;
		} else {
			syntax(p, "unexpected token");
			return -1;
		}
	}
	p->depth -= 5;
	return 0;
}

/* --- compile-time checks --- */

/* Jinja 3.1's filters and tests (plus transformers' tojson): a name outside
 * these fails at compile time (compiler.py _filter_test_common) unless the
 * use sits in an if statement or a conditional expression of the same frame
 * ("soft" frames), where the failure is deferred to the call. */
static const char *const known_filters[] = {
	"abs", "attr", "batch", "capitalize", "center", "count", "d", "default", "dictsort", "e",
	"escape", "filesizeformat", "first", "float", "forceescape", "format", "groupby", "indent",
	"int", "items", "join", "last", "length", "list", "lower", "map", "max", "min", "pprint",
	"random", "reject", "rejectattr", "replace", "reverse", "round", "safe", "select",
	"selectattr", "slice", "sort", "string", "striptags", "sum", "title", "tojson", "trim",
	"truncate", "unique", "upper", "urlencode", "urlize", "wordcount", "wordwrap", "xmlattr",
	NULL
};
static const char *const known_tests[] = {
	"!=", "<", "<=", "==", ">", ">=", "boolean", "callable", "defined", "divisibleby", "eq",
	"equalto", "escaped", "even", "false", "filter", "float", "ge", "greaterthan", "gt", "in",
	"integer", "iterable", "le", "lessthan", "lower", "lt", "mapping", "ne", "none", "number",
	"odd", "sameas", "sequence", "string", "test", "true", "undefined", "upper", NULL
};

static int known(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return 1;
	return 0;
}

static enum err check_node(const struct jn *n, int soft, struct diag *d);

static enum err check_list(const struct jn_list *l, int soft, struct diag *d)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (check_node(l->v[i], soft, d))
			return d->code;
	return ERR_OK;
}

/* Walks the tree as compiler.py's frames go: if statements and conditional
 * expressions are soft, loop bodies, macros and blocks start hard again. */
static enum err check_node(const struct jn *n, int soft, struct diag *d)
{
	int inner = soft;

	if (!n)
		return ERR_OK;
	if ((n->k == N_FILTER || n->k == N_TEST) && !soft &&
	    !known(n->k == N_FILTER ? known_filters : known_tests, n->s))
		return diag_fail(d, ERR_INPUT, "the server would reject this request: template "
				 "assertion error: no %s named '%s' (template line %u, column %u)",
				 n->k == N_FILTER ? "filter" : "test", n->s, n->line, n->col);
	if (n->k == N_IF || n->k == N_COND)
		inner = 1;
	else if (n->k == N_MACRO || n->k == N_CALLBLOCK || n->k == N_FILTERBLOCK ||
		 n->k == N_SETBLOCK || n->k == N_BODY)
		inner = 0;
	if (n->k == N_FOR) {
		if (check_node(n->b, soft, d) || check_node(n->a, 0, d) || check_node(n->c, 0, d) ||
		    check_list(&n->l1, 0, d) || check_list(&n->l2, 0, d))
			return d->code;
		return ERR_OK;
	}
	if (n->k == N_CALLBLOCK && check_node(n->a, soft, d))
		return d->code;
	if ((n->k != N_CALLBLOCK && check_node(n->a, inner, d)) || check_node(n->b, inner, d) ||
	    check_node(n->c, inner, d) || check_node(n->d, inner, d) || check_list(&n->l1, inner, d) ||
	    check_list(&n->l2, inner, d) || check_list(&n->l3, inner, d))
		return d->code;
	return ERR_OK;
}

/* --- what CPython can compile ---
 *
 * Limits of compiling a template, measured with jinja2 3.1 on CPython 3.11
 * (a template past one fails to compile, so the server answers 400 whether or
 * not the construct would run):
 *   - compiler.py's visitor recursion, in half frames: 6 per filter, 4 per
 *     other expression node, 2 per name or constant, 3 per if or for, 4 per
 *     print or set, and 6 more for the expression an if, for or set
 *     evaluates. A print of 327 chained filters or 490 chained binary
 *     operators compiles, 328 and 491 raise RecursionError; 324 filters
 *     inside five nested ifs or loops compile, 325 do not.
 *   - nested parentheses in the generated line: one per attribute or item
 *     access (a chain of 198 fails with "too many nested parentheses");
 *   - indentation: one level per block statement (99 nested ifs fail with
 *     "too many levels of indentation");
 *   - statically nested loops: 21 nested for loops in one macro or in the
 *     template body fail ("too many statically nested blocks");
 *   - CPython's compiler recursion: an if with 2,978 elifs fails.
 * Past any of these needle refuses (ERR_LIMIT) at the node that crosses it,
 * so every walk over the tree recurses at most MAX_HALF_FRAMES / 2 deep. */
#define MAX_HALF_FRAMES 1968
#define MAX_PARENS 197
#define MAX_INDENT 98
#define MAX_LOOPS 20
#define MAX_ELIFS 2970

struct nest {
	int half_frames, parens, indent, loops;
};

static int half_frames(const struct jn *n)
{
	switch (n->k) {
	case N_FILTER:
		return 6;
	case N_CONST:
	case N_NAME:
	case N_DATA:
	case N_KWARG:
	case N_CMPOP:
	case N_BREAK:
	case N_CONTINUE:
		return 2;
	case N_IF:
	case N_FOR:
		return 3;
	case N_MACRO:
	case N_BODY:
		return 0;
	default:
		return 4;
	}
}

static int is_block(const struct jn *n)
{
	return n->k == N_IF || n->k == N_FOR || n->k == N_MACRO || n->k == N_CALLBLOCK ||
	       n->k == N_FILTERBLOCK || n->k == N_SETBLOCK;
}

static enum err depth_node(const struct jn *n, struct nest k, struct diag *d);

static enum err depth_list(const struct jn_list *l, struct nest k, struct diag *d)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (depth_node(l->v[i], k, d))
			return d->code;
	return ERR_OK;
}

static enum err too_deep(const struct jn *n, const char *what, struct diag *d)
{
	return diag_fail(d, ERR_LIMIT, "unsupported in template: %s (Python cannot compile it) "
			 "(template line %u, column %u)", what, n->line, n->col);
}

/* An if and its elifs, one after the other (an elif is no deeper than its if). */
static enum err depth_if(const struct jn *n, struct nest k, struct diag *d)
{
	struct nest cond = k;
	int elifs = 0;

	cond.half_frames += 6;
	for (;;) {
		if (depth_node(n->a, cond, d) || depth_list(&n->l1, k, d))
			return d->code;
		if (n->l2.n != 1 || n->l2.v[0]->op != 'e')
			return depth_list(&n->l2, k, d);
		n = n->l2.v[0];
		if (++elifs > MAX_ELIFS)
			return too_deep(n, "an if with more than 2970 elifs", d);
	}
}

/* Checks the limits above on the tree under `n`, entered with `k`. */
static enum err depth_node(const struct jn *n, struct nest k, struct diag *d)
{
	struct nest cond;

	if (!n)
		return ERR_OK;
	k.half_frames += half_frames(n);
	k.parens += n->k == N_GETATTR || n->k == N_GETITEM || n->k == N_SLICE;
	k.indent += is_block(n);
	k.loops = n->k == N_MACRO || n->k == N_CALLBLOCK ? 0 : k.loops + (n->k == N_FOR);
	if (k.half_frames > MAX_HALF_FRAMES)
		return too_deep(n, "an expression nested too deeply", d);
	if (k.parens > MAX_PARENS)
		return too_deep(n, "more than 197 nested attribute or item accesses", d);
	if (k.indent > MAX_INDENT)
		return too_deep(n, "blocks nested more than 98 deep", d);
	if (k.loops > MAX_LOOPS)
		return too_deep(n, "for loops nested more than 20 deep", d);
	if (n->k == N_IF)
		return depth_if(n, k, d);
	cond = k;
	if (n->k == N_FOR || n->k == N_SET)
		cond.half_frames += 6;
	if (depth_node(n->a, k, d) || depth_node(n->b, cond, d) || depth_node(n->c, k, d) ||
	    depth_node(n->d, k, d) || depth_list(&n->l1, k, d) || depth_list(&n->l2, k, d) ||
	    depth_list(&n->l3, k, d))
		return d->code;
	return ERR_OK;
}

enum err jinja_parse(struct jv_arena *a, const struct jl_tokens *toks, struct jn **root,
		     struct diag *d)
{
	struct ps p;
	struct jn *r;

	memset(&p, 0, sizeof(p));
	p.a = a;
	p.t = toks->v;
	p.n = toks->n;
	p.d = d;
	*root = NULL;
	if (!(r = node(&p, N_BODY, &p.t[0])))
		return d->code;
	if (parse_body(&p, NULL, &r->l1))
		return d->code ? d->code : diag_fail(d, ERR_INTERNAL, "template parse failed");
	if (depth_node(r, (struct nest){ 0, 0, 0, 0 }, d) || check_list(&r->l1, 0, d))
		return d->code;
	*root = r;
	return ERR_OK;
}

/* --- the template's names --- */

const char jinja_parse_loop[] = "loop";
const char jinja_parse_caller[] = "caller";

struct intern {
	const char **slot; /* open addressing over the names, `mask + 1` slots */
	size_t *index;     /* each slot's index in `names` */
	size_t mask;
	struct jn_names *names;
	size_t cap;
};

static size_t name_hash(const char *s)
{
	size_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The index of `s` among the names, added if new (the one copy kept);
 * `load`: an N_NAME's. */
static enum err intern_name(struct intern *in, const char **s, int load, size_t *id,
			    struct diag *d)
{
	size_t h = name_hash(*s) & in->mask;

	while (in->slot[h] && strcmp(in->slot[h], *s))
		h = (h + 1) & in->mask;
	if (!in->slot[h]) {
		if (in->names->n == in->cap) {
			size_t cap = in->cap * 2;
			const char **v = mem_realloc(in->names->v, cap * sizeof(*v));
			unsigned char *ld = v ? mem_realloc(in->names->loaded, cap) : NULL;

			if (v)
				in->names->v = v;
			if (!ld)
				return diag_fail(d, ERR_NOMEM, "out of memory");
			in->names->loaded = ld;
			in->cap = cap;
		}
		in->slot[h] = *s;
		in->index[h] = in->names->n;
		in->names->loaded[in->names->n] = 0;
		in->names->v[in->names->n++] = *s;
	}
	*s = in->slot[h];
	*id = in->index[h];
	in->names->loaded[*id] |= (unsigned char)(load != 0);
	return ERR_OK;
}

static enum err intern_node(struct intern *in, struct jn *n, struct diag *d);

static enum err intern_list(struct intern *in, struct jn_list *l, struct diag *d)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (intern_node(in, l->v[i], d))
			return d->code;
	return ERR_OK;
}

static enum err intern_node(struct intern *in, struct jn *n, struct diag *d)
{
	size_t id;

	if (!n)
		return ERR_OK;
	if (n->k == N_NAME || n->k == N_MACRO) {
		if (n->s && intern_name(in, &n->s, n->k == N_NAME, &id, d))
			return d->code;
		if (n->s)
			n->sn = strlen(n->s);
		if (n->k == N_NAME)
			n->id = (int)id;
	}
	if (intern_node(in, n->a, d) || intern_node(in, n->b, d) || intern_node(in, n->c, d) ||
	    intern_node(in, n->d, d) || intern_list(in, &n->l1, d) || intern_list(in, &n->l2, d) ||
	    intern_list(in, &n->l3, d))
		return d->code;
	return ERR_OK;
}

/* Nodes under `n` that may carry a name. */
static size_t count_nodes(const struct jn *n)
{
	size_t k = 1, i;

	if (!n)
		return 0;
	k += count_nodes(n->a) + count_nodes(n->b) + count_nodes(n->c) + count_nodes(n->d);
	for (i = 0; i < n->l1.n; i++)
		k += count_nodes(n->l1.v[i]);
	for (i = 0; i < n->l2.n; i++)
		k += count_nodes(n->l2.v[i]);
	for (i = 0; i < n->l3.n; i++)
		k += count_nodes(n->l3.v[i]);
	return k;
}

enum err jinja_parse_names(struct jv_arena *a, struct jn *root, struct jn_names *names,
			   struct diag *d)
{
	struct intern in;
	size_t slots = 16, nodes = count_nodes(root) + 2, id;
	const char *seed;
	enum err e = ERR_OK;

	while (slots < 2 * nodes)
		slots *= 2;
	memset(&in, 0, sizeof(in));
	(void)a;
	in.names = names;
	in.mask = slots - 1;
	in.cap = 8;
	in.slot = mem_calloc(slots, sizeof(*in.slot));
	in.index = mem_calloc(slots, sizeof(*in.index));
	names->n = 0;
	names->v = mem_alloc(in.cap * sizeof(*names->v));
	names->loaded = mem_alloc(in.cap);
	if (!in.slot || !in.index || !names->v || !names->loaded)
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	seed = jinja_parse_loop;
	if (!e)
		e = intern_name(&in, &seed, 0, &id, d);
	seed = jinja_parse_caller;
	if (!e)
		e = intern_name(&in, &seed, 0, &id, d);
	if (!e)
		e = intern_node(&in, root, d);
	mem_free(in.slot);
	mem_free(in.index);
	return e;
}
