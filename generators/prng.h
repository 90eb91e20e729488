/*
 * prng — the one seeded pseudo-random generator of the generators, chosen so
 * that the same seed gives the same numbers on every machine and compiler.
 *
 * Algorithm: xoshiro256** 1.0 (Blackman and Vigna, "Scrambled linear
 * pseudorandom number generators", 2018; reference code at prng.di.unimi.it),
 * its 256-bit state filled by four successive outputs of SplitMix64 (Steele,
 * Lea and Flood, "Fast splittable pseudorandom number generators", 2014) from
 * the 64-bit seed. Only fixed-width unsigned arithmetic is used: no floating
 * point, no platform `rand`, no dependence on endianness or `long` width.
 *
 * Bounded integers use rejection (Lemire's multiply-shift with the exact
 * threshold, "Fast random integer generation in an interval", 2019), so every
 * value of [0, n) is equally likely.
 *
 * Independent streams: prng_init(&p, seed, stream) mixes a stream number into
 * the seed, so one seed can drive several generators whose outputs do not
 * depend on how many numbers the others drew.
 */
#ifndef NEEDLE_PRNG_H
#define NEEDLE_PRNG_H

#include <stddef.h>
#include <stdint.h>

struct prng {
	uint64_t s[4]; /* xoshiro256** state; never all zero */
};

/* Seeds `p` from (`seed`, `stream`). Allocates nothing. */
void prng_init(struct prng *p, uint64_t seed, uint64_t stream);

/* The next 64 uniformly distributed bits. */
uint64_t prng_next(struct prng *p);

/* A uniform integer in [0, n); n == 0 returns 0. Unbiased. */
uint64_t prng_below(struct prng *p, uint64_t n);

/* A uniform integer in [lo, hi] (inclusive; lo <= hi). */
long prng_range(struct prng *p, long lo, long hi);

/* Shuffles `n` ints in place (Fisher-Yates with prng_below). */
void prng_shuffle_int(struct prng *p, int *v, size_t n);

/* One step of SplitMix64: advances `*x` and returns the mixed value. Exposed
 * for seed derivation and hashing. */
uint64_t prng_splitmix64(uint64_t *x);

#endif
