/*
 * tok_split — counting a large text on every core: the text is cut at
 * boundaries no stage of the tokenizer can merge across, each part is
 * counted by its own thread (its own scratch), and the counts are added.
 *
 * A boundary is a position p with s[p-1] = '\n', s[p] an ASCII letter or a
 * CJK ideograph (U+4E00..U+9FFF), and the character before the '\n' not
 * White_Space. It is safe for tokenizers made only of these stages (which
 * tok_split_ok checks), because in each one a piece ends at p whatever
 * follows and the pieces from p on do not depend on what precedes:
 *   - added tokens: none contains '\n' or strips spaces on its left, so no
 *     match spans p and none reaches back over the '\n';
 *   - normalizers: none, or NFC only ('\n' composes with nothing);
 *   - Split with a hand-written scanner (tok_scan.h), Isolated, or Removed
 *     with invert: in each pattern the '\n' after a non-space ends its match
 *     (`\s*[\r\n]+` alone, or the `[\r\n]*` tail of a punctuation run, which
 *     stops at a letter), no alternative takes '\n' as a prefix, and the
 *     only lookahead, (?!\S) after spaces, cannot reach p;
 *   - ByteLevel without add_prefix_space and use_regex; the BPE model runs
 *     per pre-token.
 * tests/unit/test_tok_split.c checks it: the sum of the counts of the parts
 * cut at every boundary equals the count of the whole, on real tokenizers.
 */
#ifndef NEEDLE_TOK_SPLIT_H
#define NEEDLE_TOK_SPLIT_H

#include <stddef.h>

#include "base/err.h"

struct tok_hf;

/* Texts below this many bytes are counted on one thread. */
#define TOK_SPLIT_MIN ((size_t)1 << 20)
/* At most this many threads. */
#define TOK_SPLIT_THREADS 8

/* Whether every stage of `h` is one the boundaries above are safe for. */
int tok_split_ok(const struct tok_hf *h);

/* The first boundary at or after `from` in s[0..n), or n if none. */
size_t tok_split_next(const char *s, size_t n, size_t from);

/* Number of CPUs this process may run on (1 if unknown). */
int tok_split_cpus(void);

/* tok_hf_count of valid UTF-8 `text` in `parts` parts (at most
 * TOK_SPLIT_THREADS), each on its own thread, cut at the boundaries nearest
 * to equal sizes; fewer parts when there are too few boundaries. */
enum err tok_split_count(const struct tok_hf *h, const char *text, size_t len,
			 int parts, size_t *count, struct diag *d);

#endif
