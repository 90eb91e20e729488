#include "tok_hf.h"

#include <string.h>

#include "mem.h"
#include "tok_hf_impl.h"
#include "tok_load.h"

enum err tok_run_init(struct tok_run *r, const struct tok_hf *h, struct diag *d)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	r->h = h;
	r->d = d;
	for (i = 0; i < 2; i++)
		buf_init(&r->norm[i], BUF_MAX_DEFAULT);
	for (i = 0; i <= TOK_PRE_MAX; i++)
		tok_pieces_init(&r->st[i]);
	if (rx_match_new(&r->m, d))
		return d->code;
	if (bpe_work_new(&r->w))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	return ERR_OK;
}

void tok_run_release(struct tok_run *r)
{
	size_t i;

	for (i = 0; i < 2; i++)
		buf_release(&r->norm[i]);
	for (i = 0; i <= TOK_PRE_MAX; i++)
		tok_pieces_release(&r->st[i]);
	rx_match_free(r->m);
	bpe_work_free(r->w);
}

enum err tok_run_nomem(struct tok_run *r)
{
	return diag_fail(r->d, ERR_NOMEM, "out of memory");
}

enum err tok_run_model(struct tok_run *r, const char *s, size_t n)
{
	enum err e;

	if (r->count_only)
		e = bpe_count(r->h->bpe, r->w, s, n, &r->count);
	else
		e = bpe_encode(r->h->bpe, r->w, s, n, r->ids, r->nids, r->cap);
	return e ? diag_fail(r->d, e, "out of memory") : ERR_OK;
}

enum err tok_run_emit(struct tok_run *r, uint32_t id)
{
	if (r->count_only) {
		r->count++;
		return ERR_OK;
	}
	if (*r->nids == *r->cap) {
		size_t c = *r->cap ? *r->cap * 2 : 256;
		uint32_t *p = mem_realloc(*r->ids, c * sizeof(*p));

		if (!p)
			return tok_run_nomem(r);
		*r->ids = p;
		*r->cap = c;
	}
	(*r->ids)[(*r->nids)++] = id;
	return ERR_OK;
}

static enum err run_text(struct tok_run *r, const char *text, size_t len)
{
	return len ? tok_added_run(r, text, len) : ERR_OK;
}

enum err tok_hf_count(const struct tok_hf *h, const char *text, size_t len,
		      size_t *count, struct diag *d)
{
	struct tok_run r;
	enum err e = tok_run_init(&r, h, d);

	r.count_only = 1;
	if (!e)
		e = run_text(&r, text, len);
	*count = r.count;
	tok_run_release(&r);
	return e;
}

enum err tok_hf_encode(const struct tok_hf *h, const char *text, size_t len,
		       int add_special, uint32_t **ids, size_t *n, size_t *cap,
		       struct diag *d)
{
	struct tok_run r;
	enum err e = tok_run_init(&r, h, d);
	size_t i;

	r.ids = ids;
	r.nids = n;
	r.cap = cap;
	for (i = 0; !e && add_special && i < h->nhead; i++)
		e = tok_run_emit(&r, h->head[i]);
	if (!e)
		e = run_text(&r, text, len);
	for (i = 0; !e && add_special && i < h->ntail; i++)
		e = tok_run_emit(&r, h->tail[i]);
	tok_run_release(&r);
	return e;
}

enum err tok_hf_load(const char *path, const char *json, size_t len,
		     struct tok_hf **out, struct diag *d)
{
	struct tok_load l = {path, NULL, d};
	enum err e;

	*out = NULL;
	l.h = mem_calloc(1, sizeof(*l.h));
	if (!l.h)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	e = tok_load_json(&l, json, len);
	if (e) {
		tok_hf_free(l.h);
		return e;
	}
	*out = l.h;
	return ERR_OK;
}

void tok_hf_free(struct tok_hf *h)
{
	size_t i;

	if (!h)
		return;
	bpe_free(h->bpe);
	for (i = 0; i < h->npre; i++)
		tok_pat_release(&h->pre[i].re);
	for (i = 0; i < h->nnorm; i++)
		tok_norm_release(&h->norm[i]);
	tok_pat_release(&h->gpt2);
	scan_tab_free(h->tab);
	for (i = 0; i < h->nadded; i++) {
		mem_free(h->added[i].s);
		mem_free(h->added[i].raw);
	}
	mem_free(h->added);
	tok_aset_release(&h->raw);
	tok_aset_release(&h->normed);
	mem_free(h);
}
