/*
 * jinja_filter — jinja2 3.1's filters (filters.py) as templates use them,
 * with transformers' tojson (json.dumps(x, ensure_ascii=False, indent=None,
 * separators=None, sort_keys=False)). Internal to the jinja modules; see
 * jinja.h. Filters outside the subset are refused by name.
 */
#ifndef NEEDLE_JINJA_FILTER_H
#define NEEDLE_JINJA_FILTER_H

#include "jinja_eval.h"

/* Applies the filter `name` to `in` with `args`, at node `at`. */
enum err jinja_filter(struct je *e, const struct jn *at, const char *name, const struct jv *in,
		      const struct je_args *args, struct jv *out);

#endif
