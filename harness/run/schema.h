/*
 * schema — JSON Schema, as far as structured outputs use it: the schema a
 * case sends in `response_format` (vLLM's and SGLang's json_schema) checked
 * once when the suite is read, and an answer validated against it when it
 * is graded (grade.h), every violation named by its place in the answer.
 *
 * The keywords checked (draft 7 and 2020-12 agree on them):
 *   type (a name or a list), enum, const; properties, required,
 *   additionalProperties (a boolean or a schema), patternProperties,
 *   minProperties, maxProperties; items (a schema, or draft 7's list with
 *   additionalItems), prefixItems (2020-12, with items for the rest),
 *   minItems, maxItems, uniqueItems; minLength, maxLength (code points),
 *   pattern (PCRE2, unanchored, as ECMA 262 reads it in the common cases);
 *   minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers),
 *   multipleOf; allOf, anyOf, oneOf, not; true and false as schemas;
 *   $ref to a JSON pointer inside the schema ("#", "#/$defs/X",
 *   "#/definitions/X"), alone or beside annotations.
 * Annotations are skipped: $schema, $id (top level only), $comment, title,
 * description, default, examples, readOnly, writeOnly, deprecated, and the
 * containers $defs and definitions (their schemas are checked too).
 * Any other keyword (format, if/then/else, dependencies, contains,
 * propertyNames, $ref beside assertions, where the drafts disagree, ...) is
 * refused when the suite is read: an answer is never passed on a part of its
 * schema that needle does not check.
 */
#ifndef NEEDLE_SCHEMA_H
#define NEEDLE_SCHEMA_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define SCHEMA_DEPTH_MAX 64  /* nested schemas, $ref included */
#define SCHEMA_WHY_MAX 512   /* bytes of a reason */
#define SCHEMA_WHERE_MAX 512 /* bytes of a place in a schema or an answer */

/* Checks that `schema` is one needle validates: 0 when it is; else 1 with
 * where[SCHEMA_WHERE_MAX] the JSON pointer of the offending part inside the
 * schema ("" the whole) and why[cap] the reason (an unknown or unchecked
 * keyword, a keyword's malformed value, a $ref that resolves to nothing, a
 * bad pattern). */
int schema_check(const cJSON *schema, char where[SCHEMA_WHERE_MAX], char *why, size_t cap);

/* Validates `v` against `schema` (which schema_check accepted): 1 when it
 * is valid; 0 with why[cap] naming the first violation: "/items/2/price: 3
 * is not of type string", "/: lacks the required property 'name'". */
int schema_valid(const cJSON *schema, const cJSON *v, char *why, size_t cap);

#endif
