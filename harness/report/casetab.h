/*
 * casetab — the per-case part of a run's summary (report.h), kept compact: a
 * case is its id, kind, attempt and pass counts, its failure codes and
 * reasons with their counts (in first-seen order) and its first failed
 * attempt's first reason, a few words and the strings themselves, so a run of
 * 100,000 distinct cases needs megabytes, not a tree of JSON objects. A case
 * becomes the summary's JSON object only when it is printed (report.h).
 */
#ifndef NEEDLE_CASETAB_H
#define NEEDLE_CASETAB_H

#include <stddef.h>

#include "base/err.h"
#include "base/keyset.h"

/* Counts by key, in the order the keys were first bumped. */
struct casetab_counts {
	char **key;     /* owned */
	double *n;      /* owned */
	size_t len, cap;
};

struct casetab_case {
	char *id;                 /* owned */
	const char *kind;         /* one of the table's kinds */
	size_t total, pass;
	struct casetab_counts codes;   /* transport failure code -> attempts */
	struct casetab_counts reasons; /* "STAGE: KEY" -> attempts */
	char *first_reason;       /* owned "STAGE: TEXT", or NULL */
};

struct casetab {
	struct casetab_case *c;   /* owned, first-seen order */
	size_t n, cap;
	char **kinds;             /* owned, distinct */
	size_t nkinds;
	struct keyset by_id;      /* id -> its position + 1 */
};

/* Empties `t`. Allocates nothing. */
void casetab_init(struct casetab *t);
/* Frees everything `t` holds; it is empty after. */
void casetab_release(struct casetab *t);
/* The case `id`, added with `kind` (both copied) when new; NULL when out of
 * memory. The pointer holds until the next casetab_of. */
struct casetab_case *casetab_of(struct casetab *t, const char *id, const char *kind);
/* The case `id`, or NULL. */
const struct casetab_case *casetab_find(const struct casetab *t, const char *id);
/* Adds `by` to c's count of `key` (copied), added at the end when new.
 * ERR_NOMEM. */
enum err casetab_bump(struct casetab_counts *c, const char *key, double by);
#endif
