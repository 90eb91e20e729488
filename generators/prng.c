/* prng — xoshiro256** seeded by SplitMix64; see prng.h for the references. */
#include "prng.h"

uint64_t prng_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void prng_init(struct prng *p, uint64_t seed, uint64_t stream)
{
	/* The stream number is mixed through SplitMix64 first, so streams 0, 1,
	 * 2... of one seed start far apart in the seed space. */
	uint64_t x = stream, mixed = prng_splitmix64(&x);
	uint64_t y = seed ^ mixed;
	int i;

	for (i = 0; i < 4; i++)
		p->s[i] = prng_splitmix64(&y);
	if (!(p->s[0] | p->s[1] | p->s[2] | p->s[3]))
		p->s[0] = 1; /* SplitMix64 cannot give four zeros; belt and braces */
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t prng_next(struct prng *p)
{
	uint64_t *s = p->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* 64x64 -> 128-bit product, in portable halves (no __int128 needed). */
static void mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
	uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32;
	uint64_t b_lo = b & 0xffffffffu, b_hi = b >> 32;
	uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo;
	uint64_t p3 = a_hi * b_hi;
	uint64_t mid = (p0 >> 32) + (p1 & 0xffffffffu) + (p2 & 0xffffffffu);

	*lo = (mid << 32) | (p0 & 0xffffffffu);
	*hi = p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
}

uint64_t prng_below(struct prng *p, uint64_t n)
{
	uint64_t hi, lo, threshold;

	if (n == 0)
		return 0;
	mul128(prng_next(p), n, &hi, &lo);
	if (lo < n) {
		threshold = (0 - n) % n; /* 2^64 mod n */
		while (lo < threshold)
			mul128(prng_next(p), n, &hi, &lo);
	}
	return hi;
}

long prng_range(struct prng *p, long lo, long hi)
{
	return lo + (long)prng_below(p, (uint64_t)(hi - lo) + 1);
}

void prng_shuffle_int(struct prng *p, int *v, size_t n)
{
	size_t i, j;
	int t;

	for (i = n; i > 1; i--) {
		j = (size_t)prng_below(p, i);
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}
