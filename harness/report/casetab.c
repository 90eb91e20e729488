/*
 * casetab — see casetab.h.
 */
#include <stdint.h>
#include <string.h>

#include "casetab.h"
#include "base/mem.h"

void casetab_init(struct casetab *t)
{
	memset(t, 0, sizeof(*t));
	keyset_init(&t->by_id);
}

static void counts_release(struct casetab_counts *c)
{
	size_t i;

	for (i = 0; i < c->len; i++)
		mem_free(c->key[i]);
	mem_free(c->key);
	mem_free(c->n);
}

void casetab_release(struct casetab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		mem_free(t->c[i].id);
		counts_release(&t->c[i].codes);
		counts_release(&t->c[i].reasons);
		mem_free(t->c[i].first_reason);
	}
	mem_free(t->c);
	for (i = 0; i < t->nkinds; i++)
		mem_free(t->kinds[i]);
	mem_free(t->kinds);
	keyset_release(&t->by_id);
	casetab_init(t);
}

/* The table's copy of `kind`, added when new; NULL when out of memory. */
static const char *kind_of(struct casetab *t, const char *kind)
{
	char **k;
	size_t i;

	for (i = 0; i < t->nkinds; i++)
		if (!strcmp(t->kinds[i], kind))
			return t->kinds[i];
	if (!(k = mem_realloc(t->kinds, (t->nkinds + 1) * sizeof(*k))))
		return NULL;
	t->kinds = k;
	if (!(k[t->nkinds] = mem_strndup(kind, strlen(kind))))
		return NULL;
	return k[t->nkinds++];
}

struct casetab_case *casetab_of(struct casetab *t, const char *id, const char *kind)
{
	uintptr_t at = (uintptr_t)keyset_get(&t->by_id, id);
	struct casetab_case *c;

	if (at)
		return &t->c[at - 1];
	if (t->n == t->cap) {
		struct casetab_case *n = mem_grow(t->c, &t->cap, sizeof(*n), 16);
		if (!n)
			return NULL;
		t->c = n;
	}
	c = &t->c[t->n];
	memset(c, 0, sizeof(*c));
	if (!(c->kind = kind_of(t, kind)) || !(c->id = mem_strndup(id, strlen(id))))
		return NULL;
	if (keyset_put(&t->by_id, id, (void *)(uintptr_t)(t->n + 1), NULL)) {
		mem_free(c->id);
		return NULL;
	}
	return &t->c[t->n++];
}

const struct casetab_case *casetab_find(const struct casetab *t, const char *id)
{
	uintptr_t at = (uintptr_t)keyset_get(&t->by_id, id);

	return at ? &t->c[at - 1] : NULL;
}

enum err casetab_bump(struct casetab_counts *c, const char *key, double by)
{
	size_t i;

	for (i = 0; i < c->len; i++)
		if (!strcmp(c->key[i], key)) {
			c->n[i] += by;
			return ERR_OK;
		}
	if (c->len == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 2;
		char **k = mem_realloc(c->key, cap * sizeof(*k));
		double *n;
		if (!k)
			return ERR_NOMEM;
		c->key = k;
		if (!(n = mem_realloc(c->n, cap * sizeof(*n))))
			return ERR_NOMEM;
		c->n = n;
		c->cap = cap;
	}
	if (!(c->key[c->len] = mem_strndup(key, strlen(key))))
		return ERR_NOMEM;
	c->n[c->len++] = by;
	return ERR_OK;
}
