/*
 * sha256 — SHA-256 (FIPS 180-4, section 6.2) in portable C, for the short
 * inputs io_sha256_hex hashes without loading libcrypto (io.h): a chat
 * template, a template descriptor, a suite, a case id.
 *
 * It runs at roughly 15 cycles a byte, several times slower than libcrypto's
 * SHA extensions, but mapping and initialising libcrypto costs some 3-4 ms of
 * a process, which is what hashing about 64 KiB here costs. Pure function
 * over borrowed input; no state, safe from any thread.
 */
#ifndef NEEDLE_SHA256_H
#define NEEDLE_SHA256_H

#include <stddef.h>

#define SHA256_BYTES 32 /* bytes of a digest */

/* The SHA-256 digest of `len` bytes at `data` into `out`. */
void sha256_digest(const void *data, size_t len, unsigned char out[SHA256_BYTES]);

#endif
