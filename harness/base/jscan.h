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

#include <cjson/cJSON.h>

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
 * (jscan.h's tree mode) calls it for every name and string of a journal line, most of
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

/*
 * jtree, the scanner's tree mode — a cJSON tree of one small JSON
 * document, built by the scanner above into an arena, for readers that walk
 * millions of documents one at a time (the lines of a results journal).
 *
 * cJSON_Parse allocates every node and string with malloc and converts every
 * number with strtod; cJSON_Delete frees them one by one. A journal line of
 * 800 bytes holds some 40 nodes, so parsing and freeing cost more than the
 * report that reads them. jtree takes the nodes and strings from blocks it
 * keeps between documents (no allocation once they are large enough) or
 * leaves a string without escapes where it is, ended in place,
 * converts a number without exponent of up to 15 digits exactly with one
 * division (the correctly rounded result strtod gives; other numbers go to
 * strtod), and drops the whole tree at the next jtree_parse. Compact JSON
 * (a journal line of 800 bytes) costs some 6,100 instructions: names,
 * punctuation, plain strings and numbers are read inline by one loop.
 *
 * The tree is an ordinary cJSON tree for every reader (cJSON_GetObjectItem,
 * cJSON_ArrayForEach, cJSON_Duplicate, cJSON_Print): members in document order
 * (duplicate names kept, the first found first), strings NUL-terminated and
 * decoded (\u escapes to UTF-8; a string with an escaped NUL reads as cut
 * there, as cJSON's does), valueint saturated as cJSON sets it. It must never
 * be given to cJSON_Delete or modified: it belongs to the jtree.
 *
 * The root of the last tree parsed is indexed for jget (jget.h: jget_index)
 * until the next jtree_parse or jtree_release, so a reader's lookups of its
 * members do not walk them.
 *
 * Every node of a tree is a struct jtree_node, which also holds what the
 * parse saw and cJSON keeps no room for: the length of a member's name and
 * where a number's text is (jtree_name_len, jtree_number_text), so that a
 * reader of a journal classifies names without strcmp and copies a number
 * it prints unchanged instead of formatting it again.
 *
 * Validation is jscan's: RFC 8259 JSON, one value with only whitespace
 * around it; depth at most JSCAN_MAX_DEPTH.
 */

#define JTREE_BLOCK ((size_t)64 << 10) /* bytes of the smallest block */
#define JTREE_MARKED ((size_t)16 << 10)  /* documents up to this size are
					    marked first (jtree.c) */

struct jtree_block;

struct jtree {
	struct jtree_block *first; /* owned chain of blocks, kept across parses */
	struct jtree_block *cur;   /* the block being filled */
	char *avail;               /* its first byte not handed out, or NULL */
	char *limit;               /* its end, or NULL */
	struct buf scratch;        /* a string with escapes, decoded */
	const cJSON *root;         /* the tree parsed last (indexed), or NULL */
	int marked;                /* the document being parsed is in `stops` */
	int ascii;                 /* the document parsed last was all ASCII
				      (known of one up to JTREE_MARKED bytes;
				      else 0) */
	uint64_t stops[JTREE_MARKED / 64 + 1]; /* jtree.c: where strings stop */
};

/* A node of a jtree: the cJSON node first, so a tree is an ordinary one. */
struct jtree_node {
	cJSON c;
	const char *text;  /* a number: its text in the document (not ended by
			      a NUL), or NULL (not a number, or its text is
			      longer than 65535 bytes) */
	uint32_t name_len; /* a member: strlen(c.string); else 0 */
	uint16_t text_len; /* the length of `text` */
	int8_t frac;       /* a number of the form [-]DIGITS[.DIGITS] with at
			      most 15 digits: how many follow the point (0
			      without one); else -1 */
	uint8_t verbatim;  /* a string of at most 65535 bytes without an
			      escape: 1, its length in text_len; else 0 */
};

/* The length of member `m`'s name (strlen(m->string)); `m` must be a node
 * of a jtree, as every node of a tree jtree_parse returned is. */
static inline size_t jtree_name_len(const cJSON *m)
{
	return ((const struct jtree_node *)(const void *)m)->name_len;
}

/* The text of number node `n` of a jtree as the document has it (valid
 * while the document is), its length in *len and its digits after the
 * point in *frac (-1 when it is not [-]DIGITS[.DIGITS] of at most 15 digits:
 * it has an exponent or more digits); NULL when there is no text (see
 * jtree_node). */
static inline const char *jtree_number_text(const cJSON *n, size_t *len, int *frac)
{
	const struct jtree_node *j = (const struct jtree_node *)(const void *)n;

	*len = j->text_len;
	*frac = j->frac;
	return j->text;
}

/* Whether string node `n` of a jtree is the document's bytes as they are
 * (no escape, so no '"', '\\', control byte or NUL in it) and at most 65535
 * bytes long; then its length (strlen(n->valuestring)) is in *len. */
static inline int jtree_verbatim(const cJSON *n, size_t *len)
{
	const struct jtree_node *j = (const struct jtree_node *)(const void *)n;

	*len = j->text_len;
	return j->verbatim;
}

/* Whether the document jtree_parse was given last (whatever its outcome)
 * was all ASCII bytes, so valid UTF-8; 0 also when that is not known (a
 * document larger than JTREE_MARKED). Costs nothing: the parse reads every
 * byte of a small document at once anyway. */
static inline int jtree_ascii(const struct jtree *t)
{
	return t->ascii;
}

/* Empties `t`. Allocates nothing. */
void jtree_init(struct jtree *t);
/* Frees every block; `t` is empty after (and any tree it returned is gone). */
void jtree_release(struct jtree *t);

/* Parses `len` bytes of `text` (named `name` in messages) into *out, a tree
 * owned by `t` that stays valid until the next jtree_parse or jtree_release,
 * and while `text` does: a string without escapes is not copied but ended
 * in place, its closing quote overwritten by a NUL (so `text` is no longer
 * JSON after the call, whatever its outcome). text[len] must be readable
 * and a terminator, a NUL or a line's '\n' (a byte at most ' ' that is no
 * JSON punctuation): the parse reads up to it without checking the end. ERR_INPUT with jscan's message (file, line, column, byte,
 * reason) when it is not one JSON value; ERR_LIMIT for 4 GB or more; ERR_NOMEM. *out is NULL on error;
 * `d` may be NULL. */
enum err jtree_parse(struct jtree *t, char *text, size_t len, const char *name,
		     cJSON **out, struct diag *d);

#endif
