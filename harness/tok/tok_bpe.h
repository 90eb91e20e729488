/*
 * tok_bpe — the BPE model of Hugging Face `tokenizers` (models/bpe), for
 * counting and encoding one pre-token at a time.
 *
 * Byte-level models (those whose pre-tokenizer ends in ByteLevel) are run on
 * raw bytes: every vocab and merge string is decoded through the GPT-2
 * byte<->char table at load time, so the text never has to be mapped. Vocab
 * strings outside that table can never be produced from bytes and are left
 * out of the byte vocabulary. Other models run on UTF-8 characters.
 *
 * Semantics (docs/tokenizers.md "BPE merges"): merge rank = index in the merges list, the
 * last duplicate pair wins; lowest rank first, ties leftmost; ignore_merges
 * emits a whole pre-token found in the vocab; unknown units become byte
 * fallback tokens <0xXX>, else unk (fused if fuse_unk), else are dropped.
 *
 * A loaded struct bpe is read-only; all mutable state (scratch arrays, the
 * per-pre-token count cache) lives in a struct bpe_work owned by one thread.
 */
#ifndef NEEDLE_TOK_BPE_H
#define NEEDLE_TOK_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

/* Pre-tokens longer than this (in bytes) are not cached. */
#define BPE_CACHE_MAX_KEY 256
/* The count cache stops growing at this many entries or key bytes, which
 * bounds its memory (about 56 MB) whatever the input. */
#define BPE_CACHE_MAX_ENTRIES (1u << 20)
#define BPE_CACHE_MAX_BYTES ((size_t)16 << 20)

struct bpe_opts {
	int byte_level;     /* units are bytes; strings are GPT-2 byte-level */
	int byte_fallback;  /* unknown units -> <0xXX> tokens when all exist */
	int fuse_unk;       /* consecutive unknowns make one unk token */
	int ignore_merges;  /* a pre-token found whole in the vocab is one token */
	const char *unk;    /* unk_token content, or NULL; borrowed during bpe_finish */
	size_t unk_len;
};

struct bpe;
struct bpe_work;

/* Creates an empty model (byte-level or not); the caller frees it with
 * bpe_free. */
enum err bpe_new(int byte_level, struct bpe **out, struct diag *d);
/* Accepts NULL. */
void bpe_free(struct bpe *b);

/* Sizes the vocab and merge tables for about `vocab` and `merges` entries
 * so that they need not grow (a hint: they grow anyway when needed). */
enum err bpe_reserve(struct bpe *b, size_t vocab, size_t merges);

/* Adds vocab entry `tok` (as written in tokenizer.json) with `id`. Entries
 * are decoded at once but enter the hash table in bulk (hash slots
 * prefetched ahead) at the first bpe_add_merge or at bpe_finish. */
enum err bpe_add_token(struct bpe *b, const char *tok, size_t n, uint32_t id,
		       struct diag *d);
/* Adds the next merge (rank = number of merges added before). Both parts
 * and their concatenation must be in the vocab: merges are resolved in bulk
 * by bpe_finish, which fails with ERR_INPUT naming the first merge (in
 * order) that misses one, as HF refuses such a file, and with ERR_LIMIT
 * (the merge table packs ids and ranks) on more than 4,194,303 merges or a
 * merge joining a token id above 2,097,150. */
enum err bpe_add_merge(struct bpe *b, const char *l, size_t nl, const char *r,
		       size_t nr, struct diag *d);
/* Call once after the vocab and merges are added: builds the vocab and merge
 * tables, takes the options (all but byte_level, fixed at bpe_new; `o->unk`
 * is copied) and resolves unk and byte fallback tokens. The lookups below
 * are valid after it. */
enum err bpe_finish(struct bpe *b, const struct bpe_opts *o, struct diag *d);

/* Appends the finished model `b` to `out` as one blob that bpe_from_blob
 * takes back on a machine of the same kind (sizes and byte order). */
enum err bpe_save(const struct bpe *b, struct buf *out);
/* A model whose tables are the `len` bytes of `blob` (8-aligned), borrowed:
 * the caller keeps them unchanged until bpe_free. ERR_INPUT (no message)
 * when the blob is not one bpe_save wrote; ERR_NOMEM. */
enum err bpe_from_blob(const void *blob, size_t len, struct bpe **out);
/* Whether the model runs on bytes (fixed at bpe_new). */
int bpe_byte_level(const struct bpe *b);

/* Vocab id of `tok` as written in tokenizer.json, or -1. */
long bpe_token_id(const struct bpe *b, const char *tok, size_t n);
/* Number of vocab entries (HF's BPE::get_vocab_size). */
size_t bpe_vocab_size(const struct bpe *b);
size_t bpe_merge_count(const struct bpe *b);

/* Creates scratch state for one thread; the caller frees it with
 * bpe_work_free. */
enum err bpe_work_new(struct bpe_work **out);
/* Accepts NULL. */
void bpe_work_free(struct bpe_work *w);

/* Adds the number of tokens of pre-token `piece` to `*count`, using and
 * filling the work's cache. */
enum err bpe_count(const struct bpe *b, struct bpe_work *w, const char *piece,
		   size_t n, size_t *count);
/* The most pre-tokens one bpe_count_many call takes. */
#define BPE_BATCH_MAX 512
/* bpe_count of every pre-token s[ms[i]..me[i]) (i < k, non-empty, k at
 * most BPE_BATCH_MAX) of text s[0..len), as a scanner's matches come
 * (tok_scan.h), faster than one call each: their cache misses overlap.
 * The first call on a work with a text of 512 KiB or more sizes its caches
 * for the many distinct pre-tokens such a text holds. */
enum err bpe_count_many(const struct bpe *b, struct bpe_work *w, const char *s, size_t len,
			const size_t *ms, const size_t *me, size_t k, size_t *count);
/* Appends the token ids of pre-token `piece` (grown as in tok_encode). */
enum err bpe_encode(const struct bpe *b, struct bpe_work *w, const char *piece,
		    size_t n, uint32_t **ids, size_t *nids, size_t *cap);

/* Decodes a GPT-2 byte-level string into raw bytes (at most `n` bytes are
 * written to `out`); returns the number of bytes, or -1 if a character is
 * outside the table. */
long bpe_bytelevel_decode(const char *s, size_t n, unsigned char *out);

#endif
