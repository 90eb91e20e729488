/*
 * uni — Unicode as the Hugging Face `tokenizers` library (0.23.x) sees it,
 * which is not the Unicode of PCRE2 10.42 (14.0) or utf8proc (13.0):
 *   - regex classes (\p{L}, \p{N}, ...) are Oniguruma's, Unicode 16.0; `\s`
 *     is White_Space (no U+180E);
 *   - NFC is frozen at Unicode 9.0 (unicode-normalization-alignments 0.1.12):
 *     characters assigned later are inert, U+11935 U+11930 stays apart;
 *   - the predicates follow Rust (std and regex), as HF's added tokens and
 *     Digits pre-tokenizer do.
 * The tables (uni_data.c, uni_pcre2.c) were generated once from the oracle
 * and perl's Unicode database and are committed; see the comment at their
 * top for how. tests/cli/uni_classes.sh checks every class code point by
 * code point, the real patterns and NFC against the oracle.
 */
#ifndef NEEDLE_UNI_H
#define NEEDLE_UNI_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

/* Rewrites an Oniguruma pattern (as found in tokenizer.json; Ruby syntax)
 * into a PCRE2 pattern (to compile with PCRE2_UTF|PCRE2_UCP, without
 * extended or multiline flags) that matches exactly what HF matches:
 *   - \s \S \d \D \w \W \h \H \p{..} \P{..} \p{^..} (general categories,
 *     short or long names), alone or in classes, negated classes included,
 *     become classes of HF's tables: PCRE2's own \p{X} plus what Unicode 16
 *     added, where uni_pcre2.c proves that exact for the running PCRE2, else
 *     explicit ranges;
 *   - Ruby's `.` (not LF), `^` `$` (LF line anchors), `{,n}`, `\v` (VT),
 *     `\uHHHH` and the scope of `(?i)` (to the end of the group, later
 *     alternatives included) are translated; literals, CR/LF, non-ASCII
 *     ranges, groups, lookarounds, possessive and lazy quantifiers and
 *     (?i:...) (same case folding, ſ and K included) pass through.
 * Appends to `out` (unchanged on failure). ERR_UNSUPPORTED names a construct
 * it cannot translate (backreferences, \b, scripts, nested classes, other
 * options, classes with non-ASCII or escape members and non-ASCII literals
 * under (?i), ...); ERR_INPUT a malformed pattern. PCRE2 may still refuse
 * the result for what Ruby allows and PCRE2 does not (stacked quantifiers
 * such as a{,2}*+, variable-length lookbehind). */
enum err uni_rewrite_pattern(const char *pattern, size_t len, struct buf *out,
			     struct diag *d);

/* The same translation with every class written as explicit code point
 * ranges (largest first) instead of PCRE2's own \p tables plus HF's
 * additions. Equally exact (both forms are checked against the oracle). With
 * PCRE2 10.42 JIT, on 4 MB (sh tests/uni/bench.sh), it splits ASCII text
 * 1.3-2.4 times faster than uni_rewrite_pattern's output (DeepSeek V3 72 vs
 * 36 MB/s) but text in other scripts 3-4 times slower (23 vs 41 MB/s); the
 * break-even is near 2-5 % non-ASCII bytes. A caller may compile both and
 * choose per text, e.g. this form below 2 % non-ASCII bytes. (The default
 * form is this one anyway when PCRE2's Unicode version is not the one
 * uni_pcre2.c was generated for.) */
enum err uni_rewrite_pattern_ranges(const char *pattern, size_t len,
				    struct buf *out, struct diag *d);

/* Appends the NFC form (Unicode 9.0, as HF computes it) of valid UTF-8 `s` to
 * `out`. Text without a code point >= U+0300 is copied as is (8 bytes a step
 * over ASCII); elsewhere only the stretches around characters that can change
 * are renormalized. ERR_NOMEM or ERR_LIMIT leave `out` as it was. */
enum err uni_nfc(const char *s, size_t len, struct buf *out);

/* uni_nfc when NFC changes `s` (*changed = 1); when it changes nothing,
 * appends nothing (*changed = 0), so the caller can use s without a copy.
 * ERR_NOMEM or ERR_LIMIT leave `out` as it was. */
enum err uni_nfc_changed(const char *s, size_t len, struct buf *out, int *changed);

/* Per-code-point predicates with the exact sets HF's Rust code uses, probed
 * from the oracle (its Rust std tables are newer than Oniguruma's: U+11DE0
 * is numeric here but not \p{N}). */
int uni_is_space(uint32_t cp);   /* Rust regex \s = White_Space: lstrip/rstrip */
int uni_is_word(uint32_t cp);    /* Rust regex \w: single_word */
int uni_is_numeric(uint32_t cp); /* char::is_numeric: the Digits pre-tokenizer */

/* Whether `cp` lies in one of the `n` ranges at `r` (a uni_data.h range
 * list: sorted, disjoint, inclusive); a binary search. */
struct uni_range;
int uni_in_ranges(const struct uni_range *r, size_t n, uint32_t cp);

#endif
