/*
 * keyset — a set of owned strings (attempt keys, record.h's record_key) with
 * constant expected time per lookup and insert: open addressing, linear
 * probing, FNV-1a, grown at 1/2 load, each key optionally with a value. A
 * run's key set, --resume's, the plan check of report and diff, and their
 * case tables use it so their cost per attempt stays flat.
 */
#ifndef NEEDLE_KEYSET_H
#define NEEDLE_KEYSET_H

#include <stddef.h>

#include "err.h"

struct keyset {
	char **slot;    /* owned strings, NULL where empty */
	void **val;     /* the value of each slot (borrowed; NULL when none) */
	size_t cap;     /* power of two, or 0 */
	size_t n;       /* strings held */
};

/* Empties `s`. Allocates nothing. */
void keyset_init(struct keyset *s);
/* Frees every string and the table; `s` is empty after. Accepts NULL. */
void keyset_release(struct keyset *s);
/* Whether `key` is in the set. */
int keyset_has(const struct keyset *s, const char *key);
/* Adds a copy of `key`; *added = 1 when it was not there (added may be
 * NULL). ERR_NOMEM. */
enum err keyset_add(struct keyset *s, const char *key, int *added,
		    struct diag *d);
/* Adds `key` (as keyset_add) with value `val` (borrowed), replacing the value
 * of a key already there. ERR_NOMEM. */
enum err keyset_put(struct keyset *s, const char *key, void *val, struct diag *d);
/* The value of `key`, or NULL when it is absent or has none. */
void *keyset_get(const struct keyset *s, const char *key);

#endif
