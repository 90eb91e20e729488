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
 * Nothing here allocates or keeps state; all functions are thread-safe.
 */
#ifndef NEEDLE_UTF8_H
#define NEEDLE_UTF8_H

#include <stddef.h>

/* 1 when the `len` bytes at `s` are valid UTF-8, else 0. */
int utf8_valid(const char *s, size_t len);

/* The offset of the first byte at which the `len` bytes at `s` stop being
 * valid UTF-8, `len` when they are valid: a byte that cannot start a
 * character, the lead of a character the end of the text cuts, or the first
 * byte after a lead that is not a continuation byte its place allows (the
 * second byte's range depends on the lead: E0 A0..BF, ED 80..9F, F0 90..BF,
 * F4 80..8F, else 80..BF). */
size_t utf8_first_bad(const char *s, size_t len);

/* "avx2" or "scalar": the path utf8_valid takes on this CPU. Static. */
const char *utf8_path(void);

#endif
