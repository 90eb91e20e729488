/*
 * tok_added — the added vocabulary of a tokenizer.json ("added_tokens"):
 * the ids HF gives each token, two byte tries (non-normalized tokens, found
 * in the raw text; normalized ones, found in each normalized segment), and
 * HF's AddedVocabulary::find_matches + split_with_indices, which cuts the
 * text into added tokens and the gaps that go on to the normalizers and
 * pre-tokenizers.
 */
#ifndef NEEDLE_TOK_ADDED_H
#define NEEDLE_TOK_ADDED_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct tok_added {
	char *s;              /* content (normalized for normalized tokens), owned */
	size_t n;
	char *raw;            /* content as written, owned */
	size_t raw_n;
	uint32_t id;
	unsigned lstrip : 1, rstrip : 1, single_word : 1, normalized : 1;
};

/* Byte trie of added tokens: root edges dense, the rest as sibling lists. */
struct tok_tnode {
	int32_t term;         /* index into tok_hf.added, or -1 */
	int32_t edge;         /* first edge, or -1 */
};
struct tok_tedge {
	unsigned char byte;
	int32_t child, next;
};
struct tok_aset {
	int32_t root[256];    /* node of each first byte, or -1 (once nnode) */
	int nfirst;           /* distinct first bytes */
	unsigned char first;  /* the first byte when nfirst == 1 */
	struct tok_tnode *node; /* owned */
	size_t nnode, node_cap;
	struct tok_tedge *edge; /* owned */
	size_t nedge, edge_cap;
};

struct tok_load;
struct tok_run;
struct cJSON;

/* Reads the "added_tokens" array `arr` into l->h (after the model and the
 * normalizers, which give ids and normalized forms). */
enum err tok_added_parse(struct tok_load *l, const struct cJSON *arr);
/* Frees what a trie owns. */
void tok_aset_release(struct tok_aset *set);

struct buf;
struct tok_hf;

/* The added tokens of `h` as loaded (ids given, contents normalized) in
 * binary, for the cache (tok_cache.h): a count, then per token its id,
 * flags, both lengths and both strings. */
enum err tok_added_save(const struct tok_hf *h, struct buf *out);
/* Fills h->added and its tries (all empty) from the n bytes tok_added_save
 * wrote, without the JSON or the normalizers. ERR_INPUT if the bytes do not
 * fit that form, ERR_NOMEM; what was filled, h owns. */
enum err tok_added_load(struct tok_hf *h, const char *p, size_t n);

/* Tokenizes text[0..len) (nothing when empty) from the top: non-normalized
 * added tokens, then per gap the normalizers, the normalized added tokens and
 * the pre-tokenizers. */
enum err tok_added_run(struct tok_run *r, const char *text, size_t len);
/* tok_hf_count on the calling thread alone: a run of tok_added_run that
 * only counts. */
enum err tok_added_count(const struct tok_hf *h, const char *text, size_t len, size_t *count,
			 struct diag *d);

#endif
