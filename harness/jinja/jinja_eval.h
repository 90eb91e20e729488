/*
 * jinja_eval — walks a parsed template (jinja_parse.h) with Jinja's scoping
 * and Python's value semantics, writing the output; and the state the
 * built-ins (jinja_builtin.h) share with it. Internal to the jinja modules;
 * the public entry point is jinja.h.
 *
 * Scopes: the template body is one frame; each iteration of a for loop gets a
 * fresh child frame (so `set` inside a loop never leaks and a name read
 * before its `set` in the body sees the outer value); `if` is no scope; a
 * macro call gets a child of the frame the macro was defined in (a closure,
 * reading current values). Lookup goes up the frames, then the context
 * variables, then the globals (namespace, range, dict, raise_exception,
 * strftime_now).
 */
#ifndef NEEDLE_JINJA_EVAL_H
#define NEEDLE_JINJA_EVAL_H

#include <time.h>

#include "base/buf.h"
#include "base/err.h"
#include "jinja_parse.h"
#include "jinja_value.h"

struct je {
	struct jv_arena *a;     /* values of this render */
	const struct jv *vars;  /* the context's variables (a dict), borrowed */
	struct tm clock;        /* strftime_now's time */
	struct diag *d;
	unsigned long steps;    /* evaluations so far, against JINJA_MAX_STEPS */
	int depth;              /* nesting, against JINJA_MAX_DEPTH */
	size_t out_max;         /* cap for every output buffer */
};

/* Call arguments, evaluated. */
struct je_args {
	struct jv *pos;
	size_t npos;
	const char **kwn; /* names */
	struct jv *kwv;
	size_t nkw;
};

/* Fails with ERR_INPUT, "the server would reject this request: WHAT
 * (template line L, column C)" for what Python raises at `n`. */
enum err jinja_eval_reject(struct je *e, const struct jn *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Fails with ERR_UNSUPPORTED, "unsupported in template: WHAT (template line
 * L, column C)". */
enum err jinja_eval_refuse(struct je *e, const struct jn *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* ERR_NOMEM, or ERR_LIMIT when the failure was a cap (output buffer or
 * value arena) rather than exhausted memory, at `n`. */
enum err jinja_eval_nomem(struct je *e, const struct jn *n);

/* Calls a macro value with evaluated arguments; `caller` is the call block's
 * caller macro or NULL. The result is a str. */
enum err jinja_eval_call_macro(struct je *e, const struct jn *at, const struct jv *macro,
			       const struct je_args *args, const struct jv *caller, struct jv *out);
/* An attribute of the loop object (`loop.index`, ...). */
enum err jinja_eval_loop_attr(struct je *e, const struct jn *at, const struct jv *loop,
			      const char *name, struct jv *out);

/* Renders the template body `root` into `out`. */
enum err jinja_eval_render(struct je *e, const struct jn *root, struct buf *out);

#endif
