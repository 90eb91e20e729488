/*
 * jget — see jget.h.
 */
#include "jget.h"

#include <string.h>

#define SLOTS 64    /* chains of the index, by a name's first three bytes */
#define MEMBERS 255 /* members of an indexed object at most */

/* The members of one object, chained by slot, each chain in document order
 * (member i at m[i], the next in its chain at next[i], 0 ending it). */
struct index {
	const cJSON *obj;  /* the object indexed, or NULL */
	const cJSON *lazy; /* the object to index at its first jget, or NULL */
	unsigned char head[SLOTS], next[MEMBERS + 1];
	const cJSON *m[MEMBERS + 1];
};

static _Thread_local struct index hot;

static unsigned slot(const char *k)
{
	unsigned h = (unsigned char)k[0];

	if (k[0] && k[1])
		h = h * 31 + (unsigned char)k[1] + (k[2] ? (unsigned char)k[2] * 7u : 0);
	return h & (SLOTS - 1);
}

/* Whether names `s` and `k` are equal: their first bytes compared inline
 * (most names differ there, where a call to strcmp costs more than the
 * compare), the rest by strcmp (a matching name is read whole, some 10 bytes,
 * faster by its vector compares than a byte at a time). */
static int same(const char *s, const char *k)
{
	return s[0] == k[0] && (!s[0] || !strcmp(s + 1, k + 1));
}

/* Indexes `o` now (jget_index deferred it). */
static void build(const cJSON *o)
{
	const cJSON *c;
	size_t n = 0;

	if (!cJSON_IsObject(o) || !o->child)
		return;
	memset(hot.head, 0, sizeof(hot.head));
	/* last member first, each pushed on its chain: chains in document order */
	for (c = o->child->prev;; c = c->prev) {
		unsigned s;

		if (!c->string || ++n > MEMBERS)
			return;
		s = slot(c->string);
		hot.m[n] = c;
		hot.next[n] = hot.head[s];
		hot.head[s] = (unsigned char)n;
		if (c == o->child)
			break;
	}
	hot.obj = o;
}

void jget_index(const cJSON *o)
{
	hot.obj = NULL;
	hot.lazy = o;
}

void jget_forget(const cJSON *o)
{
	if (o && hot.obj == o)
		hot.obj = NULL;
	if (o && hot.lazy == o)
		hot.lazy = NULL;
}

const cJSON *jget(const cJSON *o, const char *k)
{
	const cJSON *c;
	unsigned i;

	if (!o || !k)
		return NULL;
	if (o == hot.lazy) {
		hot.lazy = NULL;
		build(o);
	}
	if (o == hot.obj) {
		for (i = hot.head[slot(k)]; i; i = hot.next[i])
			if (same(hot.m[i]->string, k))
				return hot.m[i];
		return NULL;
	}
	/* cJSON_GetObjectItemCaseSensitive's walk: readers of a journal look
	 * up some 200 names per record */
	for (c = o->child; c; c = c->next)
		if (c->string && same(c->string, k))
			return c;
	return NULL;
}

const cJSON *jget2(const cJSON *o, const char *a, const char *b)
{
	return jget(jget(o, a), b);
}

double jget_num(const cJSON *o, const char *k)
{
	return jget_numv(jget(o, k));
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
