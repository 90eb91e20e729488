/*
 * jcheck — the pieces of strict JSON validation that the suite (suite.h) and
 * its expectations (expect.h) share: JSON paths ("cases[2].expect.regex"),
 * type names, allowed and duplicate keys, and the one shape of every
 * validation error, "FILE: JPATH: REASON" (ERR_INPUT).
 */
#ifndef NEEDLE_JCHECK_H
#define NEEDLE_JCHECK_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"

#define JCHECK_PATH_MAX 512 /* bytes of a JSON path; longer ones are cut */

/* What is being validated (borrowed). */
struct jcheck {
	const char *file;   /* named first in every message */
	struct diag *d;
};

/* Fails with "FILE: JPATH: REASON" ("FILE: REASON" when `jpath` is NULL or
 * empty) and returns ERR_INPUT. */
enum err jcheck_fail(const struct jcheck *c, const char *jpath, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* out = base.key (no dot after an empty base); `out` (JCHECK_PATH_MAX bytes)
 * may be `base`. */
void jcheck_join(char *out, const char *base, const char *key);
/* out = base[i] (JCHECK_PATH_MAX bytes). */
void jcheck_index(char *out, const char *base, size_t i);

/* "string", "boolean", "null", "array", "object", "integer" or "number". */
const char *jcheck_type(const cJSON *v);
/* Whether `s` is one of the NULL-terminated `names`. */
int jcheck_in(const char *s, const char *const *names);

/* Every key of `obj` must be in `names`: "unknown WHAT key 'K'", with "(did
 * you mean 'N'?)" for a near miss (hint.h). */
enum err jcheck_keys(const struct jcheck *c, const cJSON *obj, const char *jpath,
		     const char *const *names, const char *what);
/* No key may appear twice (cJSON keeps both): "key 'K' appears twice". */
enum err jcheck_dupes(const struct jcheck *c, const cJSON *obj, const char *jpath);
/* An integer in [lo, hi], stored in *out when `out` is not NULL. */
enum err jcheck_int(const struct jcheck *c, const cJSON *v, const char *p,
		    double lo, double hi, long *out);
/* "expected WHAT, got TYPE" unless `ok`. */
enum err jcheck_want(const struct jcheck *c, const cJSON *v, const char *p, int ok,
		     const char *what);
/* An array of strings (at least one when `nonempty`). */
enum err jcheck_strings(const struct jcheck *c, const cJSON *v, const char *p,
			int nonempty);

#endif
