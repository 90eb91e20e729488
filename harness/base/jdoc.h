/*
 * jdoc — one JSON document read into an ordinary cJSON tree in a single pass,
 * the fast path of json_parse (json.h) for large request documents (a
 * conversation of thousands of messages, megabytes of string bytes).
 *
 * cJSON_Parse reads every string twice a byte at a time (once to find its
 * end, once to copy it); jdoc finds the plain runs sixteen bytes a step
 * (jscan_plain_end) and copies them whole. The tree is the one cJSON builds
 * from the same text, node for node: the same types, the same valueint and
 * valuedouble (numbers through strtod, valueint saturated as cJSON does),
 * the same decoded strings, members in order (duplicates kept), each list's
 * first child's `prev` pointing at its last, every node and string allocated
 * apart through mem_alloc (cJSON's hooks, json_init), so cJSON_Delete,
 * cJSON_Duplicate and the cJSON editing calls treat it as their own.
 *
 * jdoc takes only what it is sure cJSON reads the same way, RFC 8259 JSON
 * with a few exclusions, and otherwise answers ERR_UNSUPPORTED so that the
 * caller parses with cJSON (whose reading and error positions then stand):
 * bytes below 0x20 inside strings, \u0000, a lone or malformed surrogate,
 * numbers longer than cJSON's 63-byte number buffer, nesting deeper than
 * JDOC_MAX_DEPTH (cJSON's limit is 1000), a byte-order mark, and every
 * syntax error.
 */
#ifndef NEEDLE_JDOC_H
#define NEEDLE_JDOC_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "err.h"

#define JDOC_MAX_DEPTH 64 /* containers nested deeper go to cJSON */

/* Parses `len` bytes of `text` (no NUL needed) into *out, which the caller
 * owns (cJSON_Delete), when it is one JSON value with only whitespace around
 * it that jdoc reads as cJSON does. ERR_UNSUPPORTED when it is not (parse
 * the text with cJSON instead), ERR_NOMEM; *out is NULL on failure. */
enum err jdoc_parse(const char *text, size_t len, cJSON **out);

#endif
