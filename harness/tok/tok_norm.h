/*
 * tok_norm — the normalizers of a tokenizer.json: read from its "normalizer"
 * member (NFC, Prepend, Replace, in a Sequence flattened) and applied in
 * order to each segment the non-normalized added tokens leave, and to the
 * content of every normalized added token.
 */
#ifndef NEEDLE_TOK_NORM_H
#define NEEDLE_TOK_NORM_H

#include <stddef.h>

#include "base/err.h"
#include "tok_pat.h"

#define TOK_NORM_MAX 16  /* normalizers after flattening Sequences */

enum tok_norm_kind { NORM_NFC, NORM_PREPEND, NORM_REPLACE };

struct tok_norm {
	enum tok_norm_kind kind;
	char *s;              /* Prepend text or Replace content, owned */
	size_t n;
	struct tok_pat re;    /* Replace pattern, owned */
};

struct tok_load;
struct tok_run;
struct cJSON;

/* Appends the normalizer (or Sequence) `o` to l->h->norm; `depth` as in
 * tok_pre_parse. */
enum err tok_norm_parse(struct tok_load *l, const struct cJSON *o, int depth);
/* Frees what `m` owns. */
void tok_norm_release(struct tok_norm *m);

/* Applies the normalizers to s[0..n); `*out` is the result, borrowed from
 * r's scratch (or s itself when there are none), valid until the next call. */
enum err tok_norm_apply(struct tok_run *r, const char *s, size_t n,
			const char **out, size_t *nout);

#endif
