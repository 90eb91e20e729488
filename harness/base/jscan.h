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
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

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
 * a '\\' or a control byte below 0x20), or `end`. Inline: the tree builder
 * (jtree.h) calls it for every name and string of a journal line, most of
 * them shorter than one step. */
static inline const char *jscan_plain_end(const char *p, const char *end)
{
#if defined(__x86_64__) && defined(__GNUC__)
	/* SSE2 (every x86-64): sixteen bytes a step; a byte is a stop when it
	 * is '"', '\\' or at most 0x1F (max(byte, 0x1F) == 0x1F, unsigned) */
	const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\'), c = _mm_set1_epi8(0x1F);

	for (; end - p >= 16; p += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, b)),
					 _mm_cmpeq_epi8(_mm_max_epu8(v, c), c));
		int bits = _mm_movemask_epi8(m);

		if (bits)
			return p + __builtin_ctz((unsigned)bits);
	}
#else
	const uint64_t ones = 0x0101010101010101ULL, high = ones * 0x80;
	uint64_t v, q, b;

	/* a zero byte of x sets the high bit of its byte in (x - ones) & ~x,
	 * and a byte below 0x20 (under 0x80) that of (v - 0x20 * ones) & ~v:
	 * a flag in any byte means a stop byte in the eight, found below */
	for (; end - p >= 8; p += 8) {
		memcpy(&v, p, 8);
		q = v ^ ones * '"';
		b = v ^ ones * '\\';
		if ((((q - ones) & ~q) | ((b - ones) & ~b) | ((v - ones * 0x20) & ~v)) & high)
			break;
	}
#endif
	while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
		p++;
	return p;
}

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
