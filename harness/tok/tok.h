/*
 * tok — count tokens exactly as the server's tokenizer does.
 *
 * Loads a Hugging Face tokenizer.json (byte-level BPE: DeepSeek V3/V4, Qwen2/3,
 * Llama 3, GPT-4o; see tok_hf.c) or a sentencepiece .model (through the C++
 * shim in spm.cc). Encoding never adds special tokens (add_special_tokens=false,
 * as vLLM and SGLang do for rendered chat prompts); the post-processor's
 * template is applied only where a caller asks for it.
 *
 * A component needle does not implement is refused at load time with its name:
 * a count that is silently wrong is worse than an error. Text must be valid
 * UTF-8; the first bad byte's offset is reported.
 *
 * A loaded tokenizer is read-only and may be shared by threads.
 */
#ifndef NEEDLE_TOK_H
#define NEEDLE_TOK_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/io.h"

struct tok;

/* Loads the tokenizer at `path` (a .model file is sentencepiece, anything else
 * tokenizer.json). Returns a tokenizer the caller frees with tok_free. */
enum err tok_load(const char *path, struct tok **out, struct diag *d);
/* Accepts NULL. */
void tok_free(struct tok *t);

/* Number of tokens in `len` bytes of `text` without special tokens added.
 * ERR_INPUT (with the byte offset) on invalid UTF-8. */
enum err tok_count(const struct tok *t, const char *text, size_t len,
		   size_t *count, struct diag *d);

/* Token ids of `text`, appended to `*ids` (grown with mem_realloc; `*n` and
 * `*cap` track it; the caller frees *ids with mem_free). When `add_special`
 * is set the post-processor's template (BOS/EOS) is applied. */
enum err tok_encode(const struct tok *t, const char *text, size_t len,
		    int add_special, uint32_t **ids, size_t *n, size_t *cap,
		    struct diag *d);

/* SHA-256 (hex) of the file the tokenizer was loaded from, computed on the
 * first call (which is therefore not thread-safe), "" if the file can no
 * longer be read. Borrowed. */
const char *tok_sha256(const struct tok *t);

/* Why the tokenizer cache folder was not used by this process (it is not
 * the user's own, or group or others may write it: see tok_cache.h), as one
 * sentence for a warning; "" when it was used or is off. */
const char *tok_cache_distrust(void);
/* "hf-bpe" or "sentencepiece". */
const char *tok_kind(const struct tok *t);

#endif
