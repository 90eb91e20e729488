/*
 * rx — the one wrapper of PCRE2 (8-bit, UTF mode): compiling a pattern,
 * matching it, and the per-thread match state. No other module includes
 * pcre2.h; PCRE2's error codes and messages are translated here into a
 * `struct diag`.
 *
 * Two kinds of user:
 *   - the tokenizer (tok_pat.c): patterns compiled once with RX_UCP | RX_FAST,
 *     matched many times from successive offsets of one subject, with a
 *     reusable `struct rx_match` per thread (a compiled `struct rx` is
 *     read-only and may be shared by threads);
 *   - the grader and the suite validator (grade.c, expect.c): a user's
 *     pattern compiled with RX_WHOLE (anchored at both ends, PCRE2 defaults
 *     otherwise), checked for syntax with rx_compile + rx_free, or matched
 *     once against an answer that may be any bytes (rx_find with m == NULL;
 *     invalid UTF-8 is a match error with PCRE2's message, not a crash).
 *
 * Usage (grade a whole answer):
 *     struct rx *re;
 *     int found;
 *     size_t span[2];
 *     if ((e = rx_compile(pat, strlen(pat), RX_WHOLE, &re, d)))
 *         return e;           // d: "bad regex at offset 3: missing closing parenthesis"
 *     e = rx_find(re, NULL, answer, len, 0, span, &found, &md);
 *     rx_free(re);
 */
#ifndef NEEDLE_RX_H
#define NEEDLE_RX_H

#include <stddef.h>

#include "err.h"

/* Compile flags (bits). Every pattern is compiled in UTF mode. */
enum {
	RX_UCP = 1,   /* \d \s \w and POSIX classes use Unicode properties */
	RX_WHOLE = 2, /* a match must span the whole subject from `from` */
	/* JIT-compiled (rx_compile fails when the JIT cannot take the pattern)
	 * and matched through the JIT fast path, which checks nothing: every
	 * subject given to rx_find must be valid UTF-8 */
	RX_FAST = 4
};

/* Longest Unicode version string rx_unicode_version writes, NUL included. */
#define RX_VERSION_MAX 24

/* A compiled pattern; read-only after rx_compile, shareable by threads. */
struct rx;
/* Per-thread match state (match data, JIT stack); reused across matches. */
struct rx_match;

/* Compiles the n bytes of `pat` with `flags`. The caller frees *out with
 * rx_free. A syntax error is ERR_INPUT with "bad regex at offset N: REASON"
 * (N in bytes of `pat`); a pattern the JIT refuses under RX_FAST is
 * ERR_UNSUPPORTED with "regex cannot be JIT-compiled: REASON". */
enum err rx_compile(const char *pat, size_t n, unsigned flags, struct rx **out,
		    struct diag *d);
/* Accepts NULL. */
void rx_free(struct rx *re);

/* New match state for any pattern; the caller frees it with rx_match_free. */
enum err rx_match_new(struct rx_match **out, struct diag *d);
/* Accepts NULL. */
void rx_match_free(struct rx_match *m);

/* The leftmost match of `re` in s[0..n) starting at or after byte `from`
 * (lookbehinds see s before `from`). Sets *found to 1 and the match to
 * [span[0], span[1]) (possibly empty), or *found to 0. `m` NULL uses a
 * match state made and freed for this call. A failed match (bad UTF-8
 * without RX_FAST, a match or depth limit, a full JIT stack) is ERR_INPUT
 * or ERR_LIMIT with "regex match failed at byte FROM: REASON". */
enum err rx_find(const struct rx *re, struct rx_match *m, const char *s,
		 size_t n, size_t from, size_t span[2], int *found,
		 struct diag *d);

/* The Unicode version of PCRE2's property tables, e.g. "14.0.0" (empty if
 * it does not fit). */
void rx_unicode_version(char out[RX_VERSION_MAX]);

#endif
