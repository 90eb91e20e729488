/* jinja_util — the evaluator's failures, budgets and arguments (jinja_int.h). */
#include "jinja_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jinja.h"
#include "base/mem.h"

static enum err vfail(struct je *e, const struct jn *n, enum err code, const char *lead,
		      const char *fmt, va_list ap)
{
	char msg[DIAG_MSG_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return diag_fail(e->d, code, "%s%s (template line %u, column %u)", lead, msg,
			 n ? n->line : 0, n ? n->col : 0);
}

enum err jinja_util_reject(struct je *e, const struct jn *n, const char *fmt, ...)
{
	va_list ap;
	enum err r;

	va_start(ap, fmt);
	r = vfail(e, n, ERR_INPUT, "the server would reject this request: ", fmt, ap);
	va_end(ap);
	return r;
}

/* Fails with ERR_LIMIT, "WHAT (template line L, column C)": a budget of
 * jinja.h (steps, work, time, memory) ran out at `n`. */
static __attribute__((format(printf, 3, 4))) enum err
jinja_util_limit(struct je *e, const struct jn *n, const char *fmt, ...)
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
	return jinja_util_limit(e, n, "rendering the template took longer than %g seconds",
				e->seconds);
}

enum err jinja_util_steps(struct je *e, const struct jn *n)
{
	if (e->steps > JINJA_MAX_STEPS)
		return jinja_util_limit(e, n, "rendering the template took more than %d steps",
					JINJA_MAX_STEPS);
	if (!(e->steps & 4095) && past_deadline(e))
		return over_time(e, n);
	e->check_at = (e->steps | 4095) + 1;
	if (e->check_at > (unsigned long)JINJA_MAX_STEPS + 1)
		e->check_at = (unsigned long)JINJA_MAX_STEPS + 1;
	return ERR_OK;
}

enum err jinja_util_work(struct je *e, const struct jn *n, size_t units)
{
	size_t before = e->work;

	if (units > JINJA_MAX_WORK - e->work)
		return jinja_util_limit(e, n, "rendering the template took more than %llu units "
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

size_t jinja_util_units(const struct jv *v, const struct je_args *a)
{
	size_t n = units_of(v), i;

	for (i = 0; a && i < a->npos; i++)
		n += units_of(&a->pos[i]);
	for (i = 0; a && i < a->nkw; i++)
		n += units_of(&a->kwv[i]);
	return n;
}

size_t jinja_util_buf_cap(const struct je *e)
{
	return e->a->max - e->a->used;
}

enum err jinja_util_room(struct je *e, const struct jn *n, size_t units)
{
	if (units > jinja_util_buf_cap(e))
		return jinja_util_limit(e, n, "the template's values would exceed the cap of %zu "
					"bytes", e->a->max);
	return ERR_OK;
}

enum err jinja_util_refuse(struct je *e, const struct jn *n, const char *fmt, ...)
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
enum err jinja_util_nomem(struct je *e, const struct jn *n)
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

const struct jv *jinja_util_arg(const struct je_args *a, size_t i, const char *name)
{
	size_t k;

	if (i < a->npos)
		return &a->pos[i];
	for (k = 0; name && k < a->nkw; k++)
		if (!strcmp(a->kwn[k], name))
			return &a->kwv[k];
	return NULL;
}

enum err jinja_util_check_args(struct je *e, const struct jn *at, const char *what,
			       const struct je_args *a, size_t npos, const char *const *names)
{
	size_t k, j;

	if (a->npos > npos)
		return jinja_util_reject(e, at,
					 "TypeError: %s() takes at most %zu positional arguments",
					 what, npos);
	for (k = 0; k < a->nkw; k++) {
		for (j = 0; names && names[j] && strcmp(names[j], a->kwn[k]); j++)
			;
		if (!names || !names[j])
			return jinja_util_reject(e, at,
						 "TypeError: %s() got an unexpected keyword argument '%s'",
						 what, a->kwn[k]);
		if (j < a->npos)
			return jinja_util_reject(e, at,
						 "TypeError: %s() got multiple values for argument '%s'",
						 what, a->kwn[k]);
	}
	return ERR_OK;
}
