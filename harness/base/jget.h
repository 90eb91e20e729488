/*
 * jget — lenient reads of a borrowed cJSON document whose shape the reader
 * mostly trusts (a summary it built, a record results_each validated):
 * a missing key or a NULL parent reads as NULL, a missing or non-number
 * value as 0, so a chain of reads needs no check at every step.
 */
#ifndef NEEDLE_JGET_H
#define NEEDLE_JGET_H

#include <cjson/cJSON.h>

/* o[k] (case-sensitive; the first of duplicate names), or NULL when o is
 * NULL or has no such key. */
const cJSON *jget(const cJSON *o, const char *k);
/* o[a][b], or NULL when either step is missing. */
const cJSON *jget2(const cJSON *o, const char *a, const char *b);
/* The number at o[k], or 0 when it is missing or not a number. */
double jget_num(const cJSON *o, const char *k);
/* Whether o[k] is a whole number from `lo` to `hi`, then stored in *out (a
 * document from elsewhere: a cast of 1e300 to an integer is undefined).
 * |lo| and |hi| at most 2^53. */
int jget_whole(const cJSON *o, const char *k, long lo, long hi, long *out);

/* The cJSON type of `v` (cJSON_Invalid for NULL): cJSON_IsX(v) is
 * jget_type(v) == cJSON_X, read without a call into the library (a report's
 * row tests some 90 cells a record). */
static inline int jget_type(const cJSON *v)
{
	return v ? v->type & 0xFF : cJSON_Invalid;
}

/* The number `v`, or 0 when it is NULL or not a number (jget_num of a value
 * already found). */
static inline double jget_numv(const cJSON *v)
{
	return jget_type(v) == cJSON_Number ? v->valuedouble : 0;
}

/* Indexes the members of object `o` by their names for this thread's jget
 * calls on `o`, until the next jget_index or jget_forget of `o` (one object
 * at a time: a journal reader's record, looked up some 200 times, where a
 * walk of its 25 members cost more than the rest of the report). The index
 * is built by the first jget of `o`: a reader that looks up no name of it
 * (record.h's view) pays nothing. `o` must not be modified or freed while
 * it is indexed. An object of more than 255 members, or NULL, is not indexed
 * (jget walks it). */
void jget_index(const cJSON *o);
/* Forgets the index of `o` if it is the indexed object. */
void jget_forget(const cJSON *o);

#endif
