/*
 * arrival — open-loop arrival times for load tests: constant or Poisson
 * (seeded), as offsets from the schedule's start on CLOCK_MONOTONIC.
 *
 * The schedule is absolute: each arrival's offset is a function of its index
 * (constant: i / rate, computed by one multiplication) or of the seeded draws
 * before it (Poisson: the sum of exponential gaps), never of when the client
 * actually sent the previous request, so a late send never shifts the ones
 * after it (no drift). The first arrival is at offset 0. Offsets depend only
 * on (kind, rate, seed) and the index: two runs with the same seed send on the
 * same schedule.
 *
 * Exponential gaps are drawn by inversion, -ln(1 - u) / rate, from a 53-bit
 * uniform u in [0, 1) of prng (generators/prng.h). With a known count n of
 * arrivals, the Poisson gaps are scaled so that the n-th arrival lands at
 * exactly (n - 1) / rate: a Poisson process conditioned on its count (its
 * arrival times are then ordered uniform draws), so that a finite round
 * achieves the rate it was asked for instead of drifting off it by chance
 * (about 1/sqrt(n): 7% at 200 requests).
 */
#ifndef NEEDLE_ARRIVAL_H
#define NEEDLE_ARRIVAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "generators/prng.h"

enum arrival_kind { ARRIVAL_POISSON, ARRIVAL_CONSTANT };

struct arrival {
	enum arrival_kind kind;
	double rate;      /* arrivals per second, > 0 */
	struct prng prng; /* Poisson draws */
	double next_ms;   /* offset of arrival `index` */
	size_t index;     /* arrivals handed out so far */
	double scale;     /* Poisson: gap multiplier (1, or the conditioning) */
};

/* Parses "poisson" or "constant"; ERR_INPUT naming the value otherwise. */
enum err arrival_parse(const char *name, enum arrival_kind *out,
			     struct diag *d);
/* "poisson" or "constant". Static. */
const char *arrival_name(enum arrival_kind k);

/* Starts a schedule of `rate` arrivals per second; `count` (0 = open-ended)
 * is how many will be asked for, for the conditioning above. ERR_INPUT
 * unless rate is finite and positive. Allocates nothing. */
enum err arrival_init(struct arrival *s, enum arrival_kind kind, double rate,
		    uint64_t seed, size_t count, struct diag *d);

/* The offset (ms from the schedule's start) of the next arrival. */
double arrival_next_ms(struct arrival *s);

#endif
