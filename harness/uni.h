/*
 * uni — Unicode as the Hugging Face `tokenizers` library sees it, which is not
 * the Unicode of PCRE2 10.42 (14.0) or utf8proc (13.0):
 *   - regex classes (\p{L}, \p{N}, ...) are Oniguruma's, Unicode 16.0 in
 *     tokenizers 0.23.x; `\s` is White_Space (no U+180E);
 *   - NFC is frozen at Unicode 9.0 (unicode-normalization-alignments 0.1.12).
 * The tables in uni_data.c were generated once and are committed; see the
 * comment at their top for how, and tests/unit/test_uni.c for the checks.
 */
#ifndef NEEDLE_UNI_H
#define NEEDLE_UNI_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

/* Rewrites an Oniguruma pattern (as found in tokenizer.json) into a PCRE2
 * pattern (to compile with PCRE2_UTF|PCRE2_UCP) that matches exactly what HF
 * matches: \s \S \p{..} \P{..} become explicit classes from HF's tables.
 * Appends to `out`. ERR_UNSUPPORTED names a construct it cannot translate. */
enum err uni_rewrite_pattern(const char *pattern, size_t len, struct buf *out,
			     struct diag *d);

/* Appends the NFC form (Unicode 9.0, as HF computes it) of valid UTF-8 `s` to
 * `out`. */
enum err uni_nfc(const char *s, size_t len, struct buf *out);

/* Per-code-point predicates, HF semantics. */
int uni_is_space(uint32_t cp);   /* White_Space (Rust/Oniguruma \s) */
int uni_is_word(uint32_t cp);    /* Rust regex \w, for single_word */
int uni_is_numeric(uint32_t cp); /* Rust char::is_numeric (Nd|Nl|No) */

/* Decodes one code point of valid UTF-8 at `s` (at most `len` bytes);
 * returns its length in bytes. */
size_t uni_decode(const char *s, size_t len, uint32_t *cp);

#endif
