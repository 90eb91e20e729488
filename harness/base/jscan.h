/*
 * jscan — a fast, validating pull scanner for one JSON document held in memory.
 *
 * cJSON builds a node per value, which costs 60-190 ms on an 8-11 MB
 * tokenizer.json. jscan walks the text without building anything: callers pull
 * strings and integers where they expect them and skip (while validating) the
 * rest, keeping views into the document. Small sub-documents are then handed
 * to cJSON. Every failure names the file, line, column and byte offset.
 *
 * The scanner borrows the text; it must outlive the scanner and any view it
 * returned. Nesting deeper than JSCAN_MAX_DEPTH is refused.
 */
#ifndef NEEDLE_JSCAN_H
#define NEEDLE_JSCAN_H

#include <stddef.h>

#include "buf.h"
#include "err.h"

#define JSCAN_MAX_DEPTH 256

struct jscan {
	const char *s;    /* the whole document, borrowed */
	size_t len;       /* its length in bytes */
	size_t pos;       /* next byte to read */
	const char *name; /* file name for messages, borrowed */
};

/* Starts scanning `len` bytes of `s` (named `name` in messages). */
void jscan_init(struct jscan *j, const char *s, size_t len, const char *name);

/* Skips whitespace; returns the next byte or -1 at the end. */
int jscan_peek(struct jscan *j);
/* Skips whitespace and consumes `c`, else ERR_INPUT ("expected 'c'"). */
enum err jscan_expect(struct jscan *j, char c, struct diag *d);
/* After an element of an object/array ('}' or ']' in `close`): consumes ','
 * and returns 1, or consumes `close` and returns 0; -1 with `d` filled. */
int jscan_next(struct jscan *j, char close, struct diag *d);
/* Opens an object or array (`open` '{' or '['); returns 1 if it has at least
 * one element, 0 if it is empty (and already closed), -1 on error. */
int jscan_open(struct jscan *j, char open, struct diag *d);

/* The first byte in [p, end) that ends the plain part of a string (a '"',
 * a '\\' or a control byte below 0x20), or `end`: eight bytes a step. */
const char *jscan_plain_end(const char *p, const char *end);

/* Reads a string. Without escapes `*out` is a view into the document;
 * otherwise the decoded bytes are put in `scratch` (reset first) and `*out`
 * points there. \u escapes (surrogate pairs included) become UTF-8; a lone
 * surrogate is refused. */
enum err jscan_string(struct jscan *j, struct buf *scratch, const char **out,
		      size_t *n, struct diag *d);
/* Reads a non-negative integer that fits in `max`. */
enum err jscan_uint(struct jscan *j, unsigned long long max,
		    unsigned long long *v, struct diag *d);
/* Skips one value of any kind, validating it; `*start` (may be NULL) gets the
 * offset where it begins, j->pos ends after it. */
enum err jscan_skip(struct jscan *j, size_t *start, struct diag *d);

/* Fails with ERR_INPUT at the current position:
 * "cannot parse 'NAME': line L, column C (byte B): WHAT". */
enum err jscan_fail(struct jscan *j, struct diag *d, const char *what);

#endif
