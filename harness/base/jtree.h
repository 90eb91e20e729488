/*
 * jtree — a cJSON tree of one small JSON document, built by the fast scanner
 * (jscan.h) into an arena, for readers that walk millions of documents one at
 * a time (the lines of a results journal).
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
 * Validation is jscan's: RFC 8259 JSON, one value with only whitespace
 * around it; depth at most JSCAN_MAX_DEPTH.
 */
#ifndef NEEDLE_JTREE_H
#define NEEDLE_JTREE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

#define JTREE_BLOCK ((size_t)64 << 10) /* bytes of the smallest block */

struct jtree_block;

struct jtree {
	struct jtree_block *first; /* owned chain of blocks, kept across parses */
	struct jtree_block *cur;   /* the block being filled */
	char *avail;               /* its first byte not handed out, or NULL */
	char *limit;               /* its end, or NULL */
	struct buf scratch;        /* a string with escapes, decoded */
	const cJSON *root;         /* the tree parsed last (indexed), or NULL */
};

/* Empties `t`. Allocates nothing. */
void jtree_init(struct jtree *t);
/* Frees every block; `t` is empty after (and any tree it returned is gone). */
void jtree_release(struct jtree *t);

/* Parses `len` bytes of `text` (named `name` in messages) into *out, a tree
 * owned by `t` that stays valid until the next jtree_parse or jtree_release,
 * and while `text` does: a string without escapes is not copied but ended
 * in place, its closing quote overwritten by a NUL (so `text` is no longer
 * JSON after the call, whatever its outcome). ERR_INPUT with jscan's message (file, line, column, byte,
 * reason) when it is not one JSON value; ERR_NOMEM. *out is NULL on error;
 * `d` may be NULL. */
enum err jtree_parse(struct jtree *t, char *text, size_t len, const char *name,
		     cJSON **out, struct diag *d);

#endif
