/* tok_run — the scratch of one count or encode call (tok_int.h). */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/mem.h"
#include "tok_int.h"

/* h->spare, written after loading: the tokenizer is heap memory, never
 * defined const, so the cast is sound. */
static _Atomic(struct tok_spare *) *spare_of(const struct tok_hf *h)
{
	return &((struct tok_hf *)(uintptr_t)h)->spare;
}

static void spare_free(struct tok_spare *s)
{
	if (!s)
		return;
	bpe_work_free(s->w);
	rx_match_free(s->m);
	mem_free(s);
}

enum err tok_run_init(struct tok_run *r, const struct tok_hf *h, struct diag *d)
{
	struct tok_spare *s = atomic_exchange(spare_of(h), NULL);
	size_t i;
	enum err e;

	memset(r, 0, sizeof(*r));
	r->h = h;
	r->d = d;
	for (i = 0; i < 2; i++)
		buf_init(&r->norm[i], BUF_MAX_DEFAULT);
	for (i = 0; i <= TOK_PRE_MAX; i++)
		tok_pieces_init(&r->st[i]);
	if (s) {
		r->w = s->w;
		r->m = s->m;
		mem_free(s);
		return ERR_OK;
	}
	if ((e = rx_match_new(&r->m, d)))
		return e; /* d may be NULL: tpl_model counts a special token without one */
	if (bpe_work_new(&r->w))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	return ERR_OK;
}

void tok_run_release(struct tok_run *r)
{
	struct tok_spare *s = r->w && r->m ? mem_alloc(sizeof(*s)) : NULL, *none = NULL;
	size_t i;

	for (i = 0; i < 2; i++)
		buf_release(&r->norm[i]);
	for (i = 0; i <= TOK_PRE_MAX; i++)
		tok_pieces_release(&r->st[i]);
	if (s) {
		s->w = r->w;
		s->m = r->m;
		if (atomic_compare_exchange_strong(spare_of(r->h), &none, s))
			return;
		mem_free(s);
	}
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
		uint32_t *p = mem_grow(*r->ids, r->cap, sizeof(*p), 256);

		if (!p)
			return tok_run_nomem(r);
		*r->ids = p;
	}
	(*r->ids)[(*r->nids)++] = id;
	return ERR_OK;
}

void tok_run_unpark(struct tok_hf *h)
{
	spare_free(atomic_exchange(&h->spare, NULL));
}
