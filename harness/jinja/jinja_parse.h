/*
 * jinja_parse — the syntax tree of a template, built from jinja_lex tokens
 * with jinja2 3.1's grammar and precedence (parser.py): conditional
 * expressions (with or without else), or, and, not, comparisons (chained,
 * in, not in), + -, ~, * / // %, **, unary - +, then postfix .attr [i]
 * [a:b:c] (args) and filters |f(args) and tests `is [not] t args`. Internal
 * to the jinja modules; see jinja.h.
 *
 * Statements: if/elif/else, for (tuple targets, `if` filter, else), set
 * (name, tuple, ns.attr, block form with filters), macro, call blocks,
 * filter blocks, break, continue, generation, raw (in the lexer). include,
 * extends, import, from, block, with, do, autoescape, recursive loops are
 * ERR_UNSUPPORTED; an unknown tag is a syntax error (ERR_INPUT), as in Python.
 * Nodes live in the arena passed to jinja_parse.
 */
#ifndef NEEDLE_JINJA_PARSE_H
#define NEEDLE_JINJA_PARSE_H

#include "base/err.h"
#include "jinja_lex.h"
#include "jinja_value.h"

enum jn_kind {
	/* expressions */
	N_CONST,   /* v */
	N_NAME,    /* s */
	N_GETATTR, /* a . s */
	N_GETITEM, /* a [ b ] */
	N_SLICE,   /* a [ b : c : d ] (each may be NULL) */
	N_CALL,    /* a ( l1 positional, l2 N_KWARG ) */
	N_KWARG,   /* s = a */
	N_FILTER,  /* a | s ( l1, l2 ); a NULL in filter blocks */
	N_TEST,    /* a is [not: op] s ( l1, l2 ) */
	N_NEG, N_POS, N_NOT, /* a */
	N_BINOP,   /* a op b; op: '+', '-', '*', '/', 'f' (//), '%', 'p' (**), '~' */
	N_AND, N_OR, /* a, b */
	N_COMPARE, /* a, then l1: N_CMPOP nodes (op, a) */
	N_CMPOP,   /* op: 'e' ==, 'n' !=, '<', '>', 'l' <=, 'g' >=, 'i' in, 'I' not in */
	N_COND,    /* b if a else c (c may be NULL) */
	N_LIST, N_TUPLE, /* l1 */
	N_DICT,    /* l1 keys, l2 values */
	/* statements */
	N_DATA,    /* s */
	N_OUTPUT,  /* a printed */
	N_IF,      /* if a: l1 else l2; op 'e' for an elif (the only item of its
		    * parent's l2) */
	N_FOR,     /* for a in b [if c]: l1 else l2 */
	N_SET,     /* a (target) = b */
	N_SETBLOCK, /* a (target) = render(l1) | filters c (chain on NULL) */
	N_MACRO,   /* s; l1 params (N_NAME), l2 defaults (NULL allowed), l3 body */
	N_CALLBLOCK, /* a call; l1 params, l2 defaults, l3 body (the caller) */
	N_FILTERBLOCK, /* c filter chain; l1 body */
	N_BREAK, N_CONTINUE,
	N_BODY     /* l1 (generation blocks, the template) */
};

struct jn;

struct jn_list {
	struct jn **v;
	size_t n, cap;
};

struct jn {
	enum jn_kind k;
	int op;
	unsigned line, col;
	struct jn *a, *b, *c, *d;
	struct jn_list l1, l2, l3;
	const char *s; /* NUL-terminated name or data; a name (N_NAME, N_MACRO)
			* is the template's one copy of it (jinja_parse_names):
			* equal names are equal pointers */
	size_t sn;
	struct jv v;
	/* What the evaluator would otherwise find out by name at every
	 * evaluation, filled once the tree is built (jinja_parse_names and
	 * jinja_builtin_annotate): N_NAME its number among the template's
	 * names; N_GETATTR the JN_A_* classes of its name and, in `id`, the
	 * loop attribute (JN_LOOP_*) or str method (JN_STR_*) it names;
	 * N_FILTER and N_TEST the filter or test (JN_F_*, JN_T_*), 0 for any
	 * other. */
	unsigned af;
	int id;
	unsigned slot; /* N_GETATTR: its number among the template's N_GETATTR
			* nodes (a render keeps a hint per attribute node) */
	const struct jvm *code; /* an expression evaluated from a statement: its
				 * compiled form (jinja_eval_compile), or NULL */
	const struct jvm *body; /* N_FOR: its body's compiled form, or NULL */
};

struct jvm;

/* N_GETATTR classes of a name (the attributes jinja_builtin gives values). */
#define JN_A_STR 1u    /* a str method */
#define JN_A_DICT 2u   /* a dict method */
#define JN_A_LIST 4u   /* a list method */
#define JN_A_TUPLE 8u  /* a tuple method (count, index) */
#define JN_A_NUM 16u   /* an attribute of numbers */
#define JN_A_ITER 32u  /* an attribute of generators, views or ranges */
#define JN_A_UNDER 64u /* starts with '_' (the sandbox hides it) */

/* The names of a parsed template, each once; `jinja_parse_names` makes every
 * N_NAME's and N_MACRO's `s` the copy listed here (so a name is told from
 * another by its pointer) and sets an N_NAME's `id` to its index. The names
 * "loop" and "caller", which the evaluator binds itself, are always
 * jinja_parse_loop and jinja_parse_caller. */
struct jn_names {
	const char **v;
	unsigned char *loaded; /* per name: whether an N_NAME loads it */
	size_t n;
};

extern const char jinja_parse_loop[];
extern const char jinja_parse_caller[];

/* Parses the tokens into a N_BODY root at `*root`. */
enum err jinja_parse(struct jv_arena *a, const struct jl_tokens *toks, struct jn **root,
		     struct diag *d);
/* Lists the names of the tree under `root` into `names` (names->v and
 * names->loaded are owned: mem_free), as described above; `a` is the
 * tree's arena. */
enum err jinja_parse_names(struct jv_arena *a, struct jn *root, struct jn_names *names,
			   struct diag *d);

#endif
