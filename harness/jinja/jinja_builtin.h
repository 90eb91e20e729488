/*
 * jinja_builtin — the operators, filters, tests, string/dict/list methods
 * and global functions of jinja2 3.1 under transformers'
 * ImmutableSandboxedEnvironment, as Python computes them. Internal to the
 * jinja modules; see jinja.h.
 *
 * Every function evaluates at node `at` (for messages) and follows the
 * three outcomes of jinja.h: a value, a rejection (Python raises: TypeError,
 * SecurityError for list.append and other mutators, UndefinedError,
 * ZeroDivisionError, raise_exception), or a refusal (outside the subset).
 */
#ifndef NEEDLE_JINJA_BUILTIN_H
#define NEEDLE_JINJA_BUILTIN_H

#include "jinja_eval.h"

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
/* str(v) appended to `out`, as {{ v }} prints it. */
enum err jinja_builtin_print(struct je *e, const struct jn *at, const struct jv *v,
			     struct buf *out);
/* str(v) as a value (a str is returned as is, Markup included). */
enum err jinja_builtin_str_of(struct je *e, const struct jn *at, const struct jv *v,
			      struct jv *out);
/* json.dumps(v, options) as a str value. */
struct pyfmt_json;
enum err jinja_builtin_json(struct je *e, const struct jn *at, const struct jv *v,
			    const struct pyfmt_json *o, struct jv *out);
/* Python's ordering: *c = -1, 0 or 1; TypeError (rejected) when unorderable. */
enum err jinja_builtin_order(struct je *e, const struct jn *at, const struct jv *a,
			     const struct jv *b,
			     int *c);
/* `item in container`. */
enum err jinja_builtin_contains(struct je *e, const struct jn *at, const struct jv *item,
				const struct jv *container, int *r);
/* The argument at position `i` or keyword `name`, or NULL. */
const struct jv *jinja_builtin_arg(const struct je_args *a, size_t i, const char *name);
/* Refuses arguments beyond `npos` positional ones and keywords not in the
 * NULL-terminated `names` (Python would raise TypeError: rejected). */
enum err jinja_builtin_check_args(struct je *e, const struct jn *at, const char *what,
				  const struct je_args *a, size_t npos, const char *const *names);

#endif
