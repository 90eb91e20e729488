/*
 * tok_hf — a Hugging Face tokenizer.json, counted and encoded exactly as
 * `tokenizers` 0.23 does (docs/tokenizers.md "How a count is made"):
 *
 *   added tokens (non-normalized, on the raw text, leftmost-longest)
 *   -> normalizer per remaining segment (NFC, Prepend, Replace, Sequence)
 *   -> added tokens (normalized, on the normalized segments)
 *   -> pre-tokenizer per segment (Sequence of Split / Digits, then ByteLevel
 *      or Metaspace), every regex run on each piece as its own subject
 *   -> BPE per pre-token (tok_bpe.h)
 *   -> post-processor template, only when the caller asks for special tokens.
 *
 * Regexes are Oniguruma patterns rewritten for PCRE2 (uni_rewrite_pattern) and
 * run with the JIT (tok_pat.h, rx.h), except the patterns tok_scan.h matches
 * by hand (the environment variable NEEDLE_NO_SCAN=1 turns those off, for
 * tests). Every component or option outside this list is refused at load
 * time with its name (ERR_UNSUPPORTED), as are truncation and padding.
 *
 * Loading keeps a binary copy of the loaded tokenizer in the user's cache
 * directory, keyed by the JSON's SHA-256, and the next load of the same
 * bytes reads that instead (tok_cache.h); a file the cache's source index
 * knows unchanged is not even read or hashed.
 *
 * The modules behind this header (sharing tok_int.h): tok_load.c reads
 * tokenizer.json and the post-processor, tok_added.c the added tokens,
 * tok_norm.c the normalizers, tok_pre.c the pre-tokenizers, tok_pat.c their
 * patterns, tok_bpe.c the model.
 *
 * A loaded tokenizer is read-only; each call builds its own scratch state, so
 * one tokenizer may be shared by threads.
 */
#ifndef NEEDLE_TOK_HF_H
#define NEEDLE_TOK_HF_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct tok_hf;

/* Builds a tokenizer from the `len` bytes of tokenizer.json at `json` (read
 * from `path`, which names it in messages). `json` is borrowed during the
 * call only. The caller frees the result with tok_hf_free. */
enum err tok_hf_load(const char *path, const char *json, size_t len,
		     struct tok_hf **out, struct diag *d);
/* The tokenizer of the file `path` straight from the cache, without reading
 * the JSON, when the cache's source index knows the file as it is now
 * (tok_cache.h); ERR_OK with *out NULL otherwise (the caller then reads the
 * file and calls tok_hf_load). */
enum err tok_hf_load_known(const char *path, struct tok_hf **out, struct diag *d);
/* Accepts NULL. */
void tok_hf_free(struct tok_hf *h);
/* Lower-case hex SHA-256 of the JSON it was loaded from; borrowed. */
const char *tok_hf_sha256(const struct tok_hf *h);

/* Number of tokens of valid UTF-8 `text`, no special tokens added. A text
 * of TOK_SPLIT_MIN bytes or more is counted on every CPU the process may
 * use, when the tokenizer allows (tok_split.h). */
enum err tok_hf_count(const struct tok_hf *h, const char *text, size_t len,
		      size_t *count, struct diag *d);
/* Token ids of valid UTF-8 `text` appended as in tok_encode; with
 * `add_special` the post-processor's single-sequence template is applied. */
enum err tok_hf_encode(const struct tok_hf *h, const char *text, size_t len,
		       int add_special, uint32_t **ids, size_t *n, size_t *cap,
		       struct diag *d);

#endif
