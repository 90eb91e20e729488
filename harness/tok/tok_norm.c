#include "tok_norm.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "base/mem.h"
#include "tok_int.h"
#include "uni.h"

enum err tok_norm_apply(struct tok_run *r, const char *s, size_t n,
			const char **out, size_t *nout)
{
	size_t i, j;
	int cur = 0, changed = 1;

	for (i = 0; i < r->h->nnorm; i++) {
		const struct tok_norm *m = &r->h->norm[i];
		struct buf *o = &r->norm[cur];
		enum err e = ERR_OK;

		buf_reset(o);
		switch (m->kind) {
		case NORM_NFC:
			e = uni_nfc_changed(s, n, o, &changed);
			break;
		case NORM_PREPEND:
			if (n)
				e = buf_append(o, m->s, m->n);
			if (!e)
				e = buf_append(o, s, n);
			break;
		case NORM_REPLACE:
			if (tok_pat_split(&m->re, r->h->tab, r->m, s, n, 0, &r->st[TOK_PRE_MAX], r->d))
				return r->d->code;
			for (j = 0; !e && j < r->st[TOK_PRE_MAX].n; j++) {
				struct tok_item it = r->st[TOK_PRE_MAX].it[j];

				e = it.match ? buf_append(o, m->s, m->n)
					     : buf_append(o, s + it.a, it.b - it.a);
			}
			break;
		}
		if (e)
			return tok_run_nomem(r);
		if (!changed) { /* NFC left s as it was: no copy */
			changed = 1;
			continue;
		}
		s = o->data;
		n = o->len;
		cur ^= 1;
	}
	*out = s;
	*nout = n;
	return ERR_OK;
}

enum err tok_norm_parse(struct tok_load *l, const cJSON *o, int depth)
{
	struct tok_hf *h = l->h;
	const char *t = tok_read_type(o);
	struct tok_norm *m;
	const cJSON *c;
	enum err e;

	if (cJSON_IsNull(o))
		return ERR_OK;
	if (!strcmp(t, "Sequence") && depth < 8) {
		if ((e = tok_read_keys(l, o, "type normalizers", "Sequence")))
			return e;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "normalizers"))
			if ((e = tok_norm_parse(l, c, depth + 1)))
				return e;
		return ERR_OK;
	}
	if (strcmp(t, "NFC") && strcmp(t, "Prepend") && strcmp(t, "Replace"))
		return tok_read_unsupported(l, "normalizer", t);
	if (h->nnorm == TOK_NORM_MAX)
		return tok_read_unsupported(l, "normalizer", "Sequence longer than 16");
	m = &h->norm[h->nnorm++];
	if (!strcmp(t, "NFC")) {
		m->kind = NORM_NFC;
		return tok_read_keys(l, o, "type", t);
	}
	if (!strcmp(t, "Prepend")) {
		const char *p = tok_read_str(o, "prepend");

		m->kind = NORM_PREPEND;
		if ((e = tok_read_keys(l, o, "type prepend", t)))
			return e;
		if (!p)
			return tok_read_bad(l, "Prepend needs a 'prepend' string");
		m->n = strlen(p);
		m->s = mem_strndup(p, m->n);
		return m->s ? ERR_OK : diag_fail(l->d, ERR_NOMEM, "out of memory");
	}
	m->kind = NORM_REPLACE;
	if ((e = tok_read_keys(l, o, "type pattern content", t)))
		return e;
	if (!tok_read_str(o, "content"))
		return tok_read_bad(l, "Replace needs a 'content' string");
	m->n = strlen(tok_read_str(o, "content"));
	m->s = mem_strndup(tok_read_str(o, "content"), m->n);
	if (!m->s)
		return diag_fail(l->d, ERR_NOMEM, "out of memory");
	return tok_read_pattern(l, cJSON_GetObjectItemCaseSensitive(o, "pattern"), &m->re);
}

void tok_norm_release(struct tok_norm *m)
{
	tok_pat_release(&m->re);
	mem_free(m->s);
	m->s = NULL;
}
