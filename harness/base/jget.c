/*
 * jget — see jget.h.
 */
#include "jget.h"

const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
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
