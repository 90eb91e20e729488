/*
 * keyset — see keyset.h.
 */
#include <stdint.h>
#include <string.h>

#include "keyset.h"
#include "mem.h"

void keyset_init(struct keyset *s)
{
	s->slot = NULL;
	s->val = NULL;
	s->cap = 0;
	s->n = 0;
}

void keyset_release(struct keyset *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->cap; i++)
		mem_free(s->slot[i]);
	mem_free(s->slot);
	mem_free(s->val);
	keyset_init(s);
}

static uint64_t hash(const char *k)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*k)
		h = (h ^ (unsigned char)*k++) * 0x100000001b3ull;
	return h;
}

/* The slot holding `key`, or the empty slot where it would go (cap > 0). */
static size_t probe(char *const *slot, size_t cap, const char *key)
{
	size_t i = (size_t)hash(key) & (cap - 1);

	while (slot[i] && strcmp(slot[i], key))
		i = (i + 1) & (cap - 1);
	return i;
}

int keyset_has(const struct keyset *s, const char *key)
{
	return s->cap && s->slot[probe(s->slot, s->cap, key)] != NULL;
}

static enum err grow(struct keyset *s, struct diag *d)
{
	size_t cap = s->cap ? s->cap * 2 : 64, i, j;
	char **slot = mem_calloc(cap, sizeof(*slot));
	void **val = mem_calloc(cap, sizeof(*val));

	if (!slot || !val) {
		mem_free(slot);
		mem_free(val);
		return diag_fail(d, ERR_NOMEM, "out of memory for attempt keys");
	}
	for (i = 0; i < s->cap; i++)
		if (s->slot[i]) {
			j = probe(slot, cap, s->slot[i]);
			slot[j] = s->slot[i];
			val[j] = s->val[i];
		}
	mem_free(s->slot);
	mem_free(s->val);
	s->slot = slot;
	s->val = val;
	s->cap = cap;
	return ERR_OK;
}

enum err keyset_add(struct keyset *s, const char *key, int *added,
		    struct diag *d)
{
	size_t i;
	enum err e;

	if (added)
		*added = 0;
	if (keyset_has(s, key))
		return ERR_OK;
	if ((s->n + 1) * 2 > s->cap && (e = grow(s, d)))
		return e;
	i = probe(s->slot, s->cap, key);
	if (!(s->slot[i] = mem_strndup(key, strlen(key))))
		return diag_fail(d, ERR_NOMEM, "out of memory for attempt keys");
	s->n++;
	if (added)
		*added = 1;
	return ERR_OK;
}

enum err keyset_put(struct keyset *s, const char *key, void *val, struct diag *d)
{
	enum err e = keyset_add(s, key, NULL, d);

	if (!e)
		s->val[probe(s->slot, s->cap, key)] = val;
	return e;
}

void *keyset_get(const struct keyset *s, const char *key)
{
	size_t i;

	if (!s->cap)
		return NULL;
	i = probe(s->slot, s->cap, key);
	return s->slot[i] ? s->val[i] : NULL;
}
