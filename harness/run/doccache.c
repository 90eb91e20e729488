/* doccache — see doccache.h. */
#include <string.h>

#include "doccache.h"
#include "base/mem.h"

void doccache_init(struct doccache *c, size_t max_bytes)
{
	memset(c, 0, sizeof(*c));
	c->max_bytes = max_bytes;
}

static struct doccache_entry *find(struct doccache *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].key, key))
			return &c->e[i];
	return NULL;
}

const struct haystack *doccache_get(struct doccache *c, const char *key)
{
	struct doccache_entry *en = find(c, key);

	if (!en)
		return NULL;
	c->hits++;
	return &en->h;
}

const struct haystack *doccache_put(struct doccache *c, const char *key, struct haystack *h,
				    long takes)
{
	/* the document, and its copy in the messages */
	size_t bytes = 2 * h->document_len + (h->question ? strlen(h->question) : 0) + 4096;
	struct doccache_entry *en;

	if (takes < 2 || strlen(key) >= DOCCACHE_KEY_MAX || find(c, key) ||
	    bytes > c->max_bytes - c->bytes || c->bytes > c->max_bytes)
		return NULL;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		en = mem_realloc(c->e, cap * sizeof(*en));
		if (!en)
			return NULL;
		c->e = en;
		c->cap = cap;
	}
	en = &c->e[c->n++];
	memcpy(en->key, key, strlen(key) + 1);
	en->h = *h;
	memset(h, 0, sizeof(*h));
	en->left = takes;
	en->bytes = bytes;
	c->bytes += bytes;
	c->builds++;
	return &en->h;
}

void doccache_done(struct doccache *c, const char *key)
{
	struct doccache_entry *en = find(c, key);

	if (!en || --en->left > 0)
		return;
	haystack_release(&en->h);
	c->bytes -= en->bytes;
	*en = c->e[--c->n];
}

void doccache_release(struct doccache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		haystack_release(&c->e[i].h);
	mem_free(c->e);
	doccache_init(c, c->max_bytes);
}
