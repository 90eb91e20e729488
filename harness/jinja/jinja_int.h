/*
 * jinja_int — what the evaluator's files (jinja_eval, jinja_builtin,
 * jinja_filter, jinja_str, jinja_fmt, jinja_bigint, jinja_print, jinja_util)
 * share: the first four call each other in a circle (one module:
 * ARCHITECTURE.md), the others call none of them back, and one private
 * header declares them all.
 * Only jinja/ (and its unit tests) include it; the public entry points are
 * jinja.h and pyfmt.h. The parser's headers (jinja_lex.h, jinja_parse.h) and
 * the values (jinja_value.h, which pyfmt.h speaks) stay apart: nothing in
 * them calls back.
 */
#ifndef NEEDLE_JINJA_INT_H
#define NEEDLE_JINJA_INT_H

#include <time.h>

#include "base/buf.h"
#include "base/err.h"
#include "jinja_parse.h"
#include "jinja_value.h"

/*
 * jinja_eval — walks a parsed template (jinja_parse.h) with Jinja's scoping
 * and Python's value semantics, writing the output; and the state the
 * built-ins (below) share with it.
 *
 * Scopes: the template body is one frame; a for loop gets one child frame,
 * emptied at the start of each iteration (so `set` inside a loop never leaks
 * and a name read before its `set` in the body sees the outer value); `if` is
 * no scope; a macro call gets a child of the frame the macro was defined in
 * (a closure, reading current values: a macro made in one iteration and
 * called in a later one sees the later one's names, as in jinja2; one
 * reading through its loop's frame after the loop ended is refused). Lookup
 * goes up the frames, then the context variables, then the globals
 * (namespace, range, dict, raise_exception, strftime_now).
 *
 * What the walk does by name is found once: names are the template's one
 * copy of each (jinja_parse_names), attribute, filter, test and method
 * names are numbered (jinja_builtin_annotate), and the expressions
 * statements evaluate and the bodies of for loops are compiled into
 * operations that do the walk's work node by node without its calls
 * (jinja_eval_compile); the walk stays for what is not compiled and where
 * nesting comes close to JINJA_MAX_DEPTH.
 */

struct je {
	struct jv_arena *a;     /* values of this render */
	const struct jv *vars;  /* the context's variables (a dict), borrowed */
	const struct jn_names *names; /* the template's names (jinja_parse_names) */
	struct jv *namev;       /* per name: its value outside the frames (a
				 * context variable, a global or undefined), once
				 * `named` says it was looked up; owned */
	unsigned char *named;
	unsigned nslots;        /* N_GETATTR nodes of the template (jn.slot) */
	struct je_hint *hint;   /* per N_GETATTR node: where its name was found
				 * last (owned) */
	struct tm clock;        /* strftime_now's time */
	struct diag *d;
	unsigned long steps;    /* evaluations so far, against JINJA_MAX_STEPS */
	unsigned long check_at; /* the count of steps at which the budget and
				 * the clock are looked at next */
	size_t work;            /* units of builtin work so far, against JINJA_MAX_WORK */
	struct timespec deadline; /* CLOCK_MONOTONIC time the render must end by */
	double seconds;         /* the time limit that deadline came from */
	int depth;              /* nesting, against JINJA_MAX_DEPTH */
	int calls;              /* macro calls under way, against JINJA_MAX_CALLS */
	size_t out_max;         /* cap for every output buffer */
};

/* Where an attribute node found its name in a dict last: the key (a str
 * value's header, so one key of one dict) and its position. Dicts built
 * alike (messages: jinja_ctx_set_list) share their keys, so the next dict
 * is answered without a compare. */
struct je_hint {
	const struct jv_str *key;
	size_t i;
};

/* Call arguments, evaluated. */
struct je_args {
	struct jv *pos;
	size_t npos;
	const char **kwn; /* names */
	struct jv *kwv;
	size_t nkw;
};

/* An attribute of the loop object (`loop.index`, ...). */
enum err jinja_eval_loop_attr(struct je *e, const struct jn *at, const struct jv *loop,
			      const char *name, struct jv *out);

/* The loop attribute JN_LOOP_* of the loop object `loop`. */
enum err jinja_eval_loop_id(struct je *e, const struct jn *at, const struct jv *loop, int id,
			    struct jv *out);

/* Renders the template body `root` into `out`. */
enum err jinja_eval_render(struct je *e, const struct jn *root, struct buf *out);
/* Compiles the expressions the statements under `root` evaluate (jn.code),
 * after jinja_builtin_annotate, chaining the compiled forms on *list (an
 * expression that cannot be, for want of memory, stays as it is). */
void jinja_eval_compile(struct jn *root, struct jvm **list);
/* Frees what jinja_eval_compile chained. */
void jinja_eval_uncompile(struct jvm *list);

/* N_GETATTR ids (jn.id): the loop attribute in the low byte (JN_LOOP_*),
 * the str method (JN_STR_*, jinja_str_method_id) in the next. */
enum {
	JN_LOOP_INDEX = 1, JN_LOOP_INDEX0, JN_LOOP_REVINDEX, JN_LOOP_REVINDEX0, JN_LOOP_FIRST,
	JN_LOOP_LAST, JN_LOOP_LENGTH, JN_LOOP_DEPTH, JN_LOOP_DEPTH0, JN_LOOP_PREVITEM,
	JN_LOOP_NEXTITEM
};
#define JN_LOOP_OF(id) ((id) & 0xff)
#define JN_STR_OF(id) ((id) >> 8)
/* N_FILTER ids (jn.id); 0 for the filters found by name. */
enum { JN_F_LENGTH = 1 };
/* N_TEST ids (jn.id) of the tests without arguments told apart by kind
 * alone; 0 for the rest, found by name. */
enum {
	JN_T_DEFINED = 1, JN_T_UNDEFINED, JN_T_NONE, JN_T_BOOLEAN, JN_T_TRUE, JN_T_FALSE,
	JN_T_INTEGER, JN_T_FLOAT, JN_T_NUMBER, JN_T_STRING, JN_T_MAPPING
};

/* Fills the `af`, `id` and `slot` of every N_GETATTR, N_FILTER and N_TEST
 * under `n` (jinja_parse.h), numbering the N_GETATTR nodes from *slots on. */
void jinja_builtin_annotate(struct jn *n, unsigned *slots);
/* The test JN_T_* `id` on `in` (no arguments). */
int jinja_builtin_test_id(int id, const struct jv *in);

/*
 * jinja_builtin — the operators, filters, tests, string/dict/list methods
 * and global functions of jinja2 3.1 under transformers'
 * ImmutableSandboxedEnvironment, as Python computes them.
 *
 * Every function evaluates at node `at` (for messages) and follows the
 * three outcomes of jinja.h: a value, a rejection (Python raises: TypeError,
 * SecurityError for list.append and other mutators, UndefinedError,
 * ZeroDivisionError, raise_exception), or a refusal (outside the subset).
 */
/* Binary operators: '+', '-', '*', '/', 'f' (//), '%', 'p' (**), '~'. */
enum err jinja_builtin_binop(struct je *e, const struct jn *at, int op, const struct jv *a,
			     const struct jv *b, struct jv *out);
/* Unary minus (neg != 0) or plus. */
enum err jinja_builtin_unary(struct je *e, const struct jn *at, int neg, const struct jv *a,
			     struct jv *out);
/* Comparisons: op 'e' ==, 'n' !=, '<', '>', 'l' <=, 'g' >=, 'i' in, 'I' not in. */
enum err jinja_builtin_compare(struct je *e, const struct jn *at, int op, const struct jv *a,
			       const struct jv *b, int *result);
/* Jinja's getattr (obj.name): a method, else an item, else Undefined. */
enum err jinja_builtin_getattr(struct je *e, const struct jn *at, const struct jv *obj,
			       const char *name, struct jv *out);
/* Jinja's getitem (obj[key]): an item, else an attribute, else Undefined. */
enum err jinja_builtin_getitem(struct je *e, const struct jn *at, const struct jv *obj,
			       const struct jv *key, struct jv *out);
/* obj[start:stop:step] (each may be NULL). */
enum err jinja_builtin_slice(struct je *e, const struct jn *at, const struct jv *obj,
			     const struct jv *start, const struct jv *stop, const struct jv *step,
			     struct jv *out);
/* A global function by name (namespace, range, dict, raise_exception,
 * strftime_now, ...): 1 with `*out` set, else 0. */
int jinja_builtin_global(const char *name, struct jv *out);
/* Calls a JV_FUNC value (a global or a bound method). */
enum err jinja_builtin_call(struct je *e, const struct jn *at, const struct jv *fn,
			    const struct je_args *args, struct jv *out);
/* The test `name` on `in`. */
enum err jinja_builtin_test(struct je *e, const struct jn *at, const char *name,
			    const struct jv *in,
			    const struct je_args *args, int *result);
/* The items a for loop visits over `v` (a list view; dicts give keys, strings
 * code points); Undefined gives none, non-iterables reject. */
enum err jinja_builtin_iterate(struct je *e, const struct jn *at, const struct jv *v,
			       struct jv *out);
/* Python's ordering: *c = -1, 0 or 1; TypeError (rejected) when unorderable. */
enum err jinja_builtin_order(struct je *e, const struct jn *at, const struct jv *a,
			     const struct jv *b,
			     int *c);
/* `item in container`. */
enum err jinja_builtin_contains(struct je *e, const struct jn *at, const struct jv *item,
				const struct jv *container, int *r);

/*
 * jinja_filter — jinja2 3.1's filters (filters.py) as templates use them,
 * with transformers' tojson (json.dumps(x, ensure_ascii=False, indent=None,
 * separators=None, sort_keys=False)). Filters outside the subset are refused by name.
 */
/* Applies the filter `name` to `in` with `args`, at node `at`. */
enum err jinja_filter(struct je *e, const struct jn *at, const char *name, const struct jv *in,
		      const struct je_args *args, struct jv *out);
/* The JN_F_* number of the filter `name`, 0 for one found by name. */
int jinja_filter_id(const char *name);

/*
 * jinja_str — Python str semantics for the jinja modules: code-point
 * indexing and slicing, the str methods templates call (split, strip,
 * startswith, replace, ...), case mapping and markupsafe escaping.
 *
 * Case mapping and character classes outside ASCII use utf8proc's tables
 * only where they cannot differ from CPython's (full case mappings such as
 * 'ß'.upper() == 'SS', final sigma, characters unassigned in utf8proc's
 * Unicode version): there the call is refused.
 */
/* Byte offset of the first `needle` in `hay` at or after byte `from`, or -1. */
long jinja_str_find(const struct jv_str *hay, const struct jv_str *needle, size_t from);
/* hay[i] (code point index, in range) as a one-character str. */
enum err jinja_str_char_at(struct je *e, const struct jn *at, const struct jv *s, size_t i,
			   struct jv *out);
/* s[a:b:step] with bounds already clamped as slice.indices does. */
enum err jinja_str_slice(struct je *e, const struct jn *at, const struct jv *s, int64_t a,
			 int64_t b, int64_t step, struct jv *out);
/* list(s): one str per code point. */
enum err jinja_str_chars(struct je *e, const struct jn *at, const struct jv *s, struct jv *out);
/* markupsafe.escape(str(v)): a Markup str (a Markup input is kept). */
enum err jinja_str_escape(struct je *e, const struct jn *at, const struct jv *v, struct jv *out);
/* Case: 'u' upper, 'l' lower, 'c' str.capitalize, 't' jinja's |title,
 * 'T' str.title. The Markup flag is kept. */
enum err jinja_str_case(struct je *e, const struct jn *at, const struct jv *s, int mode,
			struct jv *out);
/* str.strip / lstrip / rstrip (`which` 'b', 'l', 'r'); chars NULL or None
 * strips whitespace. */
enum err jinja_str_strip(struct je *e, const struct jn *at, const struct jv *s, int which,
			 const struct jv *chars, struct jv *out);
/* A str method `name` called on `self` with `a`. */
enum err jinja_str_method(struct je *e, const struct jn *at, const struct jv *self,
			  const char *name, const struct je_args *a, struct jv *out);
/* The same for a method already known by its JN_STR_* number `id`
 * (jinja_str_method_id of `name`, not 0). */
enum err jinja_str_call(struct je *e, const struct jn *at, const struct jv *self, int id,
			const char *name, const struct je_args *a, struct jv *out);
/* The JN_STR_* number of the str method `name`, 0 for none. */
int jinja_str_method_id(const char *name);

/*
 * jinja_bigint — Python ints beyond 64 bits: a JV_BIGINT holds the decimal
 * digits of a value outside int64 (canonical: no leading zeros, '-' for a
 * negative one), so equality and hashing compare the text, and every result
 * that fits 64 bits is a JV_INT again. Arithmetic runs on OpenSSL's BIGNUM
 * (libcrypto loaded at the first big operation; ERR_LOADER when it cannot
 * be). A result of more than JV_BIGINT_MAX_DIGITS digits is refused: Python
 * 3.11 computes it but prints none (ValueError: Exceeds the limit (4300
 * digits) for integer string conversion), and a template has no use for
 * one it cannot print; its size is estimated before anything is computed,
 * a power's checked against the value memory first (2**10**10 is ERR_LIMIT,
 * 2**10**9 refused, neither allocated).
 */
/* a op b for ints (int, bool or big) where one is big or the 64-bit result
 * overflowed: op '+', '-', '*', 'f' (//), '%' (floor, as Python), 'p' (**,
 * exponent 0..2**63-1), '/' (a float, rounded once as Python's; refused
 * below 2**-1020, where it could be subnormal). */
enum err jinja_bigint_arith(struct je *e, const struct jn *at, int op, const struct jv *a,
			    const struct jv *b, struct jv *out);
/* -a for an int or big int (-(2**63) becomes big). */
enum err jinja_bigint_neg(struct je *e, const struct jn *at, const struct jv *a, struct jv *out);
/* Python's ordering of two ints (int, bool or big): -1, 0 or 1. */
int jinja_bigint_cmp(const struct jv *a, const struct jv *b);
/* int(s) for the text `s` of an integer beyond 64 bits (whitespace, sign,
 * digits with single underscores between them): *parsed 1 with `out` the
 * big int, or 0 when `s` is no such literal (Python's ValueError). */
enum err jinja_bigint_parse(struct je *e, const struct jn *at, const char *s, struct jv *out,
			    int *parsed);
/* The magnitude of an int value in base 2, 8 or 16 into `out`; *neg its sign. */
enum err jinja_bigint_digits(struct je *e, const struct jn *at, const struct jv *v, int base,
			     int upper, struct buf *out, int *neg);

/*
 * jinja_fmt — Python 3.11's two string formatters as templates use them:
 * printf-style `fmt % args` (flags - + space # 0, width and precision, '*'
 * taking them from the arguments, %(key) from a dict; conversions s r a d i
 * u o x X e E f F g G c %) and str.format (auto, numbered and keyword
 * fields, !r !s !a, the format-spec mini-language: fill, align, sign, z, #,
 * 0, width, ',' and '_' grouping, precision, types s d b c o x X e E f F g
 * G %). Floats print as CPython's correctly rounded dtoa does.
 *
 * Python's errors (a missing argument, an unknown conversion, a spec a type
 * does not take) are rejections with Python's message; refused: the
 * locale's 'n', fields with attributes or indexes ({0.x}, {0[1]}), nested
 * fields in a spec, '%' with flags, zero padding with a grouping separator,
 * widths and precisions beyond 10**8 and a
 * Markup format string. Widths and precisions are checked against the value
 * memory before anything is written.
 */
/* fmt % args (args: a tuple of arguments, a dict for %(key), else the one
 * argument). */
enum err jinja_fmt_percent(struct je *e, const struct jn *at, const struct jv *fmt,
			   const struct jv *args, struct jv *out);
/* self.format(*args, **kwargs). */
enum err jinja_fmt_format(struct je *e, const struct jn *at, const struct jv *self,
			  const struct je_args *a, struct jv *out);

/*
 * jinja_print — values as templates print them, on pyfmt.h: str(v) and
 * json.dumps, pyfmt's failures placed at the node that printed.
 */
/* str(v) appended to `out`, as {{ v }} prints it. */
enum err jinja_print(struct je *e, const struct jn *at, const struct jv *v, struct buf *out);
/* str(v) as a value (a str is returned as is, Markup included). */
enum err jinja_print_str(struct je *e, const struct jn *at, const struct jv *v, struct jv *out);
/* json.dumps(v, options) as a str value. */
struct pyfmt_json;
enum err jinja_print_json(struct je *e, const struct jn *at, const struct jv *v,
			  const struct pyfmt_json *o, struct jv *out);

/*
 * jinja_util — what every file of the evaluator calls and that calls none of
 * them: failures at a node (rejected, refused, over a limit), the budgets of
 * jinja.h (steps, work, time, value memory) and call arguments.
 */
/* Fails with ERR_INPUT, "the server would reject this request: WHAT
 * (template line L, column C)" for what Python raises at `n`. */
enum err jinja_util_reject(struct je *e, const struct jn *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Fails with ERR_UNSUPPORTED, "unsupported in template: WHAT (template line
 * L, column C)". */
enum err jinja_util_refuse(struct je *e, const struct jn *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* What the evaluator's inline step count does once e->steps reaches
 * e->check_at: the step budget (JINJA_MAX_STEPS), and the clock every 4096
 * steps; ERR_LIMIT past either. */
enum err jinja_util_steps(struct je *e, const struct jn *n);
/* Charges `units` of work done inside a builtin at `n` (one unit per byte
 * scanned or written, JV_WORK_ITEM per item visited, made or found) against JINJA_MAX_WORK,
 * and checks the wall clock: ERR_LIMIT past either. */
enum err jinja_util_work(struct je *e, const struct jn *n, size_t units);
/* The work units of looking at `v` once (a str's bytes, JV_WORK_ITEM per
 * item of a container, 1 for anything else), plus those of the arguments
 * `a` (may be NULL). */
size_t jinja_util_units(const struct jv *v, const struct je_args *a);
/* The cap of a buffer that builds one value: the value memory still free
 * (the value is copied there). */
size_t jinja_util_buf_cap(const struct je *e);
/* Whether `units` more bytes fit in the value memory still free (a builtin
 * about to make a value that large asks first, so that "a" * 10**10 is
 * refused before anything is allocated): ERR_LIMIT at `n` if not. */
enum err jinja_util_room(struct je *e, const struct jn *n, size_t units);
/* ERR_NOMEM, or ERR_LIMIT when the failure was a cap (output buffer or
 * value arena) rather than exhausted memory, at `n`. */
enum err jinja_util_nomem(struct je *e, const struct jn *n);
/* The argument at position `i` or keyword `name`, or NULL. */
const struct jv *jinja_util_arg(const struct je_args *a, size_t i, const char *name);
/* Refuses arguments beyond `npos` positional ones and keywords not in the
 * NULL-terminated `names` (Python would raise TypeError: rejected). */
enum err jinja_util_check_args(struct je *e, const struct jn *at, const char *what,
			       const struct je_args *a, size_t npos, const char *const *names);

#endif
