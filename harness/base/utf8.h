/*
 * utf8 — validation of whole texts as UTF-8 (RFC 3629): no overlong forms,
 * no surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no sequence cut at
 * the end of the text; NUL is a valid character.
 *
 * Two paths give the same verdict on every input: utf8_valid, which on an
 * x86-64 CPU with AVX2 checks 32 bytes at a time without a branch per
 * character (chosen at each call with __builtin_cpu_supports; other CPUs and
 * compilers take the scalar scan), and utf8_first_bad, the scalar scan, which
 * also knows where the text goes wrong. Callers that must say where run the
 * fast check first and the scan only on a text it refused.
 *
 * Beside the checks, the codec of one character (decode, encode) and hex
 * digits, for the parsers that read \u escapes (JSON, Jinja, Oniguruma).
 *
 * Nothing here allocates or keeps state; all functions are thread-safe.
 */
#ifndef NEEDLE_UTF8_H
#define NEEDLE_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* 1 when the `len` bytes at `s` are valid UTF-8, else 0. */
int utf8_valid(const char *s, size_t len);

/* The offset of the first byte at which the `len` bytes at `s` stop being
 * valid UTF-8, `len` when they are valid: a byte that cannot start a
 * character, the lead of a character the end of the text cuts, or the first
 * byte after a lead that is not a continuation byte its place allows (the
 * second byte's range depends on the lead: E0 A0..BF, ED 80..9F, F0 90..BF,
 * F4 80..8F, else 80..BF). */
size_t utf8_first_bad(const char *s, size_t len);

/* The offset of the first byte of the first character that is not valid
 * UTF-8, `len` when the text is valid: utf8_first_bad's offset, or the lead
 * byte before it when that offset falls inside the broken character (the
 * SSE parser names the character, not the byte). */
size_t utf8_first_bad_char(const char *s, size_t len);

/* utf8_valid with a diagnostic: ERR_INPUT "invalid UTF-8 at byte N" (N from
 * utf8_first_bad) when the `len` bytes at `s` are not valid UTF-8. */
enum err utf8_check(const char *s, size_t len, struct diag *d);

/* "avx2" or "scalar": the path utf8_valid takes on this CPU. Static. */
const char *utf8_path(void);

/* Decodes one code point of valid UTF-8 at `s` (at most `len` bytes, at
 * least 1); returns its length in bytes. */
size_t utf8_decode(const char *s, size_t len, uint32_t *cp);

/* Writes scalar value `cp` (at most 0x10FFFF, not a surrogate: the caller
 * checks) as UTF-8 into `out`; returns its length, 1 to 4. */
size_t utf8_encode(uint32_t cp, char out[4]);

/* The length of the longest prefix of s[0..n) that does not end inside a
 * character: n less the lead and continuation bytes of a last character
 * that a cut left incomplete. For cutting text at a character boundary. */
size_t utf8_whole(const char *s, size_t n);

/* The value of hex digit `c` (either case), or -1. */
int utf8_hexval(int c);

#endif
