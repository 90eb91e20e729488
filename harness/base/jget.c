/*
 * jget — see jget.h.
 */
#include "jget.h"

#include <string.h>

const cJSON *jget(const cJSON *o, const char *k)
{
	const cJSON *c;

	if (!o || !k)
		return NULL;
	/* cJSON_GetObjectItemCaseSensitive's walk, the first byte compared
	 * inline: readers of a journal look up some 80 names per record */
	for (c = o->child; c; c = c->next)
		if (c->string && c->string[0] == k[0] && !strcmp(c->string, k))
			return c;
	return NULL;
}

const cJSON *jget2(const cJSON *o, const char *a, const char *b)
{
	return jget(jget(o, a), b);
}

double jget_num(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

int jget_whole(const cJSON *o, const char *k, long lo, long hi, long *out)
{
	const cJSON *v = jget(o, k);
	double x = cJSON_IsNumber(v) ? v->valuedouble : 0.5;

	if (!(x >= (double)lo && x <= (double)hi) || x != (double)(long)x)
		return 0; /* the range first: only then is the cast defined */
	*out = (long)x;
	return 1;
}
