/*
 * doccache — recall documents kept in memory between the repeats that send
 * them. A recall case's repeats of one seed send the same document (built by
 * haystack.h, whose cost is counting up to a million tokens), and the runner
 * starts them apart (every seed's repeat 1, then every seed's repeat 2), so
 * the document of each seed is kept until its last repeat has taken it.
 *
 * An entry is keyed by the document's parameters (the runner's key: case,
 * seed, probe step, tokens) and knows how many more takes are due; the take
 * that ends its count frees it. Entries that would pass the byte cap are not
 * kept (that document is built again: slower, never wrong).
 */
#ifndef NEEDLE_DOCCACHE_H
#define NEEDLE_DOCCACHE_H

#include <stddef.h>

#include "generators/haystack.h"

#define DOCCACHE_KEY_MAX 512
#define DOCCACHE_BYTES_DEFAULT ((size_t)512 << 20)

struct doccache_entry {
	char key[DOCCACHE_KEY_MAX];
	struct haystack h;      /* owned */
	long left;              /* takes still due */
	size_t bytes;           /* about what h holds */
};

struct doccache {
	struct doccache_entry *e; /* owned */
	size_t n, cap;
	size_t bytes, max_bytes;
	size_t hits, builds;      /* takes served from memory; documents kept */
};

/* An empty cache of at most `max_bytes`. Allocates nothing. */
void doccache_init(struct doccache *c, size_t max_bytes);

/* The document under `key`, borrowed until the next call on the cache, or
 * NULL when none is kept. Every take is ended with doccache_done. */
const struct haystack *doccache_get(struct doccache *c, const char *key);

/* Keeps `*h` (taken on success: *h is emptied) under `key` for `takes`
 * takes in all, this first one included, and returns it (borrowed as from
 * doccache_get); NULL when it is not kept (one take only, over the cap, or
 * out of memory): the caller keeps *h then. */
const struct haystack *doccache_put(struct doccache *c, const char *key, struct haystack *h,
				    long takes);

/* Ends a take of `key`'s document; the last due one frees it. */
void doccache_done(struct doccache *c, const char *key);

/* Frees every document and empties the cache. */
void doccache_release(struct doccache *c);

#endif
