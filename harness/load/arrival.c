/*
 * arrival — open-loop arrival times; see arrival.h.
 */
#include "arrival.h"

#include <math.h>
#include <string.h>

enum err arrival_parse(const char *name, enum arrival_kind *out,
			     struct diag *d)
{
	if (!strcmp(name, "poisson"))
		*out = ARRIVAL_POISSON;
	else if (!strcmp(name, "constant"))
		*out = ARRIVAL_CONSTANT;
	else
		return diag_fail(d, ERR_INPUT,
				 "arrival '%s' is not one of poisson, constant", name);
	return ERR_OK;
}

const char *arrival_name(enum arrival_kind k)
{
	return k == ARRIVAL_CONSTANT ? "constant" : "poisson";
}

/* A uniform double in [0, 1) with 53 random bits. */
static double uniform(struct prng *p)
{
	return (double)(prng_next(p) >> 11) * (1.0 / 9007199254740992.0);
}

/* One exponential gap of mean 1. */
static double gap(struct prng *p)
{
	return -log1p(-uniform(p));
}

enum err arrival_init(struct arrival *s, enum arrival_kind kind, double rate,
		    uint64_t seed, size_t count, struct diag *d)
{
	size_t i;
	double sum = 0;

	memset(s, 0, sizeof(*s));
	if (!(rate > 0) || !isfinite(rate))
		return diag_fail(d, ERR_INPUT, "rate '%g' must be a positive number of requests per second",
				 rate);
	s->kind = kind;
	s->rate = rate;
	s->scale = 1;
	/* the same draws twice: once for their sum, once to hand out */
	prng_init(&s->prng, seed, 0x5c4ed);
	for (i = 1; kind == ARRIVAL_POISSON && i < count; i++)
		sum += gap(&s->prng);
	if (sum > 0)
		s->scale = (double)(count - 1) / sum;
	prng_init(&s->prng, seed, 0x5c4ed);
	return ERR_OK;
}

double arrival_next_ms(struct arrival *s)
{
	double at;

	if (s->kind == ARRIVAL_CONSTANT)
		return (double)s->index++ * 1000.0 / s->rate;
	at = s->next_ms;
	s->next_ms += gap(&s->prng) * s->scale * 1000.0 / s->rate;
	s->index++;
	return at;
}
