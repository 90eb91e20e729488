/*
 * jinja_str — Python str semantics for the jinja modules: code-point
 * indexing and slicing, the str methods templates call (split, strip,
 * startswith, replace, ...), case mapping, markupsafe escaping and
 * printf-style `%` formatting. Internal; see jinja.h.
 *
 * Case mapping and character classes outside ASCII use utf8proc's tables
 * only where they cannot differ from CPython's (full case mappings such as
 * 'ß'.upper() == 'SS', final sigma, characters unassigned in utf8proc's
 * Unicode version): there the call is refused.
 */
#ifndef NEEDLE_JINJA_STR_H
#define NEEDLE_JINJA_STR_H

#include "jinja_eval.h"

/* Byte offset of the first `needle` in `hay` at or after byte `from`, or -1. */
long jinja_str_find(const struct jv_str *hay, const struct jv_str *needle, size_t from);
/* hay[i] (code point index, in range) as a one-character str. */
enum err jinja_str_char_at(struct je *e, const struct jn *at, const struct jv *s, size_t i,
			   struct jv *out);
/* s[a:b:step] with bounds already clamped as slice.indices does. */
enum err jinja_str_slice(struct je *e, const struct jn *at, const struct jv *s, int64_t a,
			 int64_t b, int64_t step, struct jv *out);
/* list(s): one str per code point. */
enum err jinja_str_chars(struct je *e, const struct jn *at, const struct jv *s, struct jv *out);
/* markupsafe.escape(str(v)): a Markup str (a Markup input is kept). */
enum err jinja_str_escape(struct je *e, const struct jn *at, const struct jv *v, struct jv *out);
/* fmt % args for %s %r %d %i %% (others refused). */
enum err jinja_str_percent(struct je *e, const struct jn *at, const struct jv *fmt,
			   const struct jv *args, struct jv *out);
/* Case: 'u' upper, 'l' lower, 'c' str.capitalize, 't' jinja's |title,
 * 'T' str.title. The Markup flag is kept. */
enum err jinja_str_case(struct je *e, const struct jn *at, const struct jv *s, int mode,
			struct jv *out);
/* str.strip / lstrip / rstrip (`which` 'b', 'l', 'r'); chars NULL or None
 * strips whitespace. */
enum err jinja_str_strip(struct je *e, const struct jn *at, const struct jv *s, int which,
			 const struct jv *chars, struct jv *out);
/* A str method `name` called on `self` with `a`. */
enum err jinja_str_method(struct je *e, const struct jn *at, const struct jv *self,
			  const char *name, const struct je_args *a, struct jv *out);

#endif
