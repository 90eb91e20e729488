/*
 * tok_scan — hand-written matchers for the pre-tokenizer patterns of known
 * tokenizers, used instead of PCRE2 when a Split pattern is exactly one of
 * them. Each returns the same matches as Oniguruma's leftmost-first search
 * with HF's Unicode 16.0 classes (uni_data.h); tests/tok/compare.js checks
 * them against the `tokenizers` binding together with everything else.
 *
 * Why: with exact Unicode classes PCRE2's JIT spends most of a count in
 * long class lists; these scanners look a code point's classes up once in a
 * table (struct scan_tab) and need no backtracking.
 *
 * Patterns covered:
 *   SCAN_DIGITS3  \p{N}{1,3}                       (DeepSeek V3/V4's three-stage
 *   SCAN_CJK      [一-龥぀-ゟ゠-ヿ]+                  sequence)
 *   SCAN_DS_MAIN  the third DeepSeek pattern (letters, punctuation, spaces)
 *   SCAN_QWEN     Qwen2/3's pattern (cl100k's with \p{N} for \p{N}{1,3})
 *   SCAN_LLAMA3   Llama 3's pattern (cl100k's)
 *   SCAN_O200K    GPT-4o's pattern (o200k: case runs, contractions, '/')
 * Each is tested against PCRE2 on the whole comparison corpus
 * (tests/tok/compare.js runs every real tokenizer with NEEDLE_NO_SCAN=1 too).
 */
#ifndef NEEDLE_TOK_SCAN_H
#define NEEDLE_TOK_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

enum scan_kind { SCAN_NONE = 0, SCAN_DIGITS3, SCAN_CJK, SCAN_DS_MAIN, SCAN_QWEN, SCAN_LLAMA3,
		 SCAN_O200K };

/* Class bits of every BMP code point (64 KiB), built from HF's tables;
 * read-only once built. */
struct scan_tab;

/* Which scanner implements Oniguruma pattern `pat` exactly, or SCAN_NONE. */
enum scan_kind scan_kind_of(const char *pat, size_t n);

/* Builds the class table; the caller frees it with scan_tab_free. */
enum err scan_tab_new(struct scan_tab **out);
/* Accepts NULL. */
void scan_tab_free(struct scan_tab *t);

/* The leftmost match of `kind` in valid UTF-8 s[0..n) starting at or after
 * byte `at` (the subject is the whole s: lookarounds see all of it). Returns
 * 1 and the match in [*ms, *me), or 0 if there is none. Matches are never
 * empty. */
int scan_find(enum scan_kind kind, const struct scan_tab *t, const char *s,
	      size_t n, size_t at, size_t *ms, size_t *me);

/* Up to `max` (at least 1) consecutive matches of `kind`, the first the
 * leftmost at or after byte `at`, each the leftmost after the one before
 * (as repeated scan_find calls give them): match i in [ms[i], me[i]).
 * Returns how many: fewer than `max` only when no match is left. One call
 * per batch saves the per-match call of the hot loops. */
size_t scan_find_many(enum scan_kind kind, const struct scan_tab *t, const char *s,
		      size_t n, size_t at, size_t *ms, size_t *me, size_t max);

/* DeepSeek V3's first two Splits in one pass, both Isolated: \p{N}{1,3},
 * then in each of its gaps the CJK class [一-龥぀-ゟ゠-ヿ]+. The next piece
 * either makes at or after byte `at` of s[0..n) in [*ms, *me): returns 1
 * for a digit match, 2 for a CJK run (between digit matches) that holds
 * kana (U+3040..U+30FF), 3 for one of ideographs only (U+4E00..U+9FA5, all
 * in \p{L}), 0 if there is none. The pieces of the second Split are these
 * and the spans between them, in text order. */
int scan_ds_split2(const struct scan_tab *t, const char *s, size_t n, size_t at,
		   size_t *ms, size_t *me);

#endif
