/*
 * md — the Markdown writer report and diff share: a document is rendered as
 * a list of sections, each appending to one buffer; table cells are escaped
 * one way; JSON values become text one way ("-" for what is absent).
 */
#ifndef NEEDLE_MD_H
#define NEEDLE_MD_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

/* One section of a document: appends to `out` from `doc` (borrowed);
 * returns buf's error (ERR_NOMEM, ERR_LIMIT). */
typedef enum err (*md_section)(const cJSON *doc, struct buf *out);

/* Runs sections[0..n) in order on `doc`, stopping at the first error, which
 * it reports as "cannot render the WHAT: ERROR". `out` keeps what was
 * appended before the error. What the sections appended is made inert
 * (ctl.h: control characters escaped), whatever strings `doc` holds. */
enum err md_render(const cJSON *doc, const md_section *sections, size_t n,
		   const char *what, struct buf *out, struct diag *d);

/* Appends `s` for a Markdown table cell: '|' escaped, line breaks as spaces. */
enum err md_cell(struct buf *out, const char *s);

/* Number `v` formatted with the printf format `fmt` (one double conversion)
 * into tmp[0..cap) when `has`, else "-". Returns tmp or "-". */
const char *md_num(int has, double v, const char *fmt, char *tmp, size_t cap);
/* md_num of `v` when it is a number, else "-". */
const char *md_number(const cJSON *v, const char *fmt, char *tmp, size_t cap);
/* A scalar as text: a string as-is (borrowed from `v`), a number as "%.15g"
 * in tmp, "true"/"false", or "-" for null, absent or a container. */
const char *md_value(const cJSON *v, char *tmp, size_t cap);

#endif
