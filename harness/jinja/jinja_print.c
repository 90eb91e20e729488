/* jinja_print — values printed as templates print them (jinja_int.h). */
#include "jinja_int.h"

#include "pyfmt.h"

/* Maps a pyfmt failure (which has no position) onto one at `at`. */
static enum err pyfmt_fail(struct je *e, const struct jn *at, const struct diag *pd)
{
	if (pd->code == ERR_UNSUPPORTED)
		return jinja_util_refuse(e, at, "%s", pd->msg);
	if (pd->code == ERR_INPUT)
		return jinja_util_reject(e, at, "%s", pd->msg);
	if (pd->code == ERR_LIMIT)
		return diag_fail(e->d, ERR_LIMIT, "%s (template line %u, column %u)", pd->msg,
				 at->line, at->col);
	return jinja_util_nomem(e, at);
}

enum err jinja_print(struct je *e, const struct jn *at, const struct jv *v, struct buf *out)
{
	struct diag pd;

	diag_init(&pd);
	if (pyfmt_str(v, out, &pd))
		return pyfmt_fail(e, at, &pd);
	return ERR_OK;
}

enum err jinja_print_str(struct je *e, const struct jn *at, const struct jv *v, struct jv *out)
{
	struct buf b;
	enum err r;

	if (v->k == JV_STR) {
		*out = *v;
		return ERR_OK;
	}
	buf_init(&b, jinja_util_buf_cap(e));
	r = jinja_print(e, at, v, &b);
	if (!r && jinja_value_str_buf(e->a, &b, out))
		r = jinja_util_nomem(e, at);
	buf_release(&b);
	return r;
}

enum err jinja_print_json(struct je *e, const struct jn *at, const struct jv *v,
			  const struct pyfmt_json *o, struct jv *out)
{
	struct buf b;
	struct diag pd;
	enum err r = ERR_OK;

	diag_init(&pd);
	buf_init(&b, jinja_util_buf_cap(e));
	if (pyfmt_json(v, o, &b, &pd))
		r = pyfmt_fail(e, at, &pd);
	else if (jinja_value_str_buf(e->a, &b, out))
		r = jinja_util_nomem(e, at);
	buf_release(&b);
	return r;
}
